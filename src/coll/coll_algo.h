/*
 * The algorithms behind the coll_* entry points, as builders that append
 * to a schedule, and what coll_select.c needs to choose among them.
 *
 * Most builders work on a group: a list of ranks of the communicator.  A
 * flat collective passes the whole communicator; a hierarchical one
 * (coll_hier.c) passes the ranks of one host, or one leader per host, and
 * chains the phases in one schedule.  Since the transport addresses ranks
 * of the communicator, a group needs no communicator of its own.  Roots and
 * rank order are member indices; members are numbered so that rank order
 * (for non-commutative operations) is index order.
 *
 * A builder ends with its communication completed or fenced, so the next
 * phase may use its results after a coll_sched_fence.
 */
#ifndef SHOAL_COLL_ALGO_H
#define SHOAL_COLL_ALGO_H

#include "coll_sched.h"

typedef struct coll_group {
    int size;
    int me;           /* this process's index, -1 when not a member */
    const int *ranks; /* member i is rank ranks[i]; NULL: rank i */
    int one_host;     /* 1 when all members run on one host */
    int per_host;     /* 1 when each member runs on a host of its own */
} coll_group_t;

static inline int coll_member(const coll_group_t *g, int i)
{
    return g->ranks ? g->ranks[i] : i;
}

/* The whole communicator as a group. */
static inline coll_group_t coll_group_all(const coll_comm_t *c)
{
    coll_group_t g = {c->size, c->rank, NULL, c->nhosts == 1, 0};
    return g;
}

/* The rank of the member at index v relative to root (v = 0 is root). */
static inline int coll_rel_member(const coll_group_t *g, int v, int root)
{
    return coll_member(g, (v + root) % g->size);
}

/*
 * Groups of any size on power-of-two algorithms: with pof2 the largest
 * power of two not above the size and rem = size - pof2, members 2i and 2i+1
 * (i < rem) pair up and the odd one takes part for both, under the new
 * index i; member m >= 2 rem becomes m - rem.  New indices keep the members'
 * order, so the folded group still combines in rank order.
 */
static inline int coll_fold_index(int m, int rem)
{
    if (m >= 2 * rem)
        return m - rem;
    return m % 2 ? m / 2 : -1; /* the even member sits out */
}
static inline int coll_fold_member(int i, int rem)
{
    return i < rem ? 2 * i + 1 : i + rem;
}

/* The first part of chunk i when count elements are cut into n nearly
 * equal chunks (chunk i is [start(i), start(i + 1))). */
static inline int64_t coll_chunk_start(int64_t count, int n, int i)
{
    int64_t q = count / n, rem = count % n;
    return i * q + (i < rem ? i : rem);
}

/*
 * Blocks of one buffer, one per member of a group: member i's block is
 * count[i] elements of dt starting displ[i] elements into buf.
 */
typedef struct coll_blocks {
    void *buf;
    void *dt;
    int64_t *displ, *count;
} coll_blocks_t;

/* Arrays for n blocks (zeroed), owned by s; 0, or -1 without memory. */
int coll_blocks_alloc(coll_sched_t *s, coll_blocks_t *b, int n);

/* Ring allgather: member i starts with block i and ends with all of them
 * after size - 1 rounds to the right. */
void coll_ring_allgather(coll_sched_t *s, const coll_group_t *g,
                         const coll_blocks_t *b);

/* ---- the algorithms --------------------------------------------------------------- */

void coll_barrier_dissemination(coll_sched_t *s, const coll_group_t *g);
void coll_barrier_doubling(coll_sched_t *s, const coll_group_t *g);

/* bytes: the message's size (count elements of dt; the same everywhere). */
void coll_bcast_binomial(coll_sched_t *s, const coll_group_t *g, void *buf,
                         int64_t count, void *dt, int root);
void coll_bcast_scatter_allgather(coll_sched_t *s, const coll_group_t *g,
                                  void *buf, int64_t count, void *dt,
                                  int64_t bytes, int root);

/* Binomial reduce: any op (rank order kept). */
void coll_reduce_binomial(coll_sched_t *s, const coll_group_t *g,
                          const void *sbuf, void *rbuf, int64_t count,
                          void *dt, void *op, int root);

/*
 * Recursive halving on the folded group of an in-place vector buf:
 * segment j of seg (pof2 + 1 element offsets) ends reduced, over the whole
 * group in rank order, at new index coll_bitrev(j, pof2); the partner's
 * halves arrive in tmp, addressed like buf.  Returns this process's new
 * index (-1: sat out).  coll_halving_allgather then gives every new index
 * the whole vector again.
 */
