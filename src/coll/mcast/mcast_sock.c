/*
 * Sockets and groups of the multicast broadcast.  A process sends from one
 * socket bound to its network wire's address (IP_MULTICAST_IF, TTL 1: the
 * hosts of a job share a link or a switch); a rank that receives for a
 * communicator has a socket of that communicator's own, bound to the group
 * and port and joined on the same interface, so it sees that group only.
 * IPv4 or IPv6, as the network wire runs.
 * Groups and the port derive from the job id and the communicator's
 * context, which every rank knows alike: no exchange is needed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/udp.h>
#include <unistd.h>

#include "am/am.h"
#include "base/base.h"
#include "coll/mcast/mcast.h"

#define MCAST_RCVBUF (8 << 20)
#define MCAST_SNDBUF (256 << 10) /* the kernel doubles it */

static mcast_proc_t proc;

static uint64_t job_hash(uint32_t salt)
{
    char text[300];
    int n = snprintf(text, sizeof(text), "%s/%u",
                     am.job != NULL ? am.job->jobid : "", salt);
    return base_hash64(text, (size_t)n);
}

uint32_t mcast_fsize(void)
{
    int64_t mtu = base_cfg.UDP_MTU > 0 ? base_cfg.UDP_MTU : 1500;
    /* The IP header: every rank's network wire runs one family. */
    int64_t ip = mcast_proc() != NULL && proc.family == AF_INET6 ? 40 : 20;

    if (mtu < (ip == 20 ? 576 : 1280)) /* the least each IP promises */
        mtu = ip == 20 ? 576 : 1280;
    return (uint32_t)(mtu - ip - 8 - MCAST_HDR);
}

/* The index of the interface holding IPv6 address a, or 0. */
static unsigned if_of(const struct in6_addr *a)
{
    struct ifaddrs *all, *i;
    unsigned idx = 0;

    if (getifaddrs(&all) != 0)
        return 0;
    for (i = all; i != NULL && idx == 0; i = i->ifa_next)
        if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET6 &&
            memcmp(&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr,
                   a, sizeof(*a)) == 0)
            idx = if_nametoindex(i->ifa_name);
    freeifaddrs(all);
    return idx;
}

static const char *addr_text(const struct sockaddr_storage *ss, char *out,
                             size_t cap)
{
    const void *a = ss->ss_family == AF_INET6
                        ? (const void *)&((const struct sockaddr_in6 *)(
                                              const void *)ss)->sin6_addr
                        : (const void *)&((const struct sockaddr_in *)(
                                              const void *)ss)->sin_addr;
    if (inet_ntop(ss->ss_family, a, out, (socklen_t)cap) == NULL)
        snprintf(out, cap, "?");
    return out;
}

static void sockbuf(int fd, int opt_force, int opt, int size)
{

    if (setsockopt(fd, SOL_SOCKET, opt_force, &size, sizeof(size)) != 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
}

static int proc_fail(const char *what, const char *detail)
{
    snprintf(proc.why, sizeof(proc.why), "%s%s", what, detail);
    base_debug("coll", "multicast broadcast unusable: %s", proc.why);
    if (proc.tx_fd >= 0)
        close(proc.tx_fd);
    proc.tx_fd = -1;
    proc.state = -1;
    return -1;
}

/* The sending socket's interface, hop limit and loopback, per family. */
static int tx_options(void)
{
    int hops = 1, loop = base_cfg.COLL_FAKE_HOSTS > 0;
    unsigned char ttl = 1, loop4 = (unsigned char)loop;

    if (proc.family == AF_INET6) {
        if (setsockopt(proc.tx_fd, IPPROTO_IPV6, IPV6_MULTICAST_IF,
                       &proc.ifindex, sizeof(proc.ifindex)) != 0)
            return proc_fail("IPV6_MULTICAST_IF: ", strerror(errno));
        (void)setsockopt(proc.tx_fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops,
                         sizeof(hops));
        (void)setsockopt(proc.tx_fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop,
                         sizeof(loop));
        return 0;
    }
    if (setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_IF, &proc.ifaddr,
                   sizeof(proc.ifaddr)) != 0)
        return proc_fail("IP_MULTICAST_IF: ", strerror(errno));
    (void)setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl,
                     sizeof(ttl));
    (void)setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop4,
                     sizeof(loop4));
    return 0;
}

