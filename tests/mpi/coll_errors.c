/*
 * Bad arguments to collectives and operations, under MPI_ERRORS_RETURN:
 * each returns the class the standard names, and every rank sees the same
 * error so no rank is left inside a collective.  Afterwards collectives
 * still work (a refused call consumed nothing).
 */
#include "coll_test.h"

static int rank, size;

static void test_root(void)
{
    int x = 0, y[64];
    MT_ERR(MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, -1, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ROOT, MPI_Reduce(&x, y, 1, MPI_INT, MPI_SUM, size + 3,
                                    MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ROOT, MPI_Gather(&x, 1, MPI_INT, y, 1, MPI_INT, -5,
                                    MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ROOT, MPI_Scatter(y, 1, MPI_INT, &x, 1, MPI_INT, size,
                                     MPI_COMM_WORLD));
}

static void test_op(void)
{
    int x = 1, y = 0;
    float f = 1, g = 0;
    char c = 1, d = 0;
    static char junk[64]; /* not an operation */

    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL,
                                     MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&x, &y, 1, MPI_INT, (MPI_Op)(void *)junk,
                                     MPI_COMM_WORLD));
    /* op/type mismatches */
    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&c, &d, 1, MPI_WCHAR, MPI_SUM,
                                     MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_BAND,
                                     MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_LAND,
                                     MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Reduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, 0,
                                  MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Scan(&x, &y, 1, MPI_BYTE, MPI_SUM,
                                MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Reduce_scatter_block(&x, &y, 1, MPI_INT,
                                                MPI_REPLACE, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_NO_OP,
                                     MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_OP, MPI_Reduce_local(&c, &d, 1, MPI_BYTE, MPI_PROD));
    /* Reduce_local takes no MPI_IN_PLACE and no aliased buffers */
    MT_ERR(MPI_ERR_BUFFER, MPI_Reduce_local(MPI_IN_PLACE, &y, 1, MPI_INT,
                                            MPI_SUM));
    MT_ERR(MPI_ERR_BUFFER, MPI_Reduce_local(&x, MPI_IN_PLACE, 1, MPI_INT,
                                            MPI_SUM));
    MT_ERR(MPI_ERR_BUFFER, MPI_Reduce_local_c(&y, &y, 1, MPI_INT, MPI_SUM));
    MT_OK(MPI_Reduce_local(&y, &y, 0, MPI_INT, MPI_SUM));

    /* predefined operations cannot be freed */
    MPI_Op op = MPI_SUM;
    MT_ERR(MPI_ERR_OP, MPI_Op_free(&op));
    CT_CHECK(op == MPI_SUM, "Op_free changed the handle");
    op = MPI_OP_NULL;
    MT_ERR(MPI_ERR_OP, MPI_Op_free(&op));
}

static void test_other(void)
{
    int x = 1, y[64];
    MPI_Datatype t;

    MT_ERR(MPI_ERR_COUNT, MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_COUNT, MPI_Allreduce(&x, y, -2, MPI_INT, MPI_SUM,
                                        MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));
    MT_ERR(MPI_ERR_COMM, MPI_Allreduce(&x, y, 1, MPI_INT, MPI_SUM,
                                       MPI_COMM_NULL));
    MT_ERR(MPI_ERR_TYPE, MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0,
                                   MPI_COMM_WORLD));
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t)); /* not committed */
    MT_ERR(MPI_ERR_TYPE, MPI_Bcast(y, 1, t, 0, MPI_COMM_WORLD));
    MT_OK(MPI_Type_free(&t));
    MT_ERR(MPI_ERR_BUFFER, MPI_Allreduce(&x, MPI_IN_PLACE, 1, MPI_INT,
                                         MPI_SUM, MPI_COMM_WORLD));
    if (size > 1) {
        /* MPI_IN_PLACE is for the root only in rooted calls; every rank
         * but 0 errs, so rank 0 must not take part. */
        if (rank != 0)
            MT_ERR(MPI_ERR_BUFFER,
                   MPI_Reduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, 0,
                              MPI_COMM_WORLD));
        if (rank != 0)
            MT_ERR(MPI_ERR_BUFFER,
                   MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, 0,
                              MPI_COMM_WORLD));
    }
    MT_ERR(MPI_ERR_ARG, MPI_Gatherv(&x, 1, MPI_INT, y, NULL, NULL, MPI_INT,
                                    rank, MPI_COMM_WORLD));
}

/* After all that, the collectives still agree. */
static void test_still_works(void)
{
    for (int i = 0; i < 10; i++) {
        int x = rank + i, s = 0;
        MT_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CT_CHECK(s == size * (size - 1) / 2 + size * i, "sum %d", s);
        x = rank == i % size ? 42 + i : 0;
        MT_OK(MPI_Bcast(&x, 1, MPI_INT, i % size, MPI_COMM_WORLD));
        CT_CHECK(x == 42 + i, "bcast %d", x);
    }
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_root();
    test_op();
    test_other();
    test_still_works();
    MT_OK(MPI_Finalize());
    return 0;
}
