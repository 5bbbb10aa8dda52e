/*
 * Reductions on MPI_COMM_WORLD against a serial computation: reduce (every
 * root), allreduce, reduce_scatter(_block), scan, exscan; MPI_IN_PLACE;
 * zero counts; a non-commutative user op (2x2 matrix product, whose result
 * depends on the order) in every reduction; identical floating results on
 * every rank.
 */
#include "coll_test.h"

static int rank, size;

static int val(int r, int i)
{
    return (r * 31 + i * 7) % 1009 - 500;
}

static int sum_at(int i)
{
    int s = 0;
    for (int r = 0; r < size; r++)
        s += val(r, i);
    return s;
}

static int *ints(int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    CT_CHECK(p != NULL, "malloc");
    return p;
}

static void test_reduce(void)
{
    int ns[] = {0, 1, 5, 1000};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        int n = ns[k], *s = ints(n), *r = ints(n);
        for (int root = 0; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int me = rank == root;
                for (int i = 0; i < n; i++) {
                    s[i] = val(rank, i);
                    r[i] = inplace && me ? val(rank, i) : -1;
                }
                MT_OK(MPI_Reduce(inplace && me ? MPI_IN_PLACE : s, r, n,
                                 MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
                for (int i = 0; me && i < n; i++)
                    CT_CHECK(r[i] == sum_at(i), "reduce n=%d root=%d r[%d]",
                             n, root, i);
            }
        free(s);
        free(r);
    }
}

static void test_allreduce(void)
{
    int ns[] = {0, 1, 7, 20000};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        int n = ns[k], *s = ints(n), *r = ints(n);
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < n; i++) {
                s[i] = val(rank, i);
                r[i] = inplace ? s[i] : -1;
            }
            MT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, n, MPI_INT,
                                MPI_SUM, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++)
                CT_CHECK(r[i] == sum_at(i), "allreduce n=%d r[%d]", n, i);
            MT_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++) {
                int m = val(0, i);
                for (int q = 1; q < size; q++)
                    m = val(q, i) > m ? val(q, i) : m;
                CT_CHECK(r[i] == m, "allreduce max r[%d]", i);
            }
        }
        free(s);
        free(r);
    }
}

/* Doubles whose sum depends on the order: all ranks must still agree to
 * the last bit. */
