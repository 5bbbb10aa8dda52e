/*
 * The datagram wire: start-up (address, sockets, the job's key, the
 * liveness thread), peers, segments, sleeping, goodbye and the ops table.
 * Sending is in udp_send.c, receiving in udp_recv.c, liveness in
 * udp_live.c; docs/DATAGRAM.md has the protocol.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "udp.h"
#include "wire/wire_frame.h"

udp_state_t udp_state;

#define UDP_SECRET 32u
/* Room for a datagram of any size (the largest UDP payload, rounded). */
#define UDP_RX_MAX 65536u
/* Kernel receive buffer asked for; the window is cut to what it got. */
#define UDP_RCVBUF (8u << 20)
/* Round-trip timeout before any sample, and its ceiling. */
#define UDP_RTO_INIT_NS 20000000ull
#define UDP_RTO_MAX_NS 1000000000ull
/* Datagrams a sender may have in flight before the first acknowledgement
 * (the window then follows the acknowledgements). */
#define UDP_CWND_INIT 64u
/* How long fini waits for its last data to be acknowledged. */
#define UDP_BYE_NS 2000000000ull

/* ---- addresses ------------------------------------------------------------ */

/* The interface's MTU, or 0. */
static int if_mtu(const char *name)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

    if (fd < 0)
        return 0;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
        mtu = ifr.ifr_mtu;
    close(fd);
    return mtu;
}

/*
 * The address to bind: SHOAL_UDP_ADDR, else the first address of the
 * family SHOAL_UDP_FAMILY on SHOAL_UDP_IF (else SHOAL_TCP_IF), else on the
 * first interface up that is not loopback, else loopback.  Also the
 * interface's MTU (0: unknown) and, for shoal-info, where it came from.
 */
static int pick_addr(struct sockaddr_storage *sa, socklen_t *len, int *mtu,
                     char *from, size_t cap)
{
    const char *addr = base_cfg.UDP_ADDR;
    const char *want = base_cfg.UDP_IF[0] ? base_cfg.UDP_IF : base_cfg.TCP_IF;
    int family = base_cfg.UDP_FAMILY == 1 ? AF_INET6 : AF_INET;
    struct ifaddrs *ifs, *i;
    const char *lo = NULL;
    int found = 0;

    memset(sa, 0, sizeof(*sa));
    *mtu = 0;
    if (addr[0] == '\0' && family == AF_INET && base_cfg.TCP_ADDR[0] != '\0')
        addr = base_cfg.TCP_ADDR; /* the TCP wire's address, as a default */
    if (addr[0] != '\0') {
        struct sockaddr_in *a4 = (void *)sa;
        struct sockaddr_in6 *a6 = (void *)sa;
        if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
            a4->sin_family = AF_INET;
            *len = sizeof(*a4);
        } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
            a6->sin6_family = AF_INET6;
            *len = sizeof(*a6);
        } else {
            return base_err(SHOAL_ERR_CONFIG, "SHOAL_UDP_ADDR=%s is not an "
                            "IPv4 or IPv6 address", addr);
        }
        snprintf(from, cap, "SHOAL_UDP_ADDR");
    }
    if (getifaddrs(&ifs) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "getifaddrs: %s", strerror(errno));
    for (i = ifs; i != NULL; i = i->ifa_next) {
        const struct sockaddr *s = i->ifa_addr;
        if (s == NULL || !(i->ifa_flags & IFF_UP))
            continue;
        if (addr[0] != '\0') {
            /* Only the MTU of the interface that has the address. */
            struct sockaddr_storage x = {0};
            memcpy(&x, s, s->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                   : sizeof(struct sockaddr_in));
            if (s->sa_family == sa->ss_family) {
                ((struct sockaddr_in *)(void *)&x)->sin_port = 0;
                if (udp_addr_equal(&x, sa)) {
                    *mtu = if_mtu(i->ifa_name);
                    break;
                }
            }
            continue;
        }
        if (s->sa_family != family)
            continue;
        if (want[0] != '\0' ? strcmp(i->ifa_name, want) != 0
                            : (i->ifa_flags & IFF_LOOPBACK) != 0) {
            if ((i->ifa_flags & IFF_LOOPBACK) && lo == NULL)
                lo = i->ifa_name;
            continue;
        }
        if (family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)(const void *)s)->sin6_addr) &&
            found)
            continue;
        memcpy(sa, s, family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                         : sizeof(struct sockaddr_in));
        *len = family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                  : sizeof(struct sockaddr_in);
        *mtu = if_mtu(i->ifa_name);
        snprintf(from, cap, "%s", i->ifa_name);
        found = 1;
        /* An IPv6 link-local address only when nothing better comes. */
        if (family == AF_INET || !IN6_IS_ADDR_LINKLOCAL(
                                     &((struct sockaddr_in6 *)(void *)sa)->sin6_addr))
            break;
    }
    if (addr[0] == '\0' && !found && want[0] == '\0' && lo != NULL) {
        for (i = ifs; i != NULL && !found; i = i->ifa_next)
            if (i->ifa_addr != NULL && i->ifa_addr->sa_family == family &&
                strcmp(i->ifa_name, lo) == 0) {
                memcpy(sa, i->ifa_addr, family == AF_INET6
                                            ? sizeof(struct sockaddr_in6)
                                            : sizeof(struct sockaddr_in));
                *len = family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                          : sizeof(struct sockaddr_in);
                *mtu = if_mtu(lo);
                snprintf(from, cap, "loopback: no other interface is up");
                found = 1;
            }
    }
    freeifaddrs(ifs);
    if (addr[0] == '\0' && !found)
        return base_err(SHOAL_ERR_CONFIG, "%s%s: no interface with an %s "
                        "address that is up",
                        want[0] ? "SHOAL_UDP_IF=" : "no interface",
                        want, family == AF_INET6 ? "IPv6" : "IPv4");
    return SHOAL_OK;
}

