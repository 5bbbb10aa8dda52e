/*
 * The multicast broadcast's protocol (mcast.h has the shape; docs/
 * DATAGRAM.md the rules a compatible peer follows).  One call is two poll
 * steps: begin (reset, post the first receives, send the receiver's first
 * report) and run, called by progress until the call is done.  Nothing
 * here blocks.
 *
 * The root: sends new fragments while they lie within the window beyond
 * the lowest count every receiver confirmed; sends again, by multicast,
 * the fragments a report says are missing (once per retransmission time);
 * after a retransmission time without progress at a receiver that is in
 * the call, sends its next fragments again and doubles the time; after
 * SHOAL_MCAST_FALLBACK of those, sends that receiver the message
 * point-to-point.  Each receiver gets exactly one end record; the root
 * waits for exactly one last report from each.
 *
 * The window starts at 512 fragments (730 KB: a LAN's bandwidth-delay
 * product is far smaller, and the sending socket's small buffer keeps the
 * interface's queue from overflowing), doubles per window confirmed until
 * the first loss, halves when a report shows a burst of holes (at most
 * once per window), doubles again back to where it was cut, and grows by
 * one fragment per window confirmed beyond.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/udp.h>

#include "am/am.h"
#include "base/base.h"
#include "coll/mcast/mcast.h"

#define WINDOW_START 512
#define WINDOW_FLOOR 16
#define REPORT_EVERY 64 /* fragments a receiver takes between reports */
#define ACK_SLOTS 4     /* reports a receiver has in flight */
#define RX_BATCH 16
#define RX_MAX 65536     /* a datagram, or several the kernel coalesced */
#define SEND_BUDGET 256  /* datagrams one run sends at most */
#define NAP_NS 100000ull /* longest sleep while a call waits for a socket
                            the network wire cannot watch */

enum { P_RUN = 0, P_P2P, P_DEAD };

typedef struct mc_peer {
    int rank; /* in the communicator */
    int state;
    int in_call; /* a report came: it is in this call */
    int final;   /* its last report came (or it died) */
    int end_sent;
    uint64_t cum, high, mc;
    uint64_t bits[MCAST_ACK_BITS / 64];
    uint64_t progress_at; /* when cum last grew */
    uint64_t wait_ns;     /* before the next timeout */
    int stalls;
    void *rreq, *sreq, *dreq;
    uint8_t in[MCAST_ACK_BYTES];
    uint8_t out[MCAST_END_BYTES];
} mc_peer_t;

typedef struct mc_call {
    coll_comm_t *c;
    int tag;
    int root; /* rank */
    int is_root;
    char *data;
    int64_t bytes;
    uint32_t fsize;
    uint32_t run; /* starts so far (persistent calls keep their tag) */
    uint64_t nfrags;
    int rc;
    int held;     /* am_nap_hold taken */
    int watching; /* one of the group socket's watchers (receivers) */
    int done;
    uint64_t rto;
    /* the root */
    int npeers;
    mc_peer_t *peers;
    uint64_t next; /* next fragment never sent */
    uint64_t window, credit, recover_until;
    uint64_t ssthresh; /* the window before the last halving */
    uint64_t *sent_at;   /* by fragment: ns of its last sending, 0 never */
    uint8_t *resent;     /* by fragment: sent more than once */
    uint64_t srtt;
    uint64_t t0, nsent, nresent, nreports, halvings; /* the debug log */
    int mcast_broken; /* sending fails: everyone point-to-point */
    int tx_full;      /* the socket took less than offered last time */
    int tx_waiting;   /* while full: 1 tx_fd rings the sleep, 2 naps */
    /* a receiver */
    uint64_t *have; /* bitmap by fragment */
    uint64_t cum, high, got, mc;
    uint64_t last_report, since_report;
    int gap; /* a new gap since the last report */
    int no_mcast;
    int active; /* in its communicator's list of receiving calls */
    int busy;   /* that list was full: this call comes point-to-point */
    int final_sent;
    int end_kind;
    void *ereq, *dreq;
    uint8_t ein[MCAST_END_BYTES];
    void *areq[ACK_SLOTS];
    uint8_t aout[ACK_SLOTS][MCAST_ACK_BYTES];
} mc_call_t;

/* Scratch of the one thread that runs collectives at a time. */
static uint8_t hdrs[SEND_BUDGET][MCAST_HDR];
static struct iovec iovs[2 * SEND_BUDGET];
static uint64_t frag_of[SEND_BUDGET];
static uint8_t rxbuf[RX_BATCH][RX_MAX];

