/*
 * MPI collectives: what the files of src/mpi/coll share.  coll_transport.c glues
 * the collective layer (src/coll/) to point-to-point in the communicator's
 * collective context and holds the argument checks; the calls themselves
 * are in coll_api_rooted.c (with a root) and coll_api_all.c (without).
 *
 * Every check reports through mpi_error with the argument's name and
 * value and returns its code; callers return at the first non-success.
 */
#ifndef SHOAL_MPI_COLL_H
#define SHOAL_MPI_COLL_H

#include <stdlib.h>

#include "coll/coll.h"
#include "mpi/mpi_impl.h"

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
/* Counts are MPI_Count here: the int forms' counts convert to it. */
int mpi_coll_check_count(MPI_Comm comm, MPI_Count count, const char *fn,
                         const char *what);
/* A (buffer, count, datatype) triple that is used here. */
int mpi_coll_check_data(MPI_Comm comm, const void *buf, MPI_Count count,
                        MPI_Datatype dt, const char *fn, const char *what);
/* counts of n ranks, each checked as a count. */
int mpi_coll_check_counts(MPI_Comm comm, int n, const int64_t *counts,
                          const char *fn, const char *what);
int mpi_coll_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                      const char *fn);
/*
 * sendbuf is recvbuf, or the block of recvbuf whose data is this rank's
 * own (own: NULL for none): the standard forbids an output buffer aliased
 * with another argument (MPI 4.0, 2.6.1), and MPI_IN_PLACE is the way to
 * reuse one.  MPI_ERR_BUFFER; in place and NULL (MPI_BOTTOM) buffers are
 * not compared.  Callers check only where both sides carry data.
 */
int mpi_coll_check_alias(MPI_Comm comm, const void *sendbuf,
                         const void *recvbuf, const void *own, const char *fn);

/* Element at of buf, of type dt (integer arithmetic: buf may be
 * MPI_BOTTOM). */
static inline const void *mpi_coll_elem(const void *buf, int64_t at,
                                        MPI_Datatype dt)
{
    return (const void *)((uintptr_t)buf + (uintptr_t)(at * dt->extent));
}

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
/* Instead of the collective layer's call and mpi_coll_end_blocking, when
 * a coll_now_* call (made after mpi_coll_begin_blocking) took the call:
 * waits for it and returns its MPI result. */
int mpi_coll_now_end(MPI_Comm comm, coll_now_t *call, const char *fn);

/*
 * Count and displacement arrays.  The calls share one path for the int
 * forms (MPI_Gatherv, ...) and the large-count forms (MPI_Gatherv_c, ...):
 * their internal functions and the collective layer take 64-bit arrays.
 * The _c forms' MPI_Count and MPI_Aint arrays are those already (same
 * size, only ever read); the int forms' arrays are widened into an
 * mpi_wide_t, on the stack for up to MPI_WIDE_LOCAL elements in all, else
 * in one allocation, released by mpi_wide_free once the call has built its
 * schedule (the collective layer keeps no caller array).
 */
_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) &&
                   sizeof(MPI_Aint) == sizeof(int64_t),
               "MPI_Count and MPI_Aint arrays are read as int64_t");

static inline const int64_t *mpi_count64(const MPI_Count *a)
{
    return (const int64_t *)a;
}

static inline const int64_t *mpi_aint64(const MPI_Aint *a)
{
    return (const int64_t *)a;
}

#define MPI_WIDE_LOCAL 128
#define MPI_WIDE_MAX 4 /* arrays per call */

typedef struct mpi_wide {
    int64_t *heap;
    int64_t local[MPI_WIDE_LOCAL];
} mpi_wide_t;

/*
 * out[k] = in[k] (n[k] ints) as 64-bit integers, for k < m: NULL stays
 * NULL (the call's checks report it) and an n[k] of 0 gives an empty
 * array, for arrays that are not significant here or a call whose checks
 * will fail before reading them.  Returns MPI_SUCCESS, or MPI_ERR_NO_MEM
 * reported on comm (valid whenever some n[k] > 0); either way
 * mpi_wide_free(w) follows.
 */
int mpi_widen(MPI_Comm comm, mpi_wide_t *w, int m, const int *const in[],
              const int n[], const int64_t *out[], const char *fn);

static inline void mpi_wide_free(mpi_wide_t *w)
{
    free(w->heap);
    w->heap = NULL;
}

#endif /* SHOAL_MPI_COLL_H */
