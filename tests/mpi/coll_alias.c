/*
 * Aliased buffers in collectives (MPI 4.0, 2.6.1: an output argument may
 * not be aliased with another; MPI_IN_PLACE is the way to reuse one):
 * sendbuf equal to recvbuf, or to the block of recvbuf that holds this
 * rank's own data (what a program emulating in place passes), is refused
 * with MPI_ERR_BUFFER in the blocking, nonblocking and persistent forms.
 * Every rank whose call is erroneous gets the error, so where all ranks
 * alias nobody is left in the collective; in the rooted calls only the
 * root's buffers are significant, and the others' calls are matched by a
 * correct call at the root (MPICH's errors/coll/noalias* hang without
 * this).  Legal look-alikes still work: in place, empty calls with the
 * same NULL buffers, adjacent distinct blocks.
 */
#include "coll_test.h"

#define N 2

static int rank, size;

/* Each form of one call whose arguments are aliased at every rank. */
#define ALL_FORMS(name, iname, ...)                                            \
    do {                                                                       \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                    \
        MT_ERR(MPI_ERR_BUFFER, MPI_##name(__VA_ARGS__));                       \
        MT_ERR(MPI_ERR_BUFFER, MPI_##iname(__VA_ARGS__, &rq_));                \
        CT_CHECK(rq_ == MPI_REQUEST_NULL, #iname " made a request");           \
        MT_ERR(MPI_ERR_BUFFER,                                                 \
               MPI_##name##_init(__VA_ARGS__, MPI_INFO_NULL, &rq_));           \
        CT_CHECK(rq_ == MPI_REQUEST_NULL, #name "_init made a request");       \
    } while (0)

static void test_everywhere(int *b, int *counts, int *displs,
                            MPI_Datatype *types, int *bytes)
{
    MPI_Comm w = MPI_COMM_WORLD;

    ALL_FORMS(Allreduce, Iallreduce, b, b, N, MPI_INT, MPI_SUM, w);
    ALL_FORMS(Scan, Iscan, b, b, N, MPI_INT, MPI_SUM, w);
    ALL_FORMS(Exscan, Iexscan, b, b, N, MPI_INT, MPI_SUM, w);
    ALL_FORMS(Reduce_scatter, Ireduce_scatter, b, b, counts, MPI_INT, MPI_SUM,
              w);
    ALL_FORMS(Reduce_scatter_block, Ireduce_scatter_block, b, b, N, MPI_INT,
              MPI_SUM, w);
    ALL_FORMS(Alltoall, Ialltoall, b, N, MPI_INT, b, N, MPI_INT, w);
    ALL_FORMS(Alltoallv, Ialltoallv, b, counts, displs, MPI_INT, b, counts,
              displs, MPI_INT, w);
    ALL_FORMS(Alltoallw, Ialltoallw, b, counts, bytes, types, b, counts, bytes,
              types, w);
    /* the own block of recvbuf, and recvbuf itself */
    ALL_FORMS(Allgather, Iallgather, b + N * rank, N, MPI_INT, b, N, MPI_INT,
              w);
    ALL_FORMS(Allgather, Iallgather, b, N, MPI_INT, b, N, MPI_INT, w);
    ALL_FORMS(Allgatherv, Iallgatherv, b + displs[rank], N, MPI_INT, b, counts,
              displs, MPI_INT, w);
}

/* Neighbourhood calls, on a ring. */
static void test_neighbor(int *b)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};

    MT_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MT_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    ALL_FORMS(Neighbor_allgather, Ineighbor_allgather, b, 1, MPI_INT, b, 1,
              MPI_INT, ring);
    ALL_FORMS(Neighbor_alltoall, Ineighbor_alltoall, b, 1, MPI_INT, b, 1,
              MPI_INT, ring);
    MT_OK(MPI_Neighbor_alltoall(b, 1, MPI_INT, b + 2, 1, MPI_INT, ring));
    MT_OK(MPI_Comm_free(&ring));
}

/* Rooted calls: the root's arguments are aliased, the others' correct;
 * the root makes up with a correct call. */
static void test_rooted(int *b, int *other, int *counts, int *displs)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int root = size - 1, me = rank == root, x[N] = {rank, rank};

    for (int form = 0; form < 3; form++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        int *own = b + N * root;

        if (me) {
            /* one of the forms per pass, all four calls */
            switch (form) {
            case 0:
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Reduce(b, b, N, MPI_INT, MPI_SUM, root, w));
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Gather(own, N, MPI_INT, b, N, MPI_INT, root, w));
                MT_ERR(MPI_ERR_BUFFER, MPI_Gatherv(b, N, MPI_INT, b, counts,
                                                   displs, MPI_INT, root, w));
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Scatter(b, N, MPI_INT, own, N, MPI_INT, root, w));
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Scatterv(b, counts, displs, MPI_INT,
                                    b + displs[root], N, MPI_INT, root, w));
                break;
            case 1:
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Ireduce(b, b, N, MPI_INT, MPI_SUM, root, w, &rq));
                MT_ERR(MPI_ERR_BUFFER, MPI_Igather(own, N, MPI_INT, b, N,
                                                   MPI_INT, root, w, &rq));
                MT_ERR(MPI_ERR_BUFFER, MPI_Iscatter(b, N, MPI_INT, b, N,
                                                    MPI_INT, root, w, &rq));
                break;
            default:
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Gatherv_init(own, N, MPI_INT, b, counts, displs,
                                        MPI_INT, root, w, MPI_INFO_NULL, &rq));
                MT_ERR(MPI_ERR_BUFFER,
                       MPI_Scatterv_init(b, counts, displs, MPI_INT, own, N,
                                         MPI_INT, root, w, MPI_INFO_NULL, &rq));
                break;
            }
            CT_CHECK(rq == MPI_REQUEST_NULL, "form %d made a request", form);
        }
        /* the call everyone makes, correct at the root now */
        for (int i = 0; i < N * size; i++)
            b[i] = i;
        MT_OK(MPI_Gather(x, N, MPI_INT, other, N, MPI_INT, root, w));
        if (me)
            for (int i = 0; i < N * size; i++)
                CT_CHECK(other[i] == i / N, "gather [%d] = %d", i, other[i]);
    }
}

