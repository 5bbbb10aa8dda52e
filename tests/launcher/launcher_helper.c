/*
 * A rank for shoalrun's behaviour tests.  The first argument is a marker
 * that only lets the test find this job's processes (pgrep -f); the second
 * says what to do:
 *   exit CODE             every rank exits with CODE
 *   exit-rank R CODE      rank R exits with CODE after 0.2 s; others sleep
 *   kill-rank R SIG       rank R kills itself with SIG after 0.3 s; others
 *                         sleep (each rank leaves a child and a /dev/shm
 *                         object behind for shoalrun to clean up)
 *   sleep S               set up like kill-rank, then sleep S seconds
 *   signals               print each signal received; exit 0 on INT/TERM
 *   ignore-int            print and ignore SIGINT; ignore SIGTERM
 *   ignore-term           ignore SIGTERM
 *   output BYTES          BYTES of numbered lines on stdout and on stderr
 *   gen-output RANK BYTES what rank RANK of "output" writes on stdout
 *   partial               output without newlines, for --tag-output
 *   abort CODE            rank 1 calls boot_abort(CODE); others sleep
 *   finalize-exit R CODE API
 *                         every rank initializes and finalizes with API
 *                         (mpi: MPI_Init/MPI_Finalize, am: shoal_init/
 *                         shoal_finalize); then rank R exits with CODE at
 *                         once, the others sleep 0.3 s, print "rank N
 *                         result 42" and exit 0
 *   finalize-linger R CODE [ignore-term]
 *                         MPI_Init and MPI_Finalize everywhere; then rank
 *                         R exits with CODE, the others print "rank N
 *                         computing" and sleep for ever (ignoring SIGTERM)
 *   no-finalize R API     every rank initializes with API; rank R exits 0
 *                         without finalizing, the others sleep
 *   garbage               rank 1 writes garbage on its PMI fd; then every
 *                         rank runs a normal put/fence/get
 *   accuse A B S          every rank joins the job (boot); rank A accuses
 *                         rank B to the launcher (boot_accuse, as a wire
 *                         that gave B up does under --ft); every rank
 *                         then sleeps S s, leaves the job, prints "rank N
 *                         done" and exits 0
 *   finalize-early        rank 1 finalizes; the others enter a barrier
 *   expendable R S        every rank but R puts the task runtime's PMI key
 *                         task-expendable (as shoal_task_run does), enters a
 *                         fence, prints "ready rank N" and sleeps S s
 *   affinity              print how many CPUs this rank may use
 *   stdin                 print what was read from stdin
 *   gaps MS               for MS ms, read the clock in a loop; print each
 *                         gap over 2 ms, the times it did not run: "rank R
 *                         stopped-us US" when a SIGCONT came in the gap
 *                         (stopped by --noise), else "rank R gap-us US"
 *                         (descheduled)
 *   cputime MS            spin for MS ms; print the CPU time it got, in
 *                         thousandths of the wall time ("cpu-permille N")
 *   sched N               print this rank's scheduling policy and those
 *                         of the job's busy processes ("rank R policy P
 *                         busy B"; waits up to 1 s for them), then sleep 1 ms N times and print the
 *                         median lateness of the wake-ups ("rank R
 *                         wake-late-us US")
 * Ranks print "ready rank R" (and rank 0 "prefix=<shm prefix>") once set up.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "mpi.h"
#include "shoal.h"

static int rank;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void say(const char *fmt, ...) BASE_PRINTF(1, 2);

static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* A /dev/shm object of this job and a child in our process group. */
static void leave_things_behind(void)
{
    char prefix[64], name[96];
    const char *job = getenv("PMI_JOBID");

    boot_shm_prefix(job ? job : "none", prefix, sizeof(prefix));
    snprintf(name, sizeof(name), "/%shelper-%d", prefix, rank);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("shm_open");
        exit(90);
    }
    close(fd);
    if (fork() == 0) {
        for (;;)
            pause(); /* a grandchild of shoalrun: it must not survive */
    }
    if (rank == 0)
        say("prefix=%s\n", prefix);
    say("ready rank %d\n", rank);
}

static void on_signal(int sig)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d got SIG%s\n", rank,
                     sigabbrev_np(sig));
    ssize_t w = write(STDOUT_FILENO, buf, (size_t)n);

    (void)w;
    if (sig == SIGINT || sig == SIGTERM)
        _exit(0);
}

