/*
 * Questions about datatypes: sizes and extents, how a type was built
 * (envelope and contents), names, Type_match_size, and the address
 * arithmetic helpers (which need no MPI_Init).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/dt/dt.h"

/* Handle valid and every output pointer non-NULL. */
static int check_query(const char *fn, MPI_Datatype dt, const void *out1,
                       const void *out2)
{
    int rc = dt_check_handle(DT_ERR_COMM, dt, fn, "datatype");

    if (rc != MPI_SUCCESS)
        return rc;
    if (out1 == NULL || out2 == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "an output argument is NULL");
    return MPI_SUCCESS;
}

/* ---- size
 * ---------------------------------------------------------------------- */

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_size");
    if ((rc = check_query("MPI_Type_size", datatype, size, size)) !=
        MPI_SUCCESS)
        return rc;
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_size)

static int size_count(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    int rc = check_query(fn, datatype, size, size);

    if (rc == MPI_SUCCESS)
        *size = datatype->size;
    return rc;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    MPI_CHECK_INIT("MPI_Type_size_x");
    return size_count("MPI_Type_size_x", datatype, size);
}
SHOAL_MPI_WEAK(Type_size_x)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    MPI_CHECK_INIT("MPI_Type_size_c");
    return size_count("MPI_Type_size_c", datatype, size);
}
SHOAL_MPI_WEAK(Type_size_c)

/* ---- extents
 * ------------------------------------------------------------------------ */

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_extent");
    if ((rc = check_query("MPI_Type_get_extent", datatype, lb, extent)) !=
        MPI_SUCCESS)
        return rc;
    *lb = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_get_extent)

/* The MPI_Count forms: true selects true_lb / true_extent. */
static int extent_count(const char *fn, MPI_Datatype dt, int true_ext,
                        MPI_Count *lb, MPI_Count *extent)
{
    int rc = check_query(fn, dt, lb, extent);

    if (rc != MPI_SUCCESS)
        return rc;
    *lb = true_ext ? dt->true_lb : dt->lb;
    *extent = true_ext ? dt->true_extent : dt->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
                           MPI_Count *extent)
{
    MPI_CHECK_INIT("MPI_Type_get_extent_x");
    return extent_count("MPI_Type_get_extent_x", datatype, 0, lb, extent);
}
SHOAL_MPI_WEAK(Type_get_extent_x)

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb,
                           MPI_Count *extent)
{
    MPI_CHECK_INIT("MPI_Type_get_extent_c");
    return extent_count("MPI_Type_get_extent_c", datatype, 0, lb, extent);
}
SHOAL_MPI_WEAK(Type_get_extent_c)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
                              MPI_Aint *true_extent)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_true_extent");
    if ((rc = check_query("MPI_Type_get_true_extent", datatype, true_lb,
                          true_extent)) != MPI_SUCCESS)
        return rc;
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_extent;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_get_true_extent)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    MPI_CHECK_INIT("MPI_Type_get_true_extent_x");
    return extent_count("MPI_Type_get_true_extent_x", datatype, 1, true_lb,
                        true_extent);
}
SHOAL_MPI_WEAK(Type_get_true_extent_x)

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    MPI_CHECK_INIT("MPI_Type_get_true_extent_c");
    return extent_count("MPI_Type_get_true_extent_c", datatype, 1, true_lb,
                        true_extent);
}
SHOAL_MPI_WEAK(Type_get_true_extent_c)

/* ---- envelope and contents
 * ----------------------------------------------------------- */

static MPI_Count nbig_of(MPI_Datatype dt)
{
    return dt_is_predef(dt) ? 0 : ((const dt_obj_t *)dt)->nbig;
}

const MPI_Count *mpi_dt_large_counts(MPI_Datatype dt, MPI_Count *n)
{
    *n = nbig_of(dt);
    return *n > 0 ? ((const dt_obj_t *)dt)->big : NULL;
}

