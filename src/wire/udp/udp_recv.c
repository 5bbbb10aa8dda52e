/*
 * The datagram wire's receiving side: datagrams in batches (recvmmsg),
 * checked before anything in them is believed, taken in sequence order
 * (early ones wait in reorder slots), and their bytes parsed into frames
 * exactly as the TCP wire parses its stream.  A frame wholly inside one
 * datagram is delivered from the datagram's buffer; only a frame split
 * across datagrams is gathered in the peer's rx buffer; long payloads are
 * copied straight into the destination segment, or, while one arrives,
 * received there by the kernel (direct_recv), and so are medium payloads
 * split across datagrams whose handler says where they go (the place
 * upcall: MPI's rendezvous fragments, into the receive buffer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <netinet/udp.h>

#include "udp.h"
#include "wire/wire_sys.h"
#include "wire/wire_frame.h"

/* Batches one poll reads at most, so that a flood cannot hold it. */
#define POLL_BATCHES 4

static int reject(const char *why, const struct sockaddr_storage *from)
{
    static uint64_t told;

    (void)from;
    wire_stats.rejected++;
    /* Strangers are counted; a few are told in the log, not a flood. */
    if (told++ < 4)
        base_info("udp", "dropped a datagram: %s", why);
    return -1;
}

/* ---- frames ------------------------------------------------------------ */

static void credit_due(udp_peer_t *p)
{
    if (!p->credit_due) {
        p->credit_due = 1;
        udp_due(p);
    }
}

static void deliver(udp_peer_t *p, const wire_frame_t *f, const void *payload,
                    int ok)
{
    if (wire_frame_deliver(&udp_state.up, p->base.rank, f, payload, ok) ==
        WIRE_DELIVERED_NOREPLY) {
        p->noreply++;
        credit_due(p);
    }
}
static char *long_dest(udp_peer_t *p, const wire_frame_t *f)
{
    return wire_frame_long_dest(&udp_state.up, p->base.rank, f, "udp");
}
/* Where the layer above wants a medium frame's payload (f's args), or
 * NULL. */
static char *place(udp_peer_t *p, const wire_frame_t *f)
{
    const wire_upcalls_t *up = &udp_state.up;
    wire_msg_t m;

    if (up->place == NULL)
        return NULL;
    wire_msg_of_frame(f, NULL, &m);
    return up->place(up->arg, p->base.rank, &m);
}

static void protocol_error(udp_peer_t *p, const char *why)
{
    wire_stats.dropped++;
    base_error("udp", "malformed frame from rank %d: %s", p->base.rank, why);
    udp_peer_lost(p, SHOAL_ERR_PEER_UNREACHABLE, why);
}

static void cur_save(udp_peer_t *p, const wire_frame_t *f, char *dst,
                     uint64_t left)
{
    p->cur_kind = f->kind;
    p->cur_ep = f->ep;
    p->cur_handler = f->handler;
    p->cur_nargs = f->nargs;
    p->cur_len = f->len;
    p->cur_offset = f->offset;
    memcpy(p->cur_args, f->args, sizeof(p->cur_args));
    p->cur_dst = dst;
    p->cur_left = left;
    p->cur_ok = dst != NULL;
    if (dst != NULL)
        udp_state.long_rank = p->base.rank;
}

static void cur_deliver(udp_peer_t *p)
{
    wire_frame_t f = {
        .type = WIRE_FRAME_AM,
        .kind = p->cur_kind,
        .ep = p->cur_ep,
        .handler = p->cur_handler,
        .nargs = p->cur_nargs,
        .len = p->cur_len,
        .offset = p->cur_offset,
    };

    memcpy(f.args, p->cur_args, sizeof(f.args));
    if (udp_state.long_rank == p->base.rank)
        udp_state.long_rank = -1;
    deliver(p, &f, p->cur_ok ? p->cur_dst - p->cur_len : NULL, p->cur_ok);
}

/*
 * Consume the whole frames at buf (n bytes), and the start of a long one
 * whose payload goes on in later datagrams.  Returns the bytes consumed;
 * what is left is the beginning of a frame.  -1 when the peer was lost.
 */
