/*
 * Data-moving collectives on MPI_COMM_WORLD, each result checked against
 * what a serial program computes: barrier, bcast (short and long, every
 * root), gather(v), scatter(v), allgather(v), alltoall(v), with
 * MPI_IN_PLACE where the standard allows it, zero counts, gaps in v-form
 * buffers that must stay untouched, and many collectives back to back.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "coll_test.h"

static int rank, size;

/* The value rank r contributes at position i. */
static int val(int r, int i)
{
    return r * 100003 + i * 7 + 1;
}

static int *ints(int n, int fill)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    CT_CHECK(p != NULL, "malloc");
    for (int i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_barrier(void)
{
    for (int i = 0; i < 20; i++)
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The last rank enters late: nobody may leave before it entered.  A
     * rank that itself came late (descheduled on a loaded machine, or a
     * retransmission) may leave at once; so the late rank's entry time
     * (wall clock, alike on ranks of one machine, within NTP's skew
     * across hosts) is sent round afterwards and compared too. */
    for (int late = 0; late < size; late += size > 3 ? 3 : 1) {
        double t0 = now(), entered = 0, left, took;
        if (rank == late) {
            struct timespec d = {0, 200 * 1000 * 1000};
            nanosleep(&d, NULL);
            entered = wall();
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        left = wall();
        took = now() - t0;
        MT_OK(MPI_Bcast(&entered, 1, MPI_DOUBLE, late, MPI_COMM_WORLD));
        CT_CHECK(took >= 0.1 || left >= entered - 0.01,
                 "left the barrier %.3f s after entering and %.3f s before "
                 "rank %d entered it", took, entered - left, late);
    }
}

static void test_bcast(void)
{
    /* 40000 ints = 160000 bytes: the scatter + allgather path. */
    int counts[] = {0, 1, 7, 1000, 40000};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int n = counts[k];
        int *b = ints(n, -1);
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? val(root, i) : -1;
            MT_OK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++)
                CT_CHECK(b[i] == val(root, i), "bcast n=%d root=%d b[%d]=%d",
                         n, root, i, b[i]);
        }
        free(b);
    }
}

static void test_gather(void)
{
    const int n = 3;
    int *s = ints(n, 0), *r = ints(n * size, -1);

    for (int root = 0; root < size; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < n; i++)
                s[i] = val(rank, i);
            for (int i = 0; i < n * size; i++)
                r[i] = -1;
            if (inplace && rank == root)
                for (int i = 0; i < n; i++)
                    r[root * n + i] = val(root, i);
            MT_OK(MPI_Gather(inplace && rank == root ? MPI_IN_PLACE : s, n,
                             MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
            for (int j = 0; rank == root && j < size; j++)
                for (int i = 0; i < n; i++)
                    CT_CHECK(r[j * n + i] == val(j, i),
                             "gather root=%d inplace=%d r[%d]", root, inplace,
                             j * n + i);
            if (rank != root)
                CT_CHECK(r[0] == -1, "non-root recvbuf touched");
        }
    }
    free(s);
    free(r);
}

/* v-forms: rank j has j % 3 elements (some have none); blocks are stored in
 * reverse rank order with a gap of one element after each. */
static void v_layout(int *counts, int *displs, int *total)
{
    int d = 0;
    for (int j = size - 1; j >= 0; j--) {
        counts[j] = j % 3;
        displs[j] = d;
        d += counts[j] + 1;
    }
    *total = d;
}

static void test_gatherv(void)
{
    int *counts = ints(size, 0), *displs = ints(size, 0), total;
    v_layout(counts, displs, &total);
    int *s = ints(3, 0), *r = ints(total, -1);

    for (int root = 0; root < size; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            int me = rank == root;
            for (int i = 0; i < 3; i++)
                s[i] = val(rank, i);
            for (int i = 0; i < total; i++)
                r[i] = -1;
            if (inplace && me)
                for (int i = 0; i < counts[root]; i++)
                    r[displs[root] + i] = val(root, i);
            MT_OK(MPI_Gatherv(inplace && me ? MPI_IN_PLACE : s, counts[rank],
                              MPI_INT, r, counts, displs, MPI_INT, root,
                              MPI_COMM_WORLD));
            if (!me)
                continue;
            for (int j = 0; j < size; j++) {
                for (int i = 0; i < counts[j]; i++)
                    CT_CHECK(r[displs[j] + i] == val(j, i),
                             "gatherv root=%d from %d elem %d", root, j, i);
                CT_CHECK(r[displs[j] + counts[j]] == -1, "gap after %d", j);
            }
        }
    }
    free(counts);
    free(displs);
    free(s);
    free(r);
}

