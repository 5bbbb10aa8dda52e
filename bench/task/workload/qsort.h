/*
 * The quicksort workload of bench/task (issue 17, the thesis's B6): a
 * deterministic random array and the pieces a nested (recursive) quicksort
 * and the thesis's non-nested "rounds" quicksort are made of.  The
 * sequential programs and the task runtime's versions call the same
 * functions: a partition with a median-of-three pivot, a leaf sort below a
 * threshold, and (for rounds) one round's step on one range, whose outputs
 * go to fixed slots so that a round's ranges can be done in any order or in
 * parallel.
 *
 * Ranges are half-open, [lo, hi).
 */
#ifndef SHOAL_BENCH_TASK_QSORT_H
#define SHOAL_BENCH_TASK_QSORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How ranges below the threshold are sorted: the thesis's bubblesort or
 * insertion sort. */
enum qs_leaf { QS_LEAF_INSERTION = 0, QS_LEAF_BUBBLE = 1 };

struct qs_range {
    size_t lo, hi;
};

/* a[0..n) from a counter-based generator keyed by seed: element i depends
 * only on (seed, i), so any part can be filled anywhere. */
void qs_fill(int32_t *a, size_t lo, size_t hi, uint64_t seed);

/* Partitions a[lo, hi) (hi - lo >= 3) around the median of a[lo],
 * a[mid], a[hi-1]; returns k with a[lo, k) <= a[k] <= a(k, hi). */
size_t qs_partition(int32_t *a, size_t lo, size_t hi);

/* Sorts a[lo, hi) by the leaf method. */
void qs_leaf_sort(int32_t *a, size_t lo, size_t hi, enum qs_leaf leaf);

/* The sequential nested quicksort: ranges shorter than thresh (at least 3)
 * go to the leaf sort, others are partitioned and both sides sorted, the
 * left first.  A nested parallel version spawns the two sides as jobs
 * (above its parallel threshold) and calls this below it. */
void qs_sort_nested(int32_t *a, size_t lo, size_t hi, size_t thresh,
                    enum qs_leaf leaf);

/* One range's step of a round: shorter than par_thresh (taken as at least
 * thresh) it is sorted whole by qs_sort_nested(thresh, leaf) and yields
 * nothing; otherwise it is partitioned and yields its two sides (those
 * shorter than 2 dropped: already sorted).  out[0..2) receives them;
 * returns how many (0..2). */
int qs_round_step(int32_t *a, struct qs_range r, size_t par_thresh,
                  size_t thresh, enum qs_leaf leaf, struct qs_range out[2]);

/* One round: every range of in[0..nin) stepped, results packed in order
 * into out (room for 2 * nin); returns how many.  The parallel rounds
 * version runs range i as job i writing slots 2i and 2i+1, then packs the
 * same way (qs_round_pack). */
size_t qs_round(int32_t *a, const struct qs_range *in, size_t nin,
                size_t par_thresh, size_t thresh, enum qs_leaf leaf,
                struct qs_range *out);

/* Packs slots[0..2*nin) (counts[i] valid of slots 2i, 2i+1) into out;
 * returns how many. */
size_t qs_round_pack(const struct qs_range *slots, const int *counts,
                     size_t nin, struct qs_range *out);

/* The sequential rounds version: rounds until no range is left; returns
 * the number of rounds (the parallel version's barriers), or -1 when it
 * cannot allocate its range arrays. */
long qs_sort_rounds(int32_t *a, size_t n, size_t par_thresh, size_t thresh,
                    enum qs_leaf leaf);

/* 1 when a[0..n) is in nondecreasing order. */
int qs_is_sorted(const int32_t *a, size_t n);

/* FNV-1a 64 over the array's bytes in little-endian order. */
uint64_t qs_checksum(const int32_t *a, size_t n);

/* Sum of the elements as unsigned 64-bit (order-free: equal before and
 * after sorting, so a sort that loses or invents elements is caught). */
uint64_t qs_sum(const int32_t *a, size_t n);

#ifdef __cplusplus
}
#endif

#endif
