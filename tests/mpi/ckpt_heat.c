/*
 * Checkpoint/restart (docs/FT.md): a 1-D heat equation over the ranks,
 * halo exchange each iteration, MPIX_Checkpoint every K iterations; a
 * rank may kill itself (SIGKILL) at a chosen iteration, and the job run
 * again with shoalrun --restart must write the same result, bit for bit,
 * as an uninterrupted run (tests/mpi/ckpt_test.sh compares them).
 *
 * usage: mpi_ckpt_heat ITERS K RANK@ITER[:MARKER]|- OUT
 *                      [b2b|pending|smaller|poll[:USEC]]
 *   K:       a checkpoint every K iterations; 0: none
 *   RANK@ITER:MARKER: the rank kills itself only if it can create the
 *            file MARKER (once, however often the job is restarted)
 *   b2b:     two checkpoints back to back at each point
 *   pending: first check that a checkpoint with a message not received
 *            yet is refused on every rank with MPI_ERR_PENDING
 *   smaller: the cells' region registered 8 bytes short (a restart
 *            from a normal run's checkpoint must be refused)
 *   poll:    MPIX_Checkpoint_if_requested after every iteration (the
 *            checkpoints shoalrun asks for); rank 0 says where one was
 *            taken, and every rank checks they all took it at the same
 *            iteration; with USEC, rank 0 sleeps that long each iteration
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 64 /* cells per rank */

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;

    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "FAIL: %s: %s\n", what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(const char *what, int rc)
{
    if (rc != MPI_SUCCESS)
        die(what, rc);
}

int main(int argc, char **argv)
{
    static double u[N + 2], v[N + 2];
    int rank, size, it = 0, flag, kill_rank = -1, kill_it = -1, cls, rc;

    if (argc < 5) {
        fprintf(stderr, "usage: %s ITERS K RANK@ITER|- OUT "
                        "[b2b|pending|smaller]\n", argv[0]);
        return 2;
    }
    int iters = atoi(argv[1]), k = atoi(argv[2]);
    const char *mode = argc > 5 ? argv[5] : "";
    const char *marker = strchr(argv[3], ':');
    if (strcmp(argv[3], "-") != 0 &&
        sscanf(argv[3], "%d@%d", &kill_rank, &kill_it) != 2)
        return 2;
    if (marker != NULL)
        marker++;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* The arguments are checked. */
    if (MPIX_Checkpoint_register(NULL, 8) != MPI_ERR_ARG ||
        MPIX_Checkpoint_restarted(NULL) != MPI_ERR_ARG)
        die("argument checks", MPI_ERR_OTHER);
    rc = MPIX_Checkpoint(MPI_COMM_SELF);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COMM)
        die("MPIX_Checkpoint(MPI_COMM_SELF) is not MPI_ERR_COMM", rc);
    int taken;
    if (MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, NULL) != MPI_ERR_ARG)
        die("MPIX_Checkpoint_if_requested(taken NULL)", MPI_ERR_OTHER);
    rc = MPIX_Checkpoint_if_requested(MPI_COMM_SELF, &taken);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COMM)
        die("MPIX_Checkpoint_if_requested(MPI_COMM_SELF) is not "
            "MPI_ERR_COMM", rc);
    int poll = strncmp(mode, "poll", 4) == 0;
    long nap = poll && mode[4] == ':' ? atol(mode + 5) : 0;

    /* The state: the iteration and the cells (the halo too, harmless). */
    check("register it", MPIX_Checkpoint_register(&it, sizeof(it)));
    check("register u", MPIX_Checkpoint_register(u, sizeof(u)));
    /* an update of the size; "smaller" leaves it 8 bytes short */
    check("register u again",
          MPIX_Checkpoint_register(u, sizeof(u) - (strcmp(mode, "smaller")
                                                   ? 0 : 8)));
    check("restarted", MPIX_Checkpoint_restarted(&flag));
    if (flag) {
        if (rank == 0)
            printf("restarted at iteration %d\n", it);
    } else {
        for (int i = 0; i < N + 2; i++)
            u[i] = (double)((rank * N + i) % 7) * 0.25;
    }

    if (strcmp(mode, "pending") == 0 && size > 1 && !flag) {
        int x = 7, y = 0;
        MPI_Request r = MPI_REQUEST_NULL;
        if (rank == 0)
            check("send", MPI_Send(&x, 1, MPI_INT, 1, 99, MPI_COMM_WORLD));
        if (rank == size - 1) /* a receive nobody sends to */
            check("irecv", MPI_Irecv(&y, 1, MPI_INT, 0, 98, MPI_COMM_WORLD,
                                     &r));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with a message in flight is not refused", rc);
        if (rank == 1)
            check("recv", MPI_Recv(&y, 1, MPI_INT, 0, 99, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with a receive posted is not refused", rc);
        if (rank == size - 1) {
            check("cancel", MPI_Cancel(&r));
            check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        if (rank == 1 && y != 7)
            die("message", MPI_ERR_OTHER);
        if (rank == 0)
            printf("pending checkpoints refused\n");
    }

    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    while (it < iters) {
        check("halo", MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 1, &u[N + 1], 1,
                                   MPI_DOUBLE, right, 1, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
        check("halo", MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 2, &u[0], 1,
                                   MPI_DOUBLE, left, 2, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
        for (int i = 1; i <= N; i++)
            v[i] = u[i] + 0.2 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        memcpy(&u[1], &v[1], N * sizeof(double));
        it++;
        if (poll) {
            if (rank == 0 && nap > 0)
                usleep((useconds_t)nap);
            check("checkpoint if requested",
                  MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, &taken));
            if (taken) {
                int lo, hi;
                check("allreduce", MPI_Allreduce(&it, &lo, 1, MPI_INT,
                                                 MPI_MIN, MPI_COMM_WORLD));
                check("allreduce", MPI_Allreduce(&it, &hi, 1, MPI_INT,
                                                 MPI_MAX, MPI_COMM_WORLD));
                if (lo != hi)
                    die("the ranks checkpointed at different iterations",
                        MPI_ERR_OTHER);
                if (rank == 0) {
                    printf("checkpoint taken at iteration %d\n", it);
                    fflush(stdout);
                }
            }
        }
        if (k > 0 && it % k == 0) {
            check("checkpoint", MPIX_Checkpoint(MPI_COMM_WORLD));
            if (strcmp(mode, "b2b") == 0)
                check("checkpoint 2", MPIX_Checkpoint(MPI_COMM_WORLD));
        }
        if (rank == kill_rank && it == kill_it &&
            (marker == NULL ||
             open(marker, O_WRONLY | O_CREAT | O_EXCL, 0644) >= 0))
            raise(SIGKILL);
    }

    double *all = rank == 0 ? malloc((size_t)size * N * sizeof(double)) : NULL;
    check("gather", MPI_Gather(&u[1], N, MPI_DOUBLE, all, N, MPI_DOUBLE, 0,
                               MPI_COMM_WORLD));
    if (rank == 0) {
        FILE *f = fopen(argv[4], "wb");
        if (f == NULL || fwrite(all, sizeof(double), (size_t)size * N, f) !=
                             (size_t)size * N || fclose(f) != 0)
            die("writing the result", MPI_ERR_IO);
        printf("done: %d iterations\n", it);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
