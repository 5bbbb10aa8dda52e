/*
 * Waiting without spinning against the scheduler.
 *
 * Three phases, measured from the start of a wait:
 *   spin   (SHOAL_WAIT_SPIN): poll in a tight loop; the cheapest reaction
 *          when the peer runs on another core.  Between full polls it only
 *          looks at the shared-memory head cells (wire_shm_pending: a few
 *          loads, where a full poll and the caller's check run some 150
 *          instructions) and pauses (~30 ns here) only after SPIN_PEEKS
 *          empty looks, so an arriving frame is seen within nanoseconds.
 *          Skipped when this host has more ranks than CPUs: the peer we
 *          wait for may need our core.
 *   yield  (until SHOAL_WAIT_BLOCK): poll and give the core away.  When
 *          oversubscribed, yield after every poll (a yield to a rank on the
 *          same core costs about a microsecond, far less than a sleep);
 *          otherwise yield now and then so other work can run.  Back from
 *          a yield, look at the condition before polling the channels:
 *          the ranks that ran meanwhile often made it true (a flag of a
 *          shared-memory collective), and the poll would only delay the
 *          return.
 *   sleep: arm the doorbells and sleep until a sender rings, waking every
 *          SHOAL_PEER_CHECK to see whether the peers are still alive.
 * SHOAL_WAIT=poll never leaves the first phase; SHOAL_WAIT=block goes to
 * sleep at once.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include "am.h"

#define AM_WAIT_ADAPTIVE 0
#define AM_WAIT_POLL 1
#define AM_WAIT_BLOCK 2

/* Polls before a wait reads the clock at all, and between clock reads
 * while spinning (a clock read costs ~30 ns in a VM). */
#define FAST_POLLS 32
#define SPIN_CLOCK_EVERY 16
#define SPIN_PEEKS 16
/* When a rank has its own core: polls between yields in the yield phase. */
#define YIELD_EVERY 64
/* When ranks share cores: yields between clock reads. */
#define YIELD_CLOCK_EVERY 8

typedef struct wait_plan {
    uint64_t spin_ns, block_ns;
} wait_plan_t;

static wait_plan_t plan(void)
{
    wait_plan_t p = {(uint64_t)base_cfg.WAIT_SPIN, (uint64_t)base_cfg.WAIT_BLOCK};

    switch (base_cfg.WAIT) {
    case AM_WAIT_POLL:
        p.spin_ns = p.block_ns = UINT64_MAX;
        break;
    case AM_WAIT_BLOCK:
        p.spin_ns = p.block_ns = 0;
        break;
    default:
        if (am.oversubscribed)
            p.spin_ns = 0;
        if (p.block_ns < p.spin_ns)
            p.block_ns = p.spin_ns;
        break;
    }
    return p;
}

/* Without the doorbell socket or another wire's descriptor watched, a
 * sleep in the first network wire cannot be ended by the wire it stands
 * for: nap briefly instead. */
#define NET_BLIND_NAP_NS 1000000ull

static void check_peers_now(uint64_t now);

int am_check_peers_due(void)
{
    uint64_t now = base_time_ns();

    if (now - am.last_peer_check < am.peer_check)
        return 0;
    check_peers_now(now);
    return 1;
}

static void check_peers_now(uint64_t now)
{
    am.last_peer_check = now;
    /* shoalrun --ft tells every rank of a death it saw (docs/FT.md). */
    if (BASE_UNLIKELY(base_cfg.FT)) {
        int r;
        while ((r = boot_failed_rank()) >= 0)
            if (r < am.job->size && r != am.job->rank)
                am_mark_dead(r, SHOAL_ERR_PEER_DEAD,
                             am.peers[r].suspect
                                 ? "the launcher took it for dead"
                                 : "the launcher saw its process end");
        if (BASE_UNLIKELY(am.suspects > 0))
            am_accuse_check(now);
    }
    wire_shm_ops.check_peers();
    for (int i = 0; i < am.nnet; i++)
        am.net[i].ops->check_peers();
    if (am.wait_hook != NULL)
        am.wait_hook();
    /* What this rank learned, every other rank learns; the ring keeps a
     * wire watching the next rank on another host (am_tell.c). */
    if (BASE_UNLIKELY(base_cfg.FT)) {
        if (am.tell_due || am.zombies > 0)
            am_tell_progress(now);
        am_ring_beat(now);
    }
}

