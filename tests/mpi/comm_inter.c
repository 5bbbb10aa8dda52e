/*
 * Intercommunicators: create from two halves of the world, point-to-point
 * across (ranks address the remote group), dup, compare, merge with the
 * high flag ordering the groups (and ties broken the same on both sides),
 * split and create of intercommunicators, and split_type by host.
 */
#include "mpitest.h"

static int wsize, wrank;

static void across(MPI_Comm inter, int side)
{
    int lsize, rsize, lrank, flag, got = -1, want;

    MT_OK(MPI_Comm_test_inter(inter, &flag));
    MT_CHECK(flag == 1, "test_inter %d", flag);
    MT_OK(MPI_Comm_size(inter, &lsize));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    MT_OK(MPI_Comm_rank(inter, &lrank));
    MT_CHECK(lsize + rsize == wsize, "sizes %d + %d", lsize, rsize);
    /* rank i of each side talks to rank i % rsize of the other */
    want = side == 0 ? lsize + lrank % rsize : lrank % rsize;
    if (lrank < rsize || lsize <= rsize) {
        MPI_Request r;
        MT_OK(MPI_Isend(&wrank, 1, MPI_INT, lrank % rsize, 3, inter, &r));
        MT_OK(MPI_Recv(&got, 1, MPI_INT, lrank % rsize, 3, inter,
                       MPI_STATUS_IGNORE));
        MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MT_CHECK(got == want, "side %d rank %d got %d, want %d", side, lrank,
                 got, want);
    }
    (void)want;
}

static void merged(MPI_Comm inter, int side, int high, int expect_first)
{
    MPI_Comm m;
    int n, r, lsize;

    MT_OK(MPI_Comm_size(inter, &lsize));
    MT_OK(MPI_Intercomm_merge(inter, high, &m));
    MT_OK(MPI_Comm_size(m, &n));
    MT_OK(MPI_Comm_rank(m, &r));
    MT_CHECK(n == wsize, "merged size %d", n);
    /* expect_first: the side whose ranks come first */
    if (side == expect_first)
        MT_CHECK(r < lsize, "side %d should be first: rank %d", side, r);
    else
        MT_CHECK(r >= wsize - lsize, "side %d should be last: rank %d", side,
                 r);
    {
        /* a ring over the merged communicator */
        int got = -1;
        MT_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 9, &got, 1, MPI_INT,
                           (r + n - 1) % n, 9, m, MPI_STATUS_IGNORE));
        MT_CHECK(got == (r + n - 1) % n, "merged ring got %d", got);
    }
    MT_OK(MPI_Comm_free(&m));
}

/* Split an intercommunicator by wrank % 3 (color 2 of the lower side is
 * MPI_UNDEFINED): each color joins its members of both sides; a color with
 * members on one side only gives MPI_COMM_NULL. */
static void inter_split(MPI_Comm inter, int side)
{
    int color = wrank % 3, lsize, rsize, n_here = 0, n_there = 0;
    MPI_Comm sub;

    /* split_type by host: every rank is on this host, so the whole
     * intercommunicator again */
    MT_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                              &sub));
    MT_CHECK(sub != MPI_COMM_NULL, "split_type of an intercomm gave nothing");
    MT_OK(MPI_Comm_test_inter(sub, &lsize));
    MT_CHECK(lsize == 1, "split_type of an intercomm is not inter");
    MT_OK(MPI_Comm_size(sub, &lsize));
    MT_OK(MPI_Comm_remote_size(sub, &rsize));
    MT_CHECK(lsize + rsize == wsize, "split_type sizes %d + %d", lsize, rsize);
    MT_OK(MPI_Comm_free(&sub));

    if (side == 0 && color == 2)
        color = MPI_UNDEFINED;
    MT_OK(MPI_Comm_split(inter, color, -wrank, &sub));
    for (int w = 0; w < wsize; w++) {
        int wside = w < wsize / 2 ? 0 : 1, wc = w % 3;
        if (color == MPI_UNDEFINED || wc != color)
            continue;
        if (wside == 0 && wc == 2)
            continue;
        if (wside == side)
            n_here++;
        else
            n_there++;
    }
    if (color == MPI_UNDEFINED || n_there == 0) {
        MT_CHECK(sub == MPI_COMM_NULL, "split of color %d gave a comm", color);
        return;
    }
    MT_CHECK(sub != MPI_COMM_NULL, "split of color %d gave nothing", color);
    MT_OK(MPI_Comm_size(sub, &lsize));
    MT_OK(MPI_Comm_remote_size(sub, &rsize));
    MT_CHECK(lsize == n_here && rsize == n_there, "split sizes %d/%d want "
             "%d/%d", lsize, rsize, n_here, n_there);
    {
        /* keys are -wrank: the remote group comes in descending world
         * ranks */
        int all[64], k = 0;
        MT_OK(MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, sub));
        for (int w = wsize - 1; w >= 0; w--)
            if (w % 3 == color && (w < wsize / 2 ? 0 : 1) != side) {
                MT_CHECK(all[k] == w, "split remote rank %d is world %d, "
                         "want %d", k, all[k], w);
                k++;
            }
    }
    MT_OK(MPI_Comm_free(&sub));
}

