/*
 * User error codes and classes, and error handler references
 * (errhandler.c).  error.c asks here about codes above the predefined
 * classes when it formats strings and answers MPI_Error_class.
 */
#ifndef SHOAL_MPI_ERRH_H
#define SHOAL_MPI_ERRH_H

#include "mpi/mpi_impl.h"

/* The string of a user-added code or class ("" when none was set), or
 * NULL when code was not added by MPI_Add_error_code/class. */
const char *mpi_error_user_string(int code);
/* 1 and *cls set when code is a user-added code or class, else 0. */
int mpi_error_user_class(int code, int *cls);

/* The value behind the MPI_LASTUSEDCODE attribute. */
int *mpi_errh_lastused(void);

/* The initial error handler (MPI 4.0 section 9.3), as the launcher named
 * it (SHOAL_MPI_INITIAL_ERRHANDLER, shoalrun --initial-errhandler), and
 * its name as MPI_INFO_ENV reports it (mpi_initial_errhandler). */
MPI_Errhandler mpi_errh_initial(void);
const char *mpi_errh_initial_name(void);

/* mpi_errh_retain and mpi_errh_release: in mpi_impl.h (files use them). */

#endif /* SHOAL_MPI_ERRH_H */
