/*
 * All-to-all by pairwise exchange: in step i every rank sends to rank + i
 * and receives from rank - i, so each step is a permutation and no rank is
 * flooded.  The three MPI forms differ only in how blocks are found, so
 * each is turned into a list of (address, count, type) per peer first.
 *
 * In place, a rank's block for peer j is also where j's block lands; the
 * outgoing blocks are copied aside first (one scratch block per peer).
 */
#include "coll_sched.h"

typedef struct blk {
    char *buf;
    int64_t count;
    void *dt;
} blk_t;

static void pairwise(coll_sched_t *s, const blk_t *out, const blk_t *in)
{
    int p = s->comm->size, r = s->comm->rank;

    coll_sched_copy(s, out[r].buf, out[r].count, out[r].dt, in[r].buf,
                    in[r].count, in[r].dt);
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p, from = (r - i + p) % p;
        coll_sched_send(s, out[to].buf, out[to].count, out[to].dt, to);
        coll_sched_recv(s, in[from].buf, in[from].count, in[from].dt, from);
        coll_sched_fence(s);
    }
}

/* Intercommunicators: every peer is remote; post everything at once. */
static void inter(coll_sched_t *s, const blk_t *out, const blk_t *in)
{
    for (int j = 0; j < s->comm->remote_size; j++) {
        coll_sched_send(s, out[j].buf, out[j].count, out[j].dt, j);
        coll_sched_recv(s, in[j].buf, in[j].count, in[j].dt, j);
    }
}

/* out := copies of the in blocks, for MPI_IN_PLACE. */
static void set_aside(coll_sched_t *s, blk_t *out, const blk_t *in, int n)
{
    for (int j = 0; j < n; j++) {
        out[j] = in[j];
        if (j == s->comm->rank)
            continue; /* stays where it is */
        out[j].buf = coll_sched_tmp(s, in[j].count, in[j].dt);
        if (out[j].buf == NULL)
            return;
        coll_sched_copy(s, in[j].buf, in[j].count, in[j].dt, out[j].buf,
                        in[j].count, in[j].dt);
    }
}

typedef struct form {
    const void *buf;
    int64_t count;     /* plain form */
    const int *counts; /* v and w forms */
    const int *displs; /* elements (v) or bytes (w) */
    void *dt;          /* plain and v forms */
    void *const *dts;  /* w form */
} form_t;

static void describe(const coll_comm_t *c, const form_t *f, blk_t *b, int n)
{
    for (int j = 0; j < n; j++) {
        b[j].count = coll_vcount(f->counts, f->count, j);
        b[j].dt = f->dts ? f->dts[j] : f->dt;
        if (f->dts)
            b[j].buf = (char *)f->buf + f->displs[j];
        else
            b[j].buf = coll_elem(c, f->buf, f->dt,
                                 coll_vdispl(f->displs, f->count, j));
    }
}

static int run(coll_comm_t *c, const form_t *out, const form_t *in)
{
    coll_sched_t s;
    int n = c->is_inter ? c->remote_size : c->size;
    blk_t *ob, *ib;

    coll_sched_init(&s, c);
    ob = coll_sched_alloc(&s, (int64_t)sizeof(blk_t) * n);
    ib = coll_sched_alloc(&s, (int64_t)sizeof(blk_t) * n);
    if (ob && ib) {
        describe(c, in, ib, n);
        if (out->buf == COLL_IN_PLACE)
            set_aside(&s, ob, ib, n);
        else
            describe(c, out, ob, n);
        coll_sched_fence(&s);
        if (c->is_inter)
            inter(&s, ob, ib);
        else
            pairwise(&s, ob, ib);
    }
    return coll_sched_finish(&s);
}

int coll_alltoall(coll_comm_t *c, const void *sbuf, int64_t scount,
                  void *sdt, void *rbuf, int64_t rcount, void *rdt)
{
    form_t out = {sbuf, scount, NULL, NULL, sdt, NULL};
    form_t in = {rbuf, rcount, NULL, NULL, rdt, NULL};
    return run(c, &out, &in);
}

int coll_alltoallv(coll_comm_t *c, const void *sbuf, const int *scounts,
                   const int *sdispls, void *sdt, void *rbuf,
                   const int *rcounts, const int *rdispls, void *rdt)
{
    form_t out = {sbuf, 0, scounts, sdispls, sdt, NULL};
    form_t in = {rbuf, 0, rcounts, rdispls, rdt, NULL};
    return run(c, &out, &in);
}

int coll_alltoallw(coll_comm_t *c, const void *sbuf, const int *scounts,
                   const int *sdispls, void *const *sdts, void *rbuf,
                   const int *rcounts, const int *rdispls,
                   void *const *rdts)
{
    form_t out = {sbuf, 0, scounts, sdispls, NULL, sdts};
    form_t in = {rbuf, 0, rcounts, rdispls, NULL, rdts};
    return run(c, &out, &in);
}

int coll_inter_alltoallw(coll_comm_t *c, const void *sbuf,
                         const int *scounts, const int *sdispls,
                         void *const *sdts, void *rbuf, const int *rcounts,
                         const int *rdispls, void *const *rdts)
{
    return coll_alltoallw(c, sbuf, scounts, sdispls, sdts, rbuf, rcounts,
                          rdispls, rdts);
}
