/*
 * Multi-process active-message traffic, checked message by message.
 *
 *   am_traffic n_to_1 [count]      every rank sends count requests to rank 0
 *   am_traffic all_to_all [count]  every rank sends count to every rank
 *   am_traffic random [count]      random destinations, kinds and sizes,
 *                                  half of them answered by replies; each
 *                                  rank says "rank R sending" when it starts
 *   am_traffic medium_sizes        every medium size 0..max to the next rank,
 *                                  each answered by a medium reply
 *   am_traffic long_offsets [shared]  long requests and replies landing at
 *                                  chosen offsets of the peers' segments
 *                                  (malloc'd, or from shoal_segment_alloc)
 *   am_traffic flood [count]       requests whose handlers all reply, sent
 *                                  without polling in between (credits)
 *   am_traffic connections         each rank talks only to the next one:
 *                                  it must have opened exactly one connection
 *                                  (every peer's with SHOAL_CONNECT=all; two
 *                                  with SHOAL_WIRES=tcp, see connections())
 *   am_traffic connections_a2a     each rank sends to every rank: one
 *                                  connection per peer, whatever the wire
 *
 * Every message carries (source, per-destination sequence number); the
 * receiver checks it arrives exactly once and in order, payloads are
 * checked byte by byte, and the totals are compared after a barrier.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal.h"
#include "test.h"

enum { H_SEQ = 1, H_ECHO, H_ECHO_REPLY, H_MED, H_MED_REPLY, H_LONG,
       H_LONG_REPLY };

static int me, nranks;
static shoal_ep_t *ep;
static uint64_t *expect_seq; /* next sequence number from each source */
static uint64_t *sent_seq;   /* next sequence number to each destination */
static uint64_t received, replies, expected_replies;
static unsigned char *segment;
static size_t seg_size, slot_size;

/* Deterministic payload byte i of a message identified by key. */
static unsigned char pattern(uint64_t key, size_t i)
{
    return (unsigned char)((key * 2654435761u + i * 40503u) >> 7);
}

static void fill(unsigned char *buf, size_t len, uint64_t key)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(key, i);
}

static void check_bytes(const unsigned char *buf, size_t len, uint64_t key,
                        const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(key, i))
            T_FAIL("%s: byte %zu of %zu differs (key %llu)", what, i, len,
                   (unsigned long long)key);
}

/* args[0] = source rank, args[1] = sequence number on (source, me). */
static void check_order(const uint64_t *args, unsigned nargs, int src)
{
    T_ASSERT(nargs >= 2);
    if ((int)args[0] != src)
        T_FAIL("message claims source %llu but came from %d",
               (unsigned long long)args[0], src);
    if (args[1] != expect_seq[src])
        T_FAIL("from rank %d: sequence %llu, expected %llu (lost, repeated "
               "or reordered)",
               src, (unsigned long long)args[1],
               (unsigned long long)expect_seq[src]);
    expect_seq[src]++;
    received++;
}

static int token_source(shoal_token_t *t)
{
    shoal_token_info_t info;

    T_OK(shoal_token_info(t, &info));
    return info.source;
}

/* ---- handlers ---------------------------------------------------------------- */

static void on_seq(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                   void *payload, size_t len)
{
    int src = token_source(t);

    check_order(args, nargs, src);
    if (len > 0)
        check_bytes(payload, len, args[1] * 1000003u + (uint64_t)src, "medium");
}

static void on_echo(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                    void *payload, size_t len)
{
    check_order(args, nargs, token_source(t));
    T_OK(shoal_am_reply_short(t, H_ECHO_REPLY, args, nargs));
}

static void on_echo_reply(shoal_token_t *t, const uint64_t *args,
                          unsigned nargs, void *payload, size_t len)
{
    T_EQ(args[0], me); /* our own request echoed back */
    replies++;
}

static void on_medium(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                      void *payload, size_t len)
{
    int src = token_source(t);

    check_order(args, nargs, src);
    T_EQ(len, args[2]);
    check_bytes(payload, len, args[3], "medium request");
    /* Answer with a medium reply of the same size and a different key. */
    unsigned char *back = malloc(len + 1);
    fill(back, len, args[3] + 1);
    uint64_t rargs[4] = {args[0], args[1], len, args[3] + 1};
    T_OK(shoal_am_reply_medium(t, H_MED_REPLY, back, len, rargs, 4));
    free(back);
}

static void on_medium_reply(shoal_token_t *t, const uint64_t *args,
                            unsigned nargs, void *payload, size_t len)
{
    T_EQ(len, args[2]);
    check_bytes(payload, len, args[3], "medium reply");
    replies++;
}

