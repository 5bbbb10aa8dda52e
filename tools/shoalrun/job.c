/*
 * The job: start the ranks (spawn.c), watch them, and end the job the way
 * the user expects.  Policy, in one place:
 *   - every rank exits 0: status 0;
 *   - the first rank that fails (non-zero exit, killed by a signal, PMI
 *     abort, leaving a barrier the others wait in, or exiting without
 *     finalizing after a PMI init) is reported in one line, the others get
 *     SIGTERM and, after SHOALRUN_GRACE_NS, SIGKILL; the job's status is
 *     that rank's (exit code, 128+signal, abort code; 1 for an exit 0
 *     without finalize);
 *   - but a rank that fails after it finalized needs nothing from the
 *     others any more, and they are probably finishing too (printing the
 *     result, flushing stdio): they get SHOAL_EXIT_GRACE to exit on their
 *     own before that stop, as Hydra waits for them (without a bound); so
 *     do they after a rank exited 0 without finalizing: it did not crash,
 *     and whoever waits for it is told by the library (a dead peer), so
 *     they can say so themselves;
 *   - but a rank that declared itself expendable (the task runtime's
 *     workers, SHOALRUN_PMI_EXPENDABLE) may die or exit early: a line when
 *     it was killed, and the job goes on without it (the runtime reruns
 *     its work, and a new coordinator replaces rank 0); a non-zero exit
 *     code of its own still fails the job, and so does the death of the
 *     last rank alive; across hosts, so may a host whose ranks all are,
 *     rank 0's too (job_hosts.c);
 *   - --timeout: a line, the same stop, status 124;
 *   - SIGINT/SIGTERM to shoalrun go to every rank, then the same stop
 *     quietly; a second one kills at once.
 * Each rank leads its own process group, so a signal or kill reaches what
 * it started too; when a rank ends, its group is killed while its pid is
 * still held as a zombie (waitid WNOWAIT), so a recycled pid is never hit.
 * With --noise (noise.c) ranks may be stopped for a while; a stopped rank
 * is not a dead one, and every way of ending the job continues it first.
 * Across hosts the launcher runs this file as before for the ranks of its
 * own host, if any, and job_hosts.c brings it the others' exits, aborts
 * and output; the policy above is applied there only.  A daemon runs this
 * file too, as a follower (job->daemon): it reports what happens to its
 * ranks and does what the launcher says.
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
#include "job.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

/* ---- stopping ------------------------------------------------------------ */

void job_kill_local(job_t *job, int sig, int groups)
{
    for (int i = job->first; i < job->first + job->nlocal; i++)
        if (job->ranks[i].alive && job->ranks[i].pid > 0)
            kill(groups ? -job->ranks[i].pid : job->ranks[i].pid, sig);
}

static void kill_all(job_t *job, int sig, int groups)
{
    job_kill_local(job, sig, groups);
    job_tell_daemons(job, sig == SIGKILL ? SHOALRUN_F_KILL : SHOALRUN_F_SIGNAL,
                     sig, groups);
}

void job_stop(job_t *job)
{
    if (job->stopping)
        return;
    job->stopping = 1;
    job->kill_deadline = base_time_ns() + SHOALRUN_GRACE_NS;
    /* A stopped rank would not act on SIGTERM until continued. */
    shoalrun_noise_quiet(&job->noise);
    job_kill_local(job, SIGTERM, 1);
    job_tell_daemons(job, SHOALRUN_F_STOP, SIGTERM, 1);
}

/* " on host NAME" across hosts; "" on one. */
const char *job_on_host(const job_t *job, int rank, char *buf, size_t cap)
{
    const shoalrun_host_t *h =
        job->hosts ? shoalrun_hosts_of_rank(job->hosts, rank) : NULL;

    buf[0] = '\0';
    if (h != NULL)
        snprintf(buf, cap, " on host %s", h->name);
    return buf;
}

