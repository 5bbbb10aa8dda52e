/*
 * Persistent collectives started in different orders on different ranks,
 * also on one communicator: MPI 4.0 wants their initializations in one
 * order, not their starts (the info assertion
 * mpi_assert_strict_persistent_collective_ordering would promise that).
 * An allreduce and a broadcast per communicator, on two duplicates of
 * MPI_COMM_WORLD and two intercommunicators (even ranks and odd ranks);
 * every round each rank starts all of them in its own order and completes
 * them in another, and every result is checked.
 */
#include "mpitest.h"

#define NC 4      /* communicators: 2 intra, 2 inter */
#define ROUNDS 60

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm c[NC], half;
    int in[NC], out[NC], bc[NC], want[NC];
    MPI_Request r[2 * NC];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 2, "needs 2 ranks");
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[0]));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[1]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7,
                               &c[2]));
    MT_OK(MPI_Comm_dup(c[2], &c[3]));

    /* Initialized in one order everywhere. */
    for (int i = 0; i < NC; i++) {
        int root = 0; /* intra: rank 0; inter: world rank 0's group sends */
        if (i >= 2)
            root = rank % 2 == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL)
                                 : 0;
        in[i] = rank + 10 * i;
        want[i] = 0;
        for (int p = 0; p < size; p++)
            if (i < 2 || p % 2 != rank % 2)
                want[i] += p + 10 * i;
        MT_OK(MPI_Allreduce_init(&in[i], &out[i], 1, MPI_INT, MPI_SUM, c[i],
                                 MPI_INFO_NULL, &r[2 * i]));
        MT_OK(MPI_Bcast_init(&bc[i], 1, MPI_INT, root, c[i], MPI_INFO_NULL,
                             &r[2 * i + 1]));
    }
    for (int it = 0; it < ROUNDS; it++) {
        int n = 2 * NC, shift = (rank * 3 + it) % n;
        for (int i = 0; i < NC; i++) {
            bc[i] = rank == 0 ? 1000 * it + i : -1;
            out[i] = -1;
        }
        /* Each rank its own start order: reversed on odd ranks, rotated by
         * a rank- and round-dependent amount. */
        for (int k = 0; k < n; k++) {
            int j = (k + shift) % n;
            MT_OK(MPI_Start(&r[rank % 2 ? n - 1 - j : j]));
        }
        if (it % 3 == 0) {
            MT_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 0; k < n; k++)
                MT_OK(MPI_Wait(&r[(k * 5 + rank) % n], MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < NC; i++) {
            MT_CHECK(out[i] == want[i], "round %d comm %d: allreduce %d, "
                     "expected %d", it, i, out[i], want[i]);
            int bwant = (i >= 2 && rank % 2 == 0) ? (rank == 0 ? bc[i] : -1)
                                                  : 1000 * it + i;
            MT_CHECK(bc[i] == bwant, "round %d comm %d: bcast %d, expected "
                     "%d", it, i, bc[i], bwant);
        }
    }
    for (int k = 0; k < 2 * NC; k++)
        MT_OK(MPI_Request_free(&r[k]));
    for (int i = 0; i < NC; i++)
        MT_OK(MPI_Comm_free(&c[i]));
    MT_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
