/*
 * Reduce and reduce-scatter.  MPI defines the result as x0 op x1 op ...
 * op x(p-1) and lets commutative operations be applied in any order,
 * non-commutative ones only in rank order.  Both algorithms here combine
 * blocks of consecutive ranks and always keep the lower block on the left,
 * so they serve both kinds; a commutative op only lets reduce root its
 * tree at the root instead of at member 0 (saving the last hop).
 */
#include "coll_algo.h"

/* A scratch buffer that is not acc (two, allocated on first use; none
 * for a reduction of nothing). */
static void *spare(coll_sched_t *s, void *bufs[2], const void *acc,
                   int64_t count, void *dt)
{
    if (count == 0)
        return NULL;
    for (int i = 0; i < 2; i++) {
        if (bufs[i] == NULL)
            bufs[i] = coll_sched_tmp(s, count, dt);
        if (bufs[i] != acc)
            return bufs[i];
    }
    return NULL; /* out of memory: the schedule holds the error */
}

/*
 * Binomial tree over members relative to top: relative member v collects
 * the block [v, v + 2^k) from its children v + 2^j, lowest first, each
 * child's block lying just above what v has so far.
 *
 * The accumulator alternates between two buffers: "acc = acc op in" is
 * computed in place as "in = acc op in" (the only form an MPI op has),
 * after which in is the accumulator and the old one the next receive
 * buffer.  No copy per round.  op NULL (with count 0) is a reduction of
 * nothing: the messages of a fan-in.
 */
void coll_reduce_binomial(coll_sched_t *s, const coll_group_t *g,
                          const void *sbuf, void *rbuf, int64_t count,
                          void *dt, void *op, int root)
{
    int n = g->size, me = g->me;
    int top = op != NULL && s->comm->ops->commutative(op) ? root : 0;
    int v = (me - top + n) % n;
    const void *acc = sbuf == COLL_IN_PLACE ? rbuf : sbuf;
    void *bufs[2] = {NULL, NULL};

    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask) {
            coll_sched_send(s, acc, count, dt,
                            coll_rel_member(g, v - mask, top));
            coll_sched_fence(s);
            break;
        }
        if (v + mask < n) {
            void *in = spare(s, bufs, acc, count, dt);
            coll_sched_recv(s, in, count, dt,
                            coll_rel_member(g, v + mask, top));
            coll_sched_fence(s);
            coll_sched_reduce(s, op, acc, in, count, dt);
            acc = in;
        }
    }
    if (me == top && top != root) {
        coll_sched_send(s, acc, count, dt, coll_member(g, root));
        coll_sched_fence(s);
    }
    if (me == root) {
        if (top != root)
            coll_sched_recv(s, rbuf, count, dt, coll_member(g, top));
        else
            coll_sched_copy(s, acc, count, dt, rbuf, count, dt);
        coll_sched_fence(s);
    }
}

void coll_build_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op, int root)
{
    coll_group_t all = coll_group_all(s->comm);
    coll_reduce_binomial(s, &all, sbuf, rbuf, count, dt, op, root);
}

/* ---- reduce-scatter ----------------------------------------------------------- */

typedef struct rs {
    coll_sched_t *s;
    const void *in; /* the input vector, blocks in rank order */
    void *rbuf, *dt;
    int64_t rcount;
    const int64_t *rcounts;
    int64_t *displ; /* p + 1 offsets of the blocks in the input */
    int pof2, rem;
} rs_t;

/* The ranks that new index i of the fold stands for: [*lo, *hi). */
static void ranks_of(const rs_t *x, int i, int *lo, int *hi)
{
    int m = coll_fold_member(i, x->rem);
    *lo = i < x->rem ? m - 1 : m;
    *hi = m + 1;
}

/*
 * Lay the input out in acc as recursive halving wants it: segment j
 * holds the blocks of the ranks that end up with it, those of new index
 * bitrev(j), so every segment is one run of the input.  seg gets the
 * segments' bounds.
 */
