/*
 * ULFM on an intercommunicator under shoalrun --ft (docs/FT.md): the
 * world is split in two halves (the upper half in reverse rank order, so
 * local ranks are not world ranks), joined by MPI_Intercomm_create, and
 * one rank of each half kills itself with SIGKILL.
 *
 * usage: mpi_ft_inter MODE [VICTIM_LOW VICTIM_HIGH]
 *   (a world rank of each half, or -1 for none: the failures may be on
 *   one side only)
 *   agree   the victims die while the others are in MPIX_Comm_agree:
 *           every survivor gets MPIX_ERR_PROC_FAILED and the AND of the
 *           flags of the other half's survivors (ULFM: an
 *           intercommunicator's agreement gives each group the remote
 *           group's AND), again until acknowledged; a wildcard receive
 *           reports MPIX_ERR_PROC_FAILED_PENDING until then;
 *           MPIX_Comm_get_failed lists both victims (the failures of both
 *           groups, as ULFM has it), MPIX_Comm_ack_failed acknowledges
 *           them; then agree and iagree succeed; then shrink
 *   shrink  the victims die while the others are in MPIX_Comm_shrink
 *   ishrink the same with MPIX_Comm_ishrink, tested while the survivors
 *           compute, then waited for
 *   revoke  a survivor revokes the intercommunicator while the victims
 *           die: agree fails with MPIX_ERR_PROC_FAILED (not REVOKED), the
 *           revocation reaches both groups, a send and a barrier fail
 *           with MPIX_ERR_REVOKED, and shrink works
 *   wipe    the whole upper half dies during MPIX_Comm_agree: the lower
 *           half's survivors get MPIX_ERR_PROC_FAILED and the AND of no
 *           flags (all ones), every upper rank in the failed group, and
 *           MPIX_Comm_shrink refuses (no intercommunicator without a
 *           remote group) with MPIX_ERR_PROC_FAILED and MPI_COMM_NULL
 *   iwipe   the same, refused by MPIX_Comm_ishrink's request
 * After the shrink every survivor checks the new intercommunicator: its
 * groups are the survivors of each half in their order, a message to and
 * from every remote rank, MPI_Allreduce across the two groups, barrier and
 * an agreement without failures.
 */
#define _GNU_SOURCE
#include "ft_test.h"

static int me, np, half;
static unsigned lostmask; /* the world ranks that die */
static MPI_Comm inter;

static int lost(int w)
{
    return (lostmask >> w) & 1;
}

/* The dead, in world rank order, into dead; how many. */
static int dead_list(int *dead)
{
    int n = 0;

    for (int w = 0; w < np; w++)
        if (lost(w))
            dead[n++] = w;
    return n;
}

/* Die after the others have entered the call that comes next. */
static void victims_die(void)
{
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (lost(me)) {
        usleep(200000);
        ft_die();
    }
}

/* 0 for the lower half of the world, 1 for the upper. */
static int side(int w)
{
    return w >= half;
}

/* The world ranks of side s's survivors (all members when !alive) in
 * their order in the intercommunicator (the upper half reversed). */
static int side_members(int s, int alive, int *w)
{
    int n = 0;

    for (int i = 0; i < half; i++) {
        int r = s == 0 ? i : np - 1 - i;
        if (!alive || !lost(r))
            w[n++] = r;
    }
    return n;
}

/* The world ranks of group g's members. */
static int group_world(MPI_Group g, int *w)
{
    MPI_Group wg;
    int n, *idx;

    MT_OK(MPI_Group_size(g, &n));
    idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MT_OK(MPI_Group_translate_ranks(g, n, idx, wg, w));
    MT_OK(MPI_Group_free(&wg));
    free(idx);
    return n;
}

/* Group g (freed here) holds exactly the world ranks want[0..n). */
static void check_group(MPI_Group g, const int *want, int n, int ordered,
                        const char *what)
{
    int got[64], m = group_world(g, got);

    MT_CHECK(m == n, "%s: %d members, want %d", what, m, n);
    for (int i = 0; i < n; i++) {
        int hit = 0;
        for (int j = 0; j < n; j++)
            hit |= got[j] == want[i] && (!ordered || i == j);
        MT_CHECK(hit, "%s: world rank %d missing or out of place", what,
                 want[i]);
    }
    if (g != MPI_GROUP_EMPTY)
        MT_OK(MPI_Group_free(&g));
}

