/*
 * The shared file pointer: an 8-byte counter (stream bytes, little-endian)
 * in a hidden side file next to the data file, read and advanced under an
 * fcntl lock.  Every rank reaches it through the file system, so it works
 * across hosts wherever the data file itself is shared and POSIX locks
 * work, and no rank has to be in an MPI call for another rank's
 * MPI_File_read_shared to go on.
 *
 * The side file is `.<name>.shoal-shfp-<random>` in the data file's
 * directory, made by rank 0 at open (a fresh random part per open, so two
 * opens of one file never share a pointer) and removed by rank 0 as soon
 * as every rank has it open: the ranks keep it through their descriptors
 * (fcntl locks are on the file, not its name), and a job killed with
 * SIGKILL leaves no name behind.  When it cannot be made (a read-only
 * directory) or some rank cannot open it, the open still succeeds and the
 * shared-pointer calls fail with the reason.
 *
 * Ordered access (read_ordered, write_ordered) is collective: an exclusive
 * scan of the ranks' sizes gives each rank its place, and rank 0 advances
 * the counter once by the total (io_access.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"

static void put64(unsigned char *b, MPI_Offset v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((unsigned long long)v >> (8 * i));
}

static MPI_Offset get64(const unsigned char *b)
{
    unsigned long long v = 0;

    for (int i = 0; i < 8; i++)
        v |= (unsigned long long)b[i] << (8 * i);
    return (MPI_Offset)v;
}

/* The side file's name for data file path. */
static int side_name(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    unsigned long long r = 0;
    int len;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
        r = (unsigned long long)time(NULL) * 1000003u ^
            (unsigned long long)getpid();
    if (slash == NULL)
        len = snprintf(out, n, ".%s.shoal-shfp-%016llx", path, r);
    else
        len = snprintf(out, n, "%.*s/.%s.shoal-shfp-%016llx",
                       (int)(slash - path), path, slash + 1, r);
    return len > 0 && (size_t)len < n ? 0 : ENAMETOOLONG;
}

void io_shared_open(MPI_File fh, MPI_Offset init)
{
    struct {
        int cls;
        char name[PATH_MAX];
    } msg;
    int rank;

    memset(&msg, 0, sizeof(msg));
    PMPI_Comm_rank(fh->comm, &rank);
    if (rank == 0) {
        int err = side_name(fh->path, msg.name, sizeof(msg.name));
        int fd = -1;
        if (err == 0) {
            fd = open(msg.name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0)
                err = errno;
        }
        if (fd >= 0) {
            unsigned char b[8];
            put64(b, init);
            if (pwrite(fd, b, 8, 0) != 8) {
                err = errno ? errno : EIO;
                close(fd);
                unlink(msg.name);
                fd = -1;
            }
        }
        fh->shfd = fd;
        msg.cls = fd >= 0 ? MPI_SUCCESS : io_errno_class(err);
    }
    if (PMPI_Bcast(&msg, (int)sizeof(msg), MPI_BYTE, 0, fh->comm) !=
        MPI_SUCCESS)
        msg.cls = MPI_ERR_OTHER;
    int mine = msg.cls, all;
    if (rank != 0 && mine == MPI_SUCCESS) {
        fh->shfd = open(msg.name, O_RDWR | O_CLOEXEC);
        if (fh->shfd < 0)
            mine = io_errno_class(errno);
    }
    /* Every rank has it (or none keeps it); then its name can go. */
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, fh->comm) !=
        MPI_SUCCESS)
        all = MPI_ERR_OTHER;
    if (rank == 0 && msg.cls == MPI_SUCCESS)
        unlink(msg.name);
    if (all != MPI_SUCCESS && fh->shfd >= 0) {
        close(fh->shfd);
        fh->shfd = -1;
    }
    fh->sh_err = all;
}

void io_shared_close(MPI_File fh)
{
    if (fh->shfd >= 0)
        close(fh->shfd);
    fh->shfd = -1;
}

static int no_side_file(MPI_File fh, int *err_p)
{
    *err_p = 0;
    return fh->sh_err != MPI_SUCCESS ? fh->sh_err : MPI_ERR_INTERN;
}

int io_shared_fetch_add(MPI_File fh, MPI_Offset n, MPI_Offset *old_p,
                        int *err_p)
{
    unsigned char b[8];
    int err;

    if (fh->shfd < 0)
        return no_side_file(fh, err_p);
    if ((err = io_lock(fh->shfd, 1, 0, 8)) != 0) {
        *err_p = err;
        return io_errno_class(err);
    }
    if (pread(fh->shfd, b, 8, 0) != 8) {
        err = errno ? errno : EIO;
    } else {
        *old_p = get64(b);
        put64(b, *old_p + n);
        if (n != 0 && pwrite(fh->shfd, b, 8, 0) != 8)
            err = errno ? errno : EIO;
    }
    io_unlock(fh->shfd, 0, 8);
    *err_p = err;
    return err != 0 ? io_errno_class(err) : MPI_SUCCESS;
}

int io_shared_set(MPI_File fh, MPI_Offset v, int *err_p)
{
    unsigned char b[8];
    int err;

    if (fh->shfd < 0)
        return no_side_file(fh, err_p);
    if ((err = io_lock(fh->shfd, 1, 0, 8)) != 0) {
        *err_p = err;
        return io_errno_class(err);
    }
    put64(b, v);
    if (pwrite(fh->shfd, b, 8, 0) != 8)
        err = errno ? errno : EIO;
    io_unlock(fh->shfd, 0, 8);
    *err_p = err;
    return err != 0 ? io_errno_class(err) : MPI_SUCCESS;
}
