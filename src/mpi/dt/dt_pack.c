/*
 * MPI_Pack, MPI_Unpack and MPI_Pack_size (and their _c forms).  Packed
 * data is the type's byte stream in native representation with no
 * header, so Pack_size is exact and packing is the cursor's pack.
 */
#include <limits.h>

#include "mpi/dt/dt.h"

/* The communicator errors are raised on: comm when it is one. */
static MPI_Comm err_comm(MPI_Comm comm)
{
    return mpi_comm_ok(comm) ? comm : DT_ERR_COMM;
}

/* Checks shared by pack and unpack: comm, count, type, buffer position. */
static int check_io(const char *fn, MPI_Comm comm, MPI_Count count,
                    MPI_Datatype dt, const void *packed, MPI_Count size,
                    const MPI_Count *position, MPI_Count *bytes_p)
{
    MPI_Comm ec = err_comm(comm);
    int rc;

    if (!mpi_comm_ok(comm))
        return mpi_error(ec, MPI_ERR_COMM, fn,
                         "comm %p is not a "
                         "communicator",
                         (void *)comm);
    if (count < 0)
        return mpi_error(ec, MPI_ERR_COUNT, fn, "count is %lld; must be >= 0",
                         count);
    if ((rc = mpi_dt_check(ec, dt, fn)) != MPI_SUCCESS)
        return rc;
    if (position == NULL)
        return mpi_error(ec, MPI_ERR_ARG, fn, "position is NULL");
    if (size < 0 || *position < 0 || *position > size)
        return mpi_error(ec, MPI_ERR_ARG, fn,
                         "position %lld is outside the packed buffer of "
                         "%lld bytes",
                         *position, size);
    if (__builtin_mul_overflow(count, dt->size, bytes_p))
        return mpi_error(ec, MPI_ERR_COUNT, fn,
                         "count %lld of a %lld-byte type overflows", count,
                         dt->size);
    if (*bytes_p > size - *position)
        return mpi_error(ec, MPI_ERR_TRUNCATE, fn,
                         "%lld bytes at position %lld do not fit a packed "
                         "buffer of %lld bytes",
                         *bytes_p, *position, size);
    if (packed == NULL && *bytes_p > 0)
        return mpi_error(ec, MPI_ERR_BUFFER, fn, "the packed buffer is NULL");
    return MPI_SUCCESS;
}

static int pack(const char *fn, const void *inbuf, MPI_Count incount,
                MPI_Datatype dt, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    mpi_dt_cursor_t c;
    MPI_Count bytes;
    int rc = check_io(fn, comm, incount, dt, outbuf, outsize, position, &bytes);

    if (rc != MPI_SUCCESS)
        return rc;
    mpi_dt_cursor_init(&c, dt, incount, inbuf, 0);
    *position += mpi_dt_cursor_pack(&c, (char *)outbuf + *position, bytes);
    return MPI_SUCCESS;
}

static int unpack(const char *fn, const void *inbuf, MPI_Count insize,
                  MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype dt, MPI_Comm comm)
{
    mpi_dt_cursor_t c;
    MPI_Count bytes;
    int rc = check_io(fn, comm, outcount, dt, inbuf, insize, position, &bytes);

    if (rc != MPI_SUCCESS)
        return rc;
    mpi_dt_cursor_init(&c, dt, outcount, outbuf, 0);
    *position +=
        mpi_dt_cursor_unpack(&c, (const char *)inbuf + *position, bytes);
    return MPI_SUCCESS;
}

static int pack_size(const char *fn, MPI_Count incount, MPI_Datatype dt,
                     MPI_Comm comm, MPI_Count *size)
{
    MPI_Comm ec = err_comm(comm);
    int rc;

    if (!mpi_comm_ok(comm))
        return mpi_error(ec, MPI_ERR_COMM, fn,
                         "comm %p is not a "
                         "communicator",
                         (void *)comm);
    if (incount < 0)
        return mpi_error(ec, MPI_ERR_COUNT, fn, "incount is %lld; must be >= 0",
                         incount);
    if ((rc = mpi_dt_check(ec, dt, fn)) != MPI_SUCCESS)
        return rc;
    if (size == NULL)
        return mpi_error(ec, MPI_ERR_ARG, fn, "size is NULL");
    if (__builtin_mul_overflow(incount, dt->size, size))
        return mpi_error(ec, MPI_ERR_COUNT, fn,
                         "incount %lld of a %lld-byte type overflows", incount,
                         dt->size);
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype,
              void *outbuf, int outsize, int *position, MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc;

    MPI_CHECK_INIT("MPI_Pack");
    rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize,
              position ? &pos : NULL, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos; /* <= outsize */
    return rc;
}
SHOAL_MPI_WEAK(Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                void *outbuf, MPI_Count outsize, MPI_Count *position,
                MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Pack_c");
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize,
                position, comm);
}
SHOAL_MPI_WEAK(Pack_c)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
                int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc;

    MPI_CHECK_INIT("MPI_Unpack");
    rc = unpack("MPI_Unpack", inbuf, insize, position ? &pos : NULL, outbuf,
                outcount, datatype, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos; /* <= insize */
    return rc;
}
SHOAL_MPI_WEAK(Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position,
                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype,
                  MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Unpack_c");
    return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount,
                  datatype, comm);
}
SHOAL_MPI_WEAK(Unpack_c)

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count s = 0;
    int rc;

    MPI_CHECK_INIT("MPI_Pack_size");
    rc = pack_size("MPI_Pack_size", incount, datatype, comm, size ? &s : NULL);
    /* Like MPI_Type_size: a size an int cannot hold is MPI_UNDEFINED. */
    if (rc == MPI_SUCCESS)
        *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return rc;
}
SHOAL_MPI_WEAK(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                     MPI_Count *size)
{
    MPI_CHECK_INIT("MPI_Pack_size_c");
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, size);
}
SHOAL_MPI_WEAK(Pack_size_c)
