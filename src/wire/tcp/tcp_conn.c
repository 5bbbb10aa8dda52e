/*
 * TCP connections: connecting, accepting, the handshake (authentication
 * and the choice between crossing connects), and failures.
 *
 * Handshake, initiator I and acceptor A (64-byte messages, tcp_frame.c):
 *   I -> A  HELLO      I, A, nonce_i
 *   A -> I  CHALLENGE  A, I, nonce_a, mac('A', nonces, ranks)
 *   I -> A  PROOF      mac('I', nonces, ranks)
 *   A -> I  VERDICT    1: this socket carries the pair's frames; 0: close
 * A decides alone, so both sides agree: it refuses when it already has an
 * open connection to I, or when it is itself connecting to I and has the
 * lower rank (the lower rank's own connection wins); when it accepts while
 * connecting to I itself (so I has the lower rank), it abandons its own
 * attempt, which I refuses or sees closed.  Frames wait in the peer's queue
 * until a socket is open, so none is lost whichever socket wins.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

/* How long connect waits for the connection to complete before it goes
 * on without (the handshake then starts from progress). */
#define CONNECT_WAIT_MS 10
/* Connections to one peer closed during their handshake before it is
 * reported unreachable. */
#define TCP_CONNECT_ATTEMPTS 3
/* Once a peer said a valid HELLO, it may take this many times longer:
 * it is probably a rank busy elsewhere, not a prober. */
#define HS_HELLO_GRACE 10

/* ---- sockets ------------------------------------------------------------------ */

int tcp_epoll_set(int op, int fd, uint32_t events, void *tag)
{
    struct epoll_event ev = {.events = events, .data.ptr = tag};

    if (epoll_ctl(tcp_state.epfd, op, fd, &ev) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "epoll_ctl: %s", strerror(errno));
    return SHOAL_OK;
}

static void nonce_fill(uint8_t *n)
{
    if (getrandom(n, TCP_NONCE, 0) != (ssize_t)TCP_NONCE)
        base_fatal("getrandom failed: %s", strerror(errno));
}

static void hs_remove(tcp_sock_t *s)
{
    tcp_state_t *t = &tcp_state;

    if (s->hs_index < 0)
        return;
    t->hs[s->hs_index] = t->hs[--t->nhs];
    t->hs[s->hs_index]->hs_index = s->hs_index;
    s->hs_index = -1;
}

