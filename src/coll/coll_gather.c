/*
 * Gather, scatter and allgather.  Gather and scatter are linear: only the
 * root knows the v-forms' counts, so a tree would first have to send them
 * around, and the root's link carries all the data either way.  Allgather
 * has three algorithms (coll_select.c chooses): Bruck's (ceil(log2 p)
 * rounds, any size and counts, one extra local copy of everything),
 * recursive doubling (log2 p rounds, uniform blocks, powers of two) and a
 * ring (p - 1 rounds, each rank sends only what its neighbour lacks).
 */
#include <string.h>

#include "coll_algo.h"

/* Block i of a v-form buffer. */
static void *block(const coll_comm_t *c, const void *buf, void *dt,
                   int64_t count, const int64_t *displs, int i)
{
    return coll_elem(c, buf, dt, coll_vdispl(displs, count, i));
}

int coll_gatherv(coll_comm_t *c, const void *sbuf, int64_t scount, void *sdt,
                 void *rbuf, int64_t rcount, const int64_t *rcounts,
                 const int64_t *displs, void *rdt, int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    if (c->rank != root) {
        coll_sched_send(&s, sbuf, scount, sdt, root);
    } else {
        for (int i = 0; i < c->size; i++) {
            void *b = block(c, rbuf, rdt, rcount, displs, i);
            int64_t n = coll_vcount(rcounts, rcount, i);
            if (i != root)
                coll_sched_recv(&s, b, n, rdt, i);
            else if (sbuf != COLL_IN_PLACE)
                coll_sched_copy(&s, sbuf, scount, sdt, b, n, rdt);
        }
    }
    return coll_sched_finish(&s);
}

void coll_build_scatterv(coll_sched_t *s, const void *sbuf, int64_t scount,
                         const int64_t *scounts, const int64_t *displs,
                         void *sdt, void *rbuf, int64_t rcount, void *rdt,
                         int root)
{
    coll_comm_t *c = s->comm;

    if (c->rank != root) {
        coll_sched_recv(s, rbuf, rcount, rdt, root);
        return;
    }
    for (int i = 0; i < c->size; i++) {
        const void *b = block(c, sbuf, sdt, scount, displs, i);
        int64_t n = coll_vcount(scounts, scount, i);
        if (i != root)
            coll_sched_send(s, b, n, sdt, i);
        else if (rbuf != COLL_IN_PLACE)
            coll_sched_copy(s, b, n, sdt, rbuf, rcount, rdt);
    }
}

int coll_scatterv(coll_comm_t *c, const void *sbuf, int64_t scount,
                  const int64_t *scounts, const int64_t *displs, void *sdt,
                  void *rbuf, int64_t rcount, void *rdt, int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    coll_build_scatterv(&s, sbuf, scount, scounts, displs, sdt, rbuf, rcount,
                        rdt, root);
    return coll_sched_finish(&s);
}

/* ---- allgather ------------------------------------------------------------------ */

int coll_blocks_alloc(coll_sched_t *s, coll_blocks_t *b, int n)
{
    int64_t *a = coll_sched_alloc(s, (int64_t)sizeof(int64_t) * 2 * n);

    if (a == NULL)
        return -1;
    memset(a, 0, sizeof(int64_t) * 2 * (size_t)n);
    b->displ = a;
    b->count = a + n;
    return 0;
}

static void *block_of(const coll_sched_t *s, const coll_blocks_t *b, int i)
{
    return coll_elem(s->comm, b->buf, b->dt, b->displ[i]);
}

void coll_ring_allgather(coll_sched_t *s, const coll_group_t *g,
                         const coll_blocks_t *b)
{
    int n = g->size, me = g->me;
    int right = coll_member(g, (me + 1) % n);
    int left = coll_member(g, (me - 1 + n) % n);

    for (int i = 0; i < n - 1; i++) {
        int out = (me - i + n) % n, in = (me - i - 1 + n) % n;
        coll_sched_send(s, block_of(s, b, out), b->count[out], b->dt, right);
        coll_sched_recv(s, block_of(s, b, in), b->count[in], b->dt, left);
        coll_sched_fence(s);
    }
}

