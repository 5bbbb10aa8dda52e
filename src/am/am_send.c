/*
 * Sending: argument checks, credits, waiting for room, long payloads split
 * into frames, and replies queued when the way back is full.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "am.h"

/* ---- peers ----------------------------------------------------------------- */

typedef struct path_wait {
    const wire_ops_t *w;
    int rank;
} path_wait_t;

static int path_known(void *arg, int handled)
{
    path_wait_t *pw = arg;

    (void)handled;
    if (am.peers[pw->rank].conn != NULL || am.peers[pw->rank].dead)
        return 1;
    return pw->w->path(pw->rank, NULL, 0) != WIRE_PATH_PENDING;
}

int am_peer_get(int rank, am_peer_t **peer_p)
{
    am_peer_t *p = &am.peers[rank];
    int status;

    if (BASE_LIKELY(p->conn != NULL)) {
        *peer_p = p;
        return SHOAL_OK;
    }
    const wire_ops_t *w, *pending;

    for (;;) {
        if (p->dead)
            return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", rank);
        /* A handler may not wait for a first-contact probe: it takes the
         * next wire (its peer, which could not reach us by the probed
         * one either, has most likely done the same). */
        w = am_wire_for(rank, am.in_handler ? NULL : &pending);
        if (w != NULL)
            break;
        if (am.in_handler || pending == NULL)
            return am_wire_unreachable(rank);
        path_wait_t pw = {pending, rank};
        status = am_block(path_known, &pw, NULL, 0, -1);
        if (status != SHOAL_OK)
            return status;
        if (p->conn != NULL) { /* a handler connected meanwhile */
            *peer_p = p;
            return SHOAL_OK;
        }
    }
    status = w->connect(rank, &p->conn);
    if (status != SHOAL_OK)
        return status;
    *peer_p = p;
    return SHOAL_OK;
}

/* ---- checks ------------------------------------------------------------------ */

static int check_handler(const shoal_ep_t *ep, unsigned handler,
                         unsigned need, const char *fn)
{
    if (handler >= SHOAL_AM_MAX_HANDLERS)
        return base_err(SHOAL_ERR_HANDLER,
                        "%s: handler index %u out of range [0, %d)", fn,
                        handler, SHOAL_AM_MAX_HANDLERS);
    if (ep->handlers[handler].fn == NULL)
        return base_err(SHOAL_ERR_HANDLER,
                        "%s: handler %u is not registered on endpoint %u", fn,
                        handler, ep->index);
    if (!(ep->handlers[handler].flags & need))
        return base_err(SHOAL_ERR_HANDLER,
                        "%s: handler %u (%s) does not accept %s", fn, handler,
                        ep->handlers[handler].name ? ep->handlers[handler].name
                                                   : "unnamed",
                        need == SHOAL_HANDLER_REQUEST ? "requests" : "replies");
    return SHOAL_OK;
}

static int check_args(const uint64_t *args, unsigned nargs, const void *payload,
                      size_t len, const char *fn)
{
    if (nargs > SHOAL_AM_MAX_ARGS)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "%s: %u arguments, at most %d", fn, nargs,
                        SHOAL_AM_MAX_ARGS);
    if (nargs > 0 && args == NULL)
        return base_err(SHOAL_ERR_INVALID, "%s: %u arguments but args is NULL",
                        fn, nargs);
    if (len > 0 && payload == NULL)
        return base_err(SHOAL_ERR_INVALID,
                        "%s: payload is NULL but len is %zu", fn, len);
    return SHOAL_OK;
}

typedef struct seg_wait {
    am_peer_t *peer;
    unsigned ep;
    wire_segment_t *seg;
} seg_wait_t;

static int segment_known(void *arg, int handled)
{
    seg_wait_t *w = arg;
    int status = w->peer->conn->ops->peer_segment(w->peer->conn, w->ep,
                                                  w->seg);

    (void)handled;
    return status == SHOAL_ERR_AGAIN ? 0 : status == SHOAL_OK ? 1 : status;
}

/*
 * The destination's segment, waiting for a network wire to learn it while
 * the connection opens.  A handler may not wait: it sends unchecked, and
 * the receiver drops what does not fit.
 */
