/*
 * The TCP wire's data path: sending through the per-peer queue, receiving
 * and delivering frames, credits, and sleeping in epoll.
 *
 * A frame goes out with one sendmsg of header and payload straight from
 * the caller's buffer when nothing waits before it; only what the kernel
 * does not take is copied into the peer's queue (a bounded ring), so send
 * returns with the caller's buffer free, as the layer above expects.  A
 * frame that does not fit the queue's free space is refused with
 * SHOAL_ERR_AGAIN before a byte is written.  Long payloads are read from
 * the socket straight into the destination segment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tcp.h"
#include "wire/wire_sys.h"

#define POLL_EVENTS 64
/* While a peer is hot, polls between two looks at every socket. */
#define HOT_EPOLL_EVERY 8
/* Longest sleep while a handshake may time out. */
#define HS_NAP_NS 100000000ull

static uint64_t q_used(const tcp_peer_t *p)
{
    return p->q_tail - p->q_head;
}

static void q_put(tcp_peer_t *p, const uint8_t *data, size_t len)
{
    wire_ring_put(p->q, tcp_state.q_cap, &p->q_tail, data, len);
}

/* Socket errors on a connection that was open: the peer is gone. */
static int send_failed(tcp_peer_t *p, int err)
{
    char why[160];
    int unread = 0;

    /* The peer closed its end, but what it sent before (its last
     * messages, its goodbye) may still wait in our socket, unread: this
     * process was stopped or busy while the peer left.  Whatever goes to
     * it now is lost anyway; the receive side reads the rest and decides
     * at its end whether the peer left in order or died (rx_closed).  A
     * worker of the task runtime stopped across the end of its run would
     * otherwise never read the coordinator's last word. */
    if (!p->bye && (err == EPIPE || err == ECONNRESET) && p->sock != NULL &&
        ioctl(p->sock->fd, FIONREAD, &unread) == 0 && unread > 0) {
        p->q_head = p->q_tail;
        tcp_update_pollout(p);
        return SHOAL_OK;
    }
    if (p->bye) {
        tcp_sock_close(p->sock);
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d has finalized",
                        p->base.rank);
    }
    tcp_lost_why(err, "send", why, sizeof(why));
    tcp_peer_broken(p, err, why);
    return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died (%s)", p->base.rank,
                    why);
}

void tcp_update_pollout(tcp_peer_t *p)
{
    int want = q_used(p) > 0;
    struct epoll_event ev;

    if (p->sock == NULL || want == p->pollout)
        return;
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
    ev.data.ptr = p->sock;
    epoll_ctl(tcp_state.epfd, EPOLL_CTL_MOD, p->sock->fd, &ev);
    p->pollout = want;
    tcp_state.npollout += want ? 1 : -1;
}

int tcp_flush(tcp_peer_t *p)
{
    uint32_t mask = tcp_state.q_cap - 1;

    while (p->sock != NULL && q_used(p) > 0) {
        uint32_t at = (uint32_t)(p->q_head & mask);
        uint64_t used = q_used(p);
        struct iovec iov[2] = {{p->q + at, tcp_state.q_cap - at}, {p->q, 0}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 1};
        ssize_t n;

        if (iov[0].iov_len >= used) {
            iov[0].iov_len = used;
        } else {
            iov[1].iov_len = used - iov[0].iov_len;
            mh.msg_iovlen = 2;
        }
        n = wire_sendmsg(p->sock->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0)
            return send_failed(p, errno);
        p->q_head += (uint64_t)n;
    }
    tcp_update_pollout(p);
    return SHOAL_OK;
}

/*
 * Put iov (total bytes) on the way to p: written now as far as the kernel
 * takes it when nothing is queued, the rest queued.
 */
static int put_frame(tcp_peer_t *p, struct iovec *iov, int niov, size_t total)
{
    size_t done = 0;

    if (BASE_UNLIKELY(total > tcp_state.q_cap - q_used(p))) {
        p->q_need = (uint32_t)total;
        return SHOAL_ERR_AGAIN;
    }
    if (BASE_LIKELY(p->sock != NULL && q_used(p) == 0)) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
        ssize_t n;
        do
            n = wire_sendmsg(p->sock->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno != EAGAIN)
            return send_failed(p, errno);
        done = n > 0 ? (size_t)n : 0;
    }
    p->q_need = 0;
    /* Bytes outstanding now: tcp_live_check watches the connection. */
    p->live_watch = 1;
    tcp_state.live_any = tcp_state.live_ns > 0;
    if (done == total)
        return SHOAL_OK;
    for (int i = 0; i < niov; i++) {
        size_t len = iov[i].iov_len;
        if (done >= len) {
            done -= len;
            continue;
        }
        q_put(p, (const uint8_t *)iov[i].iov_base + done, len - done);
        done = 0;
    }
    tcp_update_pollout(p);
    return SHOAL_OK;
}