/* ---- choosing ---------------------------------------------------------------------- */

int coll_mcast_wanted(const coll_comm_t *c, const coll_group_t *g,
                      int64_t bytes)
{
    enum { AUTO = 0, ON, OFF };
    int mode = (int)base_cfg.MCAST;

    if (mode == OFF || !g->per_host || g->size < 2 || c->is_inter ||
        bytes < (int64_t)base_cfg.MCAST_MIN || bytes <= 0)
        return 0;
    /* On one machine (SHOAL_COLL_FAKE_HOSTS) only when asked for. */
    if (c->host_of == NULL && mode != ON)
        return 0;
    return mode == ON || g->size >= (int)base_cfg.MCAST_HOSTS;
}

/* ---- both sides -------------------------------------------------------------------- */

static int bit(const uint64_t *b, uint64_t i)
{
    return (int)(b[i / 64] >> (i % 64) & 1);
}

/*
 * While a call is in flight its rank must wake for what it waits for.
 * Reports, end records and point-to-point data ring the network wire.  A
 * receiver's fragments ring through the group socket, which the wire's
 * sleep watches while a call of the communicator runs (am_net_watch); a
 * root whose socket buffer is full is rung by the socket when it has room
 * again (tx_wait).  Sleeps end for the protocol's timers too (resends,
 * reports: SHOAL_MCAST_RTO/4), and every NAP_NS while a socket the wire
 * cannot watch is waited for.
 */
static void hold(mc_call_t *k)
{
    mcast_comm_t *m = k->c->mcast;
    uint64_t nap = k->rto / 4 > NAP_NS ? k->rto / 4 : NAP_NS;

    if (k->held)
        return;
    if (!k->is_root && m->rx_fd >= 0) {
        if (m->watchers > 0 || am_net_watch(m->rx_fd, 0) == SHOAL_OK) {
            m->watchers++;
            k->watching = 1;
        } else {
            nap = NAP_NS;
        }
    }
    am_nap_hold(nap);
    k->held = 1;
}

/* The root's socket buffer is full (or no longer): wait for room with a
 * doorbell on the socket, shared by the process's root calls, or with
 * NAP_NS naps where the wire cannot watch it. */
static void tx_wait(mc_call_t *k, int full)
{
    mcast_proc_t *pr = mcast_proc();

    if (full && !k->tx_waiting && pr != NULL) {
        if (pr->out_watchers > 0 || am_net_watch(pr->tx_fd, 1) == SHOAL_OK) {
            pr->out_watchers++;
            k->tx_waiting = 1;
        } else {
            am_nap_hold(NAP_NS);
            k->tx_waiting = 2;
        }
    } else if (!full && k->tx_waiting) {
        if (k->tx_waiting == 2)
            am_nap_release();
        else if (--pr->out_watchers == 0)
            am_net_unwatch(pr->tx_fd);
        k->tx_waiting = 0;
    }
}

static void release(mc_call_t *k)
{
    mcast_comm_t *m = k->c->mcast;

    tx_wait(k, 0);
    if (k->watching) {
        if (--m->watchers == 0)
            am_net_unwatch(m->rx_fd);
        k->watching = 0;
    }
    if (k->held) {
        am_nap_release();
        k->held = 0;
    }
}

/* Test *req; 1 when it is gone (done; its error in *err, and kept in
 * k->rc when it is the first). */
static int req_test(mc_call_t *k, void **req, int *err)
{
    int done = 0, rc;

    *err = 0;
    if (*req == NULL)
        return 1;
    rc = k->c->ops->testall(k->c->ctx, 1, req, &done);
    if (!done)
        return 0;
    *req = NULL;
    *err = rc;
    if (rc != 0 && k->rc == 0)
        k->rc = rc;
    return 1;
}

static int req_done(mc_call_t *k, void **req)
{
    int err;
    return req_test(k, req, &err);
}

/* A request just posted (rc its status): a failure is the call's. */
static int posted(mc_call_t *k, int rc, void **req)
{
    if (rc != 0) {
        *req = NULL;
        if (k->rc == 0)
            k->rc = rc;
    }
    return rc;
}

static int post_send(mc_call_t *k, const void *buf, int64_t n, int peer,
                     void **req)
{
    return posted(k, k->c->ops->isend(k->c->ctx, buf, n, k->c->ops->byte_dt,
                                      peer, k->tag, req), req);
}

static int post_recv(mc_call_t *k, void *buf, int64_t n, int peer,
                     void **req)
{
    return posted(k, k->c->ops->irecv(k->c->ctx, buf, n, k->c->ops->byte_dt,
                                      peer, k->tag, req), req);
}

