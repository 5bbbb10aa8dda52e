/*
 * In-band death notices (docs/FT.md, "How deaths are noticed").
 *
 * Under SHOAL_FT a rank that takes a peer for dead, however it learned it
 * (its wire, the pidfd of a process of its host, the launcher, an
 * agreement's decision, or another rank's notice), tells every other rank
 * it does not know dead, once, with a short system frame AM_SYS_DEAD.  So
 * a rank that has no connection to the dead one, and no launcher to tell
 * it (srun, a PMIx launcher), still learns of the death: from any rank
 * that saw it.  Every rank forwards what it learns, so the death of a
 * teller part-way through its notices leaves nobody out (the same reliable
 * broadcast as a communicator's revocation, mpi/core/ft.c): at a death
 * each survivor sends at most one frame to each other survivor.
 *
 * Nothing here runs on the message path: notices are sent from the peer
 * checks of waits (every SHOAL_FT_DETECT at most), never waiting for room
 * or credits (a peer whose channel is full is tried again at the next
 * check), and received as system frames.
 *
 * The ring: a rank alone on its host has no neighbour watching its
 * process, and with connections opened on first use nobody may have one
 * to it.  So each rank keeps a connection to a rank of another host (the
 * one at its own offset among the next host's ranks, ring_next: every
 * rank of a host is watched from another) and sends it an empty system
 * frame AM_SYS_BEAT every beat period (1 s, or a quarter of
 * SHOAL_FT_TIMEOUT when shorter): the wire then watches that rank as it
 * watches every peer it sends to (a connection closed by the dead
 * process's kernel at once, a silent link or host after the wire's
 * timeout, SHOAL_FT_TIMEOUT + 2 s), and the notices tell the rest.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "am.h"

static int words(void)
{
    return (am.job->size + 63) / 64;
}

int am_tell_init(void)
{
    am.tell_todo = calloc((size_t)am.job->size, sizeof(*am.tell_todo));
    if (am.tell_todo == NULL)
        return base_err(SHOAL_ERR_NOMEM, "SHOAL_FT: death notices of %d "
                        "ranks", am.job->size);
    return SHOAL_OK;
}

void am_tell_death(int rank)
{
    int n = am.job->size, me = am.job->rank;

    if (am.tell_todo == NULL || am.tell_stopped || am.tell_todo[rank] != NULL)
        return;
    uint64_t *todo = calloc((size_t)words(), sizeof(*todo));
    if (todo == NULL) {
        base_warn("am", "out of memory: the other ranks are not told of "
                  "rank %d's death by this one", rank);
        return;
    }
    int any = 0;
    for (int r = 0; r < n; r++)
        if (r != me && r != rank && !am.peers[r].dead) {
            todo[r / 64] |= 1ull << (r % 64);
            any = 1;
        }
    if (!any) {
        free(todo);
        return;
    }
    am.tell_todo[rank] = todo;
    am.tell_pending++;
}

/* Tell the ranks of todo that dead is dead; 1 when all are told. */
static int tell_some(int dead, uint64_t *todo)
{
    uint64_t args[1] = {(uint64_t)dead};
    int left = 0;

    for (int w = 0; w < words(); w++) {
        uint64_t bits = todo[w];
        while (bits != 0) {
            int r = w * 64 + __builtin_ctzll(bits);
            uint64_t bit = bits & -bits;
            bits &= bits - 1;
            int status = am.peers[r].dead
                             ? SHOAL_ERR_PEER_DEAD
                             : am_system_try(r, AM_SYS_DEAD, args, 1);
            if (status == SHOAL_ERR_AGAIN) {
                left = 1;
                continue;
            }
            /* Told, or cannot be: a rank no wire reaches is told of by
             * the wire that failed, a dead one needs nothing. */
            todo[w] &= ~bit;
        }
    }
    return !left;
}

void am_tell_progress(void)
{
    if (am.tell_pending == 0 || am.in_handler || am.tell_stopped)
        return;
    for (int d = 0; d < am.job->size && am.tell_pending > 0; d++) {
        if (am.tell_todo[d] == NULL || !tell_some(d, am.tell_todo[d]))
            continue;
        free(am.tell_todo[d]);
        am.tell_todo[d] = NULL;
        am.tell_pending--;
    }
}

/*
 * The rank to watch: the first rank after this one (cyclically) on
 * another host starts the next host's ranks; take the one as far past it
 * as this rank is among its host's ranks, then the next
 * one not known dead and not on this host.  With ranks in blocks per host
 * (srun's default distribution) every rank of a host is so watched from
 * the host before it, so a host lost whole is seen rank by rank, each
 * after the wire's timeout, in parallel.  -1: every other rank is here.
 */
static int ring_next(void)
{
    int n = am.job->size, me = am.job->rank, start = -1, offset = 0;

    for (int i = 1; i < n && start < 0; i++)
        if (!am_wire_same_host((me + i) % n))
            start = (me + i) % n;
    if (start < 0)
        return -1;
    for (int r = 0; r < me; r++) /* the local rank, pretend hosts too */
        offset += am_wire_same_host(r);
    start = (start + offset) % n;
    for (int i = 0; i < n; i++) {
        int r = (start + i) % n;
        if (r != me && !am.peers[r].dead && !am_wire_same_host(r))
            return r;
    }
    return -1;
}

void am_ring_beat(uint64_t now)
{
    uint64_t period = 1000000000ull;

    if (am.tell_todo == NULL || am.tell_stopped || am.in_handler ||
        now < am.ring_next_beat)
        return;
    if (base_cfg.FT_TIMEOUT > 0 && (uint64_t)base_cfg.FT_TIMEOUT / 4 < period)
        period = (uint64_t)base_cfg.FT_TIMEOUT / 4;
    am.ring_next_beat = now + period;
    int r = ring_next();
    if (r < 0)
        return;
    if (r != am.ring_peer)
        base_debug("am", "SHOAL_FT: watching rank %d (on another host)", r);
    am.ring_peer = r;
    /* A full channel is tried again at the next beat; an error is the
     * wire's, which reports the death itself. */
    (void)am_system_try(r, AM_SYS_BEAT, NULL, 0);
}

void am_tell_arrive(int src, const wire_msg_t *m)
{
    int dead = (int)m->args[0];
    char why[64];

    if (!base_cfg.FT || am.tell_stopped)
        return;
    /* Notices go to every rank but the dead one: one naming this rank
     * is malformed. */
    if (dead == am.job->rank || am.peers[dead].dead)
        return;
    snprintf(why, sizeof(why), "rank %d says so", src);
    am_mark_dead(dead, SHOAL_ERR_PEER_DEAD, why);
}

void am_tell_fini(void)
{
    am.tell_stopped = 1;
    if (am.tell_todo == NULL)
        return;
    for (int d = 0; d < am.job->size; d++)
        free(am.tell_todo[d]);
    free(am.tell_todo);
    am.tell_todo = NULL;
    am.tell_pending = 0;
}
