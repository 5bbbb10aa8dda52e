/*
 * The TCP wire: start-up (the listening socket, the job's secret), segments,
 * goodbye, and the ops table.  Connections and their handshake are in
 * tcp_conn.c, the data path in tcp_xfer.c; docs/TCP.md has the protocol.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
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

tcp_state_t tcp_state;

/* The tag of the listening socket's epoll entry (watched descriptors are
 * tagged with their tcp_watch_t, peers' sockets with their tcp_sock_t). */
static char listen_tag;

/* ---- addresses --------------------------------------------------------------- */

/* The address to listen on, and (for shoal-info) where it came from. */
static int pick_addr(struct in_addr *a, char *from, size_t cap)
{
    const char *addr = base_cfg.TCP_ADDR, *want = base_cfg.TCP_IF;
    struct ifaddrs *ifs, *i;
    int found = 0;

    if (addr[0] != '\0') {
        if (inet_pton(AF_INET, addr, a) != 1)
            return base_err(SHOAL_ERR_CONFIG,
                            "SHOAL_TCP_ADDR=%s is not an IPv4 address", addr);
        snprintf(from, cap, "SHOAL_TCP_ADDR");
        return SHOAL_OK;
    }
    if (getifaddrs(&ifs) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "getifaddrs: %s", strerror(errno));
    for (i = ifs; i != NULL && !found; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            !(i->ifa_flags & IFF_UP))
            continue;
        if (want[0] != '\0' ? strcmp(i->ifa_name, want) != 0
                            : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        *a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        snprintf(from, cap, "%s", i->ifa_name);
        found = 1;
    }
    freeifaddrs(ifs);
    if (!found && want[0] != '\0')
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_TCP_IF=%s: no such interface with an IPv4 "
                        "address that is up",
                        want);
    if (!found) {
        a->s_addr = htonl(INADDR_LOOPBACK); /* one host, no network */
        snprintf(from, cap, "loopback: no other interface is up");
    }
    return SHOAL_OK;
}

static int listen_open(char *text, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    char ip[INET_ADDRSTRLEN], from[64];
    int status = pick_addr(&sa.sin_addr, from, sizeof(from));
    int fd;

    if (status != SHOAL_OK)
        return status;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "socket: %s", strerror(errno));
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = errno;
        close(fd);
        return base_err(SHOAL_ERR_SYSTEM, "cannot listen on %s: %s", ip,
                        strerror(e));
    }
    snprintf(text, cap, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    tcp_state.lfd = fd;
    return SHOAL_OK;
}

static int tcp_probe(char *why, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    char ip[INET_ADDRSTRLEN], from[64];
    int fd, ok;

    if (pick_addr(&sa.sin_addr, from, sizeof(from)) != SHOAL_OK) {
        snprintf(why, cap, "%s", shoal_error_detail());
        return 0;
    }
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
         listen(fd, 1) == 0;
    if (ok)
        snprintf(why, cap, "listens on %s (%s); ranks of other hosts, or "
                 "all with SHOAL_WIRES=tcp", ip, from);
    else
        snprintf(why, cap, "cannot listen on %s (%s): %s", ip, from,
                 strerror(errno));
    if (fd >= 0)
        close(fd);
    return ok;
}

/* ---- start and stop ------------------------------------------------------------------ */

static void state_free(void)
{
    tcp_state_t *t = &tcp_state;

    if (t->peers != NULL)
        for (int r = 0; r < t->job->size; r++) {
            tcp_peer_t *p = &t->peers[r];
            if (p->sock != NULL)
                tcp_sock_close(p->sock);
            if (p->out != NULL)
                tcp_sock_close(p->out);
            free(p->q);
            free(p->rx);
        }
    while (t->nhs > 0)
        tcp_sock_close(t->hs[0]);
    tcp_reap();
    if (t->lfd >= 0)
        close(t->lfd);
    if (t->epfd >= 0)
        close(t->epfd);
    free(t->peers);
    free(t->hs);
    free(t->due);
    memset(t, 0, sizeof(*t));
    t->lfd = t->epfd = -1;
}

