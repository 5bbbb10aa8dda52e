/*
 * Helpers shared by the MPI test programs: checks that name the rank, file
 * and line, and abort the whole job on failure (so shoalrun reports it).
 */
#ifndef SHOAL_MPITEST_H
#define SHOAL_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int mt_rank(void)
{
    int r = -1, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

#define MT_FAIL(...)                                                         \
    do {                                                                     \
        fprintf(stderr, "FAIL rank %d %s:%d: ", mt_rank(), __FILE__,         \
                __LINE__);                                                   \
        fprintf(stderr, __VA_ARGS__);                                        \
        fprintf(stderr, "\n");                                               \
        fflush(stderr);                                                      \
        MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        exit(1);                                                             \
    } while (0)

#define MT_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "check failed: %s\n", #cond);                   \
            MT_FAIL(__VA_ARGS__);                                            \
        }                                                                    \
    } while (0)

/* An MPI call that must succeed. */
#define MT_OK(call)                                                          \
    do {                                                                     \
        int mt_rc_ = (call);                                                 \
        if (mt_rc_ != MPI_SUCCESS) {                                         \
            char mt_s_[MPI_MAX_ERROR_STRING];                                \
            int mt_l_ = 0;                                                   \
            MPI_Error_string(mt_rc_, mt_s_, &mt_l_);                         \
            MT_FAIL("%s returned %d (%s)", #call, mt_rc_, mt_s_);            \
        }                                                                    \
    } while (0)

/* An MPI call that must fail with error class cls (ERRORS_RETURN set). */
#define MT_ERR(cls, call)                                                    \
    do {                                                                     \
        int mt_rc_ = (call), mt_c_ = -1;                                     \
        if (mt_rc_ == MPI_SUCCESS)                                           \
            MT_FAIL("%s succeeded; expected class %d", #call, (cls));        \
        MPI_Error_class(mt_rc_, &mt_c_);                                     \
        if (mt_c_ != (cls))                                                  \
            MT_FAIL("%s gave class %d; expected %d", #call, mt_c_, (cls));   \
    } while (0)

#endif
