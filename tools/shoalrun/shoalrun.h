/*
 * shoalrun: starts the ranks of a job on this machine and serves them the
 * PMI-1 wire protocol.  One process, one poll() loop.  The pieces, one file
 * each:
 *   args.c       the command line
 *   loop.c       the poll() loop: file descriptors with callbacks
 *   job.c        watching, signalling and reaping the ranks; the job's
 *                exit status
 *   job_hosts.c  the same job across hosts: what the daemons report and
 *                are told (job.h holds the state the two share)
 *   spawn.c      starting one rank
 *   bind.c       which CPU each rank runs on
 *   pmi_server.c the PMI-1 server: key-value store and barrier
 *   stdio_fwd.c  the ranks' stdout/stderr to ours, our stdin to rank 0
 *   noise.c      --noise: ranks stopped on a schedule, or sharing their CPU
 *                with busy processes
 *   restart.c    --restart-on-failure: the job again after a death
 *   ckpt_request.c  --checkpoint-every and SIGUSR1: checkpoints asked of
 *                the ranks
 *   cleanup.c    the /dev/shm sweep and the watchdog that cleans up after
 *                a shoalrun that was killed
 * Across hosts (--host, --hostfile):
 *   hosts.c      the host list and the placement of ranks on it
 *   auth.c       the challenge that proves the job's secret (base_siphash)
 *   frame.c      length-prefixed frames on a TCP connection
 *   tree.c       the daemon tree: starting daemons through the remote-exec
 *                command, their connections, relaying, the fence
 *   daemon.c     `shoalrun --daemon`: one per remote host, a job.c of its
 *                own whose decisions are the launcher's
 * pmi_server.c and stdio_fwd.c do not care where a line came from.
 */
#ifndef SHOALRUN_H
#define SHOALRUN_H

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "base/base.h"
#include "base/base_strmap.h"
#include "boot/pmi_wire.h"

/* Exit codes of shoalrun itself (a job's own status passes through). */
#define SHOALRUN_EXIT_USAGE 2     /* bad command line */
#define SHOALRUN_EXIT_TIMEOUT 124 /* --timeout expired */
#define SHOALRUN_EXIT_FAILED 125  /* shoalrun could not start or run the job */
#define SHOALRUN_EXIT_NOEXEC 126  /* program found but not executable */
#define SHOALRUN_EXIT_NOTFOUND 127 /* program not found */

#define SHOALRUN_MAX_RANKS 4096
/* --restart-on-failure without =N: restarts at most. */
#define SHOALRUN_RESTARTS_DEFAULT 3
/* How long ranks get to exit after SIGTERM before SIGKILL. */
#define SHOALRUN_GRACE_NS 1000000000ull
/* After the last rank is reaped, how long we still wait for the end of its
 * output (EOF on its pipes: only a process that left the rank's process
 * group can hold them open that long). */
#define SHOALRUN_DRAIN_NS 500000000ull

/* Choices of --bind-to, in the order of SHOAL_BIND_TO's "auto|core|none". */
enum { SHOALRUN_BIND_AUTO, SHOALRUN_BIND_CORE, SHOALRUN_BIND_NONE };

/*
 * The name shoalrun was started as (the basename of argv[0]: "shoalrun",
 * or "mpiexec"/"mpirun" through the installed symlinks); messages and the
 * usage text use it.
 */
extern const char *shoalrun_name;

/* Print "<shoalrun_name>: <message>\n" on stderr in one write. */
void shoalrun_say(const char *fmt, ...) BASE_PRINTF(1, 2);

/* ---- args.c -------------------------------------------------------------- */

/* What --noise asks of one rank (noise.c).  All zero: nothing. */
typedef struct shoalrun_noise_plan {
    uint64_t stop_ns;  /* how long each stop lasts; 0: never stopped */
    uint64_t every_ns; /* period of the stops (the mean one with random) */
    uint64_t start_ns; /* delay before the schedule begins */
    int random;        /* running times between stops are exponential */
    int busy;          /* busy processes sharing the rank's CPU; 0: none */
    int duty;          /* percent of each 10 ms they spin */
    int sched_rr;      /* rank and busy processes under SCHED_RR (sched=rr) */
} shoalrun_noise_plan_t;

/* A host of the job (hosts.c). */
typedef struct shoalrun_host {
    char *name; /* as the user gave it; the remote-exec command gets it */
    char *addr; /* numeric address daemons connect from; NULL if local */
    int slots;  /* from the host list (0: not given, 1 assumed) */
    int first;  /* the ranks placed here: first .. first+count-1 */
    int count;
    int local; /* this machine: the launcher runs its ranks itself */
    int node;  /* in the daemon tree: 0 the launcher, 1.. daemons */
} shoalrun_host_t;

