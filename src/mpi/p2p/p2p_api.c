/*
 * The point-to-point calls: argument checks, then the engine.
 *
 * Every call checks all of its arguments in one expression and only a
 * failing call pays for finding out which one is wrong.  int-count calls
 * are the MPI_Count (_c) calls with the count widened.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "mpi/p2p/p2p_engine.h"

/* ---- argument checks ------------------------------------------------------- */

#define CHK_SEND 0
#define CHK_RECV 1

static int p2p_error(MPI_Comm comm, const void *buf, MPI_Count count,
                     MPI_Datatype dt, int rank, int tag, int kind,
                     const char *fn)
{
    int n;

    if (!mpi_comm_ok(comm))
        return mpi_error(NULL, MPI_ERR_COMM, fn,
                         comm == MPI_COMM_NULL
                             ? "communicator is MPI_COMM_NULL"
                             : "not a communicator (freed?)");
    if (comm->revoked)
        return mpi_error(comm, MPIX_ERR_REVOKED, fn,
                         "the communicator was revoked (MPIX_Comm_revoke)");
    if (count < 0)
        return mpi_error(comm, MPI_ERR_COUNT, fn, "count %lld is negative",
                         (long long)count);
    if (dt == MPI_DATATYPE_NULL || dt->magic != MPI_MAGIC_DT)
        return mpi_error(comm, MPI_ERR_TYPE, fn,
                         dt == MPI_DATATYPE_NULL ? "datatype is "
                                                   "MPI_DATATYPE_NULL"
                                                 : "not a datatype (freed?)");
    if (!(dt->flags & MPI_DT_COMMITTED))
        return mpi_error(comm, MPI_ERR_TYPE, fn,
                         "datatype %s is not committed (MPI_Type_commit)",
                         dt->name[0] ? dt->name : "(unnamed)");
    if (buf == NULL && count > 0 && dt->size > 0 && dt->true_lb == 0)
        return mpi_error(comm, MPI_ERR_BUFFER, fn,
                         "buffer is NULL but count is %lld",
                         (long long)count);
    n = comm->remote_size;
    if (!(rank == MPI_PROC_NULL ||
          (kind == CHK_RECV && rank == MPI_ANY_SOURCE) ||
          (rank >= 0 && rank < n)))
        return mpi_error(comm, MPI_ERR_RANK, fn,
                         "%s rank %d out of range [0, %d)",
                         kind == CHK_SEND ? "destination" : "source", rank,
                         n);
    if (!(tag >= 0 || (kind == CHK_RECV && tag == MPI_ANY_TAG)))
        return mpi_error(comm, MPI_ERR_TAG, fn,
                         "tag %d invalid: tags are 0..MPI_TAG_UB%s", tag,
                         kind == CHK_RECV ? " or MPI_ANY_TAG" : "");
    return mpi_error(comm, MPI_ERR_INTERN, fn, "bad arguments");
}

static inline int p2p_ok(MPI_Comm comm, const void *buf, MPI_Count count,
                         MPI_Datatype dt, int rank, int tag, int kind)
{
    return mpi_comm_ok(comm) && !comm->revoked && count >= 0 && dt != NULL &&
           dt->magic == MPI_MAGIC_DT && (dt->flags & MPI_DT_COMMITTED) &&
           (buf != NULL || count == 0 || dt->size == 0 || dt->true_lb != 0) &&
           ((unsigned)rank < (unsigned)comm->remote_size ||
            rank == MPI_PROC_NULL ||
            (kind == CHK_RECV && rank == MPI_ANY_SOURCE)) &&
           (tag >= 0 || (kind == CHK_RECV && tag == MPI_ANY_TAG));
}

#define P2P_CHECK(comm, buf, count, dt, rank, tag, kind, fn)                 \
    do {                                                                     \
        MPI_CHECK_INIT(fn);                                                  \
        if (BASE_UNLIKELY(                                                   \
                !p2p_ok(comm, buf, count, dt, rank, tag, kind)))             \
            return p2p_error(comm, buf, count, dt, rank, tag, kind, fn);     \
    } while (0)

static int check_req_out(MPI_Comm comm, MPI_Request *request, const char *fn)
{
    if (request == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "request pointer is NULL");
    return MPI_SUCCESS;
}

/* ---- building and running requests ------------------------------------------------ */

static MPI_Request p2p_req(int kind, const void *buf, MPI_Count count,
                           MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                           int mode, int ctx_off)
{
    MPI_Request r = mpi_req_alloc(kind, comm);

    if (r == NULL)
        return NULL;
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    mpi_dt_retain(dt);
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
    r->ctx_off = ctx_off;
    return r;
}

