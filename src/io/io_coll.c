/*
 * Collective data access: read_at_all, write_at_all, read_all, write_all,
 * read_ordered, write_ordered, their split forms (_begin/_end) and the
 * nonblocking collectives (iread_at_all ... iwrite_all).
 *
 * By default each rank does its own part with list IO (io_access), which
 * is correct for any set of views and needs no synchronization: MPI's
 * consistency rules ask the program for MPI_File_sync and a barrier before
 * one rank reads what another wrote.  With romio_cb_read/romio_cb_write
 * enabled (by the hints, or by default on a network file system for views
 * of small blocks: io_cb_decide), explicit-offset and individual-pointer
 * collectives go through two-phase collective buffering instead
 * (io_twophase.c; the nonblocking ones in the background there).  Ordered access
 * talks anyway: a scan of the sizes.
 *
 * A split collective does its work in _begin and keeps the byte count for
 * _end; one may be in progress per file handle (MPI 4.1 section 14.4.5).
 */
#define _GNU_SOURCE
#include "io/io_calls.h"

/* Each line one call in its int and _c forms (io_calls.h). */
IO_AT_CALLS(read_at_all, , 0, 1)
IO_IAT_CALLS(iread_at_all, , 0, 1)
IO_PTR_CALLS(read_all, , 0, IO_INDIV, 1)
IO_IPTR_CALLS(iread_all, , 0, IO_INDIV, 1)
IO_PTR_CALLS(read_ordered, , 0, IO_ORDERED, 1)
IO_AT_CALLS(write_at_all, const, 1, 1)
IO_IAT_CALLS(iwrite_at_all, const, 1, 1)
IO_PTR_CALLS(write_all, const, 1, IO_INDIV, 1)
IO_IPTR_CALLS(iwrite_all, const, 1, IO_INDIV, 1)
IO_PTR_CALLS(write_ordered, const, 1, IO_ORDERED, 1)

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

/* _begin in its int and _c forms, at an explicit offset or not; _end. */
#define SPLIT_BEGIN_AT_ONE(name, CT, cb, kind)                               \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, cb void *buf,       \
                         CT count, MPI_Datatype datatype)                    \
    {                                                                        \
        return split_begin(fh, kind, offset, (void *)buf, count, datatype);  \
    }                                                                        \
    SHOAL_MPI_WEAK(File_##name)
#define SPLIT_BEGIN_ONE(name, CT, cb, kind)                                  \
    int PMPI_File_##name(MPI_File fh, cb void *buf, CT count,                \
                         MPI_Datatype datatype)                              \
    {                                                                        \
        return split_begin(fh, kind, 0, (void *)buf, count, datatype);       \
    }                                                                        \
    SHOAL_MPI_WEAK(File_##name)
#define SPLIT_AT(name, cb, kind)                                             \
    SPLIT_BEGIN_AT_ONE(name##_begin, int, cb, kind)                          \
    SPLIT_BEGIN_AT_ONE(name##_begin_c, MPI_Count, cb, kind)                  \
    SPLIT_END(name##_end, cb, kind)
#define SPLIT(name, cb, kind)                                                \
    SPLIT_BEGIN_ONE(name##_begin, int, cb, kind)                             \
    SPLIT_BEGIN_ONE(name##_begin_c, MPI_Count, cb, kind)                     \
    SPLIT_END(name##_end, cb, kind)
#define SPLIT_END(name, cb, kind)                                            \
    int PMPI_File_##name(MPI_File fh, cb void *buf, MPI_Status *status)      \
    {                                                                        \
        (void)buf;                                                           \
        return split_end(fh, kind, "MPI_File_" #name, status);               \
    }                                                                        \
    SHOAL_MPI_WEAK(File_##name)

SPLIT_AT(read_at_all, , SPLIT_READ_AT)
SPLIT_AT(write_at_all, const, SPLIT_WRITE_AT)
SPLIT(read_all, , SPLIT_READ_ALL)
SPLIT(write_all, const, SPLIT_WRITE_ALL)
SPLIT(read_ordered, , SPLIT_READ_ORDERED)
SPLIT(write_ordered, const, SPLIT_WRITE_ORDERED)
