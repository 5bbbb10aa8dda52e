/*
 * Helpers of the ULFM test programs (ft_ulfm.c, ft_inter.c): a rank that
 * kills itself, error classes, and a call that must fail with one.
 * Include after mpitest.h, with _GNU_SOURCE defined.
 */
#ifndef SHOAL_FT_TEST_H
#define SHOAL_FT_TEST_H

#include <mpi-ext.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

/* Die as a crash does: SIGKILL, nothing flushed by MPI.  With
 * FT_DIE=exit, as a program that gives up does: exit(3) before
 * MPI_Finalize, atexit handlers and all (a failure under --ft too). */
static inline void ft_die(void)
{
    const char *how = getenv("FT_DIE");

    fflush(stdout);
    fflush(stderr);
    if (how != NULL && strcmp(how, "exit") == 0)
        exit(3);
    raise(SIGKILL);
}

static inline int ft_cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* call must return an error of class want (or MPI_SUCCESS for 0). */
#define EXPECT(want, call)                                                   \
    do {                                                                     \
        int rc_ = (call);                                                    \
        MT_CHECK(ft_cls(rc_) == (want), "%s: class %d, want %d (%s)", #call, \
                 ft_cls(rc_), (want), #want);                                \
    } while (0)

/* MPI_Init, errors returned on MPI_COMM_WORLD, this rank and the size. */
static inline void ft_init(int *argc, char ***argv, int *me, int *np)
{
    MT_OK(MPI_Init(argc, argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, me));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, np));
}

#endif /* SHOAL_FT_TEST_H */
