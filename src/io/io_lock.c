/*
 * Byte-range locks with fcntl (POSIX record locks): they work across
 * hosts on file systems that support them (local ones, NFS with lockd,
 * Lustre and GPFS with locking on).  Atomic mode holds one around each
 * access (exclusive for writes, shared for reads), the shared file pointer
 * one around each update of its counter.
 *
 * POSIX locks belong to the process and a file: closing any descriptor of
 * that file in the process drops them all.  A lock is only held for the
 * length of one call here, and a handle's descriptors are closed only by
 * MPI_File_close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "io/io.h"

static int setlk(int fd, short type, MPI_Offset lo, MPI_Offset hi)
{
    struct flock fl = {0};

    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)lo;
    fl.l_len = (off_t)(hi - lo); /* 0 would mean "to the end, forever" */
    if (hi <= lo)
        return 0;
    while (fcntl(fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

int io_lock(int fd, int wr, MPI_Offset lo, MPI_Offset hi)
{
    return setlk(fd, wr ? F_WRLCK : F_RDLCK, lo, hi);
}

int io_unlock(int fd, MPI_Offset lo, MPI_Offset hi)
{
    return setlk(fd, F_UNLCK, lo, hi);
}
