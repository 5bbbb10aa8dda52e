/*
 * wire: transports behind one small ops table.
 *
 * A wire moves active-message frames between ranks: it never interprets
 * handlers or endpoints, it only carries them (kind, ep, handler, args,
 * payload) and hands each arriving frame to the layer above through the
 * deliver upcall.  Flow control is split: the wire says when a channel has
 * no room (SHOAL_ERR_AGAIN) and counts the requests a peer finished without
 * a reply (the credits the layer above lends); the layer above decides what
 * waits and what is queued.
 *
 * Rules every wire follows:
 *   - per (sender, receiver) pair, frames are delivered in the order sent;
 *   - send never blocks and never allocates on the small-message path;
 *   - poll delivers a frame at most once, and only from the poll caller's
 *     thread;
 *   - a frame's args and payload pointers are valid only during deliver.
 */
#ifndef SHOAL_WIRE_H
#define SHOAL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/base.h"
#include "boot/boot.h"

/* Frame kinds: a category in the low bits, flags above. */
#define WIRE_CAT_SHORT 0u
#define WIRE_CAT_MEDIUM 1u
#define WIRE_CAT_LONG 2u
#define WIRE_CAT_MASK 3u
#define WIRE_F_REPLY 0x04u    /* a reply (else a request) */
#define WIRE_F_SYSTEM 0x08u   /* for the am layer's own handlers */
#define WIRE_F_FRAGMENT 0x10u /* long data only; no handler runs */
#define WIRE_KIND_MASK 0x1fu
/* Send-side only: a long frame whose payload earlier fragments already
 * wrote; it carries no data, and len/offset describe the whole payload. */
#define WIRE_F_LANDED 0x80u

#define WIRE_MAX_ARGS 5  /* = SHOAL_AM_MAX_ARGS */
#define WIRE_MAX_EPS 16  /* endpoint indices a frame can name */

typedef struct wire_msg {
    uint8_t kind;    /* WIRE_CAT_* | WIRE_F_* */
    uint8_t ep;      /* endpoint index */
    uint8_t handler; /* handler index */
    uint8_t nargs;   /* <= WIRE_MAX_ARGS */
    uint32_t len;    /* payload bytes */
    uint64_t offset; /* long: offset in the destination's segment */
    const uint64_t *args;
    /* On send: the source bytes.  On deliver: a library buffer (medium)
     * or the destination address in the segment, already written (long). */
    const void *payload;
} wire_msg_t;

/* deliver's answer: did a request finish without a reply? */
#define WIRE_DELIVERED 0
#define WIRE_DELIVERED_NOREPLY 1

typedef struct wire_upcalls {
    /* A frame from rank src arrived; returns WIRE_DELIVERED[_NOREPLY]. */
    int (*deliver)(void *arg, int src, const wire_msg_t *msg);
    /* Rank died or became unreachable; status is a link-failure code. */
    void (*peer_failed)(void *arg, int rank, int status, const char *why);
    /* Where long frames for endpoint ep land; NULL base when none. */
    void (*segment)(void *arg, unsigned ep, void **base_p, size_t *size_p);
    void *arg;
    /*
     * Optional (NULL: none): where the payload of the medium frame msg
     * (args known, payload NULL), whose bytes arrive in pieces, is to be
     * received: a buffer of msg->len bytes of the layer above, which
     * deliver is then given as the payload, or NULL for a library buffer.
     * The wire writes only there, in any order and maybe more than once
     * before deliver, and forgets it when the frame is dropped.
     */
    void *(*place)(void *arg, int src, const wire_msg_t *msg);
    /*
     * Optional (NULL: none): rank by, which took this process for dead
     * (its wire gave up on us: a link silent past the timeout, a process
     * stopped that long), heard from us again and says so.  Fail-stop
     * (docs/FT.md): the layer above ends the process; why is the wire's
     * one-line account.
     */
    void (*declared_dead)(void *arg, int by, const char *why);
} wire_upcalls_t;

/* path's answers */
#define WIRE_PATH_BLOCKED 0
#define WIRE_PATH_OK 1
#define WIRE_PATH_PENDING 2

