/*
 * --ft: a stopped rank is taken for dead past SHOAL_FT_TIMEOUT (docs/FT.md,
 * "Failure model").
 *
 * A process stopped by SIGSTOP (or SIGTSTP, or held by a debugger) has not
 * exited: no pidfd, wait or broken connection ever reports it, and on one
 * host its peers would wait for it forever.  Each launcher process (shoalrun
 * for the ranks it started, each host's daemon for its own) looks at its
 * ranks' state in /proc every eighth of the timeout (10 ms to 250 ms).  A
 * rank seen stopped at every look, with the same count of context switches
 * (so it did not run in between: a SIGCONT and a new stop would count
 * one), for SHOAL_FT_TIMEOUT is killed with SIGKILL.  Its death then goes
 * the way of every death: reaped here, reported up the daemon tree, and
 * told to every survivor (cmd=shoal-ft-dead), who also see it through
 * their pidfds on its host.  Killing it, rather than only declaring it
 * dead, keeps the survivors' view consistent: it cannot wake up later as a
 * member the others have shrunk away.  A rank stopped for less than the
 * timeout goes on as if nothing happened.
 *
 * The first look that sees the stop starts the clock, so a rank is killed
 * at least the timeout, and at most the timeout and one period, after it
 * stopped.
 *
 * The wires do not take a stopped process for dead sooner: shared memory
 * and the pidfds only see exits, the TCP wire only a silent link (the
 * stopped process's kernel still acknowledges and answers window probes),
 * and the datagram wire, which does (nothing answers its probes), gets a
 * SHOAL_UDP_DEAD_TIMEOUT of SHOAL_FT_TIMEOUT + 2 s from job_ft_env unless
 * it was set; so does the TCP wire's SHOAL_TCP_DEAD_TIMEOUT, so that one
 * timeout says when a stopped rank or a silent link counts as dead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

#define WATCH_MIN_NS 10000000ull  /* 10 ms */
#define WATCH_MAX_NS 250000000ull /* 250 ms */

static uint64_t period_ns(void)
{
    uint64_t p = (uint64_t)base_cfg.FT_TIMEOUT / 8;

    return p < WATCH_MIN_NS ? WATCH_MIN_NS : p > WATCH_MAX_NS ? WATCH_MAX_NS
                                                              : p;
}

static int watching(const job_t *job)
{
    return base_cfg.FT && base_cfg.FT_TIMEOUT > 0 && job->nlocal_alive > 0 &&
           !job->stopping;
}

uint64_t job_ft_watch_due(const job_t *job)
{
    if (!watching(job))
        return 0;
    return job->ft_watch_next ? job->ft_watch_next : 1;
}

static void look_at(job_t *job, rank_t *r, uint64_t now)
{
    uint64_t timeout = (uint64_t)base_cfg.FT_TIMEOUT;
    uint64_t stopped = base_stop_look(&r->stop, (long)r->pid, now);
    char host[160];

    if (r->stop_killed || stopped < timeout)
        return;
    r->stop_killed = 1;
    job_on_host(job, r->rank, host, sizeof(host));
    shoalrun_say("rank %d (pid %ld)%s has been stopped for %.3g s, past "
                 "SHOAL_FT_TIMEOUT (%g s); --ft: taken for dead, killing it",
                 r->rank, (long)r->pid, host, (double)stopped / 1e9,
                 (double)timeout / 1e9);
    if (kill(r->pid, SIGKILL) != 0 && errno != ESRCH)
        shoalrun_say("kill %ld: %s", (long)r->pid, strerror(errno));
}

void job_ft_watch(job_t *job, uint64_t now)
{
    if (!watching(job) || now < job->ft_watch_next)
        return;
    job->ft_watch_next = now + period_ns();
    for (int i = job->first; i < job->first + job->nlocal; i++) {
        rank_t *r = &job->ranks[i];
        if (r->local && r->alive && r->pid > 0)
            look_at(job, r, now);
    }
}

/* Under --ft, a wire's silence timeout that was not set becomes
 * SHOAL_FT_TIMEOUT + 2 s: one timeout for stopped ranks and silent links
 * (a wire must not take a stopped rank for dead before its launcher
 * does, hence the 2 s). */
static void ft_wire_timeout(const char *name, uint64_t want)
{
    char v[32];

    if (getenv(name) != NULL)
        return;
    snprintf(v, sizeof(v), "%llums", (unsigned long long)(want / 1000000));
    if (setenv(name, v, 1) != 0)
        shoalrun_say("--ft: cannot set %s: %s", name, strerror(errno));
}

void job_ft_env(void)
{
    uint64_t want = (uint64_t)base_cfg.FT_TIMEOUT + 2000000000ull;

    if (!base_cfg.FT || base_cfg.FT_TIMEOUT <= 0)
        return;
    ft_wire_timeout("SHOAL_TCP_DEAD_TIMEOUT", want);
    ft_wire_timeout("SHOAL_UDP_DEAD_TIMEOUT", want);
}
