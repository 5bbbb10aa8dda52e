/*
 * The collectives without a root: Barrier, Allreduce, Allgather(v),
 * Alltoall(v,w), Reduce_scatter(_block), Scan, Exscan, each blocking
 * (MPI_X), nonblocking (MPI_IX) and persistent (MPI_X_init).  One function
 * serves the three forms (coll_forms.h): arguments are checked as the
 * standard defines them, then the call goes to the collective layer.
 * MPI_IN_PLACE is accepted on intracommunicators only, where the standard
 * allows it.  The int and large-count (_c) forms share the functions:
 * counts are MPI_Count and arrays 64-bit (coll_mpi.h).
 */
#include "mpi/coll/coll_forms.h"
#include "mpi/p2p/p2p_engine.h"

/* The sending side, or MPI_IN_PLACE where allowed. */
static int check_send(MPI_Comm comm, const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, const char *fn)
{
    if (sendbuf != MPI_IN_PLACE)
        return mpi_coll_check_data(comm, sendbuf, sendcount, sendtype, fn,
                                   "sendcount");
    if (comm->is_inter)
        return mpi_coll_bad_in_place(comm, fn, "sendbuf",
                                     "on an intercommunicator");
    return MPI_SUCCESS;
}

/* The send type a call uses: none in place. */
static MPI_Datatype send_type(const void *sendbuf, MPI_Datatype sendtype)
{
    return sendbuf == MPI_IN_PLACE ? NULL : sendtype;
}

/* ---- barrier -------------------------------------------------------------------- */

static int barrier(MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    coll_now_t *now;
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    /* SHOAL_BARRIER=tolerant: start it and return (coll_tolerant.c). */
    if (nb == NULL && mpi_tol_enabled(comm))
        return mpi_tol_barrier(comm);
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, NULL, NULL, NULL, fn));
    if (nb == NULL && !comm->is_inter && (now = coll_now_barrier(c)) != NULL)
        return mpi_coll_now_end(comm, now, fn);
    rc = comm->is_inter ? coll_inter_barrier(c) : coll_barrier(c);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Barrier(MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Barrier");
    return barrier(comm, NULL, "MPI_Barrier");
}
SHOAL_MPI_WEAK(Barrier)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ibarrier");
    return barrier(comm, MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Ibarrier");
}
SHOAL_MPI_WEAK(Ibarrier)

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Barrier_init");
    return barrier(comm, MPI_NB(request, 1, info), "MPI_Barrier_init");
}
SHOAL_MPI_WEAK(Barrier_init)

/* ---- reductions ----------------------------------------------------------------- */

/* count, datatype, op, and the two buffers of a reduction. */
static int reduce_checks(MPI_Comm comm, const void *sendbuf, void *recvbuf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                         const char *fn)
{
    TRY(mpi_coll_check_data(comm, recvbuf, count, datatype, fn, "count"));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (recvbuf == MPI_IN_PLACE)
        return mpi_coll_bad_in_place(comm, fn, "recvbuf",
                                     "(only sendbuf may be)");
    TRY(check_send(comm, sendbuf, count, datatype, fn));
    return count > 0 ? mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn)
                     : MPI_SUCCESS;
}

static int allreduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    coll_now_t *now;
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    TRY(reduce_checks(comm, sendbuf, recvbuf, count, datatype, op, fn));
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    if (nb == NULL && !comm->is_inter &&
        (now = coll_now_allreduce(c, mpi_coll_buf(sendbuf), recvbuf, count,
                                  datatype, op)) != NULL)
        return mpi_coll_now_end(comm, now, fn);
    if (comm->is_inter)
        rc = coll_inter_allreduce(c, sendbuf, recvbuf, count, datatype, op);
    else
        rc = coll_allreduce(c, mpi_coll_buf(sendbuf), recvbuf, count,
                            datatype, op);
    return mpi_nb_end(comm, rc, nb, fn);
}

/* The parameters of Allreduce, Scan and Exscan. */
#define REDUCE_PARAMS(C, CV, DV)                                               \
    (const void *sendbuf, void *recvbuf, C count, MPI_Datatype datatype,       \
     MPI_Op op, MPI_Comm comm)