static ssize_t parse(udp_peer_t *p, const uint8_t *buf, size_t n)
{
    uint32_t max_inline = udp_state.q_cap / 2;
    size_t off = 0;

    while (p->cur_left == 0 && !p->dead) {
        wire_frame_t f;
        const char *why = NULL;
        int r = wire_frame_decode(buf + off, n - off, max_inline, &f, &why);
        size_t avail, data;

        if (r == 0)
            break;
        if (r < 0) {
            protocol_error(p, why);
            return -1;
        }
        if (f.credits > p->credits)
            p->credits = f.credits;
        avail = n - off - (size_t)r;
        if (f.type != WIRE_FRAME_AM) {
            wire_frame_control(&f, p->segs, p->seg_known, &p->bye);
            off += (size_t)r;
            continue;
        }
        data = wire_frame_data_len(&f);
        if ((f.kind & WIRE_CAT_MASK) != WIRE_CAT_LONG) {
            if (avail >= data) {
                off += (size_t)r + data;
                deliver(p, &f, buf + off - data, 1);
                continue;
            }
            /* The payload goes on in later datagrams: where the layer
             * above wants it, received as a long frame's, or gathered. */
            char *dst = place(p, &f);
            if (dst == NULL)
                break;
            memmove(dst, buf + off + r, avail);
            off += (size_t)r + avail;
            cur_save(p, &f, dst + avail, data - avail);
            break;
        }
        char *dst = long_dest(p, &f);
        size_t take = avail < data ? avail : data;
        if (dst != NULL && take > 0)
            memmove(dst, buf + off + r, take); /* buf may lie in a long
                                                   frame's destination */
        off += (size_t)r + take;
        if (take < data) {
            cur_save(p, &f, dst != NULL ? dst + take : NULL, data - take);
            break;
        }
        deliver(p, &f, dst, dst != NULL);
    }
    return (ssize_t)off;
}

static int rx_room(udp_peer_t *p, size_t need)
{
    if (need <= p->rx_cap)
        return 1;
    size_t cap = p->rx_cap ? p->rx_cap : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *rx = realloc(p->rx, cap);
    if (rx == NULL)
        return 0;
    p->rx = rx;
    p->rx_cap = cap;
    return 1;
}

/* The next len bytes of p's stream. */
static void consume(udp_peer_t *p, const uint8_t *data, size_t len)
{
    while (len > 0 && !p->dead) {
        if (p->cur_left > 0) {
            size_t n = len < p->cur_left ? len : (size_t)p->cur_left;
            if (p->cur_dst != NULL) {
                /* Received in place (direct_recv), or landed elsewhere in
                 * the destination, or in a batch buffer. */
                if (data != (const uint8_t *)p->cur_dst)
                    memmove(p->cur_dst, data, n);
                p->cur_dst += n;
            }
            p->cur_left -= n;
            data += n;
            len -= n;
            if (p->cur_left == 0)
                cur_deliver(p);
            continue;
        }
        if (p->rx_len == 0) {
            ssize_t used = parse(p, data, len);
            if (used < 0)
                return;
            data += used;
            len -= (size_t)used;
            if (p->cur_left > 0 || len == 0)
                continue;
        }
        /* A frame split across datagrams: gather it. */
        if (!rx_room(p, p->rx_len + len)) {
            protocol_error(p, "no memory for a frame split across "
                              "datagrams");
            return;
        }
        memcpy(p->rx + p->rx_len, data, len);
        p->rx_len += len;
        len = 0;
        ssize_t used = parse(p, p->rx, p->rx_len);
        if (used < 0)
            return;
        memmove(p->rx, p->rx + used, p->rx_len - (size_t)used);
        p->rx_len -= (size_t)used;
        /* A long frame's payload that followed its header in rx went to
         * its segment: nothing of it stays in rx. */
    }
}

/* ---- datagrams ---------------------------------------------------------- */

