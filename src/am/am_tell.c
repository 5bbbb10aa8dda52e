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
 * Deaths go out in rounds: every death learned since the last round is
 * named in one notice (am_notice.h: a set of ranks, up to 256 consecutive
 * ones a frame), so a host of c ranks lost whose deaths a rank learns
 * together costs it one dissemination round, not c.  A host's ranks often
 * die a few milliseconds apart, each seen by another watcher, so a rank
 * learns of them at different looks: the first round of a spell opens at
 * once (the first death's news is not delayed), and the deaths learned
 * after it, while deaths keep coming less than TELL_QUIET_NS apart, wait
 * and go out together in one more round when they stop (at most
 * TELL_HOLD_MAX_NS later).  What is still to tell is kept per rank to tell
 * (am_tell_owed_t), so deaths learned while a frame to some rank still
 * waits for room or a connection join that frame.
 *
 * Nothing here runs on the message path while nobody died: progress
 * tests one word (am.tell_due), zero until a death.  Notices are sent
 * from progress and the peer checks of waits, never waiting for room or
 * credits (a peer whose channel is full is tried again soon), and
 * received as system frames.
 *
 * The ring of watches, which makes sure some wire watches every rank, is
 * in am_ring.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am.h"

static int words(void)
{
    return (am.job->size + 63) / 64;
}

/* A death learned less than TELL_QUIET_NS after the last round waits for
 * the next, which opens once no death was learned for TELL_QUIET_NS, or
 * TELL_HOLD_MAX_NS after the wait began: a host's ranks dying a few
 * milliseconds apart cost a rank two rounds, not one each.  Only the news
 * after the first of a spell waits, and not long beside SHOAL_FT's bound
 * (a death known everywhere within SHOAL_FT_DETECT, 50 ms, on a host). */
#define TELL_QUIET_NS 10000000ull
#define TELL_HOLD_MAX_NS 50000000ull
/* While a round waits, sleeps last at most this long (am_nap_hold), so it
 * opens soon after the quiet time has passed. */
#define TELL_HOLD_NAP_NS (TELL_QUIET_NS / 4)
/* A frame that found no room, or a connection opening, is tried again
 * from progress this often (and at every look for dead peers). */
#define TELL_RETRY_NS 200000ull

/* A rank to tell and the deaths still to tell it (a bitmap of the job's
 * ranks), sent in as few notices as their windows allow. */
typedef struct am_tell_owed {
    struct am_tell_owed *next;
    int rank;
    uint64_t dead[];
} am_tell_owed_t;

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
    /* Told with the others learned before the next round (open_round). */
    am.tell_new[rank / 64] |= 1ull << (rank % 64);
    am.tell_new_any = 1;
    am.tell_learned_at = base_time_ns();
    /* Forward at once: the next progress looks for dead peers, and so
     * does the next turn of a wait. */
    am.last_peer_check = 0;
    am.tell_due = 1;
    am.tell_next_at = 0;
}

/* Owe rank r the deaths of dead: to its entry, or a new one at the end
 * (out of memory, r is not told them). */
static void owe(int r, const uint64_t *dead)
{
    am_tell_owed_t **at = &am.tell_owed;

    while (*at != NULL && (*at)->rank != r)
        at = &(*at)->next;
    if (*at == NULL) {
        *at = calloc(1, sizeof(**at) + (size_t)words() * sizeof(uint64_t));
        if (*at == NULL) {
            base_warn("am", "out of memory: rank %d is not told of deaths "
                      "by this one", r);
            return;
        }
        (*at)->rank = r;
    }
    for (int i = 0; i < words(); i++)
        (*at)->dead[i] |= dead[i];
}

/* The deaths learned since the last round, owed to the 1st, 2nd, 4th...
 * rank alive after this one (they are all dead here already, so left
 * out); a rank still owed an earlier round's takes them in the same
 * frames. */
