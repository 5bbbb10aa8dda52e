/*
 * Array constructors: subarray and darray.  Both describe the elements of
 * an n-dimensional array of oldtype that lie in a set of index intervals
 * per dimension (one interval for a subarray; the blocks a process owns
 * for a darray), laid out in the array's memory order, with the bounds
 * of the whole array: lb 0, extent prod(sizes) * extent(oldtype).
 */
#include <limits.h>
#include <stdlib.h>

#include "mpi/dt/dt.h"

typedef struct dt_iv {
    MPI_Count start, len;
} dt_iv_t;

/* Per-dimension interval lists. */
typedef struct dt_grid {
    int ndims;
    const MPI_Count *gsizes;
    int order;
    dt_iv_t **ivs;
    int *niv;
} dt_grid_t;

/* Position k of the memory order (0 slowest) holds dimension perm(k). */
static int perm(const dt_grid_t *g, int k)
{
    return g->order == MPI_ORDER_C ? k : g->ndims - 1 - k;
}

/* One odometer digit per dimension: interval and offset in it. */
typedef struct digit {
    int iv;
    MPI_Count off;
} digit_t;

static int digit_next(const dt_grid_t *g, int d, digit_t *x)
{
    if (++x->off < g->ivs[d][x->iv].len)
        return 1;
    x->off = 0;
    return ++x->iv < g->niv[d] ? 1 : (x->iv = 0, 0);
}

/* Feed the selected elements to b in memory order. */
static void grid_add(dt_builder_t *b, const dt_grid_t *g, MPI_Datatype old)
{
    int n = g->ndims, k, fast = perm(g, n - 1);
    MPI_Aint stride[32], ext = old->extent;
    digit_t x[32] = {{0, 0}};

    for (k = 0; k < n; k++)
        if (g->niv[k] == 0)
            return;
    stride[fast] = ext;
    for (k = n - 2; k >= 0; k--)
        stride[perm(g, k)] = stride[perm(g, k + 1)] * g->gsizes[perm(g, k + 1)];
    for (;;) {
        MPI_Aint base = 0;
        int i;
        for (k = 0; k < n - 1; k++) {
            int d = perm(g, k);
            base += (g->ivs[d][x[d].iv].start + x[d].off) * stride[d];
        }
        for (i = 0; i < g->niv[fast]; i++)
            dt_builder_add(b, old, base + g->ivs[fast][i].start * ext,
                           g->ivs[fast][i].len);
        if (b->status != MPI_SUCCESS)
            return;
        for (k = n - 2; k >= 0; k--)
            if (digit_next(g, perm(g, k), &x[perm(g, k)]))
                break;
        if (k < 0)
            return;
    }
}

/* prod(sizes) * extent, or an error when it overflows MPI_Aint. */
static int array_extent(const char *fn, int ndims, const MPI_Count *sizes,
                        MPI_Datatype old, MPI_Aint *ext_p)
{
    MPI_Aint e = old->extent;
    int i, ovf = 0;

    for (i = 0; i < ndims; i++)
        e = dt_muladd(e, (MPI_Aint)sizes[i], 0, &ovf);
    if (ovf)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "the array's extent overflows MPI_Aint");
    *ext_p = e;
    return MPI_SUCCESS;
}

/* Shared checks: ndims, order, oldtype, newtype and array pointers. */
static int check_common(const char *fn, int ndims, int order, MPI_Datatype old,
                        MPI_Datatype *newtype, const void *const *arrays,
                        const char *const *names, int narrays)
{
    int rc, i;

    if (ndims <= 0 || ndims > 32)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "ndims is %d; must be in [1, 32]", ndims);
    for (i = 0; i < narrays; i++)
        if ((rc = dt_check_ptr(fn, arrays[i], ndims, names[i])) != MPI_SUCCESS)
            return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "order is %d; must be MPI_ORDER_C or "
                         "MPI_ORDER_FORTRAN",
                         order);
    if ((rc = dt_check_handle(DT_ERR_COMM, old, fn, "oldtype")) != MPI_SUCCESS)
        return rc;
    return dt_check_ptr(fn, newtype, 1, "newtype");
}