typedef struct shoalrun_hosts {
    shoalrun_host_t *v;
    int n;
} shoalrun_hosts_t;

typedef struct shoalrun_args {
    int nranks;
    /* Across hosts; hosts.n == 0 runs everything here as before. */
    const char **host_specs; /* --host values, in order */
    int nhost_specs;
    const char *hostfile;
    int ppn; /* -ppn: slots of every host; 0: as listed */
    int oversubscribe;
    const char *rsh;        /* --rsh, else SHOAL_RSH */
    int fanout;             /* --fanout, else SHOAL_FANOUT */
    shoalrun_hosts_t hosts; /* after placement: hosts with ranks */
    double timeout_s; /* 0: no limit */
    int tag_output;
    int bind;         /* SHOALRUN_BIND_* */
    /* --noise values, in order (parsed once -n is known), and the result */
    const char **noise_specs;
    int nnoise_specs;
    shoalrun_noise_plan_t *noise; /* one per rank; NULL: no noise */
    int noise_report;             /* --noise-report */
    char **argv;      /* the program and its arguments (NULL-terminated) */
    char path[PATH_MAX]; /* the program, resolved through PATH */
    /* Checkpoint/restart (docs/FT.md): --checkpoint-dir or --restart DIR
     * (NULL: none), whether --restart was given, and --restart-on-failure's
     * bound on restarts (0: the option was not given). */
    const char *ckpt_dir;
    int ckpt_restart;
    int restart_max;
    double ckpt_every_s; /* --checkpoint-every; 0: none */
    /* Set by restart.c for every attempt: their common --timeout deadline
     * (0: from the attempt's start), and the signal mask and open-file
     * limit shoalrun started with, which the ranks get (have_start). */
    uint64_t deadline_ns;
    int have_start;
    sigset_t start_mask;
    struct rlimit start_nofile;
} shoalrun_args_t;

/*
 * Parse the command line and find the program.  Returns 0 to go on, or 1
 * with *exit_p set when shoalrun should exit at once (after --help, or with
 * a message and one of the exit codes above).  Either way the caller ends
 * with shoalrun_args_fini.
 */
int shoalrun_args_parse(int argc, char **argv, shoalrun_args_t *a,
                        int *exit_p);
void shoalrun_args_fini(shoalrun_args_t *a);

/* ---- task_default.c ----------------------------------------------------- */

/*
 * The ranks of a job started without -n on one host: for a program of the
 * task runtime (its file names shoal_task_run), one per CPU this process
 * may run on (at most SHOALRUN_MAX_RANKS); 0 for any other program.
 */
int shoalrun_task_default_ranks(const char *path);

/* ---- hosts.c ------------------------------------------------------------ */

/*
 * Read "--host a:4,b=10.0.0.2:4" specs and a hostfile ("host slots=N" or
 * "host:N" lines, '#' comments) into h, then place nranks (0: one per
 * slot) in blocks, host after host; ppn > 0 gives every host ppn slots.
 * SHOAL_ERR_CONFIG with a detail on any mistake.  *nranks_p is set when it was
 * 0.
 */
int shoalrun_hosts_place(shoalrun_hosts_t *h, const char **specs, int nspecs,
                         const char *hostfile, int ppn, int *nranks_p,
                         int oversubscribe);
void shoalrun_hosts_fini(shoalrun_hosts_t *h);
/* PMI_process_mapping of the placement; "" when it does not fit in cap. */
void shoalrun_hosts_mapping(const shoalrun_hosts_t *h, char *out, size_t cap);
/* The host running rank (NULL if none). */
const shoalrun_host_t *shoalrun_hosts_of_rank(const shoalrun_hosts_t *h,
                                              int rank);
const shoalrun_host_t *shoalrun_hosts_of_node(const shoalrun_hosts_t *h,
                                              int node);

/* ---- loop.c -------------------------------------------------------------- */

typedef void (*shoalrun_io_fn)(void *ctx, int fd, short revents);

typedef struct shoalrun_watch {
    int fd; /* -1: removed, compacted after the current round */
    short events;
    shoalrun_io_fn fn;
    void *ctx;
} shoalrun_watch_t;

typedef struct shoalrun_loop {
    shoalrun_watch_t *watches;
    struct pollfd *pfds;
    size_t n, cap;
} shoalrun_loop_t;

void shoalrun_loop_init(shoalrun_loop_t *l);
void shoalrun_loop_fini(shoalrun_loop_t *l);
int shoalrun_loop_add(shoalrun_loop_t *l, int fd, short events,
                      shoalrun_io_fn fn, void *ctx);