static tcp_sock_t *sock_new(int fd, int initiator, int peer, int state)
{
    tcp_state_t *t = &tcp_state;
    tcp_sock_t *s;

    if (t->nhs == t->hs_cap) {
        int cap = t->hs_cap * 2;
        tcp_sock_t **hs = realloc(t->hs, (size_t)cap * sizeof(*hs));
        if (hs == NULL)
            return NULL;
        t->hs = hs;
        t->hs_cap = cap;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->fd = fd;
    s->initiator = initiator;
    s->peer = peer;
    s->state = state;
    s->started = base_time_ns();
    nonce_fill(s->nonce_me);
    s->hs_index = t->nhs;
    t->hs[t->nhs++] = s;
    return s;
}

void tcp_sock_close(tcp_sock_t *s)
{
    tcp_state_t *t = &tcp_state;

    if (s->state == TCP_S_CLOSED)
        return;
    epoll_ctl(t->epfd, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    hs_remove(s);
    if (s->initiator && s->peer >= 0 && t->peers[s->peer].out == s)
        t->peers[s->peer].out = NULL;
    if (s->peer >= 0 && t->peers[s->peer].sock == s) {
        tcp_peer_t *p = &t->peers[s->peer];
        p->sock = NULL;
        if (t->hot == p)
            t->hot = NULL;
        t->npollout -= p->pollout;
        t->nbacklog -= p->backlog;
        p->pollout = p->backlog = 0;
        t->nopen--;
    }
    /* Freed at the end of the poll: an event for it may still be queued. */
    s->state = TCP_S_CLOSED;
    s->fd = -1;
    s->next_dead = t->graveyard;
    t->graveyard = s;
}

void tcp_reap(void)
{
    tcp_state_t *t = &tcp_state;

    while (t->graveyard != NULL) {
        tcp_sock_t *s = t->graveyard;
        t->graveyard = s->next_dead;
        free(s);
    }
}

/* Describe who is at the other end (for logs). */
static void sock_who(const tcp_sock_t *s, char *out, size_t cap)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    char ip[INET_ADDRSTRLEN] = "?";

    if (s->fd >= 0 && getpeername(s->fd, (struct sockaddr *)&sa, &len) == 0)
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    if (s->peer >= 0)
        snprintf(out, cap, "%s:%u (says rank %d)", ip,
                 (unsigned)ntohs(sa.sin_port), s->peer);
    else
        snprintf(out, cap, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
}

/* The question tcp_peer_broken asked found no live peer to answer it
 * (refused, closed, unanswered): the peer is lost as its connection said. */
static void ask_failed(tcp_peer_t *p)
{
    p->asking = 0;
    tcp_peer_lost(p, SHOAL_ERR_PEER_DEAD, p->ask_why);
}

/* Our connection attempt s ended (refused, or broke off): closed, and its
 * rank unreachable unless another connection to it is open or coming. */
static void sock_give_up(tcp_sock_t *s, const char *why)
{
    tcp_state_t *t = &tcp_state;
    int peer = s->initiator ? s->peer : -1;

    tcp_sock_close(s);
    if (peer >= 0 && t->peers[peer].asking) {
        ask_failed(&t->peers[peer]);
        return;
    }
    /* Our own way to that rank failed: it is unreachable unless another
     * connection to it is open or coming. */
    if (peer >= 0 && t->peers[peer].sock == NULL && !t->peers[peer].dead) {
        char msg[160];
        snprintf(msg, sizeof(msg), "cannot connect to rank %d: %s", peer, why);
        t->peers[peer].dead = 1;
        t->up.peer_failed(t->up.arg, peer, SHOAL_ERR_PEER_UNREACHABLE, msg);
    }
}

/* A connection that broke the protocol: logged, counted, closed. */
static void sock_drop(tcp_sock_t *s, const char *why)
{
    char who[96];

    sock_who(s, who, sizeof(who));
    wire_stats.dropped++;
    base_error("tcp", "refused a connection %s %s: %s",
               s->initiator ? "to" : "from", who, why);
    sock_give_up(s, why);
}

static int hs_send(tcp_sock_t *s, const tcp_hs_t *h)
{
    uint8_t buf[TCP_HS_SIZE];

    tcp_hs_encode(h, buf);
    /* A fresh socket's send buffer takes 64 bytes at once. */
    return send(s->fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT) ==
                   (ssize_t)sizeof(buf)
               ? SHOAL_OK
               : SHOAL_ERR_SYSTEM;
}

/* ---- open connections ----------------------------------------------------------- */

/* Every endpoint's segment, none included: the peer waits for them. */
static void send_segments(tcp_peer_t *p)
{
    for (unsigned ep = 0; ep < WIRE_MAX_EPS; ep++) {
        wire_frame_t f = {.type = WIRE_FRAME_SEG, .ep = (uint8_t)ep, .nargs = 1};
        f.args[0] = tcp_state.my_segs[ep].size;
        if (tcp_send_ctl(p, &f) != SHOAL_OK)
            base_warn("tcp", "no room to tell rank %d about segment %u",
                      p->base.rank, ep);
    }
}

static int establish(tcp_peer_t *p, tcp_sock_t *s)
{
    tcp_state_t *t = &tcp_state;

    if (p->q == NULL)
        p->q = malloc(t->q_cap);
    if (p->rx == NULL) {
        p->rx_cap = t->q_cap / 2 + WIRE_FRAME_HDR_MAX + 64;
        p->rx = malloc(p->rx_cap);
    }
    if (p->q == NULL || p->rx == NULL) {
        sock_drop(s, "out of memory for its buffers");
        return SHOAL_ERR_NOMEM;
    }
    hs_remove(s);
    if (p->out == s)
        p->out = NULL;
    s->state = TCP_S_OPEN;
    p->sock = s;
    t->nopen++;
    wire_stats.connections++;
    base_debug("tcp", "connection to rank %d open (%s), %llu bytes queued",
               p->base.rank, s->initiator ? "we called" : "it called",
               (unsigned long long)(p->q_tail - p->q_head));
    send_segments(p);
    tcp_update_pollout(p);
    return tcp_flush(p);
}

/* ---- connecting ------------------------------------------------------------------ */

static int peer_addr(int rank, struct sockaddr_in *sa)
{
    char text[64], *colon;
    size_t len = 0;
    int status = boot_get(rank, "tcp", text, sizeof(text) - 1, &len);

    if (status != SHOAL_OK)
        return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                        "rank %d published no TCP address", rank);
    text[len] = '\0';
    colon = strrchr(text, ':');
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    if (colon == NULL)
        return base_err(SHOAL_ERR_PROTOCOL, "rank %d: bad TCP address %s",
                        rank, text);
    *colon = '\0';
    sa->sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, text, &sa->sin_addr) != 1)
        return base_err(SHOAL_ERR_PROTOCOL, "rank %d: bad TCP address %s",
                        rank, text);
    return SHOAL_OK;
}

