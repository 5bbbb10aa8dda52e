/*
 * The job's state, shared by job.c (ranks started here: spawning, reaping,
 * signals, the policy) and job_hosts.c (the same job across hosts: what
 * the daemon tree reports and asks).  Private to those two files.
 */
#ifndef SHOALRUN_JOB_H
#define SHOALRUN_JOB_H

#include "shoalrun.h"

typedef struct rank {
    int rank;
    pid_t pid; /* also its process group; 0 while not known (remote) */
    int alive;
    int local; /* started by this process */
    /* Put SHOALRUN_EXPENDABLE_KEY (here, or as its daemon reported): its
     * host may be lost without ending the job. */
    int expendable;
    /* --ft (ft_watch.c): how long it has been stopped; killed for it. */
    base_stop_watch_t stop;
    int stop_killed;
    /* --ft, launcher (ft_accuse.c): taken for dead on an accusation. */
    int condemned;
} rank_t;

typedef struct job {
    shoalrun_args_t *args;
    shoalrun_loop_t loop;
    shoalrun_pmi_t pmi;
    shoalrun_stdio_t io;
    shoalrun_watchdog_t wd;
    shoalrun_launch_t launch;
    shoalrun_noise_t noise;
    shoalrun_ckpt_t ckpt; /* checkpoints asked of the ranks */
    rank_t *ranks;      /* every rank of the job */
    int nranks, nalive; /* nalive: those this process answers for */
    int first, nlocal, nlocal_alive; /* the ranks started here */
    shoalrun_tree_t *tree;           /* NULL: one host */
    const shoalrun_hosts_t *hosts;
    char *rsh_copy, *rsh_words[32]; /* the launcher's remote-exec command */
    int daemon;                     /* a follower: the launcher decides */
    /* Launcher with rank 0 on another host: our stdin goes down the tree,
     * at most a window ahead of what rank 0's daemon has written. */
    int stdin_watched;
    size_t stdin_unacked;
    /* Launcher across hosts: a barrier no one can finish. */
    int barrier_waiting; /* some rank is in the current barrier */
    int left_rank;       /* the first rank that can enter none; -1 */
    char left_why[32];
    int orphaned; /* daemon: the launcher is gone */
    char mapping[1024];
    char kvsname[64], shm_prefix[64];
    int sigfd;
    uint64_t deadline;       /* --timeout; 0: none */
    uint64_t kill_deadline;  /* when stopping: SIGKILL at this time */
    uint64_t drain_deadline; /* all ranks gone: stop reading output */
    /* A rank failed after finalizing: the others may exit on their own
     * until then (SHOAL_EXIT_GRACE); 0: not waiting. */
    uint64_t linger_deadline;
    int linger_rank;
    int stopping;
    int failed; /* exit_code is decided */
    int exit_code;
    int quiet;  /* the stop was asked for: deaths expected */
    int killed; /* SIGKILL was needed after the grace */
    /* A rank died of a signal we did not send, or a host was lost, while
     * the stop was not asked for (--restart-on-failure restarts then). */
    int died;
    int user_signals;
    uint64_t ft_watch_next; /* --ft: next look at the ranks' states */
    /* --ft, launcher: accusations not decided yet (pairs accuser,
     * accused), and when the window gathering them closes (0: none). */
    int *accused;
    int naccused, accused_cap;
    uint64_t accuse_deadline;
} job_t;

/* job.c */
void job_kill_local(job_t *job, int sig, int groups);
/* SIGTERM now, SIGKILL after the grace, here and on every host. */
void job_stop(job_t *job);
/* Decide the job's status once; returns whether to say why. */
int job_fail(job_t *job, int code);
/* " on host NAME" across hosts; "" on one. */
const char *job_on_host(const job_t *job, int rank, char *buf, size_t cap);
/* "; stopping the other N ranks" (or nothing). */
const char *job_others(int n, char *buf, size_t cap);
/* The policy for a rank that ended or aborted, here or elsewhere; pmi is
 * its shoalrun_pmi_state (SHOALRUN_PMI_*). */
void job_report_exit(job_t *job, rank_t *r, pid_t pid, int status, int pmi);
void job_report_abort(job_t *job, int rank, pid_t pid, long code,
                      const char *msg);

/* ft_watch.c: --ft, a local rank stopped (SIGSTOP, a debugger) longer
 * than SHOAL_FT_TIMEOUT is killed, so that its death is told as any
 * other's.  job_ft_watch looks when it is due; job_ft_watch_due says when
 * that is (0: never). */
void job_ft_watch(job_t *job, uint64_t now);
uint64_t job_ft_watch_due(const job_t *job);
/* Launcher, --ft: the datagram wire must not take a stopped rank for dead
 * before SHOAL_FT_TIMEOUT; raise SHOAL_UDP_DEAD_TIMEOUT for the ranks
 * when it is shorter and not set. */
void job_ft_env(void);

/* ft_accuse.c: --ft, a rank's wire gave up a rank of another host
 * (docs/FT.md, "Partitions").  Launcher: job_ft_accuse gathers the
 * accusations of a window; job_ft_accuse_decide, when it closed, takes
 * a smallest set of ranks for dead that leaves no accuser and accused
 * both alive, tells every rank and kills them.  job_ft_accuse_due: when
 * the window closes (0: none open).  job_ft_accuse_env: SHOAL_FT_ACCUSE
 * for the ranks.  job_ft_accuse_fini frees the accusations. */
void job_ft_accuse(job_t *job, int accuser, int accused);
void job_ft_accuse_decide(job_t *job, uint64_t now);
uint64_t job_ft_accuse_due(const job_t *job);
void job_ft_accuse_env(void);
void job_ft_accuse_fini(job_t *job);
/* Daemon: the launcher condemned rank, one of ours: SIGKILL it. */
void job_ft_condemned(job_t *job, int rank);

/* job_hosts.c */
/* Launcher: a checkpoint line for a rank of another host (its daemon
 * passes it on); shoalrun_ckpt_t.down. */
void job_ckpt_down(void *ctx, int rank, int what, long id, long value);
/* Launcher: SIGNAL, STOP or KILL (type) for every daemon. */
void job_tell_daemons(job_t *job, int type, int sig, int groups);
/* Daemon: a failure that ends the job; the launcher says text. */
void job_fail_up(job_t *job, int code, const char *text);
/* The handlers of the tree's events. */
void job_tree_events(job_t *job, shoalrun_tree_events_t *ev);
/* The PMI server's hooks across hosts. */
void job_pmi_fence(void *ctx);
void job_pmi_waiting(void *ctx);
void job_pmi_left(void *ctx, int rank, const char *why);
void job_pmi_expendable(void *ctx, int rank);

/* --ft: rank died and the job goes on; tell every rank alive, on every
 * host (the launcher only). */
void job_ft_notify(job_t *job, int rank);
/* Daemon: a rank's output goes up as it comes (the stdio sink). */
void job_output_up(void *ctx, int rank, int dest, const char *p, size_t n);
/* Rank 0's stdin: here, fed by the launcher, or sent down the tree. */
int job_stdin_setup(job_t *job);
void job_stdin_stop_forwarding(job_t *job);
/* Launcher: the daemons' executable, the job's description, the secret. */
int job_tree_setup(job_t *job, shoalrun_tree_conf_t *conf,
                   shoalrun_msg_t *jobmsg, char *self, size_t cap);

#endif /* SHOALRUN_JOB_H */