/* ---- the root ---------------------------------------------------------------------- */

static void warn_p2p(const mc_peer_t *p, const char *why)
{
    mcast_proc_t *pr = mcast_proc();

    if (pr != NULL && pr->warned)
        return;
    if (pr != NULL)
        pr->warned = 1;
    base_warn("coll", "multicast broadcast: rank %d of the communicator %s; "
              "it gets broadcasts from rank %d point-to-point from now on "
              "(logged once)", p->rank, why, am.job ? am.job->rank : -1);
}

/* Send the end record of kind to p (and the message, for P2P). */
static void send_end(mc_call_t *k, mc_peer_t *p, uint32_t kind)
{
    if (p->end_sent || p->state == P_DEAD)
        return;
    p->end_sent = 1;
    memset(p->out, 0, sizeof(p->out));
    p->out[0] = (uint8_t)kind;
    if (post_send(k, p->out, MCAST_END_BYTES, p->rank, &p->sreq) == 0 &&
        kind == MCAST_END_P2P)
        post_send(k, k->data, k->bytes, p->rank, &p->dreq);
}

static void to_p2p(mc_call_t *k, mc_peer_t *p, const char *why)
{
    mcast_comm_t *m = k->c->mcast;

    if (p->state != P_RUN)
        return;
    p->state = P_P2P;
    if (why != NULL) {
        m->p2p[p->rank] = 1;
        warn_p2p(p, why);
    }
    send_end(k, p, MCAST_END_P2P);
}

/* 1 when report a shows holes that look like an overflowing queue:
 * CONGESTION_RUN missing fragments in a row, or CONGESTION_HOLES in all. */
#define CONGESTION_RUN 4
#define CONGESTION_HOLES 8
static int congested(const mcast_ack_t *a)
{
    uint64_t end = a->high - a->cum < MCAST_ACK_BITS ? a->high - a->cum
                                                       : MCAST_ACK_BITS;
    int run = 0, holes = 0;

    for (uint64_t i = 0; i < end; i++) {
        if (a->bits[i / 64] >> (i % 64) & 1) {
            run = 0;
            continue;
        }
        holes++;
        if (++run >= CONGESTION_RUN || holes >= CONGESTION_HOLES)
            return 1;
    }
    return 0;
}

/* A report from p arrived: take it in. */
static void take_report(mc_call_t *k, mc_peer_t *p, uint64_t now)
{
    mcast_ack_t a;

    if (mcast_ack_get(p->in, &a) != 0 || a.high > k->nfrags) {
        if (k->rc == 0)
            k->rc = base_err(SHOAL_ERR_INTERNAL, "multicast broadcast: a "
                             "malformed report from rank %d", p->rank);
        p->final = 1;
        return;
    }
    p->in_call = 1;
    if (a.kind != MCAST_ACK_PROGRESS)
        p->final = 1;
    if (a.kind == MCAST_ACK_BYE)
        return;
    if (a.kind == MCAST_ACK_FINAL)
        a.cum = a.high = k->nfrags;
    if (a.cum > p->cum) {
        /* a round-trip sample from a fragment sent once (Karn) */
        uint64_t f = a.cum - 1;
        if (f < k->next && !k->resent[f] && k->sent_at[f] != 0 &&
            now > k->sent_at[f]) {
            uint64_t rtt = now - k->sent_at[f];
            k->srtt = k->srtt == 0 ? rtt : (7 * k->srtt + rtt) / 8;
        }
        p->cum = a.cum;
        p->progress_at = now;
        p->stalls = 0;
        p->wait_ns = 4 * k->rto + 2 * k->srtt;
    }
    /* Congestion: a queue that overflowed drops runs of datagrams, while
     * a lossy link drops them one here, one there.  The window halves on
     * a run (or many holes) the root had not heard of, once per window;
     * isolated holes are only repaired. */
    if (a.high > p->high && congested(&a) && p->cum >= k->recover_until) {
        k->ssthresh = k->window;
        k->window = k->window / 2 > WINDOW_FLOOR ? k->window / 2
                                                 : WINDOW_FLOOR;
        k->recover_until = k->next;
        k->halvings++;
    }
    if (a.high > p->high)
        p->high = a.high;
    memcpy(p->bits, a.bits, sizeof(p->bits));
    p->mc = a.mc;
    if (a.flags & MCAST_ACK_F_NO_MCAST)
        to_p2p(k, p, "cannot join the multicast group");
    else if (a.flags & MCAST_ACK_F_UNREACHED)
        to_p2p(k, p, "got no multicast datagrams from an earlier root");
    else if (a.flags & MCAST_ACK_F_BUSY)
        to_p2p(k, p, NULL); /* this call only */
}