void shoalrun_loop_set_events(shoalrun_loop_t *l, int fd, short events);
/* Safe to call from a callback, also for the fd being served. */
void shoalrun_loop_remove(shoalrun_loop_t *l, int fd);
/* Wait at most timeout_ms (-1: forever) and run the callbacks of ready fds. */
int shoalrun_loop_once(shoalrun_loop_t *l, int timeout_ms);

/* ---- bind.c -------------------------------------------------------------- */

/* The binding a job of nranks gets on ncpus when asked for mode. */
int shoalrun_bind_resolve(int mode, int nranks, int ncpus);
const char *shoalrun_bind_name(int mode);
/* In a child: pin rank to the rank-th CPU of cpus (ncpus of them). */
void shoalrun_bind_rank(int rank, const int *cpus, int ncpus);
/* The CPUs shoalrun may use, in order; returns the count (at least 1). */
int shoalrun_bind_cpus(int *cpus, int cap);

/* ---- spawn.c ------------------------------------------------------------- */

/* What every rank of the job gets. */
typedef struct shoalrun_launch {
    const char *path; /* the resolved program */
    char **argv;
    int nranks;      /* ranks started here */
    int size, first; /* the job's ranks; our first one */
    const char *kvsname;
    pid_t parent;            /* shoalrun, for the parent-death check */
    sigset_t child_mask;     /* the signal mask shoalrun was started with */
    struct rlimit child_nofile; /* its open-file limit, before raising */
    int stdin_fd;            /* rank 0's stdin */
    int bind;                /* SHOALRUN_BIND_CORE or _NONE (resolved) */
    int *cpus;               /* the CPUs of shoalrun's mask, in order */
    int ncpus;
} shoalrun_launch_t;

/* A started rank: its pid (and process group) and our ends of its fds. */
typedef struct shoalrun_child {
    pid_t pid;
    int pmi_fd;         /* our end of its PMI socketpair */
    int out_fd, err_fd; /* read ends of its stdout and stderr */
} shoalrun_child_t;

/*
 * Before any signal is blocked: record the mask and open-file limit the
 * ranks get, raise ours, choose the binding.
 */
int shoalrun_launch_init(shoalrun_launch_t *l, const shoalrun_args_t *args,
                         const char *kvsname, int first, int nlocal);
void shoalrun_launch_fini(shoalrun_launch_t *l);
int shoalrun_spawn(const shoalrun_launch_t *l, int rank, shoalrun_child_t *c);

/* ---- pmi_server.c -------------------------------------------------------- */

/* What the server tells the job about. */
typedef struct shoalrun_pmi_events {
    void *ctx;
    /* A rank asked to end the job. */
    void (*abort)(void *ctx, int rank, long code, const char *msg);
    /* A barrier can never complete because rank left without entering it. */
    void (*stuck)(void *ctx, int rank, const char *why);
    /* Across hosts: every local rank is in the barrier; the job takes the
     * puts (shoalrun_pmi_fence_take) and later releases the ranks
     * (shoalrun_pmi_fence_release).  NULL: one host, release at once. */
    void (*fence)(void *ctx);
    /* Across hosts, for the launcher to see a barrier no rank of another
     * host can finish (both may be NULL): the first local rank entered a
     * barrier; rank finalized or exited outside one (why says which). */
    void (*waiting)(void *ctx);
    void (*left)(void *ctx, int rank, const char *why);
    /* rank put SHOALRUN_EXPENDABLE_KEY (once; never for rank 0): across
     * hosts a daemon tells the launcher, which alone decides what a lost
     * host costs.  May be NULL. */
    void (*expendable)(void *ctx, int rank);
    /* The lines of checkpoints the launcher asks for (ckpt_trigger.c):
     * what is SHOALRUN_CKPT_READY, _AT (id, count) or _FINAL (count).
     * May be NULL (the lines are then ignored). */
    void (*ckpt)(void *ctx, int rank, int what, long id, long count);
    /* --ft (SHOAL_FT_ACCUSE): rank's wire gave up accused, a rank of
     * another host (docs/FT.md, "Partitions"); checked to be a rank of the
     * job other than rank.  May be NULL (the line is then ignored). */
    void (*accuse)(void *ctx, int rank, int accused);
} shoalrun_pmi_events_t;

enum { SHOALRUN_CKPT_READY, SHOALRUN_CKPT_AT, SHOALRUN_CKPT_FINAL };

typedef struct shoalrun_pmi_conn shoalrun_pmi_conn_t;
typedef struct shoalrun_msg shoalrun_msg_t;

