/*
 * The library's objects in a checkpoint (docs/FT.md "The library's
 * objects"): the communicators, groups and datatypes alive at the cut
 * are described in the image, and a restart makes each again at the
 * address its handle had (obj_arena.c, ckpt_fixed.c), so a program that
 * keeps its handles in registered memory finds them working and need not
 * make its objects again.
 *
 * Records, 8-byte aligned, in an order where everything a record names
 * comes before it: groups, then datatypes (those a type is built from
 * first), then communicators.  A group is its members' world ranks; a
 * datatype the arguments of its constructor (MPI_Type_get_contents'
 * layout) and whether it was committed; a communicator its context id
 * and that id's epoch, its groups, its error handler when predefined, its
 * topology, name and counters.  A restart builds each with the same calls
 * the program made (a communicator without an agreement: every member
 * puts back the same context id), then sets every object's reference
 * count to the one it had.  A communicator the program made again before
 * MPIX_Checkpoint_restarted, in the older way, keeps its context id, and
 * the image's copy of it is not put back.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"
#include "mpi/comm/topo.h"
#include "mpi/core/ckpt_objs.h"
#include "mpi/core/obj_arena.h"
#include "mpi/core/ft.h"
#include "mpi/dt/dt.h"

/* Objects (groups, datatypes, communicators) are named by their
 * address; a keyval record's addr is the keyval, an attributes record's
 * the object they are on. */
enum { CKO_GROUP = 1, CKO_DT = 2, CKO_COMM = 3, CKO_KEYVAL = 4,
       CKO_ATTRS = 5, CKO_ERRH = 6, CKO_OP = 7, CKO_REQ = 8, CKO_INFO = 9 };

static int is_obj(uint32_t kind)
{
    return kind == CKO_GROUP || kind == CKO_DT || kind == CKO_COMM ||
           kind == CKO_ERRH || kind == CKO_OP || kind == CKO_REQ ||
           kind == CKO_INFO;
}

/* A point-to-point request (head.n: REQ_* flags): a receive posted at the
 * cut, or a persistent send or receive, inactive or (a receive) started.
 * Its buffer is named by registered region and offset. */
#define REQ_PERSISTENT 1
#define REQ_POSTED 2
#define REQ_SEND 4
#define REQ_DONE 8 /* completed, not yet waited for: its status */
/* A synchronous send (MPI_Issend, or a started MPI_Ssend_init) whose
 * message is at its receiver, unmatched: it waits for the ack, which the
 * receiver's image owes it (ckpt.c, CK_MSG_SYNC). */
#define REQ_SYNC_OUT 16
/* A nonblocking collective's, completed at the cut (ckpt.c runs them to
 * their end there) and not yet waited for. */
#define REQ_COLL 32
/* A generalized request (MPI_Grequest_start), completed or not: its
 * functions and extra state follow the cko_req_t (cko_greq_t). */
#define REQ_GREQ 64
typedef struct cko_req {
    uint64_t comm, dt;
    int64_t count;
    int32_t peer, tag, mode, region; /* region: -1 when count is 0 */
    int64_t off;                     /* of buf from the region's start */
    int32_t st_source, st_tag, st_error, st_cancelled;
    int64_t st_count;
} cko_req_t;

typedef struct cko_greq {
    uint64_t query, free, cancel, state;
} cko_greq_t;

/* An info object (head.n: its pairs): per pair, the key's and the
 * value's lengths, then the key's and the value's bytes (no NULs); the
 * record padded to 8. */
typedef struct cko_pair {
    uint32_t klen, vlen;
} cko_pair_t;

/* A user error handler's functions (head.n: its kind), and a user
 * operation's (head.n: commute). */
typedef struct cko_fns {
    uint64_t fn[3];
} cko_fns_t;

typedef struct cko_attr {
    int32_t keyval, zero;
    uint64_t val;
} cko_attr_t;

typedef struct cko_head {
    uint32_t kind;
    uint32_t len;  /* of the whole record, a multiple of 8 */
    uint64_t addr; /* the object's address: its handle */
    int32_t refs;
    int32_t n;     /* group: members; datatype: combiner */
} cko_head_t;

typedef struct cko_dt {
    int32_t nints, naddrs, ntypes, committed;
    int32_t user_freed, zero;
    char name[MPI_MAX_OBJECT_NAME];
    /* then ints[nints], pad to 8, addrs[naddrs], types[ntypes] (u64) */
} cko_dt_t;

typedef struct cko_comm {
    uint32_t ctx, is_inter;
    uint64_t epoch;        /* the context id's (mpi_ctx_epoch) */
    uint64_t group, remote;
    uint64_t errh;         /* a predefined handler's address, or 0 */
    uint32_t next_child, tol_seq;
    int32_t topo_kind;     /* 0: none */
    int32_t ndims, nnodes, nedges, indegree, outdegree, weighted, zero;
    char name[MPI_MAX_OBJECT_NAME];
    /* then the topology's arrays (int32): dims, periods, index, edges,
     * sources, sourceweights, dests, destweights, padded to 8 */
} cko_comm_t;

#define PAD8(n) (((n) + 7) & ~(size_t)7)

/* Every object the arena holds fits a cell (obj_arena.c). */
_Static_assert(sizeof(struct shoal_mpi_comm) <= MPI_ARENA_CELL, "comm");
_Static_assert(sizeof(struct shoal_mpi_group) <= MPI_ARENA_CELL, "group");
_Static_assert(sizeof(dt_obj_t) <= MPI_ARENA_CELL, "datatype");
_Static_assert(sizeof(struct shoal_mpi_errhandler) <= MPI_ARENA_CELL,
               "error handler");
_Static_assert(sizeof(struct shoal_mpi_op) <= MPI_ARENA_CELL, "op");
_Static_assert(sizeof(struct shoal_mpi_request) <= MPI_ARENA_CELL,
               "request");
_Static_assert(sizeof(struct shoal_mpi_info) <= MPI_ARENA_CELL, "info");

/* ---- writing ---------------------------------------------------------------------- */

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    int nomem;
} wbuf_t;

static void *wb_room(wbuf_t *b, size_t n)
{
    n = PAD8(n);
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (p == NULL) {
            b->nomem = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    void *r = b->p + b->len;
    memset(r, 0, n);
    b->len += n;
    return r;
}

/* The live objects of the arena, by kind, sorted by address. */
typedef struct live {
    void **v;
    size_t n, cap;
} live_t;

typedef struct census {
    live_t groups, dts, comms, errhs, ops, reqs, infos;
    uint8_t *dt_done; /* per dts entry: emitted */
    int nomem;
} census_t;

static void live_add(census_t *c, live_t *l, void *obj)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        void **v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            c->nomem = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = obj;
}

static void count_obj(void *obj, void *arg)
{
    census_t *c = arg;
    uint32_t magic = *(const uint32_t *)obj;

    if (magic == MPI_MAGIC_GROUP)
        live_add(c, &c->groups, obj);
    else if (magic == MPI_MAGIC_DT)
        live_add(c, &c->dts, obj);
    else if (magic == MPI_MAGIC_COMM)
        live_add(c, &c->comms, obj);
    else if (magic == MPI_MAGIC_ERRH)
        live_add(c, &c->errhs, obj);
    else if (magic == MPI_MAGIC_OP)
        live_add(c, &c->ops, obj);
    else if (magic == MPI_MAGIC_REQ)
        live_add(c, &c->reqs, obj);
    else if (magic == MPI_MAGIC_INFO)
        live_add(c, &c->infos, obj);
}

static void census_free(census_t *c)
{
    free(c->groups.v);
    free(c->dts.v);
    free(c->comms.v);
    free(c->errhs.v);
    free(c->ops.v);
    free(c->reqs.v);
    free(c->infos.v);
    free(c->dt_done);
}

static long live_find(const live_t *l, const void *obj)
{
    size_t lo = 0, hi = l->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)l->v[mid] < (uintptr_t)obj)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && l->v[lo] == obj ? (long)lo : -1;
}

/* Is c a communicator whose record the image does not carry (the
 * checkpoint's own, a revoked one)? */
static int comm_skipped(MPI_Comm c, uint32_t skip_ctx)
{
    return c->ctx == skip_ctx || c->revoked;
}

static int comm_holds(MPI_Comm c, MPI_Group g)
{
    return (c->group == g) +
           (c->remote_group == g && c->remote_group != c->group);
}

/* References to g held by no record: those of MPI_COMM_WORLD and
 * MPI_COMM_SELF (a restart has its own) and of the communicators not
 * carried. */
static int unrecorded_refs(const census_t *c, MPI_Group g, uint32_t skip_ctx)
{
    int n = comm_holds(MPI_COMM_WORLD, g) + comm_holds(MPI_COMM_SELF, g);

    for (size_t i = 0; i < c->comms.n; i++)
        if (comm_skipped(c->comms.v[i], skip_ctx))
            n += comm_holds(c->comms.v[i], g);
    return n;
}

