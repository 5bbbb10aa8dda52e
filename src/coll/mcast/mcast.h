/*
 * Reliable broadcast over IP multicast (Yu, chapter 5; docs/DATAGRAM.md,
 * "Multicast broadcast").
 *
 * MPI_Bcast between hosts: the root sends each fragment of the message
 * once, as a UDP datagram to the communicator's multicast group; one
 * process per host (the leader of the hierarchical broadcast) receives it
 * and shares it with the host's ranks through shared memory afterwards.
 * Control travels on the communicator's point-to-point transport, reliable
 * and watched for dead peers: receivers report what they hold (cumulative
 * count plus a bitmap: acknowledgements and NACKs in one record), the root
 * sends the missing fragments again by multicast, slides its window once
 * every receiver confirmed (the split-phase reclaim of the seed's
 * channels) and ends each broadcast with one record per receiver.  A
 * receiver that makes no progress for SHOAL_MCAST_FALLBACK timeouts gets
 * the message point-to-point instead, and on this communicator from then
 * on (logged once).
 *
 * The files: mcast_frame.c the datagram header and control records (pure,
 * fuzzed), mcast_sock.c the sockets and groups, mcast_bcast.c the protocol.
 */
#ifndef SHOAL_COLL_MCAST_H
#define SHOAL_COLL_MCAST_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll_algo.h"

/* ---- datagrams (mcast_frame.c) --------------------------------------------------- */

/*
 * Data datagram: a 48-byte header (little-endian) and the fragment.
 *   0  magic    'S' 'M'
 *   2  version  MCAST_VERSION
 *   3  type     MCAST_T_DATA
 *   4  root     the root's rank in the communicator (u32)
 *   8  gid      the communicator's group id (u64)
 *   16 seq      the broadcast: its collective tag (u32)
 *   20 frag     fragment index (u32)
 *   24 total    bytes of the whole message (u64)
 *   32 fsize    bytes of every fragment but the last (u32)
 *   36 run      which start of the call this is (u32: a persistent
 *               broadcast keeps its tag from start to start)
 *   40 tag      SipHash-2-4 of bytes 0..39 under the job's multicast key
 * Fragment frag holds bytes [frag * fsize, min(total, (frag + 1) * fsize)).
 */
#define MCAST_HDR 48
#define MCAST_VERSION 1
#define MCAST_T_DATA 1

typedef struct mcast_hdr {
    uint32_t root;
    uint64_t gid;
    uint32_t seq;
    uint32_t frag;
    uint64_t total;
    uint32_t fsize;
    uint32_t run;
} mcast_hdr_t;

void mcast_hdr_put(uint8_t out[MCAST_HDR], const mcast_hdr_t *h,
                   const uint8_t key[16]);
/* Decode and check a datagram of len bytes: 0 with *h filled, or -1 when
 * it is short, not ours (magic, version, type), forged (tag), or its
 * fragment does not fit the message (index, size, length).  Pure. */
int mcast_hdr_get(const uint8_t *in, size_t len, const uint8_t key[16],
                  mcast_hdr_t *h);
/* Number of fragments of a message, and the bytes of fragment i. */
uint64_t mcast_nfrags(uint64_t total, uint32_t fsize);
size_t mcast_frag_len(uint64_t total, uint32_t fsize, uint64_t i);

/*
 * Control records on the point-to-point transport (little-endian).
 * Receiver to root, MCAST_ACK_BYTES:
 *   0  kind   MCAST_ACK_*            4  flags  MCAST_ACK_F_*
 *   8  cum    fragments [0, cum) are here
 *   16 high   one past the highest fragment seen
 *   24 mc     fragments that came by multicast in this call
 *   32 bits   4 x u64: bit i set when fragment cum + i is here
 * Root to receiver, MCAST_END_BYTES: kind MCAST_END_* (u32), zero (u32).
 */
#define MCAST_ACK_BITS 256
#define MCAST_ACK_BYTES (32 + MCAST_ACK_BITS / 8)
#define MCAST_END_BYTES 8

enum {
    MCAST_ACK_PROGRESS = 1, /* more to come */
    MCAST_ACK_FINAL,        /* every fragment is here: the last record */
    MCAST_ACK_BYE           /* the call failed: the last record */
};
#define MCAST_ACK_F_NO_MCAST 1u /* this receiver cannot join the group */
#define MCAST_ACK_F_BUSY 2u     /* it receives MCAST_ACTIVE_MAX calls
                                   already: send this one point-to-point */
