/*
 * The collectives with a root: Bcast, Reduce, Gather(v), Scatter(v), each
 * blocking (MPI_X), nonblocking (MPI_IX) and persistent (MPI_X_init), one
 * function for the three forms (mpi_coll_nb.h).  Arguments are checked
 * where the standard says they are significant (the receive side of a
 * gather only at the root, ...), then the call goes to the collective
 * layer.  On intercommunicators root is MPI_ROOT at the root,
 * MPI_PROC_NULL at the rest of its group and the root's rank in the other
 * group.
 */
#include "mpi_coll_nb.h"

_Static_assert(COLL_ROOT == MPI_ROOT && COLL_PROC_NULL == MPI_PROC_NULL,
               "the collective layer's root markers are MPI's");

/* Common start: valid communicator (and request), valid root. */
static int start(MPI_Comm comm, int root, const mpi_nb_t *nb,
                 const char *fn)
{
    TRY(mpi_nb_check(comm, nb, fn));
    return mpi_coll_check_root(comm, root, fn);
}

/* Am I the one who sends (is_send) or receives the root's side? */
static int at_root(MPI_Comm comm, int root)
{
    return comm->is_inter ? root == MPI_ROOT : comm->rank == root;
}

/* Intercommunicator members of the root's group that take no part: none
 * of their other arguments is significant, and none is passed on. */
static int idle(MPI_Comm comm, int root)
{
    return comm->is_inter && root == MPI_PROC_NULL;
}

/* MPI_IN_PLACE for the root's own block (sendbuf of a gather or reduce,
 * recvbuf of a scatter) anywhere but at an intracommunicator's root. */
static int check_root_in_place(MPI_Comm comm, const char *fn,
                               const char *what)
{
    return mpi_coll_bad_in_place(comm, fn, what,
                                 comm->is_inter
                                     ? "on an intercommunicator"
                                     : "at a rank other than the root");
}

/* ---- bcast ----------------------------------------------------------------------- */

static int bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    int rc;

    TRY(start(comm, root, nb, fn));
    if (idle(comm, root)) {
        buffer = NULL;
        count = 0;
        datatype = NULL;
    } else {
        TRY(mpi_coll_check_data(comm, buffer, count, datatype, fn, "count"));
    }
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, NULL, fn));
    if (comm->is_inter)
        rc = coll_inter_bcast(c, buffer, count, datatype, root);
    else
        rc = coll_bcast(c, buffer, count, datatype, root);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Bcast");
    return bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast");
}
SHOAL_MPI_WEAK(Bcast)

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ibcast");
    return bcast(buffer, count, datatype, root, comm,
                 MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Ibcast");
}
SHOAL_MPI_WEAK(Ibcast)

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Bcast_init");
    return bcast(buffer, count, datatype, root, comm,
                 MPI_NB(request, 1, info), "MPI_Bcast_init");
}
SHOAL_MPI_WEAK(Bcast_init)

/* ---- reduce ---------------------------------------------------------------------- */

static int reduce_checks(const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm, const char *fn)
{
    int me = at_root(comm, root);

    TRY(mpi_coll_check_count(comm, count, fn, "count"));
    TRY(mpi_dt_check(comm, datatype, fn));
    TRY(mpi_coll_check_op(comm, op, datatype, fn));
    if (me)
        TRY(mpi_coll_check_data(comm, recvbuf, count, datatype, fn, "count"));
    if (sendbuf == MPI_IN_PLACE && (!me || comm->is_inter))
        return check_root_in_place(comm, fn, "sendbuf");
    if (sendbuf != MPI_IN_PLACE && !(comm->is_inter && me))
        TRY(mpi_coll_check_data(comm, sendbuf, count, datatype, fn, "count"));
    return MPI_SUCCESS;
}

static int reduce(const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    int rc;

    TRY(start(comm, root, nb, fn));
    if (idle(comm, root)) {
        sendbuf = recvbuf = NULL;
        count = 0;
        datatype = NULL;
        op = NULL;
    } else {
        TRY(reduce_checks(sendbuf, recvbuf, count, datatype, op, root, comm,
                          fn));
    }
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
    if (comm->is_inter)
        rc = coll_inter_reduce(c, sendbuf, recvbuf, count, datatype, op,
                               root);
    else
        rc = coll_reduce(c, mpi_coll_buf(sendbuf), recvbuf, count, datatype,
                         op, root);
    return mpi_nb_end(comm, rc, nb, fn);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Reduce");
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL,
                  "MPI_Reduce");
}
SHOAL_MPI_WEAK(Reduce)

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ireduce");
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm,
                  MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Ireduce");
}
SHOAL_MPI_WEAK(Ireduce)

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Reduce_init");
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm,
                  MPI_NB(request, 1, info), "MPI_Reduce_init");
}
SHOAL_MPI_WEAK(Reduce_init)

/* ---- gather and scatter ---------------------------------------------------------- */

/* One side of a gather or scatter: the root's has a block per rank (counts
 * and displs in the v forms), a member's one block. */
typedef struct side {
    const void *buf;
    int count;
    const int *counts, *displs;
    MPI_Datatype dt;
} side_t;

/*
 * The arguments of Gather(v) (gather 1) and Scatter(v) (gather 0): the
 * root's side is checked at the root; the member's side at every rank but
 * an intercommunicator's root, and not where MPI_IN_PLACE stands for it.
 * used[] gets the datatypes that are significant here.  At an idle rank
 * both sides are cleared: nothing is significant there.
 */
