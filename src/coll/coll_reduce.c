/*
 * Reductions.  MPI defines the result as x0 op x1 op ... op x(p-1) and
 * lets commutative operations be applied in any order, non-commutative
 * ones only in rank order.  Both algorithms here combine blocks of
 * consecutive ranks and always keep the lower block on the left, so they
 * serve both kinds; a commutative op only lets reduce root its tree at the
 * root instead of at rank 0 (saving the last hop).
 *
 * The accumulator alternates between two buffers: "acc = acc op in" is
 * computed in place as "in = acc op in" (the only form an MPI op has),
 * after which in is the accumulator and the old one the next receive
 * buffer.  No copy per round.
 */
#include "coll_sched.h"

static inline int real(int v, int top, int p)
{
    return (v + top) % p;
}

/* A scratch buffer that is not acc (two, allocated on first use). */
static void *spare(coll_sched_t *s, void *bufs[2], const void *acc,
                   int64_t count, void *dt)
{
    for (int i = 0; i < 2; i++) {
        if (bufs[i] == NULL)
            bufs[i] = coll_sched_tmp(s, count, dt);
        if (bufs[i] != acc)
            return bufs[i];
    }
    return NULL; /* out of memory: the schedule holds the error */
}

/*
 * Binomial tree over ranks relative to top: relative rank v collects the
 * block [v, v + 2^k) from its children v + 2^j, lowest first, each child's
 * block lying just above what v has so far.
 */
void coll_build_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op, int root)
{
    coll_comm_t *c = s->comm;
    int p = c->size, r = c->rank;
    int top = c->ops->commutative(op) ? root : 0;
    int v = (r - top + p) % p;
    const void *acc = sbuf == COLL_IN_PLACE ? rbuf : sbuf;
    void *bufs[2] = {NULL, NULL};

    for (int mask = 1; mask < p; mask <<= 1) {
        if (v & mask) {
            coll_sched_send(s, acc, count, dt, real(v - mask, top, p));
            coll_sched_fence(s);
            break;
        }
        if (v + mask < p) {
            void *in = spare(s, bufs, acc, count, dt);
            coll_sched_recv(s, in, count, dt, real(v + mask, top, p));
            coll_sched_fence(s);
            coll_sched_reduce(s, op, acc, in, count, dt);
            acc = in;
        }
    }
    if (r == top && top != root) {
        coll_sched_send(s, acc, count, dt, root);
        coll_sched_fence(s);
    }
    if (r == root) {
        if (top != root)
            coll_sched_recv(s, rbuf, count, dt, top);
        else
            coll_sched_copy(s, acc, count, dt, rbuf, count, dt);
        coll_sched_fence(s);
    }
}

int coll_reduce(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                void *dt, void *op, int root)
{
    coll_sched_t s;

    if (count == 0)
        return 0; /* count is the same everywhere: nobody communicates */
    coll_sched_init(&s, c);
    coll_build_reduce(&s, sbuf, rbuf, count, dt, op, root);
    return coll_sched_finish(&s);
}

/* ---- allreduce ---------------------------------------------------------------- */

typedef struct rd {
    coll_sched_t *s;
    void *acc, *other;
    int64_t count;
    void *dt, *op;
} rd_t;

/* Exchange with peer and combine, keeping rank order. */
static void exchange(rd_t *x, int peer)
{
    coll_sched_t *s = x->s;

    coll_sched_send(s, x->acc, x->count, x->dt, peer);
    coll_sched_recv(s, x->other, x->count, x->dt, peer);
    coll_sched_fence(s);
    if (peer < s->comm->rank) {
        coll_sched_reduce(s, x->op, x->other, x->acc, x->count, x->dt);
    } else {
        void *t = x->other;
        coll_sched_reduce(s, x->op, x->acc, t, x->count, x->dt);
        x->other = x->acc;
        x->acc = t;
    }
}

/*
 * Recursive doubling on the largest power of two p' <= p ranks.  The
 * first 2(p - p') ranks fold in pairs first (the even one hands its data
 * to the odd one and waits for the result), which keeps every surviving
 * rank's block a run of consecutive ranks, in order.  Partners compute
 * the same expression in the same order, so results agree bit for bit.
 */
int coll_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                   int64_t count, void *dt, void *op)
{
    coll_sched_t s;
    int p = c->size, r = c->rank;
    int pof2 = coll_pof2_floor(p), rem = p - pof2, newrank;
    rd_t x = {&s, rbuf, NULL, count, dt, op};

    if (count == 0)
        return 0;
    coll_sched_init(&s, c);
    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(&s, sbuf, count, dt, rbuf, count, dt);
    if (p > 1)
        x.other = coll_sched_tmp(&s, count, dt);
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            coll_sched_send(&s, rbuf, count, dt, r + 1);
            newrank = -1;
        } else {
            coll_sched_recv(&s, x.other, count, dt, r - 1);
            coll_sched_fence(&s);
            coll_sched_reduce(&s, op, x.other, rbuf, count, dt);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
        int np = newrank ^ mask;
        exchange(&x, np < rem ? 2 * np + 1 : np + rem);
    }
    coll_sched_copy(&s, x.acc, count, dt, rbuf, count, dt);
    if (r < 2 * rem) {
        coll_sched_fence(&s);
        if (r % 2 == 0)
            coll_sched_recv(&s, rbuf, count, dt, r + 1);
        else
            coll_sched_send(&s, rbuf, count, dt, r - 1);
    }
    return coll_sched_finish(&s);
}

/* ---- reduce-scatter ----------------------------------------------------------- */

/*
 * Reduce the whole vector to rank 0, then scatter the pieces.  Simple and
 * order-preserving; a pairwise or recursive-halving version for
 * commutative ops is the faster one to add.
 */
int coll_reduce_scatter(coll_comm_t *c, const void *sbuf, void *rbuf,
                        int64_t rcount, const int *rcounts, void *dt,
                        void *op)
{
    coll_sched_t s;
    int p = c->size;
    int64_t total = 0;
    int *displs = NULL;
    void *tmp = NULL;
    const void *in = sbuf == COLL_IN_PLACE ? rbuf : sbuf;

    for (int i = 0; i < p; i++)
        total += coll_vcount(rcounts, rcount, i);
    if (total == 0)
        return 0;
    coll_sched_init(&s, c);
    if (rcounts) {
        int64_t d = 0;
        displs = coll_sched_alloc(&s, (int64_t)sizeof(int) * p);
        for (int i = 0; displs && i < p; i++) {
            displs[i] = (int)d;
            d += rcounts[i];
        }
    }
    if (c->rank == 0)
        tmp = coll_sched_tmp(&s, total, dt);
    coll_build_reduce(&s, in, tmp, total, dt, op, 0);
    coll_sched_fence(&s);
    coll_build_scatterv(&s, tmp, rcount, rcounts, displs, dt, rbuf,
                        coll_vcount(rcounts, rcount, c->rank), dt, 0);
    return coll_sched_finish(&s);
}
