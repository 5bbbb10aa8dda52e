/*
 * Collectives on communicators other than MPI_COMM_WORLD: a split
 * (reversed order, so comm ranks differ from world ranks), a dup used in
 * alternation with its parent (same call sequence, separate contexts), and
 * an intercommunicator between the lower and upper half of the world
 * (rooted calls with MPI_ROOT / MPI_PROC_NULL, all-to-all forms across the
 * groups, and the calls not defined there refused with MPI_ERR_COMM).
 */
#include "coll_test.h"

static int wrank, wsize;

static int val(int who, int i)
{
    return who * 1000 + i + 1;
}

/* A set of intracommunicator collectives checked on comm; world[] maps
 * comm ranks to world ranks, whose numbers the data carries. */
static void run_intra(MPI_Comm comm, const char *name)
{
    int r, p;
    MT_OK(MPI_Comm_rank(comm, &r));
    MT_OK(MPI_Comm_size(comm, &p));
    int *world = malloc(sizeof(int) * (size_t)p);
    int *buf = malloc(sizeof(int) * 4 * (size_t)p);
    int *out = malloc(sizeof(int) * 4 * (size_t)p);
    MT_OK(MPI_Allgather(&wrank, 1, MPI_INT, world, 1, MPI_INT, comm));
    CT_CHECK(world[r] == wrank, "%s: allgather of world ranks", name);

    for (int root = 0; root < p; root++) {
        int x[3];
        for (int i = 0; i < 3; i++)
            x[i] = r == root ? val(wrank, i) : -1;
        MT_OK(MPI_Bcast(x, 3, MPI_INT, root, comm));
        for (int i = 0; i < 3; i++)
            CT_CHECK(x[i] == val(world[root], i), "%s: bcast root %d", name,
                     root);
        int s = val(wrank, 0), sum = 0, want = 0;
        for (int j = 0; j < p; j++)
            want += val(world[j], 0);
        MT_OK(MPI_Reduce(&s, &sum, 1, MPI_INT, MPI_SUM, root, comm));
        CT_CHECK(r != root || sum == want, "%s: reduce root %d: %d", name,
                 root, sum);
        MT_OK(MPI_Gather(&s, 1, MPI_INT, buf, 1, MPI_INT, root, comm));
        for (int j = 0; r == root && j < p; j++)
            CT_CHECK(buf[j] == val(world[j], 0), "%s: gather", name);
    }
    for (int j = 0; j < 2 * p; j++)
        buf[j] = val(wrank, j);
    MT_OK(MPI_Alltoall(buf, 2, MPI_INT, out, 2, MPI_INT, comm));
    for (int j = 0; j < p; j++)
        for (int k = 0; k < 2; k++)
            CT_CHECK(out[2 * j + k] == val(world[j], 2 * r + k),
                     "%s: alltoall", name);
    int s = val(wrank, 0), pre = 0, want = 0;
    MT_OK(MPI_Scan(&s, &pre, 1, MPI_INT, MPI_SUM, comm));
    for (int j = 0; j <= r; j++)
        want += val(world[j], 0);
    CT_CHECK(pre == want, "%s: scan %d want %d", name, pre, want);
    MT_OK(MPI_Barrier(comm));
    free(world);
    free(buf);
    free(out);
}