static void put_group(wbuf_t *b, const census_t *c, MPI_Group g,
                      uint32_t skip_ctx)
{
    size_t n = sizeof(cko_head_t) + (size_t)g->size * sizeof(int32_t);
    int refs = g->refs - unrecorded_refs(c, g, skip_ctx);
    cko_head_t *h;

    if (refs <= 0)
        return; /* held by communicators not carried alone */
    h = wb_room(b, n);
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_GROUP, .len = (uint32_t)PAD8(n),
                      .addr = (uint64_t)(uintptr_t)g, .refs = refs,
                      .n = g->size};
    if (g->size > 0)
        memcpy(h + 1, g->world, (size_t)g->size * sizeof(int32_t));
}

/* A type and, before it, the derived types it is built from.  Types the
 * user freed that others still use are not in the census (their magic
 * is gone?) — they are: MPI_Type_free keeps the magic. */
static void put_dt(wbuf_t *b, census_t *c, MPI_Datatype t, int depth)
{
    long i = live_find(&c->dts, t);
    dt_obj_t *o = (dt_obj_t *)t;

    if (i < 0 || c->dt_done[i] || depth > 64)
        return; /* predefined, emitted, or absurd */
    c->dt_done[i] = 1;
    for (int k = 0; k < t->ntypes; k++)
        put_dt(b, c, t->types[k], depth + 1);
    size_t n = sizeof(cko_head_t) + sizeof(cko_dt_t) +
               PAD8((size_t)t->nints * 4) + (size_t)t->naddrs * 8 +
               (size_t)t->ntypes * 8;
    cko_head_t *h = wb_room(b, n);
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_DT, .len = (uint32_t)PAD8(n),
                      .addr = (uint64_t)(uintptr_t)t, .refs = t->refs,
                      .n = t->combiner};
    cko_dt_t *d = (cko_dt_t *)(h + 1);
    d->nints = t->nints;
    d->naddrs = t->naddrs;
    d->ntypes = t->ntypes;
    d->committed = (t->flags & MPI_DT_COMMITTED) != 0;
    /* Large-count contents (o->big) cannot be made again here: the
     * record says so and a restart refuses it. */
    d->user_freed = o->user_freed | (o->nbig > 0 ? 2 : 0);
    memcpy(d->name, t->name, sizeof(d->name));
    uint8_t *q = (uint8_t *)(d + 1);
    if (t->nints > 0)
        memcpy(q, t->ints, (size_t)t->nints * 4);
    q += PAD8((size_t)t->nints * 4);
    if (t->naddrs > 0)
        memcpy(q, t->addrs, (size_t)t->naddrs * 8);
    q += (size_t)t->naddrs * 8;
    for (int k = 0; k < t->ntypes; k++)
        ((uint64_t *)q)[k] = (uint64_t)(uintptr_t)t->types[k];
}

static size_t topo_ints(const struct mpi_topo *t)
{
    if (t == NULL)
        return 0;
    return 2 * (size_t)t->ndims + (size_t)t->nnodes + (size_t)t->nedges +
           (size_t)t->indegree * (t->weighted ? 2 : 1) +
           (size_t)t->outdegree * (t->weighted ? 2 : 1);
}

static int32_t *put_ints(int32_t *q, const int *v, int n)
{
    if (n > 0 && v != NULL)
        memcpy(q, v, (size_t)n * sizeof(int32_t));
    return q + (n > 0 ? n : 0);
}

static int errh_predef(MPI_Errhandler e)
{
    return e == MPI_ERRORS_ARE_FATAL || e == MPI_ERRORS_RETURN ||
           e == MPI_ERRORS_ABORT;
}

static void put_comm(wbuf_t *b, MPI_Comm c)
{
    const struct mpi_topo *t = c->topo;
    size_t n = sizeof(cko_head_t) + sizeof(cko_comm_t) + topo_ints(t) * 4;
    cko_head_t *h = wb_room(b, n);

    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_COMM, .len = (uint32_t)PAD8(n),
                      .addr = (uint64_t)(uintptr_t)c, .refs = c->refs};
    cko_comm_t *r = (cko_comm_t *)(h + 1);
    r->ctx = c->ctx;
    r->is_inter = (uint32_t)c->is_inter;
    r->epoch = mpi_ctx_epoch(c->ctx);
    r->group = (uint64_t)(uintptr_t)c->group;
    r->remote = (uint64_t)(uintptr_t)c->remote_group;
    r->errh = errh_predef(c->errh) || mpi_obj_in_arena(c->errh)
                  ? (uint64_t)(uintptr_t)c->errh : 0;
    r->next_child = c->next_child;
    r->tol_seq = c->tol_seq;
    memcpy(r->name, c->name, sizeof(r->name));
    if (t == NULL)
        return;
    r->topo_kind = t->kind;
    r->ndims = t->ndims;
    r->nnodes = t->nnodes;
    r->nedges = t->nedges;
    r->indegree = t->indegree;
    r->outdegree = t->outdegree;
    r->weighted = t->weighted;
    int32_t *q = (int32_t *)(r + 1);
    q = put_ints(q, t->dims, t->ndims);
    q = put_ints(q, t->periods, t->ndims);
    q = put_ints(q, t->index, t->nnodes);
    q = put_ints(q, t->edges, t->nedges);
    q = put_ints(q, t->sources, t->indegree);
    if (t->weighted)
        q = put_ints(q, t->sourceweights, t->indegree);
    q = put_ints(q, t->dests, t->outdegree);
    if (t->weighted)
        put_ints(q, t->destweights, t->outdegree);
}

/* A user error handler, less the references of communicators not
 * carried (MPI_COMM_WORLD's and MPI_COMM_SELF's included: a restarted
 * program sets theirs again). */
static void put_errh(wbuf_t *b, const census_t *c, MPI_Errhandler e,
                     uint32_t skip_ctx)
{
    int refs = e->refs - (MPI_COMM_WORLD->errh == e) -
               (MPI_COMM_SELF->errh == e);
    cko_head_t *h;

    for (size_t i = 0; i < c->comms.n; i++) {
        MPI_Comm m = c->comms.v[i];
        refs -= comm_skipped(m, skip_ctx) && m->errh == e;
    }
    if (refs <= 0)
        return;
    h = wb_room(b, sizeof(*h) + sizeof(cko_fns_t));
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_ERRH,
                      .len = (uint32_t)PAD8(sizeof(*h) + sizeof(cko_fns_t)),
                      .addr = (uint64_t)(uintptr_t)e, .refs = refs,
                      .n = e->kind};
    cko_fns_t *f = (cko_fns_t *)(h + 1);
    f->fn[0] = (uint64_t)(uintptr_t)e->fn;
    f->fn[1] = (uint64_t)(uintptr_t)e->file_fn;
    f->fn[2] = (uint64_t)(uintptr_t)e->session_fn;
}

static void put_info(wbuf_t *b, MPI_Info info)
{
    size_t need = sizeof(cko_head_t);

    for (int i = 0; i < info->nkeys; i++)
        need += sizeof(cko_pair_t) + strlen(info->keys[i]) +
                strlen(info->vals[i]);
    cko_head_t *h = wb_room(b, need);
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_INFO, .len = (uint32_t)PAD8(need),
                      .addr = (uint64_t)(uintptr_t)info, .refs = 1,
                      .n = info->nkeys};
    uint8_t *q = (uint8_t *)(h + 1);
    for (int i = 0; i < info->nkeys; i++) {
        cko_pair_t pr = {(uint32_t)strlen(info->keys[i]),
                         (uint32_t)strlen(info->vals[i])};
        memcpy(q, &pr, sizeof(pr));
        q += sizeof(pr);
        memcpy(q, info->keys[i], pr.klen);
        q += pr.klen;
        memcpy(q, info->vals[i], pr.vlen);
        q += pr.vlen;
    }
}

static void put_op(wbuf_t *b, MPI_Op op)
{
    cko_head_t *h = wb_room(b, sizeof(*h) + sizeof(cko_fns_t));

    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_OP,
                      .len = (uint32_t)PAD8(sizeof(*h) + sizeof(cko_fns_t)),
                      .addr = (uint64_t)(uintptr_t)op, .refs = op->refs,
                      .n = op->commute};
    cko_fns_t *f = (cko_fns_t *)(h + 1);
    f->fn[0] = (uint64_t)(uintptr_t)op->fn;
    f->fn[1] = (uint64_t)(uintptr_t)op->fn_c;
}

/* Can a checkpoint carry request r, and how (*rec, *flags)?  Point-to-
 * point, of the program, on a communicator carried, a receive posted
 * and not matched or a persistent request not started (or a receive
 * started and posted), its buffer in a registered region; or a
 * synchronous send out and not acked (its buffer in a region only when
 * persistent: the message itself has gone). */