static void open_round(uint64_t now)
{
    int n = am.job->size, me = am.job->rank;

    for (int i = 1, count = 0; i < n; i++) {
        int r = (me + i) % n;
        if (am.peers[r].dead)
            continue;
        count++;
        if ((count & (count - 1)) == 0)
            owe(r, am.tell_new);
    }
    for (int i = 0; i < words(); i++)
        am.tell_new[i] = 0;
    am.tell_new_any = 0;
    am.tell_round_at = now;
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

/* The frames a pass sent, for the debug log: one line per run of frames
 * naming the same ranks (a round's), with how many went. */
typedef struct told_log {
    am_notice_t notice;
    unsigned long long frames;
} told_log_t;

static void told_say(told_log_t *log)
{
    char ranks[192];

    if (log->frames == 0)
        return;
    notice_text(&log->notice, ranks, sizeof(ranks));
    base_debug("am", "SHOAL_FT: told %llu rank(s) of the death of ranks "
               "[%s]", log->frames, ranks);
    log->frames = 0;
}

static void told(told_log_t *log, const am_notice_t *n)
{
    if (BASE_LOG_DEBUG > base_log_level)
        return;
    if (log->frames > 0 &&
        (n->w0 != log->notice.w0 || n->nwords != log->notice.nwords ||
         memcmp(n->bits, log->notice.bits, sizeof(n->bits)) != 0))
        told_say(log);
    log->notice = *n;
    log->frames++;
}

/* Tell o->rank what it is owed, a notice per window: SHOAL_OK when all
 * went, else the status of the send that stopped (what went is no longer
 * owed). */
static int tell_one(am_tell_owed_t *o, told_log_t *log)
{
    uint64_t args[WIRE_MAX_ARGS];
    am_notice_t notice;
    uint32_t w = 0;

    while (am_notice_next(o->dead, (uint32_t)words(), &w, &notice)) {
        unsigned nargs = am_notice_encode(&notice, args);
        int status = am.peers[o->rank].dead
                         ? SHOAL_ERR_PEER_DEAD
                         : am_system_try(o->rank, AM_SYS_DEAD, args, nargs);
        if (status != SHOAL_OK)
            return status;
        for (unsigned i = 0; i < notice.nwords; i++)
            o->dead[notice.w0 + i] = 0;
        told(log, &notice);
    }
    return SHOAL_OK;
}

/* Send what is owed as far as channels have room. */
static void tell_owed(void)
{
    told_log_t log = {.frames = 0};

    for (am_tell_owed_t **at = &am.tell_owed; *at != NULL;) {
        am_tell_owed_t *o = *at;
        int status = tell_one(o, &log);
        if (status == SHOAL_ERR_AGAIN) {
            at = &o->next; /* its channel is full, or its connection opens */
            continue;
        }
        *at = o->next;
        /* Dead, or no wire reaches it (which makes it dead here): the next
         * rank alive after it takes its place, so the chain of notices goes
         * on past it.  Its entry, when new, comes later in this walk; each
         * time further on, the walk ends at this rank. */
        if (status != SHOAL_OK) {
            int x = next_alive(o->rank);
            if (x >= 0)
                owe(x, o->dead);
        }
        free(o);
    }
    told_say(&log);
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

/* End a round's wait: sleeps need not end for it any more. */
static void release_hold(void)
{
    if (am.tell_held_since != 0) {
        am_nap_release();
        am.tell_held_since = 0;
    }
}

void am_tell_progress(uint64_t now)
{
    if (am.in_handler || am.tell_stopped)
        return;
    if (am.zombies > 0)
        tell_zombies();
    /* (Sums, not differences: a death learned in the look that read now
     * was learned after it.) */
    if (am.tell_new_any) {
        if (am.tell_held_since == 0) {
            if (now >= am.tell_round_at + TELL_QUIET_NS) {
                open_round(now); /* the first news of a spell: at once */
            } else {
                am.tell_held_since = now;
                am_nap_hold(TELL_HOLD_NAP_NS);
            }
        } else if (now >= am.tell_learned_at + TELL_QUIET_NS ||
                   now >= am.tell_held_since + TELL_HOLD_MAX_NS) {
            release_hold();
            open_round(now);
        }
    }
    if (am.tell_owed != NULL)
        tell_owed();
    am.tell_due = am.tell_new_any || am.tell_owed != NULL;
    /* Progress tries again at the round's quiet time (or its longest
     * wait), and soon while a frame waits for room or a connection. */
    am.tell_next_at = UINT64_MAX;
    if (am.tell_held_since != 0) {
        uint64_t quiet = am.tell_learned_at + TELL_QUIET_NS;
        uint64_t most = am.tell_held_since + TELL_HOLD_MAX_NS;
        am.tell_next_at = quiet < most ? quiet : most;
    }
    if (am.tell_owed != NULL && now + TELL_RETRY_NS < am.tell_next_at)
        am.tell_next_at = now + TELL_RETRY_NS;
}

void am_tell_poll(void)
{
    if (am.in_handler || am.tell_stopped)
        return;
    /* A death learned since the last look: look first (the look tells),
     * so that what the launcher and the pidfds know already goes in the
     * same round.  Otherwise a round waits for its quiet time, or a frame
     * for room: at their time. */
    if (am_check_peers_due())
        return;
    uint64_t now = base_time_ns();
    if (now >= am.tell_next_at)
        am_tell_progress(now);
}

void am_tell_flush(void)
{
    if (am.tell_new == NULL || !am.tell_due || am.in_handler ||
        am.tell_stopped)
        return;
    /* Nothing is told after this: a round held goes now. */
    if (am.tell_new_any) {
        release_hold();
        open_round(base_time_ns());
    }
    am_tell_progress(base_time_ns());
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
    while (am.tell_owed != NULL) {
        am_tell_owed_t *o = am.tell_owed;
        am.tell_owed = o->next;
        free(o);
    }
    release_hold();
    free(am.tell_new);
    am.tell_new = NULL;
    am.tell_new_any = 0;
    am.tell_due = 0;
}