static void make_inter(void)
{
    MPI_Comm local;
    int s = side(me), flag = 0;

    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, s, s ? -me : me, &local));
    /* The leaders: world 0 below, world np - 1 above (reversed). */
    MT_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, s ? 0 : np - 1, 42,
                               &inter));
    MT_OK(MPI_Comm_free(&local));
    MT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_test_inter(inter, &flag));
    MT_CHECK(flag, "not an intercommunicator");
}

/* The AND of f(w) over the other half's survivors. */
static int remote_and(int (*f)(int))
{
    int w[64], n = side_members(!side(me), 1, w), v = ~0;

    for (int i = 0; i < n; i++)
        v &= f(w[i]);
    return v;
}

static int bit_flag(int w)
{
    return ~(1 << w);
}

static int plus_one(int w)
{
    return w + 1;
}

/* A flag by side, to tell which group's flags a process got. */
static int by_side(int w)
{
    return side(w) ? 0x0ff0 : 0xf00f;
}

/* Every remote rank alive gets this process's world rank with tag, and
 * every one's arrives: from each rank by name, or with ANY_SOURCE when
 * req0 is such a receive posted already (into *first). */
static void exchange(MPI_Comm c, int tag, MPI_Request *req0, int *first)
{
    int rn, got[64], want[64], sum = 0, wsum = 0, nr = 0, nalive = 0;
    MPI_Request reqs[128];
    MPI_Group rg;

    MT_OK(MPI_Comm_remote_size(c, &rn));
    MT_OK(MPI_Comm_remote_group(c, &rg));
    MT_CHECK(group_world(rg, want) == rn, "remote group");
    MT_OK(MPI_Group_free(&rg));
    for (int j = 0; j < rn; j++) {
        if (lost(want[j]))
            continue;
        wsum += want[j];
        MT_OK(MPI_Isend(&me, 1, MPI_INT, j, tag, c, &reqs[nr++]));
        if (req0 == NULL)
            MT_OK(MPI_Irecv(&got[j], 1, MPI_INT, j, tag, c, &reqs[nr++]));
        else if (nalive > 0)
            MT_OK(MPI_Irecv(&got[j], 1, MPI_INT, MPI_ANY_SOURCE, tag, c,
                            &reqs[nr++]));
        else
            got[j] = -1; /* comes into *first */
        nalive++;
    }
    if (req0 != NULL)
        MT_OK(MPI_Wait(req0, MPI_STATUS_IGNORE));
    MT_OK(MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE));
    for (int j = 0; j < rn; j++) {
        if (lost(want[j]))
            continue;
        if (got[j] == -1)
            got[j] = *first;
        else if (req0 == NULL)
            MT_CHECK(got[j] == want[j], "from remote rank %d: %d, want %d",
                     j, got[j], want[j]);
        sum += got[j];
    }
    MT_CHECK(sum == wsum, "sum of the remote ranks' messages %d, want %d",
             sum, wsum);
}

/* MPIX_Comm_ishrink of inter, tested while this rank computes, then
 * waited for: the request's error (its class is checked by the caller). */
