/*
 * Unit test of the reduction kernels (mpi_op_apply, mpi_op_check) on
 * predefined types, without MPI_Init: the op x type matrix of MPI 4.0
 * section 6.9.2 written down independently of op.c, every allowed
 * cell checked against a value computed here, every other cell refused;
 * wrapping integer arithmetic; MAXLOC/MINLOC with ties for every pair
 * type; user functions called with the count and the datatype.
 */
#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "test.h"

#define N 37 /* odd, longer than a vector */

/* ---- the standard's table ----------------------------------------------------- */

enum { C_INT = 1, F_INT = 2, MULTI = 4, FLT = 8, CPLX = 16, LOGIC = 32,
       BYTE_ = 64, PAIR = 128 };

static int class_of(int t)
{
    switch (t) {
    case 1: /* MPI_CHAR: as Open MPI and MPICH, beyond the standard */
    case 2: case 3: case 5: case 6: case 7: case 8: case 9: case 10:
    case 11: case 12: case 18: case 19: case 20: case 21: case 22: case 23:
    case 24: case 25:
        return C_INT;
    case 45: return F_INT;
    case 26: case 27: case 28: return MULTI;
    case 13: case 14: case 15: case 46: case 47: return FLT;
    case 29: case 30: case 31: case 42: case 43: case 44: case 50: case 51:
        return CPLX;
    case 17: case 41: case 48: return LOGIC;
    case 4: return BYTE_;
    case 33: case 34: case 35: case 36: case 37: case 38: case 52: case 53:
    case 54:
        return PAIR;
    default: return 0; /* WCHAR, PACKED, UB, LB, CHARACTER */
    }
}

static int allowed(int op, int t)
{
    int c = class_of(t);
    switch (op) {
    case 1: case 2: return c & (C_INT | F_INT | MULTI | FLT);
    case 3: case 4: return c & (C_INT | F_INT | MULTI | FLT | CPLX);
    case 5: case 7: case 9: return c & (C_INT | LOGIC);
    case 6: case 8: case 10: return c & (C_INT | F_INT | MULTI | BYTE_);
    case 11: case 12: return c & PAIR;
    default: return 1; /* REPLACE, NO_OP: any type */
    }
}

static void test_matrix(void)
{
    for (int op = 1; op < SHOAL_MPI_NPREDEF_OPS; op++)
        for (int t = 1; t < SHOAL_MPI_NPREDEF_TYPES; t++) {
            int want = allowed(op, t) ? MPI_SUCCESS : MPI_ERR_OP;
            int got = mpi_op_check(&shoal_mpi_op_predef[op],
                                   &shoal_mpi_dt_predef[t]);
            if (got != want)
                T_FAIL("op %d on type %d (%s): got %d, want %d", op, t,
                       shoal_mpi_dt_predef[t].name, got, want);
        }
    T_EQ(mpi_op_check(MPI_OP_NULL, MPI_INT), MPI_ERR_OP);
    T_EQ(mpi_op_check(&shoal_mpi_op_predef[0], MPI_INT), MPI_ERR_OP);
    /* apply refuses what check refuses, without touching the data */
    {
        char a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
        T_EQ(mpi_op_apply(MPI_SUM, a, b, 4, MPI_BYTE), MPI_ERR_OP);
        T_EQ(b[0], 5);
        T_EQ(mpi_op_apply(MPI_SUM, a, b, 4, MPI_CHAR), MPI_SUCCESS);
        T_EQ(b[0], 6);
        T_EQ(b[3], 12);
    }
}

/* ---- values: every allowed cell against a computation done here ------------- */

/* Reference results in long double / long long, converted to T. */
#define CHECK_INT(T, idx)                                                    \
    do {                                                                     \
        T a[N], b[N], r[N];                                                  \
        for (int op = 1; op <= 10; op++) {                                   \
            if (!allowed(op, idx))                                           \
                continue;                                                    \
            for (int i = 0; i < N; i++) {                                    \
                a[i] = (T)(i % 7 + (i % 3 == 0 ? 0 : 1));                    \
                b[i] = (T)((i * 5) % 11 + (i % 4 == 0 ? 0 : 2));             \
                long long x = (long long)a[i], y = (long long)b[i], e = 0;   \
                switch (op) {                                                \
                case 1: e = x > y ? x : y; break;                            \
                case 2: e = x < y ? x : y; break;                            \
                case 3: e = x + y; break;                                    \
                case 4: e = x * y; break;                                    \
                case 5: e = x && y; break;                                   \
                case 6: e = x & y; break;                                    \
                case 7: e = x || y; break;                                   \
                case 8: e = x | y; break;                                    \
                case 9: e = !x != !y; break;                                 \
                case 10: e = x ^ y; break;                                   \
                }                                                            \
                r[i] = (T)e;                                                 \
            }                                                                \
            T_EQ(mpi_op_apply(&shoal_mpi_op_predef[op], a, b, N,             \
                              &shoal_mpi_dt_predef[idx]),                    \
                 MPI_SUCCESS);                                               \
            for (int i = 0; i < N; i++)                                      \
                if (b[i] != r[i])                                            \
                    T_FAIL("type %d op %d elem %d: %lld != %lld", idx, op,   \
                           i, (long long)b[i], (long long)r[i]);             \
        }                                                                    \
    } while (0)

