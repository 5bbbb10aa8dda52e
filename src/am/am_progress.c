/*
 * Progress: running handlers for arrived frames and sending queued ones.
 */
#define _GNU_SOURCE
#include "am.h"

/* Frames a wire may deliver from one channel per progress call. */
#define AM_POLL_BUDGET 32

static int drop(int src, const wire_msg_t *m, const char *why)
{
    am.stats.dropped++;
    base_error("am", "dropped a %s from rank %d for endpoint %u handler %u: %s",
               (m->kind & WIRE_F_REPLY) ? "reply" : "request", src, m->ep,
               m->handler, why);
    return (m->kind & WIRE_F_REPLY) ? WIRE_DELIVERED : WIRE_DELIVERED_NOREPLY;
}

int am_deliver(void *arg, int src, const wire_msg_t *m)
{
    int is_request = !(m->kind & WIRE_F_REPLY);
    shoal_ep_t *ep;
    am_handler_t *h;

    (void)arg;
    if (m->kind & WIRE_F_FRAGMENT)
        return WIRE_DELIVERED; /* data landed; the last frame runs the handler */
    if (!is_request) {
        am_peer_t *p = &am.peers[src];
        if (p->open > 0)
            p->open--; /* the reply ends one of our requests */
    }
    if (m->kind & WIRE_F_SYSTEM) {
        am_system_deliver(src, m);
        return is_request ? WIRE_DELIVERED_NOREPLY : WIRE_DELIVERED;
    }
    ep = m->ep < SHOAL_MAX_ENDPOINTS ? am.eps[m->ep] : NULL;
    if (BASE_UNLIKELY(ep == NULL))
        return drop(src, m, "no such endpoint here");
    h = &ep->handlers[m->handler];
    if (BASE_UNLIKELY(h->fn == NULL))
        return drop(src, m, "handler not registered here");
    if (BASE_UNLIKELY(!(h->flags & (is_request ? SHOAL_HANDLER_REQUEST
                                               : SHOAL_HANDLER_REPLY))))
        return drop(src, m, is_request ? "handler takes no requests"
                                       : "handler takes no replies");

    shoal_token_t token = {ep, src, (uint8_t)is_request, 0};
    am.in_handler++;
    h->fn(&token, m->args, m->nargs, (void *)m->payload, m->len);
    am.in_handler--;
    am.stats.messages_handled++;
    return (is_request && !token.replied) ? WIRE_DELIVERED_NOREPLY
                                          : WIRE_DELIVERED;
}

int am_progress(void)
{
    uint64_t before = am.stats.messages_handled;

    if (BASE_UNLIKELY(!base_list_empty(&am.pending_peers)))
        am_flush_deferred();
    wire_shm_ops.poll(AM_POLL_BUDGET);
    return (int)(am.stats.messages_handled - before);
}

int shoal_poll(shoal_ep_t *ep)
{
    int status = am_check_entry("shoal_poll", 0);

    if (BASE_UNLIKELY(status != SHOAL_OK))
        return status;
    if (BASE_UNLIKELY(!am_ep_valid(ep)))
        return base_err(SHOAL_ERR_INVALID, "shoal_poll: not an endpoint");
    return am_progress();
}