static int slot_put(udp_peer_t *p, uint32_t seq, const uint8_t *d,
                    uint32_t len)
{
    udp_state_t *u = &udp_state;
    udp_slot_t *s;

    if (p->slots == NULL) {
        p->slots = calloc(u->window_cap, sizeof(*p->slots));
        if (p->slots == NULL)
            return 0;
    }
    s = &p->slots[seq & (u->window_cap - 1)];
    if (s->full)
        return 0; /* a duplicate */
    if (s->buf == NULL) {
        s->buf = malloc(u->mss_rx);
        if (s->buf == NULL)
            return 0;
    }
    memcpy(s->buf, d, len);
    s->len = len;
    s->full = 1;
    p->nslots_full++;
    return 1;
}

void udp_on_data(udp_peer_t *p, const udp_hdr_t *h, const uint8_t *payload,
                 uint64_t now)
{
    udp_state_t *u = &udp_state;
    uint32_t mask = u->window_cap - 1, took = 0;

    if (h->flags & UDP_F_ACK_NOW)
        p->ack_now = 1;
    if (udp_seq_lt(h->seq, p->rcv_nxt) ||
        h->seq - p->rcv_nxt >= u->window_cap) {
        /* A duplicate (our acknowledgement may have been lost) or beyond
         * the window: say where we are. */
        wire_stats.dropped += !udp_seq_lt(h->seq, p->rcv_nxt);
        p->ack_now = 1;
        p->ack_owed += p->ack_owed == 0;
        if (p->ack_owed == 1)
            p->ack_since = now;
        udp_due(p);
        return;
    }
    if (h->seq != p->rcv_nxt) {
        slot_put(p, h->seq, payload, h->len);
        p->ack_now = 1; /* the gap shows in our selective ack at once */
        p->ack_owed += p->ack_owed == 0;
        if (p->ack_owed == 1)
            p->ack_since = now;
        udp_due(p);
        return;
    }
    if (h->len > p->rx_seg)
        p->rx_seg = h->len; /* its datagrams' size, from the largest */
    consume(p, payload, h->len);
    p->rcv_nxt++;
    took++;
    while (p->nslots_full > 0 && !p->dead) {
        udp_slot_t *s = &p->slots[p->rcv_nxt & mask];
        if (!s->full)
            break;
        s->full = 0;
        p->nslots_full--;
        consume(p, s->buf, s->len);
        p->rcv_nxt++;
        took++;
    }
    if (p->ack_owed == 0)
        p->ack_since = now;
    p->ack_owed += took;
    if (p->ack_owed >= u->ack_every)
        p->ack_now = 1;
    udp_ack_later(p);
}

static int same_addr(const struct sockaddr_storage *a,
                     const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port &&
               x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
}

int udp_addr_equal(const struct sockaddr_storage *a,
                   const struct sockaddr_storage *b)
{
    return same_addr(a, b);
}

/* A datagram of n bytes whose header is at hdr and payload at payload
 * (hdr + UDP_HDR, or apart after a scattered receive). */
