/*
 * The datagram wire's liveness: who is dead, and who only computes.
 *
 * On TCP the peer's kernel answers for a process that computes; datagrams
 * have no such helper, and a process that polls nothing acknowledges
 * nothing.  So each process runs one small thread that blocks on a
 * liveness socket of its own and answers probes (PROBE -> PROBE_ACK, both
 * tagged like every datagram).  A sender whose data waits unacknowledged
 * probes the peer's liveness socket while the peer is silent, and so does
 * a rank that sleeps waiting (check_peers) for every peer it talked to; a
 * peer whose probes stay unanswered (and that sends nothing else) for
 * SHOAL_UDP_DEAD_TIMEOUT is reported dead.  A process that computes answers
 * its probes; one that is killed, stopped (SIGSTOP stops the thread too)
 * or cut off does not.
 *
 * A killed process is usually known sooner: its host answers datagrams to
 * its closed port with ICMP port unreachable, which IP_RECVERR queues on
 * the data socket (udp_errqueue).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h> /* before linux/errqueue.h */
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp.h"

/* A silent peer is probed after this long, then this often. */
#define PROBE_AFTER_NS 200000000ull
#define PROBE_EVERY_NS 250000000ull

static pthread_t live_thread;

static void *live_main(void *arg)
{
    udp_state_t *u = arg;
    /* Read once: fixed while the thread runs. */
    int fd = u->live_fd, stop = u->live_stop_fd;
    uint32_t me = (uint32_t)u->job->rank, epoch = u->epoch;
    uint8_t key[16], buf[UDP_HDR + 64];

    memcpy(key, u->key, sizeof(key));
    for (;;) {
        struct pollfd pf[2] = {{fd, POLLIN, 0}, {stop, POLLIN, 0}};
        struct sockaddr_storage from;
        socklen_t flen = sizeof(from);
        udp_hdr_t h;
        const char *why;
        ssize_t n;

        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
                     (struct sockaddr *)&from, &flen);
        if (n < 0)
            continue;
        if (udp_hdr_decode(buf, (size_t)n, key, &h, &why) < 0 ||
            h.type != UDP_T_PROBE || h.dst != me || h.dst_epoch != epoch)
            continue; /* strangers get no answer */
        udp_hdr_t a = {.type = UDP_T_PROBE_ACK, .src = me, .dst = h.src,
                       .seq = h.seq, .src_epoch = epoch,
                       .dst_epoch = h.src_epoch};
        udp_hdr_encode(&a, key, buf);
        sendto(fd, buf, UDP_HDR, MSG_DONTWAIT | MSG_NOSIGNAL,
               (struct sockaddr *)&from, flen);
    }
    return NULL;
}

int udp_live_start(void)
{
    udp_state_t *u = &udp_state;
    int err;

    u->live_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (u->live_stop_fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "eventfd: %s", strerror(errno));
    err = pthread_create(&live_thread, NULL, live_main, u);
    if (err != 0)
        return base_err(SHOAL_ERR_SYSTEM, "liveness thread: %s",
                        strerror(err));
    u->live_started = 1;
    return SHOAL_OK;
}

void udp_live_stop(void)
{
    udp_state_t *u = &udp_state;
    uint64_t one = 1;

    if (u->live_started) {
        if (write(u->live_stop_fd, &one, sizeof(one)) != sizeof(one))
            base_warn("udp", "cannot stop the liveness thread: %s",
                      strerror(errno));
        pthread_join(live_thread, NULL);
        u->live_started = 0;
    }
    if (u->live_stop_fd >= 0)
        close(u->live_stop_fd);
    u->live_stop_fd = -1;
}

void udp_peer_lost(udp_peer_t *p, int status, const char *why)
{
    if (p->dead)
        return;
    p->dead = 1;
    base_debug("udp", "rank %d lost: %s", p->base.rank, why);
    udp_state.up.peer_failed(udp_state.up.arg, p->base.rank, status, why);
}

/* A header-only datagram of type to p's socket at to. */
static void send_bare(udp_peer_t *p, unsigned type, uint32_t seq,
                      const struct sockaddr_storage *to)
{
    udp_hdr_t h = {.type = (uint8_t)type,
                   .src = (uint32_t)udp_state.job->rank,
                   .dst = (uint32_t)p->base.rank, .seq = seq,
                   .src_epoch = udp_state.epoch, .dst_epoch = p->epoch};
    uint8_t buf[UDP_HDR];
    struct iovec iov = {buf, UDP_HDR};

    udp_hdr_encode(&h, udp_state.key, buf);
    udp_xmit(p, to, p->addr_len, &iov, 1);
}

void udp_live_probe(udp_peer_t *p)
{
    send_bare(p, UDP_T_PROBE, ++p->probe_seq, &p->live_addr);
}

/* A rank told it was taken for dead is told again at most this often. */
#define TELL_DEAD_EVERY_NS 100000000ull