static int req_carried(MPI_Request r, uint32_t skip_ctx, cko_req_t *rec,
                       int *flags)
{
    MPI_Comm c = r->comm;
    MPI_Datatype t = r->dt;
    int coll = r->kind == MPI_REQ_COLL && mpi_coll_req_is_sched(r) &&
               !r->persistent && mpi_req_is_done(r);

    if ((r->kind != MPI_REQ_RECV && r->kind != MPI_REQ_SEND && !coll) ||
        r->ctx_off != 0 || r->user_freed || r->bsend_block != NULL ||
        c == NULL || !mpi_comm_ok(c) ||
        c->is_inter || comm_skipped(c, skip_ctx) ||
        (c != MPI_COMM_WORLD && c != MPI_COMM_SELF && !mpi_obj_in_arena(c)))
        return 0;
    int posted = r->kind == MPI_REQ_RECV && !mpi_req_is_done(r) &&
                 r->umsg == NULL && !r->inflight && r->bytes == 0 &&
                 (!r->persistent || r->active);
    int idle = r->persistent && !r->active;
    int done = !r->persistent && mpi_req_is_done(r);
    int sync_out = r->kind == MPI_REQ_SEND && r->mode == MPI_P2P_SYNC &&
                   r->inflight && !r->deferred && !mpi_req_is_done(r) &&
                   (!r->persistent || r->active);
    if (!posted && !idle && !done && !sync_out)
        return 0;
    if (t != NULL && !(t->flags & MPI_DT_PREDEF) && !mpi_obj_in_arena(t))
        return 0;
    *rec = (cko_req_t){.comm = (uint64_t)(uintptr_t)c,
                       .dt = (uint64_t)(uintptr_t)t, .count = r->count,
                       .peer = r->peer, .tag = r->tag, .mode = r->mode,
                       .region = -1};
    *flags = (r->persistent ? REQ_PERSISTENT : 0) |
             (posted ? REQ_POSTED : 0) |
             (r->kind == MPI_REQ_SEND ? REQ_SEND : 0) | (done ? REQ_DONE : 0) |
             (sync_out ? REQ_SYNC_OUT : 0) | (coll ? REQ_COLL : 0);
    if (done || (sync_out && !r->persistent)) {
        rec->st_source = r->status.MPI_SOURCE;
        rec->st_tag = r->status.MPI_TAG;
        rec->st_error = r->status.MPI_ERROR;
        rec->st_cancelled = r->status.shoal_cancelled;
        rec->st_count = r->status.shoal_count;
        return 1; /* its buffer is the program's again, or (a synchronous
                     send out) no longer read: the message has gone */
    }
    if (r->count > 0 && t != NULL) {
        /* The bytes the operation touches, in a region. */
        MPI_Aint lo = t->true_lb + (t->extent < 0 ? (r->count - 1) * t->extent
                                                  : 0);
        MPI_Aint n = (r->count - 1) * (t->extent < 0 ? -t->extent : t->extent) +
                     t->true_extent;
        uint32_t idx;
        uint64_t off;
        if (n < 0 ||
            !ckpt_region_of((const uint8_t *)r->buf + lo, (size_t)n, &idx,
                            &off))
            return 0;
        rec->region = (int32_t)idx;
        rec->off = (int64_t)off - lo;
    }
    return 1;
}

long ckpt_objs_posted(uint32_t skip_ctx)
{
    census_t c = {0};
    long n = 0;

    if (!mpi_arena_on())
        return 0;
    mpi_arena_each(count_obj, &c);
    for (size_t i = 0; i < c.reqs.n; i++) {
        cko_req_t rec;
        int flags;
        if (req_carried(c.reqs.v[i], skip_ctx, &rec, &flags) &&
            (flags & REQ_POSTED))
            n++;
    }
    census_free(&c);
    return n;
}

/* A generalized request, as MPI_Grequest_start made it (request.c). */
static void put_greq(wbuf_t *b, MPI_Request r)
{
    cko_greq_t g;
    cko_req_t rec = {.region = -1};

    if (r->user_freed || !mpi_req_greq_fns(r, &g.query, &g.free, &g.cancel,
                                           &g.state))
        return;
    cko_head_t *h = wb_room(b, sizeof(*h) + sizeof(rec) + sizeof(g));
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_REQ,
                      .len = (uint32_t)PAD8(sizeof(*h) + sizeof(rec) +
                                            sizeof(g)),
                      .addr = (uint64_t)(uintptr_t)r, .refs = 1,
                      .n = REQ_GREQ | (mpi_req_is_done(r) ? REQ_DONE : 0)};
    memcpy(h + 1, &rec, sizeof(rec));
    memcpy((uint8_t *)(h + 1) + sizeof(rec), &g, sizeof(g));
}

static void put_req(wbuf_t *b, MPI_Request r, uint32_t skip_ctx)
{
    cko_req_t rec;
    int flags;

    if (r->kind == MPI_REQ_GREQ) {
        put_greq(b, r);
        return;
    }
    if (!req_carried(r, skip_ctx, &rec, &flags))
        return;
    cko_head_t *h = wb_room(b, sizeof(*h) + sizeof(rec));
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_REQ,
                      .len = (uint32_t)PAD8(sizeof(*h) + sizeof(rec)),
                      .addr = (uint64_t)(uintptr_t)r, .refs = 1, .n = flags};
    memcpy(h + 1, &rec, sizeof(rec));
}

static void put_keyvals(wbuf_t *b)
{
    mpi_keyval_rec_t r;

    for (int k = 0; k < mpi_keyval_slots(); k++) {
        if (!mpi_keyval_save(k, &r))
            continue;
        cko_head_t *h = wb_room(b, sizeof(*h) + sizeof(r));
        if (h == NULL)
            return;
        *h = (cko_head_t){.kind = CKO_KEYVAL,
                          .len = (uint32_t)PAD8(sizeof(*h) + sizeof(r)),
                          .addr = (uint64_t)k, .refs = 1};
        memcpy(h + 1, &r, sizeof(r));
    }
}

/* The attributes on obj (of kind MPI_ATTR_*), in their list's order. */
static void put_attrs(wbuf_t *b, const void *obj, int kind,
                      const mpi_attr_t *list)
{
    int n = 0;

    for (const mpi_attr_t *a = list; a != NULL; a = a->next)
        n++;
    if (n == 0)
        return;
    size_t len = sizeof(cko_head_t) + (size_t)n * sizeof(cko_attr_t);
    cko_head_t *h = wb_room(b, len);
    if (h == NULL)
        return;
    *h = (cko_head_t){.kind = CKO_ATTRS, .len = (uint32_t)PAD8(len),
                      .addr = (uint64_t)(uintptr_t)obj, .refs = 1, .n = kind};
    cko_attr_t *v = (cko_attr_t *)(h + 1);
    for (const mpi_attr_t *a = list; a != NULL; a = a->next, v++)
        *v = (cko_attr_t){.keyval = a->keyval,
                          .val = (uint64_t)(uintptr_t)a->val};
}

static int req_cmp(const void *a, const void *b)
{
    uint64_t x = (*(MPI_Request const *)a)->seq;
    uint64_t y = (*(MPI_Request const *)b)->seq;
    return x < y ? -1 : x > y;
}

int ckpt_objs_save(uint32_t skip_ctx, uint8_t **buf_p, size_t *len_p)
{
    census_t c = {0};
    wbuf_t b = {0};
    int rc = MPI_SUCCESS;

    *buf_p = NULL;
    *len_p = 0;
    if (!mpi_arena_on())
        return MPI_SUCCESS;
    mpi_lock();
    mpi_arena_each(count_obj, &c);
    c.dt_done = calloc(c.dts.n + 1, 1);
    if (c.dt_done == NULL)
        c.nomem = 1;
    put_keyvals(&b);
    for (size_t i = 0; i < c.errhs.n && !c.nomem; i++)
        put_errh(&b, &c, c.errhs.v[i], skip_ctx);
    for (size_t i = 0; i < c.ops.n && !c.nomem; i++)
        put_op(&b, c.ops.v[i]);
    for (size_t i = 0; i < c.infos.n && !c.nomem; i++)
        put_info(&b, c.infos.v[i]);
    for (size_t i = 0; i < c.groups.n && !c.nomem; i++)
        put_group(&b, &c, c.groups.v[i], skip_ctx);
    for (size_t i = 0; i < c.dts.n && !c.nomem; i++)
        put_dt(&b, &c, c.dts.v[i], 0);
    for (size_t i = 0; i < c.comms.n && !c.nomem; i++) {
        MPI_Comm m = c.comms.v[i];
        if (!comm_skipped(m, skip_ctx))
            put_comm(&b, m);
    }
    /* The requests, in the order they were posted (a restart posts
     * them again so). */
    if (c.reqs.n > 1)
        qsort(c.reqs.v, c.reqs.n, sizeof(void *), req_cmp);
    for (size_t i = 0; i < c.reqs.n && !c.nomem; i++)
        put_req(&b, c.reqs.v[i], skip_ctx);
    /* The attributes last, on every object carried.  Not those of
     * MPI_COMM_WORLD and MPI_COMM_SELF: libraries set theirs at their
     * start (HDF5 a keyval on MPI_COMM_SELF whose delete callback ends
     * it at MPI_Finalize), and would find the old ones, pointing into
     * memory the restart did not bring back. */
    for (size_t i = 0; i < c.dts.n && !c.nomem; i++)
        if (c.dt_done[i])
            put_attrs(&b, c.dts.v[i], MPI_ATTR_TYPE,
                      ((MPI_Datatype)c.dts.v[i])->attrs);
    for (size_t i = 0; i < c.comms.n && !c.nomem; i++) {
        MPI_Comm m = c.comms.v[i];
        if (!comm_skipped(m, skip_ctx))
            put_attrs(&b, m, MPI_ATTR_COMM, m->attrs);
    }
    mpi_unlock();
    if (c.nomem || b.nomem) {
        free(b.p);
        rc = MPI_ERR_NO_MEM;
    } else {
        *buf_p = b.p;
        *len_p = b.len;
    }
    census_free(&c);
    return rc;
}

