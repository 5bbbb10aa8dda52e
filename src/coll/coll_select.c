/*
 * Which algorithm runs a collective.  Each SHOAL_COLL_* variable (read
 * through base_cfg) forces one or leaves the choice to the rules below;
 * a forced algorithm that cannot run the call at hand (recursive doubling
 * allgather at a size that is not a power of two, a ring allreduce with a
 * non-commutative op, shared memory across hosts) quietly gives way to the
 * automatic choice.  Every input of a choice agrees across the ranks (the
 * communicator's size and placement, the message size, which equal type
 * signatures make the same everywhere, the op), so all ranks choose alike.
 *
 * Order of preference for barrier, bcast, reduce and allreduce: the
 * shared-memory algorithm when every rank is on this host; a hierarchical
 * one when hosts hold several ranks; a flat message algorithm otherwise,
 * or when the others decline.  docs/COLLECTIVES.md tells users the same.
 */
#include <stdlib.h>

#include "base/base.h"
#include "coll_algo.h"
#include "coll/mcast/mcast.h"

/* Thresholds of the automatic choice, in bytes of one call's message;
 * docs/COLLECTIVES.md has the measurements behind them. */
#define BCAST_LONG (128 * 1024)      /* between hosts: scatter + allgather */
#define ALLREDUCE_LONG (16 * 1024)   /* Rabenseifner from here */
#define ALLGATHER_SHORT (32 * 1024)  /* all blocks: Bruck below, else ring */
#define ALLTOALL_BRUCK_MAX 1024      /* one block: Bruck up to here */

/* The choices of the SHOAL_COLL_* enums, in config_vars.h's order. */
enum { AUTO = 0 };
enum { BARRIER_DISSEMINATION = 1, BARRIER_DOUBLING, BARRIER_SHM };
enum { BCAST_BINOMIAL = 1, BCAST_SCATTER_ALLGATHER, BCAST_SHM };
enum {
    ALLREDUCE_DOUBLING = 1,
    ALLREDUCE_RABENSEIFNER,
    ALLREDUCE_RING,
    ALLREDUCE_SHM
};
enum { ALLGATHER_BRUCK = 1, ALLGATHER_DOUBLING, ALLGATHER_RING };
enum { ALLTOALL_PAIRWISE = 1, ALLTOALL_BRUCK };
enum { HIER_AUTO = 0, HIER_ON, HIER_OFF };

/* No message algorithm is called shm: asking for it means auto here. */
static int message_choice(int64_t var, int shm)
{
    return var == shm ? AUTO : (int)var;
}

/* ---- placement ------------------------------------------------------------------- */

static void place(const coll_comm_t *c, coll_place_t *pl)
{
    pl->host_of = c->host_of;
    pl->nhosts = c->nhosts;
    pl->fake = 0;
    pl->size = c->size;
    if (c->host_of == NULL) {
        /* SHOAL_COLL_FAKE_HOSTS, a testing aid: hierarchical algorithms
         * on a machine that is one host. */
        int fake_hosts = (int)base_cfg.COLL_FAKE_HOSTS;
        if (fake_hosts > 0) {
            /* r * K / size puts consecutive ranks together, as launchers
             * do; more hosts than ranks leave a rank per host. */
            pl->fake = fake_hosts < c->size ? fake_hosts : c->size;
            pl->nhosts = pl->fake;
        }
    }
    pl->all = coll_group_all(c);
    pl->all.one_host = pl->nhosts == 1;
    pl->all.per_host = pl->nhosts == pl->size && pl->size > 1;
}

static int shm_first(const coll_place_t *pl, int64_t var, int shm)
{
    return pl->nhosts == 1 && (var == AUTO || var == shm);
}

/* SHOAL_COLL_HIER=auto goes hierarchical unless a flat algorithm was
 * forced for the collective; on, whenever the placement allows. */
static int hier_wanted(int64_t var, int shm)
{
    if (base_cfg.COLL_HIER == HIER_OFF)
        return 0;
    return base_cfg.COLL_HIER == HIER_ON || message_choice(var, shm) == AUTO;
}

/* ---- message algorithms for a group ------------------------------------------------ */

void coll_pick_barrier(coll_sched_t *s, const coll_group_t *g)
{
    int var = message_choice(base_cfg.COLL_BARRIER, BARRIER_SHM);

    if (var == BARRIER_DOUBLING)
        coll_barrier_doubling(s, g);
    else
        coll_barrier_dissemination(s, g);
}

