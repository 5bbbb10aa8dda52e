/*
 * shoal-demo: a small parallel program on Shoal's active messages.
 *
 *   shoalrun -n 4 shoal-demo
 *
 * 1. every rank greets rank 0 with a medium message (its host and pid);
 * 2. the ranks integrate 4/(1+x^2) over [0,1] together (that is pi): each
 *    sends its partial sum to rank 0 in a short message;
 * 3. each rank writes its block of an array straight into rank 0's segment
 *    with a long message, and rank 0 checks the whole array;
 * 4. a token travels around the ring of ranks, and rank 0 reports the time
 *    of one hop.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shoal.h"

enum { H_HELLO = 1, H_PARTIAL, H_BLOCK, H_TOKEN };

#define BLOCK 4096 /* doubles per rank in step 3 */

static int me, n;
static shoal_ep_t *ep;
static volatile int hellos, partials, blocks, tokens;
static double pi_sum;
static double *array; /* rank 0's segment */

static void die(const char *what, int status)
{
    fprintf(stderr, "shoal-demo (rank %d): %s: %s (%s)\n", me, what,
            shoal_strerror(status), shoal_error_detail());
    shoal_abort(1, what);
}

#define CHECK(call)                                                          \
    do {                                                                     \
        int check_status_ = (call);                                          \
        if (check_status_ < 0)                                               \
            die(#call, check_status_);                                       \
    } while (0)

static int source_of(shoal_token_t *t)
{
    shoal_token_info_t info;

    shoal_token_info(t, &info);
    return info.source;
}

static void on_hello(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                     void *payload, size_t len)
{
    printf("  rank %d of %d says hello from %.*s\n", source_of(t), n,
           (int)len, (const char *)payload);
    hellos++;
}

static void on_partial(shoal_token_t *t, const uint64_t *args,
                       unsigned nargs, void *payload, size_t len)
{
    double part;

    memcpy(&part, &args[0], sizeof(part));
    pi_sum += part;
    partials++;
}

static void on_block(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                     void *payload, size_t len)
{
    blocks++; /* the data is already in place */
}

static void on_token(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                     void *payload, size_t len)
{
    tokens++;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void greet(void)
{
    char text[128], host[64] = "?";

    gethostname(host, sizeof(host) - 1);
    snprintf(text, sizeof(text), "%s, pid %d", host, (int)getpid());
    CHECK(shoal_am_request_medium(ep, 0, H_HELLO, text, strlen(text), NULL, 0));
    if (me == 0)
        CHECK(SHOAL_WAIT_UNTIL(ep, hellos == n));
    CHECK(shoal_barrier(ep));
}

static void compute_pi(void)
{
    const long steps = 10000000;
    double h = 1.0 / steps, part = 0;
    uint64_t arg;

    for (long i = me; i < steps; i += n) {
        double x = h * ((double)i + 0.5);
        part += 4.0 / (1.0 + x * x);
    }
    part *= h;
    memcpy(&arg, &part, sizeof(arg));
    CHECK(shoal_am_request_short(ep, 0, H_PARTIAL, &arg, 1));
    if (me == 0) {
        CHECK(SHOAL_WAIT_UNTIL(ep, partials == n));
        printf("2. pi from %ld steps on %d ranks (short messages): %.12f "
               "(error %.1e)\n",
               steps, n, pi_sum, fabs(pi_sum - M_PI));
    }
    CHECK(shoal_barrier(ep));
}

static void gather_blocks(void)
{
    double block[BLOCK];

    for (int i = 0; i < BLOCK; i++)
        block[i] = me * 1e6 + i;
    CHECK(shoal_am_request_long(ep, 0, H_BLOCK, block, sizeof(block),
                                (uint64_t)me * sizeof(block), NULL, 0));
    if (me == 0) {
        CHECK(SHOAL_WAIT_UNTIL(ep, blocks == n));
        long bad = 0;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < BLOCK; i++)
                bad += array[(long)r * BLOCK + i] != r * 1e6 + i;
        printf("3. %d blocks of %zu KiB written into rank 0's segment (long "
               "messages): %s\n",
               n, sizeof(block) / 1024, bad ? "WRONG DATA" : "all correct");
        if (bad)
            shoal_abort(1, "gathered array is wrong");
    }
    CHECK(shoal_barrier(ep));
}

static void ring(void)
{
    const int laps = 2000;
    int next = (me + 1) % n;
    double t0 = now();

    for (int lap = 0; lap < laps; lap++) {
        if (me == 0) {
            CHECK(shoal_am_request_short(ep, next, H_TOKEN, NULL, 0));
            CHECK(SHOAL_WAIT_UNTIL(ep, tokens == lap + 1));
        } else {
            CHECK(SHOAL_WAIT_UNTIL(ep, tokens == lap + 1));
            CHECK(shoal_am_request_short(ep, next, H_TOKEN, NULL, 0));
        }
    }
    if (me == 0)
        printf("4. a token went %d times around the ring of %d ranks: %.2f us "
               "per hop\n",
               laps, n, (now() - t0) / ((double)laps * n) * 1e6);
}

int main(void)
{
    static const shoal_handler_entry_t handlers[] = {
        {H_HELLO, on_hello, "hello", SHOAL_HANDLER_REQUEST},
        {H_PARTIAL, on_partial, "partial", SHOAL_HANDLER_REQUEST},
        {H_BLOCK, on_block, "block", SHOAL_HANDLER_REQUEST},
        {H_TOKEN, on_token, "token", SHOAL_HANDLER_REQUEST},
    };
    shoal_ep_params_t params = {
        .field_mask = SHOAL_EP_PARAM_HANDLERS | SHOAL_EP_PARAM_SEGMENT,
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
    };
    size_t seg_bytes;

    CHECK(shoal_init(NULL));
    me = shoal_rank();
    n = shoal_size();
    /* Rank 0's segment receives every rank's block; it is shared memory,
     * so each long message is a single memcpy by its sender. */
    seg_bytes = (size_t)n * BLOCK * sizeof(double);
    CHECK(shoal_segment_alloc(seg_bytes, (void **)&array));
    params.segment = array;
    params.segment_size = seg_bytes;
    if (me == 0) {
        /* Greetings may arrive while the endpoint is being created. */
        printf("Shoal %s demo: %d ranks\n", SHOAL_VERSION_STRING, n);
        printf("1. greetings (medium messages)\n");
    }
    CHECK(shoal_ep_create(&params, &ep));
    greet();
    compute_pi();
    gather_blocks();
    ring();
    CHECK(shoal_ep_destroy(ep));
    CHECK(shoal_segment_free(array));
    CHECK(shoal_finalize());
    return 0;
}