static void addr_text(const struct sockaddr_storage *sa, char *out, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";

    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        snprintf(out, cap, "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        snprintf(out, cap, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    }
}

static void set_port(struct sockaddr_storage *sa, uint16_t port)
{
    if (sa->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)(void *)sa)->sin_port = htons(port);
}

static uint16_t get_port(const struct sockaddr_storage *sa)
{
    return ntohs(sa->ss_family == AF_INET6
                     ? ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port
                     : ((const struct sockaddr_in *)(const void *)sa)->sin_port);
}

/* A datagram socket bound to sa (port 0: any, filled in); shared: other
 * sockets of this process may bind the same port (the connected ones:
 * 1 SO_REUSEADDR, 2 SO_REUSEPORT). */
static int sock_open(struct sockaddr_storage *sa, socklen_t len, int shared,
                     int *fd_p)
{
    int fd = socket(sa->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
    socklen_t l = len;
    int one = 1;
    char text[80];

    addr_text(sa, text, sizeof(text));
    if (fd < 0)
        return base_err(SHOAL_ERR_UNSUPPORTED, "socket(%s): %s", text,
                        strerror(errno));
    if (shared)
        setsockopt(fd, SOL_SOCKET, shared == 2 ? SO_REUSEPORT : SO_REUSEADDR,
                   &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)sa, len) != 0 ||
        getsockname(fd, (struct sockaddr *)sa, &l) != 0) {
        int e = errno;
        close(fd);
        return base_err(SHOAL_ERR_UNSUPPORTED, "cannot bind %s: %s", text,
                        strerror(e));
    }
    *fd_p = fd;
    return SHOAL_OK;
}

/* Socket options of the data socket: big buffers, no IP fragmentation
 * (a datagram that does not fit the path is refused, not split), ICMP
 * errors queued (a peer's closed port). */
static void tune(int fd, int family)
{
    int v = (int)UDP_RCVBUF, one = 1, pmtu;

    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    if (family == AF_INET6) {
        pmtu = IPV6_PMTUDISC_DO;
        setsockopt(fd, SOL_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
        setsockopt(fd, SOL_IPV6, IPV6_RECVERR, &one, sizeof(one));
    } else {
        pmtu = IP_PMTUDISC_DO;
        setsockopt(fd, SOL_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
        setsockopt(fd, SOL_IP, IP_RECVERR, &one, sizeof(one));
    }
}

static int udp_probe(char *why, size_t cap)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    char from[64], text[80];
    int mtu, fd;

    if (pick_addr(&sa, &len, &mtu, from, sizeof(from)) != SHOAL_OK) {
        snprintf(why, cap, "%s", shoal_error_detail());
        return 0;
    }
    set_port(&sa, 0);
    if (sock_open(&sa, len, 0, &fd) != SHOAL_OK) {
        snprintf(why, cap, "%s", shoal_error_detail());
        return 0;
    }
    close(fd);
    set_port(&sa, 0);
    addr_text(&sa, text, sizeof(text));
    snprintf(why, cap, "binds %s (%s, MTU %d); chosen with SHOAL_WIRES "
             "(e.g. shm,udp,tcp)", text, from, mtu);
    return 1;
}

int wire_udp_xdp_probe(char *why, size_t cap)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    char from[64];
    int mtu;

    if (pick_addr(&sa, &len, &mtu, from, sizeof(from)) != SHOAL_OK) {
        snprintf(why, cap, "%s", shoal_error_detail());
        return 0;
    }
    return udp_xdp_probe(&sa, why, cap);
}

/* ---- start and stop ----------------------------------------------------------- */

static int faults_parse(void)
{
    udp_faults_t *f = &udp_state.faults;
    const char *s = base_cfg.UDP_FAULTS;

    if (s[0] == '\0')
        return SHOAL_OK;
    while (*s != '\0') {
        char name[16];
        unsigned v;
        int used = 0;
        if (sscanf(s, "%15[a-z]=%u%n", name, &v, &used) != 2 || v > 1000)
            return base_err(SHOAL_ERR_CONFIG, "SHOAL_UDP_FAULTS=%s: want "
                            "drop=N,dup=N,reorder=N (per mille)",
                            base_cfg.UDP_FAULTS);
        if (strcmp(name, "drop") == 0)
            f->drop = v;
        else if (strcmp(name, "dup") == 0)
            f->dup = v;
        else if (strcmp(name, "reorder") == 0)
            f->reorder = v;
        else
            return base_err(SHOAL_ERR_CONFIG, "SHOAL_UDP_FAULTS: unknown "
                            "fault '%s'", name);
        s += used;
        if (*s == ',')
            s++;
    }
    if (f->drop + f->dup + f->reorder > 1000)
        return base_err(SHOAL_ERR_CONFIG, "SHOAL_UDP_FAULTS: more than 1000 "
                        "per mille in all");
    f->held = malloc(UDP_RX_MAX);
    if (f->held == NULL)
        return base_err(SHOAL_ERR_NOMEM, "fault buffer");
    f->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(udp_state.job->rank + 1);
    udp_state.gso_max = 1; /* faults act on single datagrams */
    base_warn("udp", "SHOAL_UDP_FAULTS=%s: dropping, duplicating and "
              "reordering datagrams on purpose (a test aid)",
              base_cfg.UDP_FAULTS);
    return SHOAL_OK;
}