static int on_datagram(const uint8_t *hdr, const uint8_t *payload, size_t n,
                       const struct sockaddr_storage *from, uint64_t now)
{
    udp_state_t *u = &udp_state;
    udp_hdr_t h;
    const char *why = NULL;
    udp_peer_t *p;

    if (udp_hdr_decode(hdr, n, u->key, &h, &why) < 0)
        return reject(why, from);
    if (h.dst != (uint32_t)u->job->rank || h.dst_epoch != u->epoch)
        return reject("for another process", from);
    if (h.src >= (uint32_t)u->job->size || h.src == h.dst)
        return reject("from a rank not in this job", from);
    p = &u->peers[h.src];
    /* An answer to a first-contact probe needs no more than the address;
     * anything else opens the peer's state. */
    if (!p->open && (h.type == UDP_T_PROBE_ACK
                         ? !udp_peer_known(p)
                         : udp_peer_open((int)h.src, &p) != SHOAL_OK))
        return reject("from a rank whose address is unknown", from);
    if (h.src_epoch != p->epoch)
        return reject("from an earlier process of that rank", from);
    if (h.type == UDP_T_PROBE_ACK ? !same_addr(from, &p->live_addr)
                                  : !same_addr(from, &p->addr) &&
                                        !same_addr(from, &p->send_addr))
        return reject("from an address that is not its rank's", from);
    if (BASE_UNLIKELY(h.type == UDP_T_DEAD)) {
        udp_live_told_dead(p);
        return -1;
    }
    if (p->dead) {
        if (h.type == UDP_T_DATA || h.type == UDP_T_ACK)
            udp_live_tell_dead(p, now);
        return -1;
    }
    p->heard_ns = now;
    if (BASE_UNLIKELY(p->path != UDP_PATH_OK))
        udp_path_heard(p);
    switch (h.type) {
    case UDP_T_DATA:
        udp_on_ack(p, &h, now);
        udp_on_data(p, &h, payload, now);
        break;
    case UDP_T_ACK:
        udp_on_ack(p, &h, now);
        break;
    case UDP_T_PROBE_ACK:
        break; /* heard: alive */
    default:
        return reject("a probe on the data socket", from);
    }
    return (int)h.src;
}

int udp_on_datagram(const uint8_t *buf, size_t n,
                    const struct sockaddr_storage *from, uint64_t now)
{
    return on_datagram(buf, buf + UDP_HDR, n, from, now);
}

/* One buffer of recvmmsg: a datagram, or several coalesced by the kernel
 * (UDP_GRO says their size; the last may be shorter). */
/* The size of the datagrams the kernel coalesced into a buffer of n
 * bytes (UDP_GRO), n when it did not. */
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

/* n bytes of datagrams of seg bytes each (the last maybe shorter). */
static void on_datagrams(const uint8_t *buf, size_t n, size_t seg,
                         const struct sockaddr_storage *from, uint64_t now)
{
    for (size_t off = 0; off < n; off += seg)
        udp_on_datagram(buf + off, n - off < seg ? n - off : seg, from, now);
}

/* A buffer read without UDP_GRO's word (recv_one): datagrams of the size
 * of the first, from its header's len (the kernel coalesces only
 * datagrams of one size); each piece is checked like any datagram. */
static size_t first_size(const uint8_t *buf, size_t n)
{
    size_t seg;

    if (n <= UDP_HDR)
        return n;
    seg = UDP_HDR + ((size_t)buf[22] | (size_t)buf[23] << 8);
    return seg < n ? seg : n;
}

/* grow: the buffer came with recvmmsg's control data (UDP_GRO's word). */
static void on_buffer(struct mmsghdr *m, int grow, uint64_t now)
{
    size_t n = m->msg_len;
    const uint8_t *buf = m->msg_hdr.msg_iov->iov_base;

    on_datagrams(buf, n, grow ? gro_size(&m->msg_hdr, n) : first_size(buf, n),
                 m->msg_hdr.msg_name, now);
}

/*
 * One buffer by recvfrom, into batch slot 0 as recvmmsg would fill it
 * (without the UDP_GRO word): 1, or -1 with errno.  A ping-pong's poll
 * asks for one datagram, and recvmsg's message header, which the kernel
 * copies in and checks on every call (empty polls too), cost more than
 * the rest of an empty poll.  From a pair socket (owner) past its
 * backlog, without the sender's address, which can only be the peer's
 * (80 ns of a one-way trip on veth, with the raw ping-pong).
 */