typedef struct coll_halving {
    coll_sched_t *s;
    const coll_group_t *g;
    void *buf, *tmp;
    const int64_t *seg;
    int64_t count;
    void *dt, *op;
} coll_halving_t;
int coll_halving_reduce_scatter(const coll_halving_t *h);
void coll_halving_allgather(const coll_halving_t *h, int newrank);

/* i with its log2(n) low bits reversed (n a power of two). */
static inline int coll_bitrev(int i, int n)
{
    int r = 0;
    for (int b = 1; b < n; b <<= 1)
        r = (r << 1) | ((i & b) ? 1 : 0);
    return r;
}

void coll_allreduce_doubling(coll_sched_t *s, const coll_group_t *g,
                             const void *sbuf, void *rbuf, int64_t count,
                             void *dt, void *op);
void coll_allreduce_rabenseifner(coll_sched_t *s, const coll_group_t *g,
                                 const void *sbuf, void *rbuf,
                                 int64_t count, void *dt, void *op);
/* Commutative ops only: segments are combined in ring order. */
void coll_allreduce_ring(coll_sched_t *s, const coll_group_t *g,
                         const void *sbuf, void *rbuf, int64_t count,
                         void *dt, void *op);

/* Allgather on the whole communicator, into v-form blocks of rbuf, with
 * this rank's block already in place. */
typedef struct coll_ag {
    coll_sched_t *s;
    void *rbuf, *dt;
    int64_t count;
    const int64_t *counts, *displs;
} coll_ag_t;
void coll_allgather_bruck(const coll_ag_t *a);
/* Uniform, contiguous blocks and a power-of-two size only. */
void coll_allgather_doubling(const coll_ag_t *a);
void coll_allgather_ring(const coll_ag_t *a);

/* Plain all-to-all (intracommunicators): pairwise, or Bruck's log p rounds
 * of packed blocks. */
void coll_alltoall_pairwise(coll_sched_t *s, const void *sbuf,
                            int64_t scount, void *sdt, void *rbuf,
                            int64_t rcount, void *rdt);
void coll_alltoall_bruck(coll_sched_t *s, const void *sbuf, int64_t scount,
                         void *sdt, void *rbuf, int64_t rcount, void *rdt);

/* ---- placement and choice (coll_select.c) ------------------------------------------ */

/*
 * Where the ranks run: the communicator's host map, or the test-only
 * SHOAL_COLL_FAKE_HOSTS=K (rank r on host r * K / size) when the
 * communicator has none.
 */
typedef struct coll_place {
    const int *host_of; /* NULL: computed from fake */
    int nhosts;
    int fake; /* fake hosts in effect, 0: none */
    int size;
    coll_group_t all; /* the communicator as a group on these hosts */
} coll_place_t;

static inline int coll_host(const coll_place_t *pl, int r)
{
    if (pl->host_of)
        return pl->host_of[r];
    return (int)((int64_t)r * pl->fake / pl->size);
}

/* The algorithm a flat phase over g runs, as chosen by the variables and
 * the sizes (hierarchical collectives use them for their phases). */
void coll_pick_barrier(coll_sched_t *s, const coll_group_t *g);
void coll_pick_bcast(coll_sched_t *s, const coll_group_t *g, void *buf,
                     int64_t count, void *dt, int root);
void coll_pick_allreduce(coll_sched_t *s, const coll_group_t *g,
                         const void *sbuf, void *rbuf, int64_t count,
                         void *dt, void *op);
/* Allgather and all-to-all are flat, on the whole communicator. */
void coll_pick_allgather(const coll_ag_t *a);
void coll_pick_alltoall(coll_sched_t *s, const void *sbuf, int64_t scount,
                        void *sdt, void *rbuf, int64_t rcount, void *rdt);

/* ---- hierarchical forms (coll_hier.c) ------------------------------------------------ */

/*
 * Each returns 1 when it appended its algorithm, 0 when the placement
 * gives no hierarchy (one host, a rank per host, or a non-commutative op
 * whose hosts do not hold consecutive ranks).
 */
int coll_hier_barrier(coll_sched_t *s, const coll_place_t *pl);
int coll_hier_bcast(coll_sched_t *s, const coll_place_t *pl, void *buf,
                    int64_t count, void *dt, int root);
int coll_hier_reduce(coll_sched_t *s, const coll_place_t *pl,
                     const void *sbuf, void *rbuf, int64_t count, void *dt,
                     void *op, int root);
int coll_hier_allreduce(coll_sched_t *s, const coll_place_t *pl,
                        const void *sbuf, void *rbuf, int64_t count,
                        void *dt, void *op);

#endif /* SHOAL_COLL_ALGO_H */
