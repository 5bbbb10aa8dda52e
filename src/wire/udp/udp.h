/*
 * The datagram wire, internal declarations.
 *
 * GAMMA's lightweight path on stock Linux: one UDP socket per process, and
 * in user space what the kernel's TCP would otherwise do for us, so that a
 * message costs one sendmsg and one recvmmsg and no kernel connection
 * state.  Per peer and direction the wire keeps a reliable, ordered byte
 * stream of frames (the TCP wire's frame encoding), cut into datagrams
 * that carry their own sequence numbers:
 *
 *   sender                                 receiver
 *   frames -> byte ring (kept until        datagrams in sequence order ->
 *   acknowledged) -> datagrams of at       frames -> the am layer; early
 *   most one MTU, at most a window         ones wait in reorder slots;
 *   unacknowledged; resent on a            cumulative + selective
 *   timeout from the measured round        acknowledgement on every
 *   trip or when later ones are            datagram back, or on their own
 *   acknowledged (selective repeat)        when owed
 *
 * Every datagram carries a tag (SipHash-2-4 of its header under the job's
 * secret) and the epochs of both processes; one without a valid tag, from
 * an address that is not its rank's, or malformed is dropped and counted.
 * docs/DATAGRAM.md has the format, timers and windows.
 */
#ifndef SHOAL_UDP_H
#define SHOAL_UDP_H

#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "wire/wire.h"
#include "wire/wire_frame.h"

/* ---- datagram header (udp_frame.c: pure encoding and decoding) ----------- */

#define UDP_MAGIC 0xd5u
#define UDP_VERSION 1u

#define UDP_T_DATA 1u      /* carries stream bytes (len may be 0: none) */
#define UDP_T_ACK 2u       /* acknowledgement only */
#define UDP_T_PROBE 3u     /* to a peer's liveness socket: are you there? */
#define UDP_T_PROBE_ACK 4u /* from a liveness socket: yes (seq echoed) */
#define UDP_T_DEAD 5u      /* to a rank this one gave up on that still
                              sends: you are taken for dead (SHOAL_FT) */

#define UDP_F_ACK_NOW 0x01u /* the sender waits for room: answer at once */
#define UDP_F_MASK 0x01u

#define UDP_HDR 48u /* bytes, tag included */
#define UDP_TAGGED 40u /* bytes the tag covers */

typedef struct udp_hdr {
    uint8_t type;     /* UDP_T_* */
    uint8_t flags;    /* UDP_F_* */
    uint32_t src;     /* sending rank */
    uint32_t dst;     /* receiving rank */
    uint32_t seq;     /* DATA: its number in the src -> dst stream;
                         PROBE/PROBE_ACK: the probe's number */
    uint32_t ack;     /* every seq below it from dst arrived */
    uint16_t window;  /* datagrams past ack the sender will take */
    uint16_t len;     /* payload bytes after the header */
    uint64_t sack;    /* bit i: ack + 1 + i arrived too */
    uint32_t src_epoch, dst_epoch; /* the two processes' incarnations */
    uint64_t tag;
} udp_hdr_t;

/* Write h (its tag computed under key) into out[UDP_HDR]. */
void udp_hdr_encode(const udp_hdr_t *h, const uint8_t key[16],
                    uint8_t out[UDP_HDR]);
/*
 * Decode and check the header of a datagram of n bytes: UDP_HDR when it is
 * well formed, carries exactly its payload and its tag matches under key;
 * SHOAL_ERR_PROTOCOL with *why set otherwise.  A pure function (fuzzed:
 * tests/fuzz/fuzz_udp_hdr.c).
 */
int udp_hdr_decode(const uint8_t *buf, size_t n, const uint8_t key[16],
                   udp_hdr_t *h, const char **why);

/* Serial-number comparison of 32-bit sequence numbers (RFC 1982). */
static inline int udp_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* ---- per-peer state -------------------------------------------------------- */

