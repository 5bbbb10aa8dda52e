/*
 * Broadcast.  Short messages go down a binomial tree (log n rounds, the
 * root sends log n times).  Long ones are cut into n chunks that a
 * binomial tree scatters and a ring then allgathers: every member sends and
 * receives about twice the message instead of the root sending it log n
 * times.  Chunks are cut from the byte stream, not from elements: ranks
 * may describe the same data with different datatypes, and only the bytes
 * are sure to agree.  Non-contiguous data is packed first (and unpacked
 * at the end).
 */
#include "coll_algo.h"

/* A binomial tree from root over g that hands every member either the
 * whole message or (cut) the chunks of the members below it. */
typedef struct tree {
    coll_sched_t *s;
    const coll_group_t *g;
    int root;
    char *buf;
    int64_t count; /* elements of dt; bytes when cut */
    void *dt;
    int cut;
} tree_t;

/* What relative members [first, last) get, as one message. */
static void *range_buf(const tree_t *t, int first)
{
    if (!t->cut)
        return t->buf;
    return t->buf + coll_chunk_start(t->count, t->g->size, first);
}
static int64_t range_len(const tree_t *t, int first, int last)
{
    int n = t->g->size;

    if (!t->cut)
        return t->count;
    return coll_chunk_start(t->count, n, last < n ? last : n) -
           coll_chunk_start(t->count, n, first);
}

static void down(const tree_t *t)
{
    coll_sched_t *s = t->s;
    int n = t->g->size, v = (t->g->me - t->root + n) % n;
    int mask = 1;

    /* Receive from the parent: clear v's lowest set bit. */
    while (mask < n) {
        if (v & mask) {
            coll_sched_recv(s, range_buf(t, v), range_len(t, v, v + mask),
                            t->dt, coll_rel_member(t->g, v - mask, t->root));
            coll_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    /* Send to the children: v + every lower power of two. */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < n)
            coll_sched_send(s, range_buf(t, v + mask),
                            range_len(t, v + mask, v + 2 * mask), t->dt,
                            coll_rel_member(t->g, v + mask, t->root));
    coll_sched_fence(s);
}

void coll_bcast_binomial(coll_sched_t *s, const coll_group_t *g, void *buf,
                         int64_t count, void *dt, int root)
{
    tree_t t = {s, g, root, buf, count, dt, 0};
    down(&t);
}

/* After the scatter, member i holds the chunk of its relative index. */
static void allgather_chunks(const tree_t *t)
{
    coll_blocks_t b = {t->buf, t->dt, NULL, NULL};
    int n = t->g->size;

    if (coll_blocks_alloc(t->s, &b, n) != 0)
        return;
    for (int i = 0; i < n; i++) {
        int v = (i - t->root + n) % n;
        b.displ[i] = coll_chunk_start(t->count, n, v);
        b.count[i] = range_len(t, v, v + 1);
    }
    coll_ring_allgather(t->s, t->g, &b);
}

void coll_bcast_scatter_allgather(coll_sched_t *s, const coll_group_t *g,
                                  void *buf, int64_t count, void *dt,
                                  int64_t bytes, int root)
{
    coll_comm_t *c = s->comm;
    void *byte = c->ops->byte_dt;
    tree_t t = {s, g, root, NULL, bytes, byte, 1};
    int contig = bytes == 0 || c->ops->contig(dt);
    int at_root = g->me == root;

    if (contig) {
        int64_t ext = 0, tlb = 0, text;
        if (bytes > 0)
            c->ops->extent(dt, &ext, &tlb, &text);
        t.buf = (char *)buf + tlb;
    } else {
        t.buf = coll_sched_tmp(s, bytes, byte);
        if (t.buf == NULL)
            return;
        if (at_root)
            coll_sched_copy(s, buf, count, dt, t.buf, bytes, byte);
    }
    down(&t);
    allgather_chunks(&t);
    if (!contig && !at_root)
        coll_sched_copy(s, t.buf, bytes, byte, buf, count, dt);
}
