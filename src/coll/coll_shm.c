/*
 * Collectives through memory shared by the ranks of one host (the layout
 * and the flags are described in coll_shm.h, the set-up in coll_shm_seg.c,
 * the design in docs/ARCHITECTURE.md, "Shared-memory collectives").
 *
 * A call is two poll steps.  "begin" takes the call's sequence number n (at
 * build time), drives the
 * segment's set-up if it is not done, and waits until every rank has
 * finished reading call n - SHM_NSETS, whose blocks call n reuses (and,
 * for data in an area, the previous call of that area).  "main" runs the
 * algorithm as a state machine that only checks flags and returns: the
 * runner waits (spin, yield, doorbell) between its attempts.
 *
 *   barrier    every rank raises arr in its block; all wait for all
 *   bcast      the root copies into its block or area slot chunk by chunk,
 *              raising res after each; the others copy out what is there
 *   reduce,    every rank copies its data into its block or slot and
 *   allreduce  raises arr; short vectors are then reduced whole by every
 *              rank that needs the result; longer ones are cut in p
 *              slices, rank k reduces slice k of all slots into the last
 *              rank's slot and raises res, and who needs the result copies
 *              each slice out once its res is up
 * Reductions run in rank order, x0 op (x1 op (... op x(p-1))), so
 * non-commutative operations are right and every rank that computes a
 * result computes the same expression.
 *
 * Whoever raises a flag that ranks may be sleeping on rings them
 * (ops->wake: a load when they are awake).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_shm.h"

enum {
    P_IDLE,
    P_BEGIN,
    P_START,
    P_WAIT_ARR,
    P_WAIT_RES,
    P_FALLBACK,
    P_DONE,
    P_BROKEN /* the set-up failed with an error: every run reports it */
};

/*
 * Not for persistent schedules: ranks may start a communicator's
 * persistent collectives in different orders (MPI 4.0 lets them), and the
 * shared blocks are handed out in call order.  Those run over
 * point-to-point, whose tag each request fixes at its initialization.
 */
static int applies(const coll_comm_t *c)
{
    return !c->is_inter && c->nhosts <= 1 && c->size > 1 &&
           !(c->start_out != NULL && c->persistent);
}

/* ---- sequence numbers and reuse ------------------------------------------ */

static void assign(coll_shm_t *m, shm_call_t *a)
{
    uint64_t need = 0;

    a->n = ++m->calls;
    if (a->n > SHM_NSETS)
        need = a->n - SHM_NSETS;
    a->area = -1;
    if (a->big) {
        a->area = (int)(m->nlarge++ % SHM_NAREAS);
        if (m->area_last[a->area] > need)
            need = m->area_last[a->area];
        m->area_last[a->area] = a->n;
    }
    a->need = need;
}

/* Read every rank's done word; 1 when all reached a->need. */
static int refresh(coll_shm_t *m, shm_call_t *a)
{
    for (;;) {
        uint64_t lo = UINT64_MAX;
        for (int q = 0; q < m->p; q++) {
            uint64_t d =
                atomic_load_explicit(shm_done_word(m, q), memory_order_acquire);
            if (d < lo)
                lo = d;
        }
        m->free_upto = lo;
        if (lo >= a->need) {
            if (a->waiting) {
                atomic_fetch_sub_explicit(&m->hdr->done_waiters, 1,
                                          memory_order_relaxed);
                a->waiting = 0;
            }
            return 1;
        }
        if (a->waiting)
            return 0;
        /* Ask the publishers to ring us, then look again (their store
         * and our count, our count and their load: both sequentially
         * consistent, so one of us sees the other). */
        a->waiting = 1;
        atomic_fetch_add_explicit(&m->hdr->done_waiters, 1,
                                  memory_order_seq_cst);
    }
}

/* Ring rank q if it sleeps: one load while it is awake (the ranks'
 * doorbell words are looked up once, at the first ring of m). */