/* Decide the job's status once: the first failure wins. */
int job_fail(job_t *job, int code)
{
    if (job->failed)
        return 0;
    job->failed = 1;
    job->exit_code = code;
    return !job->quiet;
}

const char *job_others(int n, char *buf, size_t cap)
{
    if (n == 0)
        return "";
    if (n == 1)
        return "; stopping the other rank";
    snprintf(buf, cap, "; stopping the other %d ranks", n);
    return buf;
}

/* ---- events from the PMI server ------------------------------------------ */

void job_report_abort(job_t *job, int rank, pid_t pid, long code,
                      const char *msg)
{
    rank_t *r = &job->ranks[rank];
    char buf[64], host[160];
    /* An exit status has 8 bits; an abort must not read as success. */
    int status = (int)(code & 0xff);

    if (status == 0 && code != 0)
        status = 1;
    if (job_fail(job, status))
        shoalrun_say("rank %d (pid %ld)%s called PMI abort with exit code "
                     "%ld%s%s%s",
                     rank, (long)pid,
                     job_on_host(job, rank, host, sizeof(host)), code,
                     msg[0] ? ": " : "", msg,
                     job_others(job->nalive - r->alive, buf, sizeof(buf)));
    job_stop(job);
}

static void on_abort(void *ctx, int rank, long code, const char *msg)
{
    job_t *job = ctx;

    if (job->daemon) {
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)rank);
        shoalrun_msg_u32(&m, (uint32_t)job->ranks[rank].pid);
        shoalrun_msg_u64(&m, (uint64_t)code);
        shoalrun_msg_str(&m, msg);
        shoalrun_tree_up(job->tree, SHOALRUN_F_ABORT, m.buf, m.len);
        shoalrun_msg_fini(&m);
        return;
    }
    job_report_abort(job, rank, job->ranks[rank].pid, code, msg);
}

static void on_stuck(void *ctx, int rank, const char *why)
{
    job_t *job = ctx;
    char text[512], host[160];

    if (job->stopping)
        return;
    if (job->daemon) {
        snprintf(text, sizeof(text),
                 "rank %d%s %s while other ranks wait "
                 "in a PMI barrier it can no longer enter; stopping the job",
                 rank, job_on_host(job, rank, host, sizeof(host)), why);
        job_fail_up(job, 1, text);
        return;
    }
    if (job_fail(job, 1))
        shoalrun_say("rank %d %s while other ranks wait in a PMI barrier it "
                     "can no longer enter; stopping the job's %d rank%s",
                     rank, why, job->nalive, job->nalive == 1 ? "" : "s");
    job_stop(job);
}

/* ---- reaping ------------------------------------------------------------- */

/* "; waiting up to G s for the other N ranks to exit" (or nothing). */
static const char *job_waiting(int n, char *buf, size_t cap)
{
    double g = (double)base_cfg.EXIT_GRACE / 1e9;

    if (n == 0)
        return "";
    if (n == 1)
        snprintf(buf, cap, "; waiting up to %g s for the other rank to exit",
                 g);
    else
        snprintf(buf, cap, "; waiting up to %g s for the other %d ranks to "
                 "exit", g, n);
    return buf;
}

/* A rank failed after finalizing, or exited 0 without finalizing: the
 * others get SHOAL_EXIT_GRACE to exit on their own before job_stop
 * (check_timers). */
static void job_linger(job_t *job, int rank)
{
    if (job->stopping || job->linger_deadline != 0)
        return;
    if (base_cfg.EXIT_GRACE <= 0 || job->nalive == 0) {
        job_stop(job);
        return;
    }
    job->linger_deadline = base_time_ns() + (uint64_t)base_cfg.EXIT_GRACE;
    job->linger_rank = rank;
}

void job_ft_notify(job_t *job, int rank)
{
    /* SHOAL_FT_NOTICES=0: the ranks' own detection alone (a test aid). */
    if (job->daemon || !base_cfg.FT_NOTICES)
        return;
    if (job->nlocal > 0)
        shoalrun_pmi_notify_dead(&job->pmi, rank);
    if (job->tree != NULL) {
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)rank);
        shoalrun_tree_down(job->tree, SHOALRUN_F_FT_DEAD, m.buf, m.len);
        shoalrun_msg_fini(&m);
    }
}

