/*
 * The TCP wire, internal declarations.
 *
 * One listening socket per process; its address is published in the boot
 * key-value store.  A connection to a peer opens when the layer above first
 * asks for it (or for every peer at start-up with SHOAL_CONNECT=all), and
 * carries frames only after both sides proved they hold the job's secret
 * (docs/TCP.md has the protocol).  Frames wait in a bounded per-peer byte
 * ring, filled while the connection is being set up and whenever the kernel
 * takes less than offered; the ring is per peer, not per socket, so a socket
 * that loses a crossing-connect race takes no frames with it.
 */
#ifndef SHOAL_TCP_H
#define SHOAL_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"
#include "wire/wire_frame.h"

/* ---- handshake messages ---------------------------------------------------- */

#define TCP_HS_SIZE 64u
#define TCP_HS_HELLO 1u     /* initiator: who I am, whom I want, my nonce */
#define TCP_HS_CHALLENGE 2u /* acceptor: my nonce and my proof */
#define TCP_HS_PROOF 3u     /* initiator: its proof */
#define TCP_HS_VERDICT 4u   /* acceptor: 1 use this socket, 0 close it,
                               TCP_VERDICT_DEAD: you are taken for dead */
#define TCP_VERDICT_DEAD 2u /* (SHOAL_FT: fail-stop, docs/FT.md) */
#define TCP_NONCE 16u
#define TCP_MAC 16u
#define TCP_SECRET 32u

typedef struct tcp_hs {
    uint8_t type;
    uint32_t from, to; /* ranks */
    uint32_t verdict;
    uint8_t nonce[TCP_NONCE];
    uint8_t mac[TCP_MAC];
} tcp_hs_t;

void tcp_hs_encode(const tcp_hs_t *h, uint8_t out[TCP_HS_SIZE]);
/* TCP_HS_SIZE when a message is complete and well formed, 0 when more
 * bytes are needed, SHOAL_ERR_PROTOCOL (why set) otherwise. */
int tcp_hs_decode(const uint8_t *buf, size_t avail, tcp_hs_t *h,
                  const char **why);

/* ---- authentication (tcp_auth.c) ------------------------------------------- */

/*
 * The proof a side gives: a 128-bit keyed hash (SipHash-2-4 under each
 * half of the secret) of role, both nonces and both ranks.  role is 'A'
 * (acceptor) or 'I' (initiator).
 */
void tcp_auth_mac(const uint8_t secret[TCP_SECRET], char role,
                  const uint8_t ni[TCP_NONCE], const uint8_t na[TCP_NONCE],
                  uint32_t initiator, uint32_t acceptor,
                  uint8_t mac[TCP_MAC]);
/* Constant-time comparison of two MACs: 1 when equal. */
int tcp_auth_equal(const uint8_t a[TCP_MAC], const uint8_t b[TCP_MAC]);

/* ---- sockets and peers ------------------------------------------------------- */

/* Socket states. */
enum {
    TCP_S_CONNECTING, /* initiator: nonblocking connect in progress */
    TCP_S_HELLO,      /* acceptor: waiting for HELLO */
    TCP_S_CHALLENGE,  /* initiator: HELLO sent, waiting for CHALLENGE */
    TCP_S_PROOF,      /* acceptor: CHALLENGE sent, waiting for PROOF */
    TCP_S_VERDICT,    /* initiator: PROOF sent, waiting for VERDICT */
    TCP_S_OPEN,       /* frames flow */
    TCP_S_CLOSED      /* closed, freed at the end of the poll */
};

typedef struct tcp_sock {
    int fd;
    int state;
    int initiator; /* we connected */
    int peer;      /* rank; -1 until an acceptor has read HELLO */
    int hs_index;  /* in tcp_state.hs, or -1 */
    uint64_t started;
    uint8_t nonce_me[TCP_NONCE], nonce_peer[TCP_NONCE];
    uint8_t buf[2 * TCP_HS_SIZE]; /* handshake bytes read so far */
    size_t buf_len;
    struct tcp_sock *next_dead; /* closed sockets waiting to be freed */
} tcp_sock_t;

typedef struct tcp_peer {
    wire_conn_t base; /* first: the layer above holds &base */
    tcp_sock_t *sock; /* the open connection, or NULL */
    tcp_sock_t *out;  /* our connection attempt while it handshakes */
    int wanted;       /* the layer above asked for this peer */
    int attempts;     /* our connections it closed during the handshake */
    int dead;         /* reported through peer_failed */
    int bye;          /* the peer said it closes: EOF is not a death */
    /* Under SHOAL_FT, the connection the peer ended, and our one new
     * connection asking it whether it gave this rank up (tcp_peer_broken);
     * why the old one ended, reported if the peer turns out dead. */
    int asking;
    char ask_why[160];
    int pollout;      /* EPOLLOUT armed on sock */
    int backlog;      /* complete frames left in rx (budget reached) */
    int credit_due;   /* in tcp_state.due */
    int live_watch;   /* data went out since tcp_live_check saw none left */
    uint64_t live_probe_at; /* when an unanswered window probe was seen */
    uint64_t live_ack_at;   /* ... and when the last ACK came before it */
    /* Frames to send: a byte ring (positions grow; cap a power of two). */
    uint8_t *q;
    uint32_t q_cap;
    uint64_t q_head, q_tail;
    uint32_t q_need; /* bytes the last refused send needed, 0: none */
    /* Receiving. */
    uint8_t *rx;
    size_t rx_len, rx_cap;
    wire_frame_t cur;   /* the long frame whose payload is arriving */
    char *cur_dst;     /* where it lands (NULL: being skipped) */
    uint64_t cur_left; /* its payload bytes still to read */
    int cur_ok;        /* deliver it when complete */
    /* Credits. */
    uint64_t noreply;      /* its requests we finished without reply */
    uint64_t noreply_sent; /* ... as last told to it */
    uint64_t credits;      /* our requests it finished, as it told us */
    uint64_t credits_cache;
    /* Its segments, from SEG frames. */
    wire_segment_t segs[WIRE_MAX_EPS];
    uint8_t seg_known[WIRE_MAX_EPS];
} tcp_peer_t;

