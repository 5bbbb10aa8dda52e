/*
 * SHOAL_PROGRESS=thread: communication completes while every rank
 * computes without calling MPI.
 *
 * Rank 1 posts receives and computes; once it does, rank 0 starts a
 * synchronous send (it completes only when rank 1's engine matched it and
 * acknowledged) and a large send (rendezvous: the receiver's engine must
 * answer), and computes too, and tests while the others still compute.
 * With the progress thread, the first MPI_Test after the computation
 * already finds everything done; without it (argument "none"), nothing
 * can have moved, which the program checks too, so the test sees the
 * difference.  With more ranks, a nonblocking barrier (several rounds
 * through every rank) goes alongside.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpitest.h"

#define BIG (1 << 20)
#define COMPUTE_MS 300

static void compute(int ms)
{
    struct timespec t0, t;
    volatile double x = 1.0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 +
                 (t.tv_nsec - t0.tv_nsec) / 1000000 <
             ms);
}

int main(int argc, char **argv)
{
    int rank, size, expect = !(argc > 1 && strcmp(argv[1], "none") == 0);
    int small = 7, flag;
    char *big = calloc(BIG, 1);
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                          MPI_REQUEST_NULL};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 2, "needs 2 ranks");
    if (rank == 1) {
        MT_OK(MPI_Irecv(&small, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req[0]));
        MT_OK(MPI_Irecv(big, BIG, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[1]));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* receives are posted */
    if (rank == 0) {
        /* Let rank 1 leave the barrier and start computing first. */
        compute(COMPUTE_MS / 6);
        memset(big, 'x', BIG);
        MT_OK(MPI_Issend(&small, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req[0]));
        MT_OK(MPI_Isend(big, BIG, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[1]));
    }
    if (size > 2)
        MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[2]));
    /* Rank 0 looks while the others still compute. */
    compute(rank == 0 ? COMPUTE_MS - COMPUTE_MS / 6 : 2 * COMPUTE_MS);
    MT_OK(MPI_Testall(3, req, &flag, MPI_STATUSES_IGNORE));
    if (expect)
        MT_CHECK(flag, "communication did not complete while this rank "
                 "computed for %d ms (is the progress thread running?)",
                 COMPUTE_MS);
    else if (rank == 0)
        MT_CHECK(!flag, "a synchronous send completed while its receiver "
                 "computed, without a progress thread");
    MT_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    if (rank == 1)
        MT_CHECK(small == 7 && big[0] == 'x' && big[BIG - 1] == 'x',
                 "wrong data");
    free(big);
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("OK progress_thread (%s)\n", expect ? "thread" : "none");
    return 0;
}