static void on_int_ignored(int sig)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d got SIGINT (ignored)\n", rank);
    ssize_t w = write(STDOUT_FILENO, buf, (size_t)n);

    (void)w;
}

static void handle(int sig, void (*fn)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigaction(sig, &sa, NULL);
}

static void forever(void)
{
    for (;;)
        pause();
}

static void gen_output(FILE *f, int r, long bytes, const char *what)
{
    long written = 0;

    for (long i = 0; written < bytes; i++) {
        int n = fprintf(f, "r%d %s %ld abcdefghijklmnopqrstuvwxyz %ld\n", r,
                        what, i, i * 7919 % 1000003);
        written += n;
    }
    fflush(f);
}

static void boot_round(void)
{
    const boot_info_t *in;
    char v[32];
    size_t len;

    if (boot_init(&in) != SHOAL_OK)
        exit(91);
    snprintf(v, sizeof(v), "from %d", in->rank);
    if (boot_put("v", v, strlen(v)) != SHOAL_OK || boot_fence() != SHOAL_OK)
        exit(92);
    for (int r = 0; r < in->size; r++)
        if (boot_get(r, "v", v, sizeof(v), &len) != SHOAL_OK)
            exit(93);
    if (boot_fini() != SHOAL_OK)
        exit(94);
    say("rank %d exchanged\n", rank);
}

/* Declare this rank expendable as the task runtime does, unless it is
 * rank keep; the fence makes sure every daemon has passed the word on. */
static void expendable(int keep, double seconds)
{
    const boot_info_t *in;

    if (boot_init(&in) != SHOAL_OK)
        exit(91);
    if (rank != keep && boot_put("task-expendable", "1", 1) != SHOAL_OK)
        exit(92);
    if (boot_fence() != SHOAL_OK)
        exit(92);
    say("ready rank %d\n", rank);
    sleep_s(seconds);
    exit(boot_fini() == SHOAL_OK ? 0 : 94);
}

/* Write garbage, one malformed put whose reply we read, then behave. */
static void garbage(void)
{
    int fd = atoi(getenv("PMI_FD"));
    char longline[1500], reply[256];
    static const char bad_put[] = "cmd=put kvsname=wrong key=k value=v\n";
    static const char junk[] = "this is not pmi\n\x01\x02\ncmd=frobnicate\n"
                               "=\n\ncmd=shoal-ft-accuse\n"
                               "cmd=shoal-ft-accuse rank=99\n"
                               "cmd=shoal-ft-accuse rank=1\n"
                               "cmd=shoal-ft-accuse rank=0\n";

    if (write(fd, bad_put, sizeof(bad_put) - 1) < 0)
        exit(95);
    ssize_t n = read(fd, reply, sizeof(reply) - 1);
    reply[n > 0 ? n : 0] = '\0';
    say("garbage reply: %s", reply);
    memset(longline, 'x', sizeof(longline));
    longline[sizeof(longline) - 1] = '\n';
    if (write(fd, junk, sizeof(junk) - 1) < 0 ||
        write(fd, longline, sizeof(longline)) < 0)
        exit(95);
}

static void affinity(void)
{
    cpu_set_t set;

    sched_getaffinity(0, sizeof(set), &set);
    say("rank %d cpus %d\n", rank, CPU_COUNT(&set));
}

static void read_stdin(void)
{
    char buf[256];
    size_t n = fread(buf, 1, sizeof(buf) - 1, stdin);

    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    say("rank %d read: '%s'\n", rank, buf);
}

static void finalize_early(void)
{
    const boot_info_t *in;

    if (boot_init(&in) != SHOAL_OK)
        exit(91);
    if (rank == 1) {
        boot_fini();
        forever();
    }
    boot_barrier(); /* never completes: shoalrun must notice */
    exit(0);
}

/* Initialize with the API named (mpi or am); exits 92 when it fails. */
static void api_init(const char *api)
{
    if (strcmp(api, "mpi") == 0) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            exit(92);
    } else if (shoal_init(NULL) != SHOAL_OK) {
        exit(92);
    }
}

static void api_finalize(const char *api)
{
    if (strcmp(api, "mpi") == 0) {
        if (MPI_Finalize() != MPI_SUCCESS)
            exit(93);
    } else if (shoal_finalize() != SHOAL_OK) {
        exit(93);
    }
}

/* After finalizing, rank r exits with code at once while the others still
 * have a result to print: shoalrun must let them. */
static int finalize_exit(int r, int code, const char *api)
{
    api_init(api);
    api_finalize(api);
    if (rank == r)
        return code;
    sleep_s(0.3);
    printf("rank %d result 42\n", rank); /* flushed by exit, as usual */
    return 0;
}