static void test_scatter(void)
{
    const int n = 4;
    int *s = ints(n * size, 0), *r = ints(n, -1);

    for (int root = 0; root < size; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            int me = rank == root;
            for (int i = 0; i < n * size; i++)
                s[i] = me ? val(root, i) : -7;
            for (int i = 0; i < n; i++)
                r[i] = -1;
            MT_OK(MPI_Scatter(s, n, MPI_INT, inplace && me ? MPI_IN_PLACE : r,
                              n, MPI_INT, root, MPI_COMM_WORLD));
            if (inplace && me) {
                CT_CHECK(r[0] == -1, "in-place root's recvbuf touched");
                CT_CHECK(s[root * n] == val(root, root * n), "sendbuf");
                continue;
            }
            for (int i = 0; i < n; i++)
                CT_CHECK(r[i] == val(root, rank * n + i),
                         "scatter root=%d r[%d]=%d", root, i, r[i]);
        }
    }
    free(s);
    free(r);
}

static void test_scatterv(void)
{
    int *counts = ints(size, 0), *displs = ints(size, 0), total;
    v_layout(counts, displs, &total);
    int *s = ints(total, 0), *r = ints(4, -1);

    for (int root = 0; root < size; root++) {
        for (int i = 0; i < total; i++)
            s[i] = rank == root ? val(root, i) : -7;
        for (int i = 0; i < 4; i++)
            r[i] = -1;
        MT_OK(MPI_Scatterv(s, counts, displs, MPI_INT, r, counts[rank],
                           MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < counts[rank]; i++)
            CT_CHECK(r[i] == val(root, displs[rank] + i), "scatterv");
        CT_CHECK(r[counts[rank]] == -1, "scatterv wrote past its count");
    }
    free(counts);
    free(displs);
    free(s);
    free(r);
}

static void test_allgather(void)
{
    for (int n = 0; n <= 5; n += 5) {
        int *s = ints(n, 0), *r = ints(n * size + 1, -1);
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < n; i++)
                s[i] = val(rank, i);
            for (int i = 0; i <= n * size; i++)
                r[i] = -1;
            if (inplace)
                for (int i = 0; i < n; i++)
                    r[rank * n + i] = val(rank, i);
            MT_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : s, n, MPI_INT, r, n,
                                MPI_INT, MPI_COMM_WORLD));
            for (int j = 0; j < size; j++)
                for (int i = 0; i < n; i++)
                    CT_CHECK(r[j * n + i] == val(j, i),
                             "allgather n=%d inplace=%d from %d elem %d", n,
                             inplace, j, i);
            CT_CHECK(r[n * size] == -1, "allgather wrote past the end");
        }
        free(s);
        free(r);
    }
}

static void test_allgatherv(void)
{
    int *counts = ints(size, 0), *displs = ints(size, 0), total;
    v_layout(counts, displs, &total);
    int *s = ints(3, 0), *r = ints(total, -1);

    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < 3; i++)
            s[i] = val(rank, i);
        for (int i = 0; i < total; i++)
            r[i] = -1;
        if (inplace)
            for (int i = 0; i < counts[rank]; i++)
                r[displs[rank] + i] = val(rank, i);
        MT_OK(MPI_Allgatherv(inplace ? MPI_IN_PLACE : s, counts[rank],
                             MPI_INT, r, counts, displs, MPI_INT,
                             MPI_COMM_WORLD));
        for (int j = 0; j < size; j++) {
            for (int i = 0; i < counts[j]; i++)
                CT_CHECK(r[displs[j] + i] == val(j, i),
                         "allgatherv from %d elem %d", j, i);
            CT_CHECK(r[displs[j] + counts[j]] == -1, "gap after %d", j);
        }
    }
    free(counts);
    free(displs);
    free(s);
    free(r);
}

