/*
 * The shared-memory collectives (src/coll/coll_shm.c) against serial
 * results: barrier (nobody leaves before the last arrives), bcast, reduce
 * and allreduce at every size around the algorithm's thresholds, MPI_SUM
 * and MPI_MAX on int and double, a non-commutative user op (2x2 matrix
 * product: wrong unless reduced in rank order), MPI_DOUBLE_INT with
 * MPI_MAXLOC (a type with a hole), a bcast whose receivers use a strided
 * type, MPI_IN_PLACE, zero counts, long runs of back-to-back calls with
 * rotating roots and mixed sizes (slot reuse), and several communicators
 * at once, created and freed (segments made and released, no descriptor
 * left open).
 *
 * The sizes straddle the constants of src/coll/coll_shm.h (keep in step):
 * SHM_ALLREAD_MAX 2048, SHM_SETCAP 4208 (a block), bcast chunks of a
 * quarter of the message between 4 and 32 KiB (whole, partial and single
 * chunks), SHM_SLOT 1 MiB (above it the message-based algorithms take
 * over).
 * Which algorithm runs is decided by the selection in src/coll; every
 * result is checked whichever it is.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <time.h>

#include "coll_test.h"

static int rank, size;

/* Bytes at and around each threshold. */
static const int sizes[] = {1,      8,       48,      56,      64,     1000,
                            2040,   2048,    2056,    4096,    4200,   4208,
                            4216,   8192,    32760,   32768,   32776,  65544,
                            200000, 1048568, 1048576, 1048584, 1200000};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int val(int r, int i)
{
    return (r * 31 + i * 7) % 1009 - 500;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    CT_CHECK(p != NULL, "malloc of %zu bytes", n);
    return p;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void nap_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- barrier ------------------------------------------------------------- */

/* One rank comes late; nobody may leave before it arrived (the clock is
 * the host's, shared by every rank).  The times travel by point-to-point
 * so that only the barrier is tested. */
static void test_barrier(MPI_Comm comm)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int round = 0; round < 2 * p && round < 12; round++) {
        double t[2], last_in = 0, first_out = 1e30;
        if (r == round % p)
            nap_ms(3);
        t[0] = now();
        MT_OK(MPI_Barrier(comm));
        t[1] = now();
        if (r != 0) {
            MT_OK(MPI_Send(t, 2, MPI_DOUBLE, 0, 77, comm));
            continue;
        }
        for (int q = 0; q < p; q++) {
            if (q > 0)
                MT_OK(
                    MPI_Recv(t, 2, MPI_DOUBLE, q, 77, comm, MPI_STATUS_IGNORE));
            last_in = t[0] > last_in ? t[0] : last_in;
            first_out = t[1] < first_out ? t[1] : first_out;
        }
        CT_CHECK(first_out >= last_in,
                 "round %d: a rank left the barrier %.1f us before the "
                 "last one arrived",
                 round, (last_in - first_out) * 1e6);
    }
    for (int i = 0; i < 500; i++)
        MT_OK(MPI_Barrier(comm));
}

/* ---- bcast --------------------------------------------------------------- */

static unsigned char byte_at(int root, int i, int salt)
{
    return (unsigned char)(root * 37 + i * 11 + salt * 101 + (i >> 8));
}

static void test_bcast(void)
{
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        unsigned char *b = xmalloc((size_t)n);
        for (int root = 0; root < size; root++) {
            if (n > 100000 && root > 2)
                break; /* long ones: a few roots are enough */
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? byte_at(root, i, k) : 0xee;
            MT_OK(MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++)
                CT_CHECK(b[i] == byte_at(root, i, k),
                         "bcast of %d bytes from %d: byte %d is %u", n, root, i,
                         b[i]);
        }
        free(b);
    }
}

/* The root sends contiguous ints; the others receive them every other int
 * (a vector type: same signature, other layout), leaving the gaps alone. */
static void test_bcast_strided(void)
{
    int counts[] = {1, 3, 500, 1052, 1100, 9000, 100000};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int n = counts[k];
        int *b = xmalloc(2 * sizeof(int) * (size_t)n);
        MPI_Datatype vec;
        MT_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
        MT_OK(MPI_Type_commit(&vec));
        for (int root = 0; root < size && root < 3; root++) {
            for (int i = 0; i < 2 * n; i++)
                b[i] = rank == root ? val(root, i) : -7;
            if (rank == root)
                MT_OK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
            else
                MT_OK(MPI_Bcast(b, 1, vec, root, MPI_COMM_WORLD));
            for (int i = 0; rank != root && i < n; i++) {
                CT_CHECK(b[2 * i] == val(root, i),
                         "strided bcast n=%d root=%d: int %d", n, root, i);
                CT_CHECK(b[2 * i + 1] == -7,
                         "strided bcast n=%d: gap %d written", n, i);
            }
        }
        MT_OK(MPI_Type_free(&vec));
        free(b);
    }
}

/* ---- reductions ---------------------------------------------------------- */

static int sum_at(int i)
{
    int s = 0;
    for (int q = 0; q < size; q++)
        s += val(q, i);
    return s;
}

