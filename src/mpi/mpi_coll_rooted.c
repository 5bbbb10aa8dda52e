/*
 * The collectives with a root: Bcast, Reduce, Gather(v), Scatter(v).
 * Arguments are checked where the standard says they are significant (the
 * receive side of a gather only at the root, ...), then the call goes to
 * the collective layer.  On intercommunicators root is MPI_ROOT at the
 * root, MPI_PROC_NULL at the rest of its group and the root's rank in the
 * other group.
 */
#include "mpi_coll.h"

_Static_assert(COLL_ROOT == MPI_ROOT && COLL_PROC_NULL == MPI_PROC_NULL,
               "the collective layer's root markers are MPI's");

#define TRY(call)                                                            \
    do {                                                                     \
        int try_rc_ = (call);                                                \
        if (try_rc_ != MPI_SUCCESS)                                          \
            return try_rc_;                                                  \
    } while (0)

/* Common start: initialized, valid communicator, valid root. */
static int start(MPI_Comm comm, int root, const char *fn)
{
    TRY(mpi_coll_check_comm(comm, fn));
    return mpi_coll_check_root(comm, root, fn);
}

/* Am I the one who sends (is_send) or receives the root's side? */
static int at_root(MPI_Comm comm, int root)
{
    return comm->is_inter ? root == MPI_ROOT : comm->rank == root;
}

/* Intercommunicator members of the root's group that take no part. */
static int idle(MPI_Comm comm, int root)
{
    return comm->is_inter && root == MPI_PROC_NULL;
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm)
{
    const char *fn = "MPI_Bcast";
    coll_comm_t *c;

    MPI_CHECK_INIT("MPI_Bcast");
    TRY(start(comm, root, fn));
    if (idle(comm, root))
        return mpi_coll_done(comm, coll_inter_bcast(comm->coll, NULL, 0, NULL,
                                                    COLL_PROC_NULL),
                             fn);
    TRY(mpi_coll_check_data(comm, buffer, count, datatype, fn, "count"));
    c = mpi_coll_of(comm);
    if (comm->is_inter)
        return mpi_coll_done(
            comm, coll_inter_bcast(c, buffer, count, datatype, root), fn);
    return mpi_coll_done(comm, coll_bcast(c, buffer, count, datatype, root),
                         fn);
}
SHOAL_MPI_WEAK(Bcast)

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    const char *fn = "MPI_Reduce";
    int me = 0;

    MPI_CHECK_INIT("MPI_Reduce");
    TRY(start(comm, root, fn));
    if (idle(comm, root))
        return mpi_coll_done(comm, coll_inter_reduce(comm->coll, NULL, NULL, 0,
                                                     NULL, NULL,
                                                     COLL_PROC_NULL),
                             fn);
    me = at_root(comm, root);
    TRY(mpi_coll_check_count(comm, count, fn, "count"));
    TRY(mpi_dt_check(comm, datatype, fn));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (me)
        TRY(mpi_coll_check_data(comm, recvbuf, count, datatype, fn, "count"));
    if (sendbuf == MPI_IN_PLACE && (!me || comm->is_inter))
        return mpi_coll_bad_in_place(comm, fn, "sendbuf",
                                     comm->is_inter
                                         ? "on an intercommunicator"
                                         : "at a rank other than the root");
    if (sendbuf != MPI_IN_PLACE && !(comm->is_inter && me))
        TRY(mpi_coll_check_data(comm, sendbuf, count, datatype, fn, "count"));
    if (comm->is_inter)
        return mpi_coll_done(comm,
                             coll_inter_reduce(mpi_coll_of(comm), sendbuf,
                                               recvbuf, count, datatype, op,
                                               root),
                             fn);
    return mpi_coll_done(comm,
                         coll_reduce(mpi_coll_of(comm), mpi_coll_buf(sendbuf),
                                     recvbuf, count, datatype, op, root),
                         fn);
}
SHOAL_MPI_WEAK(Reduce)

/* ---- gather ---------------------------------------------------------------------- */

/*
 * The checks of Gather and Gatherv.  rcounts NULL: the plain form with
 * recvcount.  The sending side is checked at every rank but an
 * intercommunicator's root, and not where MPI_IN_PLACE stands for it.
 */