typedef struct shoalrun_pmi {
    int nranks;        /* in the job */
    int first, nlocal; /* the ranks served here */
    char kvsname[64];
    char mapping[1024]; /* PMI_process_mapping; "": not known */
    shoalrun_loop_t *loop;
    shoalrun_pmi_events_t ev;
    shoalrun_pmi_conn_t *conns; /* one per rank */
    base_strmap_t kvs;          /* published keys; values are strdup'ed */
    size_t kvs_bytes;           /* everything ever put, against runaways */
    int in_barrier;             /* ranks waiting in barrier_in */
    int stuck_reported;
} shoalrun_pmi_t;

/* Serve ranks first..first+nlocal-1 of a job of nranks; mapping NULL: all
 * on this host. */
int shoalrun_pmi_init(shoalrun_pmi_t *s, shoalrun_loop_t *loop, int nranks,
                      int first, int nlocal, const char *kvsname,
                      const char *mapping, const shoalrun_pmi_events_t *ev);
/* Append the local ranks' puts since the last barrier to m (as pairs of
 * shoalrun_msg_str) and forget them. */
void shoalrun_pmi_fence_take(shoalrun_pmi_t *s, shoalrun_msg_t *m);
/* Publish the job's puts (pairs as above) and end the local barrier. */
int shoalrun_pmi_fence_release(shoalrun_pmi_t *s, const char *kv, size_t len);
/* Serve rank on fd (our end of its socketpair); takes ownership of fd. */
int shoalrun_pmi_attach(shoalrun_pmi_t *s, int rank, int fd);
/* The rank's process ended: handle what it sent last (an abort, often). */
void shoalrun_pmi_drain(shoalrun_pmi_t *s, int rank);
/* What the rank did with PMI (call after shoalrun_pmi_drain): a rank that
 * initialized and exits without finalizing ended its MPI program early. */
#define SHOALRUN_PMI_INITIALIZED 1 /* sent a PMI-1 init that was accepted */
#define SHOALRUN_PMI_FINALIZED 2   /* sent finalize */
/* put SHOALRUN_EXPENDABLE_KEY (the task runtime's workers): the job goes
 * on without the rank when it is killed, exits without finalizing (the
 * runtime skips shoal_finalize once a worker was lost) or its host is
 * lost; rank 0, the runtime's coordinator, too: the lowest rank alive
 * takes over (docs/TASK.md, the coordinator's death). */
#define SHOALRUN_PMI_EXPENDABLE 4
#define SHOALRUN_EXPENDABLE_KEY "-task-expendable"
int shoalrun_pmi_state(const shoalrun_pmi_t *s, int rank);
/* Then forget it: close, and fail a barrier it can no longer enter. */
void shoalrun_pmi_rank_exited(shoalrun_pmi_t *s, int rank);

/* --ft: tell every rank served here that is still connected that rank dead
 * died (an unsolicited line "cmd=shoal-ft-dead rank=N", which the library
 * reads while it waits: docs/FT.md). */
void shoalrun_pmi_notify_dead(shoalrun_pmi_t *s, int dead);
/* Send rank "cmd=<cmd> id=<id>[ count=<count>]" (count < 0: left out),
 * which it does not answer. */
void shoalrun_pmi_tell(shoalrun_pmi_t *s, int rank, const char *cmd, long id,
                       long count);
void shoalrun_pmi_fini(shoalrun_pmi_t *s);

/* ---- stdio_fwd.c --------------------------------------------------------- */

typedef struct shoalrun_stream shoalrun_stream_t;

typedef struct shoalrun_stdio {
    shoalrun_loop_t *loop;
    int tag;
    int nranks;
    shoalrun_stream_t *streams; /* 2 per rank: stdout, stderr */
    int open;                   /* streams not yet at EOF */
    /* Our stdin to rank 0 through a pipe (only when stdin is a terminal). */
    int in_fd, to_rank0;
    char *in_buf;
    size_t in_len;
    int in_eof;
    /* A daemon feeding rank 0's stdin: n more bytes were written to it. */
    void (*fed)(void *ctx, size_t n);
    void *fed_ctx;
    /* A daemon: the bytes read go here (unchanged, untagged) instead. */
    void (*sink)(void *ctx, int rank, int dest, const char *p, size_t n);
    void *sink_ctx;
} shoalrun_stdio_t;

int shoalrun_stdio_init(shoalrun_stdio_t *io, shoalrun_loop_t *loop,
                        int nranks, int tag);
/* Output of a rank on another host (dest 1 or 2), to pass on in lines. */
void shoalrun_stdio_data(shoalrun_stdio_t *io, int rank, int dest,
                         const char *data, size_t len);
/* Forward rank's stdout and stderr from the read ends of its pipes. */
int shoalrun_stdio_attach(shoalrun_stdio_t *io, int rank, int out_fd,
                          int err_fd);
