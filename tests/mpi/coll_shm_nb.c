/*
 * Shared-memory collectives started without waiting: several nonblocking
 * ones in flight on one communicator (more than the segment has buffer
 * sets, so later ones wait for earlier ones to be read), completed in
 * reverse order or by polling; a nonblocking barrier overlapped with
 * point-to-point traffic that the other ranks need before they reach it;
 * persistent barrier, bcast, reduce and allreduce started many times with
 * new data, between blocking calls; a persistent call made first on a
 * fresh communicator (its set-up then runs at the first start, or in the
 * next call); a persistent request freed without ever being started; and
 * blocking calls made while nonblocking ones are in flight, when some
 * ranks have every call record of the segment taken (their blocking call
 * is built as a schedule) and the others not (theirs runs without one).
 */
#include "coll_test.h"

static int rank, size;

static int val(int r, int i, int salt)
{
    return (r * 31 + i * 7 + salt * 13) % 1009 - 500;
}

static int sum_at(int i, int salt)
{
    int s = 0;
    for (int q = 0; q < size; q++)
        s += val(q, i, salt);
    return s;
}

enum { K = 10, NMAX = 20000 };

/* K calls of mixed kinds and sizes in flight, then completed. */
static void test_in_flight(int reverse, int poll)
{
    static int sb[K][NMAX], rb[K][NMAX];
    static const int ns[] = {1, 3, 600, 1100, 20000};
    MPI_Request req[K];
    int kinds[K], counts[K], roots[K];

    for (int k = 0; k < K; k++) {
        int n = ns[k % 5], root = (k * 3) % size;
        kinds[k] = k % 4;
        counts[k] = n;
        roots[k] = root;
        for (int i = 0; i < n; i++) {
            sb[k][i] = val(rank, i, k);
            rb[k][i] = kinds[k] == 1 && rank == root ? val(root, i, k) : -1;
        }
        switch (kinds[k]) {
        case 0:
            MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[k]));
            break;
        case 1:
            MT_OK(MPI_Ibcast(rb[k], n, MPI_INT, root, MPI_COMM_WORLD, &req[k]));
            break;
        case 2:
            MT_OK(MPI_Iallreduce(sb[k], rb[k], n, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD, &req[k]));
            break;
        default:
            MT_OK(MPI_Ireduce(sb[k], rb[k], n, MPI_INT, MPI_SUM, root,
                              MPI_COMM_WORLD, &req[k]));
            break;
        }
    }
    if (poll) {
        int done = 0;
        while (!done)
            MT_OK(MPI_Testall(K, req, &done, MPI_STATUSES_IGNORE));
    } else {
        for (int j = 0; j < K; j++)
            MT_OK(MPI_Wait(&req[reverse ? K - 1 - j : j], MPI_STATUS_IGNORE));
    }
    for (int k = 0; k < K; k++) {
        int n = counts[k], root = roots[k];
        for (int i = 0; i < n; i++) {
            if (kinds[k] == 1)
                CT_CHECK(rb[k][i] == val(root, i, k),
                         "ibcast %d n=%d root=%d element %d", k, n, root, i);
            if (kinds[k] == 2 || (kinds[k] == 3 && rank == root))
                CT_CHECK(rb[k][i] == sum_at(i, k),
                         "%s %d n=%d element %d is %d, want %d",
                         kinds[k] == 2 ? "iallreduce" : "ireduce", k, n, i,
                         rb[k][i], sum_at(i, k));
        }
    }
}

/* Each rank starts a barrier, then passes a token around the ring: the
 * barrier cannot complete before the last rank got the token, so a start
 * that blocked would deadlock. */
static void test_overlap(void)
{
    MPI_Request b;
    int token = 0;

    if (size == 1)
        return;
    for (int round = 0; round < 20; round++) {
        if (rank == 0) {
            MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &b));
            token = round;
            MT_OK(MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            MT_OK(MPI_Recv(&token, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        } else {
            MT_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &b));
            MT_OK(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 5,
                           MPI_COMM_WORLD));
        }
        MT_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
        CT_CHECK(token == round, "token %d in round %d", token, round);
    }
}