static void test_same_bits(void)
{
    enum { n = 64 };
    double x[n], y[n], *all = malloc(sizeof(double) * n * (size_t)size);
    for (int i = 0; i < n; i++)
        x[i] = 1.0 / (rank + i + 3) * (i % 2 ? 1e10 : 1e-7);
    MT_OK(MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    MT_OK(MPI_Allgather(y, n, MPI_DOUBLE, all, n, MPI_DOUBLE,
                        MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CT_CHECK(memcmp(all + r * n, y, sizeof(y)) == 0,
                 "rank %d got different bits", r);
    free(all);
}

static void test_reduce_scatter(void)
{
    int *counts = ints(size), total = 0;
    for (int j = 0; j < size; j++) {
        counts[j] = (j * 2) % 5; /* zeros included */
        total += counts[j];
    }
    int *s = ints(total), *r = ints(total + 1);
    for (int inplace = 0; inplace < 2; inplace++) {
        int *in = inplace ? r : s;
        for (int i = 0; i < total; i++)
            in[i] = val(rank, i);
        r[inplace ? total : counts[rank]] = -99;
        MT_OK(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, r, counts,
                                 MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        int off = 0;
        for (int j = 0; j < rank; j++)
            off += counts[j];
        for (int i = 0; i < counts[rank]; i++)
            CT_CHECK(r[i] == sum_at(off + i), "reduce_scatter r[%d]", i);
        CT_CHECK(r[inplace ? total : counts[rank]] == -99, "overrun");
    }
    free(s);
    free(r);

    /* block form */
    const int b = 3;
    s = ints(b * size);
    r = ints(b * size);
    for (int inplace = 0; inplace < 2; inplace++) {
        int *in = inplace ? r : s;
        for (int i = 0; i < b * size; i++)
            in[i] = val(rank, i);
        MT_OK(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, b,
                                       MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < b; i++)
            CT_CHECK(r[i] == sum_at(rank * b + i), "rs_block r[%d]", i);
    }
    MT_OK(MPI_Reduce_scatter_block(s, r, 0, MPI_INT, MPI_SUM,
                                   MPI_COMM_WORLD));
    free(s);
    free(r);
    free(counts);
}

static void test_scan(void)
{
    const int n = 6;
    int s[6], r[6];
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < n; i++) {
            s[i] = val(rank, i);
            r[i] = inplace ? s[i] : -1;
        }
        MT_OK(MPI_Scan(inplace ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM,
                       MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int q = 0; q <= rank; q++)
                e += val(q, i);
            CT_CHECK(r[i] == e, "scan r[%d] = %d, want %d", i, r[i], e);
        }
        for (int i = 0; i < n; i++)
            r[i] = inplace ? s[i] : -12345;
        MT_OK(MPI_Exscan(inplace ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM,
                         MPI_COMM_WORLD));
        for (int i = 0; rank > 0 && i < n; i++) {
            int e = 0;
            for (int q = 0; q < rank; q++)
                e += val(q, i);
            CT_CHECK(r[i] == e, "exscan r[%d] = %d, want %d", i, r[i], e);
        }
    }
    MT_OK(MPI_Scan(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_OK(MPI_Exscan(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

/* ---- a non-commutative operation ------------------------------------------------- */

/* 2x2 matrices over the integers mod 2^32, row-major. */
typedef struct mat {
    unsigned a[4];
} mat_t;

static mat_t mul(mat_t x, mat_t y)
{
    mat_t z;
    z.a[0] = x.a[0] * y.a[0] + x.a[1] * y.a[2];
    z.a[1] = x.a[0] * y.a[1] + x.a[1] * y.a[3];
    z.a[2] = x.a[2] * y.a[0] + x.a[3] * y.a[2];
    z.a[3] = x.a[2] * y.a[1] + x.a[3] * y.a[3];
    return z;
}

static int matmul_calls;

/* inout = in * inout: in holds the lower ranks' product. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat_t *x = in, *y = inout;
    matmul_calls++;
    for (int i = 0; i < *len; i++)
        y[i] = mul(x[i], y[i]);
}

static mat_t mat_of(int r, int k)
{
    mat_t m = {{(unsigned)(r + 2 + k), 1u, (unsigned)(r % 3), (unsigned)k + 1}};
    return m;
}

static mat_t product(int from, int to, int k) /* ranks [from, to) */
{
    mat_t p = {{1, 0, 0, 1}};
    for (int r = from; r < to; r++)
        p = mul(p, mat_of(r, k));
    return p;
}

static void check_mat(mat_t got, mat_t want, const char *what, int k)
{
    CT_CHECK(memcmp(&got, &want, sizeof(got)) == 0,
             "%s matrix %d: {%u %u %u %u} want {%u %u %u %u}", what, k,
             got.a[0], got.a[1], got.a[2], got.a[3], want.a[0], want.a[1],
             want.a[2], want.a[3]);
}

static void test_noncommutative(void)
{
    enum { K = 3 };
    MPI_Datatype mt;
    MPI_Op op;
    int commute = 1;
    mat_t s[K * 8], r[K * 8];

    MT_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
    MT_OK(MPI_Type_commit(&mt));
    MT_OK(MPI_Op_create(matmul, 0, &op));
    MT_OK(MPI_Op_commutative(op, &commute));
    CT_CHECK(commute == 0, "Op_commutative");
    for (int k = 0; k < K; k++)
        s[k] = mat_of(rank, k);

    for (int root = 0; root < size; root++) {
        MT_OK(MPI_Reduce(s, r, K, mt, op, root, MPI_COMM_WORLD));
        for (int k = 0; rank == root && k < K; k++)
            check_mat(r[k], product(0, size, k), "reduce", k);
    }
    MT_OK(MPI_Allreduce(s, r, K, mt, op, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        check_mat(r[k], product(0, size, k), "allreduce", k);
    MT_OK(MPI_Scan(s, r, K, mt, op, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        check_mat(r[k], product(0, rank + 1, k), "scan", k);
    MT_OK(MPI_Exscan(s, r, K, mt, op, MPI_COMM_WORLD));
    for (int k = 0; rank > 0 && k < K; k++)
        check_mat(r[k], product(0, rank, k), "exscan", k);

    /* reduce_scatter_block: K matrices per rank, matrix k of block j uses
     * mat_of(r, j * K + k). */
    for (int j = 0; j < size; j++)
        for (int k = 0; k < K; k++)
            s[j * K + k] = mat_of(rank, j * K + k);
    if (size <= 8) {
        MT_OK(MPI_Reduce_scatter_block(s, r, K, mt, op, MPI_COMM_WORLD));
        for (int k = 0; k < K; k++)
            check_mat(r[k], product(0, size, rank * K + k), "rs_block", k);
    }
    CT_CHECK(size == 1 || matmul_calls > 0, "the user op never ran");

    MT_OK(MPI_Op_free(&op));
    CT_CHECK(op == MPI_OP_NULL, "Op_free sets MPI_OP_NULL");
    MT_OK(MPI_Type_free(&mt));
}

/* A commutative user op (commute = 1) gives the same as MPI_SUM. */
static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    CT_CHECK(*dt == MPI_INT, "user op got another datatype");
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

static void test_user_commutative(void)
{
    MPI_Op op;
    int s[4], r[4];
    MT_OK(MPI_Op_create(my_sum, 1, &op));
    for (int i = 0; i < 4; i++)
        s[i] = val(rank, i);
    for (int root = 0; root < size; root++) {
        MT_OK(MPI_Reduce(s, r, 4, MPI_INT, op, root, MPI_COMM_WORLD));
        for (int i = 0; rank == root && i < 4; i++)
            CT_CHECK(r[i] == sum_at(i), "user sum root %d", root);
    }
    MT_OK(MPI_Allreduce(s, r, 4, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CT_CHECK(r[i] == sum_at(i), "user allreduce");
    MT_OK(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_reduce();
    test_allreduce();
    test_same_bits();
    test_reduce_scatter();
    test_scan();
    test_noncommutative();
    test_user_commutative();
    MT_OK(MPI_Finalize());
    return 0;
}
