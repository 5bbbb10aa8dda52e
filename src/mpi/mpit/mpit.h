/*
 * The tool information interface (MPI_T, MPI 4.0 chapter 15): what its
 * two files share.  mpit_cvar.c has the interface's life, control
 * variables (every SHOAL_* setting, read-only: the library reads them
 * once), their enumerations and the categories; mpit_pvar.c the
 * performance variables (the active-message layer's counters) and their
 * sessions and handles.
 *
 * MPI_T calls never run error handlers: they return the class.  They may
 * be called before MPI_Init and after MPI_Finalize, between
 * MPI_T_init_thread and MPI_T_finalize.
 */
#ifndef SHOAL_MPI_MPIT_H
#define SHOAL_MPI_MPIT_H

#include "mpi/mpi_impl.h"

/* Is the interface initialized (MPI_T_init_thread more often than
 * MPI_T_finalize)? */
int mpit_ready(void);

#define MPIT_CHECK()                                                         \
    do {                                                                     \
        if (!mpit_ready())                                                   \
            return MPI_T_ERR_NOT_INITIALIZED;                                \
    } while (0)

/* The interface's rule for strings out: when out and *len are given and
 * *len > 0, copy at most *len - 1 characters and a terminator; *len (when
 * given) becomes the length of s with its terminator. */
void mpit_str(const char *s, char *out, int *len);

/* Performance variables (mpit_pvar.c): how many, and the category each
 * is in ("AM_COUNTERS"). */
int mpit_pvar_count(void);
#define MPIT_PVAR_CATEGORY "AM_COUNTERS"

#endif
