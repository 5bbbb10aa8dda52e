/*
 * Page diffs: encoding against twins (exact, canonical, across pages),
 * the decoder on bad input, applying, and merging a sibling set with
 * common-CRCW conflict detection.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/base.h"
#include "task/task_diff.h"
#include "test.h"

#define PAGE 4096

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* cur = twin with about n random bytes changed (to a different value). */
static void mutate(const uint8_t *twin, uint8_t *cur, size_t len, int n)
{
    memcpy(cur, twin, len);
    for (int i = 0; i < n; i++) {
        size_t at = rnd() % len, run = 1 + rnd() % 16;
        for (size_t k = at; k < at + run && k < len; k++)
            cur[k] = (uint8_t)(twin[k] + 1 + rnd() % 255);
    }
}

/* Every run holds changed bytes only, and every changed byte is in one;
 * runs never touch. */
static void check_exact(const uint8_t *d, size_t dl, const uint8_t *twin,
                        const uint8_t *cur, size_t len)
{
    task_diff_iter_t it;
    task_diff_run_t run;
    uint8_t *seen = calloc(len, 1);
    uint64_t prev_end = 0;
    int first = 1;

    T_OK(task_diff_iter_init(&it, d, dl, len));
    while (task_diff_iter_next(&it, &run) == 1) {
        T_ASSERT(first || run.off > prev_end);
        for (uint64_t k = 0; k < run.len; k++) {
            T_ASSERT(twin[run.off + k] != cur[run.off + k]);
            T_EQ(run.bytes[k], cur[run.off + k]);
            seen[run.off + k] = 1;
        }
        prev_end = run.off + run.len;
        first = 0;
    }
    for (size_t k = 0; k < len; k++)
        T_EQ(seen[k], twin[k] != cur[k]);
    free(seen);
}

static void test_roundtrip_random(void)
{
    uint8_t *twin = malloc(4 * PAGE), *cur = malloc(4 * PAGE);
    uint8_t *out = malloc(4 * PAGE);

    for (int round = 0; round < 200; round++) {
        task_diff_writer_t w;
        const uint8_t *d;
        size_t dl;
        for (size_t i = 0; i < 4 * PAGE; i++)
            twin[i] = (uint8_t)rnd();
        mutate(twin, cur, 4 * PAGE, (int)(rnd() % 40));
        task_diff_writer_init(&w, NULL, 0);
        /* Page by page, skipping page 2 if unchanged, as the tracker does. */
        for (int p = 0; p < 4; p++)
            T_OK(task_diff_add(&w, (uint64_t)p * PAGE, twin + p * PAGE,
                               cur + p * PAGE, PAGE));
        T_OK(task_diff_finish(&w, &d, &dl));
        check_exact(d, dl, twin, cur, 4 * PAGE);
        memcpy(out, twin, 4 * PAGE);
        T_OK(task_diff_apply(d, dl, out, 4 * PAGE));
        T_ASSERT(memcmp(out, cur, 4 * PAGE) == 0);
        task_diff_writer_fini(&w);
    }
    free(twin);
    free(cur);
    free(out);
}

/* A change across a page boundary is one run, as if the pages were one:
 * the encoding does not depend on how the caller cut the memory. */
static void test_canonical_across_pages(void)
{
    static uint8_t twin[2 * PAGE], cur[2 * PAGE];
    uint8_t b1[256], b2[256];
    task_diff_writer_t w1, w2;
    const uint8_t *d1, *d2;
    size_t l1, l2;
    uint32_t runs;
    uint64_t bytes;

    memset(cur + PAGE - 10, 7, 20);
    task_diff_writer_init(&w1, b1, sizeof b1);
    T_OK(task_diff_add(&w1, 0, twin, cur, PAGE));
    T_OK(task_diff_add(&w1, PAGE, twin + PAGE, cur + PAGE, PAGE));
    T_OK(task_diff_finish(&w1, &d1, &l1));
    task_diff_writer_init(&w2, b2, sizeof b2);
    T_OK(task_diff_add(&w2, 0, twin, cur, 2 * PAGE));
    T_OK(task_diff_finish(&w2, &d2, &l2));
    T_EQ(l1, l2);
    T_ASSERT(memcmp(d1, d2, l1) == 0);
    T_OK(task_diff_check(d1, l1, 2 * PAGE, &runs, &bytes));
    T_EQ(runs, 1);
    T_EQ(bytes, 20);
    /* header 8 + gap varint(4086) 2 + len 1 + 20 bytes */
    T_EQ(l1, 31);
}