/* args: src, seq, offset, len, key.  The payload must already be in place. */
static void on_long(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                    void *payload, size_t len)
{
    int src = token_source(t);

    check_order(args, nargs, src);
    T_ASSERT(payload == segment + args[2]);
    T_EQ(len, args[3]);
    check_bytes(payload, len, args[4], "long request");
    /* The sender reuses its slot once it hears back: even keys get a short
     * reply, odd keys write the same bytes back into the sender's segment. */
    if (args[4] % 2 == 0) {
        T_OK(shoal_am_reply_short(t, H_ECHO_REPLY, args, nargs));
        return;
    }
    uint64_t rargs[5] = {args[0], args[1], args[2], args[3], args[4]};
    T_OK(shoal_am_reply_long(t, H_LONG_REPLY, payload, len, args[2], rargs,
                             5));
}

static void on_long_reply(shoal_token_t *t, const uint64_t *args,
                          unsigned nargs, void *payload, size_t len)
{
    T_ASSERT(payload == segment + args[2]);
    check_bytes(payload, len, args[4], "long reply");
    replies++;
}

/* ---- helpers --------------------------------------------------------------- */

static int shared_segment; /* segment from shoal_segment_alloc */

static void setup(size_t seg_bytes)
{
    static const shoal_handler_entry_t handlers[] = {
        {H_SEQ, on_seq, "seq", SHOAL_HANDLER_REQUEST},
        {H_ECHO, on_echo, "echo", SHOAL_HANDLER_REQUEST},
        {H_ECHO_REPLY, on_echo_reply, "echo_reply", SHOAL_HANDLER_REPLY},
        {H_MED, on_medium, "medium", SHOAL_HANDLER_REQUEST},
        {H_MED_REPLY, on_medium_reply, "medium_reply", SHOAL_HANDLER_REPLY},
        {H_LONG, on_long, "long", SHOAL_HANDLER_REQUEST},
        {H_LONG_REPLY, on_long_reply, "long_reply", SHOAL_HANDLER_REPLY},
    };
    shoal_ep_params_t p = {
        .field_mask = SHOAL_EP_PARAM_HANDLERS,
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
    };

    T_OK(shoal_init(NULL));
    me = shoal_rank();
    nranks = shoal_size();
    T_RANK(me);
    /* Handlers may run inside shoal_ep_create: state first. */
    expect_seq = calloc((size_t)nranks, sizeof(*expect_seq));
    sent_seq = calloc((size_t)nranks, sizeof(*sent_seq));
    if (seg_bytes > 0) {
        seg_size = seg_bytes;
        if (shared_segment)
            T_OK(shoal_segment_alloc(seg_size, (void **)&segment));
        else
            segment = calloc(1, seg_size);
        T_ASSERT(segment != NULL);
        p.field_mask |= SHOAL_EP_PARAM_SEGMENT;
        p.segment = segment;
        p.segment_size = seg_size;
    }
    T_OK(shoal_ep_create(&p, &ep));
}

static void send_seq(int dest, unsigned handler)
{
    uint64_t args[2] = {(uint64_t)me, sent_seq[dest]++};

    if (handler == H_ECHO)
        expected_replies++;
    T_OK(shoal_am_request_short(ep, dest, handler, args, 2));
}

static void finish(uint64_t expect_received)
{
    T_OK(SHOAL_WAIT_UNTIL(ep, received == expect_received &&
                                  replies == expected_replies));
    T_OK(shoal_barrier(ep));
    /* Nothing more may arrive after everyone is done. */
    T_OK(shoal_poll(ep) >= 0 ? SHOAL_OK : SHOAL_ERR_INTERNAL);
    T_EQ(received, expect_received);
    T_EQ(replies, expected_replies);
    T_OK(shoal_ep_destroy(ep));
    if (shared_segment)
        T_OK(shoal_segment_free(segment));
    else
        free(segment);
    T_OK(shoal_finalize());
    free(expect_seq);
    free(sent_seq);
    if (me == 0)
        printf("ok: %d ranks\n", nranks);
}

/* ---- scenarios --------------------------------------------------------------- */

static void n_to_1(long count)
{
    setup(0);
    for (long i = 0; i < count; i++)
        send_seq(0, H_SEQ);
    finish(me == 0 ? (uint64_t)count * (uint64_t)nranks : 0);
}

static void all_to_all(long count)
{
    setup(0);
    for (long i = 0; i < count; i++)
        for (int d = 0; d < nranks; d++)
            send_seq((me + d) % nranks, (i % 3 == 0) ? H_ECHO : H_SEQ);
    finish((uint64_t)count * (uint64_t)nranks);
}