/*
 * Arm every wire's doorbell; 1 when frames wait already.  The network
 * wires' timers are read here, under the caller's lock, for a sleep that
 * may run outside it (am_sleep).
 */
static int arm_wires(void)
{
    uint64_t nap = am.net_blind ? NET_BLIND_NAP_NS : UINT64_MAX;

    if (am.nap_holds > 0 && am.hold_nap < nap)
        nap = am.hold_nap;
    if (wire_shm_ops.arm())
        return 1;
    for (int i = 0; i < am.nnet; i++) {
        const wire_ops_t *w = am.net[i].ops;
        uint64_t t;
        if (w->arm())
            return 1;
        t = w->timer_ns();
        nap = t < nap ? t : nap;
    }
    am.net_nap = nap;
    return 0;
}

/* Arm the doorbells; 1 when we may sleep, 0 when there is work already. */
static int arm(wire_conn_t *blocked)
{
    if (arm_wires())
        return 0;
    if (blocked != NULL && blocked->ops->want_space(blocked))
        return 0;
    for (base_list_t *e = am.pending_peers.next; e != &am.pending_peers;
         e = e->next) {
        am_peer_t *p = BASE_CONTAINER_OF(e, am_peer_t, pending_link);
        if (p->conn->ops->want_space(p->conn))
            return 0;
    }
    /* Peers an upper layer's try found full (am_send.c).  Once room has
     * appeared the entry goes: the caller retries, and a retry that fails
     * again puts it back, so an abandoned entry costs one wake-up. */
    for (base_list_t *e = am.space_wanted.next, *next;
         e != &am.space_wanted; e = next) {
        am_peer_t *p = BASE_CONTAINER_OF(e, am_peer_t, space_link);
        next = e->next;
        if (p->dead) {
            base_list_remove(e);
            continue;
        }
        if (p->conn->ops->want_space(p->conn)) {
            base_list_remove(e);
            return 0;
        }
    }
    return 1;
}

/* Sleep on every wire at once: with network wires up, in the first one,
 * which also watches the shared-memory doorbell's socket and the others'
 * descriptors (am_wires.c), no longer than their timers allow. */
void am_nap_hold(uint64_t nap_ns)
{
    if (am.nap_holds++ == 0 || nap_ns < am.hold_nap)
        am.hold_nap = nap_ns;
}

void am_nap_release(void)
{
    if (am.nap_holds > 0)
        am.nap_holds--;
}

static void sleep_wires(uint64_t nap)
{
    if (am.nnet == 0) {
        if (am.nap_holds > 0 && am.hold_nap < nap)
            nap = am.hold_nap;
        wire_shm_ops.sleep(nap);
        return;
    }
    if (nap > am.net_nap)
        nap = am.net_nap;
    am.net[0].ops->sleep(nap);
}

static void disarm(void)
{
    wire_shm_ops.disarm();
    for (int i = 0; i < am.nnet; i++) {
        am.net[i].ops->disarm();
        am.net[i].countdown = 0; /* look at it on the next progress */
    }
}

int am_sleep_arm(void)
{
    return !arm(NULL);
}

void am_sleep(uint64_t nap)
{
    sleep_wires(nap);
}

void am_sleep_disarm(void)
{
    disarm();
}

#define WAIT_CHECK_WARN 0
#define WAIT_CHECK_FATAL 1
#define WAIT_CHECK_OFF 2
/* Naps shorter than this are not checked: a deadline near, or the network
 * wires' blind naps and timers, end them by design. */
#define WAIT_CHECK_MIN_NAP 10000000ull

