/*
 * The tolerant barrier (Pakin, "Unresponsiveness-tolerant collective
 * communication"; ../shared/seeds/digests/000-pakin.md §2.4-2.9).
 *
 * MPI_Barrier starts the barrier and returns at once.  What keeps the
 * program from noticing is a logical clock per peer:
 *   started[p]   tolerant barriers this rank started that include p;
 *   finished[p]  those of them that completed here;
 *   due(p)       = min(started[p], finished[p]).
 * Every point-to-point frame carries the sender's started[receiver] (the
 * stamp in a1, p2p_engine.h).  An arrival stamped s from p is matched only
 * once due(p) >= s: every barrier that p started with us before sending
 * has completed here.  Arrivals that are not due wait in a FIFO per
 * sender (never one global queue: one slow sender must not block the
 * others), and each FIFO is looked at again whenever its clock moves.
 * Barrier messages and the engine's control frames (credits, acks,
 * rendezvous) are never held back: holding them could deadlock.
 *
 * The barrier itself is a combining dissemination barrier per
 * (communicator, barrier number): round r goes to rank + 2^r once this
 * rank has started the barrier and received round r - 1, so when the last
 * round arrives every member has entered (the digest's erratum 5; works
 * for every group size, erratum 4).  Round messages can arrive before
 * this rank starts that barrier, even before it has the communicator:
 * instances are keyed by context and number, not by communicator.
 *
 * Counters are 32 bits compared as serial numbers, so they may wrap.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "mpi/p2p/p2p_engine.h"

uint32_t *mpi_tol_started;
static uint32_t *finished;
static base_list_t *held; /* per world rank: mpi_umsg_t (hlink), FIFO */
static base_list_t bars;  /* barriers not yet complete here */
static uint64_t nheld;    /* messages held now */

typedef struct tbar {
    base_list_t link;
    uint32_t ctx, seq;
    uint64_t got;  /* bit r: round r arrived */
    int round;     /* next round to send */
    int nrounds;
    MPI_Comm comm; /* once this rank started it */
} tbar_t;

static inline int32_t serial_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

static inline uint32_t due(int w)
{
    return serial_diff(mpi_tol_started[w], finished[w]) < 0
               ? mpi_tol_started[w]
               : finished[w];
}

static void state_init(void)
{
    size_t n = (size_t)mpi.world_size;

    if (mpi_tol_started != NULL)
        return;
    finished = calloc(n, sizeof(*finished));
    held = malloc(n * sizeof(*held));
    mpi_tol_started = calloc(n, sizeof(*mpi_tol_started));
    if (finished == NULL || held == NULL || mpi_tol_started == NULL)
        base_fatal("mpi: no memory for the tolerant barrier's clocks "
                   "(%zu ranks)", n);
    for (size_t i = 0; i < n; i++)
        base_list_init(&held[i]);
    base_list_init(&bars);
}

/* Hand w's held arrivals that are now due to matching, in order. */
static void release_due(int w)
{
    while (!base_list_empty(&held[w])) {
        mpi_umsg_t *u = BASE_CONTAINER_OF(held[w].next, mpi_umsg_t, hlink);
        mpi_in_t in;
        if (serial_diff(u->stamp, due(w)) > 0)
            return;
        base_list_remove(&u->hlink);
        nheld--;
        mpi_in_of_umsg(&in, u);
        mpi_arrive(&in);
        mpi_umsg_free(u);
    }
}

void mpi_tol_arrive(const mpi_in_t *in, uint32_t stamp)
{
    int w = in->src_world;
    mpi_umsg_t *u;

    state_init();
    if (base_list_empty(&held[w]) && serial_diff(stamp, due(w)) <= 0) {
        mpi_arrive(in);
        return;
    }
    u = mpi_umsg_from_in(in);
    u->stamp = stamp;
    base_list_push_back(&held[w], &u->hlink);
    nheld++;
}

/* ---- barriers ---------------------------------------------------------------------- */

static tbar_t *find(uint32_t ctx, uint32_t seq)
{
    tbar_t *b;

    for (base_list_t *e = bars.next; e != &bars; e = e->next) {
        b = BASE_CONTAINER_OF(e, tbar_t, link);
        if (b->ctx == ctx && b->seq == seq)
            return b;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL)
        base_fatal("mpi: no memory for a tolerant barrier");
    b->ctx = ctx;
    b->seq = seq;
    base_list_push_back(&bars, &b->link);
    return b;
}