/* SHOAL_WIRES_FAKE_HOSTS=K (a testing aid): the pretend host of rank,
 * in blocks (r * K / size) or, with SHOAL_WIRES_FAKE_PLACE=cyclic,
 * r mod K; 0 without pretend hosts. */
int wire_fake_host(int rank, int size);

/* A connection to one peer; each wire embeds this as its first member. */
typedef struct wire_conn {
    const struct wire_ops *ops;
    int rank;
} wire_conn_t;

/* A peer's segment for one endpoint, as the sender sees it. */
typedef struct wire_segment {
    uint64_t base; /* in the peer's address space */
    uint64_t size;
} wire_segment_t;

/* watch_fd's how */
#define WIRE_WATCH_IN 0
#define WIRE_WATCH_DRAIN 1
#define WIRE_WATCH_OUT 2

typedef struct wire_ops {
    const char *name;

    /*
     * Bring the wire up.  Collective over the job (may use boot fences).
     * SHOAL_ERR_UNSUPPORTED, with a detail, when it cannot work here.
     */
    int (*init)(const boot_info_t *job, const wire_upcalls_t *up);
    /* Release everything; no call may follow but init. */
    void (*fini)(void);

    /* 1 when this wire can reach rank, else 0. */
    int (*reaches)(int rank);
    /*
     * Optional (NULL: a rank reached is a rank that hears us): whether
     * traffic passes to and from rank, asked (after reaches) before the
     * first connect.  WIRE_PATH_PENDING: a first-contact probe is out, ask
     * again after progress; WIRE_PATH_BLOCKED, with why filled: the layer
     * above takes the next wire for rank.  Never blocks.
     */
    int (*path)(int rank, char *why, size_t cap);
    /* Open (or return the open) connection to rank.  May not block. */
    int (*connect)(int rank, wire_conn_t **conn_p);

    /*
     * Send one frame: SHOAL_OK, SHOAL_ERR_AGAIN when the channel has no
     * room now (retry after progress), or an error (SHOAL_ERR_PEER_DEAD,
     * SHOAL_ERR_SEGMENT for a long frame outside the peer's segment).
     * Never blocks.  msg->len must not exceed max_payload unless the frame
     * is WIRE_F_LANDED (it then carries no data).
     */
    int (*send)(wire_conn_t *conn, const wire_msg_t *msg);
    /* Largest payload one frame of category cat may carry on conn. */
    size_t (*max_payload)(wire_conn_t *conn, unsigned cat);
    /* Cumulative count of our requests the peer finished without reply. */
    uint64_t (*credits)(wire_conn_t *conn);
    /* The peer's segment for endpoint ep (size 0 when it has none);
     * SHOAL_ERR_AGAIN while the wire has not learnt it yet (the connection
     * is still opening): retry after progress. */
    int (*peer_segment)(wire_conn_t *conn, unsigned ep, wire_segment_t *seg);
    /* Tell peers where this process's segment for ep is (NULL: none). */
    int (*publish_segment)(unsigned ep, const void *base, size_t size);

    /* Deliver arrived frames, at most budget from each channel (so one
     * busy sender cannot starve the others); returns how many (>= 0). */
    int (*poll)(int budget);

    /*
     * Blocking waits, in this order: arm() announces that the caller may
     * sleep and returns 1 when frames already wait (then do not sleep);
     * want_space(conn) asks to be woken when conn gains room or credits and
     * returns 1 when it already has; sleep() blocks until a doorbell rings
     * or timeout_ns passes; disarm() ends the sequence (always call it).
     */
    int (*arm)(void);
    int (*want_space)(wire_conn_t *conn);
    int (*sleep)(uint64_t timeout_ns);
    void (*disarm)(void);

    /* Look for dead peers (every one this wire reaches); reports each once
     * via peer_failed. */
    void (*check_peers)(void);

    /*
     * Network wires only (NULL in the shm wire).  The am layer keeps them
     * in a table (SHOAL_WIRES), polls each less often while it is quiet,
     * and sleeps in the first one, which also watches the others.
     */
    /* Whether the wire could work here, on what, or why not (shoal-info);
     * needs no job. */
    int (*probe)(char *why, size_t cap);
    /* Work in hand that progress must look at soon: handshakes, queued
     * bytes, frames the budget left, acknowledgements owed, data not yet
     * acknowledged. */
    int (*busy)(void);
    /* Peers asked for whose connection is not open yet. */
    int (*connecting)(void);
    /* A descriptor that is readable while the wire has something for
     * poll (its epoll set), for another wire's sleep to watch. */
    int (*event_fd)(void);
    /* End sleep() also when fd is readable: a doorbell socket whose bytes
     * sleep drains (WIRE_WATCH_DRAIN), or another wire's event_fd
     * (WIRE_WATCH_IN); or when fd is writable (WIRE_WATCH_OUT: a socket
     * whose buffer a layer above waits to have room). */
    int (*watch_fd)(int fd, int how);
    /* Stop watching fd (given to watch_fd); SHOAL_ERR_INVALID when it is
     * not watched. */
    int (*unwatch_fd)(int fd);
    /* Nanoseconds until poll must run although nothing arrives (a
     * retransmission or acknowledgement timer), UINT64_MAX for none;
     * valid after arm. */
    uint64_t (*timer_ns)(void);
    /* For side channels of the layers above (the multicast broadcast):
     * a 16-byte key derived from the job's secret and label, and the
     * address this process uses on the wire (port 0).  SHOAL_OK, or an
     * error while the wire is not up. */
    int (*side)(const char *label, uint8_t key[16],
                struct sockaddr_storage *addr);
    /* Optional, after init: the most peers the layer above will reach
     * through this wire (those it is the first listed wire for), and how
     * many it reaches through shared memory (whose rings progress polls
     * too), so that it can choose a shape that suits few or many. */
    void (*expect_peers)(int n, int nshm);
} wire_ops_t;

