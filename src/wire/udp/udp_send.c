/*
 * The datagram wire's sending side: frames into the peer's ring, the ring
 * into datagrams within the window, acknowledgements coming back, and
 * resending (selective repeat: a datagram three later ones overtook, or
 * the oldest one when its timer runs out).
 *
 * A frame is copied into the ring (the bytes must stay until the peer
 * acknowledges them) and, when the window allows, goes out at once in a
 * datagram of its own: one sendmsg of one piece, the datagram as it sits
 * in the ring, header written in front of its bytes.  Bytes that
 * find the window closed wait and later leave in datagrams of a full MSS,
 * so a burst of small frames packs itself.
 *
 * Round trips are measured on datagrams sent once (Karn) and smoothed as
 * RFC 6298 does; the window (cwnd) halves once per round trip of losses and
 * grows by one datagram per window acknowledged (slow start below
 * ssthresh), as in NewReno: on a link that drops because it is full, the
 * sender backs off instead of resending into the same queue.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/udp.h>

#include "udp.h"
#include "wire/wire_sys.h"
#include "wire/wire_frame.h"

static uint64_t q_used(const udp_peer_t *p)
{
    return p->q_tail - p->q_head;
}

/*
 * The ring holds datagrams as they will go out: each a record of UDP_HDR
 * bytes left for its header, then up to p->mss stream bytes.  A record
 * never wraps: one that would is started at the ring's beginning and the
 * bytes before it stay unused.  So a datagram is one piece for the kernel
 * to copy, and so is a run of full records, which segmentation offload
 * cuts into datagrams: the bytes are copied once in user space (into the
 * ring) and once by the kernel, as TCP's are copied once by the kernel.
 *
 * [q_head, q_sent): records sent and not acknowledged;
 * [q_sent, q_tail): q_recs records not sent yet, each full but the last,
 * which starts at q_open and takes more bytes until it goes.
 */
static inline uint32_t rec_size(const udp_peer_t *p)
{
    return UDP_HDR + p->mss;
}

static inline uint8_t *q_at(const udp_peer_t *p, uint64_t pos)
{
    return p->q + (pos & (udp_state.q_cap - 1));
}

/* Where a record after position pos starts. */
static inline uint64_t rec_start(const udp_peer_t *p, uint64_t pos)
{
    uint32_t cap = udp_state.q_cap;
    uint32_t left = cap - (uint32_t)(pos & (cap - 1));

    return left < rec_size(p) ? pos + left : pos;
}

/* 1 when a record at position start lies right after position end in
 * memory too (not at the ring's beginning): a run may hold both. */
static inline int rec_follows(uint64_t end, uint64_t start)
{
    return start == end && (start & (udp_state.q_cap - 1)) != 0;
}

/* Ring bytes a frame of len bytes takes at most: the headers of the
 * records it starts and one skip at the ring's end. */
static inline uint64_t q_bound(const udp_peer_t *p, size_t len)
{
    /* No division for a small frame (the common case). */
    uint64_t recs = len < p->mss ? 1 : len / p->mss + 1;

    return len + (recs + 1) * UDP_HDR + rec_size(p);
}

static void q_put(udp_peer_t *p, const void *data, size_t len)
{
    const uint8_t *d = data;

    while (len > 0) {
        uint32_t room = p->q_recs == 0
                            ? 0
                            : p->mss - (uint32_t)(p->q_tail - p->q_open -
                                                  UDP_HDR);
        if (room == 0) {
            p->q_open = rec_start(p, p->q_tail);
            p->q_tail = p->q_open + UDP_HDR;
            p->q_recs++;
            room = p->mss;
        }
        size_t n = len < room ? len : room;
        memcpy(q_at(p, p->q_tail), d, n);
        p->q_tail += n;
        d += n;
        len -= n;
    }
}

void udp_due(udp_peer_t *p)
{
    udp_state.timers_now = 1;
    if (!p->in_due) {
        p->in_due = 1;
        udp_state.due[udp_state.ndue++] = p->base.rank;
    }
}

void udp_ack_later(udp_peer_t *p)
{
    udp_state_t *u = &udp_state;
    uint64_t at = p->ack_since + u->ack_delay;

    if (p->ack_now) {
        udp_due(p);
        return;
    }
    /* Not urgent: a deadline for the timer pass, not a pass at the end of
     * this poll (about 200 instructions a datagram in a ping-pong, where
     * the answer going out next carries the acknowledgement anyway). */
    if (!p->in_due) {
        p->in_due = 1;
        u->due[u->ndue++] = p->base.rank;
    }
    if (u->timer_at == 0 || at < u->timer_at)
        u->timer_at = at;
}

