/*
 * The one path every read and write takes: argument checks, the start
 * position (explicit offset, individual pointer, shared pointer, or rank
 * order), the lock of atomic mode, list IO, the pointer update, the
 * status.  The families in io_indep.c and io_coll.c are thin wrappers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int io_check_type(MPI_File fh, MPI_Datatype dt, const char *fn,
                  const char *what)
{
    if (dt == NULL || dt->magic != MPI_MAGIC_DT)
        return io_error(fh, MPI_ERR_TYPE, fn, "invalid %s %p", what,
                        (void *)dt);
    if (!(dt->flags & MPI_DT_COMMITTED))
        return io_error(fh, MPI_ERR_TYPE, fn, "%s is not committed", what);
    return MPI_SUCCESS;
}

void io_status_set(MPI_Status *status, MPI_Count bytes)
{
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->shoal_cancelled = 0;
    status->shoal_count = bytes;
}

int io_request_done(MPI_File fh, const char *fn, MPI_Count bytes,
                    MPI_Request *request)
{
    MPI_Request r = mpi_req_alloc(MPI_REQ_FILE, NULL);

    if (r == NULL)
        return io_error(fh, MPI_ERR_NO_MEM, fn, "no memory for a request");
    io_status_set(&r->status, bytes);
    r->status.MPI_ERROR = MPI_SUCCESS;
    mpi_req_complete(r);
    *request = r;
    return MPI_SUCCESS;
}

/* Rank order: each rank's place after those before it; rank 0 advances
 * the shared pointer once by the total. */
static int ordered_start(MPI_File fh, MPI_Offset bytes, MPI_Offset *pos_p,
                         int *err_p)
{
    long long mine = bytes, before = 0, total = 0, got[2] = {0, 0};
    int rank, rc;

    *err_p = 0;
    PMPI_Comm_rank(fh->comm, &rank);
    if ((rc = PMPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM,
                          fh->comm)) != MPI_SUCCESS ||
        (rc = PMPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM,
                             fh->comm)) != MPI_SUCCESS)
        return rc;
    if (rank == 0) {
        MPI_Offset base = 0;
        before = 0;
        got[0] = io_shared_fetch_add(fh, total, &base, err_p);
        got[1] = base;
    }
    if ((rc = PMPI_Bcast(got, 2, MPI_LONG_LONG, 0, fh->comm)) != MPI_SUCCESS)
        return rc;
    if (got[0] != MPI_SUCCESS)
        return (int)got[0];
    *pos_p = got[1] + before;
    return MPI_SUCCESS;
}

/* The arguments' checks and the start position (the shared pointer is
 * advanced here): MPI_SUCCESS or the error reported.  fh is checked. */
static int access_begin(MPI_File fh, const char *fn, int wr, int where,
                        MPI_Offset offset, MPI_Count count, MPI_Datatype dt,
                        io_acc_t *a)
{
    MPI_Count bytes, esz;
    MPI_Offset pos = 0;
    int rc, err = 0, convert;
    const io_rep_t *rep = fh->view.rep;

    if (count < 0)
        return io_error(fh, MPI_ERR_COUNT, fn, "count %lld is negative", count);
    if ((rc = io_check_type(fh, dt, fn, "datatype")) != MPI_SUCCESS)
        return rc;
    if (wr && (fh->amode & MPI_MODE_RDONLY))
        return io_error(fh, MPI_ERR_READ_ONLY, fn,
                        "%s was opened MPI_MODE_RDONLY", fh->path);
    if (!wr && (fh->amode & MPI_MODE_WRONLY))
        return io_error(fh, MPI_ERR_ACCESS, fn, "%s was opened MPI_MODE_WRONLY",
                        fh->path);
    if ((fh->amode & MPI_MODE_SEQUENTIAL) &&
        (where == IO_AT || where == IO_INDIV))
        return io_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "%s was opened MPI_MODE_SEQUENTIAL: only the shared "
                        "file pointer may be used",
                        fh->path);
    /* Stream bytes: of the file's representation. */
    esz = dt->size;
    if (rep != NULL &&
        (rc = io_rep_size(rep, dt, &esz)) != MPI_SUCCESS)
        return io_error(fh, rc, fn,
                        "the size of the datatype in data representation "
                        "\"%s\" could not be computed",
                        fh->view.datarep);
    convert = !io_rep_direct(rep, wr);
    if (!convert && esz != dt->size)
        return io_error(fh, MPI_ERR_CONVERSION, fn,
                        "data representation \"%s\" has no %s conversion "
                        "function (MPI_CONVERSION_FN_NULL: native bytes) but "
                        "the datatype's size in the file (%lld bytes) is not "
                        "its native size (%lld)",
                        fh->view.datarep, wr ? "write" : "read", esz,
                        dt->size);
    if (__builtin_mul_overflow(count, esz, &bytes))
        return io_error(fh, MPI_ERR_COUNT, fn,
                        "count %lld of %lld-byte elements overflows", count,
                        esz);
    if (bytes % fh->view.esize != 0)
        return io_error(fh, MPI_ERR_TYPE, fn,
                        "%lld bytes are not a whole number of etypes "
                        "(%lld bytes each)",
                        bytes, fh->view.esize);

    switch (where) {
    case IO_AT:
        if (offset < 0)
            return io_error(fh, MPI_ERR_ARG, fn, "offset %lld is negative",
                            offset);
        if (__builtin_mul_overflow(offset, fh->view.esize, &pos))
            return io_error(fh, MPI_ERR_ARG, fn, "offset %lld is too large",
                            offset);
        break;
    case IO_INDIV:
        pos = fh->pos;
        break;
    case IO_SHARED:
        rc = io_shared_fetch_add(fh, bytes, &pos, &err);
        if (rc != MPI_SUCCESS)
            return io_error(fh, rc, fn, "the shared file pointer of %s: %s",
                            fh->path,
                            err ? strerror(err)
                                : "its side file could not be made at open");
        break;
    default: /* IO_ORDERED */
        rc = ordered_start(fh, bytes, &pos, &err);
        if (rc != MPI_SUCCESS)
            return io_error(fh, rc, fn, "the shared file pointer of %s: %s",
                            fh->path,
                            err ? strerror(err)
                                : "its side file could not be made at open, "
                                  "or a rank was lost");
        break;
    }
    *a = (io_acc_t){bytes, esz, pos, convert};
    return MPI_SUCCESS;
}

