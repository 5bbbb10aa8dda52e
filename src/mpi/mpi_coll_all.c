/*
 * The collectives without a root: Barrier, Allreduce, Allgather(v),
 * Alltoall(v,w), Reduce_scatter(_block), Scan, Exscan, each blocking
 * (MPI_X), nonblocking (MPI_IX) and persistent (MPI_X_init).  One function
 * serves the three forms (mpi_coll_nb.h): arguments are checked as the
 * standard defines them, then the call goes to the collective layer.
 * MPI_IN_PLACE is accepted on intracommunicators only, where the standard
 * allows it.
 */
#include "mpi_coll_nb.h"
#include "mpi_p2p.h"

/* The sending side, or MPI_IN_PLACE where allowed. */
static int check_send(MPI_Comm comm, const void *sendbuf, int sendcount,
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
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    /* SHOAL_BARRIER=tolerant: start it and return (mpi_tolerant.c). */
    if (nb == NULL && mpi_tol_enabled(comm))
        return mpi_tol_barrier(comm);
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, NULL, NULL, NULL, fn));
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
                         int count, MPI_Datatype datatype, MPI_Op op,
                         const char *fn)
{
    TRY(mpi_coll_check_data(comm, recvbuf, count, datatype, fn, "count"));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (recvbuf == MPI_IN_PLACE)
        return mpi_coll_bad_in_place(comm, fn, "recvbuf",
                                     "(only sendbuf may be)");
    return check_send(comm, sendbuf, count, datatype, fn);
}

static int allreduce(const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    TRY(reduce_checks(comm, sendbuf, recvbuf, count, datatype, op, fn));
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    if (comm->is_inter)
        rc = coll_inter_allreduce(c, sendbuf, recvbuf, count, datatype, op);
    else
        rc = coll_allreduce(c, mpi_coll_buf(sendbuf), recvbuf, count,
                            datatype, op);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Allreduce");
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                     "MPI_Allreduce");
}
SHOAL_MPI_WEAK(Allreduce)

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iallreduce");
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm,
                     MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iallreduce");
}
SHOAL_MPI_WEAK(Iallreduce)

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Allreduce_init");
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm,
                     MPI_NB(request, 1, info), "MPI_Allreduce_init");
}
SHOAL_MPI_WEAK(Allreduce_init)

typedef int scan_fn(coll_comm_t *c, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op);

static int scan(const void *sendbuf, void *recvbuf, int count,
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

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_scan, NULL,
                "MPI_Scan");
}
SHOAL_MPI_WEAK(Scan)

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_scan,
                MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iscan");
}
SHOAL_MPI_WEAK(Iscan)

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Scan_init");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_scan,
                MPI_NB(request, 1, info), "MPI_Scan_init");
}
SHOAL_MPI_WEAK(Scan_init)

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Exscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_exscan,
                NULL, "MPI_Exscan");
}
SHOAL_MPI_WEAK(Exscan)

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iexscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_exscan,
                MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iexscan");
}
SHOAL_MPI_WEAK(Iexscan)

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Exscan_init");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_exscan,
                MPI_NB(request, 1, info), "MPI_Exscan_init");
}
SHOAL_MPI_WEAK(Exscan_init)

/* vform 0: the block form with recvcount per rank (rcounts unused). */
static int reduce_scatter(const void *sendbuf, void *recvbuf, int recvcount,
                          const int *rcounts, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, int vform, mpi_nb_t *nb,
                          const char *fn)
{
    int64_t total = 0;
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    if (vform)
        TRY(mpi_coll_check_counts(comm, comm->size, rcounts, NULL, fn,
                                  "recvcounts"));
    else
        rcounts = NULL;
    for (int i = 0; i < comm->size; i++)
        total += rcounts ? rcounts[i] : recvcount;
    if (total > INT32_MAX)
        return mpi_error(comm, MPI_ERR_COUNT, fn,
                         "the counts add up to %lld, over the int range",
                         (long long)total);
    TRY(mpi_coll_check_data(comm, recvbuf,
                            rcounts ? rcounts[comm->rank] : recvcount,
                            datatype, fn, "recvcount"));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (recvbuf == MPI_IN_PLACE)
        return mpi_coll_bad_in_place(comm, fn, "recvbuf",
                                     "(only sendbuf may be)");
    TRY(check_send(comm, sendbuf, (int)total, datatype, fn));
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    if (comm->is_inter)
        rc = coll_inter_reduce_scatter(mpi_coll_of(comm), sendbuf, recvbuf,
                                       recvcount, rcounts, datatype, op);
    else
        rc = coll_reduce_scatter(mpi_coll_of(comm), mpi_coll_buf(sendbuf),
                                 recvbuf, recvcount, rcounts, datatype, op);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Reduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype, op,
                          comm, 1, NULL, "MPI_Reduce_scatter");
}
SHOAL_MPI_WEAK(Reduce_scatter)

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
                         const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ireduce_scatter");
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype, op,
                          comm, 1, MPI_NB(request, 0, MPI_INFO_NULL),
                          "MPI_Ireduce_scatter");
}
SHOAL_MPI_WEAK(Ireduce_scatter)

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf,
                             const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Reduce_scatter_init");
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype, op,
                          comm, 1, MPI_NB(request, 1, info),
                          "MPI_Reduce_scatter_init");
}
SHOAL_MPI_WEAK(Reduce_scatter_init)

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Reduce_scatter_block");
    return reduce_scatter(sendbuf, recvbuf, recvcount, NULL, datatype, op,
                          comm, 0, NULL, "MPI_Reduce_scatter_block");
}
SHOAL_MPI_WEAK(Reduce_scatter_block)

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                               int recvcount, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ireduce_scatter_block");
    return reduce_scatter(sendbuf, recvbuf, recvcount, NULL, datatype, op,
                          comm, 0, MPI_NB(request, 0, MPI_INFO_NULL),
                          "MPI_Ireduce_scatter_block");
}
SHOAL_MPI_WEAK(Ireduce_scatter_block)

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf,
                                   int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Reduce_scatter_block_init");
    return reduce_scatter(sendbuf, recvbuf, recvcount, NULL, datatype, op,
                          comm, 0, MPI_NB(request, 1, info),
                          "MPI_Reduce_scatter_block_init");
}
SHOAL_MPI_WEAK(Reduce_scatter_block_init)

