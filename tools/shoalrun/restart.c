/*
 * --restart-on-failure[=N] (docs/FT.md "Restart on failure"): the job is
 * run again, whole, when a rank died of a signal shoalrun did not send or
 * a host was lost, from the newest complete checkpoint the job itself
 * wrote in its directory (the ranks get SHOAL_CKPT_RESTART=1, as with
 * --restart), or from the beginning when it wrote none yet; at most N
 * times.  A failure that is the program's own (an exit code, an abort,
 * a refused restart) and a stop the user or --timeout asked for are not
 * restarted: running again would do the same.  Each attempt is a job of
 * its own (job.c): its ranks, sockets, /dev/shm objects and watchdog are
 * gone before the next one starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/core/ckpt_dir.h"
#include "shoalrun.h"

#define MAX_CANDIDATES 64

/* The newest complete checkpoint of this job in dir past epoch floor;
 * 0 if none. */
static uint64_t newest_complete(const shoalrun_args_t *a, uint64_t floor)
{
    const char *slash = strrchr(a->argv[0], '/');
    uint64_t prog = ckpt_dir_prog_id(slash != NULL ? slash + 1 : a->argv[0]);
    uint64_t ep[MAX_CANDIDATES], p;
    int n = ckpt_dir_epochs(a->ckpt_dir, ep, MAX_CANDIDATES), ranks;

    for (int i = 0; i < n && ep[i] > floor; i++)
        if (ckpt_dir_complete(a->ckpt_dir, ep[i], &ranks, &p) == 1 &&
            ranks == a->nranks && p == prog)
            return ep[i];
    return 0;
}

/* A signal that asks shoalrun to stop, waiting for the next attempt. */
static int stop_pending(void)
{
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
    sigset_t set;

    if (sigpending(&set) != 0)
        return 0;
    for (size_t i = 0; i < BASE_ARRAY_SIZE(stops); i++)
        if (sigismember(&set, stops[i]))
            return stops[i];
    return 0;
}

/* Before attempt `done + 1`: set the ranks' environment and say from where;
 * 0 to go on, or shoalrun's status when it cannot. */
static int prepare(shoalrun_args_t *a, int done, uint64_t floor)
{
    uint64_t e = newest_complete(a, floor);

    if (e != 0) {
        if (setenv("SHOAL_CKPT_RESTART", "1", 1) != 0) {
            shoalrun_say("--restart-on-failure: cannot set "
                         "SHOAL_CKPT_RESTART: %s", strerror(errno));
            return SHOALRUN_EXIT_FAILED;
        }
        shoalrun_say("--restart-on-failure: restart %d of %d, from the "
                     "checkpoint %s/ckpt.%" PRIu64,
                     done + 1, a->restart_max, a->ckpt_dir, e);
        return 0;
    }
    unsetenv("SHOAL_CKPT_RESTART");
    shoalrun_say("--restart-on-failure: restart %d of %d, from the "
                 "beginning: the job has no complete checkpoint in %s yet",
                 done + 1, a->restart_max, a->ckpt_dir);
    return 0;
}

int shoalrun_restart_run(shoalrun_args_t *a)
{
    uint64_t floor = 0;
    int died, sig;

    if (a->restart_max == 0)
        return shoalrun_job_run(a, NULL);
    /* What the ranks of every attempt get, before the first one blocks
     * signals and raises the open-file limit. */
    sigprocmask(SIG_SETMASK, NULL, &a->start_mask);
    if (getrlimit(RLIMIT_NOFILE, &a->start_nofile) == 0)
        a->have_start = 1;
    if (a->timeout_s > 0)
        a->deadline_ns = base_time_ns() + (uint64_t)(a->timeout_s * 1e9);
    /* Started afresh: checkpoints already there are another run's. */
    if (!a->ckpt_restart && ckpt_dir_epochs(a->ckpt_dir, &floor, 1) == 0)
        floor = 0;
    for (int done = 0;; done++) {
        int code = shoalrun_job_run(a, &died);
        if (code == 0)
            return 0;
        if (!died) {
            if (code != SHOALRUN_EXIT_TIMEOUT)
                shoalrun_say("--restart-on-failure: not restarting: no rank "
                             "died (the job's status is %d)", code);
            return code;
        }
        if (done == a->restart_max) {
            shoalrun_say("--restart-on-failure: a rank died again after %d "
                         "restart%s; giving up (the job's status is %d)",
                         done, done == 1 ? "" : "s", code);
            return code;
        }
        if ((sig = stop_pending()) != 0) {
            shoalrun_say("--restart-on-failure: not restarting: got SIG%s",
                         sigabbrev_np(sig));
            return code;
        }
        if (a->deadline_ns != 0 && base_time_ns() >= a->deadline_ns) {
            shoalrun_say("--restart-on-failure: not restarting: the %g s "
                         "timeout is over", a->timeout_s);
            return SHOALRUN_EXIT_TIMEOUT;
        }
        int rc = prepare(a, done, floor);
        if (rc != 0)
            return rc;
    }
}