int io_move(MPI_File fh, int wr, int twophase, const io_acc_t *a, void *buf,
            MPI_Count count, MPI_Datatype dt, io_move_t *m)
{
    MPI_Count bytes = a->bytes, esz = a->esz, iocount = count;
    MPI_Offset pos = a->pos;
    const io_rep_t *rep = fh->view.rep;
    void *iobuf = buf, *tmp = NULL;
    MPI_Datatype iodt = dt;
    int locked = 0;

    *m = (io_move_t){0};
    m->rc = MPI_SUCCESS;
    m->conv = MPI_SUCCESS;
    if (a->convert && bytes > 0) {
        /* Another representation: encoded into (decoded from) a staging
         * buffer, which then moves as bytes.  A value that does not
         * convert still takes part in a collective call, with nothing to
         * move. */
        tmp = malloc((size_t)bytes);
        if (tmp == NULL) {
            m->rc = MPI_ERR_NO_MEM;
            m->what = IO_FAIL_STAGE;
            return m->rc;
        }
        if (wr)
            m->conv = io_rep_convert(rep, 1, buf, count, dt, tmp, esz,
                                     &m->uret);
        iobuf = tmp;
        iocount = m->conv == MPI_SUCCESS ? bytes : 0;
        iodt = MPI_BYTE;
    }
    if (fh->atomic && bytes > 0 && fh->view.fsize > 0) {
        io_view_span(&fh->view, pos, bytes, &m->lo, &m->hi);
        if ((m->err = io_lock(fh->fd, wr, m->lo, m->hi)) != 0) {
            free(tmp);
            m->rc = io_errno_class(m->err);
            m->what = IO_FAIL_LOCK;
            return m->rc;
        }
        locked = 1;
    }
    if (twophase)
        m->rc = io_twophase_rw(fh, wr, pos, iobuf, iocount, iodt, &m->done,
                               &m->err);
    else
        m->rc = io_list_rw(fh, wr, pos, iobuf, iocount, iodt, &m->done,
                           &m->err);
    if (locked)
        io_unlock(fh->fd, m->lo, m->hi);
    m->bytes = m->done;
    if (tmp != NULL) {
        /* Whole elements count, in the memory type's native bytes. */
        MPI_Count elems = esz > 0 ? m->done / esz : 0;
        if (!wr && elems > 0)
            m->conv = io_rep_convert(rep, 0, buf, elems, dt, tmp, esz,
                                     &m->uret);
        m->bytes = elems * dt->size;
        free(tmp);
    }
    if (m->conv != MPI_SUCCESS) {
        m->what = IO_FAIL_CONVERT;
        return m->rc = m->conv;
    }
    if (m->rc != MPI_SUCCESS)
        m->what = IO_FAIL_IO;
    return m->rc;
}

void io_move_why(MPI_File fh, int wr, const io_acc_t *a, const io_move_t *m,
                 char *out, size_t n)
{
    switch (m->what) {
    case IO_FAIL_STAGE:
        snprintf(out, n, "no memory to stage %lld bytes of \"%s\"",
                 a->bytes, fh->view.datarep);
        break;
    case IO_FAIL_LOCK:
        snprintf(out, n, "%s: locking bytes [%lld, %lld) for atomic mode: %s",
                 fh->path, m->lo, m->hi, strerror(m->err));
        break;
    case IO_FAIL_CONVERT:
        if (fh->view.rep->ext32)
            snprintf(out, n,
                     "a value of the datatype does not fit the size "
                     "external32 gives it (a long beyond 32 bits?)");
        else
            snprintf(out, n,
                     "the %s conversion function of data representation "
                     "\"%s\" returned %d",
                     wr ? "write" : "read", fh->view.datarep, m->uret);
        break;
    default:
        snprintf(out, n, "%s: %s %lld bytes at stream byte %lld: %s",
                 fh->path, wr ? "writing" : "reading", a->bytes, a->pos,
                 strerror(m->err));
        break;
    }
}

