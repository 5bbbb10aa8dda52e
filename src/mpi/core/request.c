/*
 * Requests: the pool they come from, waiting and testing (one, all, any,
 * some), persistent requests, cancel, generalized requests.
 *
 * Waiting never spins against the scheduler: with one thread in MPI it is
 * the active-message layer's adaptive wait (poll, yield, sleep on the
 * doorbell); under MPI_THREAD_MULTIPLE each thread polls under the engine
 * lock, then yields, then naps, so threads take turns.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am.h"
#include "mpi/core/obj_arena.h"
#include "mpi/p2p/p2p_engine.h"

/* ---- the pool ------------------------------------------------------------------ */

static MPI_Request pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* A restart puts a request back at its address (core/ckpt_objs.c): the
 * next one comes from the arena's placement, not the pool. */
int mpi_req_placing;

MPI_Request mpi_req_alloc(int kind, MPI_Comm comm)
{
    MPI_Request r;

    if (BASE_UNLIKELY(mpi_req_placing)) {
        mpi_req_placing = 0;
        r = NULL;
    } else {
        if (BASE_UNLIKELY(mpi.mt))
            pthread_mutex_lock(&pool_lock);
        r = pool;
        if (r != NULL)
            pool = (MPI_Request)r->extra;
        if (BASE_UNLIKELY(mpi.mt))
            pthread_mutex_unlock(&pool_lock);
    }
    if (r == NULL) {
        /* From the objects' arena when checkpoints are on (a handle the
         * program keeps in a registered region can come back). */
        r = mpi_obj_alloc(sizeof(*r));
        if (r == NULL)
            return NULL;
    }
    /* Field by field: a memset of the whole request compiles to `rep
     * stos`, which costs more than the rest of a send on this class of
     * machine (see base_copy). */
    r->magic = MPI_MAGIC_REQ;
    r->kind = (uint8_t)kind;
    r->persistent = r->active = r->user_freed = r->blocking = 0;
    r->deferred = r->inflight = 0;
    __atomic_store_n(&r->done, 0, __ATOMIC_RELAXED);
    r->status.MPI_SOURCE = r->status.MPI_TAG = r->status.MPI_ERROR = 0;
    r->status.shoal_cancelled = 0;
    r->status.shoal_count = 0;
    r->comm = comm;
    r->buf = NULL;
    r->count = 0;
    r->dt = NULL;
    r->peer = r->tag = r->mode = r->ctx_off = 0;
    r->link.next = r->link.prev = NULL;
    r->seq = 0;
    r->umsg = NULL;
    r->bytes = 0;
    r->remote = 0;
    r->bsend_block = NULL;
    r->poll_fn = NULL;
    r->free_fn = NULL;
    r->cancel_fn = NULL;
    r->query_fn = NULL;
    r->raise_fn = NULL;
    r->extra = NULL;
    if (comm != NULL)
        mpi_ref_inc(&comm->refs);
    return r;
}

/* A restart (core/ckpt_objs.c): a request that had completed at the cut
 * and that the program had not waited for yet, with its status. */
MPI_Request mpi_req_done_again(int kind, MPI_Comm comm, MPI_Datatype dt,
                               const MPI_Status *st)
{
    MPI_Request r = mpi_req_alloc(kind, comm);

    if (r == NULL)
        return NULL;
    if (dt != NULL) {
        r->dt = dt;
        mpi_dt_retain(dt);
    }
    r->status = *st;
    mpi_req_complete(r);
    return r;
}

void mpi_req_free(MPI_Request r)
{
    MPI_Comm comm = r->comm;
    MPI_Datatype dt = r->dt;

    r->magic = MPI_MAGIC_DEAD;
    if (BASE_UNLIKELY(mpi.mt))
        pthread_mutex_lock(&pool_lock);
    r->extra = pool;
    pool = r;
    if (BASE_UNLIKELY(mpi.mt))
        pthread_mutex_unlock(&pool_lock);
    if (dt != NULL)
        mpi_dt_release(dt);
    if (comm != NULL)
        mpi_comm_release(comm);
}