static int peer_segment(am_peer_t *p, unsigned ep, wire_segment_t *seg)
{
    seg_wait_t w = {p, ep, seg};
    int status = p->conn->ops->peer_segment(p->conn, ep, seg);

    if (BASE_LIKELY(status != SHOAL_ERR_AGAIN))
        return status;
    if (am.in_handler) {
        seg->base = 0;
        seg->size = UINT64_MAX;
        return SHOAL_OK;
    }
    return am_block(segment_known, &w, NULL, 0, -1);
}

/* Size and range checks that need the connection to the destination. */
static int check_payload(am_peer_t *p, unsigned ep, unsigned cat, size_t len,
                         uint64_t offset, const char *fn)
{
    if (cat == WIRE_CAT_MEDIUM) {
        size_t max = p->conn->ops->max_payload(p->conn, WIRE_CAT_MEDIUM);
        if (max > am.max_medium)
            max = am.max_medium;
        if (len > max)
            return base_err(SHOAL_ERR_TOO_LARGE,
                            "%s: medium payload of %zu bytes, at most %zu "
                            "(shoal_am_max_medium)",
                            fn, len, max);
    } else if (cat == WIRE_CAT_LONG) {
        wire_segment_t seg = {0, 0};
        int status = peer_segment(p, ep, &seg);
        if (status != SHOAL_OK)
            return status;
        if (seg.size == 0)
            return base_err(SHOAL_ERR_SEGMENT,
                            "%s: rank %d has no segment on endpoint %u", fn,
                            p->conn->rank, ep);
        if (offset > seg.size || len > seg.size - offset)
            return base_err(SHOAL_ERR_SEGMENT,
                            "%s: %zu bytes at offset %llu do not fit rank %d's "
                            "segment of %llu bytes",
                            fn, len, (unsigned long long)offset,
                            p->conn->rank, (unsigned long long)seg.size);
    }
    return SHOAL_OK;
}

/* A frame for the wire; arguments were checked by the caller. */
static inline wire_msg_t frame(unsigned kind, unsigned ep, unsigned handler,
                               const void *payload, size_t len,
                               uint64_t offset, const uint64_t *args,
                               unsigned nargs)
{
    wire_msg_t m = {
        .kind = (uint8_t)kind,
        .ep = (uint8_t)ep,
        .handler = (uint8_t)handler,
        .nargs = (uint8_t)nargs,
        .len = (uint32_t)len,
        .offset = offset,
        .args = args,
        .payload = payload,
    };
    return m;
}

/* ---- requests ---------------------------------------------------------------- */

typedef struct send_ctx {
    am_peer_t *peer;
    wire_msg_t *m;
    int take_credit;
    int waited_credit, waited_space;
} send_ctx_t;

static void flush_peer(am_peer_t *p);

/* One attempt; 1 sent, 0 try again later, < 0 error. */
static int try_send(void *arg, int handled)
{
    send_ctx_t *c = arg;
    am_peer_t *p = c->peer;
    int status;

    (void)handled;
    if (p->dead)
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", p->conn->rank);
    if (!base_list_empty(&p->pending)) {
        flush_peer(p);
        if (!base_list_empty(&p->pending))
            return 0;
    }
    if (c->take_credit && p->open >= am.window) {
        uint64_t credits = p->conn->ops->credits(p->conn);
        uint64_t back = credits - p->credits_seen;
        p->open = back >= p->open ? 0 : p->open - (uint32_t)back;
        p->credits_seen = credits;
        if (p->open >= am.window) {
            c->waited_credit = 1;
            return 0;
        }
    }
    status = p->conn->ops->send(p->conn, c->m);
    if (status == SHOAL_ERR_AGAIN) {
        c->waited_space = 1;
        return 0;
    }
    if (status != SHOAL_OK)
        return status;
    if (c->take_credit)
        p->open++;
    return 1;
}

static int send_frame_wait(am_peer_t *peer, wire_msg_t *m, int take_credit)
{
    send_ctx_t ctx = {peer, m, take_credit, 0, 0};
    int r = try_send(&ctx, 0);

    if (r == 1)
        return SHOAL_OK;
    if (r < 0)
        return r;
    r = am_block(try_send, &ctx, peer->conn, 0, -1);
    am.stats.credit_waits += (uint64_t)ctx.waited_credit;
    am.stats.space_waits += (uint64_t)ctx.waited_space;
    return r;
}