static int max_at(int i)
{
    int m = val(0, i);
    for (int q = 1; q < size; q++)
        m = val(q, i) > m ? val(q, i) : m;
    return m;
}

/* Allreduce and reduce (every root for short ones) of n ints or doubles
 * with SUM and MAX, with and without MPI_IN_PLACE. */
static void reduce_case(int n, int dbl, MPI_Op op, int inplace)
{
    size_t es = dbl ? sizeof(double) : sizeof(int);
    MPI_Datatype dt = dbl ? MPI_DOUBLE : MPI_INT;
    char *s = xmalloc(es * (size_t)n), *r = xmalloc(es * (size_t)n);
    int is_sum = op == MPI_SUM;

#define SET(buf, i, v)                                                         \
    (dbl ? (void)(((double *)(buf))[i] = (double)(v))                          \
         : (void)(((int *)(buf))[i] = (v)))
#define GET(buf, i) (dbl ? (long)((double *)(buf))[i] : (long)((int *)(buf))[i])

    for (int i = 0; i < n; i++) {
        SET(s, i, val(rank, i));
        SET(r, i, inplace ? val(rank, i) : -1);
    }
    MT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, n, dt, op,
                        MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CT_CHECK(GET(r, i) == (is_sum ? sum_at(i) : max_at(i)),
                 "allreduce n=%d %s %s%s: element %d is %ld", n,
                 dbl ? "double" : "int", is_sum ? "sum" : "max",
                 inplace ? " in place" : "", i, GET(r, i));

    for (int root = 0; root < size; root++) {
        int me = rank == root;
        if (n * (int)es > 100000 && root > 1)
            break;
        for (int i = 0; i < n; i++)
            SET(r, i, inplace && me ? val(rank, i) : -1);
        /* Outside the root the receive buffer is insignificant: NULL. */
        MT_OK(MPI_Reduce(inplace && me ? MPI_IN_PLACE : s, me ? r : NULL, n, dt,
                         op, root, MPI_COMM_WORLD));
        for (int i = 0; me && i < n; i++)
            CT_CHECK(GET(r, i) == (is_sum ? sum_at(i) : max_at(i)),
                     "reduce n=%d root=%d: element %d is %ld", n, root, i,
                     GET(r, i));
    }
#undef SET
#undef GET
    free(s);
    free(r);
}

static void test_reductions(void)
{
    for (int k = 0; k < NSIZES; k++) {
        int bytes = sizes[k];
        for (int dbl = 0; dbl < 2; dbl++) {
            int n = bytes / (dbl ? 8 : 4);
            if (n == 0)
                continue;
            reduce_case(n, dbl, MPI_SUM, 0);
            reduce_case(n, dbl, MPI_SUM, 1);
            if (bytes <= 70000)
                reduce_case(n, dbl, MPI_MAX, dbl);
        }
    }
}

/* ---- rank order: 2x2 matrix products ------------------------------------- */

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

/* inout = in * inout: in holds the lower ranks' product. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat_t *x = in, *y = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        y[i] = mul(x[i], y[i]);
}

static mat_t mat_of(int r, int k)
{
    mat_t m = {{(unsigned)(r + 2 + k % 5), 1u, (unsigned)(r % 3),
                (unsigned)(k % 7) + 1}};
    return m;
}

static void test_noncommutative(void)
{
    /* 16-byte matrices: 1 (inline), 100 (every rank reduces all), 200 (in
     * slices, in a block), 300 (past a block), 5000 (an area) */
    int counts[] = {1, 100, 200, 300, 5000};
    MPI_Datatype mt;
    MPI_Op op;

    MT_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
    MT_OK(MPI_Type_commit(&mt));
    MT_OK(MPI_Op_create(matmul, 0, &op));
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        mat_t *s = xmalloc(sizeof(mat_t) * (size_t)n);
        mat_t *r = xmalloc(sizeof(mat_t) * (size_t)n);
        mat_t *want = xmalloc(sizeof(mat_t) * (size_t)n);
        for (int k = 0; k < n; k++) {
            mat_t p = {{1, 0, 0, 1}};
            for (int q = 0; q < size; q++)
                p = mul(p, mat_of(q, k));
            want[k] = p;
            s[k] = mat_of(rank, k);
        }
        MT_OK(MPI_Allreduce(s, r, n, mt, op, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++)
            CT_CHECK(memcmp(&r[k], &want[k], sizeof(mat_t)) == 0,
                     "allreduce of %d matrices: %d out of rank order", n, k);
        for (int root = 0; root < size; root++) {
            memset(r, 0, sizeof(mat_t) * (size_t)n);
            MT_OK(MPI_Reduce(s, r, n, mt, op, root, MPI_COMM_WORLD));
            for (int k = 0; rank == root && k < n; k++)
                CT_CHECK(memcmp(&r[k], &want[k], sizeof(mat_t)) == 0,
                         "reduce of %d matrices to %d: %d out of rank order", n,
                         root, k);
        }
        free(s);
        free(r);
        free(want);
    }
    MT_OK(MPI_Op_free(&op));
    MT_OK(MPI_Type_free(&mt));
}