static void connected(tcp_sock_t *s);

/*
 * Options of every socket: no Nagle delay, and a bound on how long a link
 * may stay silent.  A link that goes down without a FIN or RST (a cable, a
 * host that froze) is otherwise noticed only after the kernel's
 * retransmissions give up, some 15 minutes.  An idle connection gets
 * keepalive: the first probe after idle seconds, then cnt - 1 more every
 * intvl, and the end intvl after the last, idle + cnt * intvl = the bound
 * in whole seconds.  At least 3 s: the options take whole seconds, and
 * cnt is at least 2, so that one lost answer ends nothing (Linux answers
 * such out-of-window probes at most every 500 ms per socket; with a 2 s
 * bound and cnt 1 a live connection was once ended, cause not pinned
 * down).  The peer's kernel answers the probes even while its process
 * computes, and a silent link ends the connection with ETIMEDOUT, whose
 * error wakes or fails the rank's next poll (tcp_lost_why names it).
 * The kernel runs no keepalive while data is outstanding:
 * those connections are judged in user space (tcp_live.c).
 *
 * No TCP_USER_TIMEOUT, on purpose: Linux applies it to a closed window as
 * well, ending the connection to a peer that only computes (and so reads
 * nothing) for the bound although its kernel answers every window probe.
 * Without it the kernel gives up only after tcp_retries2 retransmissions
 * or unanswered probes in a row (about 15 minutes); answered probes never
 * end a connection.  Any last-resort value would still end a rank that
 * computes longer than it while a peer sends to it.
 * docs/TCP.md, "A silent link", has the measured times.
 */
