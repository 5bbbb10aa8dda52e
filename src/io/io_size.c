/*
 * The file's size and its state on storage: get_size, set_size,
 * preallocate, sync.  The collective ones agree on their argument, then
 * rank 0 changes the file once and tells everyone how it went.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    const char *fn = "MPI_File_get_size";
    struct stat st;
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (size == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "size is NULL");
    if (fstat(fh->fd, &st) != 0) {
        int err = errno;
        return io_error(fh, io_errno_class(err), fn, "%s: %s", fh->path,
                        strerror(err));
    }
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_size)

/* set_size (grow_only 0) and preallocate (1). */
static int resize(MPI_File fh, MPI_Offset size, int grow_only, const char *fn)
{
    long long v[3], all[3];
    int rc, rank, lc = MPI_SUCCESS, err = 0;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (size < 0)
        lc = MPI_ERR_ARG;
    else if (fh->amode & MPI_MODE_RDONLY)
        lc = MPI_ERR_READ_ONLY;
    else if (fh->amode & MPI_MODE_SEQUENTIAL)
        lc = MPI_ERR_UNSUPPORTED_OPERATION;
    else if (fh->split != 0)
        lc = MPI_ERR_OTHER;
    v[0] = lc;
    v[1] = size;
    v[2] = -size;
    if ((rc = PMPI_Allreduce(v, all, 3, MPI_LONG_LONG, MPI_MAX, fh->comm)) !=
        MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (lc != MPI_SUCCESS)
        return io_error(
            fh, lc, fn, "%s",
            lc == MPI_ERR_ARG         ? "size is negative"
            : lc == MPI_ERR_READ_ONLY ? "the file was opened MPI_MODE_RDONLY"
            : lc == MPI_ERR_OTHER     ? "a split collective is in progress"
                                  : "the file was opened MPI_MODE_SEQUENTIAL");
    if (all[0] != MPI_SUCCESS)
        return io_error(fh, (int)all[0], fn,
                        "another rank's arguments were invalid");
    if (all[1] != -all[2])
        return io_error(fh, MPI_ERR_NOT_SAME, fn,
                        "size differs between the ranks");
    PMPI_Comm_rank(fh->comm, &rank);
    if (rank == 0) {
        if (grow_only) {
            struct stat st;
            if (fstat(fh->fd, &st) != 0)
                err = errno;
            else if (size > (MPI_Offset)st.st_size)
                err = posix_fallocate(fh->fd, 0, (off_t)size);
        } else if (ftruncate(fh->fd, (off_t)size) != 0) {
            err = errno;
        }
        if (err == 0)
            fh->dirty = 1;
    }
    lc = err ? io_errno_class(err) : MPI_SUCCESS;
    if ((rc = PMPI_Bcast(&lc, 1, MPI_INT, 0, fh->comm)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (lc != MPI_SUCCESS)
        return io_error(fh, lc, fn, "%s: %s", fh->path,
                        err ? strerror(err) : "rank 0 failed");
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return resize(fh, size, 0, "MPI_File_set_size");
}
SHOAL_MPI_WEAK(File_set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return resize(fh, size, 1, "MPI_File_preallocate");
}
SHOAL_MPI_WEAK(File_preallocate)

int PMPI_File_sync(MPI_File fh)
{
    const char *fn = "MPI_File_sync";
    int rc, err = 0, lc, all;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    /* Each rank's writes reach storage; the agreement on the outcome is
     * the barrier that makes them visible to the others' later reads. */
    if (fsync(fh->fd) != 0 && errno != EINVAL)
        err = errno;
    if (err == 0)
        fh->dirty = 0;
    lc = err ? io_errno_class(err) : MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(&lc, &all, 1, MPI_INT, MPI_MAX, fh->comm)) !=
        MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (lc != MPI_SUCCESS)
        return io_error(fh, lc, fn, "%s: %s", fh->path, strerror(err));
    if (all != MPI_SUCCESS)
        return io_error(fh, all, fn, "another rank could not sync %s",
                        fh->path);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_sync)
