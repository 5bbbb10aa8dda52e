/*
 * coll: collective algorithms over an abstract transport.
 *
 * The layer knows nothing of MPI.  A communicator is a coll_comm_t: this
 * process's rank, the group size and a table of operations the layer above
 * supplies (nonblocking send and receive, wait, local reduction, typed
 * local copy, extent queries).  Buffers, counts, datatype and operation
 * handles pass through unchanged as opaque values; a NULL datatype only
 * ever travels with a count of 0.
 *
 * Every algorithm is written as a schedule (coll_sched.c): a list of sends,
 * receives and local steps cut into rounds by fences.  A blocking call
 * builds its schedule and runs it to completion in the calling thread.  A
 * nonblocking or persistent call sets start_out on the coll_comm_t around
 * the same coll_* call: the schedule is then built, kept, and advanced by
 * coll_sched_progress from the progress engine.
 *
 * Return values: 0 on success, an error code an operation returned (passed
 * up unchanged, positive in the MPI layer's case), or a negative
 * SHOAL_ERR_* status of this layer's own (no memory).
 */
#ifndef SHOAL_COLL_H
#define SHOAL_COLL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The "data is already in place" buffer; equal to MPI_IN_PLACE. */
#define COLL_IN_PLACE ((void *)-1)

typedef struct coll_sched coll_sched_t;

/* inout[i] = in[i] op inout[i] over n units (coll_ops.reduce_kernel). */
typedef void coll_kernel_t(const void *in, void *inout, int64_t n);

typedef struct coll_ops {
    /* Start sending count elements of dt from buf to dest (with tag). */
    int (*isend)(void *ctx, const void *buf, int64_t count, void *dt,
                 int dest, int tag, void **req_p);
    int (*irecv)(void *ctx, void *buf, int64_t count, void *dt, int source,
                 int tag, void **req_p);
    /* Wait for n requests and free them; the first error is returned. */
    int (*waitall)(void *ctx, int n, void **reqs);
    /* Without blocking: when all n requests are done, free them, set
     * *done to 1 and return the first error; otherwise *done = 0 and the
     * requests stay. */
    int (*testall)(void *ctx, int n, void **reqs, int *done);
    /* Withdraw a request and free it: a receive not matched yet goes at
     * once; one matched, or a send, is waited for (it completes, or fails
     * with its peer).  For steps given up after an error. */
    void (*cancel)(void *ctx, void *req);
    /* Advance communication once without blocking. */
    void (*progress)(void *ctx);
    /* Block until ready(arg) != 0, advancing communication meanwhile and
     * waiting as the library waits (poll, yield, then sleep on this rank's
     * doorbell); returns 0, or an error (a peer died).  ready is also
     * tested after the doorbell is armed, so a condition set by another
     * rank followed by ops->wake for this rank is never missed. */
    int (*wait)(void *ctx, int (*ready)(void *arg), void *arg);
    /* Wake rank (local group, on this host) if it sleeps in wait. */
    void (*wake)(void *ctx, int rank);
    /* The word that is non-zero while rank (local group, on this host)
     * sleeps or is about to: wake is needed only then.  Valid until the
     * library finalizes; NULL when there is none (then call wake each
     * time).  Lets a caller that rings the same ranks again and again
     * skip wake's lookups while they are awake. */
    const _Atomic uint32_t *(*bell)(void *ctx, int rank);
    /* Process id of rank (local group) when it runs on this host, else 0. */
    int (*peer_pid)(void *ctx, int rank);
    /* inout[i] = in[i] op inout[i], both buffers laid out as dt. */
    int (*reduce_local)(void *ctx, void *op, const void *in, void *inout,
                        int64_t count, void *dt);
    /* The function reduce_local ends in for op on dt, when elements of dt
     * go to it in one piece: count elements are count * *per units, from
     * the true lower bound of both buffers, which must be aligned to
     * *align, a power of two (else reduce_local).  NULL when there is
     * none; may be NULL. */
    coll_kernel_t *(*reduce_kernel)(void *op, void *dt, int64_t *per,
                                    size_t *align);
    /* Copy scount elements of sdt at src into rcount elements of rdt at
     * dst (the type signatures match, as in a message to oneself). */
    int (*copy)(void *ctx, const void *src, int64_t scount, void *sdt,
                void *dst, int64_t rcount, void *rdt);
    /* extent, true lower bound and true extent of dt, in bytes */
    void (*extent)(void *dt, int64_t *extent_p, int64_t *true_lb_p,
                   int64_t *true_extent_p);
    /* bytes of data in one element of dt */
    int64_t (*size)(void *dt);
    /* 1 when count elements of dt are one block of count * size bytes
     * starting at the true lower bound */
    int (*contig)(void *dt);
    /* 1 when op is commutative */
    int (*commutative)(void *op);
    /* the datatype of one byte (messages cut at byte boundaries) */
    void *byte_dt;
} coll_ops_t;

