/*
 * The point-to-point engine's private interface: message headers, match
 * queues, unexpected messages, and the calls shared by the p2p files.
 *
 * Header of every MPI frame (active-message arguments):
 *   a0 = context id << 32 | (uint32) tag
 *   a1 = stamp << 32 | flags << 24 | sender's rank in its group (24 bits)
 *        where stamp is the sender's count of tolerant barriers started
 *        with the receiver (coll_tolerant.c; 0 when there were none)
 *   eager:      a2 = sender's request (synchronous sends only)
 *   rendezvous: a2 = sender's request, a3 = bytes, a4 = sender's buffer
 *               address when the receiver may read it directly, else 0
 */
#ifndef SHOAL_MPI_P2P_H
#define SHOAL_MPI_P2P_H

#include "mpi/comm/comm.h"
#include "mpi/core/ft.h"
#include "mpi/mpi_impl.h"

/* Handlers of the MPI endpoint. */
#define MPI_H_EAGER 1 /* data in the frame */
#define MPI_H_RTS 2   /* rendezvous: the receiver pulls or asks for data */
#define MPI_H_ACK 3   /* a0 sender request (or 0), a1 credits, a2 what */
#define MPI_H_CTS 4   /* a0 sender request, a1 receiver request, a2 bytes */
#define MPI_H_DATA 5  /* a0 receiver request, a1 offset; pushed data */
#define MPI_H_COOP 6  /* a0 sender request, a1 receive buffer, a2 split,
                         a3 receiver request: write the tail */
#define MPI_H_PART 7  /* a0 receiver request: the tail landed */
#define MPI_H_TBAR 8  /* a0 context, a1 barrier number, a2 round:
                         a tolerant barrier's message (never held back) */

/* Flag of an unexpected message put back by a restart from a checkpoint
 * (core/ckpt.c): never on the wire; its consumption returns no eager
 * credits (the sender's count of them started again at zero). */
#define MPI_MF_RESTORED 0x80u
/* ... put back by the cut's pull of rendezvous (core/ckpt.c): its credits
 * went back when it was pulled, and a synchronous one's ack is still
 * owed (its sreq is a request of this process).  Never on the wire. */
#define MPI_MF_PULLED 0x40u
/* Set by the cut while it pulls messages out to put them back: the match
 * of a synchronous one returns its credits but does not ack it (its
 * sender waits for the program's receive). */
extern int mpi_p2p_hold_sync_acks;

#define MPI_ACK_SYNC 1 /* a synchronous send was matched */
#define MPI_ACK_FIN 2  /* the receiver read the rendezvous data */
/* The receiver dropped the message unreceived: its communicator was
 * revoked there (SHOAL_FT).  a0 is the sender's request when it waits. */
#define MPI_ACK_DROP 3
/* An ack's fourth word: the message acked was brought back by a restart
 * (MPI_MF_RESTORED), so a0 names a request of the job before the
 * restart, looked up among those that came back (ckpt_objs_sync_claim). */
#define MPI_ACK_RESTORED 1

#define MPI_MF_SYNC 0x1u /* header flag: the sender waits for a match */
/* RTS flag: the sender waits for this send now (a blocking call), so it
 * answers a request to help copy at once (the cooperative copy). */
#define MPI_MF_HELP 0x2u

#define MPI_CTX_MAX 65536u /* context ids: [0, MPI_CTX_MAX) */
/* Header word a0: ctx in bits 32..47, a 16-bit digest of the
 * communicator's epoch in 48..63, the tag below. */
#define MPI_CTX_BITS 16

/* The epoch digest an arrival of ours on ctx carries: the 64-bit epoch
 * folded, so that epochs apart by less than 2^16 always differ, and
 * others (after a shrink's agreement, which ORs the clocks) almost
 * always. */
static inline uint16_t mpi_ep_of(uint32_t ctx)
{
    uint64_t e = mpi_ctx_epoch(ctx);

    return (uint16_t)(e ^ e >> 16 ^ e >> 32 ^ e >> 48);
}

