/*
 * Subarray and darray against brute force: walk every element of the
 * global array in memory order and keep those the subarray selects or
 * the process owns (owner computed per dimension from the distribution's
 * definition).  darray is checked for every rank of several process grids
 * in this one process, and the ranks' pieces must tile the array.
 */
#include "dt_test.h"

static dtt_map_t m;

/* Linear index of idx in an array of sizes, C or Fortran order. */
static long linear(int nd, const int *sizes, const int *idx, int order)
{
    long l = 0;
    int d;

    if (order == MPI_ORDER_C)
        for (d = 0; d < nd; d++)
            l = l * sizes[d] + idx[d];
    else
        for (d = nd - 1; d >= 0; d--)
            l = l * sizes[d] + idx[d];
    return l;
}

/* Next index in memory order; 0 after the last. */
static int next(int nd, const int *sizes, int *idx, int order)
{
    int k;

    for (k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k;
        if (++idx[d] < sizes[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

static void subarray_case(int nd, const int *sizes, const int *sub,
                          const int *start, int order)
{
    MPI_Datatype t;
    int idx[4] = {0, 0, 0, 0}, d, in;
    long total = 1, n = 0;

    for (d = 0; d < nd; d++)
        total *= sizes[d];
    m.n = 0;
    do {
        for (d = 0, in = 1; d < nd; d++)
            in &= idx[d] >= start[d] && idx[d] < start[d] + sub[d];
        if (in) {
            dtt_add(&m, linear(nd, sizes, idx, order) * 4, 4);
            n++;
        }
    } while (next(nd, sizes, idx, order));
    MT_OK(MPI_Type_create_subarray(nd, sizes, sub, start, order, MPI_INT, &t));
    MT_OK(MPI_Type_commit(&t));
    dtt_bounds("subarray", t, n * 4, 0, total * 4, m.n ? m.b[0].off : 0,
               m.n ? m.b[m.n - 1].off + 4 - m.b[0].off : 0);
    dtt_check(order == MPI_ORDER_C ? "subarray C" : "subarray Fortran", t, 2,
              &m, total * 4);
    MT_OK(MPI_Type_free(&t));
}

static void test_subarray(void)
{
    int s3[3] = {4, 5, 6}, b3[3] = {2, 3, 4}, o3[3] = {1, 1, 2};
    int s2[2] = {6, 7}, b2[2] = {6, 2}, o2[2] = {0, 5};
    int s1[1] = {10}, b1[1] = {0}, o1[1] = {3};
    int order;

    for (order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++) {
        subarray_case(3, s3, b3, o3, order);
        subarray_case(2, s2, b2, o2, order);
        subarray_case(1, s1, b1, o1, order);
    }
}

/* A subarray of a resized type: copies step by the resized extent. */
static void test_subarray_oldtype(void)
{
    int sizes[2] = {3, 4}, sub[2] = {2, 2}, start[2] = {1, 1}, i, j;
    MPI_Datatype r, t;

    MT_OK(MPI_Type_create_resized(MPI_SHORT, 0, 8, &r));
    MT_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, r, &t));
    MT_OK(MPI_Type_commit(&t));
    m.n = 0;
    for (i = 1; i < 3; i++)
        for (j = 1; j < 3; j++)
            dtt_add(&m, (i * 4 + j) * 8, 2);
    dtt_bounds("subarray(resized)", t, 8, 0, 96, 40, 42);
    dtt_check("subarray(resized)", t, 2, &m, 96);
    MT_OK(MPI_Type_free(&t));
    MT_OK(MPI_Type_free(&r));
}

/* The process coordinate owning global index g in one dimension. */
static int owner(int g, int gsize, int distrib, int darg, int psize)
{
    int b;

    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize
                                             : darg;
        return g / b;
    }
    b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (g / b) % psize;
}

static unsigned char seen[4096];

static void darray_case(int nd, const int *gs, const int *dist, const int *darg,
                        const int *ps, int order)
{
    int size = 1, rank, d, coord[4], idx[4], mine;
    long total = 1, covered = 0, i;
    MPI_Datatype t;

    for (d = 0; d < nd; d++) {
        size *= ps[d];
        total *= gs[d];
    }
    memset(seen, 0, sizeof(seen));
    for (rank = 0; rank < size; rank++) {
        for (d = nd - 1, i = rank; d >= 0; d--) { /* row-major grid */
            coord[d] = (int)(i % ps[d]);
            i /= ps[d];
        }
        m.n = 0;
        memset(idx, 0, sizeof(idx));
        do {
            for (d = 0, mine = 1; d < nd; d++)
                mine &=
                    owner(idx[d], gs[d], dist[d], darg[d], ps[d]) == coord[d];
            if (mine) {
                long l = linear(nd, gs, idx, order);
                DTT_CHECK(!seen[l], "brute force: element %ld owned twice", l);
                seen[l] = 1;
                covered++;
                dtt_add(&m, l * 4, 4);
            }
        } while (next(nd, gs, idx, order));
        MT_OK(MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order,
                                     MPI_INT, &t));
        MT_OK(MPI_Type_commit(&t));
        dtt_bounds("darray", t, m.n * 4L, 0, total * 4, m.n ? m.b[0].off : 0,
                   m.n ? m.b[m.n - 1].off + 4 - m.b[0].off : 0);
        dtt_check("darray", t, 1, &m, total * 4);
        MT_OK(MPI_Type_free(&t));
    }
    DTT_CHECK(covered == total, "darray pieces cover %ld of %ld elements",
              covered, total);
}

static void test_darray(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC,
              N = MPI_DISTRIBUTE_NONE, D = MPI_DISTRIBUTE_DFLT_DARG;
    int gs[3] = {7, 10, 3};
    int order;

    for (order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++) {
        darray_case(2, gs, (int[]){B, B}, (int[]){D, D}, (int[]){2, 3}, order);
        darray_case(2, gs, (int[]){C, B}, (int[]){2, D}, (int[]){3, 2}, order);
        darray_case(2, gs, (int[]){N, C}, (int[]){D, 3}, (int[]){1, 4}, order);
        darray_case(2, gs, (int[]){B, C}, (int[]){4, D}, (int[]){2, 3}, order);
        darray_case(3, gs, (int[]){C, C, B}, (int[]){D, 4, D}, (int[]){2, 2, 2},
                    order);
        /* Block size larger than needed: the last processes own nothing. */
        darray_case(1, gs, (int[]){B}, (int[]){3}, (int[]){4}, order);
        darray_case(1, gs + 1, (int[]){C}, (int[]){3}, (int[]){3}, order);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_subarray();
    test_subarray_oldtype();
    test_darray();
    MPI_Finalize();
    return 0;
}
