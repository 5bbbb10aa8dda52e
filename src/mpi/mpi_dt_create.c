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

#include "mpi_dt.h"

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

/*
 * Begin a type whose integer arguments are vals: kept as ints when they
 * all fit, else (large-count constructors) as MPI_Count for get_contents.
 */
static int begin_counts(const char *fn, int combiner, int nvals,
                        const MPI_Count *vals, MPI_Datatype old, dt_new_t *n)
{
    int ints[3], i, fit = 1, rc;

    for (i = 0; i < nvals; i++) {
        fit &= vals[i] >= INT_MIN && vals[i] <= INT_MAX;
        ints[i] = (int)vals[i];
    }
    rc = dt_new_begin(fn, combiner, fit ? nvals : 0, ints, 0, NULL, 1, &old, n);
    if (rc == MPI_SUCCESS && !fit) {
        n->o->nbig = nvals;
        for (i = 0; i < nvals; i++)
            n->o->big[i] = vals[i];
    }
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
    if (hv)
        rc =
            dt_new_begin(fn, combiner, 2, (int[]){(int)count, (int)blocklength},
                         1, &hstride, 1, &oldtype, &n);
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

/* ---- indexed family
 * ------------------------------------------------------------- */

/*
 * The four indexed constructors differ in whether block lengths vary (bl
 * array or one blocklength) and whether displacements are in extents
 * (idisp) or bytes (adisp).
 */
typedef struct idx_args {
    const char *fn;
    int combiner;
    int count;
    const int *bl;         /* block lengths (indexed, hindexed), or */
    int blocklength;       /* one for all (the _block forms) */
    const int *idisp;      /* displacements in extents of oldtype, or */
    const MPI_Aint *adisp; /* in bytes (the h forms) */
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

static int idx_check(const idx_args_t *a, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    int rc, i;

    if ((rc = dt_check_count(a->fn, a->count, "count")) != MPI_SUCCESS ||
        (rc = check_old_new(a->fn, oldtype, newtype)) != MPI_SUCCESS ||
        (rc = dt_check_ptr(a->fn,
                           idx_bytes(a) ? (const void *)a->adisp
                                        : (const void *)a->idisp,
                           a->count, "array_of_displacements")) != MPI_SUCCESS)
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

/* Contents in the standard's order: count, [blocklength(s)], [int displs]. */
static int idx_begin(const idx_args_t *a, MPI_Datatype oldtype, dt_new_t *n)
{
    int nb = idx_varlen(a) ? a->count : 1, nd = idx_bytes(a) ? 0 : a->count;
    int *ints = malloc(((size_t)1 + nb + nd) * sizeof(int)), rc;

    if (ints == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, a->fn, "out of memory");
    ints[0] = a->count;
    for (int i = 0; i < nb; i++)
        ints[1 + i] = idx_varlen(a) ? a->bl[i] : a->blocklength;
    for (int i = 0; i < nd; i++)
        ints[1 + nb + i] = a->idisp[i];
    rc = dt_new_begin(a->fn, a->combiner, 1 + nb + nd, ints,
                      idx_bytes(a) ? a->count : 0, a->adisp, 1, &oldtype, n);
    free(ints);
    return rc;
}

static int indexed(const idx_args_t *a, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    dt_new_t n;
    int rc, i, ovf = 0;

    if ((rc = idx_check(a, oldtype, newtype)) != MPI_SUCCESS ||
        (rc = idx_begin(a, oldtype, &n)) != MPI_SUCCESS)
        return rc;
    for (i = 0; i < a->count && n.b.status == MPI_SUCCESS; i++) {
        MPI_Aint d = idx_bytes(a)
                         ? a->adisp[i]
                         : dt_muladd(a->idisp[i], oldtype->extent, 0, &ovf);
        if (ovf) {
            n.b.status = MPI_ERR_ARG;
            n.b.why = "a displacement times the extent overflows MPI_Aint";
        }
        dt_builder_add(&n.b, oldtype, d,
                       idx_varlen(a) ? a->bl[i] : a->blocklength);
    }
    return dt_new_end(a->fn, &n, newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_indexed",
                    MPI_COMBINER_INDEXED,
                    count,
                    array_of_blocklengths,
                    0,
                    array_of_displacements,
                    NULL};
    MPI_CHECK_INIT("MPI_Type_indexed");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_hindexed",
                    MPI_COMBINER_HINDEXED,
                    count,
                    array_of_blocklengths,
                    0,
                    NULL,
                    array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_create_hindexed");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_indexed_block",
                    MPI_COMBINER_INDEXED_BLOCK,
                    count,
                    NULL,
                    blocklength,
                    array_of_displacements,
                    NULL};
    MPI_CHECK_INIT("MPI_Type_create_indexed_block");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    idx_args_t a = {"MPI_Type_create_hindexed_block",
                    MPI_COMBINER_HINDEXED_BLOCK,
                    count,
                    NULL,
                    blocklength,
                    NULL,
                    array_of_displacements};
    MPI_CHECK_INIT("MPI_Type_create_hindexed_block");
    return indexed(&a, oldtype, newtype);
}
SHOAL_MPI_WEAK(Type_create_hindexed_block)

/* ---- struct
 * ---------------------------------------------------------------------- */

static int struct_check(const char *fn, int count, const int *bl,
                        const MPI_Aint *disp, const MPI_Datatype *types,
                        MPI_Datatype *newtype)
{
    char what[48];
    int rc, i;

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
        snprintf(what, sizeof(what), "array_of_types[%d]", i);
        if ((rc = check_blocklen(fn, bl[i], "array_of_blocklengths", i)) !=
                MPI_SUCCESS ||
            (rc = dt_check_handle(DT_ERR_COMM, types[i], fn, what)) !=
                MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[],
                            MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct";
    int *ints, rc, i;
    dt_new_t n;

    MPI_CHECK_INIT("MPI_Type_create_struct");
    rc = struct_check(fn, count, array_of_blocklengths, array_of_displacements,
                      array_of_types, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    ints = malloc(((size_t)count + 1) * sizeof(int));
    if (ints == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
    ints[0] = count;
    for (i = 0; i < count; i++)
        ints[1 + i] = array_of_blocklengths[i];
    rc = dt_new_begin(fn, MPI_COMBINER_STRUCT, count + 1, ints, count,
                      array_of_displacements, count, array_of_types, &n);
    free(ints);
    if (rc != MPI_SUCCESS)
        return rc;
    for (i = 0; i < count; i++)
        dt_builder_add(&n.b, array_of_types[i], array_of_displacements[i],
                       array_of_blocklengths[i]);
    return dt_new_end(fn, &n, newtype);
}
SHOAL_MPI_WEAK(Type_create_struct)

/* ---- resized
 * --------------------------------------------------------------------- */

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_resized";
    MPI_Aint addrs[2] = {lb, extent}, ub;
    dt_obj_t *o;
    int rc;

    MPI_CHECK_INIT("MPI_Type_create_resized");
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
SHOAL_MPI_WEAK(Type_create_resized)