/*
 * Contents: head, then the arrays, then tail, as ints when every value
 * fits; else the count arrays (the first nwide arrays) go to the large
 * counts and the rest stay ints.  The arrays are MPI_Count.
 */
typedef struct grid_contents {
    int *ints;
    int nints;
    MPI_Count *big;
    MPI_Count nbig;
} grid_contents_t;

static int grid_contents(int n, const int *head, int nhead,
                         const MPI_Count *const *wide, int nwide,
                         const int *const *narrow, int nnarrow, int tail,
                         grid_contents_t *gc)
{
    int fit = 1, k = 0;

    for (int a = 0; a < nwide; a++)
        for (int i = 0; i < n; i++)
            fit &= wide[a][i] >= INT_MIN && wide[a][i] <= INT_MAX;
    gc->ints = malloc(((size_t)nhead + (size_t)(nwide + nnarrow) * n + 1) *
                      sizeof(int));
    gc->big = fit ? NULL : malloc((size_t)nwide * n * sizeof(MPI_Count));
    gc->nbig = 0;
    if (gc->ints == NULL || (!fit && gc->big == NULL)) {
        free(gc->ints);
        free(gc->big);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < nhead; i++)
        gc->ints[k++] = head[i];
    for (int a = 0; a < nwide; a++)
        for (int i = 0; i < n; i++) {
            if (fit)
                gc->ints[k++] = (int)wide[a][i];
            else
                gc->big[gc->nbig++] = wide[a][i];
        }
    for (int a = 0; a < nnarrow; a++)
        for (int i = 0; i < n; i++)
            gc->ints[k++] = narrow[a][i];
    gc->ints[k++] = tail;
    gc->nints = k;
    return MPI_SUCCESS;
}

/* Build the type of grid g over old with contents gc (which it frees). */
static int grid_type(const char *fn, int combiner, grid_contents_t *gc,
                     const dt_grid_t *g, MPI_Datatype old,
                     MPI_Datatype *newtype)
{
    MPI_Aint ext = 0;
    dt_new_t n;
    int rc;

    rc = array_extent(fn, g->ndims, g->gsizes, old, &ext);
    if (rc == MPI_SUCCESS)
        rc = dt_new_begin(fn, combiner, gc->nints, gc->ints, 0, NULL, 1, &old,
                          &n);
    if (rc == MPI_SUCCESS && dt_set_big(n.o, gc->nbig, gc->big) !=
                                 MPI_SUCCESS) {
        dt_obj_destroy(n.o);
        rc = mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    free(gc->ints);
    free(gc->big);
    if (rc != MPI_SUCCESS)
        return rc;
    grid_add(&n.b, g, old);
    dt_builder_resize(&n.b, 0, ext);
    return dt_new_end(fn, &n, newtype);
}

/* int arguments widened (n <= 32, checked before). */
static void widen32(const int *v, int n, MPI_Count *out)
{
    for (int i = 0; i < n; i++)
        out[i] = v[i];
}

/* ---- subarray
 * -------------------------------------------------------------------- */

static int subarray_check(const char *fn, int ndims, const MPI_Count *sizes,
                          const MPI_Count *subsizes, const MPI_Count *starts)
{
    for (int i = 0; i < ndims; i++) {
        if (sizes[i] <= 0)
            return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                             "array_of_sizes[%d] is %lld; must be > 0", i,
                             (long long)sizes[i]);
        if (subsizes[i] < 0 || subsizes[i] > sizes[i])
            return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                             "array_of_subsizes[%d] is %lld; must be in "
                             "[0, %lld]",
                             i, (long long)subsizes[i], (long long)sizes[i]);
        if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                             "array_of_starts[%d] is %lld; must be in [0, "
                             "%lld] (size %lld, subsize %lld)",
                             i, (long long)starts[i],
                             (long long)(sizes[i] - subsizes[i]),
                             (long long)sizes[i], (long long)subsizes[i]);
    }
    return MPI_SUCCESS;
}

