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
#include <sched.h>
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

/*
 * Four threads idup four communicators of all ranks; on even ranks
 * threads 0 and 2 start only once the idups of threads 1 and 3 have
 * completed.  On odd ranks the idups of d[0] and d[2] start at once and
 * must not hold back those of d[1] and d[3] while they wait for the even
 * ranks (MPICH's threads/comm/idup_deadlock hung so).
 */
#define NLATE 4
static MPI_Comm d[NLATE];
static int early_done;
static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;

static void *late(void *arg)
{
    int t = (int)(intptr_t)arg, n;
    MPI_Comm x;
    MPI_Request r;

    if (t % 2 == 0 && rank % 2 == 0)
        do {
            pthread_mutex_lock(&early_lock);
            n = early_done;
            pthread_mutex_unlock(&early_lock);
            sched_yield();
        } while (n < NLATE / 2);
    MT_OK(MPI_Comm_idup(d[t], &x, &r));
    MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (t % 2) {
        pthread_mutex_lock(&early_lock);
        early_done++;
        pthread_mutex_unlock(&early_lock);
    }
    use(x, size);
    MT_OK(MPI_Comm_free(&x));
    return NULL;
}

static void idup_late_start(void)
{
    pthread_t th[NLATE];

    for (int t = 0; t < NLATE; t++)
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d[t]));
    for (int t = 0; t < NLATE; t++)
        MT_CHECK(pthread_create(&th[t], NULL, late, (void *)(intptr_t)t) == 0,
                 "thread");
    for (int t = 0; t < NLATE; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NLATE; t++)
        MT_OK(MPI_Comm_free(&d[t]));
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
    idup_late_start();
    MT_OK(MPI_Comm_free(&c[0]));
    MT_OK(MPI_Comm_free(&c[1]));
    MT_OK(MPI_Finalize());
    return 0;
}