static uint64_t lowest_cum(const mc_call_t *k, int *running)
{
    uint64_t low = UINT64_MAX;

    *running = 0;
    for (int i = 0; i < k->npeers; i++) {
        const mc_peer_t *p = &k->peers[i];
        if (p->state != P_RUN || p->final)
            continue;
        (*running)++;
        if (p->cum < low)
            low = p->cum;
    }
    return low;
}

/* Queue fragment f for sending now (n: how many are queued). */
static void queue(mc_call_t *k, uint64_t f, int *n, uint64_t now)
{
    const mcast_comm_t *m = k->c->mcast;
    mcast_hdr_t h = {(uint32_t)k->root, m->gid, (uint32_t)k->tag,
                     (uint32_t)f, (uint64_t)k->bytes, k->fsize, k->run};
    mcast_proc_t *pr = mcast_proc();

    mcast_hdr_put(hdrs[*n], &h, pr->key);
    iovs[2 * *n].iov_base = hdrs[*n];
    iovs[2 * *n].iov_len = MCAST_HDR;
    iovs[2 * *n + 1].iov_base = k->data + f * k->fsize;
    iovs[2 * *n + 1].iov_len = mcast_frag_len((uint64_t)k->bytes, k->fsize, f);
    frag_of[*n] = f;
    if (k->sent_at[f] != 0) {
        k->resent[f] = 1;
        k->nresent++;
    }
    k->nsent++;
    k->sent_at[f] = now;
    (*n)++;
}

/* Send the n queued datagrams; the first of them that were new (not
 * sent before) is at index fresh. */
static void flush(mc_call_t *k, int n, int fresh)
{
    int sent;

    if (n == 0)
        return;
    sent = mcast_send(mcast_proc(), k->c->mcast, iovs, n);
    if (sent < 0) {
        k->mcast_broken = 1;
        base_debug("coll", "multicast send: %s", strerror(-sent));
        return;
    }
    /* What the socket did not take goes again next time: repairs at
     * once (an old send time), new fragments from the first not sent. */
    k->tx_full = sent < n;
    tx_wait(k, k->tx_full);
    for (int i = sent; i < n; i++) {
        uint64_t f = frag_of[i];
        k->nsent--;
        if (i < fresh) {
            k->sent_at[f] = 1;
            continue;
        }
        k->sent_at[f] = 0;
        if (f < k->next)
            k->next = f;
    }
}

static void root_send(mc_call_t *k, uint64_t now)
{
    int running, n = 0, fresh;
    uint64_t low = lowest_cum(k, &running), limit, retry;

    if (running == 0)
        return;
    /* A full socket buffer (the interface's queue is long): wait until it
     * drains to half, rather than building datagrams it refuses. */
    if (k->tx_full) {
        struct pollfd pfd = {mcast_proc()->tx_fd, POLLOUT, 0};
        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLOUT))
            return;
        k->tx_full = 0;
        tx_wait(k, 0);
    }
    /* A hole a report names goes again once a round trip has passed since
     * it last went (a report sent before that could not know of it). */
    retry = k->srtt + k->srtt / 4;
    if (retry < k->rto / 4)
        retry = k->rto / 4;
    /* The holes reports name, oldest first. */
    for (int i = 0; i < k->npeers && n < SEND_BUDGET; i++) {
        mc_peer_t *p = &k->peers[i];
        uint64_t end = p->high < p->cum + MCAST_ACK_BITS
                           ? p->high
                           : p->cum + MCAST_ACK_BITS;
        if (p->state != P_RUN || p->final)
            continue;
        for (uint64_t f = p->cum; f < end && n < SEND_BUDGET; f++)
            if (!bit(p->bits, f - p->cum) && f < k->next &&
                k->sent_at[f] != 0 && now - k->sent_at[f] >= retry)
                queue(k, f, &n, now);
    }
    /* Timeouts: a receiver in the call that made no progress. */
    for (int i = 0; i < k->npeers && n < SEND_BUDGET; i++) {
        mc_peer_t *p = &k->peers[i];
        if (p->state != P_RUN || p->final || !p->in_call ||
            p->cum >= k->next || now - p->progress_at < p->wait_ns)
            continue;
        if (++p->stalls >= (int)base_cfg.MCAST_FALLBACK && p->mc == 0) {
            to_p2p(k, p, "receives no multicast datagrams");
            continue;
        }
        if (p->stalls >= 4 * (int)base_cfg.MCAST_FALLBACK) {
            to_p2p(k, p, "makes no progress over multicast");
            continue;
        }
        p->progress_at = now;
        p->wait_ns *= 2;
        for (uint64_t f = p->cum; f < k->next && f < p->cum + 32 &&
                                  n < SEND_BUDGET;
             f++)
            if (f - p->cum >= MCAST_ACK_BITS || !bit(p->bits, f - p->cum))
                queue(k, f, &n, now);
    }
    low = lowest_cum(k, &running);
    fresh = n;
    if (running > 0) {
        limit = low + k->window < k->nfrags ? low + k->window : k->nfrags;
        while (k->next < limit && n < SEND_BUDGET)
            queue(k, k->next++, &n, now);
    }
    flush(k, n, fresh);
}