int tcp_send(wire_conn_t *conn, const wire_msg_t *m)
{
    tcp_peer_t *p = (tcp_peer_t *)conn;
    wire_frame_t f;
    uint8_t hdr[WIRE_FRAME_HDR_MAX];
    struct iovec iov[2];
    size_t hlen;
    int status;

    if (BASE_UNLIKELY(p->dead || p->bye))
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", p->base.rank);
    wire_frame_of_msg(m, p->noreply, &f);
    hlen = wire_frame_encode(&f, hdr);
    iov[0].iov_base = hdr;
    iov[0].iov_len = hlen;
    iov[1].iov_base = (void *)(uintptr_t)m->payload;
    iov[1].iov_len = wire_frame_data_len(&f);
    status = put_frame(p, iov, iov[1].iov_len > 0 ? 2 : 1,
                       hlen + iov[1].iov_len);
    if (BASE_LIKELY(status == SHOAL_OK)) {
        p->noreply_sent = f.credits;
        wire_net_kick = 1; /* an answer may come soon: poll often */
        tcp_state.hot = p;
    }
    return status;
}

int tcp_send_ctl(tcp_peer_t *p, const wire_frame_t *f)
{
    uint8_t hdr[WIRE_FRAME_HDR_MAX];
    wire_frame_t c = *f;
    struct iovec iov;

    c.credits = p->noreply;
    iov.iov_base = hdr;
    iov.iov_len = wire_frame_encode(&c, hdr);
    int status = put_frame(p, &iov, 1, iov.iov_len);
    if (status == SHOAL_OK)
        p->noreply_sent = c.credits;
    return status;
}

size_t tcp_max_payload(wire_conn_t *conn, unsigned cat)
{
    (void)conn;
    return cat == WIRE_CAT_SHORT ? 0 : tcp_state.q_cap / 2 - WIRE_FRAME_HDR_MAX;
}

uint64_t tcp_credits(wire_conn_t *conn)
{
    tcp_peer_t *p = (tcp_peer_t *)conn;

    p->credits_cache = p->credits;
    return p->credits;
}

/* ---- receiving ------------------------------------------------------------- */

static void credit_due(tcp_peer_t *p)
{
    if (!p->credit_due) {
        p->credit_due = 1;
        tcp_state.due[tcp_state.ndue++] = p->base.rank;
    }
}

/* Run the frame's handler (or account for a frame that was dropped). */
static void deliver(tcp_peer_t *p, const wire_frame_t *f, const void *payload,
                    int ok)
{
    if (wire_frame_deliver(&tcp_state.up, p->base.rank, f, payload, ok) ==
        WIRE_DELIVERED_NOREPLY) {
        p->noreply++;
        credit_due(p);
    }
}
static void protocol_error(tcp_peer_t *p, const char *why)
{
    wire_stats.dropped++;
    base_error("tcp", "malformed frame from rank %d: %s; closing the "
               "connection", p->base.rank, why);
    tcp_peer_lost(p, SHOAL_ERR_PEER_UNREACHABLE, why);
}

/* Where a long frame lands, or NULL (reported) when it does not fit. */
static char *long_dest(tcp_peer_t *p, const wire_frame_t *f)
{
    return wire_frame_long_dest(&tcp_state.up, p->base.rank, f, "tcp");
}
/*
 * Deliver the complete frames in p's receive buffer, at most budget.
 * Returns how many ran; stops early when the connection went away.
 */
