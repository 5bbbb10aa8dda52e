/*
 * Bad arguments to nonblocking, persistent and neighbourhood collectives
 * under MPI_ERRORS_RETURN: the class the standard names, the same at
 * every rank, nothing started (collectives still match afterwards).
 */
#include "nbc_test.h"

static int rank, size;

static void test_requests(void)
{
    int x = 1, y = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    static char junk[64]; /* neither an info nor an operation */

    MT_ERR(MPI_ERR_ARG, MPI_Ibarrier(MPI_COMM_WORLD, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM,
                                       MPI_COMM_WORLD, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Bcast_init(&x, 1, MPI_INT, 0, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, NULL));
    MT_ERR(MPI_ERR_INFO, MPI_Barrier_init(MPI_COMM_WORLD,
                                          (MPI_Info)(void *)junk, &req));
    MT_ERR(MPI_ERR_COMM, MPI_Ibarrier(MPI_COMM_NULL, &req));
    MT_ERR(MPI_ERR_COMM, MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM,
                                            MPI_COMM_NULL, MPI_INFO_NULL,
                                            &req));
    CT_CHECK(req == MPI_REQUEST_NULL, "a failed call set the request");
}

static void test_args(void)
{
    int x = 1, y[64];
    int *counts = calloc((size_t)size, sizeof(int));

    MT_ERR(MPI_ERR_ROOT, MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD,
                                    &(MPI_Request){0}));
    MT_ERR(MPI_ERR_ROOT, MPI_Reduce_init(&x, y, 1, MPI_INT, MPI_SUM, -1,
                                         MPI_COMM_WORLD, MPI_INFO_NULL,
                                         &(MPI_Request){0}));
    MT_ERR(MPI_ERR_ROOT, MPI_Igatherv(&x, 1, MPI_INT, y, counts, counts,
                                      MPI_INT, size + 1, MPI_COMM_WORLD,
                                      &(MPI_Request){0}));
    MT_ERR(MPI_ERR_ROOT, MPI_Scatter_init(y, 1, MPI_INT, &x, 1, MPI_INT,
                                          MPI_ROOT, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &(MPI_Request){0}));
    MT_ERR(MPI_ERR_COUNT, MPI_Iallreduce(&x, y, -1, MPI_INT, MPI_SUM,
                                         MPI_COMM_WORLD, &(MPI_Request){0}));
    MT_ERR(MPI_ERR_OP, MPI_Iscan(&x, y, 1, MPI_INT, MPI_OP_NULL,
                                 MPI_COMM_WORLD, &(MPI_Request){0}));
    MT_ERR(MPI_ERR_TYPE, MPI_Allgather_init(&x, 1, MPI_DATATYPE_NULL, y, 1,
                                            MPI_INT, MPI_COMM_WORLD,
                                            MPI_INFO_NULL,
                                            &(MPI_Request){0}));
    MT_ERR(MPI_ERR_ARG, MPI_Ialltoallv(y, NULL, counts, MPI_INT, y, counts,
                                       counts, MPI_INT, MPI_COMM_WORLD,
                                       &(MPI_Request){0}));
    MT_ERR(MPI_ERR_BUFFER, MPI_Ireduce_scatter_block(&x, MPI_IN_PLACE, 1,
                                                     MPI_INT, MPI_SUM,
                                                     MPI_COMM_WORLD,
                                                     &(MPI_Request){0}));
    free(counts);
}

static void test_neighbor(void)
{
    int dims[2] = {0, 0}, per[2] = {1, 0}, x[8] = {0}, y[8];
    int c1[4] = {1, 1, 1, 1}, d1[4] = {0, 1, 2, 3};
    MPI_Aint b1[4] = {0, 4, 8, 12};
    MPI_Datatype t1[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    MPI_Comm cart;
    MPI_Request req = MPI_REQUEST_NULL;

    MT_ERR(MPI_ERR_TOPOLOGY,
           MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT,
                                  MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TOPOLOGY,
           MPI_Ineighbor_alltoallv(x, c1, d1, MPI_INT, y, c1, d1, MPI_INT,
                                   MPI_COMM_WORLD, &req));
    MT_ERR(MPI_ERR_TOPOLOGY,
           MPI_Neighbor_alltoallw_init(x, c1, b1, t1, y, c1, b1, t1,
                                       MPI_COMM_SELF, MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_COMM,
           MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT,
                                 MPI_COMM_NULL));
    MT_OK(MPI_Dims_create(size, 2, dims));
    MT_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart));
    MT_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_ARG,
           MPI_Ineighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, cart, NULL));
    MT_ERR(MPI_ERR_BUFFER,
           MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT,
                                 cart));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Neighbor_allgather_init(x, -1, MPI_INT, y, 1, MPI_INT, cart,
                                       MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_ARG,
           MPI_Neighbor_allgatherv(x, 1, MPI_INT, y, c1, NULL, MPI_INT,
                                   cart));
    MT_ERR(MPI_ERR_TYPE,
           MPI_Neighbor_alltoallw(x, c1, b1, t1, y, c1, b1,
                                  (MPI_Datatype[4]){MPI_INT,
                                                    MPI_DATATYPE_NULL,
                                                    MPI_INT, MPI_INT},
                                  cart));
    CT_CHECK(req == MPI_REQUEST_NULL, "a failed call set the request");
    /* nothing was started: a real exchange still pairs up */
    for (int i = 0; i < 4; i++)
        x[i] = rank;
    MT_OK(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, cart));
    MT_OK(MPI_Comm_free(&cart));
}

int main(int argc, char **argv)
{
    int a = 0, b = 0;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    test_requests();
    test_args();
    test_neighbor();
    /* collectives still match */
    a = rank;
    MT_OK(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CT_CHECK(b == size * (size - 1) / 2, "allreduce after errors: %d", b);
    MT_OK(MPI_Finalize());
    return 0;
}