/* An arrived message nobody has asked for yet. */
typedef struct mpi_umsg {
    base_list_t hlink; /* hash bucket, arrival order */
    base_list_t qlink; /* its match queue, arrival order */
    uint32_t ctx;
    uint16_t ep;   /* mpi_in_t.ep */
    int src, tag;
    unsigned flags;
    int rdv;       /* 1: a rendezvous request, data still at the sender */
    int src_world; /* world rank of the sender */
    uint64_t sreq;
    uint64_t saddr;
    MPI_Count bytes;
    uint32_t stamp; /* held back by the tolerant barrier until due */
    char data[]; /* eager payload */
} mpi_umsg_t;

/* The posted receives and unexpected messages of one context. */
struct mpi_matchq {
    uint32_t ctx;
    int refs;
    uint32_t nposted, nwild; /* posted receives; those with a wildcard */
    base_list_t posted_wild; /* requests (link2), post order */
    base_list_t unexp;       /* mpi_umsg_t (qlink), arrival order */
    int quiet; /* SHOAL_FT: revoked or failed; leftovers are expected */
    /* The epoch digest (mpi_ep_of) of the communicator it serves: while
     * one does, an arrival of another is for an earlier one that had ctx
     * (dropped); with none, arrivals wait, and the next communicator
     * keeps those of its epoch and drops the rest (mpi_matchq_get). */
    uint16_t ep;
    /* SHOAL_FT: the communicator was revoked here; what arrives is
     * dropped and answered, and the queue outlives the communicator (its
     * context id is retired) so that late arrivals are answered too. */
    int revoked;
};

/* An arriving message, as the match code sees it. */
typedef struct mpi_in {
    uint32_t ctx;
    uint16_t ep; /* the communicator's epoch digest (mpi_ep_of): which
                    incarnation of ctx the sender meant */
    int src, tag;
    unsigned flags;
    int rdv;
    int src_world;
    uint64_t sreq, saddr;
    MPI_Count bytes;
    const void *data;
    shoal_token_t *token; /* inside a handler: reply through it */
} mpi_in_t;

/* Engine settings, read from SHOAL_* at init. */
typedef struct mpi_p2p_cfg {
    size_t eager_max;    /* largest eager payload */
    uint64_t eager_window; /* unconsumed eager bytes a sender may have out */
    size_t frag;         /* pushed rendezvous fragment */
    int cma;             /* receivers may read senders' memory */
    size_t coop_min;     /* both sides copy rendezvous from this size (0: off) */
} mpi_p2p_cfg_t;

extern mpi_p2p_cfg_t mpi_p2p_cfg;

/* Match an arrival (or queue it as unexpected). */
void mpi_arrive(const mpi_in_t *in);
/* A copy of an arrival (its eager data too), and the arrival of a copy. */
mpi_umsg_t *mpi_umsg_from_in(const mpi_in_t *in);
void mpi_in_of_umsg(mpi_in_t *in, const mpi_umsg_t *u);
/* A control frame (args only) to a world rank, queued when it cannot go
 * now (inside handlers and waits). */
void mpi_send_ctl(int world, unsigned handler, uint64_t a0, uint64_t a1,
                  uint64_t a2, uint64_t a3);

/* ---- the tolerant barrier (coll_tolerant.c) ----------------------------------------- */

/* Tolerant barriers started with each world rank; NULL until the first. */
extern uint32_t *mpi_tol_started;

/* The stamp of a message to world rank w. */
static inline uint32_t mpi_tol_stamp(int w)
{
    return BASE_UNLIKELY(mpi_tol_started != NULL) ? mpi_tol_started[w] : 0;
}

/* Deliver an arrival stamped stamp, or hold it back until the barriers it
 * was sent after have completed here (it is copied then). */
void mpi_tol_arrive(const mpi_in_t *in, uint32_t stamp);
/* Does MPI_Barrier on comm use the tolerant barrier? */
int mpi_tol_enabled(MPI_Comm comm);
/* Start a tolerant barrier on an intracommunicator; returns at once. */
int mpi_tol_barrier(MPI_Comm comm);
/* The handler of MPI_H_TBAR. */
void mpi_tol_handler(shoal_token_t *t, const uint64_t *a, unsigned n,
                     void *payload, size_t len);
