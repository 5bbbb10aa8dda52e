/*
 * The shared-memory wire, internal declarations.
 *
 * Every rank creates one segment in /dev/shm (mode 0600, named after the job)
 * holding a control block and one receive channel per rank of its host
 * (slot = the sender's local rank).  Senders write into the receiver's
 * segment; nothing is written into the sender's own.  All ranks of a host
 * map all segments of the host at start-up and unlink them as soon as every
 * rank has mapped them, so nothing remains in /dev/shm once the job runs.
 * Pages of a channel are touched only when a sender first uses it, so the
 * memory a rank uses grows with the peers that talk to it.
 */
#ifndef SHOAL_SHM_H
#define SHOAL_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm_ring.h"
#include "wire/wire.h"

#define SHM_MAGIC 0x4d48534c414f4853ull /* "SHOALSHM" */
#define SHM_VERSION 2u
#define SHM_MAX_LOCAL 4096 /* ranks per host */
#define SHM_CPU_WORDS 16   /* CPUs 0..1023 in affinity masks */

/*
 * A published segment of one endpoint (seqlock: gen odd while changing).
 * When the segment lies in memory from wire_shm_mem_alloc, fd names the
 * owner's memfd holding it (mapped at map_base, map_size bytes), so local
 * peers can map it too and write long payloads with a plain memcpy.
 */
typedef struct shm_seg_entry {
    _Atomic uint64_t gen;
    _Atomic uint64_t base;
    _Atomic uint64_t size;
    _Atomic int64_t fd; /* -1: ordinary memory */
    _Atomic uint64_t map_base;
    _Atomic uint64_t map_size;
} shm_seg_entry_t;

/* A consistent copy of a shm_seg_entry_t. */
typedef struct shm_seg_view {
    uint64_t gen, base, size, map_base, map_size;
    int64_t fd;
} shm_seg_view_t;

/* A peer's shared segment as mapped here (per endpoint index). */
typedef struct shm_peer_map {
    uint64_t gen;   /* entry generation this mapping is for; 0: none */
    char *local;    /* the peer's map_base, mapped here */
    size_t len;
    uint64_t remote; /* map_base in the peer */
    int usable;     /* 0: could not map, use cross-memory attach */
} shm_peer_map_t;

/* The control block at the start of every rank's segment. */
typedef struct shm_ctrl {
    /* Written by the owner before it publishes the segment's name. */
    uint64_t magic;
    uint32_t version;
    uint32_t nslots;    /* channels: ranks on this host */
    uint32_t ncells;    /* cells per channel */
    uint32_t bulk_size; /* bulk bytes per channel */
    uint64_t chan_offset, chan_stride;
    int32_t pid;
    int32_t rank;
    uint64_t owner_base; /* the segment's address in the owner's process */
    char node_id[64];
    uint64_t cpumask[SHM_CPU_WORDS];
    uint32_t membarrier; /* the owner registered for global membarrier */
    /* Set by the owner once its last barrier passed (wire_shm_finished):
     * its exit from then on is an end, not a death. */
    _Atomic uint32_t finished;

    /* The owner's doorbell: 1 while it sleeps (or is about to). */
    BASE_ALIGNED(BASE_SHARING_UNIT) _Atomic uint32_t sleeping;

    /* How many of the owner's threads wait inside the library (and so
     * answer requests at once): set by waits that last beyond their first
     * polls, read by peers choosing whether to ask the owner for help
     * (wire_shm_peer_waiting).  Apart from sleeping, which senders read on
     * every send. */
    BASE_ALIGNED(BASE_SHARING_UNIT) _Atomic uint32_t waiting;

    /* Senders set their slot's bit and bump gen when they first connect. */
    BASE_ALIGNED(BASE_SHARING_UNIT) _Atomic uint64_t connect_gen;
    _Atomic uint64_t connected[SHM_MAX_LOCAL / 64];

    /* Segments long messages land in, per endpoint. */
    BASE_ALIGNED(BASE_SHARING_UNIT) shm_seg_entry_t segs[WIRE_MAX_EPS];

    /* Host barriers, per endpoint index; used in local rank 0's block
     * only.  Arrivals and the epoch waiters watch live on separate lines. */
    struct {
        BASE_ALIGNED(BASE_SHARING_UNIT) _Atomic uint32_t count;
        BASE_ALIGNED(BASE_SHARING_UNIT) _Atomic uint32_t epoch;
    } hbar[WIRE_MAX_EPS];
} shm_ctrl_t;

/* A sender's connection to one receiver (lives in the sender's memory). */
typedef struct shm_conn {
    wire_conn_t base;
    shm_prod_t prod;
    shm_ctrl_t *ctrl; /* the receiver's control block */
    pid_t pid;
    int cma;      /* single-copy long messages allowed to this peer */
    int dead;
    int waiting;  /* want_wake is set in the channel */
    uint64_t credits_cache; /* noreply as last read by shm_credits */
    int pidfd;              /* the peer's, for pidfd_getfd (-1: none) */
    shm_peer_map_t maps[WIRE_MAX_EPS];
} shm_conn_t;

