/*
 * Collectives with derived datatypes: a vector of int in bcast (short and
 * long, where the long path packs), gather and scatter, with the gaps of
 * the layout left untouched; senders and receivers describing the same
 * data with different types; alltoallw with a different type per peer.
 */
#include "coll_test.h"

static int rank, size;

static int val(int r, int i)
{
    return r * 1000 + i;
}

/* vector(n blocks of 1, stride 2): every other int. */
static MPI_Datatype every_other(int n)
{
    MPI_Datatype t;
    MT_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &t));
    MT_OK(MPI_Type_commit(&t));
    return t;
}

static void test_bcast(void)
{
    /* 3 ints; and 50000 ints (200 KB: the long, packing path) */
    int ns[] = {3, 50000};
    for (int k = 0; k < 2; k++) {
        int n = ns[k];
        MPI_Datatype t = every_other(n);
        int *b = malloc(sizeof(int) * 2 * (size_t)n);
        for (int root = 0; root < size; root += (size > 2 ? size - 2 : 1)) {
            for (int i = 0; i < 2 * n; i++)
                b[i] = rank == root ? (i % 2 ? -5 : val(root, i)) : -1;
            MT_OK(MPI_Bcast(b, 1, t, root, MPI_COMM_WORLD));
            for (int i = 0; i < 2 * n; i++)
                CT_CHECK(b[i] == (i % 2 ? (rank == root ? -5 : -1)
                                        : val(root, i)),
                         "bcast vector n=%d root=%d b[%d]=%d", n, root, i,
                         b[i]);
        }
        /* Root sends n MPI_INTs, the others receive one vector. */
        int root = size - 1;
        for (int i = 0; i < 2 * n; i++)
            b[i] = rank == root ? val(root, i) : -1;
        if (rank == root)
            MT_OK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
        else
            MT_OK(MPI_Bcast(b, 1, t, root, MPI_COMM_WORLD));
        for (int i = 0; rank != root && i < 2 * n; i++)
            CT_CHECK(b[i] == (i % 2 ? -1 : val(root, i / 2)),
                     "mixed-type bcast n=%d b[%d]=%d", n, i, b[i]);
        free(b);
        MT_OK(MPI_Type_free(&t));
    }
}

static void test_gather_scatter(void)
{
    const int n = 4;
    MPI_Datatype t = every_other(n);
    int s[8], *r = malloc(sizeof(int) * 2 * n * (size_t)size);

    for (int root = 0; root < size; root++) {
        /* Send a vector, receive contiguous ints at the root. */
        for (int i = 0; i < 2 * n; i++)
            s[i] = i % 2 ? -5 : val(rank, i / 2);
        for (int i = 0; i < n * size; i++)
            r[i] = -1;
        MT_OK(MPI_Gather(s, 1, t, r, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int j = 0; rank == root && j < size; j++)
            for (int i = 0; i < n; i++)
                CT_CHECK(r[j * n + i] == val(j, i), "gather vector");

        /* Scatter contiguous ints into a vector on every rank. */
        for (int i = 0; i < n * size; i++)
            r[i] = val(root, i);
        for (int i = 0; i < 2 * n; i++)
            s[i] = -1;
        MT_OK(MPI_Scatter(r, n, MPI_INT, s, 1, t, root, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * n; i++)
            CT_CHECK(s[i] == (i % 2 ? -1 : val(root, rank * n + i / 2)),
                     "scatter into vector s[%d]", i);
    }

    /* Allgather: one vector from each rank, into vectors. */
    for (int i = 0; i < 2 * n; i++)
        s[i] = i % 2 ? -5 : val(rank, i / 2);
    int *all = malloc(sizeof(int) * 2 * n * (size_t)size);
    for (int i = 0; i < 2 * n * size; i++)
        all[i] = -1;
    MPI_Datatype each;
    MT_OK(MPI_Type_create_resized(t, 0, (MPI_Aint)(2 * n * sizeof(int)),
                                  &each));
    MT_OK(MPI_Type_commit(&each));
    MT_OK(MPI_Allgather(s, 1, t, all, 1, each, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < 2 * n; i++)
            CT_CHECK(all[j * 2 * n + i] == (i % 2 ? -1 : val(j, i / 2)),
                     "allgather vector from %d [%d]", j, i);
    MT_OK(MPI_Type_free(&each));
    MT_OK(MPI_Type_free(&t));
    free(all);
    free(r);
}

/*
 * Alltoallw: rank a sends rank b the b + 1 ints val(a, b * 10 + k), as one
 * contiguous(b + 1) for even b and one vector over a spread-out buffer for
 * odd b.  Each rank receives rank + 1 plain MPI_INTs from every peer, at
 * byte displacements with a gap after each block.
 */
static void test_alltoallw(void)
{
    int *sc = malloc(sizeof(int) * (size_t)size);
    int *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size);
    int *rd = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int sbuf[8 * 2 * 8 + 16], rbuf[8 * 10 + 16];
    int soff = 0, roff = 0;

    CT_CHECK(size <= 8, "test sized for 8 ranks");
    for (int b = 0; b < size; b++) {
        int n = b + 1;
        if (b % 2 == 0) {
            MT_OK(MPI_Type_contiguous(n, MPI_INT, &st[b]));
            for (int k = 0; k < n; k++)
                sbuf[soff + k] = val(rank, b * 10 + k);
            sd[b] = soff * (int)sizeof(int);
            soff += n;
        } else {
            MT_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &st[b]));
            for (int k = 0; k < 2 * n; k++)
                sbuf[soff + k] = k % 2 ? -3 : val(rank, b * 10 + k / 2);
            sd[b] = soff * (int)sizeof(int);
            soff += 2 * n;
        }
        MT_OK(MPI_Type_commit(&st[b]));
        sc[b] = 1;
        rc[b] = rank + 1;
        rt[b] = MPI_INT;
        rd[b] = roff * (int)sizeof(int);
        roff += rank + 2;
    }
    for (int i = 0; i < roff; i++)
        rbuf[i] = -1;
    MT_OK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
    for (int a = 0; a < size; a++) {
        int base = rd[a] / (int)sizeof(int);
        for (int k = 0; k <= rank; k++)
            CT_CHECK(rbuf[base + k] == val(a, rank * 10 + k),
                     "alltoallw from %d elem %d: %d", a, k, rbuf[base + k]);
        CT_CHECK(rbuf[base + rank + 1] == -1, "alltoallw gap");
    }

    /* In place: what a rank receives from b replaces what it sends b
     * (same count both ways: 2 ints per pair, as a vector type here). */
    MPI_Datatype v2;
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v2));
    MT_OK(MPI_Type_commit(&v2));
    int x[8 * 4];
    for (int b = 0; b < size; b++) {
        rc[b] = 1;
        rt[b] = v2;
        rd[b] = b * 4 * (int)sizeof(int);
        for (int k = 0; k < 4; k++)
            x[b * 4 + k] = k % 2 ? -7 : val(rank, b * 10 + k / 2);
    }
    MT_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, x, rc, rd, rt,
                        MPI_COMM_WORLD));
    for (int b = 0; b < size; b++)
        for (int k = 0; k < 4; k++)
            CT_CHECK(x[b * 4 + k] ==
                         (k % 2 ? -7 : val(b, rank * 10 + k / 2)),
                     "alltoallw in place from %d [%d]", b, k);
    MT_OK(MPI_Type_free(&v2));
    for (int b = 0; b < size; b++)
        MT_OK(MPI_Type_free(&st[b]));
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_bcast();
    test_gather_scatter();
    test_alltoallw();
    MT_OK(MPI_Finalize());
    return 0;
}