/* ---- allgather ------------------------------------------------------------------ */

static int allgather(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *rcounts, const int *displs,
                     MPI_Datatype recvtype, MPI_Comm comm, int vform,
                     mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    if (vform) {
        TRY(mpi_coll_check_side(comm, comm->remote_size, rcounts, displs, fn,
                                "recvcounts", "displs"));
        TRY(mpi_dt_check(comm, recvtype, fn));
    } else {
        TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                                "recvcount"));
    }
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
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

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Allgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, NULL, "MPI_Allgather");
}
SHOAL_MPI_WEAK(Allgather)

int PMPI_Iallgather(const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iallgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0,
                     MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iallgather");
}
SHOAL_MPI_WEAK(Iallgather)

int PMPI_Allgather_init(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Allgather_init");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, MPI_NB(request, 1, info),
                     "MPI_Allgather_init");
}
SHOAL_MPI_WEAK(Allgather_init)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Allgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1, NULL, "MPI_Allgatherv");
}
SHOAL_MPI_WEAK(Allgatherv)

int PMPI_Iallgatherv(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iallgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1,
                     MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iallgatherv");
}
SHOAL_MPI_WEAK(Iallgatherv)

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Allgatherv_init");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1, MPI_NB(request, 1, info),
                     "MPI_Allgatherv_init");
}
SHOAL_MPI_WEAK(Allgatherv_init)

/* ---- all-to-all ----------------------------------------------------------------- */

static int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    int rc;

    TRY(mpi_nb_check(comm, nb, fn));
    TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                            "recvcount"));
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
    TRY(mpi_nb_begin(comm, nb, send_type(sendbuf, sendtype), recvtype, NULL,
                     fn));
    rc = coll_alltoall(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcount,
                       sendtype, recvbuf, recvcount, recvtype);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Alltoall");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, NULL, "MPI_Alltoall");
}
SHOAL_MPI_WEAK(Alltoall)

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ialltoall");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, MPI_NB(request, 0, MPI_INFO_NULL),
                    "MPI_Ialltoall");
}
SHOAL_MPI_WEAK(Ialltoall)

int PMPI_Alltoall_init(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Alltoall_init");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, MPI_NB(request, 1, info),
                    "MPI_Alltoall_init");
}
SHOAL_MPI_WEAK(Alltoall_init)

int mpi_coll_check_side(MPI_Comm comm, int n, const int *counts,
                        const void *displs, const char *fn,
                        const char *cname, const char *dname)
{
    TRY(mpi_coll_check_counts(comm, n, counts, displs, fn, cname));
    if (displs == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", dname);
    return MPI_SUCCESS;
}

static int alltoallv(const void *sendbuf, const int *sendcounts,
                     const int *sdispls, MPI_Datatype sendtype, void *recvbuf,
                     const int *recvcounts, const int *rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                     const char *fn)
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
    }
    TRY(mpi_nb_begin(comm, nb, send_type(sendbuf, sendtype), recvtype, NULL,
                     fn));
    rc = coll_alltoallv(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcounts,
                        sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Alltoallv");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm, NULL,
                     "MPI_Alltoallv");
}
SHOAL_MPI_WEAK(Alltoallv)

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ialltoallv");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm,
                     MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Ialltoallv");
}
SHOAL_MPI_WEAK(Ialltoallv)

int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Alltoallv_init");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm,
                     MPI_NB(request, 1, info), "MPI_Alltoallv_init");
}
SHOAL_MPI_WEAK(Alltoallv_init)

int mpi_coll_check_types(MPI_Comm comm, int n, const int *counts,
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

static int alltoallw(const void *sendbuf, const int *sendcounts,
                     const int *sdispls, const MPI_Datatype *sendtypes,
                     void *recvbuf, const int *recvcounts,
                     const int *rdispls, const MPI_Datatype *recvtypes,
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
        mpi_nb_keep_w(nb, 0, n, sendcounts, sendtypes);
    }
    mpi_nb_keep_w(nb, 1, n, recvcounts, recvtypes);
    TRY(mpi_nb_begin(comm, nb, NULL, NULL, NULL, fn));
    rc = coll_alltoallw(mpi_coll_of(comm), mpi_coll_buf(sendbuf), sendcounts,
                        sdispls, (void *const *)sendtypes, recvbuf,
                        recvcounts, rdispls, (void *const *)recvtypes);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Alltoallw");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm, NULL,
                     "MPI_Alltoallw");
}
SHOAL_MPI_WEAK(Alltoallw)

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ialltoallw");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm,
                     MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Ialltoallw");
}
SHOAL_MPI_WEAK(Ialltoallw)

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Alltoallw_init");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm,
                     MPI_NB(request, 1, info), "MPI_Alltoallw_init");
}
SHOAL_MPI_WEAK(Alltoallw_init)