void mpi_req_pool_fini(void)
{
    while (pool != NULL) {
        MPI_Request next = (MPI_Request)pool->extra;
        mpi_obj_free(pool);
        pool = next;
    }
}

/* ---- waiting --------------------------------------------------------------------- */

/* Fail r with class err: taken off the engine's queues, completed. */
static int fail_req(MPI_Request r, int err)
{
    if (r->kind == MPI_REQ_RECV)
        mpi_posted_cancel(r);
    else
        mpi_send_unqueue(r);
    r->status.MPI_ERROR = err;
    mpi_req_complete(r);
    return 1;
}

/*
 * A transfer under way (r->inflight): the peer may still write into or
 * read from the buffer, or name the request in a frame.  Ending it now
 * would let the program free memory the peer then touches (a receive
 * whose sender is still writing the tail of a cooperative copy), or let
 * a late FIN complete whatever request reused this one.  So it ends when
 * the peer is done with it; a revocation only changes what it reports
 * (the receiver of a revoked communicator answers a rendezvous it drops,
 * p2p_engine.c).  Only the death of that very peer ends it at once:
 * frames of a dead peer are ignored from then on (p2p_engine.c,
 * am_place), so none of them touches the request or its buffer again.
 */
static int check_inflight(MPI_Request r)
{
    MPI_Comm comm = r->comm;
    int peer = r->kind == MPI_REQ_RECV ? r->status.MPI_SOURCE : r->peer;

    if (comm->revoked && r->status.MPI_ERROR == MPI_SUCCESS)
        r->status.MPI_ERROR = MPIX_ERR_REVOKED;
    if (am.deaths == 0 || peer < 0 || peer >= comm->remote_size ||
        !am.peers[comm->peer_world[peer]].dead)
        return 0;
    return fail_req(r, mpi_ft.on ? MPIX_ERR_PROC_FAILED
                                 : MPI_ERR_PROC_ABORTED);
}

/*
 * Under SHOAL_FT (docs/FT.md): a revoked communicator fails every
 * operation with MPIX_ERR_REVOKED; a dead peer fails it with
 * MPIX_ERR_PROC_FAILED; a wildcard receive of the user's while comm has
 * failures not acknowledged ends the wait with MPIX_ERR_PROC_FAILED_PENDING
 * but stays pending (returns 1 without completing it) -- unless it is a
 * blocking MPI_Recv, which has no request to keep: MPIX_ERR_PROC_FAILED.
 * Transfers under way finish first (check_inflight).
 */
static int check_ft(MPI_Request r)
{
    MPI_Comm comm = r->comm;
    int world;

    if (comm->revoked)
        return fail_req(r, MPIX_ERR_REVOKED);
    if (am.deaths == 0)
        return 0;
    if (r->peer == MPI_ANY_SOURCE) {
        if (r->ctx_off != 0) {
            for (int i = 0; i < comm->remote_size; i++)
                if (mpi_ft_dead(comm->peer_world[i]))
                    return fail_req(r, MPIX_ERR_PROC_FAILED);
            return 0;
        }
        if (!mpi_ft_unacked(comm))
            return 0;
        if (r->blocking)
            return fail_req(r, MPIX_ERR_PROC_FAILED);
        return 1; /* pending: finish() reports it, the request stays */
    }
    if (r->peer < 0)
        return 0;
    world = comm->peer_world[r->peer];
    if (!mpi_ft_dead(world))
        return 0;
    return fail_req(r, MPIX_ERR_PROC_FAILED);
}

