/*
 * B3 of issue 17 (docs/TASK.md): a 4 KiB shared page fetched on demand
 * from the parent.  The root writes n pages of the shared heap, then one
 * child job reads one int of each; its first touch of each page faults
 * and fetches the page from the root, which serves it while it waits at
 * SHOAL_PAREND.  The child times each touch; the root prints the median
 * and the mean in microseconds.  The child runs wherever the scheduler
 * puts it: with -n 1 on the root's worker (same host, same worker), with
 * more workers usually on another one.
 *
 *     task_b3 [pages [width]]   (default 1000 pages, width 1)
 *
 * With width W the block has W reader jobs and only the last (id W - 1)
 * touches and times the pages, the others return at once: on W workers
 * with SHOAL_TASK_COPIES=1 the first stays on the root's worker and the
 * last goes to another, on another host when the workers are spread
 * (docs/PERFORMANCE.md: B3 across namespace hosts).
 *
 * Under SHOAL_TASK_PAGES=off the child gets the root's whole state with it
 * (the first runtime's way) and the touches cost no fetch.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <shoal/task.h>

#define PAGE 4096

SHOAL_SHARED struct {
    char *pages;
    double *ns; /* per page: the child's time for its touch */
    int n;
} g;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

SHOAL_TASK_ROUTINE(reader)
{
    long sum = 0;
    (void)arg;
    (void)len;
    if (id != width - 1)
        return;
    for (int i = 0; i < g.n; i++) {
        double t0 = now_ns();
        sum += *(volatile int *)(void *)(g.pages + (size_t)i * PAGE);
        g.ns[i] = now_ns() - t0;
    }
    if (sum != (long)g.n * (g.n - 1) / 2)
        printf("FAIL: the pages hold %ld, not %ld\n", sum,
               (long)g.n * (g.n - 1) / 2);
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int task_main(int argc, char **argv)
{
    g.n = argc > 1 ? atoi(argv[1]) : 1000;
    int width = argc > 2 ? atoi(argv[2]) : 1;
    if (g.n < 1 || width < 1 ||
        shoal_task_alloc((size_t)g.n * PAGE, (void **)&g.pages) != SHOAL_OK ||
        shoal_task_alloc((size_t)g.n * sizeof(double), (void **)&g.ns) !=
            SHOAL_OK) {
        printf("FAIL: %s\n", shoal_error_detail());
        return 1;
    }
    for (int i = 0; i < g.n; i++)
        *(int *)(void *)(g.pages + (size_t)i * PAGE) = i;
    double t0 = now_ns();
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(width, reader, NULL, 0);
    SHOAL_PAREND;
    double block = now_ns() - t0;
    double *ns = malloc((size_t)g.n * sizeof(double)), sum = 0;
    if (ns == NULL)
        return 1;
    for (int i = 0; i < g.n; i++) {
        ns[i] = g.ns[i];
        sum += ns[i];
    }
    qsort(ns, (size_t)g.n, sizeof(double), cmp);
    printf("b3: %d pages: median %.1f us, mean %.1f us a page; the block "
           "%.2f ms\n",
           g.n, ns[g.n / 2] / 1e3, sum / g.n / 1e3, block / 1e6);
    free(ns);
    return 0;
}
SHOAL_TASK_MAIN(task_main)
