/*
 * Job paths and the per-job random stream: building, decoding (bad input
 * refused), tree order, ancestors, hashing, printing; streams that depend
 * on the seed and the path only.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/base.h"
#include "task/task_path.h"
#include "task/task_rand.h"
#include "test.h"

static task_path_t make(int depth, const uint32_t (*lv)[3])
{
    task_path_t p = TASK_PATH_ROOT, c;

    for (int i = 0; i < depth; i++) {
        T_OK(task_path_child(&p, lv[i][0], lv[i][1], lv[i][2], &c));
        task_path_free(&p);
        p = c;
    }
    return p;
}

static void test_build_and_levels(void)
{
    const uint32_t lv[3][3] = {{0, 1, 5}, {2, 0, 300}, {UINT32_MAX, 7, 0}};
    task_path_t p = make(3, lv), q, up;
    task_path_level_t l;
    char buf[64];

    T_EQ(p.depth, 3);
    /* 0,1,5 = 3 bytes; 2,0,300 = 4; 2^32-1,7,0 = 7 */
    T_EQ(p.len, 14);
    for (uint32_t i = 0; i < 3; i++) {
        T_OK(task_path_level(&p, i, &l));
        T_EQ(l.block, lv[i][0]);
        T_EQ(l.routine, lv[i][1]);
        T_EQ(l.id, lv[i][2]);
    }
    T_ERR(task_path_level(&p, 3, &l), SHOAL_ERR_INVALID);
    T_EQ(task_path_format(&p, buf, sizeof buf),
         strlen("/0.1[5]/2.0[300]/4294967295.7[0]"));
    T_STREQ(buf, "/0.1[5]/2.0[300]/4294967295.7[0]");
    /* Cut short: whole levels, then "...". */
    task_path_format(&p, buf, 12);
    T_STREQ(buf, "/0.1[5]...");
    task_path_t root = TASK_PATH_ROOT;
    task_path_format(&root, buf, sizeof buf);
    T_STREQ(buf, "/");

    T_OK(task_path_decode(p.bytes, p.len, &q));
    T_ASSERT(task_path_equal(&p, &q));
    T_EQ(q.depth, 3);
    T_OK(task_path_parent(&p, &up));
    T_EQ(up.depth, 2);
    T_ASSERT(task_path_is_ancestor(&up, &p));
    T_ASSERT(!task_path_is_ancestor(&p, &up));
    T_ASSERT(!task_path_is_ancestor(&p, &p));
    T_ASSERT(task_path_is_ancestor(&root, &p));
    T_ERR(task_path_parent(&root, &q), SHOAL_ERR_INVALID);
    task_path_free(&up);
    task_path_free(&q);
    task_path_free(&p);
}

static void test_decode_refuses(void)
{
    task_path_t p;
    const uint8_t truncated[] = {0, 1};            /* two of three */
    const uint8_t overlong[] = {0x80, 0x00, 1, 2}; /* 0 in two bytes */
    const uint8_t open_end[] = {0, 1, 0x85};       /* continuation at end */
    const uint8_t too_big[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0, 0};

    T_ERR(task_path_decode(truncated, sizeof truncated, &p),
          SHOAL_ERR_PROTOCOL);
    T_ERR(task_path_decode(overlong, sizeof overlong, &p),
          SHOAL_ERR_PROTOCOL);
    T_ERR(task_path_decode(open_end, sizeof open_end, &p),
          SHOAL_ERR_PROTOCOL);
    T_ERR(task_path_decode(too_big, sizeof too_big, &p), SHOAL_ERR_PROTOCOL);
    T_OK(task_path_decode(NULL, 0, &p));
    T_EQ(p.depth, 0);
}

/* Depth-first order: ancestors first, then siblings numerically (byte
 * order would put id 128, encoded 0x80 0x01, before id 2). */