/*
 * The stdin rank 0 should get: our own fd 0, or (when it is a terminal,
 * which a rank in its own process group may not read) the read end of a
 * pipe we feed.  *child_fd_p is the fd for the child; the caller closes it
 * in the parent after fork when it is not 0.
 */
int shoalrun_stdio_stdin_for_rank0(shoalrun_stdio_t *io, int *child_fd_p);
/* A daemon running rank 0: its stdin is a pipe fed with what the launcher
 * read (shoalrun_stdio_stdin_feed; len 0 is EOF), at most
 * shoalrun_stdio_stdin_window() bytes ahead of what was written. */
int shoalrun_stdio_stdin_fed(shoalrun_stdio_t *io, int *child_fd_p);
void shoalrun_stdio_stdin_feed(shoalrun_stdio_t *io, const char *data,
                               size_t len);
size_t shoalrun_stdio_stdin_window(void);
/* Rank 0 is gone: stop feeding it. */
void shoalrun_stdio_rank0_exited(shoalrun_stdio_t *io);
/* Read the ranks' pipes until EOF on all of them, or for at most wait_ns
 * (0: only what they hold now), passing the output on. */
void shoalrun_stdio_drain(shoalrun_stdio_t *io, uint64_t wait_ns);
/* Drain what the pipes hold, write out partial lines, close everything. */
void shoalrun_stdio_fini(shoalrun_stdio_t *io);

/* ---- cleanup.c ----------------------------------------------------------- */

typedef struct shoalrun_watchdog {
    pid_t pid;
    int fd; /* write end of the pipe the watchdog reads */
} shoalrun_watchdog_t;

/* Remove /dev/shm/<prefix>*; returns how many were removed. */
int shoalrun_sweep_shm(const char *prefix);
/*
 * Fork the watchdog.  It reads process group ids from a pipe; if the pipe
 * closes without "done" (shoalrun was killed), it kills those groups and
 * sweeps /dev/shm/<prefix>*.
 */
int shoalrun_watchdog_start(shoalrun_watchdog_t *wd, const char *shm_prefix);
void shoalrun_watchdog_add(shoalrun_watchdog_t *wd, pid_t pgid);
/* The same for a busy process of --noise (its own group); counted apart. */
void shoalrun_watchdog_add_busy(shoalrun_watchdog_t *wd, pid_t pgid);
/* The job is cleaned up: tell the watchdog to exit, and reap it. */
void shoalrun_watchdog_done(shoalrun_watchdog_t *wd);
/* The pid the job's reaper should leave to shoalrun_watchdog_done. */
int shoalrun_watchdog_is(const shoalrun_watchdog_t *wd, pid_t pid);

/* ---- noise.c ------------------------------------------------------------- */

/* At most this many busy processes per rank (busy=N). */
#define SHOALRUN_NOISE_MAX_BUSY 16

/*
 * Parse one noise spec ("rank=1,stop=5ms,every=50ms", "rank=0-3,busy=2")
 * for a job of nranks and add it to plans[nranks].  SHOAL_ERR_CONFIG with
 * a detail naming the bad part.
 */
int shoalrun_noise_parse(const char *spec, int nranks,
                         shoalrun_noise_plan_t *plans);

typedef struct shoalrun_noise_rank shoalrun_noise_rank_t;

typedef struct shoalrun_noise {
    const shoalrun_noise_plan_t *plans; /* NULL: no noise, all calls no-ops */
    shoalrun_noise_rank_t *ranks;
    int nranks;
    int report;   /* --noise-report: print the summary whatever SHOAL_LOG */
    int timer_fd; /* the stop schedule's timerfd; -1: none */
    int quiet;    /* the job is ending: no more stops, no busy processes */
    uint64_t rng;
    shoalrun_loop_t *loop;
    shoalrun_watchdog_t *wd;
    const shoalrun_launch_t *launch;
} shoalrun_noise_t;

int shoalrun_noise_init(shoalrun_noise_t *n, const shoalrun_args_t *args,
                        shoalrun_loop_t *loop, shoalrun_watchdog_t *wd,
                        const shoalrun_launch_t *launch);
/* rank runs as pid (its group too): start its busy processes and stops. */
int shoalrun_noise_rank_started(shoalrun_noise_t *n, int rank, pid_t pid);
/* rank's process ended (still a zombie): never signal it again. */
void shoalrun_noise_rank_exited(shoalrun_noise_t *n, int rank);
/*
 * The job is ending: continue every stopped rank (so it can honour the
 * SIGTERM that follows), stop the schedule, kill the busy processes.
 */
void shoalrun_noise_quiet(shoalrun_noise_t *n);
/* pid, a child that is not a rank, was reaped: is it a busy process? */
int shoalrun_noise_reaped(shoalrun_noise_t *n, pid_t pid,
                          const struct rusage *ru);
