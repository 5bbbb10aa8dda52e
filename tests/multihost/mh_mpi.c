/*
 * An MPI program across namespace hosts, for when a network wire exists.
 *
 * Without arguments: a ring exchange and an allreduce, checked, then one
 * line per rank:
 *   mpi rank R of S ok
 *
 * `busy_receiver SECONDS MB`: every rank first exchanges a message with
 * rank 0 (so each connection is open and authenticated), then rank 0 stops
 * calling MPI for SECONDS (it sleeps: its process reads nothing, as one
 * that computes) while every other rank sends it MB MiB in eager messages
 * of 16 KiB and waits for them to complete.  Rank 0's receive buffers
 * fill and the senders' kernels probe a zero window, which rank 0's kernel
 * answers: a busy peer, not a dead one.  Then rank 0 receives everything
 * and checks it.  Each rank prints
 *   busy rank R of S ok
 *
 * `idle_wait SECONDS`: the same first exchange, then rank 0 prints
 * "rank 0 waiting" and waits for a message from the last rank, which
 * never sends; the others sleep SECONDS.  Nothing is outstanding on any
 * connection: for a link cut while rank 0 waits (keepalive's case).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#define BUSY_MSG 16384

static void fill(int *buf, int src, int i)
{
    for (int k = 0; k < BUSY_MSG / (int)sizeof(int); k++)
        buf[k] = src * 1000003 + i * 131 + k;
}

/* Every rank exchanges a message with rank 0: the connections are open. */
static void meet_rank0(int rank, int size)
{
    int hello = rank, got = -1;

    if (rank == 0) {
        for (int src = 1; src < size; src++) {
            MPI_Recv(&got, 1, MPI_INT, src, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(&got, 1, MPI_INT, src, 2, MPI_COMM_WORLD);
        }
    } else {
        MPI_Send(&hello, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(&got, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void nap(double seconds)
{
    struct timespec ts = {(time_t)seconds,
                          (long)((seconds - (double)(time_t)seconds) * 1e9)};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int idle_wait(int rank, int size, double seconds)
{
    int got = -1;

    meet_rank0(rank, size);
    if (rank == 0) {
        printf("rank 0 waiting\n");
        fflush(stdout);
        MPI_Recv(&got, 1, MPI_INT, size - 1, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    } else {
        nap(seconds);
    }
    return 0;
}

static int busy_receiver(int rank, int size, double seconds, int mb)
{
    int n = mb * (1 << 20) / BUSY_MSG;
    int *buf = malloc((size_t)n * BUSY_MSG), *want = malloc(BUSY_MSG);
    MPI_Request *req = malloc((size_t)n * sizeof(*req));

    if (buf == NULL || want == NULL || req == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    meet_rank0(rank, size);
    if (rank == 0) {
        printf("rank 0 busy for %.1f s\n", seconds);
        fflush(stdout);
        nap(seconds);
        printf("rank 0 receiving\n");
        fflush(stdout);
        for (int src = 1; src < size; src++)
            for (int i = 0; i < n; i++) {
                MPI_Recv(buf, BUSY_MSG, MPI_BYTE, src, 3, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                fill(want, src, i);
                if (memcmp(buf, want, BUSY_MSG) != 0) {
                    fprintf(stderr, "rank 0: message %d of rank %d differs\n",
                            i, src);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
            }
    } else {
        for (int i = 0; i < n; i++) {
            int *m = buf + (size_t)i * (BUSY_MSG / sizeof(int));
            fill(m, rank, i);
            MPI_Isend(m, BUSY_MSG, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &req[i]);
        }
        printf("rank %d sent %d MiB\n", rank, mb);
        fflush(stdout);
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("busy rank %d of %d ok\n", rank, size);
    free(buf);
    free(want);
    free(req);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, got = -1, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 3 && strcmp(argv[1], "busy_receiver") == 0) {
        busy_receiver(rank, size, atof(argv[2]), atoi(argv[3]));
        MPI_Finalize();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "idle_wait") == 0) {
        idle_wait(rank, size, atof(argv[2]));
        MPI_Finalize();
        return 0;
    }
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
