/*
 * The workloads of bench/task are right: the quicksort's pieces sort like
 * libc's qsort, nested and rounds alike, at any threshold and with either
 * leaf sort; the ray tracer's bands put together equal the whole image at
 * every split, the job split covers every row once, bad scenes are
 * refused, and a small image's checksum is pinned (so a change of scene or
 * of floating-point behaviour, e.g. FMA contraction, is seen).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/qsort.h"
#include "workload/raytrace.h"

static int failures;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
            failures++;                                                   \
        }                                                                 \
    } while (0)

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void test_qsort(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 17, 100, 1000, 10007 };
    static const size_t threshs[] = { 0, 3, 4, 16, 1000 };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        int32_t *ref = malloc((n + 1) * sizeof *ref);
        int32_t *a = malloc((n + 1) * sizeof *a);
        if (!ref || !a)
            abort();
        for (int dup = 0; dup < 2; dup++) {
            qs_fill(ref, 0, n, 7 + n);
            if (dup)   /* many equal keys */
                for (size_t i = 0; i < n; i++)
                    ref[i] &= 3;
            uint64_t sum = qs_sum(ref, n);
            int32_t *orig = malloc((n + 1) * sizeof *orig);
            if (!orig)
                abort();
            memcpy(orig, ref, n * sizeof *ref);
            qsort(ref, n, sizeof *ref, cmp_i32);
            uint64_t want = qs_checksum(ref, n);
            for (size_t ti = 0; ti < sizeof threshs / sizeof *threshs; ti++) {
                for (int leaf = 0; leaf < 2; leaf++) {
                    for (int rounds = 0; rounds < 2; rounds++) {
                        memcpy(a, orig, n * sizeof *a);
                        if (rounds) {
                            /* par_thresh: none, or 40 (ranges below
                                * it sorted whole in one step). */
                            long r = qs_sort_rounds(a, n, leaf ? 40 : 0,
                                                    threshs[ti],
                                                    (enum qs_leaf)leaf);
                            CHECK(r >= 0 && (n < 2 ? r == 0 : r >= 1),
                                  "n %zu rounds %ld", n, r);
                        } else {
                            qs_sort_nested(a, 0, n, threshs[ti],
                                           (enum qs_leaf)leaf);
                        }
                        CHECK(n == 0 || !memcmp(a, ref, n * sizeof *a),
                              "n %zu dup %d thresh %zu leaf %d rounds %d: "
                              "not libc's order", n, dup, threshs[ti], leaf,
                              rounds);
                        CHECK(qs_is_sorted(a, n) && qs_sum(a, n) == sum &&
                              qs_checksum(a, n) == want, "n %zu", n);
                    }
                }
            }
            free(orig);
        }
        free(ref);
        free(a);
    }

    /* The generator: element i depends on (seed, i) only. */
    int32_t x[64], y[64];
    qs_fill(x, 0, 64, 99);
    qs_fill(y, 0, 32, 99);
    qs_fill(y, 32, 64, 99);
    CHECK(!memcmp(x, y, sizeof x), "qs_fill in two parts differs");
    qs_fill(y, 0, 64, 100);
    CHECK(memcmp(x, y, sizeof x), "seeds 99 and 100 give the same array");
    CHECK(!qs_is_sorted(x, 64), "a random array is sorted");

    /* The partition's contract, and a round step's slots. */
    int32_t p[1000];
    for (int trial = 0; trial < 50; trial++) {
        size_t n = 3 + (size_t)trial * 19;
        qs_fill(p, 0, n, (uint64_t)trial);
        size_t k = qs_partition(p, 0, n);
        int ok = k < n;
        for (size_t i = 0; ok && i < n; i++)
            ok = i < k ? p[i] <= p[k] : i > k ? p[i] >= p[k] : 1;
        CHECK(ok, "partition of %zu at %zu", n, k);
        qs_fill(p, 0, n, (uint64_t)trial);
        struct qs_range out[2];
        int got = qs_round_step(p, (struct qs_range){ 0, n }, 0, 3,
                                QS_LEAF_INSERTION, out);
        size_t covered = 0;
        for (int i = 0; i < got; i++) {
            CHECK(out[i].hi - out[i].lo >= 2 && out[i].hi <= n,
                  "step range %zu..%zu", out[i].lo, out[i].hi);
            covered += out[i].hi - out[i].lo;
        }
        CHECK(got <= 2 && covered <= n - 1, "step of %zu: %d ranges", n, got);
        /* Below the parallel threshold a step sorts its range whole. */
        qs_fill(p, 0, n, (uint64_t)trial);
        got = qs_round_step(p, (struct qs_range){ 0, n }, n + 1, 3,
                            QS_LEAF_INSERTION, out);
        CHECK(got == 0 && qs_is_sorted(p, n), "step of %zu below "
              "par_thresh: %d ranges", n, got);
    }
}

