/*
 * All-to-all by pairwise exchange (every form), or Bruck's algorithm for
 * short blocks of the plain form (coll_select.c chooses).  Pairwise: in
 * step i every rank sends to rank + i and receives from rank - i, so each
 * step is a permutation and no rank is flooded.  The three MPI forms differ only in how blocks are found, so
 * each is turned into a list of (address, count, type) per peer first.
 *
 * In place, a rank's block for peer j is also where j's block lands; the
 * outgoing blocks are copied aside first (one scratch block per peer).
 */
#include "coll_algo.h"

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
    const int64_t *counts; /* v and w forms */
    const int64_t *displs; /* elements (v) or bytes (w) */
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

/* Append the exchange of every block of out for the block of in. */
static void build(coll_sched_t *s, const form_t *out, const form_t *in)
{
    coll_comm_t *c = s->comm;
    int n = c->is_inter ? c->remote_size : c->size;
    blk_t *ob = coll_sched_alloc(s, (int64_t)sizeof(blk_t) * n);
    blk_t *ib = coll_sched_alloc(s, (int64_t)sizeof(blk_t) * n);

    if (ob == NULL || ib == NULL)
        return;
    describe(c, in, ib, n);
    if (out->buf == COLL_IN_PLACE)
        set_aside(s, ob, ib, n);
    else
        describe(c, out, ob, n);
    coll_sched_fence(s);
    if (c->is_inter)
        inter(s, ob, ib);
    else
        pairwise(s, ob, ib);
}

static int run(coll_comm_t *c, const form_t *out, const form_t *in)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    build(&s, out, in);
    return coll_sched_finish(&s);
}

void coll_alltoall_pairwise(coll_sched_t *s, const void *sbuf,
                            int64_t scount, void *sdt, void *rbuf,
                            int64_t rcount, void *rdt)
{
    form_t out = {sbuf, scount, NULL, NULL, sdt, NULL};
    form_t in = {rbuf, rcount, NULL, NULL, rdt, NULL};
    build(s, &out, &in);
}

/* ---- Bruck ----------------------------------------------------------------------- */

/*
 * Bruck's all-to-all for short blocks: ceil(log2 p) rounds instead of
 * p - 1.  Rank r first lays its blocks out rotated (slot i holds the block
 * for rank r + i), packed as bytes.  In the round of distance k every slot
 * whose index has bit k set travels k ranks up, all of them in one
 * message; a block thus moves by its slot index in total and reaches its
 * destination, where slot i holds the block of rank r - i.  Each byte
 * travels about log2(p) / 2 times, so this pays only while per-message
 * costs outweigh the copying.
 */

typedef struct bruck {
    coll_sched_t *s;
    char *slots; /* p slots of b bytes */
    int64_t b;
    int p;
} bruck_t;

/* Copy the slots with bit k set to the back-to-back pack, or back. */
static void move_slots(const bruck_t *x, int k, char *pack, int to_pack)
{
    void *byte = x->s->comm->ops->byte_dt;

    for (int i = k; i < x->p; i++) {
        char *slot = x->slots + i * x->b;
        if (!(i & k))
            continue;
        if (to_pack)
            coll_sched_copy(x->s, slot, x->b, byte, pack, x->b, byte);
        else
            coll_sched_copy(x->s, pack, x->b, byte, slot, x->b, byte);
        pack += x->b;
    }
}

/* How many slots of [1, p) have bit k set; never more than p / 2 (within
 * each run of 2k indices, k have it). */
static int64_t round_slots(int p, int k)
{
    int64_t n = 0;
    for (int i = k; i < p; i++)
        n += (i & k) != 0;
    return n;
}

void coll_alltoall_bruck(coll_sched_t *s, const void *sbuf, int64_t scount,
                         void *sdt, void *rbuf, int64_t rcount, void *rdt)
{
    coll_comm_t *c = s->comm;
    void *byte = c->ops->byte_dt;
    int p = c->size, r = c->rank;
    bruck_t x = {s, NULL, 0, p};
    char *out, *in;

    if (sbuf == COLL_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        sdt = rdt;
    }
    /* Equal type signatures: b is the same on every rank. */
    x.b = rcount > 0 ? rcount * c->ops->size(rdt) : 0;
    if (x.b == 0 || p == 1) {
        coll_sched_copy(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        return;
    }
    x.slots = coll_sched_tmp(s, p * x.b, byte);
    out = coll_sched_tmp(s, p / 2 * x.b, byte);
    in = coll_sched_tmp(s, p / 2 * x.b, byte);
    if (x.slots == NULL || out == NULL || in == NULL)
        return;
    for (int i = 0; i < p; i++)
        coll_sched_copy(s, coll_elem(c, sbuf, sdt, (r + i) % p * scount),
                        scount, sdt, x.slots + i * x.b, x.b, byte);
    for (int k = 1; k < p; k <<= 1) {
        int64_t len = round_slots(p, k) * x.b;
        move_slots(&x, k, out, 1);
        coll_sched_send(s, out, len, byte, (r + k) % p);
        coll_sched_recv(s, in, len, byte, (r - k + p) % p);
        coll_sched_fence(s);
        move_slots(&x, k, in, 0);
    }
    for (int i = 0; i < p; i++)
        coll_sched_copy(s, x.slots + i * x.b, x.b, byte,
                        coll_elem(c, rbuf, rdt, (r - i + p) % p * rcount),
                        rcount, rdt);
}

int coll_alltoall(coll_comm_t *c, const void *sbuf, int64_t scount,
                  void *sdt, void *rbuf, int64_t rcount, void *rdt)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    if (c->is_inter)
        coll_alltoall_pairwise(&s, sbuf, scount, sdt, rbuf, rcount, rdt);
    else
        coll_pick_alltoall(&s, sbuf, scount, sdt, rbuf, rcount, rdt);
    return coll_sched_finish(&s);
}

int coll_alltoallv(coll_comm_t *c, const void *sbuf, const int64_t *scounts,
                   const int64_t *sdispls, void *sdt, void *rbuf,
                   const int64_t *rcounts, const int64_t *rdispls, void *rdt)
{
    form_t out = {sbuf, 0, scounts, sdispls, sdt, NULL};
    form_t in = {rbuf, 0, rcounts, rdispls, rdt, NULL};
    return run(c, &out, &in);
}

int coll_alltoallw(coll_comm_t *c, const void *sbuf, const int64_t *scounts,
                   const int64_t *sdispls, void *const *sdts, void *rbuf,
                   const int64_t *rcounts, const int64_t *rdispls,
                   void *const *rdts)
{
    form_t out = {sbuf, 0, scounts, sdispls, NULL, sdts};
    form_t in = {rbuf, 0, rcounts, rdispls, NULL, rdts};
    return run(c, &out, &in);
}

int coll_inter_alltoallw(coll_comm_t *c, const void *sbuf,
                         const int64_t *scounts, const int64_t *sdispls,
                         void *const *sdts, void *rbuf, const int64_t *rcounts,
                         const int64_t *rdispls, void *const *rdts)
{
    return coll_alltoallw(c, sbuf, scounts, sdispls, sdts, rbuf, rcounts,
                          rdispls, rdts);
}
