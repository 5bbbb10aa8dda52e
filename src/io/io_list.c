/*
 * List IO: a read or write of (buf, count, datatype) through a view is
 * cut into runs of adjacent file blocks; each run is one preadv/pwritev
 * over the memory blocks that go there (IOV_MAX blocks at a time), taken
 * straight from the datatype engine's cursor.  Nothing is packed into a
 * temporary buffer when memory blocks are large: a contiguous buffer is one
 * block, a contiguous file region one system call, whatever the memory
 * layout.  Tiny memory blocks are staged (IO_SMALL_BLOCK below).
 *
 * A file whose view has many small blocks costs one system call per run;
 * data sieving (one large read, scattered in memory) is not done yet
 * (docs/IO.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* All of iov[0..n) at off (a read may stop at the end of the file: *eof).
 * *moved += bytes moved; 0 or an errno. */
static int rw_full(int fd, int wr, struct iovec *iov, int n, MPI_Offset off,
                   MPI_Count *moved, int *eof)
{
    while (n > 0) {
        ssize_t r = wr ? pwritev(fd, iov, n, (off_t)off)
                       : preadv(fd, iov, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (r == 0) {
            if (wr)
                return EIO;
            *eof = 1;
            return 0;
        }
        *moved += r;
        off += r;
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 0;
}

/*
 * Memory blocks smaller than this on average go through a staging buffer
 * (gathered, one pwrite; or one pread, scattered) instead of one iovec
 * each: the kernel's cost per iovec made 1000 blocks of 65 bytes 5 times
 * slower than packing first, while 1000 blocks of 4 KiB were 1.5 times
 * faster as list IO (bench/io/run, docs/IO.md).  Only a noncontiguous
 * memory side is ever staged.
 */
#define IO_SMALL_BLOCK 1024

/* Staged transfer of iov[0..n) (got bytes, < IOV_MAX * IO_SMALL_BLOCK). */
static int staged(int fd, int wr, const struct iovec *iov, int n, MPI_Count got,
                  MPI_Offset off, char *stage, MPI_Count *moved, int *eof)
{
    MPI_Count done = 0;

    if (wr) {
        char *p = stage;
        for (int i = 0; i < n; i++) {
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
            p += iov[i].iov_len;
        }
    }
    while (done < got) {
        ssize_t r = wr ? pwrite(fd, stage + done, (size_t)(got - done),
                                (off_t)(off + done))
                       : pread(fd, stage + done, (size_t)(got - done),
                               (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (r == 0) {
            if (wr)
                return EIO;
            *eof = 1;
            break;
        }
        done += r;
    }
    if (!wr) {
        MPI_Count left = done;
        const char *p = stage;
        for (int i = 0; i < n && left > 0; i++) {
            size_t k =
                iov[i].iov_len < (size_t)left ? iov[i].iov_len : (size_t)left;
            memcpy(iov[i].iov_base, p, k);
            p += k;
            left -= (MPI_Count)k;
        }
    }
    *moved += done;
    return 0;
}

/* One run of len bytes at file offset off, from the cursor's memory. */
static int run(int fd, int wr, mpi_dt_cursor_t *c, MPI_Offset off,
               MPI_Count len, MPI_Count *moved, int *eof, char **stage_p)
{
    struct iovec iov[IOV_MAX];

    while (len > 0 && !*eof) {
        int niov = 0, rc;
        MPI_Count before = *moved;
        MPI_Count got = mpi_dt_cursor_iov(c, iov, IOV_MAX, len, &niov);
        if (got <= 0)
            return EIO; /* the memory side ended before the file side */
        if (niov > 1 && got / niov < IO_SMALL_BLOCK) {
            if (*stage_p == NULL &&
                (*stage_p = malloc((size_t)IOV_MAX * IO_SMALL_BLOCK)) == NULL)
                return ENOMEM;
            rc = staged(fd, wr, iov, niov, got, off, *stage_p, moved, eof);
        } else {
            rc = rw_full(fd, wr, iov, niov, off, moved, eof);
        }
        if (rc != 0)
            return rc;
        if (*moved - before < got)
            return 0; /* end of file */
        off += got;
        len -= got;
    }
    return 0;
}

/*
 * Data sieving for reads (Thakur, Gropp and Lusk's, as in ROMIO): a view
 * with many small blocks is read in windows of up to IO_SIEVE_BUF bytes of
 * the file, one pread each, and the view's blocks in a window are copied
 * out of it; the holes are read and dropped.  Used for independent reads
 * through a view with holes whose blocks average under IO_SIEVE_SMALL
 * bytes (romio_ds_read=automatic, the default), always with enable, never
 * with disable.
 */
#define IO_SIEVE_BUF (4 << 20)
#define IO_SIEVE_SMALL (64 << 10)

static int sieve_read(MPI_File fh, MPI_Offset pos, mpi_dt_cursor_t *c,
                      MPI_Count total, MPI_Count *moved)
{
    io_walk_t w, w0;
    char *ds = NULL;
    MPI_Count left = total;
    int rc = 0;

    io_walk_init(&w, &fh->view, pos);
    while (left > 0) {
        MPI_Offset start, off, end;
        MPI_Count len, wbytes, l2, got = 0, rem;

        w0 = w;
        len =
            io_walk_next(&w, left < IO_SIEVE_BUF ? left : IO_SIEVE_BUF, &start);
        if (len == 0)
            break; /* a view without data */
        end = start + len;
        wbytes = len;
        l2 = left - len;
        while (l2 > 0) { /* whole blocks while the window holds them */
            io_walk_t w1 = w;
            len = io_walk_next(&w1, l2, &off);
            if (len == 0 || off + len - start > IO_SIEVE_BUF)
                break;
            w = w1;
            end = off + len;
            wbytes += len;
            l2 -= len;
        }
        if (ds == NULL && (ds = malloc(IO_SIEVE_BUF)) == NULL) {
            rc = ENOMEM;
            break;
        }
        while (got < end - start) {
            ssize_t r = pread(fh->fd, ds + got, (size_t)(end - start - got),
                              (off_t)(start + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                rc = errno;
                break;
            }
            if (r == 0)
                break; /* end of file */
            got += r;
        }
        if (rc != 0)
            break;
        /* The window's blocks, in stream order, out of the buffer. */
        for (rem = wbytes; rem > 0;) {
            MPI_Count take;
            len = io_walk_next(&w0, rem, &off);
            take = start + got - off;
            if (take <= 0)
                goto out; /* end of file */
            if (take > len)
                take = len;
            mpi_dt_cursor_unpack(c, ds + (off - start), take);
            *moved += take;
            if (take < len)
                goto out;
            rem -= len;
        }
        left -= wbytes;
    }
out:
    free(ds);
    return rc;
}

int io_list_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf, MPI_Count count,
               MPI_Datatype dt, MPI_Count *done_p, int *err_p)
{
    mpi_dt_cursor_t c;
    io_walk_t w;
    MPI_Count total, left, moved = 0, run_len = 0;
    MPI_Offset run_off = 0;
    int eof = 0, rc = 0;
    char *stage = NULL;

    *done_p = 0;
    *err_p = 0;
    if (__builtin_mul_overflow(count, dt->size, &total) || total < 0) {
        *err_p = EOVERFLOW;
        return MPI_ERR_COUNT;
    }
    if (total == 0)
        return MPI_SUCCESS;
    mpi_dt_cursor_init(&c, dt, count, buf, 0);
    if (!wr && !fh->view.dense && fh->view.nsegs > 0 &&
        (fh->ds_read == 1 ||
         (fh->ds_read == 2 &&
          fh->view.fsize / fh->view.nsegs < IO_SIEVE_SMALL))) {
        rc = sieve_read(fh, pos, &c, total, &moved);
        *done_p = moved;
        *err_p = rc;
        return rc != 0 ? io_errno_class(rc) : MPI_SUCCESS;
    }
    io_walk_init(&w, &fh->view, pos);
    left = total;
    while (left > 0 && !eof) {
        MPI_Offset off;
        MPI_Count len = io_walk_next(&w, left, &off);
        if (len == 0)
            break; /* a view without data */
        left -= len;
        if (run_len > 0 && off == run_off + run_len) {
            run_len += len;
            continue;
        }
        if (run_len > 0 && (rc = run(fh->fd, wr, &c, run_off, run_len, &moved,
                                     &eof, &stage)) != 0)
            break;
        run_off = off;
        run_len = len;
    }
    if (rc == 0 && !eof && run_len > 0)
        rc = run(fh->fd, wr, &c, run_off, run_len, &moved, &eof, &stage);
    free(stage);
    *done_p = moved;
    if (rc != 0) {
        *err_p = rc;
        return io_errno_class(rc);
    }
    return MPI_SUCCESS;
}
