/*
 * The task runtime's B1 (job creation and completion, the thesis's 5.1):
 * the shapes of b1_fork run as blocks of jobs, each job reading and
 * writing one shared int (its own cell, so that siblings never conflict),
 * the root job timing them.
 *
 *   shoalrun -n N task_b1 [--shapes 1000x1,1x1000,10x100,100x10]
 *                         [--nested chain:20,tree:6] [--reps N]
 *
 * BxJ: B blocks one after another, each of J jobs; chain:D: a job that
 * starts a block of one child and waits, D deep (D + 1 jobs with the
 * root's child); tree:D: a binary tree of depth D, a block of two children
 * per inner job (2^(D+1) - 1 jobs).  Every shape starts from the root in
 * a block of its own.  After each run the root checks that every cell
 * was incremented exactly as often as its job ran in it (a job merged
 * twice or not at all fails the program).  Prints, per shape, the median
 * over --reps runs of the microseconds per job, the line format of every
 * B1 program of bench/task:
 *
 *   b1 <shape> <us per job>
 *
 * The clock is read by the root job only, and the times stay in its
 * private memory.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/task.h>

#include "workload/cli.h"

#define B1_MAX_JOBS 100000
#define B1_MAX_TREE 15
#define B1_MAX_CHAIN 1000

/* cells[i]: the int job i reads and writes (heap numbering for trees,
 * depth for chains, id for blocks). */
SHOAL_SHARED struct {
    int *cells;
} g;

/* The thesis's job body: read one shared location, write it. */
static void touch(size_t cell)
{
    int v = g.cells[cell];
    g.cells[cell] = v + 1;
}

SHOAL_TASK_ROUTINE(flat)
{
    (void)width;
    (void)arg;
    (void)len;
    touch((size_t)id);
}

/* The jobs of one nested block: their kind ('c' or 't'), remaining
 * depth, and the cell of id 0 (job id has cell base + id). */
struct b1_node {
    char kind;
    int depth;
    size_t base;
};

SHOAL_TASK_ROUTINE(node)
{
    const struct b1_node *me = arg;
    (void)width;
    (void)len;
    size_t cell = me->base + (size_t)id;
    touch(cell);
    if (me->depth == 0)
        return;
    /* A chain's next job has the next cell; a tree's children of cell c
     * have 2c + 1 and 2c + 2 (heap numbering). */
    struct b1_node kid = {me->kind, me->depth - 1,
                          me->kind == 'c' ? cell + 1 : 2 * cell + 1};
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(me->kind == 'c' ? 1 : 2, node, &kid, sizeof kid);
    SHOAL_PAREND;
}

/* One run of a shape; seconds, or -1 when a cell came out wrong. */
static double run_shape(char kind, int a, int b, long jobs)
{
    long cells = kind == 0 ? b : jobs;
    memset(g.cells, 0, (size_t)cells * sizeof *g.cells);
    double t0 = wl_now();
    if (kind == 0) {
        for (int blk = 0; blk < a; blk++) {
            SHOAL_PARBEGIN
                SHOAL_ROUTINE(b, flat, NULL, 0);
            SHOAL_PAREND;
        }
    } else {
        /* The root's one child is the chain's or the tree's top job. */
        struct b1_node top = {kind, a, 0};
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(1, node, &top, sizeof top);
        SHOAL_PAREND;
    }
    double t = wl_now() - t0;
    int want = kind == 0 ? a : 1;
    for (long i = 0; i < cells; i++) {
        if (g.cells[i] != want) {
            fprintf(stderr, "task_b1: cell %ld is %d after the run, want %d"
                    "\n", i, g.cells[i], want);
            return -1;
        }
    }
    return t;
}

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static int usage(void)
{
    fprintf(stderr, "usage: task_b1 [--shapes BxJ,...] "
            "[--nested chain:D,tree:D,...] [--reps N]\n");
    return 2;
}

static int task_main(int argc, char **argv)
{
    const char *shapes = "1000x1,1x1000,10x100,100x10";
    const char *nests = "chain:20,tree:6";
    int reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes = argv[++i];
        else if (!strcmp(argv[i], "--nested") && i + 1 < argc)
            nests = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            return usage();
    }
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "task_b1: --reps takes 1 to 1000\n");
        return 2;
    }
    if (shoal_task_alloc(B1_MAX_JOBS * sizeof *g.cells, (void **)&g.cells) !=
        SHOAL_OK) {
        fprintf(stderr, "task_b1: %s\n", shoal_error_detail());
        return 1;
    }
    printf("# b1 task runtime: a job per routine id, %d reps, medians\n",
           reps);
    char list[2][512];
    snprintf(list[0], sizeof list[0], "%s", shapes);
    snprintf(list[1], sizeof list[1], "%s", nests);
    double t[1000];
    for (int which = 0; which < 2; which++) {
        char *save = NULL;
        for (char *s = strtok_r(list[which], ",", &save); s;
             s = strtok_r(NULL, ",", &save)) {
            int a = 0, b = 0;
            char kind = 0;
            long jobs;
            if (which == 0 && sscanf(s, "%dx%d", &a, &b) == 2 && a > 0 &&
                b > 0 && (long)a * b <= 1000000 && b <= B1_MAX_JOBS) {
                jobs = (long)a * b;
            } else if (which == 1 && (sscanf(s, "chain:%d", &a) == 1 ||
                                      sscanf(s, "tree:%d", &a) == 1) &&
                       a >= 0 &&
                       a <= (s[0] == 't' ? B1_MAX_TREE : B1_MAX_CHAIN)) {
                kind = s[0];
                jobs = kind == 'c' ? a + 1 : (2L << a) - 1;
            } else {
                fprintf(stderr, "task_b1: bad shape %s\n", s);
                return 2;
            }
            for (int r = 0; r < reps; r++) {
                t[r] = run_shape(kind, a, b, jobs);
                if (t[r] < 0)
                    return 1;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            printf("b1 %s %.2f\n", s, t[reps / 2] * 1e6 / (double)jobs);
        }
    }
    return 0;
}
SHOAL_TASK_MAIN(task_main)