static uint32_t pow2_floor(uint64_t v)
{
    uint32_t p = 1;

    while ((uint64_t)p * 2 <= v && p < (1u << 30))
        p *= 2;
    return p;
}

/* SHOAL_UDP_XDP: the same datagrams through an AF_XDP socket where it
 * works (udp_xdp.c); else the socket path, and the log says why. */
static void xdp_setup(const struct sockaddr_storage *sa)
{
    udp_state_t *u = &udp_state;
    char why[256];

    if (!udp_xdp_start(sa, why, sizeof(why))) {
        if (base_cfg.UDP_XDP == 2)
            base_warn("udp", "SHOAL_UDP_XDP=on, but AF_XDP cannot run: %s; "
                      "the UDP socket path runs", why);
        else
            base_info("udp", "AF_XDP not used: %s", why);
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = udp_xdp_fd()};
    if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, udp_xdp_fd(), &ev) != 0) {
        base_warn("udp", "AF_XDP: epoll_ctl: %s; the UDP socket path runs",
                  strerror(errno));
        udp_xdp_stop();
        return;
    }
    u->xdp = 1;
}

/* Everything local: sockets, buffers, sizes.  Errors are this process's
 * own; the caller still takes part in the fence. */
static int local_setup(char *text, size_t cap)
{
    udp_state_t *u = &udp_state;
    struct sockaddr_storage sa, la;
    socklen_t len = sizeof(sa);
    char from[64], at[80];
    int mtu, rcvbuf = 0, status;
    socklen_t rl = sizeof(rcvbuf);
    size_t ip_hdr;

    status = pick_addr(&sa, &len, &mtu, from, sizeof(from));
    if (status != SHOAL_OK)
        return status;
    u->family = sa.ss_family;
    set_port(&sa, 0);
    la = sa;
    u->send_addr = sa;
    status = sock_open(&sa, len, 0, &u->fd);
    if (status == SHOAL_OK)
        status = sock_open(&la, len, 0, &u->live_fd);
    /* The port our connected sockets share (connected_open); without it
     * the data socket sends everything. */
    if (status == SHOAL_OK &&
        sock_open(&u->send_addr, len, 1, &u->send_fd) != SHOAL_OK)
        base_debug("udp", "no port for connected sockets: %s",
                   shoal_error_detail());
    if (u->send_fd >= 0) {
        int small = 1; /* it reads nothing: what strangers send stays small */
        setsockopt(u->send_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    }
    if (status != SHOAL_OK)
        return status;
    tune(u->fd, u->family);
    /* Pair sockets share the data port.  SO_REUSEPORT only after the bind:
     * a socket binding port 0 is never given a port another holds with
     * it unset, and later only this user's sockets asking for the port
     * by number join (the kernel checks the owner). */
    u->data_addr = sa;
    if (base_cfg.UDP_PAIRS > 0) {
        int one = 1;
        u->pairs_ok = setsockopt(u->fd, SOL_SOCKET, SO_REUSEPORT, &one,
                                 sizeof(one)) == 0;
    }
    ip_hdr = u->family == AF_INET6 ? 48 : 28;
    if (base_cfg.UDP_MTU > 0)
        mtu = (int)base_cfg.UDP_MTU;
    if (mtu <= 0)
        mtu = 1500;
    if ((size_t)mtu < ip_hdr + UDP_HDR + 512)
        return base_err(SHOAL_ERR_CONFIG, "MTU %d is too small for the "
                        "datagram wire", mtu);
    u->dgram_max = (size_t)mtu - ip_hdr;
    if (u->dgram_max > 65507)
        u->dgram_max = 65507 - (65507 % 8);
    u->mss = u->dgram_max - UDP_HDR;
    u->mss_rx = UDP_RX_MAX - UDP_HDR;
    getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &rl);
    /* The window the receive buffer can hold (the kernel counts about
     * twice the payload for small datagrams). */
    u->window_cap = pow2_floor((uint64_t)base_cfg.UDP_WINDOW);
    uint32_t fits = pow2_floor((uint64_t)rcvbuf / (2 * (u->dgram_max + 512)));
    if (fits < u->window_cap)
        u->window_cap = fits < 8 ? 8 : fits;
    u->ack_every = u->window_cap / 4 < 2 ? 2 : u->window_cap / 4;
    if (u->ack_every > 32)
        u->ack_every = 32;
    addr_text(&sa, at, sizeof(at));
    snprintf(text, cap, "%d %s %u %u %u %zu %u %u",
             u->family == AF_INET6 ? 6 : 4, at, (unsigned)get_port(&sa),
             (unsigned)get_port(&la), (unsigned)u->epoch, u->dgram_max,
             (unsigned)u->window_cap,
             u->send_fd >= 0 ? (unsigned)get_port(&u->send_addr) : 0u);
    base_debug("udp", "bound %s (%s), datagrams of %zu bytes, window %u, "
               "receive buffer %d", at, from, u->dgram_max, u->window_cap,
               rcvbuf);
    u->long_rank = -1;
    u->rxbuf = malloc((size_t)UDP_RX_BATCH * UDP_RX_MAX);
    if (u->rxbuf == NULL)
        return base_err(SHOAL_ERR_NOMEM, "datagram receive buffers");
    for (int i = 0; i < UDP_RX_BATCH; i++) {
        u->riov[i].iov_base = u->rxbuf + (size_t)i * UDP_RX_MAX;
        u->riov[i].iov_len = UDP_RX_MAX;
        u->rmsg[i].msg_hdr.msg_iov = &u->riov[i];
        u->rmsg[i].msg_hdr.msg_iovlen = 1;
        u->rmsg[i].msg_hdr.msg_name = &u->rfrom[i];
        u->rmsg[i].msg_hdr.msg_control = u->rctl[i].buf;
    }
    /* Segmentation offload: a window of datagrams in one sendmsg, and
     * coalesced ones in one receive where the kernel can. */
    u->gso_max = (uint32_t)(65507 / (UDP_HDR + u->mss));
    if (u->gso_max > UDP_GSO_SEGS)
        u->gso_max = UDP_GSO_SEGS;
    if (u->gso_max < 2 || base_cfg.UDP_GSO == 0)
        u->gso_max = 1;
    int one = 1;
    if (base_cfg.UDP_GSO != 0)
        setsockopt(u->fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    u->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (u->epfd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "epoll_create1: %s",
                        strerror(errno));
    /* The data socket stays out of it (conn_pfd); a sleep polls it. */
    u->conn_pfd[1] = (struct pollfd){.fd = u->fd, .events = POLLIN};
    if (base_cfg.UDP_XDP != 0)
        xdp_setup(&sa);
    return faults_parse();
}

static void state_free(void)
{
    udp_state_t *u = &udp_state;

    udp_live_stop();
    if (u->xdp)
        udp_xdp_stop();
    if (u->peers != NULL)
        for (int r = 0; r < u->job->size; r++) {
            udp_peer_t *p = &u->peers[r];
            if (p->slots != NULL)
                for (uint32_t i = 0; i < u->window_cap; i++)
                    free(p->slots[i].buf);
            free(p->slots);
            free(p->q);
            free(p->flight);
            free(p->rx);
            if (p->sfd >= 0)
                close(p->sfd);
        }
    if (u->fd >= 0)
        close(u->fd);
    if (u->send_fd >= 0)
        close(u->send_fd);
    if (u->live_fd >= 0)
        close(u->live_fd);
    if (u->epfd >= 0)
        close(u->epfd);
    free(u->peers);
    free(u->due);
    free(u->rxbuf);
    free(u->faults.held);
    memset(u, 0, sizeof(*u));
    u->fd = u->live_fd = u->epfd = u->live_stop_fd = u->send_fd = -1;
}

static int udp_init(const boot_info_t *job, const wire_upcalls_t *up)
{
    udp_state_t *u = &udp_state;
    uint8_t secret[UDP_SECRET];
    char text[160] = "-";
    int status, local;

    memset(u, 0, sizeof(*u));
    u->fd = u->live_fd = u->epfd = u->live_stop_fd = u->send_fd = -1;
    u->job = job;
    u->up = *up;
    u->q_cap = (uint32_t)base_cfg.UDP_QUEUE;
    u->rto_min = (uint64_t)base_cfg.UDP_RTO_MIN;
    u->rto_max = UDP_RTO_MAX_NS;
    u->ack_delay = (uint64_t)base_cfg.UDP_ACK_DELAY;
    u->dead_ns = (uint64_t)base_cfg.UDP_DEAD_TIMEOUT;
    u->path_ns = (uint64_t)base_cfg.UDP_PROBE_TIMEOUT;
    if (!base_is_pow2(u->q_cap))
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_UDP_QUEUE=%u must be a power of two", u->q_cap);
    if ((size_t)base_cfg.AM_MEDIUM_MAX > u->q_cap / 2 - WIRE_FRAME_HDR_MAX)
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_AM_MEDIUM_MAX=%lld does not fit half of "
                        "SHOAL_UDP_QUEUE=%u; raise the queue",
                        (long long)base_cfg.AM_MEDIUM_MAX, u->q_cap);
    if (getrandom(&u->epoch, sizeof(u->epoch), 0) != sizeof(u->epoch))
        return base_err(SHOAL_ERR_SYSTEM, "getrandom: %s", strerror(errno));
    u->epoch |= 1; /* never 0 */
    u->peers = calloc((size_t)job->size, sizeof(*u->peers));
    u->due = calloc((size_t)job->size, sizeof(*u->due));
    if (u->peers == NULL || u->due == NULL) {
        status = base_err(SHOAL_ERR_NOMEM, "datagram state for %d ranks",
                          job->size);
        goto err;
    }
    for (int r = 0; r < job->size; r++) {
        u->peers[r].base.ops = &wire_udp_ops;
        u->peers[r].base.rank = r;
        u->peers[r].sfd = -1;
    }
    /* Local trouble makes this rank publish "-" (its peers then do not
     * reach it by datagrams) but it still takes part in the fence. */
    local = local_setup(text, sizeof(text));
    char detail[256] = "";
    if (local != SHOAL_OK) {
        snprintf(detail, sizeof(detail), "%s", shoal_error_detail());
        snprintf(text, sizeof(text), "-");
    }
    status = boot_put("udp", text, strlen(text));
    if (status == SHOAL_OK)
        status = wire_secret_share(u->job, "udp-secret", secret,
                                   UDP_SECRET); /* fences: addresses out */
    if (status != SHOAL_OK)
        goto err;
    if (local != SHOAL_OK) {
        status = base_err(local == SHOAL_ERR_NOMEM ? local
                                                   : SHOAL_ERR_UNSUPPORTED,
                          "%s", detail);
        goto err;
    }
    memcpy(u->key, secret, sizeof(u->key));
    status = udp_live_start();
    if (status != SHOAL_OK)
        goto err;
    return SHOAL_OK;

err:
    state_free();
    return status;
}