extern const wire_ops_t wire_shm_ops;
/* 1 when a frame waits in a shared-memory channel (a cheap look). */
int wire_shm_pending(void);
/* 1 when a sender rang this process's doorbell since the last arm. */
int wire_shm_rung(void);
extern const wire_ops_t wire_tcp_ops;

/* Counters kept by the wires (process-wide, single-threaded updates). */
typedef struct wire_stats {
    uint64_t doorbells;   /* sleeping peers woken */
    uint64_t sleeps;      /* sleeps on this process's doorbell */
    uint64_t single_copy; /* long payloads moved by cross-memory attach */
    uint64_t connections; /* connections opened */
    uint64_t dropped;     /* malformed or undeliverable frames dropped */
    uint64_t retransmits; /* datagrams sent again (datagram wire) */
    uint64_t rejected;    /* datagrams refused: no or a wrong tag, an
                             unknown sender, malformed (datagram wire) */
} wire_stats_t;

extern wire_stats_t wire_stats;

/* Rank 0 draws len random bytes and publishes them under key; after the
 * fence (which also publishes what every rank put before) every rank
 * holds them in secret.  Collective. */
int wire_secret_share(const boot_info_t *job, const char *key,
                      uint8_t *secret, size_t len);

/*
 * The network wires' segments, as SEG frames tell them (wire_common.c).
 * wire_segment_of: peer_segment() from what the peer told (known[ep]);
 * SHOAL_ERR_AGAIN until it did, SHOAL_ERR_PEER_DEAD when it never will.
 * wire_segment_set: publish_segment()'s record of ours in mine[ep]; the
 * wire then sends it to every peer it talks to.
 */
int wire_segment_of(const wire_segment_t *segs, const uint8_t *known,
                    unsigned ep, int rank, int dead, wire_segment_t *seg);
int wire_segment_set(wire_segment_t *mine, unsigned ep, const void *base,
                     size_t size);

/* Copy len bytes into a byte ring of cap bytes (a power of two) at
 * position *tail (positions grow; the ring wraps), advancing *tail.  The
 * caller made sure they fit. */
void wire_ring_put(uint8_t *ring, uint32_t cap, uint64_t *tail,
                   const void *data, size_t len);