/* Persistent calls, first on a fresh communicator, started many times. */
static void test_persistent(void)
{
    enum { N = 3000 };
    static int s[N], r[N], b[N], small[2], smallr[2];
    MPI_Comm comm;
    MPI_Request req[5], unused;
    int root = size - 1;

    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    /* made before any other collective on comm */
    MT_OK(MPI_Allreduce_init(s, r, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                             &req[0]));
    MT_OK(MPI_Bcast_init(b, N, MPI_INT, root, comm, MPI_INFO_NULL, &req[1]));
    MT_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &req[2]));
    MT_OK(MPI_Reduce_init(small, smallr, 2, MPI_INT, MPI_SUM, 0, comm,
                          MPI_INFO_NULL, &req[3]));
    MT_OK(MPI_Allreduce_init(small, smallr, 2, MPI_INT, MPI_MAX, comm,
                             MPI_INFO_NULL, &unused));
    MT_OK(MPI_Request_free(&unused)); /* never started */
    MT_OK(MPI_Allreduce_init(MPI_IN_PLACE, small, 2, MPI_INT, MPI_SUM, comm,
                             MPI_INFO_NULL, &req[4]));
    MT_OK(MPI_Request_free(&req[4]));

    for (int it = 0; it < 60; it++) {
        for (int i = 0; i < N; i++) {
            s[i] = val(rank, i, it);
            r[i] = -1;
            b[i] = rank == root ? val(root, i, it + 1) : -2;
        }
        small[0] = val(rank, 0, it);
        small[1] = val(rank, 1, it);
        if (it % 3 == 0) {
            MT_OK(MPI_Startall(4, req));
            MT_OK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
        } else {
            /* one at a time, with a blocking call in between */
            for (int k = 0; k < 4; k++) {
                MT_OK(MPI_Start(&req[k]));
                MT_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
                if (it % 3 == 1)
                    MT_OK(MPI_Barrier(comm));
            }
        }
        for (int i = 0; i < N; i++) {
            CT_CHECK(r[i] == sum_at(i, it),
                     "persistent allreduce start %d element %d", it, i);
            CT_CHECK(b[i] == val(root, i, it + 1),
                     "persistent bcast start %d element %d", it, i);
        }
        if (rank == 0)
            CT_CHECK(smallr[0] == sum_at(0, it) && smallr[1] == sum_at(1, it),
                     "persistent reduce start %d", it);
    }
    for (int k = 0; k < 4; k++)
        MT_OK(MPI_Request_free(&req[k]));
    MT_OK(MPI_Comm_free(&comm));
}

/* NB nonblocking allreduces in flight: the odd ranks complete the first
 * half before the blocking calls, the even ranks only after them. */
enum { NB = 16 };

static void test_blocking_among(void)
{
    static int sb[NB][4], rb[NB][4];
    MPI_Request req[NB];
    int x[3], y[3], b[5];

    for (int k = 0; k < NB; k++) {
        for (int i = 0; i < 4; i++) {
            sb[k][i] = val(rank, i, k + 50);
            rb[k][i] = -1;
        }
        MT_OK(MPI_Iallreduce(sb[k], rb[k], 1 + k % 4, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD, &req[k]));
    }
    if (rank % 2 == 1)
        MT_OK(MPI_Waitall(NB / 2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        x[i] = val(rank, i, 90);
    MT_OK(MPI_Allreduce(x, y, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++)
        CT_CHECK(y[i] == sum_at(i, 90), "allreduce among nonblocking: "
                 "element %d is %d, want %d", i, y[i], sum_at(i, 90));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++)
        b[i] = rank == size - 1 ? val(size - 1, i, 91) : -1;
    MT_OK(MPI_Bcast(b, 5, MPI_INT, size - 1, MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++)
        CT_CHECK(b[i] == val(size - 1, i, 91),
                 "bcast among nonblocking: element %d is %d", i, b[i]);
    for (int i = 0; i < 3; i++)
        y[i] = -1;
    MT_OK(MPI_Reduce(x, y, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    for (int i = 0; rank == 0 && i < 3; i++)
        CT_CHECK(y[i] == sum_at(i, 90), "reduce among nonblocking: "
                 "element %d is %d, want %d", i, y[i], sum_at(i, 90));
    MT_OK(MPI_Waitall(NB, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NB; k++)
        for (int i = 0; i < 1 + k % 4; i++)
            CT_CHECK(rb[k][i] == sum_at(i, k + 50),
                     "iallreduce %d element %d is %d, want %d", k, i,
                     rb[k][i], sum_at(i, k + 50));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    test_persistent();
    for (int i = 0; i < 30; i++) {
        test_in_flight(i % 2, i % 3 == 2);
        test_overlap();
        test_blocking_among();
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));

    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_shm_nb: %d ranks passed\n", size);
    return 0;
}