void coll_pick_bcast(coll_sched_t *s, const coll_group_t *g, void *buf,
                     int64_t count, void *dt, int root)
{
    int var = message_choice(base_cfg.COLL_BCAST, BCAST_SHM);
    int64_t bytes = count > 0 ? count * s->comm->ops->size(dt) : 0;

    if (g->size == 1)
        return;
    /* Between hosts, large messages by multicast (coll/mcast). */
    if (var == AUTO && coll_mcast_wanted(s->comm, g, bytes)) {
        coll_bcast_mcast(s, g, buf, count, dt, bytes, root);
        return;
    }
    /* Within a host every copy costs the same memory bandwidth, and the
     * tree copies least; between hosts the root's link is what limits. */
    if (var == AUTO)
        var = bytes >= BCAST_LONG && g->size > 2 && !g->one_host
                  ? BCAST_SCATTER_ALLGATHER
                  : BCAST_BINOMIAL;
    if (var == BCAST_SCATTER_ALLGATHER)
        coll_bcast_scatter_allgather(s, g, buf, count, dt, bytes, root);
    else
        coll_bcast_binomial(s, g, buf, count, dt, root);
}

void coll_pick_allreduce(coll_sched_t *s, const coll_group_t *g,
                         const void *sbuf, void *rbuf, int64_t count,
                         void *dt, void *op)
{
    int var = message_choice(base_cfg.COLL_ALLREDUCE, ALLREDUCE_SHM);
    int64_t bytes = count > 0 ? count * s->comm->ops->size(dt) : 0;

    if (var == ALLREDUCE_RING && !s->comm->ops->commutative(op))
        var = AUTO;
    /* Segments need an element per member. */
    if (var == AUTO)
        var = bytes >= ALLREDUCE_LONG && count >= g->size
                  ? ALLREDUCE_RABENSEIFNER
                  : ALLREDUCE_DOUBLING;
    if (var == ALLREDUCE_RABENSEIFNER)
        coll_allreduce_rabenseifner(s, g, sbuf, rbuf, count, dt, op);
    else if (var == ALLREDUCE_RING)
        coll_allreduce_ring(s, g, sbuf, rbuf, count, dt, op);
    else
        coll_allreduce_doubling(s, g, sbuf, rbuf, count, dt, op);
}

/* Bytes of all blocks together. */
static int64_t allgather_bytes(const coll_ag_t *a)
{
    int64_t total = 0;

    for (int i = 0; i < a->s->comm->size; i++)
        total += coll_vcount(a->counts, a->count, i);
    return total > 0 ? total * a->s->comm->ops->size(a->dt) : 0;
}

void coll_pick_allgather(const coll_ag_t *a)
{
    int p = a->s->comm->size, var = (int)base_cfg.COLL_ALLGATHER;
    int doubling = a->counts == NULL && a->displs == NULL && (p & (p - 1)) == 0;

    if (p == 1)
        return;
    if (var == ALLGATHER_DOUBLING && !doubling)
        var = AUTO;
    /* Below 4 ranks Bruck takes as many rounds as the ring. */
    if (var == AUTO && doubling)
        var = ALLGATHER_DOUBLING;
    else if (var == AUTO)
        var = allgather_bytes(a) < ALLGATHER_SHORT && p >= 4 ? ALLGATHER_BRUCK
                                                             : ALLGATHER_RING;
    if (var == ALLGATHER_BRUCK)
        coll_allgather_bruck(a);
    else if (var == ALLGATHER_DOUBLING)
        coll_allgather_doubling(a);
    else
        coll_allgather_ring(a);
}

void coll_pick_alltoall(coll_sched_t *s, const void *sbuf, int64_t scount,
                        void *sdt, void *rbuf, int64_t rcount, void *rdt)
{
    int var = (int)base_cfg.COLL_ALLTOALL;
    int64_t block = rcount > 0 ? rcount * s->comm->ops->size(rdt) : 0;

    /* Below 4 ranks Bruck takes as many rounds as pairwise exchange. */
    if (var == AUTO)
        var = block <= ALLTOALL_BRUCK_MAX && s->comm->size >= 4
                  ? ALLTOALL_BRUCK
                  : ALLTOALL_PAIRWISE;
    if (var == ALLTOALL_BRUCK)
        coll_alltoall_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt);
    else
        coll_alltoall_pairwise(s, sbuf, scount, sdt, rbuf, rcount, rdt);
}

