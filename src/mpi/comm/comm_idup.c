/*
 * MPI_Comm_idup: a duplicate that does not wait for the other ranks.
 *
 * The context agreement of Comm_dup (an AND of the members' free-id
 * bitmaps: binomial reduction to rank 0, binomial broadcast back) runs as
 * a list of steps, one nonblocking message each, that the progress engine
 * advances through the request's poll function.  Each idup on a parent
 * gets its own tag from the parent's count of idups, which every rank
 * advances in the same order (collective calls are ordered per
 * communicator), so several idups may be outstanding at once.
 * Intercommunicator parents agree the same way through the two leaders
 * (plan_inter), so their idups never wait either.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

#define IDUP_TAG_BASE (-8192) /* [-8192 - 2^20, -8192]: see comm.h */

/*
 * A step sends buf, or receives into it (RECV_SET) or into in, which it
 * then ANDs into buf (RECV_AND), into res with other (RECV_TOTAL: res =
 * other AND in), or drops (RECV_DROP); COPY sets res = buf.  Sends are
 * not waited for one by one: each buffer a send reads is final by then,
 * and the round ends when every send is done too.
 */
enum {
    STEP_SEND,
    STEP_RECV_AND,
    STEP_RECV_SET,
    STEP_RECV_TOTAL,
    STEP_RECV_DROP,
    STEP_COPY
};

typedef struct idup_step {
    int op, peer;
    mpi_ctx_mask_t *buf;
} idup_step_t;

typedef struct idup_state {
    MPI_Comm parent;
    MPI_Comm *newcomm;
    MPI_Info info;
    int tag;
    uint32_t nth; /* this idup's number on the parent */
    idup_step_t *steps;
    int nsteps, next;
    MPI_Request pending;  /* the receive of steps[next], if posted */
    MPI_Request *sends;   /* posted sends of this round */
    int nsends, err;
    mpi_ctx_try_t t;      /* t.mask: this rank's bitmap, then the
                           * reduction's accumulator */
    mpi_ctx_mask_t in, other, res;
    int alone; /* one process: mpi_ctx_alone first, no round */
    int joined; /* every member has started this idup */
} idup_state_t;

static void add(idup_state_t *s, int op, int peer, mpi_ctx_mask_t *buf)
{
    s->steps[s->nsteps++] = (idup_step_t){op, peer, buf};
}

/* Intracommunicator: binomial reduction to rank 0, broadcast back. */
static void plan_intra(idup_state_t *s)
{
    int me = s->parent->rank, n = s->parent->size, top = 1;

    for (int bit = 1; bit < n; bit <<= 1) {
        if (me & bit) {
            add(s, STEP_SEND, me - bit, &s->t.mask);
            break;
        }
        if (me + bit < n)
            add(s, STEP_RECV_AND, me + bit, &s->t.mask);
    }
    while (top < n)
        top <<= 1;
    if (me != 0) {
        top = me & -me;
        add(s, STEP_RECV_SET, me - top, &s->res);
    } else {
        add(s, STEP_COPY, 0, &s->t.mask);
    }
    for (int bit = top >> 1; bit > 0; bit >>= 1)
        if (me + bit < n)
            add(s, STEP_SEND, me + bit, &s->res);
}

/*
 * Intercommunicator (peers are remote ranks): everyone sends its bitmap
 * to the remote leader; each leader ANDs its remote group's into other,
 * the leaders swap those and AND them into res, and each sends res to its
 * whole remote group.  One tag serves all three messages: between two
 * processes they are sent and received in the same order.
 */
static void plan_inter(idup_state_t *s)
{
    int rsize = s->parent->remote_size;

    add(s, STEP_SEND, 0, &s->t.mask);
    if (s->parent->rank == 0) {
        for (int i = 0; i < rsize; i++)
            add(s, STEP_RECV_AND, i, &s->other);
        add(s, STEP_SEND, 0, &s->other);
        add(s, STEP_RECV_TOTAL, 0, &s->res);
        for (int i = 0; i < rsize; i++)
            add(s, STEP_SEND, i, &s->res);
        add(s, STEP_RECV_DROP, 0, &s->in);
    } else {
        add(s, STEP_RECV_SET, 0, &s->res);
    }
}

