/*
 * Sessions (MPI 4.0 section 11.3): MPI without MPI_Init, and beside it.
 *
 *   session only   two sessions one after the other, no MPI_Init: process
 *                  sets, groups, MPI_Comm_create_from_group, collectives
 *                  and point-to-point on the result, an intercommunicator
 *                  from two groups, error handlers, bad arguments
 *   session mixed  MPI_Init, a session beside it, MPI_Finalize while the
 *                  session lives on (its communicator still works), then
 *                  the last MPI_Session_finalize
 */
#include <string.h>

#include "mpitest.h"

static int handler_calls, handler_last;

static void session_handler(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_last = *code;
}

static void comm_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
}

static MPI_Session open_session(const char *level)
{
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Info info;
    char got[64];
    int flag = 0;

    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "thread_level", level));
    MT_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MT_OK(MPI_Info_free(&info));
    MT_CHECK(s != MPI_SESSION_NULL, "no session");
    MT_OK(MPI_Session_get_info(s, &info));
    MT_OK(MPI_Info_get(info, "thread_level", sizeof(got) - 1, got, &flag));
    MT_CHECK(flag, "thread_level missing from the session's info");
    if (strcmp(level, "MPI_THREAD_MULTIPLE") == 0)
        MT_CHECK(strcmp(got, level) == 0, "thread_level %s, asked %s", got,
                 level);
    MT_OK(MPI_Info_free(&info));
    return s;
}

/* The process sets: two, named as the standard says, and their sizes. */
static void check_psets(MPI_Session s, int *world_size)
{
    int n = 0, len = 0, flag = 0;
    char name[MPI_MAX_PSET_NAME_LEN], val[32];
    MPI_Info info;

    MT_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    MT_CHECK(n >= 2, "%d process sets", n);
    len = 0;
    MT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
    MT_CHECK(len == (int)strlen("mpi://WORLD") + 1, "length %d", len);
    MT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
    MT_CHECK(strcmp(name, "mpi://WORLD") == 0, "pset 0 is %s", name);
    len = (int)sizeof(name);
    MT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name));
    MT_CHECK(strcmp(name, "mpi://SELF") == 0, "pset 1 is %s", name);
    len = 5; /* too short: cut, terminated */
    MT_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
    MT_CHECK(strcmp(name, "mpi:") == 0, "cut name %s", name);
    len = (int)sizeof(name);
    MT_ERR(MPI_ERR_ARG,
           MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name));
    MT_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    MT_OK(MPI_Info_get(info, "mpi_size", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag, "mpi_size missing");
    *world_size = atoi(val);
    MT_CHECK(*world_size >= 1, "mpi_size %s", val);
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    MT_OK(MPI_Info_get(info, "mpi_size", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && atoi(val) == 1, "SELF's mpi_size %s", val);
    MT_OK(MPI_Info_free(&info));
    MT_ERR(MPI_ERR_ARG, MPI_Session_get_pset_info(s, "mpi://NOPE", &info));
}

/* A communicator of the WORLD set: sizes, a reduction, a ring. */
static MPI_Comm world_comm(MPI_Session s, const char *tag, int world_size)
{
    MPI_Group g;
    MPI_Comm c;
    int size, rank, sum = 0, next, prev, got = -1;

    MT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &c));
    MT_OK(MPI_Group_free(&g));
    MT_OK(MPI_Comm_size(c, &size));
    MT_OK(MPI_Comm_rank(c, &rank));
    MT_CHECK(size == world_size, "size %d, mpi_size %d", size, world_size);
    MT_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    MT_CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MT_OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7,
                       c, MPI_STATUS_IGNORE));
    MT_CHECK(got == prev, "got %d from %d", got, prev);
    return c;
}

