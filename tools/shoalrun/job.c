/*
 * The job: start the ranks (spawn.c), watch them, and end the job the way
 * the user expects.  Policy, in one place:
 *   - every rank exits 0: status 0;
 *   - the first rank that fails (non-zero exit, killed by a signal, PMI
 *     abort, or leaving a barrier the others wait in) is reported in one
 *     line, the others get SIGTERM and, after SHOALRUN_GRACE_NS, SIGKILL;
 *     the job's status is that rank's (exit code, 128+signal, abort code);
 *   - --timeout: a line, the same stop, status 124;
 *   - SIGINT/SIGTERM to shoalrun go to every rank, then the same stop
 *     quietly; a second one kills at once.
 * Each rank leads its own process group, so a signal or kill reaches what
 * it started too; when a rank ends, its group is killed while its pid is
 * still held as a zombie (waitid WNOWAIT), so a recycled pid is never hit.
 * With --noise (noise.c) ranks may be stopped for a while; a stopped rank
 * is not a dead one, and every way of ending the job continues it first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "shoalrun.h"

typedef struct rank {
    int rank;
    pid_t pid; /* also its process group */
    int alive;
} rank_t;

typedef struct job {
    shoalrun_args_t *args;
    shoalrun_loop_t loop;
    shoalrun_pmi_t pmi;
    shoalrun_stdio_t io;
    shoalrun_watchdog_t wd;
    shoalrun_launch_t launch;
    shoalrun_noise_t noise;
    rank_t *ranks;
    int nranks, nalive;
    char kvsname[64], shm_prefix[64];
    int sigfd;
    uint64_t deadline;        /* --timeout; 0: none */
    uint64_t kill_deadline;   /* when stopping: SIGKILL at this time */
    uint64_t drain_deadline;  /* all ranks gone: stop reading output */
    int stopping;
    int failed;               /* exit_code is decided */
    int exit_code;
    int quiet;                /* the stop was asked for: deaths expected */
    int killed;               /* SIGKILL was needed after the grace */
    int user_signals;
} job_t;

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

/* ---- stopping ------------------------------------------------------------ */

static void kill_all(job_t *job, int sig, int groups)
{
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].alive)
            kill(groups ? -job->ranks[i].pid : job->ranks[i].pid, sig);
}

static void job_stop(job_t *job)
{
    if (job->stopping)
        return;
    job->stopping = 1;
    job->kill_deadline = base_time_ns() + SHOALRUN_GRACE_NS;
    /* A stopped rank would not act on SIGTERM until continued. */
    shoalrun_noise_quiet(&job->noise);
    kill_all(job, SIGTERM, 1);
}

/* Decide the job's status once: the first failure wins. */
static int job_fail(job_t *job, int code)
{
    if (job->failed)
        return 0;
    job->failed = 1;
    job->exit_code = code;
    return !job->quiet;
}

static const char *others(int n, char *buf, size_t cap)
{
    if (n == 0)
        return "";
    if (n == 1)
        return "; stopping the other rank";
    snprintf(buf, cap, "; stopping the other %d ranks", n);
    return buf;
}

/* ---- events from the PMI server ------------------------------------------ */

static void on_abort(void *ctx, int rank, long code, const char *msg)
{
    job_t *job = ctx;
    rank_t *r = &job->ranks[rank];
    char buf[64];
    /* An exit status has 8 bits; an abort must not read as success. */
    int status = (int)(code & 0xff);

    if (status == 0 && code != 0)
        status = 1;
    if (job_fail(job, status))
        shoalrun_say("rank %d (pid %ld) called PMI abort with exit code "
                     "%ld%s%s%s",
                     rank, (long)r->pid, code, msg[0] ? ": " : "", msg,
                     others(job->nalive - r->alive, buf, sizeof(buf)));
    job_stop(job);
}

static void on_stuck(void *ctx, int rank, const char *why)
{
    job_t *job = ctx;

    if (job->stopping)
        return;
    if (job_fail(job, 1))
        shoalrun_say("rank %d %s while other ranks wait in a PMI barrier it "
                     "can no longer enter; stopping the job's %d rank%s",
                     rank, why, job->nalive, job->nalive == 1 ? "" : "s");
    job_stop(job);
}

