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
 * Intercommunicator parents are duplicated at once (blocking).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

#define IDUP_TAG_BASE (-8192) /* [-8192 - 2^20, -8192]: see comm.h */
#define IDUP_MAX_STEPS 72

enum { STEP_SEND, STEP_RECV_AND, STEP_RECV_SET };

typedef struct idup_step {
    int op, peer;
} idup_step_t;

typedef struct idup_state {
    MPI_Comm parent;
    MPI_Comm *newcomm;
    MPI_Info info;
    int tag;
    idup_step_t steps[IDUP_MAX_STEPS];
    int nsteps, next;
    MPI_Request pending;
    mpi_ctx_try_t t;
    mpi_ctx_mask_t in;
} idup_state_t;

/* The steps of this rank in reduce-to-0 then broadcast-from-0. */
static void plan(idup_state_t *s)
{
    int me = s->parent->rank, n = s->parent->size, top = 1, k = 0;

    for (int bit = 1; bit < n; bit <<= 1) {
        if (me & bit) {
            s->steps[k++] = (idup_step_t){STEP_SEND, me - bit};
            break;
        }
        if (me + bit < n)
            s->steps[k++] = (idup_step_t){STEP_RECV_AND, me + bit};
    }
    while (top < n)
        top <<= 1;
    if (me != 0) {
        top = me & -me;
        s->steps[k++] = (idup_step_t){STEP_RECV_SET, me - top};
    }
    for (int bit = top >> 1; bit > 0; bit >>= 1)
        if (me + bit < n)
            s->steps[k++] = (idup_step_t){STEP_SEND, me + bit};
    s->nsteps = k;
}

static void round_start(idup_state_t *s)
{
    mpi_ctx_begin(&s->t, s->parent->ctx);
    s->next = 0;
    s->pending = MPI_REQUEST_NULL;
}

static int post(idup_state_t *s, const idup_step_t *st)
{
    if (st->op == STEP_SEND)
        return mpi_isend_internal(&s->t.mask, sizeof(s->t.mask), MPI_BYTE,
                                  st->peer, s->tag, s->parent, 1,
                                  &s->pending);
    return mpi_irecv_internal(st->op == STEP_RECV_AND ? (void *)&s->in
                                                      : (void *)&s->t.mask,
                              sizeof(s->in), MPI_BYTE, st->peer, s->tag,
                              s->parent, 1, &s->pending);
}

/* Build the duplicate once the id is agreed. */
static int finish(idup_state_t *s, uint32_t ctx)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = mpi_comm_make(s->parent, s->parent->group, MPI_GROUP_NULL, ctx,
                           &c);

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

static void idup_fail(MPI_Request req, idup_state_t *s, int rc)
{
    req->status.MPI_ERROR = rc;
    if (s->t.owner)
        mpi_ctx_end(&s->t, &(mpi_ctx_mask_t){{0}, 0}, 0, &(uint32_t){0});
}

/* The poll function: 1 when the duplicate exists (or failed). */
static int idup_poll(MPI_Request req)
{
    idup_state_t *s = req->extra;
    uint32_t ctx;
    int rc;

    for (;;) {
        if (s->pending != MPI_REQUEST_NULL) {
            if (!mpi_req_is_done(s->pending))
                return 0;
            rc = mpi_wait_internal(&s->pending, NULL);
            if (rc != MPI_SUCCESS) {
                idup_fail(req, s, rc);
                return 1;
            }
            if (s->steps[s->next].op == STEP_RECV_AND)
                mpi_ctx_combine(&s->t.mask, &s->in, sizeof(s->in));
            s->next++;
        }
        if (s->next < s->nsteps) {
            rc = post(s, &s->steps[s->next]);
            if (rc != MPI_SUCCESS) {
                idup_fail(req, s, rc);
                return 1;
            }
            continue;
        }
        rc = mpi_ctx_end(&s->t, &s->t.mask, 1, &ctx);
        if (rc == -1) { /* another agreement owned the bitmap: again, on
                         * a later round of progress */
            round_start(s);
            return 0;
        }
        if (rc == MPI_SUCCESS)
            rc = finish(s, ctx);
        req->status.MPI_ERROR = rc;
        return 1;
    }
}

static int idup_free(MPI_Request req)
{
    idup_state_t *s = req->extra;

    if (s != NULL) {
        mpi_comm_release(s->parent);
        if (s->info != MPI_INFO_NULL)
            PMPI_Info_free(&s->info);
        free(s);
        req->extra = NULL;
    }
    return MPI_SUCCESS;
}

int mpi_comm_idup_start(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                        MPI_Request *request)
{
    idup_state_t *s = calloc(1, sizeof(*s));
    MPI_Request req;
    int rc;

    if (s == NULL)
        return MPI_ERR_NO_MEM;
    req = mpi_req_alloc(MPI_REQ_COLL, comm);
    if (req == NULL) {
        free(s);
        return MPI_ERR_NO_MEM;
    }
    s->parent = comm;
    mpi_ref_inc(&comm->refs);
    s->newcomm = newcomm;
    *newcomm = MPI_COMM_NULL; /* until the request completes */
    s->info = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL && (rc = PMPI_Info_dup(info, &s->info))) {
        mpi_comm_release(comm);
        free(s);
        mpi_req_free(req);
        return rc;
    }
    s->tag = IDUP_TAG_BASE - (int)(comm->next_child++ & 0xfffff);
    plan(s);
    s->t.nonblocking = 1;
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
