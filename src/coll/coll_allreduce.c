/*
 * Allreduce: recursive doubling for short vectors (log2 p rounds of the
 * whole vector), Rabenseifner's for long ones (recursive halving leaves
 * each rank one reduced segment, recursive doubling gathers them back:
 * 2 log2 p rounds moving about twice the vector in total), and a ring for
 * long vectors and commutative ops (2 (p - 1) rounds, the same volume, each
 * round only between neighbours).  The first two keep rank order, so they
 * serve non-commutative ops, and every result is computed once (by both
 * partners alike, or by one owner) so all ranks get the same bits.
 */
#include "coll_algo.h"

/*
 * The fold of coll_fold_index for count elements of buf: the even member
 * of a pair sends its vector and waits; the odd one receives it into tmp
 * and combines, the even member's on the left.  Returns the new index
 * (-1 for the even member).
 */
static int fold_in(coll_sched_t *s, const coll_group_t *g, void *buf,
                   void *tmp, int64_t count, void *dt, void *op)
{
    int me = g->me, rem = g->size - coll_pof2_floor(g->size);
    int i = coll_fold_index(me, rem);

    if (me >= 2 * rem)
        return i;
    if (i < 0) {
        coll_sched_send(s, buf, count, dt, coll_member(g, me + 1));
    } else {
        coll_sched_recv(s, tmp, count, dt, coll_member(g, me - 1));
        coll_sched_fence(s);
        coll_sched_reduce(s, op, tmp, buf, count, dt);
    }
    return i;
}

/* And back: the odd member sends the result to the even one. */
static void fold_out(coll_sched_t *s, const coll_group_t *g, void *buf,
                     int64_t count, void *dt)
{
    int me = g->me, rem = g->size - coll_pof2_floor(g->size);

    if (me >= 2 * rem)
        return;
    coll_sched_fence(s);
    if (me % 2 == 0)
        coll_sched_recv(s, buf, count, dt, coll_member(g, me + 1));
    else
        coll_sched_send(s, buf, count, dt, coll_member(g, me - 1));
    coll_sched_fence(s);
}

/* ---- recursive doubling --------------------------------------------------------- */

typedef struct rd {
    coll_sched_t *s;
    const coll_group_t *g;
    void *acc, *other;
    int64_t count;
    void *dt, *op;
} rd_t;

/* Exchange with the member at index peer and combine, keeping rank
 * order. */
static void exchange(rd_t *x, int peer)
{
    coll_sched_t *s = x->s;
    int rank = coll_member(x->g, peer);

    coll_sched_send(s, x->acc, x->count, x->dt, rank);
    coll_sched_recv(s, x->other, x->count, x->dt, rank);
    coll_sched_fence(s);
    if (peer < x->g->me) {
        coll_sched_reduce(s, x->op, x->other, x->acc, x->count, x->dt);
    } else {
        void *t = x->other;
        coll_sched_reduce(s, x->op, x->acc, t, x->count, x->dt);
        x->other = x->acc;
        x->acc = t;
    }
}

/*
 * Recursive doubling on the folded group: every surviving member's block
 * stays a run of consecutive members, in order, and partners compute the
 * same expression in the same order, so results agree bit for bit.
 */
void coll_allreduce_doubling(coll_sched_t *s, const coll_group_t *g,
                             const void *sbuf, void *rbuf, int64_t count,
                             void *dt, void *op)
{
    int pof2 = coll_pof2_floor(g->size), rem = g->size - pof2, i;
    rd_t x = {s, g, rbuf, NULL, count, dt, op};

    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (g->size > 1 && count > 0)
        x.other = coll_sched_tmp(s, count, dt);
    i = fold_in(s, g, rbuf, x.other, count, dt, op);
    for (int mask = 1; i >= 0 && mask < pof2; mask <<= 1)
        exchange(&x, coll_fold_member(i ^ mask, rem));
    coll_sched_copy(s, x.acc, count, dt, rbuf, count, dt);
    fold_out(s, g, rbuf, count, dt);
}

/* ---- recursive halving and Rabenseifner ------------------------------------------ */

/* Send segments [slo, shi) of buf to the member at index peer and receive
 * [rlo, rhi) into the same place of into. */
static void swap_segments(const coll_halving_t *h, int peer, int slo,
                          int shi, void *into, int rlo, int rhi)
{
    coll_sched_t *s = h->s;
    int rank = coll_member(h->g, peer);
    const int64_t *seg = h->seg;

    coll_sched_send(s, coll_elem(s->comm, h->buf, h->dt, seg[slo]),
                    seg[shi] - seg[slo], h->dt, rank);
    coll_sched_recv(s, coll_elem(s->comm, into, h->dt, seg[rlo]),
                    seg[rhi] - seg[rlo], h->dt, rank);
    coll_sched_fence(s);
}