static int max_steps(MPI_Comm comm)
{
    return comm->is_inter ? 2 * comm->remote_size + 4 : 2 * 32 + 2;
}

/*
 * The first round only joins: it offers no id, owns no part of the
 * bitmap and waits in no queue (busy, so everyone goes again), and ends
 * once every member has started the idup.  Owning the bitmap, or being
 * the lowest waiter for it, while members have not started would stop
 * every other agreement of this process until they do, and they may only
 * start once one of those finished (MPICH's threads/comm/idup_deadlock:
 * on even ranks two threads start their idups only after the other two
 * threads' idups completed).  After the join every member advances the
 * rounds from its progress engine, so an owner's round always ends.
 */
static void round_start(idup_state_t *s)
{
    s->other.busy = 0;
    s->next = 0;
    s->pending = MPI_REQUEST_NULL;
    memset(s->other.free, 0xff, sizeof(s->other.free));
    if (!s->joined) {
        memset(&s->t.mask, 0, sizeof(s->t.mask));
        s->t.mask.busy = 1;
        return;
    }
    mpi_ctx_begin(&s->t, mpi_ctx_key(s->parent->ctx, s->nth));
}

static int post(idup_state_t *s, const idup_step_t *st)
{
    void *into = st->op == STEP_RECV_SET ? (void *)st->buf : (void *)&s->in;

    if (st->op == STEP_SEND)
        return mpi_isend_internal(st->buf, sizeof(*st->buf), MPI_BYTE,
                                  st->peer, s->tag, s->parent, 1,
                                  &s->sends[s->nsends++]);
    return mpi_irecv_internal(into, sizeof(s->in), MPI_BYTE, st->peer,
                              s->tag, s->parent, 1, &s->pending);
}

/* What a finished receive (or a local step) does with what it got. */
static void apply(idup_state_t *s, const idup_step_t *st)
{
    switch (st->op) {
    case STEP_RECV_AND:
        mpi_ctx_combine(st->buf, &s->in, sizeof(s->in));
        break;
    case STEP_RECV_TOTAL:
        s->res = s->other;
        mpi_ctx_combine(&s->res, &s->in, sizeof(s->in));
        break;
    case STEP_COPY:
        s->res = *st->buf;
        break;
    default:
        break;
    }
}

/* 1 when every send of the round is done (first error into s->err). */
static int sends_done(idup_state_t *s)
{
    for (int i = 0; i < s->nsends; i++)
        if (s->sends[i] != MPI_REQUEST_NULL && !mpi_req_is_done(s->sends[i]))
            return 0;
    for (int i = 0; i < s->nsends; i++) {
        int rc = s->sends[i] != MPI_REQUEST_NULL
                     ? mpi_wait_internal(&s->sends[i], NULL)
                     : MPI_SUCCESS;
        if (rc != MPI_SUCCESS && s->err == MPI_SUCCESS)
            s->err = rc;
    }
    s->nsends = 0;
    return 1;
}

/* Build the duplicate once the id is agreed. */
static int finish(idup_state_t *s, uint32_t ctx)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = mpi_comm_make(s->parent, s->parent->group,
                           s->parent->is_inter ? s->parent->remote_group
                                               : MPI_GROUP_NULL,
                           ctx, &c);

    if (rc != MPI_SUCCESS)
        return rc;
    if (s->info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(s->info, &c->info);
    if (rc == MPI_SUCCESS)
        rc = mpi_comm_dup_hook(s->parent, c);
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(c);
        return rc;
    }
    *s->newcomm = c;
    return MPI_SUCCESS;
}