static void test_raytrace(void)
{
    struct rt_scene s;
    CHECK(rt_scene_default(&s, 0, 10, 1, 1, 1) == -1, "width 0 accepted");
    CHECK(rt_scene_default(&s, 10, 10, 0, 1, 1) == -1, "samples 0 accepted");
    CHECK(rt_scene_default(&s, 10, 10, 1, RT_MAX_DEPTH + 1, 1) == -1,
          "depth too large accepted");
    CHECK(rt_scene_default(&s, 37, 29, 3, 3, 5) == 0, "a good scene refused");
    CHECK(s.nspheres == 36, "%d spheres, not the thesis's 36", s.nspheres);

    size_t bytes = rt_image_bytes(&s), row = (size_t)s.width * 3;
    unsigned char *whole = malloc(bytes), *parts = malloc(bytes);
    if (!whole || !parts)
        abort();
    rt_trace_rows(&s, 0, s.height, whole);
    for (int jobs = 1; jobs <= s.height; jobs += jobs < 5 ? 1 : 6) {
        memset(parts, 0xa5, bytes);
        int next = 0;
        for (int j = 0; j < jobs; j++) {
            int y0, y1;
            rt_job_rows(s.height, jobs, j, &y0, &y1);
            CHECK(y0 == next && y1 >= y0, "jobs %d job %d rows %d..%d", jobs,
                  j, y0, y1);
            next = y1;
        }
        CHECK(next == s.height, "jobs %d cover %d rows", jobs, next);
        /* In reverse order: no band depends on another. */
        for (int j = jobs - 1; j >= 0; j--) {
            int y0, y1;
            rt_job_rows(s.height, jobs, j, &y0, &y1);
            rt_trace_rows(&s, y0, y1, parts + (size_t)y0 * row);
        }
        CHECK(!memcmp(whole, parts, bytes), "%d bands differ from the whole",
              jobs);
    }

    /* Not a blank image: many distinct colours. */
    int seen[256] = { 0 }, distinct = 0;
    for (size_t i = 0; i < bytes; i++)
        if (!seen[whole[i]]++)
            distinct++;
    CHECK(distinct > 100, "only %d distinct byte values", distinct);

    /* Another seed is another scene. */
    struct rt_scene s2;
    rt_scene_default(&s2, 37, 29, 3, 3, 6);
    rt_trace_rows(&s2, 0, s2.height, parts);
    CHECK(memcmp(whole, parts, bytes), "seeds 5 and 6 give the same image");

    /* Pinned: the same bytes in every build (no FMA contraction, no
     * -ffast-math), today's scene. */
    uint64_t sum = rt_checksum(whole, bytes);
    CHECK(sum == UINT64_C(0xc10544c83821a348), "checksum %016" PRIx64
          " changed", sum);
    free(whole);
    free(parts);
}

int main(void)
{
    test_qsort();
    test_raytrace();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("bench/task workloads: all checks passed\n");
    return 0;
}