static int start_req(MPI_Request r)
{
    int rc;

    mpi_lock();
    if (r->kind == MPI_REQ_RECV)
        rc = mpi_recv_start(r);
    else if (r->mode == MPI_P2P_BUFFERED)
        rc = mpi_bsend_start(r, 0);
    else
        rc = mpi_send_start(r);
    mpi_unlock();
    return rc;
}

/* The error of a send that could not start. */
static int send_error(MPI_Comm comm, int rc, const char *fn, int dest)
{
    if (rc == MPI_ERR_BUFFER)
        return mpi_error(comm, rc, fn,
                         "no room in the attached buffer (MPI_Buffer_attach;"
                         " each buffered message needs its packed size plus "
                         "MPI_BSEND_OVERHEAD until it leaves)");
    return mpi_error(comm, rc, fn, "send to rank %d failed: %s", dest,
                     shoal_error_detail());
}

static int isend_any(const void *buf, MPI_Count count, MPI_Datatype dt,
                     int dest, int tag, MPI_Comm comm, int mode,
                     MPI_Request *request, const char *fn)
{
    int rc = check_req_out(comm, request, fn);
    MPI_Request r;

    if (rc != MPI_SUCCESS)
        return rc;
    r = p2p_req(MPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, 0);
    if (r == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory for a request");
    rc = start_req(r);
    if (rc != MPI_SUCCESS) {
        mpi_req_free(r);
        return send_error(comm, rc, fn, dest);
    }
    *request = r;
    return MPI_SUCCESS;
}

/* Wait for a request of ours and release it; the status is copied out. */
static int wait_own(MPI_Request r, MPI_Status *status, const char *fn)
{
    int rc = mpi_req_wait_done(r);
    MPI_Comm comm = r->comm;

    if (rc == MPI_SUCCESS)
        rc = r->status.MPI_ERROR;
    mpi_status_give(status, &r->status);
    if (comm != NULL)
        __atomic_add_fetch(&comm->refs, 1, __ATOMIC_RELAXED);
    mpi_req_free(r);
    if (rc != MPI_SUCCESS)
        rc = mpi_error(comm, rc, fn,
                       rc == MPI_ERR_TRUNCATE
                           ? "message longer than the receive buffer"
                           : "communication failed: %s",
                       shoal_error_detail());
    if (comm != NULL)
        mpi_comm_release(comm);
    return rc;
}

static int send_blocking(const void *buf, MPI_Count count, MPI_Datatype dt,
                         int dest, int tag, MPI_Comm comm, int mode,
                         const char *fn)
{
    MPI_Request r;
    int rc;

    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (mode == MPI_P2P_STANDARD || mode == MPI_P2P_READY) {
        mpi_lock();
        rc = mpi_send_eager_fast(buf, count, dt, dest, tag, comm);
        mpi_unlock();
        if (BASE_LIKELY(rc == 1))
            return MPI_SUCCESS;
        if (rc < 0)
            return mpi_error(comm, -rc, fn, "send to rank %d failed: %s",
                             dest, shoal_error_detail());
    }
    if (mode == MPI_P2P_BUFFERED) {
        r = p2p_req(MPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, 0);
        if (r == NULL)
            return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
        mpi_lock();
        rc = mpi_bsend_start(r, 1);
        mpi_unlock();
        if (rc != MPI_SUCCESS) {
            mpi_req_free(r);
            return send_error(comm, rc, fn, dest);
        }
        return wait_own(r, MPI_STATUS_IGNORE, fn);
    }
    r = p2p_req(MPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, 0);
    if (r == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    r->blocking = 1;
    rc = start_req(r);
    if (rc != MPI_SUCCESS) {
        mpi_req_free(r);
        return send_error(comm, rc, fn, dest);
    }
    return wait_own(r, MPI_STATUS_IGNORE, fn);
}

static void status_proc_null(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    status->shoal_count = 0;
    status->shoal_cancelled = 0;
}

static int recv_blocking(void *buf, MPI_Count count, MPI_Datatype dt,
                         int source, int tag, MPI_Comm comm,
                         MPI_Status *status, const char *fn)
{
    struct shoal_mpi_request req;
    int rc;

    if (source == MPI_PROC_NULL) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    /* A request on the stack: the call does not return before it is done.
     * Only the fields the engine reads are set (no memset on this path). */
    req.magic = MPI_MAGIC_REQ;
    req.persistent = 0;
    req.user_freed = 0;
    req.blocking = 1;
    req.ctx_off = 0;
    req.mode = 0;
    req.bsend_block = NULL;
    req.extra = NULL;
    req.link.next = NULL;
    req.kind = MPI_REQ_RECV;
    req.comm = comm;
    req.buf = buf;
    req.count = count;
    req.dt = dt;
    req.peer = source;
    req.tag = tag;
    mpi_lock();
    rc = mpi_recv_start(&req);
    mpi_unlock();
    if (rc == MPI_SUCCESS && !mpi_req_is_done(&req))
        rc = mpi_req_wait_done(&req);
    if (rc == MPI_SUCCESS)
        rc = req.status.MPI_ERROR;
    mpi_status_give(status, &req.status);
    if (rc == MPI_ERR_TRUNCATE)
        return mpi_error(comm, rc, fn,
                         "message of %lld bytes from rank %d (tag %d) "
                         "longer than the receive buffer (%lld bytes)",
                         (long long)req.status.shoal_count,
                         req.status.MPI_SOURCE, req.status.MPI_TAG,
                         (long long)(count * dt->size));
    /* A receive that failed before it matched (a dead peer, a revoked
     * communicator) has no status of a message: name what was asked. */
    if (rc != MPI_SUCCESS && source == MPI_ANY_SOURCE)
        return mpi_error(comm, rc, fn,
                         "receive from MPI_ANY_SOURCE (tag %d, buffer %lld "
                         "bytes) failed",
                         tag, (long long)(count * dt->size));
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn,
                         "receive from rank %d (tag %d, buffer %lld bytes) "
                         "failed",
                         source, tag, (long long)(count * dt->size));
    return MPI_SUCCESS;
}

/* ---- blocking sends and receives ----------------------------------------------------- */

#define SEND_FN(Name, mode)                                                  \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype dt,   \
                        int dest, int tag, MPI_Comm comm)                    \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND,                 \
                  "MPI_" #Name "_c");                                        \
        return send_blocking(buf, count, dt, dest, tag, comm, mode,          \
                             "MPI_" #Name "_c");                             \
    }                                                                        \
    SHOAL_MPI_WEAK(Name##_c)                                                 \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype dt, int dest,   \
                    int tag, MPI_Comm comm)                                  \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND, "MPI_" #Name);  \
        return send_blocking(buf, count, dt, dest, tag, comm, mode,          \
                             "MPI_" #Name);                                  \
    }                                                                        \
    SHOAL_MPI_WEAK(Name)