/* Move the data of an access begun (access_begin), advance the individual
 * pointer, and return the bytes moved in *bytes_p. */
static int access_move(MPI_File fh, const char *fn, int wr, int where,
                       int coll, void *buf, MPI_Count count, MPI_Datatype dt,
                       const io_acc_t *a, MPI_Count *bytes_p)
{
    io_move_t m;
    char why[IO_WHY_MAX];
    int twophase = coll && (where == IO_AT || where == IO_INDIV) &&
                   io_twophase_on(fh, wr);

    /* Failing before any data moved leaves the pointer alone. */
    if (io_move(fh, wr, twophase, a, buf, count, dt, &m) == MPI_SUCCESS ||
        (m.what != IO_FAIL_STAGE && m.what != IO_FAIL_LOCK)) {
        if (wr && m.done > 0)
            fh->dirty = 1;
        if (where == IO_INDIV)
            fh->pos = a->pos + m.done;
        *bytes_p = m.bytes;
    }
    if (m.rc != MPI_SUCCESS) {
        io_move_why(fh, wr, a, &m, why, sizeof(why));
        return io_error(fh, m.rc, fn, "%s", why);
    }
    return MPI_SUCCESS;
}

int io_access(MPI_File fh, const char *fn, int wr, int where, int coll,
              MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype dt,
              MPI_Count *bytes_p)
{
    io_acc_t a;
    int rc;

    *bytes_p = 0;
    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS ||
        (rc = access_begin(fh, fn, wr, where, offset, count, dt, &a)) !=
            MPI_SUCCESS)
        return rc;
    return access_move(fh, fn, wr, where, coll, buf, count, dt, &a, bytes_p);
}

int io_blocking(MPI_File fh, const char *fn, int wr, int where, int coll,
                MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype dt,
                MPI_Status *status)
{
    MPI_Count bytes;
    int rc = io_access(fh, fn, wr, where, coll, offset, buf, count, dt, &bytes);

    if (rc == MPI_SUCCESS)
        io_status_set(status, bytes);
    return rc;
}

int io_nonblocking(MPI_File fh, const char *fn, int wr, int where, int coll,
                   MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype dt, MPI_Request *request)
{
    MPI_Count bytes;
    int rc;
    io_acc_t a;

    MPI_CHECK_INIT(fn);
    if (request == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "request is NULL");
    if (where == IO_ORDERED) {
        /* Ordered: a scan of the sizes, done at once, every rank
         * together. */
        rc = io_access(fh, fn, wr, where, coll, offset, buf, count, dt,
                       &bytes);
        if (rc != MPI_SUCCESS)
            return rc;
        return io_request_done(fh, fn, bytes, request);
    }
    if (coll && io_twophase_on(fh, wr)) {
        /* Through the aggregators: the exchange and their IO in the
         * background (io_twophase_start), every rank taking part even
         * with nothing to move.  Placed now, as an independent one. */
        if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS ||
            (rc = access_begin(fh, fn, wr, where, offset, count, dt, &a)) !=
                MPI_SUCCESS)
            return rc;
        /* A write's values are converted here, at the call, in the
         * caller's thread; a read's once its bytes are in (a user's read
         * function, which may call MPI, in the IO thread, never in the
         * progress engine). */
        if (where == IO_INDIV)
            fh->pos = a.pos + a.bytes;
        if (wr && a.bytes > 0)
            fh->dirty = 1;
        if (a.convert)
            return io_twophase_start_conv(fh, fn, wr, a.pos, buf, count, dt,
                                          a.bytes, a.esz, request);
        return io_twophase_start(fh, fn, wr, a.pos, buf, count, dt, a.bytes,
                                 request);
    }
    /* A collective access without collective buffering is each rank's
     * own list IO (no communication) and goes to the background like an
     * independent one. */
    /* Checked and placed now (a pointer moves at the call), the data
     * moved by the IO thread behind the caller's back. */
    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS ||
        (rc = access_begin(fh, fn, wr, where, offset, count, dt, &a)) !=
            MPI_SUCCESS)
        return rc;
    if (a.bytes > 0) {
        if (where == IO_INDIV)
            fh->pos = a.pos + a.bytes;
        if (wr)
            fh->dirty = 1;
        return io_async_start(fh, fn, wr, &a, buf, count, dt, request);
    }
    /* Nothing to move: at once, after the file's queued accesses. */
    io_async_drain(fh);
    rc = access_move(fh, fn, wr, where, coll, buf, count, dt, &a, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    return io_request_done(fh, fn, bytes, request);
}