static void test_alltoall(void)
{
    for (int n = 0; n <= 2; n += 2) {
        int *s = ints(n * size, 0), *r = ints(n * size, -1);
        for (int inplace = 0; inplace < 2; inplace++) {
            int *src = inplace ? r : s;
            for (int i = 0; i < n * size; i++)
                src[i] = val(rank, i);
            MT_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : s, n, MPI_INT, r, n,
                               MPI_INT, MPI_COMM_WORLD));
            /* block j came from rank j, which sent its block `rank` */
            for (int j = 0; j < size; j++)
                for (int k = 0; k < n; k++)
                    CT_CHECK(r[j * n + k] == val(j, rank * n + k),
                             "alltoall inplace=%d from %d elem %d", inplace,
                             j, k);
        }
        free(s);
        free(r);
    }
}

/* Rank a sends (a + b) % 3 elements to rank b: some pairs exchange none. */
static int pair_count(int a, int b)
{
    return (a + b) % 3;
}

static void test_alltoallv(void)
{
    int *sc = ints(size, 0), *sd = ints(size, 0), *rc = ints(size, 0),
        *rd = ints(size, 0);
    int st = 0, rt = 0;

    for (int j = 0; j < size; j++) {
        sc[j] = pair_count(rank, j);
        sd[j] = st;
        st += sc[j];
        rc[j] = pair_count(j, rank);
        rd[j] = rt;
        rt += rc[j] + 1; /* a gap after each block */
    }
    int *s = ints(st, 0), *r = ints(rt, -1);
    for (int i = 0; i < st; i++)
        s[i] = val(rank, i);
    MT_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT,
                        MPI_COMM_WORLD));
    for (int j = 0; j < size; j++) {
        /* where j's block for me starts in j's send buffer */
        int off = 0;
        for (int k = 0; k < rank; k++)
            off += pair_count(j, k);
        for (int i = 0; i < rc[j]; i++)
            CT_CHECK(r[rd[j] + i] == val(j, off + i),
                     "alltoallv from %d elem %d", j, i);
        CT_CHECK(r[rd[j] + rc[j]] == -1, "alltoallv gap after %d", j);
    }

    /* In place: counts and displacements of the receive side only; the
     * same count both ways, so use a symmetric pattern. */
    int tot = 0;
    for (int j = 0; j < size; j++) {
        rc[j] = pair_count(rank, j); /* symmetric in rank, j */
        rd[j] = tot;
        tot += rc[j];
    }
    int *x = ints(tot, 0);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < rc[j]; i++)
            x[rd[j] + i] = val(rank, j * 10 + i);
    MT_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, x, rc,
                        rd, MPI_INT, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < rc[j]; i++)
            CT_CHECK(x[rd[j] + i] == val(j, rank * 10 + i),
                     "alltoallv in place from %d elem %d", j, i);
    free(x);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(s);
    free(r);
}

/* Collectives of several kinds back to back, no barrier between them: each
 * must match only its own messages. */
static void test_back_to_back(void)
{
    int a[4], b[4 * 8];
    for (int it = 0; it < 200; it++) {
        int root = it % size;
        for (int i = 0; i < 4; i++)
            a[i] = rank == root ? it * 10 + i : -1;
        MT_OK(MPI_Bcast(a, 4, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < 4; i++)
            CT_CHECK(a[i] == it * 10 + i, "bcast %d", it);
        int x = rank + it, sum = 0;
        MT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CT_CHECK(sum == size * (size - 1) / 2 + size * it, "allreduce %d", it);
        if (size <= 8) {
            MT_OK(MPI_Gather(&x, 1, MPI_INT, b, 1, MPI_INT, (it * 3) % size,
                             MPI_COMM_WORLD));
            if (rank == (it * 3) % size)
                for (int j = 0; j < size; j++)
                    CT_CHECK(b[j] == j + it, "gather %d", it);
        }
    }
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_barrier();
    test_bcast();
    test_gather();
    test_gatherv();
    test_scatter();
    test_scatterv();
    test_allgather();
    test_allgatherv();
    test_alltoall();
    test_alltoallv();
    test_back_to_back();
    MT_OK(MPI_Finalize());
    return 0;
}
