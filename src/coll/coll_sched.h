/*
 * Schedules: a collective as data.  An algorithm appends sends, receives
 * and local steps (reduce, copy); a fence ends a round, so everything
 * after it may use what the round received and reuse what it sent.  The
 * steps of one round run in the order they were appended, communication
 * nonblocking.  Temporary buffers belong to the schedule and live as long
 * as it does.
 *
 * Building never fails half-way for the caller: the first error (no
 * memory) is kept in the schedule, later appends do nothing, and
 * coll_sched_finish reports it.
 */
#ifndef SHOAL_COLL_SCHED_H
#define SHOAL_COLL_SCHED_H

#include "coll.h"

enum {
    COLL_STEP_SEND = 1,
    COLL_STEP_RECV,
    COLL_STEP_REDUCE, /* dst = src op dst */
    COLL_STEP_COPY,   /* src (count of dt) -> dst (dcount of ddt) */
    COLL_STEP_FENCE,
    COLL_STEP_POLL /* fn(arg, &wait) until it says done */
};

/* A poll step's test: 1 done, 0 not yet, or an error (< 0 a SHOAL_ERR_*
 * status, > 0 a transport code). */
typedef int (*coll_poll_fn)(void *arg);

typedef struct coll_step {
    int kind;
    int peer;
    const void *src;
    void *dst;
    int64_t count, dcount;
    void *dt, *ddt, *op;
    coll_poll_fn poll;
    void (*abort)(void *arg); /* a poll step given up: release its work */
    void *arg;
} coll_step_t;

/* Steps and requests a schedule holds without allocating: enough for the
 * shared-memory algorithms and the message algorithms of small groups. */
#define COLL_SCHED_INLINE 8

struct coll_sched {
    coll_comm_t *comm;
    int tag;
    int err;
    int nsteps, cap;
    coll_step_t *steps;
    int ntmp, tmpcap;
    void **tmp; /* blocks to free */
    /* running (coll_sched_start / coll_sched_progress) */
    int pc;      /* next step */
    int rc;      /* first error of this run */
    int done;
    int nreq, reqcap;
    void **reqs; /* posted and not yet completed */
    /* steps and reqs point here until they outgrow it */
    coll_step_t inl_steps[COLL_SCHED_INLINE];
    void *inl_reqs[COLL_SCHED_INLINE];
};

/* Start a schedule for the next collective call on c (takes its tag). */
void coll_sched_init(coll_sched_t *s, coll_comm_t *c);

void coll_sched_send(coll_sched_t *s, const void *buf, int64_t count,
                     void *dt, int peer);
void coll_sched_recv(coll_sched_t *s, void *buf, int64_t count, void *dt,
                     int peer);
void coll_sched_reduce(coll_sched_t *s, void *op, const void *in,
                       void *inout, int64_t count, void *dt);
void coll_sched_copy(coll_sched_t *s, const void *src, int64_t count,
                     void *dt, void *dst, int64_t dcount, void *ddt);
void coll_sched_fence(coll_sched_t *s);

/*
 * A local step that may take several progress calls (waiting on flags in
 * shared memory, say).  It runs in order: later steps wait until fn says
 * done; communication posted before it stays in flight.  arg must live as
 * long as the schedule (allocate it with coll_sched_alloc).  A blocking
 * call waits through ops->wait, which may sleep on this rank's doorbell:
 * whoever makes fn true must then call ops->wake for this rank.
 */
void coll_sched_poll(coll_sched_t *s, coll_poll_fn fn, void *arg);
/* The same for a step with communication of its own in flight: when a
 * blocking wait fails and the step is given up, abort(arg) runs first and
 * must leave nothing pointing into arg. */
void coll_sched_poll_abort(coll_sched_t *s, coll_poll_fn fn,
                           void (*abort)(void *arg), void *arg);

/*
 * A temporary buffer for count elements of dt, addressed like a user
 * buffer (the returned pointer may lie before the allocation when dt's
 * true lower bound is not 0).  NULL (and the error kept) without memory.
 */
void *coll_sched_tmp(coll_sched_t *s, int64_t count, void *dt);

/* bytes of untyped scratch (index arrays and such), freed with s. */
void *coll_sched_alloc(coll_sched_t *s, int64_t bytes);

/*
 * The end of every coll_* call.  Blocking (comm->start_out NULL): run the
 * schedule to completion, free it, and return the first error.  Otherwise
 * hand it over to *start_out (started unless comm->persistent) and return
 * 0, or the build error (no memory) with nothing handed over.  s itself
 * may live on the caller's stack: what is handed over is a copy.
 */
int coll_sched_finish(coll_sched_t *s);

/* ---- helpers shared by the algorithm files --------------------------------- */

/* Address of element i of buf laid out as dt. */
static inline void *coll_elem(const coll_comm_t *c, const void *buf,
                              void *dt, int64_t i)
{
    int64_t ext = 0, tlb, text;
    if (i == 0)
        return (void *)buf;
    c->ops->extent(dt, &ext, &tlb, &text);
    return (char *)buf + i * ext;
}

/* Count and displacement of block i of a v-form (NULL arrays: uniform). */
static inline int64_t coll_vcount(const int64_t *counts, int64_t count, int i)
{
    return counts ? counts[i] : count;
}
static inline int64_t coll_vdispl(const int64_t *displs, int64_t count, int i)
{
    return displs ? displs[i] : (int64_t)i * count;
}

/* Largest power of two not above n (n >= 1). */
static inline int coll_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* ---- shared memory (coll_shm.c) ----------------------------------------------- */

/* Unmap and forget c->shm (called by coll_comm_fini). */
void coll_shm_fini(coll_comm_t *c);

/*
 * Shared-memory algorithms for communicators whose ranks all run on this
 * host: each appends its algorithm to s and returns 1, or appends nothing
 * and returns 0 when it does not apply (ranks on several hosts, no shared
 * segment, a message or type it does not handle), so the caller picks a
 * message-based algorithm.  The decision depends only on arguments that
 * agree across ranks, so all ranks decide alike.
 */
int coll_shm_barrier(coll_sched_t *s);
int coll_shm_bcast(coll_sched_t *s, void *buf, int64_t count, void *dt,
                   int root);
int coll_shm_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op, int root);
int coll_shm_allreduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op);
/* The same without a schedule (coll_now_*), once the selection chose
 * shared memory: NULL when the call needs one. */
coll_now_t *coll_shm_now_barrier(coll_comm_t *c);
coll_now_t *coll_shm_now_bcast(coll_comm_t *c, void *buf, int64_t count,
                               void *dt, int root);
coll_now_t *coll_shm_now_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                                int64_t count, void *dt, void *op, int root);
coll_now_t *coll_shm_now_allreduce(coll_comm_t *c, const void *sbuf,
                                   void *rbuf, int64_t count, void *dt,
                                   void *op);

/* ---- builders that other algorithms compose ------------------------------------ */

void coll_build_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op, int root);
void coll_build_scatterv(coll_sched_t *s, const void *sbuf, int64_t scount,
                         const int64_t *scounts, const int64_t *displs,
                         void *sdt, void *rbuf, int64_t rcount, void *rdt,
                         int root);

#endif /* SHOAL_COLL_SCHED_H */