/* Both forms, once check_common passed (so ndims is in [1, 32]). */
static int subarray(const char *fn, int ndims, const MPI_Count *sizes,
                    const MPI_Count *subsizes, const MPI_Count *starts,
                    int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const MPI_Count *arrs[3] = {sizes, subsizes, starts};
    dt_iv_t iv[32], *ivs[32];
    int niv[32], rc, i;
    dt_grid_t g = {ndims, sizes, order, ivs, niv};
    grid_contents_t gc;

    if ((rc = subarray_check(fn, ndims, sizes, subsizes, starts)) !=
        MPI_SUCCESS)
        return rc;
    for (i = 0; i < ndims; i++) {
        iv[i].start = starts[i];
        iv[i].len = subsizes[i];
        ivs[i] = &iv[i];
        niv[i] = iv[i].len > 0;
    }
    if (grid_contents(ndims, &ndims, 1, arrs, 3, NULL, 0, order, &gc) !=
        MPI_SUCCESS)
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    return grid_type(fn, MPI_COMBINER_SUBARRAY, &gc, &g, oldtype, newtype);
}

static const char *const subarray_names[3] = {
    "array_of_sizes", "array_of_subsizes", "array_of_starts"};

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[],
                              const int array_of_starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    const void *arrays[3] = {array_of_sizes, array_of_subsizes,
                             array_of_starts};
    MPI_Count sizes[32], subsizes[32], starts[32];
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_subarray");
    if ((rc = check_common(fn, ndims, order, oldtype, newtype, arrays,
                           subarray_names, 3)) != MPI_SUCCESS)
        return rc;
    widen32(array_of_sizes, ndims, sizes);
    widen32(array_of_subsizes, ndims, subsizes);
    widen32(array_of_starts, ndims, starts);
    return subarray(fn, ndims, sizes, subsizes, starts, order, oldtype,
                    newtype);
}
SHOAL_MPI_WEAK(Type_create_subarray)

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order,
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray_c";
    const void *arrays[3] = {array_of_sizes, array_of_subsizes,
                             array_of_starts};
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_subarray_c");
    if ((rc = check_common(fn, ndims, order, oldtype, newtype, arrays,
                           subarray_names, 3)) != MPI_SUCCESS)
        return rc;
    return subarray(fn, ndims, array_of_sizes, array_of_subsizes,
                    array_of_starts, order, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_subarray_c)

/* ---- darray
 * ------------------------------------------------------------------------ */

static int darray_check_dim(const char *fn, int i, MPI_Count gsize,
                            int distrib, int darg, int psize)
{
    if (gsize <= 0 || psize <= 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "dimension %d: gsize %lld and psize %d must be > 0",
                         i, (long long)gsize, psize);
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (psize != 1)
            return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                             "dimension %d is MPI_DISTRIBUTE_NONE but "
                             "array_of_psizes[%d] is %d; must be 1",
                             i, i, psize);
        return MPI_SUCCESS;
    }
    if (distrib != MPI_DISTRIBUTE_BLOCK && distrib != MPI_DISTRIBUTE_CYCLIC)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "array_of_distribs[%d] is %d; not a distribution", i,
                         distrib);
    if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "array_of_dargs[%d] is %d; must be > 0 or "
                         "MPI_DISTRIBUTE_DFLT_DARG",
                         i, darg);
    if (distrib == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
        (long long)darg * psize < gsize)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "dimension %d: block size %d * %d processes cannot "
                         "cover %lld elements",
                         i, darg, psize, (long long)gsize);
    return MPI_SUCCESS;
}

