/*
 * Datatype objects: allocation, references, handle checks, and the calls
 * that change an object's life (commit, free, dup).
 *
 * A derived type is referenced by its user handle, by every type built
 * from it (so MPI_Type_get_contents can return it after the user freed
 * it), and by pending operations (mpi_dt_retain).  MPI_Type_free drops the
 * user's reference and poisons the handle; the memory goes with the last
 * reference.  Predefined types are never counted.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/core/obj_arena.h"
#include "mpi/dt/dt.h"

/* ---- objects ----------------------------------------------------------------
 */

dt_obj_t *dt_obj_alloc(int combiner)
{
    dt_obj_t *o = mpi_obj_alloc(sizeof(*o));

    if (o == NULL)
        return NULL;
    o->pub.magic = MPI_MAGIC_DT;
    o->pub.refs = 1;
    o->pub.combiner = combiner;
    o->align = 1;
    return o;
}

void dt_map_release(dt_map_t *m)
{
    if (m == NULL || m->is_static)
        return;
    if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    free(m->segs);
    free(m->seg_end);
    free(m->runs);
    free(m);
}

void dt_obj_destroy(dt_obj_t *o)
{
    struct shoal_mpi_datatype *t = &o->pub;
    int i;

    for (i = 0; i < t->ntypes; i++)
        mpi_dt_release(t->types[i]);
    free(t->ints);
    free(t->addrs);
    free(t->types);
    free(o->big);
    dt_map_release(dt_map(t));
    t->magic = MPI_MAGIC_DEAD;
    mpi_obj_free(o);
}

void mpi_dt_retain(MPI_Datatype dt)
{
    if (!dt_is_predef(dt))
        __atomic_add_fetch(&dt->refs, 1, __ATOMIC_RELAXED);
}

void mpi_dt_release(MPI_Datatype dt)
{
    if (dt_is_predef(dt))
        return;
    if (__atomic_sub_fetch(&dt->refs, 1, __ATOMIC_ACQ_REL) == 0)
        dt_obj_destroy((dt_obj_t *)dt);
}

int dt_set_contents(dt_obj_t *o, int nints, const int *ints, int naddrs,
                    const MPI_Aint *addrs, int ntypes,
                    const MPI_Datatype *types)
{
    struct shoal_mpi_datatype *t = &o->pub;
    int i;

    if ((nints > 0 &&
         (t->ints = malloc((size_t)nints * sizeof(int))) == NULL) ||
        (naddrs > 0 &&
         (t->addrs = malloc((size_t)naddrs * sizeof(MPI_Aint))) == NULL) ||
        (ntypes > 0 &&
         (t->types = malloc((size_t)ntypes * sizeof(MPI_Datatype))) == NULL))
        return MPI_ERR_NO_MEM;
    if (nints > 0)
        memcpy(t->ints, ints, (size_t)nints * sizeof(int));
    if (naddrs > 0)
        memcpy(t->addrs, addrs, (size_t)naddrs * sizeof(MPI_Aint));
    for (i = 0; i < ntypes; i++) {
        t->types[i] = types[i];
        mpi_dt_retain(types[i]);
    }
    t->nints = nints;
    t->naddrs = naddrs;
    t->ntypes = ntypes;
    return MPI_SUCCESS;
}