/* Grow the window by what every receiver confirmed since last time. */
static void grow(mc_call_t *k, uint64_t before, uint64_t after)
{
    uint64_t more, cap = (uint64_t)base_cfg.MCAST_WINDOW;

    if (after == UINT64_MAX || after <= before)
        return;
    more = after - before;
    /* Below the window the last loss cut (all of it before the first
     * loss), double per window confirmed: a loss that was not congestion
     * costs a round trip or two, not a long climb.  Above, one fragment
     * per window. */
    if (k->window < k->ssthresh) {
        k->window += more < k->window ? more : k->window;
    } else {
        k->credit += more;
        while (k->credit >= k->window) {
            k->credit -= k->window;
            k->window++;
        }
    }
    if (k->window > cap)
        k->window = cap;
}

static int root_run(mc_call_t *k)
{
    uint64_t now = base_time_ns(), before, after;
    int running, all_done = 1;

    before = lowest_cum(k, &running);
    for (int i = 0; i < k->npeers; i++) {
        mc_peer_t *p = &k->peers[i];
        int err;
        while (!p->final && p->rreq != NULL && req_test(k, &p->rreq, &err)) {
            if (err != 0) {
                /* its receive failed: p is dead (or the transport is) */
                p->state = P_DEAD;
                p->final = 1;
                break;
            }
            take_report(k, p, now);
            k->nreports++;
            if (!p->final)
                post_recv(k, p->in, MCAST_ACK_BYTES, p->rank, &p->rreq);
        }
    }
    after = lowest_cum(k, &running);
    grow(k, before, after);
    if (k->rc == 0 && k->mcast_broken)
        for (int i = 0; i < k->npeers; i++)
            to_p2p(k, &k->peers[i], "is out of the multicast route (sending "
                                    "to the group fails)");
    if (k->rc == 0)
        root_send(k, now);
    for (int i = 0; i < k->npeers; i++) {
        mc_peer_t *p = &k->peers[i];
        if (k->rc != 0)
            send_end(k, p, MCAST_END_ERROR);
        else if (p->final && p->state == P_RUN)
            send_end(k, p, MCAST_END_DONE);
        req_done(k, &p->sreq);
        req_done(k, &p->dreq);
        if (!p->final || (!p->end_sent && p->state != P_DEAD) ||
            p->sreq != NULL || p->dreq != NULL || p->rreq != NULL)
            all_done = 0;
    }
    return all_done;
}

static void root_begin(mc_call_t *k, uint64_t now)
{
    mcast_comm_t *m = k->c->mcast;

    k->next = 0;
    k->t0 = now;
    k->nsent = k->nresent = k->nreports = k->halvings = 0;
    k->window = WINDOW_START;
    k->credit = 0;
    k->ssthresh = UINT64_MAX;
    k->recover_until = 0;
    k->mcast_broken = mcast_proc() == NULL;
    k->tx_full = 0;
    memset(k->sent_at, 0, k->nfrags * sizeof(*k->sent_at));
    memset(k->resent, 0, k->nfrags);
    for (int i = 0; i < k->npeers; i++) {
        mc_peer_t *p = &k->peers[i];
        int rank = p->rank;
        memset(p, 0, sizeof(*p));
        p->rank = rank;
        p->progress_at = now;
        p->wait_ns = 4 * k->rto;
        post_recv(k, p->in, MCAST_ACK_BYTES, rank, &p->rreq);
        if (m->p2p[rank])
            to_p2p(k, p, NULL);
    }
}

/* ---- a receiver -------------------------------------------------------------------- */