/* ---- faults for tests (SHOAL_UDP_FAULTS) ---------------------------------- */

static uint32_t fault_roll(udp_faults_t *f)
{
    /* xorshift64*: reproducible per rank, no state shared. */
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return (uint32_t)((f->rng * 0x2545f4914f6cdd1dull) >> 32) % 1000u;
}

/* The socket a datagram to `to` leaves through: p's connected one when it
 * goes to p's data socket (mh then names no address), else the data
 * socket. */
static int out_fd(const udp_peer_t *p, const struct sockaddr_storage *to,
                  struct msghdr *mh)
{
    if (p != NULL && p->sfd >= 0 && to == &p->addr) {
        mh->msg_name = NULL;
        mh->msg_namelen = 0;
        return p->sfd;
    }
    return udp_state.fd;
}

static int xmit_raw(const udp_peer_t *p, const struct sockaddr_storage *to,
                    socklen_t to_len, const struct iovec *iov, int niov)
{
    struct msghdr mh = {
        .msg_name = (void *)(uintptr_t)to,
        .msg_namelen = to_len,
        .msg_iov = (struct iovec *)(uintptr_t)iov,
        .msg_iovlen = (size_t)niov,
    };
    ssize_t n;
    int fd;

    if (udp_state.xdp && p != NULL && to == &p->addr && udp_xdp_peer(p)) {
        int err = udp_xdp_put(p, iov, niov);
        if (BASE_LIKELY(err == 0)) {
            udp_xdp_kick();
            return 0;
        }
        if (err == EAGAIN)
            return err; /* its frames are busy: the timer pass retries */
        /* else the socket path */
    }
    fd = out_fd(p, to, &mh);
    do
        n = niov == 1 ? wire_sendto(fd, iov[0].iov_base, iov[0].iov_len,
                                    MSG_DONTWAIT | MSG_NOSIGNAL,
                                    mh.msg_name, mh.msg_namelen)
                      : wire_sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? errno : 0;
}

/* Faults: the datagram is dropped, sent twice, or held back and sent
 * after the next one (reordered). */
static int xmit_faulty(udp_faults_t *f, const udp_peer_t *p,
                       const struct sockaddr_storage *to, socklen_t to_len,
                       const struct iovec *iov, int niov)
{
    uint32_t roll = fault_roll(f);
    int err;

    if (roll < f->drop)
        return 0;
    roll -= f->drop;
    if (roll < f->reorder && f->held_len == 0) {
        size_t len = 0;
        for (int i = 0; i < niov; i++) {
            memcpy(f->held + len, iov[i].iov_base, iov[i].iov_len);
            len += iov[i].iov_len;
        }
        f->held_len = len;
        f->held_to = *to;
        f->held_to_len = to_len;
        return 0;
    }
    err = xmit_raw(p, to, to_len, iov, niov);
    if (err == 0 && roll >= f->reorder && roll - f->reorder < f->dup)
        xmit_raw(p, to, to_len, iov, niov);
    if (f->held_len > 0) {
        struct iovec h = {f->held, f->held_len};
        xmit_raw(NULL, &f->held_to, f->held_to_len, &h, 1); /* socket */
        f->held_len = 0;
    }
    return err;
}

int udp_xmit(const udp_peer_t *p, const struct sockaddr_storage *to,
             socklen_t to_len, const struct iovec *iov, int niov)
{
    udp_faults_t *f = &udp_state.faults;

    if (BASE_UNLIKELY(f->held != NULL))
        return xmit_faulty(f, p, to, to_len, iov, niov);
    return xmit_raw(p, to, to_len, iov, niov);
}

/* ---- acknowledgements out ------------------------------------------------ */

