/*
 * MPI_THREAD_MULTIPLE: 4 threads per rank exchange messages with the same
 * thread of the neighbouring ranks at once (thread t uses tag t), blocking
 * and nonblocking, small and rendezvous-sized; every byte is checked.
 */
#include "mpitest.h"

#include <pthread.h>

#define NTHREADS 4
#define ITERS 300

static int rank, size;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int n = t == 3 ? 20000 : 16 * (t + 1); /* thread 3: rendezvous */
    int *out = malloc((size_t)n * sizeof(int));
    int *in = malloc((size_t)n * sizeof(int));

    for (int it = 0; it < ITERS; it++) {
        MPI_Request r;
        MPI_Status st;
        for (int i = 0; i < n; i++)
            out[i] = (rank * 31 + t * 7 + it) ^ i;
        MT_OK(MPI_Irecv(in, n, MPI_INT, left, t, MPI_COMM_WORLD, &r));
        if (it % 2)
            MT_OK(MPI_Send(out, n, MPI_INT, right, t, MPI_COMM_WORLD));
        else
            MT_OK(MPI_Ssend(out, n, MPI_INT, right, t, MPI_COMM_WORLD));
        MT_OK(MPI_Wait(&r, &st));
        MT_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == t, "status");
        for (int i = 0; i < n; i++)
            if (in[i] != ((left * 31 + t * 7 + it) ^ i))
                MT_FAIL("thread %d iteration %d: in[%d] = %d", t, it, i,
                        in[i]);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, flag;
    pthread_t th[NTHREADS];

    MT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_OK(MPI_Is_thread_main(&flag));
    MT_CHECK(flag, "main thread");
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    MT_OK(MPI_Query_thread(&provided));
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "query_thread");
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_threads: OK\n");
    return 0;
}
