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
 * this one (cyclically) that it does not know dead, the dead ones left
 * out, it tells the 1st, 2nd, 4th, 8th... so each rank sends at most
 * ceil(log2 n) frames per round, n log n in all instead of n^2.  Every
 * rank forwards what it learns the same way, so a death known to one rank
 * reaches everyone in about log2 n hops (the source's frames reach
 * distance 2^k at once, the others fill in), and nobody is left out even
 * when tellers die part-way: each rank tells the next one alive, so the
 * chain of 1st ranks goes round the whole job, and a target found dead
 * (known dead now, or the send failing for it) is replaced by the next
 * rank alive after it.  Forwarding is prompt: a rank that learns of a
 * death tells from its next progress (am_tell_poll, on am.tell_due),
 * after a look for dead peers, not SHOAL_FT_DETECT later and not only in
 * a wait (MPI calls that all complete at once never reach a wait's look),
 * so the hops cost microseconds on a host and a frame's way across hosts.
 *
 * Deaths go out in rounds: every death learned since the last round (in
 * one peer check, and the handlers run since the one before) is named in
 * one notice (am_notice.h: a set of ranks, up to 256 consecutive ones a
 * frame), so a host of c ranks lost whose deaths a rank learns together
 * costs it one dissemination round, not c.
 *
 * Nothing here runs on the message path while nobody died: progress
 * tests one word (am.tell_due), zero until a death.  Notices are sent
 * from progress and the peer checks of waits, never waiting for room or
 * credits (a peer whose channel is full is tried again at the next
 * progress), and received as system frames.
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

/* One round of notices: the dead ranks it names (one notice's window of
 * them), how many ranks were told, and the ranks still to tell. */
typedef struct am_tell_round {
    struct am_tell_round *next;
    am_notice_t notice;
    uint64_t told;
    uint64_t todo[];
} am_tell_round_t;

int am_tell_init(void)
{
    am.tell_new = calloc((size_t)words(), sizeof(*am.tell_new));
    if (am.tell_new == NULL)
        return base_err(SHOAL_ERR_NOMEM, "SHOAL_FT: death notices of %d "
                        "ranks", am.job->size);
    int status = am_ring_init();
    if (status != SHOAL_OK) {
        free(am.tell_new);
        am.tell_new = NULL;
    }
    return status;
}

void am_tell_death(int rank)
{
    if (am.tell_new == NULL || am.tell_stopped)
        return;
    /* Told with the others learned before the next peer check, in one
     * round (open_rounds). */
    am.tell_new[rank / 64] |= 1ull << (rank % 64);
    am.tell_new_any = 1;
    /* Forward at once: the next progress looks for dead peers, and so
     * does the next turn of a wait. */
    am.last_peer_check = 0;
    am.tell_due = 1;
}

/* The deaths learned since the last round, as rounds: for each notice's
 * window of them, the 1st, 2nd, 4th... rank alive after this one (they
 * are all dead here already, so left out). */
static void open_rounds(void)
{
    int n = am.job->size, me = am.job->rank;
    size_t size = sizeof(am_tell_round_t) + (size_t)words() * sizeof(uint64_t);
    am_tell_round_t **tail = &am.tell_rounds;
    am_notice_t notice;
    uint32_t w = 0;

    while (*tail != NULL)
        tail = &(*tail)->next;
    while (am_notice_next(am.tell_new, (uint32_t)words(), &w, &notice)) {
        am_tell_round_t *round = calloc(1, size);
        if (round == NULL) {
            base_warn("am", "out of memory: the other ranks are not told "
                      "of deaths by this one");
            break;
        }
        int any = 0;
        for (int i = 1, count = 0; i < n; i++) {
            int r = (me + i) % n;
            if (am.peers[r].dead)
                continue;
            count++;
            if ((count & (count - 1)) == 0) {
                round->todo[r / 64] |= 1ull << (r % 64);
                any = 1;
            }
        }
        if (!any) {
            free(round);
            break; /* nobody alive to tell, nor for the next window */
        }
        round->notice = notice;
        *tail = round;
        tail = &round->next;
    }
    for (int i = 0; i < words(); i++)
        am.tell_new[i] = 0;
    am.tell_new_any = 0;
}

/* The next rank alive after r (cyclically) that is neither this rank nor
 * dead, -1 when the walk comes back to this rank first. */
static int next_alive(int r)
{
    int n = am.job->size, me = am.job->rank;

    for (int i = 1; i < n; i++) {
        int x = (r + i) % n;
        if (x == me)
            return -1;
        if (!am.peers[x].dead)
            return x;
    }
    return -1;
}

/* Tell the ranks of round's todo its notice; 1 when all are told. */
static int tell_some(am_tell_round_t *round)
{
    uint64_t *todo = round->todo;
    uint64_t args[WIRE_MAX_ARGS];
    unsigned nargs = am_notice_encode(&round->notice, args);
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
                                 : am_system_try(r, AM_SYS_DEAD, args, nargs);
                if (status == SHOAL_ERR_AGAIN) {
                    left = 1;
                    continue;
                }
                todo[w] &= ~bit;
                if (status == SHOAL_OK) {
                    round->told++;
                    continue;
                }
                /* Dead, or no wire reaches it (which makes it dead
                 * here): the next rank alive after it takes its place,
                 * so the chain of notices goes on past it. */
                int x = next_alive(r);
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
    am_notice_t notice;
    if ((m->kind & WIRE_F_SYSTEM) && m->handler == AM_SYS_DEAD &&
        am_notice_decode(m->args, m->nargs, am.job->size, &notice) &&
        am_notice_has(&notice, am.job->rank))
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

/* "[4 5 6 7]": the ranks a notice names, for the log (cut at cap). */
static void notice_text(const am_notice_t *n, char *out, size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    for (unsigned i = 0; i < n->nwords * 64 && len + 16 < cap; i++)
        if (n->bits[i / 64] >> (i % 64) & 1)
            len += (size_t)snprintf(out + len, cap - len, "%s%llu",
                                    len ? " " : "",
                                    (unsigned long long)n->w0 * 64 + i);
}

void am_tell_progress(void)
{
    if (am.in_handler || am.tell_stopped)
        return;
    if (am.zombies > 0)
        tell_zombies();
    if (am.tell_new_any)
        open_rounds();
    for (am_tell_round_t **at = &am.tell_rounds; *at != NULL;) {
        am_tell_round_t *round = *at;
        if (!tell_some(round)) {
            at = &round->next;
            continue;
        }
        if (BASE_LOG_DEBUG <= base_log_level) {
            char ranks[192];
            notice_text(&round->notice, ranks, sizeof(ranks));
            base_debug("am", "SHOAL_FT: told %llu rank(s) of the death of "
                       "ranks [%s]", (unsigned long long)round->told, ranks);
        }
        *at = round->next;
        free(round);
    }
    am.tell_due = am.tell_new_any || am.tell_rounds != NULL;
}

void am_tell_poll(void)
{
    if (am.in_handler || am.tell_stopped)
        return;
    /* A death learned since the last look: look first (the look tells),
     * so that what the launcher and the pidfds know already goes in the
     * same round.  Otherwise a round waits for room: try it again. */
    if (!am_check_peers_due())
        am_tell_progress();
}

void am_tell_flush(void)
{
    if (am.tell_new != NULL && am.tell_due)
        am_tell_progress();
}

int am_tell_arrive(int src, const wire_msg_t *m)
{
    am_notice_t notice;
    char why[64];

    if (!am_notice_decode(m->args, m->nargs, am.job->size, &notice))
        return 0;
    if (!base_cfg.FT || am.tell_stopped)
        return 1;
    /* Notices go to every rank but the dead ones: one naming this rank
     * says src took it for dead and heard from it since (tell_zombies).
     * Fail-stop: whoever says so, this process ends. */
    if (am_notice_has(&notice, am.job->rank))
        am_fail_stop(src, "it heard from this rank after that");
    /* A rank taken for dead here has no say (it may itself take the
     * living for dead: a link back after the timeout). */
    if (am.peers[src].dead)
        return 1;
    snprintf(why, sizeof(why), "rank %d says so", src);
    for (unsigned i = 0; i < notice.nwords * 64; i++) {
        int dead = (int)(notice.w0 * 64 + i);
        if ((notice.bits[i / 64] >> (i % 64) & 1) && !am.peers[dead].dead)
            am_mark_dead(dead, SHOAL_ERR_PEER_DEAD, why);
    }
    return 1;
}

void am_tell_fini(void)
{
    am.tell_stopped = 1;
    am_ring_fini();
    while (am.tell_rounds != NULL) {
        am_tell_round_t *round = am.tell_rounds;
        am.tell_rounds = round->next;
        free(round);
    }
    free(am.tell_new);
    am.tell_new = NULL;
    am.tell_new_any = 0;
    am.tell_due = 0;
}
