/*
 * Seeded random runs for the task tests' model checks: a xorshift stream
 * from the run's seed, checks that name the seed, and a driver that runs
 * seeds 1..n or only SHOAL_TEST_SEED=<n> when it is set.
 */
#ifndef SHOAL_TASK_MODEL_H
#define SHOAL_TASK_MODEL_H

#include <stdint.h>
#include <stdlib.h>

#include "test.h"

static uint64_t seed, rs;

static inline uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond))                                                         \
            T_FAIL("seed %llu: %s", (unsigned long long)seed, #cond);        \
    } while (0)

#define CHECK_OK(expr)                                                       \
    do {                                                                     \
        int st_ = (expr);                                                    \
        if (st_ != SHOAL_OK)                                                 \
            T_FAIL("seed %llu: %s: %s (%s)", (unsigned long long)seed,       \
                   #expr, shoal_err_name(st_), shoal_error_detail());        \
    } while (0)

/* Runs run() for seeds 1..n, or for SHOAL_TEST_SEED alone; rs starts
 * from the seed.  Returns the number of runs. */
static inline unsigned model_runs(void (*run)(void), unsigned n)
{
    const char *env = getenv("SHOAL_TEST_SEED");
    uint64_t first = 1, last = n;

    if (env != NULL)
        first = last = strtoull(env, NULL, 0);
    for (seed = first; seed <= last; seed++) {
        rs = seed * 2654435761u + 1;
        run();
    }
    return (unsigned)(last - first + 1);
}

#endif /* SHOAL_TASK_MODEL_H */