/* ---- peers ------------------------------------------------------------------- */

/* Read rank's entry; 1 when its datagram wire is up (p filled), else 0. */
int udp_peer_known(udp_peer_t *p)
{
    udp_state_t *u = &udp_state;
    char text[160], ip[64];
    size_t len = 0;
    unsigned fam, port, lport, epoch, window, sport;
    size_t dgram;

    if (p->reach != 0)
        return p->reach > 0;
    p->reach = -1;
    if (boot_get(p->base.rank, "udp", text, sizeof(text) - 1, &len) !=
        SHOAL_OK)
        return 0;
    text[len] = '\0';
    if (sscanf(text, "%u %63s %u %u %u %zu %u %u", &fam, ip, &port, &lport,
               &epoch, &dgram, &window, &sport) != 8 ||
        (fam == 6 ? AF_INET6 : AF_INET) != u->family || port > 65535 ||
        lport > 65535 || sport > 65535 || window < 2 || dgram <= UDP_HDR)
        return 0;
    char *colon = strrchr(ip, ':'); /* "a.b.c.d:port" or "[v6]:port" */
    if (colon != NULL)
        *colon = '\0';
    memset(&p->addr, 0, sizeof(p->addr));
    if (u->family == AF_INET6) {
        struct sockaddr_in6 *a = (void *)&p->addr;
        char *s = ip[0] == '[' ? ip + 1 : ip, *e = strchr(s, ']');
        if (e != NULL)
            *e = '\0';
        a->sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, s, &a->sin6_addr) != 1)
            return 0;
        p->addr_len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (void *)&p->addr;
        a->sin_family = AF_INET;
        if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
            return 0;
        p->addr_len = sizeof(*a);
    }
    p->live_addr = p->send_addr = p->addr;
    set_port(&p->addr, (uint16_t)port);
    set_port(&p->live_addr, (uint16_t)lport);
    /* Port 0: it sends from its data socket only (the address checks
     * then never match this one). */
    set_port(&p->send_addr, (uint16_t)sport);
    p->epoch = epoch;
    p->peer_window = window - 1;
    /* Datagrams to it no larger than either side's. */
    p->mss = (uint32_t)(dgram - UDP_HDR < u->mss ? dgram - UDP_HDR : u->mss);
    p->reach = 1;
    return 1;
}