void udp_ack_fields(udp_peer_t *p, udp_hdr_t *h)
{
    uint32_t mask = udp_state.window_cap - 1;
    uint64_t sack = 0;

    h->ack = p->rcv_nxt;
    if (p->nslots_full > 0)
        for (uint32_t i = 0; i < 64 && i + 1 < udp_state.window_cap; i++)
            if (p->slots[(p->rcv_nxt + 1 + i) & mask].full)
                sack |= 1ull << i;
    h->sack = sack;
    /* Every slot past rcv_nxt may be taken: the ones in use hold
     * datagrams the sender will not resend while they are acknowledged. */
    h->window = (uint16_t)(udp_state.window_cap - 1);
    h->src_epoch = udp_state.epoch;
    h->dst_epoch = p->epoch;
    h->src = (uint32_t)udp_state.job->rank;
    h->dst = (uint32_t)p->base.rank;
    p->ack_owed = 0;
    p->ack_now = 0;
}

void udp_send_ack(udp_peer_t *p)
{
    udp_hdr_t h = {.type = UDP_T_ACK};
    uint8_t buf[UDP_HDR];
    struct iovec iov = {buf, UDP_HDR};

    udp_ack_fields(p, &h);
    udp_hdr_encode(&h, udp_state.key, buf);
    udp_xmit(p, &p->addr, p->addr_len, &iov, 1);
}

/* ---- datagrams out -------------------------------------------------------- */

static uint32_t send_limit(const udp_peer_t *p)
{
    uint32_t w = p->cwnd < p->peer_window ? p->cwnd : p->peer_window;

    return w < udp_state.window_cap ? w : udp_state.window_cap;
}

/*
 * The datagrams seq, seq + 1, ... (n of them, at most gso_max; every one
 * but the last a full MSS, as new ones are and runs of lost ones mostly
 * are) in one sendmsg: with n > 1 the kernel cuts the buffer into
 * datagrams of UDP_HDR + mss bytes (UDP_SEGMENT, generic segmentation
 * offload), so a window of datagrams, or a batch of them lost at once and
 * resent, costs one system call; a receiver with UDP_GRO may even take
 * them in one piece.  The one numbered ack_now asks for an answer at once.
 */
static int xmit_run(udp_peer_t *p, uint32_t seq, uint32_t n, uint32_t ack_now)
{
    udp_state_t *u = &udp_state;
    uint32_t mask = u->window_cap - 1;
    struct iovec *iov = u->siov;
    size_t total = 0;
    udp_hdr_t h = {.type = UDP_T_DATA};
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_name = &p->addr, .msg_namelen = p->addr_len};
    ssize_t sent;

    udp_ack_fields(p, &h);
    for (uint32_t i = 0; i < n; i++) {
        const udp_flight_t *f = &p->flight[(seq + i) & mask];
        uint8_t *rec = q_at(p, f->start);

        h.seq = seq + i;
        h.len = (uint16_t)f->len;
        h.flags = h.seq == ack_now ? UDP_F_ACK_NOW : 0;
        udp_hdr_encode(&h, u->key, rec);
        iov[i].iov_base = rec;
        iov[i].iov_len = UDP_HDR + f->len;
        total += UDP_HDR + f->len;
    }
    if (n == 1)
        return udp_xmit(p, &p->addr, p->addr_len, iov, 1);
    if (u->xdp && u->faults.held == NULL && udp_xdp_batch() &&
        udp_xdp_peer(p)) {
        /* AF_XDP: each datagram into the ring (udp_push left room), one
         * kick for them all. */
        for (uint32_t i = 0; i < n; i++) {
            int err = udp_xdp_put(p, iov + i, 1);
            if (BASE_UNLIKELY(err != 0)) {
                udp_xdp_kick();
                return i == 0 ? err : 0; /* the rest go on their timer */
            }
        }
        udp_xdp_kick();
        return 0;
    }
    /* The records are consecutive in the ring (callers see to it): one
     * piece, which the kernel copies at once (2n pieces of 48 and ~1450
     * bytes cost it 2.5 times as much, perf on veth). */
    struct iovec one = {iov[0].iov_base, total};
    mh.msg_iov = &one;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    uint16_t seg = (uint16_t)rec_size(p);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(seg));
    memcpy(CMSG_DATA(c), &seg, sizeof(seg));
    int fd = out_fd(p, &p->addr, &mh);
    do
        sent = wire_sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent >= 0)
        return 0;
    if (errno == EINVAL || errno == EOPNOTSUPP || errno == EIO) {
        /* No segmentation offload here: one datagram at a time. */
        base_debug("udp", "UDP_SEGMENT refused (%s): sending datagrams one "
                   "by one", strerror(errno));
        u->gso_max = 1;
        return EAGAIN;
    }
    return errno;
}