/* ---- reaping ------------------------------------------------------------- */

static void rank_exited(job_t *job, rank_t *r, int status)
{
    char buf[64];
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

    r->alive = 0;
    job->nalive--;
    if (r->rank == 0)
        shoalrun_stdio_rank0_exited(&job->io);
    shoalrun_pmi_drain(&job->pmi, r->rank); /* an abort comes first */
    if (sig != 0 && job_fail(job, 128 + sig))
        shoalrun_say("rank %d (pid %ld) was killed by signal %d (%s)%s",
                     r->rank, (long)r->pid, sig, strsignal(sig),
                     others(job->nalive, buf, sizeof(buf)));
    else if (code != 0 && job_fail(job, code))
        shoalrun_say("rank %d (pid %ld) exited with code %d%s", r->rank,
                     (long)r->pid, code, others(job->nalive, buf,
                                                sizeof(buf)));
    if (sig != 0 || code != 0)
        job_stop(job);
    shoalrun_pmi_rank_exited(&job->pmi, r->rank);
    if (job->nalive == 0) {
        job->drain_deadline = base_time_ns() + SHOALRUN_DRAIN_NS;
        shoalrun_noise_quiet(&job->noise); /* nothing left to disturb */
    }
}

static rank_t *find_rank(job_t *job, pid_t pid)
{
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].alive && job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

/*
 * Only exits matter here.  SIGCHLD for a rank that was stopped or
 * continued (--noise, or anyone's SIGSTOP) is turned off (SA_NOCLDSTOP,
 * setup_signals), and waitid with WEXITED alone would not report it
 * anyway, so a stopped rank is never taken for a dead one.
 */
static void reap(job_t *job)
{
    for (;;) {
        siginfo_t si;
        struct rusage ru;
        int status;

        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
            if (errno == EINTR)
                continue;
            return; /* ECHILD */
        }
        if (si.si_pid == 0)
            return;
        rank_t *r = find_rank(job, si.si_pid);
        if (r != NULL) {
            kill(-r->pid, SIGKILL); /* what the rank left running */
            shoalrun_noise_rank_exited(&job->noise, r->rank);
        }
        while (wait4(si.si_pid, &status, 0, &ru) < 0 && errno == EINTR)
            ;
        if (r != NULL)
            rank_exited(job, r, status);
        else if (shoalrun_watchdog_is(&job->wd, si.si_pid)) {
            job->wd.pid = 0;
            shoalrun_say("the watchdog process died; cleanup after a kill "
                         "of shoalrun is not guaranteed");
        } else
            shoalrun_noise_reaped(&job->noise, si.si_pid, &ru);
    }
}

/* ---- signals ------------------------------------------------------------- */

static void user_stop(job_t *job, int sig)
{
    if (++job->user_signals > 1) {
        shoalrun_say("got SIG%s again; killing the ranks", sigabbrev_np(sig));
        kill_all(job, SIGKILL, 1);
        return;
    }
    shoalrun_say("got SIG%s; passing it to the ranks (send it again to kill "
                 "them at once)",
                 sigabbrev_np(sig));
    job->quiet = 1;
    shoalrun_noise_quiet(&job->noise); /* so stopped ranks see the signal */
    kill_all(job, sig, 1);
    if (!job->stopping) {
        job->stopping = 1;
        job->kill_deadline = base_time_ns() + SHOALRUN_GRACE_NS;
    }
}

static void on_signal(void *ctx, int fd, short revents)
{
    job_t *job = ctx;
    struct signalfd_siginfo si;

    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        switch (si.ssi_signo) {
        case SIGCHLD:
            reap(job);
            break;
        case SIGINT:
        case SIGTERM:
            user_stop(job, (int)si.ssi_signo);
            break;
        case SIGHUP:
            kill_all(job, SIGHUP, 1);
            break;
        case SIGUSR1:
        case SIGUSR2:
            kill_all(job, (int)si.ssi_signo, 0);
            break;
        default:
            break;
        }
    }
}