#define REDUCE_ARGS (sendbuf, recvbuf, count, datatype, op, comm)

MPI_COLL_PAIR(Allreduce, Iallreduce, REDUCE_PARAMS, allreduce, allreduce,
              REDUCE_ARGS)

typedef int scan_fn(coll_comm_t *c, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op);

static int scan_any(const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    scan_fn *algo, mpi_nb_t *nb, const char *fn)
{
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "not defined on intercommunicators");
    TRY(reduce_checks(comm, sendbuf, recvbuf, count, datatype, op, fn));
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    rc = algo(mpi_coll_of(comm), mpi_coll_buf(sendbuf), recvbuf, count,
              datatype, op);
    return mpi_nb_end(comm, rc, nb, fn);
}

static int scan(const void *sendbuf, void *recvbuf, MPI_Count count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                const char *fn)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, coll_scan, nb,
                    fn);
}

static int exscan(const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                  const char *fn)
{
    return scan_any(sendbuf, recvbuf, count, datatype, op, comm, coll_exscan,
                    nb, fn);
}

MPI_COLL_PAIR(Scan, Iscan, REDUCE_PARAMS, scan, scan, REDUCE_ARGS)
MPI_COLL_PAIR(Exscan, Iexscan, REDUCE_PARAMS, exscan, exscan, REDUCE_ARGS)

/* rcounts NULL: the block form, recvcount for every rank. */
static int reduce_scatter(const void *sendbuf, void *recvbuf,
                          MPI_Count recvcount, const int64_t *rcounts,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          mpi_nb_t *nb, const char *fn)
{
    MPI_Count total = 0;
    int rc;

    for (int i = 0; i < comm->size; i++) {
        MPI_Count n = rcounts ? rcounts[i] : recvcount;
        if (n > 0 && total > INT64_MAX - n)
            return mpi_error(comm, MPI_ERR_COUNT, fn,
                             "the counts add up to more than %lld",
                             (long long)INT64_MAX);
        total += n > 0 ? n : 0;
    }
    TRY(mpi_coll_check_data(comm, recvbuf,
                            rcounts ? rcounts[comm->rank] : recvcount,
                            datatype, fn, "recvcount"));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (recvbuf == MPI_IN_PLACE)
        return mpi_coll_bad_in_place(comm, fn, "recvbuf",
                                     "(only sendbuf may be)");
    TRY(check_send(comm, sendbuf, total, datatype, fn));
    if (total > 0)
        TRY(mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn));
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    if (comm->is_inter)
        rc = coll_inter_reduce_scatter(mpi_coll_of(comm), sendbuf, recvbuf,
                                       recvcount, rcounts, datatype, op);
    else
        rc = coll_reduce_scatter(mpi_coll_of(comm), mpi_coll_buf(sendbuf),
                                 recvbuf, recvcount, rcounts, datatype, op);
    return mpi_nb_end(comm, rc, nb, fn);
}

/* Reduce_scatter: recvcounts of the local group. */
static int reduce_scatter_v(const void *sendbuf, void *recvbuf,
                            const int64_t *recvcounts, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                            const char *fn)
{
    TRY(mpi_nb_check(comm, nb, fn));
    TRY(mpi_coll_check_counts(comm, comm->size, recvcounts, fn, "recvcounts"));
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm,
                          nb, fn);
}

static int reduce_scatter_int(const void *sendbuf, void *recvbuf,
                              const int *recvcounts, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                              const char *fn)
{
    const int *in[1] = {recvcounts};
    int n[1] = {mpi_comm_ok(comm) ? comm->size : 0};
    const int64_t *v[1];
    mpi_wide_t w;
    int rc = mpi_widen(comm, &w, 1, in, n, v, fn);

    if (rc == MPI_SUCCESS)
        rc = reduce_scatter_v(sendbuf, recvbuf, v[0], datatype, op, comm, nb,
                              fn);
    mpi_wide_free(&w);
    return rc;
}

