/*
 * Leaving nothing behind.  After a job, shoalrun removes the job's
 * /dev/shm objects (named with boot_shm_prefix of the kvsname).  For the
 * case where shoalrun itself is killed with SIGKILL, a watchdog process in
 * its own session holds the read end of a pipe: the kernel closes the write
 * end when shoalrun dies, and the watchdog then kills the ranks' process
 * groups (the ranks themselves die of PR_SET_PDEATHSIG, their children
 * would not) and the groups of --noise's busy processes (which die of it
 * too: the kill is the second line of defence), and sweeps /dev/shm.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shoalrun.h"

#define WATCHDOG_FD 3

int shoalrun_sweep_shm(const char *prefix)
{
    size_t plen = strlen(prefix);
    int removed = 0;
    DIR *d;

    /* Never sweep with a prefix that could match other programs' objects. */
    if (plen < 8 || strncmp(prefix, "shoal-", 6) != 0)
        return 0;
    d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        if (strncmp(e->d_name, prefix, plen) == 0 &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    closedir(d);
    return removed;
}

/* ---- the watchdog process ------------------------------------------------ */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void watchdog_isolate(int rfd)
{
    int null = open("/dev/null", O_RDWR);

    setsid();
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
    }
    /* Hold nothing of shoalrun's but stderr and the pipe, so no pipe of a
     * rank's output or PMI stays open because of us. */
    if (rfd != WATCHDOG_FD)
        dup2(rfd, WATCHDOG_FD);
    if (close_range(WATCHDOG_FD + 1, ~0u, 0) != 0)
        for (int fd = WATCHDOG_FD + 1; fd < 1024; fd++)
            close(fd);
}

static void watchdog_kill(const pid_t *pgids, size_t n, size_t nbusy,
                          const char *prefix)
{
    for (size_t i = 0; i < n; i++)
        kill(-pgids[i], SIGKILL);
    int removed = shoalrun_sweep_shm(prefix);
    /* A rank dying in the middle of shm_open may still create one. */
    sleep_ms(200);
    removed += shoalrun_sweep_shm(prefix);
    dprintf(STDERR_FILENO,
            "%s: %s died; its watchdog killed %zu ranks' process "
            "groups%s and removed %d /dev/shm objects\n",
            shoalrun_name, shoalrun_name, n - nbusy,
            nbusy > 0 ? " and the busy processes of --noise" : "", removed);
}

/* Read "p <pgid>" (a rank), "b <pgid>" (a busy process) and "done" lines
 * until EOF. */
static void watchdog_main(int rfd, const char *prefix)
{
    pid_t *pgids = NULL;
    size_t n = 0, nbusy = 0, cap = 0, len = 0;
    char buf[4096];

    watchdog_isolate(rfd);
    for (;;) {
        ssize_t r = read(WATCHDOG_FD, buf + len, sizeof(buf) - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            if (strcmp(line, "done") == 0)
                _exit(0);
            int group = line[0] == 'p' || line[0] == 'b';
            if (group && n == cap) {
                cap = cap ? 2 * cap : 64;
                pid_t *g = realloc(pgids, cap * sizeof(*g));
                if (g == NULL)
                    break;
                pgids = g;
            }
            if (group && n < cap) {
                pgids[n++] = (pid_t)atol(line + 1);
                nbusy += line[0] == 'b';
            }
            line = nl + 1;
        }
        len = strlen(line);
        memmove(buf, line, len);
    }
    watchdog_kill(pgids, n, nbusy, prefix);
    _exit(0); /* no atexit handlers or leak checks of shoalrun's heap */
}

int shoalrun_watchdog_start(shoalrun_watchdog_t *wd, const char *shm_prefix)
{
    int p[2];

    wd->pid = 0;
    wd->fd = -1;
    if (pipe2(p, O_CLOEXEC) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "watchdog pipe: %s",
                        strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return base_err(SHOAL_ERR_SYSTEM, "watchdog fork: %s",
                        strerror(errno));
    }
    if (pid == 0) {
        close(p[1]);
        watchdog_main(p[0], shm_prefix);
    }
    close(p[0]);
    wd->pid = pid;
    wd->fd = p[1];
    return SHOAL_OK;
}

static void watchdog_write(shoalrun_watchdog_t *wd, const char *text)
{
    size_t n = strlen(text);

    while (wd->fd >= 0 && n > 0) {
        ssize_t w = write(wd->fd, text, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the watchdog is gone; shoalrun still cleans up */
        text += w;
        n -= (size_t)w;
    }
}

static void watchdog_add(shoalrun_watchdog_t *wd, char kind, pid_t pgid)
{
    char line[32];

    snprintf(line, sizeof(line), "%c %ld\n", kind, (long)pgid);
    watchdog_write(wd, line);
}

void shoalrun_watchdog_add(shoalrun_watchdog_t *wd, pid_t pgid)
{
    watchdog_add(wd, 'p', pgid);
}

void shoalrun_watchdog_add_busy(shoalrun_watchdog_t *wd, pid_t pgid)
{
    watchdog_add(wd, 'b', pgid);
}

void shoalrun_watchdog_done(shoalrun_watchdog_t *wd)
{
    watchdog_write(wd, "done\n");
    if (wd->fd >= 0)
        close(wd->fd);
    wd->fd = -1;
    while (wd->pid > 0 && waitpid(wd->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    wd->pid = 0;
}

int shoalrun_watchdog_is(const shoalrun_watchdog_t *wd, pid_t pid)
{
    return wd->pid > 0 && wd->pid == pid;
}