/* key = a 16-byte key derived from secret (len >= 16 bytes) for label:
 * the network wires' side() (wire_common.c). */
void wire_side_key(const uint8_t *secret, size_t len, const char *label,
                   uint8_t key[16]);

/*
 * How many CPUs the ranks of this host may run on together (the union of
 * their affinity masks), known once the shm wire is up; 0 before.
 */
int wire_shm_host_cpus(void);

/*
 * A barrier among all ranks of this host, one per endpoint index: a shared
 * arrival counter and epoch in local rank 0's segment.  arrive() counts
 * this rank in (the last one releases the others and rings their
 * doorbells); done() says whether the barrier this rank arrived at has been
 * released.  Each rank must alternate arrive and (eventually true) done.
 */
void wire_shm_hbar_arrive(unsigned idx);
int wire_shm_hbar_done(unsigned idx);

/*
 * Segment memory that local peers can map: long messages into it are one
 * memcpy by the sender.  Page-aligned, zeroed, rounded up to pages.
 */
int wire_shm_mem_alloc(size_t size, void **base_p);
int wire_shm_mem_free(void *base);

/*
 * Whether single-copy (cross-memory attach) works from this process, and
 * if not, why (for shoal-info).  Probes the kernel; no peers needed.
 */
int wire_shm_cma_probe(char *why, size_t cap);

/*
 * Whether the datagram wire's kernel bypass (AF_XDP, SHOAL_UDP_XDP) could
 * run from this process on the interface it would bind, and if not, why
 * (for shoal-info).  Touches no interface.
 */
int wire_udp_xdp_probe(char *why, size_t cap);

/*
 * The process id of a rank on this host (for single-copy reads by the
 * layers above), or 0 when rank is not on this host or single copy is off
 * (SHOAL_SHM_CMA=off, or refused for that peer).
 */
int wire_shm_peer_pid(int rank);
/* The same whether or not cross-memory attach is allowed (for sharing
 * memory by other means). */
int wire_shm_local_pid(int rank);

/* Wake rank (a rank of this host whose segment this rank has mapped, e.g.
 * after am_peer_get) if it sleeps on its doorbell: for conditions a peer
 * sets in shared memory without sending a frame.  No-op otherwise. */
void wire_shm_wake(int rank);
/* The doorbell word of rank (mapped as for wire_shm_wake): non-zero while
 * it sleeps or is about to, so a waker may look at it first and call
 * wire_shm_wake only then.  Valid until the wire finalizes; NULL when
 * rank's segment is not mapped. */
const _Atomic uint32_t *wire_shm_bell(int rank);
/* Wake this process's own sleeper (another thread of it) if it sleeps. */
void wire_shm_wake_self(void);

/* A thread of this process starts (+1) or stops (-1) waiting inside the
 * library for more than a moment; peers see it (wire_shm_peer_waiting).
 * A store to this process's own line, which peers read only when they
 * choose whether to ask for help: for waits that already last. */
void wire_shm_waiting(int delta);
/* 1 when rank, on this host, has a thread waiting inside the library now
 * (it will answer a request soon), else 0. */
int wire_shm_peer_waiting(int rank);

/* This rank passed its last barrier (finalize): from now on the other
 * ranks of its host take its exit as an end, not as a death. */
void wire_shm_finished(void);

/*
 * Sleeping on shared memory and sockets at once.  wire_shm_wake_fd() makes
 * this rank's doorbell a datagram socket instead of a futex from now on
 * (local senders that find it asleep send a byte there) and returns the
 * socket, for a network wire to watch (ops->watch_fd(fd, 1)): a sleep in
 * that wire then wakes for both.  -1 when it cannot be created.
 */
int wire_shm_wake_fd(void);

/* Set by a network wire when it sent a frame (an answer may follow soon);
 * the layer above polls the network wires at once again and clears it. */
extern volatile int wire_net_kick;

/* The datagram wire (src/wire/udp): IPv4 or IPv6 datagrams with their own
 * sequence numbers, acknowledgements and retransmission (docs/DATAGRAM.md). */
extern const wire_ops_t wire_udp_ops;

#endif /* SHOAL_WIRE_H */
