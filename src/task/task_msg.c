/*
 * Messages between workers (task_msg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/base.h"
#include "boot/boot.h"
#include "shoal.h"
#include "task/task_grow.h"
#include "task/task_msg.h"

#define H_FRAG 1
/* A frame's args[1] (otherwise the offset of its piece in the message):
 * the payload holds whole messages, each after its length (u32, little
 * endian).  Only a backlog is packed so (flush_one): a message sent to an
 * empty queue goes alone, as before. */
#define PACKED UINT64_MAX
#define PACK_HDR 4

typedef struct out_msg {
    uint8_t *p;
    size_t len, off;
} out_msg_t;

typedef struct out_queue {
    out_msg_t *q;
    size_t head, n, cap; /* q[head..n) waits */
} out_queue_t;

typedef struct reasm {
    uint8_t *p;
    size_t len, have;
} reasm_t;

typedef struct in_msg {
    struct in_msg *next;
    int src;
    uint8_t *p;
    size_t len;
} in_msg_t;

static struct {
    shoal_ep_t *ep;
    size_t max;
    int me, size;
    out_queue_t *out;
    reasm_t *in;
    in_msg_t *head, *tail;
    size_t queued;
    size_t most; /* task_msg_most_queued */
    uint8_t *gone; /* by rank: the launcher said it let it go */
    uint8_t *pack; /* tm.max bytes: a packed frame being made */
} tm;

static void inbox_push(int src, uint8_t *p, size_t len)
{
    in_msg_t *m = malloc(sizeof(*m));

    if (m == NULL)
        base_fatal("task: out of memory for a message of %zu bytes", len);
    *m = (in_msg_t){NULL, src, p, len};
    if (tm.tail != NULL)
        tm.tail->next = m;
    else
        tm.head = m;
    tm.tail = m;
}

