/*
 * Sockets and groups of the multicast broadcast.  A process sends from one
 * socket bound to its network wire's address (IP_MULTICAST_IF, TTL 1: the
 * hosts of a job share a link or a switch); a rank that receives for a
 * communicator has a socket of that communicator's own, bound to the group
 * and port and joined on the same interface, so it sees that group only.
 * Groups and the port derive from the job id and the communicator's
 * context, which every rank knows alike: no exchange is needed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

    if (mtu < 576)
        mtu = 576;
    return (uint32_t)(mtu - 20 - 8 - MCAST_HDR);
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

static int proc_setup(void)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    unsigned char ttl = 1, loop = base_cfg.COLL_FAKE_HOSTS > 0;

    proc.tx_fd = -1;
    if (am_net_side("mcast", proc.key, &ss) != SHOAL_OK)
        return proc_fail("", shoal_error_detail());
    if (ss.ss_family != AF_INET)
        return proc_fail("the network wire runs on IPv6; multicast broadcast "
                         "is IPv4 only", "");
    proc.ifaddr = sin->sin_addr;
    proc.port = base_cfg.MCAST_PORT > 0
                    ? (uint16_t)base_cfg.MCAST_PORT
                    : (uint16_t)(30000 + job_hash(0) % 30000);
    proc.tx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (proc.tx_fd < 0)
        return proc_fail("socket: ", strerror(errno));
    sin->sin_port = 0;
    if (bind(proc.tx_fd, (struct sockaddr *)sin, sizeof(*sin)) != 0)
        return proc_fail("bind: ", strerror(errno));
    if (setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_IF, &proc.ifaddr,
                   sizeof(proc.ifaddr)) != 0)
        return proc_fail("IP_MULTICAST_IF: ", strerror(errno));
    (void)setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl,
                     sizeof(ttl));
    (void)setsockopt(proc.tx_fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop,
                     sizeof(loop));
    /* Small: UDP has no back-pressure from the queue of the interface (a
     * tbf or any full qdisc drops what overflows), except this buffer,
     * which counts what still sits in that queue. */
    sockbuf(proc.tx_fd, SO_SNDBUFFORCE, SO_SNDBUF, MCAST_SNDBUF);
    proc.gso = base_cfg.UDP_GSO != 0;
    proc.state = 1;
    base_debug("coll", "multicast broadcast: interface %s, port %u, "
               "%u-byte fragments", inet_ntoa(proc.ifaddr), proc.port,
               mcast_fsize());
    return 0;
}

mcast_proc_t *mcast_proc(void)
{
    if (proc.state == 0)
        proc_setup();
    return proc.state > 0 ? &proc : NULL;
}

mcast_comm_t *mcast_comm(coll_comm_t *c)
{
    mcast_comm_t *m = c->mcast;
    struct in_addr base;
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
    if (inet_aton(base_cfg.MCAST_GROUP, &base) == 0 ||
        (ntohl(base.s_addr) >> 28) != 0xe) {
        base_warn("coll", "SHOAL_MCAST_GROUP=%s is no IPv4 multicast "
                  "address; using 239.193.0.0", base_cfg.MCAST_GROUP);
        inet_aton("239.193.0.0", &base);
    }
    h = job_hash(c->id + 1);
    m->gid = h;
    m->group.sin_family = AF_INET;
    m->group.sin_addr.s_addr =
        htonl((ntohl(base.s_addr) & 0xffff0000u) | (uint32_t)(h >> 48));
    m->rx_fd = -1;
    c->mcast = m;
    return m;
}

int mcast_rx(mcast_proc_t *p, mcast_comm_t *m)
{
    struct sockaddr_in at = m->group;
    struct ip_mreq join;
    int one = 1, zero = 0, fd;

    if (m->rx_fd >= 0 || m->rx_failed)
        return m->rx_fd;
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    at.sin_port = htons(p->port);
    join.imr_multiaddr = m->group.sin_addr;
    join.imr_interface = p->ifaddr;
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&at, sizeof(at)) != 0 ||
        setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero)) !=
            0 ||
        setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof(join)) !=
            0) {
        base_debug("coll", "multicast group %s port %u: %s",
                   inet_ntoa(m->group.sin_addr), p->port, strerror(errno));
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
static ssize_t send_gso(mcast_proc_t *p, struct sockaddr_in *to,
                        struct iovec *iov, int n, size_t seg)
{
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_name = to, .msg_namelen = sizeof(*to),
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
    struct sockaddr_in to = m->group;
    int sent = 0;

    to.sin_port = htons(p->port);
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
        if (send_gso(p, &to, &iov[2 * sent], k, seg) < 0) {
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
    if (m->rx_fd >= 0)
        close(m->rx_fd); /* leaves the group */
    free(m->p2p);
    free(m);
    c->mcast = NULL;
}
