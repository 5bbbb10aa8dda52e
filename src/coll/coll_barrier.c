/*
 * Barriers.  Dissemination: in round k every member signals member + 2^k
 * and waits for member - 2^k, so after ceil(log2 n) rounds each has heard,
 * directly or through others, from every member; no member is special and
 * any group size takes the same number of rounds.  Recursive doubling
 * pairs members up instead (member ^ 2^k), which needs the fold of
 * coll_fold_index for other sizes: two extra rounds.
 */
#include "coll_algo.h"

void coll_barrier_dissemination(coll_sched_t *s, const coll_group_t *g)
{
    int n = g->size, me = g->me;

    for (int k = 1; k < n; k *= 2) {
        coll_sched_send(s, NULL, 0, NULL, coll_member(g, (me + k) % n));
        coll_sched_recv(s, NULL, 0, NULL, coll_member(g, (me - k + n) % n));
        coll_sched_fence(s);
    }
}

/* An allreduce of nothing has exactly the messages of the barrier. */
void coll_barrier_doubling(coll_sched_t *s, const coll_group_t *g)
{
    coll_allreduce_doubling(s, g, COLL_IN_PLACE, NULL, 0, NULL, NULL);
}
