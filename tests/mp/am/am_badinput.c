/*
 * Bad input to the active-message calls: each gets its error code and a
 * detail that says what was wrong, and the job goes on (traffic after the
 * errors still works).  Also a frame for a handler the receiver does not
 * have: dropped there and counted, nothing else disturbed.  Run at 2 ranks.
 *
 *   am_badinput                     the calls' bad input
 *   am_badinput bad_wires WORD...   SHOAL_WIRES (set by the test) is bad:
 *                                   shoal_init fails naming each WORD
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "shoal.h"
#include "test.h"

enum { H_REQ = 1, H_REP = 2, H_NESTED = 3, H_ONLY_REPLY = 4, H_EXTRA = 50 };

static shoal_ep_t *ep, *ep_noseg;
static int me, n;
static volatile int replies, nested_done;
static char segment[4096];

#define T_DETAIL(word)                                                       \
    do {                                                                     \
        if (strstr(shoal_error_detail(), (word)) == NULL)                    \
            T_FAIL("detail \"%s\" does not mention \"%s\"",                  \
                   shoal_error_detail(), (word));                            \
    } while (0)

static void on_req(shoal_token_t *t, const uint64_t *a, unsigned na, void *p,
                   size_t len)
{
    T_OK(shoal_am_reply_short(t, H_REP, a, na));
    /* A second reply to the same request is refused. */
    T_ERR(shoal_am_reply_short(t, H_REP, a, na), SHOAL_ERR_INVALID);
    T_DETAIL("already replied");
}

static void on_rep(shoal_token_t *t, const uint64_t *a, unsigned na, void *p,
                   size_t len)
{
    /* A reply handler may not reply. */
    T_ERR(shoal_am_reply_short(t, H_REP, a, na), SHOAL_ERR_INVALID);
    replies++;
}

static void on_nested(shoal_token_t *t, const uint64_t *a, unsigned na,
                      void *p, size_t len)
{
    uint64_t x = 0;

    /* Handlers may not send requests, poll, wait or synchronize. */
    T_ERR(shoal_am_request_short(ep, me, H_REQ, &x, 1), SHOAL_ERR_IN_HANDLER);
    T_DETAIL("handler");
    T_ERR(shoal_poll(ep), SHOAL_ERR_IN_HANDLER);
    T_ERR(shoal_wait(ep, 0), SHOAL_ERR_IN_HANDLER);
    T_ERR(shoal_barrier(ep), SHOAL_ERR_IN_HANDLER);
    T_ERR(shoal_finalize(), SHOAL_ERR_IN_HANDLER);
    /* But they may ask who they are. */
    T_EQ(shoal_rank(), me);
    nested_done++;
}

static void on_extra(shoal_token_t *t, const uint64_t *a, unsigned na,
                     void *p, size_t len)
{
    T_FAIL("handler %d ran on rank %d which never registered it", H_EXTRA, me);
}

static void before_init(void)
{
    T_ERR(shoal_rank(), SHOAL_ERR_NOT_INIT);
    T_ERR(shoal_poll(NULL), SHOAL_ERR_NOT_INIT);
    T_DETAIL("shoal_init");
    T_ERR(shoal_finalize(), SHOAL_ERR_NOT_INIT);
    shoal_init_params_t bad = {.field_mask = 1};
    T_ERR(shoal_init(&bad), SHOAL_ERR_INVALID);
    T_ERR(shoal_init_version(99u << 16, NULL), SHOAL_ERR_UNSUPPORTED);
}

