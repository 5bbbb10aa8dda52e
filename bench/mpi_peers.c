/*
 * The peer MPIs' numbers for what shoal-bench measures at the active-message
 * level: 8-byte one-way latency (ping-pong, half a round trip) and barrier.
 * Plain MPI, built with each implementation's own compiler wrapper.
 *   mpi_peers latency | barrier      (prints one number in microseconds)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double latency_us(int rank)
{
    char buf[8] = {0};
    const int iters = 20000;
    double t[9];

    for (int r = 0; r < 9; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[r] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    }
    qsort(t, 9, sizeof(double), cmp);
    return t[4];
}

static double barrier_us(void)
{
    double t[5];
    int n = 10;

    /* Calibrate to about 0.3 s per sample: MPICH's oversubscribed barrier
     * takes tens of milliseconds, Open MPI's microseconds. */
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double each = (MPI_Wtime() - t0) / n;
    n = each > 0 ? (int)(0.3 / each) : 1000;
    if (n < 3)
        n = 3;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; r < 5; r++) {
        t0 = MPI_Wtime();
        for (int i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        t[r] = (MPI_Wtime() - t0) / n * 1e6;
    }
    qsort(t, 5, sizeof(double), cmp);
    return t[2];
}

int main(int argc, char **argv)
{
    int rank;
    double v;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && strcmp(argv[1], "latency") == 0)
        v = latency_us(rank);
    else
        v = barrier_us();
    if (rank == 0)
        printf("%.3f\n", v);
    MPI_Finalize();
    return 0;
}