/* buf[lo, hi) = (lower ? tmp op buf : buf op tmp) over those segments. */
static void combine(const coll_halving_t *h, int lo, int hi, int lower)
{
    coll_sched_t *s = h->s;
    int64_t at = h->seg[lo], n = h->seg[hi] - at;
    void *mine = coll_elem(s->comm, h->buf, h->dt, at);
    void *theirs = coll_elem(s->comm, h->tmp, h->dt, at);

    if (lower || s->comm->ops->commutative(h->op)) {
        coll_sched_reduce(s, h->op, theirs, mine, n, h->dt);
    } else {
        /* An op only computes inout = in op inout. */
        coll_sched_reduce(s, h->op, mine, theirs, n, h->dt);
        coll_sched_copy(s, theirs, n, h->dt, mine, n, h->dt);
    }
}

/*
 * Rounds with distance 1, 2, 4, ...: partners hold the same segments and
 * reduced blocks of adjacent runs of members, so each combined block is
 * again a run, in order.  The member with bit mask set keeps the upper
 * half, which makes the kept segment bitrev(i).
 */
int coll_halving_reduce_scatter(const coll_halving_t *h)
{
    int pof2 = coll_pof2_floor(h->g->size), rem = h->g->size - pof2;
    int i = fold_in(h->s, h->g, h->buf, h->tmp, h->count, h->dt, h->op);
    int lo = 0, hi = pof2;

    for (int mask = 1; i >= 0 && mask < pof2; mask <<= 1) {
        int mid = (lo + hi) / 2, upper = (i & mask) != 0;
        int peer = coll_fold_member(i ^ mask, rem);
        if (upper) {
            swap_segments(h, peer, lo, mid, h->tmp, mid, hi);
            lo = mid;
        } else {
            swap_segments(h, peer, mid, hi, h->tmp, lo, mid);
            hi = mid;
        }
        combine(h, lo, hi, upper);
    }
    return i;
}

/* The same rounds backwards: each member sends what it holds and
 * receives the other half, until all hold everything. */
void coll_halving_allgather(const coll_halving_t *h, int i)
{
    int pof2 = coll_pof2_floor(h->g->size), rem = h->g->size - pof2;
    int lo = coll_bitrev(i, pof2), hi = lo + 1;

    for (int mask = pof2 / 2; i >= 0 && mask > 0; mask >>= 1) {
        int len = hi - lo, peer = coll_fold_member(i ^ mask, rem);
        if (i & mask) {
            swap_segments(h, peer, lo, hi, h->buf, lo - len, lo);
            lo -= len;
        } else {
            swap_segments(h, peer, lo, hi, h->buf, hi, hi + len);
            hi += len;
        }
    }
}

void coll_allreduce_rabenseifner(coll_sched_t *s, const coll_group_t *g,
                                 const void *sbuf, void *rbuf,
                                 int64_t count, void *dt, void *op)
{
    int pof2 = coll_pof2_floor(g->size);
    coll_halving_t h = {s, g, rbuf, NULL, NULL, count, dt, op};
    int64_t *seg;

    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (g->size == 1 || count == 0)
        return;
    h.tmp = coll_sched_tmp(s, count, dt);
    seg = coll_sched_alloc(s, (int64_t)sizeof(int64_t) * (pof2 + 1));
    if (h.tmp == NULL || seg == NULL)
        return;
    for (int j = 0; j <= pof2; j++)
        seg[j] = coll_chunk_start(count, pof2, j);
    h.seg = seg;
    coll_halving_allgather(&h, coll_halving_reduce_scatter(&h));
    fold_out(s, g, rbuf, count, dt);
}

/* ---- ring ------------------------------------------------------------------------- */

/*
 * Reduce-scatter around the ring, then allgather around it: in round i a
 * member passes the partial sum of segment me - i - 1 to the right and adds
 * its own data to segment me - i - 2 from the left, so after n - 1 rounds
 * it holds segment me summed over everyone.  Sums start at different
 * members, hence commutative ops only.
 */
void coll_allreduce_ring(coll_sched_t *s, const coll_group_t *g,
                         const void *sbuf, void *rbuf, int64_t count,
                         void *dt, void *op)
{
    int n = g->size, me = g->me;
    int right = coll_member(g, (me + 1) % n);
    int left = coll_member(g, (me - 1 + n) % n);
    coll_blocks_t b = {rbuf, dt, NULL, NULL};
    void *tmp;

    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1 || count == 0 || coll_blocks_alloc(s, &b, n) != 0)
        return;
    for (int j = 0; j < n; j++) {
        b.displ[j] = coll_chunk_start(count, n, j);
        b.count[j] = coll_chunk_start(count, n, j + 1) - b.displ[j];
    }
    tmp = coll_sched_tmp(s, b.count[0], dt); /* the largest segment */
    if (tmp == NULL)
        return;
    for (int i = 0; i < n - 1; i++) {
        int out = (me - i - 1 + 2 * n) % n, in = (me - i - 2 + 2 * n) % n;
        coll_sched_send(s, coll_elem(s->comm, rbuf, dt, b.displ[out]),
                        b.count[out], dt, right);
        coll_sched_recv(s, tmp, b.count[in], dt, left);
        coll_sched_fence(s);
        coll_sched_reduce(s, op, tmp,
                          coll_elem(s->comm, rbuf, dt, b.displ[in]),
                          b.count[in], dt);
    }
    coll_ring_allgather(s, g, &b);
}
