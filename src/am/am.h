/*
 * am: the active-message engine behind shoal.h.
 *
 * It owns endpoints and handler tables, picks the wire for each peer and
 * connects on first use, lends credits (at most SHOAL_AM_WINDOW requests
 * outstanding per peer: a request is outstanding until its reply has run
 * here or the peer finished it without replying), queues replies that find
 * no room, splits long payloads larger than a wire frame, runs handlers
 * from the wires' deliver upcall, and waits adaptively (poll, yield,
 * sleep).  The native barrier is a dissemination barrier over system
 * requests.
 */
#ifndef SHOAL_AM_H
#define SHOAL_AM_H

#include "shoal.h"

#include "base/base.h"
#include "base/base_list.h"
#include "boot/boot.h"
#include "wire/wire.h"

#include "am_notice.h"

/* Endpoint index of the library's own traffic (init/finalize barriers). */
#define AM_SYSTEM_EP (WIRE_MAX_EPS - 1)

/* System handler indices (frames with WIRE_F_SYSTEM). */
#define AM_SYS_BARRIER 1
/* In-band death notices and the ring (am_tell.c): AM_SYS_DEAD names the
 * ranks the sender takes for dead (am_notice.h: one rank, or a set);
 * AM_SYS_BEAT carries nothing. */
#define AM_SYS_DEAD 2
#define AM_SYS_BEAT 3

/* The exit status of a process that learns it was taken for dead while
 * it lives (am_fail_stop, docs/FT.md). */
#define AM_EXIT_TAKEN_FOR_DEAD 75

_Static_assert(SHOAL_AM_MAX_ARGS == WIRE_MAX_ARGS, "args limit");
_Static_assert(SHOAL_MAX_ENDPOINTS < AM_SYSTEM_EP, "endpoint indices");

/* Where a medium request's payload of len bytes for a handler is to be
 * received (a buffer of the layer above, given to the handler as its
 * payload), or NULL for a library buffer; args as the handler gets them. */
typedef void *(*am_place_fn_t)(const uint64_t *args, unsigned nargs,
                               size_t len);

typedef struct am_handler {
    shoal_handler_fn_t fn;
    const char *name;
    unsigned flags; /* SHOAL_HANDLER_REQUEST | SHOAL_HANDLER_REPLY */
    am_place_fn_t place; /* NULL: none (am_set_place) */
} am_handler_t;

struct shoal_ep {
    unsigned index;
    am_handler_t handlers[SHOAL_AM_MAX_HANDLERS];
    void *seg;
    size_t seg_size;
    void *user_data;
};

struct shoal_token {
    shoal_ep_t *ep;
    int src;
    uint8_t is_request;
    uint8_t replied;
};

/* A frame waiting for room (replies and their fragments only). */
typedef struct am_deferred {
    base_list_t link;
    wire_msg_t msg;
    uint64_t args[WIRE_MAX_ARGS];
    /* the payload follows */
} am_deferred_t;

typedef struct am_peer {
    wire_conn_t *conn;     /* NULL until first use */
    uint32_t open;         /* our requests outstanding there */
    uint64_t credits_seen; /* conn's credit count when last read */
    int dead;
    base_list_t pending;      /* am_deferred_t, in send order */
    base_list_t pending_link; /* in am.pending_peers while pending */
    /* In am.space_wanted from an am_request_try that found no room (the
     * caller will retry) until one succeeds: a sleep asks the wire to be
     * woken when this peer's channel gains room. */
    base_list_t space_link;
    /* Under SHOAL_FT, a rank taken for dead here that was heard from
     * again: to be told so (am_tell.c), and when it last was. */
    int zombie;
    uint64_t told_dead_at;
    /* Under SHOAL_FT_ACCUSE, a rank of another host that a wire gave up,
     * accused to the launcher, which decides (am_accuse.c): since when,
     * and the wire's status. */
    int suspect;
    int suspect_status;
    uint64_t suspect_at;
} am_peer_t;

/* Wires SHOAL_WIRES may list, and network wires up at once, at most. */
#define AM_WIRES_MAX 8

/* A network wire that is up, and how often progress polls it: every
 * every-th call while it is quiet (am_progress.c). */
typedef struct am_net {
    const wire_ops_t *ops;
    uint32_t every, countdown;
    uint32_t poll_max; /* SHOAL_TCP_POLL_MAX, or 1 alone on the host */
} am_net_t;

/* Dissemination-barrier state of one endpoint index. */
typedef struct am_barrier {
    uint32_t epoch;
    uint64_t arrived[2]; /* per epoch parity: bit k = round k arrived */
} am_barrier_t;

