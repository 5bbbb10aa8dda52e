/*
 * Latency of a wire as the active-message layer sees it: a ping-pong of
 * medium requests and replies between ranks 0 and 1, no MPI above.
 * bench/multihost runs it as shoal-am (SHOAL_WIRES=shm,tcp) and
 * shoal-udp-am (shm,udp) next to the raw ping-pongs (tcp_pingpong.c,
 * udp_pingpong.c), which do no more than it does: one message each way,
 * no matching, no tags.  The MPI latency (bench/mpi/latency.c) adds the
 * MPI layer's fixed work to the same wire.
 *
 *   shoalrun -n 2 am_pingpong [--sizes A,B,...] [--iters N] [--batches N]
 *
 * Rank 0 prints "SIZE USEC" lines: half a round trip in microseconds, the
 * median of --batches (default 11) timed batches of --iters (default
 * 10000) round trips, after 1000 untimed ones, as the raw ping-pongs
 * report.  Sizes go up to the medium limit (shoal_am_max_medium); a larger
 * one is skipped with a "#" line.  After each size one more round trip
 * carries a pattern both ranks check: a broken transfer fails the run
 * (exit 1) instead of reporting a number.  Both ranks wait with
 * shoal_wait (poll, then yield, then sleep), as every Shoal call does.
 */
#define _GNU_SOURCE
#include <shoal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define H_PING 1 /* request: a0 = size, a1 = check; echoed back */
#define H_PONG 2 /* reply */
#define H_STOP 3 /* request: rank 1 leaves */
#define MAX_BATCHES 101

static volatile long pongs;
static volatile int stop;
static char *rbuf;
static int bad;

static unsigned char pattern(long size, long i, int from)
{
    return (unsigned char)(i * 31 + size * 7 + from * 101);
}

static void check(const void *payload, size_t len, long size, int from)
{
    const unsigned char *p = payload;

    if ((long)len != size) {
        bad = 1;
        return;
    }
    for (long i = 0; i < size; i++)
        if (p[i] != pattern(size, i, from)) {
            bad = 1;
            return;
        }
}

static void h_ping(shoal_token_t *t, const uint64_t *a, unsigned n,
                   void *payload, size_t len)
{
    long size = n > 0 ? (long)a[0] : 0;
    const void *out = payload;

    if (n > 1 && a[1]) { /* the checked round trip: answer with ours */
        check(payload, len, size, 0);
        for (long i = 0; i < size; i++)
            rbuf[i] = (char)pattern(size, i, 1);
        out = rbuf;
    }
    if (shoal_am_reply_medium(t, H_PONG, out, len, a, n) != SHOAL_OK)
        bad = 1;
}

static void h_pong(shoal_token_t *t, const uint64_t *a, unsigned n,
                   void *payload, size_t len)
{
    (void)t;
    if (n > 1 && a[1])
        check(payload, len, (long)a[0], 1);
    pongs++;
}

