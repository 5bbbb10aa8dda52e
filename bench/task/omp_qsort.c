/*
 * The OpenMP quicksort of bench/task, both of the thesis's versions on
 * OMP_NUM_THREADS threads sharing one array:
 *
 *   nested  a range of --par-thresh elements or more is partitioned and
 *           its two sides sorted as OpenMP tasks (taskwait), shorter ones
 *           by qs_sort_nested in the task that has them;
 *   rounds  every round steps all pending ranges in a parallel loop
 *           (qs_round_step into fixed slots), then packs them
 *           (qs_round_pack): a barrier per round.
 *
 *   OMP_NUM_THREADS=N omp_qsort [options of seq_qsort] [--par-thresh P]
 *
 * --par-thresh defaults to 100000.  The upper bound on one host for the
 * task runtime's nested and rounds quicksort (digest 002, 7.4); checks its
 * result like seq_qsort.
 */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload/cli.h"
#include "workload/qsort.h"

static void sort_task(int32_t *a, size_t lo, size_t hi, size_t par,
                      size_t thresh, enum qs_leaf leaf)
{
    if (hi - lo < par) {
        qs_sort_nested(a, lo, hi, thresh, leaf);
        return;
    }
    size_t k = qs_partition(a, lo, hi);
#pragma omp task
    sort_task(a, lo, k, par, thresh, leaf);
#pragma omp task
    sort_task(a, k + 1, hi, par, thresh, leaf);
#pragma omp taskwait
}

/* Returns the number of rounds, or -1 without memory. */
static long sort_rounds(int32_t *a, size_t n, size_t par, size_t thresh,
                        enum qs_leaf leaf)
{
    size_t cap = n / 2 + 1;
    struct qs_range *cur = malloc(cap * sizeof *cur);
    struct qs_range *slots = malloc(2 * cap * sizeof *slots);
    int *counts = malloc(cap * sizeof *counts);
    long rounds = 0;
    if (!cur || !slots || !counts) {
        rounds = -1;
        goto out;
    }
    size_t ncur = 0;
    if (n > 1)
        cur[ncur++] = (struct qs_range){ 0, n };
    while (ncur > 0) {
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t i = 0; i < ncur; i++)
            counts[i] = qs_round_step(a, cur[i], par, thresh, leaf,
                                      &slots[2 * i]);
        ncur = qs_round_pack(slots, counts, ncur, cur);
        rounds++;
    }
out:
    free(cur);
    free(slots);
    free(counts);
    return rounds;
}

int main(int argc, char **argv)
{
    struct wl_qs_opts o;
    int rc = wl_qs_parse(&o, argc, argv, "omp_qsort");
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.par_thresh == 0)
        o.par_thresh = 100000;
    if (o.par_thresh < o.thresh)
        o.par_thresh = o.thresh;
    if (o.par_thresh < 3)
        o.par_thresh = 3;
    int32_t *a = malloc((o.n ? o.n : 1) * sizeof *a);
    if (!a) {
        fprintf(stderr, "omp_qsort: no memory for %zu elements\n", o.n);
        return 1;
    }
    qs_fill(a, 0, o.n, o.seed);
    uint64_t sum = qs_sum(a, o.n);
    long rounds = 0;
    double t0 = wl_now();
    if (o.rounds) {
        rounds = sort_rounds(a, o.n, o.par_thresh, o.thresh, o.leaf);
    } else {
#pragma omp parallel
#pragma omp single
        sort_task(a, 0, o.n, o.par_thresh, o.thresh, o.leaf);
    }
    double t = wl_now() - t0;
    if (rounds < 0) {
        fprintf(stderr, "omp_qsort: no memory for the rounds' ranges\n");
        free(a);
        return 1;
    }
    printf("# qsort openmp %s n %zu seed %" PRIu64 " thresh %zu par-thresh "
           "%zu threads %d\n", o.rounds ? "rounds" : "nested", o.n, o.seed,
           o.thresh, o.par_thresh, omp_get_max_threads());
    printf("time %.6f\n", t);
    if (o.rounds)
        printf("rounds %ld\n", rounds);
    printf("checksum %016" PRIx64 "\n", qs_checksum(a, o.n));
    int bad = !qs_is_sorted(a, o.n) || qs_sum(a, o.n) != sum;
    if (bad)
        fprintf(stderr, "omp_qsort: the result is not sorted or lost "
                "elements\n");
    free(a);
    return bad;
}