static int reduce_scatter_c(const void *sendbuf, void *recvbuf,
                            const MPI_Count *recvcounts, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                            const char *fn)
{
    return reduce_scatter_v(sendbuf, recvbuf, mpi_count64(recvcounts), datatype,
                            op, comm, nb, fn);
}

static int reduce_scatter_block(const void *sendbuf, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm, mpi_nb_t *nb,
                                const char *fn)
{
    TRY(mpi_nb_check(comm, nb, fn));
    return reduce_scatter(sendbuf, recvbuf, recvcount, NULL, datatype, op, comm,
                          nb, fn);
}

#define REDUCE_SCATTER_PARAMS(C, CV, DV)                                       \
    (const void *sendbuf, void *recvbuf, const CV recvcounts[],                \
     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
#define REDUCE_SCATTER_BLOCK_PARAMS(C, CV, DV)                                 \
    (const void *sendbuf, void *recvbuf, C recvcount, MPI_Datatype datatype,   \
     MPI_Op op, MPI_Comm comm)

MPI_COLL_PAIR(Reduce_scatter, Ireduce_scatter, REDUCE_SCATTER_PARAMS,
              reduce_scatter_int, reduce_scatter_c,
              (sendbuf, recvbuf, recvcounts, datatype, op, comm))
MPI_COLL_PAIR(Reduce_scatter_block, Ireduce_scatter_block,
              REDUCE_SCATTER_BLOCK_PARAMS, reduce_scatter_block,
              reduce_scatter_block,
              (sendbuf, recvbuf, recvcount, datatype, op, comm))

/* ---- allgather ------------------------------------------------------------------ */

/* rcounts NULL: the plain form with recvcount (displs unused). */
static int allgather(const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     const int64_t *rcounts, const int64_t *displs,
                     MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                     const char *fn)
{
    coll_comm_t *c;
    int rc;

    if (rcounts != NULL) {
        TRY(mpi_coll_check_side(comm, comm->remote_size, rcounts, displs, fn,
                                "recvcounts", "displs"));
        TRY(mpi_dt_check(comm, recvtype, fn));
    } else {
        TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                                "recvcount"));
    }
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
    if (sendcount > 0) {
        /* An intracommunicator rank's own block: where in place puts it. */
        const void *own =
            comm->is_inter ? NULL
                           : mpi_coll_elem(recvbuf,
                                           rcounts ? displs[comm->rank]
                                                   : comm->rank * recvcount,
                                           recvtype);
        TRY(mpi_coll_check_alias(comm, sendbuf, recvbuf, own, fn));
    }
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, send_type(sendbuf, sendtype), recvtype, NULL,
                     fn));
    if (comm->is_inter)
        rc = coll_inter_allgatherv(c, sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, rcounts, displs, recvtype);
    else
        rc = coll_allgatherv(c, mpi_coll_buf(sendbuf), sendcount, sendtype,
                             recvbuf, recvcount, rcounts, displs, recvtype);
    return mpi_nb_end(comm, rc, nb, fn);
}

static int allgather_plain(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    TRY(mpi_nb_check(comm, nb, fn));
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, nb, fn);
}

/* Allgatherv: NULL recvcounts are reported, not taken for the plain
 * form. */
static int allgatherv(const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void *recvbuf,
                      const int64_t *recvcounts, const int64_t *displs,
                      MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                      const char *fn)
{
    TRY(mpi_nb_check(comm, nb, fn));
    if (recvcounts == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, nb, fn);
}

static int allgatherv_int(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          const int *recvcounts, const int *displs,
                          MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                          const char *fn)
{
    const int *in[2] = {recvcounts, displs};
    int n = mpi_comm_ok(comm) ? comm->remote_size : 0;
    const int64_t *v[2];
    mpi_wide_t w;
    int rc = mpi_widen(comm, &w, 2, in, (const int[]){n, n}, v, fn);

    if (rc == MPI_SUCCESS)
        rc = allgatherv(sendbuf, sendcount, sendtype, recvbuf, v[0], v[1],
                        recvtype, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count *recvcounts, const MPI_Aint *displs,
                        MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                        const char *fn)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                      mpi_count64(recvcounts), mpi_aint64(displs), recvtype,
                      comm, nb, fn);
}