/* The launcher's policy for a rank that ended, here or on another host. */
void job_report_exit(job_t *job, rank_t *r, pid_t pid, int status, int pmi)
{
    char buf[96], host[160];
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    int finalized = (pmi & SHOALRUN_PMI_FINALIZED) != 0;
    /* An MPI program that ended before MPI_Finalize, status 0 or not (Open
     * MPI's mpirun reports it too); unless the job is being stopped. */
    int early = !finalized && (pmi & SHOALRUN_PMI_INITIALIZED) &&
                sig == 0 && code == 0 && !job->stopping;
    const char *after = finalized ? " after finalizing" : "";
    const char *others =
        (finalized || early) && base_cfg.EXIT_GRACE > 0 && !job->stopping &&
                job->linger_deadline == 0
            ? job_waiting(job->nalive, buf, sizeof(buf))
            : job_others(job->nalive, buf, sizeof(buf));

    job_on_host(job, r->rank, host, sizeof(host));
    /* Not the launcher's SIGTERM or SIGKILL, nor a stop the user asked. */
    if (sig != 0 && !job->quiet && !(job->stopping && sig == SIGTERM) &&
        !(job->killed && sig == SIGKILL))
        job->died = 1;
    /* Any expendable rank may die while another is left (the task
     * runtime's coordinator too: the lowest rank alive takes over); the
     * last one's death ends the job as any rank's would. */
    /* Under --ft, a rank that exits with an error before MPI_Finalize
     * has failed as one killed has (ULFM; Hydra's -disable-auto-cleanup
     * and Open MPI's ULFM go on too). */
    int died_early = !finalized && (pmi & SHOALRUN_PMI_INITIALIZED) &&
                     sig == 0 && code != 0 && base_cfg.FT;
    /* A rank the launcher took for dead on an accusation (ft_accuse.c)
     * was told dead to every rank when it was condemned: its end, which
     * may come after every survivor has finished, is no failure of the
     * job's. */
    int condemned = r->condemned && base_cfg.FT;
    if (((pmi & SHOALRUN_PMI_EXPENDABLE) || r->expendable || condemned) &&
        !job->stopping && !job->failed &&
        (((sig != 0 || died_early) && (job->nalive > 0 || condemned)) ||
         early)) {
        if (base_cfg.FT && !condemned)
            job_ft_notify(job, r->rank);
        if (sig != 0 && base_cfg.FT)
            shoalrun_say("rank %d (pid %ld)%s was killed by signal %d (%s); "
                         "--ft: the job goes on without it",
                         r->rank, (long)pid, host, sig, strsignal(sig));
        else if (died_early)
            shoalrun_say("rank %d (pid %ld)%s exited with code %d before "
                         "MPI_Finalize; --ft: the job goes on without it",
                         r->rank, (long)pid, host, code);
        else if (sig != 0)
            shoalrun_say("rank %d (pid %ld)%s was killed by signal %d (%s); "
                         "it is an expendable task worker: the job goes on",
                         r->rank, (long)pid, host, sig, strsignal(sig));
        return;
    }
    if (sig != 0 && job_fail(job, 128 + sig))
        shoalrun_say("rank %d (pid %ld)%s was killed by signal %d (%s)%s%s",
                     r->rank, (long)pid, host, sig, strsignal(sig), after,
                     others);
    else if (code != 0 && job_fail(job, code))
        shoalrun_say("rank %d (pid %ld)%s exited with code %d%s%s", r->rank,
                     (long)pid, host, code, after, others);
    else if (early && job_fail(job, 1))
        shoalrun_say("rank %d (pid %ld)%s exited with code 0 without calling "
                     "MPI_Finalize (or shoal_finalize) after initializing%s",
                     r->rank, (long)pid, host, others);
    if (sig == 0 && code == 0 && !early)
        return;
    if (finalized || early)
        job_linger(job, r->rank);
    else
        job_stop(job);
}

