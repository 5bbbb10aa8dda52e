/*
 * Tiny test harness.  A failed check prints where and why and exits 1; a
 * test that cannot run here calls T_SKIP (exit 77, which CTest reports as
 * skipped).  Usable from single-process tests and from every rank of a
 * multi-process test (messages carry the rank when T_RANK is set).
 */
#ifndef SHOAL_TEST_H
#define SHOAL_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/errors.h"

#define T_SKIP_CODE 77

static int t_rank_ = -1;
#define T_RANK(r) (t_rank_ = (r))

static inline void t_where_(const char *file, int line)
{
    if (t_rank_ >= 0)
        fprintf(stderr, "[rank %d] ", t_rank_);
    fprintf(stderr, "%s:%d: ", file, line);
}

#define T_FAIL(...)                                                          \
    do {                                                                     \
        t_where_(__FILE__, __LINE__);                                        \
        fprintf(stderr, __VA_ARGS__);                                        \
        fprintf(stderr, "\n");                                               \
        fflush(stderr);                                                      \
        exit(1);                                                             \
    } while (0)

#define T_SKIP(...)                                                          \
    do {                                                                     \
        fprintf(stderr, "SKIP: ");                                           \
        fprintf(stderr, __VA_ARGS__);                                        \
        fprintf(stderr, "\n");                                               \
        exit(T_SKIP_CODE);                                                   \
    } while (0)

#define T_ASSERT(cond)                                                       \
    do {                                                                     \
        if (!(cond))                                                         \
            T_FAIL("assertion failed: %s", #cond);                           \
    } while (0)

#define T_EQ(a, b)                                                           \
    do {                                                                     \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);              \
        if (t_a_ != t_b_)                                                    \
            T_FAIL("%s == %s failed: %lld != %lld", #a, #b, t_a_, t_b_);     \
    } while (0)

#define T_STREQ(a, b)                                                        \
    do {                                                                     \
        const char *t_a_ = (a), *t_b_ = (b);                                 \
        if (t_a_ == NULL || t_b_ == NULL || strcmp(t_a_, t_b_) != 0)         \
            T_FAIL("%s == %s failed: \"%s\" != \"%s\"", #a, #b,              \
                   t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)");          \
    } while (0)

/* expr must return SHOAL_OK. */
#define T_OK(expr)                                                           \
    do {                                                                     \
        int t_s_ = (expr);                                                   \
        if (t_s_ != SHOAL_OK)                                                \
            T_FAIL("%s returned %s (%s)", #expr, shoal_err_name(t_s_),       \
                   shoal_error_detail());                                    \
    } while (0)

/* expr must fail with exactly code. */
#define T_ERR(expr, code)                                                    \
    do {                                                                     \
        int t_s_ = (expr);                                                   \
        if (t_s_ != (code))                                                  \
            T_FAIL("%s returned %s, expected %s", #expr,                     \
                   shoal_err_name(t_s_), shoal_err_name(code));              \
    } while (0)

typedef struct t_case {
    const char *name;
    void (*fn)(void);
} t_case_t;

/* Run every case (or only those named on the command line). */
static inline int t_run(const t_case_t *cases, size_t n, int argc,
                        char **argv)
{
    for (size_t i = 0; i < n; i++) {
        int selected = argc <= 1;
        for (int a = 1; a < argc; a++)
            selected |= strcmp(argv[a], cases[i].name) == 0;
        if (!selected)
            continue;
        fprintf(stderr, "-- %s\n", cases[i].name);
        cases[i].fn();
    }
    return 0;
}

#define T_RUN(cases, argc, argv)                                             \
    t_run((cases), sizeof(cases) / sizeof((cases)[0]), (argc), (argv))

#endif /* SHOAL_TEST_H */
