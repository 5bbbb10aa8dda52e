/*
 * The tolerant barrier's contract, rank by rank (run with
 * SHOAL_BARRIER=tolerant): MPI_Barrier returns at once; what a rank sent
 * before its barrier is delivered at once; what it sent after is held
 * back until the receiver's barrier has completed (the receiver cannot
 * even probe it earlier); then everything arrives in order.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpitest.h"

#define LATE_MS 300

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size, v;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (rank != 0) {
        v = rank;
        MT_OK(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
        double t = now();
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        t = now() - t;
        /* Rank 0 enters LATE_MS late: a blocking barrier would wait. */
        MT_CHECK(t < LATE_MS / 3 * 1e-3, "MPI_Barrier took %.1f ms", t * 1e3);
        for (int i = 1; i <= 3; i++) {
            v = rank * 100 + i;
            MT_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        }
    } else {
        double until = now() + LATE_MS * 1e-3;
        /* Before the barrier: the early messages, never the late ones. */
        for (int src = 1; src < size; src++) {
            MT_OK(MPI_Recv(&v, 1, MPI_INT, src, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            MT_CHECK(v == src, "early message from %d is %d", src, v);
        }
        while (now() < until) {
            int flag = 1;
            MT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag,
                             MPI_STATUS_IGNORE));
            MT_CHECK(!flag, "a message sent after the barrier was visible "
                     "before this rank entered it");
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int src = 1; src < size; src++)
            for (int i = 1; i <= 3; i++) {
                MT_OK(MPI_Recv(&v, 1, MPI_INT, src, 1, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
                MT_CHECK(v == src * 100 + i, "late message %d from %d is %d",
                         i, src, v);
            }
    }
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("OK tol_gate\n");
    return 0;
}