static void wake_rank(const coll_comm_t *c, coll_shm_t *m, int q)
{
    const _Atomic uint32_t *b;

    if (BASE_UNLIKELY(!m->bells_set)) {
        m->bells_set = 1;
        if (m->bells != NULL && c->ops->bell != NULL)
            for (int r = 0; r < m->p; r++)
                m->bells[r] = r == m->rank ? NULL : c->ops->bell(c->ctx, r);
    }
    b = m->bells != NULL ? m->bells[q] : NULL;
    if (b == NULL || atomic_load_explicit(b, memory_order_seq_cst) != 0)
        c->ops->wake(c->ctx, q);
}

static void wake_all(const shm_call_t *a)
{
    const coll_comm_t *c = a->c;
    coll_shm_t *m = c->shm;

    for (int q = 0; q < c->size; q++)
        if (q != c->rank)
            wake_rank(c, m, q);
}

static void wake_one(const shm_call_t *a, int q)
{
    const coll_comm_t *c = a->c;

    if (q != c->rank)
        wake_rank(c, c->shm, q);
}

/* Call n is finished here: publish the done word when it moves (calls
 * finish out of order only among the SHM_NSETS in flight). */
static void finish(shm_call_t *a)
{
    coll_shm_t *m = a->c->shm;
    uint64_t d = m->done_upto;

    /* The next call raises a flag in this line with a fenced store, which
     * would wait for the line to come back from the ranks that read it
     * last time: ask for it now. */
    base_prefetch_write(shm_blk(m, a->n + 1, m->rank));

    m->finished[a->n % SHM_NSETS] = a->n;
    while (m->finished[(d + 1) % SHM_NSETS] == d + 1)
        d++;
    if (d == m->done_upto)
        return;
    m->done_upto = d;
    atomic_store_explicit(shm_done_word(m, m->rank), d, memory_order_seq_cst);
    if (BASE_UNLIKELY(atomic_load_explicit(&m->hdr->done_waiters,
                                           memory_order_seq_cst) != 0))
        wake_all(a);
}

/* ---- data and flags ------------------------------------------------------ */

static inline char *data_of(const shm_call_t *a, const coll_shm_t *m, int q)
{
    if (a->area >= 0)
        return shm_area_slot(m, a->area, q);
    return (char *)shm_blk(m, a->n, q) + SHM_FLAGS;
}

/*
 * Raising a flag others may sleep on is a Dekker pattern with their
 * doorbell: they raise the doorbell word and then look at our flag, we
 * raise the flag and then look at the doorbell word (ops->wake).  With
 * SHOAL_SHM_FENCE=full no membarrier orders our side, so a full fence must
 * separate the two.  The flag is stored with release and the fence comes
 * later, in ring(), after this step looked at the other ranks' flags: by
 * then the line of our flag has usually come back from the ranks that
 * polled it, and the fence costs nothing.
 */
static inline void raise_flag(shm_call_t *a, _Atomic uint64_t *f, uint64_t v,
                              int who)
{
    atomic_store_explicit(f, v, memory_order_release);
    if (who > a->ring)
        a->ring = who;
}

/* Ring whom the flags raised by this step concern (before it returns). */
static void ring(shm_call_t *a)
{
    int who = a->ring;

    a->ring = SHM_RING_NONE;
    base_fence_full();
    if (who == SHM_RING_ALL)
        wake_all(a);
    else
        wake_one(a, a->root);
}

/* 1 when the arr (res) flag of every rank reached want; remembers where
 * it stopped. */
static int all_reached(shm_call_t *a, const coll_shm_t *m, int res,
                       uint64_t want)
{
    for (int q = a->next; q < m->p; q++) {
        shm_blk_t *b = shm_blk(m, a->n, q);
        uint64_t v =
            atomic_load_explicit(res ? &b->res : &b->arr, memory_order_acquire);
        if (v < want) {
            a->next = q;
            return 0;
        }
    }
    a->next = 0;
    return 1;
}

static void note(shm_call_t *a, int rc)
{
    if (rc != 0 && a->err == 0)
        a->err = shm_err(rc);
}