/* A pair socket for p (SHOAL_UDP_PAIRS): bound to our data port, so p's
 * datagrams from its data port (its own pair socket for us) arrive there,
 * the connection's exact match ahead of the data socket; and the
 * kernel's early demultiplexing finds it without a route lookup, the
 * fast path a connected socket gets (docs/DATAGRAM.md).  -1 when it
 * cannot be one. */
static int pair_open(udp_peer_t *p)
{
    udp_state_t *u = &udp_state;
    struct sockaddr_storage sa = u->data_addr;
    int fd, one = 1;

    if (!u->pairs_ok || u->xdp || u->npair >= (int)base_cfg.UDP_PAIRS ||
        u->npair >= UDP_CONNECTED_MAX)
        return -1;
    if (sock_open(&sa, p->addr_len, 2, &fd) != SHOAL_OK) {
        base_debug("udp", "pair socket for rank %d: %s", p->base.rank,
                   shoal_error_detail());
        return -1;
    }
    tune(fd, u->family);
    if (base_cfg.UDP_GSO != 0)
        setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    return fd;
}

/*
 * A socket connected to p's data socket: a pair socket (pair_open), else
 * one bound to the port all of ours share for sending: the kernel keeps
 * the route of a connected socket, while sending with an address looks
 * it up again for every datagram (0.3-0.5 us on veth, docs/DATAGRAM.md).
 * p checks that our datagrams come from our data port or that one.  None
 * past UDP_CONNECTED_MAX peers, or when the kernel refuses: the data
 * socket sends with the address.
 */
