/*
 * The lock counter (tests/task): k jobs each enter a critical section n
 * times and add one to a shared counter; whatever runs twice, is stopped
 * or killed, the counter must end at exactly k * n.  A second lock guards
 * a second counter that every other section also adds to, so that two
 * locks interleave.  With r rounds the block runs r times in a row (each
 * round's jobs may run in the processes of the round before: warm copies).
 *
 *     task_locks [k [n [r [m [spin_us [adder_us]]]]]]
 *
 * (default 4 jobs x 1000 sections, 1 round).  m more jobs in each round's
 * block take no lock: each computes for spin_us and writes its own cell
 * of a shared array, which the root checks, so that a failover has both
 * kinds to keep or run again (task_faults.sh coordlate).  With adder_us,
 * each of the k jobs computes that long before its sections (so that
 * jobs end one after another and a failover finds lock jobs finished,
 * running and not started: the test locks.coordkeep).  With
 * TASK_TEST_PROGRESS set, each run of a job prints "ran <path>" to
 * stderr as it ends.  The last line gives jobs= (the root's included) and
 * lockjobs= (the k jobs' runs: they take locks).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <shoal/task.h>

#define CELLS 4096

SHOAL_SHARED long cells[CELLS];
SHOAL_SHARED long counter;
SHOAL_SHARED long evens;
SHOAL_TASK_LOCK(counter_lock, &counter, sizeof counter);
SHOAL_TASK_LOCK(evens_lock, &evens, sizeof evens);

static void progress(void)
{
    if (getenv("TASK_TEST_PROGRESS") != NULL) {
        char p[256];
        shoal_task_path(p, sizeof(p));
        fprintf(stderr, "ran %s\n", p);
    }
}

/* Computes for us microseconds. */
static void spin(unsigned us)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000u +
               (uint64_t)(t.tv_nsec - t0.tv_nsec) / 1000u <
           us);
}

typedef struct adder_arg {
    int n;
    unsigned us;
} adder_arg_t;

SHOAL_TASK_ROUTINE(adder)
{
    const adder_arg_t *a = arg;
    int n = a->n;

    (void)width;
    (void)id;
    (void)len;
    spin(a->us);
    for (int i = 0; i < n; i++) {
        SHOAL_CRITICAL(&counter_lock) { counter++; }
        if (i % 2 == 0) {
            shoal_task_lock(&evens_lock);
            evens += 1;
            shoal_task_unlock(&evens_lock);
        }
    }
    progress();
}

static long cell_value(int round, int id)
{
    uint64_t x = (uint64_t)round * 0x9e3779b97f4a7c15u + (uint64_t)id + 1;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9u;
    return (long)(x ^ (x >> 32));
}

typedef struct lockless_arg {
    int round;
    unsigned spin_us;
} lockless_arg_t;

SHOAL_TASK_ROUTINE(lockless)
{
    const lockless_arg_t *a = arg;
    (void)width;
    (void)len;
    spin(a->spin_us);
    cells[id] += cell_value(a->round, id);
    progress();
}

static int task_main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 4;
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    int r = argc > 3 ? atoi(argv[3]) : 1;
    int m = argc > 4 ? atoi(argv[4]) : 0;
    lockless_arg_t la = {0, argc > 5 ? (unsigned)atoi(argv[5]) : 0};
    adder_arg_t aa = {n, argc > 6 ? (unsigned)atoi(argv[6]) : 0};
    long c, e;
    int bad = -1;

    if (m < 0 || m > CELLS)
        return 2;
    for (int round = 0; round < r; round++) {
        la.round = round;
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(k, adder, &aa, sizeof aa);
            if (m > 0)
                SHOAL_ROUTINE(m, lockless, &la, sizeof la);
        SHOAL_PAREND;
    }
    for (int i = 0; i < m && bad < 0; i++) {
        long want = 0;
        for (int round = 0; round < r; round++)
            want += cell_value(round, i);
        if (cells[i] != want)
            bad = i;
    }
    SHOAL_CRITICAL(&counter_lock) { c = counter; }
    SHOAL_CRITICAL(&evens_lock) { e = evens; }
    long want = (long)k * n * r, want_e = (long)k * ((n + 1) / 2) * r;
    int ok = c == want && e == want_e && bad < 0;
    if (bad >= 0)
        printf("FAIL: cell %d is %ld\n", bad, cells[bad]);
    printf("%s: counter %ld (expected %ld), evens %ld (expected %ld) "
           "jobs=%d lockjobs=%d\n",
           ok ? "ok" : "FAIL", c, want, e, want_e, (k + m) * r + 1, k * r);
    return ok ? 0 : 1;
}
SHOAL_TASK_MAIN(task_main)