static void tune_socket(int fd)
{
    uint64_t ms = (uint64_t)base_cfg.TCP_DEAD_TIMEOUT / 1000000u;
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ms == 0)
        return;
    uint64_t s = (ms + 999) / 1000;
    if (s < 3)
        s = 3;
    if (s > 32767)
        s = 32767; /* the kernel's limit on TCP_KEEPIDLE and TCP_KEEPINTVL */
    int intvl = s / 6 > 0 ? (int)(s / 6) : 1;
    int cnt = (int)((s - 1) / (uint64_t)intvl);
    if (cnt > 3)
        cnt = 3;
    int idle = (int)s - cnt * intvl;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int start_connect(tcp_peer_t *p)
{
    struct sockaddr_in sa;
    int fd, status = peer_addr(p->base.rank, &sa);
    tcp_sock_t *s;

    if (status != SHOAL_OK)
        return status;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "socket: %s", strerror(errno));
    tune_socket(fd);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                        "cannot connect to rank %d: %s", p->base.rank,
                        strerror(e));
    }
    s = sock_new(fd, 1, p->base.rank, TCP_S_CONNECTING);
    if (s == NULL) {
        close(fd);
        return base_err(SHOAL_ERR_NOMEM, "a connection to rank %d",
                        p->base.rank);
    }
    status = tcp_epoll_set(EPOLL_CTL_ADD, fd, EPOLLOUT, s);
    if (status != SHOAL_OK) {
        tcp_sock_close(s);
        return status;
    }
    p->out = s;
    /* Say HELLO now if the connection completes at once (it does within a
     * host or a LAN): the acceptor times out a silent connection, and we
     * may not poll again soon. */
    struct pollfd pfd = {fd, POLLOUT, 0};
    if (poll(&pfd, 1, CONNECT_WAIT_MS) == 1) {
        connected(s);
        if (p->dead)
            return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                            "cannot connect to rank %d", p->base.rank);
    }
    return SHOAL_OK;
}

int tcp_connect(int rank, wire_conn_t **conn_p)
{
    tcp_peer_t *p = &tcp_state.peers[rank];
    int status;

    if (p->dead)
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", rank);
    if (p->q == NULL && (p->q = malloc(tcp_state.q_cap)) == NULL)
        return base_err(SHOAL_ERR_NOMEM, "send queue to rank %d", rank);
    p->wanted = 1;
    if (p->sock == NULL && p->out == NULL) {
        status = start_connect(p);
        if (status != SHOAL_OK)
            return status;
    }
    *conn_p = &p->base;
    return SHOAL_OK;
}

int tcp_connecting(void)
{
    int n = 0;

    for (int r = 0; r < tcp_state.job->size; r++)
        n += tcp_state.peers[r].wanted && tcp_state.peers[r].sock == NULL &&
             !tcp_state.peers[r].dead;
    return n;
}

/* ---- accepting -------------------------------------------------------------------- */

void tcp_accept_all(void)
{
    tcp_state_t *t = &tcp_state;

    for (;;) {
        int fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        tcp_sock_t *s;

        if (fd < 0)
            return; /* EAGAIN, or a connection that vanished */
        /* Bound the sockets strangers can hold open. */
        if (t->nhs >= 2 * t->job->size + 64 ||
            (s = sock_new(fd, 0, -1, TCP_S_HELLO)) == NULL) {
            wire_stats.dropped++;
            base_error("tcp", "refused a connection: %d handshakes already "
                       "in progress", t->nhs);
            close(fd);
            continue;
        }
        tune_socket(fd);
        if (tcp_epoll_set(EPOLL_CTL_ADD, fd, EPOLLIN, s) != SHOAL_OK)
            tcp_sock_close(s);
    }
}

/* ---- the handshake ------------------------------------------------------------------ */

/*
 * Our connection closed before its handshake ended: the peer timed it out
 * while we did not poll, or had too many handshakes at once.  Try again, a
 * few times, unless another connection to the peer is open or coming; the
 * frames wait in the queue meanwhile.
 */
static void initiator_closed(tcp_sock_t *s)
{
    tcp_state_t *t = &tcp_state;
    tcp_peer_t *p = &t->peers[s->peer];
    char why[128];

    tcp_sock_close(s);
    if (p->sock != NULL || p->out != NULL || p->dead)
        return;
    if (p->asking) {
        ask_failed(p);
        return;
    }
    if (++p->attempts <= TCP_CONNECT_ATTEMPTS && start_connect(p) == SHOAL_OK)
        return;
    snprintf(why, sizeof(why), "cannot connect to rank %d: it closed the "
             "connection during the handshake %d times",
             p->base.rank, p->attempts);
    p->dead = 1;
    t->up.peer_failed(t->up.arg, p->base.rank, SHOAL_ERR_PEER_UNREACHABLE,
                      why);
}

