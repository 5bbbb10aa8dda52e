/*
 * A non-commutative operation for the collective tests: the product of
 * 2x2 matrices over the integers mod 2^32, whose result depends on the
 * order of the factors.  mat_of(r, k) is rank r's matrix k, and
 * mat_product(from, to, k) what a reduction in rank order over ranks
 * [from, to) must give.
 */
#ifndef SHOAL_COLL_MAT_H
#define SHOAL_COLL_MAT_H

#include <mpi.h>

/* Row-major. */
typedef struct mat {
    unsigned a[4];
} mat_t;

static inline mat_t mat_mul(mat_t x, mat_t y)
{
    mat_t z;
    z.a[0] = x.a[0] * y.a[0] + x.a[1] * y.a[2];
    z.a[1] = x.a[0] * y.a[1] + x.a[1] * y.a[3];
    z.a[2] = x.a[2] * y.a[0] + x.a[3] * y.a[2];
    z.a[3] = x.a[2] * y.a[1] + x.a[3] * y.a[3];
    return z;
}

/* The MPI_User_function: inout = in * inout (in holds lower ranks'). */
static inline void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat_t *x = in, *y = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        y[i] = mat_mul(x[i], y[i]);
}

static inline mat_t mat_of(int r, int k)
{
    mat_t m = {{(unsigned)(r + 2 + k), 1u, (unsigned)(r % 3),
                (unsigned)k + 1}};
    return m;
}

static inline mat_t mat_product(int from, int to, int k)
{
    mat_t p = {{1, 0, 0, 1}};
    for (int r = from; r < to; r++)
        p = mat_mul(p, mat_of(r, k));
    return p;
}

#endif /* SHOAL_COLL_MAT_H */