MPI_COLL_PAIR(Allgather, Iallgather, MPI_PLAIN_PARAMS, allgather_plain,
              allgather_plain, MPI_PLAIN_ARGS)
MPI_COLL_PAIR(Allgatherv, Iallgatherv, MPI_ALLGATHERV_PARAMS, allgatherv_int,
              allgatherv_c, MPI_ALLGATHERV_ARGS)

/* ---- all-to-all ----------------------------------------------------------------- */

static int alltoall(const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                    const char *fn)
{
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                            "recvcount"));
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
    if (sendcount > 0 && recvcount > 0)
        TRY(mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn));
    TRY(mpi_nb_begin(comm, nb, send_type(sendbuf, sendtype), recvtype, NULL,
                     fn));
    rc = coll_alltoall(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcount,
                       sendtype, recvbuf, recvcount, recvtype);
    return mpi_nb_end(comm, rc, nb, fn);
}

MPI_COLL_PAIR(Alltoall, Ialltoall, MPI_PLAIN_PARAMS, alltoall, alltoall,
              MPI_PLAIN_ARGS)

int mpi_coll_check_side(MPI_Comm comm, int n, const int64_t *counts,
                        const void *displs, const char *fn, const char *cname,
                        const char *dname)
{
    TRY(mpi_coll_check_counts(comm, n, counts, fn, cname));
    if (displs == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", dname);
    return MPI_SUCCESS;
}

/*
 * The four arrays of an int-form all-to-all (v or w), widened for the
 * calls: sendcounts, sdispls, recvcounts, rdispls, of the remote group's
 * size each; the send side's not at all in place, where it is not
 * significant.
 */
static int widen_alltoall(MPI_Comm comm, mpi_wide_t *w, const void *sendbuf,
                          const int *const in[4], const int64_t *out[4],
                          const char *fn)
{
    int n = mpi_comm_ok(comm) ? comm->remote_size : 0;
    int ns = sendbuf == MPI_IN_PLACE ? 0 : n;

    return mpi_widen(comm, w, 4, in, (const int[]){ns, ns, n, n}, out, fn);
}

static int alltoallv(const void *sendbuf, const int64_t *sendcounts,
                     const int64_t *sdispls, MPI_Datatype sendtype,
                     void *recvbuf, const int64_t *recvcounts,
                     const int64_t *rdispls, MPI_Datatype recvtype,
                     MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    int n, rc;

    TRY(mpi_nb_check(comm, nb, fn));
    n = comm->remote_size;
    TRY(mpi_coll_check_side(comm, n, recvcounts, rdispls, fn, "recvcounts",
                            "rdispls"));
    TRY(mpi_dt_check(comm, recvtype, fn));
    if (sendbuf == MPI_IN_PLACE) {
        TRY(check_send(comm, sendbuf, 0, sendtype, fn));
    } else {
        TRY(mpi_coll_check_side(comm, n, sendcounts, sdispls, fn,
                                "sendcounts", "sdispls"));
        TRY(mpi_dt_check(comm, sendtype, fn));
        TRY(mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn));
    }
    TRY(mpi_nb_begin(comm, nb, send_type(sendbuf, sendtype), recvtype, NULL,
                     fn));
    rc = coll_alltoallv(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcounts,
                        sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype);
    return mpi_nb_end(comm, rc, nb, fn);
}