/* ---- restoring -------------------------------------------------------------------- */

/* What a restart made, to set the counts at the end or to undo. */
typedef struct made {
    uint32_t kind;
    int32_t refs;
    void *obj;
} made_t;

static struct {
    made_t *v;
    size_t n, cap;
} made;

/* The keyval and attributes records of the image being loaded. */
static struct {
    uint8_t *p;
    size_t len;
} later;

static int made_add(uint32_t kind, int32_t refs, void *obj)
{
    if (made.n == made.cap) {
        size_t cap = made.cap ? 2 * made.cap : 64;
        made_t *v = realloc(made.v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        made.v = v;
        made.cap = cap;
    }
    made.v[made.n++] = (made_t){kind, refs, obj};
    return 0;
}

/* Was obj made by this restart (or is it a predefined datatype)? */
static void *made_obj(uint64_t addr, uint32_t kind)
{
    for (size_t i = made.n; i-- > 0;)
        if ((uint64_t)(uintptr_t)made.v[i].obj == addr &&
            made.v[i].kind == kind)
            return made.v[i].obj;
    return NULL;
}

static MPI_Datatype dt_named(uint64_t addr)
{
    const uint8_t *lo = (const uint8_t *)shoal_mpi_dt_predef;
    const uint8_t *p = (const uint8_t *)(uintptr_t)addr;

    if (p >= lo && p < lo + sizeof(shoal_mpi_dt_predef) &&
        (size_t)(p - lo) % sizeof(shoal_mpi_dt_predef[0]) == 0)
        return (MPI_Datatype)(uintptr_t)addr;
    return made_obj(addr, CKO_DT);
}

/* The record's constructor call, as MPI_Type_get_contents describes it. */
static int dt_make(int comb, const int *I, int ni, const MPI_Aint *A, int na,
                   MPI_Datatype *T, int nt, MPI_Datatype *out)
{
#define NEED(i, a, t) \
    if (ni < (i) || na < (a) || nt < (t)) \
        return MPI_ERR_TRUNCATE
    switch (comb) {
    case MPI_COMBINER_DUP:
        NEED(0, 0, 1);
        return PMPI_Type_dup(T[0], out);
    case MPI_COMBINER_CONTIGUOUS:
        NEED(1, 0, 1);
        return PMPI_Type_contiguous(I[0], T[0], out);
    case MPI_COMBINER_VECTOR:
        NEED(3, 0, 1);
        return PMPI_Type_vector(I[0], I[1], I[2], T[0], out);
    case MPI_COMBINER_HVECTOR:
        NEED(2, 1, 1);
        return PMPI_Type_create_hvector(I[0], I[1], A[0], T[0], out);
    case MPI_COMBINER_INDEXED:
        NEED(1, 0, 1);
        NEED(1 + 2 * I[0], 0, 1);
        return PMPI_Type_indexed(I[0], I + 1, I + 1 + I[0], T[0], out);
    case MPI_COMBINER_HINDEXED:
        NEED(1, 0, 1);
        NEED(1 + I[0], I[0], 1);
        return PMPI_Type_create_hindexed(I[0], I + 1, A, T[0], out);
    case MPI_COMBINER_INDEXED_BLOCK:
        NEED(2, 0, 1);
        NEED(2 + I[0], 0, 1);
        return PMPI_Type_create_indexed_block(I[0], I[1], I + 2, T[0], out);
    case MPI_COMBINER_HINDEXED_BLOCK:
        NEED(2, 0, 1);
        NEED(2, I[0], 1);
        return PMPI_Type_create_hindexed_block(I[0], I[1], A, T[0], out);
    case MPI_COMBINER_STRUCT:
        NEED(1, 0, 0);
        NEED(1 + I[0], I[0], I[0]);
        return PMPI_Type_create_struct(I[0], I + 1, A, T, out);
    case MPI_COMBINER_SUBARRAY:
        NEED(1, 0, 1);
        NEED(2 + 3 * I[0], 0, 1);
        return PMPI_Type_create_subarray(I[0], I + 1, I + 1 + I[0],
                                         I + 1 + 2 * I[0], I[1 + 3 * I[0]],
                                         T[0], out);
    case MPI_COMBINER_DARRAY:
        NEED(3, 0, 1);
        NEED(4 + 4 * I[2], 0, 1);
        return PMPI_Type_create_darray(I[0], I[1], I[2], I + 3, I + 3 + I[2],
                                       I + 3 + 2 * I[2], I + 3 + 3 * I[2],
                                       I[3 + 4 * I[2]], T[0], out);
    case MPI_COMBINER_RESIZED:
        NEED(0, 2, 1);
        return PMPI_Type_create_resized(T[0], A[0], A[1], out);
    default:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
#undef NEED
}

static int load_group(const cko_head_t *h, int32_t refs, char *why,
                      size_t whylen)
{
    const int32_t *w = (const int32_t *)(h + 1);
    MPI_Group g;
    int rc;

    if (h->n < 0 ||
        (size_t)h->n * 4 > h->len - sizeof(*h)) {
        snprintf(why, whylen, "a group's record is malformed");
        return 0;
    }
    for (int i = 0; i < h->n; i++)
        if (w[i] < 0 || w[i] >= mpi.world_size) {
            snprintf(why, whylen, "a group names world rank %d", w[i]);
            return 0;
        }
    rc = mpi_arena_place((void *)(uintptr_t)h->addr);
    if (rc == MPI_SUCCESS)
        rc = mpi_group_new(h->n, w, &g);
    mpi_arena_unplace();
    if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)g != h->addr) {
        snprintf(why, whylen, "cannot put a group back at %#" PRIx64,
                 h->addr);
        return 0;
    }
    return made_add(CKO_GROUP, refs, g) == 0;
}

static int load_dt(const cko_head_t *h, int32_t refs, char *why,
                   size_t whylen)
{
    const cko_dt_t *d = (const cko_dt_t *)(h + 1);
    MPI_Datatype T[64], *types = T, t = MPI_DATATYPE_NULL;
    int rc;

    if (h->len < sizeof(*h) + sizeof(*d) || d->nints < 0 || d->naddrs < 0 ||
        d->ntypes < 0 ||
        sizeof(*h) + sizeof(*d) + PAD8((size_t)d->nints * 4) +
                (size_t)d->naddrs * 8 + (size_t)d->ntypes * 8 >
            h->len) {
        snprintf(why, whylen, "a datatype's record is malformed");
        return 0;
    }
    if (d->user_freed & 2) {
        snprintf(why, whylen, "datatype %#" PRIx64 " was made by a "
                 "large-count constructor (MPI_Type_*_c), which a restart "
                 "cannot make again yet", h->addr);
        return 0;
    }
    const int *ints = (const int *)(d + 1);
    const MPI_Aint *addrs =
        (const MPI_Aint *)((const uint8_t *)ints + PAD8((size_t)d->nints * 4));
    const uint64_t *tv = (const uint64_t *)(addrs + d->naddrs);
    if (d->ntypes > 64 &&
        (types = malloc((size_t)d->ntypes * sizeof(*types))) == NULL) {
        snprintf(why, whylen, "out of memory");
        return 0;
    }
    rc = MPI_SUCCESS;
    for (int k = 0; k < d->ntypes && rc == MPI_SUCCESS; k++)
        if ((types[k] = dt_named(tv[k])) == NULL)
            rc = MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS)
        rc = mpi_arena_place((void *)(uintptr_t)h->addr);
    if (rc == MPI_SUCCESS)
        rc = dt_make(h->n, ints, d->nints, addrs, d->naddrs, types,
                     d->ntypes, &t);
    mpi_arena_unplace();
    if (types != T)
        free(types);
    if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)t != h->addr) {
        snprintf(why, whylen, "cannot make datatype %#" PRIx64 " again "
                 "(combiner %d): %s", h->addr, h->n,
                 rc == MPI_ERR_UNSUPPORTED_OPERATION
                     ? "a restart does not make that kind of type"
                     : "its record does not build");
        if (rc == MPI_SUCCESS)
            PMPI_Type_free(&t);
        return 0;
    }
    if (made_add(CKO_DT, refs, t) != 0)
        return 0;
    if (d->committed && PMPI_Type_commit(&t) != MPI_SUCCESS) {
        snprintf(why, whylen, "cannot commit datatype %#" PRIx64, h->addr);
        return 0;
    }
    memcpy(t->name, d->name, sizeof(t->name));
    t->name[sizeof(t->name) - 1] = '\0';
    ((dt_obj_t *)t)->user_freed = d->user_freed & 1;
    return 1;
}