static void connected_open(udp_peer_t *p)
{
    udp_state_t *u = &udp_state;
    struct sockaddr_storage sa = u->send_addr;
    int fd, pair;

    if (u->nconnected >= UDP_CONNECTED_MAX)
        return;
    fd = pair_open(p);
    pair = fd >= 0;
    if (!pair && (u->send_fd < 0 ||
                  sock_open(&sa, p->addr_len, 1, &fd) != SHOAL_OK))
        return;
    if (!pair)
        tune(fd, u->family);
    if (connect(fd, (const struct sockaddr *)&p->addr, p->addr_len) != 0) {
        base_debug("udp", "connect to rank %d: %s", p->base.rank,
                   strerror(errno));
        close(fd);
        return;
    }
    /* Not in the epoll set: a socket there wakes epoll's callback at
     * every datagram it sends (its buffer gains room), about 0.2 us of a
     * round trip here.  A closed port's ICMP error queued on it shows in
     * the quiet poll's look and wakes a sleep instead: both poll() the
     * connected sockets (udp_poll, udp_sleep). */
    u->conn_pfd[2 + u->nconnected] = (struct pollfd){
        .fd = fd, .events = pair ? POLLIN : 0, .revents = 0};
    u->look_pfd[u->nconnected] =
        (struct pollfd){.fd = fd, .events = 0, .revents = 0};
    p->sfd = fd;
    if (pair) {
        /* Read at every poll (udp_poll); in the epoll set when another
         * wire's sleep watches ours through it (udp_event_fd). */
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (u->fd_in_epoll && epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
            base_warn("udp", "epoll_ctl: %s", strerror(errno));
        p->pair = 1;
        u->pair_fd[u->npair] = fd;
        u->pair_rank[u->npair++] = p->base.rank;
    }
    __atomic_store_n(&u->nconnected, u->nconnected + 1, __ATOMIC_RELEASE);
}

int udp_peer_open(int rank, udp_peer_t **p_out)
{
    udp_state_t *u = &udp_state;
    udp_peer_t *p = &u->peers[rank];

    *p_out = p;
    if (p->open)
        return SHOAL_OK;
    if (rank == u->job->rank || !udp_peer_known(p))
        return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                        "rank %d has no datagram wire", rank);
    p->q = malloc(u->q_cap);
    p->flight = calloc(u->window_cap, sizeof(*p->flight));
    if (p->q == NULL || p->flight == NULL) {
        free(p->q);
        free(p->flight);
        p->q = NULL;
        p->flight = NULL;
        return base_err(SHOAL_ERR_NOMEM, "datagram queue for rank %d", rank);
    }
    p->cwnd = u->window_cap < UDP_CWND_INIT ? u->window_cap : UDP_CWND_INIT;
    p->ssthresh = u->window_cap;
    p->rto = UDP_RTO_INIT_NS;
    connected_open(p);
    p->open = 1;
    u->nopen++;
    wire_stats.connections++;
    /* Our segments first, in one datagram: the peer learns them before
     * any long frame. */
    for (unsigned ep = 0; ep < WIRE_MAX_EPS; ep++)
        udp_queue_ctl(p, WIRE_FRAME_SEG, (uint8_t)ep, u->my_segs[ep].size);
    udp_push(p, base_time_ns());
    return SHOAL_OK;
}

static int udp_reaches(int rank)
{
    udp_state_t *u = &udp_state;

    return rank >= 0 && rank < u->job->size && rank != u->job->rank &&
           udp_peer_known(&u->peers[rank]);
}

static int udp_connect(int rank, wire_conn_t **conn_p)
{
    udp_peer_t *p;
    int status = udp_peer_open(rank, &p);

    if (status == SHOAL_OK)
        *conn_p = &p->base;
    return status;
}

static size_t udp_max_payload(wire_conn_t *conn, unsigned cat)
{
    (void)conn;
    return cat == WIRE_CAT_SHORT ? 0 : udp_state.q_cap / 2 - WIRE_FRAME_HDR_MAX;
}

static uint64_t udp_credits(wire_conn_t *conn)
{
    udp_peer_t *p = (udp_peer_t *)conn;

    p->credits_cache = p->credits;
    return p->credits;
}

static int udp_peer_segment(wire_conn_t *conn, unsigned ep,
                            wire_segment_t *seg)
{
    udp_peer_t *p = (udp_peer_t *)conn;

    return wire_segment_of(p->segs, p->seg_known, ep, p->base.rank, p->dead,
                           seg);
}

static int udp_publish_segment(unsigned ep, const void *base, size_t size)
{
    udp_state_t *u = &udp_state;
    int status = wire_segment_set(u->my_segs, ep, base, size);

    if (status != SHOAL_OK)
        return status;
    for (int r = 0; r < u->job->size; r++) {
        udp_peer_t *p = &u->peers[r];
        if (p->open && !p->dead &&
            udp_send_ctl(p, WIRE_FRAME_SEG, (uint8_t)ep,
                         u->my_segs[ep].size) != SHOAL_OK)
            base_warn("udp", "no room to tell rank %d about segment %u", r,
                      ep);
    }
    return SHOAL_OK;
}

/* ---- sleeping ------------------------------------------------------------------ */

static uint64_t udp_timer_ns(void);