static int ishrink_working(MPI_Comm *nc)
{
    MPI_Request req;
    volatile double x = 1.0;
    int done = 0, tests = 0, rc;

    MT_OK(MPIX_Comm_ishrink(inter, nc, &req));
    while (!done && tests < 1000) {
        for (int i = 0; i < 100000; i++) /* work that needs no MPI */
            x = x * 1.0000001 + 1e-9;
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        tests++;
        if (done)
            return rc;
        MT_OK(rc);
    }
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* Shrink inter (nonblocking: with ishrink_working), check the new
 * intercommunicator, free both. */
static void shrink_and_check(int nonblocking)
{
    MPI_Comm nc;
    MPI_Group g;
    int flag = 0, n, rn, sum = -1, want[64], nw, wsum = 0;
    int s = side(me);

    if (nonblocking)
        MT_OK(ishrink_working(&nc));
    else
        MT_OK(MPIX_Comm_shrink(inter, &nc));
    MT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_test_inter(nc, &flag));
    MT_CHECK(flag, "shrink of an intercommunicator is no intercommunicator");
    MT_OK(MPI_Comm_size(nc, &n));
    MT_OK(MPI_Comm_remote_size(nc, &rn));
    nw = side_members(s, 1, want);
    MT_CHECK(n == nw, "local group of %d, want %d", n, nw);
    MT_OK(MPI_Comm_group(nc, &g));
    check_group(g, want, nw, 1, "shrunk local group");
    nw = side_members(!s, 1, want);
    MT_CHECK(rn == nw, "remote group of %d, want %d", rn, nw);
    MT_OK(MPI_Comm_remote_group(nc, &g));
    check_group(g, want, nw, 1, "shrunk remote group");
    for (int i = 0; i < nw; i++)
        wsum += want[i];
    exchange(nc, 11, NULL, NULL);
    /* An intercommunicator's allreduce gives each group the remote
     * group's reduction. */
    MT_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, nc));
    MT_CHECK(sum == wsum, "allreduce across the groups %d, want %d", sum,
             wsum);
    MT_OK(MPI_Barrier(nc));
    flag = by_side(me);
    MT_OK(MPIX_Comm_agree(nc, &flag));
    MT_CHECK(flag == by_side(s ? 0 : np - 1), "agree on the shrunk "
             "intercommunicator: %#x", flag);
    MT_OK(MPI_Comm_free(&nc));
    MT_OK(MPI_Comm_free(&inter));
}

static void mode_agree(void)
{
    MPI_Group g;
    MPI_Request req;
    int flag, n, first = -1, dead[64], ndead = dead_list(dead), rlost = 0;

    for (int i = 0; i < ndead; i++)
        rlost |= side(dead[i]) != side(me);
    victims_die();
    /* The failures happen during the call: nobody acknowledged them. */
    flag = bit_flag(me);
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(inter, &flag));
    MT_CHECK(flag == remote_and(bit_flag), "agreed flag %#x, want %#x", flag,
             remote_and(bit_flag));
    /* The agreement made every survivor take both victims for dead. */
    MT_OK(MPIX_Comm_get_failed(inter, &g));
    check_group(g, dead, ndead, 0, "failed group");
    MT_OK(MPIX_Comm_failure_get_acked(inter, &g));
    check_group(g, dead, 0, 0, "acknowledged group");
    /* A wildcard receive from the remote group: pending while it has a
     * failure not acknowledged. */
    MT_OK(MPI_Irecv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 7, inter, &req));
    if (rlost) {
        EXPECT(MPIX_ERR_PROC_FAILED_PENDING,
               MPI_Wait(&req, MPI_STATUS_IGNORE));
        MT_CHECK(req != MPI_REQUEST_NULL, "the pending receive was freed");
    }
    /* Still not acknowledged: the same error again, everywhere (and
     * nobody sends before every survivor has passed the check above). */
    flag = 1;
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(inter, &flag));
    MT_CHECK(flag == 1, "agreed flag %#x, want 1", flag);
    MT_OK(MPIX_Comm_ack_failed(inter, 0, &n));
    MT_CHECK(n == 0, "%d acknowledged before acknowledging", n);
    MT_OK(MPIX_Comm_ack_failed(inter, np, &n));
    MT_CHECK(n == ndead, "%d acknowledged, want %d", n, ndead);
    MT_OK(MPIX_Comm_failure_get_acked(inter, &g));
    check_group(g, dead, ndead, 0, "acknowledged group");
    exchange(inter, 7, &req, &first);
    /* Acknowledged everywhere: success, each group gets the other's. */
    flag = by_side(me);
    MT_OK(MPIX_Comm_agree(inter, &flag));
    MT_CHECK(flag == by_side(side(me) ? 0 : np - 1), "agreed flag %#x", flag);
    flag = plus_one(me);
    MT_OK(MPIX_Comm_iagree(inter, &flag, &req));
    MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_CHECK(flag == remote_and(plus_one), "iagree flag %#x, want %#x", flag,
             remote_and(plus_one));
    shrink_and_check(0);
}