/*
 * SHOAL_WAIT_CHECK: every event a sleeper waits for rings its doorbell (a
 * frame, room in a channel it asked about, a flag a peer raised), so a
 * sleep that lasted its whole nap, with no ring, while the event was
 * already there, is a lost wake-up: the rank stalled for a peer check
 * (SHOAL_PEER_CHECK) for nothing.  Called after such a sleep, before the
 * doorbells are disarmed; returns ready's answer.
 */
/* How long a late ring still clears a sleeper of the suspicion. */
#define LOST_WAKEUP_GRACE_MS 100

static int check_lost_wakeup(am_ready_fn_t ready, void *arg,
                             wire_conn_t *blocked, uint64_t nap, int deaths)
{
    static int warned;
    const char *what = NULL;
    int r;

    if (wire_shm_rung())
        return 0; /* woken in time (arm() below would hide the ring) */
    /* Frames and room first: ready() may try sends and so ask about
     * channels the sleep did not watch. */
    r = 0;
    if (wire_shm_pending())
        what = "a shared-memory frame was waiting";
    else if (!arm(blocked))
        what = "a channel it waited on had room";
    else if ((r = ready(arg, 0)) != 0)
        what = "the condition it waited for was true";
    /* A death rings nobody: it is learned by looking (the peer check that
     * ended the nap, or the look just now), and the condition it makes
     * true (an operation failed) was no lost wake-up. */
    if (what == NULL || am.deaths != deaths)
        return r;
    /* The waker may have made the event and not rung yet: a consumer
     * preempted between releasing a cell and ringing (a loaded host) ends
     * a nap's last moments this way.  Its ring, to the doorbell the look
     * above armed again, still counts if it comes within a grace. */
    for (int i = 0; i < LOST_WAKEUP_GRACE_MS; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (wire_shm_rung())
            return r;
    }
    if (base_cfg.WAIT_CHECK == WAIT_CHECK_FATAL)
        base_fatal("lost wake-up: rank %d slept %llu ms although %s "
                   "(SHOAL_WAIT_CHECK=fatal)", am.job->rank,
                   (unsigned long long)(nap / 1000000u), what);
    if (!warned) {
        warned = 1;
        base_warn("am", "lost wake-up: rank %d slept %llu ms although %s; "
                        "please report this (SHOAL_WAIT_CHECK=off hides "
                        "it)", am.job->rank,
                  (unsigned long long)(nap / 1000000u), what);
    }
    return r;
}

/*
 * Sleep until a doorbell rings, the deadline, or the next peer check.
 * Returns non-zero (ready's answer) when the condition came true while
 * arming: a condition set by a peer without a frame (a barrier release)
 * is caught by this second look, made after the doorbell is armed.
 */
static int sleep_once(am_ready_fn_t ready, void *arg, wire_conn_t *blocked,
                      uint64_t now, uint64_t deadline)
{
    uint64_t nap = am.peer_check;
    int r = 0;

    if (deadline != UINT64_MAX && deadline - now < nap)
        nap = deadline - now;
    if (arm(blocked)) {
        uint32_t gen = am.wanted_gen;
        int deaths = am.deaths;

        r = ready(arg, 0);
        /* That look may have tried a send and left its peer waiting for
         * room (am_send.c): a channel the arming above did not ask to be
         * rung for.  Ask now, or the room made meanwhile goes unrung. */
        if (r == 0 && gen != am.wanted_gen && !arm(blocked)) {
            disarm();
            return 0;
        }
        if (r == 0) {
            am.stats.sleeps++;
            sleep_wires(nap);
            if (base_cfg.WAIT_CHECK != WAIT_CHECK_OFF &&
                nap >= WAIT_CHECK_MIN_NAP && base_time_ns() - now >= nap)
                r = check_lost_wakeup(ready, arg, blocked, nap, deaths);
        }
    }
    disarm();
    return r;
}