static void setup(void)
{
    static const shoal_handler_entry_t hs[] = {
        {H_REQ, on_req, "req", SHOAL_HANDLER_REQUEST},
        {H_REP, on_rep, "rep", SHOAL_HANDLER_REPLY},
        {H_NESTED, on_nested, "nested", SHOAL_HANDLER_REQUEST},
        {H_ONLY_REPLY, on_rep, "only_reply", SHOAL_HANDLER_REPLY},
    };
    shoal_ep_params_t p = {
        .field_mask = SHOAL_EP_PARAM_HANDLERS | SHOAL_EP_PARAM_SEGMENT,
        .handlers = hs,
        .nhandlers = 4,
        .segment = segment,
        .segment_size = sizeof(segment),
    };
    shoal_ep_params_t q = {.field_mask = SHOAL_EP_PARAM_HANDLERS,
                           .handlers = hs,
                           .nhandlers = 4};
    shoal_handler_entry_t bad_index = {256, on_req, "bad", 0};
    shoal_ep_params_t bad = {.field_mask = SHOAL_EP_PARAM_HANDLERS,
                             .handlers = &bad_index,
                             .nhandlers = 1};
    shoal_ep_params_t unknown = {.field_mask = 1u << 20};

    T_OK(shoal_init(NULL));
    me = shoal_rank();
    n = shoal_size();
    T_RANK(me);
    T_ASSERT(n >= 2);
    T_ERR(shoal_ep_create(&bad, &ep), SHOAL_ERR_HANDLER);
    T_ERR(shoal_ep_create(&unknown, &ep), SHOAL_ERR_INVALID);
    T_ERR(shoal_ep_create(&p, NULL), SHOAL_ERR_INVALID);
    T_OK(shoal_ep_create(&p, &ep));
    T_OK(shoal_ep_create(&q, &ep_noseg));
}

static void bad_requests(void)
{
    uint64_t args[6] = {1, 2, 3, 4, 5, 6};
    size_t max;
    char *big;
    int peer = (me + 1) % n;

    T_ERR(shoal_am_request_short(ep, n, H_REQ, args, 1), SHOAL_ERR_RANK);
    T_DETAIL("out of range");
    T_ERR(shoal_am_request_short(ep, -1, H_REQ, args, 1), SHOAL_ERR_RANK);
    T_ERR(shoal_am_request_short(ep, peer, 99, args, 1), SHOAL_ERR_HANDLER);
    T_DETAIL("not registered");
    T_ERR(shoal_am_request_short(ep, peer, 300, args, 1), SHOAL_ERR_HANDLER);
    T_ERR(shoal_am_request_short(ep, peer, H_ONLY_REPLY, args, 1),
          SHOAL_ERR_HANDLER);
    T_DETAIL("requests");
    T_ERR(shoal_am_request_short(ep, peer, H_REQ, args, 6),
          SHOAL_ERR_TOO_LARGE);
    T_ERR(shoal_am_request_short(ep, peer, H_REQ, NULL, 2), SHOAL_ERR_INVALID);

    T_OK(shoal_am_max_medium(ep, &max));
    big = calloc(1, max + 1);
    T_ERR(shoal_am_request_medium(ep, peer, H_REQ, big, max + 1, args, 1),
          SHOAL_ERR_TOO_LARGE);
    T_DETAIL("at most");
    T_ERR(shoal_am_request_medium(ep, peer, H_REQ, NULL, 5, args, 1),
          SHOAL_ERR_INVALID);

    T_ERR(shoal_am_request_long(ep, peer, H_REQ, big, 100, sizeof(segment) - 99,
                                args, 1),
          SHOAL_ERR_SEGMENT);
    T_DETAIL("segment");
    T_ERR(shoal_am_request_long(ep, peer, H_REQ, big, 1, UINT64_MAX, args, 1),
          SHOAL_ERR_SEGMENT);
    T_ERR(shoal_am_request_long(ep, peer, H_REQ, big, sizeof(segment) + 1, 0,
                                args, 1),
          SHOAL_ERR_SEGMENT);
    T_ERR(shoal_am_request_long(ep_noseg, peer, H_REQ, big, 8, 0, args, 1),
          SHOAL_ERR_SEGMENT);
    T_DETAIL("no segment");
    free(big);

    /* Not an endpoint: a stray pointer is recognised without touching it. */
    T_ERR(shoal_am_request_short((shoal_ep_t *)(uintptr_t)0x1000, peer, H_REQ,
                                 args, 1),
          SHOAL_ERR_INVALID);
    T_ERR(shoal_poll(NULL), SHOAL_ERR_INVALID);
    T_ERR(shoal_am_reply_short(NULL, H_REP, args, 1), SHOAL_ERR_INVALID);
    T_ERR(shoal_ep_segment_attach(ep_noseg, NULL, 10), SHOAL_ERR_INVALID);
    T_ERR(shoal_token_info(NULL, NULL), SHOAL_ERR_INVALID);
}

