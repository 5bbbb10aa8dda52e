/*
 * shoal-bench: measures the active-message layer and, in the same run, the
 * physical limits of the machine it runs on, so results read as ratios.
 */
#ifndef SHOAL_BENCH_H
#define SHOAL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "shoal.h"

typedef struct bench_opts {
    int reps;          /* repetitions; medians are reported */
    int quick;         /* fewer iterations (smoke test) */
    size_t max_size;   /* largest message */
    double wait_s;     /* how long the long-wait test waits */
    unsigned tests;    /* BENCH_T_* bits */
    int csv;
} bench_opts_t;

#define BENCH_T_LIMITS (1u << 0)
#define BENCH_T_LATENCY (1u << 1)
#define BENCH_T_RATE (1u << 2)
#define BENCH_T_BANDWIDTH (1u << 3)
#define BENCH_T_BARRIER (1u << 4)
#define BENCH_T_WAKE (1u << 5)
#define BENCH_T_RING (1u << 6)
#define BENCH_T_BSP (1u << 7)

extern bench_opts_t bench_opts;
extern shoal_ep_t *bench_ep;
extern int bench_rank, bench_size;
extern void *bench_seg;      /* shared segment (shoal_segment_alloc) */
extern void *bench_seg_priv; /* private segment (malloc) */

/* Samples of one quantity; summarised by median, min and max. */
typedef struct bench_series {
    double v[64];
    int n;
} bench_series_t;

void series_add(bench_series_t *s, double v);
double series_median(const bench_series_t *s);
double series_min(const bench_series_t *s);
double series_max(const bench_series_t *s);

uint64_t bench_now_ns(void);
double bench_cpu_seconds(void);

/* Everyone waits here, running handlers. */
void bench_barrier(void);

/* ---- the tests (rank 0 prints) --------------------------------------------- */
void bench_limits_setup(void);       /* shares a page between ranks 0 and 1 */
double bench_cacheline_oneway(int iters);  /* ns, ranks 0 and 1 */
double bench_memcpy_gbs(size_t size);      /* GB/s, local */
double bench_futex_wake_us(double sleep_s);/* us, ranks 0 and 1 */
double bench_yield_handoff_us(int iters);  /* us, rank 0 and a child */

double bench_am_latency(unsigned kind, size_t size, int iters); /* ns one way */
double bench_am_rate(int count);                 /* messages per second */
double bench_am_bandwidth(unsigned kind, size_t size, int shared, int count);
double bench_am_barrier(int iters);              /* ns per barrier */
double bench_am_ring(int laps);                  /* ns per hop */
double bench_am_bsp(int steps, double *alone_ms); /* ms per step */
void bench_am_wake(double wait_s, double *cpu_pct, double *latency_us);

#define BENCH_SHORT 0u
#define BENCH_MEDIUM 1u
#define BENCH_LONG 2u

void bench_am_init(void);

#endif
