/*
 * Starting one rank on this machine: a socketpair for PMI, pipes for its
 * output, fork, and in the child everything that must hold before exec
 * (own process group, parent-death signal, the signal mask and open-file
 * limit shoalrun was started with, stdio, environment, CPU).  A multi-host
 * shoalrun would do the same in a daemon on each host; job.c only needs the
 * pid and the three fds back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shoalrun.h"

/* Each rank costs us 3 fds; raise our soft limit (the ranks keep theirs). */
static int raise_fd_limit(shoalrun_launch_t *l)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return SHOAL_OK;
    l->child_nofile = rl;
    rlim_t need = (rlim_t)l->nranks * 4 + 32;
    if (rl.rlim_cur < need && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < need)
        return base_err(SHOAL_ERR_SYSTEM,
                        "%d ranks need %lu open files in shoalrun; the limit "
                        "is %lu (ulimit -n)",
                        l->nranks, (unsigned long)need,
                        (unsigned long)rl.rlim_cur);
    return SHOAL_OK;
}

static int choose_binding(shoalrun_launch_t *l, int asked)
{
    l->cpus = malloc(CPU_SETSIZE * sizeof(int));
    if (l->cpus == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    l->ncpus = shoalrun_bind_cpus(l->cpus, CPU_SETSIZE);
    l->bind = shoalrun_bind_resolve(asked, l->nranks, l->ncpus);
    base_debug("shoalrun", "%d ranks on %d CPUs: --bind-to %s", l->nranks,
               l->ncpus, shoalrun_bind_name(l->bind));
    return SHOAL_OK;
}

int shoalrun_launch_init(shoalrun_launch_t *l, const shoalrun_args_t *args,
                         const char *kvsname, int first, int nlocal)
{
    memset(l, 0, sizeof(*l));
    l->path = args->path;
    l->argv = args->argv;
    l->nranks = nlocal;
    l->size = args->nranks;
    l->first = first;
    l->kvsname = kvsname;
    l->parent = getpid();
    l->stdin_fd = STDIN_FILENO;
    sigprocmask(SIG_SETMASK, NULL, &l->child_mask);
    int status = raise_fd_limit(l);
    if (args->have_start) { /* a restart: our own are changed by now */
        l->child_mask = args->start_mask;
        l->child_nofile = args->start_nofile;
    }
    if (status == SHOAL_OK)
        status = choose_binding(l, args->bind);
    return status;
}

void shoalrun_launch_fini(shoalrun_launch_t *l)
{
    free(l->cpus);
    l->cpus = NULL;
}

/* ---- in the child -------------------------------------------------------- */

static void child_env(const shoalrun_launch_t *l, int rank, int pmi_fd)
{
    char num[32];

    snprintf(num, sizeof(num), "%d", pmi_fd);
    setenv("PMI_FD", num, 1);
    snprintf(num, sizeof(num), "%d", rank);
    setenv("PMI_RANK", num, 1);
    snprintf(num, sizeof(num), "%d", rank - l->first);
    setenv("MPI_LOCALRANKID", num, 1);
    snprintf(num, sizeof(num), "%d", l->size);
    setenv("PMI_SIZE", num, 1);
    snprintf(num, sizeof(num), "%d", l->nranks);
    setenv("MPI_LOCALNRANKS", num, 1);
    setenv("PMI_JOBID", l->kvsname, 1);
    /* Left over from a launcher that started shoalrun itself. */
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
}

static void child_stdio(const shoalrun_launch_t *l, int rank, int out_fd,
                        int err_fd)
{
    int in_fd = rank == 0 ? l->stdin_fd : open("/dev/null", O_RDONLY);

    if (in_fd != STDIN_FILENO && in_fd >= 0)
        dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
}

/*
 * Become the rank; never returns.  The child of a single-threaded parent,
 * so setenv and friends are safe here.
 */
static void child_exec(const shoalrun_launch_t *l, int rank, int pmi_fd,
                       int out_fd, int err_fd)
{
    setpgid(0, 0);
    /* Die with shoalrun, even by SIGKILL; check we did not miss it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != l->parent)
        _exit(SHOALRUN_EXIT_FAILED);
    sigprocmask(SIG_SETMASK, &l->child_mask, NULL);
    setrlimit(RLIMIT_NOFILE, &l->child_nofile);
    child_stdio(l, rank, out_fd, err_fd);
    fcntl(pmi_fd, F_SETFD, 0); /* the one fd of ours the rank keeps */
    child_env(l, rank, pmi_fd);
    if (l->bind == SHOALRUN_BIND_CORE)
        shoalrun_bind_rank(rank - l->first, l->cpus, l->ncpus);
    execv(l->path, l->argv);
    int err = errno;
    dprintf(STDERR_FILENO, "%s: rank %d: cannot execute '%s': %s\n",
            shoalrun_name, rank, l->path, strerror(err));
    _exit(err == ENOENT ? SHOALRUN_EXIT_NOTFOUND : SHOALRUN_EXIT_NOEXEC);
}

/* ---- in shoalrun --------------------------------------------------------- */

static void close_pair(int p[2])
{
    close(p[0]);
    close(p[1]);
}

int shoalrun_spawn(const shoalrun_launch_t *l, int rank, shoalrun_child_t *c)
{
    int sv[2], out[2], err[2];

    /* Everything of ours is close-on-exec: a rank inherits only its own. */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        goto err_sys;
    if (pipe2(out, O_CLOEXEC) != 0)
        goto err_sv;
    if (pipe2(err, O_CLOEXEC) != 0)
        goto err_out;
    pid_t pid = fork();
    if (pid < 0)
        goto err_err;
    if (pid == 0)
        child_exec(l, rank, sv[1], out[1], err[1]);
    setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
    close(sv[1]);
    close(out[1]);
    close(err[1]);
    *c = (shoalrun_child_t){pid, sv[0], out[0], err[0]};
    return SHOAL_OK;
err_err:
    close_pair(err);
err_out:
    close_pair(out);
err_sv:
    close_pair(sv);
err_sys:
    return base_err(SHOAL_ERR_SYSTEM, "cannot start rank %d: %s", rank,
                    strerror(errno));
}