/* A frame with credits in hand and room in the channel goes at once. */
static inline int send_frame(am_peer_t *peer, wire_msg_t *m, int take_credit)
{
    if (BASE_LIKELY((!take_credit || peer->open < am.window) &&
                    base_list_empty(&peer->pending) && !peer->dead)) {
        int status = peer->conn->ops->send(peer->conn, m);
        if (BASE_LIKELY(status == SHOAL_OK)) {
            peer->open += (uint32_t)take_credit;
            return SHOAL_OK;
        }
        if (status != SHOAL_ERR_AGAIN)
            return status;
    }
    return send_frame_wait(peer, m, take_credit);
}

/*
 * Long payloads larger than one frame go as data-only fragments, then one
 * frame that carries no data and runs the handler on the whole range; only
 * that last frame takes a credit.  send_fn sends one frame (waiting for a
 * request, queueing for a reply).
 */
typedef int (*frame_send_fn_t)(am_peer_t *peer, wire_msg_t *m, int last);

static int send_long(am_peer_t *peer, const wire_msg_t *m,
                     frame_send_fn_t send_fn)
{
    const char *data = m->payload;
    uint64_t left = m->len, offset = m->offset;
    size_t max = peer->conn->ops->max_payload(peer->conn, WIRE_CAT_LONG);
    wire_msg_t last = *m;

    if (m->len <= max)
        return send_fn(peer, &last, 1);
    while (left > 0) {
        wire_msg_t frag = *m;
        int status;

        /* The limit may shrink (single copy refused): read it each time. */
        max = peer->conn->ops->max_payload(peer->conn, WIRE_CAT_LONG);
        frag.kind |= WIRE_F_FRAGMENT;
        frag.nargs = 0;
        frag.len = (uint32_t)(left < max ? left : max);
        frag.payload = data;
        frag.offset = offset;
        status = send_fn(peer, &frag, 0);
        if (status != SHOAL_OK)
            return status;
        data += frag.len;
        offset += frag.len;
        left -= frag.len;
    }
    last.kind |= WIRE_F_LANDED;
    last.payload = NULL;
    return send_fn(peer, &last, 1);
}

static int request_frame(am_peer_t *peer, wire_msg_t *m, int last)
{
    return send_frame(peer, m, last);
}

int am_request(am_peer_t *peer, wire_msg_t *m)
{
    return send_frame(peer, m, 1);
}

int am_request_medium_unchecked(unsigned ep, int dest, unsigned handler,
                                const void *payload, size_t len,
                                const uint64_t *args, unsigned nargs)
{
    am_peer_t *peer = &am.peers[dest];
    int status;

    if (BASE_UNLIKELY(peer->conn == NULL)) {
        status = am_peer_get(dest, &peer);
        if (status != SHOAL_OK)
            return status;
    }
    wire_msg_t m = frame(WIRE_CAT_MEDIUM, ep, handler, payload, len, 0, args,
                         nargs);
    status = send_frame(peer, &m, 1);
    if (BASE_LIKELY(status == SHOAL_OK))
        am.stats.requests_sent++;
    return status;
}

/* Cold: say which argument of a request is wrong. */
static int request_error(shoal_ep_t *ep, int dest, unsigned handler,
                         const void *payload, size_t len, const uint64_t *args,
                         unsigned nargs, const char *fn)
{
    int status = am_check_entry(fn, 0);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep))
        return base_err(SHOAL_ERR_INVALID, "%s: not an endpoint", fn);
    if (dest < 0 || dest >= am.job->size)
        return base_err(SHOAL_ERR_RANK, "%s: destination rank %d out of range "
                        "[0, %d)", fn, dest, am.job->size);
    status = check_handler(ep, handler, SHOAL_HANDLER_REQUEST, fn);
    if (status == SHOAL_OK)
        status = check_args(args, nargs, payload, len, fn);
    return status != SHOAL_OK ? status
                              : base_err(SHOAL_ERR_INTERNAL, "%s: bad request",
                                         fn);
}