SEND_FN(Send, MPI_P2P_STANDARD)
SEND_FN(Ssend, MPI_P2P_SYNC)
SEND_FN(Bsend, MPI_P2P_BUFFERED)
SEND_FN(Rsend, MPI_P2P_READY)

#define ISEND_FN(Name, mode)                                                 \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype dt,   \
                        int dest, int tag, MPI_Comm comm,                    \
                        MPI_Request *request)                                \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND,                 \
                  "MPI_" #Name "_c");                                        \
        return isend_any(buf, count, dt, dest, tag, comm, mode, request,     \
                         "MPI_" #Name "_c");                                 \
    }                                                                        \
    SHOAL_MPI_WEAK(Name##_c)                                                 \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype dt, int dest,   \
                    int tag, MPI_Comm comm, MPI_Request *request)            \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND, "MPI_" #Name);  \
        return isend_any(buf, count, dt, dest, tag, comm, mode, request,     \
                         "MPI_" #Name);                                      \
    }                                                                        \
    SHOAL_MPI_WEAK(Name)

ISEND_FN(Isend, MPI_P2P_STANDARD)
ISEND_FN(Issend, MPI_P2P_SYNC)
ISEND_FN(Ibsend, MPI_P2P_BUFFERED)
ISEND_FN(Irsend, MPI_P2P_READY)

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source,
                int tag, MPI_Comm comm, MPI_Status *status)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Recv_c");
    return recv_blocking(buf, count, dt, source, tag, comm, status,
                         "MPI_Recv_c");
}
SHOAL_MPI_WEAK(Recv_c)

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
              MPI_Comm comm, MPI_Status *status)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Recv");
    return recv_blocking(buf, count, dt, source, tag, comm, status,
                         "MPI_Recv");
}
SHOAL_MPI_WEAK(Recv)

static int irecv_any(void *buf, MPI_Count count, MPI_Datatype dt, int source,
                     int tag, MPI_Comm comm, MPI_Request *request,
                     const char *fn)
{
    int rc = check_req_out(comm, request, fn);
    MPI_Request r;

    if (rc != MPI_SUCCESS)
        return rc;
    r = p2p_req(MPI_REQ_RECV, buf, count, dt, source, tag, comm, 0, 0);
    if (r == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory for a request");
    rc = start_req(r);
    if (rc != MPI_SUCCESS) {
        mpi_req_free(r);
        return mpi_error(comm, rc, fn, "receive failed");
    }
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source,
                 int tag, MPI_Comm comm, MPI_Request *request)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Irecv_c");
    return irecv_any(buf, count, dt, source, tag, comm, request,
                     "MPI_Irecv_c");
}
SHOAL_MPI_WEAK(Irecv_c)

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Irecv");
    return irecv_any(buf, count, dt, source, tag, comm, request, "MPI_Irecv");
}
SHOAL_MPI_WEAK(Irecv)