/* ---- a type with a hole: MPI_DOUBLE_INT, MAXLOC -------------------------- */

typedef struct dint {
    double v;
    int i;
} dint_t;

static void test_maxloc(void)
{
    int counts[] = {1, 7, 100, 1000, 20000};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        dint_t *s = xmalloc(sizeof(dint_t) * (size_t)n);
        dint_t *r = xmalloc(sizeof(dint_t) * (size_t)n);
        for (int k = 0; k < n; k++) {
            s[k].v = (double)((k * 13 + rank * 7) % size);
            s[k].i = rank;
        }
        MT_OK(
            MPI_Allreduce(s, r, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
        for (int k = 0; k < n; k++) {
            double best = -1;
            int who = -1;
            for (int q = 0; q < size; q++) {
                double v = (double)((k * 13 + q * 7) % size);
                if (v > best) {
                    best = v;
                    who = q;
                }
            }
            CT_CHECK(r[k].v == best && r[k].i == who,
                     "maxloc n=%d element %d: (%g, %d) want (%g, %d)", n, k,
                     r[k].v, r[k].i, best, who);
        }
        free(s);
        free(r);
    }
}

/* ---- zero counts --------------------------------------------------------- */

static void test_zero(void)
{
    int x = 42, y = 43;
    for (int root = 0; root < size; root++) {
        MT_OK(MPI_Bcast(&x, 0, MPI_INT, root, MPI_COMM_WORLD));
        MT_OK(MPI_Reduce(&x, &y, 0, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
    }
    MT_OK(MPI_Allreduce(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_OK(MPI_Allreduce(MPI_IN_PLACE, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CT_CHECK(x == 42 && y == 43, "a zero-count call wrote data");
}

/* ---- back to back -------------------------------------------------------- */

/* Calls of every kind and size class in a row, the root moving each time:
 * a rank that returns early starts the next call while slower ones still
 * read the last one's data. */
static void test_storm(MPI_Comm comm, int iters)
{
    int r, p;
    const int ns[] = {1, 6, 700, 1100, 9000};
    int *a = xmalloc(sizeof(int) * 9000), *b = xmalloc(sizeof(int) * 9000);

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int it = 0; it < iters; it++) {
        int n = ns[(it / 4) % 5], root = (it * 7 + 3) % p, kind = it % 4;
        int salt = it % 1000;
        switch (kind) {
        case 0:
            MT_OK(MPI_Barrier(comm));
            break;
        case 1:
            for (int i = 0; i < n; i++)
                a[i] = r == root ? val(root, i + salt) : -1;
            MT_OK(MPI_Bcast(a, n, MPI_INT, root, comm));
            for (int i = 0; i < n; i++)
                CT_CHECK(a[i] == val(root, i + salt),
                         "storm %d: bcast n=%d root=%d element %d", it, n, root,
                         i);
            break;
        case 2:
        case 3:
            for (int i = 0; i < n; i++) {
                a[i] = val(r, i + salt);
                b[i] = -1;
            }
            if (kind == 2)
                MT_OK(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm));
            else
                MT_OK(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, comm));
            if (kind == 2 || r == root)
                for (int i = 0; i < n; i++) {
                    int want = 0;
                    for (int q = 0; q < p; q++)
                        want += val(q, i + salt);
                    CT_CHECK(b[i] == want,
                             "storm %d: %s n=%d root=%d element %d is %d, "
                             "want %d",
                             it, kind == 2 ? "allreduce" : "reduce", n, root, i,
                             b[i], want);
                }
            break;
        }
    }
    free(a);
    free(b);
}

/* ---- several communicators ----------------------------------------------- */

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static void test_comms(void)
{
    int fds0, fds1;
    MPI_Comm half, dup;

    /* Warm up the world's segment and the message paths first, so that
     * only what the loop makes is counted. */
    test_storm(MPI_COMM_WORLD, 8);
    fds0 = open_fds();
    for (int round = 0; round < 3; round++) {
        MT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        /* interleaved on three communicators, each with its segment */
        for (int i = 0; i < 3; i++) {
            test_storm(half, 40);
            test_storm(dup, 40);
            test_storm(MPI_COMM_WORLD, 20);
        }
        test_barrier(half);
        MT_OK(MPI_Comm_free(&half));
        MT_OK(MPI_Comm_free(&dup));
    }
    fds1 = open_fds();
    CT_CHECK(fds0 == fds1, "%d descriptors open before, %d after", fds0, fds1);
}

int main(int argc, char **argv)
{
    int iters = 2000;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1)
        iters = atoi(argv[1]);

    test_barrier(MPI_COMM_WORLD);
    test_zero();
    test_bcast();
    test_bcast_strided();
    test_reductions();
    test_noncommutative();
    test_maxloc();
    test_storm(MPI_COMM_WORLD, iters);
    test_comms();
    test_barrier(MPI_COMM_WORLD);

    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_shm: %d ranks passed\n", size);
    return 0;
}