/* A receive channel from one sender (lives in the receiver's memory). */
typedef struct shm_inchan {
    shm_cons_t cons;
    int src_rank;
    int slot;
} shm_inchan_t;

/* One rank of this host, as this process sees it. */
typedef struct shm_peer {
    shm_ctrl_t *ctrl; /* its segment, mapped here */
    size_t size;
    int rank;
    int pidfd;     /* for liveness checks; -1 until we talk to it */
    int dead;
    int connected; /* conn is set up (we have sent to it) */
    int listening; /* in is in the poll list (it has sent to us) */
    shm_conn_t conn;
    shm_inchan_t in;
} shm_peer_t;

typedef struct shm_state {
    const boot_info_t *job;
    wire_upcalls_t up;
    int my_slot;
    shm_ctrl_t *me; /* this rank's segment */
    size_t me_size;
    shm_peer_t *peers; /* by slot (local rank), this rank included */
    int *slot_of;      /* world rank -> slot, or -1 when not on this host */
    shm_inchan_t **active; /* receive channels in use, polled in order */
    int nactive;
    uint64_t seen_gen; /* connect_gen when active was last rebuilt */
    int host_cpus;
    int cma_mode; /* 0 auto, 1 on, 2 off (SHOAL_SHM_CMA) */
    uint32_t cma_min;
    shm_conn_t **waiting; /* connections whose want_wake we set */
    int nwaiting;
    uint32_t hbar_epoch[WIRE_MAX_EPS]; /* barriers this rank passed */
    int light; /* every rank of the host takes part in membarrier */
} shm_state_t;

extern shm_state_t shm_state;

/* The control block of rank if it is on this host and mapped, else NULL. */
static inline shm_ctrl_t *shm_local_ctrl(int rank)
{
    shm_state_t *s = &shm_state;
    int slot;

    if (s->job == NULL || rank < 0 || rank >= s->job->size)
        return NULL;
    slot = s->slot_of[rank];
    return slot < 0 ? NULL : s->peers[slot].ctrl;
}

/* Add the receive channels of senders that connected since last time. */
void shm_refresh_inchans(uint64_t gen);
/* Start watching rank's process for death (pidfd). */
void shm_watch_peer(shm_peer_t *p);

/* ---- the data path (shm_xfer.c), entries of wire_shm_ops ----------------- */

int shm_send(wire_conn_t *conn, const wire_msg_t *msg);
size_t shm_max_payload(wire_conn_t *conn, unsigned cat);
uint64_t shm_credits(wire_conn_t *conn);
int shm_poll(int budget);
int shm_arm(void);
int shm_want_space(wire_conn_t *conn);
int shm_sleep(uint64_t timeout_ns);
void shm_disarm(void);

/* ---- segments (shm_seg.c) ------------------------------------------------ */

/* Create name (O_EXCL, 0600) of size bytes and map it. */
int shm_seg_create(const char *name, size_t size, void **base_p);
/* Map an existing segment; *size_p receives its size. */
int shm_seg_attach(const char *name, void **base_p, size_t *size_p);

/* ---- shareable memory (shm_mem.c) ----------------------------------------- */

/* The memfd and mapping holding [base, base + size), or -1. */
int shm_mem_lookup(const void *base, size_t size, uint64_t *map_base_p,
                   uint64_t *map_size_p);
/* Read a peer's segment entry consistently. */
void shm_seg_read(shm_seg_entry_t *e, shm_seg_view_t *v);
/* Local address of the peer's segment range (mapping it on first use), or
 * NULL when it is not shareable with us. */
char *shm_peer_segment_local(shm_conn_t *c, unsigned ep,
                             const shm_seg_view_t *v);
/* Drop every peer mapping of a connection. */
void shm_peer_maps_release(shm_conn_t *c);

/* ---- single copy (shm_cma.c) --------------------------------------------- */

/* Copy len bytes from local src to remote address dst of process pid. */
int shm_cma_write(pid_t pid, uint64_t dst, const void *src, size_t len);
/* Can this process read pid's memory?  (Reads 8 bytes at addr.) */
int shm_cma_check(pid_t pid, uint64_t addr);

/* ---- doorbells (shm_doorbell.c) ------------------------------------------ */

/* The value a sleeper raises its doorbell to: 1 futex, 2 socket. */
extern uint32_t shm_sleep_value;
/* Close the wake-up sockets; the doorbell is a futex again. */
void shm_doorbell_fini(void);
/* Wake the owner of ctrl if it sleeps; returns 1 when a wake was sent. */
int shm_doorbell_ring(shm_ctrl_t *ctrl);
/* Sleep while ctrl->sleeping == 1, at most timeout_ns. */
int shm_doorbell_wait(shm_ctrl_t *ctrl, uint64_t timeout_ns);
/* Register this process for global membarrier; 1 on success. */
int shm_fence_register(void);
/* The sleeping side's barrier: orders the flag just raised before what
 * follows, against every other process's hot-path stores (light mode). */
void shm_fence_heavy(void);

#endif /* SHOAL_SHM_H */