static void lay_out(const rs_t *x, void *acc, int64_t *seg)
{
    coll_comm_t *c = x->s->comm;

    seg[0] = 0;
    for (int j = 0; j < x->pof2; j++) {
        int lo, hi;
        ranks_of(x, coll_bitrev(j, x->pof2), &lo, &hi);
        seg[j + 1] = seg[j] + x->displ[hi] - x->displ[lo];
        coll_sched_copy(x->s, coll_elem(c, x->in, x->dt, x->displ[lo]),
                        seg[j + 1] - seg[j], x->dt,
                        coll_elem(c, acc, x->dt, seg[j]),
                        seg[j + 1] - seg[j], x->dt);
    }
}

/* After the halving, new index i holds its segment: its own block goes to
 * rbuf, the one of the rank it stood for to that rank.  A rank that sat
 * out (i < 0) receives its block. */
static void hand_out(const rs_t *x, void *acc, const int64_t *seg, int i)
{
    coll_sched_t *s = x->s;
    coll_comm_t *c = s->comm;
    int r = c->rank;
    int64_t mine = coll_vcount(x->rcounts, x->rcount, r);
    char *at;

    if (i < 0) {
        coll_sched_recv(s, x->rbuf, mine, x->dt, r + 1);
        return;
    }
    at = coll_elem(c, acc, x->dt, seg[coll_bitrev(i, x->pof2)]);
    if (i < x->rem) {
        int64_t theirs = coll_vcount(x->rcounts, x->rcount, r - 1);
        coll_sched_send(s, at, theirs, x->dt, r - 1);
        at = coll_elem(c, at, x->dt, theirs);
    }
    coll_sched_copy(s, at, mine, x->dt, x->rbuf, mine, x->dt);
}

/*
 * Recursive halving on a copy of the input laid out by lay_out: ceil(log2
 * p) rounds (two more for the fold of other sizes) in which each rank
 * sends half of what it still holds, so about the whole vector in total,
 * against log2(p) whole vectors for a reduce followed by a scatter.  Rank
 * order is kept (coll_halving_reduce_scatter), so any op will do.
 */
int coll_reduce_scatter(coll_comm_t *c, const void *sbuf, void *rbuf,
                        int64_t rcount, const int64_t *rcounts, void *dt,
                        void *op)
{
    coll_sched_t s;
    int p = c->size;
    rs_t x = {&s, sbuf == COLL_IN_PLACE ? rbuf : sbuf, rbuf, dt, rcount,
              rcounts, NULL, coll_pof2_floor(p), 0};
    coll_halving_t h = {&s, NULL, NULL, NULL, NULL, 0, dt, op};
    coll_group_t all = coll_group_all(c);
    int64_t *seg;

    coll_sched_init(&s, c);
    x.rem = p - x.pof2;
    x.displ = coll_sched_alloc(&s, (int64_t)sizeof(int64_t) * (p + 1));
    seg = coll_sched_alloc(&s, (int64_t)sizeof(int64_t) * (x.pof2 + 1));
    if (x.displ != NULL && seg != NULL) {
        x.displ[0] = 0;
        for (int i = 0; i < p; i++)
            x.displ[i + 1] = x.displ[i] + coll_vcount(rcounts, rcount, i);
        h.g = &all;
        h.count = x.displ[p];
        h.seg = seg;
        h.buf = coll_sched_tmp(&s, h.count, dt);
        h.tmp = coll_sched_tmp(&s, h.count, dt);
    }
    /* The total is the same everywhere: all or none go on. */
    if (h.buf != NULL && h.tmp != NULL && h.count > 0) {
        lay_out(&x, h.buf, seg);
        hand_out(&x, h.buf, seg, coll_halving_reduce_scatter(&h));
    }
    return coll_sched_finish(&s);
}
