/*
 * Every collective algorithm against a serial computation.  coll.cmake
 * registers this program several times, with SHOAL_COLL_* forcing one
 * algorithm per collective, and with SHOAL_COLL_FAKE_HOSTS for the
 * hierarchical forms; the program itself does not know which runs.
 *
 * Data: ints in three layouts (plain; a vector with gaps inside and after
 * each element; a contiguous pair at a non-zero lower bound), whose gaps
 * must come out untouched; integer-valued doubles (sums exact in any
 * order) and doubles whose sum depends on the order (every rank must still
 * get the same bits); a non-commutative op, the product of 2x2 matrices,
 * wherever MPI allows one.  Counts include 0, fewer elements than ranks,
 * and sizes on both sides of coll_select.c's thresholds.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "coll_mat.h"
#include "coll_test.h"

#define GAP (-777) /* what a buffer holds where no data goes */

static int rank, size;

static int val(int r, int j)
{
    return ((r + 1) * 37 + j * 11) % 201 - 100;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    CT_CHECK(p != NULL, "malloc of %zu bytes", n);
    return p;
}

/* ---- layouts of ints ------------------------------------------------------------ */

typedef struct layout {
    const char *name;
    MPI_Datatype dt;
    int per;    /* data ints per element */
    int stride; /* ints from one element to the next */
    int first;  /* ints before the first element's data */
    int step;   /* ints between the data ints of one element */
} layout_t;

static layout_t layouts[3];

static void make_layouts(void)
{
    MPI_Datatype v, h;
    int two = 2;
    MPI_Aint four = 4;

    layouts[0] = (layout_t){"int", MPI_INT, 1, 1, 0, 1};
    /* ints 0 and 2 of every 5 */
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MT_OK(MPI_Type_create_resized(v, 0, 5 * sizeof(int), &layouts[1].dt));
    MT_OK(MPI_Type_free(&v));
    layouts[1] = (layout_t){"gap", layouts[1].dt, 2, 5, 0, 2};
    /* ints 1 and 2 of every 2, shifted: lower bound 4 bytes */
    MT_OK(MPI_Type_create_hindexed(1, &two, &four, MPI_INT, &h));
    layouts[2] = (layout_t){"lb", h, 2, 2, 1, 1};
    for (int t = 1; t < 3; t++)
        MT_OK(MPI_Type_commit(&layouts[t].dt));
}

static void free_layouts(void)
{
    for (int t = 1; t < 3; t++)
        MT_OK(MPI_Type_free(&layouts[t].dt));
}

static int span(const layout_t *t, int n)
{
    return t->first + n * t->stride + 1;
}

/* Index of data int j (element j / per) of a buffer. */
static int at(const layout_t *t, int j)
{
    return t->first + j / t->per * t->stride + j % t->per * t->step;
}

/* A buffer of n elements, GAP everywhere. */
static int *buffer(const layout_t *t, int n)
{
    int len = span(t, n), *b = xmalloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < len; i++)
        b[i] = GAP;
    return b;
}

/* Data ints [pos, pos + n) of b get val(r, 0), ..., val(r, n - 1). */
static void fill(const layout_t *t, int *b, int pos, int n, int r)
{
    for (int j = 0; j < n; j++)
        b[at(t, pos + j)] = val(r, j);
}

/* Every data int j of b's n elements is want[j]; the rest is GAP. */
static void expect(const layout_t *t, const int *b, int n, const int *want,
                   const char *what)
{
    int len = span(t, n), j = 0;
    for (int i = 0; i < len; i++) {
        int data = j < n * t->per && i == at(t, j);
        int w = data ? want[j++] : GAP;
        CT_CHECK(b[i] == w, "%s (%s, %d elements): int %d is %d, want %d",
                 what, t->name, n, i, b[i], w);
    }
}

/* want[j] = sum over ranks of val(r, from + j). */
static int *sums(int from, int n)
{
    int *w = xmalloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++) {
        w[j] = 0;
        for (int r = 0; r < size; r++)
            w[j] += val(r, from + j);
    }
    return w;
}

/* Element counts: 0, fewer than ranks, and bytes around the thresholds
 * (256 B, 16 KiB, 64 KiB, 128 KiB) for layouts of 1 and 2 ints. */
static const int counts[] = {0, 1, 3, 63, 64, 65, 2047, 4097, 16385, 32767};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