#define CHECK_FLT(T, idx)                                                    \
    do {                                                                     \
        T a[N], b[N], r[N];                                                  \
        for (int op = 1; op <= 4; op++) {                                    \
            for (int i = 0; i < N; i++) {                                    \
                a[i] = (T)(i * 0.5 - 3);                                     \
                b[i] = (T)(7 - i * 0.25);                                    \
                long double x = a[i], y = b[i];                              \
                r[i] = (T)(op == 1   ? (x > y ? x : y)                       \
                           : op == 2 ? (x < y ? x : y)                       \
                           : op == 3 ? x + y                                 \
                                     : x * y);                               \
            }                                                                \
            T_EQ(mpi_op_apply(&shoal_mpi_op_predef[op], a, b, N,             \
                              &shoal_mpi_dt_predef[idx]),                    \
                 MPI_SUCCESS);                                               \
            for (int i = 0; i < N; i++)                                      \
                if (b[i] != r[i])                                            \
                    T_FAIL("type %d op %d elem %d: %Lg != %Lg", idx, op, i,  \
                           (long double)b[i], (long double)r[i]);            \
        }                                                                    \
    } while (0)

#define CHECK_CPLX(T, idx)                                                   \
    do {                                                                     \
        T a[N], b[N], r[N];                                                  \
        for (int op = 3; op <= 4; op++) {                                    \
            for (int i = 0; i < N; i++) {                                    \
                a[i] = (T)(i + 1) + (T)(i % 3) * I;                          \
                b[i] = (T)(2 - i % 5) + (T)1 * I;                            \
                r[i] = op == 3 ? a[i] + b[i] : a[i] * b[i];                  \
            }                                                                \
            T_EQ(mpi_op_apply(&shoal_mpi_op_predef[op], a, b, N,             \
                              &shoal_mpi_dt_predef[idx]),                    \
                 MPI_SUCCESS);                                               \
            for (int i = 0; i < N; i++)                                      \
                if (b[i] != r[i])                                            \
                    T_FAIL("type %d op %d elem %d", idx, op, i);             \
        }                                                                    \
    } while (0)

static void test_values(void)
{
    CHECK_INT(signed char, 2);
    CHECK_INT(unsigned char, 3);
    CHECK_INT(short, 5);
    CHECK_INT(unsigned short, 6);
    CHECK_INT(int, 7);
    CHECK_INT(unsigned, 8);
    CHECK_INT(long, 9);
    CHECK_INT(unsigned long, 10);
    CHECK_INT(long long, 11);
    CHECK_INT(unsigned long long, 12);
    CHECK_INT(int8_t, 18);
    CHECK_INT(int16_t, 19);
    CHECK_INT(int32_t, 20);
    CHECK_INT(int64_t, 21);
    CHECK_INT(uint8_t, 22);
    CHECK_INT(uint16_t, 23);
    CHECK_INT(uint32_t, 24);
    CHECK_INT(uint64_t, 25);
    CHECK_INT(MPI_Aint, 26);
    CHECK_INT(MPI_Count, 27);
    CHECK_INT(MPI_Offset, 28);
    CHECK_INT(int, 45);     /* MPI_INTEGER */
    CHECK_INT(bool, 17);    /* logical ops only */
    CHECK_INT(bool, 41);
    CHECK_INT(int, 48);     /* MPI_LOGICAL */
    CHECK_INT(unsigned char, 4); /* MPI_BYTE: bitwise only */
    CHECK_FLT(float, 13);
    CHECK_FLT(double, 14);
    CHECK_FLT(long double, 15);
    CHECK_FLT(float, 46);
    CHECK_FLT(double, 47);
    CHECK_CPLX(float _Complex, 29);
    CHECK_CPLX(double _Complex, 30);
    CHECK_CPLX(long double _Complex, 31);
    CHECK_CPLX(float _Complex, 42);
    CHECK_CPLX(double _Complex, 43);
    CHECK_CPLX(long double _Complex, 44);
    CHECK_CPLX(float _Complex, 50);
    CHECK_CPLX(double _Complex, 51);
}

/* Overflow wraps (and is not undefined: this runs under UBSan in CI). */
static void test_wrap(void)
{
    int a = INT_MAX, b = 1;
    unsigned short x = 65535, y = 65535;
    signed char c = -128, d = -1;

    T_EQ(mpi_op_apply(MPI_SUM, &a, &b, 1, MPI_INT), MPI_SUCCESS);
    T_EQ(b, INT_MIN);
    T_EQ(mpi_op_apply(MPI_PROD, &x, &y, 1, MPI_UNSIGNED_SHORT), MPI_SUCCESS);
    T_EQ(y, 1);
    T_EQ(mpi_op_apply(MPI_PROD, &c, &d, 1, MPI_SIGNED_CHAR), MPI_SUCCESS);
    T_EQ(d, -128);
}

/* ---- MAXLOC / MINLOC ------------------------------------------------------------- */