/* Read the rest of one handshake message: 1 complete, 0 not yet, -1 the
 * socket was closed here. */
static int hs_read(tcp_sock_t *s, tcp_hs_t *h)
{
    const char *why = NULL;
    ssize_t n = recv(s->fd, s->buf + s->buf_len, TCP_HS_SIZE - s->buf_len,
                     MSG_DONTWAIT);
    int r;

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0) {
        /* A crossing connect the other side abandoned, or a prober. */
        char who[96];
        sock_who(s, who, sizeof(who));
        base_debug("tcp", "connection %s %s closed during the handshake",
                   s->initiator ? "to" : "from", who);
        if (s->initiator)
            initiator_closed(s);
        else
            tcp_sock_close(s);
        return -1;
    }
    s->buf_len += (size_t)n;
    r = tcp_hs_decode(s->buf, s->buf_len, h, &why);
    if (r < 0) {
        sock_drop(s, why);
        return -1;
    }
    if (r == 0)
        return 0;
    s->buf_len = 0;
    return 1;
}

static void on_hello(tcp_sock_t *s, const tcp_hs_t *h)
{
    tcp_state_t *t = &tcp_state;
    tcp_hs_t c = {.type = TCP_HS_CHALLENGE, .from = (uint32_t)t->job->rank};

    if (h->type != TCP_HS_HELLO || h->to != (uint32_t)t->job->rank ||
        h->from >= (uint32_t)t->job->size ||
        h->from == (uint32_t)t->job->rank) {
        sock_drop(s, "bad HELLO (wrong job or rank)");
        return;
    }
    s->peer = (int)h->from;
    memcpy(s->nonce_peer, h->nonce, TCP_NONCE);
    c.to = h->from;
    memcpy(c.nonce, s->nonce_me, TCP_NONCE);
    tcp_auth_mac(t->secret, 'A', s->nonce_peer, s->nonce_me, h->from,
                 c.from, c.mac);
    if (hs_send(s, &c) != SHOAL_OK) {
        tcp_sock_close(s);
        return;
    }
    s->state = TCP_S_PROOF;
}

static void on_challenge(tcp_sock_t *s, const tcp_hs_t *h)
{
    tcp_state_t *t = &tcp_state;
    uint32_t me = (uint32_t)t->job->rank;
    tcp_hs_t pr = {.type = TCP_HS_PROOF, .from = me, .to = (uint32_t)s->peer};
    uint8_t want[TCP_MAC];

    if (h->type != TCP_HS_CHALLENGE || h->from != (uint32_t)s->peer ||
        h->to != me) {
        sock_drop(s, "bad CHALLENGE");
        return;
    }
    tcp_auth_mac(t->secret, 'A', s->nonce_me, h->nonce, me, h->from, want);
    if (!tcp_auth_equal(want, h->mac)) {
        sock_drop(s, "the peer does not hold this job's secret");
        return;
    }
    memcpy(s->nonce_peer, h->nonce, TCP_NONCE);
    tcp_auth_mac(t->secret, 'I', s->nonce_me, s->nonce_peer, me, h->from,
                 pr.mac);
    if (hs_send(s, &pr) != SHOAL_OK) {
        sock_drop(s, "cannot send the proof");
        return;
    }
    s->state = TCP_S_VERDICT;
}