static void mode_shrink(void)
{
    victims_die();
    /* Shrink runs while the victims die: they are left out. */
    shrink_and_check(0);
}

static void mode_ishrink(void)
{
    victims_die();
    shrink_and_check(1);
}

/* The lowest survivor of the lower half revokes the intercommunicator
 * while the victims die; agree and shrink still work on it (ULFM), the
 * revocation reaches both groups, and other calls on it fail. */
static void mode_revoke(void)
{
    int flag = 1, revoked = 0, x = 0, tries = 0, first = 0;

    while (lost(first))
        first++;
    victims_die();
    if (me == first)
        MT_OK(MPIX_Comm_revoke(inter));
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(inter, &flag));
    /* Revocation is reliable but not synchronous: it comes. */
    for (; !revoked && tries < 20000; tries++) {
        MT_OK(MPIX_Comm_is_revoked(inter, &revoked));
        if (!revoked)
            usleep(100);
    }
    MT_CHECK(revoked, "the revocation did not arrive");
    EXPECT(MPIX_ERR_REVOKED, MPI_Send(&x, 1, MPI_INT, 0, 3, inter));
    EXPECT(MPIX_ERR_REVOKED, MPI_Barrier(inter));
    shrink_and_check(0);
}

static void wipe(int nonblocking)
{
    MPI_Comm nc = MPI_COMM_WORLD;
    MPI_Group g;
    int flag = 0x1234, dead[64], ndead = dead_list(dead);

    victims_die();
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(inter, &flag));
    MT_CHECK(flag == ~0, "the AND of no flags is %#x, want all ones", flag);
    MT_OK(MPIX_Comm_get_failed(inter, &g));
    check_group(g, dead, ndead, 0, "failed group");
    if (nonblocking)
        EXPECT(MPIX_ERR_PROC_FAILED, ishrink_working(&nc));
    else
        EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_shrink(inter, &nc));
    MT_CHECK(nc == MPI_COMM_NULL, "shrink without a remote group made one");
    MT_OK(MPI_Comm_free(&inter));
}

static void mode_wipe(void)
{
    wipe(0);
}

static void mode_iwipe(void)
{
    wipe(1);
}

static const struct {
    const char *name;
    void (*run)(void);
} modes[] = {
    {"agree", mode_agree},
    {"shrink", mode_shrink},
    {"ishrink", mode_ishrink},
    {"revoke", mode_revoke},
    {"wipe", mode_wipe},
    {"iwipe", mode_iwipe}};
static const int nmodes = sizeof(modes) / sizeof(modes[0]);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "agree";
    int m;

    ft_init(&argc, &argv, &me, &np);
    half = np / 2;
    if (np < 6 || np % 2 != 0 || np > 30) {
        if (me == 0)
            printf("SKIP: needs an even number of ranks, 6 to 30\n");
        MPI_Finalize();
        return 77;
    }
    if (strcmp(mode, "wipe") == 0 || strcmp(mode, "iwipe") == 0) {
        lostmask = ((1u << half) - 1) << half;
    } else {
        int va = argc > 2 ? atoi(argv[2]) : 1;
        int vb = argc > 3 ? atoi(argv[3]) : np - 2;
        MT_CHECK(va >= -1 && va < half && (vb == -1 || (vb >= half &&
                                                        vb < np)),
                 "victims: a rank of each half or -1, got %d and %d", va,
                 vb);
        lostmask = (va >= 0 ? 1u << va : 0) | (vb >= 0 ? 1u << vb : 0);
    }
    make_inter();
    for (m = 0; m < nmodes && strcmp(mode, modes[m].name) != 0; m++)
        ;
    if (m == nmodes)
        MT_FAIL("unknown mode %s", mode);
    modes[m].run();
    MT_OK(MPI_Finalize());
    if (me == (lost(0) ? 1 : 0))
        printf("OK ft inter %s: survivors of both groups agree\n", mode);
    return 0;
}
