/*
 * The task runtime's quicksort (bench/task, the thesis's B6), both of the
 * thesis's versions on the array of seq_qsort in the shared heap:
 *
 *   nested  a range of --par-thresh elements or more is partitioned and a
 *           block of two jobs sorts its sides (each again nested); a
 *           shorter range is sorted by qs_sort_nested inside its job;
 *   rounds  the root runs rounds: a block of one job per pending range,
 *           each stepping its range (qs_round_step: partitioned into two
 *           slots, or sorted whole below --par-thresh), then the root
 *           packs the slots (qs_round_pack) for the next round: a barrier
 *           per round and no nesting.
 *
 *   shoalrun -n N task_qsort [options of seq_qsort] [--par-thresh P]
 *
 * --par-thresh defaults to 100000.  The same partition and leaf sort as
 * seq_qsort, and a sorted array is unique, so the checksum is the
 * sequential program's; the root checks order and elements (their sum)
 * like seq_qsort and fails otherwise.  `time` is the sort alone, measured
 * by the root job (the value stays in private memory).
 */
#include <inttypes.h>
#include <stdio.h>

#include <shoal/task.h>

#include "workload/cli.h"
#include "workload/qsort.h"

/* What the jobs share: the array and, for rounds, the ranges of the round
 * (written by the root) and the slots the jobs fill, all in the heap. */
SHOAL_SHARED struct {
    int32_t *a;
    size_t par, thresh;
    enum qs_leaf leaf;
    struct qs_range *cur;   /* rounds: this round's ranges */
    struct qs_range *slots; /* rounds: job i's two results at 2i, 2i+1 */
    int *counts;            /* rounds: how many of them job i yields */
} g;

static void sort(size_t lo, size_t hi);

/* Job id of a nested block sorts side id: bounds lo0 hi0 lo1 hi1. */
SHOAL_TASK_ROUTINE(side)
{
    const size_t *b = arg;
    (void)width;
    (void)len;
    sort(b[2 * id], b[2 * id + 1]);
}

static void sort(size_t lo, size_t hi)
{
    if (hi - lo < g.par) {
        qs_sort_nested(g.a, lo, hi, g.thresh, g.leaf);
        return;
    }
    size_t k = qs_partition(g.a, lo, hi);
    size_t bounds[4] = {lo, k, k + 1, hi};
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(2, side, bounds, sizeof bounds);
    SHOAL_PAREND;
}

/* Job id of a round steps range id. */
SHOAL_TASK_ROUTINE(step)
{
    (void)width;
    (void)arg;
    (void)len;
    g.counts[id] = qs_round_step(g.a, g.cur[id], g.par, g.thresh, g.leaf,
                                 &g.slots[2 * (size_t)id]);
}

/* Returns the number of rounds, or -1 without memory. */
static long sort_rounds(size_t n)
{
    /* The ranges of a round are those the last one partitioned (each of
     * par elements or more, disjoint) cut in two: at most 2 n / par. */
    size_t cap = 2 * (n / g.par) + 2;
    if (shoal_task_alloc(cap * sizeof *g.cur, (void **)&g.cur) != SHOAL_OK ||
        shoal_task_alloc(2 * cap * sizeof *g.slots, (void **)&g.slots) !=
            SHOAL_OK ||
        shoal_task_alloc(cap * sizeof *g.counts, (void **)&g.counts) !=
            SHOAL_OK)
        return -1;
    size_t ncur = 0;
    if (n > 1)
        g.cur[ncur++] = (struct qs_range){0, n};
    long rounds = 0;
    while (ncur > 0) {
        SHOAL_PARBEGIN
            SHOAL_ROUTINE((int)ncur, step, NULL, 0);
        SHOAL_PAREND;
        ncur = qs_round_pack(g.slots, g.counts, ncur, g.cur);
        rounds++;
    }
    return rounds;
}

static int task_main(int argc, char **argv)
{
    struct wl_qs_opts o;
    int rc = wl_qs_parse(&o, argc, argv, "task_qsort");
    if (rc)
        return rc > 0 ? 0 : 2;
    g.thresh = o.thresh < 3 ? 3 : o.thresh;
    g.par = o.par_thresh ? o.par_thresh : 100000;
    if (g.par < g.thresh)
        g.par = g.thresh;
    g.leaf = o.leaf;
    if (shoal_task_alloc((o.n ? o.n : 1) * sizeof *g.a, (void **)&g.a) !=
        SHOAL_OK) {
        fprintf(stderr, "task_qsort: %s (SHOAL_TASK_HEAP sets the shared "
                "heap's size)\n", shoal_error_detail());
        return 1;
    }
    qs_fill(g.a, 0, o.n, o.seed);
    uint64_t sum = qs_sum(g.a, o.n);
    long rounds = 0;
    double t0 = wl_now();
    if (o.rounds)
        rounds = sort_rounds(o.n);
    else if (o.n > 1)
        sort(0, o.n);
    double t = wl_now() - t0;
    if (rounds < 0) {
        fprintf(stderr, "task_qsort: no shared heap for the rounds' ranges: "
                "%s\n", shoal_error_detail());
        return 1;
    }
    printf("# qsort task runtime %s n %zu seed %" PRIu64 " thresh %zu "
           "par-thresh %zu leaf %s\n", o.rounds ? "rounds" : "nested", o.n,
           o.seed, g.thresh, g.par,
           o.leaf == QS_LEAF_BUBBLE ? "bubble" : "insertion");
    printf("time %.6f\n", t);
    if (o.rounds)
        printf("rounds %ld\n", rounds);
    printf("checksum %016" PRIx64 "\n", qs_checksum(g.a, o.n));
    int bad = 0;
    if (!qs_is_sorted(g.a, o.n)) {
        fprintf(stderr, "task_qsort: the result is not sorted\n");
        bad = 1;
    }
    if (qs_sum(g.a, o.n) != sum) {
        fprintf(stderr, "task_qsort: the result does not hold the same "
                "elements (sum changed)\n");
        bad = 1;
    }
    if (o.out) {
        FILE *f = fopen(o.out, "wb");
        if (!f || fwrite(g.a, sizeof *g.a, o.n, f) != o.n || fclose(f)) {
            perror(o.out);
            bad = 1;
        }
    }
    return bad;
}
SHOAL_TASK_MAIN(task_main)
