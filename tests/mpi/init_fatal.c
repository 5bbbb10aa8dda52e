/*
 * Errors outside MPI_Init..MPI_Finalize go to the initial error handler,
 * MPI_ERRORS_ARE_FATAL (MPI 4.0 section 9.3): the process ends with a
 * message instead of running on without MPI.
 *   init_fatal init    MPI_Init, its return value ignored as most programs
 *                      do (the test makes it fail), then MPI calls
 *   init_fatal before  MPI_Comm_rank before MPI_Init
 *   init_fatal after   MPI_Barrier after MPI_Finalize
 *   init_fatal twice   MPI_Init twice, MPI_COMM_WORLD's handler set to
 *                      MPI_ERRORS_RETURN between: the second returns
 *                      MPI_ERR_OTHER and the program goes on (exit 0)
 *   init_fatal killed  rank 1 prints a line (no fflush) and kills itself
 *                      with SIGKILL: the line reaches the launcher when
 *                      MPI_Init made stdout line-buffered (SHOAL_MPI_STDOUT)
 * Each mode but twice prints "went on" only if the process survived the
 * erroneous call; the tests require a non-zero exit, the message, and no
 * "went on".
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rank = -1, rc;

    if (strcmp(mode, "before") == 0) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        printf("went on after MPI_Comm_rank before MPI_Init\n");
        return 0;
    }
    rc = MPI_Init(&argc, &argv);
    if (strcmp(mode, "init") == 0) {
        printf("went on after a failed MPI_Init (it returned %d)\n", rc);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        return 0;
    }
    if (strcmp(mode, "twice") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Init(&argc, &argv);
        MPI_Finalize();
        if (rc == MPI_SUCCESS) {
            printf("FAIL: the second MPI_Init succeeded\n");
            return 1;
        }
        printf("second MPI_Init returned an error, as it must\n");
        return 0;
    }
    if (strcmp(mode, "killed") == 0) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 1) {
            printf("rank 1 printed this line before its SIGKILL\n");
            raise(SIGKILL);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* the death ends the job */
        printf("went on after the death of rank 1\n");
        return 0;
    }
    MPI_Finalize();
    if (strcmp(mode, "after") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        printf("went on after MPI_Barrier after MPI_Finalize\n");
        return 0;
    }
    fprintf(stderr, "usage: init_fatal init|before|after|twice|killed\n");
    return 2;
}