static void random_traffic(long count)
{
    size_t max;
    unsigned char *buf;
    /* How many each rank will get is known to everyone from the seeds. */
    uint64_t expect = 0;

    setup(0);
    T_OK(shoal_am_max_medium(ep, &max));
    buf = malloc(max);
    for (int src = 0; src < nranks; src++) {
        unsigned s = 12345u + (unsigned)src;
        for (long i = 0; i < count; i++) {
            int dest = (int)(rand_r(&s) % (unsigned)nranks);
            rand_r(&s);
            rand_r(&s);
            if (dest == me)
                expect++;
        }
    }
    /* Counting takes seconds for a large count: a test that cuts a link
     * during the traffic waits for this line (multihost link_down_wire). */
    printf("rank %d sending\n", me);
    fflush(stdout);
    unsigned seed = 12345u + (unsigned)me;
    for (long i = 0; i < count; i++) {
        int dest = (int)(rand_r(&seed) % (unsigned)nranks);
        unsigned kind = (unsigned)rand_r(&seed) % 3;
        size_t len = (size_t)rand_r(&seed) % (max + 1);
        if (kind == 0) {
            send_seq(dest, H_SEQ);
        } else if (kind == 1) {
            send_seq(dest, H_ECHO);
        } else {
            uint64_t seq = sent_seq[dest]++;
            uint64_t args[2] = {(uint64_t)me, seq};
            if (len > 300 && i % 4 != 0)
                len %= 300; /* mostly small, sometimes up to the maximum */
            fill(buf, len, seq * 1000003u + (uint64_t)me);
            T_OK(shoal_am_request_medium(ep, dest, H_SEQ, buf, len, args, 2));
        }
    }
    free(buf);
    finish(expect);
}

static void medium_sizes(void)
{
    size_t max;
    unsigned char *buf;
    int dest;

    setup(0);
    T_OK(shoal_am_max_medium(ep, &max));
    buf = malloc(max + 1);
    dest = (me + 1) % nranks;
    for (size_t len = 0; len <= max; len++) {
        uint64_t key = len * 31u + (uint64_t)me;
        uint64_t args[4] = {(uint64_t)me, sent_seq[dest]++, len, key};
        fill(buf, len, key);
        expected_replies++;
        T_OK(shoal_am_request_medium(ep, dest, H_MED, buf, len, args, 4));
    }
    /* One byte over the maximum is refused, and nothing is sent. */
    uint64_t args[4] = {(uint64_t)me, 0, max + 1, 0};
    T_ERR(shoal_am_request_medium(ep, dest, H_MED, buf, max + 1, args, 4),
          SHOAL_ERR_TOO_LARGE);
    free(buf);
    finish((uint64_t)max + 1);
}

static void long_offsets(void)
{
    /* Each sender owns a slot of every segment: slot_size bytes at
     * src * slot_size.  Sizes cover inline, bulk, single copy, and (with
     * SHOAL_SHM_CMA=off) payloads split into fragments. */
    static const size_t sizes[] = {0,     1,     8,      24,     25,
                                   100,   4095,  4096,   16383,  16384,
                                   65536, 70001, 300000, 1 << 20, 3 << 20};
    const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    unsigned char *buf;
    uint64_t expect = 0;

    slot_size = (4u << 20) + 64;
    setup(slot_size * 64);
    T_ASSERT(nranks <= 64);
    buf = malloc(slot_size);
    for (int dest = 0; dest < nranks; dest++) {
        for (size_t i = 0; i < nsizes; i++) {
            size_t len = sizes[i];
            /* Vary the offset inside the slot so it is rarely aligned. */
            uint64_t offset = (uint64_t)me * slot_size + (i * 7) % 64;
            uint64_t key = (uint64_t)me * 1000 + i * 10 + (uint64_t)dest;
            uint64_t args[5] = {(uint64_t)me, sent_seq[dest]++, offset, len,
                                key};
            fill(buf, len, key);
            expected_replies++;
            T_OK(shoal_am_request_long(ep, dest, H_LONG, buf, len, offset,
                                       args, 5));
            /* The slot is reused: wait until the handler has seen it. */
            T_OK(SHOAL_WAIT_UNTIL(ep, replies == expected_replies));
        }
    }
    expect = (uint64_t)nsizes * (uint64_t)nranks;
    free(buf);
    finish(expect);
}

static int flood_dest(int src, long i)
{
    return (src + 1 + (int)(i % nranks)) % nranks;
}