static int rx_process(tcp_peer_t *p, int budget)
{
    tcp_sock_t *s = p->sock;
    uint32_t max_inline = (uint32_t)(tcp_state.q_cap / 2);
    size_t off = 0;
    int n = 0;

    while (n < budget && p->cur_left == 0) {
        wire_frame_t f;
        const char *why = NULL;
        int r = wire_frame_decode(p->rx + off, p->rx_len - off, max_inline, &f,
                                 &why);
        size_t avail;

        if (r == 0)
            break;
        if (r < 0) {
            protocol_error(p, why);
            return n;
        }
        if (f.credits > p->credits)
            p->credits = f.credits;
        avail = p->rx_len - off - (size_t)r;
        if (f.type != WIRE_FRAME_AM) {
            wire_frame_control(&f, p->segs, p->seg_known, &p->bye);
            off += (size_t)r;
            continue;
        }
        uint32_t data = wire_frame_data_len(&f);
        if ((f.kind & WIRE_CAT_MASK) != WIRE_CAT_LONG) {
            if (avail < data)
                break; /* the payload is still on its way */
            off += (size_t)r + data;
            deliver(p, &f, p->rx + off - data, 1);
        } else {
            char *dst = long_dest(p, &f);
            size_t take = avail < data ? avail : data;
            if (dst != NULL && take > 0)
                memcpy(dst, p->rx + off + r, take);
            off += (size_t)r + take;
            if (take < data) {
                /* The rest is read straight into the segment. */
                p->cur = f;
                p->cur_dst = dst != NULL ? dst + take : NULL;
                p->cur_left = data - take;
                p->cur_ok = dst != NULL;
                break;
            }
            deliver(p, &f, dst, dst != NULL);
        }
        n++;
        if (p->sock != s)
            return n; /* a handler's send found the connection dead */
    }
    memmove(p->rx, p->rx + off, p->rx_len - off);
    p->rx_len -= off;
    int more = n == budget && p->rx_len >= WIRE_FRAME_HDR;
    if (more != p->backlog) {
        p->backlog = more;
        tcp_state.nbacklog += more ? 1 : -1;
    }
    return n;
}

static void rx_closed(tcp_peer_t *p, ssize_t n, int err)
{
    char why[160];

    if (p->bye) {
        tcp_sock_close(p->sock); /* an orderly goodbye */
        return;
    }
    tcp_lost_why(n == 0 ? 0 : err, "", why, sizeof(why));
    tcp_peer_broken(p, n == 0 ? 0 : err, why);
}