static int tcp_init(const boot_info_t *job, const wire_upcalls_t *up)
{
    tcp_state_t *t = &tcp_state;
    char addr[64];
    int status;

    memset(t, 0, sizeof(*t));
    t->lfd = t->epfd = -1;
    t->job = job;
    t->up = *up;
    t->q_cap = (uint32_t)base_cfg.TCP_QUEUE;
    t->hs_timeout_ns = (uint64_t)base_cfg.TCP_HANDSHAKE_TIMEOUT;
    t->nap_max = UINT64_MAX;
    tcp_live_init();
    if (!base_is_pow2(t->q_cap))
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_TCP_QUEUE=%u must be a power of two",
                        t->q_cap);
    if ((size_t)base_cfg.AM_MEDIUM_MAX > t->q_cap / 2 - WIRE_FRAME_HDR_MAX)
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_AM_MEDIUM_MAX=%lld does not fit half of "
                        "SHOAL_TCP_QUEUE=%u; raise the queue",
                        (long long)base_cfg.AM_MEDIUM_MAX, t->q_cap);
    t->hs_cap = 16;
    t->peers = calloc((size_t)job->size, sizeof(*t->peers));
    t->due = calloc((size_t)job->size, sizeof(*t->due));
    t->hs = calloc((size_t)t->hs_cap, sizeof(*t->hs));
    if (t->peers == NULL || t->due == NULL || t->hs == NULL) {
        status = base_err(SHOAL_ERR_NOMEM, "TCP state for %d ranks",
                          job->size);
        goto err;
    }
    for (int r = 0; r < job->size; r++) {
        t->peers[r].base.ops = &wire_tcp_ops;
        t->peers[r].base.rank = r;
    }
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        status = base_err(SHOAL_ERR_SYSTEM, "epoll_create1: %s",
                          strerror(errno));
        goto err;
    }
    status = listen_open(addr, sizeof(addr));
    if (status == SHOAL_OK)
        status = tcp_epoll_set(EPOLL_CTL_ADD, t->lfd, EPOLLIN, &listen_tag);
    if (status == SHOAL_OK)
        status = boot_put("tcp", addr, strlen(addr));
    if (status == SHOAL_OK)
        status = wire_secret_share(t->job, "tcp-secret", t->secret,
                                   TCP_SECRET); /* fences: addresses out */
    if (status != SHOAL_OK)
        goto err;
    base_debug("tcp", "listening on %s", addr);
    return SHOAL_OK;

err:
    state_free();
    return status;
}

/*
 * Say goodbye on every open connection, so the peers take our EOF for an
 * orderly close, and wait (briefly) for theirs: closing with unread bytes
 * would reset the connection under a peer still reading.
 */
static void goodbye(void)
{
    tcp_state_t *t = &tcp_state;
    uint64_t deadline = base_time_ns() + 2000000000ull;
    int left = 0;

    for (int r = 0; r < t->job->size; r++) {
        tcp_peer_t *p = &t->peers[r];
        wire_frame_t bye = {.type = WIRE_FRAME_BYE};
        if (p->sock == NULL)
            continue;
        while (p->q_tail != p->q_head && base_time_ns() < deadline &&
               tcp_flush(p) == SHOAL_OK && p->sock != NULL) {
            struct pollfd pfd = {p->sock->fd, POLLOUT, 0};
            poll(&pfd, 1, 10);
        }
        if (p->sock == NULL || tcp_send_ctl(p, &bye) != SHOAL_OK ||
            tcp_flush(p) != SHOAL_OK || p->sock == NULL)
            continue;
        shutdown(p->sock->fd, SHUT_WR);
        left++;
    }
    while (left > 0 && base_time_ns() < deadline) {
        left = 0;
        for (int r = 0; r < t->job->size; r++) {
            tcp_peer_t *p = &t->peers[r];
            char sink[4096];
            ssize_t n;
            if (p->sock == NULL)
                continue;
            n = recv(p->sock->fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                tcp_sock_close(p->sock);
            else
                left++;
        }
        if (left > 0) {
            struct pollfd pfd = {t->epfd, POLLIN, 0};
            poll(&pfd, 1, 10);
        }
    }
}

static void tcp_fini(void)
{
    if (tcp_state.peers != NULL)
        goodbye();
    state_free();
}

/* The layer above sleeps in one network wire: it must wake for the other
 * wires too (their descriptors join this epoll set). */
static int tcp_watch_fd(int fd, int how)
{
    tcp_state_t *t = &tcp_state;
    tcp_watch_t *w;
    int status;

    if (fd < 0)
        return base_err(SHOAL_ERR_INVALID, "TCP wire: no descriptor to watch");
    /* A slot unwatch freed, else a new one: a slot's address is its epoll
     * tag, so slots never move. */
    for (w = t->watch; w < t->watch + t->nwatch && w->fd >= 0; w++)
        ;
    if (w == t->watch + TCP_WATCH_MAX)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "the TCP wire watches at most %d descriptors",
                        TCP_WATCH_MAX);
    w->fd = fd;
    w->drain = how == WIRE_WATCH_DRAIN;
    status = tcp_epoll_set(EPOLL_CTL_ADD, fd,
                           how == WIRE_WATCH_OUT ? EPOLLOUT : EPOLLIN, w);
    if (status != SHOAL_OK)
        w->fd = -1;
    else if (w == t->watch + t->nwatch)
        t->nwatch++;
    return status;
}

