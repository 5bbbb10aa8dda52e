/*
 * The floor of the thesis's B1 (job creation and completion) for a runtime
 * that runs every job as a fresh process: fork a child per job, the child
 * reads and writes one int in shared memory (the thesis's job body) and
 * exits, the parent waits.  No scheduling, no diffs, no messages: what
 * process creation alone costs on this machine, next to which the task
 * runtime's per-job time and Dask's are read.
 *
 *   b1_fork [--shapes 1000x1,1x1000,10x100,100x10] [--nested chain:100,tree:7]
 *           [--reps N]
 *
 * BxJ: B blocks one after another, each of J jobs forked at once and waited
 * for; chain:D: a job that starts one child and waits, D deep; tree:D: a
 * binary tree of depth D (2^(D+1) - 1 jobs).  Prints, per shape, the median
 * over --reps runs of the microseconds per job:
 *
 *   b1 <shape> <us per job>
 *
 * the line format every B1 program of bench/task prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload/cli.h"

static volatile int *shared_int;

static int wait_all(int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad = 1;
    }
    return bad;
}

static void job_body(void)
{
    int v = *shared_int;   /* read and write one shared location */
    *shared_int = v + 1;
}

/* B blocks of J jobs; returns seconds, or -1. */
static double run_blocks(int blocks, int jobs)
{
    double t0 = wl_now();
    for (int b = 0; b < blocks; b++) {
        for (int j = 0; j < jobs; j++) {
            pid_t p = fork();
            if (p < 0)
                return -1;
            if (p == 0) {
                job_body();
                _exit(0);
            }
        }
        if (wait_all(jobs))
            return -1;
    }
    return wl_now() - t0;
}

/* A job of a nested shape: kind 'c' starts one child, 't' two; exits 0
 * when the whole subtree did. */
static int nested(char kind, int depth)
{
    job_body();
    if (depth == 0)
        return 0;
    int kids = kind == 'c' ? 1 : 2;
    for (int k = 0; k < kids; k++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0)
            _exit(nested(kind, depth - 1));
    }
    return wait_all(kids);
}

static double run_nested(char kind, int depth)
{
    double t0 = wl_now();
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0)
        _exit(nested(kind, depth));
    if (wait_all(1))
        return -1;
    return wl_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *shapes = "1000x1,1x1000,10x100,100x10";
    const char *nests = "chain:100,tree:7";
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
            shapes = argv[++i];
        } else if (!strcmp(argv[i], "--nested") && i + 1 < argc) {
            nests = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: b1_fork [--shapes BxJ,...] "
                    "[--nested chain:D,tree:D,...] [--reps N]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "b1_fork: --reps takes 1 to 1000\n");
        return 2;
    }
    shared_int = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared_int == MAP_FAILED) {
        perror("b1_fork: mmap");
        return 1;
    }
    printf("# b1 fork: a process per job, %d reps, medians\n", reps);
    char list[2][512];
    snprintf(list[0], sizeof list[0], "%s", shapes);
    snprintf(list[1], sizeof list[1], "%s", nests);
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t)
        return 1;
    for (int which = 0; which < 2; which++) {
        char *save = NULL;
        for (char *s = strtok_r(list[which], ",", &save); s;
             s = strtok_r(NULL, ",", &save)) {
            int a = 0, b = 0;
            char kind = 0;
            long jobs;
            if (which == 0 && sscanf(s, "%dx%d", &a, &b) == 2 && a > 0 &&
                b > 0 && (long)a * b <= 1000000) {
                jobs = (long)a * b;
            } else if (which == 1 && (sscanf(s, "chain:%d", &a) == 1 ||
                                      sscanf(s, "tree:%d", &a) == 1) &&
                       a >= 0 && a <= (s[0] == 't' ? 16 : 1000)) {
                kind = s[0];
                jobs = kind == 'c' ? a + 1 : (2L << a) - 1;
            } else {
                fprintf(stderr, "b1_fork: bad shape %s\n", s);
                return 2;
            }
            for (int r = 0; r < reps; r++) {
                t[r] = kind ? run_nested(kind, a) : run_blocks(a, b);
                if (t[r] < 0) {
                    fprintf(stderr, "b1_fork: %s failed: %s\n", s,
                            strerror(errno));
                    return 1;
                }
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            printf("b1 %s %.2f\n", s, t[reps / 2] * 1e6 / (double)jobs);
            fflush(stdout);
        }
    }
    free(t);
    return 0;
}
