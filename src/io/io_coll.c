/*
 * Collective data access: read_at_all, write_at_all, read_all, write_all,
 * read_ordered, write_ordered, their split forms (_begin/_end) and the
 * nonblocking collectives (iread_at_all ... iwrite_all).
 *
 * By default each rank does its own part with list IO (io_access), which
 * is correct for any set of views and needs no synchronization: MPI's
 * consistency rules ask the program for MPI_File_sync and a barrier before
 * one rank reads what another wrote.  With romio_cb_read/romio_cb_write
 * enabled, explicit-offset and individual-pointer collectives go through
 * two-phase collective buffering instead (io_twophase.c).  Ordered access
 * talks anyway: a scan of the sizes.
 *
 * A split collective does its work in _begin and keeps the byte count for
 * _end; one may be in progress per file handle (MPI 4.1 section 14.4.5).
 */
#define _GNU_SOURCE
#include "io/io.h"

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_at_all", 0, IO_AT, 1, offset,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_at_all)

int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iread_at_all", 0, IO_AT, 1, offset,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iread_at_all)

int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_all", 0, IO_INDIV, 1, 0, (void *)buf,
                       count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_all)

int PMPI_File_iread_all(MPI_File fh, void *buf, int count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iread_all", 0, IO_INDIV, 1, 0,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iread_all)

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_ordered", 0, IO_ORDERED, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_ordered)

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
                           int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_at_all", 1, IO_AT, 1, offset,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_at_all)

int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
                            int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iwrite_at_all", 1, IO_AT, 1, offset,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iwrite_at_all)

int PMPI_File_write_all(MPI_File fh, const void *buf, int count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_all", 1, IO_INDIV, 1, 0, (void *)buf,
                       count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_all)

int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count,
                         MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iwrite_all", 1, IO_INDIV, 1, 0,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iwrite_all)

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_ordered", 1, IO_ORDERED, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_ordered)

/* ---- large-count forms (MPI 4.0) ---------------------------------------- */

int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                            MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_at_all_c", 0, IO_AT, 1, offset,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_at_all_c)

int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                             MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iread_at_all_c", 0, IO_AT, 1, offset,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iread_at_all_c)

int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_all_c", 0, IO_INDIV, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_all_c)

int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iread_all_c", 0, IO_INDIV, 1, 0,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iread_all_c)

int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_read_ordered_c", 0, IO_ORDERED, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_read_ordered_c)

int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf,
                             MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_at_all_c", 1, IO_AT, 1, offset,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_at_all_c)

int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf,
                              MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iwrite_at_all_c", 1, IO_AT, 1, offset,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iwrite_at_all_c)

int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_all_c", 1, IO_INDIV, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_all_c)

int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking(fh, "MPI_File_iwrite_all_c", 1, IO_INDIV, 1, 0,
                          (void *)buf, count, datatype, request);
}
SHOAL_MPI_WEAK(File_iwrite_all_c)

int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking(fh, "MPI_File_write_ordered_c", 1, IO_ORDERED, 1, 0,
                       (void *)buf, count, datatype, status);
}
SHOAL_MPI_WEAK(File_write_ordered_c)

/* Split collectives: kinds recorded in fh->split (1 + kind). */
enum {
    SPLIT_READ_AT,
    SPLIT_WRITE_AT,
    SPLIT_READ_ALL,
    SPLIT_WRITE_ALL,
    SPLIT_READ_ORDERED,
    SPLIT_WRITE_ORDERED
};

static const char *const split_names[] = {
    "MPI_File_read_at_all_begin",  "MPI_File_write_at_all_begin",
    "MPI_File_read_all_begin",     "MPI_File_write_all_begin",
    "MPI_File_read_ordered_begin", "MPI_File_write_ordered_begin"};

static int split_begin(MPI_File fh, int kind, MPI_Offset offset, void *buf,
                       MPI_Count count, MPI_Datatype dt)
{
    static const int where[] = {IO_AT,    IO_AT,      IO_INDIV,
                                IO_INDIV, IO_ORDERED, IO_ORDERED};
    const char *fn = split_names[kind];
    MPI_Count bytes;
    int rc;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (fh->split != 0)
        return io_error(fh, MPI_ERR_OTHER, fn,
                        "%s has a split collective in progress (begun by "
                        "%s); end it first",
                        fh->path, split_names[fh->split - 1]);
    rc = io_access(fh, fn, kind & 1, where[kind], 1, offset, buf, count, dt,
                   &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    fh->split = 1 + kind;
    fh->split_bytes = bytes;
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, int kind, const char *fn, MPI_Status *status)
{
    int rc;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (fh->split != 1 + kind)
        return io_error(fh, MPI_ERR_OTHER, fn, "no %s is in progress on %s",
                        split_names[kind], fh->path);
    fh->split = 0;
    io_status_set(status, fh->split_bytes);
    return MPI_SUCCESS;
}

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf,
                                int count, MPI_Datatype datatype)
{
    return split_begin(fh, 0, offset, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_at_all_begin)

int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 0, "MPI_File_read_at_all_end", status);
}
SHOAL_MPI_WEAK(File_read_at_all_end)

int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count,
                             MPI_Datatype datatype)
{
    return split_begin(fh, 2, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_all_begin)

int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 2, "MPI_File_read_all_end", status);
}
SHOAL_MPI_WEAK(File_read_all_end)

int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count,
                                 MPI_Datatype datatype)
{
    return split_begin(fh, 4, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_ordered_begin)

int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 4, "MPI_File_read_ordered_end", status);
}
SHOAL_MPI_WEAK(File_read_ordered_end)

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
                                 const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return split_begin(fh, 1, offset, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_at_all_begin)

int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 1, "MPI_File_write_at_all_end", status);
}
SHOAL_MPI_WEAK(File_write_at_all_end)

int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
                              MPI_Datatype datatype)
{
    return split_begin(fh, 3, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_all_begin)

int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 3, "MPI_File_write_all_end", status);
}
SHOAL_MPI_WEAK(File_write_all_end)

int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
                                  MPI_Datatype datatype)
{
    return split_begin(fh, 5, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_ordered_begin)

int PMPI_File_write_ordered_end(MPI_File fh, const void *buf,
                                MPI_Status *status)
{
    (void)buf;
    return split_end(fh, 5, "MPI_File_write_ordered_end", status);
}
SHOAL_MPI_WEAK(File_write_ordered_end)

int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf,
                                  MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fh, 0, offset, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_at_all_begin_c)

int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count,
                               MPI_Datatype datatype)
{
    return split_begin(fh, 2, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_all_begin_c)

int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    return split_begin(fh, 4, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_read_ordered_begin_c)

int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset,
                                   const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    return split_begin(fh, 1, offset, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_at_all_begin_c)

int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                MPI_Datatype datatype)
{
    return split_begin(fh, 3, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_all_begin_c)

int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf,
                                    MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fh, 5, 0, (void *)buf, count, datatype);
}
SHOAL_MPI_WEAK(File_write_ordered_begin_c)
