/*
 * Broadcast.  Short messages go down a binomial tree (log p rounds, the
 * root sends log p times).  Long ones are cut into p chunks that a
 * binomial tree scatters and a ring then allgathers: every rank sends and
 * receives about twice the message instead of the root sending it log p
 * times.  Chunks are cut from the byte stream, not from elements: ranks
 * may describe the same data with different datatypes, and only the bytes
 * are sure to agree.  Non-contiguous data is packed first (and unpacked
 * at the end).
 */
#include "coll_sched.h"

/* Messages at least this long (and with an element per rank) use
 * scatter + allgather. */
#define COLL_BCAST_LONG (128 * 1024)

/* The real rank of relative rank v. */
static inline int real(int v, int root, int p)
{
    return (v + root) % p;
}

static void binomial(coll_sched_t *s, void *buf, int64_t count, void *dt,
                     int root)
{
    int p = s->comm->size;
    int v = (s->comm->rank - root + p) % p;
    int mask = 1;

    /* Receive from the parent: clear v's lowest set bit. */
    while (mask < p) {
        if (v & mask) {
            coll_sched_recv(s, buf, count, dt, real(v - mask, root, p));
            coll_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    /* Send to the children: v + every lower power of two. */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p)
            coll_sched_send(s, buf, count, dt, real(v + mask, root, p));
}

/* Chunk i of count elements cut into p nearly equal parts. */
static int64_t chunk_start(int64_t count, int p, int i)
{
    int64_t q = count / p, rem = count % p;
    return i * q + (i < rem ? i : rem);
}

typedef struct chunks {
    coll_sched_t *s;
    char *buf;
    void *dt;
    int64_t count;
    int root, p;
} chunks_t;

/* Bytes of chunks [first, last) of relative ranks, as one message. */
static void *range_buf(const chunks_t *k, int first)
{
    return k->buf + chunk_start(k->count, k->p, first);
}
static int64_t range_len(const chunks_t *k, int first, int last)
{
    if (last > k->p)
        last = k->p;
    return chunk_start(k->count, k->p, last) -
           chunk_start(k->count, k->p, first);
}

static void scatter_chunks(const chunks_t *k, int v)
{
    int p = k->p, mask = 1;

    while (mask < p) {
        if (v & mask) {
            coll_sched_recv(k->s, range_buf(k, v), range_len(k, v, v + mask),
                            k->dt, real(v - mask, k->root, p));
            coll_sched_fence(k->s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p)
            coll_sched_send(k->s, range_buf(k, v + mask),
                            range_len(k, v + mask, v + 2 * mask), k->dt,
                            real(v + mask, k->root, p));
    coll_sched_fence(k->s);
}

static void ring_chunks(const chunks_t *k, int v)
{
    int p = k->p;
    int right = real((v + 1) % p, k->root, p);
    int left = real((v - 1 + p) % p, k->root, p);

    for (int i = 0; i < p - 1; i++) {
        int out = (v - i + p) % p, in = (v - i - 1 + p) % p;
        coll_sched_send(k->s, range_buf(k, out), range_len(k, out, out + 1),
                        k->dt, right);
        coll_sched_recv(k->s, range_buf(k, in), range_len(k, in, in + 1),
                        k->dt, left);
        coll_sched_fence(k->s);
    }
}

static void scatter_allgather(coll_sched_t *s, void *buf, int64_t count,
                              void *dt, int64_t bytes, int root)
{
    coll_comm_t *c = s->comm;
    chunks_t k = {s, NULL, c->ops->byte_dt, bytes, root, c->size};
    int v = (c->rank - root + c->size) % c->size;
    int contig = c->ops->contig(dt);

    if (contig) {
        int64_t ext, tlb, text;
        c->ops->extent(dt, &ext, &tlb, &text);
        k.buf = (char *)buf + tlb;
    } else {
        k.buf = coll_sched_tmp(s, bytes, k.dt);
        if (k.buf == NULL)
            return;
        if (v == 0)
            coll_sched_copy(s, buf, count, dt, k.buf, bytes, k.dt);
    }
    scatter_chunks(&k, v);
    ring_chunks(&k, v);
    if (!contig && v != 0)
        coll_sched_copy(s, k.buf, bytes, k.dt, buf, count, dt);
}

int coll_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt, int root)
{
    coll_sched_t s;
    int p = c->size;

    coll_sched_init(&s, c);
    if (p > 1) {
        int64_t bytes = count > 0 ? count * c->ops->size(dt) : 0;
        /* bytes agree on every rank (equal type signatures), so they all
         * choose the same algorithm. */
        if (bytes >= COLL_BCAST_LONG && p > 2)
            scatter_allgather(&s, buf, count, dt, bytes, root);
        else
            binomial(&s, buf, count, dt, root);
    }
    return coll_sched_finish(&s);
}
