/*
 * The active-message measurements.  Rank 0 drives, rank 1 answers, other
 * ranks only join the barriers.  Waiting uses SHOAL_WAIT_UNTIL, as an
 * application would, so the numbers include the adaptive wait.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "test.h"

enum { H_PING = 1, H_PONG, H_STREAM, H_DONE, H_WAKE, H_RESULT, H_TOKEN };

static volatile uint64_t pings, pongs, streamed, dones, wakes, results, tokens;
static volatile uint64_t wake_stamp, wake_arrival;
static double result_values[2];
static shoal_ep_t *ep_priv; /* same handlers, private (malloc) segment */

static void on_ping(shoal_token_t *t, const uint64_t *a, unsigned na,
                    void *payload, size_t len)
{
    unsigned kind = (unsigned)a[0];

    pings++;
    if (kind == BENCH_SHORT)
        shoal_am_reply_short(t, H_PONG, a, na);
    else if (kind == BENCH_MEDIUM)
        shoal_am_reply_medium(t, H_PONG, payload, len, a, na);
    else
        shoal_am_reply_long(t, H_PONG, payload, len, 0, a, na);
}

static void on_pong(shoal_token_t *t, const uint64_t *a, unsigned na,
                    void *payload, size_t len)
{
    pongs++;
}

static void on_stream(shoal_token_t *t, const uint64_t *a, unsigned na,
                      void *payload, size_t len)
{
    if (++streamed == a[0])
        shoal_am_reply_short(t, H_DONE, NULL, 0);
}

static void on_done(shoal_token_t *t, const uint64_t *a, unsigned na,
                    void *payload, size_t len)
{
    dones++;
}

static void on_wake(shoal_token_t *t, const uint64_t *a, unsigned na,
                    void *payload, size_t len)
{
    wake_arrival = bench_now_ns();
    wake_stamp = a[0];
    wakes++;
}

static void on_token(shoal_token_t *t, const uint64_t *a, unsigned na,
                     void *payload, size_t len)
{
    tokens++;
}

static void on_result(shoal_token_t *t, const uint64_t *a, unsigned na,
                      void *payload, size_t len)
{
    memcpy(result_values, a, sizeof(result_values));
    results++;
}

void bench_am_init(void)
{
    static const shoal_handler_entry_t hs[] = {
        {H_PING, on_ping, "ping", SHOAL_HANDLER_REQUEST},
        {H_PONG, on_pong, "pong", SHOAL_HANDLER_REPLY},
        {H_STREAM, on_stream, "stream", SHOAL_HANDLER_REQUEST},
        {H_DONE, on_done, "done", SHOAL_HANDLER_REPLY},
        {H_WAKE, on_wake, "wake", SHOAL_HANDLER_REQUEST},
        {H_RESULT, on_result, "result", SHOAL_HANDLER_REQUEST},
        {H_TOKEN, on_token, "token", SHOAL_HANDLER_REQUEST},
    };
    shoal_ep_params_t p = {
        .field_mask = SHOAL_EP_PARAM_HANDLERS | SHOAL_EP_PARAM_SEGMENT,
        .handlers = hs,
        .nhandlers = sizeof(hs) / sizeof(hs[0]),
        .segment = bench_seg,
        .segment_size = bench_opts.max_size,
    };

    T_OK(shoal_ep_create(&p, &bench_ep));
    p.segment = bench_seg_priv;
    T_OK(shoal_ep_create(&p, &ep_priv));
}

static void reset(void)
{
    bench_barrier();
    pings = pongs = streamed = dones = wakes = 0;
    bench_barrier();
}

static int send_kind(shoal_ep_t *ep, unsigned handler, unsigned kind,
                     const void *buf, size_t size, uint64_t *args,
                     unsigned nargs)
{
    if (kind == BENCH_SHORT)
        return shoal_am_request_short(ep, 1, handler, args, nargs);
    if (kind == BENCH_MEDIUM)
        return shoal_am_request_medium(ep, 1, handler, buf, size, args, nargs);
    return shoal_am_request_long(ep, 1, handler, buf, size, 0, args, nargs);
}

double bench_am_latency(unsigned kind, size_t size, int iters)
{
    static char *buf;
    const int warmup = iters / 10 + 10;
    uint64_t args[1] = {kind};
    double ns = 0;

    if (buf == NULL)
        buf = calloc(1, bench_opts.max_size);
    reset();
    if (bench_rank == 0) {
        uint64_t t0 = 0;
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = bench_now_ns();
            uint64_t before = pongs;
            T_OK(send_kind(bench_ep, H_PING, kind, buf, size, args, 1));
            T_OK(SHOAL_WAIT_UNTIL(bench_ep, pongs != before));
        }
        ns = (double)(bench_now_ns() - t0) / iters / 2;
    } else if (bench_rank == 1) {
        T_OK(SHOAL_WAIT_UNTIL(bench_ep, pings == (uint64_t)(warmup + iters)));
    }
    bench_barrier();
    return ns;
}

