/*
 * List IO: a read or write of (buf, count, datatype) through a view is
 * cut into runs of adjacent file blocks; each run is one preadv/pwritev
 * over the memory blocks that go there (IOV_MAX blocks at a time), taken
 * straight from the datatype engine's cursor.  Nothing is packed into a
 * temporary buffer when memory blocks are large: a contiguous buffer is one
 * block, a contiguous file region one system call, whatever the memory
 * layout.  Tiny memory blocks are staged (IO_SMALL_BLOCK below).
 *
 * A view with many small blocks is sieved instead (below): one system
 * call per window of the file.
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

int io_rw_full(int fd, int wr, struct iovec *iov, int n, MPI_Offset off,
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

/* n bytes at off into (from) buf; a read stops at the end of the file:
 * *got bytes came.  0 or an errno. */
static int whole(int fd, int wr, char *buf, MPI_Count n, MPI_Offset off,
                 MPI_Count *got)
{
    struct iovec v = {buf, (size_t)n};
    int eof = 0;

    *got = 0;
    return io_rw_full(fd, wr, &v, 1, off, got, &eof);
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
/* shoal_io_uring=automatic: io_uring for file-noncontiguous list IO whose
 * view's blocks average at least this many bytes (writes, reads): below,
 * one pwritev/preadv per run measured faster (docs/IO.md, "List IO
 * through io_uring"; writes of 4 KiB blocks measured again on 2026-11-28,
 * slower through io_uring in 13 of 16 comparisons). */
#define IO_UR_MIN_WRITE 16384
#define IO_UR_MIN_READ 16384

/* Staged transfer of the cursor's next got bytes (at most
 * IOV_MAX * IO_SMALL_BLOCK): packed by the datatype engine into stage and
 * written with one pwrite, or read with one pread and unpacked. */
static int staged(int fd, int wr, mpi_dt_cursor_t *c, MPI_Count got,
                  MPI_Offset off, char *stage, MPI_Count *moved, int *eof)
{
    MPI_Count done = 0;
    int rc;

    if (wr && mpi_dt_cursor_pack(c, stage, got) < got)
        return EIO; /* the memory side ended before the file side */
    if ((rc = whole(fd, wr, stage, got, off, &done)) != 0)
        return rc;
    if (done < got)
        *eof = 1;
    if (!wr)
        mpi_dt_cursor_unpack(c, stage, done);
    *moved += done;
    return 0;
}

/* One run of len bytes at file offset off, from the cursor's memory.
 * A memory type whose blocks average under IO_SMALL_BLOCK is staged
 * without listing its blocks first (listing 1000 of them cost as much as
 * copying them); otherwise the blocks are listed, and staged only if
 * those listed turn out small. */
static int run(int fd, int wr, mpi_dt_cursor_t *c, MPI_Offset off,
               MPI_Count len, MPI_Count *moved, int *eof, char **stage_p)
{
    struct iovec iov[IOV_MAX];
    const MPI_Count cap = (MPI_Count)IOV_MAX * IO_SMALL_BLOCK;
    MPI_Datatype dt = c->dt;
    int small = !mpi_dt_contig(dt) && dt->nsegs > 1 &&
                dt->size / dt->nsegs < IO_SMALL_BLOCK;

    while (len > 0 && !*eof) {
        int niov = 0, rc;
        MPI_Count before = *moved, got;
        mpi_dt_cursor_t c0 = *c;
        if (small) {
            got = len < cap ? len : cap;
        } else {
            got = mpi_dt_cursor_iov(c, iov, IOV_MAX, len, &niov);
            if (got <= 0)
                return EIO; /* the memory side ended before the file side */
        }
        if (small || (niov > 1 && got / niov < IO_SMALL_BLOCK)) {
            if (*stage_p == NULL && (*stage_p = malloc((size_t)cap)) == NULL)
                return ENOMEM;
            *c = c0; /* the datatype engine copies */
            rc = staged(fd, wr, c, got, off, *stage_p, moved, eof);
        } else {
            rc = io_rw_full(fd, wr, iov, niov, off, moved, eof);
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
 * Data sieving (Thakur, Gropp and Lusk's, as in ROMIO): a view with many
 * small blocks is accessed in windows of up to IO_SIEVE_BUF bytes of the
 * file, one pread (pwrite) each.
 *
 * Reads: the window is read, the view's blocks in it copied out, the
 * holes dropped.  romio_ds_read: views with holes whose blocks average
 * under IO_SIEVE_SMALL bytes (automatic, the default), always (enable),
 * never (disable).  Every rank reads the whole window, the other ranks'
 * bytes too, so with 4 ranks interleaved a window carries 4 times the
 * data: measured (docs/IO.md), sieving won below 1 KiB blocks (7.6x at
 * 64 bytes, 1.1-1.3x at 512) and lost from 1 KiB on (2.5x slower with
 * mpi-tile-io's 32 KiB rows, up to 10x at 4 KiB).
 *
 * Writes: under an exclusive fcntl lock over the window, the window is
 * read (only when it has holes inside the file), the view's blocks merged
 * into it, and it is written back with one pwrite.  While some rank's
 * view of the file sieves writes (agreed at set_view and set_info), every
 * other write holds a shared lock over its range (io_list_rw, the
 * aggregators of io_twophase.c), so a window never writes back stale
 * bytes over a concurrent writer's.  romio_ds_write:
 * automatic (the default) sieves views whose blocks average under
 * IO_SIEVE_WSMALL bytes (measured: docs/IO.md); enable always; disable
 * never, and then no write takes a lock either.  In atomic mode the
 * access already holds an exclusive lock over its whole range.
 */
#define IO_SIEVE_BUF (4 << 20)
#define IO_SIEVE_SMALL 1024
#define IO_SIEVE_WSMALL 1024

int io_sieve_on(MPI_File fh, int wr)
{
    int mode = wr ? fh->ds_write : fh->ds_read;
    MPI_Count small = wr ? IO_SIEVE_WSMALL : IO_SIEVE_SMALL;

    if (wr && (fh->amode & MPI_MODE_WRONLY))
        return 0; /* the holes cannot be read */
    if (wr && mode == 2 && fh->nolocks_any)
        return 0; /* its locks would not keep out other hosts' writes */
    return !fh->view.dense && fh->view.nsegs > 0 &&
           (mode == 1 || (mode == 2 && fh->view.fsize / fh->view.nsegs < small));
}

int io_ds_agree(MPI_File fh)
{
    /* Collective buffering's automatic choice on a network file system
     * (io_cb_decide) wants views with holes whose blocks average under
     * IO_CB_NETFS_SMALL bytes: for writes any such view, for reads those
     * not sieved (measured: docs/IO.md). */
    int small = !fh->view.dense && fh->view.nsegs > 0 &&
                fh->view.fsize / fh->view.nsegs < IO_CB_NETFS_SMALL;
    int mine[4] = {io_sieve_on(fh, 1), fh->view.overlap, small,
                   small && !io_sieve_on(fh, 0)},
        any[4];
    int rc = PMPI_Allreduce(mine, any, 4, MPI_INT, MPI_MAX, fh->comm);

    if (rc == MPI_SUCCESS) {
        fh->ds_any = any[0];
        fh->ov_any = any[1];
        fh->cbw_small_any = any[2];
        fh->cbr_small_any = any[3];
        io_cb_decide(fh);
    }
    return rc;
}

/*
 * The next window from w on: whole blocks of the view (the first possibly
 * cut to the window) while they fit IO_SIEVE_BUF bytes of file.  Returns
 * the stream bytes in it (0: no more data), [*start, *end) its file range;
 * w moves past it.
 */
static MPI_Count window(io_walk_t *w, MPI_Count left, MPI_Offset *start,
                        MPI_Offset *end)
{
    MPI_Offset off;
    MPI_Count len, wbytes, l2;

    len = io_walk_next(w, left < IO_SIEVE_BUF ? left : IO_SIEVE_BUF, start);
    if (len == 0)
        return 0;
    *end = *start + len;
    wbytes = len;
    l2 = left - len;
    while (l2 > 0) { /* whole blocks while the window holds them */
        io_walk_t w1 = *w;
        len = io_walk_next(&w1, l2, &off);
        /* (A view of a file only read may go back: blocks before the
         * window's start end it, and its end is the furthest one.) */
        if (len == 0 || off < *start ||
            (off + len > *end ? off + len : *end) - *start > IO_SIEVE_BUF)
            break;
        *w = w1;
        if (off + len > *end)
            *end = off + len;
        wbytes += len;
        l2 -= len;
    }
    return wbytes;
}

static int sieve(MPI_File fh, int wr, MPI_Offset pos, mpi_dt_cursor_t *c,
                 MPI_Count total, MPI_Count *moved)
{
    io_walk_t w, w0;
    char *ds = NULL;
    MPI_Count left = total;
    int rc = 0, lock = wr && !fh->atomic;

    io_walk_init(&w, &fh->view, pos);
    while (left > 0) {
        MPI_Offset start, end, off;
        MPI_Count wbytes, got = 0, len, rem, take;

        w0 = w;
        if ((wbytes = window(&w, left, &start, &end)) == 0)
            break; /* a view without data */
        if (ds == NULL && (ds = malloc(IO_SIEVE_BUF)) == NULL) {
            rc = ENOMEM;
            break;
        }
        if (!wr) {
            if ((rc = whole(fh->fd, 0, ds, end - start, start, &got)) != 0)
                break;
            /* The window's blocks, in stream order, out of the buffer. */
            for (rem = wbytes; rem > 0; rem -= len) {
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
            }
            left -= wbytes;
            continue;
        }
        if (lock && (rc = io_lock(fh->fd, 1, start, end)) != 0)
            break;
        if (wbytes < end - start) {
            /* Holes: what the file holds there goes back unchanged (zeros
             * past its end, which reads there would return anyway). */
            rc = whole(fh->fd, 0, ds, end - start, start, &got);
            if (rc == 0 && got < end - start)
                memset(ds + got, 0, (size_t)(end - start - got));
        }
        for (rem = wbytes; rc == 0 && rem > 0; rem -= len) {
            len = io_walk_next(&w0, rem, &off);
            mpi_dt_cursor_pack(c, ds + (off - start), len);
        }
        if (rc == 0)
            rc = whole(fh->fd, 1, ds, end - start, start, &got);
        if (lock)
            io_unlock(fh->fd, start, end);
        if (rc != 0)
            break;
        *moved += wbytes;
        left -= wbytes;
    }
out:
    free(ds);
    return rc;
}

/*
 * The runs of one access go to the kernel one preadv/pwritev each, or,
 * with io_uring (shoal_io_uring, io_uring.c), gathered into batches of up
 * to IO_UR_BATCH runs, one submission each.
 */

typedef struct run_batch {
    io_run_t runs[IO_UR_BATCH];
    int n;
    int uring; /* gather the runs for io_uring */
} run_batch_t;

/* io_uring for this access: asked for (enable) or by default
 * (automatic: blocks large enough), memory blocks that would not be
 * staged, and a ring. */
static int uring_on(MPI_File fh, int wr, MPI_Datatype dt)
{
    const io_view_t *v = &fh->view;

    if (fh->uring == 0)
        return 0;
    if (fh->uring == 2 &&
        (v->nsegs < 1 ||
         v->fsize / v->nsegs < (wr ? IO_UR_MIN_WRITE : IO_UR_MIN_READ)))
        return 0;
    if (!mpi_dt_contig(dt) && dt->nsegs > 1 &&
        dt->size / dt->nsegs < IO_SMALL_BLOCK)
        return 0;
    return io_ur_available();
}

static int flush_runs(MPI_File fh, int wr, mpi_dt_cursor_t *c,
                      run_batch_t *b, MPI_Count *moved, int *eof,
                      char **stage_p)
{
    int rc = ENOSYS, n = b->n;

    b->n = 0;
    if (n > 1)
        rc = io_ur_runs(fh->fd, wr, c, b->runs, n, moved, eof);
    if (rc != ENOSYS)
        return rc;
    for (int i = 0; i < n && !*eof; i++)
        if ((rc = run(fh->fd, wr, c, b->runs[i].off, b->runs[i].len, moved,
                      eof, stage_p)) != 0)
            return rc;
    return 0;
}

static int add_run(MPI_File fh, int wr, mpi_dt_cursor_t *c, run_batch_t *b,
                   MPI_Offset off, MPI_Count len, MPI_Count *moved, int *eof,
                   char **stage_p)
{
    if (!b->uring)
        return run(fh->fd, wr, c, off, len, moved, eof, stage_p);
    b->runs[b->n].off = off;
    b->runs[b->n].len = len;
    if (++b->n == IO_UR_BATCH)
        return flush_runs(fh, wr, c, b, moved, eof, stage_p);
    return 0;
}

int io_list_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf, MPI_Count count,
               MPI_Datatype dt, MPI_Count *done_p, int *err_p)
{
    mpi_dt_cursor_t c;
    io_walk_t w;
    MPI_Count total, left, moved = 0, run_len = 0;
    MPI_Offset run_off = 0, lock_lo = 0, lock_hi = 0;
    int eof = 0, rc = 0, locked = 0;
    char *stage = NULL;
    run_batch_t b;

    *done_p = 0;
    *err_p = 0;
    if (__builtin_mul_overflow(count, dt->size, &total) || total < 0) {
        *err_p = EOVERFLOW;
        return MPI_ERR_COUNT;
    }
    if (total == 0)
        return MPI_SUCCESS;
    mpi_dt_cursor_init(&c, dt, count, buf, 0);
    if (io_sieve_on(fh, wr)) {
        rc = sieve(fh, wr, pos, &c, total, &moved);
        *done_p = moved;
        *err_p = rc;
        return rc != 0 ? io_errno_class(rc) : MPI_SUCCESS;
    }
    if (wr && io_ds_guard(fh)) {
        /* Sieving writers may be about: hold a shared lock over the range
         * (they take exclusive ones over their windows). */
        io_view_span(&fh->view, pos, total, &lock_lo, &lock_hi);
        if ((rc = io_lock(fh->fd, 0, lock_lo, lock_hi)) != 0) {
            *err_p = rc;
            return io_errno_class(rc);
        }
        locked = 1;
    }
    b.n = 0;
    b.uring = uring_on(fh, wr, dt);
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
        if (run_len > 0 && (rc = add_run(fh, wr, &c, &b, run_off, run_len,
                                         &moved, &eof, &stage)) != 0)
            break;
        run_off = off;
        run_len = len;
    }
    if (rc == 0 && !eof && run_len > 0)
        rc = add_run(fh, wr, &c, &b, run_off, run_len, &moved, &eof, &stage);
    if (rc == 0 && !eof)
        rc = flush_runs(fh, wr, &c, &b, &moved, &eof, &stage);
    if (locked)
        io_unlock(fh->fd, lock_lo, lock_hi);
    free(stage);
    *done_p = moved;
    if (rc != 0) {
        *err_p = rc;
        return io_errno_class(rc);
    }
    return MPI_SUCCESS;
}
