/*
 * The collective layer's transport, made of internal point-to-point in the
 * communicator's collective context (ctx_off 1, tags >= 0, so collectives
 * match neither user messages nor communicator construction, which uses
 * negative tags), the reduction ops and the datatype engine; the state the
 * layer keeps per communicator; and the argument checks of the calls.
 */
#include <stdlib.h>

#include "mpi_coll.h"

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

static int t_reduce(void *ctx, void *op, const void *in, void *inout,
                    int64_t count, void *dt)
{
    return mpi_op_apply(op, in, inout, count, dt);
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
    .reduce_local = t_reduce,
    .copy = t_copy,
    .extent = t_extent,
    .size = t_size,
    .contig = t_contig,
    .commutative = t_commutative,
    .byte_dt = MPI_BYTE,
};

/* ---- per-communicator state ------------------------------------------------------ */

int mpi_coll_comm_init(MPI_Comm comm)
{
    coll_comm_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->ctx = comm;
    c->ops = &transport;
    c->rank = comm->rank;
    c->size = comm->size;
    c->is_inter = comm->is_inter;
    c->remote_size = comm->is_inter ? comm->remote_size : comm->size;
    comm->coll = c;
    return MPI_SUCCESS;
}

void mpi_coll_comm_fini(MPI_Comm comm)
{
    free(comm->coll);
    comm->coll = NULL;
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
    return MPI_SUCCESS;
}

int mpi_coll_no_inter(MPI_Comm comm, const char *fn)
{
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "not supported on intercommunicators yet");
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

int mpi_coll_check_count(MPI_Comm comm, int count, const char *fn,
                         const char *what)
{
    if (count < 0)
        return mpi_error(comm, MPI_ERR_COUNT, fn, "%s is %d", what, count);
    return MPI_SUCCESS;
}

int mpi_coll_check_data(MPI_Comm comm, const void *buf, int count,
                        MPI_Datatype dt, const char *fn, const char *what)
{
    int rc = mpi_coll_check_count(comm, count, fn, what);

    if (rc == MPI_SUCCESS)
        rc = mpi_dt_check(comm, dt, fn);
    /* NULL is MPI_BOTTOM, fine with absolute addresses in a derived type;
     * with a predefined type it can only be a mistake. */
    if (rc == MPI_SUCCESS && buf == NULL && count > 0 &&
        (dt->flags & MPI_DT_PREDEF) && dt->size > 0)
        return mpi_error(comm, MPI_ERR_BUFFER, fn,
                         "buffer is NULL with %s %d of %s", what, count,
                         dt->name);
    return rc;
}

int mpi_coll_check_counts(MPI_Comm comm, int n, const int *counts,
                          const int *displs, const char *fn,
                          const char *what)
{
    if (counts == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return mpi_error(comm, MPI_ERR_COUNT, fn, "%s[%d] is %d", what, i,
                             counts[i]);
    (void)displs;
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
