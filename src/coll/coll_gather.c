/*
 * Gather, scatter and allgather.  Gather and scatter are linear: only the
 * root knows the v-forms' counts, so a tree would first have to send them
 * around, and the root's link carries all the data either way.  Allgather
 * uses recursive doubling when every block has the same size and the group
 * is a power of two (log p rounds), else a ring (p - 1 rounds, any counts).
 */
#include "coll_sched.h"

/* Block i of a v-form buffer. */
static void *block(const coll_comm_t *c, const void *buf, void *dt,
                   int64_t count, const int *displs, int i)
{
    return coll_elem(c, buf, dt, coll_vdispl(displs, count, i));
}

int coll_gatherv(coll_comm_t *c, const void *sbuf, int64_t scount, void *sdt,
                 void *rbuf, int64_t rcount, const int *rcounts,
                 const int *displs, void *rdt, int root)
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
                         const int *scounts, const int *displs, void *sdt,
                         void *rbuf, int64_t rcount, void *rdt, int root)
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
                  const int *scounts, const int *displs, void *sdt,
                  void *rbuf, int64_t rcount, void *rdt, int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    coll_build_scatterv(&s, sbuf, scount, scounts, displs, sdt, rbuf, rcount,
                        rdt, root);
    return coll_sched_finish(&s);
}

/* ---- allgather ------------------------------------------------------------------ */

typedef struct ag {
    coll_sched_t *s;
    void *rbuf, *dt;
    int64_t count;
    const int *counts, *displs;
} ag_t;

static void ring(const ag_t *a)
{
    coll_comm_t *c = a->s->comm;
    int p = c->size, r = c->rank;
    int right = (r + 1) % p, left = (r - 1 + p) % p;

    for (int i = 0; i < p - 1; i++) {
        int out = (r - i + p) % p, in = (r - i - 1 + p) % p;
        coll_sched_send(a->s, block(c, a->rbuf, a->dt, a->count, a->displs, out),
                        coll_vcount(a->counts, a->count, out), a->dt, right);
        coll_sched_recv(a->s, block(c, a->rbuf, a->dt, a->count, a->displs, in),
                        coll_vcount(a->counts, a->count, in), a->dt, left);
        coll_sched_fence(a->s);
    }
}

/* Uniform blocks, p a power of two: before round k a rank holds the 2^k
 * blocks of its aligned group, which lie next to each other. */
static void doubling(const ag_t *a)
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

int coll_allgatherv(coll_comm_t *c, const void *sbuf, int64_t scount,
                    void *sdt, void *rbuf, int64_t rcount, const int *rcounts,
                    const int *displs, void *rdt)
{
    coll_sched_t s;
    ag_t a = {&s, rbuf, rdt, rcount, rcounts, displs};
    int r = c->rank;

    coll_sched_init(&s, c);
    if (sbuf != COLL_IN_PLACE)
        coll_sched_copy(&s, sbuf, scount, sdt,
                        block(c, rbuf, rdt, rcount, displs, r),
                        coll_vcount(rcounts, rcount, r), rdt);
    if (rcounts == NULL && displs == NULL && (c->size & (c->size - 1)) == 0)
        doubling(&a);
    else
        ring(&a);
    return coll_sched_finish(&s);
}