static int side_args(MPI_Comm comm, int root, int gather, int vform,
                     side_t *many, side_t *one, MPI_Datatype used[2],
                     const char *fn)
{
    int me = at_root(comm, root);

    used[0] = used[1] = NULL;
    if (idle(comm, root)) {
        *many = *one = (side_t){NULL, 0, NULL, NULL, NULL};
        return MPI_SUCCESS;
    }
    if (me && vform) {
        TRY(mpi_coll_check_side(comm, comm->remote_size, many->counts,
                                many->displs, fn,
                                gather ? "recvcounts" : "sendcounts",
                                "displs"));
        TRY(mpi_dt_check(comm, many->dt, fn));
    } else if (me) {
        TRY(mpi_coll_check_data(comm, many->buf, many->count, many->dt, fn,
                                gather ? "recvcount" : "sendcount"));
    }
    if (me)
        used[0] = many->dt;
    if (one->buf == MPI_IN_PLACE && (!me || comm->is_inter))
        return check_root_in_place(comm, fn, gather ? "sendbuf" : "recvbuf");
    if (one->buf != MPI_IN_PLACE && !(comm->is_inter && me)) {
        TRY(mpi_coll_check_data(comm, one->buf, one->count, one->dt, fn,
                                gather ? "sendcount" : "recvcount"));
        used[1] = one->dt;
    }
    return MPI_SUCCESS;
}

/* The four calls, once their sides are described. */
static int rooted(side_t *many, side_t *one, int root, MPI_Comm comm,
                  int gather, int vform, mpi_nb_t *nb, const char *fn)
{
    MPI_Datatype used[2];
    coll_comm_t *c;
    int rc;

    TRY(start(comm, root, nb, fn));
    TRY(side_args(comm, root, gather, vform, many, one, used, fn));
    c = mpi_coll_of(comm);
    TRY(mpi_nb_begin(comm, nb, used[0], used[1], NULL, fn));
    if (gather && comm->is_inter)
        rc = coll_inter_gatherv(c, one->buf, one->count, one->dt,
                                (void *)many->buf, many->count, many->counts,
                                many->displs, many->dt, root);
    else if (gather)
        rc = coll_gatherv(c, mpi_coll_buf(one->buf), one->count, one->dt,
                          (void *)many->buf, many->count, many->counts,
                          many->displs, many->dt, root);
    else if (comm->is_inter)
        rc = coll_inter_scatterv(c, many->buf, many->count, many->counts,
                                 many->displs, many->dt, (void *)one->buf,
                                 one->count, one->dt, root);
    else
        rc = coll_scatterv(c, many->buf, many->count, many->counts,
                           many->displs, many->dt,
                           (void *)mpi_coll_buf(one->buf), one->count,
                           one->dt, root);
    return mpi_nb_end(comm, rc, nb, fn);
}

/* rcounts NULL with vform 0: the plain form with recvcount. */
static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, const int *rcounts,
                  const int *displs, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, int vform, mpi_nb_t *nb, const char *fn)
{
    side_t many = {recvbuf, recvcount, rcounts, displs, recvtype};
    side_t one = {sendbuf, sendcount, NULL, NULL, sendtype};

    return rooted(&many, &one, root, comm, 1, vform, nb, fn);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Gather");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                  NULL, recvtype, root, comm, 0, NULL, "MPI_Gather");
}
SHOAL_MPI_WEAK(Gather)

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Igather");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                  NULL, recvtype, root, comm, 0,
                  MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Igather");
}
SHOAL_MPI_WEAK(Igather)

int PMPI_Gather_init(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Gather_init");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                  NULL, recvtype, root, comm, 0, MPI_NB(request, 1, info),
                  "MPI_Gather_init");
}
SHOAL_MPI_WEAK(Gather_init)

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Gatherv");
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                  displs, recvtype, root, comm, 1, NULL, "MPI_Gatherv");
}
SHOAL_MPI_WEAK(Gatherv)

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int displs[],
                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Igatherv");
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                  displs, recvtype, root, comm, 1,
                  MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Igatherv");
}
SHOAL_MPI_WEAK(Igatherv)

int PMPI_Gatherv_init(const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Gatherv_init");
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                  displs, recvtype, root, comm, 1, MPI_NB(request, 1, info),
                  "MPI_Gatherv_init");
}
SHOAL_MPI_WEAK(Gatherv_init)

/* scounts NULL with vform 0: the plain form with sendcount. */
static int scatter(const void *sendbuf, int sendcount, const int *scounts,
                   const int *displs, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, int vform, mpi_nb_t *nb, const char *fn)
{
    side_t many = {sendbuf, sendcount, scounts, displs, sendtype};
    side_t one = {recvbuf, recvcount, NULL, NULL, recvtype};

    return rooted(&many, &one, root, comm, 0, vform, nb, fn);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scatter");
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 0, NULL, "MPI_Scatter");
}
SHOAL_MPI_WEAK(Scatter)

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iscatter");
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 0,
                   MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iscatter");
}
SHOAL_MPI_WEAK(Iscatter)

int PMPI_Scatter_init(const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Scatter_init");
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 0,
                   MPI_NB(request, 1, info), "MPI_Scatter_init");
}
SHOAL_MPI_WEAK(Scatter_init)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Scatterv");
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 1, NULL, "MPI_Scatterv");
}
SHOAL_MPI_WEAK(Scatterv)

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[],
                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Iscatterv");
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 1,
                   MPI_NB(request, 0, MPI_INFO_NULL), "MPI_Iscatterv");
}
SHOAL_MPI_WEAK(Iscatterv)

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Scatterv_init");
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                   recvcount, recvtype, root, comm, 1,
                   MPI_NB(request, 1, info), "MPI_Scatterv_init");
}
SHOAL_MPI_WEAK(Scatterv_init)
