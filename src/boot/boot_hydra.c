/*
 * The rank's guardian process under launchers other than shoalrun
 * (docs/FT.md, "Under MPICH's Hydra" and "Under Slurm and PMIx
 * launchers"), and what Hydra needs besides.
 *
 * Under SHOAL_FT, shoalrun keeps SHOAL_FT_TIMEOUT's stop watch for the
 * ranks it starts.  Other launchers keep none, so when the rank's parent
 * is Hydra's proxy or Slurm's step daemon, or a PMIx launcher started it,
 * boot_init forks first: the process the launcher started stays as a
 * guardian that waits for the rank (the child, which goes on into the
 * library), kills it when it has been stopped past SHOAL_FT_TIMEOUT, and
 * leaves as the rank did.
 *
 * With -disable-auto-cleanup, Hydra's proxy (hydra_pmi_proxy 4.0,
 * pm/pmiserv/pmip.c and pmip_cb.c) reacts to a rank's death in two ways:
 *   - the rank's PMI socket closing: it sends SIGUSR1 to the process group
 *     of every rank it started and tells mpiexec, which adds the rank to
 *     the list it answers for the key PMI_dead_processes and sends SIGUSR1
 *     through the other hosts' proxies;
 *   - reaping the rank: when waitpid says it was killed by a signal
 *     (WIFSIGNALED), the proxy sends SIGKILL to every rank it started,
 *     whatever -disable-auto-cleanup says.  An exit status, even 137, does
 *     not do that.
 * So under Hydra the guardian exits with the rank's status, 128 + the
 * signal when a signal killed it; the survivors catch SIGUSR1 (a handler
 * that only sets a flag) and the progress path, on the flag, reads
 * PMI_dead_processes (boot_hydra_read_dead, through the PMI-1 or PMI-2
 * backend).  Under Slurm and PMIx launchers the guardian dies as the rank
 * did (the same signal), so they report the rank's own fate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot_internal.h"
#include "boot/boot_pmi1.h"

#define HYDRA_PROXY_COMM "hydra_pmi_proxy"
/* Slurm's step daemon, the parent of the tasks srun starts. */
#define SLURM_STEPD_COMM "slurmstepd"

static struct sigaction usr1_prev;
static int usr1_flag;     /* set by the handler, taken by the progress path */
static int usr1_watching; /* the handler is installed */

/* Whether the parent process's name (/proc/PPID/comm) is comm. */
static int parent_is(const char *comm)
{
    char path[64], got[32];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)getppid());
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int ok = fgets(got, sizeof(got), f) != NULL;
    fclose(f);
    if (!ok)
        return 0;
    got[strcspn(got, "\n")] = '\0';
    return strcmp(got, comm) == 0;
}

int boot_hydra_parent(void)
{
    return parent_is(HYDRA_PROXY_COMM);
}

int boot_foreign_parent(void)
{
    return parent_is(SLURM_STEPD_COMM) || boot_has_pmix();
}

/* Threads of this process (1 when /proc cannot say: assume alone). */
static int thread_count(void)
{
    char line[128];
    int n = 1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return 1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

static void on_usr1(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;

    __atomic_store_n(&usr1_flag, 1, __ATOMIC_RELEASE);
    /* A handler the program had before keeps working. */
    if (usr1_prev.sa_flags & SA_SIGINFO) {
        if (usr1_prev.sa_sigaction != NULL)
            usr1_prev.sa_sigaction(sig, info, uc);
    } else if (usr1_prev.sa_handler != SIG_DFL &&
               usr1_prev.sa_handler != SIG_IGN) {
        usr1_prev.sa_handler(sig);
    }
    errno = saved;
}

static int watch_usr1(void)
{
    struct sigaction sa;

    if (usr1_watching)
        return SHOAL_OK;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, &usr1_prev) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "SIGUSR1 handler: %s",
                        strerror(errno));
    usr1_watching = 1;
    return SHOAL_OK;
}

int boot_hydra_take_signal(void)
{
    return usr1_watching &&
           __atomic_exchange_n(&usr1_flag, 0, __ATOMIC_ACQ_REL) != 0;
}

int boot_hydra_read_dead(struct boot_pmi1 *conn, int size,
                         int (*get)(void *ctx, const char *key, char *value,
                                    size_t cap),
                         void *ctx)
{
    char text[BOOT_TEXT_MAX + 1];

    if (!boot_hydra_take_signal())
        return 0;
    int status = get(ctx, "PMI_dead_processes", text, sizeof(text));
    if (status == SHOAL_OK)
        status = boot_pmi1_note_dead(conn, text, size);
    if (status != SHOAL_OK)
        base_warn("boot", "reading Hydra's PMI_dead_processes: %s",
                  shoal_error_detail());
    return 1;
}