static void rank_exited(job_t *job, rank_t *r, int status)
{
    r->alive = 0;
    job->nalive--;
    job->nlocal_alive--;
    if (r->rank == 0)
        shoalrun_stdio_rank0_exited(&job->io);
    shoalrun_pmi_drain(&job->pmi, r->rank); /* an abort comes first */
    int pmi = shoalrun_pmi_state(&job->pmi, r->rank);
    if (job->daemon) {
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)r->rank);
        shoalrun_msg_u32(&m, (uint32_t)r->pid);
        shoalrun_msg_u32(&m, (uint32_t)status);
        shoalrun_msg_u32(&m, (uint32_t)pmi);
        shoalrun_tree_up(job->tree, SHOALRUN_F_EXITED, m.buf, m.len);
        shoalrun_msg_fini(&m);
    } else
        job_report_exit(job, r, r->pid, status, pmi);
    shoalrun_pmi_rank_exited(&job->pmi, r->rank);
    shoalrun_ckpt_rank_gone(&job->ckpt, r->rank);
    if (job->nlocal_alive == 0) {
        job->drain_deadline = base_time_ns() + SHOALRUN_DRAIN_NS;
        shoalrun_noise_quiet(&job->noise); /* nothing left to disturb */
    }
}

static rank_t *find_rank(job_t *job, pid_t pid)
{
    for (int i = job->first; i < job->first + job->nlocal; i++)
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
        else if (shoalrun_tree_reaped(job->tree, si.si_pid, status))
            continue;
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
            /* With a checkpoint directory: ask the ranks for one. */
            if (job->ckpt.on) {
                shoalrun_say("got SIGUSR1: asking the ranks for a "
                             "checkpoint");
                shoalrun_ckpt_ask(&job->ckpt, "SIGUSR1");
                break;
            }
            kill_all(job, (int)si.ssi_signo, 0);
            break;
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
    job->ranks[rank].pid = c.pid;
    job->ranks[rank].alive = 1;
    job->nalive++;
    job->nlocal_alive++;
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
    char host[160], text[512];

    if (job->stopping) /* a daemon told to stop before it started */
        return;

    for (int i = job->first; i < job->first + job->nlocal; i++) {
        int status = spawn_rank(job, i);
        if (i == 0 && job->launch.stdin_fd != STDIN_FILENO)
            close(job->launch.stdin_fd);
        if (status != SHOAL_OK) {
            snprintf(text, sizeof(text), "%s%s", shoal_error_detail(),
                     job_on_host(job, i, host, sizeof(host)));
            if (job->daemon)
                job_fail_up(job, SHOALRUN_EXIT_FAILED, text);
            else if (job_fail(job, SHOALRUN_EXIT_FAILED))
                shoalrun_say("%s", text);
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

static void on_ckpt(void *ctx, int rank, int what, long id, long count)
{
    job_t *job = ctx;

    if (job->daemon) {
        /* The launcher coordinates: the line goes up the tree. */
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)rank);
        shoalrun_msg_u32(&m, (uint32_t)what);
        shoalrun_msg_u64(&m, (uint64_t)(int64_t)id);
        shoalrun_msg_u64(&m, (uint64_t)(int64_t)count);
        shoalrun_tree_up(job->tree, SHOALRUN_F_CKPT_UP, m.buf, m.len);
        shoalrun_msg_fini(&m);
        return;
    }
    shoalrun_ckpt_event(&job->ckpt, rank, what, id, count);
}

static void on_accuse(void *ctx, int rank, int accused)
{
    job_t *job = ctx;

    if (job->daemon) {
        /* The launcher decides: the accusation goes up the tree. */
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)rank);
        shoalrun_msg_u32(&m, (uint32_t)accused);
        shoalrun_tree_up(job->tree, SHOALRUN_F_ACCUSE, m.buf, m.len);
        shoalrun_msg_fini(&m);
        return;
    }
    job_ft_accuse(job, rank, accused);
}