/* udp_peer_t.path */
#define UDP_PATH_UNKNOWN 0
#define UDP_PATH_PROBING 1
#define UDP_PATH_OK 2
#define UDP_PATH_BLOCKED 3
/* Hosts found blocked that are remembered (their other ranks are blocked
 * without a probe); past it each is probed. */
#define UDP_PATH_HOSTS 16

/* A datagram sent and not yet acknowledged. */
typedef struct udp_flight {
    uint64_t start;   /* its bytes in the ring: [start, start + len) */
    uint32_t len;
    uint8_t sacked;   /* the peer has it (selectively acknowledged) */
    uint8_t resent;   /* sent more than once (no round-trip sample) */
    uint8_t lost;     /* judged lost: resent, waiting for its answer */
    uint64_t sent_ns; /* when it last went out */
} udp_flight_t;

/* A datagram that arrived before its turn. */
typedef struct udp_slot {
    uint8_t *buf; /* payload bytes (allocated on first use, kept) */
    uint32_t len;
    uint8_t full;
} udp_slot_t;

typedef struct udp_peer {
    wire_conn_t base; /* first: the layer above holds &base */
    int open;         /* state allocated, address known */
    int reach;        /* 0 not looked up, 1 its datagram wire is up, -1 not */
    int dead;         /* reported through peer_failed */
    int bye;          /* the peer finalized: its silence is not a death */
    int closed;       /* its port answered ICMP port unreachable: reported
                         dead once what it sent before is read (udp_poll) */
    struct sockaddr_storage addr, live_addr; /* data and liveness sockets */
    struct sockaddr_storage send_addr;       /* where its connected sockets
                                                send from */
    socklen_t addr_len;
    int sfd; /* our socket connected to its data socket (-1: none, the data
                socket sends with an address) */
    int pair; /* sfd is bound to our data port: its datagrams to us arrive
                 there too (SHOAL_UDP_PAIRS) */
    int pair_clean; /* ... and whatever reached it before its connect has
                       been read: the kernel lets in only the peer's now,
                       so a lone receive needs no address (udp_recv.c) */
    uint32_t epoch; /* its incarnation, from the key-value store */

    /* Sending: frames in a ring of datagram records (positions grow; cap a
     * power of two; udp_send.c): [q_head, q_sent) went out
     * unacknowledged, [q_sent, q_tail) waits in q_recs records, the last
     * starting at q_open. */
    uint8_t *q;
    uint64_t q_head, q_sent, q_tail, q_open;
    uint32_t q_recs;
    uint32_t mss;           /* stream bytes per datagram to it: ours and
                               its limit, the smaller */
    uint32_t q_need;        /* bytes the last refused send needed, 0: none */
    uint64_t last_frame_ns; /* when the last frame was queued (bursts) */
    udp_flight_t *flight;   /* by seq & (window_cap - 1) */
    uint32_t snd_una;       /* oldest unacknowledged seq */
    uint32_t snd_nxt;       /* next new seq */
    uint32_t peer_window;   /* what it last said it takes past snd_una */
    uint32_t cwnd;          /* datagrams in flight we allow ourselves */
    uint32_t ssthresh;
    uint32_t cwnd_acked;    /* acknowledged since cwnd last grew */
    uint32_t recover;       /* snd_nxt when the window was last halved */
    uint64_t srtt, rttvar;  /* ns; srtt 0: no sample yet */
    uint64_t rto;           /* ns, backed off on each timeout */
    uint64_t rto_at;        /* when snd_una is resent (0: nothing sent) */
    uint64_t heard_ns;      /* the last datagram from it (any kind) */
    uint64_t wait_since;    /* when data last went out to a quiet peer */
    uint64_t probe_at;      /* the next liveness probe (0: none due) */
    uint64_t probe_since;   /* the first probe not answered yet (0: none) */
    uint32_t probe_seq;
    uint64_t told_dead_ns; /* when it was last sent UDP_T_DEAD */
    int in_due;             /* in udp_state.due */
    /* First contact (udp_path.c): do datagrams pass both ways? */
    int path;               /* UDP_PATH_* */
    int path_err;           /* BLOCKED: the ICMP error, 0 for no answer */
    uint64_t path_since;    /* the first probe */
    uint64_t path_at;       /* the next one (PROBING) */
    uint64_t path_every;    /* the interval after it, doubling */

    /* Receiving. */
    uint32_t rcv_nxt;       /* next seq expected */
    udp_slot_t *slots;      /* by seq & (window_cap - 1), NULL until used */
    uint32_t nslots_full;
    uint32_t ack_owed;      /* datagrams taken since our last ack to it */
    uint64_t ack_since;     /* when the oldest of those arrived */
    int ack_now;            /* answer at once (it asked, or a gap) */
    uint8_t *rx;            /* stream bytes of an incomplete frame */
    size_t rx_len, rx_cap;
    /* The long frame whose payload is arriving (TCP wire's frame). */
    uint8_t cur_kind, cur_ep, cur_handler, cur_nargs;
    uint32_t cur_len;
    uint64_t cur_offset, cur_args[WIRE_MAX_ARGS];
    char *cur_dst;          /* where it lands (NULL: being skipped) */
    uint64_t cur_left;      /* its payload bytes still to come */
    int cur_ok;
    uint32_t rx_seg;        /* payload bytes of its full datagrams (0: not
                               seen yet): where each lands in a scattered
                               receive (udp_recv.c) */

    /* Credits of the am layer, as on TCP. */
    uint64_t noreply, noreply_sent, credits, credits_cache;
    int credit_due;
    /* Its segments, from SEG frames. */
    wire_segment_t segs[WIRE_MAX_EPS];
    uint8_t seg_known[WIRE_MAX_EPS];
} udp_peer_t;

