/*
 * Barrier by dissemination: in round k every rank signals rank + 2^k and
 * waits for rank - 2^k, so after ceil(log2 p) rounds each rank has heard,
 * directly or through others, from every rank.  No rank is special, which
 * suits any group size (no folding for non-powers of two).
 */
#include "coll_sched.h"

int coll_barrier(coll_comm_t *c)
{
    coll_sched_t s;
    int p = c->size, r = c->rank;

    coll_sched_init(&s, c);
    for (int k = 1; k < p; k *= 2) {
        coll_sched_send(&s, NULL, 0, NULL, (r + k) % p);
        coll_sched_recv(&s, NULL, 0, NULL, (r - k + p) % p);
        coll_sched_fence(&s);
    }
    return coll_sched_finish(&s);
}