static void on_proof(tcp_sock_t *s, const tcp_hs_t *h)
{
    tcp_state_t *t = &tcp_state;
    int me = t->job->rank;
    tcp_peer_t *p = &t->peers[s->peer];
    tcp_hs_t v = {.type = TCP_HS_VERDICT, .from = (uint32_t)me,
                  .to = (uint32_t)s->peer};
    uint8_t want[TCP_MAC];

    if (h->type != TCP_HS_PROOF || h->from != (uint32_t)s->peer ||
        h->to != (uint32_t)me) {
        sock_drop(s, "bad PROOF");
        return;
    }
    tcp_auth_mac(t->secret, 'I', s->nonce_peer, s->nonce_me,
                 (uint32_t)s->peer, (uint32_t)me, want);
    if (!tcp_auth_equal(want, h->mac)) {
        sock_drop(s, "wrong secret (not a rank of this job)");
        return;
    }
    /* (While we ask it whether it gave us up, ours is the one.) */
    v.verdict = !p->dead && !p->bye && p->sock == NULL && !p->asking &&
                !(p->out != NULL && me < s->peer);
    /* A rank this wire gave up on that connects again lives: under
     * SHOAL_FT it must learn it was taken for dead (fail-stop). */
    if (p->dead && !p->bye && base_cfg.FT) {
        base_debug("tcp", "rank %d, given up for dead, connects again: "
                   "telling it", s->peer);
        v.verdict = TCP_VERDICT_DEAD;
        (void)hs_send(s, &v);
        tcp_sock_close(s);
        return;
    }
    if (hs_send(s, &v) != SHOAL_OK || !v.verdict) {
        base_debug("tcp", "second connection from rank %d closed (crossing "
                   "connects)", s->peer);
        tcp_sock_close(s);
        return;
    }
    if (p->out != NULL)
        tcp_sock_close(p->out); /* the lower rank's connection wins */
    tcp_epoll_set(EPOLL_CTL_MOD, s->fd, EPOLLIN, s);
    establish(p, s);
}

static void on_verdict(tcp_sock_t *s, const tcp_hs_t *h)
{
    tcp_peer_t *p = &tcp_state.peers[s->peer];

    if (h->type != TCP_HS_VERDICT || h->from != (uint32_t)s->peer) {
        sock_drop(s, "bad VERDICT");
        return;
    }
    if (h->verdict == TCP_VERDICT_DEAD && base_cfg.FT &&
        tcp_state.up.declared_dead != NULL) {
        tcp_state.up.declared_dead(tcp_state.up.arg, s->peer,
                                   "its TCP wire had given up on this rank "
                                   "(a connection broken or silent past "
                                   "SHOAL_TCP_DEAD_TIMEOUT)");
    }
    if (p->asking) {
        /* It lives and did not give us up, but the connection it ended
         * took frames with it: the pair cannot go on as it was. */
        tcp_sock_close(s);
        ask_failed(p);
        return;
    }
    if (!h->verdict || p->sock != NULL) {
        base_debug("tcp", "rank %d keeps its own connection (crossing "
                   "connects)", s->peer);
        tcp_sock_close(s);
        return;
    }
    establish(p, s);
}

static void connected(tcp_sock_t *s)
{
    tcp_hs_t h = {.type = TCP_HS_HELLO, .from = (uint32_t)tcp_state.job->rank,
                  .to = (uint32_t)s->peer};
    int err = 0;
    socklen_t len = sizeof(err);

    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0) {
        /* Not a stranger to refuse: the peer's port is closed (its process
         * is gone) or its host unreachable.  The am layer reports the rank
         * failed, once; no protocol error to log. */
        base_debug("tcp", "connect to rank %d: %s", s->peer, strerror(err));
        sock_give_up(s, strerror(err));
        return;
    }
    memcpy(h.nonce, s->nonce_me, TCP_NONCE);
    if (hs_send(s, &h) != SHOAL_OK) {
        sock_drop(s, "cannot send HELLO");
        return;
    }
    s->state = TCP_S_CHALLENGE;
    tcp_epoll_set(EPOLL_CTL_MOD, s->fd, EPOLLIN, s);
}

void tcp_hs_event(tcp_sock_t *s, uint32_t events)
{
    tcp_hs_t h;

    if (s->state == TCP_S_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            connected(s);
        return;
    }
    if (hs_read(s, &h) <= 0)
        return;
    switch (s->state) {
    case TCP_S_HELLO:
        on_hello(s, &h);
        break;
    case TCP_S_CHALLENGE:
        on_challenge(s, &h);
        break;
    case TCP_S_PROOF:
        on_proof(s, &h);
        break;
    case TCP_S_VERDICT:
        on_verdict(s, &h);
        break;
    default:
        break;
    }
}