static int udp_arm(void)
{
    /* Acknowledgements and credits held back go now: peers may wait. */
    if (udp_state.ndue > 0)
        udp_timers(base_time_ns(), 1);
    /* Decided here, under the caller's lock: sleep may run outside it. */
    __atomic_store_n(&udp_state.nap_ns, udp_timer_ns(), __ATOMIC_RELAXED);
    return 0;
}

static int udp_want_space(wire_conn_t *conn)
{
    udp_peer_t *p = (udp_peer_t *)conn;

    if (p->dead || p->credits != p->credits_cache)
        return 1;
    return p->q_need > 0 &&
           udp_state.q_cap - (p->q_tail - p->q_head) >= p->q_need;
}

static uint64_t udp_timer_ns(void)
{
    uint64_t at = udp_state.timer_at, now;

    if (at == 0)
        return UINT64_MAX;
    now = base_time_ns();
    return at > now ? at - now : 0;
}

static void drain(int fd)
{
    char sink[64];

    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
}

static int udp_sleep(uint64_t timeout_ns)
{
    udp_state_t *u = &udp_state;
    uint64_t t = __atomic_load_n(&u->nap_ns, __ATOMIC_RELAXED);
    struct timespec ts;

    if (t < timeout_ns)
        timeout_ns = t;
    if (timeout_ns > 3600000000000ull)
        timeout_ns = 3600000000000ull;
    ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
    ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
    wire_stats.sleeps++;
    /* No state is touched here beyond the poll array's first entry and
     * the sleep count: a progress thread sleeps without the lock
     * (am_sleep), so what the sleep saw is left for the next poll
     * (udp_poll). */
    uint32_t nconn = __atomic_load_n(&u->nconnected, __ATOMIC_ACQUIRE);
    unsigned saw = u->xdp ? UDP_SLEPT_WOKE : 0;
    /* The epoll set, the data socket, and the connected sockets for their
     * errors (a closed port's ICMP error). */
    u->conn_pfd[0] = (struct pollfd){.fd = u->epfd, .events = POLLIN};
    int n = ppoll(u->conn_pfd, 2 + nconn, &ts, NULL);
    if (n < 0 && errno != EINTR)
        return base_err(SHOAL_ERR_SYSTEM, "ppoll: %s", strerror(errno));
    /* An error on any socket; and data on the data socket, which a poll
     * with pair sockets reads only now and then unless told. */
    for (uint32_t i = 1; n > 0 && i < 2 + nconn; i++) {
        short rev = u->conn_pfd[i].revents;
        if ((rev & POLLERR) || (rev != 0 && u->conn_pfd[i].events == 0))
            saw |= UDP_SLEPT_ERR;
        if (i == 1 && (rev & POLLIN))
            saw |= UDP_SLEPT_WOKE;
    }
    for (int i = 0; i < u->nwatch; i++)
        if (u->watch_drain[i])
            drain(u->watch[i]);
    if (saw != 0)
        atomic_fetch_or_explicit(&u->slept, saw, memory_order_release);
    return SHOAL_OK;
}

static void udp_disarm(void)
{
}

static void udp_check_peers(void)
{
    udp_state_t *u = &udp_state;
    uint64_t now = base_time_ns();

    /* Every peer talked to, busy or idle: a rank that waits for a message
     * from a dead one must learn it (TCP would see the connection end). */
    udp_errqueue();
    for (int r = 0; r < u->job->size; r++)
        if (u->peers[r].open)
            udp_live_peer(&u->peers[r], now);
    udp_timers(now, 0); /* probes due go with the timer pass */
}

static int udp_busy(void)
{
    return udp_state.ndue > 0;
}

static int udp_connecting(void)
{
    return 0; /* no handshake: the key-value store told every address */
}

/* Another wire's sleep watches ours through the epoll set, which must then
 * hold the data socket too (at the cost of epoll's callback per datagram,
 * conn_pfd): only when the datagram wire is not the first. */
static int udp_event_fd(void)
{
    udp_state_t *u = &udp_state;

    if (!u->fd_in_epoll && u->epfd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = u->fd};
        if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->fd, &ev) != 0) {
            base_warn("udp", "epoll_ctl: %s", strerror(errno));
            return -1;
        }
        for (int i = 0; i < u->npair; i++) {
            ev.data.fd = u->pair_fd[i];
            if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->pair_fd[i], &ev) != 0) {
                base_warn("udp", "epoll_ctl: %s", strerror(errno));
                return -1;
            }
        }
        u->fd_in_epoll = 1;
    }
    return u->epfd;
}

/*
 * Pair sockets cost a system call per poll each.  Worth it for a rank
 * with few peers on the wire and none in shared memory (the latency of a
 * rank alone on its host); not when it also serves shared-memory peers,
 * whose progress polls this wire as well: there one socket keeps the
 * poll one system call (2 hosts x 2 ranks, mpi_io_rw: 1.3x the TCP
 * wire's time with pair sockets, 1.06-1.15x without).
 */
static void udp_expect_peers(int n, int nshm)
{
    udp_state_t *u = &udp_state;

    if (n > (int)base_cfg.UDP_PAIRS || nshm > 0) {
        if (u->pairs_ok)
            base_debug("udp", "no pair sockets: %d peers on this wire "
                       "(SHOAL_UDP_PAIRS=%d), %d in shared memory", n,
                       (int)base_cfg.UDP_PAIRS, nshm);
        u->pairs_ok = 0;
    }
}

