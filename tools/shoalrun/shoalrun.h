/*
 * shoalrun: starts the ranks of a job on this machine and serves them the
 * PMI-1 wire protocol.  One process, one poll() loop.  The pieces, one file
 * each:
 *   args.c       the command line
 *   loop.c       the poll() loop: file descriptors with callbacks
 *   job.c        watching, signalling and reaping the ranks; the job's
 *                exit status
 *   spawn.c      starting one rank
 *   bind.c       which CPU each rank runs on
 *   pmi_server.c the PMI-1 server: key-value store and barrier
 *   stdio_fwd.c  the ranks' stdout/stderr to ours, our stdin to rank 0
 *   noise.c      --noise: ranks stopped on a schedule, or sharing their CPU
 *                with busy processes
 *   cleanup.c    the /dev/shm sweep and the watchdog that cleans up after
 *                a shoalrun that was killed
 * A multi-host mode would add daemons that do spawn.c's work remotely and
 * relay PMI lines and output; pmi_server.c and stdio_fwd.c do not care
 * where a line came from.
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
/* How long ranks get to exit after SIGTERM before SIGKILL. */
#define SHOALRUN_GRACE_NS 1000000000ull
/* After the last rank is reaped, how long we still read its output. */
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
} shoalrun_noise_plan_t;

typedef struct shoalrun_args {
    int nranks;
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
    int nranks;
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
                         const char *kvsname);
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
} shoalrun_pmi_events_t;

typedef struct shoalrun_pmi_conn shoalrun_pmi_conn_t;

typedef struct shoalrun_pmi {
    int nranks;
    char kvsname[64];
    char mapping[64]; /* PMI_process_mapping */
    shoalrun_loop_t *loop;
    shoalrun_pmi_events_t ev;
    shoalrun_pmi_conn_t *conns; /* one per rank */
    base_strmap_t kvs;          /* published keys; values are strdup'ed */
    size_t kvs_bytes;           /* everything ever put, against runaways */
    int in_barrier;             /* ranks waiting in barrier_in */
    int stuck_reported;
} shoalrun_pmi_t;

int shoalrun_pmi_init(shoalrun_pmi_t *s, shoalrun_loop_t *loop, int nranks,
                      const char *kvsname, const shoalrun_pmi_events_t *ev);
/* Serve rank on fd (our end of its socketpair); takes ownership of fd. */
int shoalrun_pmi_attach(shoalrun_pmi_t *s, int rank, int fd);
/* The rank's process ended: handle what it sent last (an abort, often). */
void shoalrun_pmi_drain(shoalrun_pmi_t *s, int rank);
/* Then forget it: close, and fail a barrier it can no longer enter. */
void shoalrun_pmi_rank_exited(shoalrun_pmi_t *s, int rank);
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
} shoalrun_stdio_t;

int shoalrun_stdio_init(shoalrun_stdio_t *io, shoalrun_loop_t *loop,
                        int nranks, int tag);
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
/* Rank 0 is gone: stop feeding it. */
void shoalrun_stdio_rank0_exited(shoalrun_stdio_t *io);
/* Write out partial lines and close everything. */
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

/* ---- job.c --------------------------------------------------------------- */

/* Run the whole job; returns shoalrun's exit status. */
int shoalrun_job_run(shoalrun_args_t *args);

#endif /* SHOALRUN_H */
