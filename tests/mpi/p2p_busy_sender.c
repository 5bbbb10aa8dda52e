/*
 * A large message whose sender computes: rank 0 starts an MPI_Isend of
 * 8 MiB and then computes for 3 s without calling MPI; rank 1's MPI_Recv
 * must not wait for rank 0's next MPI call.  (A receive that asked the
 * sender to copy half of the message, the cooperative copy, would; the
 * receiver asks only a sender that is waiting inside the library.)
 * A second round has the sender block in MPI_Send, where the cooperative
 * copy may help, and checks the data the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpitest.h"

#define BYTES (8u << 20)
#define BUSY_S 3.0
#define BOUND_S 1.5

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 31u + seed + (i >> 12));
}

static void check_fill(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        MT_CHECK(b[i] == (unsigned char)(i * 31u + seed + (i >> 12)),
                 "byte %zu of the message is wrong", i);
}

/* Work without MPI calls for s seconds (a loop, not a sleep: a rank that
 * computes). */
static void compute(double s)
{
    struct timespec t0, t;
    volatile unsigned long x = 1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ul + 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) +
                 (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < s);
}

int main(int argc, char **argv)
{
    int rank, size;
    unsigned char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 2, "run with 2 ranks");
    buf = malloc(BYTES);
    MT_CHECK(buf != NULL, "no memory");

    for (int round = 0; round < 2; round++) {
        int busy = round == 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            fill(buf, BYTES, (unsigned)round);
            if (busy) {
                MPI_Request r;
                MPI_Isend(buf, BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
                compute(BUSY_S);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            }
        } else {
            memset(buf, 0, BYTES);
            double t0 = MPI_Wtime();
            MPI_Recv(buf, BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            double t = MPI_Wtime() - t0;
            check_fill(buf, BYTES, (unsigned)round);
            if (busy)
                MT_CHECK(t < BOUND_S,
                         "the receive took %.2f s while the sender computed "
                         "for %.1f s: it waited for the sender", t, BUSY_S);
            printf("round %d (%s sender): receive took %.3f s\n", round,
                   busy ? "computing" : "blocked", t);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