static void test_split_dup(void)
{
    MPI_Comm half, dup;
    /* Two colors, comm rank order reversed with respect to world. */
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half));
    run_intra(half, "split");
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int i = 0; i < 3; i++) {
        run_intra(dup, "dup");
        run_intra(MPI_COMM_WORLD, "world");
    }
    /* Interleaved without waiting: a message of one must not land in the
     * other even though both are at the same point of their sequence. */
    int a = wrank, b = -wrank, sa = 0, sb = 0;
    MT_OK(MPI_Allreduce(&a, &sa, 1, MPI_INT, MPI_SUM, dup));
    MT_OK(MPI_Allreduce(&b, &sb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CT_CHECK(sa == wsize * (wsize - 1) / 2 && sb == -sa, "dup/world mix");
    MT_OK(MPI_Comm_free(&dup));
    MT_OK(MPI_Comm_free(&half));
}

/* ---- intercommunicator -------------------------------------------------------- */

static void test_inter(void)
{
    MPI_Comm local, inter;
    int low = wrank < wsize / 2; /* lower half: group A */
    int lrank, lsize, rsize;

    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local));
    MT_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD,
                               low ? wsize / 2 : 0, 7, &inter));
    MT_OK(MPI_Comm_rank(inter, &lrank));
    MT_OK(MPI_Comm_size(inter, &lsize));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    /* world rank of remote rank j */
    int rbase = low ? wsize / 2 : 0;

    MT_OK(MPI_Barrier(inter));

    /* Rooted calls, root = rank 1 of A (or 0 if A has one member). */
    int aroot = lsize > 1 && low ? 1 : 0;
    if (!low)
        aroot = wsize / 2 > 1 ? 1 : 0;
    int myroot = low ? (lrank == aroot ? MPI_ROOT : MPI_PROC_NULL) : aroot;
    int x[2] = {-1, -1};
    if (myroot == MPI_ROOT) {
        x[0] = 77;
        x[1] = 78;
    }
    MT_OK(MPI_Bcast(x, 2, MPI_INT, myroot, inter));
    if (!low)
        CT_CHECK(x[0] == 77 && x[1] == 78, "inter bcast");

    /* B reduces to A's root; non-commutativity aside, sum of world ranks. */
    int s = wrank, sum = -1, want = 0;
    for (int j = 0; j < rsize; j++)
        want += rbase + j;
    MT_OK(MPI_Reduce(&s, &sum, 1, MPI_INT, MPI_SUM, myroot, inter));
    if (myroot == MPI_ROOT)
        CT_CHECK(sum == want, "inter reduce %d want %d", sum, want);

    int *g = malloc(sizeof(int) * 2 * (size_t)(wsize + 1));
    MT_OK(MPI_Gather(&s, 1, MPI_INT, g, 1, MPI_INT, myroot, inter));
    for (int j = 0; myroot == MPI_ROOT && j < rsize; j++)
        CT_CHECK(g[j] == rbase + j, "inter gather");
    for (int j = 0; j < rsize; j++)
        g[j] = myroot == MPI_ROOT ? 500 + j : -1;
    int one = -1;
    MT_OK(MPI_Scatter(g, 1, MPI_INT, &one, 1, MPI_INT, myroot, inter));
    if (!low)
        CT_CHECK(one == 500 + lrank, "inter scatter %d", one);

    /* Allreduce: each group gets the other group's sum. */
    MT_OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, inter));
    CT_CHECK(sum == want, "inter allreduce %d want %d", sum, want);
    /* Allgather: the remote group's world ranks, in order. */
    MT_OK(MPI_Allgather(&s, 1, MPI_INT, g, 1, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        CT_CHECK(g[j] == rbase + j, "inter allgather");
    /* Alltoall: block j to remote j. */
    int *sb = malloc(sizeof(int) * (size_t)(rsize + 1));
    for (int j = 0; j < rsize; j++)
        sb[j] = wrank * 100 + j;
    MT_OK(MPI_Alltoall(sb, 1, MPI_INT, g, 1, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        CT_CHECK(g[j] == (rbase + j) * 100 + lrank, "inter alltoall");

    /* Reduce_scatter: both groups reduce vectors of n = 2 * wsize
     * elements; the remote group's sum is scattered over this group by
     * this group's counts (local rank i gets counts[i]). */
    {
        int n = 2 * wsize, *v = malloc(sizeof(int) * (size_t)n);
        int *counts = malloc(sizeof(int) * (size_t)lsize), first = 0;
        int *r = malloc(sizeof(int) * (size_t)n);
        MPI_Request req;

        for (int i = 0; i < lsize; i++)
            counts[i] = n / lsize + (i < n % lsize);
        for (int i = 0; i < lrank; i++)
            first += counts[i];
        for (int i = 0; i < n; i++)
            v[i] = wrank * 1000 + i;
        MT_OK(MPI_Reduce_scatter(v, r, counts, MPI_INT, MPI_SUM, inter));
        for (int i = 0; i < counts[lrank]; i++) {
            int w = 0;
            for (int j = 0; j < rsize; j++)
                w += (rbase + j) * 1000 + first + i;
            CT_CHECK(r[i] == w, "inter reduce_scatter [%d] %d want %d", i,
                     r[i], w);
        }
        /* block form: the groups' counts differ, their products do not */
        int bc = n / lsize;
        if (n % lsize == 0 && n % rsize == 0) {
            MT_OK(MPI_Ireduce_scatter_block(v, r, bc, MPI_INT, MPI_MAX, inter,
                                            &req));
            MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (int i = 0; i < bc; i++) {
                int w = (rbase + rsize - 1) * 1000 + lrank * bc + i;
                CT_CHECK(r[i] == w, "inter reduce_scatter_block [%d] %d "
                         "want %d", i, r[i], w);
            }
        }
        free(v);
        free(r);
        free(counts);
    }

    MT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_COMM, MPI_Scan(&s, &sum, 1, MPI_INT, MPI_SUM, inter));
    MT_ERR(MPI_ERR_BUFFER, MPI_Reduce_scatter_block(MPI_IN_PLACE, &sum, 1,
                                                    MPI_INT, MPI_SUM, inter));
    MT_ERR(MPI_ERR_BUFFER, MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT,
                                         MPI_SUM, inter));
    free(g);
    free(sb);
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    test_split_dup();
    if (wsize >= 2)
        test_inter();
    MT_OK(MPI_Finalize());
    return 0;
}
