/*
 * Blocking, nonblocking and persistent forms of one collective share one
 * function in mpi_coll_all.c, mpi_coll_rooted.c and mpi_neighbor.c: the
 * checks, then the collective layer's call between mpi_nb_begin and
 * mpi_nb_end.  A NULL mpi_nb_t * is the blocking call, which runs to
 * completion as before; otherwise the schedule is wrapped in a request
 * (mpi_coll_nb.c).
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

#include "mpi_coll.h"

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
    /* per-block types of w forms: tv[i][k] where counts[i][k] > 0 */
    int n[2];
    const int *counts[2];
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
                                 const int *counts,
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
 * types of a w form, each valid where it carries data (mpi_coll_all.c).
 */
int mpi_coll_check_side(MPI_Comm comm, int n, const int *counts,
                        const void *displs, const char *fn,
                        const char *cname, const char *dname);
int mpi_coll_check_types(MPI_Comm comm, int n, const int *counts,
                         const MPI_Datatype *types, const char *fn,
                         const char *tname);

#endif /* SHOAL_MPI_COLL_NB_H */
