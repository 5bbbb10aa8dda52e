/*
 * Blocking, nonblocking and persistent forms of one collective share one
 * function in coll_api_all.c, coll_api_rooted.c and coll_api_neighbor.c: the
 * checks, then the collective layer's call between mpi_nb_begin and
 * mpi_nb_end.  A NULL mpi_nb_t * is the blocking call, which runs to
 * completion as before; otherwise the schedule is wrapped in a request
 * (coll_forms.c).
 *
 *     TRY(mpi_nb_check(comm, nb, fn));     communicator, request, info
 *     ...the call's own checks...
 *     TRY(mpi_nb_begin(comm, nb, datatype, NULL, op, fn));
 *     rc = coll_xxx(mpi_coll_of(comm), ...);
 *     return mpi_nb_end(comm, rc, nb, fn);
 *
 * The schedule keeps the user's buffers, as the standard lets it (the user
 * leaves them alone until completion), but nothing of the caller's
 * arrays: the collective layer reads counts, displacements and type
 * arrays while it builds.  Datatypes and operations are kept alive by
 * the request until it is freed, so the user may free them at once.
 */
#ifndef SHOAL_MPI_COLL_NB_H
#define SHOAL_MPI_COLL_NB_H

#include "mpi/coll/coll_mpi.h"

#define TRY(call)                                                            \
    do {                                                                     \
        int try_rc_ = (call);                                                \
        if (try_rc_ != MPI_SUCCESS)                                          \
            return try_rc_;                                                  \
    } while (0)

typedef struct mpi_nb_hold mpi_nb_hold_t;

typedef struct mpi_nb {
    MPI_Request *request;
    int persistent; /* 0: MPI_Ixxx, 1: MPI_Xxx_init */
    MPI_Info info;  /* persistent forms: checked, then unused */
    coll_sched_t *sched; /* what the collective layer hands over */
    /* kept alive until the request is freed (NULL: nothing) */
    MPI_Datatype types[2];
    MPI_Op op;
    /* per-block types of w forms: tv[i][k] where counts[i][k] > 0, read
     * by mpi_nb_begin only (the request copies what it keeps) */
    int n[2];
    const int64_t *counts[2];
    const MPI_Datatype *tv[2];
    mpi_nb_hold_t *hold;
} mpi_nb_t;

/* The mpi_nb_t of a nonblocking (persistent 0) or persistent call. */
#define MPI_NB(request_, persistent_, info_)                                 \
    (&(mpi_nb_t){.request = (request_), .persistent = (persistent_),         \
                 .info = (info_)})

/* The communicator (mpi_coll_check_comm); for nb, the request pointer and
 * the info of a persistent call too. */
int mpi_nb_check(MPI_Comm comm, const mpi_nb_t *nb, const char *fn);

/* Side i (0 send, 1 receive) of a w form, before mpi_nb_begin: the
 * request keeps types[k] where counts[k] > 0. */
static inline void mpi_nb_keep_w(mpi_nb_t *nb, int i, int n,
                                 const int64_t *counts,
                                 const MPI_Datatype *types)
{
    if (nb != NULL) {
        nb->n[i] = n;
        nb->counts[i] = counts;
        nb->tv[i] = types;
    }
}

int mpi_nb_start(MPI_Comm comm, mpi_nb_t *nb, const char *fn);
int mpi_nb_finish(MPI_Comm comm, int rc, mpi_nb_t *nb, const char *fn);

/*
 * Before the collective layer's call, with the datatypes and operation the
 * call uses (NULL for none; only those the checks found valid): for a
 * blocking call, mpi_coll_begin_blocking; else the request takes
 * references to them (or the call fails with MPI_ERR_NO_MEM before
 * anything started) and mpi_coll_begin makes the layer hand its schedule
 * over.
 */
static inline int mpi_nb_begin(MPI_Comm comm, mpi_nb_t *nb, MPI_Datatype a,
                               MPI_Datatype b, MPI_Op op, const char *fn)
{
    if (nb == NULL) {
        mpi_coll_begin_blocking(comm);
        return MPI_SUCCESS;
    }
    nb->types[0] = a;
    nb->types[1] = b;
    nb->op = op;
    return mpi_nb_start(comm, nb, fn);
}

/* After it: the blocking call's result, or the request in *nb->request. */
static inline int mpi_nb_end(MPI_Comm comm, int rc, mpi_nb_t *nb,
                             const char *fn)
{
    return nb == NULL ? mpi_coll_end_blocking(comm, rc, fn)
                      : mpi_nb_finish(comm, rc, nb, fn);
}

