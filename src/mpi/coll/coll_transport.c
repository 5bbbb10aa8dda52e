/*
 * The collective layer's transport, made of internal point-to-point in the
 * communicator's collective context (ctx_off 1, tags >= 0, so collectives
 * match neither user messages nor communicator construction, which uses
 * negative tags), the reduction ops and the datatype engine; the state the
 * layer keeps per communicator; and the argument checks of the calls.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am/am.h"
#include "mpi/coll/coll_mpi.h"
#include "mpi/p2p/p2p_engine.h"

/* ---- transport ------------------------------------------------------------------ */

/* Zero-byte messages (barriers) come with no datatype. */
static MPI_Datatype dt_or_byte(void *dt)
{
    return dt != NULL ? (MPI_Datatype)dt : MPI_BYTE;
}

static int t_isend(void *ctx, const void *buf, int64_t count, void *dt,
                   int dest, int tag, void **req_p)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = mpi_isend_internal(buf, count, dt_or_byte(dt), dest, tag, ctx, 1,
                                &r);
    *req_p = r;
    return rc;
}

static int t_irecv(void *ctx, void *buf, int64_t count, void *dt, int source,
                   int tag, void **req_p)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = mpi_irecv_internal(buf, count, dt_or_byte(dt), source, tag, ctx,
                                1, &r);
    *req_p = r;
    return rc;
}

