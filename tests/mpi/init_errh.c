/*
 * The initial error handler (MPI 4.0 section 9.3; shoalrun
 * --initial-errhandler, docs/MPI.md "Errors").
 *
 * usage: mpi_init_errh NAME
 *   NAME is the handler the launcher was told (mpi_errors_are_fatal,
 *   mpi_errors_abort or mpi_errors_return): MPI_INFO_ENV reports it under
 *   mpi_initial_errhandler, MPI_COMM_WORLD and MPI_COMM_SELF have it, a
 *   communicator made from MPI_COMM_WORLD inherits it; with
 *   mpi_errors_return an erroneous call on MPI_COMM_WORLD, on
 *   MPI_COMM_SELF and one tied to no communicator return their error
 *   classes instead of ending the job.
 */
#include "mpitest.h"

static MPI_Errhandler by_name(const char *name)
{
    if (strcmp(name, "mpi_errors_return") == 0)
        return MPI_ERRORS_RETURN;
    if (strcmp(name, "mpi_errors_abort") == 0)
        return MPI_ERRORS_ABORT;
    if (strcmp(name, "mpi_errors_are_fatal") == 0)
        return MPI_ERRORS_ARE_FATAL;
    MT_FAIL("unknown handler name %s", name);
    return MPI_ERRHANDLER_NULL;
}

static void expect_handler(MPI_Comm comm, MPI_Errhandler want,
                           const char *what)
{
    MPI_Errhandler eh;

    MT_OK(MPI_Comm_get_errhandler(comm, &eh));
    MT_CHECK(eh == want, "%s does not have the initial error handler",
             what);
    MT_OK(MPI_Errhandler_free(&eh));
}

int main(int argc, char **argv)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0, size, n = 0, buf = 0;
    MPI_Errhandler want;
    MPI_Comm dup;

    MT_OK(MPI_Init(&argc, &argv));
    MT_CHECK(argc > 1, "usage: mpi_init_errh NAME");
    want = by_name(argv[1]);
    MT_OK(MPI_Info_get(MPI_INFO_ENV, "mpi_initial_errhandler",
                       MPI_MAX_INFO_VAL, value, &flag));
    MT_CHECK(flag && strcmp(value, argv[1]) == 0,
             "MPI_INFO_ENV{mpi_initial_errhandler} is '%s' (flag %d), "
             "want '%s'", value, flag, argv[1]);
    expect_handler(MPI_COMM_WORLD, want, "MPI_COMM_WORLD");
    expect_handler(MPI_COMM_SELF, want, "MPI_COMM_SELF");
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    expect_handler(dup, want, "a dup of MPI_COMM_WORLD");
    MT_OK(MPI_Comm_free(&dup));
    if (want == MPI_ERRORS_RETURN) {
        int cls = MPI_SUCCESS;
        MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        MPI_Error_class(MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD),
                        &cls);
        MT_CHECK(cls == MPI_ERR_RANK, "MPI_Send to rank %d: class %d, want "
                 "MPI_ERR_RANK", size, cls);
        MPI_Error_class(MPI_Send(&buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF),
                        &cls);
        MT_CHECK(cls == MPI_ERR_RANK, "MPI_Send on MPI_COMM_SELF to rank 1: "
                 "class %d, want MPI_ERR_RANK", cls);
        MT_CHECK(MPI_Info_get_nkeys(MPI_INFO_NULL, &n) != MPI_SUCCESS,
                 "MPI_Info_get_nkeys(MPI_INFO_NULL) succeeded");
    }
    MT_OK(MPI_Finalize());
    printf("OK init_errh %s\n", argv[1]);
    return 0;
}
