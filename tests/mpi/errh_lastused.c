/*
 * MPI_LASTUSEDCODE: at least MPI_ERR_LASTCODE from the start, and it
 * follows the classes and codes MPI_Add_error_class/code add, which are
 * above MPI_ERR_LASTCODE and map back to their class.
 */
#include "mpitest.h"

static int lastused(void)
{
    int *v = NULL, flag = 0;

    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MT_CHECK(flag && v != NULL, "MPI_LASTUSEDCODE is not set");
    return *v;
}

int main(int argc, char **argv)
{
    int cls, cls2, code, code2, got, len, rank;
    char text[MPI_MAX_ERROR_STRING];

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_CHECK(lastused() >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < "
             "MPI_ERR_LASTCODE %d", lastused(), MPI_ERR_LASTCODE);

    MT_OK(MPI_Add_error_class(&cls));
    MT_CHECK(cls > MPI_ERR_LASTCODE, "new class %d", cls);
    MT_CHECK(lastused() >= cls, "lastused %d after class %d", lastused(),
             cls);
    MT_OK(MPI_Add_error_code(cls, &code));
    MT_OK(MPI_Add_error_code(cls, &code2));
    MT_CHECK(code > MPI_ERR_LASTCODE && code2 > code, "codes %d %d", code,
             code2);
    /* (MPICH leaves it at the last class after a code: only >= that.) */
    MT_CHECK(lastused() >= cls, "lastused %d after code %d", lastused(),
             code2);
    MT_OK(MPI_Add_error_class(&cls2));
    MT_CHECK(lastused() >= cls2 && cls2 > cls, "lastused %d after class %d", lastused(),
             cls2);
    MT_OK(MPI_Error_class(code2, &got));
    MT_CHECK(got == cls, "class of code %d is %d, want %d", code2, got, cls);
    MT_OK(MPI_Add_error_string(code, "a user error"));
    MT_OK(MPI_Error_string(code, text, &len));
    MT_CHECK(strcmp(text, "a user error") == 0, "string '%s'", text);

    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("errh_lastused: OK\n");
    return 0;
}