static int request(shoal_ep_t *ep, int dest, unsigned cat, unsigned handler,
                   const void *payload, size_t len, uint64_t offset,
                   const uint64_t *args, unsigned nargs, const char *fn)
{
    am_peer_t *peer;
    int status;

    /* Every check at once; only a failure pays for finding out which. */
    if (BASE_UNLIKELY(!(am.init_count > 0 && !am.in_handler &&
                        am_ep_valid(ep) &&
                        (unsigned)dest < (unsigned)am.job->size &&
                        handler < SHOAL_AM_MAX_HANDLERS &&
                        (ep->handlers[handler].flags &
                         SHOAL_HANDLER_REQUEST) &&
                        nargs <= SHOAL_AM_MAX_ARGS &&
                        (args != NULL || nargs == 0) &&
                        (payload != NULL || len == 0))))
        return request_error(ep, dest, handler, payload, len, args, nargs, fn);
    peer = &am.peers[dest];
    if (BASE_UNLIKELY(peer->conn == NULL)) {
        status = am_peer_get(dest, &peer);
        if (status != SHOAL_OK)
            return status;
    }
    if (cat != WIRE_CAT_SHORT) {
        status = check_payload(peer, ep->index, cat, len, offset, fn);
        if (BASE_UNLIKELY(status != SHOAL_OK))
            return status;
    }

    wire_msg_t m = frame(cat, ep->index, handler, payload, len, offset, args,
                         nargs);
    if (cat == WIRE_CAT_LONG)
        status = send_long(peer, &m, request_frame);
    else
        status = send_frame(peer, &m, 1);
    if (BASE_LIKELY(status == SHOAL_OK))
        am.stats.requests_sent++;
    return status;
}

int shoal_am_request_short(shoal_ep_t *ep, int dest, unsigned handler,
                           const uint64_t *args, unsigned nargs)
{
    return request(ep, dest, WIRE_CAT_SHORT, handler, NULL, 0, 0, args, nargs,
                   "shoal_am_request_short");
}

int shoal_am_request_medium(shoal_ep_t *ep, int dest, unsigned handler,
                            const void *payload, size_t len,
                            const uint64_t *args, unsigned nargs)
{
    return request(ep, dest, WIRE_CAT_MEDIUM, handler, payload, len, 0, args,
                   nargs, "shoal_am_request_medium");
}

int shoal_am_request_long(shoal_ep_t *ep, int dest, unsigned handler,
                          const void *payload, size_t len,
                          uint64_t dest_offset, const uint64_t *args,
                          unsigned nargs)
{
    return request(ep, dest, WIRE_CAT_LONG, handler, payload, len,
                   dest_offset, args, nargs, "shoal_am_request_long");
}

/*
 * A request that never waits: SHOAL_ERR_AGAIN when the peer's credits or
 * channel room are exhausted now (the caller retries after progress).  For
 * layers above that push data from their progress loop.  Short and medium
 * only; arguments are the caller's responsibility.
 */
/*
 * The caller of a try that found no room retries from its progress loop,
 * and may sleep meanwhile: remember the peer, so that the sleep asks its
 * channel for a wake-up when room appears (am_wait.c).  Without this the
 * consumer frees the room without ringing and the sender sleeps till its
 * next peer check.
 */
static int want_space(am_peer_t *peer)
{
    if (base_list_empty(&peer->space_link)) {
        base_list_push_back(&am.space_wanted, &peer->space_link);
        am.wanted_gen++;
    }
    return SHOAL_ERR_AGAIN;
}

/* One frame now or SHOAL_ERR_AGAIN (the peer then waits in
 * am.space_wanted, so a sleep wakes when it has room). */
static int request_try(am_peer_t *peer, const wire_msg_t *m, int dest)
{
    int status;

    if (peer->dead)
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", dest);
    if (!base_list_empty(&peer->pending)) {
        flush_peer(peer);
        if (!base_list_empty(&peer->pending))
            return SHOAL_ERR_AGAIN; /* am.pending_peers wakes a sleep */
    }
    if (peer->open >= am.window) {
        uint64_t credits = peer->conn->ops->credits(peer->conn);
        uint64_t back = credits - peer->credits_seen;
        peer->open = back >= peer->open ? 0 : peer->open - (uint32_t)back;
        peer->credits_seen = credits;
        if (peer->open >= am.window)
            return want_space(peer);
    }
    status = peer->conn->ops->send(peer->conn, m);
    if (status == SHOAL_OK) {
        peer->open++;
        am.stats.requests_sent++;
        if (BASE_UNLIKELY(!base_list_empty(&peer->space_link)))
            base_list_remove(&peer->space_link);
    } else if (status == SHOAL_ERR_AGAIN) {
        return want_space(peer);
    }
    return status;
}

