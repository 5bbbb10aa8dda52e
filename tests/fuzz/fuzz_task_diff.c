/*
 * Fuzz target for what the task runtime will read from other workers
 * before it believes anything: page diffs (task_diff.c) and job paths
 * (task_path.c), and the merge of two siblings' diffs.  The first input
 * byte picks: 0 mod 3, a diff over a 4 KiB region; 1, a job path; 2, two
 * diffs (split where the second byte says) merged.  Oracles: an accepted
 * diff applies within the region and encodes back to the same bytes (the
 * format has one encoding per set of changes); an accepted path rebuilt
 * level by level gives the same bytes and prints within bounds; a merge
 * that succeeds equals applying the two diffs in either order, one that
 * fails leaves the memory as it was, and a reported conflict is a byte
 * the two diffs really set to different values.  Built as a libFuzzer
 * target with SHOAL_BUILD_FUZZ=ON (clang), and with fuzz_main.c as a
 * program that replays tests/fuzz/corpus/fuzz_task_diff in CTest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/errors.h"
#include "task/task_diff.h"
#include "task/task_path.h"

#include "fuzz.h"

#define REGION 4096

static void fuzz_diff(const uint8_t *in, size_t len)
{
    static uint8_t mem[REGION];
    task_diff_writer_t w;
    task_diff_iter_t it;
    task_diff_run_t run;
    const uint8_t *out;
    size_t outlen;
    uint32_t runs;
    uint64_t bytes, seen = 0;

    int r = task_diff_check(in, len, REGION, &runs, &bytes);
    if (r != 0) {
        CHECK(r == SHOAL_ERR_PROTOCOL);
        CHECK(task_diff_apply(in, len, mem, REGION) == SHOAL_ERR_PROTOCOL);
        return;
    }
    CHECK(task_diff_apply(in, len, mem, REGION) == SHOAL_OK);
    task_diff_writer_init(&w, NULL, 0);
    CHECK(task_diff_iter_init(&it, in, len, REGION) == SHOAL_OK);
    while (task_diff_iter_next(&it, &run) == 1) {
        CHECK(run.off + run.len <= REGION);
        CHECK(memcmp(mem + run.off, run.bytes, run.len) == 0);
        CHECK(task_diff_add_bytes(&w, run.off, run.bytes, run.len) == 0);
        seen += run.len;
    }
    CHECK(seen == bytes);
    CHECK(task_diff_finish(&w, &out, &outlen) == SHOAL_OK);
    CHECK(outlen == len && memcmp(out, in, len) == 0);
    task_diff_writer_fini(&w);
}

static void fuzz_path(const uint8_t *in, size_t len)
{
    task_path_t p, q = TASK_PATH_ROOT, c;
    task_path_level_t lv;
    char text[64];

    int r = task_path_decode(in, len, &p);
    if (r != 0) {
        CHECK(r == SHOAL_ERR_PROTOCOL);
        return;
    }
    for (uint32_t i = 0; i < p.depth; i++) {
        CHECK(task_path_level(&p, i, &lv) == SHOAL_OK);
        CHECK(task_path_child(&q, lv.block, lv.routine, lv.id, &c) == 0);
        task_path_free(&q);
        q = c;
    }
    CHECK(task_path_equal(&p, &q) && task_path_cmp(&p, &q) == 0);
    CHECK(task_path_hash(&p) == task_path_hash(&q));
    task_path_format(&p, text, sizeof text);
    CHECK(strlen(text) < sizeof text);
    task_path_free(&p);
    task_path_free(&q);
}

/* The value diff d gives byte off of a region that was all 0xee. */
static uint8_t value_at(const uint8_t *d, size_t len, uint64_t off)
{
    static uint8_t mem[REGION];

    memset(mem, 0xee, sizeof mem);
    CHECK(task_diff_apply(d, len, mem, REGION) == SHOAL_OK);
    return mem[off];
}

static void fuzz_merge(const uint8_t *in, size_t len)
{
    static uint8_t mem[REGION], ab[REGION], ba[REGION];
    task_path_t root = TASK_PATH_ROOT, pa, pb;
    task_diff_conflict_t c;

    if (len < 1)
        return;
    size_t cut = in[0] < len - 1 ? in[0] : len - 1;
    const uint8_t *a = in + 1, *b = in + 1 + cut;
    size_t la = cut, lb = len - 1 - cut;
    CHECK(task_path_child(&root, 0, 0, 0, &pa) == SHOAL_OK);
    CHECK(task_path_child(&root, 0, 0, 1, &pb) == SHOAL_OK);
    task_diff_part_t parts[2] = {{&pb, b, lb}, {&pa, a, la}};
    memset(mem, 0xee, sizeof mem);
    int r = task_diff_merge(parts, 2, mem, REGION, &c);
    if (r == SHOAL_OK) {
        memset(ab, 0xee, sizeof ab);
        memset(ba, 0xee, sizeof ba);
        CHECK(task_diff_apply(a, la, ab, REGION) == SHOAL_OK);
        CHECK(task_diff_apply(b, lb, ab, REGION) == SHOAL_OK);
        CHECK(task_diff_apply(b, lb, ba, REGION) == SHOAL_OK);
        CHECK(task_diff_apply(a, la, ba, REGION) == SHOAL_OK);
        CHECK(memcmp(mem, ab, REGION) == 0 && memcmp(ab, ba, REGION) == 0);
    } else {
        for (size_t i = 0; i < REGION; i++)
            CHECK(mem[i] == 0xee);
        CHECK(r == SHOAL_ERR_PROTOCOL || r == SHOAL_ERR_INVALID);
    }
    if (r == SHOAL_ERR_INVALID) {
        CHECK(c.a == &pa && c.b == &pb && c.off < REGION && c.va != c.vb);
        CHECK(value_at(a, la, c.off) == c.va);
        CHECK(value_at(b, lb, c.off) == c.vb);
    }
    task_path_free(&pa);
    task_path_free(&pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] % 3 == 1)
        fuzz_path(data + 1, size - 1);
    else if (data[0] % 3 == 2)
        fuzz_merge(data + 1, size - 1);
    else
        fuzz_diff(data + 1, size - 1);
    return 0;
}
