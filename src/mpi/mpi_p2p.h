/*
 * The point-to-point engine's private interface: message headers, match
 * queues, unexpected messages, and the calls shared by the p2p files.
 *
 * Header of every MPI frame (active-message arguments):
 *   a0 = context id << 32 | (uint32) tag
 *   a1 = flags << 32 | (uint32) sender's rank in its group
 *   eager:      a2 = sender's request (synchronous sends only)
 *   rendezvous: a2 = sender's request, a3 = bytes, a4 = sender's buffer
 *               address when the receiver may read it directly, else 0
 */
#ifndef SHOAL_MPI_P2P_H
#define SHOAL_MPI_P2P_H

#include "mpi_impl.h"

/* Handlers of the MPI endpoint. */
#define MPI_H_EAGER 1 /* data in the frame */
#define MPI_H_RTS 2   /* rendezvous: the receiver pulls or asks for data */
#define MPI_H_ACK 3   /* a0 sender request (or 0), a1 credits, a2 what */
#define MPI_H_CTS 4   /* a0 sender request, a1 receiver request, a2 bytes */
#define MPI_H_DATA 5  /* a0 receiver request, a1 offset; pushed data */
#define MPI_H_COOP 6  /* a0 sender request, a1 receive buffer, a2 split,
                         a3 receiver request: write the tail */
#define MPI_H_PART 7  /* a0 receiver request: the tail landed */

#define MPI_ACK_SYNC 1 /* a synchronous send was matched */
#define MPI_ACK_FIN 2  /* the receiver read the rendezvous data */

#define MPI_MF_SYNC 0x1u /* header flag: the sender waits for a match */

#define MPI_CTX_MAX 65536u /* context ids: [0, MPI_CTX_MAX) */

/* An arrived message nobody has asked for yet. */
typedef struct mpi_umsg {
    base_list_t hlink; /* hash bucket, arrival order */
    base_list_t qlink; /* its match queue, arrival order */
    uint32_t ctx;
    int src, tag;
    unsigned flags;
    int rdv;       /* 1: a rendezvous request, data still at the sender */
    int src_world; /* world rank of the sender */
    uint64_t sreq;
    uint64_t saddr;
    MPI_Count bytes;
    char data[]; /* eager payload */
} mpi_umsg_t;

/* The posted receives and unexpected messages of one context. */
struct mpi_matchq {
    uint32_t ctx;
    int refs;
    uint32_t nposted, nwild; /* posted receives; those with a wildcard */
    base_list_t posted_wild; /* requests (link2), post order */
    base_list_t unexp;       /* mpi_umsg_t (qlink), arrival order */
};

/* An arriving message, as the match code sees it. */
typedef struct mpi_in {
    uint32_t ctx;
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
/* Start a send request (fields set); completes or progresses later. */
int mpi_send_start(MPI_Request req);
/* Post a receive request (fields set): matches or queues it. */
int mpi_recv_start(MPI_Request req);
/* Find (and unlink when take) the first unexpected message matching. */
mpi_umsg_t *mpi_unexp_find(mpi_matchq_t *q, int src, int tag, int take);
/* Return an unexpected message's memory (engine lock held). */
void mpi_umsg_free(mpi_umsg_t *u);
/* Receive an unexpected message into req (frees the umsg). */
int mpi_recv_from_umsg(MPI_Request req, mpi_umsg_t *u);
/* Remove a posted receive that has not matched; 1 if it was removed. */
int mpi_posted_cancel(MPI_Request req);

/* The engine's own work after the wires were polled (lock held). */
void mpi_progress_extra(void);

/* Wait until req is done (progressing); MPI class of a failure. */
int mpi_req_wait_done(MPI_Request req);
/* Wait until done_fn(arg) (progressing).  Used by Waitany & co. */
int mpi_wait_until(int (*done_fn)(void *arg), void *arg);
/* Release a completed request per its kind (persistent ones stay). */
void mpi_req_retire(MPI_Request *req_p);
/* Send-side completion (buffered sends release their space). */
void mpi_send_done(MPI_Request req);

/* Buffered sends (mpi_bsend.c). */
int mpi_bsend_start(MPI_Request user, int blocking);
void mpi_bsend_release(void *block);



/* Blocking standard send of a small contiguous message without a request:
 * 1 sent, 0 not applicable (use the general path), -class on failure. */
int mpi_send_eager_fast(const void *buf, MPI_Count count, MPI_Datatype dt,
                        int dest, int tag, MPI_Comm comm);
#endif /* SHOAL_MPI_P2P_H */
