/*
 * MPI_Comm_idup does not wait for the other ranks: rank 0 starts an idup
 * and then sends to rank 1, which receives before it starts its own idup
 * (a blocking duplicate would deadlock here).  Several idups outstanding
 * at once, completed in reverse order, each giving a working communicator
 * whose traffic does not mix with the parent's.
 */
#include "mpitest.h"

#define N 4

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_Comm d[N];
    MPI_Request r[N];

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2) {
        if (rank == 0) {
            MT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &r[0]));
            x = 42;
            MT_OK(MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        } else {
            if (rank == 1)
                MT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            MT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &r[0]));
        }
    } else {
        MT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &r[0]));
    }
    for (int i = 1; i < N; i++)
        MT_OK(MPI_Comm_idup(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, &d[i],
                            &r[i]));
    for (int i = N - 1; i >= 0; i--) {
        MT_OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
        MT_CHECK(d[i] != MPI_COMM_NULL, "idup %d gave a communicator", i);
    }
    for (int i = 0; i < N; i++) {
        int result, sz;
        MT_OK(MPI_Comm_compare(d[i], i % 2 || i == 0 ? MPI_COMM_WORLD
                                                     : MPI_COMM_SELF,
                               &result));
        MT_CHECK(result == MPI_CONGRUENT, "idup %d congruent (%d)", i,
                 result);
        MT_OK(MPI_Comm_size(d[i], &sz));
        /* Same tag on the duplicate and the parent: no mixing. */
        int right = (rank + 1) % sz, left = (rank + sz - 1) % sz;
        int a = rank, b = -1, c = -1;
        MPI_Comm parent = i % 2 || i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
        MPI_Request q[3];
        MT_OK(MPI_Irecv(&b, 1, MPI_INT, left, 9, d[i], &q[0]));
        MT_OK(MPI_Irecv(&c, 1, MPI_INT, left, 9, parent, &q[1]));
        MT_OK(MPI_Send(&a, 1, MPI_INT, right, 9, parent));
        MT_OK(MPI_Isend(&a, 1, MPI_INT, right, 9, d[i], &q[2]));
        MT_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        MT_CHECK(b == c && (sz == 1 || b == left), "traffic on idup %d", i);
        MT_OK(MPI_Comm_free(&d[i]));
    }
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("comm_idup: OK\n");
    return 0;
}