/* Has the peer this request depends on died?  Then fail it. */
static int check_dead(MPI_Request r)
{
    int world;

    if ((am.deaths | mpi_ft.revokes) == 0 || r->comm == NULL ||
        mpi_req_is_done(r))
        return 0;
    if (r->kind != MPI_REQ_SEND && r->kind != MPI_REQ_RECV)
        return 0;
    if (r->inflight)
        return check_inflight(r);
    if (mpi_ft.on)
        return check_ft(r);
    if (r->peer == MPI_ANY_SOURCE) {
        for (int i = 0; i < r->comm->remote_size; i++)
            if (am.peers[r->comm->peer_world[i]].dead)
                goto dead;
        return 0;
    }
    if (r->peer < 0)
        return 0;
    world = r->comm->peer_world[r->peer];
    if (!am.peers[world].dead)
        return 0;
dead:
    return fail_req(r, MPI_ERR_PROC_ABORTED);
}

typedef struct until {
    int (*done_fn)(void *arg);
    void *arg;
    int ft_err; /* SHOAL_FT: why the watched collective gave up */
} until_t;

/* SHOAL_FT: the blocking collective on mpi_ft.watch cannot finish (a member
 * died, or it was revoked): end its wait. */
static int watch_broken(until_t *u)
{
    u->ft_err = mpi_ft_comm_broken(mpi_ft.watch);
    return u->ft_err != MPI_SUCCESS;
}

static int until_ready(void *arg, int handled)
{
    until_t *u = arg;

    int done;

    (void)handled;
    mpi.in_wait++;
    mpi_progress_extra();
    done = u->done_fn(u->arg);
    mpi.in_wait--;
    if (BASE_UNLIKELY(mpi_ft.watch != NULL) && !done && watch_broken(u))
        return SHOAL_ERR_PEER_DEAD;
    return done ? 1 : 0;
}