int am_request_try(unsigned ep, int dest, unsigned handler,
                   const void *payload, size_t len, const uint64_t *args,
                   unsigned nargs)
{
    am_peer_t *peer;
    int status = am_peer_get(dest, &peer);
    wire_msg_t m;

    if (status != SHOAL_OK)
        return status;
    m = frame(len > 0 || payload != NULL ? WIRE_CAT_MEDIUM : WIRE_CAT_SHORT,
              ep, handler, payload, len, 0, args, nargs);
    return request_try(peer, &m, dest);
}

int am_system_try(int dest, unsigned handler, const uint64_t *args,
                  unsigned nargs)
{
    am_peer_t *peer = &am.peers[dest];
    wire_msg_t m = frame(WIRE_CAT_SHORT | WIRE_F_SYSTEM, AM_SYSTEM_EP,
                         handler, NULL, 0, 0, args, nargs);

    if (peer->dead)
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", dest);
    if (peer->conn == NULL) {
        const wire_ops_t *pending = NULL;
        const wire_ops_t *w = am_wire_for(dest, &pending);
        if (w == NULL)
            return pending != NULL ? SHOAL_ERR_AGAIN
                                   : am_wire_unreachable(dest);
        int status = w->connect(dest, &peer->conn);
        if (status != SHOAL_OK)
            return status;
    }
    return request_try(peer, &m, dest);
}

int am_system_last(int dest, unsigned handler, const uint64_t *args,
                   unsigned nargs)
{
    am_peer_t *peer = &am.peers[dest];
    wire_msg_t m = frame(WIRE_CAT_SHORT | WIRE_F_SYSTEM, AM_SYSTEM_EP,
                         handler, NULL, 0, 0, args, nargs);

    if (peer->conn == NULL) {
        const wire_ops_t *w = am_wire_for(dest, NULL);
        if (w == NULL)
            return am_wire_unreachable(dest);
        int status = w->connect(dest, &peer->conn);
        if (status != SHOAL_OK)
            return status;
    }
    /* No credit taken: nothing more goes to this peer. */
    return peer->conn->ops->send(peer->conn, &m);
}

static int defer(am_peer_t *p, const wire_msg_t *m)
{
    size_t carried = (m->kind & WIRE_F_LANDED) ? 0 : m->len;
    am_deferred_t *d = malloc(sizeof(*d) + carried);

    if (d == NULL)
        return base_err(SHOAL_ERR_NOMEM, "queueing a reply of %u bytes",
                        m->len);
    d->msg = *m;
    memcpy(d->args, m->args, m->nargs * sizeof(uint64_t));
    d->msg.args = d->args;
    if (carried > 0)
        memcpy(d + 1, m->payload, carried);
    d->msg.payload = carried > 0 ? (void *)(d + 1) : NULL;
    if (base_list_empty(&p->pending)) {
        base_list_push_back(&am.pending_peers, &p->pending_link);
        am.wanted_gen++;
    }
    base_list_push_back(&p->pending, &d->link);
    return SHOAL_OK;
}

static void flush_peer(am_peer_t *p)
{
    base_list_t *e;

    while ((e = p->pending.next) != &p->pending) {
        am_deferred_t *d = BASE_CONTAINER_OF(e, am_deferred_t, link);
        int status = p->dead ? SHOAL_ERR_PEER_DEAD
                             : p->conn->ops->send(p->conn, &d->msg);
        if (status == SHOAL_ERR_AGAIN)
            return;
        if (status != SHOAL_OK && !p->dead)
            base_error("am", "dropping a queued reply to rank %d: %s",
                       p->conn->rank, shoal_error_detail());
        base_list_remove(e);
        free(d);
    }
    base_list_remove(&p->pending_link);
}

void am_flush_deferred(void)
{
    base_list_t *e = am.pending_peers.next;

    while (e != &am.pending_peers) {
        base_list_t *next = e->next;
        flush_peer(BASE_CONTAINER_OF(e, am_peer_t, pending_link));
        e = next;
    }
}

/* Send now if the way is clear, else queue (replies never wait). */
static inline int send_or_defer(am_peer_t *p, const wire_msg_t *m)
{
    if (base_list_empty(&p->pending)) {
        int status = p->conn->ops->send(p->conn, m);
        if (status != SHOAL_ERR_AGAIN)
            return status;
    }
    am.stats.replies_deferred++;
    return defer(p, m);
}