static int proc_setup(void)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char text[INET6_ADDRSTRLEN];

    proc.tx_fd = -1;
    if (am_net_side("mcast", proc.key, &ss) != SHOAL_OK)
        return proc_fail("", shoal_error_detail());
    proc.family = ss.ss_family;
    if (proc.family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)(void *)&ss;
        proc.ifindex = if_of(&a->sin6_addr);
        if (proc.ifindex == 0)
            return proc_fail("no interface holds the network wire's IPv6 "
                             "address ", addr_text(&ss, text, sizeof(text)));
        a->sin6_port = 0;
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)(void *)&ss;
        proc.ifaddr = a->sin_addr;
        a->sin_port = 0;
        len = sizeof(*a);
    }
    proc.port = base_cfg.MCAST_PORT > 0
                    ? (uint16_t)base_cfg.MCAST_PORT
                    : (uint16_t)(30000 + job_hash(0) % 30000);
    proc.tx_fd = socket(proc.family,
                        SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (proc.tx_fd < 0)
        return proc_fail("socket: ", strerror(errno));
    if (bind(proc.tx_fd, (struct sockaddr *)&ss, len) != 0)
        return proc_fail("bind: ", strerror(errno));
    if (tx_options() != 0)
        return -1;
    /* Small: UDP has no back-pressure from the queue of the interface (a
     * tbf or any full qdisc drops what overflows), except this buffer,
     * which counts what still sits in that queue. */
    sockbuf(proc.tx_fd, SO_SNDBUFFORCE, SO_SNDBUF, MCAST_SNDBUF);
    proc.gso = base_cfg.UDP_GSO != 0;
    proc.state = 1;
    base_debug("coll", "multicast broadcast: interface %s, port %u, "
               "%u-byte fragments", addr_text(&ss, text, sizeof(text)),
               proc.port, mcast_fsize());
    return 0;
}

mcast_proc_t *mcast_proc(void)
{
    if (proc.state == 0)
        proc_setup();
    return proc.state > 0 ? &proc : NULL;
}

/* m's group from the base address of the family and the hash h. */
static void group_of(mcast_comm_t *m, int family, uint64_t h)
{
    if (family == AF_INET6) {
        struct sockaddr_in6 *g = (struct sockaddr_in6 *)(void *)&m->group;
        struct in6_addr base;
        uint32_t low = (uint32_t)(h >> 32);
        if (inet_pton(AF_INET6, base_cfg.MCAST_GROUP6, &base) != 1 ||
            base.s6_addr[0] != 0xff) {
            base_warn("coll", "SHOAL_MCAST_GROUP6=%s is no IPv6 multicast "
                      "address; using ff18::5348:0:0", base_cfg.MCAST_GROUP6);
            inet_pton(AF_INET6, "ff18::5348:0:0", &base);
        }
        g->sin6_family = AF_INET6;
        g->sin6_addr = base;
        for (int i = 0; i < 4; i++)
            g->sin6_addr.s6_addr[12 + i] = (uint8_t)(low >> (24 - 8 * i));
        m->group_len = sizeof(*g);
        return;
    }
    struct sockaddr_in *g = (struct sockaddr_in *)(void *)&m->group;
    struct in_addr base;
    if (inet_aton(base_cfg.MCAST_GROUP, &base) == 0 ||
        (ntohl(base.s_addr) >> 28) != 0xe) {
        base_warn("coll", "SHOAL_MCAST_GROUP=%s is no IPv4 multicast "
                  "address; using 239.193.0.0", base_cfg.MCAST_GROUP);
        inet_aton("239.193.0.0", &base);
    }
    g->sin_family = AF_INET;
    g->sin_addr.s_addr =
        htonl((ntohl(base.s_addr) & 0xffff0000u) | (uint32_t)(h >> 48));
    m->group_len = sizeof(*g);
}

/* Set the group's port (the same field in both families). */
static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)(void *)ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)(void *)ss)->sin_port = htons(port);
}

mcast_comm_t *mcast_comm(coll_comm_t *c)
{
    mcast_comm_t *m = c->mcast;
    mcast_proc_t *p = mcast_proc();
    uint64_t h;

    if (m != NULL)
        return m;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    m->p2p = calloc((size_t)c->size, 1);
    if (m->p2p == NULL) {
        free(m);
        return NULL;
    }
    h = job_hash(c->id + 1);
    m->gid = h;
    group_of(m, p != NULL ? p->family : AF_INET, h);
    m->rx_fd = -1;
    c->mcast = m;
    return m;
}