typedef struct am_state {
    int init_count;
    const boot_info_t *job;
    am_peer_t *peers; /* by rank */
    shoal_ep_t *eps[SHOAL_MAX_ENDPOINTS];
    int neps; /* eps[neps..] are all NULL */
    am_barrier_t barriers[WIRE_MAX_EPS];
    int in_handler;
    uint32_t window;
    size_t max_medium;
    int oversubscribed; /* more ranks on this host than CPUs for them */
    base_list_t pending_peers;
    base_list_t space_wanted; /* am_peer_t.space_link */
    /* Bumped when a peer joins pending_peers or space_wanted: a sleep
     * whose last look at the condition added one arms again (am_wait.c). */
    uint32_t wanted_gen;
    int unreported_deaths; /* peer deaths shoal_wait has not returned yet */
    int deaths;            /* peer deaths seen, ever (collectives check) */
    /* World ranks in the order their deaths were noticed here, deaths of
     * them (the failure order MPIX_Comm_get_failed reports). */
    int *dead_order;
    uint64_t last_peer_check;
    uint64_t peer_check; /* SHOAL_PEER_CHECK, or SHOAL_FT_DETECT if less */
    /* In-band death notices (am_tell.c, SHOAL_FT only): the ranks taken
     * for dead since the last round of notices went out (a bitmap; NULL:
     * not under SHOAL_FT) and whether it has any, what each rank is still
     * to be told, when the last round opened, the last death was learned
     * and the next round began to wait (0: it does not; a nap hold is
     * taken while it does), and whether telling has stopped (finalize).
     * tell_due: a round waits to open or to go out, so progress itself
     * tells (am_tell_poll) from tell_next_at on; zero while nobody died,
     * the only word of this on the message path. */
    uint64_t *tell_new;
    int tell_new_any;
    struct am_tell_owed *tell_owed;
    uint64_t tell_round_at, tell_learned_at, tell_held_since, tell_next_at;
    int tell_stopped;
    int tell_due;
    int zombies;              /* peers with zombie set */
    int suspects;             /* peers with suspect set (am_accuse.c) */
    /* The ring of watches (am_ring.c): each rank's host (a dense index),
     * the ranks in host order, and room for the live ones and the plan;
     * and when to send the ranks watched the next AM_SYS_BEAT. */
    int *ring_host, *ring_order, *ring_live, *ring_watcher;
    uint64_t ring_watching; /* a hash of the set watched (for the log) */
    uint64_t ring_next_beat;
    /* Run with each peer check of a wait: an upper layer that listens to
     * the launcher while the rank waits (the MPI layer's checkpoints the
     * launcher asks for, mpi/core/ckpt_trigger.c); NULL: none. */
    void (*wait_hook)(void);
    shoal_stats_t stats;
    /* The network wires up, in SHOAL_WIRES order (am_wires.c): progress
     * polls each through its throttle, waits sleep in net[0], which also
     * watches the shared-memory doorbell and the other network wires. */
    int nnet;
    am_net_t net[AM_WIRES_MAX];
    int net_blind;    /* some doorbell cannot end a sleep in net[0] */
    uint64_t net_nap; /* longest sleep the network wires allow (by arm) */
    int nap_holds;    /* am_nap_hold calls not yet released */
    uint64_t hold_nap; /* the shortest nap they asked for */
    /* SHOAL_WIRES, parsed: the wires in order of preference. */
    const wire_ops_t *listed[AM_WIRES_MAX];
    int nlisted;
    int shm_listed;
} am_state_t;

extern am_state_t am;

/* ---- progress and waiting (am_progress.c, am_wait.c) --------------------- */

/* Deliver arrived frames and flush queued ones; returns handlers run. */
int am_progress(void);

/* Poll each network wire now, or count down to its next turn while it
 * is quiet. */
void am_progress_net(void);

/* The wires' deliver upcall: run the handler of one frame. */
int am_deliver(void *arg, int src, const wire_msg_t *msg);
/* The wires' place upcall: the handler's am_place_fn_t, if any. */
void *am_place(void *arg, int src, const wire_msg_t *msg);
/* Give the request handler of ep a place function (registering the
 * handler again removes it): a wire that receives a medium payload in
 * pieces (the datagram wire) may then put it straight where the handler
 * would copy it. */
void am_set_place(shoal_ep_t *ep, unsigned handler, am_place_fn_t fn);

/*
 * Wait adaptively until ready(arg, handled) returns non-zero: 1 for done
 * (am_block returns SHOAL_OK) or a negative status (returned).  handled is
 * how many handlers the last progress ran.  blocked, if not NULL, is a
 * connection whose room the caller waits for.  report_deaths makes a newly
 * detected peer death end the wait with SHOAL_ERR_PEER_DEAD.  timeout_ns < 0
 * waits without limit.
 */
