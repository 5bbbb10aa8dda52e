/*
 * First contact: do datagrams pass between us and a peer, both ways?
 *
 * The key-value store says where a peer's datagram wire listens, not
 * whether a firewall between the hosts lets UDP through.  Before the am
 * layer sends a peer its first frame on this wire it asks (wire_ops_t
 * .path), and the wire answers from a probe: PROBE datagrams from the data
 * socket to the peer's liveness socket, whose thread answers at once even
 * while the peer computes (udp_live.c).  An answer proves both directions
 * (our data port to its liveness port and back); so does any datagram the
 * peer sends us first, since the peer sends only after its own probe
 * passed.  No answer within SHOAL_UDP_PROBE_TIMEOUT, or an ICMP error for
 * a probe (a firewall that rejects), and the path is blocked: the am layer
 * takes the next listed wire for that peer (TCP in shm,udp,tcp).
 *
 * A firewall separates hosts, not processes, so a host found blocked is
 * remembered: the other ranks there are blocked at once, without a probe
 * of their own.  Both sides of a pair decide from the same two directions
 * and so alike when UDP is blocked (or passes) for good; should a lossy
 * moment make them differ, each direction still runs on one wire, whose
 * own acknowledgements travel both ways.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "udp.h"

/* Probes go out this often, doubling up to the last. */
#define PATH_FIRST_NS 10000000ull
#define PATH_EVERY_MAX_NS 250000000ull

static int same_host(const struct sockaddr_storage *a,
                     const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
}

static void host_text(const udp_peer_t *p, char *buf, size_t cap)
{
    const void *ip = p->addr.ss_family == AF_INET
                         ? (const void *)&((const struct sockaddr_in *)&p->addr)
                               ->sin_addr
                         : (const void *)&((const struct sockaddr_in6 *)&p->addr)
                               ->sin6_addr;

    if (inet_ntop(p->addr.ss_family, ip, buf, (socklen_t)cap) == NULL)
        snprintf(buf, cap, "?");
}

static void describe(const udp_peer_t *p, char *why, size_t cap)
{
    char host[INET6_ADDRSTRLEN];

    if (why == NULL || cap == 0)
        return;
    host_text(p, host, sizeof(host));
    if (p->path_err != 0)
        snprintf(why, cap, "datagrams to rank %d's host %s were refused (%s): "
                 "a firewall rejects UDP between the hosts",
                 p->base.rank, host, strerror(p->path_err));
    else
        snprintf(why, cap, "no answer from rank %d's host %s to datagrams "
                 "in %.1f s (SHOAL_UDP_PROBE_TIMEOUT): UDP may be blocked "
                 "between the hosts (a firewall)",
                 p->base.rank, host,
                 (double)udp_state.path_ns / 1e9);
}

/* A host already found blocked: the reason it was, else -1. */
static int host_blocked(const udp_peer_t *p)
{
    udp_state_t *u = &udp_state;

    for (int i = 0; i < u->npath_blocked; i++)
        if (same_host(&u->path_blocked[i].addr, &p->addr))
            return u->path_blocked[i].err;
    return -1;
}

static void conclude_blocked(udp_peer_t *p, int err)
{
    udp_state_t *u = &udp_state;
    char why[256];

    p->path = UDP_PATH_BLOCKED;
    p->path_err = err;
    p->path_at = 0;
    if (host_blocked(p) >= 0)
        return;
    if (u->npath_blocked < UDP_PATH_HOSTS) {
        u->path_blocked[u->npath_blocked].addr = p->addr;
        u->path_blocked[u->npath_blocked].err = err;
        u->npath_blocked++;
    }
    /* Once per host: the next wire listed serves its ranks. */
    describe(p, why, sizeof(why));
    base_warn("udp", "%s; its ranks are reached by the next wire in "
              "SHOAL_WIRES=%s", why, base_cfg.WIRES);
}

static void send_probe(udp_peer_t *p, uint64_t now)
{
    uint64_t end = p->path_since + udp_state.path_ns;

    udp_live_probe(p);
    p->path_at = now + p->path_every < end ? now + p->path_every : end;
    p->path_every = p->path_every * 2 < PATH_EVERY_MAX_NS
                        ? p->path_every * 2
                        : PATH_EVERY_MAX_NS;
}

int udp_path(int rank, char *why, size_t cap)
{
    udp_state_t *u = &udp_state;
    udp_peer_t *p;
    uint64_t now;
    int err;

    if (rank < 0 || rank >= u->job->size || rank == u->job->rank)
        return WIRE_PATH_BLOCKED;
    p = &u->peers[rank];
    if (p->path == UDP_PATH_OK || u->path_ns == 0)
        return WIRE_PATH_OK;
    if (p->path == UDP_PATH_PROBING)
        return WIRE_PATH_PENDING;
    if (p->path == UDP_PATH_UNKNOWN && (err = host_blocked(p)) >= 0) {
        p->path = UDP_PATH_BLOCKED;
        p->path_err = err;
    }
    if (p->path == UDP_PATH_BLOCKED) {
        describe(p, why, cap);
        return WIRE_PATH_BLOCKED;
    }
    now = base_time_ns();
    p->path = UDP_PATH_PROBING;
    p->path_since = now;
    p->path_every = PATH_FIRST_NS;
    send_probe(p, now);
    udp_due(p);
    return WIRE_PATH_PENDING;
}

void udp_path_timer(udp_peer_t *p, uint64_t now)
{
    if (p->path != UDP_PATH_PROBING || now < p->path_at)
        return;
    if (now - p->path_since >= udp_state.path_ns) {
        conclude_blocked(p, 0);
        return;
    }
    send_probe(p, now);
}

void udp_path_heard(udp_peer_t *p)
{
    if (p->path == UDP_PATH_PROBING)
        base_debug("udp", "rank %d: datagrams pass both ways (first "
                   "contact, %.0f us)", p->base.rank,
                   (double)(base_time_ns() - p->path_since) / 1e3);
    if (p->path == UDP_PATH_UNKNOWN || p->path == UDP_PATH_PROBING) {
        p->path = UDP_PATH_OK;
        p->path_at = 0;
    }
}

void udp_path_refused(udp_peer_t *p, int err)
{
    if (p->path == UDP_PATH_PROBING)
        conclude_blocked(p, err != 0 ? err : ECONNREFUSED);
}