/* Join fd to m's group on p's interface, and see that group only. */
static int join(const mcast_proc_t *p, const mcast_comm_t *m, int fd)
{
    int zero = 0;

    if (p->family == AF_INET6) {
        struct ipv6_mreq j = {
            .ipv6mr_multiaddr =
                ((const struct sockaddr_in6 *)(const void *)&m->group)
                    ->sin6_addr,
            .ipv6mr_interface = p->ifindex,
        };
        return setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_ALL, &zero,
                          sizeof(zero)) != 0 ||
               setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &j,
                          sizeof(j)) != 0 ? -1 : 0;
    }
    struct ip_mreq j = {
        .imr_multiaddr =
            ((const struct sockaddr_in *)(const void *)&m->group)->sin_addr,
        .imr_interface = p->ifaddr,
    };
    return setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero,
                      sizeof(zero)) != 0 ||
           setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &j, sizeof(j)) != 0
               ? -1 : 0;
}

int mcast_rx(mcast_proc_t *p, mcast_comm_t *m)
{
    struct sockaddr_storage at = m->group;
    char text[INET6_ADDRSTRLEN];
    int one = 1, fd;

    if (m->rx_fd >= 0 || m->rx_failed)
        return m->rx_fd;
    fd = socket(p->family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    set_port(&at, p->port);
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&at, m->group_len) != 0 ||
        join(p, m, fd) != 0) {
        base_debug("coll", "multicast group %s port %u: %s",
                   addr_text(&m->group, text, sizeof(text)), p->port,
                   strerror(errno));
        if (fd >= 0)
            close(fd);
        m->rx_failed = 1;
        return -1;
    }
    sockbuf(fd, SO_RCVBUFFORCE, SO_RCVBUF, MCAST_RCVBUF);
    if (p->gso)
        (void)setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    m->rx_fd = fd;
    return fd;
}

/* Datagrams one send may carry with UDP_SEGMENT: 64 segments, 64 KiB. */
#define GSO_SEGS 64
#define GSO_BYTES 65000

/* One sendmsg of n datagrams (iov pairs) of seg bytes each, the last
 * possibly shorter, cut by the kernel (UDP_SEGMENT); n == 1 needs none. */
static ssize_t send_gso(mcast_proc_t *p, struct sockaddr_storage *to,
                        socklen_t to_len, struct iovec *iov, int n,
                        size_t seg)
{
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_name = to, .msg_namelen = to_len,
                        .msg_iov = iov, .msg_iovlen = (size_t)(2 * n)};
    uint16_t gso = (uint16_t)seg;
    ssize_t r;

    if (n > 1) {
        struct cmsghdr *c;
        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof(ctl.buf);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(gso));
        memcpy(CMSG_DATA(c), &gso, sizeof(gso));
    }
    do
        r = sendmsg(p->tx_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r;
}

int mcast_send(mcast_proc_t *p, const mcast_comm_t *m, struct iovec *iov,
               int n)
{
    struct sockaddr_storage to = m->group;
    int sent = 0;

    set_port(&to, p->port);
    while (sent < n) {
        size_t seg = iov[2 * sent].iov_len + iov[2 * sent + 1].iov_len;
        size_t bytes = seg;
        int k = 1;
        /* Datagrams of one size go together; a shorter one ends a run. */
        while (p->gso && sent + k < n && k < GSO_SEGS &&
               bytes + seg <= GSO_BYTES) {
            size_t len = iov[2 * (sent + k)].iov_len +
                         iov[2 * (sent + k) + 1].iov_len;
            if (len > seg)
                break;
            bytes += len;
            k++;
            if (len < seg)
                break;
        }
        if (send_gso(p, &to, m->group_len, &iov[2 * sent], k, seg) < 0) {
            int e = errno;
            if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS)
                break;
            if (k > 1 && (e == EINVAL || e == EOPNOTSUPP || e == EIO)) {
                base_debug("coll", "UDP_SEGMENT refused for multicast (%s): "
                           "datagrams one by one", strerror(e));
                p->gso = 0;
                continue;
            }
            return sent > 0 ? sent : -e;
        }
        sent += k;
    }
    return sent;
}

void coll_mcast_fini(coll_comm_t *c)
{
    mcast_comm_t *m = c->mcast;

    if (m == NULL)
        return;
    if (m->watchers > 0)
        am_net_unwatch(m->rx_fd);
    if (m->rx_fd >= 0)
        close(m->rx_fd); /* leaves the group */
    free(m->p2p);
    free(m);
    c->mcast = NULL;
}