/* Types built by the _c constructors with arguments beyond int. */
static int check_small(const char *fn, MPI_Datatype dt)
{
    if (!dt_is_predef(dt) && ((const dt_obj_t *)dt)->nbig > 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_VALUE_TOO_LARGE, fn,
                         "the type was built by a large-count constructor "
                         "with arguments an int cannot hold");
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
                           int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    const char *fn = "MPI_Type_get_envelope";
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_envelope");
    if ((rc = check_query(fn, datatype, num_integers, num_addresses)) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, num_datatypes, 1, "num_datatypes")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, combiner, 1, "combiner")) != MPI_SUCCESS ||
        (rc = check_small(fn, datatype)) != MPI_SUCCESS)
        return rc;
    *num_integers = datatype->nints;
    *num_addresses = datatype->naddrs;
    *num_datatypes = datatype->ntypes;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses,
                             MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope_c";
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_envelope_c");
    if ((rc = check_query(fn, datatype, num_integers, num_addresses)) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, num_large_counts, 1, "num_large_counts")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, num_datatypes, 1, "num_datatypes")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, combiner, 1, "combiner")) != MPI_SUCCESS)
        return rc;
    *num_integers = datatype->nints;
    *num_addresses = datatype->naddrs;
    *num_large_counts = nbig_of(datatype);
    *num_datatypes = datatype->ntypes;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_get_envelope_c)

/*
 * A new handle equivalent to derived type t, for get_contents: same
 * layout, combiner and contents, its own references and name.
 */
static MPI_Datatype clone_type(MPI_Datatype t)
{
    dt_obj_t *o = dt_clone_layout(t, t->combiner);

    if (o == NULL)
        return NULL;
    if (dt_set_contents(o, t->nints, t->ints, t->naddrs, t->addrs, t->ntypes,
                        t->types) != MPI_SUCCESS) {
        dt_obj_destroy(o);
        return NULL;
    }
    if (dt_set_big(o, ((const dt_obj_t *)t)->nbig,
                   ((const dt_obj_t *)t)->big) != MPI_SUCCESS) {
        dt_obj_destroy(o);
        return NULL;
    }
    memcpy(o->pub.name, t->name, sizeof(o->pub.name));
    return &o->pub;
}

/* Predefined types are returned as they are; derived ones as new handles
 * the caller frees. */
static int contents_types(const char *fn, MPI_Datatype dt, MPI_Datatype *out)
{
    int i;

    for (i = 0; i < dt->ntypes; i++) {
        MPI_Datatype t = dt->types[i];
        out[i] = dt_is_predef(t) ? t : clone_type(t);
        if (out[i] == NULL) {
            while (--i >= 0)
                if (!dt_is_predef(out[i]))
                    mpi_dt_release(out[i]);
            return mpi_error(DT_ERR_COMM, MPI_ERR_NO_MEM, fn, "out of memory");
        }
    }
    return MPI_SUCCESS;
}

static int get_contents(const char *fn, MPI_Datatype dt, MPI_Count max_ints,
                        MPI_Count max_addrs, MPI_Count max_big,
                        MPI_Count max_types, int *ints, MPI_Aint *addrs,
                        MPI_Count *big, MPI_Datatype *types)
{
    MPI_Count nbig;
    int rc;

    if ((rc = dt_check_handle(DT_ERR_COMM, dt, fn, "datatype")) !=
        MPI_SUCCESS)
        return rc;
    if (dt->combiner == MPI_COMBINER_NAMED)
        return mpi_error(DT_ERR_COMM, MPI_ERR_TYPE, fn,
                         "%s is predefined (MPI_COMBINER_NAMED): it has no "
                         "contents",
                         dt->name);
    nbig = nbig_of(dt);
    if (max_ints < dt->nints || max_addrs < dt->naddrs || max_big < nbig ||
        max_types < dt->ntypes)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "max_integers %lld, max_addresses %lld, "
                         "max_large_counts %lld, max_datatypes %lld are less "
                         "than the envelope's %d, %d, %lld, %d",
                         (long long)max_ints, (long long)max_addrs,
                         (long long)max_big, (long long)max_types, dt->nints,
                         dt->naddrs, (long long)nbig, dt->ntypes);
    if ((rc = dt_check_ptr(fn, ints, dt->nints, "array_of_integers")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, addrs, dt->naddrs, "array_of_addresses")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, big, nbig, "array_of_large_counts")) !=
            MPI_SUCCESS ||
        (rc = dt_check_ptr(fn, types, dt->ntypes, "array_of_datatypes")) !=
            MPI_SUCCESS ||
        (rc = contents_types(fn, dt, types)) != MPI_SUCCESS)
        return rc;
    if (dt->nints > 0)
        memcpy(ints, dt->ints, (size_t)dt->nints * sizeof(int));
    if (dt->naddrs > 0)
        memcpy(addrs, dt->addrs, (size_t)dt->naddrs * sizeof(MPI_Aint));
    if (nbig > 0)
        memcpy(big, ((const dt_obj_t *)dt)->big,
               (size_t)nbig * sizeof(MPI_Count));
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                           int max_addresses, int max_datatypes,
                           int array_of_integers[],
                           MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[])
{
    const char *fn = "MPI_Type_get_contents";
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_contents");
    if ((rc = dt_check_handle(DT_ERR_COMM, datatype, fn, "datatype")) !=
            MPI_SUCCESS ||
        (rc = check_small(fn, datatype)) != MPI_SUCCESS)
        return rc;
    return get_contents(fn, datatype, max_integers, max_addresses, 0,
                        max_datatypes, array_of_integers, array_of_addresses,
                        NULL, array_of_datatypes);
}
SHOAL_MPI_WEAK(Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses,
                             MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    MPI_CHECK_INIT("MPI_Type_get_contents_c");
    return get_contents("MPI_Type_get_contents_c", datatype, max_integers,
                        max_addresses, max_large_counts, max_datatypes,
                        array_of_integers, array_of_addresses,
                        array_of_large_counts, array_of_datatypes);
}
SHOAL_MPI_WEAK(Type_get_contents_c)