/* ---- persistent requests ----------------------------------------------------------------- */

static int init_any(int kind, const void *buf, MPI_Count count,
                    MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                    int mode, MPI_Request *request, const char *fn)
{
    int rc = check_req_out(comm, request, fn);
    MPI_Request r;

    if (rc != MPI_SUCCESS)
        return rc;
    r = p2p_req(kind, buf, count, dt, peer, tag, comm, mode, 0);
    if (r == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory for a request");
    r->persistent = 1;
    *request = r;
    return MPI_SUCCESS;
}

#define SEND_INIT_FN(Name, mode)                                             \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype dt,   \
                        int dest, int tag, MPI_Comm comm,                    \
                        MPI_Request *request)                                \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND,                 \
                  "MPI_" #Name "_c");                                        \
        return init_any(MPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, \
                        request, "MPI_" #Name "_c");                         \
    }                                                                        \
    SHOAL_MPI_WEAK(Name##_c)                                                 \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype dt, int dest,   \
                    int tag, MPI_Comm comm, MPI_Request *request)            \
    {                                                                        \
        P2P_CHECK(comm, buf, count, dt, dest, tag, CHK_SEND, "MPI_" #Name);  \
        return init_any(MPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, \
                        request, "MPI_" #Name);                              \
    }                                                                        \
    SHOAL_MPI_WEAK(Name)

SEND_INIT_FN(Send_init, MPI_P2P_STANDARD)
SEND_INIT_FN(Ssend_init, MPI_P2P_SYNC)
SEND_INIT_FN(Bsend_init, MPI_P2P_BUFFERED)
SEND_INIT_FN(Rsend_init, MPI_P2P_READY)

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype dt, int source,
                     int tag, MPI_Comm comm, MPI_Request *request)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Recv_init_c");
    return init_any(MPI_REQ_RECV, buf, count, dt, source, tag, comm, 0,
                    request, "MPI_Recv_init_c");
}
SHOAL_MPI_WEAK(Recv_init_c)

int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source,
                   int tag, MPI_Comm comm, MPI_Request *request)
{
    P2P_CHECK(comm, buf, count, dt, source, tag, CHK_RECV, "MPI_Recv_init");
    return init_any(MPI_REQ_RECV, buf, count, dt, source, tag, comm, 0,
                    request, "MPI_Recv_init");
}
SHOAL_MPI_WEAK(Recv_init)

/* ---- send-receive ------------------------------------------------------------------------ */