static void test_order(void)
{
    const uint32_t a[1][3] = {{0, 0, 2}}, b[1][3] = {{0, 0, 128}};
    const uint32_t c[2][3] = {{0, 0, 2}, {0, 0, 0}}, d[1][3] = {{0, 1, 0}};
    const uint32_t e[1][3] = {{1, 0, 0}};
    task_path_t pa = make(1, a), pb = make(1, b), pc = make(2, c);
    task_path_t pd = make(1, d), pe = make(1, e), root = TASK_PATH_ROOT;

    T_ASSERT(task_path_cmp(&pa, &pb) < 0);
    T_ASSERT(task_path_cmp(&pb, &pa) > 0);
    T_ASSERT(task_path_cmp(&pa, &pc) < 0); /* parent before child */
    T_ASSERT(task_path_cmp(&pc, &pb) < 0); /* child before parent's sibling */
    T_ASSERT(task_path_cmp(&pb, &pd) < 0); /* routine after id */
    T_ASSERT(task_path_cmp(&pd, &pe) < 0); /* block after routine */
    T_ASSERT(task_path_cmp(&root, &pa) < 0);
    T_EQ(task_path_cmp(&pc, &pc), 0);
    T_ASSERT(task_path_hash(&pa) != task_path_hash(&pb));
    task_path_t copy;
    T_OK(task_path_copy(&pc, &copy));
    T_EQ(task_path_hash(&copy), task_path_hash(&pc));
    T_ASSERT(task_path_equal(&copy, &pc));
    T_ASSERT(!task_path_equal(&pa, &pc));
    task_path_free(&copy);
    task_path_free(&pa);
    task_path_free(&pb);
    task_path_free(&pc);
    task_path_free(&pd);
    task_path_free(&pe);
}

/* A chain of 1000 nested jobs (the thesis's failed experiment) fits. */
static void test_deep_chain(void)
{
    task_path_t p = TASK_PATH_ROOT, c;

    for (int i = 0; i < 1000; i++) {
        T_OK(task_path_child(&p, 0, 0, 0, &c));
        task_path_free(&p);
        p = c;
    }
    T_EQ(p.depth, 1000);
    T_EQ(p.len, 3000);
    task_path_free(&p);
}

static void test_rand(void)
{
    const uint32_t a[2][3] = {{0, 0, 1}, {3, 1, 4}};
    const uint32_t b[2][3] = {{0, 0, 1}, {3, 1, 5}};
    task_path_t pa = make(2, a), pb = make(2, b), pa2;
    task_rand_t r1, r2, r3, r4;
    uint64_t first[64];

    T_OK(task_path_decode(pa.bytes, pa.len, &pa2)); /* another "machine" */
    task_rand_init(&r1, 42, &pa);
    task_rand_init(&r2, 42, &pa2);
    task_rand_init(&r3, 42, &pb);
    task_rand_init(&r4, 43, &pa);
    int same_b = 0, same_seed = 0;
    for (int i = 0; i < 64; i++) {
        first[i] = task_rand_next(&r1);
        T_EQ(first[i], task_rand_next(&r2));
        T_EQ(first[i], task_rand_at(&r1, (uint64_t)i));
        same_b += first[i] == task_rand_next(&r3);
        same_seed += first[i] == task_rand_next(&r4);
    }
    T_EQ(same_b, 0);
    T_EQ(same_seed, 0);
    /* Known values, so that a change of the generator (which would change
     * every randomized program's output) cannot pass unnoticed. */
    task_rand_t fixed;
    task_path_t root = TASK_PATH_ROOT, c;
    task_rand_init(&fixed, 1, &root);
    T_ASSERT(task_rand_next(&fixed) == 0xbf9d6baaeb2cd209ull);
    T_OK(task_path_child(&root, 0, 2, 7, &c));
    task_rand_init(&fixed, 2026, &c);
    T_ASSERT(task_rand_next(&fixed) == 0x7f5047fb49c9842aull);
    T_ASSERT(task_rand_next(&fixed) == 0x2a62984bc503278dull);
    T_ASSERT(task_rand_next(&fixed) == 0x01876e90f1de087aull);
    task_path_free(&c);

    /* below: in range and roughly uniform (each of 10 bins within 20%). */
    int bins[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t x = task_rand_below(&r1, 10);
        T_ASSERT(x < 10);
        bins[x]++;
    }
    for (int i = 0; i < 10; i++)
        T_ASSERT(bins[i] > 8000 && bins[i] < 12000);
    /* unit: in [0, 1), mean near 1/2; bits: each near half set. */
    double sum = 0;
    int ones[64] = {0};
    for (int i = 0; i < 20000; i++) {
        double u = task_rand_unit(&r1);
        T_ASSERT(u >= 0.0 && u < 1.0);
        sum += u;
        uint64_t x = task_rand_next(&r1);
        for (int k = 0; k < 64; k++)
            ones[k] += (int)(x >> k & 1);
    }
    T_ASSERT(sum / 20000 > 0.48 && sum / 20000 < 0.52);
    for (int k = 0; k < 64; k++)
        T_ASSERT(ones[k] > 9500 && ones[k] < 10500);
    task_path_free(&pa);
    task_path_free(&pa2);
    task_path_free(&pb);
}

int main(void)
{
    test_build_and_levels();
    test_decode_refuses();
    test_order();
    test_deep_chain();
    test_rand();
    return 0;
}