/*
 * Block the signals we handle and read them from a signalfd.  A forwarded
 * signal that was ignored when we started (nohup, a background job of a
 * script) stays ignored, for us and for the ranks.  SIGCHLD comes only
 * for exits: --noise stops and continues ranks, each of which would wake
 * us for nothing (exec resets the flag, so the ranks do not inherit it).
 */
static int setup_signals(job_t *job)
{
    sigset_t set;
    struct sigaction sa;
    struct sigaction chld = {.sa_handler = SIG_DFL, .sa_flags = SA_NOCLDSTOP};

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGPIPE); /* EPIPE instead; stays pending, unread */
    for (size_t i = 0; i < BASE_ARRAY_SIZE(forwarded); i++)
        if (sigaction(forwarded[i], NULL, &sa) == 0 &&
            sa.sa_handler != SIG_IGN)
            sigaddset(&set, forwarded[i]);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "sigprocmask: %s", strerror(errno));
    sigaction(SIGCHLD, &chld, NULL);
    sigdelset(&set, SIGPIPE);
    job->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job->sigfd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "signalfd: %s", strerror(errno));
    return shoalrun_loop_add(&job->loop, job->sigfd, POLLIN, on_signal, job);
}

/* ---- starting ranks ------------------------------------------------------ */

static int spawn_rank(job_t *job, int rank)
{
    shoalrun_child_t c;
    int status = shoalrun_spawn(&job->launch, rank, &c);

    if (status != SHOAL_OK)
        return status;
    job->ranks[rank] = (rank_t){rank, c.pid, 1};
    job->nalive++;
    shoalrun_watchdog_add(&job->wd, c.pid);
    status = shoalrun_pmi_attach(&job->pmi, rank, c.pmi_fd);
    int status2 = shoalrun_stdio_attach(&job->io, rank, c.out_fd, c.err_fd);
    if (status == SHOAL_OK)
        status = status2;
    if (status == SHOAL_OK)
        status = shoalrun_noise_rank_started(&job->noise, rank, c.pid);
    return status;
}

static void spawn_all(job_t *job)
{
    for (int i = 0; i < job->nranks; i++) {
        int status = spawn_rank(job, i);
        if (i == 0 && job->launch.stdin_fd != STDIN_FILENO)
            close(job->launch.stdin_fd);
        if (status != SHOAL_OK) {
            shoalrun_say("%s", shoal_error_detail());
            job_fail(job, SHOALRUN_EXIT_FAILED);
            job->quiet = 1;
            job_stop(job);
            return;
        }
    }
}

/* ---- setup and the loop -------------------------------------------------- */

static int make_names(job_t *job)
{
    unsigned char rnd[8];
    char hex[17];
    int status = base_random(rnd, sizeof(rnd));

    if (status != SHOAL_OK)
        return status;
    base_hex_encode(rnd, sizeof(rnd), hex);
    snprintf(job->kvsname, sizeof(job->kvsname), "shoalrun-%s", hex);
    boot_shm_prefix(job->kvsname, job->shm_prefix, sizeof(job->shm_prefix));
    return SHOAL_OK;
}

static int job_setup(job_t *job)
{
    shoalrun_pmi_events_t ev = {job, on_abort, on_stuck};
    int status = make_names(job);

    if (status == SHOAL_OK)
        status = shoalrun_launch_init(&job->launch, job->args, job->kvsname);
    if (status == SHOAL_OK)
        status = setup_signals(job);
    if (status == SHOAL_OK)
        status = shoalrun_watchdog_start(&job->wd, job->shm_prefix);
    if (status == SHOAL_OK)
        status = shoalrun_noise_init(&job->noise, job->args, &job->loop,
                                     &job->wd, &job->launch);
    if (status == SHOAL_OK)
        status = shoalrun_pmi_init(&job->pmi, &job->loop, job->nranks,
                                   job->kvsname, &ev);
    if (status == SHOAL_OK)
        status = shoalrun_stdio_init(&job->io, &job->loop, job->nranks,
                                     job->args->tag_output);
    if (status == SHOAL_OK)
        status = shoalrun_stdio_stdin_for_rank0(&job->io,
                                                &job->launch.stdin_fd);
    if (status == SHOAL_OK && job->args->timeout_s > 0)
        job->deadline = base_time_ns() +
                        (uint64_t)(job->args->timeout_s * 1e9);
    return status;
}