static int job_setup(job_t *job, shoalrun_tree_conf_t *conf)
{
    shoalrun_pmi_events_t ev = {.ctx = job,
                                .abort = on_abort,
                                .stuck = on_stuck,
                                .ckpt = on_ckpt,
                                .accuse = on_accuse};
    shoalrun_tree_events_t tev;
    int status = job->kvsname[0] ? SHOAL_OK : make_names(job);

    job_tree_events(job, &tev);

    if (status == SHOAL_OK && job->kvsname[0])
        boot_shm_prefix(job->kvsname, job->shm_prefix, sizeof(job->shm_prefix));
    if (job->hosts != NULL) {
        ev.fence = job_pmi_fence;
        ev.waiting = job_pmi_waiting;
        ev.left = job_pmi_left;
        ev.expendable = job_pmi_expendable;
        shoalrun_hosts_mapping(job->hosts, job->mapping, sizeof(job->mapping));
    }
    if (status == SHOAL_OK)
        status = shoalrun_launch_init(&job->launch, job->args, job->kvsname,
                                      job->first, job->nlocal);
    if (status == SHOAL_OK)
        status = setup_signals(job);
    if (status == SHOAL_OK)
        status = shoalrun_watchdog_start(&job->wd, job->shm_prefix);
    if (status == SHOAL_OK)
        status = shoalrun_noise_init(&job->noise, job->args, &job->loop,
                                     &job->wd, &job->launch);
    if (status == SHOAL_OK)
        status = shoalrun_pmi_init(&job->pmi, &job->loop, job->nranks,
                                   job->first, job->nlocal, job->kvsname,
                                   job->hosts ? job->mapping : NULL, &ev);
    if (status == SHOAL_OK && !job->daemon) {
        status = shoalrun_ckpt_init(&job->ckpt, job->args, &job->pmi);
        if (job->hosts != NULL) {
            job->ckpt.down = job_ckpt_down;
            job->ckpt.down_ctx = job;
        }
    }
    if (status == SHOAL_OK)
        status = shoalrun_stdio_init(&job->io, &job->loop, job->nranks,
                                     job->args->tag_output);
    if (status == SHOAL_OK && job->daemon) {
        job->io.sink = job_output_up;
        job->io.sink_ctx = job;
    }
    /* Before the tree: a daemon's rank 0 needs its pipe when it is fed. */
    if (status == SHOAL_OK)
        status = job_stdin_setup(job);
    if (status == SHOAL_OK && job->args->timeout_s > 0)
        job->deadline = job->args->deadline_ns
                            ? job->args->deadline_ns
                            : base_time_ns() +
                                  (uint64_t)(job->args->timeout_s * 1e9);
    /* The daemons first: starting them takes longest. */
    if (status == SHOAL_OK && conf != NULL)
        status =
            shoalrun_tree_start(&job->tree, conf, &job->loop, &tev, &job->wd);
    return status;
}