static void flood(long count)
{
    uint64_t expect = 0;

    setup(0);
    for (int src = 0; src < nranks; src++)
        for (long i = 0; i < count; i++)
            expect += flood_dest(src, i) == me;
    /* Everyone floods everyone with requests that reply; nobody polls
     * except when a request has to wait for credits or room. */
    for (long i = 0; i < count; i++)
        send_seq(flood_dest(me, i), H_ECHO);
    finish(expect);
}

/* Connections a ring exchange leaves at this rank (see connections()).
 * Rank r is on host r / local_size (hosts of equal size, ranks placed by
 * blocks, as shoalrun --host places them); a peer is reached over TCP when
 * on another host or with SHOAL_WIRES=tcp. */
static uint64_t ring_connections(void)
{
    const char *wires = getenv("SHOAL_WIRES");
    /* Only network wires (tcp, udp): the neighbours also count the
     * connections opened to them. */
    int net_only = wires != NULL && strstr(wires, "shm") == NULL;
    shoal_job_info_t ji;
    unsigned char *peer = calloc((size_t)nranks, 1);
    uint64_t count = 0;

    T_OK(shoal_job_info(&ji));
    T_ASSERT(peer != NULL);
#define REMOTE(r) (net_only || (r) / ji.local_size != me / ji.local_size)
    peer[(me + 1) % nranks] = 1;
    peer[(me + nranks - 1) % nranks] |= REMOTE((me + nranks - 1) % nranks);
    if (ji.local_size < nranks)
        for (int d = 1; d < nranks; d <<= 1) {
            int left = (me + nranks - d) % nranks;
            peer[(me + d) % nranks] = 1;
            peer[left] |= REMOTE(left);
        }
#undef REMOTE
    for (int r = 0; r < nranks; r++)
        count += r != me && peer[r];
    free(peer);
    return nranks == 1 ? 1 : count;
}

static void connections(void)
{
    const char *mode = getenv("SHOAL_CONNECT");
    int all = mode != NULL && strcmp(mode, "all") == 0;
    shoal_stats_t st;

    setup(0);
    for (int i = 0; i < 100; i++)
        send_seq((me + 1) % nranks, H_SEQ);
    T_OK(SHOAL_WAIT_UNTIL(ep, received == 100));
    T_OK(shoal_barrier(ep));
    T_OK(shoal_stats_get(&st));
    /* Only the ring neighbour, unless connections are opened up front.
     * Over TCP one connection serves both directions and both ends count
     * it: a ring gives each rank the one it opened and, when the left
     * neighbour is reached over TCP too, the one that neighbour opened (one
     * in all at 2 ranks, where they cross); all gives N-1 sockets plus the
     * rank's own ring to itself.  Across hosts the barriers (the one in
     * shoal_ep_create too) are a dissemination over all ranks, which has
     * already connected each rank to rank + 2^k and, over TCP, from
     * rank - 2^k: the ring adds none of its own. */
    T_EQ(st.connections, all ? (uint64_t)nranks : ring_connections());
    finish(100);
}

/* On demand, an all-to-all exchange opens a connection to every peer:
 * N over shared memory (its own ring included), N-1 sockets over TCP plus
 * the rank's own ring. */
static void connections_a2a(void)
{
    shoal_stats_t st;

    setup(0);
    for (int i = 0; i < 10; i++)
        for (int d = 0; d < nranks; d++)
            send_seq((me + d) % nranks, H_SEQ);
    T_OK(SHOAL_WAIT_UNTIL(ep, received == (uint64_t)(10 * nranks)));
    T_OK(shoal_barrier(ep));
    T_OK(shoal_stats_get(&st));
    T_EQ(st.connections, (uint64_t)nranks);
    finish((uint64_t)(10 * nranks));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all_to_all";
    long count = argc > 2 ? atol(argv[2]) : 2000;

    if (strcmp(mode, "n_to_1") == 0)
        n_to_1(count);
    else if (strcmp(mode, "all_to_all") == 0)
        all_to_all(count);
    else if (strcmp(mode, "random") == 0)
        random_traffic(count);
    else if (strcmp(mode, "medium_sizes") == 0)
        medium_sizes();
    else if (strcmp(mode, "long_offsets") == 0) {
        shared_segment = argc > 2 && strcmp(argv[2], "shared") == 0;
        long_offsets();
    }
    else if (strcmp(mode, "flood") == 0)
        flood(count);
    else if (strcmp(mode, "connections") == 0)
        connections();
    else if (strcmp(mode, "connections_a2a") == 0)
        connections_a2a();
    else
        T_FAIL("unknown mode %s", mode);
    return 0;
}
