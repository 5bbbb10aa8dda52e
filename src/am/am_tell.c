/*
 * In-band death notices (docs/FT.md, "How deaths are noticed").
 *
 * Under SHOAL_FT a rank that takes a peer for dead, however it learned it
 * (its wire, the pidfd of a process of its host, the launcher, an
 * agreement's decision, or another rank's notice), tells others, once,
 * with a short system frame AM_SYS_DEAD.  So a rank that has no
 * connection to the dead one, and no launcher to tell it (srun, a PMIx
 * launcher), still learns of the death: from any rank that saw it.
 *
 * Whom: a dissemination pattern, not everyone.  Counting the ranks after
 * this one (cyclically) that it does not know dead, the dead one left
 * out, it tells the 1st, 2nd, 4th, 8th... so each rank sends at most
 * ceil(log2 n) frames per death, n log n in all instead of n^2.  Every
 * rank forwards what it learns the same way, so a death known to one rank
 * reaches everyone in about log2 n hops (the source's frames reach
 * distance 2^k at once, the others fill in), and nobody is left out even
 * when tellers die part-way: each rank tells the next one alive, so the
 * chain of 1st ranks goes round the whole job, and a target found dead
 * (known dead now, or the send failing for it) is replaced by the next
 * rank alive after it.  Forwarding is prompt: a rank that learns of a
 * death looks for dead peers (and so sends its notices) at the next turn
 * of its wait, not SHOAL_FT_DETECT later, so the hops cost microseconds
 * on a host and a frame's way across hosts.
 *
 * Nothing here runs on the message path: notices are sent from the peer
 * checks of waits, never waiting for room or credits (a peer whose
 * channel is full is tried again at the next check), and received as
 * system frames.
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
    /* The ranks to tell, then how many were told (for the log). */
    uint64_t *todo = calloc((size_t)words() + 1, sizeof(*todo));
    if (todo == NULL) {
        base_warn("am", "out of memory: the other ranks are not told of "
                  "rank %d's death by this one", rank);
        return;
    }
    int any = 0;
    /* The 1st, 2nd, 4th... rank alive after this one, rank left out. */
    for (int i = 1, count = 0; i < n; i++) {
        int r = (me + i) % n;
        if (r == rank || am.peers[r].dead)
            continue;
        count++;
        if ((count & (count - 1)) == 0) {
            todo[r / 64] |= 1ull << (r % 64);
            any = 1;
        }
    }
    if (!any) {
        free(todo);
        return;
    }
    am.tell_todo[rank] = todo;
    am.tell_pending++;
    /* Forward at once: the next turn of a wait looks for dead peers. */
    am.last_peer_check = 0;
}

/* The next rank alive after r (cyclically) that is neither this rank nor
 * dead, -1 when the walk comes back to this rank first. */
static int next_alive(int r, int dead)
{
    int n = am.job->size, me = am.job->rank;

    for (int i = 1; i < n; i++) {
        int x = (r + i) % n;
        if (x == me)
            return -1;
        if (x != dead && !am.peers[x].dead)
            return x;
    }
    return -1;
}

/* Tell the ranks of todo that dead is dead; 1 when all are told. */
static int tell_some(int dead, uint64_t *todo)
{
    uint64_t args[1] = {(uint64_t)dead};
    int left = 0, again = 1;

    /* Again while a target found dead put the next one alive in its
     * place (each time further on: the walk ends at this rank). */
    while (again) {
        again = 0;
        left = 0;
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
                todo[w] &= ~bit;
                if (status == SHOAL_OK) {
                    todo[words()]++;
                    continue;
                }
                /* Dead, or no wire reaches it (which makes it dead
                 * here): the next rank alive after it takes its place,
                 * so the chain of notices goes on past it. */
                int x = next_alive(r, dead);
                if (x >= 0) {
                    todo[x / 64] |= 1ull << (x % 64);
                    again = 1;
                }
            }
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
        /* Debug only: frames a rank that really died sent before it did
         * (still in a ring or a socket) come this way too, and a process
         * that lives says it itself when it learns it. */
        if (status == SHOAL_OK)
            base_debug("am", "rank %d, taken for dead here, still talks: "
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
        base_debug("am", "SHOAL_FT: told %llu rank(s) of rank %d's death",
                   (unsigned long long)am.tell_todo[d][words()], d);
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