void coll_allgather_ring(const coll_ag_t *a)
{
    coll_comm_t *c = a->s->comm;
    coll_group_t all = coll_group_all(c);
    coll_blocks_t b = {a->rbuf, a->dt, NULL, NULL};

    if (coll_blocks_alloc(a->s, &b, c->size) != 0)
        return;
    for (int i = 0; i < c->size; i++) {
        b.displ[i] = coll_vdispl(a->displs, a->count, i);
        b.count[i] = coll_vcount(a->counts, a->count, i);
    }
    coll_ring_allgather(a->s, &all, &b);
}

/* Uniform blocks, p a power of two: before round k a rank holds the 2^k
 * blocks of its aligned group, which lie next to each other. */
void coll_allgather_doubling(const coll_ag_t *a)
{
    coll_comm_t *c = a->s->comm;
    int r = c->rank;

    for (int mask = 1; mask < c->size; mask <<= 1) {
        int peer = r ^ mask;
        int mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        coll_sched_send(a->s, block(c, a->rbuf, a->dt, a->count, NULL, mine),
                        a->count * mask, a->dt, peer);
        coll_sched_recv(a->s, block(c, a->rbuf, a->dt, a->count, NULL, theirs),
                        a->count * mask, a->dt, peer);
        coll_sched_fence(a->s);
    }
}

/*
 * Bruck: rank r keeps the blocks of ranks r, r + 1, ... (mod p) one after
 * another in a scratch buffer.  In the round of distance d it has the
 * first d of them; it sends those (at most p - d) to rank r - d and gets
 * the next ones from rank r + d, whose first blocks they are.  One message
 * per round whatever the counts, since every run of blocks is contiguous
 * in both ranks' buffers; the blocks go to their places at the end.
 */
void coll_allgather_bruck(const coll_ag_t *a)
{
    coll_sched_t *s = a->s;
    coll_comm_t *c = s->comm;
    int p = c->size, r = c->rank;
    int64_t *off = coll_sched_alloc(s, (int64_t)sizeof(int64_t) * (p + 1));
    char *tmp;

    if (off == NULL)
        return;
    off[0] = 0; /* where block r + i starts in tmp */
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + coll_vcount(a->counts, a->count, (r + i) % p);
    tmp = coll_sched_tmp(s, off[p], a->dt);
    if (tmp == NULL)
        return;
    coll_sched_copy(s, block(c, a->rbuf, a->dt, a->count, a->displs, r),
                    off[1], a->dt, tmp, off[1], a->dt);
    for (int d = 1; d < p; d <<= 1) {
        int n = d < p - d ? d : p - d;
        coll_sched_send(s, tmp, off[n], a->dt, (r - d + p) % p);
        coll_sched_recv(s, coll_elem(c, tmp, a->dt, off[d]),
                        off[d + n] - off[d], a->dt, (r + d) % p);
        coll_sched_fence(s);
    }
    for (int i = 1; i < p; i++) {
        int j = (r + i) % p;
        coll_sched_copy(s, coll_elem(c, tmp, a->dt, off[i]),
                        off[i + 1] - off[i], a->dt,
                        block(c, a->rbuf, a->dt, a->count, a->displs, j),
                        off[i + 1] - off[i], a->dt);
    }
}

int coll_allgatherv(coll_comm_t *c, const void *sbuf, int64_t scount, void *sdt,
                    void *rbuf, int64_t rcount, const int64_t *rcounts,
                    const int64_t *displs, void *rdt)
{
    coll_sched_t s;
    coll_ag_t a = {&s, rbuf, rdt, rcount, rcounts, displs};
    int r = c->rank;

    coll_sched_init(&s, c);
    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(&s, sbuf, scount, sdt,
                        block(c, rbuf, rdt, rcount, displs, r),
                        coll_vcount(rcounts, rcount, r), rdt);
    coll_pick_allgather(&a);
    return coll_sched_finish(&s);
}