/* ---- barrier ------------------------------------------------------------- */

static int barrier_step(shm_call_t *a, coll_shm_t *m)
{
    switch (a->phase) {
    case P_START:
        raise_flag(a, &shm_blk(m, a->n, m->rank)->arr, SHM_FLAG(a->n, 1),
                   SHM_RING_ALL);
        a->phase = P_WAIT_ARR;
        /* fall through */
    default:
        return all_reached(a, m, 0, SHM_FLAG(a->n, 1));
    }
}

/* ---- bcast --------------------------------------------------------------- */

static int64_t chunk_of(int64_t bytes)
{
    int64_t k = base_align_up((size_t)(bytes / 4), 64);
    return k < SHM_CHUNK_MIN   ? SHM_CHUNK_MIN
           : k > SHM_CHUNK_MAX ? SHM_CHUNK_MAX
                               : k;
}

static int bcast_step(shm_call_t *a, coll_shm_t *m)
{
    coll_comm_t *c = a->c;
    shm_blk_t *rb = shm_blk(m, a->n, a->root);
    char *data = data_of(a, m, a->root);
    char *user = (char *)a->rbuf + a->tlb;
    int64_t ch = a->chunk, nch = (a->bytes + ch - 1) / ch;

    if (m->rank == a->root) {
        if (!a->contig) {
            note(a, c->ops->copy(c->ctx, a->rbuf, a->count, a->dt, data,
                                 a->bytes, c->ops->byte_dt));
            raise_flag(a, &rb->res, SHM_FLAG(a->n, nch), SHM_RING_ALL);
            return 1;
        }
        for (int64_t k = 0; k < nch; k++) {
            int64_t off = k * ch;
            int64_t len = a->bytes - off < ch ? a->bytes - off : ch;
            base_copy(data + off, user + off, (size_t)len);
            raise_flag(a, &rb->res, SHM_FLAG(a->n, k + 1), SHM_RING_ALL);
            ring(a); /* each chunk at once: readers copy meanwhile */
        }
        return 1;
    }
    {
        uint64_t v = atomic_load_explicit(&rb->res, memory_order_acquire);
        int64_t have, avail;

        if (v <= SHM_FLAG(a->n, 0))
            return 0;
        have = (int64_t)(v - SHM_FLAG(a->n, 0));
        if (!a->contig) {
            if (have < nch)
                return 0;
            note(a, c->ops->copy(c->ctx, data, a->bytes, c->ops->byte_dt,
                                 a->rbuf, a->count, a->dt));
            return 1;
        }
        avail = have * ch < a->bytes ? have * ch : a->bytes;
        if (avail > a->copied) {
            base_copy(user + a->copied, data + a->copied,
                      (size_t)(avail - a->copied));
            a->copied = avail;
        }
        return a->copied == a->bytes;
    }
}

/* ---- reduce and allreduce ------------------------------------------------ */

/* First element of rank k's slice of count elements. */
static int64_t slice_start(int64_t count, int p, int k)
{
    int64_t q = count / p, rem = count % p;
    return k * q + (k < rem ? k : rem);
}

/* count elements at element first of src (laid out in the segment, as dt
 * with its true lower bound at the start) into the user's buffer. */
static void copy_out(shm_call_t *a, const char *src, int64_t first,
                     int64_t count)
{
    coll_comm_t *c = a->c;
    int64_t off = first * a->ext;

    if (count <= 0)
        return;
    if (a->contig)
        base_copy((char *)a->rbuf + a->tlb + off, src + off,
                  (size_t)(count * a->ext));
    else
        note(a, c->ops->copy(c->ctx, src + off - a->tlb, count, a->dt,
                             (char *)a->rbuf + off, count, a->dt));
}

/* x0 op (x1 op (... op x(p-1))) over elements [first, first + count) of
 * every slot, into acc (addressed as dt, element first at acc). */