/* New datagrams seq snd_nxt.. (at most n of them: the records after
 * q_sent, up to a skip at the ring's end, which starts another run); the
 * last the window lets out asks for an answer at once: the ring will not
 * move until one comes.  *sent_n: how many went (a run ends where the
 * ring does). */
static int xmit_new(udp_peer_t *p, uint32_t n, uint32_t limit, uint64_t now,
                    uint32_t *sent_n)
{
    udp_state_t *u = &udp_state;
    uint32_t mask = u->window_cap - 1, i;
    uint64_t at = p->q_sent;

    for (i = 0; i < n; i++) {
        udp_flight_t *f = &p->flight[(p->snd_nxt + i) & mask];
        uint64_t start = rec_start(p, at);

        if (i > 0 && !rec_follows(at, start))
            break;
        f->start = start;
        f->len = start == p->q_open ? (uint32_t)(p->q_tail - start - UDP_HDR)
                                    : p->mss;
        f->sacked = f->resent = f->lost = 0;
        f->sent_ns = now;
        at = start + UDP_HDR + f->len;
    }
    *sent_n = i;
    return xmit_run(p, p->snd_nxt, i, p->snd_una + limit - 1);
}

/*
 * Resending: lost datagrams are gathered into runs of consecutive ones
 * that go in one sendmsg each (a burst lost at once, as a dropped
 * offloaded batch is, costs one system call, not one per datagram).
 */
typedef struct resend_run {
    uint32_t seq, n;
} resend_run_t;

static void resend_flush(udp_peer_t *p, resend_run_t *r)
{
    if (r->n > 0)
        (void)xmit_run(p, r->seq, r->n, r->seq + r->n - 1);
    r->n = 0;
}

/* seq (judged lost) goes again, in the run being gathered when it
 * follows it. */
static void resend_add(udp_peer_t *p, resend_run_t *r, uint32_t seq,
                       uint64_t now)
{
    udp_state_t *u = &udp_state;
    udp_flight_t *f = &p->flight[seq & (u->window_cap - 1)];

    f->lost = f->resent = 1;
    f->sent_ns = now;
    wire_stats.retransmits++;
    if (r->n > 0) {
        const udp_flight_t *last =
            &p->flight[(r->seq + r->n - 1) & (u->window_cap - 1)];
        /* A run carries full records, consecutive in the ring, but for
         * its last. */
        if (seq != r->seq + r->n || r->n >= u->gso_max ||
            last->len != p->mss ||
            !rec_follows(last->start + rec_size(p), f->start))
            resend_flush(p, r);
    }
    if (r->n == 0)
        r->seq = seq;
    r->n++;
}

void udp_push(udp_peer_t *p, uint64_t now)
{
    udp_state_t *u = &udp_state;
    uint32_t limit = send_limit(p);

    if (p->snd_nxt == p->snd_una && p->q_sent < p->q_tail)
        p->wait_since = now; /* silence counts from now */
    while (p->q_sent < p->q_tail && p->snd_nxt - p->snd_una < limit) {
        uint32_t room = limit - (p->snd_nxt - p->snd_una);
        uint32_t n = u->gso_max, sent_n = 0;

        if (n > room)
            n = room;
        if (n > p->q_recs)
            n = p->q_recs;
        if (u->xdp && n > 1 && udp_xdp_batch() && n > udp_xdp_room())
            n = udp_xdp_room() > 0 ? udp_xdp_room() : 1;
        int err = xmit_new(p, n, limit, now, &sent_n);
        if (err == EAGAIN || err == ENOBUFS) {
            if (u->gso_max == 1 && n > 1)
                continue; /* segmentation just turned off: again */
            break; /* the socket's buffer is full: the timer pass retries */
        }
        if (BASE_UNLIKELY(err == EMSGSIZE)) {
            udp_peer_lost(p, SHOAL_ERR_PEER_UNREACHABLE,
                          "datagrams larger than the path allows: set "
                          "SHOAL_UDP_MTU");
            return;
        }
        if (BASE_UNLIKELY(err != 0))
            udp_errqueue(); /* an ICMP error was pending: the datagrams
                               went, or go again on their timer */
        const udp_flight_t *last =
            &p->flight[(p->snd_nxt + sent_n - 1) & (u->window_cap - 1)];
        p->q_sent = last->start + UDP_HDR + last->len;
        p->q_recs -= sent_n;
        p->snd_nxt += sent_n;
    }
    if (p->snd_nxt != p->snd_una) {
        if (p->rto_at == 0)
            p->rto_at = now + p->rto;
        udp_due(p);
    }
    if (p->q_sent < p->q_tail)
        udp_due(p);
}

