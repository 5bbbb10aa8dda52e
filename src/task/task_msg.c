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
    uint8_t *gone; /* by rank: the launcher said it let it go */
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

static int flush_one(int dest)
{
    out_queue_t *o = &tm.out[dest];

    while (o->head < o->n) {
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