/* Kill and reap what is left, print the summary, free. */
void shoalrun_noise_fini(shoalrun_noise_t *n);

/* ---- auth.c ------------------------------------------------------------- */

#define SHOALRUN_SECRET_LEN 16
#define SHOALRUN_NONCE_LEN 16
#define SHOALRUN_MAC_LEN 16

/* MAC of (role, nonce, node) under secret; role 'C' child, 'P' parent. */
void shoalrun_auth_mac(const unsigned char secret[SHOALRUN_SECRET_LEN],
                       char role, const unsigned char nonce[SHOALRUN_NONCE_LEN],
                       uint32_t node, unsigned char mac[SHOALRUN_MAC_LEN]);
/* Compare without an early exit. */
int shoalrun_auth_equal(const unsigned char *a, const unsigned char *b,
                        size_t n);

/* ---- frame.c ------------------------------------------------------------ */

/* Frame types between shoalrun and its daemons (tree.c says who sends). */
enum {
    SHOALRUN_F_CHALLENGE = 1, /* P→C: nonce */
    SHOALRUN_F_HELLO,         /* C→P: node, nonce, MAC of P's nonce */
    SHOALRUN_F_WELCOME,       /* P→C: MAC of C's nonce */
    SHOALRUN_F_JOB,           /* P→C: the job (daemon.c) */
    SHOALRUN_F_FENCE_UP,      /* C→P: the subtree's new puts */
    SHOALRUN_F_FENCE_DOWN,    /* P→C: every new put of the job */
    SHOALRUN_F_OUTPUT,        /* C→P: rank, 1|2, bytes */
    SHOALRUN_F_EXITED,        /* C→P: rank, pid, wait status, PMI state */
    SHOALRUN_F_ABORT,         /* C→P: rank, pid, code, message */
    SHOALRUN_F_FAILED,        /* C→P: exit code, message */
    SHOALRUN_F_SAY,           /* C→P: a line for the launcher's stderr */
    SHOALRUN_F_LOST,          /* C→P: node, why */
    SHOALRUN_F_DONE,          /* C→P: the subtree's ranks are all gone */
    SHOALRUN_F_SIGNAL,        /* P→C: signal, to process groups or not */
    SHOALRUN_F_STOP,          /* P→C: SIGTERM now, SIGKILL later */
    SHOALRUN_F_KILL,          /* P→C: SIGKILL now */
    SHOALRUN_F_PING,          /* both ways, once a second */
    SHOALRUN_F_WAITING,       /* C→P: a rank entered a barrier */
    SHOALRUN_F_LEFT,          /* C→P: rank, why: it can enter no barrier */
    SHOALRUN_F_STDIN,         /* P→C: bytes for rank 0's stdin; none: EOF */
    SHOALRUN_F_STDIN_ACK,     /* C→P: bytes written to rank 0's stdin */
    SHOALRUN_F_EXPENDABLE,    /* C→P: rank: the job may lose it */
    SHOALRUN_F_FT_DEAD,       /* P→C: rank: it died (--ft); tell the ranks */
    SHOALRUN_F_CKPT_UP,       /* C→P: rank, what, id, count: a rank's line
                                 of a checkpoint the launcher asks for */
    SHOALRUN_F_CKPT_DOWN,     /* P→C: rank, what, id, value: the launcher's
                                 line for that rank (request or target) */
    SHOALRUN_F_ACCUSE,        /* C→P: rank, accused: rank's wire gave the
                                 accused up (--ft, ft_accuse.c) */
    SHOALRUN_F_CONDEMN,       /* P→C: rank: taken for dead; SIGKILL it */
    SHOALRUN_F_MAX
};

typedef struct shoalrun_conn {
    int fd;
    char *in, *out;
    size_t in_len, in_off, in_cap, out_len, out_cap;
    uint32_t max_frame;
    uint64_t last_rx, last_tx;
    int broken;
} shoalrun_conn_t;

void shoalrun_conn_init(shoalrun_conn_t *c, int fd, uint32_t max_frame);
void shoalrun_conn_fini(shoalrun_conn_t *c);
/* Queue a frame and write what the socket takes; -1 if the peer is gone. */
int shoalrun_conn_send(shoalrun_conn_t *c, int type, const void *p, size_t len);
/* Queue bytes that are whole frames already (shoalrun_msg_frame). */
int shoalrun_conn_send_raw(shoalrun_conn_t *c, const void *p, size_t len);
int shoalrun_conn_flush(shoalrun_conn_t *c);
/* Read what is there: 1 more may come, 0 at EOF or error. */
int shoalrun_conn_read(shoalrun_conn_t *c);
/* The next whole frame: 1, or 0 (not yet), or -1 (malformed). */
int shoalrun_conn_next(shoalrun_conn_t *c, int *type, const char **p,
                       uint32_t *len);