/* Test-only faults applied to outgoing datagrams (SHOAL_UDP_FAULTS). */
typedef struct udp_faults {
    uint32_t drop, dup, reorder; /* per mille */
    uint64_t rng;
    uint8_t *held;               /* a datagram held back (reorder) */
    size_t held_len;
    struct sockaddr_storage held_to;
    socklen_t held_to_len;
} udp_faults_t;

#define UDP_RX_BATCH 32
/* A quiet poll with timers pending looks at the clock one time in this
 * many (udp_poll). */
#define UDP_TIMER_LOOK 8u
/* Datagrams one sendmsg may carry with segmentation offload (the kernel's
 * UDP_MAX_SEGMENTS is 64, and 64 KiB in all). */
#define UDP_GSO_SEGS 64

/* Peers a process keeps a connected socket to, at most (file
 * descriptors); datagrams to the others leave through the data socket. */
#define UDP_CONNECTED_MAX 64
/* With pair sockets, the data socket is read at one quiet poll in this
 * many once it has been quiet UDP_DATA_HOT polls. */
#define UDP_DATA_SKIP 16u
#define UDP_DATA_HOT 4096u

#define UDP_SLEPT_ERR 1u
#define UDP_SLEPT_WOKE 2u

typedef struct udp_state {
    const boot_info_t *job;
    wire_upcalls_t up;
    int fd;          /* the data socket */
    int send_fd;     /* holds the port the connected sockets share */
    struct sockaddr_storage send_addr;
    /* Pair sockets (SHOAL_UDP_PAIRS): connected to one peer each and bound
     * to the data port (SO_REUSEPORT, set on the data socket after its
     * bind, so no other process is given that port), read at every poll;
     * the data socket at every poll too while some open peer has none, or
     * while it had datagrams lately (data_hot polls); else, when it
     * carries only first contacts (and the datagrams of a peer that gave
     * us no pair socket of its own, which make it hot), at one poll in
     * UDP_DATA_SKIP. */
    int pairs_ok;    /* the data port can be shared */
    struct sockaddr_storage data_addr;
    int pair_fd[UDP_CONNECTED_MAX], pair_rank[UDP_CONNECTED_MAX], npair;
    int nopen; /* peers open: while some have no pair socket, the data
                  socket is read at every poll */
    uint32_t data_hot, data_skip;
    /* Written under the lock with a release store, after its entries; a
     * progress thread's sleep (udp_sleep, without the lock) loads it with
     * acquire and polls only entries filled before. */
    uint32_t nconnected;
    /* What a sleep saw, for the next poll to act on under the lock:
     * UDP_SLEPT_ERR an error on a connected socket (udp_errqueue),
     * UDP_SLEPT_WOKE a wake-up (AF_XDP's socket may have traffic). */
    atomic_uint slept;
    /* A sleep's poll array: [0] the epoll set (watched descriptors,
     * AF_XDP's socket), [1] the data socket, [2..2+nconnected) the
     * connected sockets, watched for errors only.  The data socket is
     * polled directly, not in the epoll set: a socket in an epoll set runs
     * epoll's callback (an irq-saving lock) at every datagram it gets,
     * 0.3 to 0.6 us of each one-way trip of a raw ping-pong on a VM here
     * (PERFORMANCE.md), while poll's wait entry exists only during a
     * sleep. */
    struct pollfd conn_pfd[2 + UDP_CONNECTED_MAX];
    int fd_in_epoll; /* the data socket joined the set (udp_event_fd) */
    /* The same sockets for the quiet poll's look (udp_poll): an array of
     * its own, since a progress thread may sleep on conn_pfd meanwhile
     * and poll() writes revents. */
    struct pollfd look_pfd[UDP_CONNECTED_MAX];
    int epfd;        /* watched fds, AF_XDP's socket (the data socket
                        too once udp_event_fd is asked) */
    int family;      /* AF_INET or AF_INET6 */
    uint8_t key[16]; /* tags: from the job's secret */
    uint32_t epoch;
    udp_peer_t *peers; /* by rank */
    size_t dgram_max;  /* bytes of a datagram, header included */
    size_t mss;        /* stream bytes a datagram we send carries at most
                          (a peer's may take fewer: udp_peer_t.mss) */
    size_t mss_rx;     /* ... and one we receive may carry, at most */
    uint32_t ack_every; /* datagrams taken before an acknowledgement goes */
    uint32_t q_cap;    /* bytes of each sending ring */
    uint32_t window_cap; /* datagrams (a power of two) */
    uint64_t rto_min, rto_max, ack_delay, dead_ns;
    /* Peers with acknowledgements or credits owed, or data in flight. */
    int *due;
    int ndue;
    uint64_t timer_at; /* earliest deadline of any peer (0: none) */
    int timers_now;    /* a peer's state changed: the next poll runs the
                          timer pass even before timer_at */
    uint32_t timer_skips; /* quiet polls that did not look at the clock */
    uint64_t nap_ns;   /* longest sleep, set by arm (under the lock) */
    int closed_any;    /* a peer's closed flag awaits its report */
    /* recvmmsg batch; its length adapts (udp_poll) */
    uint8_t *rxbuf;
    int rx_last_got;  /* datagrams the last poll took */
    int rx_last_batch; /* ... and the last batch that took any */
    uint32_t quiet_polls; /* polls in a row that took nothing */
    /* A peer whose long frame's payload is arriving (-1: none): the next
     * receive may scatter into its destination (udp_recv.c). */
    int long_rank;
    struct iovec diov[2 * UDP_GSO_SEGS + 1];
    uint8_t dhdr[UDP_GSO_SEGS][UDP_HDR];
    struct mmsghdr rmsg[UDP_RX_BATCH];
    struct iovec riov[UDP_RX_BATCH];
    struct sockaddr_storage rfrom[UDP_RX_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } rctl[UDP_RX_BATCH]; /* UDP_GRO: the size of coalesced datagrams */
    /* a batch of up to UDP_GSO_SEGS datagrams, each a record in a ring */
    struct iovec siov[UDP_GSO_SEGS];
    uint32_t gso_max; /* datagrams per sendmsg: 1 without offload */
    /* Watched fds (a doorbell socket, other wires). */
    int watch[8], watch_drain[8], nwatch;
    udp_faults_t faults;
    /* First contact: how long a probe may go unanswered (0: no probe),
     * and the hosts found blocked (udp_path.c). */
    uint64_t path_ns;
    struct {
        struct sockaddr_storage addr;
        int err;
    } path_blocked[UDP_PATH_HOSTS];
    int npath_blocked;
    /* Liveness: a thread answers probes on its own socket. */
    int live_fd, live_stop_fd;
    int live_started;
    /* Segments published here. */
    wire_segment_t my_segs[WIRE_MAX_EPS];
    int xdp; /* the AF_XDP path runs (udp_xdp.c) */
} udp_state_t;