static int recv_one(udp_state_t *u, int fd, udp_peer_t *owner)
{
    socklen_t flen = sizeof(u->rfrom[0]);
    ssize_t r;

    if (owner != NULL && owner->pair_clean) {
        r = wire_recvfrom(fd, u->riov[0].iov_base, u->riov[0].iov_len,
                          MSG_DONTWAIT | MSG_TRUNC, NULL, NULL);
        memcpy(&u->rfrom[0], &owner->addr, owner->addr_len);
        flen = owner->addr_len;
    } else {
        r = wire_recvfrom(fd, u->riov[0].iov_base, u->riov[0].iov_len,
                          MSG_DONTWAIT | MSG_TRUNC,
                          (struct sockaddr *)&u->rfrom[0], &flen);
        if (r < 0 && owner != NULL && errno == EAGAIN)
            owner->pair_clean = 1; /* its backlog is read */
    }
    if (r < 0)
        return -1;
    u->rmsg[0].msg_len = (unsigned)(r < (ssize_t)u->riov[0].iov_len
                                        ? r
                                        : (ssize_t)u->riov[0].iov_len);
    u->rmsg[0].msg_hdr.msg_namelen = flen;
    u->rmsg[0].msg_hdr.msg_controllen = 0;
    u->rmsg[0].msg_hdr.msg_flags =
        r > (ssize_t)u->riov[0].iov_len ? MSG_TRUNC : 0;
    return 1;
}

/* ---- long payloads straight into place ------------------------------------ */

/*
 * While a peer's long frame has two datagrams of payload or more to come,
 * the next receive is scattered: each datagram's header into a slot of its
 * own and its payload where the frame's bytes for it go (a sender cuts its
 * stream into datagrams of one size, and the kernel coalesces only
 * datagrams of one size), anything after into a batch buffer.  The
 * kernel's copy is then the only one.  The prediction is checked after: a
 * datagram that is not the one expected where it landed (another peer's,
 * a resend, one after a loss) is taken from there as from a batch buffer.
 * It landed in a part of the frame not written yet, so nothing final is
 * overwritten, and the bytes expected there arrive later on top.
 */
static udp_peer_t *direct_peer(void)
{
    udp_state_t *u = &udp_state;
    udp_peer_t *p;

    if (u->long_rank < 0 || u->xdp)
        return NULL;
    p = &u->peers[u->long_rank];
    if (p->dead || p->cur_dst == NULL || p->nslots_full > 0 ||
        p->rx_seg == 0 || p->cur_left < 2 * (uint64_t)p->rx_seg)
        return NULL;
    return p;
}

/* The socket p's datagrams arrive on. */
static int rx_fd(const udp_peer_t *p)
{
    return p->pair ? p->sfd : udp_state.fd;
}

/* One scattered receive for p: datagrams taken (>= 0), or -1 when none
 * waited. */
static int direct_recv(udp_peer_t *p, uint64_t *now)
{
    udp_state_t *u = &udp_state;
    size_t seg = p->rx_seg, unit = UDP_HDR + seg;
    uint64_t k = p->cur_left / seg;
    char *base = p->cur_dst;
    struct iovec *iov = u->diov;
    uint8_t *tail = u->riov[0].iov_base, *line = u->riov[1].iov_base;
    int niov = 0, got = 0;

    if (k > UDP_GSO_SEGS)
        k = UDP_GSO_SEGS;
    for (uint64_t i = 0; i < k; i++) {
        iov[niov].iov_base = u->dhdr[i];
        iov[niov++].iov_len = UDP_HDR;
        iov[niov].iov_base = base + i * seg;
        iov[niov++].iov_len = seg;
    }
    iov[niov].iov_base = tail;
    iov[niov++].iov_len = u->riov[0].iov_len;
    struct msghdr mh = {
        .msg_name = &u->rfrom[0],
        .msg_namelen = sizeof(u->rfrom[0]),
        .msg_iov = iov,
        .msg_iovlen = (size_t)niov,
        .msg_control = u->rctl[0].buf,
        .msg_controllen = sizeof(u->rctl[0]),
    };
    ssize_t r = wire_recvmsg(rx_fd(p), &mh, MSG_DONTWAIT);
    if (r < 0) {
        if (errno != EAGAIN && errno != EINTR)
            udp_errqueue(); /* an ICMP error was pending */
        return -1;
    }
    *now = base_time_ns();
    if (mh.msg_flags & MSG_TRUNC) {
        (void)reject("longer than any datagram of this job", &u->rfrom[0]);
        return 1;
    }
    size_t n = (size_t)r, g = gro_size(&mh, n);
    if (g != n ? g != unit : n > unit) {
        /* Not cut as predicted (the sender's datagrams are of another
         * size now): the bytes, in order, into one buffer, and from there
         * as usual; the size is learnt again. */
        size_t at = 0;
        for (int i = 0; i < niov && at < n; i++) {
            size_t c = n - at < iov[i].iov_len ? n - at : iov[i].iov_len;
            memcpy(line + at, iov[i].iov_base, c);
            at += c;
        }
        p->rx_seg = 0;
        on_datagrams(line, n, g, &u->rfrom[0], *now);
        return (int)((n + g - 1) / g);
    }
    size_t off = 0;
    for (uint64_t i = 0; i < k && off < n; i++, got++) {
        size_t len = n - off < unit ? n - off : unit;
        if (len < UDP_HDR) {
            (void)reject("shorter than a header", &u->rfrom[0]);
            return got + 1;
        }
        on_datagram(u->dhdr[i], (const uint8_t *)base + i * seg, len,
                    &u->rfrom[0], *now);
        off += len;
    }
    if (off < n) {
        on_datagrams(tail, n - off, unit, &u->rfrom[0], *now);
        got += (int)((n - off + unit - 1) / unit);
    }
    return got;
}