static int alltoallv_int(const void *sendbuf, const int *sendcounts,
                         const int *sdispls, MPI_Datatype sendtype,
                         void *recvbuf, const int *recvcounts,
                         const int *rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    const int *in[4] = {sendcounts, sdispls, recvcounts, rdispls};
    const int64_t *v[4];
    mpi_wide_t w;
    int rc = widen_alltoall(comm, &w, sendbuf, in, v, fn);

    if (rc == MPI_SUCCESS)
        rc = alltoallv(sendbuf, v[0], v[1], sendtype, recvbuf, v[2], v[3],
                       recvtype, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int alltoallv_c(const void *sendbuf, const MPI_Count *sendcounts,
                       const MPI_Aint *sdispls, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count *recvcounts,
                       const MPI_Aint *rdispls, MPI_Datatype recvtype,
                       MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return alltoallv(sendbuf, mpi_count64(sendcounts), mpi_aint64(sdispls),
                     sendtype, recvbuf, mpi_count64(recvcounts),
                     mpi_aint64(rdispls), recvtype, comm, nb, fn);
}

MPI_COLL_PAIR(Alltoallv, Ialltoallv, MPI_ALLTOALLV_PARAMS, alltoallv_int,
              alltoallv_c, MPI_ALLTOALLV_ARGS)

int mpi_coll_check_types(MPI_Comm comm, int n, const int64_t *counts,
                         const MPI_Datatype *types, const char *fn,
                         const char *tname)
{
    if (types == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", tname);
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            TRY(mpi_dt_check(comm, types[i], fn));
    return MPI_SUCCESS;
}

/* Displacements in bytes. */
static int alltoallw(const void *sendbuf, const int64_t *sendcounts,
                     const int64_t *sdispls, const MPI_Datatype *sendtypes,
                     void *recvbuf, const int64_t *recvcounts,
                     const int64_t *rdispls, const MPI_Datatype *recvtypes,
                     MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    int n, rc;

    TRY(mpi_nb_check(comm, nb, fn));
    n = comm->remote_size;
    TRY(mpi_coll_check_side(comm, n, recvcounts, rdispls, fn, "recvcounts",
                            "rdispls"));
    TRY(mpi_coll_check_types(comm, n, recvcounts, recvtypes, fn,
                             "recvtypes"));
    if (sendbuf == MPI_IN_PLACE) {
        TRY(check_send(comm, sendbuf, 0, NULL, fn));
    } else {
        TRY(mpi_coll_check_side(comm, n, sendcounts, sdispls, fn,
                                "sendcounts", "sdispls"));
        TRY(mpi_coll_check_types(comm, n, sendcounts, sendtypes, fn,
                                 "sendtypes"));
        TRY(mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn));
        mpi_nb_keep_w(nb, 0, n, sendcounts, sendtypes);
    }
    mpi_nb_keep_w(nb, 1, n, recvcounts, recvtypes);
    TRY(mpi_nb_begin(comm, nb, NULL, NULL, NULL, fn));
    rc = coll_alltoallw(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcounts,
                        sdispls, (void *const *)sendtypes, recvbuf,
                        recvcounts, rdispls, (void *const *)recvtypes);
    return mpi_nb_end(comm, rc, nb, fn);
}

static int alltoallw_int(const void *sendbuf, const int *sendcounts,
                         const int *sdispls, const MPI_Datatype *sendtypes,
                         void *recvbuf, const int *recvcounts,
                         const int *rdispls, const MPI_Datatype *recvtypes,
                         MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    const int *in[4] = {sendcounts, sdispls, recvcounts, rdispls};
    const int64_t *v[4];
    mpi_wide_t w;
    int rc = widen_alltoall(comm, &w, sendbuf, in, v, fn);

    if (rc == MPI_SUCCESS)
        rc = alltoallw(sendbuf, v[0], v[1], sendtypes, recvbuf, v[2], v[3],
                       recvtypes, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int alltoallw_c(const void *sendbuf, const MPI_Count *sendcounts,
                       const MPI_Aint *sdispls, const MPI_Datatype *sendtypes,
                       void *recvbuf, const MPI_Count *recvcounts,
                       const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                       MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return alltoallw(sendbuf, mpi_count64(sendcounts), mpi_aint64(sdispls),
                     sendtypes, recvbuf, mpi_count64(recvcounts),
                     mpi_aint64(rdispls), recvtypes, comm, nb, fn);
}

#define ALLTOALLW_PARAMS(C, CV, DV)                                            \
    (const void *sendbuf, const CV sendcounts[], const DV sdispls[],           \
     const MPI_Datatype sendtypes[], void *recvbuf, const CV recvcounts[],     \
     const DV rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)

MPI_COLL_PAIR(Alltoallw, Ialltoallw, ALLTOALLW_PARAMS, alltoallw_int,
              alltoallw_c,
              (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
               rdispls, recvtypes, comm))
