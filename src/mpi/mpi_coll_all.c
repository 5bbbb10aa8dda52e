/*
 * The collectives without a root: Barrier, Allreduce, Allgather(v),
 * Alltoall(v,w), Reduce_scatter(_block), Scan, Exscan.  Arguments are
 * checked as the standard defines them, then the call goes to the
 * collective layer.  MPI_IN_PLACE is accepted on intracommunicators only,
 * where the standard allows it.
 */
#include "mpi_coll.h"

#define TRY(call)                                                            \
    do {                                                                     \
        int try_rc_ = (call);                                                \
        if (try_rc_ != MPI_SUCCESS)                                          \
            return try_rc_;                                                  \
    } while (0)

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

int PMPI_Barrier(MPI_Comm comm)
{
    const char *fn = "MPI_Barrier";
    coll_comm_t *c;

    MPI_CHECK_INIT("MPI_Barrier");
    TRY(mpi_coll_check_comm(comm, fn));
    c = mpi_coll_of(comm);
    return mpi_coll_done(comm,
                         comm->is_inter ? coll_inter_barrier(c)
                                        : coll_barrier(c),
                         fn);
}
SHOAL_MPI_WEAK(Barrier)

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

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *fn = "MPI_Allreduce";
    coll_comm_t *c;

    MPI_CHECK_INIT("MPI_Allreduce");
    TRY(mpi_coll_check_comm(comm, fn));
    TRY(reduce_checks(comm, sendbuf, recvbuf, count, datatype, op, fn));
    c = mpi_coll_of(comm);
    if (comm->is_inter)
        return mpi_coll_done(comm,
                             coll_inter_allreduce(c, sendbuf, recvbuf, count,
                                                  datatype, op),
                             fn);
    return mpi_coll_done(comm,
                         coll_allreduce(c, mpi_coll_buf(sendbuf), recvbuf,
                                        count, datatype, op),
                         fn);
}
SHOAL_MPI_WEAK(Allreduce)

typedef int scan_fn(coll_comm_t *c, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op);

static int scan(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                scan_fn *algo, const char *fn)
{
    TRY(mpi_coll_check_comm(comm, fn));
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "not defined on intercommunicators");
    TRY(reduce_checks(comm, sendbuf, recvbuf, count, datatype, op, fn));
    return mpi_coll_done(comm,
                         algo(mpi_coll_of(comm), mpi_coll_buf(sendbuf),
                              recvbuf, count, datatype, op),
                         fn);
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_scan,
                "MPI_Scan");
}
SHOAL_MPI_WEAK(Scan)

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Exscan");
    return scan(sendbuf, recvbuf, count, datatype, op, comm, coll_exscan,
                "MPI_Exscan");
}
SHOAL_MPI_WEAK(Exscan)

/* rcounts NULL: the block form with recvcount per rank. */
static int reduce_scatter(const void *sendbuf, void *recvbuf, int recvcount,
                          const int *rcounts, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, const char *fn)
{
    int64_t total = 0;

    TRY(mpi_coll_check_comm(comm, fn));
    TRY(mpi_coll_no_inter(comm, fn));
    if (rcounts)
        TRY(mpi_coll_check_counts(comm, comm->size, rcounts, NULL, fn,
                                  "recvcounts"));
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
    return mpi_coll_done(comm,
                         coll_reduce_scatter(mpi_coll_of(comm),
                                             mpi_coll_buf(sendbuf), recvbuf,
                                             recvcount, rcounts, datatype,
                                             op),
                         fn);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                        const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    const char *fn = "MPI_Reduce_scatter";

    MPI_CHECK_INIT("MPI_Reduce_scatter");
    if (recvcounts == NULL)
        return mpi_error(mpi_comm_ok(comm) ? comm : NULL, MPI_ERR_ARG, fn,
                         "recvcounts is NULL");
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype, op,
                          comm, fn);
}
SHOAL_MPI_WEAK(Reduce_scatter)

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                              int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Reduce_scatter_block");
    return reduce_scatter(sendbuf, recvbuf, recvcount, NULL, datatype, op,
                          comm, "MPI_Reduce_scatter_block");
}
SHOAL_MPI_WEAK(Reduce_scatter_block)

/* ---- allgather ------------------------------------------------------------------ */