/* Finalize: wait until every barrier started here has completed and
 * every held message was delivered; then release the state. */
void mpi_tol_fini(void);
/* Start a send request (fields set); completes or progresses later. */
int mpi_send_start(MPI_Request req);
/* Take a send off the engine's queues (its peer died). */
void mpi_send_unqueue(MPI_Request req);
/* Post a receive request (fields set): matches or queues it. */
int mpi_recv_start(MPI_Request req);
/* Find (and unlink when take) the first unexpected message matching. */
mpi_umsg_t *mpi_unexp_find(mpi_matchq_t *q, int src, int tag, int take);
/* Checkpoint: the posted receives of every context but skip and skip + 1,
 * added to *posted, and fn called on each unexpected message there, each
 * context's in arrival order (engine lock held). */
void mpi_p2p_pending(uint32_t skip, long *posted,
                     void (*fn)(void *arg, const mpi_umsg_t *u), void *arg);
/* Return an unexpected message's memory (engine lock held). */
void mpi_umsg_free(mpi_umsg_t *u);
/* Receive an unexpected message into req (frees the umsg). */
int mpi_recv_from_umsg(MPI_Request req, mpi_umsg_t *u);
/* Remove a posted receive that has not matched; 1 if it was removed. */
int mpi_posted_cancel(MPI_Request req);
/* SHOAL_FT: comm was revoked here: drop (and answer) what its contexts
 * hold unreceived, and what arrives for them from now on. */
void mpi_p2p_revoke(MPI_Comm comm);

/* The engine's own queues, worked by mpi_progress_extra. */
typedef struct mpi_p2p_queues {
    base_list_t ctl;      /* control frames that found no room */
    base_list_t deferred; /* sends that found no room */
    base_list_t push;     /* sends whose receiver asked for data */
    base_list_t poll;     /* requests advanced by their poll_fn */
    base_list_t freed;    /* freed by the user, still active */
} mpi_p2p_queues_t;

extern mpi_p2p_queues_t mpi_pq;

void mpi_progress_extra_run(void);

/* The engine's own work after the wires were polled (lock held).  Waits
 * call it on every poll: the common case, all queues empty, is a few
 * loads inline. */
static inline void mpi_progress_extra(void)
{
    if (BASE_UNLIKELY(!base_list_empty(&mpi_pq.ctl) ||
                      !base_list_empty(&mpi_pq.deferred) ||
                      !base_list_empty(&mpi_pq.push) ||
                      !base_list_empty(&mpi_pq.poll) ||
                      !base_list_empty(&mpi_pq.freed) ||
                      mpi_ft.outbox > 0))
        mpi_progress_extra_run();
}
/* 1 when the engine has nothing to retry (queued control frames,
 * deferred sends, pushed rendezvous): only arrivals can make work. */
int mpi_progress_idle(void);

/* SHOAL_PROGRESS=thread (progress_thread.c): start the thread (MPI_Init),
 * stop and join it (first thing in MPI_Finalize). */
int mpi_progress_thread_start(void);
void mpi_progress_thread_stop(void);

/* Wait until req is done (progressing); MPI class of a failure. */
int mpi_req_wait_done(MPI_Request req);
/* 1 when req is done, or now failed because the peer it needs died. */
int mpi_req_settled(MPI_Request req);
/* Wait until done_fn(arg) (progressing).  Used by Waitany & co. */
int mpi_wait_until(int (*done_fn)(void *arg), void *arg);
/* Release a completed request per its kind (persistent ones stay). */
void mpi_req_retire(MPI_Request *req_p);
/* Send-side completion (buffered sends release their space). */
void mpi_send_done(MPI_Request req);

/* Buffered sends (p2p_bsend.c). */
int mpi_bsend_start(MPI_Request user, int blocking);
void mpi_bsend_release(void *block);



/* Blocking standard send of a small contiguous message without a request:
 * 1 sent, 0 not applicable (use the general path), -class on failure. */
int mpi_send_eager_fast(const void *buf, MPI_Count count, MPI_Datatype dt,
                        int dest, int tag, MPI_Comm comm);
#endif /* SHOAL_MPI_P2P_H */
