/*
 * An MPI program across namespace hosts, for when a network wire exists:
 * a ring exchange and an allreduce, checked, then one line per rank:
 *   mpi rank R of S ok
 */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, got = -1, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (got != (rank + size - 1) % size || sum != size * (size - 1) / 2) {
        fprintf(stderr, "rank %d: ring got %d, sum %d\n", rank, got, sum);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    printf("mpi rank %d of %d ok\n", rank, size);
    MPI_Finalize();
    return 0;
}