typedef int (*am_ready_fn_t)(void *arg, int handled);
int am_block(am_ready_fn_t ready, void *arg, wire_conn_t *blocked,
             int report_deaths, int64_t timeout_ns);

/* Look for dead peers if the last look is SHOAL_PEER_CHECK old (or
 * SHOAL_FT_DETECT), or a death was learned since: for waits of a layer
 * above that do not use am_block (the MPI layer's under
 * MPI_THREAD_MULTIPLE), and progress telling a death (am_tell_poll).
 * 1 when it looked. */
int am_check_peers_due(void);

/*
 * Sleeping on every wire, for a thread of a layer above that waits on its
 * own terms (the MPI progress thread): am_sleep_arm() returns 1 when work
 * waits already (then do not sleep); am_sleep(nap) blocks until a frame,
 * a doorbell or nap ns; am_sleep_disarm() ends the sequence (always call
 * it).  Arm and disarm under the caller's engine lock; sleep outside it.
 */
int am_sleep_arm(void);
void am_sleep(uint64_t nap);
void am_sleep_disarm(void);

/* ---- the wires (am_wires.c) ----------------------------------------------- */

/* Parse SHOAL_WIRES into am.listed; SHOAL_ERR_CONFIG naming a bad item. */
int am_wires_parse(const char *list);

/* Bring up the listed network wires the job needs (collective: every rank
 * decides alike), and make a sleep in the first one wake for the others. */
int am_wires_start(const wire_upcalls_t *up);

/* Take the network wires down, the last one up first. */
void am_wires_stop(void);

/* The wires up, as "shm+tcp", for the log. */
void am_wires_describe(char *buf, size_t cap);

/* The first listed wire that is up and reaches rank, and whose path to
 * it is not blocked (NULL: none does).  One whose first-contact probe is
 * out comes back in *pending (result NULL: ask again after progress);
 * with pending NULL such wires are passed over. */
const wire_ops_t *am_wire_for(int rank, const wire_ops_t **pending);

/* A key derived from the job's secret for label, and this process's
 * address, from the first network wire up (wire_ops_t.side): for side
 * channels such as the multicast broadcast.  An error without one. */
int am_net_side(const char *label, uint8_t key[16],
                struct sockaddr_storage *addr);

/* A descriptor of a layer above that ends sleeps while it is readable
 * (the multicast broadcast's group socket, read from its progress) or,
 * with writable, while it is writable (its sending socket, whose buffer
 * it waits to have room), until unwatched.  An error when no network wire
 * can watch it (then take a nap hold). */
int am_net_watch(int fd, int writable);
void am_net_unwatch(int fd);

/* A layer above that needs progress soon although nothing may ring
 * (the multicast broadcast reads its own socket): while holds are taken,
 * sleeps last at most the shortest nap asked for. */
void am_nap_hold(uint64_t nap_ns);
void am_nap_release(void);

/* Whether rank is on this host as the wires see it (the shared-memory
 * wire reaches it; with SHOAL_WIRES_FAKE_HOSTS, on this pretend host). */
int am_wire_same_host(int rank);

/* The error for a rank that no wire reaches. */
int am_wire_unreachable(int rank);

/* The i-th wire SHOAL_WIRES may name, NULL past the last (shoal-info). */
const wire_ops_t *am_wire_known(int i);

/* ---- sending (am_send.c) ------------------------------------------------- */

/* The peer's connection, opened on first use. */
int am_peer_get(int rank, am_peer_t **peer_p);

/* Send a request frame (system or user), waiting for credits and room. */
int am_request(am_peer_t *peer, wire_msg_t *m);

/* A medium request whose arguments the caller has already checked
 * (len within the medium limit, handler registered): the MPI fast path. */
int am_request_medium_unchecked(unsigned ep, int dest, unsigned handler,
                                const void *payload, size_t len,
                                const uint64_t *args, unsigned nargs);

/* A short (len 0, payload NULL) or medium request that returns
 * SHOAL_ERR_AGAIN instead of waiting for credits or room. */
int am_request_try(unsigned ep, int dest, unsigned handler,
                   const void *payload, size_t len, const uint64_t *args,
                   unsigned nargs);

/* A short system request (handler AM_SYS_*) now, or SHOAL_ERR_AGAIN when
 * the peer's channel or credits, or its first-contact probe, are not
 * ready: never waits (connects on first use). */
int am_system_try(int dest, unsigned handler, const uint64_t *args,
                  unsigned nargs);