static void report(mc_call_t *k, uint32_t kind, uint64_t now)
{
    const mcast_comm_t *m = k->c->mcast;
    mcast_ack_t a;
    int slot = -1;

    for (int i = 0; i < ACK_SLOTS; i++)
        if (req_done(k, &k->areq[i]) && slot < 0)
            slot = i;
    if (slot < 0)
        return; /* reports in flight say nearly as much */
    memset(&a, 0, sizeof(a));
    a.kind = kind;
    a.flags = (k->no_mcast ? MCAST_ACK_F_NO_MCAST : 0) |
              (k->busy ? MCAST_ACK_F_BUSY : 0) |
              (m->unreached ? MCAST_ACK_F_UNREACHED : 0);
    a.cum = kind == MCAST_ACK_FINAL ? k->nfrags : k->cum;
    a.high = kind == MCAST_ACK_FINAL ? k->nfrags : k->high;
    a.mc = k->mc;
    for (uint64_t i = 0; i < MCAST_ACK_BITS && a.cum + i < a.high; i++)
        if (bit(k->have, a.cum + i))
            a.bits[i / 64] |= 1ull << (i % 64);
    mcast_ack_put(k->aout[slot], &a);
    /* A last report is sent once, even when sending it failed (the root
     * is dead then, and waits for nothing). */
    post_send(k, k->aout[slot], MCAST_ACK_BYTES, k->root, &k->areq[slot]);
    if (kind != MCAST_ACK_PROGRESS)
        k->final_sent = 1;
    k->last_report = now;
    k->since_report = 0;
    k->gap = 0;
}

static void take_frag(mc_call_t *k, const mcast_hdr_t *h, const uint8_t *pl)
{
    uint64_t f = h->frag;

    if (bit(k->have, f))
        return;
    memcpy(k->data + f * (uint64_t)k->fsize, pl,
           mcast_frag_len(h->total, h->fsize, f));
    k->have[f / 64] |= 1ull << (f % 64);
    k->got++;
    k->mc++;
    k->since_report++;
    if (f > k->high)
        k->gap = 1;
    if (f + 1 > k->high)
        k->high = f + 1;
    while (k->cum < k->nfrags && bit(k->have, k->cum))
        k->cum++;
}

/* Bytes of each datagram in a buffer the kernel may have coalesced
 * (UDP_GRO; the last may be shorter). */
static size_t gro_size(struct msghdr *mh, size_t n)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
         c = CMSG_NXTHDR(mh, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int g;
            memcpy(&g, CMSG_DATA(c), sizeof(g));
            if (g > 0 && (size_t)g < n)
                return (size_t)g;
        }
    return n;
}

/* Does the datagram h belong to call k? */
static int ours(const mc_call_t *k, const mcast_hdr_t *h)
{
    return h->seq == (uint32_t)k->tag && h->root == (uint32_t)k->root &&
           h->total == (uint64_t)k->bytes && h->fsize == k->fsize &&
           h->run == k->run && k->end_kind != MCAST_END_P2P;
}

/* Hand a datagram to the call of this communicator it belongs to (calls
 * may overlap: nonblocking broadcasts), or drop it: another call's (an
 * earlier one repaired late, a later one sent early: the root sends those
 * again when asked). */
static void take_datagram(mcast_comm_t *m, const mcast_proc_t *pr,
                          const uint8_t *d, size_t n)
{
    mcast_hdr_t h;

    if (mcast_hdr_get(d, n, pr->key, &h) != 0) {
        wire_stats.rejected++;
        return;
    }
    if (h.gid != m->gid)
        return;
    for (int i = 0; i < m->nactive; i++)
        if (ours(m->active[i], &h)) {
            take_frag(m->active[i], &h, d + MCAST_HDR);
            return;
        }
}

/* Calls of m receiving now, for take_datagram. */
static void activate(mc_call_t *k)
{
    mcast_comm_t *m = k->c->mcast;

    if (k->active)
        return;
    if (m->nactive < MCAST_ACTIVE_MAX) {
        m->active[m->nactive++] = k;
        k->active = 1;
    }
}

static void deactivate(mc_call_t *k)
{
    mcast_comm_t *m = k->c->mcast;

    if (!k->active)
        return;
    for (int i = 0; i < m->nactive; i++)
        if (m->active[i] == k) {
            m->active[i] = m->active[--m->nactive];
            break;
        }
    k->active = 0;
}

