/*
 * The collectives with a root: Bcast, Reduce, Gather(v), Scatter(v), each
 * blocking (MPI_X), nonblocking (MPI_IX) and persistent (MPI_X_init), one
 * function for the three forms (coll_forms.h).  Arguments are checked
 * where the standard says they are significant (the receive side of a
 * gather only at the root, ...), then the call goes to the collective
 * layer.  On intercommunicators root is MPI_ROOT at the root,
 * MPI_PROC_NULL at the rest of its group and the root's rank in the other
 * group.  The int and large-count (_c) forms share the functions: counts
 * are MPI_Count and arrays 64-bit (coll_mpi.h).
 */
#include "mpi/coll/coll_forms.h"

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

static int bcast(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    coll_now_t *now;
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
    if (nb == NULL && !comm->is_inter &&
        (now = coll_now_bcast(c, buffer, count, datatype, root)) != NULL)
        return mpi_coll_now_end(comm, now, fn);
    if (comm->is_inter)
        rc = coll_inter_bcast(c, buffer, count, datatype, root);
    else
        rc = coll_bcast(c, buffer, count, datatype, root);
    return mpi_nb_end(comm, rc, nb, fn);
}

#define BCAST_PARAMS(C, CV, DV)                                                \
    (void *buffer, C count, MPI_Datatype datatype, int root, MPI_Comm comm)

MPI_COLL_PAIR(Bcast, Ibcast, BCAST_PARAMS, bcast, bcast,
              (buffer, count, datatype, root, comm))

/* ---- reduce ---------------------------------------------------------------------- */

static int reduce_checks(const void *sendbuf, void *recvbuf, MPI_Count count,
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
    if (me && !comm->is_inter && count > 0)
        return mpi_coll_check_alias(comm, sendbuf, recvbuf, NULL, fn);
    return MPI_SUCCESS;
}

static int reduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  mpi_nb_t *nb, const char *fn)
{
    coll_comm_t *c;
    coll_now_t *now;
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
    if (nb == NULL && !comm->is_inter &&
        (now = coll_now_reduce(c, mpi_coll_buf(sendbuf), recvbuf, count,
                               datatype, op, root)) != NULL)
        return mpi_coll_now_end(comm, now, fn);
    if (comm->is_inter)
        rc = coll_inter_reduce(c, sendbuf, recvbuf, count, datatype, op,
                               root);
    else
        rc = coll_reduce(c, mpi_coll_buf(sendbuf), recvbuf, count, datatype,
                         op, root);
    return mpi_nb_end(comm, rc, nb, fn);
}

#define REDUCE_PARAMS(C, CV, DV)                                               \
    (const void *sendbuf, void *recvbuf, C count, MPI_Datatype datatype,       \
     MPI_Op op, int root, MPI_Comm comm)

MPI_COLL_PAIR(Reduce, Ireduce, REDUCE_PARAMS, reduce, reduce,
              (sendbuf, recvbuf, count, datatype, op, root, comm))

/* ---- gather and scatter ---------------------------------------------------------- */

/* One side of a gather or scatter: the root's has a block per rank (counts
 * and displs in the v forms), a member's one block. */