/* After finalizing, rank r fails; the others never end on their own. */
static int finalize_linger(int r, int code, int ignore_term)
{
    api_init("mpi");
    api_finalize("mpi");
    if (rank == r)
        return code;
    if (ignore_term)
        signal(SIGTERM, SIG_IGN);
    say("rank %d computing\n", rank);
    forever();
    return 0;
}

static int no_finalize(int r, const char *api)
{
    api_init(api);
    say("rank %d initialized\n", rank);
    if (rank == r)
        return 0;
    forever();
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When the last SIGCONT arrived: the handler runs after the process is
 * continued and before it goes on, so inside the gap the stop made. */
static volatile uint64_t cont_at;

static void on_cont(int sig)
{
    (void)sig;
    cont_at = now_ns();
}

static void gaps(double ms)
{
    uint64_t last = now_ns(), end = last + (uint64_t)(ms * 1e6);
    uint64_t found[256];
    int stopped[256], n = 0;

    handle(SIGCONT, on_cont);
    /* Print afterwards: the loop must only read the clock. */
    while (last < end) {
        uint64_t t = now_ns();
        if (t - last > 2000000 && n < (int)BASE_ARRAY_SIZE(found)) {
            stopped[n] = cont_at > last && cont_at < t;
            found[n++] = t - last;
        }
        last = t;
    }
    for (int i = 0; i < n; i++)
        say("rank %d %s-us %llu\n", rank, stopped[i] ? "stopped" : "gap",
            (unsigned long long)(found[i] / 1000));
    say("rank %d gaps %d\n", rank, n);
}

static void cputime(double ms)
{
    struct timespec c0, c1;
    uint64_t start = now_ns(), end = start + (uint64_t)(ms * 1e6), t;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    do
        t = now_ns();
    while (t < end);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 +
                 (double)(c1.tv_nsec - c0.tv_nsec);
    say("rank %d cpu-permille %d\n", rank, (int)(cpu * 1000 / (t - start)));
}

static const char *policy_name(int policy)
{
    switch (policy) {
    case SCHED_OTHER:
        return "other";
    case SCHED_FIFO:
        return "fifo";
    case SCHED_RR:
        return "rr";
    default:
        return "else";
    }
}

/* The policies of the processes named shoalrun-busy that share our parent
 * (the job's), as "rr", "rr,other", or "none". */
static void busy_policies(char *out, size_t size)
{
    char path[64], line[512];
    size_t o = 0;

    out[0] = '\0';
    DIR *proc = opendir("/proc");
    struct dirent *e;

    while (proc != NULL && (e = readdir(proc)) != NULL && o + 8 < size) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%.16s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* gone meanwhile */
        int ok = fgets(line, sizeof(line), f) != NULL;
        fclose(f);
        char *close_paren = ok ? strrchr(line, ')') : NULL;
        if (close_paren == NULL || strstr(line, "(shoalrun-busy)") == NULL)
            continue;
        /* After "(comm) ": state, ppid, ... policy is field 41. */
        int ppid = 0, field = 3, policy = -1;
        for (char *t = strtok(close_paren + 2, " "); t != NULL;
             t = strtok(NULL, " "), field++) {
            if (field == 4)
                ppid = atoi(t);
            if (field == 41)
                policy = atoi(t);
        }
        if (ppid == getppid())
            o += (size_t)snprintf(out + o, size - o, "%s%s", o ? "," : "",
                                  policy_name(policy));
    }
    if (proc != NULL)
        closedir(proc);
    if (o == 0)
        snprintf(out, size, "none");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void sched_report(int n)
{
    char busy[128];
    uint64_t late[256];

    if (n < 1 || n > 256)
        n = 256;
    /* shoalrun may start them just after us: give them a second. */
    for (int i = 0; i < 100; i++) {
        busy_policies(busy, sizeof(busy));
        if (strcmp(busy, "none") != 0)
            break;
        sleep_s(0.01);
    }
    say("rank %d policy %s busy %s\n", rank,
        policy_name(sched_getscheduler(0)), busy);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        sleep_s(0.001);
        late[i] = now_ns() - t0 - 1000000;
    }
    qsort(late, (size_t)n, sizeof(late[0]), cmp_u64);
    say("rank %d wake-late-us %llu\n", rank,
        (unsigned long long)(late[n / 2] / 1000));
}