static int block(am_ready_fn_t ready, void *arg, wire_conn_t *blocked,
                 int report_deaths, int64_t timeout_ns, int *marked)
{
    wait_plan_t p = plan();
    uint64_t start = 0, now = 0, deadline = UINT64_MAX;
    /* When ranks share cores, the peer may need ours: hand it over soon. */
    uint32_t fast_polls = am.oversubscribed ? 1 : FAST_POLLS;
    uint64_t sent = am.stats.requests_sent;
    int r, yielded = 0;

    for (uint32_t iter = 1;; iter++) {
        int handled;

        /* Back from a yield, where the other ranks of this CPU ran: what
         * we wait for is often true now (they raised a flag), and a look
         * costs less than the poll of every channel, which waits till we
         * return. */
        if (yielded) {
            yielded = 0;
            r = ready(arg, 0);
            if (r != 0)
                return r > 0 ? SHOAL_OK : r;
        }
        handled = am_progress();
        r = ready(arg, handled);
        if (r != 0)
            return r > 0 ? SHOAL_OK : r;
        /* Frames keep coming or going (a long transfer, received or
         * pushed from the caller's progress): the wait starts over, so a
         * wait that makes progress never reaches the sleep phase, whose
         * arming costs a system call (and a membarrier) each time. */
        if ((handled > 0 || am.stats.requests_sent != sent) && start != 0) {
            start = 0;
            iter = 1;
        }
        sent = am.stats.requests_sent;
        if (report_deaths && am.unreported_deaths > 0) {
            am.unreported_deaths--;
            return base_err(SHOAL_ERR_PEER_DEAD,
                            "a peer died while this rank waited (see the "
                            "log for which)");
        }
        /* Most waits end within a few polls: read the clock (tens of ns
         * in a VM) only once this one has lasted a little. */
        if (iter < fast_polls)
            continue;
        if (start == 0) {
            if (!*marked) {
                wire_shm_waiting(1); /* peers: we answer at once */
                *marked = 1;
            }
            start = now = base_time_ns();
            if (timeout_ns >= 0)
                deadline = start + (uint64_t)timeout_ns;
        }
        if (now - start < p.spin_ns && iter % SPIN_CLOCK_EVERY != 0) {
            unsigned k = 0;
            while (k < SPIN_PEEKS && !wire_shm_pending())
                k++;
            if (k == SPIN_PEEKS)
                base_cpu_relax();
            continue;
        }
        /* Sharing cores, every turn counts: yield at once, and read the
         * clock only every few yields (each takes a microsecond or more). */
        if (am.oversubscribed && p.block_ns > 0 && iter % YIELD_CLOCK_EVERY &&
            now - start < p.block_ns) {
            sched_yield();
            yielded = 1;
            continue;
        }
        now = base_time_ns();
        if (now >= deadline)
            return base_err(SHOAL_ERR_TIMEOUT, "wait timed out after %lld ns",
                            (long long)timeout_ns);
        /* Hydra's SIGUSR1 ended the sleep: a rank died (docs/FT.md). */
        if (now - am.last_peer_check >= am.peer_check ||
            (BASE_UNLIKELY(base_cfg.FT) && boot_launcher_news()))
            check_peers_now(now);
        if (now - start < p.spin_ns)
            continue;
        if (now - start < p.block_ns) {
            /* Oversubscribed: the rank we wait for may need this core. */
            if (am.oversubscribed || iter % YIELD_EVERY == 0) {
                sched_yield();
                yielded = 1;
            } else {
                base_cpu_relax();
            }
            continue;
        }
        r = sleep_once(ready, arg, blocked, now, deadline);
        if (r != 0)
            return r > 0 ? SHOAL_OK : r;
    }
}

int am_block(am_ready_fn_t ready, void *arg, wire_conn_t *blocked,
             int report_deaths, int64_t timeout_ns)
{
    int marked = 0;
    int r = block(ready, arg, blocked, report_deaths, timeout_ns, &marked);

    if (marked)
        wire_shm_waiting(-1);
    return r;
}

static int any_handled(void *arg, int handled)
{
    int *count = arg;

    *count += handled;
    return *count > 0;
}

int shoal_wait(shoal_ep_t *ep, int64_t timeout_ns)
{
    int count = 0;
    int status = am_check_entry("shoal_wait", 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID, "shoal_wait: not an endpoint");
    status = am_block(any_handled, &count, NULL, 1, timeout_ns);
    return status != SHOAL_OK ? status : count;
}
