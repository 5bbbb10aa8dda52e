/*
 * Checkpoint/restart measurements (docs/FT.md "Checkpoint costs",
 * docs/PERFORMANCE.md), run by bench/ft/ckpt_run under shoalrun
 * --checkpoint-dir (or --restart for read).  Times are the slowest
 * rank's (a checkpoint is done when every rank is), in seconds.
 *   write MIB REPS  MIB MiB registered per rank; one warm-up checkpoint,
 *                   then REPS timed MPIX_Checkpoint calls, one line each
 *   read MIB        under --restart: MPIX_Checkpoint_restarted loading
 *                   MIB MiB per rank (the images of a write run), one line
 *   poll CALLS      MPIX_Checkpoint_if_requested when nothing is asked:
 *                   ns per call (rank 0's)
 * Lines: "<mode> <mib> <seconds>" (poll: "poll <ns per call>").
 */
#define _GNU_SOURCE
#include <mpi-ext.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: %s: error %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The slowest rank's dt, on rank 0. */
static double slowest(double dt)
{
    double max = 0;
    check("reduce", MPI_Reduce(&dt, &max, 1, MPI_DOUBLE, MPI_MAX, 0,
                               MPI_COMM_WORLD));
    return max;
}

static char *region(long mib, int rank)
{
    size_t n = (size_t)mib << 20;
    char *p = malloc(n ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "FAIL: out of memory for %ld MiB\n", mib);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i += 64) /* touched, and not all zero */
        p[i] = (char)(i / 64 + (size_t)rank);
    return p;
}

int main(int argc, char **argv)
{
    int rank, flag;

    if (argc < 3) {
        fprintf(stderr, "usage: %s write MIB REPS | read MIB | poll CALLS\n",
                argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argv[1];
    long n = atol(argv[2]);

    if (strcmp(mode, "poll") == 0) {
        int taken = 0;
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++)
            check("if_requested",
                  MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, &taken));
        double dt = MPI_Wtime() - t0;
        if (rank == 0)
            printf("poll %.1f\n", dt / (double)n * 1e9);
    } else {
        /* 0 MiB: an 8-byte region (the coordination alone) */
        size_t bytes = n > 0 ? (size_t)n << 20 : 8;
        char *p = region(n, rank);
        check("register", MPIX_Checkpoint_register(p, bytes));
        if (strcmp(mode, "read") == 0) {
            check("barrier", MPI_Barrier(MPI_COMM_WORLD));
            double t0 = MPI_Wtime();
            check("restarted", MPIX_Checkpoint_restarted(&flag));
            double dt = slowest(MPI_Wtime() - t0);
            if (rank == 0)
                printf("read %ld %.6f\n", n, dt);
        } else {
            int reps = argc > 3 ? atoi(argv[3]) : 5;
            check("warm-up", MPIX_Checkpoint(MPI_COMM_WORLD));
            for (int r = 0; r < reps; r++) {
                check("barrier", MPI_Barrier(MPI_COMM_WORLD));
                double t0 = MPI_Wtime();
                check("checkpoint", MPIX_Checkpoint(MPI_COMM_WORLD));
                double dt = slowest(MPI_Wtime() - t0);
                if (rank == 0)
                    printf("write %ld %.6f\n", n, dt);
            }
        }
        free(p);
    }
    MPI_Finalize();
    return 0;
}
