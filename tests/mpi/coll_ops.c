/*
 * Every predefined operation on every type the standard allows it on,
 * through MPI_Allreduce and MPI_Reduce, against the serial fold over the
 * ranks; MAXLOC and MINLOC with ties (the lower index wins) on every pair
 * type; MPI_Reduce_local; reductions on derived datatypes whose basic
 * elements are one type (vector of int, pairs with padding).
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll_test.h"

#define N 13

static int rank, size;

/* Data rank r gives at element i, per op; small enough never to overflow
 * (a PROD has at most one factor 2 per element). */
static long long gen(int op, int r, int i)
{
    switch (op) {
    case 1: case 2: return (r * 7 + i * 3) % 11;                /* MAX MIN */
    case 3: return (r + i) % 5;                                  /* SUM */
    case 4: return r == i % size ? 2 : 1;                        /* PROD */
    case 5: case 7: case 9: return (r * 3 + i) % 4 != 0;         /* logic */
    default: return 1LL << ((r + i) % 7);                        /* bits */
    }
}

static long long fold(int op, long long a, long long b)
{
    switch (op) {
    case 1: return a > b ? a : b;
    case 2: return a < b ? a : b;
    case 3: return a + b;
    case 4: return a * b;
    case 5: return a && b;
    case 6: return a & b;
    case 7: return a || b;
    case 8: return a | b;
    case 9: return !a != !b;
    default: return a ^ b;
    }
}

static long long expect(int op, int i)
{
    long long e = gen(op, 0, i);
    for (int r = 1; r < size; r++)
        e = fold(op, e, gen(op, r, i));
    return e;
}

static MPI_Op op_of(int op)
{
    MPI_Op ops[] = {MPI_OP_NULL, MPI_MAX, MPI_MIN,  MPI_SUM, MPI_PROD,
                    MPI_LAND,    MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR,
                    MPI_BXOR};
    return ops[op];
}

/* ops is a bit mask of the op numbers (1..10) allowed on the type. */
#define RUN(T, dt, ops)                                                      \
    do {                                                                     \
        T s[N], r[N];                                                        \
        for (int op = 1; op <= 10; op++) {                                   \
            if (!((ops) & (1 << op)))                                        \
                continue;                                                    \
            for (int i = 0; i < N; i++)                                      \
                s[i] = (T)gen(op, rank, i);                                  \
            MT_OK(MPI_Allreduce(s, r, N, dt, op_of(op), MPI_COMM_WORLD));    \
            for (int i = 0; i < N; i++)                                      \
                CT_CHECK(r[i] == (T)expect(op, i),                           \
                         "%s op %d elem %d: %lld want %lld", #dt, op, i,     \
                         (long long)r[i], expect(op, i));                    \
            for (int i = 0; i < N; i++)                                      \
                r[i] = (T)-1;                                                \
            MT_OK(MPI_Reduce(s, r, N, dt, op_of(op), size - 1,               \
                             MPI_COMM_WORLD));                               \
            for (int i = 0; rank == size - 1 && i < N; i++)                  \
                CT_CHECK(r[i] == (T)expect(op, i), "reduce %s op %d", #dt,   \
                         op);                                                \
        }                                                                    \
    } while (0)

#define MINMAX ((1 << 1) | (1 << 2))
#define ARITH ((1 << 3) | (1 << 4))
#define LOGIC ((1 << 5) | (1 << 7) | (1 << 9))
#define BITS ((1 << 6) | (1 << 8) | (1 << 10))
#define C_INT (MINMAX | ARITH | LOGIC | BITS)
#define OTHER_INT (MINMAX | ARITH | BITS)