extern udp_state_t udp_state;

/* udp_setup.c */
/* The peer's state, set up on first use (reads its address). */
int udp_peer_open(int rank, udp_peer_t **p_out);
/* Its address read (once); 1 when its datagram wire is up. */
int udp_peer_known(udp_peer_t *p);

/* udp_send.c */
int udp_send(wire_conn_t *conn, const wire_msg_t *msg);
/* Queue a control frame (TCP_FRAME_*) to p and send what the window
 * allows; SHOAL_ERR_AGAIN: no room.  udp_queue_ctl only queues it. */
int udp_send_ctl(udp_peer_t *p, uint8_t type, uint8_t ep, uint64_t arg);
int udp_queue_ctl(udp_peer_t *p, uint8_t type, uint8_t ep, uint64_t arg);
/* Send what waits in p's ring while its window allows. */
void udp_push(udp_peer_t *p, uint64_t now);
/* One datagram to p at to (p->addr or p->live_addr) out (faults
 * applied); 0, or an errno. */
int udp_xmit(const udp_peer_t *p, const struct sockaddr_storage *to,
             socklen_t to_len, const struct iovec *iov, int niov);
/* p's acknowledgement (or credits) goes out on a datagram of its own. */
void udp_send_ack(udp_peer_t *p);
/* An acknowledgement from p: free what it covers, resend what it shows
 * lost. */