/* ---- frames in ------------------------------------------------------------ */

/* Copy a frame into p's ring; SHOAL_ERR_AGAIN when it does not fit. */
static int queue_frame(udp_peer_t *p, const uint8_t *hdr, size_t hlen,
                       const void *data, size_t dlen)
{
    uint64_t need = q_bound(p, hlen + dlen);

    if (BASE_UNLIKELY(need > udp_state.q_cap - q_used(p))) {
        p->q_need = (uint32_t)need;
        return SHOAL_ERR_AGAIN;
    }
    q_put(p, hdr, hlen);
    if (dlen > 0)
        q_put(p, data, dlen);
    p->q_need = 0;
    return SHOAL_OK;
}

/*
 * A frame goes out at once unless it is part of a burst: sent within
 * UDP_BURST_NS of the previous frame to the same peer while two or more
 * datagrams to it await their acknowledgement.  Then small frames gather
 * until they fill a datagram, or the next poll (progress, or the arm
 * before a sleep) sends them: a window of small messages costs a few
 * datagrams, not one each.  A ping-pong never has two in flight, and a
 * lone send after a pause (a rank that sends, then computes) is never
 * held.
 */
#define UDP_HOLD_INFLIGHT 2u
#define UDP_BURST_NS 10000u

static int put_frame(udp_peer_t *p, const uint8_t *hdr, size_t hlen,
                     const void *data, size_t dlen)
{
    int status = queue_frame(p, hdr, hlen, data, dlen);
    uint64_t now, last;

    if (BASE_UNLIKELY(status != SHOAL_OK))
        return status;
    now = base_time_ns();
    last = p->last_frame_ns;
    p->last_frame_ns = now;
    if (now - last < UDP_BURST_NS &&
        p->snd_nxt - p->snd_una >= UDP_HOLD_INFLIGHT &&
        p->q_recs == 1 && p->q_tail - p->q_open - UDP_HDR < p->mss &&
        udp_state.gso_max > 1) {
        udp_due(p); /* the next poll sends it */
        return SHOAL_OK;
    }
    udp_push(p, now);
    return SHOAL_OK;
}

int udp_send(wire_conn_t *conn, const wire_msg_t *m)
{
    udp_peer_t *p = (udp_peer_t *)conn;
    wire_frame_t f;
    uint8_t hdr[WIRE_FRAME_HDR_MAX];
    size_t hlen;
    int status;

    if (BASE_UNLIKELY(p->dead || p->bye))
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", p->base.rank);
    wire_frame_of_msg(m, p->noreply, &f);
    hlen = wire_frame_encode(&f, hdr);
    status = put_frame(p, hdr, hlen, m->payload, wire_frame_data_len(&f));
    if (BASE_LIKELY(status == SHOAL_OK)) {
        p->noreply_sent = f.credits;
        wire_net_kick = 1; /* an answer may come soon: poll often */
    }
    return status;
}

int udp_queue_ctl(udp_peer_t *p, uint8_t type, uint8_t ep, uint64_t arg)
{
    wire_frame_t f = {.type = type, .ep = ep};
    uint8_t hdr[WIRE_FRAME_HDR_MAX];
    int status;

    if (type == WIRE_FRAME_SEG) {
        f.nargs = 1;
        f.args[0] = arg;
    }
    f.credits = p->noreply;
    status = queue_frame(p, hdr, wire_frame_encode(&f, hdr), NULL, 0);
    if (status == SHOAL_OK)
        p->noreply_sent = f.credits;
    return status;
}

int udp_send_ctl(udp_peer_t *p, uint8_t type, uint8_t ep, uint64_t arg)
{
    int status = udp_queue_ctl(p, type, ep, arg);

    if (status == SHOAL_OK)
        udp_push(p, base_time_ns());
    return status;
}

/* ---- acknowledgements in ---------------------------------------------------- */