/* ---- names
 * ------------------------------------------------------------------------------
 */

int PMPI_Type_set_name(MPI_Datatype datatype, const char *name)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_set_name");
    if ((rc = check_query("MPI_Type_set_name", datatype, name, name)) !=
        MPI_SUCCESS)
        return rc;
    /* Longer names are truncated to what MPI_MAX_OBJECT_NAME allows. */
    pthread_mutex_lock(&mpi_obj_lock);
    strncpy(datatype->name, name, MPI_MAX_OBJECT_NAME - 1);
    datatype->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
    int rc;

    MPI_CHECK_INIT("MPI_Type_get_name");
    if ((rc = check_query("MPI_Type_get_name", datatype, name, resultlen)) !=
        MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&mpi_obj_lock);
    memcpy(name, datatype->name, MPI_MAX_OBJECT_NAME);
    pthread_mutex_unlock(&mpi_obj_lock);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Type_get_name)

/* ---- Type_match_size
 * ------------------------------------------------------------------- */

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    /* Candidates per class, Fortran names first (what the call is for). */
    static const MPI_Datatype ints[] = {MPI_INTEGER, MPI_INT8_T, MPI_INT16_T,
                                        MPI_INT32_T, MPI_INT64_T};
    static const MPI_Datatype reals[] = {MPI_REAL, MPI_DOUBLE_PRECISION,
                                         MPI_LONG_DOUBLE};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX};
    const char *fn = "MPI_Type_match_size";
    const MPI_Datatype *list;
    size_t n, i;

    MPI_CHECK_INIT("MPI_Type_match_size");
    if (datatype == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn, "datatype is NULL");
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        list = ints;
        n = BASE_ARRAY_SIZE(ints);
        break;
    case MPI_TYPECLASS_REAL:
        list = reals;
        n = BASE_ARRAY_SIZE(reals);
        break;
    case MPI_TYPECLASS_COMPLEX:
        list = cplx;
        n = BASE_ARRAY_SIZE(cplx);
        break;
    default:
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "typeclass %d is not MPI_TYPECLASS_INTEGER, _REAL "
                         "or _COMPLEX",
                         typeclass);
    }
    for (i = 0; i < n; i++)
        if (list[i]->size == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                     "no predefined type of typeclass %d has size %d",
                     typeclass, size);
}
SHOAL_MPI_WEAK(Type_match_size)

/* ---- addresses (allowed before MPI_Init)
 * ------------------------------------------------ */

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (address == NULL) {
        if (!mpi.up)
            return MPI_ERR_ARG;
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, "MPI_Get_address",
                         "address is NULL");
    }
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Get_address)

/* Address arithmetic wraps like the machine's, without signed overflow. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
SHOAL_MPI_WEAK(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
SHOAL_MPI_WEAK(Aint_diff)