static void fold(shm_call_t *a, const coll_shm_t *m, char *acc, int64_t first,
                 int64_t count)
{
    coll_comm_t *c = a->c;
    int64_t off = first * a->ext - a->tlb;
    /* The kernel straight away when the buffers allow it: short vectors
     * spend more in reduce_local's dispatch than in the arithmetic. */
    coll_kernel_t *k =
        a->kernel != NULL && ((uintptr_t)(acc + a->tlb) & (a->kalign - 1)) == 0
            ? a->kernel
            : NULL;

    for (int q = m->p - 2; q >= 0; q--) {
        const char *in = data_of(a, m, q) + off;
        if (k != NULL && ((uintptr_t)(in + a->tlb) & (a->kalign - 1)) == 0)
            k(in + a->tlb, acc + a->tlb, count * a->kper);
        else
            note(a, c->ops->reduce_local(c->ctx, a->op, in, acc, count,
                                         a->dt));
    }
}

static int reduce_step(shm_call_t *a, coll_shm_t *m)
{
    int r = m->rank, p = m->p;
    int all = a->kind == SHM_ALLREDUCE;
    int wants = all || r == a->root; /* needs the result */
    shm_blk_t *mine = shm_blk(m, a->n, r);

    switch (a->phase) {
    case P_START: {
        const char *in = a->sbuf == COLL_IN_PLACE ? a->rbuf : a->sbuf;
        base_copy(data_of(a, m, r), in + a->tlb, (size_t)a->bytes);
        /* In a short reduce only the root reads the data. */
        raise_flag(a, &mine->arr, SHM_FLAG(a->n, 1),
                   all || !a->allread ? SHM_RING_ALL : SHM_RING_ROOT);
        if (a->allread && !wants)
            return 1;
        a->phase = P_WAIT_ARR;
    }
        /* fall through */
    case P_WAIT_ARR:
        if (!all_reached(a, m, 0, SHM_FLAG(a->n, 1)))
            return 0;
        if (a->allread) {
            /* the whole vector, straight into the user's buffer */
            copy_out(a, data_of(a, m, p - 1), 0, a->count);
            fold(a, m, a->rbuf, 0, a->count);
            return 1;
        }
        {
            int64_t lo = slice_start(a->count, p, r);
            int64_t hi = slice_start(a->count, p, r + 1);
            if (hi > lo)
                fold(a, m, data_of(a, m, p - 1) + lo * a->ext - a->tlb, lo,
                     hi - lo);
        }
        raise_flag(a, &mine->res, SHM_FLAG(a->n, 1),
                   all ? SHM_RING_ALL : SHM_RING_ROOT);
        if (!wants)
            return 1;
        a->phase = P_WAIT_RES;
        /* fall through */
    default:
        /* copy each slice out as soon as it is reduced */
        for (int q = a->next; q < p; q++) {
            shm_blk_t *b = shm_blk(m, a->n, q);
            if (atomic_load_explicit(&b->res, memory_order_acquire) <
                SHM_FLAG(a->n, 1)) {
                a->next = q;
                return 0;
            }
            copy_out(a, data_of(a, m, p - 1), slice_start(a->count, p, q),
                     slice_start(a->count, p, q + 1) -
                         slice_start(a->count, p, q));
        }
        a->next = 0;
        return 1;
    }
}

/* ---- the two steps ------------------------------------------------------- */

static int shm_begin(void *arg)
{
    shm_call_t *a = arg;
    coll_shm_t *m = a->c->shm;
    int rc;

    if (a->phase == P_IDLE || a->phase == P_DONE) {
        a->phase = P_BEGIN;
        a->err = 0;
        a->next = 0;
        a->ring = SHM_RING_NONE;
        a->copied = 0;
    }
    if (a->phase == P_BROKEN)
        return a->err;
    if (a->phase != P_BEGIN)
        return 1; /* asked again after the runner's wait saw it done */
    rc = shm_setup_progress(a->c);
    if (rc == 0)
        return 0;
    if (rc != 1) {
        a->err = shm_err(rc);
        a->phase = P_BROKEN;
        return a->err;
    }
    if (m->state == SHM_ST_FAILED) {
        shm_fallback_reset(a);
        a->phase = P_FALLBACK;
        return 1;
    }
    if (m->free_upto < a->need && !refresh(m, a))
        return 0;
    a->phase = P_START;
    return 1;
}