void udp_live_tell_dead(udp_peer_t *p, uint64_t now)
{
    if (!base_cfg.FT || p->bye ||
        (p->told_dead_ns != 0 && now - p->told_dead_ns < TELL_DEAD_EVERY_NS))
        return;
    p->told_dead_ns = now;
    base_debug("udp", "rank %d, given up for dead, still sends: telling it",
               p->base.rank);
    send_bare(p, UDP_T_DEAD, 0, &p->addr);
}

void udp_live_told_dead(const udp_peer_t *p)
{
    if (base_cfg.FT && udp_state.up.declared_dead != NULL)
        udp_state.up.declared_dead(udp_state.up.arg, p->base.rank,
                                   "its datagram wire had given up on this "
                                   "rank: no answer to its liveness probes "
                                   "for SHOAL_UDP_DEAD_TIMEOUT");
}

void udp_live_peer(udp_peer_t *p, uint64_t now)
{
    udp_state_t *u = &udp_state;
    uint64_t since = p->heard_ns > p->wait_since ? p->heard_ns : p->wait_since;
    char why[200];

    if (p->dead || p->bye) {
        p->probe_at = 0;
        return;
    }
    if (p->probe_since != 0 && p->heard_ns >= p->probe_since)
        p->probe_since = 0; /* it answered */
    if (now < since + PROBE_AFTER_NS) {
        p->probe_at = since + PROBE_AFTER_NS;
        return;
    }
    /* Silent: probes go to its liveness socket; it is dead when none is
     * answered (nor anything else heard) for the timeout. */
    if (p->probe_since == 0)
        p->probe_since = now;
    if (u->dead_ns > 0 && now - p->probe_since >= u->dead_ns) {
        double s = (double)(now - p->probe_since) / 1e9;
        if (p->heard_ns == 0) /* not one datagram, ever */
            snprintf(why, sizeof(why), "not one datagram from it in %.1f s "
                     "of liveness probes (SHOAL_UDP_DEAD_TIMEOUT): UDP may "
                     "be blocked between the hosts (a firewall); "
                     "SHOAL_WIRES=shm,tcp uses TCP", s);
        else
            snprintf(why, sizeof(why), "no answer to liveness probes for "
                     "%.1f s (SHOAL_UDP_DEAD_TIMEOUT): dead, stopped or cut "
                     "off", s);
        udp_peer_lost(p, SHOAL_ERR_PEER_DEAD, why);
        return;
    }
    if (now >= p->probe_at) {
        udp_live_probe(p);
        p->probe_at = now + PROBE_EVERY_NS;
    }
}

static void errqueue_of(int fd)
{
    udp_state_t *u = &udp_state;

    for (;;) {
        struct sockaddr_storage to;
        char ctl[512];
        uint8_t data[UDP_HDR];
        struct iovec iov = {data, sizeof(data)};
        struct msghdr mh = {.msg_name = &to, .msg_namelen = sizeof(to),
                            .msg_iov = &iov, .msg_iovlen = 1,
                            .msg_control = ctl, .msg_controllen = sizeof(ctl)};
        struct cmsghdr *c;

        if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            return;
        for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
            const struct sock_extended_err *e = (const void *)CMSG_DATA(c);
            if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                  (c->cmsg_level == SOL_IPV6 &&
                   c->cmsg_type == IPV6_RECVERR)))
                continue;
            /* A first-contact probe refused (a firewall that rejects,
             * or no process there): the path is blocked. */
            for (int r = 0; r < u->job->size; r++) {
                udp_peer_t *p = &u->peers[r];
                if (p->path == UDP_PATH_PROBING &&
                    (udp_addr_equal(&to, &p->addr) ||
                     udp_addr_equal(&to, &p->live_addr)))
                    udp_path_refused(p, (int)e->ee_errno);
            }
            if (e->ee_errno != ECONNREFUSED)
                continue; /* unreachable hosts: the timeout judges */
            /* The port of a peer is closed: its process is gone. */
            for (int r = 0; r < u->job->size; r++) {
                udp_peer_t *p = &u->peers[r];
                if (p->open && !p->dead &&
                    (udp_addr_equal(&to, &p->addr) ||
                     udp_addr_equal(&to, &p->live_addr))) {
                    if (!p->bye) {
                        p->closed = 1;
                        u->closed_any = 1;
                    } else
                        p->dead = 1; /* finalized and gone: nothing to
                                        resend to it */
                }
            }
        }
    }
}

void udp_closed_report(void)
{
    udp_state_t *u = &udp_state;

    if (!u->closed_any)
        return;
    u->closed_any = 0;
    for (int r = 0; r < u->job->size; r++) {
        udp_peer_t *p = &u->peers[r];
        if (p->closed && !p->dead && !p->bye)
            udp_peer_lost(p, SHOAL_ERR_PEER_DEAD,
                          "its port is closed (ICMP port unreachable): the "
                          "process is gone");
        p->closed = 0;
    }
}

void udp_errqueue(void)
{
    udp_state_t *u = &udp_state;

    errqueue_of(u->fd);
    for (int r = 0; r < u->job->size && u->nconnected > 0; r++)
        if (u->peers[r].sfd >= 0) /* a dead peer's too: emptied, its
                                     socket stops waking the sleep */
            errqueue_of(u->peers[r].sfd);
}