/* The n buffers recvmmsg filled (grow), or recv_one. */
static void take_batch(int n, int grow, uint64_t now)
{
    udp_state_t *u = &udp_state;

    for (int i = 0; i < n; i++) {
        if (u->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
            (void)reject("longer than any datagram of this job",
                         &u->rfrom[i]);
            continue;
        }
        on_buffer(&u->rmsg[i], grow, now);
    }
}

/*
 * A peer's port answered ICMP port unreachable: what it sent before it
 * went arrived before that answer (to a datagram sent after), and may wait
 * in the socket still (an error pending on a socket is returned before its
 * data).  It is read and delivered first, so its last frames are not lost
 * to the report of its death: a barrier it finished, a last reply.
 */
static void drain_fd(int fd, uint64_t *now)
{
    udp_state_t *u = &udp_state;

    for (int round = 0; round < 64; round++) {
        for (int i = 0; i < UDP_RX_BATCH; i++) {
            u->rmsg[i].msg_hdr.msg_namelen = sizeof(u->rfrom[i]);
            u->rmsg[i].msg_hdr.msg_controllen = sizeof(u->rctl[i]);
        }
        int n = wire_recvmmsg(fd, u->rmsg, UDP_RX_BATCH, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) {
            if (errno != EINTR)
                udp_errqueue(); /* another error: read, then on */
            continue;
        }
        if (n == 0)
            return;
        *now = base_time_ns();
        take_batch(n, 1, *now);
    }
}

static void closed_drain(uint64_t *now)
{
    udp_state_t *u = &udp_state;

    drain_fd(u->fd, now);
    for (int i = 0; i < u->npair; i++)
        drain_fd(u->pair_fd[i], now);
}

/*
 * Read fd (owner: the peer whose pair socket it is, or NULL): batches
 * until one comes short (POLL_BATCHES at most), or the scattered receive
 * of a long frame's payload when its peer's datagrams arrive here.  Adds
 * the datagrams taken to *got, and to *took the receives that returned
 * any.
 */