static void rtt_sample(udp_peer_t *p, uint64_t rtt)
{
    udp_state_t *u = &udp_state;

    if (p->srtt == 0) {
        p->srtt = rtt;
        p->rttvar = rtt / 2;
    } else {
        uint64_t d = rtt > p->srtt ? rtt - p->srtt : p->srtt - rtt;
        p->rttvar = (3 * p->rttvar + d) / 4;
        p->srtt = (7 * p->srtt + rtt) / 8;
    }
    p->rto = p->srtt + 4 * p->rttvar;
    if (p->rto < u->rto_min)
        p->rto = u->rto_min;
    if (p->rto > u->rto_max)
        p->rto = u->rto_max;
}

/* Losses: the window halves, once per round trip of them. */
/*
 * A loss seen through selective acknowledgements: the window shrinks by
 * an eighth, once per round trip of losses.  On a LAN most such losses
 * are random (a full socket buffer, a dropped frame), not a full queue on
 * the path: halving for each would starve the link (1% loss would cost
 * most of the bandwidth); losses every round trip still shrink it
 * geometrically, and a timeout halves it.
 */
static void on_loss(udp_peer_t *p)
{
    if (!udp_seq_lt(p->snd_una, p->recover)) {
        uint32_t w = p->cwnd - p->cwnd / 8;
        p->ssthresh = w > 4 ? w : 4;
        p->cwnd = p->ssthresh;
        p->cwnd_acked = 0;
        p->recover = p->snd_nxt;
    }
}

static void grow(udp_peer_t *p, uint32_t acked)
{
    if (p->cwnd < p->ssthresh) {
        p->cwnd += acked;
    } else if ((p->cwnd_acked += acked) >= p->cwnd) {
        p->cwnd_acked = 0;
        p->cwnd++;
    }
    if (p->cwnd > udp_state.window_cap)
        p->cwnd = udp_state.window_cap;
}

void udp_on_ack(udp_peer_t *p, const udp_hdr_t *h, uint64_t now)
{
    udp_state_t *u = &udp_state;
    uint32_t mask = u->window_cap - 1, acked = 0;
    uint64_t sample = 0;

    /* An acknowledgement of what was never sent, or of the past. */
    if (udp_seq_lt(p->snd_nxt, h->ack) || udp_seq_lt(h->ack, p->snd_una))
        return;
    p->peer_window = h->window;
    while (p->snd_una != h->ack) {
        udp_flight_t *f = &p->flight[p->snd_una & mask];
        if (!f->resent)
            sample = now - f->sent_ns;
        p->q_head = f->start + UDP_HDR + f->len;
        p->snd_una++;
        acked++;
    }
    if (acked > 0) {
        if (sample > 0)
            rtt_sample(p, sample);
        else if (p->srtt > 0)
            rtt_sample(p, p->srtt); /* new data acknowledged: no backoff */
        grow(p, acked);
        p->rto_at = p->snd_una != p->snd_nxt ? now + p->rto : 0;
    }
    if (h->sack != 0 && p->snd_una != p->snd_nxt) {
        /* Selective repeat: a datagram that three acknowledged ones
         * overtook (all of them, when fewer followed it) is lost; it goes
         * again, once until its timer. */
        uint32_t high = h->ack, above = 0;
        for (uint32_t i = 0; i < 64; i++) {
            uint32_t s = h->ack + 1 + i;
            if (((h->sack >> i) & 1) && udp_seq_lt(s, p->snd_nxt)) {
                p->flight[s & mask].sacked = 1;
                high = s;
            }
        }
        /* Judged from the top down (how many acknowledged ones overtook
         * each), resent from the bottom up in runs. */
        uint64_t lost[2] = {0, 0}; /* bit i: snd_una + i; high - snd_una
                                      is at most 64 */
        for (uint32_t s = high; s != p->snd_una - 1; s--) {
            udp_flight_t *f = &p->flight[s & mask];
            uint32_t after = p->snd_nxt - 1 - s;
            if (f->sacked) {
                above++;
                continue;
            }
            if (f->lost || above == 0 || above < (after < 3 ? after : 3))
                continue;
            lost[(s - p->snd_una) / 64] |= 1ull << ((s - p->snd_una) % 64);
        }
        if (lost[0] | lost[1]) {
            resend_run_t run = {0, 0};
            on_loss(p);
            for (uint32_t i = 0; i <= high - p->snd_una; i++)
                if ((lost[i / 64] >> (i % 64)) & 1)
                    resend_add(p, &run, p->snd_una + i, now);
            resend_flush(p, &run);
        }
    }
    udp_push(p, now);
}

