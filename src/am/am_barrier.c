/*
 * The native barrier.  Among ranks of one host: a shared counter (see
 * host_barrier).  Otherwise dissemination (Hensgen, Finkel and Manber).  In round
 * k every rank sends to rank + 2^k and waits for rank - 2^k, so all ranks
 * are released after ceil(log2 n) rounds of one message each, with no root
 * to become a hot spot.  A rank can be at most one barrier ahead of another
 * (it cannot finish barrier e+1 before everyone entered it), so arrivals
 * are kept per epoch parity.
 */
#define _GNU_SOURCE
#include "am.h"

typedef struct barrier_wait {
    am_barrier_t *b;
    unsigned parity, round;
} barrier_wait_t;

static int any_peer_dead(void)
{
    for (int r = 0; r < am.job->size; r++)
        if (am.peers[r].dead)
            return base_err(SHOAL_ERR_PEER_DEAD,
                            "barrier cannot complete: rank %d died", r);
    return SHOAL_OK;
}

static int round_arrived(void *arg, int handled)
{
    barrier_wait_t *w = arg;

    (void)handled;
    if (w->b->arrived[w->parity] >> w->round & 1)
        return 1;
    /* A dead rank never arrives: fail instead of waiting for it. */
    if (am.deaths > 0)
        return any_peer_dead();
    return 0;
}

static int host_released(void *arg, int handled)
{
    unsigned epi = *(unsigned *)arg;

    (void)handled;
    if (wire_shm_hbar_done(epi))
        return 1;
    if (am.deaths > 0)
        return any_peer_dead();
    return 0;
}

/*
 * When every rank of the job shares this host, a counter in shared memory
 * is cheaper than log2(n) rounds of messages: each rank runs once to
 * arrive and once to see the release, which matters when ranks outnumber
 * cores and every round costs a turn of the scheduler.
 */
static int host_barrier(unsigned epi)
{
    wire_shm_hbar_arrive(epi);
    return am_block(host_released, &epi, NULL, 0, -1);
}

int am_barrier_run(unsigned epi)
{
    am_barrier_t *b = &am.barriers[epi];

    if (am.job->local_size == am.job->size)
        return host_barrier(epi);

    int n = am.job->size, me = am.job->rank;
    barrier_wait_t w = {b, b->epoch & 1, 0};

    for (int dist = 1; dist < n; dist <<= 1, w.round++) {
        uint64_t args[2] = {b->epoch, w.round};
        wire_msg_t m = {
            .kind = WIRE_CAT_SHORT | WIRE_F_SYSTEM,
            .ep = (uint8_t)epi,
            .handler = AM_SYS_BARRIER,
            .nargs = 2,
            .args = args,
        };
        am_peer_t *peer;
        int status = am_peer_get((me + dist) % n, &peer);

        if (status == SHOAL_OK)
            status = am_request(peer, &m);
        if (status == SHOAL_OK)
            status = am_block(round_arrived, &w, NULL, 0, -1);
        if (status != SHOAL_OK)
            return status;
    }
    b->arrived[w.parity] = 0;
    b->epoch++;
    return SHOAL_OK;
}

void am_system_deliver(int src, const wire_msg_t *m)
{
    if (m->handler == AM_SYS_DEAD && am_tell_arrive(src, m))
        return;
    if (m->handler == AM_SYS_BEAT && m->nargs == 0)
        return; /* its wire saw we are alive: that was the point */
    if (m->handler == AM_SYS_BARRIER && m->nargs == 2 && m->ep < WIRE_MAX_EPS &&
        m->args[1] < 64) {
        am_barrier_t *b = &am.barriers[m->ep];
        uint64_t epoch = m->args[0];
        if (epoch == b->epoch || epoch == (uint64_t)b->epoch + 1) {
            b->arrived[epoch & 1] |= (uint64_t)1 << m->args[1];
            return;
        }
    }
    am.stats.dropped++;
    base_error("am", "dropped a malformed system frame from rank %d "
               "(handler %u, %u args)", src, m->handler, m->nargs);
}

int shoal_barrier(shoal_ep_t *ep)
{
    int status = am_check_entry("shoal_barrier", 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID, "shoal_barrier: not an endpoint");
    return am_barrier_run(ep->index);
}

/* Poll until no frame arrives and no queued frame is left. */
static int drained(void *arg, int handled)
{
    int *quiet = arg;

    if (handled > 0 || !base_list_empty(&am.pending_peers)) {
        *quiet = 0;
        return 0;
    }
    return ++*quiet >= 2;
}

int am_quiesce(unsigned epi)
{
    for (int pass = 0; pass < 2; pass++) {
        int quiet = 0;
        int status = am_barrier_run(epi);
        if (status == SHOAL_OK)
            status = am_block(drained, &quiet, NULL, 0, -1);
        if (status != SHOAL_OK)
            return status;
    }
    return SHOAL_OK;
}