typedef struct coll_comm {
    void *ctx;   /* handed back to every operation */
    const coll_ops_t *ops;
    int rank;    /* in the local group */
    int size;    /* of the local group */
    int is_inter;
    int remote_size; /* of the remote group; = size for intracomms */
    uint32_t seq;    /* collective calls started: the source of tags */
    /* Placement: host_of[r] is the host index (0..nhosts-1, in order of
     * first appearance) of local-group rank r; NULL when nhosts == 1. */
    const int *host_of;
    int nhosts;
    /* Ranks of the local group on this host share a memory segment for
     * the shared-memory algorithms (coll_shm.c); NULL until first use. */
    void *shm;
    /* The communicator's context, alike on every rank (names its multicast
     * group), and the multicast broadcast's state (coll/mcast), NULL until
     * first use. */
    uint32_t id;
    void *mcast;
    /*
     * Set by the caller around one coll_* call.  NULL: run to completion.
     * Otherwise the call builds its schedule and stores it in *start_out
     * instead: started at once (persistent 0, a nonblocking call) or kept
     * for coll_sched_start (persistent 1, an MPI *_init call).  The call
     * returns 0 then; errors come from coll_sched_progress.  A call with
     * nothing to move may leave *start_out NULL.  A handed-over schedule
     * keeps the caller's data buffers (the user leaves them alone until
     * completion) but never the caller's arrays (counts, displacements,
     * types, block lists): algorithms read those while they build.
     */
    coll_sched_t **start_out;
    int persistent;
    coll_sched_t *held; /* where a caller may point start_out */
    /* A handed-over schedule kept for the next call (coll_sched_recycle),
     * so warm calls allocate none; freed by coll_comm_fini. */
    coll_sched_t *spare;
} coll_comm_t;

/* Release what the layer keeps for c (the shared segment); call before c
 * goes away, when no schedule of c is active. */
void coll_comm_fini(coll_comm_t *c);

/* ---- schedules advanced from the progress engine ------------------------------ */

/* Start (again, for a persistent schedule, with the tag it took when it
 * was built).  Returns 0, or an error starting it (then it is done). */
int coll_sched_start(coll_sched_t *s);
/* Advance without blocking: 1 when done (the result is in
 * coll_sched_result), 0 when not yet. */
int coll_sched_progress(coll_sched_t *s);
/* The first error of the last run (0 for success). */
int coll_sched_result(const coll_sched_t *s);
/* Free a schedule that is done (or was never started). */
void coll_sched_free(coll_sched_t *s);
/* The same for a schedule of c that is done and not persistent, where c is
 * sure to outlive it (a blocking call's): c keeps it for its next call. */
void coll_sched_recycle(coll_comm_t *c, coll_sched_t *s);

/* Highest tag a schedule uses; the transport must accept [0, this]. */
#define COLL_TAG_MASK 0x3fffffffu

/* ---- intracommunicators ------------------------------------------------- */

int coll_barrier(coll_comm_t *c);
int coll_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt, int root);
int coll_reduce(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                void *dt, void *op, int root);
int coll_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                   int64_t count, void *dt, void *op);

/*
 * The same four, blocking, without a schedule when they can (the common
 * warm case: every rank on this host, the shared-memory algorithm chosen,
 * its segment set up): the call is started and returned, and the caller
 * waits for it with coll_now_test, calling it until it returns 1 (with
 * *rc the call's result, 0 or an error).  NULL when the call needs a
 * schedule: the caller then makes the plain coll_* call, which does the
 * same in every respect but speed.  Both take one tag (c->seq), so ranks
 * that went different ways still agree.  The record belongs to c until
 * coll_now_test returned 1 (or the caller gave the call up because a
 * wait failed).
 */
typedef struct shm_call coll_now_t;
coll_now_t *coll_now_barrier(coll_comm_t *c);
coll_now_t *coll_now_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt,
                           int root);
coll_now_t *coll_now_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                            int64_t count, void *dt, void *op, int root);
coll_now_t *coll_now_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                               int64_t count, void *dt, void *op);
int coll_now_test(coll_now_t *call, int *rc);

/*
 * The v-forms take per-rank counts and displacements (in elements of the
 * root's type), 64-bit as MPI's large-count forms give them; the plain
 * forms are the v-forms with counts[i] = count and displs[i] = i * count,
 * which NULL arrays stand for.
 */
