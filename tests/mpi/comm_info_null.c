/*
 * MPI_INFO_NULL as the info argument of MPI_Comm_dup_with_info and
 * MPI_Comm_idup_with_info: accepted, the duplicate works and takes no
 * hints from the parent (the _with_info forms replace the parent's
 * hints by the argument's).
 */
#include "mpitest.h"

static void check_dup(MPI_Comm parent, MPI_Comm d)
{
    int result, sum = -1, size, nkeys = -1;
    MPI_Info used;

    MT_CHECK(d != MPI_COMM_NULL, "no duplicate");
    MT_OK(MPI_Comm_compare(parent, d, &result));
    MT_CHECK(result == MPI_CONGRUENT, "compare %d", result);
    MT_OK(MPI_Comm_size(d, &size));
    MT_OK(MPI_Allreduce(&(int){1}, &sum, 1, MPI_INT, MPI_SUM, d));
    MT_CHECK(sum == size, "allreduce %d", sum);
    MT_OK(MPI_Comm_get_info(d, &used));
    MT_OK(MPI_Info_get_nkeys(used, &nkeys));
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        MT_OK(MPI_Info_get_nthkey(used, i, key));
        MT_CHECK(strcmp(key, "shoal_test_hint") != 0,
                 "the parent's hint was copied");
    }
    MT_OK(MPI_Info_free(&used));
}

int main(int argc, char **argv)
{
    MPI_Comm parent, d;
    MPI_Info hints;
    MPI_Request r;
    int rank;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MT_OK(MPI_Info_create(&hints));
    MT_OK(MPI_Info_set(hints, "shoal_test_hint", "yes"));
    MT_OK(MPI_Comm_set_info(parent, hints));
    MT_OK(MPI_Info_free(&hints));

    MT_OK(MPI_Comm_dup_with_info(parent, MPI_INFO_NULL, &d));
    check_dup(parent, d);
    MT_OK(MPI_Comm_free(&d));

    MT_OK(MPI_Comm_idup_with_info(parent, MPI_INFO_NULL, &d, &r));
    MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_dup(parent, d);
    MT_OK(MPI_Comm_free(&d));

    MT_OK(MPI_Comm_free(&parent));
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("comm_info_null: OK\n");
    return 0;
}