static int run(const char *what, char **arg, int nargs)
{
    if (strcmp(what, "exit") == 0 && nargs >= 1)
        return atoi(arg[0]);
    if (strcmp(what, "exit-rank") == 0 && nargs >= 2) {
        if (rank != atoi(arg[0]))
            forever();
        sleep_s(0.2);
        return atoi(arg[1]);
    }
    if (strcmp(what, "kill-rank") == 0 && nargs >= 2) {
        leave_things_behind();
        if (rank != atoi(arg[0]))
            forever();
        sleep_s(0.3);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        say("dying at %lld\n", (long long)ts.tv_sec * 1000000000ll +
                                   ts.tv_nsec);
        raise(atoi(arg[1]));
        return 99;
    }
    if (strcmp(what, "sleep") == 0 && nargs >= 1) {
        leave_things_behind();
        sleep_s(atof(arg[0]));
        return 0;
    }
    if (strcmp(what, "signals") == 0) {
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
            handle(sigs[i], on_signal);
        say("ready rank %d\n", rank);
        forever();
    }
    if (strcmp(what, "ignore-int") == 0 || strcmp(what, "ignore-term") == 0) {
        if (what[7] == 'i')
            handle(SIGINT, on_int_ignored);
        signal(SIGTERM, SIG_IGN);
        say("ready rank %d\n", rank);
        forever();
    }
    if (strcmp(what, "output") == 0 && nargs >= 1) {
        gen_output(stdout, rank, atol(arg[0]), "out");
        gen_output(stderr, rank, atol(arg[0]), "err");
        return 0;
    }
    if (strcmp(what, "gen-output") == 0 && nargs >= 2) {
        gen_output(stdout, atoi(arg[0]), atol(arg[1]), "out");
        return 0;
    }
    if (strcmp(what, "partial") == 0) {
        say("a");
        sleep_s(0.05);
        say("b\nc");
        return 0;
    }
    if (strcmp(what, "abort") == 0 && nargs >= 1) {
        const boot_info_t *in;
        if (boot_init(&in) != SHOAL_OK)
            return 91;
        if (rank == 1)
            boot_abort(atoi(arg[0]), "helper abort test");
        forever();
    }
    if (strcmp(what, "finalize-exit") == 0 && nargs >= 3)
        return finalize_exit(atoi(arg[0]), atoi(arg[1]), arg[2]);
    if (strcmp(what, "finalize-linger") == 0 && nargs >= 2)
        return finalize_linger(atoi(arg[0]), atoi(arg[1]),
                               nargs >= 3 && strcmp(arg[2], "ignore-term") == 0);
    if (strcmp(what, "no-finalize") == 0 && nargs >= 2)
        return no_finalize(atoi(arg[0]), arg[1]);
    if (strcmp(what, "garbage") == 0) {
        if (rank == 1)
            garbage();
        boot_round();
        return 0;
    }
    if (strcmp(what, "accuse") == 0 && nargs >= 3) {
        const boot_info_t *in;
        if (boot_init(&in) != SHOAL_OK)
            return 91;
        if (rank == atoi(arg[0]) && boot_accuse(atoi(arg[1])) != SHOAL_OK)
            return 92;
        sleep_s(atof(arg[2]));
        if (boot_fini() != SHOAL_OK)
            return 93;
        say("rank %d done\n", rank);
        return 0;
    }
    if (strcmp(what, "finalize-early") == 0)
        finalize_early();
    if (strcmp(what, "expendable") == 0 && nargs >= 2)
        expendable(atoi(arg[0]), atof(arg[1]));
    if (strcmp(what, "affinity") == 0) {
        affinity();
        return 0;
    }
    if (strcmp(what, "stdin") == 0) {
        read_stdin();
        return 0;
    }
    if (strcmp(what, "gaps") == 0 && nargs >= 1) {
        gaps(atof(arg[0]));
        return 0;
    }
    if (strcmp(what, "cputime") == 0 && nargs >= 1) {
        cputime(atof(arg[0]));
        return 0;
    }
    if (strcmp(what, "sched") == 0 && nargs >= 1) {
        sched_report(atoi(arg[0]));
        return 0;
    }
    fprintf(stderr, "launcher_helper: bad arguments\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *r = getenv("PMI_RANK");

    if (argc < 3) {
        fprintf(stderr, "usage: launcher_helper MARKER ACTION [ARGS]\n");
        return 2;
    }
    rank = r ? atoi(r) : 0;
    return run(argv[2], argv + 3, argc - 3);
}
