/*
 * What a status says: counts and elements of a received message.
 */
#include "mpi/mpi_impl.h"

static int status_args(const MPI_Status *status, MPI_Datatype dt,
                       const void *out, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (status == NULL || status == MPI_STATUS_IGNORE || out == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, fn,
                         "status is NULL or MPI_STATUS_IGNORE, or the "
                         "output pointer is NULL");
    if (dt == MPI_DATATYPE_NULL || dt->magic != MPI_MAGIC_DT)
        return mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    return MPI_SUCCESS;
}

/* Whole elements of dt in the status's bytes, or MPI_UNDEFINED. */
static MPI_Count count_of(const MPI_Status *status, MPI_Datatype dt)
{
    if (dt->size == 0)
        return status->shoal_count == 0 ? 0 : MPI_UNDEFINED;
    if (status->shoal_count % dt->size != 0)
        return MPI_UNDEFINED;
    return status->shoal_count / dt->size;
}

/* Whole elements (count) or basic elements (elements) of the status's
 * bytes, for the MPI_Count and the int forms alike. */
static int query(const MPI_Status *status, MPI_Datatype dt, int elements,
                 MPI_Count *out, const char *fn)
{
    int rc = status_args(status, dt, out, fn);

    if (rc == MPI_SUCCESS)
        *out = elements ? mpi_dt_elements(dt, status->shoal_count)
                        : count_of(status, dt);
    return rc;
}

static int query_int(const MPI_Status *status, MPI_Datatype dt, int elements,
                     int *out, const char *fn)
{
    MPI_Count n = 0;
    int rc = query(status, dt, elements, out != NULL ? &n : NULL, fn);

    if (rc == MPI_SUCCESS)
        *out = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype dt,
                     MPI_Count *count)
{
    return query(status, dt, 0, count, "MPI_Get_count_c");
}
SHOAL_MPI_WEAK(Get_count_c)

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    return query_int(status, dt, 0, count, "MPI_Get_count");
}
SHOAL_MPI_WEAK(Get_count)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype dt,
                        MPI_Count *count)
{
    return query(status, dt, 1, count, "MPI_Get_elements_c");
}
SHOAL_MPI_WEAK(Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dt,
                        MPI_Count *count)
{
    return query(status, dt, 1, count, "MPI_Get_elements_x");
}
SHOAL_MPI_WEAK(Get_elements_x)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    return query_int(status, dt, 1, count, "MPI_Get_elements");
}
SHOAL_MPI_WEAK(Get_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dt,
                               MPI_Count count)
{
    int rc = status_args(status, dt, status, "MPI_Status_set_elements_x");

    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return mpi_error(NULL, MPI_ERR_COUNT, "MPI_Status_set_elements_x",
                         "count %lld is negative", (long long)count);
    /* Elements of a type's basic elements: bytes = count * size / nelems. */
    if (dt->nelems > 0)
        status->shoal_count = count * dt->size / dt->nelems;
    else
        status->shoal_count = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dt, int count)
{
    return PMPI_Status_set_elements_x(status, dt, count);
}
SHOAL_MPI_WEAK(Status_set_elements)