int coll_gatherv(coll_comm_t *c, const void *sbuf, int64_t scount, void *sdt,
                 void *rbuf, int64_t rcount, const int64_t *rcounts,
                 const int64_t *displs, void *rdt, int root);
int coll_scatterv(coll_comm_t *c, const void *sbuf, int64_t scount,
                  const int64_t *scounts, const int64_t *displs, void *sdt,
                  void *rbuf, int64_t rcount, void *rdt, int root);
int coll_allgatherv(coll_comm_t *c, const void *sbuf, int64_t scount, void *sdt,
                    void *rbuf, int64_t rcount, const int64_t *rcounts,
                    const int64_t *displs, void *rdt);

/* All-to-all: the plain and v forms are built on the w form, whose
 * displacements are in bytes and types are per peer. */
int coll_alltoall(coll_comm_t *c, const void *sbuf, int64_t scount,
                  void *sdt, void *rbuf, int64_t rcount, void *rdt);
int coll_alltoallv(coll_comm_t *c, const void *sbuf, const int64_t *scounts,
                   const int64_t *sdispls, void *sdt, void *rbuf,
                   const int64_t *rcounts, const int64_t *rdispls, void *rdt);
int coll_alltoallw(coll_comm_t *c, const void *sbuf, const int64_t *scounts,
                   const int64_t *sdispls, void *const *sdts, void *rbuf,
                   const int64_t *rcounts, const int64_t *rdispls,
                   void *const *rdts);

/* rcounts NULL: every rank gets rcount elements (Reduce_scatter_block). */
int coll_reduce_scatter(coll_comm_t *c, const void *sbuf, void *rbuf,
                        int64_t rcount, const int64_t *rcounts, void *dt,
                        void *op);
int coll_scan(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
              void *dt, void *op);
int coll_exscan(coll_comm_t *c, const void *sbuf, void *rbuf, int64_t count,
                void *dt, void *op);

/* ---- neighbourhood exchanges (coll_neighbor.c) ------------------------------
 *
 * The schedule behind MPI's neighbourhood collectives.  The layer knows no
 * topologies: the caller lists the blocks a rank sends and receives, each
 * with its peer.  count elements of dt at buf, exchanged with peer (a rank
 * of the group, or COLL_PROC_NULL: nothing moves and the block is left as
 * it is).
 */
typedef struct coll_block {
    int peer;
    void *buf;
    int64_t count;
    void *dt;
} coll_block_t;

/*
 * Send the nsend blocks of send and receive the nrecv blocks of recv, all
 * in one round.  Between two ranks blocks pair in list order: the k-th
 * block a rank sends to a peer lands in the k-th block that peer receives
 * from it (a rank's blocks to itself too, copied).
 */
int coll_neighbor(coll_comm_t *c, int nsend, const coll_block_t *send,
                  int nrecv, const coll_block_t *recv);

/* ---- intercommunicators (coll_inter.c) -----------------------------------
 *
 * Peers are ranks of the remote group.  root is as in MPI: COLL_ROOT in
 * the root's group at the root, COLL_PROC_NULL at the root's other members,
 * and the root's remote rank in the other group.
 */
#define COLL_PROC_NULL (-2)
#define COLL_ROOT (-3)

int coll_inter_barrier(coll_comm_t *c);
int coll_inter_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt,
                     int root);
int coll_inter_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                      int64_t count, void *dt, void *op, int root);
int coll_inter_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                         int64_t count, void *dt, void *op);
int coll_inter_gatherv(coll_comm_t *c, const void *sbuf, int64_t scount,
                       void *sdt, void *rbuf, int64_t rcount,
                       const int64_t *rcounts, const int64_t *displs, void *rdt,
                       int root);
int coll_inter_scatterv(coll_comm_t *c, const void *sbuf, int64_t scount,
                        const int64_t *scounts, const int64_t *displs,
                        void *sdt, void *rbuf, int64_t rcount, void *rdt,
                        int root);
int coll_inter_allgatherv(coll_comm_t *c, const void *sbuf, int64_t scount,
                          void *sdt, void *rbuf, int64_t rcount,
                          const int64_t *rcounts, const int64_t *displs,
                          void *rdt);
/* rcounts (over the local group) NULL: rcount each. */
int coll_inter_reduce_scatter(coll_comm_t *c, const void *sbuf, void *rbuf,
                              int64_t rcount, const int64_t *rcounts, void *dt,
                              void *op);
int coll_inter_alltoallw(coll_comm_t *c, const void *sbuf,
                         const int64_t *scounts, const int64_t *sdispls,
                         void *const *sdts, void *rbuf, const int64_t *rcounts,
                         const int64_t *rdispls, void *const *rdts);

#endif /* SHOAL_COLL_H */
