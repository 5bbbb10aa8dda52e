/*
 * A lock's version store (task_vers.h) against a model that keeps every
 * version whole: seeded random puts (mostly the next version or one a few
 * later, a few bytes changed; sometimes a whole new value, a length
 * change, a version replaced or put out of order), drops and reads,
 * every read compared
 * byte for byte; and the memory a version of a large lock changed a few
 * bytes at a time costs.  A failure prints the seed (SHOAL_TEST_SEED=<n>
 * repeats it).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "task/task_vers.h"
#include "test.h"

#define NV 400
#define LEN 4096

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint8_t *model[NV];
static size_t mlen[NV];

static void check_all(task_vers_t *s, uint64_t seed)
{
    for (uint32_t v = 0; v < NV; v++) {
        const void *d;
        size_t len;
        if (model[v] == NULL) {
            if (task_vers_has(s, v))
                T_FAIL("seed %llu: version %u kept after its drop",
                       (unsigned long long)seed, v);
            continue;
        }
        if (task_vers_get(s, v, &d, &len) != SHOAL_OK || len != mlen[v] ||
            memcmp(d, model[v], len) != 0)
            T_FAIL("seed %llu: version %u differs", (unsigned long long)seed,
                   v);
    }
}

static void random_run(uint64_t seed)
{
    task_vers_t s = {0};
    uint8_t cur[LEN + 64];
    uint32_t next = 0;

    rng = seed * 2654435761u + 1;
    memset(model, 0, sizeof model);
    memset(mlen, 0, sizeof mlen);
    memset(cur, 0, sizeof cur);
    for (int step = 0; step < 3000; step++) {
        uint64_t r = rnd() % 100;
        if (r < 70 && next < NV) { /* the next version, or a later one */
            size_t len = next > 0 && mlen[next - 1] ? mlen[next - 1] : LEN;
            if (rnd() % 3 == 0 && next + 4 < NV)
                next += (uint32_t)(rnd() % 4); /* a worker's gaps */
            if (rnd() % 50 == 0)
                len = 1 + rnd() % (LEN + 63);
            if (rnd() % 20 == 0)
                for (size_t i = 0; i < len; i++)
                    cur[i] = (uint8_t)rnd();
            else
                for (int k = (int)(rnd() % 5); k >= 0; k--)
                    cur[rnd() % len] = (uint8_t)rnd();
            T_OK(task_vers_put(&s, next, cur, len));
            free(model[next]);
            model[next] = malloc(len);
            memcpy(model[next], cur, len);
            mlen[next++] = len;
        } else if (r < 85 && next > 0) { /* a drop */
            uint32_t v = (uint32_t)(rnd() % next);
            T_OK(task_vers_drop(&s, v));
            free(model[v]);
            model[v] = NULL;
        } else if (r < 92 && next > 0) { /* a read, from a get's answer */
            uint32_t v = (uint32_t)(rnd() % next), w;
            const void *d;
            size_t len;
            if (model[v] == NULL)
                continue;
            T_OK(task_vers_get(&s, v, &d, &len));
            /* put back elsewhere straight from the answer: the store
             * must copy it before it reuses its buffer */
            w = (uint32_t)(rnd() % next);
            T_OK(task_vers_put(&s, w, d, len));
            uint8_t *m = malloc(mlen[v]);
            memcpy(m, model[v], mlen[v]);
            free(model[w]);
            model[w] = m;
            mlen[w] = mlen[v];
        } else if (next > 0) { /* a version replaced */
            uint32_t v = (uint32_t)(rnd() % next);
            size_t len = model[v] ? mlen[v] : LEN;
            for (int k = 0; k < 3; k++)
                cur[rnd() % len] = (uint8_t)rnd();
            T_OK(task_vers_put(&s, v, cur, len));
            free(model[v]);
            model[v] = malloc(len);
            memcpy(model[v], cur, len);
            mlen[v] = len;
        }
        if (step % 100 == 0)
            check_all(&s, seed);
    }
    check_all(&s, seed);
    task_vers_free(&s);
    for (uint32_t v = 0; v < NV; v++)
        free(model[v]);
}

/* 1000 versions of 64 KiB, 8 bytes changed each: kept in a small part of
 * 1000 whole copies, and each still exact. */
static void test_memory(void)
{
    enum { L = 65536, N = 1000 };
    task_vers_t s = {0};
    long *h = calloc(L / sizeof(long), sizeof(long));
    long *want = NULL;

    for (uint32_t v = 0; v < N; v++) {
        h[(v * 7919u) % (L / sizeof(long))]++;
        T_OK(task_vers_put(&s, v, h, L));
        if (v == N / 2) {
            want = malloc(L);
            memcpy(want, h, L);
        }
    }
    T_ASSERT(s.held < (size_t)N * L / 20);
    /* Sparse, as in a worker's record (every fourth version): diffs
     * against the last one kept. */
    task_vers_t sp = {0};
    for (uint32_t v = 0; v < N; v += 4)
        T_OK(task_vers_put(&sp, v, h, L));
    T_ASSERT(sp.held < (size_t)(N / 4) * L / 20);
    task_vers_free(&sp);
    const void *d;
    size_t len;
    T_OK(task_vers_get(&s, N / 2, &d, &len));
    T_EQ(len, (size_t)L);
    T_ASSERT(memcmp(d, want, L) == 0);
    /* Drops from the oldest on keep every later one readable. */
    for (uint32_t v = 0; v < N / 2; v++)
        T_OK(task_vers_drop(&s, v));
    T_ERR(task_vers_get(&s, 3, &d, &len), SHOAL_ERR_NOT_FOUND);
    T_OK(task_vers_get(&s, N / 2, &d, &len));
    T_ASSERT(memcmp(d, want, L) == 0);
    T_OK(task_vers_get(&s, N - 1, &d, &len));
    T_ASSERT(memcmp(d, h, L) == 0);
    task_vers_free(&s);
    free(h);
    free(want);
}

int main(void)
{
    const char *env = getenv("SHOAL_TEST_SEED");
    test_memory();
    if (env != NULL)
        random_run(strtoull(env, NULL, 10));
    else
        for (uint64_t seed = 1; seed <= 40; seed++)
            random_run(seed);
    return 0;
}
