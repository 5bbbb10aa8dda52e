/*
 * The engine point-to-point and collectives move data with: a cursor over
 * the packed byte stream of (buf, count, dt), element counting for
 * MPI_Get_elements, and local typed copies.
 *
 * The cursor keeps (element, block, offset in block), so each call costs
 * O(1) per block it touches; starting at an offset costs one binary search
 * over the blocks' stream offsets.  A CONTIG type is one block of
 * count * size bytes at buf + true_lb, whatever count is.
 */
#include <string.h>

#include "mpi/dt/dt.h"

/* Index of the first i in [0, n) with end[i] > x (end is increasing). */
static MPI_Count search_end(const MPI_Count *end, MPI_Count n, MPI_Count x)
{
    MPI_Count lo = 0, hi = n - 1;

    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo) / 2;
        if (end[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void mpi_dt_cursor_init(mpi_dt_cursor_t *c, MPI_Datatype dt, MPI_Count count,
                        const void *buf, MPI_Count skip)
{
    MPI_Count rem;

    c->dt = dt;
    c->buf = (char *)(uintptr_t)buf;
    c->count = count < 0 ? 0 : count;
    c->total = c->count * dt->size;
    c->done = skip < 0 ? 0 : skip > c->total ? c->total : skip;
    c->elem = c->seg = c->off = 0;
    if (mpi_dt_contig(dt) || dt->size == 0)
        return;
    c->elem = c->done / dt->size;
    rem = c->done % dt->size;
    if (rem > 0) {
        const MPI_Count *end = dt_map(dt)->seg_end;
        c->seg = search_end(end, dt->nsegs, rem);
        c->off = rem - (c->seg > 0 ? end[c->seg - 1] : 0);
    }
}

/* The memory of the rest of the current block: address and length. */
static inline MPI_Count block(const mpi_dt_cursor_t *c, char **p)
{
    const struct shoal_mpi_datatype *dt = c->dt;
    const mpi_dt_seg_t *s;

    if (dt->flags & MPI_DT_CONTIG) {
        *p = dt_addr(c->buf, dt->true_lb + (MPI_Aint)c->done);
        return c->total - c->done;
    }
    s = &dt->segs[c->seg];
    *p = dt_addr(c->buf,
                 (MPI_Aint)c->elem * dt->extent + s->disp + (MPI_Aint)c->off);
    return s->len - c->off;
}

static inline void advance(mpi_dt_cursor_t *c, MPI_Count n)
{
    const struct shoal_mpi_datatype *dt = c->dt;

    c->done += n;
    if (dt->flags & MPI_DT_CONTIG)
        return;
    c->off += n;
    if (c->off == dt->segs[c->seg].len) {
        c->off = 0;
        if (++c->seg == dt->nsegs) {
            c->seg = 0;
            c->elem++;
        }
    }
}

MPI_Count mpi_dt_cursor_pack(mpi_dt_cursor_t *c, void *out, MPI_Count n)
{
    MPI_Count got = 0;

    while (got < n && c->done < c->total) {
        char *p;
        MPI_Count len = block(c, &p);
        if (len > n - got)
            len = n - got;
        memcpy((char *)out + got, p, (size_t)len);
        got += len;
        advance(c, len);
    }
    return got;
}

MPI_Count mpi_dt_cursor_unpack(mpi_dt_cursor_t *c, const void *in, MPI_Count n)
{
    MPI_Count got = 0;

    while (got < n && c->done < c->total) {
        char *p;
        MPI_Count len = block(c, &p);
        if (len > n - got)
            len = n - got;
        memcpy(p, (const char *)in + got, (size_t)len);
        got += len;
        advance(c, len);
    }
    return got;
}

MPI_Count mpi_dt_cursor_iov(mpi_dt_cursor_t *c, struct iovec *iov, int max,
                            MPI_Count n, int *niov_p)
{
    MPI_Count got = 0;
    int k = 0;

    while (got < n && c->done < c->total) {
        char *p;
        MPI_Count len = block(c, &p);
        if (len > n - got)
            len = n - got;
        /* The last block of one element may touch the first of the next. */
        if (k > 0 && (char *)iov[k - 1].iov_base + iov[k - 1].iov_len == p) {
            iov[k - 1].iov_len += (size_t)len;
        } else {
            if (k == max)
                break;
            iov[k].iov_base = p;
            iov[k].iov_len = (size_t)len;
            k++;
        }
        got += len;
        advance(c, len);
    }
    *niov_p = k;
    return got;
}

MPI_Count mpi_dt_elements(MPI_Datatype dt, MPI_Count bytes)
{
    const dt_map_t *m = dt_map(dt);
    MPI_Count whole, rem, lo, hi;
    const dt_run_t *r;

    if (dt->size == 0 || bytes <= 0)
        return 0;
    whole = bytes / dt->size;
    rem = bytes % dt->size;
    if (rem == 0 || m->nruns == 0)
        return whole * dt->nelems;
    /* The last run starting at or before rem holds the partial element. */
    lo = 0;
    hi = m->nruns - 1;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (m->runs[mid].bytes_before <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    r = &m->runs[lo];
    return whole * dt->nelems + r->elems_before +
           (rem - r->bytes_before) / dt_basic[r->basic].native;
}

int mpi_dt_blocks_order(const mpi_dt_seg_t *segs, MPI_Count n,
                        MPI_Datatype dt)
{
    const dt_map_t *m = dt != NULL ? dt_map(dt) : NULL;
    MPI_Aint reach = 0; /* the furthest end of a block so far */
    MPI_Count r = 0;
    int order = MPI_DT_ORDER_OK;

    for (MPI_Count i = 0; i < n; i++) {
        const mpi_dt_seg_t *s = &segs[i];
        if (s->disp < 0)
            return MPI_DT_ORDER_NEGATIVE;
        if (i > 0) {
            /* Blocks are runs of adjacent elements in typemap order, so
             * only a block's first element can start before its
             * predecessor: the last element of the block before (without
             * dt, taken to be that whole block). */
            const mpi_dt_seg_t *p = &segs[i - 1];
            MPI_Count last = p->len;
            if (m != NULL) {
                while (r + 1 < m->nruns &&
                       m->runs[r + 1].bytes_before < m->seg_end[i - 1])
                    r++;
                last = r < m->nruns ? dt_basic[m->runs[r].basic].native : 1;
            }
            if (s->disp < p->disp + (MPI_Aint)(p->len - last))
                order = MPI_DT_ORDER_DECREASE;
            else if (s->disp < reach && order < MPI_DT_ORDER_OVERLAP)
                order = MPI_DT_ORDER_OVERLAP;
        }
        if (s->disp + (MPI_Aint)s->len > reach)
            reach = s->disp + (MPI_Aint)s->len;
    }
    return order;
}

int mpi_dt_order(MPI_Datatype dt)
{
    return mpi_dt_blocks_order(dt->segs, dt->nsegs, dt);
}

void mpi_dt_copy(MPI_Datatype dt, MPI_Count count, const void *src, void *dst)
{
    MPI_Count e, i;

    if (count <= 0 || dt->size == 0 || src == dst)
        return;
    if (mpi_dt_contig(dt)) {
        memmove(dt_addr(dst, dt->true_lb), dt_addr(src, dt->true_lb),
                (size_t)(count * dt->size));
        return;
    }
    /* Same layout on both sides: copy block by block, no staging. */
    for (e = 0; e < count; e++) {
        MPI_Aint base = (MPI_Aint)e * dt->extent;
        for (i = 0; i < dt->nsegs; i++) {
            MPI_Aint d = base + dt->segs[i].disp;
            memmove(dt_addr(dst, d), dt_addr(src, d), (size_t)dt->segs[i].len);
        }
    }
}
