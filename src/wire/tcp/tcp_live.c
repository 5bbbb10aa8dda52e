/*
 * The TCP wire's liveness check for connections with data outstanding.
 *
 * An idle connection is watched by the kernel's keepalive (tune_socket in
 * tcp_conn.c): the peer's kernel answers the probes even while its process
 * computes, and a silent link ends the connection with ETIMEDOUT.  The
 * kernel runs no keepalive while data waits to be acknowledged or sent,
 * and on its own gives up on such a connection only after its
 * retransmissions (some 15 minutes).  TCP_USER_TIMEOUT would bound that,
 * but Linux applies it to a closed window too: a peer whose process simply
 * reads nothing for the bound (its kernel answering every window probe)
 * would be reported lost.  So the wire judges those connections here, from
 * the kernel's TCP_INFO:
 *   - data in flight (tcpi_unacked > 0) and no ACK for the bound: the
 *     peer's kernel would acknowledge it (even with its buffers full, with
 *     a zero window), so the link or the host is down;
 *   - nothing in flight but bytes not sent (tcpi_notsent_bytes: the window
 *     is closed and the kernel probes it): the peer's kernel answers each
 *     probe (tcpi_probes back to 0, tcpi_last_ack_recv refreshed) as long
 *     as it lives, however long its process computes.  Lost only when no
 *     ACK came for the bound and a probe has stayed unanswered for
 *     PROBE_GRACE_NS at least (an answer takes a round trip).
 *
 * The check runs at most every LIVE_EVERY_NS, only while some connection
 * has had data outstanding (put_frame marks the peer: one store on the
 * send path), from check_peers (a waiting rank, every SHOAL_PEER_CHECK)
 * and from every LIVE_POLL_EVERY-th TCP poll (a rank that polls without
 * blocking); one getsockopt per marked connection.  A peer whose
 * connection has nothing outstanding any more is unmarked.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_notsent_bytes */

#include "tcp.h"

#ifndef SOL_TCP
#define SOL_TCP 6
#endif

/* How long an unanswered window probe may stay so before a silent peer
 * (past the bound) is lost: answers take a round trip, and the kernel
 * resends an unanswered probe after its retransmission timeout. */
#define PROBE_GRACE_NS 1000000000ull

void tcp_live_init(void)
{
    tcp_state_t *t = &tcp_state;

    t->live_ns = (uint64_t)base_cfg.TCP_DEAD_TIMEOUT;
    t->live_at = 0;
    t->live_any = 0;
}

static void live_lost(tcp_peer_t *p, const struct tcp_info *ti,
                      uint64_t queued)
{
    char why[224];

    snprintf(why, sizeof(why),
             "timed out: nothing heard for %.1f s with %u segments "
             "unacknowledged and %llu bytes not sent (SHOAL_TCP_DEAD_TIMEOUT "
             "%.1f s; link or host down?)",
             (double)ti->tcpi_last_ack_recv / 1e3, ti->tcpi_unacked,
             (unsigned long long)ti->tcpi_notsent_bytes +
                 (unsigned long long)queued,
             (double)tcp_state.live_ns / 1e9);
    p->live_watch = 0;
    tcp_peer_lost(p, SHOAL_ERR_PEER_DEAD, why);
}

/* Judge p's open connection; 1 while it still has data outstanding. */
static int live_peer(tcp_peer_t *p, uint64_t now)
{
    tcp_state_t *t = &tcp_state;
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    uint64_t queued = p->q_tail - p->q_head;
    uint64_t bound_ms = t->live_ns / 1000000u, grace = PROBE_GRACE_NS;
    int outstanding;

    memset(&ti, 0, sizeof(ti));
    if (getsockopt(p->sock->fd, SOL_TCP, TCP_INFO, &ti, &len) != 0)
        return 1; /* the socket's error shows on its next read */
    /* Kernels before 4.6 do not fill tcpi_notsent_bytes (left 0): a
     * closed window then looks like nothing outstanding, which leaves
     * the connection to the kernel, never reports a live peer. */
    outstanding = ti.tcpi_unacked > 0 || ti.tcpi_notsent_bytes > 0 ||
                  queued > 0;
    if (!outstanding) {
        p->live_watch = 0;
        p->live_probe_at = 0;
        return 0;
    }
    if (ti.tcpi_last_ack_recv < bound_ms) {
        p->live_probe_at = 0;
        return 1;
    }
    if (ti.tcpi_unacked == 0) {
        /* The window is closed: only probes go out. */
        uint64_t ack_at = now - (uint64_t)ti.tcpi_last_ack_recv * 1000000u;

        if (ti.tcpi_probes == 0) {
            p->live_probe_at = 0; /* the last probe was answered */
            return 1;
        }
        /* The first look at this unanswered probe, or an ACK came since
         * the last look (a new probe is out): start its grace. */
        if (p->live_probe_at == 0 || ack_at > p->live_ack_at + 50000000u ||
            ack_at + 50000000u < p->live_ack_at) {
            p->live_probe_at = now;
            p->live_ack_at = ack_at;
            return 1;
        }
        if (grace > t->live_ns)
            grace = t->live_ns;
        if (now - p->live_probe_at < grace)
            return 1;
    }
    live_lost(p, &ti, queued);
    return 0;
}

void tcp_live_check(uint64_t now)
{
    tcp_state_t *t = &tcp_state;
    int any = 0;

    if (now - t->live_at < TCP_LIVE_EVERY_NS)
        return;
    t->live_at = now;
    for (int r = 0; t->live_ns > 0 && r < t->job->size; r++) {
        tcp_peer_t *p = &t->peers[r];

        if (!p->live_watch)
            continue;
        if (p->sock == NULL || p->dead || p->bye) {
            p->live_watch = 0;
            p->live_probe_at = 0;
            continue;
        }
        any |= live_peer(p, now);
    }
    /* A send from a handler run by peer_failed may have marked a peer. */
    for (int r = 0; !any && t->live_ns > 0 && r < t->job->size; r++)
        any = t->peers[r].live_watch;
    t->live_any = any;
}