/* Post the receive, then the send, of a send-receive (arguments checked). */
static int sendrecv_start(const void *sbuf, MPI_Count scount,
                          MPI_Datatype sdt, int dest, int stag, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rdt, int source,
                          int rtag, MPI_Comm comm, MPI_Request *rr_p,
                          MPI_Request *sr_p, const char *fn)
{
    MPI_Request rr, sr;
    int rc;

    rr = p2p_req(MPI_REQ_RECV, rbuf, rcount, rdt, source, rtag, comm, 0, 0);
    sr = p2p_req(MPI_REQ_SEND, sbuf, scount, sdt, dest, stag, comm,
                 MPI_P2P_STANDARD, 0);
    if (rr == NULL || sr == NULL) {
        if (rr)
            mpi_req_free(rr);
        if (sr)
            mpi_req_free(sr);
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    rc = start_req(rr);
    if (rc == MPI_SUCCESS)
        rc = start_req(sr);
    if (rc != MPI_SUCCESS) {
        mpi_lock();
        mpi_posted_cancel(rr);
        mpi_unlock();
        mpi_req_free(rr);
        mpi_req_free(sr);
        return mpi_error(comm, rc, fn, "failed: %s", shoal_error_detail());
    }
    *rr_p = rr;
    *sr_p = sr;
    return MPI_SUCCESS;
}

static int sendrecv_any(const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                        int dest, int stag, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rdt, int source, int rtag,
                        MPI_Comm comm, MPI_Status *status, const char *fn)
{
    MPI_Request rr = NULL, sr = NULL;
    int rc;

    P2P_CHECK(comm, sbuf, scount, sdt, dest, stag, CHK_SEND, fn);
    P2P_CHECK(comm, rbuf, rcount, rdt, source, rtag, CHK_RECV, fn);
    rc = sendrecv_start(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt,
                        source, rtag, comm, &rr, &sr, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = wait_own(sr, MPI_STATUS_IGNORE, fn);
    if (rc != MPI_SUCCESS) {
        mpi_req_free_later(rr);
        return rc;
    }
    return wait_own(rr, status, fn);
}

/*
 * MPI_Isendrecv(_replace): one request over the two, advanced by the
 * progress engine's poll list; it completes when both have, with the
 * receive's status (or the send's error).
 */
typedef struct isendrecv {
    MPI_Request rr, sr;
    void *copy; /* _replace: the packed outgoing data */
} isendrecv_t;

static int isendrecv_poll(MPI_Request r)
{
    isendrecv_t *x = r->extra;

    if (!mpi_req_is_done(x->rr) || !mpi_req_is_done(x->sr))
        return 0;
    r->status = x->rr->status;
    if (r->status.MPI_ERROR == MPI_SUCCESS)
        r->status.MPI_ERROR = x->sr->status.MPI_ERROR;
    return 1;
}

static int isendrecv_free(MPI_Request r)
{
    isendrecv_t *x = r->extra;

    if (x == NULL)
        return MPI_SUCCESS;
    /* Freed before completion (MPI_Request_free): let them finish. */
    if (mpi_req_is_done(x->rr))
        mpi_req_free(x->rr);
    else
        mpi_req_free_later(x->rr);
    if (mpi_req_is_done(x->sr))
        mpi_req_free(x->sr);
    else
        mpi_req_free_later(x->sr);
    free(x->copy);
    free(x);
    r->extra = NULL;
    return MPI_SUCCESS;
}

static int isendrecv_any(const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                         int dest, int stag, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rdt, int source, int rtag,
                         MPI_Comm comm, void *copy, MPI_Request *request,
                         const char *fn)
{
    isendrecv_t *x = calloc(1, sizeof(*x));
    MPI_Request r = NULL;
    int rc;

    if (x != NULL)
        r = mpi_req_alloc(MPI_REQ_COLL, comm);
    if (r == NULL) {
        free(x);
        free(copy);
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    rc = sendrecv_start(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt,
                        source, rtag, comm, &x->rr, &x->sr, fn);
    if (rc != MPI_SUCCESS) {
        free(x);
        free(copy);
        mpi_req_free(r);
        return rc;
    }
    x->copy = copy;
    r->extra = x;
    r->poll_fn = isendrecv_poll;
    r->free_fn = isendrecv_free;
    mpi_lock();
    if (isendrecv_poll(r))
        mpi_req_complete(r);
    else
        mpi_req_add_poll(r);
    mpi_unlock();
    *request = r;
    return MPI_SUCCESS;
}

int mpi_req_is_isendrecv(const struct shoal_mpi_request *r)
{
    return r->poll_fn == isendrecv_poll;
}

static int isendrecv_checked(const void *sbuf, MPI_Count scount,
                             MPI_Datatype sdt, int dest, int stag, void *rbuf,
                             MPI_Count rcount, MPI_Datatype rdt, int source,
                             int rtag, MPI_Comm comm, MPI_Request *request,
                             const char *fn)
{
    P2P_CHECK(comm, sbuf, scount, sdt, dest, stag, CHK_SEND, fn);
    P2P_CHECK(comm, rbuf, rcount, rdt, source, rtag, CHK_RECV, fn);
    int rc = check_req_out(comm, request, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    return isendrecv_any(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt,
                         source, rtag, comm, NULL, request, fn);
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   int dest, int sendtag, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_checked(sendbuf, sendcount, sendtype, dest, sendtag,
                             recvbuf, recvcount, recvtype, source, recvtag,
                             comm, request, "MPI_Isendrecv");
}
SHOAL_MPI_WEAK(Isendrecv)

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_checked(sendbuf, sendcount, sendtype, dest, sendtag,
                             recvbuf, recvcount, recvtype, source, recvtag,
                             comm, request, "MPI_Isendrecv_c");
}
SHOAL_MPI_WEAK(Isendrecv_c)

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_any(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                        recvcount, recvtype, source, recvtag, comm, status,
                        "MPI_Sendrecv");
}
SHOAL_MPI_WEAK(Sendrecv)

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm,
                    MPI_Status *status)
{
    return sendrecv_any(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                        recvcount, recvtype, source, recvtag, comm, status,
                        "MPI_Sendrecv_c");
}
SHOAL_MPI_WEAK(Sendrecv_c)

/* A packed copy of buf, sent while the reply lands in buf itself. */
static int replace_copy(void *buf, MPI_Count count, MPI_Datatype dt,
                        MPI_Comm comm, void **copy_p, MPI_Count *bytes_p,
                        const char *fn)
{
    MPI_Count bytes = count * dt->size;
    void *tmp = malloc(bytes > 0 ? (size_t)bytes : 1);

    if (tmp == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                         "no memory for a %lld-byte copy", (long long)bytes);
    if (bytes > 0) {
        mpi_dt_cursor_t c;
        mpi_dt_cursor_init(&c, dt, count, buf, 0);
        mpi_dt_cursor_pack(&c, tmp, bytes);
    }
    *copy_p = tmp;
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

static int sendrecv_replace_any(void *buf, MPI_Count count, MPI_Datatype dt,
                                int dest, int stag, int source, int rtag,
                                MPI_Comm comm, MPI_Status *status, int nb,
                                MPI_Request *request, const char *fn)
{
    MPI_Count bytes = 0;
    void *tmp = NULL;
    int rc;

    P2P_CHECK(comm, buf, count, dt, dest, stag, CHK_SEND, fn);
    P2P_CHECK(comm, buf, count, dt, source, rtag, CHK_RECV, fn);
    if (nb && (rc = check_req_out(comm, request, fn)) != MPI_SUCCESS)
        return rc;
    rc = replace_copy(buf, count, dt, comm, &tmp, &bytes, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nb) /* the request frees the copy */
        return isendrecv_any(tmp, bytes, MPI_BYTE, dest, stag, buf, count,
                             dt, source, rtag, comm, tmp, request, fn);
    rc = sendrecv_any(tmp, bytes, MPI_BYTE, dest, stag, buf, count, dt,
                      source, rtag, comm, status, fn);
    free(tmp);
    return rc;
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                          int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_any(buf, count, datatype, dest, sendtag, source,
                                recvtag, comm, status, 0, NULL,
                                "MPI_Sendrecv_replace");
}
SHOAL_MPI_WEAK(Sendrecv_replace)

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                            int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_any(buf, count, datatype, dest, sendtag, source,
                                recvtag, comm, status, 0, NULL,
                                "MPI_Sendrecv_replace_c");
}
SHOAL_MPI_WEAK(Sendrecv_replace_c)

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                           int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_replace_any(buf, count, datatype, dest, sendtag, source,
                                recvtag, comm, MPI_STATUS_IGNORE, 1,
                                request, "MPI_Isendrecv_replace");
}
SHOAL_MPI_WEAK(Isendrecv_replace)

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int sendtag,
                             int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return sendrecv_replace_any(buf, count, datatype, dest, sendtag, source,
                                recvtag, comm, MPI_STATUS_IGNORE, 1,
                                request, "MPI_Isendrecv_replace_c");
}
SHOAL_MPI_WEAK(Isendrecv_replace_c)