int mpi_wait_until(int (*done_fn)(void *arg), void *arg)
{
    until_t u = {done_fn, arg, MPI_SUCCESS};

    if (!mpi.mt) {
        if (done_fn(arg))
            return MPI_SUCCESS;
        int status = am_block(until_ready, &u, NULL, 0, -1);
        if (BASE_UNLIKELY(u.ft_err != MPI_SUCCESS))
            return u.ft_err;
        return status == SHOAL_OK ? MPI_SUCCESS : mpi_class_of_status(status);
    }
    for (unsigned spins = 0;; spins++) {
        int d;
        mpi_lock();
        mpi.in_wait++;
        am_progress();
        mpi_progress_extra();
        d = done_fn(arg);
        mpi.in_wait--;
        /* This loop is not am_block's, which looks for dead peers; under
         * SHOAL_FT it must too, once it has waited a while, and so must it
         * for the launcher's checkpoint requests (am.wait_hook). */
        if (BASE_UNLIKELY(mpi_ft.on || am.wait_hook != NULL) && !d &&
            spins >= 64)
            am_check_peers_due();
        if (BASE_UNLIKELY(mpi_ft.watch != NULL) && !d && watch_broken(&u)) {
            mpi_unlock();
            if (spins >= 64)
                wire_shm_waiting(-1);
            return u.ft_err;
        }
        mpi_unlock();
        if (d) {
            if (spins >= 64)
                wire_shm_waiting(-1);
            return MPI_SUCCESS;
        }
        if (spins < 64)
            continue;
        if (spins == 64)
            wire_shm_waiting(1); /* peers: we answer at once */
        if (spins < 4096) {
            sched_yield();
        } else {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}

static int req_done(void *arg)
{
    MPI_Request r = arg;

    return mpi_req_is_done(r) || check_dead(r);
}

int mpi_req_settled(MPI_Request r)
{
    return req_done(r);
}

int mpi_req_wait_done(MPI_Request r)
{
    if (mpi_req_is_done(r))
        return MPI_SUCCESS;
    return mpi_wait_until(req_done, r);
}

/*
 * One progress round and a look at r (Test and friends).  When ranks
 * share cores, a program that tests in a loop would keep the core from
 * the very rank it waits for until the time slice ends (milliseconds):
 * a test that finds nothing done gives the core away.
 */
static int test_once(MPI_Request r)
{
    int done;

    if (mpi_req_is_done(r))
        return 1;
    mpi_lock();
    am_progress();
    mpi_progress_extra();
    mpi_unlock();
    done = req_done(r);
    if (!done && am.oversubscribed)
        sched_yield();
    return done;
}

static void status_out(MPI_Status *status, const MPI_Request r)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    if (r->kind == MPI_REQ_GREQ && r->query_fn != NULL) {
        int keep = status->MPI_ERROR;
        r->query_fn(r, status);
        status->MPI_ERROR = keep; /* the caller sets it, or not */
        return;
    }
    mpi_status_give(status, &r->status);
}

/* The empty status of a null or inactive request. */
static void status_empty(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->shoal_count = 0;
    status->shoal_cancelled = 0;
}

void mpi_req_retire(MPI_Request *req_p)
{
    MPI_Request r = *req_p;

    if (r->persistent) {
        r->active = 0;
        return;
    }
    if (r->free_fn != NULL)
        r->free_fn(r);
    mpi_req_free(r);
    *req_p = MPI_REQUEST_NULL;
}

/* Is *req_p nothing to wait for (null, or persistent and not started)? */
static inline int inactive(MPI_Request r)
{
    return r == MPI_REQUEST_NULL || (r->persistent && !r->active);
}

static int check_req(MPI_Request r, const char *fn)
{
    if (r != MPI_REQUEST_NULL && r->magic != MPI_MAGIC_REQ)
        return mpi_error(NULL, MPI_ERR_REQUEST, fn,
                         "not a request (freed or never created)");
    return MPI_SUCCESS;
}

/* Finish a completed request for the caller: status, error, retire. */
static int finish(MPI_Request *req_p, MPI_Status *status, const char *fn)
{
    MPI_Request r = *req_p;
    int err = r->status.MPI_ERROR;
    MPI_Comm comm = r->comm;

    /* SHOAL_FT: a wildcard receive that failures not acknowledged hold
     * up (check_ft); it stays pending. */
    if (BASE_UNLIKELY(!mpi_req_is_done(r)))
        return mpi_error(comm, MPIX_ERR_PROC_FAILED_PENDING, fn,
                         "a potential sender failed; acknowledge with "
                         "MPIX_Comm_failure_ack to go on waiting");

    status_out(status, r);
    if (err != MPI_SUCCESS && r->raise_fn != NULL) {
        /* The object the operation refers to (a file) has the handler. */
        int rc = r->raise_fn(r, err, fn);
        mpi_req_retire(req_p);
        return rc;
    }
    if (comm != NULL)
        __atomic_add_fetch(&comm->refs, 1, __ATOMIC_RELAXED);
    mpi_req_retire(req_p);
    if (err != MPI_SUCCESS) {
        int rc = mpi_error(comm, err, fn,
                           err == MPI_ERR_TRUNCATE
                               ? "message longer than the receive buffer"
                               : "the request failed (peer died?)");
        if (comm != NULL)
            mpi_comm_release(comm);
        return rc;
    }
    if (comm != NULL)
        mpi_comm_release(comm);
    return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Request r;
    int rc;

    MPI_CHECK_INIT("MPI_Wait");
    if (request == NULL)
        return mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
    r = *request;
    if ((rc = check_req(r, "MPI_Wait")) != MPI_SUCCESS)
        return rc;
    if (inactive(r)) {
        status_empty(status);
        return MPI_SUCCESS;
    }
    if ((rc = mpi_req_wait_done(r)) != MPI_SUCCESS)
        return mpi_error(r->comm, rc, "MPI_Wait", "waiting failed: %s",
                         shoal_error_detail());
    return finish(request, status, "MPI_Wait");
}
SHOAL_MPI_WEAK(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Request r;
    int rc;

    MPI_CHECK_INIT("MPI_Test");
    if (request == NULL || flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Test",
                         "request or flag is NULL");
    r = *request;
    if ((rc = check_req(r, "MPI_Test")) != MPI_SUCCESS)
        return rc;
    if (inactive(r)) {
        *flag = 1;
        status_empty(status);
        return MPI_SUCCESS;
    }
    *flag = test_once(r);
    if (!*flag)
        return MPI_SUCCESS;
    return finish(request, status, "MPI_Test");
}
SHOAL_MPI_WEAK(Test)

static int check_array(int count, MPI_Request reqs[], const char *fn)
{
    if (count < 0)
        return mpi_error(NULL, MPI_ERR_COUNT, fn, "count %d is negative",
                         count);
    if (count > 0 && reqs == NULL)
        return mpi_error(NULL, MPI_ERR_REQUEST, fn,
                         "array of requests is NULL");
    for (int i = 0; i < count; i++) {
        int rc = check_req(reqs[i], fn);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

typedef struct all_ctx {
    int n;
    MPI_Request *reqs;
} all_ctx_t;

static int all_done(void *arg)
{
    all_ctx_t *a = arg;

    for (int i = 0; i < a->n; i++)
        if (!inactive(a->reqs[i]) && !req_done(a->reqs[i]))
            return 0;
    return 1;
}

/* Finish every completed request of an array; MPI_ERR_IN_STATUS if any
 * failed (their statuses say which), with the handler run once. */
static int finish_many(int n, MPI_Request reqs[], MPI_Status *statuses,
                       const int *which, int nwhich, const char *fn)
{
    int failed = 0, rc = MPI_SUCCESS;
    MPI_Comm comm = NULL;
    MPI_Request raiser = NULL;

    /* The statuses' MPI_ERROR fields change only when the call returns
     * MPI_ERR_IN_STATUS, and then every one does. */
    for (int k = 0; k < nwhich; k++) {
        MPI_Request r = reqs[which ? which[k] : k];
        if (!inactive(r) && (r->status.MPI_ERROR != MPI_SUCCESS ||
                             BASE_UNLIKELY(!mpi_req_is_done(r)))) {
            if (!failed && r->raise_fn != NULL)
                raiser = r;
            failed = 1;
            comm = r->comm;
        }
    }
    /* The first failed request's object raises it when that is a file
     * (its handler runs while the request still refers to it). */
    if (raiser != NULL)
        rc = raiser->raise_fn(raiser, MPI_ERR_IN_STATUS, fn);
    for (int k = 0; k < nwhich; k++) {
        int i = which ? which[k] : k;
        MPI_Status st, *sp = statuses == MPI_STATUSES_IGNORE ? &st
                                                            : &statuses[k];
        MPI_Request r = reqs[i];
        if (inactive(r)) {
            status_empty(sp);
            continue;
        }
        if (BASE_UNLIKELY(!mpi_req_is_done(r))) { /* SHOAL_FT: pending */
            sp->MPI_ERROR = MPIX_ERR_PROC_FAILED_PENDING;
            continue;
        }
        status_out(sp, r);
        if (failed)
            sp->MPI_ERROR = r->status.MPI_ERROR;
        mpi_req_retire(&reqs[i]);
    }
    (void)n;
    if (raiser != NULL)
        return rc;
    if (failed)
        return mpi_error(mpi_comm_ok(comm) ? comm : NULL, MPI_ERR_IN_STATUS,
                         fn, "a request failed; see the statuses");
    return MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status *statuses)
{
    all_ctx_t a = {count, reqs};
    int rc;

    MPI_CHECK_INIT("MPI_Waitall");
    if ((rc = check_array(count, reqs, "MPI_Waitall")) != MPI_SUCCESS)
        return rc;
    if ((rc = mpi_wait_until(all_done, &a)) != MPI_SUCCESS)
        return mpi_error(NULL, rc, "MPI_Waitall", "waiting failed: %s",
                         shoal_error_detail());
    return finish_many(count, reqs, statuses, NULL, count, "MPI_Waitall");
}
SHOAL_MPI_WEAK(Waitall)

int PMPI_Testall(int count, MPI_Request reqs[], int *flag,
                 MPI_Status *statuses)
{
    all_ctx_t a = {count, reqs};
    int rc;

    MPI_CHECK_INIT("MPI_Testall");
    if ((rc = check_array(count, reqs, "MPI_Testall")) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
    mpi_progress();
    *flag = all_done(&a);
    if (!*flag)
        return MPI_SUCCESS;
    return finish_many(count, reqs, statuses, NULL, count, "MPI_Testall");
}
SHOAL_MPI_WEAK(Testall)

typedef struct any_ctx {
    int n;
    MPI_Request *reqs;
    int index; /* found, or MPI_UNDEFINED when all are inactive */
} any_ctx_t;

static int any_done(void *arg)
{
    any_ctx_t *a = arg;
    int active = 0;

    for (int i = 0; i < a->n; i++) {
        if (inactive(a->reqs[i]))
            continue;
        active = 1;
        if (req_done(a->reqs[i])) {
            a->index = i;
            return 1;
        }
    }
    if (!active) {
        a->index = MPI_UNDEFINED;
        return 1;
    }
    return 0;
}

static int any_finish(any_ctx_t *a, int *index, MPI_Status *status,
                      const char *fn)
{
    *index = a->index;
    if (a->index == MPI_UNDEFINED) {
        status_empty(status);
        return MPI_SUCCESS;
    }
    return finish(&a->reqs[a->index], status, fn);
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index,
                 MPI_Status *status)
{
    any_ctx_t a = {count, reqs, MPI_UNDEFINED};
    int rc;

    MPI_CHECK_INIT("MPI_Waitany");
    if ((rc = check_array(count, reqs, "MPI_Waitany")) != MPI_SUCCESS)
        return rc;
    if (index == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
    if ((rc = mpi_wait_until(any_done, &a)) != MPI_SUCCESS)
        return mpi_error(NULL, rc, "MPI_Waitany", "waiting failed");
    return any_finish(&a, index, status, "MPI_Waitany");
}
SHOAL_MPI_WEAK(Waitany)

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
                 MPI_Status *status)
{
    any_ctx_t a = {count, reqs, MPI_UNDEFINED};
    int rc;

    MPI_CHECK_INIT("MPI_Testany");
    if ((rc = check_array(count, reqs, "MPI_Testany")) != MPI_SUCCESS)
        return rc;
    if (index == NULL || flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Testany",
                         "index or flag is NULL");
    mpi_progress();
    *flag = any_done(&a);
    if (!*flag) {
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    return any_finish(&a, index, status, "MPI_Testany");
}
SHOAL_MPI_WEAK(Testany)

/* Collect every completed request; outcount MPI_UNDEFINED if none active. */
static int some_collect(int n, MPI_Request reqs[], int *outcount,
                        int indices[])
{
    int active = 0, k = 0;

    for (int i = 0; i < n; i++) {
        if (inactive(reqs[i]))
            continue;
        active = 1;
        if (req_done(reqs[i]))
            indices[k++] = i;
    }
    *outcount = active ? k : MPI_UNDEFINED;
    return !active || k > 0;
}

typedef struct some_ctx {
    int n;
    MPI_Request *reqs;
    int *outcount, *indices;
} some_ctx_t;

static int some_done(void *arg)
{
    some_ctx_t *s = arg;

    return some_collect(s->n, s->reqs, s->outcount, s->indices);
}

static int some_args(int n, MPI_Request reqs[], int *outcount, int indices[],
                     const char *fn)
{
    int rc = check_array(n, reqs, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (outcount == NULL || (n > 0 && indices == NULL))
        return mpi_error(NULL, MPI_ERR_ARG, fn,
                         "outcount or indices is NULL");
    return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount,
                  int indices[], MPI_Status *statuses)
{
    some_ctx_t s = {incount, reqs, outcount, indices};
    int rc;

    MPI_CHECK_INIT("MPI_Waitsome");
    if ((rc = some_args(incount, reqs, outcount, indices, "MPI_Waitsome")))
        return rc;
    if ((rc = mpi_wait_until(some_done, &s)) != MPI_SUCCESS)
        return mpi_error(NULL, rc, "MPI_Waitsome", "waiting failed");
    if (*outcount == MPI_UNDEFINED)
        return MPI_SUCCESS;
    return finish_many(incount, reqs, statuses, indices, *outcount,
                       "MPI_Waitsome");
}
SHOAL_MPI_WEAK(Waitsome)

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount,
                  int indices[], MPI_Status *statuses)
{
    int rc;

    MPI_CHECK_INIT("MPI_Testsome");
    if ((rc = some_args(incount, reqs, outcount, indices, "MPI_Testsome")))
        return rc;
    mpi_progress();
    some_collect(incount, reqs, outcount, indices);
    if (*outcount == MPI_UNDEFINED || *outcount == 0)
        return MPI_SUCCESS;
    return finish_many(incount, reqs, statuses, indices, *outcount,
                       "MPI_Testsome");
}
SHOAL_MPI_WEAK(Testsome)

int PMPI_Request_get_status(MPI_Request request, int *flag,
                            MPI_Status *status)
{
    int rc;

    MPI_CHECK_INIT("MPI_Request_get_status");
    if ((rc = check_req(request, "MPI_Request_get_status")) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Request_get_status",
                         "flag is NULL");
    if (inactive(request)) {
        *flag = 1;
        status_empty(status);
        return MPI_SUCCESS;
    }
    *flag = test_once(request);
    if (*flag)
        status_out(status, request);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Request_get_status)

int PMPI_Request_free(MPI_Request *request)
{
    MPI_Request r;
    int rc;

    MPI_CHECK_INIT("MPI_Request_free");
    if (request == NULL || *request == MPI_REQUEST_NULL)
        return mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Request_free",
                         "request is NULL or MPI_REQUEST_NULL");
    r = *request;
    if ((rc = check_req(r, "MPI_Request_free")) != MPI_SUCCESS)
        return rc;
    *request = MPI_REQUEST_NULL;
    if ((r->persistent && !r->active) || mpi_req_is_done(r)) {
        r->persistent = 0;
        mpi_req_retire(&r);
        return MPI_SUCCESS;
    }
    /* Still running: it goes when it completes. */
    r->persistent = 0;
    r->user_freed = 1;
    mpi_lock();
    mpi_req_free_later(r);
    mpi_unlock();
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Request_free)

int PMPI_Cancel(MPI_Request *request)
{
    MPI_Request r;
    int rc;

    MPI_CHECK_INIT("MPI_Cancel");
    if (request == NULL || *request == MPI_REQUEST_NULL)
        return mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Cancel",
                         "request is NULL or MPI_REQUEST_NULL");
    r = *request;
    if ((rc = check_req(r, "MPI_Cancel")) != MPI_SUCCESS)
        return rc;
    if (r->persistent && !r->active)
        return mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                         "persistent request not started");
    if (r->kind == MPI_REQ_GREQ) {
        if (r->cancel_fn != NULL)
            r->cancel_fn(r, mpi_req_is_done(r));
        return MPI_SUCCESS;
    }
    if (r->kind == MPI_REQ_FILE) {
        /* A file access not started yet is cancelled (src/io). */
        if (r->cancel_fn != NULL && !mpi_req_is_done(r))
            r->cancel_fn(r, 0);
        return MPI_SUCCESS;
    }
    if (r->kind != MPI_REQ_RECV)
        return MPI_SUCCESS; /* sends that started are not cancelled */
    mpi_lock();
    if (mpi_posted_cancel(r)) {
        r->status.shoal_cancelled = 1;
        r->status.MPI_SOURCE = MPI_ANY_SOURCE;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.MPI_ERROR = MPI_SUCCESS;
        r->status.shoal_count = 0;
        mpi_req_complete(r);
    }
    mpi_unlock();
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    MPI_CHECK_INIT("MPI_Test_cancelled");
    if (status == NULL || status == MPI_STATUS_IGNORE || flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled",
                         "status or flag is NULL or MPI_STATUS_IGNORE");
    *flag = status->shoal_cancelled != 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Test_cancelled)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    MPI_CHECK_INIT("MPI_Status_set_cancelled");
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                         "status is NULL or MPI_STATUS_IGNORE");
    status->shoal_cancelled = flag != 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Status_set_cancelled)