typedef struct side {
    const void *buf;
    MPI_Count count;
    const int64_t *counts, *displs;
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
    /* An intracommunicator root's own block of the many side is where
     * in place would put its data. */
    if (me && !comm->is_inter && one->count > 0) {
        int r = comm->rank;
        const void *own = mpi_coll_elem(
            many->buf, vform ? many->displs[r] : r * many->count, many->dt);

        if (vform ? many->counts[r] > 0 : many->count > 0)
            TRY(mpi_coll_check_alias(comm, one->buf, many->buf, own, fn));
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

/*
 * The root's counts and displacements of an int-form Gatherv or Scatterv,
 * widened: significant at the root only (elsewhere they may be anything),
 * of the remote group's size.
 */
static int widen_root(MPI_Comm comm, int root, mpi_wide_t *w, const int *counts,
                      const int *displs, const int64_t *out[2], const char *fn)
{
    int n = mpi_comm_ok(comm) && at_root(comm, root) ? comm->remote_size : 0;

    return mpi_widen(comm, w, 2, (const int *const[]){counts, displs},
                     (const int[]){n, n}, out, fn);
}

static int gather(const void *sendbuf, MPI_Count sendcount,
                  MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, mpi_nb_t *nb,
                  const char *fn)
{
    side_t many = {recvbuf, recvcount, NULL, NULL, recvtype};
    side_t one = {sendbuf, sendcount, NULL, NULL, sendtype};

    return rooted(&many, &one, root, comm, 1, 0, nb, fn);
}

static int gatherv(const void *sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void *recvbuf,
                   const int64_t *recvcounts, const int64_t *displs,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, mpi_nb_t *nb,
                   const char *fn)
{
    side_t many = {recvbuf, 0, recvcounts, displs, recvtype};
    side_t one = {sendbuf, sendcount, NULL, NULL, sendtype};

    return rooted(&many, &one, root, comm, 1, 1, nb, fn);
}

static int gatherv_int(const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf,
                       const int *recvcounts, const int *displs,
                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                       mpi_nb_t *nb, const char *fn)
{
    const int64_t *v[2];
    mpi_wide_t w;
    int rc = widen_root(comm, root, &w, recvcounts, displs, v, fn);

    if (rc == MPI_SUCCESS)
        rc = gatherv(sendbuf, sendcount, sendtype, recvbuf, v[0], v[1],
                     recvtype, root, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int gatherv_c(const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count *recvcounts, const MPI_Aint *displs,
                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                     mpi_nb_t *nb, const char *fn)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf,
                   mpi_count64(recvcounts), mpi_aint64(displs), recvtype, root,
                   comm, nb, fn);
}

static int scatter(const void *sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, mpi_nb_t *nb,
                   const char *fn)
{
    side_t many = {sendbuf, sendcount, NULL, NULL, sendtype};
    side_t one = {recvbuf, recvcount, NULL, NULL, recvtype};

    return rooted(&many, &one, root, comm, 0, 0, nb, fn);
}

static int scatterv(const void *sendbuf, const int64_t *sendcounts,
                    const int64_t *displs, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root,
                    MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    side_t many = {sendbuf, 0, sendcounts, displs, sendtype};
    side_t one = {recvbuf, recvcount, NULL, NULL, recvtype};

    return rooted(&many, &one, root, comm, 0, 1, nb, fn);
}

static int scatterv_int(const void *sendbuf, const int *sendcounts,
                        const int *displs, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    const int64_t *v[2];
    mpi_wide_t w;
    int rc = widen_root(comm, root, &w, sendcounts, displs, v, fn);

    if (rc == MPI_SUCCESS)
        rc = scatterv(sendbuf, v[0], v[1], sendtype, recvbuf, recvcount,
                      recvtype, root, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int scatterv_c(const void *sendbuf, const MPI_Count *sendcounts,
                      const MPI_Aint *displs, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return scatterv(sendbuf, mpi_count64(sendcounts), mpi_aint64(displs),
                    sendtype, recvbuf, recvcount, recvtype, root, comm, nb, fn);
}

/* The parameters of Gather and Scatter. */
#define ROOTED_PARAMS(C, CV, DV)                                               \
    (const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf,   \
     C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
#define ROOTED_ARGS                                                            \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)
#define GATHERV_PARAMS(C, CV, DV)                                              \
    (const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf,   \
     const CV recvcounts[], const DV displs[], MPI_Datatype recvtype,          \
     int root, MPI_Comm comm)
#define SCATTERV_PARAMS(C, CV, DV)                                             \
    (const void *sendbuf, const CV sendcounts[], const DV displs[],            \
     MPI_Datatype sendtype, void *recvbuf, C recvcount, MPI_Datatype recvtype, \
     int root, MPI_Comm comm)

MPI_COLL_PAIR(Gather, Igather, ROOTED_PARAMS, gather, gather, ROOTED_ARGS)
MPI_COLL_PAIR(Gatherv, Igatherv, GATHERV_PARAMS, gatherv_int, gatherv_c,
              (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
               recvtype, root, comm))
MPI_COLL_PAIR(Scatter, Iscatter, ROOTED_PARAMS, scatter, scatter, ROOTED_ARGS)
MPI_COLL_PAIR(Scatterv, Iscatterv, SCATTERV_PARAMS, scatterv_int, scatterv_c,
              (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
               recvtype, root, comm))
