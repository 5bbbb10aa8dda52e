/*
 * MPI collectives: what the mpi_coll*.c files share.  mpi_coll.c glues
 * the collective layer (src/coll/) to point-to-point in the communicator's
 * collective context and holds the argument checks; the calls themselves
 * are in mpi_coll_rooted.c (with a root) and mpi_coll_all.c (without).
 *
 * Every check reports through mpi_error with the argument's name and
 * value and returns its code; callers return at the first non-success.
 */
#ifndef SHOAL_MPI_COLL_H
#define SHOAL_MPI_COLL_H

#include "coll/coll.h"
#include "mpi_impl.h"

/* The collective layer's view of comm (created on first use if needed). */
coll_comm_t *mpi_coll_of(MPI_Comm comm);

/* Turn a collective layer result into an MPI return, reporting errors. */
int mpi_coll_done(MPI_Comm comm, int rc, const char *fn);

/* MPI_IN_PLACE as the collective layer spells it. */
static inline const void *mpi_coll_buf(const void *buf)
{
    return buf == MPI_IN_PLACE ? COLL_IN_PLACE : buf;
}

int mpi_coll_check_comm(MPI_Comm comm, const char *fn);
int mpi_coll_check_root(MPI_Comm comm, int root, const char *fn);
int mpi_coll_check_count(MPI_Comm comm, int count, const char *fn,
                         const char *what);
/* A (buffer, count, datatype) triple that is used here. */
int mpi_coll_check_data(MPI_Comm comm, const void *buf, int count,
                        MPI_Datatype dt, const char *fn, const char *what);
/* counts (and displs, when given) of n ranks, each checked as a count. */
int mpi_coll_check_counts(MPI_Comm comm, int n, const int *counts,
                          const int *displs, const char *fn,
                          const char *what);
int mpi_coll_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                      const char *fn);
/* MPI_IN_PLACE where the standard does not allow it. */
int mpi_coll_bad_in_place(MPI_Comm comm, const char *fn, const char *what,
                          const char *why);

/*
 * Nonblocking (persistent 0) and persistent (1) collectives: the call's
 * arguments are checked first; then
 *     coll_sched_t *s;
 *     mpi_coll_begin(comm, persistent, &s);
 *     rc = coll_xxx(mpi_coll_of(comm), ...);
 *     return mpi_coll_end(comm, rc, s, request, "MPI_Ixxx");
 * begin takes the engine lock and points the communicator's start_out at
 * s; end releases both, and wraps the schedule in *request (started for
 * a nonblocking call, inactive until MPI_Start for a persistent one).
 */
void mpi_coll_begin(MPI_Comm comm, int persistent, coll_sched_t **s);
int mpi_coll_end(MPI_Comm comm, int rc, coll_sched_t *s, MPI_Request *req,
                 const char *fn);
/* The same for a blocking call: end waits for the schedule and returns the
 * call's MPI result (mpi_coll_done). */
void mpi_coll_begin_blocking(MPI_Comm comm);
int mpi_coll_end_blocking(MPI_Comm comm, int rc, const char *fn);

#endif /* SHOAL_MPI_COLL_H */