static void check_timers(job_t *job)
{
    uint64_t now = base_time_ns();

    if (!job->stopping)
        shoalrun_ckpt_timer(&job->ckpt, now);
    if (!job->stopping)
        job_ft_watch(job, now);
    job_ft_accuse_decide(job, now);
    if (job->deadline && now >= job->deadline && !job->stopping) {
        shoalrun_say("job exceeded the %g s timeout; stopping %d rank%s",
                     job->args->timeout_s, job->nalive,
                     job->nalive == 1 ? "" : "s");
        job_fail(job, SHOALRUN_EXIT_TIMEOUT);
        job->quiet = 1;
        job_stop(job);
    }
    if (job->linger_deadline && !job->stopping &&
        now >= job->linger_deadline) {
        if (job->nalive > 0 && !job->daemon)
            shoalrun_say("%d rank%s still running %g s after rank %d failed; "
                         "stopping %s",
                         job->nalive, job->nalive == 1 ? " is" : "s are",
                         (double)base_cfg.EXIT_GRACE / 1e9, job->linger_rank,
                         job->nalive == 1 ? "it" : "them");
        job_stop(job);
    }
    if (job->stopping && job->nalive > 0 && now >= job->kill_deadline) {
        if (!job->killed && !job->daemon)
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
    if (job->linger_deadline && !job->stopping && job->linger_deadline < next)
        next = job->linger_deadline;
    if (job->stopping && job->nalive > 0 && job->kill_deadline < next)
        next = job->kill_deadline;
    if (job->nlocal_alive == 0 && job->drain_deadline < next)
        next = job->drain_deadline;
    if (!job->stopping && job->ckpt.on && job->ckpt.every_ns &&
        job->ckpt.next_ns < next)
        next = job->ckpt.next_ns;
    if (!job->stopping && job_ft_watch_due(job) != 0 &&
        job_ft_watch_due(job) < next)
        next = job_ft_watch_due(job);
    if (job_ft_accuse_due(job) != 0 && job_ft_accuse_due(job) < next)
        next = job_ft_accuse_due(job);
    if (next == UINT64_MAX)
        return job->tree ? 1000 : -1;
    if (next <= now)
        return 0;
    uint64_t ms = (next - now + 999999) / 1000000;
    if (job->tree && ms > 1000)
        ms = 1000; /* heartbeats */
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int job_running(const job_t *job)
{
    if (job->nlocal_alive > 0 ||
        (job->io.open > 0 && base_time_ns() < job->drain_deadline))
        return 1;
    return job->tree != NULL && !shoalrun_tree_children_done(job->tree);
}

static void job_loop(job_t *job)
{
    while (job_running(job)) {
        if (shoalrun_loop_once(&job->loop, next_wait_ms(job)) != SHOAL_OK) {
            shoalrun_say("%s", shoal_error_detail());
            job_fail(job, SHOALRUN_EXIT_FAILED);
            shoalrun_noise_quiet(&job->noise);
            kill_all(job, SIGKILL, 1);
            reap(job);
            /* What the ranks wrote before they died still goes out. */
            shoalrun_stdio_drain(&job->io, SHOALRUN_DRAIN_NS);
            return;
        }
        if (job->tree != NULL)
            shoalrun_tree_timers(job->tree);
        check_timers(job);
    }
}

/* Daemon: report the subtree done, then wait for the launcher to close. */
static void daemon_finish(job_t *job)
{
    uint64_t until = base_time_ns() + 2 * (uint64_t)base_cfg.HOST_TIMEOUT;

    shoalrun_stdio_fini(&job->io); /* the last partial lines go up first */
    shoalrun_tree_done(job->tree);
    while (!shoalrun_tree_orphaned(job->tree) && base_time_ns() < until &&
           shoalrun_loop_once(&job->loop, 1000) == SHOAL_OK)
        shoalrun_tree_timers(job->tree);
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
    if (removed > 0 && !job->failed && !job->orphaned)
        shoalrun_say("the job left %d /dev/shm/%s* object%s behind; removed",
                     removed, job->shm_prefix, removed == 1 ? "" : "s");
    shoalrun_tree_fini(job->tree);
    job_ft_accuse_fini(job);
    job->tree = NULL;
    shoalrun_watchdog_done(&job->wd);
    shoalrun_ckpt_fini(&job->ckpt);
    shoalrun_pmi_fini(&job->pmi);
    shoalrun_loop_fini(&job->loop);
    if (job->sigfd >= 0)
        close(job->sigfd);
    shoalrun_launch_fini(&job->launch);
    free(job->ranks);
    free(job->rsh_copy);
}

static void job_init(job_t *job, shoalrun_args_t *args)
{
    memset(job, 0, sizeof(*job));
    job->args = args;
    job->nranks = args->nranks;
    job->nlocal = args->nranks;
    job->sigfd = -1;
    job->left_rank = -1;
    job->launch.stdin_fd = STDIN_FILENO;
    job->io.in_fd = job->io.to_rank0 = -1;
    job->wd.fd = -1;
    shoalrun_loop_init(&job->loop);
    job->ranks = calloc((size_t)args->nranks, sizeof(*job->ranks));
}

/* Which ranks run here (all of them on one host).  The launcher answers
 * for every rank, a daemon for its own; local ones count once started. */
static void job_place(job_t *job, const shoalrun_host_t *here)
{
    if (here != NULL || job->hosts != NULL) {
        job->first = here ? here->first : 0;
        job->nlocal = here ? here->count : 0;
    }
    for (int i = 0; job->ranks != NULL && i < job->nranks; i++) {
        rank_t *r = &job->ranks[i];
        r->rank = i;
        r->local = i >= job->first && i < job->first + job->nlocal;
        r->alive = !job->daemon && !r->local;
        /* --ft: any rank may die and the job goes on (docs/FT.md), as an
         * expendable task worker may; unless --restart-on-failure restarts
         * the whole job then. */
        r->expendable = base_cfg.FT != 0 && job->args->restart_max == 0;
        job->nalive += r->alive;
    }
}

static int job_run(job_t *job, shoalrun_tree_conf_t *conf)
{
    if (job->ranks == NULL || job_setup(job, conf) != SHOAL_OK) {
        const char *why = shoal_error_detail();
        if (job->daemon && job->tree != NULL) {
            job_fail_up(job, SHOALRUN_EXIT_FAILED, why);
            shoalrun_tree_done(job->tree);
        } else
            shoalrun_say("cannot start the job: %s", why);
        if (!job->daemon && job->tree != NULL)
            job_tell_daemons(job, SHOALRUN_F_KILL, SIGKILL, 1);
        job_cleanup(job);
        return SHOALRUN_EXIT_FAILED;
    }
    spawn_all(job);
    job_loop(job);
    if (job->daemon && !job->orphaned)
        daemon_finish(job);
    job_cleanup(job);
    return job->failed ? job->exit_code : 0;
}

int shoalrun_job_run(shoalrun_args_t *args, int *died_p)
{
    shoalrun_tree_conf_t conf;
    shoalrun_msg_t jobmsg = {0};
    char self[PATH_MAX];
    job_t job;
    int code;

    job_init(&job, args);
    if (died_p != NULL)
        *died_p = 0;
    job_ft_env();
    job_ft_accuse_env();
    if (args->hosts.n == 0) {
        job_place(&job, NULL);
        code = job_run(&job, NULL);
        if (died_p != NULL)
            *died_p = job.died && !job.quiet;
        return code;
    }
    job.hosts = &args->hosts;
    job_place(&job, shoalrun_hosts_of_node(&args->hosts, 0));
    if (make_names(&job) != SHOAL_OK ||
        job_tree_setup(&job, &conf, &jobmsg, self, sizeof(self)) != SHOAL_OK) {
        shoalrun_say("cannot start the job: %s", shoal_error_detail());
        shoalrun_msg_fini(&jobmsg);
        job_cleanup(&job);
        return SHOALRUN_EXIT_FAILED;
    }
    code = job_run(&job, &conf);
    shoalrun_msg_fini(&jobmsg);
    if (died_p != NULL)
        *died_p = job.died && !job.quiet;
    return code;
}

int shoalrun_job_run_daemon(shoalrun_args_t *args, const char *kvsname,
                            const shoalrun_tree_conf_t *conf)
{
    shoalrun_tree_conf_t c = *conf;
    job_t job;

    job_init(&job, args);
    job.daemon = 1;
    job.hosts = &args->hosts;
    snprintf(job.kvsname, sizeof(job.kvsname), "%s", kvsname);
    job_place(&job, shoalrun_hosts_of_node(&args->hosts, conf->node));
    return job_run(&job, &c);
}
