/*
 * An attribute outlives its freed keyval (MPI_Comm_free_keyval and
 * MPI_Type_free_keyval while still attached are allowed: the keyval lives
 * until its last attachment goes).  Deleting it, copying it at a dup
 * (the copy callback runs) and freeing the object (the delete callback
 * runs) all work, for communicators and datatypes.
 */
#include "mpitest.h"

static int copies, deletes;

static int c_copy(MPI_Comm c, int k, void *extra, void *in, void *out,
                  int *flag)
{
    (void)c; (void)k; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int c_del(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c; (void)k; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int t_copy(MPI_Datatype t, int k, void *extra, void *in, void *out,
                  int *flag)
{
    (void)t; (void)k; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int t_del(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t; (void)k; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int k, saved, flag, v = 5, *got;
    MPI_Comm a, b;
    MPI_Datatype t, u;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Communicators: delete after the keyval was freed. */
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_OK(MPI_Comm_create_keyval(c_copy, c_del, &k, NULL));
    saved = k;
    MT_OK(MPI_Comm_set_attr(a, saved, &v));
    MT_OK(MPI_Comm_free_keyval(&k));
    MT_CHECK(k == MPI_KEYVAL_INVALID, "keyval not invalidated");
    MT_OK(MPI_Comm_get_attr(a, saved, &got, &flag));
    MT_CHECK(flag && got == &v, "get after free_keyval");
    deletes = copies = 0;
    MT_OK(MPI_Comm_delete_attr(a, saved));
    MT_CHECK(deletes == 1, "delete callback ran %d times", deletes);
    MT_OK(MPI_Comm_free(&a));
    MT_CHECK(deletes == 1, "deleted twice");

    /* Copy at a dup, then the delete callbacks at both frees. */
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_OK(MPI_Comm_create_keyval(c_copy, c_del, &k, NULL));
    saved = k;
    MT_OK(MPI_Comm_set_attr(a, saved, &v));
    MT_OK(MPI_Comm_free_keyval(&k));
    deletes = copies = 0;
    MT_OK(MPI_Comm_dup(a, &b));
    MT_CHECK(copies == 1, "copy callback ran %d times", copies);
    MT_OK(MPI_Comm_get_attr(b, saved, &got, &flag));
    MT_CHECK(flag && got == &v, "copied attribute");
    MT_OK(MPI_Comm_free(&a));
    MT_CHECK(deletes == 1, "free ran %d delete callbacks", deletes);
    MT_OK(MPI_Comm_delete_attr(b, saved));
    MT_CHECK(deletes == 2, "delete_attr ran %d delete callbacks", deletes);
    MT_OK(MPI_Comm_free(&b));

    /* Datatypes, the same. */
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MT_OK(MPI_Type_create_keyval(t_copy, t_del, &k, NULL));
    saved = k;
    MT_OK(MPI_Type_set_attr(t, saved, &v));
    MT_OK(MPI_Type_free_keyval(&k));
    MT_CHECK(k == MPI_KEYVAL_INVALID, "type keyval not invalidated");
    deletes = copies = 0;
    MT_OK(MPI_Type_dup(t, &u));
    MT_CHECK(copies == 1, "type copy callback ran %d times", copies);
    MT_OK(MPI_Type_get_attr(u, saved, &got, &flag));
    MT_CHECK(flag && got == &v, "copied type attribute");
    MT_OK(MPI_Type_delete_attr(t, saved));
    MT_CHECK(deletes == 1, "type delete_attr ran %d callbacks", deletes);
    MT_OK(MPI_Type_free(&u));
    MT_CHECK(deletes == 2, "type free ran %d callbacks", deletes);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Finalize());
    printf("attr_freed: OK\n");
    return 0;
}