/* ---- probe and matched receive ------------------------------------------------------------ */

static int probe_check(int source, int tag, MPI_Comm comm, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (!p2p_ok(comm, NULL, 0, MPI_BYTE, source, tag, CHK_RECV))
        return p2p_error(comm, NULL, 0, MPI_BYTE, source, tag, CHK_RECV, fn);
    return MPI_SUCCESS;
}

static void status_of_umsg(MPI_Status *status, const mpi_umsg_t *u)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = u->src;
    status->MPI_TAG = u->tag;
    status->shoal_count = u->bytes;
    status->shoal_cancelled = 0;
}

typedef struct probe_ctx {
    MPI_Comm comm;
    int source, tag, take;
    mpi_umsg_t *found;
    int ft_err; /* SHOAL_FT: why a blocking probe gave up */
} probe_ctx_t;

/* SHOAL_FT: can the message probed for still come?  (docs/FT.md) */
static int probe_ft(probe_ctx_t *p)
{
    MPI_Comm comm = p->comm;

    if (comm->revoked)
        p->ft_err = MPIX_ERR_REVOKED;
    else if (p->source == MPI_ANY_SOURCE ? mpi_ft_unacked(comm)
                                         : mpi_ft_dead(comm->peer_world
                                                           [p->source]))
        p->ft_err = MPIX_ERR_PROC_FAILED;
    return p->ft_err != MPI_SUCCESS;
}

static int probe_found(void *arg)
{
    probe_ctx_t *p = arg;

    p->found = mpi_unexp_find(p->comm->mq, p->source, p->tag, p->take);
    if (p->found == NULL && BASE_UNLIKELY(mpi_ft.on) &&
        (am.deaths | mpi_ft.revokes) != 0)
        return probe_ft(p);
    return p->found != NULL;
}