/* Descriptors of other wires that end a sleep here too (watch_fd): the
 * shared-memory doorbell's socket, other network wires' epoll sets. */
#define TCP_WATCH_MAX 8
typedef struct tcp_watch {
    int fd;
    int drain; /* a doorbell socket: its bytes are read away after a wake */
} tcp_watch_t;

typedef struct tcp_state {
    const boot_info_t *job;
    wire_upcalls_t up;
    int epfd;
    int lfd; /* listening socket */
    tcp_watch_t watch[TCP_WATCH_MAX]; /* their epoll tags: &watch[i] */
    int nwatch;
    uint8_t secret[TCP_SECRET];
    tcp_peer_t *peers;   /* by rank */
    tcp_sock_t **hs;     /* sockets in handshake */
    int nhs, hs_cap;
    int *due;            /* ranks with credits to send */
    int ndue;
    int nbacklog;
    int nopen;           /* open connections */
    int npollout;        /* open connections with EPOLLOUT armed */
    tcp_sock_t *graveyard; /* closed sockets to free */
    uint32_t q_cap;
    uint64_t hs_timeout_ns;
    uint64_t nap_max; /* longest sleep, set by arm */
    tcp_peer_t *hot;    /* the peer we sent to last */
    uint32_t hot_polls; /* polls since hot was set (see tcp_poll) */
    uint64_t live_ns;   /* SHOAL_TCP_DEAD_TIMEOUT, 0: no liveness check */
    uint64_t live_at;   /* the last tcp_live_check */
    int live_any;       /* some peer has live_watch set */
    uint32_t live_polls;
    /* Segments published here. */
    wire_segment_t my_segs[WIRE_MAX_EPS];
} tcp_state_t;

extern tcp_state_t tcp_state;

/* tcp_setup.c */
int tcp_is_listen_tag(const void *tag);
/* The watched descriptor an epoll tag stands for, or NULL. */
const tcp_watch_t *tcp_watch_of(const void *tag);

/* tcp_conn.c */
int tcp_epoll_set(int op, int fd, uint32_t events, void *tag);
int tcp_connect(int rank, wire_conn_t **conn_p);
int tcp_connecting(void);
void tcp_accept_all(void);
void tcp_hs_event(tcp_sock_t *s, uint32_t events);
void tcp_hs_expire(uint64_t now);
void tcp_sock_close(tcp_sock_t *s);
/* Free the sockets closed since the last call. */
void tcp_reap(void);
/* The peer's open connection failed (EOF, reset, bad frame). */
void tcp_peer_lost(tcp_peer_t *p, int status, const char *why);
/* The peer ended its open connection (end of stream, reset; err its
 * errno, 0 for end of stream): lost, or under SHOAL_FT first asked again
 * whether it gave this rank up (fail-stop, docs/FT.md). */
void tcp_peer_broken(tcp_peer_t *p, int err, const char *why);
/* Why a connection ended, for tcp_peer_lost: err from the socket (0: end
 * of stream), op the call that saw it ("" for a read). */
void tcp_lost_why(int err, const char *op, char *why, size_t cap);

/* tcp_live.c: the liveness of connections with data outstanding */
#define TCP_LIVE_EVERY_NS 200000000ull /* the check runs at most this often */
#define TCP_LIVE_POLL_EVERY 8u /* ... and looks at the clock every 8th poll */
void tcp_live_init(void);
/* Report the peers silent for SHOAL_TCP_DEAD_TIMEOUT while data waits
 * (returns at once when it ran less than TCP_LIVE_EVERY_NS ago). */
void tcp_live_check(uint64_t now);

/* tcp_xfer.c */
int tcp_send(wire_conn_t *conn, const wire_msg_t *msg);
size_t tcp_max_payload(wire_conn_t *conn, unsigned cat);
uint64_t tcp_credits(wire_conn_t *conn);
int tcp_poll(int budget);
int tcp_busy(void);
int tcp_arm(void);
int tcp_want_space(wire_conn_t *conn);
int tcp_sleep(uint64_t timeout_ns);
void tcp_disarm(void);
uint64_t tcp_timer_ns(void);
/* Send a control frame now or queue it; SHOAL_ERR_AGAIN when no room. */
int tcp_send_ctl(tcp_peer_t *p, const wire_frame_t *f);
/* Queued bytes go out while the kernel takes them. */
int tcp_flush(tcp_peer_t *p);
/* Set EPOLLIN/EPOLLOUT interest of p's open socket to match its ring. */
void tcp_update_pollout(tcp_peer_t *p);

#endif /* SHOAL_TCP_H */
