/*
 * The constructors that place copies of old types at computed
 * displacements: contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, and resized.  Each checks its
 * arguments, records them for MPI_Type_get_contents, and feeds the
 * placements to the builder in typemap order.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi/dt/dt.h"

/* ---- shared steps
 * ------------------------------------------------------------- */

int dt_check_count(const char *fn, MPI_Count count, const char *what)
{
    if (count < 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_COUNT, fn,
                         "%s is %lld; must be >= 0", what, count);
    return MPI_SUCCESS;
}

int dt_check_ptr(const char *fn, const void *p, MPI_Count n, const char *what)
{
    if (p == NULL && n > 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int check_blocklen(const char *fn, MPI_Count len, const char *what,
                          MPI_Count i)
{
    if (len < 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "%s[%lld] is %lld; must be >= 0", what, i, len);
    return MPI_SUCCESS;
}

/* oldtype valid and newtype writable. */
static int check_old_new(const char *fn, MPI_Datatype oldtype,
                         MPI_Datatype *newtype)
{
    int rc = dt_check_handle(DT_ERR_COMM, oldtype, fn, "oldtype");

    if (rc != MPI_SUCCESS)
        return rc;
    return dt_check_ptr(fn, newtype, 1, "newtype");
}

int dt_new_begin(const char *fn, int combiner, int nints, const int *ints,
                 int naddrs, const MPI_Aint *addrs, int ntypes,
                 const MPI_Datatype *types, dt_new_t *n)
{
    n->o = dt_obj_alloc(combiner);
    if (n->o == NULL || dt_set_contents(n->o, nints, ints, naddrs, addrs,
                                        ntypes, types) != MPI_SUCCESS) {
        if (n->o != NULL)
            dt_obj_destroy(n->o);
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    dt_builder_init(&n->b);
    return MPI_SUCCESS;
}

int dt_new_end(const char *fn, dt_new_t *n, MPI_Datatype *newtype)
{
    int rc = dt_builder_finish(&n->b, n->o);

    if (rc != MPI_SUCCESS) {
        dt_obj_destroy(n->o);
        return mpi_error(DT_ERR_COMM, rc, fn, "%s", n->b.why);
    }
    *newtype = &n->o->pub;
    return MPI_SUCCESS;
}

static int fits_int(MPI_Count v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* Keep vals as o's large-count contents; frees the object on failure. */
static int keep_big(const char *fn, dt_new_t *n, MPI_Count nvals,
                    const MPI_Count *vals)
{
    if (dt_set_big(n->o, nvals, vals) == MPI_SUCCESS)
        return MPI_SUCCESS;
    dt_obj_destroy(n->o);
    return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
}

/*
 * Begin a type whose integer arguments are vals: kept as ints when they
 * all fit, else (large-count constructors) as MPI_Count for get_contents.
 */
static int begin_counts(const char *fn, int combiner, int nvals,
                        const MPI_Count *vals, MPI_Datatype old, dt_new_t *n)
{
    int ints[3], i, fit = 1, rc;

    for (i = 0; i < nvals; i++) {
        fit &= fits_int(vals[i]);
        ints[i] = (int)vals[i];
    }
    rc = dt_new_begin(fn, combiner, fit ? nvals : 0, ints, 0, NULL, 1, &old, n);
    if (rc == MPI_SUCCESS && !fit)
        rc = keep_big(fn, n, nvals, vals);
    return rc;
}

/* ---- contiguous, vector, hvector
 * ---------------------------------------------- */

static int contiguous(const char *fn, MPI_Count count, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    dt_new_t n;
    int rc;

    if ((rc = dt_check_count(fn, count, "count")) != MPI_SUCCESS ||
        (rc = check_old_new(fn, oldtype, newtype)) != MPI_SUCCESS ||
        (rc = begin_counts(fn, MPI_COMBINER_CONTIGUOUS, 1, &count, oldtype,
                           &n)) != MPI_SUCCESS)
        return rc;
    dt_builder_add(&n.b, oldtype, 0, count);
    return dt_new_end(fn, &n, newtype);
}

/* count blocks of blocklength copies, block i at i * stride bytes. */
static void add_strided(dt_builder_t *b, MPI_Datatype oldtype, MPI_Count count,
                        MPI_Count blocklength, MPI_Aint stride)
{
    MPI_Count i;
    int ovf = 0;

    /* The last displacement is the extreme one; if it fits, all do. */
    if (count > 0)
        dt_muladd((MPI_Aint)(count - 1), stride, 0, &ovf);
    if (ovf) {
        b->status = MPI_ERR_ARG;
        b->why = "count * stride overflows MPI_Aint";
        return;
    }
    for (i = 0; i < count && b->status == MPI_SUCCESS; i++)
        dt_builder_add(b, oldtype, (MPI_Aint)i * stride, blocklength);
}

static int vector(const char *fn, int combiner, MPI_Count count,
                  MPI_Count blocklength, MPI_Count stride, MPI_Aint hstride,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_Count vals[3] = {count, blocklength, stride};
    int hv = combiner == MPI_COMBINER_HVECTOR, rc, ovf = 0;
    MPI_Aint bstride;
    dt_new_t n;

    if ((rc = dt_check_count(fn, count, "count")) != MPI_SUCCESS ||
        (rc = check_blocklen(fn, blocklength, "blocklength", 0)) !=
            MPI_SUCCESS ||
        (rc = check_old_new(fn, oldtype, newtype)) != MPI_SUCCESS)
        return rc;
    bstride =
        hv ? hstride : dt_muladd((MPI_Aint)stride, oldtype->extent, 0, &ovf);
    if (ovf)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "stride %lld * extent %ld overflows MPI_Aint", stride,
                         (long)oldtype->extent);
    if (hv && fits_int(count) && fits_int(blocklength))
        rc =
            dt_new_begin(fn, combiner, 2, (int[]){(int)count, (int)blocklength},
                         1, &hstride, 1, &oldtype, &n);
    else if (hv) /* hvector_c: count, blocklength, stride as large counts */
        rc = begin_counts(fn, combiner, 3,
                          (MPI_Count[]){count, blocklength, hstride}, oldtype,
                          &n);
    else
        rc = begin_counts(fn, combiner, 3, vals, oldtype, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    add_strided(&n.b, oldtype, count, blocklength, bstride);
    return dt_new_end(fn, &n, newtype);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_contiguous");
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_contiguous_c");
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_contiguous_c)

int PMPI_Type_vector(int count, int blocklength, int stride,
                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_vector");
    return vector("MPI_Type_vector", MPI_COMBINER_VECTOR, count, blocklength,
                  stride, 0, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_vector_c");
    return vector("MPI_Type_vector_c", MPI_COMBINER_VECTOR, count, blocklength,
                  stride, 0, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_vector_c)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_hvector");
    return vector("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count,
                  blocklength, 0, stride, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength,
                               MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_hvector_c");
    return vector("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, count,
                  blocklength, 0, (MPI_Aint)stride, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hvector_c)

/* ---- indexed family
 * ------------------------------------------------------------- */

/*
 * The four indexed constructors differ in whether block lengths vary (bl
 * array or one blocklength) and whether displacements are in extents of
 * oldtype or in bytes (the h forms).  Every form, int or _c, arrives here
 * with its arrays as MPI_Count.
 */
typedef struct idx_args {
    const char *fn;
    int combiner;
    MPI_Count count;
    const MPI_Count *bl;    /* block lengths (indexed, hindexed), or */
    MPI_Count blocklength;  /* one for all (the _block forms) */
    const MPI_Count *disp;  /* displacements */
} idx_args_t;

static int idx_varlen(const idx_args_t *a)
{
    return a->combiner == MPI_COMBINER_INDEXED ||
           a->combiner == MPI_COMBINER_HINDEXED;
}

static int idx_bytes(const idx_args_t *a)
{
    return a->combiner == MPI_COMBINER_HINDEXED ||
           a->combiner == MPI_COMBINER_HINDEXED_BLOCK;
}

static MPI_Count idx_bl(const idx_args_t *a, MPI_Count i)
{
    return idx_varlen(a) ? a->bl[i] : a->blocklength;
}

static int idx_check(const idx_args_t *a, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    MPI_Count i;
    int rc;

    if ((rc = dt_check_count(a->fn, a->count, "count")) != MPI_SUCCESS ||
        (rc = check_old_new(a->fn, oldtype, newtype)) != MPI_SUCCESS ||
        (rc = dt_check_ptr(a->fn, a->disp, a->count,
                           "array_of_displacements")) != MPI_SUCCESS)
        return rc;
    if (!idx_varlen(a))
        return check_blocklen(a->fn, a->blocklength, "blocklength", 0);
    if ((rc = dt_check_ptr(a->fn, a->bl, a->count, "array_of_blocklengths")) !=
        MPI_SUCCESS)
        return rc;
    for (i = 0; i < a->count; i++)
        if ((rc = check_blocklen(a->fn, a->bl[i], "array_of_blocklengths",
                                 i)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

/*
 * Contents in the standard's order: count, blocklength(s), displacements,
 * as ints (and byte displacements as addresses) when every value fits,
 * else all as large counts.
 */
static int idx_begin(const idx_args_t *a, MPI_Datatype oldtype, dt_new_t *n)
{
    MPI_Count nb = idx_varlen(a) ? a->count : 1, nd = a->count, i, k = 0;
    int bytes = idx_bytes(a), fit = fits_int(a->count), rc;
    MPI_Count *big;
    int *ints;

    for (i = 0; i < nb && fit; i++)
        fit = fits_int(idx_bl(a, i));
    for (i = 0; i < nd && fit && !bytes; i++)
        fit = fits_int(a->disp[i]);
    big = malloc((size_t)(1 + nb + nd) * sizeof(MPI_Count));
    ints = malloc((size_t)(1 + nb + nd) * sizeof(int));
    if (big == NULL || ints == NULL) {
        free(big);
        free(ints);
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, a->fn, "out of memory");
    }
    big[k++] = a->count;
    for (i = 0; i < nb; i++)
        big[k++] = idx_bl(a, i);
    for (i = 0; i < nd; i++)
        big[k++] = a->disp[i];
    for (i = 0; i < k; i++)
        ints[i] = (int)big[i];
    if (!fit) {
        rc = dt_new_begin(a->fn, a->combiner, 0, NULL, 0, NULL, 1, &oldtype,
                          n);
        if (rc == MPI_SUCCESS)
            rc = keep_big(a->fn, n, k, big);
    } else if (bytes) {
        MPI_Aint *addrs = malloc((size_t)(nd + 1) * sizeof(MPI_Aint));
        for (i = 0; addrs != NULL && i < nd; i++)
            addrs[i] = (MPI_Aint)a->disp[i];
        rc = addrs == NULL
                 ? mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, a->fn,
                             "out of memory")
                 : dt_new_begin(a->fn, a->combiner, (int)(1 + nb), ints,
                                (int)nd, addrs, 1, &oldtype, n);
        free(addrs);
    } else {
        rc = dt_new_begin(a->fn, a->combiner, (int)k, ints, 0, NULL, 1,
                          &oldtype, n);
    }
    free(big);
    free(ints);
    return rc;
}

static int indexed(const idx_args_t *a, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    dt_new_t n;
    MPI_Count i;
    int rc, ovf = 0;

    if ((rc = idx_check(a, oldtype, newtype)) != MPI_SUCCESS ||
        (rc = idx_begin(a, oldtype, &n)) != MPI_SUCCESS)
        return rc;
    for (i = 0; i < a->count && n.b.status == MPI_SUCCESS; i++) {
        MPI_Aint d = idx_bytes(a)
                         ? (MPI_Aint)a->disp[i]
                         : dt_muladd((MPI_Aint)a->disp[i], oldtype->extent, 0,
                                     &ovf);
        if (ovf) {
            n.b.status = MPI_ERR_ARG;
            n.b.why = "a displacement times the extent overflows MPI_Aint";
        }
        dt_builder_add(&n.b, oldtype, d, idx_bl(a, i));
    }
    return dt_new_end(a->fn, &n, newtype);
}

/* An int (aint 0) or address (aint 1) argument array as MPI_Count (NULL
 * stays NULL).  *ok turns 0 when memory runs out. */
static MPI_Count *widen(const void *v, int n, int aint, int *ok)
{
    MPI_Count *w;

    if (v == NULL || n <= 0)
        return NULL;
    w = malloc((size_t)n * sizeof(*w));
    if (w == NULL) {
        *ok = 0;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        w[i] = aint ? ((const MPI_Aint *)v)[i] : ((const int *)v)[i];
    return w;
}

/* The int forms: widen the arrays, build, free them. */
static int indexed_int(const char *fn, int combiner, int count, const int *bl,
                       int blocklength, const int *idisp,
                       const MPI_Aint *adisp, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    int ok = 1, rc;
    MPI_Count *wbl = widen(bl, count, 0, &ok);
    MPI_Count *wd = adisp ? widen(adisp, count, 1, &ok)
                          : widen(idisp, count, 0, &ok);
    idx_args_t a = {fn, combiner, count, wbl, blocklength, wd};

    /* A NULL array stays NULL so that the checks name it. */
    rc = ok ? indexed(&a, oldtype, newtype)
            : mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    free(wbl);
    free(wd);
    return rc;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_indexed");
    return indexed_int("MPI_Type_indexed", MPI_COMBINER_INDEXED, count,
                       array_of_blocklengths, 0, array_of_displacements, NULL,
                       oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_hindexed");
    return indexed_int("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED,
                       count, array_of_blocklengths, 0, NULL,
                       array_of_displacements, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_indexed_block");
    return indexed_int("MPI_Type_create_indexed_block",
                       MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                       array_of_displacements, NULL, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_hindexed_block");
    return indexed_int("MPI_Type_create_hindexed_block",
                       MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength,
                       NULL, array_of_displacements, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed_block)

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[],
                        MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count,
                    array_of_blocklengths, 0, array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_indexed_c");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_indexed_c)

int PMPI_Type_create_hindexed_c(MPI_Count count,
                                const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED,
                    count, array_of_blocklengths, 0, array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_create_hindexed_c");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed_c)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_indexed_block_c",
                    MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                    array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_create_indexed_block_c");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype,
                                      MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_hindexed_block_c",
                    MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength,
                    array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_create_hindexed_block_c");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed_block_c)

/* ---- struct
 * ---------------------------------------------------------------------- */

static int struct_check(const char *fn, MPI_Count count, const MPI_Count *bl,
                        const MPI_Count *disp, const MPI_Datatype *types,
                        MPI_Datatype *newtype)
{
    char what[48];
    MPI_Count i;
    int rc;

    if ((rc = dt_check_count(fn, count, "count")) != MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, bl, count, "array_of_blocklengths")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, disp, count, "array_of_displacements")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, types, count, "array_of_types")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, newtype, 1, "newtype")) != MPI_SUCCESS)
        return rc;
    for (i = 0; i < count; i++) {
        snprintf(what, sizeof(what), "array_of_types[%lld]", (long long)i);
        if ((rc = check_blocklen(fn, bl[i], "array_of_blocklengths", i)) !=
                MPI_SUCCESS ||
            (rc = dt_check_handle(DT_ERR_COMM, types[i], fn, what)) !=
                MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Contents: count and block lengths as ints and displacements as
 * addresses when they fit, else count, block lengths and displacements as
 * large counts; the types either way. */
static int struct_begin(const char *fn, MPI_Count count, const MPI_Count *bl,
                        const MPI_Count *disp, const MPI_Datatype *types,
                        dt_new_t *n)
{
    int fit = fits_int(count) && fits_int(count + 1), rc;
    MPI_Count i, k = 0, *big;
    MPI_Aint *addrs;
    int *ints;

    for (i = 0; i < count && fit; i++)
        fit = fits_int(bl[i]);
    if (!fit) {
        big = malloc((size_t)(2 * count + 1) * sizeof(MPI_Count));
        if (big == NULL)
            return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
        big[k++] = count;
        for (i = 0; i < count; i++)
            big[k++] = bl[i];
        for (i = 0; i < count; i++)
            big[k++] = disp[i];
        rc = dt_new_begin(fn, MPI_COMBINER_STRUCT, 0, NULL, 0, NULL,
                          (int)count, types, n);
        if (rc == MPI_SUCCESS)
            rc = keep_big(fn, n, k, big);
        free(big);
        return rc;
    }
    ints = malloc(((size_t)count + 1) * sizeof(int));
    addrs = malloc(((size_t)count + 1) * sizeof(MPI_Aint));
    if (ints == NULL || addrs == NULL) {
        free(ints);
        free(addrs);
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    ints[0] = (int)count;
    for (i = 0; i < count; i++) {
        ints[1 + i] = (int)bl[i];
        addrs[i] = (MPI_Aint)disp[i];
    }
    rc = dt_new_begin(fn, MPI_COMBINER_STRUCT, (int)count + 1, ints,
                      (int)count, addrs, (int)count, types, n);
    free(ints);
    free(addrs);
    return rc;
}

static int struct_any(const char *fn, MPI_Count count, const MPI_Count *bl,
                      const MPI_Count *disp, const MPI_Datatype *types,
                      MPI_Datatype *newtype)
{
    dt_new_t n;
    int rc;

    rc = struct_check(fn, count, bl, disp, types, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The types are an int count of handles in the contents. */
    if (count > INT_MAX)
        return mpi_error(DT_ERR_COMM, MPI_ERR_COUNT, fn,
                         "count %lld: more than INT_MAX types",
                         (long long)count);
    rc = struct_begin(fn, count, bl, disp, types, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    for (MPI_Count i = 0; i < count; i++)
        dt_builder_add(&n.b, types[i], (MPI_Aint)disp[i], bl[i]);
    return dt_new_end(fn, &n, newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[],
                            MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct";
    int ok = 1, rc;
    MPI_Count *bl, *disp;

    MPI_CHECK_INIT(fn);
    bl = widen(array_of_blocklengths, count, 0, &ok);
    disp = widen(array_of_displacements, count, 1, &ok);
    rc = ok ? struct_any(fn, count, bl, disp, array_of_types, newtype)
            : mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    free(bl);
    free(disp);
    return rc;
}
SHOAL_MPI_WEAK(Type_create_struct)

int PMPI_Type_create_struct_c(MPI_Count count,
                              const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[],
                              MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_struct_c");
    return struct_any("MPI_Type_create_struct_c", count,
                      array_of_blocklengths, array_of_displacements,
                      array_of_types, newtype);
}
SHOAL_MPI_WEAK(Type_create_struct_c)

/* ---- resized
 * --------------------------------------------------------------------- */

static int resized(const char *fn, MPI_Datatype oldtype, MPI_Aint lb,
                   MPI_Aint extent, MPI_Datatype *newtype)
{
    MPI_Aint addrs[2] = {lb, extent}, ub;
    dt_obj_t *o;
    int rc;

    if ((rc = check_old_new(fn, oldtype, newtype)) != MPI_SUCCESS)
        return rc;
    if (__builtin_add_overflow(lb, extent, &ub))
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "lb %ld + extent %ld overflows MPI_Aint", (long)lb,
                         (long)extent);
    /* Resizing moves no data: the layout is shared, the bounds replaced
     * by markers at lb and lb + extent. */
    o = dt_clone_layout(oldtype, MPI_COMBINER_RESIZED);
    if (o == NULL ||
        dt_set_contents(o, 0, NULL, 2, addrs, 1, &oldtype) != MPI_SUCCESS) {
        if (o != NULL)
            dt_obj_destroy(o);
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    o->pub.flags &= ~(MPI_DT_COMMITTED | MPI_DT_PAIR);
    o->pub.lb = lb;
    o->pub.extent = extent;
    o->marks = DT_MARK_LB | DT_MARK_UB;
    dt_set_contig(&o->pub);
    *newtype = &o->pub;
    return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_resized");
    return resized("MPI_Type_create_resized", oldtype, lb, extent, newtype);
}
SHOAL_MPI_WEAK(Type_create_resized)

/* MPI_Count and MPI_Aint are both 64 bits here: the bounds are kept as
 * addresses, as for the int form. */
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb,
                               MPI_Count extent, MPI_Datatype *newtype)
{
    MPI_CHECK_INIT("MPI_Type_create_resized_c");
    return resized("MPI_Type_create_resized_c", oldtype, (MPI_Aint)lb,
                   (MPI_Aint)extent, newtype);
}
SHOAL_MPI_WEAK(Type_create_resized_c)