/* Close connections from strangers that stay silent. */
void tcp_hs_expire(uint64_t now)
{
    tcp_state_t *t = &tcp_state;

    for (int i = t->nhs - 1; i >= 0; i--) {
        if (i >= t->nhs)
            continue; /* the list shrank under us */
        tcp_sock_t *s = t->hs[i];
        uint64_t limit = s->state == TCP_S_HELLO
                             ? t->hs_timeout_ns
                             : t->hs_timeout_ns * HS_HELLO_GRACE;
        /* Our own connections wait for the peer as long as it lives: a
         * rank may compute for a long time without polling.  Not when
         * asking a peer that ended our connection: one whose host went
         * away since answers nothing, and its loss is reported. */
        if (!s->initiator && now - s->started > limit)
            sock_drop(s, "no handshake in time (silent peer)");
        else if (s->initiator && t->peers[s->peer].asking &&
                 now - s->started > t->hs_timeout_ns) {
            tcp_sock_close(s);
            ask_failed(&t->peers[s->peer]);
        }
    }
}

/* ---- failures ----------------------------------------------------------------------- */

void tcp_peer_lost(tcp_peer_t *p, int status, const char *why)
{
    tcp_state_t *t = &tcp_state;
    char msg[256];

    if (p->sock != NULL)
        tcp_sock_close(p->sock);
    if (p->out != NULL)
        tcp_sock_close(p->out);
    p->asking = 0;
    if (p->dead)
        return;
    p->dead = 1;
    snprintf(msg, sizeof(msg), "connection to rank %d lost: %s", p->base.rank,
             why);
    t->up.peer_failed(t->up.arg, p->base.rank, status, msg);
}

/*
 * Under SHOAL_FT a connection the peer's side ended is not yet a death:
 * the peer's process may have died (its kernel closed the connection),
 * or its wire may have given this rank up and closed it (a link silent
 * past the peer's SHOAL_TCP_DEAD_TIMEOUT that came back before ours
 * expired).  In the second case this rank must end (fail-stop), and only
 * the peer can say so: ask with one new connection.  A dead process's
 * kernel refuses it (the loss is reported as the connection said, a
 * connect later); a live peer's wire answers the handshake, with
 * TCP_VERDICT_DEAD when it gave us up (on_verdict: this process ends).
 * A silent link (ETIMEDOUT) is not asked about: nothing would answer.
 */
void tcp_peer_broken(tcp_peer_t *p, int err, const char *why)
{
    if (!base_cfg.FT || p->dead || p->asking || err == ETIMEDOUT) {
        tcp_peer_lost(p, SHOAL_ERR_PEER_DEAD, why);
        return;
    }
    snprintf(p->ask_why, sizeof(p->ask_why), "%s", why);
    if (p->sock != NULL)
        tcp_sock_close(p->sock);
    if (p->out != NULL)
        tcp_sock_close(p->out);
    p->asking = 1;
    base_debug("tcp", "connection to rank %d ended (%s): asking it whether "
               "it gave this rank up", p->base.rank, why);
    if (start_connect(p) != SHOAL_OK && !p->dead)
        ask_failed(p);
}

void tcp_lost_why(int err, const char *op, char *why, size_t cap)
{
    if (err == ETIMEDOUT)
        /* Keepalive on an idle connection (tune_socket) gave up. */
        snprintf(why, cap, "%s%stimed out: nothing heard for "
                 "SHOAL_TCP_DEAD_TIMEOUT (%.1f s, keepalive probes "
                 "unanswered; link or host down?)",
                 op, *op ? ": " : "",
                 (double)base_cfg.TCP_DEAD_TIMEOUT / 1e9);
    else
        snprintf(why, cap, "%s%s%s (the process died or exited without "
                 "shoal_finalize)",
                 op, *op ? ": " : "",
                 err == 0 ? "end of stream" : strerror(err));
}