struct shoalrun_msg {
    char *buf;
    size_t len, cap;
    int nomem;
};

void shoalrun_msg_u32(shoalrun_msg_t *m, uint32_t v);
void shoalrun_msg_u64(shoalrun_msg_t *m, uint64_t v);
void shoalrun_msg_bytes(shoalrun_msg_t *m, const void *p, size_t n);
void shoalrun_msg_str(shoalrun_msg_t *m, const char *s);
void shoalrun_msg_raw(shoalrun_msg_t *m, const void *p, size_t n);
/* Append a whole frame (header and payload). */
void shoalrun_msg_frame(shoalrun_msg_t *m, int type, const void *p, size_t len);
void shoalrun_msg_fini(shoalrun_msg_t *m);

typedef struct shoalrun_rd {
    const char *p;
    size_t left;
    int bad;
} shoalrun_rd_t;

uint32_t shoalrun_rd_u32(shoalrun_rd_t *r);
uint64_t shoalrun_rd_u64(shoalrun_rd_t *r);
const char *shoalrun_rd_bytes(shoalrun_rd_t *r, size_t *n_p);
const char *shoalrun_rd_str(shoalrun_rd_t *r);
/* An EXPENDABLE frame's payload: exactly one rank, 0..nranks-1; -1 for
 * anything else. */
int shoalrun_rd_expendable(const char *p, size_t len, int nranks);

/* ---- tree.c ------------------------------------------------------------- */

/* What the job hears from the tree. */
typedef struct shoalrun_tree_events {
    void *ctx;
    /* Launcher: OUTPUT, EXITED, ABORT, FAILED or SAY from below. */
    void (*up)(void *ctx, int type, shoalrun_rd_t *r);
    /* Daemon: SIGNAL, STOP or KILL from above. */
    void (*down)(void *ctx, int type, shoalrun_rd_t *r);
    /* Every rank of the job is in the fence: publish kv, release ours. */
    void (*fence_done)(void *ctx, const char *kv, size_t len);
    /* Launcher: node's daemon (and the subtree below it) is gone. */
    void (*lost)(void *ctx, int node, const char *why);
    /* Daemon: the connection to the parent is gone. */
    void (*orphaned)(void *ctx, const char *why);
} shoalrun_tree_events_t;

/* How a tree node starts: the launcher fills it from args, a daemon from
 * its parent's JOB frame (daemon.c). */
typedef struct shoalrun_tree_conf {
    unsigned char secret[SHOALRUN_SECRET_LEN];
    int node;
    int fanout;
    uint64_t timeout_ns;
    char **rsh; /* the remote-exec command's words */
    int nrsh;
    const char *self; /* the shoalrun to start on other hosts */
    const shoalrun_hosts_t *hosts;
    const char *job; /* the JOB payload for our children */
    size_t job_len;
    shoalrun_conn_t *parent; /* a daemon's authenticated connection */
} shoalrun_tree_conf_t;

typedef struct shoalrun_tree shoalrun_tree_t;

int shoalrun_tree_start(shoalrun_tree_t **tp, const shoalrun_tree_conf_t *conf,
                        shoalrun_loop_t *loop, const shoalrun_tree_events_t *ev,
                        shoalrun_watchdog_t *wd);
/* A daemon's message for the launcher (relayed by the daemons above). */
void shoalrun_tree_up(shoalrun_tree_t *t, int type, const void *p, size_t len);
/* The launcher's command for every daemon. */
void shoalrun_tree_down(shoalrun_tree_t *t, int type, const void *p,
                        size_t len);
/* The same for one rank's daemon only: to the child whose subtree holds
 * the rank's host (nothing when it is this node's). */
void shoalrun_tree_down_rank(shoalrun_tree_t *t, int rank, int type,
                             const void *p, size_t len);
/* Our ranks are all in the fence; kv holds their new puts. */
void shoalrun_tree_fence(shoalrun_tree_t *t, const char *kv, size_t len);
/* Every child daemon has reported DONE or was lost. */
int shoalrun_tree_children_done(const shoalrun_tree_t *t);
/* Heartbeats and time limits; returns ms until the next check. */
int shoalrun_tree_timers(shoalrun_tree_t *t);
/* pid (reaped, status) was one of our remote-exec commands? */
int shoalrun_tree_reaped(shoalrun_tree_t *t, pid_t pid, int status);
/* Daemon: tell the parent our subtree is done. */
void shoalrun_tree_done(shoalrun_tree_t *t);
/* Daemon: the parent has closed (or was never there). */
int shoalrun_tree_orphaned(const shoalrun_tree_t *t);
/* Is node in the subtree under top? */
int shoalrun_tree_below(const shoalrun_tree_t *t, int node, int top);
/* Close everything; wait a little for the remote-exec commands, then kill
 * what is left of them. */
