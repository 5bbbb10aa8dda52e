/*
 * Nested quicksort (tests/task, after the thesis's Fig. 3.2): the array
 * lives in the shared heap, each partition step starts a block of two
 * jobs for the halves.  The root then sorts a private copy of the input
 * with qsort and the two must be equal; it prints the checksum.
 *
 *     task_qsort [n [threshold]]        (default 200000, 4000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/task.h>

SHOAL_SHARED struct {
    int *a;
    int threshold;
} g;

static void insertion(int *a, int lo, int hi)
{
    for (int i = lo + 1; i < hi; i++) {
        int v = a[i], j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static int median3(int x, int y, int z)
{
    return x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
}

/* Partitions a[lo..hi) around a median of three; returns the pivot's
 * final place k: a[lo..k) <= a[k] <= a[k+1..hi). */
static int partition(int *a, int lo, int hi)
{
    int p = median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
    int m = lo;
    for (int i = lo; i < hi; i++)
        if (a[i] == p) {
            a[i] = a[lo];
            a[lo] = p;
            break;
        }
    for (int i = lo + 1; i < hi; i++)
        if (a[i] < p) {
            int t = a[++m];
            a[m] = a[i];
            a[i] = t;
        }
    a[lo] = a[m];
    a[m] = p;
    return m;
}

static void sort(int lo, int hi);

SHOAL_TASK_ROUTINE(half)
{
    const int *b = arg;
    (void)width;
    (void)len;
    sort(b[2 * id], b[2 * id + 1]);
}

static void sort(int lo, int hi)
{
    if (hi - lo <= g.threshold) {
        insertion(g.a, lo, hi);
        return;
    }
    int k = partition(g.a, lo, hi);
    int bounds[4] = {lo, k, k + 1, hi};
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(2, half, bounds, sizeof bounds);
    SHOAL_PAREND;
}

static int cmp(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static int task_main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    g.threshold = argc > 2 ? atoi(argv[2]) : 4000;
    int *ref = malloc((size_t)n * sizeof(int));

    if (ref == NULL || shoal_task_alloc((size_t)n * sizeof(int),
                                        (void **)&g.a) != SHOAL_OK) {
        printf("FAIL: %s\n", shoal_error_detail());
        return 1;
    }
    for (int i = 0; i < n; i++)
        ref[i] = g.a[i] = (int)shoal_task_rand_below(1000000);
    sort(0, n);
    qsort(ref, (size_t)n, sizeof(int), cmp);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (g.a[i] != ref[i]) {
            printf("FAIL: element %d is %d, sequentially %d\n", i, g.a[i],
                   ref[i]);
            return 1;
        }
        sum = sum * 1000003u + (uint64_t)ref[i];
    }
    printf("ok: %d sorted, checksum %016llx\n", n, (unsigned long long)sum);
    free(ref);
    return 0;
}
SHOAL_TASK_MAIN(task_main)