int boot_hydra_signalled(void)
{
    return __atomic_load_n(&usr1_flag, __ATOMIC_RELAXED) != 0;
}

int boot_hydra_watching(void)
{
    return usr1_watching;
}

/* The rank's number as its launcher gave it, for the log. */
static const char *rank_name(void)
{
    static const char *const vars[] = {"PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};

    for (size_t i = 0; i < BASE_ARRAY_SIZE(vars); i++)
        if (getenv(vars[i]) != NULL)
            return getenv(vars[i]);
    return "?";
}

#define WATCH_MIN_NS 10000000ull  /* 10 ms */
#define WATCH_MAX_NS 250000000ull /* 250 ms */

/* SHOAL_FT_TIMEOUT, as shoalrun keeps it (docs/FT.md): the rank stopped
 * without a break for longer is killed, and its death goes the way of
 * every death.  Looked at every eighth of the timeout (10 ms to 250 ms). */
static void watch_stop(pid_t rank_pid, base_stop_watch_t *w, int *killed)
{
    uint64_t timeout = (uint64_t)base_cfg.FT_TIMEOUT;
    uint64_t stopped = base_stop_look(w, (long)rank_pid, base_time_ns());

    if (*killed || stopped < timeout)
        return;
    *killed = 1;
    base_warn("boot", "rank %s (pid %ld) has been stopped for %.3g s, past "
              "SHOAL_FT_TIMEOUT (%g s); SHOAL_FT: taken for dead, killing it",
              rank_name(),
              (long)rank_pid, (double)stopped / 1e9, (double)timeout / 1e9);
    kill(rank_pid, SIGKILL);
}

/* Leave as the rank left: under Hydra always by an exit, 128 + the
 * signal when one killed the rank (the proxy kills every rank it started
 * when one of them dies of a signal); under other launchers by the same
 * exit code or signal, so srun and mpirun report the rank's own fate. */
static void BASE_NORETURN leave_like(int st, int hydra)
{
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (!hydra && sig > 0) {
        struct rlimit no_core = {0, 0};
        sigset_t one;
        setrlimit(RLIMIT_CORE, &no_core); /* the rank's crash, not ours */
        signal(sig, SIG_DFL);
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
    }
    _exit(128 + sig);
}

/* The rank's end of the PMIx proxy's socket pair, or -1 (boot_proxy.c). */
static int proxy_fd = -1;
/* This process is a rank whose guardian is made: never fork another (a
 * later boot_init in the same process, after a failed start). */
static int guarded;

int boot_guard_proxy_fd(void)
{
    return proxy_fd;
}

int boot_guard_slurm_pmix(void)
{
    return parent_is(SLURM_STEPD_COMM) && boot_has_pmix();
}

/* The guardian: wait for the rank and leave as it did, never returning
 * into the program.  With px >= 0 it is also the rank's PMIx client
 * (boot_proxy.c): it answers the rank's requests, and finalizes PMIx
 * when the rank ends without doing so. */
static void BASE_NORETURN guard(pid_t rank_pid, int hydra, int px)
{
    uint64_t period = (uint64_t)base_cfg.FT_TIMEOUT / 8;
    base_stop_watch_t w = {0, 0};
    sigset_t chld;
    int st, killed = 0;

    /* SIGUSR1 comes to the whole process group: not for us. */
    if (hydra)
        signal(SIGUSR1, SIG_IGN);
    /* The rank's PMI socket must close when the rank dies, not when we
     * do; keep only the standard streams (and the proxy's socket). */
    if (px < 0) {
        if (close_range(3, ~0u, 0) != 0)
            for (int fd = 3; fd < 1024; fd++)
                close(fd);
    } else {
        if (px > 3 && close_range(3, (unsigned)px - 1, 0) != 0)
            for (int fd = 3; fd < px; fd++)
                close(fd);
        if (close_range((unsigned)px + 1, ~0u, 0) != 0)
            for (int fd = px + 1; fd < 1024; fd++)
                close(fd);
    }
    if (base_cfg.FT_TIMEOUT <= 0)
        period = WATCH_MAX_NS;
    period = period < WATCH_MIN_NS   ? WATCH_MIN_NS
             : period > WATCH_MAX_NS ? WATCH_MAX_NS
                                     : period;
    struct timespec ts = {(time_t)(period / 1000000000u),
                          (long)(period % 1000000000u)};
    /* Woken by the rank's end (SIGCHLD, held for sigtimedwait, or the
     * proxy's socket closing), a request, or the period. */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    if (px >= 0)
        boot_proxy_open();
    for (;;) {
        pid_t got = waitpid(rank_pid, &st, WNOHANG);
        if (got == rank_pid)
            break;
        if (got < 0 && errno != EINTR)
            _exit(127);
        if (base_cfg.FT_TIMEOUT > 0)
            watch_stop(rank_pid, &w, &killed);
        if (px < 0) {
            sigtimedwait(&chld, NULL, &ts);
            continue;
        }
        struct pollfd pfd = {px, POLLIN, 0};
        if (ppoll(&pfd, 1, &ts, NULL) == 1 && !boot_proxy_serve(px)) {
            close(px); /* the rank is gone: SIGCHLD next */
            px = -1;
        }
    }
    /* The rank has ended, finalized or not: its PMIx connection ends
     * cleanly here, so the launcher's server sees no client lost. */
    boot_proxy_close();
    leave_like(st, hydra);
}

int boot_guard_start(int hydra)
{
    const char *who = hydra ? "under Hydra" : "under this launcher";
    int threads = thread_count();
    int sv[2] = {-1, -1};

    if (guarded)
        return SHOAL_OK;
    /* Installed before the fork: a death during start-up must not end
     * the rank by SIGUSR1's default action. */
    if (hydra) {
        int status = watch_usr1();
        if (status != SHOAL_OK)
            return status;
    }
    if (threads > 1) {
        if (hydra)
            base_warn("boot",
                      "SHOAL_FT under Hydra: %d threads run already, so no "
                      "guardian process (docs/FT.md): a rank killed by a "
                      "signal makes Hydra's proxy kill every rank",
                      threads);
        else
            base_warn("boot",
                      "SHOAL_FT %s: %d threads run already, so no guardian "
                      "process (docs/FT.md): a stopped rank is not taken "
                      "for dead past SHOAL_FT_TIMEOUT%s",
                      who, threads,
                      boot_guard_slurm_pmix()
                          ? ", and a rank's death ends the step (srun "
                            "--mpi=pmix; --mpi=pmi2 does not)"
                          : "");
        return SHOAL_OK;
    }
    if (!hydra && boot_guard_slurm_pmix() &&
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "SHOAL_FT under srun "
                        "--mpi=pmix: socket pair for the guardian: %s",
                        strerror(errno));
    fflush(NULL); /* nothing buffered twice */
    pid_t guardian = getpid();
    pid_t child = fork();
    if (child < 0) {
        base_warn("boot", "SHOAL_FT %s: fork of the rank: %s; no guardian "
                  "process (docs/FT.md)", who, strerror(errno));
        if (sv[0] >= 0) {
            close(sv[0]);
            close(sv[1]);
        }
        return SHOAL_OK;
    }
    if (child > 0) {
        if (sv[1] >= 0)
            close(sv[1]);
        guard(child, hydra, sv[0]);
    }
    /* The rank: it dies with its guardian (killed from outside). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != guardian)
        _exit(128 + SIGKILL);
    guarded = 1;
    if (sv[0] >= 0) {
        close(sv[0]);
        proxy_fd = sv[1];
    }
    base_debug("boot", "SHOAL_FT %s: rank process %ld, guardian %ld%s", who,
               (long)getpid(), (long)guardian,
               proxy_fd >= 0 ? ", which holds the PMIx connection" : "");
    return SHOAL_OK;
}

int boot_dead_list_parse(const char *text, int size, int *ranks, int cap,
                         int *n_p)
{
    const char *p = text;
    int n = 0;

    *n_p = 0;
    while (*p != '\0') {
        char *end;
        errno = 0;
        long r = strtol(p, &end, 10);
        if (end == p || errno != 0 || r < 0 || r >= size || *p == '-' ||
            *p == '+' || *p == ' ')
            return base_err(SHOAL_ERR_PROTOCOL,
                            "PMI_dead_processes '%.64s' is not a list of "
                            "ranks below %d",
                            text, size);
        if (n < cap)
            ranks[n++] = (int)r;
        p = end;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p != '\0')
            return base_err(SHOAL_ERR_PROTOCOL,
                            "PMI_dead_processes '%.64s' is not a list of "
                            "ranks below %d",
                            text, size);
    }
    *n_p = n;
    return SHOAL_OK;
}
