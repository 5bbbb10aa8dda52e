/*
 * Shared-memory collectives: what coll_shm.c (the algorithms),
 * coll_shm_seg.c (the segment and its set-up) and coll_shm_fb.c (the
 * message fallback when no segment could be shared) have in common.
 *
 * One segment per communicator, a memfd made by rank 0 on first use and
 * mapped by every rank (docs/ARCHITECTURE.md, "Shared-memory collectives"):
 *
 *   header     one sharing unit: magic, token, size, done_waiters
 *   done[p]    one unit per rank: calls it has finished reading, in order
 *   sets       SHM_NSETS x p blocks of SHM_BLOCK bytes; block (s, r) is
 *              rank r's for the calls n with n % SHM_NSETS == s: two flag
 *              words (arr, res) and SHM_SETCAP bytes of data after them
 *   areas      SHM_NAREAS x p slots of SHM_SLOT bytes for data that does not
 *              fit in a block; large calls take the areas in turn
 *
 * Every word is written by one rank only (its own done word and blocks)
 * except done_waiters.  Flags hold SHM_FLAG(n, k): call n has reached
 * progress k; they only grow, so a reader of call n waits for
 * flag >= SHM_FLAG(n, k) and never confuses calls.
 */
#ifndef SHOAL_COLL_SHM_H
#define SHOAL_COLL_SHM_H

#include <stdatomic.h>

#include "base/base.h"
#include "coll_sched.h"

#define SHM_UNIT                                                               \
    128 /* adjacent-line prefetch makes this the false-sharing unit */
#define SHM_NSETS 16 /* calls that may be in flight per communicator */
#define SHM_BLOCK                                                              \
    (4096 + SHM_UNIT) /* not a multiple of 4 KiB: no L1 aliasing */
#define SHM_FLAGS 16
#define SHM_SETCAP (SHM_BLOCK - SHM_FLAGS)
#define SHM_NAREAS 2
#define SHM_SLOT ((int64_t)1 << 20) /* largest message, per rank */
/* A bcast is copied in and out in chunks of a quarter of it, within
 * these bounds, so that readers start early (the size agrees on every
 * rank, so does the cut). */
#define SHM_CHUNK_MIN ((int64_t)4 << 10)
#define SHM_CHUNK_MAX ((int64_t)32 << 10)
/* Reductions whose data fit in a block and are at most this long are
 * computed whole by every rank (one synchronization); longer ones are cut
 * in slices reduced in parallel (two). */
#define SHM_ALLREAD_MAX 2048

#define SHM_PROG_BITS 20
#define SHM_FLAG(n, k) (((uint64_t)(n) << SHM_PROG_BITS) | (uint64_t)(k))

#define SHM_MAGIC 0x53484f414c434f4cull /* "SHOALCOL" */

typedef struct shm_hdr {
    uint64_t magic, token, len;
    uint32_t size, nsets;
    /* Ranks that wait for a done word: publishers then ring everyone. */
    _Atomic uint32_t done_waiters;
} shm_hdr_t;

typedef struct shm_blk {
    _Atomic uint64_t arr; /* contribution in place / arrived */
    _Atomic uint64_t res; /* result slice ready / bcast chunks written */
} shm_blk_t;

/* What rank 0 tells the others, and they answer, during set-up. */
typedef struct shm_msg {
    int32_t ok;
    int32_t fd;
    uint64_t len;
    uint64_t token;
} shm_msg_t;

enum { SHM_ST_NEW, SHM_ST_SETUP, SHM_ST_READY, SHM_ST_FAILED };

/* The communicator's state (c->shm), private to this process. */
typedef struct shm_call shm_call_t;
#define SHM_NRECORDS 16 /* call records kept, so a warm call allocates none */
typedef struct coll_shm {
    int state;
    int step; /* set-up protocol position */
    int tag;  /* set-up messages */
    int p, rank;
    char *base;
    size_t len;
    int fd; /* rank 0's memfd until every rank mapped it */
    shm_hdr_t *hdr;
    /* calls */
    uint64_t calls;                 /* sequence number of the last call */
    uint64_t nlarge;                /* calls that used an area */
    uint64_t area_last[SHM_NAREAS]; /* the last call in each area */
    uint64_t free_upto;             /* every done word is >= this */
    uint64_t done_upto;             /* our done word */
    uint64_t finished[SHM_NSETS];   /* calls finished out of order */
    /* set-up messages */
    shm_msg_t info, mine, verdict;
    shm_msg_t *status; /* rank 0: one per rank */
    void **reqs;
    int nreq;
    /* records of calls (others live in their schedule) */
    shm_call_t *records;
    int rec_next;
    /* The ranks' doorbell words (ops->bell), looked up at the first ring;
     * NULL entries are rung through ops->wake every time. */
    const _Atomic uint32_t **bells;
    int bells_set;
} coll_shm_t;