static int shm_main(void *arg)
{
    shm_call_t *a = arg;
    coll_shm_t *m = a->c->shm;
    int done;

    switch (a->phase) {
    case P_DONE:
        return a->err != 0 ? a->err : 1;
    case P_FALLBACK:
        if (!shm_fallback(a))
            return 0;
        a->phase = P_DONE;
        a->pooled = 0;
        return a->err != 0 ? a->err : 1;
    case P_IDLE:
    case P_BEGIN:
    case P_BROKEN:
        /* begin failed and the runner went on (a peer died) */
        return a->err != 0 ? a->err : 1;
    default:
        break;
    }
    switch (a->kind) {
    case SHM_BARRIER:
        done = barrier_step(a, m);
        break;
    case SHM_BCAST:
        done = bcast_step(a, m);
        break;
    default:
        done = reduce_step(a, m);
        break;
    }
    if (a->ring != SHM_RING_NONE)
        ring(a);
    if (!done)
        return 0;
    finish(a);
    a->phase = P_DONE;
    /* The record may serve a new call now: only this step's second look
     * (the runner's, right after its wait saw the step done) reads it
     * again, and no call is built in between. */
    a->pooled = 0;
    return a->err != 0 ? a->err : 1;
}

/* ---- building ------------------------------------------------------------ */

/* A record of m's pool that no call uses, or NULL. */
static shm_call_t *pooled_record(coll_shm_t *m)
{
    shm_call_t *a = NULL;

    if (m->records == NULL)
        return NULL;
    for (int k = 0; k < SHM_NRECORDS && a == NULL; k++) {
        shm_call_t *x = &m->records[(m->rec_next + k) % SHM_NRECORDS];
        if (!x->pooled)
            a = x;
    }
    m->rec_next = (m->rec_next + 1) % SHM_NRECORDS;
    return a;
}

/* Every field of a new call but pooled.  Field by field: a
 * memset of the record compiles to `rep stos`, slow to start on the
 * machines we measure on. */
static void init_call(shm_call_t *a, coll_comm_t *c, int kind, int tag)
{
    a->phase = P_IDLE;
    a->waiting = 0;
    a->err = 0;
    a->n = 0;
    a->need = 0;
    a->sbuf = NULL;
    a->rbuf = NULL;
    a->count = 0;
    a->dt = NULL;
    a->op = NULL;
    a->root = 0;
    a->bytes = 0;
    a->tlb = 0;
    a->ext = 0;
    a->contig = 1;
    a->kernel = NULL;
    a->allread = 0;
    a->big = 0;
    a->next = 0;
    a->ring = SHM_RING_NONE;
    a->copied = 0;
    a->chunk = 0;
    a->fbabort = 0;
    a->reqs = NULL;
    a->nreq = 0;
    a->tmp = NULL;
    a->c = c;
    a->kind = kind;
    a->tag = tag;
    a->area = -1;
    a->fbstage = 1;
}

static shm_call_t *new_call(coll_sched_t *s, int kind)
{
    coll_comm_t *c = s->comm;
    shm_call_t *a;

    if (c->shm == NULL && s->err == 0) {
        coll_shm_t *m = calloc(1, sizeof(*m));
        if (m == NULL) {
            s->err =
                base_err(SHOAL_ERR_NOMEM, "shared-memory collective state");
            return NULL;
        }
        m->records = calloc(SHM_NRECORDS, sizeof(shm_call_t));
        m->bells = calloc((size_t)c->size, sizeof(*m->bells));
        m->state = SHM_ST_NEW;
        m->tag = s->tag; /* the set-up's messages share the call's tag */
        m->p = c->size;
        m->rank = c->rank;
        m->fd = -1;
        c->shm = m;
    }
    a = c->shm != NULL ? pooled_record(c->shm) : NULL;
    if (a == NULL) {
        a = coll_sched_alloc(s, (int64_t)sizeof(*a));
        if (a == NULL)
            return NULL;
        a->pooled = 0;
    } else {
        a->pooled = 1;
    }
    init_call(a, c, kind, s->tag);
    return a;
}