/* Look once (after one round of progress), or wait until found. */
static int probe_any(int source, int tag, MPI_Comm comm, int wait, int take,
                     mpi_umsg_t **found_p)
{
    probe_ctx_t p = {comm, source, tag, take, NULL, MPI_SUCCESS};
    int rc = MPI_SUCCESS;

    if (wait) {
        rc = mpi_wait_until(probe_found, &p);
        if (rc == MPI_SUCCESS)
            rc = p.ft_err;
    } else {
        mpi_lock();
        mpi_progress_extra();
        if (!probe_found(&p)) {
            am_progress();
            probe_found(&p);
        }
        mpi_unlock();
    }
    *found_p = p.found;
    return rc;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                MPI_Status *status)
{
    mpi_umsg_t *u;
    int rc = probe_check(source, tag, comm, "MPI_Iprobe");

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    probe_any(source, tag, comm, 0, 0, &u);
    *flag = u != NULL;
    if (u != NULL)
        status_of_umsg(status, u);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    mpi_umsg_t *u;
    int rc = probe_check(source, tag, comm, "MPI_Probe");

    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    rc = probe_any(source, tag, comm, 1, 0, &u);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, "MPI_Probe", "waiting failed: %s",
                         shoal_error_detail());
    status_of_umsg(status, u);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Probe)

/* An MPI_Message: a request holding a message taken off the queue. */
static int message_of(MPI_Comm comm, mpi_umsg_t *u, MPI_Message *message)
{
    MPI_Request m = mpi_req_alloc(MPI_REQ_MESSAGE, comm);

    if (m == NULL)
        return MPI_ERR_NO_MEM;
    m->umsg = u;
    *message = m;
    return MPI_SUCCESS;
}


static int mprobe_any(int source, int tag, MPI_Comm comm, int wait,
                      int *flag, MPI_Message *message, MPI_Status *status,
                      const char *fn)
{
    mpi_umsg_t *u;
    int rc = probe_check(source, tag, comm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (message == NULL || (!wait && flag == NULL))
        return mpi_error(comm, MPI_ERR_ARG, fn, "message or flag is NULL");
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    rc = probe_any(source, tag, comm, wait, 1, &u);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "waiting failed: %s",
                         shoal_error_detail());
    if (flag)
        *flag = u != NULL;
    if (u == NULL)
        return MPI_SUCCESS;
    status_of_umsg(status, u);
    rc = message_of(comm, u, message);
    if (rc != MPI_SUCCESS) {
        mpi_lock();
        mpi_umsg_free(u);
        mpi_unlock();
        return mpi_error(comm, rc, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                MPI_Status *status)
{
    return mprobe_any(source, tag, comm, 1, NULL, message, status,
                      "MPI_Mprobe");
}
SHOAL_MPI_WEAK(Mprobe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                 MPI_Message *message, MPI_Status *status)
{
    return mprobe_any(source, tag, comm, 0, flag, message, status,
                      "MPI_Improbe");
}
SHOAL_MPI_WEAK(Improbe)

/* Start receiving a probed message into a new request. */
static int mrecv_start(void *buf, MPI_Count count, MPI_Datatype dt,
                       MPI_Message *message, MPI_Request *req_p,
                       const char *fn)
{
    MPI_Request m, r;

    MPI_CHECK_INIT(fn);
    if (message == NULL || *message == MPI_MESSAGE_NULL ||
        (*message)->magic != MPI_MAGIC_REQ ||
        (*message)->kind != MPI_REQ_MESSAGE)
        return mpi_error(NULL, MPI_ERR_REQUEST, fn,
                         "not a message from MPI_Mprobe/MPI_Improbe");
    m = *message;
    if (m == MPI_MESSAGE_NO_PROC) {
        r = mpi_req_alloc(MPI_REQ_RECV, NULL);
        if (r == NULL)
            return mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        mpi_req_complete(r);
        *message = MPI_MESSAGE_NULL;
        *req_p = r;
        return MPI_SUCCESS;
    }
    if (!p2p_ok(m->comm, buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG,
                CHK_RECV))
        return p2p_error(m->comm, buf, count, dt, MPI_ANY_SOURCE,
                         MPI_ANY_TAG, CHK_RECV, fn);
    r = p2p_req(MPI_REQ_RECV, buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG,
                m->comm, 0, 0);
    if (r == NULL)
        return mpi_error(m->comm, MPI_ERR_NO_MEM, fn, "out of memory");
    mpi_lock();
    mpi_recv_from_umsg(r, m->umsg);
    mpi_unlock();
    m->umsg = NULL;
    mpi_req_free(m);
    *message = MPI_MESSAGE_NULL;
    *req_p = r;
    return MPI_SUCCESS;
}

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dt,
                  MPI_Message *message, MPI_Request *request)
{
    if (request == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Imrecv_c",
                         "request is NULL");
    return mrecv_start(buf, count, dt, message, request, "MPI_Imrecv_c");
}
SHOAL_MPI_WEAK(Imrecv_c)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                MPI_Request *request)
{
    return PMPI_Imrecv_c(buf, count, dt, message, request);
}
SHOAL_MPI_WEAK(Imrecv)

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dt,
                 MPI_Message *message, MPI_Status *status)
{
    MPI_Request r;
    int rc = mrecv_start(buf, count, dt, message, &r, "MPI_Mrecv");

    if (rc != MPI_SUCCESS)
        return rc;
    return wait_own(r, status, "MPI_Mrecv");
}
SHOAL_MPI_WEAK(Mrecv_c)