static void h_stop(shoal_token_t *t, const uint64_t *a, unsigned n,
                   void *payload, size_t len)
{
    (void)t;
    (void)a;
    (void)n;
    (void)payload;
    (void)len;
    stop = 1;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void die(const char *what, int status)
{
    fprintf(stderr, "am_pingpong: %s: %s\n", what, shoal_strerror(status));
    exit(1);
}

/* n round trips of size bytes from sbuf; check: the last one is checked. */
static void trips(shoal_ep_t *ep, const char *sbuf, long size, long n,
                  int checked)
{
    for (long i = 0; i < n; i++) {
        uint64_t a[2] = {(uint64_t)size, (uint64_t)checked};
        long want = pongs + 1;
        int status = shoal_am_request_medium(ep, 1, H_PING, sbuf,
                                             (size_t)size, a, 2);
        if (status != SHOAL_OK)
            die("request", status);
        while (pongs < want)
            if ((status = shoal_wait(ep, -1)) < 0)
                die("wait", status);
    }
}

int main(int argc, char **argv)
{
    const char *sizes = "0,8,64,1024";
    long iters = 10000;
    int batches = 11, status;
    shoal_ep_t *ep;
    size_t max = 0;
    static const shoal_handler_entry_t handlers[] = {
        {H_PING, h_ping, "ping", SHOAL_HANDLER_REQUEST},
        {H_PONG, h_pong, "pong", SHOAL_HANDLER_REPLY},
        {H_STOP, h_stop, "stop", SHOAL_HANDLER_REQUEST},
    };
    shoal_ep_params_t params = {.field_mask = SHOAL_EP_PARAM_HANDLERS,
                                .handlers = handlers, .nhandlers = 3};

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
            batches = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: shoalrun -n 2 am_pingpong [--sizes "
                            "A,B,...] [--iters N] [--batches N]\n");
            return 2;
        }
    }
    if (iters < 1 || batches < 1 || batches > MAX_BATCHES) {
        fprintf(stderr, "am_pingpong: --iters at least 1, --batches 1 to "
                        "%d\n", MAX_BATCHES);
        return 2;
    }
    if ((status = shoal_init(NULL)) != SHOAL_OK)
        die("init", status);
    if (shoal_size() != 2) {
        fprintf(stderr, "am_pingpong: run it on 2 ranks\n");
        return 2;
    }
    if ((status = shoal_ep_create(&params, &ep)) != SHOAL_OK)
        die("endpoint", status);
    shoal_am_max_medium(ep, &max);
    rbuf = malloc(max > 0 ? max : 1);
    char *sbuf = calloc(1, max > 0 ? max : 1);
    if (rbuf == NULL || sbuf == NULL)
        die("memory", SHOAL_ERR_NOMEM);
    if ((status = shoal_barrier(ep)) != SHOAL_OK)
        die("barrier", status);
    if (shoal_rank() == 1) {
        while (!stop)
            if ((status = shoal_wait(ep, -1)) < 0)
                die("wait", status);
    } else {
        printf("# size usec (half a round trip, median of %d batches of "
               "%ld)\n", batches, iters);
        for (const char *p = sizes; *p != '\0';) {
            char *end;
            long size = strtol(p, &end, 10);
            if (end == p) {
                fprintf(stderr, "am_pingpong: bad --sizes at '%s'\n", p);
                return 2;
            }
            p = *end == ',' ? end + 1 : end;
            if (size < 0 || (size_t)size > max) {
                printf("# %ld: above the medium limit %zu, skipped\n", size,
                       max);
                continue;
            }
            double t[MAX_BATCHES];
            trips(ep, sbuf, size, 1000, 0);
            for (int b = 0; b < batches; b++) {
                double t0 = now_us();
                trips(ep, sbuf, size, iters, 0);
                t[b] = (now_us() - t0) / (double)iters / 2;
            }
            for (long i = 0; i < size; i++)
                sbuf[i] = (char)pattern(size, i, 0);
            trips(ep, sbuf, size, 1, 1);
            memset(sbuf, 0, (size_t)size);
            if (bad) {
                fprintf(stderr, "am_pingpong: size %ld: the data came back "
                                "wrong\n", size);
                return 1;
            }
            qsort(t, (size_t)batches, sizeof(t[0]), cmp_double);
            printf("%ld %.3f\n", size, t[batches / 2]);
        }
        if ((status = shoal_am_request_short(ep, 1, H_STOP, NULL, 0)) !=
            SHOAL_OK)
            die("stop", status);
    }
    status = shoal_barrier(ep);
    if (bad) {
        fprintf(stderr, "am_pingpong: rank %d got wrong data\n",
                shoal_rank());
        return 1;
    }
    shoal_ep_destroy(ep);
    shoal_finalize();
    free(rbuf);
    free(sbuf);
    return status == SHOAL_OK ? 0 : 1;
}
