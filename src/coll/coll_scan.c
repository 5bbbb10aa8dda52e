/*
 * Prefix reductions by recursive doubling.  In round k each rank swaps its
 * partial (the reduction of its aligned block of 2^k ranks) with rank ^ 2^k.
 * A partner below contributes to the rank's own prefix and both combine
 * with the lower block on the left; a partner above only grows the
 * partial.  A missing partner (past the last rank) leaves the block as it
 * is.  Rank order is kept throughout, so non-commutative ops are fine.
 */
#include "coll_sched.h"

typedef struct scan {
    coll_sched_t *s;
    void *partial, *in; /* in receives the partner's partial */
    void *result;       /* the prefix so far (NULL: empty, exscan only) */
    int64_t count;
    void *dt, *op;
} scan_t;

static void round_with(scan_t *x, int peer)
{
    coll_sched_t *s = x->s;

    coll_sched_send(s, x->partial, x->count, x->dt, peer);
    coll_sched_recv(s, x->in, x->count, x->dt, peer);
    coll_sched_fence(s);
    if (peer < s->comm->rank) {
        coll_sched_reduce(s, x->op, x->in, x->partial, x->count, x->dt);
        if (x->result)
            coll_sched_reduce(s, x->op, x->in, x->result, x->count, x->dt);
    } else {
        void *t = x->in;
        coll_sched_reduce(s, x->op, x->partial, t, x->count, x->dt);
        x->in = x->partial;
        x->partial = t;
    }
}

/* exscan: the first lower partner's partial starts the prefix. */
static void round_ex(scan_t *x, int peer, void *rbuf, int *have)
{
    coll_sched_t *s = x->s;

    if (peer < s->comm->rank && !*have) {
        coll_sched_send(s, x->partial, x->count, x->dt, peer);
        coll_sched_recv(s, rbuf, x->count, x->dt, peer);
        coll_sched_fence(s);
        coll_sched_reduce(s, x->op, rbuf, x->partial, x->count, x->dt);
        x->result = rbuf;
        *have = 1;
        return;
    }
    round_with(x, peer);
}

static void scan_init(scan_t *x, coll_sched_t *s, const void *sbuf,
                      void *rbuf, int64_t count, void *dt, void *op)
{
    x->s = s;
    x->count = count;
    x->dt = dt;
    x->op = op;
    x->partial = coll_sched_tmp(s, count, dt);
    x->in = coll_sched_tmp(s, count, dt);
    x->result = NULL;
    coll_sched_copy(s, sbuf == COLL_IN_PLACE ? rbuf : sbuf, count, dt,
                    x->partial, count, dt);
}

int coll_scan(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
              void *dt, void *op)
{
    coll_sched_t s;
    scan_t x;

    coll_sched_init(&s, c);
    if (count == 0) /* the same everywhere: nothing to do */
        return coll_sched_finish(&s);
    scan_init(&x, &s, sbuf, rbuf, count, dt, op);
    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(&s, sbuf, count, dt, rbuf, count, dt);
    x.result = rbuf;
    for (int mask = 1; mask < c->size; mask <<= 1)
        if ((c->rank ^ mask) < c->size)
            round_with(&x, c->rank ^ mask);
    return coll_sched_finish(&s);
}

int coll_exscan(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                void *dt, void *op)
{
    coll_sched_t s;
    scan_t x;
    int have = 0;

    coll_sched_init(&s, c);
    if (count == 0)
        return coll_sched_finish(&s);
    scan_init(&x, &s, sbuf, rbuf, count, dt, op);
    for (int mask = 1; mask < c->size; mask <<= 1)
        if ((c->rank ^ mask) < c->size)
            round_ex(&x, c->rank ^ mask, rbuf, &have);
    return coll_sched_finish(&s);
}