/* Rank 0 streams count requests; rank 1 says when it has them all. */
static double stream(shoal_ep_t *ep, unsigned kind, size_t size, int count)
{
    static char *buf;
    uint64_t args[1] = {(uint64_t)count};
    double seconds = 0;

    if (buf == NULL)
        buf = calloc(1, bench_opts.max_size);
    reset();
    if (bench_rank == 0) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < count; i++)
            T_OK(send_kind(ep, H_STREAM, kind, buf, size, args, 1));
        T_OK(SHOAL_WAIT_UNTIL(ep, dones == 1));
        seconds = (double)(bench_now_ns() - t0) / 1e9;
    } else if (bench_rank == 1) {
        T_OK(SHOAL_WAIT_UNTIL(ep, dones == 0 && streamed == (uint64_t)count));
    }
    bench_barrier();
    return seconds;
}

double bench_am_rate(int count)
{
    double s = stream(bench_ep, BENCH_SHORT, 0, count);
    return s > 0 ? count / s : 0;
}

double bench_am_bandwidth(unsigned kind, size_t size, int shared, int count)
{
    double s = stream(shared ? bench_ep : ep_priv, kind, size, count);
    return s > 0 ? (double)size * count / s / 1e9 : 0;
}

double bench_am_barrier(int iters)
{
    uint64_t t0;

    bench_barrier();
    t0 = bench_now_ns();
    for (int i = 0; i < iters; i++)
        T_OK(shoal_barrier(bench_ep));
    return (double)(bench_now_ns() - t0) / iters;
}

/* A token passed around all ranks: the latency of one hop when every hop
 * may need the scheduler to run the next rank. */
double bench_am_ring(int laps)
{
    int next = (bench_rank + 1) % bench_size;
    uint64_t t0;

    bench_barrier();
    tokens = 0;
    bench_barrier();
    t0 = bench_now_ns();
    for (int lap = 1; lap <= laps; lap++) {
        if (bench_rank == 0) {
            T_OK(shoal_am_request_short(bench_ep, next, H_TOKEN, NULL, 0));
            T_OK(SHOAL_WAIT_UNTIL(bench_ep, tokens == (uint64_t)lap));
        } else {
            T_OK(SHOAL_WAIT_UNTIL(bench_ep, tokens == (uint64_t)lap));
            T_OK(shoal_am_request_short(bench_ep, next, H_TOKEN, NULL, 0));
        }
    }
    double ns = (double)(bench_now_ns() - t0) / laps / bench_size;
    bench_barrier();
    return ns;
}

/*
 * Compute-bound steps separated by barriers: how placement shares CPUs.
 * Every rank does the same fixed work per step, so a rank that shares its
 * CPU makes everyone wait.  *alone_ms receives the time of that work on a
 * CPU of its own (rank 0, while the others sleep in a barrier).
 */
static volatile double bsp_sink;

static void bsp_work(void)
{
    double x = 1.0;

    for (long i = 0; i < 400000; i++)
        x = x * 1.0000001 + 1e-9;
    bsp_sink = x;
}

double bench_am_bsp(int steps, double *alone_ms)
{
    uint64_t t0;

    bench_barrier();
    if (bench_rank == 0) {
        usleep(20000); /* the others fall asleep in the barrier */
        t0 = bench_now_ns();
        for (int i = 0; i < 20; i++)
            bsp_work();
        *alone_ms = (double)(bench_now_ns() - t0) / 20 / 1e6;
    }
    bench_barrier();
    t0 = bench_now_ns();
    for (int s = 0; s < steps; s++) {
        bsp_work();
        T_OK(shoal_barrier(bench_ep));
    }
    return (double)(bench_now_ns() - t0) / 1e6 / steps;
}

void bench_am_wake(double wait_s, double *cpu_pct, double *latency_us)
{
    reset();
    results = 0;
    bench_barrier();
    if (bench_rank == 0) {
        struct timespec ts = {(time_t)wait_s,
                              (long)((wait_s - (time_t)wait_s) * 1e9)};
        nanosleep(&ts, NULL);
        uint64_t stamp = bench_now_ns();
        T_OK(shoal_am_request_short(bench_ep, 1, H_WAKE, &stamp, 1));
        T_OK(SHOAL_WAIT_UNTIL(bench_ep, results == 1));
        *cpu_pct = result_values[0];
        *latency_us = result_values[1];
    } else if (bench_rank == 1) {
        double cpu0 = bench_cpu_seconds();
        uint64_t t0 = bench_now_ns();
        T_OK(SHOAL_WAIT_UNTIL(bench_ep, wakes == 1));
        double wall = (double)(bench_now_ns() - t0) / 1e9;
        double r[2] = {100 * (bench_cpu_seconds() - cpu0) / wall,
                       (double)(wake_arrival - wake_stamp) / 1e3};
        uint64_t a[2];
        memcpy(a, r, sizeof(a));
        T_OK(shoal_am_request_short(bench_ep, 0, H_RESULT, a, 2));
    }
    bench_barrier();
}