/* Comm_create on an intercommunicator: each side keeps its even local
 * ranks, listed in reverse. */
static void inter_create(MPI_Comm inter)
{
    MPI_Group g, sub;
    MPI_Comm c;
    int lsize, rsize, lrank, n = 0, ranks[64];

    MT_OK(MPI_Comm_size(inter, &lsize));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    MT_OK(MPI_Comm_rank(inter, &lrank));
    for (int i = lsize - 1; i >= 0; i--)
        if (i % 2 == 0)
            ranks[n++] = i;
    MT_OK(MPI_Comm_group(inter, &g));
    MT_OK(MPI_Group_incl(g, n, ranks, &sub));
    MT_OK(MPI_Comm_create(inter, sub, &c));
    if (lrank % 2) {
        MT_CHECK(c == MPI_COMM_NULL, "create: odd rank got a comm");
    } else {
        int cs, crs, cr, v = -1, want = 0;
        MT_CHECK(c != MPI_COMM_NULL, "create: even rank got nothing");
        MT_OK(MPI_Comm_size(c, &cs));
        MT_OK(MPI_Comm_remote_size(c, &crs));
        MT_OK(MPI_Comm_rank(c, &cr));
        MT_CHECK(cs == n && crs == (rsize + 1) / 2, "create sizes %d/%d", cs,
                 crs);
        MT_CHECK(cr == (lsize - 1) / 2 - lrank / 2, "create rank %d", cr);
        /* remote rank 0 is the remote side's highest even local rank */
        MT_OK(MPI_Allreduce(&lrank, &v, 1, MPI_INT, MPI_SUM, c));
        for (int i = 0; i < rsize; i += 2)
            want += i;
        MT_CHECK(v == want, "create allreduce %d want %d", v, want);
        MT_OK(MPI_Comm_free(&c));
    }
    MT_OK(MPI_Group_free(&sub));
    MT_OK(MPI_Group_free(&g));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_create_group(inter, MPI_GROUP_EMPTY, 0, &c));
}

static void intercomm(void)
{
    MPI_Comm half, inter, dup;
    int side = wrank < wsize / 2 ? 0 : 1, res;

    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &half));
    /* leaders: world 0 and world wsize/2; the peer comm is world */
    MT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD,
                               side == 0 ? wsize / 2 : 0, 42, &inter));
    across(inter, side);
    MT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    inter_split(inter, side);
    inter_create(inter);
    MT_OK(MPI_Comm_dup(inter, &dup));
    MT_OK(MPI_Comm_compare(inter, dup, &res));
    MT_CHECK(res == MPI_CONGRUENT, "inter dup compare %d", res);
    across(dup, side);
    MT_OK(MPI_Comm_free(&dup));
    merged(inter, side, side == 0, 1);   /* side 0 high: side 1 first */
    merged(inter, side, side == 1, 0);   /* side 1 high: side 0 first */
    merged(inter, side, 0, 0);           /* tie: deterministic (world 0 first) */
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Comm_free(&half));
}

static void bad_args(void)
{
    MPI_Comm c;
    int n;

    MT_ERR(MPI_ERR_COMM, MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c));
    MT_ERR(MPI_ERR_RANK, MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_WORLD,
                                              0, 1, &c));
    MT_ERR(MPI_ERR_TAG, MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD,
                                             0, -3, &c));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_SELF, &n));
}

static void split_type(void)
{
    MPI_Comm node;
    MPI_Group g, w;
    int n, r, res, flag;

    /* shoalrun starts every rank on this host */
    MT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -wrank,
                              MPI_INFO_NULL, &node));
    MT_OK(MPI_Comm_size(node, &n));
    MT_OK(MPI_Comm_rank(node, &r));
    MT_CHECK(n == wsize && r == wsize - 1 - wrank, "node size %d rank %d", n,
             r);
    MT_OK(MPI_Comm_group(node, &g));
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MT_OK(MPI_Group_compare(g, w, &res));
    MT_CHECK(res == (wsize == 1 ? MPI_IDENT : MPI_SIMILAR), "compare %d", res);
    MT_OK(MPI_Group_free(&g));
    MT_OK(MPI_Group_free(&w));
    MT_OK(MPI_Comm_free(&node));
    MT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL,
                              &node));
    MT_CHECK(node == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    /* everyone shares the host: no strict subset to give */
    MT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0,
                              MPI_INFO_NULL, &node));
    MT_CHECK(node == MPI_COMM_NULL, "unguided split of one host");
    MT_ERR(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0,
                                            MPI_INFO_NULL, &node));
    MT_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    MT_CHECK(flag == 0, "world is not inter");
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    split_type();
    bad_args();
    if (wsize >= 2)
        intercomm();
    MT_OK(MPI_Finalize());
    if (wrank == 0)
        printf("comm_inter: ok on %d ranks\n", wsize);
    return 0;
}
