/*
 * The sequential quicksort of bench/task: the nested (recursive) version,
 * or the sequential equivalent of the thesis's non-nested "rounds" version
 * (every round partitions every pending range of --par-thresh elements or
 * more and sorts the shorter ones whole; a parallel version puts a barrier
 * between rounds).  Both sort the same deterministic array with
 * the same partition and leaf sort, so their output is the same; the
 * program checks that the result is sorted and holds the same elements
 * (the sum) and fails otherwise.
 *
 *   seq_qsort [--n N] [--seed N] [--thresh T] [--leaf insertion|bubble]
 *             [--mode nested|rounds] [--par-thresh P] [--out FILE]
 *
 * The thesis's sample: --n 160000 --thresh 1000 --leaf bubble.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload/cli.h"
#include "workload/qsort.h"

int main(int argc, char **argv)
{
    struct wl_qs_opts o;
    int rc = wl_qs_parse(&o, argc, argv, "seq_qsort");
    if (rc)
        return rc > 0 ? 0 : 2;
    int32_t *a = malloc((o.n ? o.n : 1) * sizeof *a);
    if (!a) {
        fprintf(stderr, "seq_qsort: no memory for %zu elements\n", o.n);
        return 1;
    }
    qs_fill(a, 0, o.n, o.seed);
    uint64_t sum = qs_sum(a, o.n);
    long rounds = 0;
    double t0 = wl_now();
    if (o.rounds)
        rounds = qs_sort_rounds(a, o.n, o.par_thresh, o.thresh, o.leaf);
    else
        qs_sort_nested(a, 0, o.n, o.thresh, o.leaf);
    double t = wl_now() - t0;
    if (rounds < 0) {
        fprintf(stderr, "seq_qsort: no memory for the rounds' ranges\n");
        free(a);
        return 1;
    }
    printf("# qsort sequential %s n %zu seed %" PRIu64 " thresh %zu "
           "par-thresh %zu leaf %s\n", o.rounds ? "rounds" : "nested", o.n,
           o.seed, o.thresh, o.par_thresh,
           o.leaf == QS_LEAF_BUBBLE ? "bubble" : "insertion");
    printf("time %.6f\n", t);
    if (o.rounds)
        printf("rounds %ld\n", rounds);
    printf("checksum %016" PRIx64 "\n", qs_checksum(a, o.n));
    int bad = 0;
    if (!qs_is_sorted(a, o.n)) {
        fprintf(stderr, "seq_qsort: the result is not sorted\n");
        bad = 1;
    }
    if (qs_sum(a, o.n) != sum) {
        fprintf(stderr, "seq_qsort: the result does not hold the same "
                "elements (sum changed)\n");
        bad = 1;
    }
    if (o.out) {
        FILE *f = fopen(o.out, "wb");
        if (!f || fwrite(a, sizeof *a, o.n, f) != o.n || fclose(f)) {
            perror(o.out);
            bad = 1;
        }
    }
    free(a);
    return bad;
}