enum { SHM_BARRIER, SHM_BCAST, SHM_REDUCE, SHM_ALLREDUCE };
/* whom a step rings; larger includes smaller */
enum { SHM_RING_NONE, SHM_RING_ROOT, SHM_RING_ALL };

/* One call: the argument of its two poll steps; in c->shm's ring, or
 * coll_sched_alloc'ed when the ring is full. */
struct shm_call {
    coll_comm_t *c;
    int kind;
    int phase;
    int waiting;    /* counted in done_waiters */
    int err;        /* first error; the protocol still completes */
    uint64_t n;     /* sequence number */
    int area;       /* -1: data in the set's blocks */
    uint64_t need;  /* every rank's done word must reach this first */
    int tag;        /* fallback messages */
    const void *sbuf;
    void *rbuf;
    int64_t count;
    void *dt, *op;
    int root;
    int64_t bytes; /* bcast: packed bytes; reductions: span of the data */
    int64_t tlb, ext;
    int contig;
    coll_kernel_t *kernel; /* reductions: ops->reduce_kernel's, or NULL */
    int64_t kper;          /* its units per element */
    size_t kalign;         /* the alignment it needs */
    int allread;
    int big;        /* data in an area (else in the set's blocks) */
    int next;       /* next rank to look at */
    int ring;       /* ranks to ring before returning (SHM_RING_*) */
    int64_t copied; /* bcast: bytes copied out so far */
    int64_t chunk;  /* bcast: bytes per flag raise */
    /* fallback */
    int fbstage, fbabort;
    void **reqs;
    int nreq;
    char *tmp;
    int pooled; /* a record of c->shm in use (until the call finishes) */
};

/* ---- segment (coll_shm_seg.c) -------------------------------------------- */

size_t shm_seg_len(int p);
/* Advance the set-up: 1 when the state is READY or FAILED, 0 not yet, or
 * an error of a set-up message. */
int shm_setup_progress(coll_comm_t *c);

static inline _Atomic uint64_t *shm_done_word(const coll_shm_t *m, int r)
{
    return (_Atomic uint64_t *)(void *)(m->base + SHM_UNIT * (1 + r));
}

static inline size_t shm_sets_off(int p)
{
    return base_align_up((size_t)SHM_UNIT * (1 + (size_t)p), 4096);
}

static inline shm_blk_t *shm_blk(const coll_shm_t *m, uint64_t n, int r)
{
    size_t s = (size_t)(n % SHM_NSETS);
    return (shm_blk_t *)(void *)(m->base + shm_sets_off(m->p) +
                                 (s * (size_t)m->p + (size_t)r) * SHM_BLOCK);
}

static inline char *shm_area_slot(const coll_shm_t *m, int area, int r)
{
    size_t off =
        shm_sets_off(m->p) + (size_t)SHM_NSETS * (size_t)m->p * SHM_BLOCK;
    off = base_align_up(off, 4096);
    return m->base + off +
           ((size_t)area * (size_t)m->p + (size_t)r) * (size_t)SHM_SLOT;
}

/* ---- fallback through messages (coll_shm_fb.c) --------------------------- */

/* The call through messages to and from rank 0: 1 done (errors in
 * a->err), 0 not yet.  Used when the segment could not be shared.  reset
 * frees what a run kept and makes the next one start afresh. */
int shm_fallback(shm_call_t *a);
void shm_fallback_reset(shm_call_t *a);

/* The poll-step convention reserves 1 for "done": an error code of 1
 * (MPI_ERR_BUFFER) becomes an internal error. */
static inline int shm_err(int rc)
{
    return rc == 1 ? base_err(SHOAL_ERR_INTERNAL,
                              "shared-memory collective: operation failed "
                              "with code 1")
                   : rc;
}

#endif /* SHOAL_COLL_SHM_H */