/* What looks alike and is legal. */
static void test_legal(int *b, int *other)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int root = 0;

    for (int i = 0; i < N * size; i++)
        b[i] = rank;
    MT_OK(MPI_Allreduce(MPI_IN_PLACE, b, N, MPI_INT, MPI_SUM, w));
    CT_CHECK(b[0] == size * (size - 1) / 2, "in place sum %d", b[0]);
    MT_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, w));
    MT_OK(MPI_Allreduce(b, b, 0, MPI_INT, MPI_SUM, w));
    MT_OK(MPI_Alltoall(b, 0, MPI_INT, b, 0, MPI_INT, w));
    MT_OK(MPI_Allgather(b, 0, MPI_INT, b, 0, MPI_INT, w));
    /* adjacent blocks of one array */
    for (int i = 0; i < N; i++)
        b[i] = rank + i;
    MT_OK(MPI_Allreduce(b, b + N, N, MPI_INT, MPI_SUM, w));
    CT_CHECK(b[N + 1] == size * (size - 1) / 2 + size, "sum %d", b[N + 1]);
    MT_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, N, MPI_INT, w));
    MT_OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : b, b, N, MPI_INT, MPI_SUM,
                     root, w));
    /* the root's own block filled in place, the others' buffers alias
     * nothing significant */
    for (int i = 0; i < N * size; i++)
        other[i] = rank == root ? i : -1;
    MT_OK(MPI_Gather(rank == root ? MPI_IN_PLACE : other, N, MPI_INT, other, N,
                     MPI_INT, root, w));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    int *b = calloc((size_t)N * size + 8, sizeof(int));
    int *other = calloc((size_t)N * size, sizeof(int));
    int *counts = malloc((size_t)size * sizeof(int));
    int *displs = malloc((size_t)size * sizeof(int));
    int *bytes = malloc((size_t)size * sizeof(int));
    MPI_Datatype *types = malloc((size_t)size * sizeof(MPI_Datatype));
    CT_CHECK(b && other && counts && displs && bytes && types, "malloc");
    for (int i = 0; i < size; i++) {
        counts[i] = N;
        displs[i] = N * i;
        bytes[i] = N * i * (int)sizeof(int);
        types[i] = MPI_INT;
    }

    test_everywhere(b, counts, displs, types, bytes);
    test_neighbor(b);
    test_rooted(b, other, counts, displs);
    test_legal(b, other);

    free(b);
    free(other);
    free(counts);
    free(displs);
    free(bytes);
    free(types);
    MT_OK(MPI_Finalize());
    return 0;
}