/* ---- barrier ---------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for the whole host */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Nobody leaves before the last one has come. */
static void test_barrier(void)
{
    for (int slow = 0; slow < size; slow += size > 1 ? size - 1 : 1) {
        double came = 0;
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == slow) {
            struct timespec nap = {0, 20 * 1000 * 1000};
            nanosleep(&nap, NULL);
            came = now();
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        double left = now();
        MT_OK(MPI_Bcast(&came, 1, MPI_DOUBLE, slow, MPI_COMM_WORLD));
        CT_CHECK(left >= came, "left the barrier %.6f s before rank %d came",
                 came - left, slow);
    }
    for (int i = 0; i < 20; i++)
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- bcast, allgather, alltoall ------------------------------------------------------ */

static void test_bcast(void)
{
    for (int k = 0; k < 3; k++) {
        const layout_t *t = &layouts[k];
        for (int c = 0; c < NCOUNTS; c++) {
            int n = counts[c], *w = xmalloc(sizeof(int) * (size_t)n * 2);
            for (int root = 0; root < size; root += size > 2 ? size / 2 : 1) {
                int *b = buffer(t, n);
                if (rank == root)
                    fill(t, b, 0, n * t->per, root);
                MT_OK(MPI_Bcast(b, n, t->dt, root, MPI_COMM_WORLD));
                for (int j = 0; j < n * t->per; j++)
                    w[j] = val(root, j);
                expect(t, b, n, w, "bcast");
                free(b);
            }
            free(w);
        }
    }
}

/* Allgather of n elements per rank, and the v form with uneven blocks
 * (zeros too) placed in reverse rank order with a gap between them. */
static void test_allgather(void)
{
    int *rc = xmalloc(sizeof(int) * (size_t)size);
    int *dp = xmalloc(sizeof(int) * (size_t)size);

    for (int k = 0; k < 2; k++) {
        const layout_t *t = &layouts[k];
        for (int c = 0; c < 7; c++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[c], total = n * size;
                int *s = buffer(t, n), *b = buffer(t, total);
                int *w = xmalloc(sizeof(int) * (size_t)total * 2);
                fill(t, s, 0, n * t->per, rank);
                if (inplace)
                    fill(t, b, rank * n * t->per, n * t->per, rank);
                MT_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : s, n, t->dt, b, n,
                                    t->dt, MPI_COMM_WORLD));
                for (int r = 0; r < size; r++)
                    for (int j = 0; j < n * t->per; j++)
                        w[r * n * t->per + j] = val(r, j);
                expect(t, b, total, w, "allgather");
                free(s);
                free(b);
                free(w);
            }
    }

    const layout_t *t = &layouts[1];
    int end = 0;
    for (int r = size - 1; r >= 0; r--) {
        rc[r] = r % 4 == 1 ? 0 : r + 2;
        dp[r] = end;
        end += rc[r] + 1;
    }
    int *s = buffer(t, rc[rank]), *b = buffer(t, end);
    int *w = xmalloc(sizeof(int) * (size_t)end * 2);
    fill(t, s, 0, rc[rank] * 2, rank);
    MT_OK(MPI_Allgatherv(s, rc[rank], t->dt, b, rc, dp, t->dt,
                         MPI_COMM_WORLD));
    for (int j = 0; j < end * 2; j++)
        w[j] = GAP; /* the element after each block */
    for (int r = 0; r < size; r++)
        for (int j = 0; j < rc[r] * 2; j++)
            w[dp[r] * 2 + j] = val(r, j);
    expect(t, b, end, w, "allgatherv");
    free(s);
    free(b);
    free(w);
    free(rc);
    free(dp);
}

/* Rank r sends rank q the data ints val(r, q * 1000 + j). */
static void fill_a2a(const layout_t *t, int *b, int n, int from)
{
    for (int q = 0; q < size; q++)
        for (int j = 0; j < n * t->per; j++)
            b[at(t, q * n * t->per + j)] = val(from, q * 1000 + j);
}

static void test_alltoall(void)
{
    for (int k = 0; k < 2; k++) {
        const layout_t *t = &layouts[k];
        for (int c = 0; c < 7; c++)
            for (int mode = 0; mode < 3; mode++) {
                /* mode 1: in place; 2: sent as plain ints */
                int n = counts[c], total = n * size;
                int *s = buffer(t, total), *b = buffer(t, total);
                int *w = xmalloc(sizeof(int) * (size_t)total * 2);
                const void *sb = s;
                fill_a2a(t, s, n, rank);
                if (mode == 1) {
                    fill_a2a(t, b, n, rank);
                    sb = MPI_IN_PLACE;
                }
                if (mode == 2) {
                    fill_a2a(&layouts[0], s, n * t->per, rank);
                    MT_OK(MPI_Alltoall(s, n * t->per, MPI_INT, b, n, t->dt,
                                       MPI_COMM_WORLD));
                } else {
                    MT_OK(MPI_Alltoall(sb, n, t->dt, b, n, t->dt,
                                       MPI_COMM_WORLD));
                }
                for (int q = 0; q < size; q++)
                    for (int j = 0; j < n * t->per; j++)
                        w[q * n * t->per + j] = val(q, rank * 1000 + j);
                expect(t, b, total, w, "alltoall");
                free(s);
                free(b);
                free(w);
            }
    }
}