void udp_on_ack(udp_peer_t *p, const udp_hdr_t *h, uint64_t now);
/* Resend what timed out; owed acknowledgements go.  all: every owed one
 * (about to sleep), not only those past the delay. */
void udp_timers(uint64_t now, int all);
/* Mark p as needing the timer pass (data in flight or acks owed). */
void udp_due(udp_peer_t *p);
/* An acknowledgement owed to p: a timer pass now if it is urgent
 * (ack_now), else by the delayed-ack deadline. */
void udp_ack_later(udp_peer_t *p);
/* Fill the acknowledgement fields of a header to p. */
void udp_ack_fields(udp_peer_t *p, udp_hdr_t *h);

/* udp_recv.c */
int udp_poll(int budget);
/* A datagram to deliver in order, or stash. */
void udp_on_data(udp_peer_t *p, const udp_hdr_t *h, const uint8_t *payload,
                 uint64_t now);

/* Same family, address and port. */
int udp_addr_equal(const struct sockaddr_storage *a,
                   const struct sockaddr_storage *b);

/* udp_live.c */
int udp_live_start(void);
void udp_live_stop(void);
/* Fail-stop (docs/FT.md): p, reported dead, still sends: tell it so
 * (UDP_T_DEAD, under SHOAL_FT, at most every 100 ms); and p told us. */
void udp_live_tell_dead(udp_peer_t *p, uint64_t now);
void udp_live_told_dead(const udp_peer_t *p);

/* p, with data waiting, silent too long: probe it, or report it dead. */
void udp_live_peer(udp_peer_t *p, uint64_t now);
/* The kernel's errors for datagrams sent (port unreachable: the process
 * is gone), on the data socket and every connected one: such a peer is
 * marked closed, and udp_closed_report reports it. */