static int topo_make(const cko_comm_t *r, const uint8_t *end,
                     struct mpi_topo **t_p)
{
    struct mpi_topo t = {0};
    int *q = (int *)(uintptr_t)(r + 1);

    *t_p = NULL;
    if (r->topo_kind == 0)
        return MPI_SUCCESS;
    if (r->ndims < 0 || r->nnodes < 0 || r->nedges < 0 || r->indegree < 0 ||
        r->outdegree < 0)
        return MPI_ERR_TOPOLOGY;
    t.kind = r->topo_kind;
    t.ndims = r->ndims;
    t.nnodes = r->nnodes;
    t.nedges = r->nedges;
    t.indegree = r->indegree;
    t.outdegree = r->outdegree;
    t.weighted = r->weighted;
    if ((const uint8_t *)(q + topo_ints(&t)) > end)
        return MPI_ERR_TOPOLOGY;
    t.dims = q;
    q += t.ndims;
    t.periods = q;
    q += t.ndims;
    t.index = q;
    q += t.nnodes;
    t.edges = q;
    q += t.nedges;
    t.sources = q;
    q += t.indegree;
    if (t.weighted) {
        t.sourceweights = q;
        q += t.indegree;
    }
    t.dests = q;
    q += t.outdegree;
    if (t.weighted)
        t.destweights = q;
    return mpi_topo_dup(&t, t_p);
}

/* The communicator a request record names, as it is here: NULL when it
 * did not come back. */
static MPI_Comm req_comm(const cko_req_t *q)
{
    if (q->comm == (uint64_t)(uintptr_t)MPI_COMM_WORLD)
        return MPI_COMM_WORLD;
    if (q->comm == (uint64_t)(uintptr_t)MPI_COMM_SELF)
        return MPI_COMM_SELF;
    return made_obj(q->comm, CKO_COMM);
}

/* A request comes back at commit (ckpt_objs_commit), once the candidate
 * is chosen: here only whether it can. */
static int check_req(const cko_head_t *h, char *why, size_t whylen)
{
    cko_req_t q;

    if (h->len < sizeof(*h) + sizeof(q)) {
        snprintf(why, whylen, "a request's record is malformed");
        return 0;
    }
    memcpy(&q, h + 1, sizeof(q));
    if (h->n & REQ_GREQ) {
        if (h->len < sizeof(*h) + sizeof(q) + sizeof(cko_greq_t)) {
            snprintf(why, whylen, "a generalized request's record is "
                     "malformed");
            return 0;
        }
        return 1;
    }
    MPI_Comm c = req_comm(&q);
    if (c == NULL || (q.dt != 0 && dt_named(q.dt) == NULL) || q.count < 0 ||
        (q.count > 0 && q.region < 0 && !(h->n & REQ_DONE) &&
         (h->n & (REQ_SYNC_OUT | REQ_PERSISTENT)) != REQ_SYNC_OUT)) {
        snprintf(why, whylen, "request %#" PRIx64 " (a %s posted at the "
                 "checkpoint) names a communicator or a datatype that did "
                 "not come back", h->addr,
                 (h->n & REQ_SEND) ? "send" : "receive");
        return 0;
    }
    if (q.region >= 0 && ckpt_region_at((uint32_t)q.region, 0, 0) == NULL) {
        snprintf(why, whylen, "request %#" PRIx64 "'s buffer is in region "
                 "%d, which is not registered", h->addr, q.region);
        return 0;
    }
    return 1;
}

/* The synchronous sends that came back waiting for their acks, by
 * address (ckpt_objs_sync_claim). */
static struct {
    uint64_t *v;
    size_t n, cap;
} sync_back;

static void sync_back_add(MPI_Request r)
{
    if (sync_back.n == sync_back.cap) {
        size_t cap = sync_back.cap ? 2 * sync_back.cap : 16;
        uint64_t *v = realloc(sync_back.v, cap * sizeof(*v));
        if (v == NULL) {
            /* It then completes only if the receiver dies (or a revoke):
             * say so rather than hang silently. */
            base_error("ckpt", "rank %d: no memory to keep a synchronous "
                       "send that came back; it will not complete",
                       mpi.world_rank);
            return;
        }
        sync_back.v = v;
        sync_back.cap = cap;
    }
    sync_back.v[sync_back.n++] = (uint64_t)(uintptr_t)r;
}

MPI_Request ckpt_objs_sync_claim(uint64_t addr, int src_world)
{
    for (size_t i = 0; i < sync_back.n; i++) {
        if (sync_back.v[i] != addr)
            continue;
        sync_back.v[i] = sync_back.v[--sync_back.n];
        MPI_Request r = (MPI_Request)(uintptr_t)addr;
        /* Still the send that came back (not freed and made again). */
        if (r->magic != MPI_MAGIC_REQ || r->kind != MPI_REQ_SEND ||
            r->mode != MPI_P2P_SYNC || !r->inflight || mpi_req_is_done(r) ||
            r->comm == NULL || r->peer < 0 ||
            r->comm->peer_world[r->peer] != src_world)
            return NULL;
        return r;
    }
    return NULL;
}

/* A synchronous send out at the cut, again: not sent again (its message
 * is at the receiver, which acks it), waiting. */
static int sync_out_again(const cko_head_t *h, const cko_req_t *q,
                          MPI_Comm c, MPI_Datatype t, void *buf,
                          MPI_Request *r)
{
    int rc = MPI_SUCCESS;

    mpi_req_placing = 1;
    if (h->n & REQ_PERSISTENT) {
        rc = PMPI_Ssend_init_c(buf, q->count, t, q->peer, q->tag, c, r);
        if (rc == MPI_SUCCESS)
            (*r)->active = 1;
    } else if ((*r = mpi_req_alloc(MPI_REQ_SEND, c)) != NULL) {
        (*r)->dt = q->dt != 0 ? t : NULL;
        if ((*r)->dt != NULL)
            mpi_dt_retain((*r)->dt);
        (*r)->count = q->count;
        (*r)->peer = q->peer;
        (*r)->tag = q->tag;
        (*r)->mode = MPI_P2P_SYNC;
        (*r)->status.MPI_SOURCE = q->st_source;
        (*r)->status.MPI_TAG = q->st_tag;
        (*r)->status.MPI_ERROR = q->st_error;
        (*r)->status.shoal_count = q->st_count;
    } else {
        rc = MPI_ERR_NO_MEM;
    }
    mpi_req_placing = 0;
    if (rc == MPI_SUCCESS) {
        (*r)->inflight = 1;
        sync_back_add(*r);
    }
    return rc;
}

/* Post the requests of the image chosen again, at their addresses, in
 * their order. */
