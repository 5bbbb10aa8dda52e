/*
 * The MPI program of the launcher tests (tests/mp/boot/run_boot.sh): run
 * by mpiexec.mpich, mpirun.openmpi and srun as well as shoalrun, it checks
 * hello (rank and size), an allreduce and a ring of point-to-point messages,
 * and prints one line from rank 0:
 *   launch_check ok: <size> ranks
 *   launch_check [SIZE]   (SIZE: the number of ranks expected)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int ok, int rank, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "launch_check: rank %d: %s failed\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank = -1, size = -1, sum = 0, got = -1;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(rank >= 0 && rank < size, rank, "rank in [0, size)");
    if (argc > 1)
        check(size == atoi(argv[1]), rank, "size as expected");
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(sum == size * (size - 1) / 2, rank, "allreduce of the ranks");
    /* Each rank sends its rank to the next and receives the previous's. */
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    check(got == (rank + size - 1) % size, rank, "ring sendrecv");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("launch_check ok: %d ranks\n", size);
    fflush(stdout);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
