/*
 * Bad arguments give the right error class under MPI_ERRORS_RETURN, the
 * job goes on, and (with "fatal" as argv[1]) the default handler stops the
 * job with a message naming the call and the argument.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_Comm dup;
    MPI_Datatype t;
    MPI_Request r = MPI_REQUEST_NULL;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        /* The default handler: this must end the job, naming the rank. */
        MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
        printf("not reached\n");
        return 0;
    }
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_BUFFER,
           MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_RANK, MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_RANK, MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_RANK,
           MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_RANK, MPI_Recv(&x, 1, MPI_INT, size + 1, 0,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_ERR(MPI_ERR_TAG, MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TAG,
           MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TAG, MPI_Irecv(&x, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &r));
    MT_ERR(MPI_ERR_COUNT, MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TYPE,
           MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_COMM, MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Send(&x, 1, t, 0, 0, MPI_COMM_WORLD));
    MT_OK(MPI_Type_free(&t));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    {
        MPI_Comm stale = dup;
        MT_OK(MPI_Comm_free(&dup));
        MT_CHECK(dup == MPI_COMM_NULL, "free sets MPI_COMM_NULL");
        MT_ERR(MPI_ERR_COMM, MPI_Send(&x, 1, MPI_INT, 0, 0, stale));
    }
    MT_ERR(MPI_ERR_REQUEST, MPI_Wait(NULL, MPI_STATUS_IGNORE));
    MT_ERR(MPI_ERR_REQUEST, MPI_Start(&r));
    MT_ERR(MPI_ERR_ARG, MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL,
                                   MPI_STATUS_IGNORE));
    {
        char s[MPI_MAX_ERROR_STRING];
        int len, rc = MPI_Send(&x, 1, MPI_INT, size + 2, 0, MPI_COMM_WORLD);
        MPI_Error_string(rc, s, &len);
        MT_CHECK(strstr(s, "MPI_ERR_RANK") && strstr(s, "MPI_Send"),
                 "error string names class and call: %s", s);
    }
    /* The job goes on. */
    MT_OK(MPI_Sendrecv(&rank, 1, MPI_INT, rank, 0, &x, 1, MPI_INT, rank, 0,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CHECK(x == rank, "traffic after errors");
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_badargs: OK\n");
    return 0;
}