/* ---- the entry points with a choice ------------------------------------------------ */

int coll_barrier(coll_comm_t *c)
{
    coll_sched_t s;
    coll_place_t pl;
    int64_t var = base_cfg.COLL_BARRIER;

    coll_sched_init(&s, c);
    place(c, &pl);
    if (!(shm_first(&pl, var, BARRIER_SHM) && coll_shm_barrier(&s)) &&
        !(hier_wanted(var, BARRIER_SHM) && coll_hier_barrier(&s, &pl)))
        coll_pick_barrier(&s, &pl.all);
    return coll_sched_finish(&s);
}

int coll_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt, int root)
{
    coll_sched_t s;
    coll_place_t pl;
    int64_t var = base_cfg.COLL_BCAST;

    coll_sched_init(&s, c);
    place(c, &pl);
    if (!(shm_first(&pl, var, BCAST_SHM) &&
          coll_shm_bcast(&s, buf, count, dt, root)) &&
        !(hier_wanted(var, BCAST_SHM) &&
          coll_hier_bcast(&s, &pl, buf, count, dt, root)))
        coll_pick_bcast(&s, &pl.all, buf, count, dt, root);
    return coll_sched_finish(&s);
}

/* Reduce has no variable: its message algorithm is the binomial tree. */
int coll_reduce(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                void *dt, void *op, int root)
{
    coll_sched_t s;
    coll_place_t pl;

    coll_sched_init(&s, c);
    place(c, &pl);
    /* count is the same everywhere: nobody communicates for 0. */
    if (count > 0 &&
        !(shm_first(&pl, AUTO, AUTO) &&
          coll_shm_reduce(&s, sbuf, rbuf, count, dt, op, root)) &&
        !(hier_wanted(AUTO, AUTO) &&
          coll_hier_reduce(&s, &pl, sbuf, rbuf, count, dt, op, root)))
        coll_build_reduce(&s, sbuf, rbuf, count, dt, op, root);
    return coll_sched_finish(&s);
}

int coll_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                   int64_t count, void *dt, void *op)
{
    coll_sched_t s;
    coll_place_t pl;
    int64_t var = base_cfg.COLL_ALLREDUCE;

    coll_sched_init(&s, c);
    place(c, &pl);
    if (count > 0 &&
        !(shm_first(&pl, var, ALLREDUCE_SHM) &&
          coll_shm_allreduce(&s, sbuf, rbuf, count, dt, op)) &&
        !(hier_wanted(var, ALLREDUCE_SHM) &&
          coll_hier_allreduce(&s, &pl, sbuf, rbuf, count, dt, op)))
        coll_pick_allreduce(&s, &pl.all, sbuf, rbuf, count, dt, op);
    return coll_sched_finish(&s);
}

/* ---- blocking calls without a schedule (coll.h) ----------------------------------- */

/* Every rank on this host and shared memory first: what the functions
 * above test before they try coll_shm_*. */
static int now_shm(const coll_comm_t *c, int64_t var, int shm)
{
    coll_place_t pl;

    place(c, &pl);
    return shm_first(&pl, var, shm);
}

coll_now_t *coll_now_barrier(coll_comm_t *c)
{
    return now_shm(c, base_cfg.COLL_BARRIER, BARRIER_SHM)
               ? coll_shm_now_barrier(c)
               : NULL;
}

coll_now_t *coll_now_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt,
                           int root)
{
    return now_shm(c, base_cfg.COLL_BCAST, BCAST_SHM)
               ? coll_shm_now_bcast(c, buf, count, dt, root)
               : NULL;
}

coll_now_t *coll_now_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                            int64_t count, void *dt, void *op, int root)
{
    return now_shm(c, AUTO, AUTO)
               ? coll_shm_now_reduce(c, sbuf, rbuf, count, dt, op, root)
               : NULL;
}

coll_now_t *coll_now_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                               int64_t count, void *dt, void *op)
{
    return now_shm(c, base_cfg.COLL_ALLREDUCE, ALLREDUCE_SHM)
               ? coll_shm_now_allreduce(c, sbuf, rbuf, count, dt, op)
               : NULL;
}