/* ---- timers ------------------------------------------------------------------- */

static void on_timeout(udp_peer_t *p, uint64_t now)
{
    uint32_t mask = udp_state.window_cap - 1;
    uint32_t inflight = p->snd_nxt - p->snd_una;

    /* Nothing came back for a whole timeout: what is in flight and not
     * selectively acknowledged is taken as lost (a burst dropped at once,
     * one offloaded batch say) and goes again now, not one datagram per
     * doubling timeout; the window halves, the timer backs off. */
    p->ssthresh = inflight / 2 > 4 ? inflight / 2 : 4;
    p->cwnd = p->ssthresh;
    p->cwnd_acked = 0;
    p->recover = p->snd_nxt;
    resend_run_t run = {0, 0};
    /* snd_una goes whatever the selective acknowledgements said: when all
     * in flight was selectively acknowledged, the cumulative ack that
     * should have followed was lost, and the peer, owing nothing, sends
     * none until a duplicate asks for it (resending nothing here hung
     * both sides for good). */
    resend_add(p, &run, p->snd_una, now);
    for (uint32_t s = p->snd_una + 1; s != p->snd_nxt; s++)
        if (!p->flight[s & mask].sacked)
            resend_add(p, &run, s, now);
    resend_flush(p, &run);
    p->rto = p->rto * 2 < udp_state.rto_max ? p->rto * 2 : udp_state.rto_max;
    p->rto_at = now + p->rto;
}

static void credits_out(udp_peer_t *p, int all)
{
    uint64_t batch = (uint64_t)base_cfg.AM_WINDOW / 2;
    uint64_t owed = p->noreply - p->noreply_sent;

    batch = batch > 8 ? 8 : batch < 1 ? 1 : batch;
    if (owed == 0) {
        p->credit_due = 0;
        return;
    }
    if ((all || owed >= batch) && udp_send_ctl(p, WIRE_FRAME_CREDIT, 0, 0) ==
                                      SHOAL_OK)
        p->credit_due = 0;
}

void udp_timers(uint64_t now, int all)
{
    udp_state_t *u = &udp_state;
    uint64_t next = 0;
    int kept = 0;

    for (int i = 0; i < u->ndue; i++) {
        udp_peer_t *p = &u->peers[u->due[i]];
        uint64_t at;

        if (p->dead) {
            p->in_due = 0;
            continue;
        }
        /* Not before a sleep (all): a probe's verdict changes what a
         * waiter waits for, and is for the poll after it. */
        if (BASE_UNLIKELY(p->path == UDP_PATH_PROBING) && !all)
            udp_path_timer(p, now);
        if (p->credit_due)
            credits_out(p, all);
        if (p->q_sent < p->q_tail)
            udp_push(p, now);
        if (p->rto_at != 0 && now >= p->rto_at)
            on_timeout(p, now);
        if (p->ack_owed > 0 &&
            (all || p->ack_now || now - p->ack_since >= u->ack_delay))
            udp_send_ack(p);
        if (p->snd_nxt != p->snd_una || p->q_sent < p->q_tail)
            udp_live_peer(p, now);
        if (p->dead) {
            p->in_due = 0;
            continue;
        }
        /* Still something to watch: data in flight, acks or credits. */
        if (p->snd_nxt == p->snd_una && p->q_sent == p->q_tail &&
            p->ack_owed == 0 && !p->credit_due &&
            p->path != UDP_PATH_PROBING) {
            p->in_due = 0;
            continue;
        }
        u->due[kept++] = u->due[i];
        at = p->rto_at;
        if (p->ack_owed > 0 && (at == 0 || p->ack_since + u->ack_delay < at))
            at = p->ack_since + u->ack_delay;
        if (p->probe_at != 0 && (at == 0 || p->probe_at < at))
            at = p->probe_at;
        if (p->path == UDP_PATH_PROBING && (at == 0 || p->path_at < at))
            at = p->path_at;
        if (p->q_sent < p->q_tail && p->snd_nxt - p->snd_una < send_limit(p))
            at = now + 1000000; /* the socket was full: try again soon */
        if (at != 0 && (next == 0 || at < next))
            next = at;
    }
    u->ndue = kept;
    u->timer_at = next;
    u->timers_now = 0; /* what the pass itself changed is in next */
}
