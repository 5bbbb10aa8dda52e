/*
 * The task runtime's B4 (locks, the thesis's 5.1): the cost of a lock and
 * unlock pair.
 *
 *   shoalrun -n N task_b4 [--sections N] [--reps R]
 *
 *   uncontended  one job enters --sections critical sections of one lock
 *                one after another, each adding one to the lock's
 *                counter; timed by the job itself (the thesis: 1000
 *                sections, 1.3 ms a pair);
 *   contended2   two sibling jobs do the same on the same lock at once;
 *                timed by the root around the block, per section (the
 *                thesis: 7.0 s for 2 x 1000 on 2 workers).
 *
 * Each is run --reps times (default 3); the root then checks in the
 * critical section that the counter is exactly (1 + 2) x sections x reps
 * (a section lost or run twice fails the program) and prints the medians
 * in microseconds per lock+unlock pair, the line format of bench/task's
 * lock programs:
 *
 *   b4 uncontended <us>
 *   b4 contended2 <us>
 *
 * The uncontended job hands its time to the root in a shared slot of its
 * rep (the run of the job that finished first is the one merged).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/task.h>

#include "workload/cli.h"

#define B4_MAX_REPS 100

SHOAL_SHARED long counter;
SHOAL_TASK_LOCK(counter_lock, &counter, sizeof counter);

/* Each uncontended run's job writes its microseconds per pair here, in a
 * slot of its own (rep), merged into the root at the block's end. */
SHOAL_SHARED struct {
    double us[B4_MAX_REPS];
} g;

struct b4_arg {
    int sections, rep;
};

static void sections(int n)
{
    for (int i = 0; i < n; i++) {
        shoal_task_lock(&counter_lock);
        counter++;
        shoal_task_unlock(&counter_lock);
    }
}

SHOAL_TASK_ROUTINE(alone)
{
    const struct b4_arg *a = arg;
    (void)width;
    (void)id;
    (void)len;
    double t0 = wl_now();
    sections(a->sections);
    /* A benchmark's only non-determinism: another run of this job would
     * write another time; the first run to finish is the one merged. */
    g.us[a->rep] = (wl_now() - t0) * 1e6 / a->sections;
}

SHOAL_TASK_ROUTINE(contender)
{
    const struct b4_arg *a = arg;
    (void)width;
    (void)id;
    (void)len;
    sections(a->sections);
}

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static int task_main(int argc, char **argv)
{
    int n = 1000, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sections") && i + 1 < argc) {
            n = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: task_b4 [--sections N] [--reps R]\n");
            return 2;
        }
    }
    if (n < 1 || n > 10000000 || reps < 1 || reps > B4_MAX_REPS) {
        fprintf(stderr, "task_b4: --sections takes 1 to 10000000, --reps 1 "
                "to %d\n", B4_MAX_REPS);
        return 2;
    }
    double contended[B4_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        struct b4_arg a = {n, r};
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(1, alone, &a, sizeof a);
        SHOAL_PAREND;
        double t0 = wl_now();
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(2, contender, &a, sizeof a);
        SHOAL_PAREND;
        contended[r] = (wl_now() - t0) * 1e6 / (2.0 * n);
    }
    long got;
    SHOAL_CRITICAL(&counter_lock) { got = counter; }
    if (got != 3L * n * reps) {
        fprintf(stderr, "task_b4: the counter is %ld, want %ld\n", got,
                3L * n * reps);
        return 1;
    }
    double alone_us[B4_MAX_REPS];
    memcpy(alone_us, g.us, (size_t)reps * sizeof *alone_us);
    qsort(alone_us, (size_t)reps, sizeof *alone_us, cmp_double);
    qsort(contended, (size_t)reps, sizeof *contended, cmp_double);
    printf("# b4 task runtime: %d sections a run, %d reps, medians; counter "
           "%ld\n", n, reps, got);
    printf("b4 uncontended %.2f\n", alone_us[reps / 2]);
    printf("b4 contended2 %.2f\n", contended[reps / 2]);
    return 0;
}
SHOAL_TASK_MAIN(task_main)