/* ---- reductions on ints and doubles ------------------------------------------------- */

static void test_reduce(void)
{
    for (int k = 0; k < 3; k++) {
        const layout_t *t = &layouts[k];
        for (int c = 0; c < NCOUNTS; c += 2) {
            int n = counts[c], *w = sums(0, n * t->per);
            for (int root = 0; root < size; root += size > 2 ? size / 2 : 1)
                for (int inplace = 0; inplace < 2; inplace++) {
                    int me = rank == root;
                    int *s = buffer(t, n), *b = buffer(t, n);
                    fill(t, inplace && me ? b : s, 0, n * t->per, rank);
                    MT_OK(MPI_Reduce(inplace && me ? MPI_IN_PLACE : s, b, n,
                                     t->dt, MPI_SUM, root, MPI_COMM_WORLD));
                    if (me)
                        expect(t, b, n, w, "reduce");
                    free(s);
                    free(b);
                }
            free(w);
        }
    }
}

static void test_allreduce(void)
{
    for (int k = 0; k < 3; k++) {
        const layout_t *t = &layouts[k];
        for (int c = 0; c < NCOUNTS; c++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[c], *w = sums(0, n * t->per);
                int *s = buffer(t, n), *b = buffer(t, n);
                fill(t, inplace ? b : s, 0, n * t->per, rank);
                MT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, b, n, t->dt,
                                    MPI_SUM, MPI_COMM_WORLD));
                expect(t, b, n, w, "allreduce");
                free(s);
                free(b);
                free(w);
            }
    }
}

/* Integer-valued doubles: SUM is exact in any order, MAX is MAX. */
static void test_doubles(void)
{
    for (int c = 0; c < NCOUNTS; c += 3) {
        int n = counts[c];
        double *x = xmalloc(sizeof(double) * (size_t)n);
        double *y = xmalloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++)
            x[i] = val(rank, i);
        MT_OK(MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            double e = 0;
            for (int r = 0; r < size; r++)
                e += val(r, i);
            CT_CHECK(y[i] == e, "double sum [%d] = %g, want %g", i, y[i], e);
        }
        MT_OK(MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_MAX, size - 1,
                         MPI_COMM_WORLD));
        MT_OK(MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_MAX,
                            MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            double e = val(0, i);
            for (int r = 1; r < size; r++)
                e = val(r, i) > e ? val(r, i) : e;
            CT_CHECK(x[i] == e, "double max [%d]", i);
            CT_CHECK(rank != size - 1 || y[i] == e, "reduce max [%d]", i);
        }
        free(x);
        free(y);
    }
}

/* Doubles whose sum depends on the order: the same bits everywhere. */
static void test_same_bits(void)
{
    int ns[] = {5, 64, 20000};
    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        double *x = xmalloc(sizeof(double) * (size_t)n);
        double *all = xmalloc(sizeof(double) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++)
            x[i] = 1.0 / (rank + i + 3) * (i % 2 ? 1e10 : 1e-7);
        MT_OK(MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM,
                            MPI_COMM_WORLD));
        MT_OK(MPI_Allgather(x, n, MPI_DOUBLE, all, n, MPI_DOUBLE,
                            MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            CT_CHECK(memcmp(all + (size_t)r * n, x, sizeof(double) * n) == 0,
                     "rank %d got other bits (%d doubles)", r, n);
        free(x);
        free(all);
    }
}