#define MCAST_ACK_F_UNREACHED 4u /* an earlier root got no multicast to it
                                    through: point-to-point from now on */

enum {
    MCAST_END_DONE = 1, /* every receiver ... this one confirmed all */
    MCAST_END_P2P,      /* the message follows point-to-point */
    MCAST_END_ERROR     /* the call failed (a receiver died) */
};

typedef struct mcast_ack {
    uint32_t kind, flags;
    uint64_t cum, high, mc;
    uint64_t bits[MCAST_ACK_BITS / 64];
} mcast_ack_t;

void mcast_ack_put(uint8_t out[MCAST_ACK_BYTES], const mcast_ack_t *a);
/* 0, or -1 for a record that cannot be (unknown kind, cum > high). */
int mcast_ack_get(const uint8_t in[MCAST_ACK_BYTES], mcast_ack_t *a);

/* ---- sockets and groups (mcast_sock.c) --------------------------------------------- */

/* What the process keeps: one sending socket, the key, the interface. */
typedef struct mcast_proc {
    int state; /* 0 not tried, 1 usable, -1 not (why says) */
    char why[200];
    int tx_fd;
    uint8_t key[16];
    int family;            /* the network wire's: AF_INET or AF_INET6 */
    struct in_addr ifaddr; /* the network wire's address (IPv4) */
    unsigned ifindex;      /* and its interface (IPv6) */
    uint16_t port;
    int warned;        /* the point-to-point fallback was logged */
    int gso;           /* UDP_SEGMENT sends, UDP_GRO receives
                          (SHOAL_UDP_GSO) */
    int out_watchers;  /* root calls whose sleeps wait for tx_fd's room */
} mcast_proc_t;

/* The process's state, set up on first use; NULL when multicast cannot
 * work here (the reason is logged once at debug level, and kept). */
mcast_proc_t *mcast_proc(void);

/* Payload bytes of a full fragment: SHOAL_UDP_MTU (1500 when 0) less the
 * IPv4, UDP and our headers.  Not the interface's MTU: every rank must cut
 * alike. */
uint32_t mcast_fsize(void);

/* Receiving calls one communicator keeps apart at a time (overlapping
 * nonblocking broadcasts); a call beyond asks for point-to-point. */
#define MCAST_ACTIVE_MAX 16

/* What a communicator keeps (coll_comm_t.mcast). */
typedef struct mcast_comm {
    struct sockaddr_storage group; /* address and port */
    socklen_t group_len;
    uint64_t gid;
    int rx_fd;     /* joined to group; -1 until this rank receives */
    int rx_failed; /* joining failed: receive point-to-point */
    int watchers;  /* calls in flight whose sleeps watch rx_fd */
    int unreached; /* a root fell back to point-to-point for this rank
                      before any multicast reached it: every root learns
                      it from our first report (not from its own stalls) */
    uint8_t *p2p;  /* by rank: gets broadcasts from us point-to-point */
    struct mc_call *active[MCAST_ACTIVE_MAX]; /* receiving now */
    int nactive;
} mcast_comm_t;

/* c's state (made on first use), NULL without memory. */
mcast_comm_t *mcast_comm(coll_comm_t *c);
/* The receiving socket of m, joined on first use; -1 when it cannot be. */
int mcast_rx(mcast_proc_t *p, mcast_comm_t *m);
/* Send n datagrams of iov pairs to m's group, those of one size together
 * (UDP_SEGMENT); the number sent (>= 0, a full socket buffer sends fewer)
 * or -errno. */
int mcast_send(mcast_proc_t *p, const mcast_comm_t *m, struct iovec *iov,
               int n);

/* ---- the broadcast (mcast_bcast.c) ------------------------------------------------ */

/* 1 when a broadcast of bytes over g (one member per host) goes by
 * multicast: the same answer on every rank. */
int coll_mcast_wanted(const coll_comm_t *c, const coll_group_t *g,
                      int64_t bytes);
void coll_bcast_mcast(coll_sched_t *s, const coll_group_t *g, void *buf,
                      int64_t count, void *dt, int64_t bytes, int root);
/* Release c's multicast state (coll_comm_fini). */
void coll_mcast_fini(coll_comm_t *c);

#endif /* SHOAL_COLL_MCAST_H */