static void put_back_reqs(void)
{
    size_t n = 0;

    for (size_t off = 0; off < later.len;) {
        const cko_head_t *h = (const cko_head_t *)(later.p + off);
        off += h->len;
        if (h->kind != CKO_REQ)
            continue;
        cko_req_t q;
        memcpy(&q, h + 1, sizeof(q));
        MPI_Comm c = req_comm(&q);
        MPI_Datatype t = q.dt != 0 ? dt_named(q.dt) : MPI_BYTE;
        void *buf = q.region >= 0
                        ? (uint8_t *)ckpt_region_at((uint32_t)q.region, 0, 0) +
                              q.off
                        : NULL;
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = mpi_arena_place((void *)(uintptr_t)h->addr);
        if (rc == MPI_SUCCESS && (h->n & REQ_GREQ)) {
            cko_greq_t g;
            memcpy(&g, (const uint8_t *)(h + 1) + sizeof(q), sizeof(g));
            mpi_req_placing = 1;
            rc = PMPI_Grequest_start(
                (MPI_Grequest_query_function *)(uintptr_t)g.query,
                (MPI_Grequest_free_function *)(uintptr_t)g.free,
                (MPI_Grequest_cancel_function *)(uintptr_t)g.cancel,
                (void *)(uintptr_t)g.state, &r);
            mpi_req_placing = 0;
            if (rc == MPI_SUCCESS && (h->n & REQ_DONE))
                mpi_req_complete(r);
        } else if (rc == MPI_SUCCESS && (h->n & REQ_SYNC_OUT)) {
            rc = sync_out_again(h, &q, c, t, buf, &r);
        } else if (rc == MPI_SUCCESS && (h->n & REQ_DONE)) {
            MPI_Status st = {.MPI_SOURCE = q.st_source, .MPI_TAG = q.st_tag,
                             .MPI_ERROR = q.st_error,
                             .shoal_cancelled = q.st_cancelled,
                             .shoal_count = q.st_count};
            mpi_req_placing = 1;
            r = mpi_req_done_again((h->n & REQ_COLL)   ? MPI_REQ_COLL
                                   : (h->n & REQ_SEND) ? MPI_REQ_SEND
                                                       : MPI_REQ_RECV,
                                   c, q.dt != 0 ? t : NULL, &st);
            mpi_req_placing = 0;
            if (r == NULL)
                rc = MPI_ERR_NO_MEM;
        } else if (rc == MPI_SUCCESS) {
            mpi_req_placing = 1;
            if (!(h->n & REQ_PERSISTENT))
                rc = PMPI_Irecv_c(buf, q.count, t, q.peer, q.tag, c, &r);
            else if (!(h->n & REQ_SEND))
                rc = PMPI_Recv_init_c(buf, q.count, t, q.peer, q.tag, c, &r);
            else if (q.mode == MPI_P2P_SYNC)
                rc = PMPI_Ssend_init_c(buf, q.count, t, q.peer, q.tag, c, &r);
            else if (q.mode == MPI_P2P_BUFFERED)
                rc = PMPI_Bsend_init_c(buf, q.count, t, q.peer, q.tag, c, &r);
            else if (q.mode == MPI_P2P_READY)
                rc = PMPI_Rsend_init_c(buf, q.count, t, q.peer, q.tag, c, &r);
            else
                rc = PMPI_Send_init_c(buf, q.count, t, q.peer, q.tag, c, &r);
            mpi_req_placing = 0;
        }
        mpi_arena_unplace();
        if (rc == MPI_SUCCESS && (h->n & REQ_PERSISTENT) &&
            (h->n & REQ_POSTED))
            rc = PMPI_Start(&r);
        if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)r != h->addr)
            base_error("ckpt", "rank %d: request %#" PRIx64 " could not be "
                       "posted again (%d): its handle names nothing",
                       mpi.world_rank, h->addr, rc);
        else
            n++;
    }
    if (n > 0)
        base_debug("ckpt", "rank %d: %zu requests are back", mpi.world_rank,
                   n);
}

static int load_errh(const cko_head_t *h, int32_t refs, char *why,
                     size_t whylen)
{
    cko_fns_t f;
    MPI_Errhandler e = NULL;

    if (h->len < sizeof(*h) + sizeof(f) || h->n < 4 || h->n > 6) {
        snprintf(why, whylen, "an error handler's record is malformed");
        return 0;
    }
    memcpy(&f, h + 1, sizeof(f));
    if (mpi_arena_place((void *)(uintptr_t)h->addr) == MPI_SUCCESS)
        e = mpi_errh_new(h->n);
    mpi_arena_unplace();
    if (e == NULL || (uint64_t)(uintptr_t)e != h->addr) {
        if (e != NULL)
            mpi_errh_release(e);
        snprintf(why, whylen, "cannot put error handler %#" PRIx64 " back",
                 h->addr);
        return 0;
    }
    e->fn = (MPI_Comm_errhandler_function *)(uintptr_t)f.fn[0];
    e->file_fn = (MPI_File_errhandler_function *)(uintptr_t)f.fn[1];
    e->session_fn = (MPI_Session_errhandler_function *)(uintptr_t)f.fn[2];
    return made_add(CKO_ERRH, refs, e) == 0;
}

static int load_op(const cko_head_t *h, int32_t refs, char *why,
                   size_t whylen)
{
    cko_fns_t f;
    MPI_Op op = MPI_OP_NULL;
    int rc;

    if (h->len < sizeof(*h) + sizeof(f)) {
        snprintf(why, whylen, "an operation's record is malformed");
        return 0;
    }
    memcpy(&f, h + 1, sizeof(f));
    rc = mpi_arena_place((void *)(uintptr_t)h->addr);
    if (rc == MPI_SUCCESS && f.fn[0] != 0)
        rc = PMPI_Op_create((MPI_User_function *)(uintptr_t)f.fn[0], h->n,
                            &op);
    else if (rc == MPI_SUCCESS)
        rc = PMPI_Op_create_c((MPI_User_function_c *)(uintptr_t)f.fn[1],
                              h->n, &op);
    mpi_arena_unplace();
    if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)op != h->addr) {
        if (rc == MPI_SUCCESS)
            mpi_op_release(op);
        snprintf(why, whylen, "cannot put operation %#" PRIx64 " back",
                 h->addr);
        return 0;
    }
    op->fn_c = (MPI_User_function_c *)(uintptr_t)f.fn[1];
    return made_add(CKO_OP, refs, op) == 0;
}

static int load_info(const cko_head_t *h, char *why, size_t whylen)
{
    const uint8_t *q = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->len;
    char key[MPI_MAX_INFO_KEY + 1], *val = NULL;
    MPI_Info info = MPI_INFO_NULL;
    int rc = mpi_arena_place((void *)(uintptr_t)h->addr);

    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_create(&info);
    mpi_arena_unplace();
    if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)info != h->addr) {
        if (rc == MPI_SUCCESS)
            PMPI_Info_free(&info);
        snprintf(why, whylen, "cannot put info object %#" PRIx64 " back",
                 h->addr);
        return 0;
    }
    for (int i = 0; i < h->n && rc == MPI_SUCCESS; i++) {
        cko_pair_t pr;
        if ((size_t)(end - q) < sizeof(pr)) {
            rc = MPI_ERR_INTERN;
            break;
        }
        memcpy(&pr, q, sizeof(pr));
        q += sizeof(pr);
        if (pr.klen == 0 || pr.klen > MPI_MAX_INFO_KEY ||
            pr.vlen > MPI_MAX_INFO_VAL ||
            (size_t)(end - q) < (size_t)pr.klen + pr.vlen) {
            rc = MPI_ERR_INTERN;
            break;
        }
        char *v = realloc(val, (size_t)pr.vlen + 1);
        if (v == NULL) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        val = v;
        memcpy(key, q, pr.klen);
        key[pr.klen] = '\0';
        memcpy(val, q + pr.klen, pr.vlen);
        val[pr.vlen] = '\0';
        q += pr.klen + pr.vlen;
        rc = PMPI_Info_set(info, key, val);
    }
    free(val);
    if (rc != MPI_SUCCESS || h->n < 0) {
        PMPI_Info_free(&info);
        snprintf(why, whylen, "info object %#" PRIx64 "'s record is "
                 "malformed", h->addr);
        return 0;
    }
    return made_add(CKO_INFO, 1, info) == 0;
}

static int load_comm(const cko_head_t *h, int32_t refs, char *why,
                     size_t whylen)
{
    const cko_comm_t *r = (const cko_comm_t *)(h + 1);
    MPI_Group g, rg;
    MPI_Comm c;
    struct mpi_topo *topo = NULL;
    int rc;

    if (h->len < sizeof(*h) + sizeof(*r) || r->ctx % 2 != 0 ||
        r->ctx / 2 >= MPI_CTX_SLOTS || r->ctx < 4) {
        snprintf(why, whylen, "a communicator's record is malformed");
        return 0;
    }
    g = made_obj(r->group, CKO_GROUP);
    rg = made_obj(r->remote, CKO_GROUP);
    if (g == NULL || rg == NULL || (!r->is_inter && g != rg) ||
        (r->is_inter && g == rg) || g->rank == MPI_UNDEFINED) {
        snprintf(why, whylen, "communicator %#" PRIx64 " (context id %u) "
                 "names groups the image does not hold", h->addr, r->ctx);
        return 0;
    }
    /* Made again by the program already (before MPIX_Checkpoint_restarted,
     * in the older way): its own stays. */
    if (mpi_ctx_claim(r->ctx, r->epoch) != MPI_SUCCESS)
        return 1;
    rc = topo_make(r, (const uint8_t *)h + h->len, &topo);
    if (rc == MPI_SUCCESS)
        rc = mpi_arena_place((void *)(uintptr_t)h->addr);
    if (rc == MPI_SUCCESS)
        rc = mpi_comm_build(NULL, g, r->is_inter ? rg : NULL, r->ctx, &c);
    mpi_arena_unplace();
    if (rc != MPI_SUCCESS || (uint64_t)(uintptr_t)c != h->addr) {
        if (rc == MPI_SUCCESS)
            mpi_comm_release(c);
        else
            mpi_ctx_free(r->ctx);
        mpi_topo_free(topo);
        snprintf(why, whylen, "cannot put communicator %#" PRIx64 " (context "
                 "id %u) back", h->addr, r->ctx);
        return 0;
    }
    c->topo = topo;
    if (r->errh != 0) {
        MPI_Errhandler e = (MPI_Errhandler)(uintptr_t)r->errh;
        if (errh_predef(e)) {
            c->errh = e; /* predefined ones are not counted */
        } else if ((e = made_obj(r->errh, CKO_ERRH)) != NULL) {
            mpi_errh_retain(e); /* the communicator's (undo drops it) */
            c->errh = e;
        }
    }
    c->next_child = r->next_child;
    c->tol_seq = r->tol_seq;
    memcpy(c->name, r->name, sizeof(c->name));
    c->name[sizeof(c->name) - 1] = '\0';
    return made_add(CKO_COMM, refs, c) == 0;
}