static int udp_side(const char *label, uint8_t key[16],
                    struct sockaddr_storage *addr)
{
    socklen_t len = sizeof(*addr);

    memset(addr, 0, sizeof(*addr));
    if (udp_state.fd < 0 ||
        getsockname(udp_state.fd, (struct sockaddr *)addr, &len) != 0)
        return base_err(SHOAL_ERR_UNSUPPORTED, "the datagram wire is not up");
    if (addr->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)addr)->sin6_port = 0;
    else
        ((struct sockaddr_in *)addr)->sin_port = 0;
    wire_side_key(udp_state.key, sizeof(udp_state.key), label, key);
    return SHOAL_OK;
}

static int udp_watch_fd(int fd, int how)
{
    udp_state_t *u = &udp_state;
    struct epoll_event ev = {
        .events = how == WIRE_WATCH_OUT ? EPOLLOUT : EPOLLIN, .data.fd = fd};

    if (fd < 0)
        return SHOAL_OK;
    if (u->nwatch == (int)(sizeof(u->watch) / sizeof(u->watch[0])))
        return base_err(SHOAL_ERR_INVALID, "too many descriptors to watch");
    if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "epoll_ctl: %s", strerror(errno));
    u->watch[u->nwatch] = fd;
    u->watch_drain[u->nwatch++] = how == WIRE_WATCH_DRAIN;
    return SHOAL_OK;
}

static int udp_unwatch_fd(int fd)
{
    udp_state_t *u = &udp_state;

    for (int i = 0; i < u->nwatch; i++)
        if (u->watch[i] == fd && fd >= 0) {
            epoll_ctl(u->epfd, EPOLL_CTL_DEL, fd, NULL);
            u->nwatch--;
            u->watch[i] = u->watch[u->nwatch];
            u->watch_drain[i] = u->watch_drain[u->nwatch];
            return SHOAL_OK;
        }
    return base_err(SHOAL_ERR_INVALID, "datagram wire: descriptor %d is not "
                    "watched", fd);
}

/* ---- goodbye -------------------------------------------------------------------- */

/* Every open peer is told we finish, and everything we sent is
 * acknowledged (or the peer is gone), or the time is up. */
static int all_acked(void)
{
    udp_state_t *u = &udp_state;

    for (int r = 0; r < u->job->size; r++) {
        udp_peer_t *p = &u->peers[r];
        if (p->open && !p->dead &&
            (p->snd_una != p->snd_nxt || p->q_sent != p->q_tail))
            return 0;
    }
    return 1;
}

static void goodbye(void)
{
    udp_state_t *u = &udp_state;
    uint64_t deadline = base_time_ns() + UDP_BYE_NS;

    for (int r = 0; r < u->job->size; r++) {
        udp_peer_t *p = &u->peers[r];
        while (p->open && !p->dead &&
               udp_send_ctl(p, WIRE_FRAME_BYE, 0, 0) == SHOAL_ERR_AGAIN &&
               base_time_ns() < deadline)
            udp_poll(UDP_RX_BATCH);
    }
    while (!all_acked() && base_time_ns() < deadline) {
        struct pollfd pfd[2] = {{.fd = u->epfd, .events = POLLIN},
                                {.fd = u->fd, .events = POLLIN}};
        struct timespec ts = {0, 1000000};
        u->data_hot = UDP_DATA_HOT; /* read it at each of these polls */
        udp_poll(UDP_RX_BATCH);
        udp_timers(base_time_ns(), 1);
        udp_errqueue();
        ppoll(pfd, 2, &ts, NULL);
    }
}

static void udp_fini(void)
{
    base_debug("udp", "datagrams resent %llu, refused %llu, dropped %llu",
               (unsigned long long)wire_stats.retransmits,
               (unsigned long long)wire_stats.rejected,
               (unsigned long long)wire_stats.dropped);
    if (udp_state.peers != NULL && udp_state.fd >= 0)
        goodbye();
    if (udp_state.nopen > 0)
        base_info("udp", "pair sockets: %d of the %d peers talked to",
                  udp_state.npair, udp_state.nopen);
    state_free();
}

const wire_ops_t wire_udp_ops = {
    .name = "udp",
    .init = udp_init,
    .fini = udp_fini,
    .reaches = udp_reaches,
    .path = udp_path,
    .connect = udp_connect,
    .send = udp_send,
    .max_payload = udp_max_payload,
    .credits = udp_credits,
    .peer_segment = udp_peer_segment,
    .publish_segment = udp_publish_segment,
    .poll = udp_poll,
    .arm = udp_arm,
    .want_space = udp_want_space,
    .sleep = udp_sleep,
    .disarm = udp_disarm,
    .check_peers = udp_check_peers,
    .probe = udp_probe,
    .busy = udp_busy,
    .connecting = udp_connecting,
    .event_fd = udp_event_fd,
    .watch_fd = udp_watch_fd,
    .unwatch_fd = udp_unwatch_fd,
    .timer_ns = udp_timer_ns,
    .side = udp_side,
    .expect_peers = udp_expect_peers,
};