/* The errors a session's calls report to its handler. */
static void check_errors(MPI_Session s, MPI_Comm world)
{
    MPI_Errhandler eh, got;
    MPI_Group g, self_g;
    MPI_Comm c;
    int rank, size;

    MT_OK(MPI_Session_create_errhandler(session_handler, &eh));
    MT_OK(MPI_Session_set_errhandler(s, eh));
    MT_OK(MPI_Session_get_errhandler(s, &got));
    MT_CHECK(got == eh, "get_errhandler gave another handler");
    MT_OK(MPI_Errhandler_free(&got));
    handler_calls = 0;
    MPI_Group g0;
    (void)MPI_Group_from_session_pset(s, "no-such-set", &g0);
    MT_CHECK(handler_calls == 1 && handler_last == MPI_ERR_ARG,
             "handler calls %d, last %d", handler_calls, handler_last);
    MT_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    MT_CHECK(handler_calls == 2 && handler_last == MPI_ERR_OTHER,
             "call_errhandler: calls %d, last %d", handler_calls,
             handler_last);
    MT_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MT_OK(MPI_Errhandler_free(&eh));
    /* A communicator's error handler function is not a session's. */
    MT_OK(MPI_Comm_create_errhandler(comm_handler, &got));
    MT_ERR(MPI_ERR_ARG, MPI_Session_set_errhandler(s, got));
    MT_OK(MPI_Errhandler_free(&got));

    /* A group without the caller, and a bad tag. */
    MT_OK(MPI_Comm_rank(world, &rank));
    MT_OK(MPI_Comm_size(world, &size));
    MT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    if (size > 1) {
        int other = (rank + 1) % size;
        MPI_Group one;
        MT_OK(MPI_Group_incl(g, 1, &other, &one));
        MT_ERR(MPI_ERR_GROUP,
               MPI_Comm_create_from_group(one, "t-other", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &c));
        MT_CHECK(c == MPI_COMM_NULL, "newcomm set on an error");
        MT_OK(MPI_Group_free(&one));
    }
    MT_ERR(MPI_ERR_ARG, MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL,
                                                   MPI_ERRORS_RETURN, &c));
    MT_OK(MPI_Group_free(&g));
    /* The SELF set: a communicator of one. */
    MT_OK(MPI_Group_from_session_pset(s, "mpi://self", &self_g));
    MT_OK(MPI_Comm_create_from_group(self_g, "t-self", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &c));
    MT_OK(MPI_Comm_size(c, &size));
    MT_CHECK(size == 1, "SELF comm size %d", size);
    MT_OK(MPI_Comm_free(&c));
    MT_OK(MPI_Group_free(&self_g));
}

/* Evens and odds of the WORLD set joined by an intercommunicator. */
static void check_intercomm(MPI_Session s, int world_size)
{
    MPI_Group g, evens, odds;
    MPI_Comm inter, merged;
    int rank = -1, n_even = (world_size + 1) / 2, n_odd = world_size / 2;
    int *ev = malloc(sizeof(int) * (size_t)n_even);
    int *od = malloc(sizeof(int) * (size_t)(n_odd + 1));
    int rsize, mine, theirs = -1, msize;

    if (world_size < 2) {
        free(ev);
        free(od);
        return;
    }
    for (int i = 0; i < n_even; i++)
        ev[i] = 2 * i;
    for (int i = 0; i < n_odd; i++)
        od[i] = 2 * i + 1;
    MT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MT_OK(MPI_Group_rank(g, &rank));
    MT_OK(MPI_Group_incl(g, n_even, ev, &evens));
    MT_OK(MPI_Group_incl(g, n_odd, od, &odds));
    int even = rank % 2 == 0;
    MT_OK(MPI_Intercomm_create_from_groups(even ? evens : odds, 0,
                                           even ? odds : evens, 0,
                                           "t-inter", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &inter));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    MT_CHECK(rsize == (even ? n_odd : n_even), "remote size %d", rsize);
    /* Each side's rank 0 tells the other side's rank 0 its world rank. */
    int lrank;
    MT_OK(MPI_Comm_rank(inter, &lrank));
    if (lrank == 0) {
        mine = rank;
        MT_OK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 3, &theirs, 1, MPI_INT, 0,
                           3, inter, MPI_STATUS_IGNORE));
        MT_CHECK(theirs == (even ? 1 : 0), "the other leader is %d",
                 theirs);
    }
    MT_OK(MPI_Intercomm_merge(inter, even ? 0 : 1, &merged));
    MT_OK(MPI_Comm_size(merged, &msize));
    MT_CHECK(msize == world_size, "merged size %d", msize);
    int sum = 0;
    MT_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    MT_CHECK(sum == world_size * (world_size - 1) / 2, "merged sum %d", sum);
    /* Overlapping groups are refused. */
    MPI_Comm bad;
    MT_ERR(MPI_ERR_GROUP,
           MPI_Intercomm_create_from_groups(even ? evens : odds, 0, g, 0,
                                            "t-bad", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &bad));
    MT_OK(MPI_Comm_free(&merged));
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Group_free(&evens));
    MT_OK(MPI_Group_free(&odds));
    MT_OK(MPI_Group_free(&g));
    free(ev);
    free(od);
}

