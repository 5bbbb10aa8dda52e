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
 * The ring of watches, which makes sure some wire watches every rank, is
 * in am_ring.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
    int status = am_ring_init();
    if (status != SHOAL_OK) {
        free(am.tell_todo);
        am.tell_todo = NULL;
    }
    return status;
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

/* A zombie is told again at most this often while it keeps talking. */
#define ZOMBIE_RETELL_NS 100000000ull

/* Tell each rank taken for dead here that still talks that it is. */
static void tell_zombies(void)
{
    uint64_t now = base_time_ns();

    for (int r = 0; r < am.job->size && am.zombies > 0; r++) {
        am_peer_t *p = &am.peers[r];
        if (!p->zombie)
            continue;
        if (p->told_dead_at != 0 && now - p->told_dead_at < ZOMBIE_RETELL_NS)
            continue; /* told already: what it sent since crossed that */
        uint64_t args[1] = {(uint64_t)r}; /* naming itself: "you" */
        int status = am_system_last(r, AM_SYS_DEAD, args, 1);
        if (status == SHOAL_ERR_AGAIN)
            continue; /* its channel is full: the next check */
        if (status == SHOAL_OK)
            base_warn("am", "rank %d, taken for dead here, still talks: "
                      "told it so (fail-stop)", r);
        else
            base_debug("am", "rank %d, taken for dead here, still talks "
                       "and cannot be told so: %s", r,
                       shoal_strerror(status));
        p->told_dead_at = now;
        p->zombie = 0;
        am.zombies--;
    }
}

void am_tell_zombie(int src, const wire_msg_t *m)
{
    am_peer_t *p = &am.peers[src];

    if (!base_cfg.FT || am.tell_stopped || p->zombie)
        return;
    /* Its word that this rank is dead is not talk to answer. */
    if ((m->kind & WIRE_F_SYSTEM) && m->handler == AM_SYS_DEAD &&
        m->nargs == 1 && m->args[0] == (uint64_t)am.job->rank)
        return;
    p->zombie = 1;
    am.zombies++;
}

void am_fail_stop(int by, const char *why)
{
    base_error("am", "rank %d was taken for dead by rank %d (%s) and still "
               "lives: a rank the others gave up may not go on as a member "
               "(fail-stop, docs/FT.md); this process exits now",
               am.job->rank, by, why);
    _exit(AM_EXIT_TAKEN_FOR_DEAD);
}

void am_tell_progress(void)
{
    if (am.in_handler || am.tell_stopped)
        return;
    if (am.zombies > 0)
        tell_zombies();
    if (am.tell_pending == 0)
        return;
    for (int d = 0; d < am.job->size && am.tell_pending > 0; d++) {
        if (am.tell_todo[d] == NULL || !tell_some(d, am.tell_todo[d]))
            continue;
        free(am.tell_todo[d]);
        am.tell_todo[d] = NULL;
        am.tell_pending--;
    }
}

void am_tell_arrive(int src, const wire_msg_t *m)
{
    int dead = (int)m->args[0];
    char why[64];

    if (!base_cfg.FT || am.tell_stopped)
        return;
    /* Notices go to every rank but the dead one: one naming this rank
     * says src took it for dead and heard from it since (tell_zombies).
     * Fail-stop: whoever says so, this process ends. */
    if (dead == am.job->rank)
        am_fail_stop(src, "it heard from this rank after that");
    /* A rank taken for dead here has no say (it may itself take the
     * living for dead: a link back after the timeout). */
    if (am.peers[src].dead || am.peers[dead].dead)
        return;
    snprintf(why, sizeof(why), "rank %d says so", src);
    am_mark_dead(dead, SHOAL_ERR_PEER_DEAD, why);
}

void am_tell_fini(void)
{
    am.tell_stopped = 1;
    am_ring_fini();
    if (am.tell_todo == NULL)
        return;
    for (int d = 0; d < am.job->size; d++)
        free(am.tell_todo[d]);
    free(am.tell_todo);
    am.tell_todo = NULL;
    am.tell_pending = 0;
}
