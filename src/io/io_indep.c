/*
 * Independent data access: explicit offsets (read_at, write_at), the
 * individual file pointer (read, write, seek, get_position), the shared
 * file pointer (read_shared, write_shared, seek_shared,
 * get_position_shared), their nonblocking forms, and get_byte_offset.
 * The nonblocking forms are checked and placed at the call (pointers move
 * then) and move their data in the IO thread (io_async.c); MPI_Wait and
 * MPI_Test hand out the status when it is done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "io/io_calls.h"

/* Reads and writes: each line one call in its int and _c forms
 * (io_calls.h). */
IO_AT_CALLS(read_at, , 0, 0)
IO_IAT_CALLS(iread_at, , 0, 0)
IO_PTR_CALLS(read, , 0, IO_INDIV, 0)
IO_IPTR_CALLS(iread, , 0, IO_INDIV, 0)
IO_PTR_CALLS(read_shared, , 0, IO_SHARED, 0)
IO_IPTR_CALLS(iread_shared, , 0, IO_SHARED, 0)
IO_AT_CALLS(write_at, const, 1, 0)
IO_IAT_CALLS(iwrite_at, const, 1, 0)
IO_PTR_CALLS(write, const, 1, IO_INDIV, 0)
IO_IPTR_CALLS(iwrite, const, 1, IO_INDIV, 0)
IO_PTR_CALLS(write_shared, const, 1, IO_SHARED, 0)
IO_IPTR_CALLS(iwrite_shared, const, 1, IO_SHARED, 0)

/* ---- file pointers ------------------------------------------------------- */

/* The etype at which the view reaches the end of the file. */
static int end_etype(MPI_File fh, const char *fn, MPI_Offset *end_p)
{
    struct stat st;
    MPI_Offset b;

    if (fstat(fh->fd, &st) != 0) {
        int err = errno;
        return io_error(fh, io_errno_class(err), fn, "%s: %s", fh->path,
                        strerror(err));
    }
    b = io_view_stream_before(&fh->view, (MPI_Offset)st.st_size);
    *end_p = (b + fh->view.esize - 1) / fh->view.esize;
    return MPI_SUCCESS;
}

/* The new position (etypes) for offset and whence from cur. */
static int seek_to(MPI_File fh, const char *fn, MPI_Offset cur,
                   MPI_Offset offset, int whence, MPI_Offset *to_p)
{
    MPI_Offset base = 0, to = 0, bytes;
    int rc;

    switch (whence) {
    case MPI_SEEK_SET:
        base = 0;
        break;
    case MPI_SEEK_CUR:
        base = cur;
        break;
    case MPI_SEEK_END:
        if ((rc = end_etype(fh, fn, &base)) != MPI_SUCCESS)
            return rc;
        break;
    default:
        return io_error(fh, MPI_ERR_ARG, fn,
                        "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or "
                        "MPI_SEEK_END",
                        whence);
    }
    if (__builtin_add_overflow(base, offset, &to) || to < 0 ||
        __builtin_mul_overflow(to, fh->view.esize, &bytes))
        return io_error(fh, MPI_ERR_ARG, fn,
                        "offset %lld from %lld is outside the view", offset,
                        base);
    *to_p = to;
    return MPI_SUCCESS;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek";
    MPI_Offset to = 0;
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        return io_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "%s was opened MPI_MODE_SEQUENTIAL", fh->path);
    if ((rc = seek_to(fh, fn, fh->pos / fh->view.esize, offset, whence, &to)) !=
        MPI_SUCCESS)
        return rc;
    fh->pos = to * fh->view.esize;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (offset == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "offset is NULL");
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        return io_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "%s was opened MPI_MODE_SEQUENTIAL", fh->path);
    *offset = fh->pos / fh->view.esize;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_position)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek_shared";
    int rc, rank, err = 0, cls = MPI_SUCCESS;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(fh->comm, &rank);
    /* Every rank is done with the pointer before rank 0 moves it; the
     * broadcast of the outcome ends the call everywhere. */
    if ((rc = PMPI_Barrier(fh->comm)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (rank == 0) {
        MPI_Offset cur = 0, to = 0;
        cls = io_shared_fetch_add(fh, 0, &cur, &err);
        if (cls == MPI_SUCCESS) {
            cls = seek_to(fh, fn, cur / fh->view.esize, offset, whence, &to);
            if (cls == MPI_SUCCESS)
                cls = io_shared_set(fh, to * fh->view.esize, &err);
        }
    }
    if ((rc = PMPI_Bcast(&cls, 1, MPI_INT, 0, fh->comm)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (cls != MPI_SUCCESS)
        return io_error(fh, cls, fn, "%s: moving the shared pointer: %s",
                        fh->path,
                        err         ? strerror(err)
                        : rank == 0 ? "no side file, or a bad offset"
                                    : "rank 0 failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_seek_shared)

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    const char *fn = "MPI_File_get_position_shared";
    MPI_Offset cur = 0;
    int rc, err = 0;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (offset == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "offset is NULL");
    if ((rc = io_shared_fetch_add(fh, 0, &cur, &err)) != MPI_SUCCESS)
        return io_error(
            fh, rc, fn, "the shared file pointer of %s: %s", fh->path,
            err ? strerror(err) : "its side file could not be made at open");
    *offset = cur / fh->view.esize;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_position_shared)

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *fn = "MPI_File_get_byte_offset";
    MPI_Offset pos;
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (disp == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "disp is NULL");
    if (offset < 0 || __builtin_mul_overflow(offset, fh->view.esize, &pos))
        return io_error(fh, MPI_ERR_ARG, fn, "offset %lld is outside the view",
                        offset);
    *disp = io_view_offset(&fh->view, pos);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_byte_offset)
