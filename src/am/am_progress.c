/*
 * Progress: running handlers for arrived frames and sending queued ones.
 */
#define _GNU_SOURCE
#include "am.h"

/* Frames a wire delivers from one channel per progress call, before it
 * moves on to the next channel. */
#define AM_POLL_BUDGET 32

static int drop(int src, const wire_msg_t *m, const char *why)
{
    am.stats.dropped++;
    base_error("am", "dropped a %s from rank %d for endpoint %u handler %u: %s",
               (m->kind & WIRE_F_REPLY) ? "reply" : "request", src, m->ep,
               m->handler, why);
    return (m->kind & WIRE_F_REPLY) ? WIRE_DELIVERED : WIRE_DELIVERED_NOREPLY;
}

/* Fragments, system frames and frames that must be dropped. */
static int deliver_other(int src, const wire_msg_t *m)
{
    int is_request = !(m->kind & WIRE_F_REPLY);
    shoal_ep_t *ep;

    if (m->kind & WIRE_F_FRAGMENT)
        return WIRE_DELIVERED; /* data landed; the last frame runs the handler */
    if (!is_request && am.peers[src].open > 0)
        am.peers[src].open--; /* even a dropped reply ends a request */
    if (m->kind & WIRE_F_SYSTEM) {
        am_system_deliver(src, m);
        return is_request ? WIRE_DELIVERED_NOREPLY : WIRE_DELIVERED;
    }
    ep = m->ep < SHOAL_MAX_ENDPOINTS ? am.eps[m->ep] : NULL;
    if (ep == NULL)
        return drop(src, m, "no such endpoint here");
    if (ep->handlers[m->handler].fn == NULL)
        return drop(src, m, "handler not registered here");
    return drop(src, m, is_request ? "handler takes no requests"
                                   : "handler takes no replies");
}

int am_deliver(void *arg, int src, const wire_msg_t *m)
{
    unsigned is_reply = (m->kind & WIRE_F_REPLY) != 0;
    shoal_ep_t *ep = m->ep < SHOAL_MAX_ENDPOINTS ? am.eps[m->ep] : NULL;
    const am_handler_t *h;

    (void)arg;
    /* A rank taken for dead here still talks (a link back after the
     * timeout, a stopped process continued): it is told so (am_tell.c);
     * the MPI engine ignores what it sends. */
    if (BASE_UNLIKELY(am.deaths != 0) && am.peers[src].dead)
        am_tell_zombie(src, m);
    /* SHOAL_HANDLER_REQUEST is 1 and SHOAL_HANDLER_REPLY 2; flags are 0
     * for an unregistered index, so one test covers both. */
    if (BASE_UNLIKELY((m->kind & (WIRE_F_FRAGMENT | WIRE_F_SYSTEM)) ||
                      ep == NULL ||
                      !(ep->handlers[m->handler].flags & (1u + is_reply))))
        return deliver_other(src, m);
    if (is_reply && am.peers[src].open > 0)
        am.peers[src].open--; /* the reply ends one of our requests */
    h = &ep->handlers[m->handler];

    shoal_token_t token = {ep, src, (uint8_t)!is_reply, 0};
    am.in_handler++;
    h->fn(&token, m->args, m->nargs, (void *)m->payload, m->len);
    am.in_handler--;
    am.stats.messages_handled++;
    return (!is_reply && !token.replied) ? WIRE_DELIVERED_NOREPLY
                                         : WIRE_DELIVERED;
}

void *am_place(void *arg, int src, const wire_msg_t *m)
{
    shoal_ep_t *ep = m->ep < SHOAL_MAX_ENDPOINTS ? am.eps[m->ep] : NULL;
    const am_handler_t *h;

    (void)arg;
    /* Not into a buffer of the layer above for a peer taken for dead: what
     * it waited for has failed (the MPI engine ignores such frames too). */
    if (BASE_UNLIKELY(am.peers[src].dead))
        return NULL;
    if ((m->kind & (WIRE_CAT_MASK | WIRE_F_REPLY | WIRE_F_SYSTEM |
                    WIRE_F_FRAGMENT)) != WIRE_CAT_MEDIUM ||
        ep == NULL)
        return NULL;
    h = &ep->handlers[m->handler];
    if (h->place == NULL || !(h->flags & SHOAL_HANDLER_REQUEST))
        return NULL;
    return h->place(m->args, m->nargs, m->len);
}

/*
 * Polling several wires (multi-protocol AM-II): an epoll_wait costs
 * hundreds of times a look at the shared-memory rings (docs/TCP.md has
 * numbers), so while a network wire is quiet it is polled every every-th
 * call only, the interval doubling up to SHOAL_TCP_POLL_MAX (a rank alone
 * on its host polls every call: no shared-memory peer pays for it); frames
 * arriving, work in hand (busy), or a frame just sent on any network wire
 * (whose answer may come soon) bring it back to every call.
 */
static void net_turn(am_net_t *n)
{
    uint32_t max = n->poll_max;

    if (n->countdown > 1) {
        n->countdown--;
        return;
    }
    if (n->ops->poll(AM_POLL_BUDGET) > 0 || n->ops->busy())
        n->every = 1;
    else if (n->every < max)
        n->every = n->every * 2 < max ? n->every * 2 : max;
    n->countdown = n->every;
}

void am_progress_net(void)
{
    if (wire_net_kick) {
        wire_net_kick = 0;
        /* Which wire sent is not known, and the answer may come on any. */
        for (int i = 0; i < am.nnet; i++) {
            am.net[i].every = 1;
            am.net[i].countdown = 0;
        }
    }
    for (int i = 0; i < am.nnet; i++)
        net_turn(&am.net[i]);
}

int am_progress(void)
{
    uint64_t before = am.stats.messages_handled;

    if (BASE_UNLIKELY(!base_list_empty(&am.pending_peers)))
        am_flush_deferred();
    wire_shm_ops.poll(AM_POLL_BUDGET);
    if (BASE_UNLIKELY(am.nnet > 0))
        am_progress_net();
    /* Under SHOAL_FT, after a death: tell the others from here, not only
     * from a wait's look, which MPI calls that complete at once never
     * reach (am_tell.c). */
    if (BASE_UNLIKELY(am.tell_due))
        am_tell_poll();
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