int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
               MPI_Status *status)
{
    return PMPI_Mrecv_c(buf, count, dt, message, status);
}
SHOAL_MPI_WEAK(Mrecv)

/* ---- internal point-to-point (collectives, communicator construction) ----- */

int mpi_isend_internal(const void *buf, MPI_Count count, MPI_Datatype dt,
                       int dest, int tag, MPI_Comm comm, int ctx_off,
                       MPI_Request *req_p)
{
    MPI_Request r = p2p_req(MPI_REQ_SEND, buf, count, dt, dest, tag, comm,
                            MPI_P2P_STANDARD, ctx_off);
    int rc;

    if (r == NULL)
        return MPI_ERR_NO_MEM;
    rc = start_req(r);
    if (rc != MPI_SUCCESS) {
        mpi_req_free(r);
        return rc;
    }
    *req_p = r;
    return MPI_SUCCESS;
}

int mpi_irecv_internal(void *buf, MPI_Count count, MPI_Datatype dt,
                       int source, int tag, MPI_Comm comm, int ctx_off,
                       MPI_Request *req_p)
{
    MPI_Request r = p2p_req(MPI_REQ_RECV, buf, count, dt, source, tag, comm,
                            0, ctx_off);
    int rc;

    if (r == NULL)
        return MPI_ERR_NO_MEM;
    rc = start_req(r);
    if (rc != MPI_SUCCESS) {
        mpi_req_free(r);
        return rc;
    }
    *req_p = r;
    return MPI_SUCCESS;
}

int mpi_wait_internal(MPI_Request *req, MPI_Status *status)
{
    MPI_Request r = *req;
    int rc;

    if (r == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    /* SHOAL_FT: the collective context's messages (collectives,
     * communicator construction) may wait on a member that gave up when
     * another died: the wait ends when any member is dead. */
    if (BASE_UNLIKELY(mpi_ft.on) && r->ctx_off == 1 && mpi_ft.watch == NULL &&
        r->comm != NULL && !mpi_req_is_done(r)) {
        mpi_ft.watch = r->comm;
        rc = mpi_req_wait_done(r);
        mpi_ft.watch = NULL;
        if (!mpi_req_is_done(r)) {
            mpi_ft_abandon_req(r);
            *req = MPI_REQUEST_NULL;
            return rc != MPI_SUCCESS ? rc : MPIX_ERR_PROC_FAILED;
        }
    } else
        rc = mpi_req_wait_done(r);
    if (rc == MPI_SUCCESS)
        rc = r->status.MPI_ERROR;
    if (status != NULL)
        mpi_status_give(status, &r->status);
    mpi_req_free(r);
    *req = MPI_REQUEST_NULL;
    return rc;
}

int mpi_waitall_internal(int n, MPI_Request *reqs)
{
    int first = MPI_SUCCESS;

    for (int i = 0; i < n; i++) {
        int rc = mpi_wait_internal(&reqs[i], NULL);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    return first;
}

int mpi_send_internal(const void *buf, MPI_Count count, MPI_Datatype dt,
                      int dest, int tag, MPI_Comm comm, int ctx_off)
{
    MPI_Request r;
    int rc = mpi_isend_internal(buf, count, dt, dest, tag, comm, ctx_off, &r);

    return rc != MPI_SUCCESS ? rc : mpi_wait_internal(&r, NULL);
}

int mpi_recv_internal(void *buf, MPI_Count count, MPI_Datatype dt,
                      int source, int tag, MPI_Comm comm, int ctx_off,
                      MPI_Status *status)
{
    MPI_Request r;
    int rc = mpi_irecv_internal(buf, count, dt, source, tag, comm, ctx_off,
                                &r);

    return rc != MPI_SUCCESS ? rc : mpi_wait_internal(&r, status);
}

int mpi_sendrecv_internal(const void *sbuf, MPI_Count scount,
                          MPI_Datatype sdt, int dest, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rdt, int source,
                          int tag, MPI_Comm comm, int ctx_off)
{
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = mpi_irecv_internal(rbuf, rcount, rdt, source, tag, comm,
                                ctx_off, &r[0]);

    if (rc == MPI_SUCCESS)
        rc = mpi_isend_internal(sbuf, scount, sdt, dest, tag, comm, ctx_off,
                                &r[1]);
    int rc2 = mpi_waitall_internal(2, r);
    return rc != MPI_SUCCESS ? rc : rc2;
}
