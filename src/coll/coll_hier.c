/*
 * Hierarchical collectives for communicators whose hosts hold several
 * ranks: a phase within each host (to or from the host's leader, its
 * lowest rank, or the root on the root's host), one among the leaders, and
 * one within each host again, all in one schedule over the communicator's
 * ranks.  Messages between hosts then go between leaders only: once per
 * host instead of once per rank.
 *
 * Non-commutative ops combine within hosts first, so rank order survives
 * only when every host holds consecutive ranks (hosts then come in rank
 * order too, being numbered by first appearance); otherwise the caller
 * gets 0 and runs a flat algorithm.
 */
#include <string.h>

#include "coll_algo.h"

typedef struct hier {
    coll_group_t local;   /* this host's ranks, in rank order */
    coll_group_t leaders; /* a rank per host, in host order */
    int local_root;       /* index of this host's leader in local */
    int leader_root;      /* index of the root's host in leaders */
} hier_t;

/* 1 when each host's ranks are consecutive. */
static int consecutive(const coll_place_t *pl)
{
    for (int r = 1; r < pl->size; r++)
        if (coll_host(pl, r) < coll_host(pl, r - 1))
            return 0;
    return 1;
}

static void add_leader(hier_t *h, int *list, int rank, int me)
{
    if (rank == me)
        h->leaders.me = h->leaders.size;
    list[h->leaders.size++] = rank;
}

/*
 * The groups of this rank (root < 0: none), or 0 when the placement gives
 * no hierarchy: one host, a rank per host, or (ordered) hosts that do not
 * hold consecutive ranks.  Also 0 without memory: the schedule then holds
 * the error, and the flat algorithm the caller turns to appends nothing.
 */
static int groups(coll_sched_t *s, const coll_place_t *pl, int root,
                  int ordered, hier_t *h)
{
    int p = pl->size, me = s->comm->rank, mine = coll_host(pl, me);
    int root_host = root >= 0 ? coll_host(pl, root) : -1;
    int *seen, *local, *leaders;

    if (pl->nhosts <= 1 || pl->nhosts >= p || (ordered && !consecutive(pl)))
        return 0;
    memset(h, 0, sizeof(*h));
    h->leaders.me = -1;
    seen = coll_sched_alloc(s, (int64_t)sizeof(int) * pl->nhosts);
    leaders = coll_sched_alloc(s, (int64_t)sizeof(int) * pl->nhosts);
    local = coll_sched_alloc(s, (int64_t)sizeof(int) * p);
    if (seen == NULL || leaders == NULL || local == NULL)
        return 0;
    memset(seen, 0, sizeof(int) * (size_t)pl->nhosts);
    for (int r = 0; r < p; r++) {
        int host = coll_host(pl, r);
        if (!seen[host]) {
            seen[host] = 1;
            if (host == root_host)
                h->leader_root = h->leaders.size;
            add_leader(h, leaders, host == root_host ? root : r, me);
        }
        if (host != mine)
            continue;
        if (r == me)
            h->local.me = h->local.size;
        if (r == root)
            h->local_root = h->local.size;
        local[h->local.size++] = r;
    }
    h->local.ranks = local;
    h->local.one_host = 1;
    h->leaders.ranks = leaders;
    h->leaders.per_host = 1;
    return 1;
}

int coll_hier_barrier(coll_sched_t *s, const coll_place_t *pl)
{
    hier_t h;

    if (!groups(s, pl, -1, 0, &h))
        return 0;
    /* A fan-in and a fan-out: a reduce and a bcast of nothing. */
    coll_reduce_binomial(s, &h.local, NULL, NULL, 0, NULL, NULL, 0);
    if (h.leaders.me >= 0)
        coll_pick_barrier(s, &h.leaders);
    coll_sched_fence(s);
    coll_bcast_binomial(s, &h.local, NULL, 0, NULL, 0);
    return 1;
}

int coll_hier_bcast(coll_sched_t *s, const coll_place_t *pl, void *buf,
                    int64_t count, void *dt, int root)
{
    hier_t h;

    if (!groups(s, pl, root, 0, &h))
        return 0;
    if (h.leaders.me >= 0)
        coll_pick_bcast(s, &h.leaders, buf, count, dt, h.leader_root);
    coll_sched_fence(s);
    coll_pick_bcast(s, &h.local, buf, count, dt, h.local_root);
    return 1;
}

int coll_hier_reduce(coll_sched_t *s, const coll_place_t *pl,
                     const void *sbuf, void *rbuf, int64_t count, void *dt,
                     void *op, int root)
{
    int ordered = !s->comm->ops->commutative(op);
    void *acc = rbuf; /* the leaders' partial results */
    hier_t h;

    if (!groups(s, pl, root, ordered, &h))
        return 0;
    if (h.leaders.me >= 0 && s->comm->rank != root)
        acc = coll_sched_tmp(s, count, dt);
    coll_reduce_binomial(s, &h.local, sbuf, acc, count, dt, op,
                         h.local_root);
    if (h.leaders.me >= 0)
        coll_reduce_binomial(s, &h.leaders, COLL_IN_PLACE, acc, count, dt,
                             op, h.leader_root);
    return 1;
}

int coll_hier_allreduce(coll_sched_t *s, const coll_place_t *pl,
                        const void *sbuf, void *rbuf, int64_t count,
                        void *dt, void *op)
{
    int ordered = !s->comm->ops->commutative(op);
    hier_t h;

    if (!groups(s, pl, -1, ordered, &h))
        return 0;
    coll_reduce_binomial(s, &h.local, sbuf, rbuf, count, dt, op, 0);
    if (h.leaders.me >= 0)
        coll_pick_allreduce(s, &h.leaders, COLL_IN_PLACE, rbuf, count, dt,
                            op);
    coll_sched_fence(s);
    coll_pick_bcast(s, &h.local, rbuf, count, dt, 0);
    return 1;
}