static int reply_frame(am_peer_t *peer, wire_msg_t *m, int last)
{
    (void)last;
    return send_or_defer(peer, m);
}

/* Cold: say what is wrong with a reply. */
static int reply_error(shoal_token_t *t, unsigned handler, const void *payload,
                       size_t len, const uint64_t *args, unsigned nargs,
                       const char *fn)
{
    int status = am_check_entry(fn, 1);

    if (status != SHOAL_OK)
        return status;
    if (t == NULL || !am.in_handler)
        return base_err(SHOAL_ERR_INVALID,
                        "%s: replies need the token of the request handler "
                        "that is running",
                        fn);
    if (!t->is_request)
        return base_err(SHOAL_ERR_INVALID,
                        "%s: a reply handler may not reply", fn);
    if (t->replied)
        return base_err(SHOAL_ERR_INVALID,
                        "%s: this request was already replied to", fn);
    status = check_handler(t->ep, handler, SHOAL_HANDLER_REPLY, fn);
    if (status == SHOAL_OK)
        status = check_args(args, nargs, payload, len, fn);
    return status != SHOAL_OK ? status
                              : base_err(SHOAL_ERR_INTERNAL, "%s: bad reply",
                                         fn);
}

static int reply(shoal_token_t *t, unsigned cat, unsigned handler,
                 const void *payload, size_t len, uint64_t offset,
                 const uint64_t *args, unsigned nargs, const char *fn)
{
    am_peer_t *peer;
    int status;

    if (BASE_UNLIKELY(!(am.init_count > 0 && am.in_handler && t != NULL &&
                        t->is_request && !t->replied &&
                        handler < SHOAL_AM_MAX_HANDLERS &&
                        (t->ep->handlers[handler].flags &
                         SHOAL_HANDLER_REPLY) &&
                        nargs <= SHOAL_AM_MAX_ARGS &&
                        (args != NULL || nargs == 0) &&
                        (payload != NULL || len == 0))))
        return reply_error(t, handler, payload, len, args, nargs, fn);
    peer = &am.peers[t->src];
    if (BASE_UNLIKELY(peer->conn == NULL)) {
        status = am_peer_get(t->src, &peer);
        if (status != SHOAL_OK)
            return status;
    }
    if (cat != WIRE_CAT_SHORT) {
        status = check_payload(peer, t->ep->index, cat, len, offset, fn);
        if (status != SHOAL_OK)
            return status;
    }

    wire_msg_t m = frame(cat | WIRE_F_REPLY, t->ep->index, handler, payload,
                         len, offset, args, nargs);
    status = cat == WIRE_CAT_LONG ? send_long(peer, &m, reply_frame)
                                  : send_or_defer(peer, &m);
    if (BASE_LIKELY(status == SHOAL_OK)) {
        t->replied = 1;
        am.stats.replies_sent++;
    }
    return status;
}

int shoal_am_reply_short(shoal_token_t *token, unsigned handler,
                         const uint64_t *args, unsigned nargs)
{
    return reply(token, WIRE_CAT_SHORT, handler, NULL, 0, 0, args, nargs,
                 "shoal_am_reply_short");
}

int shoal_am_reply_medium(shoal_token_t *token, unsigned handler,
                          const void *payload, size_t len,
                          const uint64_t *args, unsigned nargs)
{
    return reply(token, WIRE_CAT_MEDIUM, handler, payload, len, 0, args, nargs,
                 "shoal_am_reply_medium");
}

int shoal_am_reply_long(shoal_token_t *token, unsigned handler,
                        const void *payload, size_t len, uint64_t dest_offset,
                        const uint64_t *args, unsigned nargs)
{
    return reply(token, WIRE_CAT_LONG, handler, payload, len, dest_offset,
                 args, nargs, "shoal_am_reply_long");
}

int shoal_am_max_medium(shoal_ep_t *ep, size_t *max_p)
{
    int status = am_check_entry("shoal_am_max_medium", 1);

    if (status != SHOAL_OK)
        return status;
    if (!am_ep_valid(ep) || max_p == NULL)
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_am_max_medium: bad endpoint or NULL max_p");
    *max_p = am.max_medium;
    return SHOAL_OK;
}