static void test_writer_errors(void)
{
    uint8_t twin[64] = {0}, cur[64], small[16];
    task_diff_writer_t w;
    const uint8_t *d;
    size_t dl;

    memset(cur, 1, sizeof cur);
    task_diff_writer_init(&w, small, sizeof small);
    T_ERR(task_diff_add(&w, 0, twin, cur, sizeof cur), SHOAL_ERR_TOO_LARGE);
    T_ERR(task_diff_finish(&w, &d, &dl), SHOAL_ERR_TOO_LARGE); /* sticky */

    task_diff_writer_init(&w, NULL, 0);
    T_OK(task_diff_add(&w, 100, twin, cur, 10));
    T_ERR(task_diff_add(&w, 105, twin, cur, 10), SHOAL_ERR_INVALID);
    task_diff_writer_fini(&w);

    /* An empty diff is a header with no runs; it applies as nothing. */
    task_diff_writer_init(&w, NULL, 0);
    T_OK(task_diff_add(&w, 0, twin, twin, sizeof twin));
    T_OK(task_diff_finish(&w, &d, &dl));
    T_EQ(dl, TASK_DIFF_HDR);
    T_OK(task_diff_apply(d, dl, cur, sizeof cur));
    T_EQ(cur[0], 1);
    task_diff_writer_fini(&w);
}

static size_t build(uint8_t *buf, size_t cap, uint64_t off, const char *s)
{
    task_diff_writer_t w;
    const uint8_t *d;
    size_t dl;

    task_diff_writer_init(&w, buf, cap);
    T_OK(task_diff_add_bytes(&w, off, s, strlen(s)));
    T_OK(task_diff_finish(&w, &d, &dl));
    return dl;
}

static void test_decoder_refuses(void)
{
    uint8_t good[64], bad[64], mem[64];
    size_t n = build(good, sizeof good, 10, "hello");

    /* Every proper prefix is refused; the whole is accepted. */
    for (size_t k = 0; k < n; k++)
        T_ERR(task_diff_check(good, k, 64, NULL, NULL), SHOAL_ERR_PROTOCOL);
    T_OK(task_diff_check(good, n, 64, NULL, NULL));
    /* Past the region's end. */
    T_ERR(task_diff_check(good, n, 14, NULL, NULL), SHOAL_ERR_PROTOCOL);
    T_OK(task_diff_check(good, n, 15, NULL, NULL));
    /* Trailing byte. */
    memcpy(bad, good, n);
    bad[n] = 0;
    T_ERR(task_diff_check(bad, n + 1, 64, NULL, NULL), SHOAL_ERR_PROTOCOL);
    /* Magic, version, flags. */
    for (int i = 0; i < 4; i++) {
        memcpy(bad, good, n);
        bad[i] ^= 0x40;
        T_ERR(task_diff_check(bad, n, 64, NULL, NULL), SHOAL_ERR_PROTOCOL);
    }
    /* Zero-length run; more runs than there are. */
    memcpy(bad, good, n);
    bad[TASK_DIFF_HDR + 1] = 0;
    T_ERR(task_diff_check(bad, n, 64, NULL, NULL), SHOAL_ERR_PROTOCOL);
    memcpy(bad, good, n);
    bad[4] = 2;
    T_ERR(task_diff_check(bad, n, 64, NULL, NULL), SHOAL_ERR_PROTOCOL);
    /* Two runs that touch (second gap 0) are not canonical. */
    const uint8_t touch[] = {'T', 'D', 1, 0, 2, 0, 0, 0,
                             1, 1, 'a', 0, 1, 'b'};
    T_ERR(task_diff_check(touch, sizeof touch, 64, NULL, NULL),
          SHOAL_ERR_PROTOCOL);
    /* A bad diff changes nothing, even when its first run is good. */
    const uint8_t half[] = {'T', 'D', 1, 0, 2, 0, 0, 0,
                            0, 1, 'a', 1, 9, 'b'};
    memset(mem, '.', sizeof mem);
    T_ERR(task_diff_apply(half, sizeof half, mem, sizeof mem),
          SHOAL_ERR_PROTOCOL);
    T_EQ(mem[0], '.');
    T_OK(task_diff_apply(good, n, mem, sizeof mem));
    T_ASSERT(memcmp(mem + 10, "hello", 5) == 0);
    T_EQ(mem[9], '.');
    T_EQ(mem[15], '.');
}