/* A short system frame to a peer even if it is taken for dead (telling
 * it so), through its connection (opened if none), without credits;
 * SHOAL_ERR_AGAIN when its channel is full.  Never waits. */
int am_system_last(int dest, unsigned handler, const uint64_t *args,
                   unsigned nargs);

/* Send queued frames of every peer while their channels have room. */
void am_flush_deferred(void);

/* ---- endpoints and barriers (am_ep.c, am_barrier.c) ---------------------- */

/* Is ep one of ours?  Compares pointers only: a stray one is not touched. */
static inline int am_ep_valid(const shoal_ep_t *ep)
{
    for (int i = 0; i < am.neps; i++)
        if (am.eps[i] == ep)
            return ep != NULL;
    return 0;
}

/* The error of a call that failed am_entry_ok (cold: formats a detail). */
int am_entry_error(const char *fn, int allow_in_handler);

/* Common checks of public calls: initialized, not in a handler. */
static inline int am_check_entry(const char *fn, int allow_in_handler)
{
    if (BASE_LIKELY(am.init_count > 0 && (allow_in_handler || !am.in_handler)))
        return SHOAL_OK;
    return am_entry_error(fn, allow_in_handler);
}

/* Dissemination barrier over every rank for endpoint index epi. */
int am_barrier_run(unsigned epi);

/* Barrier, drain every channel and queue, twice: nothing is in flight after. */
int am_quiesce(unsigned epi);

/* Take rank for dead (once): the wires' upcall, and the MPI layer's when
 * a fault-tolerant agreement decided it failed (docs/FT.md). */
void am_mark_dead(int rank, int status, const char *why);

/* ---- accusations (am_accuse.c; SHOAL_FT_ACCUSE only) -------------------- */

/* A wire gave rank up: 1 when it was accused to the launcher (which
 * decides; the rank is suspect meanwhile), 0 when the caller is to take
 * it for dead now (same host, no launcher to decide, already dead). */
int am_accuse(int rank, int status, const char *why);
/* p is dead now: no longer suspect. */
void am_accuse_cleared(am_peer_t *p);
/* Suspects the launcher never decided on, past the wait: dead (each
 * peer check while am.suspects > 0). */
void am_accuse_check(uint64_t now);

/* System frame arrived. */
void am_system_deliver(int src, const wire_msg_t *m);

/* ---- in-band death notices (am_tell.c; SHOAL_FT only) ------------------- */

/* Memory for the notices (am_start, under SHOAL_FT). */
int am_tell_init(void);
/* rank was just taken for dead here: tell every other rank. */
void am_tell_death(int rank);
/* Open the round that waits unless it is held, and send the notices
 * that wait as far as channels have room; never waits (each peer check
 * of a wait, at time now). */
void am_tell_progress(uint64_t now);
/* The same from progress, while am.tell_due: after a look for dead peers
 * if a death was learned since the last, so what the launcher and the
 * pidfds know joins the round.  A rank whose MPI calls all complete at
 * once (no wait reaches a look) still passes on what it learns. */
void am_tell_poll(void);
/* A last try, without waiting, at the notices still to send
 * (shoal_finalize, before am_tell_fini). */
void am_tell_flush(void);
/* ---- the ring of watches (am_ring.c; SHOAL_FT only) ---------------------- */

/* Who watches whom: live holds the m live ranks listed host by host
 * (ascending hosts, ranks ascending within one), host the host index of
 * every rank.  Sets watcher[r], for each r of live, to the live rank of
 * another host that watches it, -1 when every live rank is on r's host.
 * Pure: the unit test checks it over placements. */
void am_ring_plan(int m, const int *live, const int *host, int *watcher);
/* The placement, from boot's nodes and the pretend hosts (am_tell_init). */
int am_ring_init(void);
void am_ring_fini(void);
/* Every beat period, an AM_SYS_BEAT to each rank this one watches, so
 * that its wire watches it (each peer check of a wait). */
void am_ring_beat(uint64_t now);
/* AM_SYS_DEAD arrived from src: 0 when it is malformed (the caller
 * drops it). */
int am_tell_arrive(int src, const wire_msg_t *m);
/* A frame m arrived from src, which this rank takes for dead (the
 * caller checked): tell src so at the next peer check (fail-stop). */
void am_tell_zombie(int src, const wire_msg_t *m);
/* Rank by took this one for dead (why: how we know): say so and end the
 * process at once, as ULFM's fail-stop model requires (docs/FT.md). */
void am_fail_stop(int by, const char *why) BASE_NORETURN;
/* Stop telling (shoal_finalize) and free the memory. */
void am_tell_fini(void);

#endif /* SHOAL_AM_H */