static void test_predefined(void)
{
    RUN(signed char, MPI_SIGNED_CHAR, C_INT);
    RUN(unsigned char, MPI_UNSIGNED_CHAR, C_INT);
    RUN(short, MPI_SHORT, C_INT);
    RUN(unsigned short, MPI_UNSIGNED_SHORT, C_INT);
    RUN(int, MPI_INT, C_INT);
    RUN(unsigned, MPI_UNSIGNED, C_INT);
    RUN(long, MPI_LONG, C_INT);
    RUN(unsigned long, MPI_UNSIGNED_LONG, C_INT);
    RUN(long long, MPI_LONG_LONG, C_INT);
    RUN(unsigned long long, MPI_UNSIGNED_LONG_LONG, C_INT);
    RUN(int8_t, MPI_INT8_T, C_INT);
    RUN(int16_t, MPI_INT16_T, C_INT);
    RUN(int32_t, MPI_INT32_T, C_INT);
    RUN(int64_t, MPI_INT64_T, C_INT);
    RUN(uint8_t, MPI_UINT8_T, C_INT);
    RUN(uint16_t, MPI_UINT16_T, C_INT);
    RUN(uint32_t, MPI_UINT32_T, C_INT);
    RUN(uint64_t, MPI_UINT64_T, C_INT);
    RUN(int, MPI_INTEGER, OTHER_INT);
    RUN(MPI_Aint, MPI_AINT, OTHER_INT);
    RUN(MPI_Count, MPI_COUNT, OTHER_INT);
    RUN(MPI_Offset, MPI_OFFSET, OTHER_INT);
    RUN(float, MPI_FLOAT, MINMAX | ARITH);
    RUN(double, MPI_DOUBLE, MINMAX | ARITH);
    RUN(long double, MPI_LONG_DOUBLE, MINMAX | ARITH);
    RUN(float, MPI_REAL, MINMAX | ARITH);
    RUN(double, MPI_DOUBLE_PRECISION, MINMAX | ARITH);
    RUN(bool, MPI_C_BOOL, LOGIC);
    RUN(bool, MPI_CXX_BOOL, LOGIC);
    RUN(int, MPI_LOGICAL, LOGIC);
    RUN(unsigned char, MPI_BYTE, BITS);
}

/* Complex SUM and PROD: (1 + i) on one rank per element (rank i % size),
 * 1 elsewhere. */