typedef struct sib {
    task_path_t path;
    uint8_t buf[256];
    size_t len;
} sib_t;

static void make_sib(sib_t *s, uint32_t id, uint64_t off, const char *text)
{
    task_path_t root = TASK_PATH_ROOT;

    T_OK(task_path_child(&root, 0, 0, id, &s->path));
    s->len = build(s->buf, sizeof s->buf, off, text);
}

static void test_merge(void)
{
    sib_t s[4];
    task_diff_part_t parts[4], rev[4];
    task_diff_conflict_t c;
    uint8_t mem[64];
    char pa[32], pb[32];

    make_sib(&s[0], 0, 0, "aaaa");
    make_sib(&s[1], 1, 8, "bbbb");
    make_sib(&s[2], 2, 2, "aaXX"); /* agrees with 0 on bytes 2-3 */
    make_sib(&s[3], 3, 30, "dd");
    for (int i = 0; i < 4; i++) {
        parts[i] = (task_diff_part_t){&s[i].path, s[i].buf, s[i].len};
        rev[3 - i] = parts[i];
    }
    memset(mem, '.', sizeof mem);
    T_OK(task_diff_merge(parts, 4, mem, sizeof mem, &c));
    T_ASSERT(memcmp(mem, "aaaaXX..bbbb", 12) == 0);
    T_ASSERT(memcmp(mem + 30, "dd", 2) == 0);

    /* Sibling 3 now writes 'Z' over sibling 1's 'b' at byte 9, and
     * sibling 2 writes 'X' at byte 9 too: three jobs, two conflicts at
     * byte 9; the report is the first pair in path order, whatever the
     * order of the parts. */
    task_path_free(&s[3].path);
    make_sib(&s[3], 3, 9, "Z");
    s[2].len = build(s[2].buf, sizeof s[2].buf, 2, "aaXXXXXX");
    parts[2].len = s[2].len;
    parts[3] = (task_diff_part_t){&s[3].path, s[3].buf, s[3].len};
    rev[0] = parts[3];
    rev[1] = parts[2];
    for (int order = 0; order < 2; order++) {
        memset(mem, '.', sizeof mem);
        memset(&c, 0, sizeof c);
        T_ERR(task_diff_merge(order ? rev : parts, 4, mem, sizeof mem, &c),
              SHOAL_ERR_INVALID);
        T_EQ(c.off, 8); /* 'X' (sibling 2) against 'b' (sibling 1) */
        task_path_format(c.a, pa, sizeof pa);
        task_path_format(c.b, pb, sizeof pb);
        T_STREQ(pa, "/0.0[1]");
        T_STREQ(pb, "/0.0[2]");
        T_EQ(c.va, 'b');
        T_EQ(c.vb, 'X');
        T_ASSERT(strstr(shoal_error_detail(), "/0.0[1]") != NULL);
        T_ASSERT(strstr(shoal_error_detail(), "/0.0[2]") != NULL);
        T_EQ(mem[0], '.'); /* nothing applied */
    }

    /* The same job twice; a malformed part. */
    task_diff_part_t dup[2] = {parts[0], parts[0]};
    T_ERR(task_diff_merge(dup, 2, mem, sizeof mem, &c), SHOAL_ERR_INVALID);
    s[1].buf[0] = 'X';
    T_ERR(task_diff_merge(parts, 2, mem, sizeof mem, &c), SHOAL_ERR_PROTOCOL);
    T_EQ(mem[0], '.');
    T_OK(task_diff_merge(NULL, 0, mem, sizeof mem, &c));
    for (int i = 0; i < 4; i++)
        task_path_free(&s[i].path);
}

/* Random sibling sets whose overlaps all agree merge to the same memory
 * in any order; one changed byte in an overlap is then a conflict. */