static void mode_only(void)
{
    int flag = 1, world_size = 0;

    MT_OK(MPI_Initialized(&flag));
    MT_CHECK(!flag, "MPI_Initialized before anything");
    MPI_Session s = open_session("MPI_THREAD_MULTIPLE");
    MT_OK(MPI_Initialized(&flag));
    MT_CHECK(!flag, "MPI_Initialized is true with a session only");
    check_psets(s, &world_size);
    MPI_Comm c = world_comm(s, "org.shoal.test.session-1", world_size);
    check_errors(s, c);
    check_intercomm(s, world_size);
    MT_OK(MPI_Comm_free(&c));
    MT_OK(MPI_Session_finalize(&s));
    MT_CHECK(s == MPI_SESSION_NULL, "finalize left the handle");

    /* A second session after the first ended: the library still runs. */
    MPI_Session s2 = open_session("MPI_THREAD_SINGLE");
    MPI_Comm c2 = world_comm(s2, "org.shoal.test.session-2", world_size);
    MPI_Comm c3 = world_comm(s2, "org.shoal.test.session-3", world_size);
    MT_OK(MPI_Comm_free(&c3));
    int r;
    MT_OK(MPI_Comm_rank(c2, &r));
    MT_OK(MPI_Comm_free(&c2));
    MT_OK(MPI_Session_finalize(&s2));
    MT_OK(MPI_Finalized(&flag));
    MT_CHECK(!flag, "MPI_Finalized without MPI_Init");
    if (r == 0)
        printf("OK session only: %d ranks\n", world_size);
}

static void mode_mixed(int argc, char **argv)
{
    int provided, flag = 0, world_size, wrank;

    MT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    /* A library's own session beside the program's MPI_Init, repeated. */
    for (int i = 0; i < 3; i++) {
        MPI_Session s = open_session("MPI_THREAD_SINGLE");
        char tag[64];
        snprintf(tag, sizeof(tag), "org.shoal.test.lib-%d", i);
        MPI_Comm c = world_comm(s, tag, world_size);
        int crank;
        MT_OK(MPI_Comm_rank(c, &crank));
        MT_CHECK(crank == wrank, "rank %d in the session's, %d in world",
                 crank, wrank);
        MT_OK(MPI_Comm_free(&c));
        MT_OK(MPI_Session_finalize(&s));
    }
    /* The session outlives MPI_Finalize; its communicator works on. */
    MPI_Session s = open_session("MPI_THREAD_SINGLE");
    MPI_Comm c = world_comm(s, "org.shoal.test.after", world_size);
    MT_OK(MPI_Finalize());
    MT_OK(MPI_Finalized(&flag));
    MT_CHECK(flag, "MPI_Finalized after MPI_Finalize");
    int sum = 0, one = 1;
    MT_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    MT_CHECK(sum == world_size, "after MPI_Finalize: sum %d", sum);
    MT_OK(MPI_Comm_free(&c));
    MT_OK(MPI_Session_finalize(&s));
    if (wrank == 0)
        printf("OK session mixed: %d ranks\n", world_size);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "only";

    if (strcmp(mode, "mixed") == 0)
        mode_mixed(argc, argv);
    else
        mode_only();
    return 0;
}