static int darray_check(const char *fn, int size, int rank, int ndims,
                        const MPI_Count *gsizes, const int *distribs,
                        const int *dargs, const int *psizes)
{
    long long nprocs = 1;
    int rc, i;

    if (size <= 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "size is %d; must be > 0", size);
    if (rank < 0 || rank >= size)
        return mpi_error(DT_ERR_COMM, MPI_ERR_RANK, fn,
                         "rank is %d; must be in [0, %d)", rank, size);
    for (i = 0; i < ndims; i++) {
        rc = darray_check_dim(fn, i, gsizes[i], distribs[i], dargs[i],
                              psizes[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        nprocs *= psizes[i];
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "the product of array_of_psizes is not size %d", size);
    return MPI_SUCCESS;
}

/* The index intervals process coordinate c owns in one dimension. */
static dt_iv_t *owned(MPI_Count gsize, int distrib, int darg, int psize,
                      int c, int *n_p)
{
    MPI_Count b, s, n = 0;
    dt_iv_t *iv;

    if (distrib == MPI_DISTRIBUTE_NONE) {
        iv = malloc(sizeof(*iv));
        if (iv != NULL) {
            iv->start = 0;
            iv->len = gsize;
            *n_p = 1;
        }
        return iv;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK)
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize
                                             : darg;
    else
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    /* Block: one interval; cyclic: one every psize * b indices. */
    iv = malloc(((size_t)gsize / (size_t)b + 1) * sizeof(*iv));
    if (iv == NULL)
        return NULL;
    for (s = (MPI_Count)c * b; s < gsize; s += (MPI_Count)psize * b) {
        iv[n].start = s;
        iv[n].len = gsize - s < b ? gsize - s : b;
        n++;
        if (distrib == MPI_DISTRIBUTE_BLOCK)
            break;
    }
    *n_p = (int)n;
    return iv;
}

/* Both forms, once check_common passed (so ndims is in [1, 32]). */
static int darray(const char *fn, int size, int rank, int ndims,
                  const MPI_Count *gsizes, const int *distribs,
                  const int *dargs, const int *psizes, int order,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const int *narrow[3] = {distribs, dargs, psizes};
    int head[3] = {size, rank, ndims}, niv[32], coord[32], rc, i, r;
    dt_iv_t *ivs[32] = {NULL};
    dt_grid_t g = {ndims, gsizes, order, ivs, niv};
    grid_contents_t gc;

    if ((rc = darray_check(fn, size, rank, ndims, gsizes, distribs, dargs,
                           psizes)) != MPI_SUCCESS)
        return rc;
    /* The process grid is row-major whatever the array's order. */
    for (i = ndims - 1, r = rank; i >= 0; i--) {
        coord[i] = r % psizes[i];
        r /= psizes[i];
    }
    for (i = 0, rc = MPI_SUCCESS; i < ndims && rc == MPI_SUCCESS; i++) {
        ivs[i] = owned(gsizes[i], distribs[i], dargs[i], psizes[i], coord[i],
                       &niv[i]);
        if (ivs[i] == NULL)
            rc = mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (rc == MPI_SUCCESS) {
        if (grid_contents(ndims, head, 3, &gsizes, 1, narrow, 3, order,
                          &gc) != MPI_SUCCESS)
            rc = mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
        else
            rc = grid_type(fn, MPI_COMBINER_DARRAY, &gc, &g, oldtype,
                           newtype);
    }
    for (i = 0; i < ndims; i++)
        free(ivs[i]);
    return rc;
}

static const char *const darray_names[4] = {
    "array_of_gsizes", "array_of_distribs", "array_of_dargs",
    "array_of_psizes"};

int PMPI_Type_create_darray(int size, int rank, int ndims,
                            const int array_of_gsizes[],
                            const int array_of_distribs[],
                            const int array_of_dargs[],
                            const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    const void *arrays[4] = {array_of_gsizes, array_of_distribs, array_of_dargs,
                             array_of_psizes};
    MPI_Count gsizes[32];
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_darray");
    if ((rc = check_common(fn, ndims, order, oldtype, newtype, arrays,
                           darray_names, 4)) != MPI_SUCCESS)
        return rc;
    widen32(array_of_gsizes, ndims, gsizes);
    return darray(fn, size, rank, ndims, gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_darray)

int PMPI_Type_create_darray_c(int size, int rank, int ndims,
                              const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[],
                              const int array_of_dargs[],
                              const int array_of_psizes[], int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray_c";
    const void *arrays[4] = {array_of_gsizes, array_of_distribs, array_of_dargs,
                             array_of_psizes};
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_darray_c");
    if ((rc = check_common(fn, ndims, order, oldtype, newtype, arrays,
                           darray_names, 4)) != MPI_SUCCESS)
        return rc;
    return darray(fn, size, rank, ndims, array_of_gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_darray_c)