#define CHECK_PAIR(V, I, idx)                                                \
    do {                                                                     \
        struct { V v; I i; } a[6], b[6];                                     \
        /* (in, inout): larger, smaller, tie with lower index in `in`,     \
         * tie with lower index in inout, equal, negative values */        \
        V av[6] = {5, 1, 3, 3, 2, (V)-4};                                    \
        I ai[6] = {9, 9, 1, 7, 4, 3};                                        \
        V bv[6] = {2, 4, 3, 3, 2, (V)-2};                                    \
        I bi[6] = {8, 8, 5, 2, 4, 6};                                        \
        for (int k = 0; k < 6; k++) {                                        \
            a[k].v = av[k]; a[k].i = ai[k]; b[k].v = bv[k]; b[k].i = bi[k];  \
        }                                                                    \
        T_EQ(sizeof(a[0]), shoal_mpi_dt_predef[idx].extent);                 \
        T_EQ(mpi_op_apply(MPI_MAXLOC, a, b, 6, &shoal_mpi_dt_predef[idx]),   \
             MPI_SUCCESS);                                                   \
        {                                                                    \
            V wv[6] = {5, 4, 3, 3, 2, (V)-2};                                \
            I wi[6] = {9, 8, 1, 2, 4, 6};                                    \
            for (int k = 0; k < 6; k++)                                      \
                if (b[k].v != wv[k] || b[k].i != wi[k])                      \
                    T_FAIL("MAXLOC type %d pair %d: (%g, %g)", idx, k,       \
                           (double)b[k].v, (double)b[k].i);                  \
        }                                                                    \
        for (int k = 0; k < 6; k++) {                                        \
            b[k].v = bv[k]; b[k].i = bi[k];                                  \
        }                                                                    \
        T_EQ(mpi_op_apply(MPI_MINLOC, a, b, 6, &shoal_mpi_dt_predef[idx]),   \
             MPI_SUCCESS);                                                   \
        {                                                                    \
            V wv[6] = {2, 1, 3, 3, 2, (V)-4};                                \
            I wi[6] = {8, 9, 1, 2, 4, 3};                                    \
            for (int k = 0; k < 6; k++)                                      \
                if (b[k].v != wv[k] || b[k].i != wi[k])                      \
                    T_FAIL("MINLOC type %d pair %d: (%g, %g)", idx, k,       \
                           (double)b[k].v, (double)b[k].i);                  \
        }                                                                    \
    } while (0)

static void test_pairs(void)
{
    CHECK_PAIR(float, int, 33);
    CHECK_PAIR(double, int, 34);
    CHECK_PAIR(long, int, 35);
    CHECK_PAIR(int, int, 36);
    CHECK_PAIR(short, int, 37);
    CHECK_PAIR(long double, int, 38);
    CHECK_PAIR(float, float, 52);
    CHECK_PAIR(double, double, 53);
    CHECK_PAIR(int, int, 54);
}

/* ---- REPLACE, NO_OP, user functions ---------------------------------------------------- */

static int user_calls;
static MPI_Datatype user_dt;

/* Non-commutative: inout = in - 2 * inout, element by element. */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    user_calls++;
    user_dt = *dt;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] - 2 * b[i];
}

static void user_fn_c(void *in, void *inout, MPI_Count *len,
                      MPI_Datatype *dt)
{
    int n = (int)*len;
    user_fn(in, inout, &n, dt);
}

static void test_user(void)
{
    int a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50};
    struct shoal_mpi_op op = {.magic = MPI_MAGIC_OP, .refs = 1, .fn = user_fn};
    struct shoal_mpi_op op_c = {.magic = MPI_MAGIC_OP, .refs = 1,
                                .fn_c = user_fn_c};

    T_EQ(mpi_op_check(&op, MPI_CHAR), MPI_SUCCESS); /* any type */
    T_EQ(mpi_op_apply(&op, a, b, 5, MPI_INT), MPI_SUCCESS);
    T_EQ(user_calls, 1);
    T_ASSERT(user_dt == MPI_INT);
    for (int i = 0; i < 5; i++)
        T_EQ(b[i], a[i] - 20 * (i + 1));
    T_EQ(mpi_op_apply(&op_c, a, b, 5, MPI_INT), MPI_SUCCESS);
    T_EQ(user_calls, 2);
    T_EQ(b[0], 1 - 2 * (1 - 20));
    /* count 0 never calls the function */
    T_EQ(mpi_op_apply(&op, a, b, 0, MPI_INT), MPI_SUCCESS);
    T_EQ(user_calls, 2);

    T_EQ(mpi_op_apply(MPI_NO_OP, a, b, 5, MPI_INT), MPI_SUCCESS);
    T_EQ(b[0], 1 - 2 * (1 - 20));
    T_EQ(mpi_op_apply(MPI_REPLACE, a, b, 5, MPI_INT), MPI_SUCCESS);
    for (int i = 0; i < 5; i++)
        T_EQ(b[i], a[i]);
}

int main(void)
{
    test_matrix();
    test_values();
    test_wrap();
    test_pairs();
    test_user();
    printf("op kernels: all cells of the op x type matrix checked\n");
    return 0;
}