static int allgather(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *rcounts, const int *displs,
                     MPI_Datatype recvtype, MPI_Comm comm, int vform,
                     const char *fn)
{
    coll_comm_t *c;

    TRY(mpi_coll_check_comm(comm, fn));
    if (vform) {
        TRY(mpi_coll_check_counts(comm, comm->remote_size, rcounts, displs,
                                  fn, "recvcounts"));
        if (displs == NULL)
            return mpi_error(comm, MPI_ERR_ARG, fn, "displs is NULL");
        TRY(mpi_dt_check(comm, recvtype, fn));
    } else {
        TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                                "recvcount"));
    }
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
    c = mpi_coll_of(comm);
    if (comm->is_inter)
        return mpi_coll_done(comm,
                             coll_inter_allgatherv(c, sendbuf, sendcount,
                                                   sendtype, recvbuf,
                                                   recvcount, rcounts, displs,
                                                   recvtype),
                             fn);
    return mpi_coll_done(comm,
                         coll_allgatherv(c, mpi_coll_buf(sendbuf), sendcount,
                                         sendtype, recvbuf, recvcount,
                                         rcounts, displs, recvtype),
                         fn);
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Allgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, "MPI_Allgather");
}
SHOAL_MPI_WEAK(Allgather)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Allgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1, "MPI_Allgatherv");
}
SHOAL_MPI_WEAK(Allgatherv)

/* ---- all-to-all ----------------------------------------------------------------- */

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    const char *fn = "MPI_Alltoall";

    MPI_CHECK_INIT("MPI_Alltoall");
    TRY(mpi_coll_check_comm(comm, fn));
    TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                            "recvcount"));
    TRY(check_send(comm, sendbuf, sendcount, sendtype, fn));
    return mpi_coll_done(comm,
                         coll_alltoall(mpi_coll_of(comm),
                                       mpi_coll_buf(sendbuf), sendcount,
                                       sendtype, recvbuf, recvcount,
                                       recvtype),
                         fn);
}
SHOAL_MPI_WEAK(Alltoall)

/* counts and displacements of one side of a v or w form. */
static int check_side(MPI_Comm comm, const int *counts, const int *displs,
                      const char *fn, const char *cname, const char *dname)
{
    TRY(mpi_coll_check_counts(comm, comm->remote_size, counts, displs, fn,
                              cname));
    if (displs == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", dname);
    return MPI_SUCCESS;
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *fn = "MPI_Alltoallv";

    MPI_CHECK_INIT("MPI_Alltoallv");
    TRY(mpi_coll_check_comm(comm, fn));
    TRY(check_side(comm, recvcounts, rdispls, fn, "recvcounts", "rdispls"));
    TRY(mpi_dt_check(comm, recvtype, fn));
    if (sendbuf == MPI_IN_PLACE) {
        TRY(check_send(comm, sendbuf, 0, sendtype, fn));
    } else {
        TRY(check_side(comm, sendcounts, sdispls, fn, "sendcounts",
                       "sdispls"));
        TRY(mpi_dt_check(comm, sendtype, fn));
    }
    return mpi_coll_done(comm,
                         coll_alltoallv(mpi_coll_of(comm),
                                        mpi_coll_buf(sendbuf), sendcounts,
                                        sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype),
                         fn);
}
SHOAL_MPI_WEAK(Alltoallv)

/* Per-peer types: each must be valid where it carries data. */
static int check_types(MPI_Comm comm, const int *counts,
                       const MPI_Datatype *types, const char *fn,
                       const char *tname)
{
    if (types == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", tname);
    for (int i = 0; i < comm->remote_size; i++)
        if (counts[i] > 0)
            TRY(mpi_dt_check(comm, types[i], fn));
    return MPI_SUCCESS;
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    const char *fn = "MPI_Alltoallw";

    MPI_CHECK_INIT("MPI_Alltoallw");
    TRY(mpi_coll_check_comm(comm, fn));
    TRY(check_side(comm, recvcounts, rdispls, fn, "recvcounts", "rdispls"));
    TRY(check_types(comm, recvcounts, recvtypes, fn, "recvtypes"));
    if (sendbuf == MPI_IN_PLACE) {
        TRY(check_send(comm, sendbuf, 0, NULL, fn));
    } else {
        TRY(check_side(comm, sendcounts, sdispls, fn, "sendcounts",
                       "sdispls"));
        TRY(check_types(comm, sendcounts, sendtypes, fn, "sendtypes"));
    }
    return mpi_coll_done(comm,
                         coll_alltoallw(mpi_coll_of(comm),
                                        mpi_coll_buf(sendbuf), sendcounts,
                                        sdispls, (void *const *)sendtypes,
                                        recvbuf, recvcounts, rdispls,
                                        (void *const *)recvtypes),
                         fn);
}
SHOAL_MPI_WEAK(Alltoallw)
