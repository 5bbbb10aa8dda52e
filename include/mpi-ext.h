/*
 * mpi-ext.h: MPI extensions, as MPI programs that use them include it
 * (Open MPI and MPICH ship one too).  Shoal's extensions are the ULFM
 * fault-tolerance interface (docs/FT.md): the MPIX_ERR_* classes and the
 * MPIX_Comm_* calls, declared in mpi.h and listed here so that a ULFM
 * program written for Open MPI builds unchanged.
 */
#ifndef SHOAL_MPI_EXT_H
#define SHOAL_MPI_EXT_H

#include "mpi.h"

/* Programs test these to know the ULFM calls are there.  MPIX_FT itself
 * (defined in mpi.h) is also the key of a predefined attribute, as in
 * Open MPI: MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &p, &flag) gives a
 * pointer to an int, 1 when failures are tolerated (shoalrun --ft), 0
 * when a death ends the job. */
#define SHOAL_MPIX_ULFM 1
/* ... with Open MPI's nonblocking shrink, MPIX_Comm_ishrink. */
#define SHOAL_MPIX_COMM_ISHRINK 1
/* ... and the checkpoint calls (MPIX_Checkpoint*, in mpi.h), with
 * MPIX_Checkpoint_if_requested (checkpoints the launcher asks for). */
#define SHOAL_MPIX_CHECKPOINT 1
#define SHOAL_MPIX_CHECKPOINT_IF_REQUESTED 1

/* Older ULFM names of the same classes. */
#ifndef MPI_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED MPIX_ERR_PROC_FAILED
#endif
#ifndef MPI_ERR_PROC_FAILED_PENDING
#define MPI_ERR_PROC_FAILED_PENDING MPIX_ERR_PROC_FAILED_PENDING
#endif
#ifndef MPI_ERR_REVOKED
#define MPI_ERR_REVOKED MPIX_ERR_REVOKED
#endif

#endif /* SHOAL_MPI_EXT_H */