static int t_waitall(void *ctx, int n, void **reqs)
{
    int first = MPI_SUCCESS;

    for (int i = 0; i < n; i++) {
        MPI_Request r = reqs[i];
        int rc = mpi_wait_internal(&r, MPI_STATUS_IGNORE);
        reqs[i] = NULL;
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    return first;
}

static int t_testall(void *ctx, int n, void **reqs, int *done)
{
    int first = MPI_SUCCESS;

    (void)ctx;
    for (int i = 0; i < n; i++)
        if (reqs[i] != NULL && !mpi_req_settled((MPI_Request)reqs[i])) {
            *done = 0;
            return MPI_SUCCESS;
        }
    for (int i = 0; i < n; i++) {
        MPI_Request r = reqs[i];
        int rc = r != NULL ? mpi_wait_internal(&r, MPI_STATUS_IGNORE)
                           : MPI_SUCCESS;
        reqs[i] = NULL;
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    *done = 1;
    return first;
}

static void t_cancel(void *ctx, void *req)
{
    MPI_Request r = req;

    (void)ctx;
    if (r == NULL)
        return;
    if (r->kind == MPI_REQ_RECV && mpi_posted_cancel(r)) {
        r->status.shoal_cancelled = 1;
        mpi_req_complete(r);
    }
    /* Matched or a send: it completes (or fails with its peer). */
    (void)mpi_wait_internal(&r, MPI_STATUS_IGNORE);
}

static void t_progress(void *ctx)
{
    (void)ctx;
    mpi_progress();
}

static int t_wait(void *ctx, int (*ready)(void *arg), void *arg)
{
    (void)ctx;
    return mpi_wait_until(ready, arg);
}

/* The world rank of rank r of the local group (the remote group's ranks
 * are the peers of an intercommunicator, never the local ones). */
static int local_world(MPI_Comm comm, int r)
{
    return comm->is_inter ? comm->group->world[r] : comm->peer_world[r];
}

static int t_peer_pid(void *ctx, int rank)
{
    MPI_Comm comm = ctx;
    int world = local_world(comm, rank);

    if (world == mpi.world_rank)
        return (int)getpid();
    return wire_shm_local_pid(world);
}

static void t_wake(void *ctx, int rank)
{
    MPI_Comm comm = ctx;
    int world = local_world(comm, rank);
    am_peer_t *peer;

    /* Mapping the peer's segment (on first use) is what lets us ring it. */
    if (world != mpi.world_rank && am_peer_get(world, &peer) == SHOAL_OK)
        wire_shm_wake(world);
}

static const _Atomic uint32_t *t_bell(void *ctx, int rank)
{
    MPI_Comm comm = ctx;
    int world = local_world(comm, rank);
    am_peer_t *peer;

    if (world == mpi.world_rank || am_peer_get(world, &peer) != SHOAL_OK)
        return NULL;
    return wire_shm_bell(world);
}

static int t_reduce(void *ctx, void *op, const void *in, void *inout,
                    int64_t count, void *dt)
{
    return mpi_op_apply(op, in, inout, count, dt);
}

static coll_kernel_t *t_reduce_kernel(void *op, void *dt, int64_t *per,
                                      size_t *align)
{
    return mpi_op_kernel(op, dt, per, align);
}

/* Copy between two layouts through the byte stream, as a message to
 * oneself would: the source's blocks unpacked into the destination. */
static int t_copy(void *ctx, const void *src, int64_t scount, void *sdt_,
                  void *dst, int64_t rcount, void *rdt_)
{
    MPI_Datatype sdt = sdt_, rdt = rdt_;
    MPI_Count sbytes = scount * sdt->size, rbytes = rcount * rdt->size;
    mpi_dt_cursor_t in, out;
    MPI_Count left;

    if (sdt == rdt && scount == rcount) {
        mpi_dt_copy(sdt, scount, src, dst);
        return MPI_SUCCESS;
    }
    left = sbytes < rbytes ? sbytes : rbytes;
    mpi_dt_cursor_init(&in, sdt, scount, src, 0);
    mpi_dt_cursor_init(&out, rdt, rcount, dst, 0);
    while (left > 0) {
        struct iovec iov[16];
        int n = 0;
        MPI_Count got = mpi_dt_cursor_iov(&in, iov, 16, left, &n);
        if (got <= 0)
            break;
        for (int i = 0; i < n; i++)
            mpi_dt_cursor_unpack(&out, iov[i].iov_base,
                                 (MPI_Count)iov[i].iov_len);
        left -= got;
    }
    return sbytes > rbytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

static void t_extent(void *dt_, int64_t *extent_p, int64_t *true_lb_p,
                     int64_t *true_extent_p)
{
    MPI_Datatype dt = dt_;
    *extent_p = dt->extent;
    *true_lb_p = dt->true_lb;
    *true_extent_p = dt->true_extent;
}

static int64_t t_size(void *dt)
{
    return ((MPI_Datatype)dt)->size;
}

static int t_contig(void *dt)
{
    return mpi_dt_contig(dt);
}

static int t_commutative(void *op)
{
    return ((MPI_Op)op)->commute;
}

static const coll_ops_t transport = {
    .isend = t_isend,
    .irecv = t_irecv,
    .waitall = t_waitall,
    .testall = t_testall,
    .cancel = t_cancel,
    .progress = t_progress,
    .wait = t_wait,
    .wake = t_wake,
    .bell = t_bell,
    .peer_pid = t_peer_pid,
    .reduce_local = t_reduce,
    .reduce_kernel = t_reduce_kernel,
    .copy = t_copy,
    .extent = t_extent,
    .size = t_size,
    .contig = t_contig,
    .commutative = t_commutative,
    .byte_dt = MPI_BYTE,
};

/* ---- per-communicator state ------------------------------------------------------ */

static int *world_host; /* host index of each world rank (multi-host jobs) */
static int world_nhosts;

int mpi_coll_comm_init(MPI_Comm comm)
{
    coll_comm_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->ctx = comm;
    c->ops = &transport;
    c->id = comm->ctx;
    c->rank = comm->rank;
    c->size = comm->size;
    c->is_inter = comm->is_inter;
    c->remote_size = comm->is_inter ? comm->remote_size : comm->size;
    c->nhosts = 1;
    if (world_host != NULL) {
        int *host_of = malloc((size_t)comm->size * sizeof(int));
        int *seen = calloc((size_t)world_nhosts, sizeof(int));
        if (host_of == NULL || seen == NULL) {
            free(host_of);
            free(seen);
            free(c);
            return MPI_ERR_NO_MEM;
        }
        /* Renumber the hosts in order of first appearance in the group. */
        c->nhosts = 0;
        for (int r = 0; r < comm->size; r++) {
            int h = world_host[local_world(comm, r)];
            if (seen[h] == 0)
                seen[h] = ++c->nhosts;
            host_of[r] = seen[h] - 1;
        }
        free(seen);
        if (c->nhosts > 1)
            c->host_of = host_of;
        else
            free(host_of);
    }
    comm->coll = c;
    return MPI_SUCCESS;
}

void mpi_coll_comm_fini(MPI_Comm comm)
{
    coll_comm_t *c = comm->coll;

    if (c == NULL)
        return;
    coll_comm_fini(c);
    free((void *)c->host_of);
    free(c);
    comm->coll = NULL;
}

/*
 * The host of every world rank, as indices in order of first appearance;
 * NULL while every rank runs on this host (then nobody needs it).  Ranks
 * of other hosts exist only when the job spans hosts: one allgather of a
 * hash of the node id then tells every rank the whole map.
 */
int mpi_coll_world_init(void)
{
    const boot_info_t *job = am.job;
    int64_t mine, *all;
    int n = mpi.world_size, rc;

    if (job == NULL || job->local_size >= n)
        return MPI_SUCCESS;
    all = malloc((size_t)n * sizeof(*all));
    world_host = malloc((size_t)n * sizeof(int));
    if (all == NULL || world_host == NULL) {
        free(all);
        free(world_host);
        world_host = NULL;
        return MPI_ERR_NO_MEM;
    }
    mine = (int64_t)(base_hash64(job->node_id, strlen(job->node_id)) >> 1);
    rc = coll_allgatherv(mpi_coll_of(MPI_COMM_WORLD), &mine, 1, MPI_INT64_T,
                         all, 1, NULL, NULL, MPI_INT64_T);
    if (rc != 0) {
        free(all);
        free(world_host);
        world_host = NULL;
        return rc < 0 ? mpi_class_of_status(rc) : rc;
    }
    world_nhosts = 0;
    for (int r = 0; r < n; r++) {
        int h = -1;
        for (int q = 0; q < r && h < 0; q++)
            if (all[q] == all[r])
                h = world_host[q];
        world_host[r] = h >= 0 ? h : world_nhosts++;
    }
    free(all);
    /* Communicators made so far learn the map on their next set-up. */
    mpi_coll_comm_fini(MPI_COMM_WORLD);
    mpi_coll_comm_fini(MPI_COMM_SELF);
    return MPI_SUCCESS;
}

void mpi_coll_world_fini(void)
{
    free(world_host);
    world_host = NULL;
    world_nhosts = 0;
}

coll_comm_t *mpi_coll_of(MPI_Comm comm)
{
    if (BASE_UNLIKELY(comm->coll == NULL))
        mpi_coll_comm_init(comm);
    return comm->coll;
}

int mpi_coll_done(MPI_Comm comm, int rc, const char *fn)
{
    if (BASE_LIKELY(rc == 0))
        return MPI_SUCCESS;
    if (rc < 0)
        return mpi_error(comm, mpi_class_of_status(rc), fn, "%s",
                         shoal_strerror(rc));
    return mpi_error(comm, rc, fn,
                     "a message of the collective failed on a communicator "
                     "of %d ranks",
                     comm->size);
}

/* ---- checks ------------------------------------------------------------------------ */

int mpi_coll_check_comm(MPI_Comm comm, const char *fn)
{
    if (!mpi_comm_ok(comm))
        return mpi_error(NULL, MPI_ERR_COMM, fn,
                         "comm is %s", comm == MPI_COMM_NULL
                                           ? "MPI_COMM_NULL"
                                           : "not a valid communicator");
    if (BASE_UNLIKELY(mpi_coll_of(comm) == NULL))
        return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                         "no memory for the communicator's collective state");
    if (BASE_UNLIKELY(mpi_ft.on)) {
        int rc = mpi_ft_comm_broken(comm);
        if (rc == MPIX_ERR_PROC_FAILED) {
            /* Failing at once, this call would not progress: a program
             * that retries in a loop (until the communicator is revoked,
             * as ULFM programs do) would never take in the revocation,
             * nor pass it on, nor serve its peers.  One round first; a
             * revocation that came wins. */
            mpi_progress();
            rc = mpi_ft_comm_broken(comm);
        }
        if (rc != MPI_SUCCESS)
            return mpi_error(comm, rc, fn, "%s",
                             rc == MPIX_ERR_REVOKED
                                 ? "the communicator was revoked"
                                 : "a member of the communicator failed");
    }
    return MPI_SUCCESS;
}

int mpi_coll_check_root(MPI_Comm comm, int root, const char *fn)
{
    if (!comm->is_inter) {
        if (root < 0 || root >= comm->size)
            return mpi_error(comm, MPI_ERR_ROOT, fn,
                             "root %d is outside [0, %d) of the communicator",
                             root, comm->size);
        return MPI_SUCCESS;
    }
    if (root == MPI_ROOT || root == MPI_PROC_NULL ||
        (root >= 0 && root < comm->remote_size))
        return MPI_SUCCESS;
    return mpi_error(comm, MPI_ERR_ROOT, fn,
                     "root %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank "
                     "of the remote group [0, %d)",
                     root, comm->remote_size);
}

int mpi_coll_check_count(MPI_Comm comm, MPI_Count count, const char *fn,
                         const char *what)
{
    if (count < 0)
        return mpi_error(comm, MPI_ERR_COUNT, fn, "%s is %lld", what,
                         (long long)count);
    return MPI_SUCCESS;
}

/* The bytes one element of dt takes or covers, whichever is more. */
static int64_t span(MPI_Datatype dt)
{
    int64_t ext = dt->extent < 0 ? -dt->extent : dt->extent;

    return ext > dt->size ? ext : dt->size;
}

int mpi_coll_check_data(MPI_Comm comm, const void *buf, MPI_Count count,
                        MPI_Datatype dt, const char *fn, const char *what)
{
    int rc = mpi_coll_check_count(comm, count, fn, what);
    int64_t bytes;

    if (rc == MPI_SUCCESS)
        rc = mpi_dt_check(comm, dt, fn);
    /* NULL is MPI_BOTTOM, fine with absolute addresses in a derived type;
     * with a predefined type it can only be a mistake. */
    if (rc == MPI_SUCCESS && buf == NULL && count > 0 &&
        (dt->flags & MPI_DT_PREDEF) && dt->size > 0)
        return mpi_error(comm, MPI_ERR_BUFFER, fn,
                         "buffer is NULL with %s %lld of %s", what,
                         (long long)count, dt->name);
    /* A _c form's count may be large enough to overflow byte offsets
     * (a multiplication that checks for overflow: a division would cost
     * more than the rest of the checks). */
    if (rc == MPI_SUCCESS && count > 0 &&
        __builtin_mul_overflow(span(dt), (int64_t)count, &bytes))
        return mpi_error(
            comm, MPI_ERR_COUNT, fn, "%s %lld of %s spans more than 2^63 bytes",
            what, (long long)count, dt->name[0] ? dt->name : "(derived)");
    return rc;
}

int mpi_coll_check_alias(MPI_Comm comm, const void *sendbuf,
                         const void *recvbuf, const void *own, const char *fn)
{
    if (sendbuf == NULL || sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (sendbuf == recvbuf)
        return mpi_error(comm, MPI_ERR_BUFFER, fn,
                         "sendbuf and recvbuf are the same buffer %p "
                         "(MPI_IN_PLACE is the way to reuse it)",
                         sendbuf);
    if (own != NULL && sendbuf == own)
        return mpi_error(comm, MPI_ERR_BUFFER, fn,
                         "sendbuf and recvbuf share this rank's own block "
                         "at %p (MPI_IN_PLACE is the way to reuse it)",
                         sendbuf);
    return MPI_SUCCESS;
}

int mpi_coll_check_counts(MPI_Comm comm, int n, const int64_t *counts,
                          const char *fn, const char *what)
{
    if (counts == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return mpi_error(comm, MPI_ERR_COUNT, fn, "%s[%d] is %lld", what, i,
                             (long long)counts[i]);
    return MPI_SUCCESS;
}

int mpi_widen(MPI_Comm comm, mpi_wide_t *w, int m, const int *const in[],
              const int n[], const int64_t *out[], const char *fn)
{
    size_t total = 0;
    int64_t *at = w->local;

    w->heap = NULL;
    for (int k = 0; k < m; k++)
        total += in[k] != NULL ? (size_t)n[k] : 0;
    if (total > MPI_WIDE_LOCAL) {
        at = w->heap = malloc(total * sizeof(int64_t));
        if (at == NULL)
            return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                             "no memory to widen %zu counts and "
                             "displacements",
                             total);
    }
    for (int k = 0; k < m; k++) {
        out[k] = in[k] != NULL ? at : NULL;
        for (int i = 0; in[k] != NULL && i < n[k]; i++)
            *at++ = in[k][i];
    }
    return MPI_SUCCESS;
}

static const char *const op_names[SHOAL_MPI_NPREDEF_OPS] = {
    "", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND",
    "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR",
    "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP"};

int mpi_coll_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                      const char *fn)
{
    if (op == NULL || op->magic != MPI_MAGIC_OP)
        return mpi_error(comm, MPI_ERR_OP, fn, "op is %s",
                         op == MPI_OP_NULL ? "MPI_OP_NULL"
                                           : "not a valid operation");
    if (op->predef == 13 || op->predef == 14)
        return mpi_error(comm, MPI_ERR_OP, fn,
                         "%s is only for one-sided accumulate operations",
                         op_names[op->predef]);
    if (mpi_op_check(op, dt) != MPI_SUCCESS)
        return mpi_error(comm, MPI_ERR_OP, fn,
                         "%s is not defined on datatype %s",
                         op_names[op->predef], dt->name[0] ? dt->name
                                                           : "(derived)");
    return MPI_SUCCESS;
}

int mpi_coll_bad_in_place(MPI_Comm comm, const char *fn, const char *what,
                          const char *why)
{
    return mpi_error(comm, MPI_ERR_BUFFER, fn, "%s is MPI_IN_PLACE %s", what,
                     why);
}

/* ---- nonblocking and persistent collectives ------------------------------------ */

static void coll_req_status(MPI_Request r, int rc)
{
    r->status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->status.MPI_TAG = MPI_ANY_TAG;
    r->status.shoal_count = 0;
    r->status.shoal_cancelled = 0;
    r->status.MPI_ERROR = rc == 0  ? MPI_SUCCESS
                          : rc < 0 ? mpi_class_of_status(rc)
                                   : rc;
}

static int coll_req_poll(MPI_Request r)
{
    coll_sched_t *s = r->extra;

    if (s == NULL) { /* nothing to do (the call moves no data), or given
                        up (SHOAL_FT, below) */
        coll_req_status(r, BASE_UNLIKELY(mpi_ft.on)
                               ? mpi_ft_comm_broken(r->comm)
                               : 0);
        return 1;
    }
    /* SHOAL_FT: a member died or the communicator was revoked: it could
     * wait forever for a rank that gave up (docs/FT.md).  A persistent
     * request given up fails at every later start too. */
    if (BASE_UNLIKELY(mpi_ft.on) && (am.deaths | mpi_ft.revokes) != 0) {
        int err = mpi_ft_comm_broken(r->comm);
        if (err != MPI_SUCCESS) {
            mpi_ft_abandon_sched(s);
            r->extra = NULL;
            coll_req_status(r, err);
            return 1;
        }
    }
    if (!coll_sched_progress(s))
        return 0;
    coll_req_status(r, coll_sched_result(s));
    if (!r->persistent) {
        coll_sched_free(s);
        r->extra = NULL;
    }
    return 1;
}

int mpi_coll_req_is_sched(const struct shoal_mpi_request *r)
{
    return r->poll_fn == coll_req_poll;
}

static int coll_req_free(MPI_Request r)
{
    coll_sched_free(r->extra);
    r->extra = NULL;
    return MPI_SUCCESS;
}

void mpi_coll_begin(MPI_Comm comm, int persistent, coll_sched_t **s)
{
    coll_comm_t *c = comm->coll;

    mpi_lock();
    *s = NULL;
    c->start_out = s;
    c->persistent = persistent;
}

int mpi_coll_end(MPI_Comm comm, int rc, coll_sched_t *s, MPI_Request *req,
                 const char *fn)
{
    coll_comm_t *c = comm->coll;
    int persistent = c->persistent;
    MPI_Request r;

    c->start_out = NULL;
    c->persistent = 0;
    /* A call with nothing to move may build no schedule at all: its
     * request completes at once (at every MPI_Start, if persistent). */
    if (rc != 0) {
        coll_sched_free(s);
        mpi_unlock();
        return mpi_coll_done(comm, rc, fn);
    }
    r = mpi_req_alloc(MPI_REQ_COLL, comm);
    if (r == NULL) {
        /* A started schedule must still run: the other ranks take part. */
        while (s != NULL && !persistent && !coll_sched_progress(s))
            mpi_progress();
        coll_sched_free(s);
        mpi_unlock();
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->extra = s;
    r->poll_fn = coll_req_poll;
    r->free_fn = coll_req_free;
    if (persistent) {
        r->persistent = 1;
        r->active = 0;
        coll_req_status(r, 0);
    } else if (coll_req_poll(r)) {
        mpi_req_complete(r);
    } else {
        mpi_req_add_poll(r);
    }
    mpi_unlock();
    *req = r;
    return MPI_SUCCESS;
}

/*
 * Blocking collectives run the same way, without a request: built and
 * started under the engine lock (a progress thread may be advancing a
 * nonblocking collective of the same communicator, whose state the build
 * shares), then advanced by the wait, which takes the lock per round.
 */
void mpi_coll_begin_blocking(MPI_Comm comm)
{
    coll_comm_t *c = comm->coll;

    mpi_lock();
    c->held = NULL;
    c->start_out = &c->held;
    c->persistent = 0;
}

static int sched_done(void *arg)
{
    return coll_sched_progress(arg);
}

typedef struct now_wait {
    coll_now_t *call;
    int rc;
} now_wait_t;

static int now_done(void *arg)
{
    now_wait_t *w = arg;

    return coll_now_test(w->call, &w->rc);
}

/* Under SHOAL_FT a blocking collective's wait ends when a member dies
 * or the communicator is revoked (mpi_ft.watch, request.c). */
static int coll_wait(MPI_Comm comm, int (*done)(void *arg), void *arg)
{
    MPI_Comm outer;
    int rc;

    if (BASE_LIKELY(!mpi_ft.on))
        return mpi_wait_until(done, arg);
    outer = mpi_ft.watch;
    mpi_ft.watch = comm;
    rc = mpi_wait_until(done, arg);
    mpi_ft.watch = outer;
    return rc;
}

int mpi_coll_now_end(MPI_Comm comm, coll_now_t *call, const char *fn)
{
    coll_comm_t *c = comm->coll;
    now_wait_t w = {call, 0};
    int rc;

    c->held = NULL;
    c->start_out = NULL;
    mpi_unlock();
    rc = coll_wait(comm, now_done, &w);
    if (rc == MPI_SUCCESS)
        rc = w.rc;
    return mpi_coll_done(comm, rc, fn);
}

int mpi_coll_end_blocking(MPI_Comm comm, int rc, const char *fn)
{
    coll_comm_t *c = comm->coll;
    coll_sched_t *s = c->held;

    c->held = NULL;
    c->start_out = NULL;
    mpi_unlock();
    if (rc == 0 && s != NULL) {
        rc = coll_wait(comm, sched_done, s);
        if (rc == MPI_SUCCESS)
            rc = coll_sched_result(s);
        if (BASE_UNLIKELY(mpi_ft.on && rc != MPI_SUCCESS)) {
            /* Given up while messages were posted: not reused. */
            mpi_lock();
            mpi_ft_abandon_sched(s);
            mpi_unlock();
            s = NULL;
        }
    }
    if (s != NULL) {
        mpi_lock();
        coll_sched_recycle(c, s);
        mpi_unlock();
    }
    return mpi_coll_done(comm, rc, fn);
}

int mpi_coll_start(MPI_Request r)
{
    if (r->extra != NULL)
        coll_sched_start(r->extra);
    if (coll_req_poll(r))
        mpi_req_complete(r);
    else
        mpi_req_add_poll(r);
    return MPI_SUCCESS;
}
