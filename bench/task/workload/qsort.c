/*
 * The quicksort workload (qsort.h).
 */
#include "qsort.h"

#include <stdlib.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void qs_fill(int32_t *a, size_t lo, size_t hi, uint64_t seed)
{
    for (size_t i = lo; i < hi; i++)
        a[i] = (int32_t)(uint32_t)(mix64(seed + 0x9e3779b97f4a7c15ULL *
                                                   (uint64_t)(i + 1)) >> 32);
}

static void swap(int32_t *a, size_t i, size_t j)
{
    int32_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

size_t qs_partition(int32_t *a, size_t lo, size_t hi)
{
    size_t mid = lo + (hi - lo) / 2, last = hi - 1;
    if (a[mid] < a[lo])
        swap(a, mid, lo);
    if (a[last] < a[lo])
        swap(a, last, lo);
    if (a[last] < a[mid])
        swap(a, last, mid);
    /* a[lo] <= a[mid] <= a[last]: the ends are sentinels. */
    int32_t pivot = a[mid];
    size_t p = hi - 2;
    swap(a, mid, p);
    size_t i = lo, j = p;
    for (;;) {
        while (a[++i] < pivot)
            ;
        while (a[--j] > pivot)
            ;
        if (i >= j)
            break;
        swap(a, i, j);
    }
    swap(a, i, p);
    return i;
}

void qs_leaf_sort(int32_t *a, size_t lo, size_t hi, enum qs_leaf leaf)
{
    if (hi - lo < 2)
        return;
    if (leaf == QS_LEAF_BUBBLE) {
        for (size_t end = hi; end > lo + 1; end--) {
            int swapped = 0;
            for (size_t i = lo; i + 1 < end; i++) {
                if (a[i + 1] < a[i]) {
                    swap(a, i, i + 1);
                    swapped = 1;
                }
            }
            if (!swapped)
                break;
        }
        return;
    }
    for (size_t i = lo + 1; i < hi; i++) {
        int32_t v = a[i];
        size_t j = i;
        while (j > lo && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static size_t clamp_thresh(size_t thresh)
{
    return thresh < 3 ? 3 : thresh;
}

void qs_sort_nested(int32_t *a, size_t lo, size_t hi, size_t thresh,
                    enum qs_leaf leaf)
{
    thresh = clamp_thresh(thresh);
    /* Recursion on the smaller side, a loop on the larger: the stack stays
     * O(log n) on any input, and the result is the same as recursing on
     * both (the sides are disjoint). */
    while (hi - lo >= thresh) {
        size_t k = qs_partition(a, lo, hi);
        if (k - lo < hi - (k + 1)) {
            qs_sort_nested(a, lo, k, thresh, leaf);
            lo = k + 1;
        } else {
            qs_sort_nested(a, k + 1, hi, thresh, leaf);
            hi = k;
        }
    }
    qs_leaf_sort(a, lo, hi, leaf);
}

int qs_round_step(int32_t *a, struct qs_range r, size_t par_thresh,
                  size_t thresh, enum qs_leaf leaf, struct qs_range out[2])
{
    thresh = clamp_thresh(thresh);
    if (par_thresh < thresh)
        par_thresh = thresh;
    if (r.hi - r.lo < par_thresh) {
        qs_sort_nested(a, r.lo, r.hi, thresh, leaf);
        return 0;
    }
    size_t k = qs_partition(a, r.lo, r.hi);
    int n = 0;
    if (k - r.lo >= 2)
        out[n++] = (struct qs_range){ r.lo, k };
    if (r.hi - (k + 1) >= 2)
        out[n++] = (struct qs_range){ k + 1, r.hi };
    return n;
}

size_t qs_round_pack(const struct qs_range *slots, const int *counts,
                     size_t nin, struct qs_range *out)
{
    size_t n = 0;
    for (size_t i = 0; i < nin; i++)
        for (int k = 0; k < counts[i]; k++)
            out[n++] = slots[2 * i + (size_t)k];
    return n;
}

size_t qs_round(int32_t *a, const struct qs_range *in, size_t nin,
                size_t par_thresh, size_t thresh, enum qs_leaf leaf,
                struct qs_range *out)
{
    size_t n = 0;
    for (size_t i = 0; i < nin; i++) {
        struct qs_range two[2];
        int got = qs_round_step(a, in[i], par_thresh, thresh, leaf, two);
        for (int k = 0; k < got; k++)
            out[n++] = two[k];
    }
    return n;
}

long qs_sort_rounds(int32_t *a, size_t n, size_t par_thresh, size_t thresh,
                    enum qs_leaf leaf)
{
    /* Live ranges are disjoint and hold at least 2 elements each (steps
     * drop shorter ones), so no round has more than n / 2 of them. */
    size_t cap = n / 2 + 1;
    struct qs_range *cur = malloc(cap * sizeof *cur);
    struct qs_range *next = malloc(cap * sizeof *next);
    if (!cur || !next) {
        free(cur);
        free(next);
        return -1;
    }
    size_t ncur = 0;
    if (n > 1)
        cur[ncur++] = (struct qs_range){ 0, n };
    long rounds = 0;
    while (ncur > 0) {
        size_t nnext = qs_round(a, cur, ncur, par_thresh, thresh, leaf,
                                next);
        struct qs_range *t = cur;
        cur = next;
        next = t;
        ncur = nnext;
        rounds++;
    }
    free(cur);
    free(next);
    return rounds;
}

int qs_is_sorted(const int32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i] < a[i - 1])
            return 0;
    return 1;
}

uint64_t qs_checksum(const int32_t *a, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)a[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

uint64_t qs_sum(const int32_t *a, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += (uint64_t)(int64_t)a[i];
    return s;
}