/* ---- persistent requests ------------------------------------------------------------- */

static int start_one(MPI_Request r, const char *fn)
{
    int rc;

    if (r == MPI_REQUEST_NULL || r->magic != MPI_MAGIC_REQ || !r->persistent)
        return mpi_error(NULL, MPI_ERR_REQUEST, fn,
                         "not a persistent request");
    if (r->active)
        return mpi_error(r->comm, MPI_ERR_REQUEST, fn,
                         "request already active");
    r->active = 1;
    __atomic_store_n(&r->done, 0, __ATOMIC_RELAXED);
    memset(&r->status, 0, sizeof(r->status));
    mpi_lock();
    if (r->kind == MPI_REQ_COLL)
        rc = mpi_coll_start(r);
    else if (r->kind == MPI_REQ_RECV)
        rc = mpi_recv_start(r);
    else if (r->mode == MPI_P2P_BUFFERED)
        rc = mpi_bsend_start(r, 0);
    else
        rc = mpi_send_start(r);
    mpi_unlock();
    if (rc != MPI_SUCCESS)
        return mpi_error(r->comm, rc, fn, "starting failed: %s",
                         shoal_error_detail());
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Start");
    if (request == NULL)
        return mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Start",
                         "request is NULL");
    return start_one(*request, "MPI_Start");
}
SHOAL_MPI_WEAK(Start)