/* Read what the group socket holds (a bounded amount per run). */
static void drain(mcast_comm_t *m, int fd)
{
    mcast_proc_t *pr = mcast_proc();
    struct mmsghdr msgs[RX_BATCH];
    struct iovec iov[RX_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl[RX_BATCH];

    for (int round = 0; round < 16; round++) {
        int r;
        memset(msgs, 0, sizeof(msgs));
        for (int i = 0; i < RX_BATCH; i++) {
            iov[i].iov_base = rxbuf[i];
            iov[i].iov_len = RX_MAX;
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = ctl[i].buf;
            msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
        }
        r = recvmmsg(fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
        if (r <= 0)
            return;
        for (int i = 0; i < r; i++) {
            size_t n = msgs[i].msg_len, seg = gro_size(&msgs[i].msg_hdr, n);
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                wire_stats.rejected++;
                continue;
            }
            for (size_t off = 0; off < n; off += seg)
                take_datagram(m, pr, rxbuf[i] + off,
                              n - off < seg ? n - off : seg);
        }
        if (r < RX_BATCH)
            return;
    }
}

static int recv_run(mc_call_t *k)
{
    mcast_comm_t *m = k->c->mcast;
    uint64_t now = base_time_ns();

    if (m->rx_fd >= 0)
        drain(m, m->rx_fd); /* also when complete: keep the socket empty */
    if (k->got == k->nfrags || k->end_kind != 0)
        deactivate(k);
    if (k->end_kind == 0 && req_done(k, &k->ereq)) {
        k->end_kind = k->rc != 0 ? MCAST_END_ERROR : k->ein[0];
        if (k->end_kind == MCAST_END_P2P) {
            /* Not because we were busy, and not one fragment came by
             * multicast: the group does not reach us.  Every later root
             * hears it in our first report. */
            if (!k->busy && k->mc == 0)
                m->unreached = 1;
            post_recv(k, k->data, k->bytes, k->root, &k->dreq);
        } else if (k->end_kind == MCAST_END_DONE && k->got < k->nfrags &&
                 k->rc == 0)
            k->rc = base_err(SHOAL_ERR_INTERNAL, "multicast broadcast: the "
                             "root ended the call before this rank had it");
        else if (k->end_kind != MCAST_END_DONE && k->rc == 0)
            k->rc = base_err(SHOAL_ERR_PEER_DEAD, "multicast broadcast: the "
                             "root (rank %d) reports that a receiver failed",
                             k->root);
    }
    if (k->end_kind == MCAST_END_P2P && k->dreq != NULL &&
        req_done(k, &k->dreq) && k->rc == 0) {
        k->got = k->cum = k->high = k->nfrags;
    }
    if (!k->final_sent) {
        if (k->rc != 0 && k->end_kind != 0)
            report(k, MCAST_ACK_BYE, now);
        else if (k->got == k->nfrags && k->dreq == NULL)
            report(k, MCAST_ACK_FINAL, now);
        else if (k->rc == 0 && (k->gap || k->since_report >= REPORT_EVERY ||
                                now - k->last_report >= k->rto))
            report(k, MCAST_ACK_PROGRESS, now);
    }
    for (int i = 0; i < ACK_SLOTS; i++)
        if (!req_done(k, &k->areq[i]))
            return 0;
    return k->end_kind != 0 && k->dreq == NULL && k->final_sent;
}

static void recv_begin(mc_call_t *k, uint64_t now)
{
    mcast_proc_t *pr = mcast_proc();
    mcast_comm_t *m = k->c->mcast;

    memset(k->have, 0, (k->nfrags + 63) / 64 * sizeof(*k->have));
    k->cum = k->high = k->got = k->mc = 0;
    k->since_report = 0;
    k->gap = 0;
    k->final_sent = 0;
    k->end_kind = 0;
    k->no_mcast = pr == NULL || mcast_rx(pr, m) < 0;
    post_recv(k, k->ein, MCAST_END_BYTES, k->root, &k->ereq);
    activate(k);
    k->busy = !k->active;
    report(k, MCAST_ACK_PROGRESS, now); /* "I am in the call" */
}

/* ---- the steps --------------------------------------------------------------------- */

static int step_begin(void *arg)
{
    mc_call_t *k = arg;
    uint64_t now = base_time_ns();

    k->rc = 0;
    k->done = 0;
    k->run++;
    k->srtt = 0;
    k->rto = (uint64_t)base_cfg.MCAST_RTO;
    for (int i = 0; i < ACK_SLOTS; i++)
        k->areq[i] = NULL;
    k->ereq = k->dreq = NULL;
    if (k->is_root)
        root_begin(k, now);
    else
        recv_begin(k, now); /* joins the group on first use */
    hold(k);
    return 1;
}

static int step_run(void *arg)
{
    mc_call_t *k = arg;
    int done = k->is_root ? root_run(k) : recv_run(k);

    if (!done)
        return 0;
    release(k);
    if (!k->is_root)
        deactivate(k);
    if (k->is_root)
        base_debug("coll", "multicast broadcast of %lld bytes: %llu us, "
                   "%llu datagrams (%llu again), %llu reports, window %llu "
                   "(halved %llu times), srtt %llu us", (long long)k->bytes,
                   (unsigned long long)(base_time_ns() - k->t0) / 1000,
                   (unsigned long long)k->nsent,
                   (unsigned long long)k->nresent,
                   (unsigned long long)k->nreports,
                   (unsigned long long)k->window,
                   (unsigned long long)k->halvings,
                   (unsigned long long)k->srtt / 1000);
    if (k->rc != 0)
        return k->rc;
    return 1;
}

/* Given up after a failed wait: withdraw what is in flight. */
static void step_abort(void *arg)
{
    mc_call_t *k = arg;
    const coll_ops_t *ops = k->c->ops;
    void **reqs[3 + ACK_SLOTS];
    int n = 0;

    for (int i = 0; k->is_root && i < k->npeers; i++) {
        mc_peer_t *p = &k->peers[i];
        void **mine[3] = {&p->rreq, &p->sreq, &p->dreq};
        for (int j = 0; j < 3; j++)
            if (*mine[j] != NULL && ops->cancel != NULL) {
                ops->cancel(k->c->ctx, *mine[j]);
                *mine[j] = NULL;
            }
    }
    if (!k->is_root) {
        reqs[n++] = &k->ereq;
        reqs[n++] = &k->dreq;
        for (int i = 0; i < ACK_SLOTS; i++)
            reqs[n++] = &k->areq[i];
        deactivate(k);
    }
    for (int i = 0; i < n; i++)
        if (*reqs[i] != NULL && ops->cancel != NULL) {
            ops->cancel(k->c->ctx, *reqs[i]);
            *reqs[i] = NULL;
        }
    release(k);
}

void coll_bcast_mcast(coll_sched_t *s, const coll_group_t *g, void *buf,
                      int64_t count, void *dt, int64_t bytes, int root)
{
    coll_comm_t *c = s->comm;
    void *byte = c->ops->byte_dt;
    int contig = c->ops->contig(dt), at_root = g->me == root;
    mc_call_t *k;
    char *data;

    if (g->me < 0)
        return;
    if (mcast_comm(c) == NULL) {
        s->err = s->err ? s->err : base_err(SHOAL_ERR_NOMEM, "multicast "
                                            "broadcast state");
        return;
    }
    if (contig) {
        int64_t ext = 0, tlb = 0, text;
        c->ops->extent(dt, &ext, &tlb, &text);
        data = (char *)buf + tlb;
    } else {
        data = coll_sched_tmp(s, bytes, byte);
        if (data == NULL)
            return;
        if (at_root)
            coll_sched_copy(s, buf, count, dt, data, bytes, byte);
    }
    k = coll_sched_alloc(s, (int64_t)sizeof(*k));
    if (k == NULL)
        return;
    memset(k, 0, sizeof(*k));
    k->c = c;
    k->tag = s->tag;
    k->root = coll_member(g, root);
    k->is_root = at_root;
    k->data = data;
    k->bytes = bytes;
    /* Every rank must cut alike: the root's fragment size travels in each
     * datagram, but the receivers' bitmaps are sized from their own. */
    k->fsize = mcast_fsize();
    k->nfrags = mcast_nfrags((uint64_t)bytes, k->fsize);
    if (at_root) {
        k->npeers = g->size - 1;
        k->peers = coll_sched_alloc(s, (int64_t)sizeof(mc_peer_t) * k->npeers);
        k->sent_at = coll_sched_alloc(s, (int64_t)(k->nfrags * 8));
        k->resent = coll_sched_alloc(s, (int64_t)k->nfrags);
        if (k->peers == NULL || k->sent_at == NULL || k->resent == NULL)
            return;
        for (int i = 0, j = 0; i < g->size; i++)
            if (i != root)
                k->peers[j++].rank = coll_member(g, i);
    } else {
        k->have = coll_sched_alloc(s, (int64_t)((k->nfrags + 63) / 64 * 8));
        if (k->have == NULL)
            return;
    }
    coll_sched_poll(s, step_begin, k);
    coll_sched_poll_abort(s, step_run, step_abort, k);
    coll_sched_fence(s);
    if (!contig && !at_root)
        coll_sched_copy(s, data, bytes, byte, buf, count, dt);
}
