/*
 * Two-phase collective buffering (del Rosario, Bordawekar and Choudhary's
 * two-phase IO, as ROMIO made it common): in a collective read or write,
 * the ranks' file blocks are moved to a few aggregators, one per host by
 * default (`cb_nodes` sets how many: fewer, or more, the other ranks
 * joining in rank order; without it `striping_factor` does, one per
 * stripe), each owning one contiguous file domain of
 * the range all ranks touch (aligned to `striping_unit` when given).  An
 * aggregator then accesses its domain with list IO: many small
 * interleaved requests of many ranks become a few large runs.
 *
 * Phase one is an exchange: counts by MPI_Alltoall, block descriptors
 * (offset, length) and data by MPI_Alltoallv.  Because a view's
 * displacements never decrease (views that overlap themselves, allowed in
 * files only read, never come here: io_twophase_on), a rank's stream
 * bytes are in file order,
 * so the bytes it sends to one domain are one contiguous range of its
 * packed stream.  Phase two is the aggregator's IO: its blocks sorted by
 * offset, adjacent ones merged into runs, one preadv/pwritev per run
 * straight from (into) the receive buffer.  Reads send the data back the
 * same way.  The outcome (the first failing aggregator's class) is agreed
 * by everyone.
 *
 * Used by default (romio_cb_*=automatic, io_cb_decide) only on network
 * and cluster file systems, for views with holes and blocks under 8 KiB
 * (reads: not sieved), as measured (docs/IO.md: on one host it was slower
 * than each rank's own list IO in 30 of 37 cases; across namespace hosts
 * on sshfs 1.3-8x faster for such views, slower for others):
 * `romio_cb_write` and `romio_cb_read` `enable` or `disable` decide
 * otherwise; rank 0's hints decide for all,
 * so hints that differ between ranks cannot split a collective call.
 * A domain is handled in rounds of `cb_buffer_size` bytes of file (16 MiB
 * by default), one exchange and one IO pass each, so an aggregator holds
 * at most that much data at once (plus overlapping writes).  Blocking
 * calls double-buffer (shoal_cb_double_buffer, on by default, measured
 * in docs/IO.md): an aggregator's IO of round k runs in the IO thread
 * while the ranks exchange round k + 1, so it holds two rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"
#include "mpi/core/ft.h"
#include "mpi/p2p/p2p_engine.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

int io_twophase_setup(MPI_File fh)
{
    MPI_Comm node;
    int nrank, size, *flags, rc;

    PMPI_Comm_size(fh->comm, &size);
    if ((rc = PMPI_Comm_split_type(fh->comm, MPI_COMM_TYPE_SHARED, 0,
                                   MPI_INFO_NULL, &node)) != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(node, &nrank);
    PMPI_Comm_free(&node);
    flags = malloc((size_t)size * sizeof(int));
    fh->aggs = malloc((size_t)size * sizeof(int));
    if (flags == NULL || fh->aggs == NULL) {
        free(flags);
        free(fh->aggs);
        fh->aggs = NULL;
        return MPI_ERR_NO_MEM;
    }
    nrank = nrank == 0;
    if ((rc = PMPI_Allgather(&nrank, 1, MPI_INT, flags, 1, MPI_INT,
                             fh->comm)) != MPI_SUCCESS) {
        free(flags);
        free(fh->aggs);
        fh->aggs = NULL;
        return rc;
    }
    fh->naggs = 0;
    for (int r = 0; r < size; r++)
        if (flags[r])
            fh->aggs[fh->naggs++] = r;
    free(flags);
    return MPI_SUCCESS;
}

/* One file block: offset, length. */
typedef struct blk {
    long long off, len;
} blk_t;

/* A received block: where it is in the file and in the buffer. */
typedef struct piece {
    long long off, len, at;
} piece_t;