int PMPI_Startall(int count, MPI_Request requests[])
{
    MPI_CHECK_INIT("MPI_Startall");
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Startall",
                         "bad count %d or NULL array", count);
    for (int i = 0; i < count; i++) {
        int rc = start_one(requests[i], "MPI_Startall");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Startall)

/* ---- generalized requests --------------------------------------------------------------- */

typedef struct greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *state;
} greq_t;

static int greq_query(MPI_Request r, MPI_Status *status)
{
    greq_t *g = r->extra;

    return g->query ? g->query(g->state, status) : MPI_SUCCESS;
}

static int greq_free(MPI_Request r)
{
    greq_t *g = r->extra;
    int rc = g->free ? g->free(g->state) : MPI_SUCCESS;

    free(g);
    r->extra = NULL;
    return rc;
}

static int greq_cancel(MPI_Request r, int complete)
{
    greq_t *g = r->extra;

    return g->cancel ? g->cancel(g->state, complete) : MPI_SUCCESS;
}

int mpi_req_greq_fns(const struct shoal_mpi_request *r, uint64_t *query,
                     uint64_t *free_fn, uint64_t *cancel, uint64_t *state)
{
    const greq_t *g = r->extra;

    if (r->kind != MPI_REQ_GREQ || r->free_fn != greq_free || g == NULL)
        return 0;
    *query = (uint64_t)(uintptr_t)g->query;
    *free_fn = (uint64_t)(uintptr_t)g->free;
    *cancel = (uint64_t)(uintptr_t)g->cancel;
    *state = (uint64_t)(uintptr_t)g->state;
    return 1;
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn,
                        void *extra_state, MPI_Request *request)
{
    greq_t *g;
    MPI_Request r;

    MPI_CHECK_INIT("MPI_Grequest_start");
    if (request == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Grequest_start",
                         "request is NULL");
    g = malloc(sizeof(*g));
    r = g ? mpi_req_alloc(MPI_REQ_GREQ, NULL) : NULL;
    if (r == NULL) {
        free(g);
        return mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start",
                         "out of memory");
    }
    *g = (greq_t){query_fn, free_fn, cancel_fn, extra_state};
    r->extra = g;
    r->query_fn = greq_query;
    r->free_fn = greq_free;
    r->cancel_fn = greq_cancel;
    *request = r;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    MPI_CHECK_INIT("MPI_Grequest_complete");
    if (request == NULL || request->magic != MPI_MAGIC_REQ ||
        request->kind != MPI_REQ_GREQ)
        return mpi_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                         "not a generalized request");
    mpi_req_complete(request);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Grequest_complete)