/* Reduce_scatter with uneven blocks (zeros too) and its block form. */
static void test_reduce_scatter(void)
{
    int *rc = xmalloc(sizeof(int) * (size_t)size), total = 0, off = 0;

    for (int r = 0; r < size; r++) {
        rc[r] = (r * 5 + 2) % 4;
        total += rc[r];
        off += r < rank ? rc[r] : 0;
    }
    for (int k = 0; k < 2; k++) {
        const layout_t *t = &layouts[k];
        int *w = sums(off * t->per, rc[rank] * t->per);
        for (int inplace = 0; inplace < 2; inplace++) {
            int *s = buffer(t, total), *b = buffer(t, total);
            fill(t, inplace ? b : s, 0, total * t->per, rank);
            MT_OK(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, b, rc,
                                     t->dt, MPI_SUM, MPI_COMM_WORLD));
            if (!inplace)
                expect(t, b, rc[rank], w, "reduce_scatter");
            for (int j = 0; inplace && j < rc[rank] * t->per; j++)
                CT_CHECK(b[at(t, j)] == w[j], "reduce_scatter in place [%d]",
                         j);
            free(s);
            free(b);
        }
        free(w);
        for (int c = 0; c < 7; c += 2) {
            int n = counts[c], *s = buffer(t, n * size), *b = buffer(t, n);
            int *wb = sums(rank * n * t->per, n * t->per);
            fill(t, s, 0, n * size * t->per, rank);
            MT_OK(MPI_Reduce_scatter_block(s, b, n, t->dt, MPI_SUM,
                                           MPI_COMM_WORLD));
            expect(t, b, n, wb, "reduce_scatter_block");
            free(s);
            free(b);
            free(wb);
        }
    }
    free(rc);
}

/* ---- a non-commutative op ---------------------------------------------------------- */

static void expect_mats(const mat_t *got, int n, int from, int to, int k0,
                        const char *what)
{
    for (int k = 0; k < n; k++) {
        mat_t w = mat_product(from, to, k0 + k);
        CT_CHECK(memcmp(&got[k], &w, sizeof(w)) == 0,
                 "%s matrix %d: {%u %u %u %u} want {%u %u %u %u}", what, k,
                 got[k].a[0], got[k].a[1], got[k].a[2], got[k].a[3], w.a[0],
                 w.a[1], w.a[2], w.a[3]);
    }
}

static void test_noncommutative(void)
{
    enum { MAXK = 4200 }; /* 66 KiB of matrices: a long allreduce */
    int ks[] = {0, 1, 3, MAXK};
    MPI_Datatype mt;
    MPI_Op op;
    mat_t *s = xmalloc(sizeof(mat_t) * MAXK * (size_t)size);
    mat_t *r = xmalloc(sizeof(mat_t) * MAXK * (size_t)size);
    int *rc = xmalloc(sizeof(int) * (size_t)size), off = 0;

    MT_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
    MT_OK(MPI_Type_commit(&mt));
    MT_OK(MPI_Op_create(mat_op, 0, &op));
    for (int i = 0; i < MAXK * size; i++)
        s[i] = mat_of(rank, i);
    for (int c = 0; c < 4; c++) {
        int n = ks[c];
        for (int root = 0; root < size; root += size > 2 ? size / 2 : 1) {
            MT_OK(MPI_Reduce(s, r, n, mt, op, root, MPI_COMM_WORLD));
            if (rank == root)
                expect_mats(r, n, 0, size, 0, "reduce");
        }
        memcpy(r, s, sizeof(mat_t) * (size_t)n);
        MT_OK(MPI_Allreduce(MPI_IN_PLACE, r, n, mt, op, MPI_COMM_WORLD));
        expect_mats(r, n, 0, size, 0, "allreduce");
        MT_OK(MPI_Reduce_scatter_block(s, r, n, mt, op, MPI_COMM_WORLD));
        expect_mats(r, n, 0, size, rank * n, "reduce_scatter_block");
        MT_OK(MPI_Scan(s, r, n, mt, op, MPI_COMM_WORLD));
        expect_mats(r, n, 0, rank + 1, 0, "scan");
        MT_OK(MPI_Exscan(s, r, n, mt, op, MPI_COMM_WORLD));
        if (rank > 0)
            expect_mats(r, n, 0, rank, 0, "exscan");
    }
    for (int q = 0; q < size; q++) {
        rc[q] = q % 3;
        off += q < rank ? rc[q] : 0;
    }
    MT_OK(MPI_Reduce_scatter(s, r, rc, mt, op, MPI_COMM_WORLD));
    expect_mats(r, rc[rank], 0, size, off, "reduce_scatter");
    MT_OK(MPI_Op_free(&op));
    MT_OK(MPI_Type_free(&mt));
    free(s);
    free(r);
    free(rc);
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_layouts();
    test_barrier();
    test_bcast();
    test_allgather();
    test_alltoall();
    test_reduce();
    test_allreduce();
    test_doubles();
    test_same_bits();
    test_reduce_scatter();
    test_noncommutative();
    free_layouts();
    MT_OK(MPI_Finalize());
    return 0;
}