static int by_offset(const void *a, const void *b)
{
    const piece_t *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* This rank's file blocks for bytes stream bytes from pos (merged). */
static blk_t *my_blocks(MPI_File fh, MPI_Offset pos, MPI_Count bytes,
                        MPI_Count *n_p)
{
    io_walk_t w;
    blk_t *b = NULL;
    MPI_Count n = 0, cap = 0, left = bytes;

    io_walk_init(&w, &fh->view, pos);
    while (left > 0) {
        MPI_Offset off;
        MPI_Count len = io_walk_next(&w, left, &off);
        if (len == 0)
            break;
        left -= len;
        if (n > 0 && b[n - 1].off + b[n - 1].len == off) {
            b[n - 1].len += len;
            continue;
        }
        if (n == cap) {
            MPI_Count c = cap ? 2 * cap : 64;
            blk_t *t = realloc(b, (size_t)c * sizeof(*t));
            if (t == NULL) {
                free(b);
                return NULL;
            }
            b = t;
            cap = c;
        }
        b[n].off = off;
        b[n].len = len;
        n++;
    }
    *n_p = n;
    return b != NULL ? b : malloc(sizeof(*b));
}

/* One run of the file [off, end) from or to iov.  Sieving writers may be
 * about (io_list.c): a shared lock over the run, never held across
 * communication.  A read at the end of the file leaves the rest zero. */
static int run_io(int fd, int wr, struct iovec *iov, int niov,
                  long long off, long long end, int guard)
{
    MPI_Count moved = 0;
    int rc, eof = 0;

    if (guard && (rc = io_lock(fd, 0, off, end)) != 0)
        return rc;
    rc = io_rw_full(fd, wr, iov, niov, off, &moved, &eof);
    if (guard)
        io_unlock(fd, off, end);
    return rc;
}

/* The aggregator's IO over its pieces (sorted by offset) in buf. */
static int domain_io(int fd, int wr, piece_t *p, long long n, char *buf,
                     int guard)
{
    struct iovec iov[IOV_MAX];
    long long i = 0;

    while (i < n) {
        long long off = p[i].off, end = p[i].off;
        int niov = 0;
        /* A run: pieces that follow each other without gap or overlap. */
        while (i < n && p[i].off == end && niov < IOV_MAX) {
            iov[niov].iov_base = buf + p[i].at;
            iov[niov].iov_len = (size_t)p[i].len;
            end += p[i].len;
            niov++;
            i++;
        }
        int rc = run_io(fd, wr, iov, niov, off, end, guard);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A piece of my stream for one aggregator in one round. */
typedef struct spiece {
    long long off, len, at; /* file offset, length, stream offset */
    int dest, round;
} spiece_t;

/*
 * One round's buffers on an aggregator, and what the exchange of the data
 * needs of them.  With double buffering (shoal_cb_double_buffer) there
 * are two, used by alternate rounds: the IO of round k runs in the IO
 * thread while the ranks exchange round k + 1 (writes) or send round k - 1
 * back (reads); a slot is reused only once its IO is over.
 */
typedef struct tp_slot {
    blk_t *rdesc;
    piece_t *pieces;
    char *rbuf;
    long long cap_blk, cap_bytes, nrblk, rd;
    MPI_Count *sdc, *rdc; /* per rank: data bytes sent, received */
    MPI_Aint *sdd, *rdd;  /* and where in the stream, in rbuf */
    io_job_t *job;        /* the round's IO in the IO thread, or NULL */
    int fd, wr, guard, err;
} tp_slot_t;

/* The IO thread's part: a round's IO from (into) the slot's buffer. */
static void slot_io(void *arg)
{
    tp_slot_t *t = arg;

    t->err = domain_io(t->fd, t->wr, t->pieces, t->nrblk, t->rbuf, t->guard);
}

/* Wait for the slot's IO in the IO thread, if any; its errno into *err
 * (the first one kept). */
static void slot_wait(tp_slot_t *t, int *err)
{
    if (t->job == NULL)
        return;
    io_async_call_wait(t->job);
    io_async_call_free(t->job);
    t->job = NULL;
    if (t->err != 0 && *err == 0)
        *err = t->err;
}

int io_twophase_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf,
                   MPI_Count count, MPI_Datatype dt, MPI_Count *done_p,
                   int *err_p)
{
    int P, me, rc = MPI_SUCCESS, err = 0, lc, all, A;
    MPI_Count bytes = count * dt->size, nblk = 0, nsp = 0;
    blk_t *mine = NULL;
    long long range[2], grange[2], fd_size, gmin, sub, nrounds, fsize = -1;
    long long *scnt = NULL, *rcnt = NULL; /* per rank: blocks, bytes */
    int *sbc = NULL, *sbd = NULL, *rbc = NULL, *rbd = NULL, dbl;
    spiece_t *sp = NULL;
    blk_t *sdesc = NULL;
    char *stream = NULL;
    tp_slot_t slot[2];
    int *agg_of = NULL; /* aggregator index of each rank, or -1 */
    int *aggs = NULL;   /* rank of each aggregator */

    *done_p = 0;
    *err_p = 0;
    memset(slot, 0, sizeof(slot));
    PMPI_Comm_size(fh->comm, &P);
    PMPI_Comm_rank(fh->comm, &me);
    /* The aggregators: one per host; cb_nodes fewer, or more (then the
     * other ranks in rank order join, as ROMIO lets cb_nodes reach the
     * number of processes); without cb_nodes, one per stripe of
     * striping_factor (as ROMIO's Lustre driver picks its default). */
    A = fh->cb_nodes > 0     ? fh->cb_nodes
        : fh->cb_stripes > 0 ? fh->cb_stripes
                             : fh->naggs;
    if (A > P)
        A = P;
    aggs = malloc((size_t)P * sizeof(int));
    agg_of = malloc((size_t)P * sizeof(int));
    if (aggs == NULL || agg_of == NULL) {
        A = 0;
    } else {
        int n = 0;
        for (int r = 0; r < P; r++)
            agg_of[r] = -1;
        for (int a = 0; a < fh->naggs && n < A; a++) {
            agg_of[fh->aggs[a]] = n;
            aggs[n++] = fh->aggs[a];
        }
        for (int r = 0; r < P && n < A; r++)
            if (agg_of[r] < 0) {
                agg_of[r] = n;
                aggs[n++] = r;
            }
    }

    /* My blocks and my packed stream. */
    lc = MPI_SUCCESS;
    mine = my_blocks(fh, pos, bytes, &nblk);
    stream = malloc(bytes > 0 ? (size_t)bytes : 1);
    scnt = calloc((size_t)P, 2 * sizeof(long long));
    rcnt = calloc((size_t)P, 2 * sizeof(long long));
    sbc = malloc((size_t)P * sizeof(int));
    sbd = malloc((size_t)P * sizeof(int));
    rbc = malloc((size_t)P * sizeof(int));
    rbd = malloc((size_t)P * sizeof(int));
    for (int i = 0; i < 2; i++) {
        slot[i].sdc = malloc((size_t)P * sizeof(MPI_Count));
        slot[i].rdc = malloc((size_t)P * sizeof(MPI_Count));
        slot[i].sdd = malloc((size_t)P * sizeof(MPI_Aint));
        slot[i].rdd = malloc((size_t)P * sizeof(MPI_Aint));
        if (!(slot[i].sdc && slot[i].rdc && slot[i].sdd && slot[i].rdd))
            lc = MPI_ERR_NO_MEM;
    }
    if (mine == NULL || stream == NULL || scnt == NULL || rcnt == NULL ||
        A == 0 || !(sbc && sbd && rbc && rbd))
        lc = MPI_ERR_NO_MEM;
    if (lc == MPI_SUCCESS && wr && bytes > 0) {
        mpi_dt_cursor_t c;
        mpi_dt_cursor_init(&c, dt, count, buf, 0);
        mpi_dt_cursor_pack(&c, stream, bytes);
    }
    /* The range everyone touches, and agreement that all have memory. */
    range[0] = nblk > 0 && lc == MPI_SUCCESS ? -mine[0].off : LLONG_MIN;
    range[1] = nblk > 0 && lc == MPI_SUCCESS
                   ? mine[nblk - 1].off + mine[nblk - 1].len
                   : LLONG_MIN;
    {
        long long v[3] = {range[0], range[1], lc}, g[3];
        if ((rc = PMPI_Allreduce(v, g, 3, MPI_LONG_LONG, MPI_MAX, fh->comm)) !=
            MPI_SUCCESS)
            goto out;
        if (g[2] != MPI_SUCCESS) {
            rc = (int)g[2];
            goto out;
        }
        grange[0] = -g[0];
        grange[1] = g[1];
    }
    if (grange[1] == LLONG_MIN)
        goto out; /* nobody moves a byte */
    gmin = grange[0];
    fd_size = (grange[1] - gmin + A - 1) / A;
    if (fh->cb_align > 0) {
        /* Domain boundaries on multiples of the stripe. */
        long long a = fh->cb_align;
        fd_size = (fd_size + a - 1) / a * a;
        gmin = gmin / a * a;
        while (gmin + fd_size * A < grange[1])
            fd_size += a;
    }
    /* Each domain in rounds of at most cb_buffer_size bytes of file. */
    sub = fh->cb_bufsize > 0 && fh->cb_bufsize < fd_size ? fh->cb_bufsize
                                                         : fd_size;
    nrounds = (fd_size + sub - 1) / sub;

    /* Split my blocks at domain and round boundaries. */
    {
        MPI_Count cap = nblk + A + 8;
        long long at = 0;
        sp = malloc((size_t)cap * sizeof(*sp));
        if (sp == NULL)
            lc = MPI_ERR_NO_MEM;
        for (MPI_Count i = 0; i < nblk && lc == MPI_SUCCESS; i++) {
            long long off = mine[i].off, len = mine[i].len;
            while (len > 0) {
                long long d = (off - gmin) / fd_size, k, kend, take;
                if (d >= A)
                    d = A - 1;
                k = (off - gmin - d * fd_size) / sub;
                if (k >= nrounds)
                    k = nrounds - 1;
                kend = gmin + d * fd_size + (k + 1) * sub;
                take = (d == A - 1 && k == nrounds - 1) || off + len <= kend
                           ? len
                           : kend - off;
                if (nsp == cap) {
                    spiece_t *t;
                    cap *= 2;
                    t = realloc(sp, (size_t)cap * sizeof(*t));
                    if (t == NULL) {
                        lc = MPI_ERR_NO_MEM;
                        break;
                    }
                    sp = t;
                }
                sp[nsp].off = off;
                sp[nsp].len = take;
                sp[nsp].at = at;
                sp[nsp].dest = aggs[d];
                sp[nsp].round = (int)k;
                nsp++;
                at += take;
                off += take;
                len -= take;
            }
        }
        if (lc == MPI_SUCCESS && (sdesc = malloc((size_t)(nsp > 0 ? nsp : 1) *
                                                 sizeof(*sdesc))) == NULL)
            lc = MPI_ERR_NO_MEM;
    }
    if ((rc = PMPI_Allreduce(&lc, &all, 1, MPI_INT, MPI_MAX, fh->comm)) !=
        MPI_SUCCESS)
        goto out;
    if (all != MPI_SUCCESS) {
        rc = all;
        goto out;
    }

    /* Rounds.  Double buffering (on unless shoal_cb_double_buffer is
     * disable: measured faster, docs/IO.md) needs two rounds or more; the
     * IO then runs in the IO thread, round k's while the ranks exchange
     * the next round's (writes) or send the last round's back (reads),
     * in order with the process's other queued IO. */
    dbl = fh->cb_double != 0 && nrounds > 1;
    for (long long k = 0; k <= nrounds; k++) {
        tp_slot_t *t = &slot[k & 1], *pt = &slot[(k + 1) & 1];
        long long rb = 0, rd = 0, nrblk, nd = 0;
        /* The slot's last IO (round k - 2's write) is over before the
         * slot is filled again. */
        slot_wait(t, &err);
        if (k == nrounds)
            goto last;
        /* This round's pieces, grouped by aggregator (file order is
         * aggregator order), as descriptors; data stay in the stream. */
        for (int r = 0; r < P; r++) {
            scnt[2 * r] = scnt[2 * r + 1] = 0;
            sbd[r] = 0;
            t->sdd[r] = 0;
        }
        for (MPI_Count i = 0; i < nsp; i++) {
            int r = sp[i].dest;
            if (sp[i].round != k)
                continue;
            if (scnt[2 * r] == 0) {
                sbd[r] = (int)(2 * nd);
                t->sdd[r] = (MPI_Aint)sp[i].at;
            }
            sdesc[nd].off = sp[i].off;
            sdesc[nd].len = sp[i].len;
            nd++;
            scnt[2 * r]++;
            scnt[2 * r + 1] += sp[i].len;
        }
        if ((rc = PMPI_Alltoall(scnt, 2, MPI_LONG_LONG, rcnt, 2, MPI_LONG_LONG,
                                fh->comm)) != MPI_SUCCESS)
            goto out;
        for (int r = 0; r < P; r++) {
            sbc[r] = (int)(2 * scnt[2 * r]);
            t->sdc[r] = scnt[2 * r + 1];
            rbc[r] = (int)(2 * rcnt[2 * r]);
            rbd[r] = (int)rb;
            rb += rbc[r];
            t->rdc[r] = rcnt[2 * r + 1];
            t->rdd[r] = (MPI_Aint)rd;
            rd += t->rdc[r];
        }
        nrblk = rb / 2;
        t->nrblk = nrblk;
        t->rd = rd;
        lc = MPI_SUCCESS;
        if (nrblk > t->cap_blk) {
            blk_t *t1 = realloc(t->rdesc, (size_t)nrblk * sizeof(blk_t));
            piece_t *t2 = t1 ? realloc(t->pieces,
                                       (size_t)nrblk * sizeof(piece_t))
                             : NULL;
            if (t1)
                t->rdesc = t1;
            if (t2)
                t->pieces = t2;
            if (t1 && t2)
                t->cap_blk = nrblk;
            else
                lc = MPI_ERR_NO_MEM;
        }
        if (rd > t->cap_bytes && lc == MPI_SUCCESS) {
            char *nb = realloc(t->rbuf, (size_t)rd);
            if (nb) {
                t->rbuf = nb;
                t->cap_bytes = rd;
            } else {
                lc = MPI_ERR_NO_MEM;
            }
        }
        if ((rc = PMPI_Allreduce(&lc, &all, 1, MPI_INT, MPI_MAX, fh->comm)) !=
            MPI_SUCCESS)
            goto out;
        if (all != MPI_SUCCESS) {
            rc = all;
            goto out;
        }
        if ((rc = PMPI_Alltoallv(sdesc, sbc, sbd, MPI_LONG_LONG, t->rdesc,
                                 rbc, rbd, MPI_LONG_LONG, fh->comm)) !=
            MPI_SUCCESS)
            goto out;
        if (wr && (rc = PMPI_Alltoallv_c(stream, t->sdc, t->sdd, MPI_BYTE,
                                         t->rbuf, t->rdc, t->rdd, MPI_BYTE,
                                         fh->comm)) != MPI_SUCCESS)
            goto out;
        /* Phase two: the aggregator's own IO for this round (after a
         * failure the rounds go on, to keep the ranks together, with
         * nothing more done). */
        if (agg_of[me] >= 0 && nrblk > 0 && err == 0) {
            long long at = 0;
            if (!wr)
                memset(t->rbuf, 0, (size_t)rd);
            for (long long i = 0; i < nrblk; i++) {
                t->pieces[i].off = t->rdesc[i].off;
                t->pieces[i].len = t->rdesc[i].len;
                t->pieces[i].at = at;
                at += t->rdesc[i].len;
            }
            qsort(t->pieces, (size_t)nrblk, sizeof(piece_t), by_offset);
            t->fd = fh->fd;
            t->wr = wr;
            t->guard = wr && io_ds_guard(fh);
            t->err = 0;
            if (dbl) {
                int e = 0;
                t->job = io_async_call(fh, slot_io, t, &e);
                if (t->job == NULL) /* no thread: here, then */
                    slot_io(t);
            } else {
                slot_io(t);
            }
            if (t->job == NULL && t->err != 0 && err == 0)
                err = t->err;
        }
        /* Reads: the data go back the way the descriptors came (round
         * k - 1's while round k's are read, when double buffering). */
        if (!wr && !dbl &&
            (rc = PMPI_Alltoallv_c(t->rbuf, t->rdc, t->rdd, MPI_BYTE, stream,
                                   t->sdc, t->sdd, MPI_BYTE, fh->comm)) !=
                MPI_SUCCESS)
            goto out;
    last:
        if (!wr && dbl && k > 0) {
            slot_wait(pt, &err);
            if ((rc = PMPI_Alltoallv_c(pt->rbuf, pt->rdc, pt->rdd, MPI_BYTE,
                                       stream, pt->sdc, pt->sdd, MPI_BYTE,
                                       fh->comm)) != MPI_SUCCESS)
                goto out;
        }
    }
    slot_wait(&slot[0], &err);
    slot_wait(&slot[1], &err);
    lc = err ? io_errno_class(err) : MPI_SUCCESS;
    {
        /* The outcome, and (reads) the file's size: the largest any rank
         * sees.  On a network file system a client's size may be stale
         * (sshfs, NFS attribute caches): a rank whose host wrote nothing
         * of the file may still see it empty. */
        long long ov[2] = {lc, -1}, og[2];
        struct stat st;
        if (!wr && fstat(fh->fd, &st) == 0)
            ov[1] = (long long)st.st_size;
        if ((rc = PMPI_Allreduce(ov, og, 2, MPI_LONG_LONG, MPI_MAX,
                                 fh->comm)) != MPI_SUCCESS)
            goto out;
        all = (int)og[0];
        fsize = og[1];
    }
    if (all != MPI_SUCCESS) {
        rc = all;
        *err_p = err ? err : EIO;
        goto out;
    }
    if (wr) {
        *done_p = bytes;
        goto out;
    }
    {
        /* What exists: the stream bytes before the end of the file (its
         * size agreed above). */
        MPI_Count have = bytes;
        if (fsize >= 0) {
            MPI_Offset before =
                io_view_stream_before(&fh->view, (MPI_Offset)fsize);
            have = before - pos;
            if (have < 0)
                have = 0;
            if (have > bytes)
                have = bytes;
        }
        if (have > 0) {
            mpi_dt_cursor_t c;
            mpi_dt_cursor_init(&c, dt, count, buf, 0);
            mpi_dt_cursor_unpack(&c, stream, have);
        }
        *done_p = have;
    }

out:
    free(mine);
    free(stream);
    free(scnt);
    free(rcnt);
    free(agg_of);
    free(aggs);
    free(sp);
    free(sdesc);
    for (int i = 0; i < 2; i++) {
        /* After a failed exchange the IO may still run: over first. */
        slot_wait(&slot[i], &err);
        free(slot[i].rdesc);
        free(slot[i].rbuf);
        free(slot[i].pieces);
        free(slot[i].sdc);
        free(slot[i].rdc);
        free(slot[i].sdd);
        free(slot[i].rdd);
    }
    free(sbc);
    free(sbd);
    free(rbc);
    free(rbd);
    return rc;
}

/* ---- in the background: nonblocking collectives ---------------------------
 *
 * The same algorithm as io_twophase_rw, as a state machine the progress
 * engine advances through the request's poll function (under the engine
 * lock, so one thread at a time).  The collectives become point-to-point
 * messages in the collective context of the file's private communicator,
 * with negative tags (the collective layer's are >= 0, communicator
 * construction's are below -2^27 or near -4096 and -8192) made of the
 * access's number on the handle, so two files, or the user's traffic,
 * never meet them:
 *   range   every rank sends every other its [lo, hi) and its state
 *   round k each rank sends each aggregator a header (blocks, bytes), then
 *           when there are any, the block descriptors and (writes) the
 *           data straight from its packed stream; an aggregator, once its
 *           headers came, receives those into its round buffer, hands the
 *           IO of the round to the IO thread, and (reads) sends the data
 *           back, which each rank receives straight into its stream
 *   end     every rank sends every other its outcome; the worst wins
 * Messages between two ranks with one tag match in order, so the rounds
 * reuse the tags.  An access waits until the one begun before it on the
 * same handle has finished (the standard orders collective calls on a
 * file the same on every rank), so its rounds and IO never interleave
 * with an earlier one's.
 */

#define TP_TAG_BASE (-(1 << 25)) /* [-2^25 - 2^23, -2^25] */
enum { TAG_RANGE, TAG_HDR, TAG_DESC, TAG_DATA, TAG_BACK, TAG_END };

enum {
    NB_START,  /* post the range exchange */
    NB_RANGE,  /* wait for it; plan the domains */
    NB_SEND,   /* round k: post headers, descriptors, data */
    NB_HDR,    /* aggregator: wait for the headers, post the receives */
    NB_RECV,   /* aggregator: wait for the data, start the IO */
    NB_IO,     /* aggregator: wait for the IO thread (double-buffered:
                  the round before's, while this round's runs); reads:
                  send that round's data back */
    NB_BACK,   /* wait for the round's sends */
    NB_FLUSH,  /* after the last round: its IO, the data coming back */
    NB_END,    /* post the outcome exchange */
    NB_ENDW,   /* wait for it; finish */
    NB_DECODE, /* reads in a user's representation: wait for the IO
                  thread's call of the read conversion */
    NB_GONE,   /* SHOAL_FT: a rank of the file's communicator died (or it
                  was revoked): wait for the IO thread's part, then fail */
    NB_DONE
};

/* A block an aggregator reads or writes in a round: where in the file,
 * where in memory (its round buffer, or its own stream), and its place in
 * the order the blocks came (ties of overlapping writes go in order). */
typedef struct npiece {
    long long off, len, at;
    char *ptr;
} npiece_t;

static int nby_offset(const void *a, const void *b)
{
    const npiece_t *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* domain_io over pieces that point into memory. */
static int nb_domain_io(int fd, int wr, npiece_t *p, long long n, int guard)
{
    struct iovec iov[IOV_MAX];
    long long i = 0;

    while (i < n) {
        long long off = p[i].off, end = p[i].off;
        int niov = 0;
        while (i < n && p[i].off == end && niov < IOV_MAX) {
            iov[niov].iov_base = p[i].ptr;
            iov[niov].iov_len = (size_t)p[i].len;
            end += p[i].len;
            niov++;
            i++;
        }
        int rc = run_io(fd, wr, iov, niov, off, end, guard);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* One round's receiving side on an aggregator.  With double buffering
 * (shoal_cb_double_buffer) there are two, used by alternate rounds: the
 * IO of round k runs in the IO thread while round k + 1's exchange goes
 * on (and, for reads, round k's data go back after round k + 1's IO has
 * started); a slot is filled again only once its IO is over and its data
 * went back. */
typedef struct nb_slot {
    long long *rcnt; /* P x 2: what each rank sends me this round */
    long long *rbd, *rdd;
    blk_t *rdesc;
    npiece_t *pieces;
    char *rbuf; /* the other ranks' data of the round (mine stays in my
                   stream) */
    long long rcap_blk, rcap_bytes, nrblk, rd;
    int ralloc; /* this round's receive buffers were had */
    int held;   /* a round is in it: its IO or (reads) its return pends */
    io_job_t *job; /* its IO in the IO thread, or NULL */
    int fd, wr, guard, io_err;
} nb_slot_t;

typedef struct io_tpnb {
    struct io_tpnb *next; /* in fh's list */
    MPI_File fh;          /* referenced (io_file_ref) */
    const char *fn;
    int wr, state, P, me, A, tag;
    int *aggs, *agg_of;
    void *buf;
    MPI_Count count, bytes;
    MPI_Datatype dt; /* retained by the request */
    MPI_Offset pos;
    blk_t *mine;
    MPI_Count nblk, nsp;
    char *stream;
    spiece_t *sp;
    long long gmin, fd_size, sub, nrounds, k;
    long long *rng;  /* P x 3: -lo, hi, state */
    long long *scnt; /* P x 2: my blocks, bytes to each rank this round */
    long long *sat;  /* P: where in my stream they start */
    long long *sbd;  /* P: where in sdesc their descriptors start */
    blk_t *sdesc;
    nb_slot_t slot[2]; /* round k's is slot[k & 1] (one only, slot[0],
                          without double buffering) */
    int dbl;           /* double buffering */
    int own_stream; /* stream was allocated (else it is the user's
                       buffer: a contiguous write) */
    MPI_Request *reqs; /* outstanding messages of this step */
    int nreq, capreq;
    MPI_Request *sends; /* the round's sends */
    int nsends, capsends;
    MPI_Request *backs; /* reads: data coming back (waited at the end) */
    int nbacks, capbacks;
    long long *ends;    /* P x 2: outcomes, and (reads) file sizes */
    long long myend[2]; /* my outcome, my fstat size (reads; -1) */
    long long fsize;    /* the file's size, the largest any rank saw */
    int lc;  /* the worst local class so far */
    int err; /* errno of a failed IO */
    /* A representation that converts: esz stream bytes per element of dt
     * (0: native), and a conversion that failed here (its class; this
     * rank then moves nothing, as the blocking call does; why says why).
     * A read in a user's representation decodes its delems whole
     * elements in the IO thread (dec, NB_DECODE). */
    MPI_Count esz, delems;
    int conv;
    io_job_t *dec;
    /* outcome */
    int rc;
    MPI_Count done;
    char why[IO_WHY_MAX];
} io_tpnb_t;

static void nb_lc(io_tpnb_t *o, int cls)
{
    if (cls > o->lc)
        o->lc = cls;
}

/* Remember a posted message, in the list that waits for it. */
enum { Q_STEP, Q_ROUND, Q_END }; /* reqs, sends, backs */
static int nb_keep(io_tpnb_t *o, int q, MPI_Request r)
{
    MPI_Request **a = q == Q_STEP ? &o->reqs : q == Q_ROUND ? &o->sends
                                                            : &o->backs;
    int *n = q == Q_STEP ? &o->nreq : q == Q_ROUND ? &o->nsends : &o->nbacks;
    int *cap = q == Q_STEP    ? &o->capreq
               : q == Q_ROUND ? &o->capsends
                              : &o->capbacks;

    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        MPI_Request *t = realloc(*a, (size_t)c * sizeof(*t));
        if (t == NULL) {
            /* Nowhere to keep it: wait for it here. */
            mpi_wait_internal(&r, MPI_STATUS_IGNORE);
            return MPI_ERR_NO_MEM;
        }
        *a = t;
        *cap = c;
    }
    (*a)[(*n)++] = r;
    return MPI_SUCCESS;
}

static void nb_send(io_tpnb_t *o, const void *b, MPI_Count n,
                    MPI_Datatype dt, int to, int kind)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = mpi_isend_internal(b, n, dt, to, o->tag - kind, o->fh->comm, 1,
                                &r);
    if (rc != MPI_SUCCESS)
        nb_lc(o, rc);
    else
        nb_keep(o, Q_ROUND, r);
}

static void nb_recv(io_tpnb_t *o, int q, void *b, MPI_Count n,
                    MPI_Datatype dt, int from, int kind)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = mpi_irecv_internal(b, n, dt, from, o->tag - kind, o->fh->comm,
                                1, &r);
    if (rc != MPI_SUCCESS)
        nb_lc(o, rc);
    else
        nb_keep(o, q, r);
}

/* Are all of a[0..*n) done?  Then they are freed and *n is 0; a failed
 * message's class is kept (a receive too short for what came: its
 * buffer could not be had, NO_MEM is kept already). */
static int nb_all_done(io_tpnb_t *o, MPI_Request *a, int *n)
{
    for (int i = 0; i < *n; i++)
        if (!mpi_req_is_done(a[i]))
            return 0;
    for (int i = 0; i < *n; i++) {
        int rc = mpi_wait_internal(&a[i], MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE)
            nb_lc(o, rc);
    }
    *n = 0;
    return 1;
}

/* Free the messages of a[0..*n) that are done; keep the rest. */
static void nb_settle(MPI_Request *a, int *n)
{
    int kept = 0;

    for (int i = 0; i < *n; i++) {
        if (mpi_req_is_done(a[i]))
            mpi_req_free(a[i]);
        else
            a[kept++] = a[i];
    }
    *n = kept;
}

/* Take back the receives of a[0..*n) that have not matched, free what is
 * done; what is under way stays in a (its buffers are the access's). */
static void nb_let_go(MPI_Request *a, int *n)
{
    for (int i = 0; i < *n; i++) {
        MPI_Request r = a[i];
        if (!mpi_req_is_done(r) && r->kind == MPI_REQ_RECV &&
            mpi_posted_cancel(r)) {
            r->status.shoal_cancelled = 1;
            mpi_req_complete(r);
        }
    }
    nb_settle(a, n);
}

/* The IO thread's part: the aggregator's IO of one round. */
static void nb_io(void *arg)
{
    nb_slot_t *t = arg;

    t->io_err = nb_domain_io(t->fd, t->wr, t->pieces, t->nrblk, t->guard);
}

/* Plan the domains and split my blocks, once the ranges are known. */
static void nb_plan(io_tpnb_t *o, long long lo, long long hi)
{
    long long gmin = lo, fd_size, sub;
    int A = o->A;
    MPI_File fh = o->fh;

    fd_size = (hi - gmin + A - 1) / A;
    if (fh->cb_align > 0) {
        long long a = fh->cb_align;
        fd_size = (fd_size + a - 1) / a * a;
        gmin = gmin / a * a;
        while (gmin + fd_size * A < hi)
            fd_size += a;
    }
    sub = fh->cb_bufsize > 0 && fh->cb_bufsize < fd_size ? fh->cb_bufsize
                                                         : fd_size;
    o->gmin = gmin;
    o->fd_size = fd_size;
    o->sub = sub;
    o->nrounds = (fd_size + sub - 1) / sub;
    {
        MPI_Count cap = o->nblk + A + 8;
        long long at = 0;
        o->sp = malloc((size_t)cap * sizeof(*o->sp));
        if (o->sp == NULL) {
            nb_lc(o, MPI_ERR_NO_MEM);
            return;
        }
        for (MPI_Count i = 0; i < o->nblk; i++) {
            long long off = o->mine[i].off, len = o->mine[i].len;
            while (len > 0) {
                long long d = (off - gmin) / fd_size, k, kend, take;
                if (d >= A)
                    d = A - 1;
                k = (off - gmin - d * fd_size) / sub;
                if (k >= o->nrounds)
                    k = o->nrounds - 1;
                kend = gmin + d * fd_size + (k + 1) * sub;
                take = (d == A - 1 && k == o->nrounds - 1) || off + len <= kend
                           ? len
                           : kend - off;
                if (o->nsp == cap) {
                    spiece_t *t;
                    cap *= 2;
                    t = realloc(o->sp, (size_t)cap * sizeof(*t));
                    if (t == NULL) {
                        nb_lc(o, MPI_ERR_NO_MEM);
                        o->nsp = 0;
                        return;
                    }
                    o->sp = t;
                }
                o->sp[o->nsp] = (spiece_t){off, take, at, o->aggs[d], (int)k};
                o->nsp++;
                at += take;
                off += take;
                len -= take;
            }
        }
        o->sdesc = malloc((size_t)(o->nsp > 0 ? o->nsp : 1) *
                          sizeof(*o->sdesc));
        if (o->sdesc == NULL) {
            nb_lc(o, MPI_ERR_NO_MEM);
            o->nsp = 0;
        }
    }
}

/* Round k, the sending side (every rank). */
static void nb_round_send(io_tpnb_t *o)
{
    long long nd = 0;
    int P = o->P;

    for (int r = 0; r < P; r++) {
        o->scnt[2 * r] = o->scnt[2 * r + 1] = 0;
        o->sat[r] = o->sbd[r] = 0;
    }
    /* A failed rank sends nothing more: the outcome tells everyone. */
    for (MPI_Count i = 0; i < o->nsp && o->lc == MPI_SUCCESS; i++) {
        int r = o->sp[i].dest;
        if (o->sp[i].round != o->k)
            continue;
        if (o->scnt[2 * r] == 0) {
            o->sbd[r] = nd;
            o->sat[r] = o->sp[i].at;
        }
        o->sdesc[nd].off = o->sp[i].off;
        o->sdesc[nd].len = o->sp[i].len;
        nd++;
        o->scnt[2 * r]++;
        o->scnt[2 * r + 1] += o->sp[i].len;
    }
    for (int a = 0; a < o->A; a++) {
        int r = o->aggs[a];
        if (r == o->me)
            continue; /* my own part: copied by the aggregator side */
        nb_send(o, &o->scnt[2 * r], 2, MPI_LONG_LONG, r, TAG_HDR);
        if (o->scnt[2 * r] == 0)
            continue;
        nb_send(o, &o->sdesc[o->sbd[r]], 2 * o->scnt[2 * r], MPI_LONG_LONG,
                r, TAG_DESC);
        if (o->wr)
            nb_send(o, o->stream + o->sat[r], o->scnt[2 * r + 1], MPI_BYTE,
                    r, TAG_DATA);
        else /* in order with the other rounds' (one tag) */
            nb_recv(o, Q_END, o->stream + o->sat[r], o->scnt[2 * r + 1],
                    MPI_BYTE, r, TAG_BACK);
    }
    if (o->agg_of[o->me] >= 0) {
        nb_slot_t *t = &o->slot[o->dbl ? o->k & 1 : 0];
        for (int r = 0; r < P; r++)
            if (r != o->me)
                nb_recv(o, Q_STEP, &t->rcnt[2 * r], 2, MPI_LONG_LONG, r,
                        TAG_HDR);
        t->rcnt[2 * o->me] = o->scnt[2 * o->me];
        t->rcnt[2 * o->me + 1] = o->scnt[2 * o->me + 1];
    }
}

/* Round k, an aggregator whose headers came: buffers, receives. */
static void nb_round_recv(io_tpnb_t *o, nb_slot_t *t)
{
    long long rb = 0, rd = 0;
    int P = o->P, me = o->me;

    for (int r = 0; r < P; r++) {
        t->rbd[r] = rb;
        rb += t->rcnt[2 * r];
        t->rdd[r] = rd;
        if (r != me) /* mine stays in my stream */
            rd += t->rcnt[2 * r + 1];
    }
    t->nrblk = rb;
    t->rd = rd;
    t->ralloc = 1;
    t->held = 1;
    if (rb > t->rcap_blk) {
        blk_t *t1 = realloc(t->rdesc, (size_t)rb * sizeof(*t1));
        npiece_t *t2 =
            t1 ? realloc(t->pieces, (size_t)rb * sizeof(*t2)) : NULL;
        if (t1)
            t->rdesc = t1;
        if (t2)
            t->pieces = t2;
        if (t1 && t2)
            t->rcap_blk = rb;
        else
            t->ralloc = 0;
    }
    if (rd > t->rcap_bytes && t->ralloc) {
        char *nb = realloc(t->rbuf, (size_t)rd);
        if (nb) {
            t->rbuf = nb;
            t->rcap_bytes = rd;
        } else {
            t->ralloc = 0;
        }
    }
    if (!t->ralloc)
        nb_lc(o, MPI_ERR_NO_MEM);
    for (int r = 0; r < P; r++) {
        if (t->rcnt[2 * r] == 0)
            continue;
        if (r == me) {
            if (!t->ralloc)
                continue;
            memcpy(&t->rdesc[t->rbd[r]], &o->sdesc[o->sbd[r]],
                   (size_t)t->rcnt[2 * r] * sizeof(blk_t));
            continue;
        }
        /* Without buffers the messages are still taken (and dropped:
         * truncated), so that the sender's round ends. */
        nb_recv(o, Q_STEP, t->ralloc ? (void *)&t->rdesc[t->rbd[r]] : NULL,
                t->ralloc ? 2 * t->rcnt[2 * r] : 0, MPI_LONG_LONG, r,
                TAG_DESC);
        if (o->wr)
            nb_recv(o, Q_STEP, t->ralloc ? t->rbuf + t->rdd[r] : NULL,
                    t->ralloc ? t->rcnt[2 * r + 1] : 0, MPI_BYTE, r,
                    TAG_DATA);
    }
}

/* Round k's data are in: its IO goes to the IO thread (nothing when
 * something failed already: the rounds go on, to keep the ranks
 * together, with nothing more done). */
static void nb_round_io(io_tpnb_t *o, nb_slot_t *t)
{
    int e;

    if (t->nrblk == 0 || !t->ralloc || o->err != 0 || o->lc != MPI_SUCCESS)
        return;
    /* A read at the end of the file leaves the rest zero. */
    if (!o->wr && t->rd > 0)
        memset(t->rbuf, 0, (size_t)t->rd);
    for (int r = 0; r < o->P; r++) {
        char *at = r == o->me ? o->stream + o->sat[r] : t->rbuf + t->rdd[r];
        for (long long i = t->rbd[r]; i < t->rbd[r] + t->rcnt[2 * r]; i++) {
            t->pieces[i].off = t->rdesc[i].off;
            t->pieces[i].len = t->rdesc[i].len;
            t->pieces[i].at = i;
            t->pieces[i].ptr = at;
            at += t->rdesc[i].len;
        }
    }
    qsort(t->pieces, (size_t)t->nrblk, sizeof(*t->pieces), nby_offset);
    t->fd = o->fh->fd;
    t->wr = o->wr;
    t->guard = o->wr && io_ds_guard(o->fh);
    t->io_err = 0;
    t->job = io_async_call(o->fh, nb_io, t, &e);
    if (t->job == NULL)
        o->err = e; /* no thread: the round fails */
}

/* Is the round in slot t over: its IO done and (reads) its data sent
 * back to the ranks?  Then the slot is free again. */
static int nb_round_over(io_tpnb_t *o, nb_slot_t *t)
{
    if (!t->held)
        return 1;
    if (t->job != NULL) {
        if (!io_async_call_done(t->job))
            return 0;
        io_async_call_free(t->job);
        t->job = NULL;
        if (t->io_err != 0 && o->err == 0)
            o->err = t->io_err;
    }
    t->held = 0;
    if (o->wr)
        return 1;
    for (int r = 0; r < o->P; r++) {
        if (t->rcnt[2 * r] == 0 || r == o->me)
            continue; /* mine was read straight into my stream */
        /* Nothing when the buffer could not be had (the outcome fails):
         * the receive ends short. */
        nb_send(o, t->ralloc ? t->rbuf + t->rdd[r] : NULL,
                t->ralloc ? t->rcnt[2 * r + 1] : 0, MPI_BYTE, r, TAG_BACK);
    }
    return 1;
}

/* The outcome of a finished access (every rank agrees on o->rc). */
static void nb_finish(io_tpnb_t *o)
{
    long long all = o->myend[0];

    o->fsize = o->myend[1];
    for (int r = 0; r < o->P; r++)
        if (r != o->me) {
            if (o->ends[2 * r] > all)
                all = o->ends[2 * r];
            if (o->ends[2 * r + 1] > o->fsize)
                o->fsize = o->ends[2 * r + 1];
        }
    o->rc = (int)all;
    if (o->rc != MPI_SUCCESS) {
        if (o->err == 0)
            o->err = EIO;
        snprintf(o->why, sizeof(o->why),
                 "%s: %s %lld bytes at stream byte %lld through the "
                 "aggregators: %s%s",
                 o->fh->path, o->wr ? "writing" : "reading",
                 (long long)o->bytes, (long long)o->pos, strerror(o->err),
                 o->myend[0] != MPI_SUCCESS ? "" : " (on another rank)");
        return;
    }
    if (o->wr) {
        /* In the memory type's bytes: whole elements converted. */
        o->done = o->esz > 0 ? o->bytes / o->esz * o->dt->size : o->bytes;
        return;
    }
    {
        MPI_Count have = o->bytes;
        if (o->fsize >= 0) {
            MPI_Offset before =
                io_view_stream_before(&o->fh->view, (MPI_Offset)o->fsize);
            have = before - o->pos;
            if (have < 0)
                have = 0;
            if (have > o->bytes)
                have = o->bytes;
        }
        if (o->esz > 0) {
            /* Whole elements, decoded into the buffer: external32's here
             * (the datatype engine's code), a user's read function by the
             * IO thread (nb_step). */
            MPI_Count elems = have / o->esz;
            int uret = 0;
            if (elems > 0 && o->fh->view.rep->ext32)
                o->conv = io_rep_convert(o->fh->view.rep, 0, o->buf, elems,
                                         o->dt, o->stream, o->esz, &uret);
            else
                o->delems = elems;
            have = elems * o->dt->size;
        } else if (have > 0) {
            mpi_dt_cursor_t c;
            mpi_dt_cursor_init(&c, o->dt, o->count, o->buf, 0);
            mpi_dt_cursor_unpack(&c, o->stream, have);
        }
        o->done = have;
    }
}

/*
 * SHOAL_FT: a rank of the file's communicator died, or the communicator
 * was revoked, during the access: it cannot finish (its messages to and
 * from that rank never come), and every survivor learns of the failure
 * on its own, so each gives up its part here instead of waiting.  The
 * receives that have not matched are taken back and what is done freed;
 * messages under way use the access's buffers, so they stay with it, and
 * the buffers with them (nb_free, nb_reap), until they end.  The IO
 * thread's part of a round, if any, ends first (NB_GONE).
 */
static void nb_abandon(io_tpnb_t *o, int cls)
{
    nb_let_go(o->reqs, &o->nreq);
    nb_let_go(o->sends, &o->nsends);
    nb_let_go(o->backs, &o->nbacks);
    o->rc = cls;
    o->done = 0;
    snprintf(o->why, sizeof(o->why),
             "%s: %s %lld bytes at stream byte %lld through the "
             "aggregators: %s",
             o->fh->path, o->wr ? "writing" : "reading", (long long)o->bytes,
             (long long)o->pos,
             cls == MPIX_ERR_REVOKED
                 ? "the file's communicator was revoked"
                 : "a rank of the file's communicator failed");
    o->state = NB_GONE;
}

/* The IO thread's part of a read in a user's representation: the user's
 * read conversion, outside the progress engine (it may call MPI). */
static void nb_decode(void *arg)
{
    io_tpnb_t *o = arg;
    int uret = 0;

    o->conv = io_rep_convert(o->fh->view.rep, 0, o->buf, o->delems, o->dt,
                             o->stream, o->esz, &uret);
    if (o->conv != MPI_SUCCESS)
        snprintf(o->why, sizeof(o->why),
                 "the read conversion function of data representation "
                 "\"%s\" returned %d",
                 o->fh->view.rep->name, uret);
}

/* Advance as far as possible: 1 when finished. */
static int nb_step(io_tpnb_t *o)
{
    for (;;) {
        switch (o->state) {
        case NB_START:
            o->rng[3 * o->me] = o->nblk > 0 && o->lc == MPI_SUCCESS
                                    ? -o->mine[0].off
                                    : LLONG_MIN;
            o->rng[3 * o->me + 1] =
                o->nblk > 0 && o->lc == MPI_SUCCESS
                    ? o->mine[o->nblk - 1].off + o->mine[o->nblk - 1].len
                    : LLONG_MIN;
            o->rng[3 * o->me + 2] = o->lc;
            for (int r = 0; r < o->P; r++)
                if (r != o->me) {
                    nb_recv(o, 1, &o->rng[3 * r], 3, MPI_LONG_LONG, r,
                            TAG_RANGE);
                    nb_send(o, &o->rng[3 * o->me], 3, MPI_LONG_LONG, r,
                            TAG_RANGE);
                }
            o->state = NB_RANGE;
            break;
        case NB_RANGE: {
            long long g[3] = {LLONG_MIN, LLONG_MIN, MPI_SUCCESS};
            if (!nb_all_done(o, o->reqs, &o->nreq) ||
                !nb_all_done(o, o->sends, &o->nsends))
                return 0;
            for (int r = 0; r < o->P; r++)
                for (int i = 0; i < 3; i++)
                    if (o->rng[3 * r + i] > g[i])
                        g[i] = o->rng[3 * r + i];
            if (g[2] != MPI_SUCCESS) {
                /* Somebody has no memory: all know it, nothing moves. */
                o->rc = (int)g[2];
                o->err = ENOMEM;
                snprintf(o->why, sizeof(o->why),
                         "%s: no memory to plan %lld bytes through the "
                         "aggregators%s",
                         o->fh->path, (long long)o->bytes,
                         o->lc != MPI_SUCCESS ? "" : " (on another rank)");
                o->state = NB_DONE;
                return 1;
            }
            if (g[1] == LLONG_MIN) { /* nobody moves a byte */
                o->myend[0] = MPI_SUCCESS;
                o->myend[1] = -1;
                for (int r = 0; r < o->P; r++) {
                    o->ends[2 * r] = MPI_SUCCESS;
                    o->ends[2 * r + 1] = -1;
                }
                nb_finish(o);
                o->state = NB_DONE;
                return 1;
            }
            nb_plan(o, -g[0], g[1]);
            /* Double buffering needs two rounds; shoal_cb_double_buffer
             * enable asks for it.  automatic leaves it off here (unlike
             * the blocking calls): measured on 2 CPUs, it was no faster
             * for writes (0.76-1.69x, median 1.02) and slower for
             * noncontiguous reads (0.44-0.67x), the IO thread's round
             * competing with the return of the one before (docs/IO.md). */
            o->dbl = o->fh->cb_double == 1 && o->nrounds > 1;
            o->k = 0;
            o->state = NB_SEND;
            break;
        }
        case NB_SEND:
            /* The slot this round fills is free (NB_IO, the round before). */
            nb_round_send(o);
            o->state = NB_HDR;
            break;
        case NB_HDR:
            if (o->agg_of[o->me] < 0) {
                o->state = NB_BACK;
                break;
            }
            if (!nb_all_done(o, o->reqs, &o->nreq))
                return 0;
            nb_round_recv(o, &o->slot[o->dbl ? o->k & 1 : 0]);
            o->state = NB_RECV;
            break;
        case NB_RECV:
            if (!nb_all_done(o, o->reqs, &o->nreq))
                return 0;
            nb_round_io(o, &o->slot[o->dbl ? o->k & 1 : 0]);
            o->state = NB_IO;
            break;
        case NB_IO:
            /* Double-buffered, the round before ends while this round's
             * IO runs (reads: its data go back now); else this one. */
            if (!nb_round_over(o, &o->slot[o->dbl ? (o->k + 1) & 1 : 0]))
                return 0;
            o->state = NB_BACK;
            break;
        case NB_BACK:
            if (!nb_all_done(o, o->sends, &o->nsends))
                return 0;
            o->k++;
            o->state = o->k < o->nrounds ? NB_SEND : NB_FLUSH;
            break;
        case NB_FLUSH:
            /* The last round's IO and return (double-buffered); the data
             * coming back to my stream (reads). */
            if (!nb_round_over(o, &o->slot[0]) ||
                !nb_round_over(o, &o->slot[1]) ||
                !nb_all_done(o, o->sends, &o->nsends) ||
                !nb_all_done(o, o->backs, &o->nbacks))
                return 0;
            o->state = NB_END;
            break;
        case NB_END:
            if (o->err != 0)
                nb_lc(o, io_errno_class(o->err));
            o->myend[0] = o->lc;
            o->myend[1] = -1;
            if (!o->wr) {
                /* The file's size as I see it: the largest is every
                 * rank's (a network file system's client may see a stale
                 * size; nb_finish, io_twophase_rw). */
                struct stat st;
                if (fstat(o->fh->fd, &st) == 0)
                    o->myend[1] = (long long)st.st_size;
            }
            for (int r = 0; r < o->P; r++)
                if (r != o->me) {
                    nb_recv(o, 1, &o->ends[2 * r], 2, MPI_LONG_LONG, r,
                            TAG_END);
                    nb_send(o, o->myend, 2, MPI_LONG_LONG, r, TAG_END);
                }
            o->state = NB_ENDW;
            break;
        case NB_ENDW:
            if (!nb_all_done(o, o->reqs, &o->nreq) ||
                !nb_all_done(o, o->sends, &o->nsends))
                return 0;
            nb_finish(o);
            if (o->rc == MPI_SUCCESS && o->delems > 0) {
                int e;
                /* In the file's queue, after this access's rounds. */
                o->dec = io_async_call(o->fh, nb_decode, o, &e);
                if (o->dec != NULL) {
                    o->state = NB_DECODE;
                    break;
                }
                o->conv = MPI_ERR_OTHER;
                snprintf(o->why, sizeof(o->why),
                         "cannot start the IO thread to call the read "
                         "conversion function: %s",
                         strerror(e));
            }
            o->state = NB_DONE;
            return 1;
        case NB_DECODE:
            if (!io_async_call_done(o->dec))
                return 0;
            io_async_call_free(o->dec);
            o->dec = NULL;
            o->state = NB_DONE;
            return 1;
        case NB_GONE:
            /* The IO thread may still be in this access's buffers. */
            for (int i = 0; i < 2; i++)
                if (o->slot[i].job != NULL &&
                    !io_async_call_done(o->slot[i].job))
                    return 0;
            if (o->dec != NULL && !io_async_call_done(o->dec))
                return 0;
            for (int i = 0; i < 2; i++) {
                if (o->slot[i].job != NULL)
                    io_async_call_free(o->slot[i].job);
                o->slot[i].job = NULL;
            }
            if (o->dec != NULL)
                io_async_call_free(o->dec);
            o->dec = NULL;
            o->state = NB_DONE;
            return 1;
        default:
            return 1;
        }
    }
}

static int nb_poll(MPI_Request r)
{
    io_tpnb_t *o = r->extra;
    MPI_File fh = o->fh;

    /* One at a time per file, in call order. */
    if (__atomic_load_n(&fh->tp_head, __ATOMIC_ACQUIRE) != o)
        return 0;
    if (o->state < NB_GONE) {
        int broken = mpi_ft_entry(fh->comm);
        if (broken != MPI_SUCCESS)
            nb_abandon(o, broken);
    }
    if (!nb_step(o))
        return 0;
    if (o->conv != MPI_SUCCESS && o->rc == MPI_SUCCESS) {
        /* This rank's values did not convert (the others' access went
         * on, as in the blocking call); o->why says why. */
        o->rc = o->conv;
        o->done = 0;
    }
    io_status_set(&r->status, o->rc == MPI_SUCCESS ? o->done : 0);
    r->status.MPI_ERROR = o->rc;
    /* Out of the file's list: the next access may go on, a drain ends. */
    if (o->next == NULL)
        fh->tp_tail = NULL;
    __atomic_store_n(&fh->tp_head, o->next, __ATOMIC_RELEASE);
    return 1;
}

static int nb_raise(MPI_Request r, int err, const char *fn)
{
    io_tpnb_t *o = r->extra;
    MPI_File fh = io_file_ok(o->fh) ? o->fh : MPI_FILE_NULL;

    if (err == MPI_ERR_IN_STATUS)
        return io_error(fh, err, fn,
                        "a request failed (%s in the background: %s); see "
                        "the statuses",
                        o->fn, o->why);
    return io_error(fh, err, fn, "%s in the background: %s", o->fn, o->why);
}

static void nb_release(io_tpnb_t *o)
{
    free(o->aggs);
    free(o->agg_of);
    free(o->mine);
    if (o->own_stream)
        free(o->stream);
    free(o->sp);
    free(o->rng);
    free(o->scnt);
    free(o->sat);
    free(o->sbd);
    free(o->sdesc);
    for (int i = 0; i < 2; i++) {
        nb_slot_t *t = &o->slot[i];
        free(t->rcnt);
        free(t->rbd);
        free(t->rdd);
        free(t->rdesc);
        free(t->pieces);
        free(t->rbuf);
    }
    free(o->reqs);
    free(o->sends);
    free(o->backs);
    free(o->ends);
    free(o);
}

/* Abandoned accesses (nb_abandon) whose messages are still under way:
 * kept, buffers and all, until those end. */
static pthread_mutex_t linger_lock = PTHREAD_MUTEX_INITIALIZER;
static io_tpnb_t *lingering;

/* Release the lingering accesses whose messages have all ended. */
static void nb_reap(void)
{
    pthread_mutex_lock(&linger_lock);
    for (io_tpnb_t **p = &lingering; *p != NULL;) {
        io_tpnb_t *o = *p;
        nb_settle(o->reqs, &o->nreq);
        nb_settle(o->sends, &o->nsends);
        nb_settle(o->backs, &o->nbacks);
        if (o->nreq + o->nsends + o->nbacks > 0) {
            p = &o->next;
            continue;
        }
        __atomic_store_n(p, o->next, __ATOMIC_RELAXED);
        nb_release(o);
    }
    pthread_mutex_unlock(&linger_lock);
}

static int nb_free(MPI_Request r)
{
    io_tpnb_t *o = r->extra;

    r->extra = NULL;
    if (o == NULL)
        return MPI_SUCCESS;
    io_file_unref(o->fh);
    o->fh = NULL;
    if (o->nreq + o->nsends + o->nbacks > 0) {
        pthread_mutex_lock(&linger_lock);
        o->next = lingering;
        __atomic_store_n(&lingering, o, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&linger_lock);
    } else {
        nb_release(o);
    }
    nb_reap();
    return MPI_SUCCESS;
}

static int nb_none(void *arg)
{
    MPI_File fh = arg;

    return __atomic_load_n(&fh->tp_head, __ATOMIC_ACQUIRE) == NULL;
}

void io_twophase_drain(MPI_File fh)
{
    if (!nb_none(fh))
        mpi_wait_until(nb_none, fh);
}

static int tp_start(MPI_File fh, const char *fn, int wr, MPI_Offset pos,
                    void *buf, MPI_Count count, MPI_Datatype dt,
                    MPI_Count bytes, MPI_Count esz, MPI_Request *request)
{
    io_tpnb_t *o = calloc(1, sizeof(*o));
    MPI_Request r;
    int P, A, ok;

    if (__atomic_load_n(&lingering, __ATOMIC_RELAXED) != NULL)
        nb_reap();

    if (o == NULL)
        return io_error(fh, MPI_ERR_NO_MEM, fn, "no memory for a request");
    PMPI_Comm_size(fh->comm, &P);
    PMPI_Comm_rank(fh->comm, &o->me);
    o->P = P;
    o->fh = fh;
    o->fn = fn;
    o->wr = wr;
    o->pos = pos;
    o->buf = buf;
    o->count = count;
    o->bytes = bytes;
    o->dt = dt;
    o->rc = MPI_SUCCESS;
    o->lc = MPI_SUCCESS;
    o->esz = esz;
    o->conv = MPI_SUCCESS;
    /* The aggregators, as io_twophase_rw picks them. */
    A = fh->cb_nodes > 0     ? fh->cb_nodes
        : fh->cb_stripes > 0 ? fh->cb_stripes
                             : fh->naggs;
    if (A > P)
        A = P;
    o->aggs = malloc((size_t)P * sizeof(int));
    o->agg_of = malloc((size_t)P * sizeof(int));
    o->rng = malloc((size_t)P * 3 * sizeof(long long));
    o->scnt = calloc((size_t)P, 2 * sizeof(long long));
    o->sat = calloc((size_t)P, sizeof(long long));
    o->sbd = calloc((size_t)P, sizeof(long long));
    o->ends = calloc((size_t)P * 2, sizeof(long long));
    ok = o->aggs && o->agg_of && o->rng && o->scnt && o->sat && o->sbd &&
         o->ends;
    for (int i = 0; i < 2; i++) {
        nb_slot_t *t = &o->slot[i];
        t->rcnt = calloc((size_t)P, 2 * sizeof(long long));
        t->rbd = calloc((size_t)P, sizeof(long long));
        t->rdd = calloc((size_t)P, sizeof(long long));
        ok = ok && t->rcnt && t->rbd && t->rdd;
    }
    r = ok ? mpi_req_alloc(MPI_REQ_FILE, fh->comm) : NULL;
    if (r == NULL) {
        nb_release(o);
        return io_error(fh, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    {
        int n = 0;
        for (int i = 0; i < P; i++)
            o->agg_of[i] = -1;
        for (int a = 0; a < fh->naggs && n < A; a++) {
            o->agg_of[fh->aggs[a]] = n;
            o->aggs[n++] = fh->aggs[a];
        }
        for (int i = 0; i < P && n < A; i++)
            if (o->agg_of[i] < 0) {
                o->agg_of[i] = n;
                o->aggs[n++] = i;
            }
        o->A = n;
    }
    /* My blocks and packed stream, now: the view may not change before
     * the access ends (set_view waits for it), and a write's data are
     * the user's buffer at the call (the standard lets them be read any
     * time before completion). */
    o->mine = my_blocks(fh, pos, bytes, &o->nblk);
    if (wr && bytes > 0 && esz == 0 && mpi_dt_contig(dt) &&
        dt->true_lb == 0) {
        /* A contiguous write: the user's buffer is the stream. */
        o->stream = buf;
    } else {
        o->stream = malloc(bytes > 0 ? (size_t)bytes : 1);
        o->own_stream = 1;
    }
    if (o->mine == NULL || o->stream == NULL || o->A == 0) {
        o->lc = MPI_ERR_NO_MEM;
        o->nblk = 0;
    } else if (wr && bytes > 0 && esz > 0) {
        int uret = 0;
        o->conv = io_rep_convert(fh->view.rep, 1, buf, count, dt, o->stream,
                                 esz, &uret);
        if (o->conv != MPI_SUCCESS) {
            o->nblk = 0; /* takes part with nothing to move */
            if (fh->view.rep->ext32)
                snprintf(o->why, sizeof(o->why),
                         "a value of the datatype does not fit the size "
                         "external32 gives it (a long beyond 32 bits?)");
            else
                snprintf(o->why, sizeof(o->why),
                         "the write conversion function of data "
                         "representation \"%s\" returned %d",
                         fh->view.rep->name, uret);
        }
    } else if (wr && bytes > 0 && o->own_stream) {
        mpi_dt_cursor_t c;
        mpi_dt_cursor_init(&c, dt, count, buf, 0);
        mpi_dt_cursor_pack(&c, o->stream, bytes);
    }
    mpi_dt_retain(dt);
    io_file_ref(fh);
    r->dt = dt;
    r->buf = buf;
    r->count = count;
    r->extra = o;
    r->poll_fn = nb_poll;
    r->free_fn = nb_free;
    r->raise_fn = nb_raise;
    mpi_lock();
    o->tag = TP_TAG_BASE - (int)((fh->tp_seq++ & 0xfffffu) << 3);
    if (fh->tp_tail != NULL)
        fh->tp_tail->next = o;
    else
        __atomic_store_n(&fh->tp_head, o, __ATOMIC_RELEASE);
    fh->tp_tail = o;
    /* As far as it goes now (the first round's messages leave). */
    if (nb_poll(r))
        mpi_req_complete(r);
    else
        mpi_req_add_poll(r);
    mpi_unlock();
    *request = r;
    return MPI_SUCCESS;
}

int io_twophase_start(MPI_File fh, const char *fn, int wr, MPI_Offset pos,
                      void *buf, MPI_Count count, MPI_Datatype dt,
                      MPI_Count bytes, MPI_Request *request)
{
    return tp_start(fh, fn, wr, pos, buf, count, dt, bytes, 0, request);
}

int io_twophase_start_conv(MPI_File fh, const char *fn, int wr,
                           MPI_Offset pos, void *buf, MPI_Count count,
                           MPI_Datatype dt, MPI_Count bytes, MPI_Count esz,
                           MPI_Request *request)
{
    return tp_start(fh, fn, wr, pos, buf, count, dt, bytes, esz, request);
}