static int build(coll_sched_t *s, shm_call_t *a)
{
    if (a == NULL)
        return 1; /* the schedule holds the error */
    assign(a->c->shm, a);
    coll_sched_poll(s, shm_begin, a);
    coll_sched_poll(s, shm_main, a);
    return 1;
}

/* Packed bytes of a bcast: they agree everywhere (the type signatures
 * match); the datatypes need not, so each rank packs or copies as its own
 * type says. */
static int64_t bcast_bytes(const coll_comm_t *c, int64_t count, void *dt)
{
    return count > 0 && dt != NULL ? count * c->ops->size(dt) : 0;
}

/* The fields of a call with data: count elements of dt at rbuf, bytes of
 * them (packed for a bcast, their span for a reduction). */
static void set_data(shm_call_t *a, void *rbuf, int64_t count, void *dt,
                     int root, int64_t bytes, int64_t tlb, int64_t ext)
{
    a->rbuf = rbuf;
    a->count = count;
    a->dt = dt;
    a->root = root;
    a->bytes = bytes;
    a->tlb = tlb;
    a->ext = ext;
    a->contig = a->c->ops->contig(dt);
    a->big = bytes > SHM_SETCAP;
}

static void set_bcast(shm_call_t *a, void *buf, int64_t count, void *dt,
                      int root, int64_t bytes)
{
    int64_t ext = 0, tlb = 0, text = 0;

    a->c->ops->extent(dt, &ext, &tlb, &text);
    set_data(a, buf, count, dt, root, bytes, tlb, ext);
    a->chunk = chunk_of(bytes);
}

/* Where the elements of a reduction lie: they are copied as one span
 * (holes included, never written back), so they must not overlap. */
typedef struct span {
    int64_t ext, tlb, bytes;
} span_t;

/* 1 when the algorithms here handle count (> 0) elements of dt.  The
 * datatype is the same on every rank: so is this decision. */
static int reduction_fits(const coll_comm_t *c, int64_t count, void *dt,
                          span_t *g)
{
    int64_t text = 0;

    c->ops->extent(dt, &g->ext, &g->tlb, &text);
    if (c->ops->size(dt) <= 0 || g->ext <= 0 || text > g->ext)
        return 0;
    g->bytes = text + (count - 1) * g->ext;
    return g->bytes <= SHM_SLOT;
}

static void set_reduction(shm_call_t *a, const span_t *g, const void *sbuf,
                          void *rbuf, int64_t count, void *dt, void *op,
                          int root)
{
    const coll_ops_t *ops = a->c->ops;

    set_data(a, rbuf, count, dt, root, g->bytes, g->tlb, g->ext);
    a->sbuf = sbuf;
    a->op = op;
    a->kernel = ops->reduce_kernel != NULL
                    ? ops->reduce_kernel(op, dt, &a->kper, &a->kalign)
                    : NULL;
    a->allread = g->bytes <= SHM_ALLREAD_MAX;
}

int coll_shm_barrier(coll_sched_t *s)
{
    if (!applies(s->comm))
        return 0;
    return build(s, new_call(s, SHM_BARRIER));
}

int coll_shm_bcast(coll_sched_t *s, void *buf, int64_t count, void *dt,
                   int root)
{
    coll_comm_t *c = s->comm;
    int64_t bytes = bcast_bytes(c, count, dt);
    shm_call_t *a;

    if (!applies(c) || bytes > SHM_SLOT)
        return 0;
    if (bytes == 0)
        return 1; /* nothing to do anywhere */
    a = new_call(s, SHM_BCAST);
    if (a != NULL)
        set_bcast(a, buf, count, dt, root, bytes);
    return build(s, a);
}