/*
 * Which objects come back: those whose handle the program keeps in a
 * registered region, and those these hold (a communicator's groups, the
 * types a type is built from).  An object whose handle is only in memory
 * the restart does not bring back is gone with it: so a program that
 * makes its communicators again, in the older way, gets its own, and a
 * message in flight on one it makes only later is refused as before
 * (ckpt.c, chan_check).  read_image shows every region's bytes to
 * ckpt_objs_scan as they come; a word that is the address of an arena
 * cell marks it.
 */
static uint64_t held[MPI_ARENA_CELLS / 64];

void ckpt_objs_scan_reset(void)
{
    memset(held, 0, sizeof(held));
}

/* The arena spans 1 GiB from a multiple of 1 GiB: a word is in it when
 * its bits from 30 up are the arena's. */
_Static_assert((uint64_t)MPI_ARENA_CELLS * MPI_ARENA_CELL == 1ull << 30,
               "the scan's filter assumes a 1 GiB arena");
#define SCAN_BLOCK 4096

static void scan_words(const uint8_t *b, size_t n, uint64_t top)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w, d;
        memcpy(&w, b + i, 8);
        d = w - (top << 30);
        if (BASE_UNLIKELY(w >> 30 == top) && d % MPI_ARENA_CELL == 0)
            held[d / MPI_ARENA_CELL / 64] |= 1ull << (d / MPI_ARENA_CELL % 64);
    }
}

/* Does a block hold a word in the arena?  Branch-free, so that it runs as
 * vector code (AVX2 where the CPU has it: some 60 GB/s from cache here,
 * against 13 for the word-by-word loop), and a restart reads its images
 * at the file system's speed.  The AVX2 copy is picked at the first call
 * (not by an ifunc: ThreadSanitizer crashes in a resolver that runs
 * before it is up). */
#if defined(__GNUC__) && !defined(__clang__)
#define SCAN_OPT __attribute__((optimize("O3")))
#else
#define SCAN_OPT
#endif

static inline __attribute__((always_inline)) uint64_t
hits_in(const uint8_t *b, uint64_t top)
{
    uint64_t any = 0;

    for (size_t i = 0; i < SCAN_BLOCK; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        any |= (uint64_t)(w >> 30 == top);
    }
    return any;
}

SCAN_OPT static uint64_t hits_plain(const uint8_t *b, uint64_t top)
{
    return hits_in(b, top);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) SCAN_OPT static uint64_t
hits_avx2(const uint8_t *b, uint64_t top)
{
    return hits_in(b, top);
}
#endif

static uint64_t block_hits(const uint8_t *b, uint64_t top)
{
#if defined(__x86_64__)
    static int avx2 = -1;

    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") != 0;
    if (avx2)
        return hits_avx2(b, top);
#endif
    return hits_plain(b, top);
}

void ckpt_objs_scan(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t top = mpi_arena_lo() >> 30;
    size_t i = 0;

    for (; i + SCAN_BLOCK <= n; i += SCAN_BLOCK)
        if (BASE_UNLIKELY(block_hits(b + i, top) != 0))
            scan_words(b + i, SCAN_BLOCK, top);
    scan_words(b + i, n - i, top);
}

static uint64_t cell_of(uint64_t addr)
{
    return (addr - mpi_arena_lo()) / MPI_ARENA_CELL;
}

static int is_held(uint64_t addr)
{
    uint64_t c = cell_of(addr);
    return c < MPI_ARENA_CELLS && ((held[c / 64] >> (c % 64)) & 1);
}

int ckpt_objs_held(const void *obj)
{
    return is_held((uint64_t)(uintptr_t)obj);
}

static void hold(uint64_t addr)
{
    uint64_t c = cell_of(addr);
    if (c < MPI_ARENA_CELLS)
        held[c / 64] |= 1ull << (c % 64);
}

/* The types a datatype record is built from, or NULL (malformed). */
static const uint64_t *dt_types(const cko_head_t *h)
{
    const cko_dt_t *d = (const cko_dt_t *)(h + 1);

    if (h->len < sizeof(*h) + sizeof(*d) || d->nints < 0 || d->naddrs < 0 ||
        d->ntypes < 0 ||
        sizeof(*h) + sizeof(*d) + PAD8((size_t)d->nints * 4) +
                (size_t)d->naddrs * 8 + (size_t)d->ntypes * 8 >
            h->len)
        return NULL;
    return (const uint64_t *)((const uint8_t *)(d + 1) +
                              PAD8((size_t)d->nints * 4) +
                              (size_t)d->naddrs * 8);
}

/* The held records by address, with the references they will have. */
typedef struct held_rec {
    uint64_t addr;
    int32_t refs;
} held_rec_t;

static int held_cmp(const void *a, const void *b)
{
    uint64_t x = ((const held_rec_t *)a)->addr, y = ((const held_rec_t *)b)->addr;
    return x < y ? -1 : x > y;
}

/* One reference to addr that does not come back (its holder does not). */
static void drop_ref(held_rec_t *v, size_t n, uint64_t addr)
{
    held_rec_t key = {addr, 0};
    held_rec_t *r = bsearch(&key, v, n, sizeof(*v), held_cmp);

    if (r != NULL)
        r->refs--;
}

static int32_t refs_of(const held_rec_t *v, size_t n, uint64_t addr)
{
    held_rec_t key = {addr, 0};
    const held_rec_t *r = bsearch(&key, v, n, sizeof(*v), held_cmp);

    return r != NULL ? r->refs : 1;
}

/* What a held record holds. */
static void hold_refs(const cko_head_t *h)
{
    if (h->kind == CKO_COMM && h->len >= sizeof(*h) + sizeof(cko_comm_t)) {
        const cko_comm_t *r = (const cko_comm_t *)(h + 1);
        hold(r->group);
        hold(r->remote);
        hold(r->errh); /* a predefined one is not a cell: nothing */
    } else if (h->kind == CKO_DT) {
        const cko_dt_t *d = (const cko_dt_t *)(h + 1);
        const uint64_t *tv = dt_types(h); /* NULL: load_dt says why */
        for (int k = 0; tv != NULL && k < d->ntypes; k++)
            hold(tv[k]);
    } else if (h->kind == CKO_REQ &&
               h->len >= sizeof(*h) + sizeof(cko_req_t)) {
        const cko_req_t *q = (const cko_req_t *)(h + 1);
        hold(q->comm); /* MPI_COMM_WORLD's is not a cell: nothing */
        hold(q->dt);
    }
}