static void read_fd(int fd, udp_peer_t *owner, uint64_t *now, int *took,
                    int *got)
{
    udp_state_t *u = &udp_state;

    for (int b = 0; b < POLL_BATCHES; b++) {
        /* After a quiet poll, when the last batch that took anything took
         * one datagram (a ping-pong), ask for one: with a longer batch the
         * kernel looks for a second too, a fifth of a microsecond here.
         * Right after a poll that took some, and in a stream, the full
         * batch. */
        int vlen = b == 0 && u->rx_last_got == 0 && u->rx_last_batch <= 1
                       ? 1 : UDP_RX_BATCH;
        int n;
        udp_peer_t *dp = direct_peer();
        if (dp != NULL && rx_fd(dp) == fd) {
            n = direct_recv(dp, now);
            if (n < 0)
                break;
            u->rx_last_batch = 1;
            *took += n > 0 ? n : 1;
            *got += n;
            continue;
        }
        if (vlen == 1) {
            n = recv_one(u, fd, owner);
        } else {
            for (int i = 0; i < vlen; i++) {
                u->rmsg[i].msg_hdr.msg_namelen = sizeof(u->rfrom[i]);
                u->rmsg[i].msg_hdr.msg_controllen = sizeof(u->rctl[i]);
            }
            n = wire_recvmmsg(fd, u->rmsg, (unsigned)vlen, MSG_DONTWAIT);
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                udp_errqueue(); /* an ICMP error was pending */
            break;
        }
        if (n == 0)
            break;
        u->rx_last_batch = n;
        *took += n;
        *now = base_time_ns();
        take_batch(n, vlen > 1, *now);
        *got += n;
        if (u->xdp)
            udp_xdp_sock_seen(n);
        if (n < vlen || vlen == 1)
            break;
    }
}

/* With pair sockets, whether this poll reads the data socket too. */
static int data_due(udp_state_t *u)
{
    if (u->npair == 0 || u->nopen > u->npair || u->data_hot > 0)
        return 1;
    return ++u->data_skip % UDP_DATA_SKIP == 0;
}

int udp_poll(int budget)
{
    udp_state_t *u = &udp_state;
    uint64_t now = 0;
    int got = 0;

    (void)budget; /* every datagram's frames are delivered: its buffer is
                     reused by the next batch */
    if (BASE_UNLIKELY(atomic_load_explicit(&u->slept, memory_order_relaxed))) {
        unsigned saw = atomic_exchange_explicit(&u->slept, 0,
                                                memory_order_acquire);
        if (saw & UDP_SLEPT_WOKE) {
            udp_xdp_sock_seen(1); /* the wake may have been the socket's */
            u->data_hot = UDP_DATA_HOT;
        }
        if (saw & UDP_SLEPT_ERR)
            udp_errqueue();
    }
    if (u->xdp) {
        /* AF_XDP: its ring first (no system call); the socket now and
         * then, or at every poll while it has traffic of its own. */
        got = udp_xdp_poll();
        if (got > 0)
            now = base_time_ns();
        if (!udp_xdp_sock_due())
            goto timers;
    }
    int took = 0;
    for (int i = 0; i < u->npair; i++)
        read_fd(u->pair_fd[i], &u->peers[u->pair_rank[i]], &now, &took,
                &got);
    if (data_due(u)) {
        int before = took;
        read_fd(u->fd, NULL, &now, &took, &got);
        if (took > before)
            u->data_hot = UDP_DATA_HOT;
        else if (u->data_hot > 0)
            u->data_hot--;
    }
    u->rx_last_got = took;
    /* An ICMP error for a connected socket is queued on it, which this
     * poll does not read: look at them now and then while quiet (a peer
     * that vanished answers nothing), as a sleep would. */
    if (took == 0 && u->nconnected > 0 && ++u->quiet_polls % 64 == 0 &&
        poll(u->look_pfd, u->nconnected, 0) > 0)
        udp_errqueue();
timers:
    if (BASE_UNLIKELY(u->closed_any)) {
        if (!u->xdp)
            closed_drain(&now);
        udp_closed_report();
    }
    /* The timer pass when something changed or a deadline came: not on
     * every quiet poll of a rank that waits for an answer, which would
     * read the clock each time (5% of a ping-pong's CPU time): a quiet
     * poll looks every UDP_TIMER_LOOK, a microsecond or so late at most
     * for timers of hundreds of microseconds and more. */
    if (u->ndue > 0 && (now != 0 || u->timers_now ||
                        ++u->timer_skips % UDP_TIMER_LOOK == 0)) {
        if (now == 0)
            now = base_time_ns();
        if (u->timers_now || u->timer_at == 0 || now >= u->timer_at)
            udp_timers(now, 0);
    }
    return got;
}
