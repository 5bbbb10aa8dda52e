/*
 * MPI_THREAD_MULTIPLE: communicator constructions in two threads, in
 * different orders on different ranks, as the standard allows for
 * different communicators.  On each rank one thread dups one of two
 * duplicates of MPI_COMM_WORLD (c[rank % 2]: even ranks start with c[0],
 * odd ones with c[1]) while the other thread, once that dup has surely
 * started, dups MPI_COMM_SELF and then the other duplicate.  The first
 * dup waits for the other ranks' second thread, which must get through
 * its MPI_COMM_SELF dup while this rank's first dup is in flight (it
 * used to wait for the context id bitmap the first dup held: a hang, as
 * in MPICH's threads/comm/comm_dup_deadlock and comm_idup).  Iteration
 * 1 makes a one-member MPI_Comm_create_group instead of the
 * MPI_COMM_SELF dup; iterations 2 and 3 use MPI_Comm_idup throughout.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpitest.h"

#include <pthread.h>
#include <time.h>

#define ITERS 4

static int rank, size;
static MPI_Comm c[2];

/* The communicator is usable: a barrier, and a rank that makes sense. */
static void use(MPI_Comm comm, int expect_size)
{
    int n;

    MT_OK(MPI_Comm_size(comm, &n));
    MT_CHECK(n == expect_size, "size %d, not %d", n, expect_size);
    MT_OK(MPI_Barrier(comm));
}

/* Iterations 2 and 3 use MPI_Comm_idup (and MPI_Wait at once). */
static void dup_use_free(MPI_Comm parent, int expect_size, int it)
{
    MPI_Comm d;
    MPI_Request r;

    if (it >= 2) {
        MT_OK(MPI_Comm_idup(parent, &d, &r));
        MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MT_OK(MPI_Comm_dup(parent, &d));
    }
    use(d, expect_size);
    MT_OK(MPI_Comm_free(&d));
}

static void *first(void *arg)
{
    dup_use_free(c[rank % 2], size, (int)(intptr_t)arg);
    return NULL;
}

static void *second(void *arg)
{
    int it = (int)(intptr_t)arg;
    MPI_Group g, me;
    MPI_Comm one;

    /* the first thread's dup is in flight by now */
    nanosleep(&(struct timespec){0, 200000000}, NULL);
    if (it == 1) {
        MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
        MT_OK(MPI_Group_incl(g, 1, &rank, &me));
        MT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, me, 7, &one));
        use(one, 1);
        MT_OK(MPI_Comm_free(&one));
        MT_OK(MPI_Group_free(&me));
        MT_OK(MPI_Group_free(&g));
    } else {
        dup_use_free(MPI_COMM_SELF, 1, it);
    }
    dup_use_free(c[(rank + 1) % 2], size, it);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;

    MT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[0]));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[1]));
    for (int it = 0; it < ITERS; it++) {
        pthread_t a, b;

        MT_CHECK(pthread_create(&a, NULL, first, (void *)(intptr_t)it) == 0, "thread");
        MT_CHECK(pthread_create(&b, NULL, second, (void *)(intptr_t)it) == 0,
                 "thread");
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_OK(MPI_Comm_free(&c[0]));
    MT_OK(MPI_Comm_free(&c[1]));
    MT_OK(MPI_Finalize());
    return 0;
}
