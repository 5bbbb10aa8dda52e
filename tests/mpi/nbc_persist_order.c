/*
 * Persistent collectives on several communicators are independent: every
 * rank initializes them in its own order (the order matters only per
 * communicator), then starts them, again and again, in an order of its
 * own (MPI_Start one by one, or MPI_Startall of a permuted array), and
 * only then waits.  A start that blocked, or an init or first start that
 * agreed with the other ranks at once, would deadlock here.
 */
#include "mpitest.h"

#define NC 6     /* communicators, one persistent collective each */
#define ROUNDS 40

static int BN = 8; /* ints in the broadcast (argv[1]: more) */

static int size, rank;
static MPI_Comm comm[NC];
static MPI_Request req[NC];
static int *bbuf, *tin, *tout, ain, aout, *gall, gmine, rin[2], rout[2];
static int crank[NC], croot;

/* Rank-dependent permutation p of 0..NC-1 for round k. */
static void order(int k, int *p)
{
    int shift = (rank + k) % NC, rev = (rank + k / 3) % 2;

    for (int i = 0; i < NC; i++) {
        int j = (i + shift) % NC;
        p[i] = rev ? NC - 1 - j : j;
    }
}

static void init_one(int which)
{
    switch (which) {
    case 0:
        MT_OK(MPI_Bcast_init(bbuf, BN, MPI_INT, 0, comm[0], MPI_INFO_NULL,
                             &req[0]));
        break;
    case 1:
        MT_OK(MPI_Allreduce_init(&ain, &aout, 1, MPI_INT, MPI_SUM, comm[1],
                                 MPI_INFO_NULL, &req[1]));
        break;
    case 2:
        MT_OK(MPI_Allgather_init(&gmine, 1, MPI_INT, gall, 1, MPI_INT,
                                 comm[2], MPI_INFO_NULL, &req[2]));
        break;
    case 4:
        MT_OK(MPI_Barrier_init(comm[4], MPI_INFO_NULL, &req[4]));
        break;
    case 5:
        MT_OK(MPI_Alltoall_init(tin, 1, MPI_INT, tout, 1, MPI_INT, comm[5],
                                MPI_INFO_NULL, &req[5]));
        break;
    default:
        MT_OK(MPI_Reduce_init(rin, rout, 2, MPI_INT, MPI_MAX, croot, comm[3],
                              MPI_INFO_NULL, &req[3]));
        break;
    }
}

/* Fill the send buffers of round k. */
static void fill(int k)
{
    for (int i = 0; i < BN; i++)
        bbuf[i] = crank[0] == 0 ? 1000 * k + i : -1;
    ain = crank[1] + k;
    gmine = 7 * crank[2] + k;
    rin[0] = crank[3] + k;
    rin[1] = -crank[3] - k;
    rout[0] = rout[1] = -99;
    for (int i = 0; i < size; i++) {
        tin[i] = 100 * crank[5] + i + k;
        tout[i] = -1;
    }
}

static void check(int k)
{
    for (int i = 0; i < BN; i++)
        MT_CHECK(bbuf[i] == 1000 * k + i, "round %d bcast[%d] = %d", k, i,
                 bbuf[i]);
    MT_CHECK(aout == size * (size - 1) / 2 + size * k,
             "round %d allreduce = %d", k, aout);
    for (int i = 0; i < size; i++)
        MT_CHECK(gall[i] == 7 * i + k, "round %d allgather[%d] = %d", k, i,
                 gall[i]);
    if (crank[3] == croot)
        MT_CHECK(rout[0] == size - 1 + k && rout[1] == -k,
                 "round %d reduce = %d %d", k, rout[0], rout[1]);
    for (int i = 0; i < size; i++)
        MT_CHECK(tout[i] == 100 * i + crank[5] + k,
                 "round %d alltoall[%d] = %d", k, i, tout[i]);
}

int main(int argc, char **argv)
{
    int p[NC];

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Two duplicates, one reversed, one rotated: the communicators' rank
     * orders differ, so do the trees of their collectives. */
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm[2]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 1) % size, &comm[3]));
    MT_OK(MPI_Comm_dup(comm[2], &comm[4]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 2) % size, &comm[5]));
    for (int i = 0; i < NC; i++)
        MPI_Comm_rank(comm[i], &crank[i]);
    croot = size - 1;
    if (argc > 1)
        BN = atoi(argv[1]);
    gall = malloc((size_t)size * sizeof(int));
    tin = malloc((size_t)size * sizeof(int));
    tout = malloc((size_t)size * sizeof(int));
    bbuf = malloc((size_t)BN * sizeof(int));
    MT_CHECK(gall && tin && tout && bbuf, "malloc");

    /* Initialization in a rank-dependent order. */
    order(0, p);
    for (int i = 0; i < NC; i++)
        init_one(p[i]);

    for (int k = 0; k < ROUNDS; k++) {
        fill(k);
        order(k, p);
        if (k % 2 == 0) {
            for (int i = 0; i < NC; i++)
                MT_OK(MPI_Start(&req[p[i]]));
        } else {
            MPI_Request perm[NC];
            for (int i = 0; i < NC; i++)
                perm[i] = req[p[i]];
            MT_OK(MPI_Startall(NC, perm));
        }
        /* Some point-to-point traffic while they run. */
        if (size > 1) {
            int x = rank, y = -1;
            MT_OK(MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, k, &y, 1,
                               MPI_INT, (rank + size - 1) % size, k,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_CHECK(y == (rank + size - 1) % size, "ring %d", y);
        }
        if (k % 3 == 2) {
            /* Complete them one by one, in the start order. */
            for (int i = 0; i < NC; i++)
                MT_OK(MPI_Wait(&req[p[i]], MPI_STATUS_IGNORE));
        } else {
            MT_OK(MPI_Waitall(NC, req, MPI_STATUSES_IGNORE));
        }
        check(k);
    }

    for (int i = 0; i < NC; i++) {
        MT_OK(MPI_Request_free(&req[i]));
        MT_OK(MPI_Comm_free(&comm[i]));
    }
    free(gall);
    free(tin);
    free(tout);
    free(bbuf);
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("nbc_persist_order: OK\n");
    return 0;
}
