/*
 * The tolerant barrier's logical clocks on the example of Pakin's thesis
 * (Fig. 4.4; digest 000 §2.8): four processes A-D (ranks 0-3) run an A-B
 * barrier, a C-D barrier and a B-C barrier.  The clocks that decide
 * delivery, min(started, finished) per peer, must end as
 *        A  B  C  D
 *     A  1  1  0  0
 *     B  1  2  1  0
 *     C  0  1  2  1
 *     D  0  0  1  1
 * and a message B sends A after both its barriers (stamped 1) is delivered
 * although A took part in one barrier only: with a single clock per
 * process (Fig. 4.9) it would be stamped 2 and never delivered.
 *
 * The subset barriers are tolerant through the info key shoal_barrier;
 * with argument "env" the program relies on SHOAL_BARRIER=tolerant
 * instead.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpitest.h"

static const unsigned expect[4][4] = {
    {1, 1, 0, 0}, {1, 2, 1, 0}, {0, 1, 2, 1}, {0, 0, 1, 1}};

/* A communicator of ranks a and b (MPI_COMM_NULL elsewhere). */
static MPI_Comm pair(int a, int b, int rank, int use_info)
{
    MPI_Comm c;

    MT_OK(MPI_Comm_split(MPI_COMM_WORLD,
                         rank == a || rank == b ? 0 : MPI_UNDEFINED, rank,
                         &c));
    if (c != MPI_COMM_NULL && use_info) {
        MPI_Info info;
        MT_OK(MPI_Info_create(&info));
        MT_OK(MPI_Info_set(info, "shoal_barrier", "tolerant"));
        MT_OK(MPI_Comm_set_info(c, info));
        MT_OK(MPI_Info_free(&info));
    }
    return c;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This rank's row of the matrix, once the barriers have settled. */
static void check_row(int rank)
{
    double deadline = now() + 20.0;

    for (;;) {
        unsigned clock[4][3];
        int ok = 1;
        for (int p = 0; p < 4; p++) {
            MT_OK(MPIX_Shoal_barrier_clock(p, clock[p]));
            MT_CHECK(clock[p][1] <= clock[p][0],
                     "finished %u > started %u for peer %d", clock[p][1],
                     clock[p][0], p);
            ok &= clock[p][0] == expect[rank][p] &&
                  clock[p][2] == expect[rank][p];
        }
        if (ok)
            return;
        MT_CHECK(now() < deadline,
                 "clocks did not settle: due %u %u %u %u, expected "
                 "%u %u %u %u",
                 clock[0][2], clock[1][2], clock[2][2], clock[3][2],
                 expect[rank][0], expect[rank][1], expect[rank][2],
                 expect[rank][3]);
    }
}

int main(int argc, char **argv)
{
    int rank, size, use_info = !(argc > 1 && strcmp(argv[1], "env") == 0);
    MPI_Comm ab, cd, bc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 4, "needs 4 ranks, got %d", size);
    ab = pair(0, 1, rank, use_info);
    cd = pair(2, 3, rank, use_info);
    bc = pair(1, 2, rank, use_info);

    if (ab != MPI_COMM_NULL)
        MT_OK(MPI_Barrier(ab));
    if (cd != MPI_COMM_NULL)
        MT_OK(MPI_Barrier(cd));
    if (bc != MPI_COMM_NULL)
        MT_OK(MPI_Barrier(bc));
    /* B to A, stamped with B's count of barriers with A: 1. */
    if (rank == 1) {
        int v = 42;
        MT_OK(MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    } else if (rank == 0) {
        int v = 0;
        MT_OK(MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        MT_CHECK(v == 42, "got %d", v);
    }
    check_row(rank);

    for (MPI_Comm *c = (MPI_Comm[]){ab, cd, bc}, *e = c + 3; c < e; c++)
        if (*c != MPI_COMM_NULL)
            MT_OK(MPI_Comm_free(c));
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("OK tol_clock\n");
    return 0;
}