void shoalrun_tree_fini(shoalrun_tree_t *t);

/* ---- ckpt_request.c ------------------------------------------------------ */

/* A rank, as the checkpoint requests see it. */
typedef struct shoalrun_ckpt_rank {
    int ready;    /* finished MPI_Init: requests may go to it */
    int gone;     /* exited */
    int final;    /* in MPI_Finalize: count is its last */
    int answered; /* answered the current request with count */
    long count;
} shoalrun_ckpt_rank_t;

/* The launcher's lines to a rank (SHOALRUN_F_CKPT_DOWN's what). */
enum { SHOALRUN_CKPT_REQUEST, SHOALRUN_CKPT_TARGET };

typedef struct shoalrun_ckpt {
    int on;            /* with a checkpoint directory (the launcher) */
    uint64_t every_ns; /* --checkpoint-every; 0: none */
    uint64_t next_ns;  /* the next periodic request */
    int wanted;        /* a request waits for the ranks to be ready */
    const char *why;   /* what asked for it: "SIGUSR1", "--checkpoint-every" */
    long id, last_id;  /* the request collecting answers (0: none) */
    int nranks;
    shoalrun_ckpt_rank_t *r;
    shoalrun_pmi_t *pmi; /* serves the ranks of this host */
    /* A line for a rank of another host (down the daemon tree); set by
     * job.c across hosts. */
    void (*down)(void *ctx, int rank, int what, long id, long value);
    void *down_ctx;
} shoalrun_ckpt_t;

/* The launcher's: off (all calls no-ops) without a checkpoint directory;
 * else sets SHOAL_CKPT_TRIGGER=1 for the ranks.  Across hosts the ranks
 * of other hosts are reached through k->down, and their lines come in as
 * those of this host's (shoalrun_ckpt_event, from their daemons). */
int shoalrun_ckpt_init(shoalrun_ckpt_t *k, const shoalrun_args_t *a,
                       shoalrun_pmi_t *pmi);
void shoalrun_ckpt_fini(shoalrun_ckpt_t *k);
/* Ask the ranks for a checkpoint (why: for the messages). */
void shoalrun_ckpt_ask(shoalrun_ckpt_t *k, const char *why);
/* The line of what (SHOALRUN_CKPT_REQUEST or _TARGET) for rank, from
 * the launcher or (across hosts) from its daemon: "shoal-ckpt-request
 * id=ID" or "shoal-ckpt-target id=ID count=VALUE". */
void shoalrun_ckpt_tell(shoalrun_pmi_t *pmi, int rank, int what, long id,
                        long value);
/* A rank's checkpoint line (shoalrun_pmi_events_t.ckpt). */
void shoalrun_ckpt_event(shoalrun_ckpt_t *k, int rank, int what, long id,
                         long count);
void shoalrun_ckpt_rank_gone(shoalrun_ckpt_t *k, int rank);
/* --checkpoint-every: ask when due; the time of the next (UINT64_MAX:
 * none). */
uint64_t shoalrun_ckpt_timer(shoalrun_ckpt_t *k, uint64_t now);

/* ---- restart.c ----------------------------------------------------------- */

/*
 * Run the job, and with --restart-on-failure run it again after a rank's
 * death, from the newest complete checkpoint of the job's directory (or
 * from the beginning when there is none yet), at most args->restart_max
 * times.  Returns shoalrun's exit status (the last attempt's).
 */
int shoalrun_restart_run(shoalrun_args_t *args);

/* ---- daemon.c ------------------------------------------------------------ */

/* `shoalrun --daemon ADDR PORT NODE`; returns the exit status. */
int shoalrun_daemon_main(int argc, char **argv);
/* Launcher: the JOB payload for the daemons. */
int shoalrun_daemon_job(const shoalrun_args_t *args, const char *kvsname,
                        const char *self, shoalrun_msg_t *m);

/* ---- job.c --------------------------------------------------------------- */

/*
 * Run the whole job; returns shoalrun's exit status.  *died_p (may be
 * NULL) tells whether the job ended because a rank died of a signal
 * shoalrun did not send, or a host was lost, and not because the user or
 * --timeout stopped it: what --restart-on-failure restarts for.
 */
int shoalrun_job_run(shoalrun_args_t *args, int *died_p);
/* The same for a daemon: its ranks are first..first+nlocal-1 of args. */
int shoalrun_job_run_daemon(shoalrun_args_t *args, const char *kvsname,
                            const shoalrun_tree_conf_t *conf);

#endif /* SHOALRUN_H */