int dt_set_big(dt_obj_t *o, MPI_Count n, const MPI_Count *vals)
{
    if (n <= 0)
        return MPI_SUCCESS;
    o->big = malloc((size_t)n * sizeof(MPI_Count));
    if (o->big == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(o->big, vals, (size_t)n * sizeof(MPI_Count));
    o->nbig = n;
    return MPI_SUCCESS;
}

void dt_set_contig(struct shoal_mpi_datatype *t)
{
    int contig = t->size == 0 ? t->extent == 0
                              : t->nsegs == 1 && t->segs[0].len == t->size &&
                                    t->size == t->extent;
    if (contig)
        t->flags |= MPI_DT_CONTIG;
    else
        t->flags &= ~MPI_DT_CONTIG;
}

/*
 * A new object with t's layout (shared), bounds and flags; combiner and
 * contents are the caller's.  Used by dup, resized and get_contents.
 */
dt_obj_t *dt_clone_layout(MPI_Datatype t, int combiner)
{
    dt_obj_t *o = dt_obj_alloc(combiner);
    dt_map_t *m = dt_map(t);

    if (o == NULL)
        return NULL;
    o->pub.flags = t->flags & ~MPI_DT_PREDEF;
    o->pub.basic = t->basic;
    o->pub.size = t->size;
    o->pub.lb = t->lb;
    o->pub.extent = t->extent;
    o->pub.true_lb = t->true_lb;
    o->pub.true_extent = t->true_extent;
    o->pub.nelems = t->nelems;
    o->pub.segs = t->segs;
    o->pub.nsegs = t->nsegs;
    o->pub.typemap = m;
    if (!m->is_static)
        __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
    o->marks = dt_marks(t);
    o->align = dt_align(t);
    return o;
}

/* ---- checks
 * ------------------------------------------------------------------- */

int dt_check_handle(MPI_Comm comm, MPI_Datatype dt, const char *fn,
                    const char *what)
{
    if (dt == MPI_DATATYPE_NULL)
        return mpi_error(comm, MPI_ERR_TYPE, fn, "%s is MPI_DATATYPE_NULL",
                         what);
    if (dt->magic != MPI_MAGIC_DT)
        return mpi_error(comm, MPI_ERR_TYPE, fn,
                         "%s (%p) is not a datatype, or was freed", what,
                         (void *)dt);
    if (!dt_is_predef(dt) && ((const dt_obj_t *)dt)->user_freed)
        return mpi_error(comm, MPI_ERR_TYPE, fn,
                         "%s (%p) was freed with MPI_Type_free", what,
                         (void *)dt);
    return MPI_SUCCESS;
}

int mpi_dt_check(MPI_Comm comm, MPI_Datatype dt, const char *fn)
{
    int rc = dt_check_handle(comm, dt, fn, "datatype");

    if (rc != MPI_SUCCESS)
        return rc;
    if (!(dt->flags & MPI_DT_COMMITTED))
        return mpi_error(comm, MPI_ERR_TYPE, fn,
                         "datatype %p%s%s is not committed (MPI_Type_commit)",
                         (void *)dt, dt->name[0] ? " " : "", dt->name);
    return MPI_SUCCESS;
}

/* ---- commit, free, dup
 * ----------------------------------------------------------- */

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_commit");
    if (datatype == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, "MPI_Type_commit",
                         "datatype pointer is NULL");
    rc =
        dt_check_handle(DT_ERR_COMM, *datatype, "MPI_Type_commit", "*datatype");
    if (rc != MPI_SUCCESS)
        return rc;
    /* The layout was built by the constructor: nothing left to do. */
    if (!dt_is_predef(*datatype))
        (*datatype)->flags |= MPI_DT_COMMITTED;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    MPI_Datatype dt;
    int rc;

    MPI_CHECK_INIT("MPI_Type_free");
    if (datatype == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, "MPI_Type_free",
                         "datatype pointer is NULL");
    dt = *datatype;
    rc = dt_check_handle(DT_ERR_COMM, dt, "MPI_Type_free", "*datatype");
    if (rc != MPI_SUCCESS)
        return rc;
    if (dt_is_predef(dt))
        return mpi_error(DT_ERR_COMM, MPI_ERR_TYPE, "MPI_Type_free",
                         "%s is predefined and cannot be freed", dt->name);
    if (dt->attrs != NULL) {
        rc = mpi_attr_delete_all(MPI_ATTR_TYPE, dt, &dt->attrs);
        if (rc != MPI_SUCCESS)
            return mpi_error(DT_ERR_COMM, rc, "MPI_Type_free",
                             "an attribute delete callback of datatype %p "
                             "failed",
                             (void *)dt);
    }
    ((dt_obj_t *)dt)->user_freed = 1;
    *datatype = MPI_DATATYPE_NULL;
    mpi_dt_release(dt);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_free)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    dt_obj_t *o;
    int rc;

    MPI_CHECK_INIT("MPI_Type_dup");
    rc = dt_check_handle(DT_ERR_COMM, oldtype, "MPI_Type_dup", "oldtype");
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, "MPI_Type_dup",
                         "newtype is NULL");
    *newtype = MPI_DATATYPE_NULL; /* what a failed dup leaves, as Comm_dup */
    o = dt_clone_layout(oldtype, MPI_COMBINER_DUP);
    if (o == NULL || dt_set_contents(o, 0, NULL, 0, NULL, 1, &oldtype) != 0) {
        if (o != NULL)
            dt_obj_destroy(o);
        return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, "MPI_Type_dup",
                         "out of memory");
    }
    if (oldtype->attrs != NULL) {
        rc = mpi_attr_copy_all(MPI_ATTR_TYPE, oldtype, oldtype->attrs,
                               &o->pub.attrs);
        if (rc != MPI_SUCCESS) {
            if (o->pub.attrs != NULL)
                mpi_attr_delete_all(MPI_ATTR_TYPE, &o->pub, &o->pub.attrs);
            dt_obj_destroy(o);
            return mpi_error(DT_ERR_COMM, rc, "MPI_Type_dup",
                             "an attribute copy callback of datatype %p "
                             "failed",
                             (void *)oldtype);
        }
    }
    *newtype = &o->pub;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_dup)
