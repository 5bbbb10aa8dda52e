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
 * Off by default, as measured (docs/IO.md: on one host it was slower than
 * each rank's own list IO in 30 of 37 cases, and no rule picked the rest
 * without losers): `romio_cb_write=enable` and `romio_cb_read=enable`
 * turn it on; rank 0's hints decide for all,
 * so hints that differ between ranks cannot split a collective call.
 * A domain is handled in rounds of `cb_buffer_size` bytes of file (16 MiB
 * by default), one exchange and one IO pass each, so an aggregator holds
 * at most that much data at once (plus overlapping writes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

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
        {
            MPI_Count moved = 0;
            int rc, eof = 0;
            /* Sieving writers may be about (io_list.c): a shared lock
             * over the run, never held across communication. */
            if (guard && (rc = io_lock(fd, 0, off, end)) != 0)
                return rc;
            /* A read at the end of the file leaves the rest zero. */
            rc = io_rw_full(fd, wr, iov, niov, off, &moved, &eof);
            if (guard)
                io_unlock(fd, off, end);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* A piece of my stream for one aggregator in one round. */
typedef struct spiece {
    long long off, len, at; /* file offset, length, stream offset */
    int dest, round;
} spiece_t;

int io_twophase_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf,
                   MPI_Count count, MPI_Datatype dt, MPI_Count *done_p,
                   int *err_p)
{
    int P, me, rc = MPI_SUCCESS, err = 0, lc, all, A;
    MPI_Count bytes = count * dt->size, nblk = 0, nsp = 0;
    blk_t *mine = NULL;
    long long range[2], grange[2], fd_size, gmin, sub, nrounds;
    long long *scnt = NULL, *rcnt = NULL; /* per rank: blocks, bytes */
    int *sbc = NULL, *sbd = NULL, *rbc = NULL, *rbd = NULL;
    MPI_Count *sdc = NULL, *rdc = NULL;
    MPI_Aint *sdd = NULL, *rdd = NULL;
    spiece_t *sp = NULL;
    blk_t *sdesc = NULL, *rdesc = NULL;
    char *stream = NULL, *rbuf = NULL;
    piece_t *pieces = NULL;
    long long rcap_blk = 0, rcap_bytes = 0;
    int *agg_of = NULL; /* aggregator index of each rank, or -1 */
    int *aggs = NULL;   /* rank of each aggregator */

    *done_p = 0;
    *err_p = 0;
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
    sdc = malloc((size_t)P * sizeof(MPI_Count));
    rdc = malloc((size_t)P * sizeof(MPI_Count));
    sdd = malloc((size_t)P * sizeof(MPI_Aint));
    rdd = malloc((size_t)P * sizeof(MPI_Aint));
    if (mine == NULL || stream == NULL || scnt == NULL || rcnt == NULL ||
        A == 0 || !(sbc && sbd && rbc && rbd && sdc && rdc && sdd && rdd))
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

    for (long long k = 0; k < nrounds; k++) {
        long long rb = 0, rd = 0, nrblk, nd = 0;
        /* This round's pieces, grouped by aggregator (file order is
         * aggregator order), as descriptors; data stay in the stream. */
        for (int r = 0; r < P; r++) {
            scnt[2 * r] = scnt[2 * r + 1] = 0;
            sbd[r] = 0;
            sdd[r] = 0;
        }
        for (MPI_Count i = 0; i < nsp; i++) {
            int r = sp[i].dest;
            if (sp[i].round != k)
                continue;
            if (scnt[2 * r] == 0) {
                sbd[r] = (int)(2 * nd);
                sdd[r] = (MPI_Aint)sp[i].at;
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
            sdc[r] = scnt[2 * r + 1];
            rbc[r] = (int)(2 * rcnt[2 * r]);
            rbd[r] = (int)rb;
            rb += rbc[r];
            rdc[r] = rcnt[2 * r + 1];
            rdd[r] = (MPI_Aint)rd;
            rd += rdc[r];
        }
        nrblk = rb / 2;
        lc = MPI_SUCCESS;
        if (nrblk > rcap_blk) {
            blk_t *t1 = realloc(rdesc, (size_t)nrblk * sizeof(*rdesc));
            piece_t *t2 =
                t1 ? realloc(pieces, (size_t)nrblk * sizeof(*pieces)) : NULL;
            if (t1)
                rdesc = t1;
            if (t2)
                pieces = t2;
            if (t1 && t2)
                rcap_blk = nrblk;
            else
                lc = MPI_ERR_NO_MEM;
        }
        if (rd > rcap_bytes && lc == MPI_SUCCESS) {
            char *t = realloc(rbuf, (size_t)rd);
            if (t) {
                rbuf = t;
                rcap_bytes = rd;
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
        if ((rc = PMPI_Alltoallv(sdesc, sbc, sbd, MPI_LONG_LONG, rdesc, rbc,
                                 rbd, MPI_LONG_LONG, fh->comm)) != MPI_SUCCESS)
            goto out;
        if (wr &&
            (rc = PMPI_Alltoallv_c(stream, sdc, sdd, MPI_BYTE, rbuf, rdc, rdd,
                                   MPI_BYTE, fh->comm)) != MPI_SUCCESS)
            goto out;
        /* Phase two: the aggregator's own IO for this round (after a
         * failure the rounds go on, to keep the ranks together, with
         * nothing more done). */
        if (agg_of[me] >= 0 && nrblk > 0 && err == 0) {
            long long at = 0;
            if (!wr)
                memset(rbuf, 0, (size_t)rd);
            for (long long i = 0; i < nrblk; i++) {
                pieces[i].off = rdesc[i].off;
                pieces[i].len = rdesc[i].len;
                pieces[i].at = at;
                at += rdesc[i].len;
            }
            qsort(pieces, (size_t)nrblk, sizeof(*pieces), by_offset);
            err = domain_io(fh->fd, wr, pieces, nrblk, rbuf,
                            wr && io_ds_guard(fh));
        }
        /* Reads: the data go back the way the descriptors came. */
        if (!wr &&
            (rc = PMPI_Alltoallv_c(rbuf, rdc, rdd, MPI_BYTE, stream, sdc, sdd,
                                   MPI_BYTE, fh->comm)) != MPI_SUCCESS)
            goto out;
    }
    lc = err ? io_errno_class(err) : MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(&lc, &all, 1, MPI_INT, MPI_MAX, fh->comm)) !=
        MPI_SUCCESS)
        goto out;
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
        /* What exists: the stream bytes before the end of the file. */
        struct stat st;
        MPI_Count have = bytes;
        if (fstat(fh->fd, &st) == 0) {
            MPI_Offset before =
                io_view_stream_before(&fh->view, (MPI_Offset)st.st_size);
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
    free(rdesc);
    free(rbuf);
    free(pieces);
    free(sbc);
    free(sbd);
    free(rbc);
    free(rbd);
    free(sdc);
    free(rdc);
    free(sdd);
    free(rdd);
    return rc;
}