#define RUN_CPLX(T, dt)                                                      \
    do {                                                                     \
        T s[N], r[N];                                                        \
        for (int i = 0; i < N; i++)                                          \
            s[i] = rank == i % size ? (T)1 + (T)I : (T)1;                    \
        MT_OK(MPI_Allreduce(s, r, N, dt, MPI_PROD, MPI_COMM_WORLD));         \
        for (int i = 0; i < N; i++)                                          \
            CT_CHECK(r[i] == (T)1 + (T)I, "%s prod %d", #dt, i);             \
        MT_OK(MPI_Allreduce(s, r, N, dt, MPI_SUM, MPI_COMM_WORLD));          \
        for (int i = 0; i < N; i++)                                          \
            CT_CHECK(r[i] == (T)size + (T)I, "%s sum %d", #dt, i);           \
    } while (0)

static void test_complex(void)
{
    RUN_CPLX(float _Complex, MPI_C_FLOAT_COMPLEX);
    RUN_CPLX(double _Complex, MPI_C_DOUBLE_COMPLEX);
    RUN_CPLX(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    RUN_CPLX(float _Complex, MPI_CXX_FLOAT_COMPLEX);
    RUN_CPLX(double _Complex, MPI_CXX_DOUBLE_COMPLEX);
    RUN_CPLX(long double _Complex, MPI_CXX_LONG_DOUBLE_COMPLEX);
    RUN_CPLX(float _Complex, MPI_COMPLEX);
    RUN_CPLX(double _Complex, MPI_DOUBLE_COMPLEX);
}

/*
 * MAXLOC / MINLOC: value (r + i) % 3 has ties among ranks; the index is
 * the rank, so the lowest rank holding the extreme must win.
 */
#define RUN_LOC(V, I, dt)                                                    \
    do {                                                                     \
        struct { V v; I i; } s[N], r[N];                                     \
        for (int i = 0; i < N; i++) {                                        \
            s[i].v = (V)((rank + i) % 3);                                    \
            s[i].i = (I)rank;                                                \
        }                                                                    \
        for (int loc = 0; loc < 2; loc++) {                                  \
            MT_OK(MPI_Allreduce(s, r, N, dt, loc ? MPI_MINLOC : MPI_MAXLOC,  \
                                MPI_COMM_WORLD));                            \
            for (int i = 0; i < N; i++) {                                    \
                int best = 0;                                                \
                for (int q = 1; q < size; q++) {                             \
                    int a = (q + i) % 3, b = (best + i) % 3;                 \
                    if (loc ? a < b : a > b)                                 \
                        best = q;                                            \
                }                                                            \
                CT_CHECK(r[i].v == (V)((best + i) % 3) && r[i].i == (I)best, \
                         "%s %s elem %d: (%g, %g) want rank %d", #dt,        \
                         loc ? "MINLOC" : "MAXLOC", i, (double)r[i].v,       \
                         (double)r[i].i, best);                              \
            }                                                                \
        }                                                                    \
    } while (0)

static void test_loc(void)
{
    RUN_LOC(float, int, MPI_FLOAT_INT);
    RUN_LOC(double, int, MPI_DOUBLE_INT);
    RUN_LOC(long, int, MPI_LONG_INT);
    RUN_LOC(int, int, MPI_2INT);
    RUN_LOC(short, int, MPI_SHORT_INT);
    RUN_LOC(long double, int, MPI_LONG_DOUBLE_INT);
    RUN_LOC(float, float, MPI_2REAL);
    RUN_LOC(double, double, MPI_2DOUBLE_PRECISION);
    RUN_LOC(int, int, MPI_2INTEGER);
}

/* ---- derived datatypes --------------------------------------------------------- */

/* vector(3 blocks of 2, stride 4) of int: reduced on the layout only. */
static void test_vector(void)
{
    MPI_Datatype vec;
    int a[2 * 12], b[2 * 12];

    MT_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MT_OK(MPI_Type_commit(&vec));
    /* extent of one element: (3 - 1) * 4 + 2 = 10 ints */
    for (int i = 0; i < 24; i++) {
        a[i] = i;
        b[i] = 100 * i;
    }
    MT_OK(MPI_Reduce_local(a, b, 2, vec, MPI_SUM));
    for (int i = 0; i < 24; i++) {
        int in_layout = i < 20 && (i % 10) % 4 < 2 && (i % 10) < 10;
        CT_CHECK(b[i] == (in_layout ? 101 * i : 100 * i),
                 "Reduce_local vector b[%d] = %d", i, b[i]);
    }

    for (int i = 0; i < 24; i++)
        a[i] = rank + i;
    for (int i = 0; i < 24; i++)
        b[i] = -1;
    MT_OK(MPI_Allreduce(a, b, 2, vec, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 20; i++) {
        int in_layout = (i % 10) % 4 < 2;
        CT_CHECK(b[i] == (in_layout ? size - 1 + i : -1),
                 "allreduce vector b[%d] = %d", i, b[i]);
    }
    MT_OK(MPI_Type_free(&vec));
}

/* contiguous(3, MPI_SHORT_INT): pairs with padding inside a derived type. */
static void test_derived_pairs(void)
{
    MPI_Datatype t;
    struct { short v; int i; } s[6], r[6];

    MT_OK(MPI_Type_contiguous(3, MPI_SHORT_INT, &t));
    MT_OK(MPI_Type_commit(&t));
    for (int k = 0; k < 6; k++) {
        s[k].v = (short)((rank * 5 + k) % 4);
        s[k].i = rank;
    }
    MT_OK(MPI_Allreduce(s, r, 2, t, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 6; k++) {
        int best = 0;
        for (int q = 1; q < size; q++)
            if ((q * 5 + k) % 4 > (best * 5 + k) % 4)
                best = q;
        CT_CHECK(r[k].v == (best * 5 + k) % 4 && r[k].i == best,
                 "derived SHORT_INT pair %d: (%d, %d) want rank %d", k,
                 r[k].v, r[k].i, best);
    }
    MT_OK(MPI_Type_free(&t));
}

static void test_reduce_local(void)
{
    double a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    MT_OK(MPI_Reduce_local(a, b, 3, MPI_DOUBLE, MPI_PROD));
    CT_CHECK(b[0] == 10 && b[1] == 40 && b[2] == 90, "Reduce_local prod");
    MT_OK(MPI_Reduce_local(a, b, 0, MPI_DOUBLE, MPI_PROD));
    CT_CHECK(b[0] == 10, "count 0 changed data");
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_predefined();
    test_complex();
    test_loc();
    test_reduce_local();
    test_vector();
    test_derived_pairs();
    MT_OK(MPI_Finalize());
    return 0;
}