static int tcp_unwatch_fd(int fd)
{
    tcp_state_t *t = &tcp_state;

    for (int i = 0; i < t->nwatch; i++)
        if (t->watch[i].fd == fd && fd >= 0) {
            tcp_epoll_set(EPOLL_CTL_DEL, fd, 0, NULL);
            t->watch[i].fd = -1;
            while (t->nwatch > 0 && t->watch[t->nwatch - 1].fd < 0)
                t->nwatch--;
            return SHOAL_OK;
        }
    return base_err(SHOAL_ERR_INVALID, "TCP wire: descriptor %d is not "
                    "watched", fd);
}

const tcp_watch_t *tcp_watch_of(const void *tag)
{
    for (int i = 0; i < tcp_state.nwatch; i++)
        if (tag == &tcp_state.watch[i])
            return tcp_state.watch[i].fd >= 0 ? &tcp_state.watch[i] : NULL;
    return NULL;
}

static int tcp_event_fd(void)
{
    return tcp_state.epfd;
}

static int tcp_side(const char *label, uint8_t key[16],
                    struct sockaddr_storage *addr)
{
    socklen_t len = sizeof(*addr);

    memset(addr, 0, sizeof(*addr));
    if (tcp_state.lfd < 0 ||
        getsockname(tcp_state.lfd, (struct sockaddr *)addr, &len) != 0)
        return base_err(SHOAL_ERR_UNSUPPORTED, "the TCP wire is not up");
    ((struct sockaddr_in *)addr)->sin_port = 0;
    wire_side_key(tcp_state.secret, TCP_SECRET, label, key);
    return SHOAL_OK;
}

int tcp_is_listen_tag(const void *tag)
{
    return tag == &listen_tag;
}

static int tcp_reaches(int rank)
{
    return rank >= 0 && rank < tcp_state.job->size;
}

static int tcp_peer_segment(wire_conn_t *conn, unsigned ep,
                            wire_segment_t *seg)
{
    tcp_peer_t *p = (tcp_peer_t *)conn;

    return wire_segment_of(p->segs, p->seg_known, ep, p->base.rank, p->dead,
                           seg);
}

static int tcp_publish_segment(unsigned ep, const void *base, size_t size)
{
    tcp_state_t *t = &tcp_state;
    int status = wire_segment_set(t->my_segs, ep, base, size);

    if (status != SHOAL_OK)
        return status;
    for (int r = 0; r < t->job->size; r++) {
        tcp_peer_t *p = &t->peers[r];
        wire_frame_t f = {.type = WIRE_FRAME_SEG, .ep = (uint8_t)ep, .nargs = 1};
        f.args[0] = t->my_segs[ep].size;
        if (p->sock != NULL && tcp_send_ctl(p, &f) != SHOAL_OK)
            base_warn("tcp", "no room to tell rank %d about segment %u", r,
                      ep);
    }
    return SHOAL_OK;
}

static void tcp_check_peers(void)
{
    /* Deaths show as EOF, resets or (keepalive) timeouts on the sockets;
     * connections with data outstanding are judged here (tcp_live.c). */
    if (tcp_state.live_any)
        tcp_live_check(base_time_ns());
}

const wire_ops_t wire_tcp_ops = {
    .name = "tcp",
    .init = tcp_init,
    .fini = tcp_fini,
    .reaches = tcp_reaches,
    .connect = tcp_connect,
    .send = tcp_send,
    .max_payload = tcp_max_payload,
    .credits = tcp_credits,
    .peer_segment = tcp_peer_segment,
    .publish_segment = tcp_publish_segment,
    .poll = tcp_poll,
    .arm = tcp_arm,
    .want_space = tcp_want_space,
    .sleep = tcp_sleep,
    .disarm = tcp_disarm,
    .check_peers = tcp_check_peers,
    .probe = tcp_probe,
    .busy = tcp_busy,
    .connecting = tcp_connecting,
    .event_fd = tcp_event_fd,
    .watch_fd = tcp_watch_fd,
    .unwatch_fd = tcp_unwatch_fd,
    .timer_ns = tcp_timer_ns,
    .side = tcp_side,
};
