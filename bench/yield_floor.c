/*
 * yield_floor: the least time a barrier can take when processes share CPUs
 * and wait by yielding, on this machine.
 *
 * N processes (default 8), bound round-robin to the online CPUs as
 * `shoalrun --bind-to core` binds ranks, pass barriers through flags in
 * shared memory: each raises its own flag (one 128-byte unit per process)
 * and looks at everyone's, calling sched_yield() after every look that
 * finds one missing.  No library, no progress engine, no checks: whatever
 * a real library adds comes on top of this.  On an oversubscribed host
 * each process must run once per barrier, so the time is the scheduler's
 * switch cost times the processes per CPU; docs/PERFORMANCE.md compares
 * Shoal's and Open MPI's barriers with it.
 *
 * Prints the median of --batches batches in microseconds per barrier, and
 * the sched_yield calls per barrier over all processes.
 *
 *   cc -O2 -o yield_floor bench/yield_floor.c
 *   ./yield_floor [--procs N] [--iters N] [--batches N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define UNIT 128 /* adjacent-line prefetch: the false-sharing unit */
#define MAX_PROCS 1024
#define MAX_BATCHES 101

typedef struct shared {
    _Alignas(UNIT) _Atomic uint64_t yields[MAX_PROCS][UNIT / 8];
    _Alignas(UNIT) double batch_us[MAX_BATCHES];
    _Alignas(UNIT) _Atomic uint64_t flag[MAX_PROCS][UNIT / 8];
} shared_t;

static double now_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void usage(const char *why)
{
    if (why != NULL)
        fprintf(stderr, "yield_floor: %s\n", why);
    fprintf(stderr,
            "usage: yield_floor [--procs N] [--iters N] [--batches N]\n"
            "  --procs N    processes (default 8), bound round-robin to "
            "the online CPUs\n"
            "  --iters N    barriers per batch (default 20000)\n"
            "  --batches N  timed batches, after one untimed (default 5); "
            "the median is printed\n");
    exit(why != NULL ? 2 : 0);
}

static long arg_long(const char *name, const char *v, long lo, long hi)
{
    char *end;
    long x;

    if (v == NULL)
        usage("an option lacks its value");
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "yield_floor: %s must be an integer from %ld to %ld, "
                        "not '%s'\n", name, lo, hi, v);
        exit(2);
    }
    return x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Barrier n: raise our flag, then wait for everyone's. */
static uint64_t barrier(shared_t *sh, int me, int procs, uint64_t n)
{
    uint64_t yields = 0;

    atomic_store_explicit(&sh->flag[me][0], n, memory_order_release);
    for (int q = 0; q < procs; q++)
        while (atomic_load_explicit(&sh->flag[q][0], memory_order_acquire) <
               n) {
            sched_yield();
            yields++;
        }
    return yields;
}

static void proc_main(shared_t *sh, int me, int procs, long iters,
                      int batches, int ncpu, const int *cpus)
{
    cpu_set_t set;
    uint64_t n = 0, yields = 0;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    CPU_ZERO(&set);
    CPU_SET(cpus[me % ncpu], &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("yield_floor: sched_setaffinity");
    for (long i = 0; i < iters; i++) /* warm-up batch */
        barrier(sh, me, procs, ++n);
    for (int b = 0; b < batches; b++) {
        double t0 = now_us();
        for (long i = 0; i < iters; i++)
            yields += barrier(sh, me, procs, ++n);
        if (me == 0)
            sh->batch_us[b] = (now_us() - t0) / (double)iters;
    }
    atomic_store(&sh->yields[me][0], yields);
    _exit(0);
}

int main(int argc, char **argv)
{
    long procs = 8, iters = 20000, batches = 5;
    int cpus[CPU_SETSIZE], ncpu = 0, failed = 0;
    cpu_set_t online;
    shared_t *sh;
    uint64_t yields = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--procs") == 0)
            procs = arg_long("--procs", argv[++i], 1, MAX_PROCS);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = arg_long("--iters", argv[++i], 1, 1L << 30);
        else if (strcmp(argv[i], "--batches") == 0)
            batches = arg_long("--batches", argv[++i], 1, MAX_BATCHES);
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            usage(NULL);
        else
            usage("unknown option");
    }
    if (sched_getaffinity(0, sizeof(online), &online) != 0) {
        perror("yield_floor: sched_getaffinity");
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &online))
            cpus[ncpu++] = c;
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("yield_floor: mmap");
        return 1;
    }
    for (int p = 0; p < procs; p++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("yield_floor: fork");
            return 1; /* the started ones die with us (PDEATHSIG) */
        }
        if (pid == 0)
            proc_main(sh, p, (int)procs, iters, (int)batches, ncpu, cpus);
    }
    for (int p = 0; p < procs; p++) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    }
    if (failed) {
        fprintf(stderr, "yield_floor: a process failed\n");
        return 1;
    }
    for (int p = 0; p < procs; p++)
        yields += atomic_load(&sh->yields[p][0]);
    qsort(sh->batch_us, (size_t)batches, sizeof(double), cmp_double);
    printf("# yield_floor: %ld processes on %d CPUs, %ld barriers x %ld "
           "batches\n", procs, ncpu, iters, batches);
    printf("us_per_barrier %.3f\n", sh->batch_us[batches / 2]);
    printf("yields_per_barrier %.2f\n",
           (double)yields / ((double)iters * (double)batches));
    return 0;
}
