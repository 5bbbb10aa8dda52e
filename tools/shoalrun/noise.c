/*
 * --noise: making ranks unresponsive on purpose, to test and measure code
 * that must tolerate descheduled processes (Pakin's tolerant collectives).
 * Two kinds, per rank:
 *   stop  SIGSTOP, then SIGCONT after a fixed time, on a periodic or
 *         random schedule.  One timerfd in the poll() loop drives every
 *         rank's schedule; a stop's length counts from the SIGSTOP
 *         actually sent, so a late wake-up of shoalrun delays a stop but
 *         never shortens it.
 *   busy  N processes forked from shoalrun that spin (or spin part of
 *         each 10 ms) on the CPU the rank is bound to, for the whole job.
 *         Each leads its own process group, registered with the watchdog,
 *         and dies with shoalrun (parent-death signal) like a rank.
 *         With sched=rr the rank and its busy processes run under
 *         SCHED_RR at one real-time priority: the kernel then switches
 *         between them only at the end of a time slice or when the
 *         running one blocks, never because the other woke up.  That is
 *         the fixed-quantum scheduler of Pakin's experiments (Windows NT,
 *         20 ms), under which a rank that blocks waits out the busy
 *         process's whole slice before it can answer a message; Linux's
 *         default scheduler lets a woken process preempt at once, which
 *         hides most of that unresponsiveness.
 * A stopped rank is still a live process: job.c reaps with waitid(WEXITED)
 * only, and the library's peer checks test existence (pidfd, kill 0), so
 * neither takes a stop for a death.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shoalrun.h"

/* Shorter stops are below what a timer wake-up of shoalrun can honour. */
#define NOISE_MIN_STOP_NS 100000ull
/* A busy process with a duty cycle spins duty% of each period. */
#define NOISE_DUTY_PERIOD_NS 10000000ull

/* ---- parsing a spec ------------------------------------------------------ */

enum {
    KEY_RANK,
    KEY_STOP,
    KEY_EVERY,
    KEY_START,
    KEY_RANDOM,
    KEY_BUSY,
    KEY_DUTY,
    KEY_SCHED,
    NKEYS
};

typedef struct spec {
    shoalrun_noise_plan_t plan;
    unsigned seen;            /* keys given, one bit each (see keys[]) */
    const char *value[NKEYS]; /* their values as written, for messages */
} spec_t;

static const char *const keys[] = {"rank", "stop", "every", "start",
                                   "random", "busy", "duty", "sched"};

#define STOP_KEYS                                                              \
    (1u << KEY_STOP | 1u << KEY_EVERY | 1u << KEY_START | 1u << KEY_RANDOM)
#define BUSY_KEYS (1u << KEY_BUSY | 1u << KEY_DUTY | 1u << KEY_SCHED)

/* A duration with shoal's units (ns, us, ms, s; a bare number is us). */
static int parse_duration(const char *key, const char *text, uint64_t *out)
{
    const base_config_var_t var = {.name = key,
                                   .type = BASE_CONFIG_DURATION,
                                   .defval = "",
                                   .extra = "0:86400s"};
    int64_t v;
    int status = base_config_parse(&var, text, &v);

    if (status == SHOAL_OK)
        *out = (uint64_t)v;
    return status;
}