static void test_merge_random(void)
{
    enum { N = 6, LEN = 2 * PAGE };
    static uint8_t base[LEN], want[LEN], cur[LEN], mem[LEN];
    task_diff_writer_t w[N];
    task_diff_part_t parts[N];
    task_path_t paths[N], root = TASK_PATH_ROOT;

    for (int round = 0; round < 30; round++) {
        for (size_t i = 0; i < LEN; i++)
            base[i] = (uint8_t)rnd();
        mutate(base, want, LEN, 60); /* the values every writer agrees on */
        for (int j = 0; j < N; j++) {
            const uint8_t *d;
            size_t dl;
            memcpy(cur, base, LEN);
            for (size_t i = 0; i < LEN; i++)
                if (rnd() % 3 == 0)
                    cur[i] = want[i];
            T_OK(task_path_child(&root, 1, (uint32_t)j % 2, (uint32_t)j,
                                 &paths[j]));
            task_diff_writer_init(&w[j], NULL, 0);
            T_OK(task_diff_add(&w[j], 0, base, cur, LEN));
            T_OK(task_diff_finish(&w[j], &d, &dl));
            parts[j] = (task_diff_part_t){&paths[j], d, dl};
        }
        /* Every byte that some writer changed now has want's value. */
        for (int k = N - 1; k > 0; k--) {
            int x = (int)(rnd() % (uint64_t)(k + 1));
            task_diff_part_t t = parts[k];
            parts[k] = parts[x];
            parts[x] = t;
        }
        memcpy(mem, base, LEN);
        T_OK(task_diff_merge(parts, N, mem, LEN, NULL));
        for (size_t i = 0; i < LEN; i++)
            T_ASSERT(mem[i] == base[i] || mem[i] == want[i]);
        for (int j = 0; j < N; j++) {
            task_diff_writer_fini(&w[j]);
            task_path_free(&paths[j]);
        }
    }
}

/* The skip table: a diff of many runs (a change every few bytes, as a
 * matrix of doubles against zeros makes), read one page at a time from
 * where task_diff_skip_seek puts the iterator, gives every page exactly;
 * seeking never moves back; a malformed diff is refused. */
static void test_skip(void)
{
    enum { NP = 64 };
    uint8_t *twin = calloc(NP, PAGE), *cur = calloc(NP, PAGE);
    uint8_t page[PAGE];
    task_diff_writer_t w;
    task_diff_skip_t sk;
    const uint8_t *d;
    size_t dl;

    for (size_t i = 0; i < (size_t)NP * PAGE; i += 3 + rnd() % 9)
        cur[i] = (uint8_t)(1 + rnd() % 255);
    task_diff_writer_init(&w, NULL, 0);
    T_OK(task_diff_add(&w, 0, twin, cur, (size_t)NP * PAGE));
    T_OK(task_diff_finish(&w, &d, &dl));
    T_OK(task_diff_skip_build(d, dl, (uint64_t)NP * PAGE, &sk));
    T_ASSERT(sk.n > 100); /* thousands of runs */
    for (int p = NP - 1; p >= 0; p--) {
        uint64_t lo = (uint64_t)p * PAGE, hi = lo + PAGE;
        task_diff_iter_t it;
        task_diff_run_t run;
        size_t read = 0;
        memset(page, 0, sizeof page);
        T_OK(task_diff_iter_init(&it, d, dl, (uint64_t)NP * PAGE));
        task_diff_skip_seek(&sk, lo, &it);
        while (task_diff_iter_next(&it, &run) == 1 && run.off < hi) {
            read++;
            for (uint64_t b = run.off; b < run.off + run.len; b++)
                if (b >= lo && b < hi)
                    page[b - lo] = run.bytes[b - run.off];
        }
        T_ASSERT(memcmp(page, cur + lo, PAGE) == 0);
        /* a page's runs plus at most one table step before it */
        T_ASSERT(read <= PAGE / 3 + TASK_DIFF_SKIP_RUNS + 1);
        task_diff_iter_t later = it;
        task_diff_skip_seek(&sk, 0, &later);
        T_EQ(later.pos, it.pos);
    }
    task_diff_skip_free(&sk);
    T_EQ(sk.n, 0u);
    uint8_t bad[64];
    memcpy(bad, d, sizeof bad);
    bad[0] = 'X';
    T_ERR(task_diff_skip_build(bad, sizeof bad, (uint64_t)NP * PAGE, &sk),
          SHOAL_ERR_PROTOCOL);
    T_ASSERT(sk.at == NULL);
    task_diff_writer_fini(&w);
    free(twin);
    free(cur);
}

int main(void)
{
    test_skip();
    test_roundtrip_random();
    test_canonical_across_pages();
    test_writer_errors();
    test_decoder_refuses();
    test_merge();
    test_merge_random();
    return 0;
}