/* Read what the socket has; deliver at most budget frames. */
static int rx_peer(tcp_peer_t *p, int budget)
{
    tcp_sock_t *s = p->sock;
    int n = 0;

    while (p->sock == s && n < budget) {
        ssize_t got;

        if (p->cur_left > 0) {
            char *dst = p->cur_dst != NULL ? p->cur_dst : (char *)p->rx;
            size_t want = p->cur_dst != NULL || p->cur_left < p->rx_cap
                              ? (size_t)p->cur_left
                              : p->rx_cap;
            got = wire_recv(s->fd, dst, want, MSG_DONTWAIT);
            if (got > 0) {
                p->cur_left -= (uint64_t)got;
                if (p->cur_dst != NULL)
                    p->cur_dst += got;
                if (p->cur_left == 0) {
                    char *start = p->cur_ok ? p->cur_dst - p->cur.len : NULL;
                    deliver(p, &p->cur, start, p->cur_ok);
                    n++;
                }
                if ((size_t)got < want)
                    break; /* drained: save the recv that says EAGAIN */
                continue;
            }
        } else {
            if (p->rx_len == p->rx_cap)
                break; /* only complete frames: the budget stopped us */
            size_t room = p->rx_cap - p->rx_len;
            got = wire_recv(s->fd, p->rx + p->rx_len, room, MSG_DONTWAIT);
            if (got > 0) {
                p->rx_len += (size_t)got;
                n += rx_process(p, budget - n);
                /* A short read drained the socket (level-triggered epoll
                 * reports what comes later): skip the recv that would
                 * only say EAGAIN, a system call per message. */
                if ((size_t)got < room && p->cur_left == 0)
                    break;
                continue;
            }
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            break;
        rx_closed(p, got, errno);
        break;
    }
    return n;
}

/*
 * A credit frame of its own costs a system call, and every frame's header
 * carries the credits anyway: in a ping-pong the answer takes them back.
 * So while fewer than a batch are owed, they wait for a frame to that peer,
 * or for this rank to go to sleep (tcp_arm sends them all).  The batch is
 * at most half the AM window, so a sender never runs dry on credits that
 * a busy receiver holds back.
 */
static void send_credits(int all)
{
    tcp_state_t *t = &tcp_state;
    uint64_t batch = (uint64_t)base_cfg.AM_WINDOW / 2;
    int kept = 0;

    batch = batch > 8 ? 8 : batch < 1 ? 1 : batch;
    for (int i = 0; i < t->ndue; i++) {
        tcp_peer_t *p = &t->peers[t->due[i]];
        wire_frame_t f = {.type = WIRE_FRAME_CREDIT};
        uint64_t owed = p->noreply - p->noreply_sent;
        if (owed != 0 && p->sock != NULL &&
            ((!all && owed < batch) ||
             tcp_send_ctl(p, &f) == SHOAL_ERR_AGAIN)) {
            t->due[kept++] = t->due[i];
            continue;
        }
        p->credit_due = 0;
    }
    t->ndue = kept;
}

/* A doorbell socket rang: read its bytes away, or it stays readable and
 * every later sleep would end at once. */
static void drain_fd(int fd)
{
    char sink[64];

    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
}

/*
 * The peer we sent to last usually answers next: while it is known, most
 * polls read its socket directly, one system call where epoll_wait and
 * recv take two; every HOT_EPOLL_EVERY-th poll, and any poll with other
 * work in hand, asks epoll about every socket.
 */
static int poll_hot(tcp_state_t *t, int budget)
{
    tcp_peer_t *p = t->hot;

    if (p == NULL || p->sock == NULL || ++t->hot_polls % HOT_EPOLL_EVERY == 0 ||
        t->nhs > 0 || t->nbacklog > 0 || t->ndue > 0 || p->pollout)
        return -1;
    return rx_peer(p, budget);
}

int tcp_poll(int budget)
{
    tcp_state_t *t = &tcp_state;
    struct epoll_event ev[POLL_EVENTS];
    int n, nev;

    /* Connections with data outstanding: their liveness now and then. */
    if (BASE_UNLIKELY(t->live_any) &&
        ++t->live_polls % TCP_LIVE_POLL_EVERY == 0)
        tcp_live_check(base_time_ns());
    n = poll_hot(t, budget);
    if (n >= 0) {
        if (t->ndue > 0)
            send_credits(0);
        tcp_reap();
        return n;
    }
    n = 0;
    nev = epoll_wait(t->epfd, ev, POLL_EVENTS, 0);

    for (int i = 0; i < nev; i++) {
        void *tag = ev[i].data.ptr;
        tcp_sock_t *s = tag;
        const tcp_watch_t *w;

        if (tcp_is_listen_tag(tag)) {
            tcp_accept_all();
        } else if ((w = tcp_watch_of(tag)) != NULL) {
            /* Another wire's epoll set stays readable until that wire
             * polls, which the layer above does next. */
            if (w->drain)
                drain_fd(w->fd);
        } else if (s->state == TCP_S_CLOSED) {
            continue;
        } else if (s->state != TCP_S_OPEN) {
            tcp_hs_event(s, ev[i].events);
        } else {
            tcp_peer_t *p = &t->peers[s->peer];
            if (ev[i].events & EPOLLOUT)
                tcp_flush(p);
            if (p->sock == s && (ev[i].events & ~(uint32_t)EPOLLOUT))
                n += rx_peer(p, budget);
        }
    }
    if (BASE_UNLIKELY(t->nbacklog > 0))
        for (int r = 0; r < t->job->size; r++)
            if (t->peers[r].backlog && t->peers[r].sock != NULL)
                n += rx_process(&t->peers[r], budget);
    if (t->nhs > 0)
        tcp_hs_expire(base_time_ns());
    if (t->ndue > 0)
        send_credits(0);
    tcp_reap();
    return n;
}

int tcp_busy(void)
{
    tcp_state_t *t = &tcp_state;

    return t->nhs > 0 || t->nbacklog > 0 || t->npollout > 0 || t->ndue > 0;
}

/* ---- sleeping ------------------------------------------------------------------ */

int tcp_arm(void)
{
    /* Credits held back for a batch go now: the peer may wait for them. */
    if (tcp_state.ndue > 0)
        send_credits(1);
    /* Decided here, under the caller's lock: sleep may run outside it. */
    tcp_state.nap_max = tcp_state.nhs > 0 ? HS_NAP_NS : UINT64_MAX;
    return tcp_state.nbacklog > 0;
}

int tcp_want_space(wire_conn_t *conn)
{
    tcp_peer_t *p = (tcp_peer_t *)conn;

    if (p->dead || p->credits != p->credits_cache)
        return 1;
    return p->q_need > 0 && tcp_state.q_cap - q_used(p) >= p->q_need;
}

int tcp_sleep(uint64_t timeout_ns)
{
    struct epoll_event ev;
    int ms;

    if (timeout_ns > tcp_state.nap_max)
        timeout_ns = tcp_state.nap_max; /* a handshake may time out */
    ms = (int)((timeout_ns + 999999) / 1000000);
    wire_stats.sleeps++;
    if (epoll_wait(tcp_state.epfd, &ev, 1, ms) < 0 && errno != EINTR)
        return base_err(SHOAL_ERR_SYSTEM, "epoll_wait: %s", strerror(errno));
    for (int i = 0; i < tcp_state.nwatch; i++)
        if (tcp_state.watch[i].drain)
            drain_fd(tcp_state.watch[i].fd);
    return SHOAL_OK;
}

void tcp_disarm(void)
{
}

uint64_t tcp_timer_ns(void)
{
    return tcp_state.nap_max; /* a handshake may time out: see tcp_arm */
}