static void on_frag(shoal_token_t *token, const uint64_t *args,
                    unsigned nargs, void *payload, size_t len)
{
    shoal_token_info_t ti;
    (void)nargs;

    if (shoal_token_info(token, &ti) != SHOAL_OK || ti.source < 0 ||
        ti.source >= tm.size)
        return;
    reasm_t *r = &tm.in[ti.source];
    if (args[1] == PACKED) {
        /* Whole messages: none can be half put together before them
         * (a sender packs only messages it has not begun to send). */
        const uint8_t *at = payload;
        size_t left = len;
        if (r->p != NULL || args[0] != len)
            base_fatal("task: a packed frame from rank %d out of order",
                       ti.source);
        while (left > 0) {
            uint32_t n;
            if (left < PACK_HDR)
                base_fatal("task: a bad packed frame from rank %d",
                           ti.source);
            n = (uint32_t)at[0] | (uint32_t)at[1] << 8 |
                (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
            if (n > left - PACK_HDR)
                base_fatal("task: a bad packed frame from rank %d",
                           ti.source);
            uint8_t *m = malloc(n ? n : 1);
            if (m == NULL)
                base_fatal("task: out of memory for a message of %u bytes",
                           n);
            memcpy(m, at + PACK_HDR, n);
            inbox_push(ti.source, m, n);
            at += PACK_HDR + n;
            left -= PACK_HDR + n;
        }
        return;
    }
    if (args[1] == 0) {
        free(r->p);
        r->p = malloc(args[0] ? args[0] : 1);
        if (r->p == NULL)
            base_fatal("task: out of memory for a message of %llu bytes",
                       (unsigned long long)args[0]);
        r->len = args[0];
        r->have = 0;
    }
    if (r->p == NULL || args[1] != r->have || len > r->len - r->have)
        base_fatal("task: a message from rank %d arrived out of order",
                   ti.source);
    memcpy(r->p + r->have, payload, len);
    r->have += len;
    if (r->have == r->len) {
        inbox_push(ti.source, r->p, r->len);
        r->p = NULL;
    }
}

int task_msg_init(void)
{
    shoal_handler_entry_t h[] = {
        {H_FRAG, on_frag, "task_frag", SHOAL_HANDLER_REQUEST}};
    shoal_ep_params_t p = {0};
    int s;

    memset(&tm, 0, sizeof(tm));
    tm.me = shoal_rank();
    tm.size = shoal_size();
    p.field_mask = SHOAL_EP_PARAM_HANDLERS;
    p.handlers = h;
    p.nhandlers = 1;
    /* Before the endpoint: peers that have it may send at once. */
    tm.out = calloc((size_t)tm.size, sizeof(*tm.out));
    tm.in = calloc((size_t)tm.size, sizeof(*tm.in));
    tm.gone = calloc((size_t)tm.size, 1);
    if (tm.out == NULL || tm.in == NULL || tm.gone == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: message queues");
    s = shoal_ep_create(&p, &tm.ep);
    if (s == SHOAL_OK)
        s = shoal_am_max_medium(tm.ep, &tm.max);
    if (s == SHOAL_OK && (tm.pack = malloc(tm.max)) == NULL)
        s = base_err(SHOAL_ERR_NOMEM, "task: message queues");
    return s;
}

void task_msg_fini(void)
{
    for (int r = 0; tm.out != NULL && r < tm.size; r++) {
        for (size_t k = tm.out[r].head; k < tm.out[r].n; k++)
            free(tm.out[r].q[k].p);
        free(tm.out[r].q);
        free(tm.in[r].p);
    }
    while (tm.head != NULL) {
        in_msg_t *m = tm.head;
        tm.head = m->next;
        free(m->p);
        free(m);
    }
    free(tm.out);
    free(tm.in);
    free(tm.gone);
    free(tm.pack);
    /* The endpoint stays: destroying it is collective, and some workers
     * may be gone; shoal_finalize frees it. */
    memset(&tm, 0, sizeof(tm));
}

static void drop_queue(out_queue_t *o)
{
    for (size_t k = o->head; k < o->n; k++)
        free(o->q[k].p);
    tm.queued -= o->n - o->head;
    o->head = o->n = 0;
}

/* How many whole messages from the head of o go in one packed frame
 * (0: fewer than two fit, the head is sent as it is); *bytes_p its
 * payload's length. */
static size_t pack_count(const out_queue_t *o, size_t *bytes_p)
{
    size_t k = o->head, bytes = 0;

    if (o->q[k].off != 0)
        return 0; /* the head's pieces are on their way */
    for (; k < o->n && o->q[k].len <= UINT32_MAX &&
           o->q[k].len <= tm.max - bytes &&
           PACK_HDR <= tm.max - bytes - o->q[k].len;
         k++)
        bytes += PACK_HDR + o->q[k].len;
    *bytes_p = bytes;
    return k - o->head >= 2 ? k - o->head : 0;
}

/* Sends the first k messages of o in one frame (their bytes fit). */
static int send_packed(int dest, out_queue_t *o, size_t k, size_t bytes)
{
    uint8_t *at = tm.pack;

    for (size_t i = o->head; i < o->head + k; i++) {
        uint32_t n = (uint32_t)o->q[i].len;
        at[0] = (uint8_t)n;
        at[1] = (uint8_t)(n >> 8);
        at[2] = (uint8_t)(n >> 16);
        at[3] = (uint8_t)(n >> 24);
        memcpy(at + PACK_HDR, o->q[i].p, n);
        at += PACK_HDR + n;
    }
    uint64_t args[2] = {bytes, PACKED};
    int s = am_request_try(tm.ep->index, dest, H_FRAG, tm.pack, bytes, args,
                           2);
    if (s != SHOAL_OK)
        return s;
    for (size_t i = o->head; i < o->head + k; i++)
        free(o->q[i].p);
    o->head += k;
    tm.queued -= k;
    return SHOAL_OK;
}

static int flush_one(int dest)
{
    out_queue_t *o = &tm.out[dest];

    while (o->head < o->n) {
        /* A backlog (a receiver slower than this rank, the heir's copy
         * of every grant say: one frame a message let it grow to
         * hundreds of thousands, and what came after, the run's end or a
         * page, waited minutes behind it) goes many messages a frame. */
        size_t bytes, k = o->n - o->head >= 2 ? pack_count(o, &bytes) : 0;
        if (k > 0) {
            int s = send_packed(dest, o, k, bytes);
            if (s == SHOAL_ERR_AGAIN)
                return SHOAL_OK;
            if (s == SHOAL_ERR_PEER_DEAD || task_msg_dead(dest)) {
                drop_queue(o);
                return SHOAL_OK;
            }
            if (s != SHOAL_OK)
                return s;
            continue;
        }
        out_msg_t *m = &o->q[o->head];
        size_t n = m->len - m->off < tm.max ? m->len - m->off : tm.max;
        uint64_t args[2] = {m->len, m->off};
        int s = am_request_try(tm.ep->index, dest, H_FRAG, m->p + m->off, n,
                               args, 2);
        if (s == SHOAL_ERR_AGAIN)
            return SHOAL_OK;
        if (s == SHOAL_ERR_PEER_DEAD || task_msg_dead(dest)) {
            drop_queue(o);
            return SHOAL_OK;
        }
        if (s != SHOAL_OK)
            return s;
        m->off += n;
        if (m->off == m->len) {
            free(m->p);
            o->head++;
            tm.queued--;
        }
    }
    o->head = o->n = 0;
    return SHOAL_OK;
}

int task_msg_send(int dest, uint8_t *msg, size_t len)
{
    if (dest == tm.me) {
        inbox_push(dest, msg, len);
        return SHOAL_OK;
    }
    out_queue_t *o = &tm.out[dest];
    if (task_msg_dead(dest)) {
        free(msg);
        return SHOAL_OK;
    }
    int s = task_grow((void **)&o->q, &o->cap, o->n + 1, sizeof(*o->q),
                      "task: send queue");
    if (s != SHOAL_OK) {
        free(msg);
        return s;
    }
    o->q[o->n++] = (out_msg_t){msg, len, 0};
    tm.queued++;
    if (o->n - o->head > tm.most)
        tm.most = o->n - o->head;
    return o->n - o->head == 1 ? flush_one(dest) : SHOAL_OK;
}

int task_msg_flush(void)
{
    for (int r = 0; r < tm.size && tm.queued > 0; r++) {
        if (tm.out[r].head == tm.out[r].n)
            continue;
        int s = flush_one(r);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_msg_next(int *src_p, uint8_t **msg_p, size_t *len_p)
{
    in_msg_t *m = tm.head;

    if (m == NULL)
        return 0;
    tm.head = m->next;
    if (tm.head == NULL)
        tm.tail = NULL;
    *src_p = m->src;
    *msg_p = m->p;
    *len_p = m->len;
    free(m);
    return 1;
}

int task_msg_waiting(void)
{
    return tm.head != NULL;
}

int task_msg_queued(void)
{
    return tm.queued > 0;
}

size_t task_msg_most_queued(void)
{
    return tm.most;
}

void task_msg_poll_gone(void)
{
    int r;

    /* (With --ft the active-message layer takes them: am_wait.c.) */
    if (base_cfg.FT || tm.gone == NULL)
        return;
    while ((r = boot_failed_rank()) >= 0)
        if (r < tm.size && r != tm.me && !tm.gone[r]) {
            tm.gone[r] = 1;
            base_info("task", "rank %d: the launcher let rank %d go",
                      tm.me, r);
        }
}

int task_msg_dead(int rank)
{
    if (rank == tm.me || rank < 0 || rank >= tm.size || am.peers == NULL)
        return 0;
    if (am.peers[rank].dead || tm.gone[rank]) {
        free(tm.in[rank].p);
        tm.in[rank].p = NULL;
        return 1;
    }
    return 0;
}