static void complete(tbar_t *b)
{
    MPI_Comm comm = b->comm;

    base_list_remove(&b->link);
    for (int r = 0; r < comm->size; r++)
        finished[comm->peer_world[r]]++;
    for (int r = 0; r < comm->size; r++)
        release_due(comm->peer_world[r]);
    mpi_comm_release(comm);
    free(b);
}

/* Send every round that may go now; complete when the last arrived. */
static void advance(tbar_t *b)
{
    MPI_Comm comm = b->comm;

    if (comm == NULL)
        return; /* not started here yet */
    while (b->round < b->nrounds &&
           (b->round == 0 || (b->got >> (b->round - 1) & 1))) {
        int to = (int)(((int64_t)comm->rank + (1ll << b->round)) %
                       comm->size);
        mpi_send_ctl(comm->peer_world[to], MPI_H_TBAR, b->ctx, b->seq,
                     (uint64_t)b->round, 0);
        b->round++;
    }
    if (b->round == b->nrounds &&
        (b->nrounds == 0 || (b->got >> (b->nrounds - 1) & 1)))
        complete(b);
}

void mpi_tol_handler(shoal_token_t *t, const uint64_t *a, unsigned n,
                     void *payload, size_t len)
{
    tbar_t *b;

    (void)payload;
    (void)len;
    if (n < 3 || a[2] >= 63) {
        base_error("mpi", "malformed tolerant barrier message from rank %d",
                   t->src);
        return;
    }
    state_init();
    b = find((uint32_t)a[0], (uint32_t)a[1]);
    b->got |= 1ull << a[2];
    advance(b);
}

int mpi_tol_enabled(MPI_Comm comm)
{
    char value[16];
    int flag = 0, len = (int)sizeof(value) - 1;

    if (comm->is_inter)
        return 0;
    if (comm->info != MPI_INFO_NULL &&
        PMPI_Info_get_string(comm->info, "shoal_barrier", &len, value,
                             &flag) == MPI_SUCCESS &&
        flag)
        return strcmp(value, "tolerant") == 0;
    return base_cfg.BARRIER == 1;
}

int mpi_tol_barrier(MPI_Comm comm)
{
    tbar_t *b;
    int rounds = 0;

    mpi_lock();
    state_init();
    /*
     * Take in what has arrived first: rounds of this barrier sent by ranks
     * that entered it before us are otherwise only seen at our next MPI
     * call, which after a barrier is typically after a stretch of
     * computation.  Seen now, advance() sends every round they allow at
     * once, so when this rank is the last to enter (the unresponsive one)
     * the barrier completes everywhere, and the messages held behind it are
     * released, without waiting for this rank to call MPI again.
     */
    am_progress();
    for (int r = 0; r < comm->size; r++)
        mpi_tol_started[comm->peer_world[r]]++;
    b = find(comm->ctx, ++comm->tol_seq);
    while ((1ll << rounds) < comm->size)
        rounds++;
    b->nrounds = rounds;
    b->comm = comm;
    mpi_ref_inc(&comm->refs);
    advance(b);
    mpi_unlock();
    return MPI_SUCCESS;
}

static int quiet(void *arg)
{
    (void)arg;
    return base_list_empty(&bars) && nheld == 0;
}

void mpi_tol_fini(void)
{
    if (mpi_tol_started == NULL)
        return;
    mpi_wait_until(quiet, NULL);
    free(mpi_tol_started);
    free(finished);
    free(held);
    mpi_tol_started = NULL;
    finished = NULL;
    held = NULL;
}

/* ---- introspection (tests) ------------------------------------------------------- */

int MPIX_Shoal_barrier_clock(int world_rank, unsigned clock[3])
{
    MPI_CHECK_INIT("MPIX_Shoal_barrier_clock");
    if (world_rank < 0 || world_rank >= mpi.world_size || clock == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPIX_Shoal_barrier_clock",
                         "rank %d outside [0, %d) or clock NULL",
                         world_rank, mpi.world_size);
    mpi_lock();
    mpi_progress();
    if (mpi_tol_started == NULL) {
        clock[0] = clock[1] = clock[2] = 0;
    } else {
        clock[0] = mpi_tol_started[world_rank];
        clock[1] = finished[world_rank];
        clock[2] = due(world_rank);
    }
    mpi_unlock();
    return MPI_SUCCESS;
}