static int parse_int(const char *key, const char *text, int lo, int hi,
                     const char *suffix, int *out)
{
    char *end;

    errno = 0;
    long v = strtol(text, &end, 10);
    if (*suffix != '\0' && strcmp(end, suffix) == 0)
        end += strlen(suffix);
    if (text[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
        return base_err(SHOAL_ERR_CONFIG,
                        "%s=%s: expected a whole number from %d to %d", key,
                        text, lo, hi);
    *out = (int)v;
    return SHOAL_OK;
}

static int key_index(const char *key)
{
    for (size_t k = 0; k < BASE_ARRAY_SIZE(keys); k++)
        if (strcmp(key, keys[k]) == 0)
            return (int)k;
    return -1;
}

/* One "key" or "key=value" of a spec. */
static int parse_item(spec_t *s, char *item)
{
    char *eq = strchr(item, '=');
    const char *value = eq != NULL ? eq + 1 : NULL;

    if (eq != NULL)
        *eq = '\0';
    int k = key_index(item);
    if (k < 0)
        return base_err(SHOAL_ERR_CONFIG,
                        "unknown key '%s' (expected rank, stop, every, "
                        "start, random, busy, duty or sched)",
                        item);
    if (s->seen & 1u << k)
        return base_err(SHOAL_ERR_CONFIG, "'%s' given twice", item);
    s->seen |= 1u << k;
    if (value == NULL && k != KEY_RANDOM && k != KEY_BUSY)
        return base_err(SHOAL_ERR_CONFIG, "'%s' needs a value: %s=...", item,
                        item);
    if (value != NULL && value[0] == '\0')
        return base_err(SHOAL_ERR_CONFIG, "'%s=' has an empty value", item);
    s->value[k] = value;
    switch (k) {
    case KEY_RANK:
        return SHOAL_OK; /* needs the whole spec checked first */
    case KEY_STOP:
        return parse_duration(item, value, &s->plan.stop_ns);
    case KEY_EVERY:
        return parse_duration(item, value, &s->plan.every_ns);
    case KEY_START:
        return parse_duration(item, value, &s->plan.start_ns);
    case KEY_RANDOM:
        if (value != NULL)
            return base_err(SHOAL_ERR_CONFIG, "'random' takes no value");
        s->plan.random = 1;
        return SHOAL_OK;
    case KEY_BUSY:
        s->plan.busy = 1;
        return value == NULL
                   ? SHOAL_OK
                   : parse_int(item, value, 1, SHOALRUN_NOISE_MAX_BUSY, "",
                               &s->plan.busy);
    case KEY_DUTY:
        return parse_int(item, value, 1, 100, "%", &s->plan.duty);
    default: /* KEY_SCHED */
        if (strcmp(value, "rr") == 0)
            s->plan.sched_rr = 1;
        else if (strcmp(value, "fair") != 0)
            return base_err(SHOAL_ERR_CONFIG,
                            "sched=%s: expected rr (fixed time slices, "
                            "real-time priority) or fair (the default)",
                            value);
        return SHOAL_OK;
    }
}

/* The keys together: a spec says which ranks and exactly one kind. */
static int check_spec(spec_t *s)
{
    shoalrun_noise_plan_t *p = &s->plan;

    if (!(s->seen & 1u << KEY_RANK))
        return base_err(SHOAL_ERR_CONFIG,
                        "missing rank=LIST: which ranks (3, 1+2, 0-3 or all)");
    if ((s->seen & STOP_KEYS) && (s->seen & BUSY_KEYS))
        return base_err(SHOAL_ERR_CONFIG,
                        "a spec either stops ranks (stop=,every=) or adds "
                        "busy processes (busy), not both: give two specs");
    if (s->seen & BUSY_KEYS) {
        if (!(s->seen & 1u << KEY_BUSY))
            return base_err(SHOAL_ERR_CONFIG, "%s= needs busy",
                            (s->seen & 1u << KEY_DUTY) ? "duty" : "sched");
        if (p->duty == 0)
            p->duty = 100;
        return SHOAL_OK;
    }
    if (!(s->seen & STOP_KEYS))
        return base_err(SHOAL_ERR_CONFIG,
                        "nothing to do: add stop=DURATION,every=DURATION "
                        "or busy");
    if (!(s->seen & 1u << KEY_STOP))
        return base_err(SHOAL_ERR_CONFIG,
                        "missing stop=DURATION: how long each stop lasts");
    if (!(s->seen & 1u << KEY_EVERY))
        return base_err(SHOAL_ERR_CONFIG,
                        "missing every=DURATION: how often the rank is "
                        "stopped");
    if (p->stop_ns < NOISE_MIN_STOP_NS)
        return base_err(SHOAL_ERR_CONFIG,
                        "stop=%s is too short: at least 100us (a number "
                        "without a unit is in microseconds)",
                        s->value[KEY_STOP]);
    if (p->stop_ns >= p->every_ns)
        return base_err(SHOAL_ERR_CONFIG,
                        "stop=%s must be shorter than every=%s: the rank "
                        "must run between stops",
                        s->value[KEY_STOP], s->value[KEY_EVERY]);
    return SHOAL_OK;
}

/* One rank number: digits only, within the job; -1 if none. */
static int rank_number(const char *text, size_t len, int nranks)
{
    long v = 0;

    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v = v * 10 + (text[i] - '0');
        if (v > SHOALRUN_MAX_RANKS)
            v = SHOALRUN_MAX_RANKS; /* out of range either way */
    }
    return v < nranks ? (int)v : -2;
}

/* One item of a rank list: "N" or "N-M". */
static int parse_range(const char *item, size_t len, int nranks, int *lo,
                       int *hi)
{
    const char *dash = memchr(item, '-', len);
    size_t lo_len = dash != NULL ? (size_t)(dash - item) : len;

    *lo = rank_number(item, lo_len, nranks);
    *hi = dash != NULL ? rank_number(dash + 1, len - lo_len - 1, nranks) : *lo;
    if (*lo == -1 || *hi == -1)
        return base_err(SHOAL_ERR_CONFIG,
                        "rank '%.*s' is neither a rank number nor a range N-M",
                        (int)len, item);
    if (*lo == -2 || *hi == -2)
        return base_err(SHOAL_ERR_CONFIG,
                        "rank %.*s is out of range: the job has ranks 0 to %d",
                        (int)len, item, nranks - 1);
    if (*hi < *lo)
        return base_err(SHOAL_ERR_CONFIG, "rank range %.*s is empty", (int)len,
                        item);
    return SHOAL_OK;
}

/* Give plan to one rank; a rank gets at most one of each kind. */
static int apply(const shoalrun_noise_plan_t *plan, int rank,
                 shoalrun_noise_plan_t *plans)
{
    shoalrun_noise_plan_t *p = &plans[rank];

    if (plan->stop_ns != 0) {
        if (p->stop_ns != 0)
            return base_err(SHOAL_ERR_CONFIG,
                            "rank %d already has a stop schedule", rank);
        p->stop_ns = plan->stop_ns;
        p->every_ns = plan->every_ns;
        p->start_ns = plan->start_ns;
        p->random = plan->random;
    } else {
        if (p->busy != 0)
            return base_err(SHOAL_ERR_CONFIG,
                            "rank %d already has busy processes", rank);
        p->busy = plan->busy;
        p->duty = plan->duty;
        p->sched_rr = plan->sched_rr;
    }
    return SHOAL_OK;
}

/* LIST: "all", or items "N" and "N-M" joined by '+'. */
static int apply_ranks(const spec_t *s, int nranks,
                       shoalrun_noise_plan_t *plans)
{
    const char *p = s->value[KEY_RANK];
    int status = SHOAL_OK;

    if (strcmp(p, "all") == 0) {
        for (int r = 0; r < nranks && status == SHOAL_OK; r++)
            status = apply(&s->plan, r, plans);
        return status;
    }
    for (;;) {
        size_t len = strcspn(p, "+");
        int lo, hi;
        status = parse_range(p, len, nranks, &lo, &hi);
        for (int r = lo; r <= hi && status == SHOAL_OK; r++)
            status = apply(&s->plan, r, plans);
        if (status != SHOAL_OK || p[len] == '\0')
            return status;
        p += len + 1;
    }
}

static char *trim(char *text)
{
    char *end = text + strlen(text);

    while (*text == ' ' || *text == '\t')
        text++;
    while (end > text && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    return text;
}

int shoalrun_noise_parse(const char *text, int nranks,
                         shoalrun_noise_plan_t *plans)
{
    spec_t s;
    char buf[512];
    char *save = NULL;
    int status = SHOAL_OK;

    memset(&s, 0, sizeof(s));
    if (strlen(text) >= sizeof(buf))
        return base_err(SHOAL_ERR_CONFIG, "too long (at most %zu characters)",
                        sizeof(buf) - 1);
    strcpy(buf, text);
    if (trim(buf)[0] == '\0')
        return base_err(SHOAL_ERR_CONFIG, "empty spec");
    /* strtok_r would skip the empty item of "a,,b"; it is a mistake. */
    for (char *item = buf; status == SHOAL_OK && item != NULL; item = save) {
        save = strchr(item, ',');
        if (save != NULL)
            *save++ = '\0';
        item = trim(item);
        status = item[0] == '\0'
                     ? base_err(SHOAL_ERR_CONFIG, "empty item between commas")
                     : parse_item(&s, item);
    }
    if (status == SHOAL_OK)
        status = check_spec(&s);
    if (status == SHOAL_OK)
        status = apply_ranks(&s, nranks, plans);
    return status;
}

/* ---- the running job ----------------------------------------------------- */

struct shoalrun_noise_rank {
    pid_t pid;        /* 0: not running (not started yet, or exited) */
    int stopped;      /* we sent SIGSTOP and not yet SIGCONT */
    uint64_t next_ns; /* the next SIGSTOP or SIGCONT; UINT64_MAX: none */
    uint64_t due_ns;  /* periodic: when the current period's stop was due */
    uint64_t stopped_at, nstops, stopped_ns;
    uint64_t cut_ns; /* a last stop the job's end cut short (not in nstops) */
    pid_t busy[SHOALRUN_NOISE_MAX_BUSY]; /* 0 once reaped */
    uint64_t started_at;                 /* 0: never started */
    uint64_t busy_until, busy_cpu_ns;
    uint64_t slice_ns; /* sched=rr: the rank's SCHED_RR time slice */
};

static uint64_t rng_next(uint64_t *state)
{
    /* splitmix64: plenty for spreading stops in time. */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* How long the rank runs before its next stop. */
static uint64_t run_time(shoalrun_noise_t *n, const shoalrun_noise_plan_t *p)
{
    uint64_t mean = p->every_ns - p->stop_ns;

    if (!p->random)
        return mean;
    /* Exponential with that mean: stops come as a Poisson process. */
    double u = (double)(rng_next(&n->rng) >> 11) * 0x1p-53;
    return (uint64_t)(-log1p(-u) * (double)mean);
}

static void arm_timer(shoalrun_noise_t *n)
{
    uint64_t next = UINT64_MAX;
    struct itimerspec its;

    if (n->timer_fd < 0)
        return;
    for (int r = 0; r < n->nranks; r++)
        if (n->ranks[r].next_ns < next)
            next = n->ranks[r].next_ns;
    memset(&its, 0, sizeof(its));
    if (next != UINT64_MAX) {
        /* An expiry already past fires at once. */
        its.it_value.tv_sec = (time_t)(next / 1000000000u);
        its.it_value.tv_nsec = (long)(next % 1000000000u);
    }
    timerfd_settime(n->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void rank_continue(shoalrun_noise_rank_t *nr, uint64_t now)
{
    kill(nr->pid, SIGCONT);
    nr->stopped = 0;
    nr->stopped_ns += now - nr->stopped_at;
}

/* A stop the job's end (or the rank's) cut short: reported on its own, so
 * the count and total describe stops of the planned length. */
static void stop_cut(shoalrun_noise_rank_t *nr, uint64_t now)
{
    nr->stopped = 0;
    nr->nstops--;
    nr->cut_ns = now - nr->stopped_at;
}

/* The event of rank r that is due now. */
static void step(shoalrun_noise_t *n, int r, uint64_t now)
{
    const shoalrun_noise_plan_t *p = &n->plans[r];
    shoalrun_noise_rank_t *nr = &n->ranks[r];

    if (!nr->stopped) {
        kill(nr->pid, SIGSTOP);
        nr->stopped = 1;
        nr->stopped_at = now;
        nr->nstops++;
        nr->next_ns = now + p->stop_ns;
        return;
    }
    rank_continue(nr, now);
    if (p->random) {
        nr->next_ns = now + run_time(n, p);
        return;
    }
    /* Keep the period: the next stop is due a period after this one was,
     * skipping periods already over if shoalrun was held up that long. */
    nr->due_ns += p->every_ns;
    if (nr->due_ns <= now)
        nr->due_ns +=
            (now - nr->due_ns) / p->every_ns * p->every_ns + p->every_ns;
    nr->next_ns = nr->due_ns;
}

static void on_timer(void *ctx, int fd, short revents)
{
    shoalrun_noise_t *n = ctx;
    uint64_t expirations;
    ssize_t got = read(fd, &expirations, sizeof(expirations));

    (void)got; /* EAGAIN after a re-arm: the due events decide, not it */
    (void)revents;
    uint64_t now = base_time_ns();
    for (int r = 0; r < n->nranks; r++)
        if (n->ranks[r].next_ns <= now)
            step(n, r, now);
    arm_timer(n);
}

/* Is any rank stopped (with busy set: given busy processes)? */
static int any_plan(const shoalrun_noise_plan_t *plans, int nranks, int busy)
{
    for (int r = 0; r < nranks; r++)
        if (busy ? plans[r].busy != 0 : plans[r].stop_ns != 0)
            return 1;
    return 0;
}

/* A rank of the default scheduler on the CPU of a sched=rr rank runs only
 * while that rank and its busy processes all sleep: say so, once. */
static void warn_rr_sharing(const shoalrun_noise_t *n)
{
    const shoalrun_launch_t *l = n->launch;

    if (l->bind != SHOALRUN_BIND_CORE || l->ncpus <= 0)
        return;
    /* The ranks started here, placed as spawn.c places them. */
    for (int r = l->first; r < l->first + l->nranks; r++) {
        if (!n->plans[r].sched_rr)
            continue;
        for (int o = l->first; o < l->first + l->nranks; o++)
            if ((o - l->first) % l->ncpus == (r - l->first) % l->ncpus &&
                !n->plans[o].sched_rr) {
                shoalrun_say("--noise sched=rr: rank %d shares its CPU with "
                             "rank %d, which runs under SCHED_RR: rank %d "
                             "gets the CPU only when rank %d and its busy "
                             "processes all wait",
                             o, r, o, r);
                return;
            }
    }
}

int shoalrun_noise_init(shoalrun_noise_t *n, const shoalrun_args_t *args,
                        shoalrun_loop_t *loop, shoalrun_watchdog_t *wd,
                        const shoalrun_launch_t *launch)
{
    memset(n, 0, sizeof(*n));
    n->timer_fd = -1;
    if (args->noise == NULL)
        return SHOAL_OK;
    n->ranks = calloc((size_t)args->nranks, sizeof(*n->ranks));
    if (n->ranks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    n->plans = args->noise;
    n->nranks = args->nranks;
    n->report = args->noise_report;
    n->loop = loop;
    n->wd = wd;
    n->launch = launch;
    for (int r = 0; r < n->nranks; r++)
        n->ranks[r].next_ns = UINT64_MAX;
    if (launch->bind != SHOALRUN_BIND_CORE && any_plan(n->plans, n->nranks, 1))
        shoalrun_say("--noise busy with --bind-to none: the busy processes "
                     "are not pinned to their rank's CPU and compete with "
                     "the whole job");
    warn_rr_sharing(n);
    int status = base_random(&n->rng, sizeof(n->rng));
    if (status != SHOAL_OK || !any_plan(n->plans, n->nranks, 0))
        return status;
    n->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (n->timer_fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "timerfd_create: %s",
                        strerror(errno));
    return shoalrun_loop_add(loop, n->timer_fd, POLLIN, on_timer, n);
}

/* ---- busy processes ------------------------------------------------------ */

/* Spin duty% of every NOISE_DUTY_PERIOD_NS, sleep the rest; never returns. */
static void busy_spin(int duty)
{
    uint64_t on = NOISE_DUTY_PERIOD_NS * (uint64_t)duty / 100;

    for (;;) {
        uint64_t t0 = base_time_ns();
        while (base_time_ns() - t0 < on)
            base_cpu_relax();
        if (duty < 100) {
            uint64_t until = t0 + NOISE_DUTY_PERIOD_NS;
            struct timespec ts = {(time_t)(until / 1000000000u),
                                  (long)(until % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
    }
}

/* In the child: become a busy process on rank's CPU; never returns. */
static void busy_main(const shoalrun_launch_t *l, int rank, int duty,
                      int sched_rr)
{
    int null = open("/dev/null", O_RDWR);

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != l->parent)
        _exit(0);
    /* sched=rr: the policy before the name, so that whoever finds us by
     * name sees it.  The parent sets it too, and reports a refusal. */
    if (sched_rr) {
        struct sched_param sp = {
            .sched_priority = sched_get_priority_min(SCHED_RR)};
        sched_setscheduler(0, SCHED_RR, &sp);
    }
    prctl(PR_SET_NAME, "shoalrun-busy");
    /* Hold none of shoalrun's pipes, so none stays open because of us. */
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd);
    if (close_range(3, ~0u, 0) != 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    /* Killable like any process (shoalrun blocks the signals it reads). */
    sigprocmask(SIG_SETMASK, &l->child_mask, NULL);
    /* The rank's own placement: the same call spawn.c makes for it. */
    if (l->bind == SHOALRUN_BIND_CORE)
        shoalrun_bind_rank(rank - l->first, l->cpus, l->ncpus);
    busy_spin(duty);
}

/* sched=rr: pid under SCHED_RR at the lowest real-time priority. */
static int set_rr(pid_t pid, int rank, const char *what)
{
    struct sched_param sp = {.sched_priority = sched_get_priority_min(SCHED_RR)};

    if (sched_setscheduler(pid, SCHED_RR, &sp) == 0)
        return SHOAL_OK;
    int err = errno;
    return base_err(SHOAL_ERR_SYSTEM,
                    "--noise sched=rr: cannot run %s%d under "
                    "SCHED_RR: %s%s",
                    what, rank, strerror(err),
                    err == EPERM ? " (it needs root, CAP_SYS_NICE or an "
                                     "RLIMIT_RTPRIO of at least 1)"
                                   : "");
}

static int start_busy(shoalrun_noise_t *n, int rank)
{
    const shoalrun_noise_plan_t *p = &n->plans[rank];
    shoalrun_noise_rank_t *nr = &n->ranks[rank];

    for (int i = 0; i < p->busy; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return base_err(SHOAL_ERR_SYSTEM,
                            "cannot start a busy process for rank %d: %s", rank,
                            strerror(errno));
        if (pid == 0)
            busy_main(n->launch, rank, p->duty, p->sched_rr);
        setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
        nr->busy[i] = pid;
        shoalrun_watchdog_add_busy(n->wd, pid);
        if (p->sched_rr) {
            int status = set_rr(pid, rank, "a busy process of rank ");
            if (status != SHOAL_OK)
                return status;
        }
    }
    return SHOAL_OK;
}

/* ---- the job's events ---------------------------------------------------- */

int shoalrun_noise_rank_started(shoalrun_noise_t *n, int rank, pid_t pid)
{
    if (n->plans == NULL)
        return SHOAL_OK;
    const shoalrun_noise_plan_t *p = &n->plans[rank];
    shoalrun_noise_rank_t *nr = &n->ranks[rank];
    uint64_t now = base_time_ns();

    nr->pid = pid;
    nr->started_at = now;
    if (p->stop_ns != 0) {
        nr->due_ns = now + p->start_ns + run_time(n, p);
        nr->next_ns = nr->due_ns;
        arm_timer(n);
    }
    if (p->sched_rr) {
        struct timespec ts;
        int status = set_rr(pid, rank, "rank ");
        if (status != SHOAL_OK)
            return status;
        if (sched_rr_get_interval(pid, &ts) == 0)
            nr->slice_ns = (uint64_t)ts.tv_sec * 1000000000u +
                           (uint64_t)ts.tv_nsec;
    }
    return p->busy > 0 ? start_busy(n, rank) : SHOAL_OK;
}

void shoalrun_noise_rank_exited(shoalrun_noise_t *n, int rank)
{
    if (n->plans == NULL)
        return;
    shoalrun_noise_rank_t *nr = &n->ranks[rank];

    /* Killed while stopped: its stop ends here. */
    if (nr->stopped)
        stop_cut(nr, base_time_ns());
    nr->pid = 0;
    nr->next_ns = UINT64_MAX;
    arm_timer(n);
}

void shoalrun_noise_quiet(shoalrun_noise_t *n)
{
    if (n->plans == NULL || n->quiet)
        return;
    uint64_t now = base_time_ns();

    n->quiet = 1;
    for (int r = 0; r < n->nranks; r++) {
        shoalrun_noise_rank_t *nr = &n->ranks[r];
        if (nr->stopped) {
            kill(nr->pid, SIGCONT);
            stop_cut(nr, now);
        }
        nr->next_ns = UINT64_MAX;
        /* Not reaped yet, so the pid is still theirs. */
        for (int i = 0; i < n->plans[r].busy; i++)
            if (nr->busy[i] > 0)
                kill(nr->busy[i], SIGKILL);
    }
    arm_timer(n);
}

int shoalrun_noise_reaped(shoalrun_noise_t *n, pid_t pid,
                          const struct rusage *ru)
{
    for (int r = 0; n->plans != NULL && r < n->nranks; r++) {
        shoalrun_noise_rank_t *nr = &n->ranks[r];
        for (int i = 0; i < n->plans[r].busy; i++) {
            if (nr->busy[i] != pid)
                continue;
            nr->busy[i] = 0;
            nr->busy_until = base_time_ns();
            nr->busy_cpu_ns +=
                (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) *
                    1000000000u +
                (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000u;
            if (!n->quiet)
                shoalrun_say("the busy process (pid %ld) of rank %d ended "
                             "early; the rank runs without it",
                             (long)pid, r);
            return 1;
        }
    }
    return 0;
}

/* ---- the end ------------------------------------------------------------- */

static void reap_busy(shoalrun_noise_t *n)
{
    for (int r = 0; r < n->nranks; r++)
        for (int i = 0; i < n->plans[r].busy; i++) {
            pid_t pid = n->ranks[r].busy[i];
            struct rusage ru;
            if (pid <= 0)
                continue;
            while (wait4(pid, NULL, 0, &ru) < 0 && errno == EINTR)
                ;
            shoalrun_noise_reaped(n, pid, &ru);
        }
}

/* One line for rank r: its stops, its busy processes. */
static void report_rank(const shoalrun_noise_t *n, int r)
{
    const shoalrun_noise_plan_t *p = &n->plans[r];
    const shoalrun_noise_rank_t *nr = &n->ranks[r];
    char line[256] = "";
    size_t o = 0;

    if (p->stop_ns != 0)
        o += (size_t)snprintf(
            line, sizeof(line), "stopped %llu time%s, %.1f ms in total",
            (unsigned long long)nr->nstops, nr->nstops == 1 ? "" : "s",
            (double)nr->stopped_ns / 1e6);
    if (p->stop_ns != 0 && nr->cut_ns != 0 && o < sizeof(line))
        o += (size_t)snprintf(line + o, sizeof(line) - o,
                              " (and one cut short after %.1f ms by the end)",
                              (double)nr->cut_ns / 1e6);
    /* busy_until is 0 if not even the first busy process could start. */
    uint64_t busy_wall =
        nr->busy_until > nr->started_at ? nr->busy_until - nr->started_at : 0;
    if (p->busy != 0 && o < sizeof(line))
        o += (size_t)snprintf(
            line + o, sizeof(line) - o,
            "%s%d busy process%s (duty %d%%) used %.2f CPU s in %.2f s",
            o > 0 ? "; " : "", p->busy, p->busy == 1 ? "" : "es", p->duty,
            (double)nr->busy_cpu_ns / 1e9, (double)busy_wall / 1e9);
    if (p->sched_rr && o < sizeof(line))
        snprintf(line + o, sizeof(line) - o,
                 "; SCHED_RR, time slice %.1f ms", (double)nr->slice_ns / 1e6);
    if (n->report)
        shoalrun_say("noise: rank %d: %s", r, line);
    else
        base_info("noise", "rank %d: %s", r, line);
}

void shoalrun_noise_fini(shoalrun_noise_t *n)
{
    if (n->plans == NULL)
        return;
    shoalrun_noise_quiet(n);
    reap_busy(n);
    for (int r = 0; r < n->nranks; r++)
        if (n->ranks[r].started_at != 0 &&
            (n->plans[r].stop_ns != 0 || n->plans[r].busy != 0))
            report_rank(n, r);
    if (n->timer_fd >= 0) {
        shoalrun_loop_remove(n->loop, n->timer_fd);
        close(n->timer_fd);
    }
    free(n->ranks);
    memset(n, 0, sizeof(*n));
    n->timer_fd = -1;
}