/*
 * Checks the neighbourhood calls share with the others: counts and
 * displacements of one side of a v or w form (n blocks), and the per-block
 * types of a w form, each valid where it carries data (coll_api_all.c).
 */
int mpi_coll_check_side(MPI_Comm comm, int n, const int64_t *counts,
                        const void *displs, const char *fn, const char *cname,
                        const char *dname);
int mpi_coll_check_types(MPI_Comm comm, int n, const int64_t *counts,
                         const MPI_Datatype *types, const char *fn,
                         const char *tname);

/*
 * The entry points.  MPI_COLL_FORMS defines the blocking, nonblocking
 * and persistent forms of one collective, PMPI_<name><sfx>,
 * PMPI_<iname><sfx> and PMPI_<name>_init<sfx>, each with its MPI_ alias:
 * each calls impl(<args>, nb, "MPI_..."), where params is the blocking
 * form's parameter list (the other two add request, or info and request)
 * and args are impl's arguments before nb.
 *
 * MPI_COLL_PAIR makes the int forms (sfx empty) and the large-count ones
 * (sfx _c) from one parameter list, params_of(C, CV, DV), whose count
 * scalars are of type C, count arrays CV[] and displacement arrays DV[]:
 * int, int, int for the int forms and MPI_Count, MPI_Count, MPI_Aint for
 * the _c forms.  impl serves the int forms, impl_c the _c forms; they are
 * the same function where the call has no array, else wrappers that pass
 * the arrays on as 64-bit ones (mpi_widen, mpi_count64).
 */
#define MPI_LIST(...) __VA_ARGS__

#define MPI_COLL_FORMS(name, iname, sfx, params, impl, args)                   \
    int PMPI_##name##sfx(MPI_LIST params)                                      \
    {                                                                          \
        MPI_CHECK_INIT("MPI_" #name #sfx);                                     \
        return impl(MPI_LIST args, NULL, "MPI_" #name #sfx);                   \
    }                                                                          \
    SHOAL_MPI_WEAK(name##sfx)                                                  \
    int PMPI_##iname##sfx(MPI_LIST params, MPI_Request *request)               \
    {                                                                          \
        MPI_CHECK_INIT("MPI_" #iname #sfx);                                    \
        return impl(MPI_LIST args, MPI_NB(request, 0, MPI_INFO_NULL),          \
                    "MPI_" #iname #sfx);                                       \
    }                                                                          \
    SHOAL_MPI_WEAK(iname##sfx)                                                 \
    int PMPI_##name##_init##sfx(MPI_LIST params, MPI_Info info,                \
                                MPI_Request *request)                          \
    {                                                                          \
        MPI_CHECK_INIT("MPI_" #name "_init" #sfx);                             \
        return impl(MPI_LIST args, MPI_NB(request, 1, info),                   \
                    "MPI_" #name "_init" #sfx);                                \
    }                                                                          \
    SHOAL_MPI_WEAK(name##_init##sfx)

#define MPI_COLL_PAIR(name, iname, params_of, impl, impl_c, args)              \
    MPI_COLL_FORMS(name, iname, , params_of(int, int, int), impl, args)        \
    MPI_COLL_FORMS(name, iname, _c, params_of(MPI_Count, MPI_Count, MPI_Aint), \
                   impl_c, args)

/* Parameter lists (and impl arguments) that several files share: the
 * plain two-sided calls (Allgather, Alltoall, their neighbourhood forms),
 * the allgatherv and alltoallv ones. */
#define MPI_PLAIN_PARAMS(C, CV, DV)                                            \
    (const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf,   \
     C recvcount, MPI_Datatype recvtype, MPI_Comm comm)
#define MPI_PLAIN_ARGS                                                         \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
#define MPI_ALLGATHERV_PARAMS(C, CV, DV)                                       \
    (const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf,   \
     const CV recvcounts[], const DV displs[], MPI_Datatype recvtype,          \
     MPI_Comm comm)
#define MPI_ALLGATHERV_ARGS                                                    \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)
#define MPI_ALLTOALLV_PARAMS(C, CV, DV)                                        \
    (const void *sendbuf, const CV sendcounts[], const DV sdispls[],           \
     MPI_Datatype sendtype, void *recvbuf, const CV recvcounts[],              \
     const DV rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define MPI_ALLTOALLV_ARGS                                                     \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,     \
     recvtype, comm)

#endif /* SHOAL_MPI_COLL_NB_H */