static void receiver_drops(void)
{
    /* Rank 0 alone registers H_EXTRA, then sends it to rank 1, which drops
     * the frame (and says so) and goes on. */
    shoal_handler_entry_t extra = {H_EXTRA, on_extra, "extra",
                                   SHOAL_HANDLER_REQUEST};
    shoal_stats_t st;
    uint64_t a = 7;

    T_OK(shoal_barrier(ep));
    if (me == 0) {
        T_OK(shoal_ep_register(ep, &extra, 1));
        T_OK(shoal_am_request_short(ep, 1, H_EXTRA, &a, 1));
    }
    T_OK(shoal_barrier(ep));
    T_OK(shoal_barrier(ep)); /* the frame was handled before this returns */
    T_OK(shoal_stats_get(&st));
    /* ... over shared memory.  Over TCP the barrier (in shared memory on
     * one host) does not wait for the socket: poll a while longer. */
    for (int i = 0; me == 1 && st.dropped == 0 && i < 10000; i++) {
        usleep(1000);
        T_ASSERT(shoal_poll(ep) >= 0);
        T_OK(shoal_stats_get(&st));
    }
    if (me == 1)
        T_EQ(st.dropped, 1);
    else if (me == 0)
        T_EQ(st.dropped, 0);
}

/* Refused before anything starts, on every rank alike (so no rank waits
 * in a start-up fence for another that gave up), every time it is tried. */
static int bad_wires(int nwords, char **words)
{
    char detail[256];

    for (int attempt = 0; attempt < 2; attempt++) {
        T_ERR(shoal_init(NULL), SHOAL_ERR_CONFIG);
        T_DETAIL("SHOAL_WIRES");
        for (int i = 0; i < nwords; i++)
            T_DETAIL(words[i]);
        snprintf(detail, sizeof(detail), "%s", shoal_error_detail());
        T_ERR(shoal_rank(), SHOAL_ERR_NOT_INIT);
    }
    printf("ok: refused: %s\n", detail);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t args[2] = {0, 0};

    if (argc >= 2 && strcmp(argv[1], "bad_wires") == 0)
        return bad_wires(argc - 2, argv + 2);
    before_init();
    setup();
    bad_requests();
    /* Handlers' own misuse, checked inside them. */
    T_OK(shoal_am_request_short(ep, (me + 1) % n, H_NESTED, args, 0));
    T_OK(SHOAL_WAIT_UNTIL(ep, nested_done == 1));
    receiver_drops();
    /* The job goes on: a normal exchange after all those errors. */
    for (int i = 0; i < 100; i++)
        T_OK(shoal_am_request_short(ep, (me + 1) % n, H_REQ, args, 2));
    T_OK(SHOAL_WAIT_UNTIL(ep, replies == 100));
    T_OK(shoal_ep_destroy(ep_noseg));
    T_ERR(shoal_barrier(ep_noseg), SHOAL_ERR_INVALID);
    T_OK(shoal_ep_destroy(ep));
    T_OK(shoal_finalize());
    T_ERR(shoal_rank(), SHOAL_ERR_NOT_INIT);
    if (me == 0)
        printf("ok: bad input refused, job went on\n");
    return 0;
}