int ckpt_objs_load(const uint8_t *p, uint64_t len, const char *moved,
                   char *why, size_t whylen)
{
    uint64_t off = 0, *offs = NULL;
    size_t n = 0, cap = 0;
    int ok = 1;

    made.n = 0;
    free(later.p);
    later.p = NULL;
    later.len = 0;
    /* The records' places, checked; then, newest first, what the held
     * ones hold (everything a record names comes before it). */
    while (off < len) {
        cko_head_t h;
        if (len - off < sizeof(h))
            break;
        memcpy(&h, p + off, sizeof(h));
        if (h.len < sizeof(h) || h.len % 8 != 0 || h.len > len - off ||
            h.refs <= 0 ||
            (is_obj(h.kind) &&
             (cell_of(h.addr) >= MPI_ARENA_CELLS || h.addr % 8 != 0)) ||
            (h.kind == CKO_KEYVAL &&
             h.len < sizeof(h) + sizeof(mpi_keyval_rec_t)) ||
            (h.kind == CKO_ATTRS &&
             ((h.n != MPI_ATTR_COMM && h.n != MPI_ATTR_TYPE) ||
              (h.len - sizeof(h)) % sizeof(cko_attr_t) != 0)) ||
            (!is_obj(h.kind) && h.kind != CKO_KEYVAL && h.kind != CKO_ATTRS)) {
            snprintf(why, whylen, "an object's record at byte %" PRIu64
                     " is malformed", off);
            ok = 0;
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *o = realloc(offs, cap * sizeof(*o));
            if (o == NULL) {
                snprintf(why, whylen, "out of memory");
                ok = 0;
                break;
            }
            offs = o;
        }
        offs[n++] = off;
        off += h.len;
    }
    if (ok && off != len) {
        snprintf(why, whylen, "the objects' records end %" PRIu64 " bytes "
                 "short", len - off);
        ok = 0;
    }
    for (size_t i = n; ok && i-- > 0;) {
        const cko_head_t *hp = (const cko_head_t *)(p + offs[i]);
        if (is_obj(hp->kind) && is_held(hp->addr))
            hold_refs(hp);
    }
    /* Each comes back with the references it had, but those of holders
     * that do not come back (a communicator whose handle is gone still
     * held its group). */
    held_rec_t *hv = ok ? calloc(n + 1, sizeof(*hv)) : NULL;
    size_t nh = 0;
    if (ok && hv == NULL) {
        snprintf(why, whylen, "out of memory");
        ok = 0;
    }
    for (size_t i = 0; ok && i < n; i++) {
        const cko_head_t *hp = (const cko_head_t *)(p + offs[i]);
        if (is_obj(hp->kind) && is_held(hp->addr))
            hv[nh++] = (held_rec_t){hp->addr, hp->refs};
    }
    if (ok)
        qsort(hv, nh, sizeof(*hv), held_cmp);
    for (size_t i = 0; ok && i < n; i++) {
        const cko_head_t *hp = (const cko_head_t *)(p + offs[i]);
        if (!is_obj(hp->kind) || is_held(hp->addr))
            continue;
        if (hp->kind == CKO_COMM &&
            hp->len >= sizeof(*hp) + sizeof(cko_comm_t)) {
            const cko_comm_t *r = (const cko_comm_t *)(hp + 1);
            drop_ref(hv, nh, r->group);
            if (r->remote != r->group)
                drop_ref(hv, nh, r->remote);
            drop_ref(hv, nh, r->errh);
        } else if (hp->kind == CKO_DT) {
            const uint64_t *tv = dt_types(hp);
            const cko_dt_t *d = (const cko_dt_t *)(hp + 1);
            for (int k = 0; tv != NULL && k < d->ntypes; k++)
                drop_ref(hv, nh, tv[k]);
        } else if (hp->kind == CKO_REQ &&
                   hp->len >= sizeof(*hp) + sizeof(cko_req_t)) {
            const cko_req_t *q = (const cko_req_t *)(hp + 1);
            drop_ref(hv, nh, q->comm);
            drop_ref(hv, nh, q->dt);
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        /* Records are 8-byte aligned: the caller copied them so. */
        const cko_head_t *hp = (const cko_head_t *)(p + offs[i]);
        if (!is_obj(hp->kind) || !is_held(hp->addr))
            continue;
        int32_t refs = refs_of(hv, nh, hp->addr);
        if (refs <= 0) {
            snprintf(why, whylen, "object %#" PRIx64 " would come back with "
                     "%d references", hp->addr, refs);
            ok = 0;
            break;
        }
        if (moved != NULL || !mpi_arena_on()) {
            snprintf(why, whylen, "the registered regions hold handles of "
                     "communicators, groups or datatypes, which would name "
                     "nothing here: %s (restart the same program and "
                     "libraries, with SHOAL_CKPT_NORANDOM=1)",
                     moved != NULL ? moved
                                   : "this process has no arena to put them "
                                     "back in (SHOAL_CKPT_NORANDOM=0, or "
                                     "the arena could not be mapped)");
            ok = 0;
            break;
        }
        switch (hp->kind) {
        case CKO_GROUP:
            ok = load_group(hp, refs, why, whylen);
            break;
        case CKO_DT:
            ok = load_dt(hp, refs, why, whylen);
            break;
        case CKO_COMM:
            ok = load_comm(hp, refs, why, whylen);
            break;
        case CKO_ERRH:
            ok = load_errh(hp, refs, why, whylen);
            break;
        case CKO_OP:
            ok = load_op(hp, refs, why, whylen);
            break;
        case CKO_REQ:
            ok = check_req(hp, why, whylen);
            break;
        case CKO_INFO:
            ok = load_info(hp, why, whylen);
            break;
        default:
            snprintf(why, whylen, "an object's record has kind %u",
                     hp->kind);
            ok = 0;
        }
    }
    /* Keyvals and attributes go in when the restart goes on
     * (ckpt_objs_commit): kept till then. */
    for (size_t i = 0; ok && i < n; i++) {
        const cko_head_t *hp = (const cko_head_t *)(p + offs[i]);
        if (is_obj(hp->kind) &&
            (hp->kind != CKO_REQ || !is_held(hp->addr)))
            continue;
        uint8_t *s = realloc(later.p, later.len + hp->len);
        if (s == NULL) {
            snprintf(why, whylen, "out of memory");
            ok = 0;
            break;
        }
        memcpy(s + later.len, hp, hp->len);
        later.p = s;
        later.len += hp->len;
    }
    free(offs);
    free(hv);
    if (!ok)
        ckpt_objs_undo();
    return ok;
}

/* The keyvals, then the attributes, of the image chosen. */
static void put_back_attrs(void)
{
    size_t nk = 0, na = 0, lost = 0;

    for (size_t off = 0; off < later.len;) {
        const cko_head_t *h = (const cko_head_t *)(later.p + off);
        if (h->kind == CKO_KEYVAL) {
            mpi_keyval_rec_t r;
            memcpy(&r, h + 1, sizeof(r));
            nk += mpi_keyval_restore((int)h->addr, &r) == MPI_SUCCESS;
        }
        off += h->len;
    }
    for (size_t off = 0; off < later.len;) {
        const cko_head_t *h = (const cko_head_t *)(later.p + off);
        off += h->len;
        if (h->kind != CKO_ATTRS)
            continue;
        mpi_attr_t **list = NULL;
        void *obj;
        if (h->n == MPI_ATTR_COMM &&
                 (obj = made_obj(h->addr, CKO_COMM)) != NULL)
            list = &((MPI_Comm)obj)->attrs;
        else if (h->n == MPI_ATTR_TYPE &&
                 (obj = made_obj(h->addr, CKO_DT)) != NULL)
            list = &((MPI_Datatype)obj)->attrs;
        if (list == NULL)
            continue; /* on an object that does not come back */
        const cko_attr_t *v = (const cko_attr_t *)(h + 1);
        size_t count = (h->len - sizeof(*h)) / sizeof(*v);
        for (size_t i = 0; i < count; i++) {
            if (mpi_attr_restore(list, h->n, v[i].keyval,
                                 (void *)(uintptr_t)v[i].val) == MPI_SUCCESS)
                na++;
            else
                lost++;
        }
    }
    mpi_keyval_restore_done();
    if (nk + na + lost > 0)
        base_debug("ckpt", "rank %d: %zu keyvals and %zu attributes are back "
                   "(%zu not: their keyval is the program's own)",
                   mpi.world_rank, nk, na, lost);
    free(later.p);
    later.p = NULL;
    later.len = 0;
}

/* Every object made again holds the references it had at the cut: the
 * program's handles and the library's (a communicator's on its groups, a
 * type's on those it was built from).  Those of the program's handles
 * it no longer holds in its regions leak, as they would have. */
static void put_back_attrs(void);

void ckpt_objs_commit(void)
{
    /* The requests first: posting takes references, which the counts
     * set below (as recorded, the requests' included) replace. */
    put_back_reqs();
    for (size_t i = 0; i < made.n; i++) {
        made_t *m = &made.v[i];
        if (m->kind == CKO_GROUP)
            ((MPI_Group)m->obj)->refs = m->refs;
        else if (m->kind == CKO_DT)
            ((MPI_Datatype)m->obj)->refs = m->refs;
        else if (m->kind == CKO_ERRH)
            ((MPI_Errhandler)m->obj)->refs = m->refs;
        else if (m->kind == CKO_OP)
            ((MPI_Op)m->obj)->refs = m->refs;
        else if (m->kind == CKO_COMM)
            ((MPI_Comm)m->obj)->refs = m->refs;
    }
    if (made.n > 0)
        base_debug("ckpt", "rank %d: %zu communicators, groups and "
                   "datatypes are back", mpi.world_rank, made.n);
    put_back_attrs();
    free(made.v);
    made.v = NULL;
    made.n = made.cap = 0;
    free(later.p);
    later.p = NULL;
    later.len = 0;
}

/* A candidate refused somewhere: what it made goes, newest first. */
void ckpt_objs_undo(void)
{
    for (size_t i = made.n; i-- > 0;) {
        made_t *m = &made.v[i];
        if (m->kind == CKO_GROUP) {
            mpi_group_release(m->obj);
        } else if (m->kind == CKO_DT) {
            MPI_Datatype t = m->obj;
            PMPI_Type_free(&t);
        } else if (m->kind == CKO_ERRH) {
            mpi_errh_release(m->obj);
        } else if (m->kind == CKO_OP) {
            mpi_op_release(m->obj);
        } else if (m->kind == CKO_INFO) {
            MPI_Info info = m->obj;
            PMPI_Info_free(&info);
        } else {
            mpi_comm_release(m->obj);
        }
    }
    free(made.v);
    made.v = NULL;
    made.n = made.cap = 0;
    free(later.p);
    later.p = NULL;
    later.len = 0;
}