static int reduction(coll_sched_t *s, int kind, const void *sbuf, void *rbuf,
                     int64_t count, void *dt, void *op, int root)
{
    coll_comm_t *c = s->comm;
    span_t g;
    shm_call_t *a;

    if (!applies(c))
        return 0;
    if (count <= 0)
        return 1;
    if (!reduction_fits(c, count, dt, &g))
        return 0;
    a = new_call(s, kind);
    if (a != NULL)
        set_reduction(a, &g, sbuf, rbuf, count, dt, op, root);
    return build(s, a);
}

int coll_shm_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op, int root)
{
    return reduction(s, SHM_REDUCE, sbuf, rbuf, count, dt, op, root);
}

int coll_shm_allreduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op)
{
    return reduction(s, SHM_ALLREDUCE, sbuf, rbuf, count, dt, op, -1);
}

/* ---- blocking calls without a schedule ------------------------------------ */

/*
 * A warm blocking call (the segment is set up and shared) needs no
 * schedule: its record is driven by coll_shm_now_test, through the same
 * two steps, in the caller's wait.  It takes the tag a schedule would
 * have, so the ranks' counts agree whichever way each call went.  NULL
 * when the call must be built as a schedule (set-up, fallback, no free
 * record).
 */
static shm_call_t *now_call(coll_comm_t *c, int kind)
{
    coll_shm_t *m = c->shm;
    shm_call_t *a;

    if (m == NULL || m->state != SHM_ST_READY || !applies(c))
        return NULL;
    a = pooled_record(m);
    if (a == NULL)
        return NULL;
    a->pooled = 1;
    init_call(a, c, kind, (int)(c->seq++ & COLL_TAG_MASK));
    return a;
}

coll_now_t *coll_shm_now_barrier(coll_comm_t *c)
{
    shm_call_t *a = now_call(c, SHM_BARRIER);

    if (a != NULL)
        assign(c->shm, a);
    return a;
}

coll_now_t *coll_shm_now_bcast(coll_comm_t *c, void *buf, int64_t count,
                               void *dt, int root)
{
    int64_t bytes = bcast_bytes(c, count, dt);
    shm_call_t *a;

    if (bytes <= 0 || bytes > SHM_SLOT)
        return NULL;
    a = now_call(c, SHM_BCAST);
    if (a != NULL) {
        set_bcast(a, buf, count, dt, root, bytes);
        assign(c->shm, a);
    }
    return a;
}

static shm_call_t *now_reduction(coll_comm_t *c, int kind, const void *sbuf,
                                 void *rbuf, int64_t count, void *dt,
                                 void *op, int root)
{
    span_t g;
    shm_call_t *a;

    if (count <= 0 || !applies(c) || !reduction_fits(c, count, dt, &g))
        return NULL;
    a = now_call(c, kind);
    if (a != NULL) {
        set_reduction(a, &g, sbuf, rbuf, count, dt, op, root);
        assign(c->shm, a);
    }
    return a;
}

coll_now_t *coll_shm_now_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                                int64_t count, void *dt, void *op, int root)
{
    return now_reduction(c, SHM_REDUCE, sbuf, rbuf, count, dt, op, root);
}

coll_now_t *coll_shm_now_allreduce(coll_comm_t *c, const void *sbuf,
                                   void *rbuf, int64_t count, void *dt,
                                   void *op)
{
    return now_reduction(c, SHM_ALLREDUCE, sbuf, rbuf, count, dt, op, -1);
}

int coll_now_test(coll_now_t *a, int *rc)
{
    int r = 1;

    if (a->phase == P_IDLE || a->phase == P_BEGIN)
        r = shm_begin(a);
    if (r == 1)
        r = shm_main(a);
    if (r == 0)
        return 0;
    *rc = r == 1 ? 0 : r;
    return 1;
}