static void check_timers(job_t *job)
{
    uint64_t now = base_time_ns();

    if (job->deadline && now >= job->deadline && !job->stopping) {
        shoalrun_say("job exceeded the %g s timeout; stopping %d rank%s",
                     job->args->timeout_s, job->nalive,
                     job->nalive == 1 ? "" : "s");
        job_fail(job, SHOALRUN_EXIT_TIMEOUT);
        job->quiet = 1;
        job_stop(job);
    }
    if (job->stopping && job->nalive > 0 && now >= job->kill_deadline) {
        if (!job->killed)
            shoalrun_say("%d rank%s still running %g s after SIGTERM; "
                         "killing %s",
                         job->nalive, job->nalive == 1 ? " is" : "s are",
                         SHOALRUN_GRACE_NS / 1e9,
                         job->nalive == 1 ? "it" : "them");
        job->killed = 1;
        kill_all(job, SIGKILL, 1);
        job->kill_deadline = now + SHOALRUN_GRACE_NS; /* and again later */
    }
}

static int next_wait_ms(const job_t *job)
{
    uint64_t now = base_time_ns(), next = UINT64_MAX;

    if (job->deadline && !job->stopping)
        next = job->deadline;
    if (job->stopping && job->nalive > 0 && job->kill_deadline < next)
        next = job->kill_deadline;
    if (job->nalive == 0 && job->drain_deadline < next)
        next = job->drain_deadline;
    if (next == UINT64_MAX)
        return -1;
    if (next <= now)
        return 0;
    uint64_t ms = (next - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void job_loop(job_t *job)
{
    while (job->nalive > 0 ||
           (job->io.open > 0 && base_time_ns() < job->drain_deadline)) {
        if (shoalrun_loop_once(&job->loop, next_wait_ms(job)) != SHOAL_OK) {
            shoalrun_say("%s", shoal_error_detail());
            job_fail(job, SHOALRUN_EXIT_FAILED);
            shoalrun_noise_quiet(&job->noise);
            kill_all(job, SIGKILL, 1);
            reap(job);
            return;
        }
        check_timers(job);
    }
}

static void job_cleanup(job_t *job)
{
    shoalrun_stdio_fini(&job->io);
    /* Its summary comes after the ranks' output; its busy processes are
     * reaped before the watchdog is told all is clean. */
    shoalrun_noise_fini(&job->noise);
    /* The ranks' groups were killed as each rank ended; sweep after.  A
     * job that succeeded should have removed its own objects: say so. */
    int removed = shoalrun_sweep_shm(job->shm_prefix);
    if (removed > 0 && !job->failed)
        shoalrun_say("the job left %d /dev/shm/%s* object%s behind; removed",
                     removed, job->shm_prefix, removed == 1 ? "" : "s");
    shoalrun_watchdog_done(&job->wd);
    shoalrun_pmi_fini(&job->pmi);
    shoalrun_loop_fini(&job->loop);
    if (job->sigfd >= 0)
        close(job->sigfd);
    shoalrun_launch_fini(&job->launch);
    free(job->ranks);
}

int shoalrun_job_run(shoalrun_args_t *args)
{
    job_t job;

    memset(&job, 0, sizeof(job));
    job.args = args;
    job.nranks = args->nranks;
    job.sigfd = -1;
    job.launch.stdin_fd = STDIN_FILENO;
    job.io.in_fd = job.io.to_rank0 = -1;
    job.wd.fd = -1;
    shoalrun_loop_init(&job.loop);
    job.ranks = calloc((size_t)args->nranks, sizeof(*job.ranks));
    if (job.ranks == NULL || job_setup(&job) != SHOAL_OK) {
        shoalrun_say("cannot start the job: %s", shoal_error_detail());
        job_cleanup(&job);
        return SHOALRUN_EXIT_FAILED;
    }
    spawn_all(&job);
    job_loop(&job);
    job_cleanup(&job);
    return job.failed ? job.exit_code : 0;
}