/* The poll function: 1 when the duplicate exists (or failed). */
static int idup_poll(MPI_Request req)
{
    idup_state_t *s = req->extra;
    uint32_t ctx;
    int rc;

    if (s->alone) {
        s->alone = 0;
        if (mpi_ctx_alone(&ctx) == MPI_SUCCESS) {
            req->status.MPI_ERROR = finish(s, ctx);
            return 1;
        }
        round_start(s); /* both halves owned: agree as usual */
    }
    while (s->err == MPI_SUCCESS && s->next < s->nsteps) {
        const idup_step_t *st = &s->steps[s->next];
        if (s->pending != MPI_REQUEST_NULL) {
            if (!mpi_req_is_done(s->pending))
                return 0;
            rc = mpi_wait_internal(&s->pending, NULL);
            if (rc != MPI_SUCCESS) {
                s->err = rc;
                break;
            }
            apply(s, st);
            s->next++;
            continue;
        }
        if (st->op == STEP_COPY) {
            apply(s, st);
            s->next++;
            continue;
        }
        rc = post(s, st);
        if (rc != MPI_SUCCESS)
            s->err = rc;
        else if (st->op == STEP_SEND)
            s->next++;
    }
    /* Sends read the state's buffers: all done before a new round, or
     * before the request completes and the state goes. */
    if (!sends_done(s))
        return 0;
    if (s->err == MPI_SUCCESS && !s->joined) {
        s->joined = 1;
        round_start(s);
        return 0;
    }
    if (s->err != MPI_SUCCESS) {
        /* Give up the bitmap, or the place among its waiters. */
        mpi_ctx_end(&s->t, &(mpi_ctx_mask_t){{0}, 0, 0, 0}, 0, &(uint32_t){0});
        req->status.MPI_ERROR = s->err;
        return 1;
    }
    rc = mpi_ctx_end(&s->t, &s->res, 1, &ctx);
    if (rc == -1) { /* another agreement owned the bitmap: again, on a
                     * later round of progress */
        round_start(s);
        return 0;
    }
    if (rc == MPI_SUCCESS)
        rc = finish(s, ctx);
    req->status.MPI_ERROR = rc;
    return 1;
}

static int idup_free(MPI_Request req)
{
    idup_state_t *s = req->extra;

    if (s != NULL) {
        mpi_comm_release(s->parent);
        if (s->info != MPI_INFO_NULL)
            PMPI_Info_free(&s->info);
        free(s->steps);
        free(s->sends);
        free(s);
        req->extra = NULL;
    }
    return MPI_SUCCESS;
}

int mpi_comm_idup_start(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                        MPI_Request *request)
{
    idup_state_t *s = calloc(1, sizeof(*s));
    MPI_Request req = NULL;
    int n = max_steps(comm), rc;

    if (s != NULL) {
        s->steps = calloc((size_t)n, sizeof(*s->steps));
        s->sends = calloc((size_t)n, sizeof(*s->sends));
        req = mpi_req_alloc(MPI_REQ_COLL, comm);
    }
    if (s == NULL || s->steps == NULL || s->sends == NULL || req == NULL) {
        if (s != NULL) {
            free(s->steps);
            free(s->sends);
        }
        free(s);
        if (req != NULL)
            mpi_req_free(req);
        return MPI_ERR_NO_MEM;
    }
    s->parent = comm;
    mpi_ref_inc(&comm->refs);
    s->newcomm = newcomm;
    *newcomm = MPI_COMM_NULL; /* until the request completes */
    s->info = MPI_INFO_NULL;
    /* With an info argument (even MPI_INFO_NULL: no hints) the duplicate
     * takes its hints, not the parent's (comm_dup.c). */
    if (info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(info, &s->info);
    else
        rc = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(comm);
        free(s->steps);
        free(s->sends);
        free(s);
        mpi_req_free(req);
        return rc;
    }
    s->nth = comm->next_child++;
    if (s->nth == MPI_CTX_NTH_BLOCKING) /* (after 2^32 idups) */
        s->nth = comm->next_child++;
    s->tag = IDUP_TAG_BASE - (int)(s->nth & 0xfffff);
    if (comm->is_inter)
        plan_inter(s);
    else
        plan_intra(s);
    s->t.nonblocking = 1;
    /* Alone, it must not wait for the bitmap behind an agreement that
     * waits for other processes (comm_ctx.c, mpi_ctx_alone). */
    s->alone = !comm->is_inter && comm->size == 1;
    s->pending = MPI_REQUEST_NULL;
    if (!s->alone)
        round_start(s);
    req->extra = s;
    req->poll_fn = idup_poll;
    req->free_fn = idup_free;
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    *request = req;
    mpi_req_add_poll(req);
    return MPI_SUCCESS;
}