static int gather_checks(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int *rcounts, const int *displs,
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         int vform, const char *fn)
{
    int me = at_root(comm, root);

    if (me) {
        if (vform) {
            TRY(mpi_coll_check_counts(comm, comm->remote_size, rcounts,
                                      displs, fn, "recvcounts"));
            if (displs == NULL)
                return mpi_error(comm, MPI_ERR_ARG, fn, "displs is NULL");
            TRY(mpi_dt_check(comm, recvtype, fn));
        } else {
            TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                                    "recvcount"));
        }
    }
    if (sendbuf == MPI_IN_PLACE && (!me || comm->is_inter))
        return mpi_coll_bad_in_place(comm, fn, "sendbuf",
                                     comm->is_inter
                                         ? "on an intercommunicator"
                                         : "at a rank other than the root");
    if (sendbuf != MPI_IN_PLACE && !(comm->is_inter && me))
        TRY(mpi_coll_check_data(comm, sendbuf, sendcount, sendtype, fn,
                                "sendcount"));
    return MPI_SUCCESS;
}

static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, const int *rcounts,
                  const int *displs, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, int vform, const char *fn)
{
    coll_comm_t *c;

    TRY(start(comm, root, fn));
    if (idle(comm, root))
        return mpi_coll_done(comm,
                             coll_inter_gatherv(comm->coll, NULL, 0, NULL,
                                                NULL, 0, NULL, NULL, NULL,
                                                COLL_PROC_NULL),
                             fn);
    TRY(gather_checks(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      rcounts, displs, recvtype, root, comm, vform, fn));
    c = mpi_coll_of(comm);
    if (comm->is_inter)
        return mpi_coll_done(comm,
                             coll_inter_gatherv(c, sendbuf, sendcount,
                                                sendtype, recvbuf, recvcount,
                                                rcounts, displs, recvtype,
                                                root),
                             fn);
    return mpi_coll_done(comm,
                         coll_gatherv(c, mpi_coll_buf(sendbuf), sendcount,
                                      sendtype, recvbuf, recvcount, rcounts,
                                      displs, recvtype, root),
                         fn);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Gather");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                  NULL, recvtype, root, comm, 0, "MPI_Gather");
}
SHOAL_MPI_WEAK(Gather)

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Gatherv");
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                  displs, recvtype, root, comm, 1, "MPI_Gatherv");
}
SHOAL_MPI_WEAK(Gatherv)

/* ---- scatter --------------------------------------------------------------------- */

static int scatter_checks(const void *sendbuf, int sendcount,
                          const int *scounts, const int *displs,
                          MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, int vform, const char *fn)
{
    int me = at_root(comm, root);

    if (me) {
        if (vform) {
            TRY(mpi_coll_check_counts(comm, comm->remote_size, scounts,
                                      displs, fn, "sendcounts"));
            if (displs == NULL)
                return mpi_error(comm, MPI_ERR_ARG, fn, "displs is NULL");
            TRY(mpi_dt_check(comm, sendtype, fn));
        } else {
            TRY(mpi_coll_check_data(comm, sendbuf, sendcount, sendtype, fn,
                                    "sendcount"));
        }
    }
    if (recvbuf == MPI_IN_PLACE && (!me || comm->is_inter))
        return mpi_coll_bad_in_place(comm, fn, "recvbuf",
                                     comm->is_inter
                                         ? "on an intercommunicator"
                                         : "at a rank other than the root");
    if (recvbuf != MPI_IN_PLACE && !(comm->is_inter && me))
        TRY(mpi_coll_check_data(comm, recvbuf, recvcount, recvtype, fn,
                                "recvcount"));
    return MPI_SUCCESS;
}

static int scatter(const void *sendbuf, int sendcount, const int *scounts,
                   const int *displs, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, int vform, const char *fn)
{
    coll_comm_t *c;

    TRY(start(comm, root, fn));
    if (idle(comm, root))
        return mpi_coll_done(comm,
                             coll_inter_scatterv(comm->coll, NULL, 0, NULL,
                                                 NULL, NULL, NULL, 0, NULL,
                                                 COLL_PROC_NULL),
                             fn);
    TRY(scatter_checks(sendbuf, sendcount, scounts, displs, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, vform, fn));
    c = mpi_coll_of(comm);
    if (comm->is_inter)
        return mpi_coll_done(comm,
                             coll_inter_scatterv(c, sendbuf, sendcount,
                                                 scounts, displs, sendtype,
                                                 recvbuf, recvcount, recvtype,
                                                 root),
                             fn);
    return mpi_coll_done(comm,
                         coll_scatterv(c, sendbuf, sendcount, scounts, displs,
                                       sendtype,
                                       (void *)mpi_coll_buf(recvbuf),
                                       recvcount, recvtype, root),
                         fn);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scatter");
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 0, "MPI_Scatter");
}
SHOAL_MPI_WEAK(Scatter)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scatterv");
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 1, "MPI_Scatterv");
}
SHOAL_MPI_WEAK(Scatterv)
