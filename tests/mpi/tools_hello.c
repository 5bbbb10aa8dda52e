/*
 * The MPI hello world of the tools tests (tools.cmake): built by shoalcc,
 * by a CMake project through FindMPI, and by the installed mpicc, and run
 * through shoalrun, mpiexec and mpirun.  Prints one line per rank.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from rank %d of %d\n", rank, size);
    fflush(stdout);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