void udp_errqueue(void);
/* Report the peers marked closed (call once the data socket is drained:
 * what a process sent before it went arrived before the ICMP answer to a
 * datagram sent after, and is delivered first). */
void udp_closed_report(void);
/* p failed: report once. */
void udp_peer_lost(udp_peer_t *p, int status, const char *why);
/* One PROBE to p's liveness socket. */
void udp_live_probe(udp_peer_t *p);

/* udp_path.c: the first-contact probe (wire_ops_t.path). */
int udp_path(int rank, char *why, size_t cap);
/* A probe due again, or the time up (blocked). */
void udp_path_timer(udp_peer_t *p, uint64_t now);
/* A valid datagram from p: datagrams pass both ways. */
void udp_path_heard(udp_peer_t *p);
/* An ICMP error (errno err) for a datagram to p: blocked if probing. */
void udp_path_refused(udp_peer_t *p, int err);

/* udp_recv.c: one datagram from a sender at from; the sender's rank when
 * it was accepted, else -1. */
int udp_on_datagram(const uint8_t *buf, size_t n,
                    const struct sockaddr_storage *from, uint64_t now);

/* ---- kernel bypass (udp_xdp.c, udp_xdp_pkt.c) --------------------------------
 *
 * With SHOAL_UDP_XDP, the same datagrams go through an AF_XDP socket on the
 * bound interface: an XDP program passes UDP to the data port into it and
 * everything else to the kernel; the UDP socket stays bound (it keeps the
 * port, and takes what the program passes: other queues, this host).  Only
 * the packet I/O changes; the protocol above is the same. */

/* Start it on the interface holding me (the data socket's address); 0 and
 * *why filled when it cannot work (the socket path runs). */
int udp_xdp_start(const struct sockaddr_storage *me, char *why, size_t cap);
void udp_xdp_stop(void);
/* 1 when datagrams to p can go out through it (its link address known). */
int udp_xdp_peer(const udp_peer_t *p);
/* Datagram frames free to send, now. */
uint32_t udp_xdp_room(void);
/* 1 when batches of datagrams go through it too (zero copy); else they
 * leave through the socket with segmentation offload, which moves them
 * through the kernel as one packet (copy mode costs a buffer and a trip
 * through the stack per frame: docs/DATAGRAM.md). */
int udp_xdp_batch(void);
/* One datagram to p into the ring (no system call); 0 or an errno. */
int udp_xdp_put(const udp_peer_t *p, const struct iovec *iov, int niov);
/* What the ring holds goes out (one sendto when the kernel asks). */
void udp_xdp_kick(void);
/* Datagrams received through it; and whether the UDP socket is worth a
 * look this poll. */
int udp_xdp_poll(void);
int udp_xdp_sock_due(void);
void udp_xdp_sock_seen(int got);
/* Its descriptor (for epoll), -1 when not running. */
int udp_xdp_fd(void);
/* Whether it could work here, and why not (shoal-info). */
int udp_xdp_probe(const struct sockaddr_storage *me, char *why, size_t cap);

/* Ethernet + IP + UDP headers (udp_xdp_pkt.c, pure). */
size_t udp_pkt_hdr_len(int family);
/* f holds the datagram (payload bytes) at udp_pkt_hdr_len(family): write
 * the headers in front, checksums included. */
void udp_pkt_build(uint8_t *f, const uint8_t dst_mac[6],
                   const uint8_t src_mac[6],
                   const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst, size_t payload);
/* A received frame of n bytes: UDP to me; the datagram and its sender.
 * 0, or -1 with *why set. */
int udp_pkt_parse(const uint8_t *f, size_t n,
                  const struct sockaddr_storage *me,
                  struct sockaddr_storage *from, const uint8_t **payload,
                  size_t *len, const char **why);

#endif /* SHOAL_UDP_H */
