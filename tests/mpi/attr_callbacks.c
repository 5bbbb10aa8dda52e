/*
 * Attributes: copy and delete callbacks run the right number of times on
 * dup, free, delete and replacement; NULL/DUP predefined callbacks; a
 * freed keyval keeps working for attributes already set; keyvals of the
 * wrong kind; predefined attributes of MPI_COMM_WORLD; datatype
 * attributes; the deprecated MPI-1 names.
 */
#include "mpitest.h"

static int copies, deletes, last_deleted;

static int count_copy(MPI_Comm c, int k, void *extra, void *in, void *out,
                      int *flag)
{
    (void)c, (void)k;
    copies++;
    MT_CHECK(extra == (void *)&copies, "extra_state not passed");
    *(void **)out = (char *)in + 1; /* copies get value + 1 */
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c, (void)k, (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int refuse_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c, (void)k, (void)val, (void)extra;
    return MPI_ERR_OTHER;
}

static int refuse_copy(MPI_Comm c, int k, void *extra, void *in, void *out,
                       int *flag)
{
    (void)c, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int refuse_type_copy(MPI_Datatype t, int k, void *extra, void *in,
                            void *out, int *flag)
{
    (void)t, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t, (void)k, (void)val, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static void callbacks(void)
{
    MPI_Comm a, b;
    int key, flag;
    void *v;

    MT_OK(MPI_Comm_create_keyval(count_copy, count_delete, &key, &copies));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_OK(MPI_Comm_get_attr(a, key, &v, &flag));
    MT_CHECK(flag == 0, "unset attribute found");
    MT_OK(MPI_Comm_set_attr(a, key, (void *)(intptr_t)10));
    MT_OK(MPI_Comm_get_attr(a, key, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 10, "got %ld", (long)(intptr_t)v);
    /* replacing deletes the old value */
    MT_OK(MPI_Comm_set_attr(a, key, (void *)(intptr_t)20));
    MT_CHECK(deletes == 1 && last_deleted == 10, "replace: %d deletes (%d)",
             deletes, last_deleted);
    /* dup copies once, through the callback */
    MT_OK(MPI_Comm_dup(a, &b));
    MT_CHECK(copies == 1, "dup: %d copies", copies);
    MT_OK(MPI_Comm_get_attr(b, key, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 21, "copied value %ld",
             (long)(intptr_t)v);
    /* the keyval may be freed while attributes use it */
    MT_OK(MPI_Comm_free_keyval(&key));
    MT_CHECK(key == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MT_OK(MPI_Comm_free(&b));
    MT_CHECK(deletes == 2 && last_deleted == 21, "free: %d deletes (%d)",
             deletes, last_deleted);
    MT_OK(MPI_Comm_free(&a));
    MT_CHECK(deletes == 3 && last_deleted == 20, "free: %d deletes (%d)",
             deletes, last_deleted);
}

static void explicit_delete(void)
{
    MPI_Comm a, b;
    int key, key2, flag;
    void *v;

    deletes = copies = 0;
    MT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key,
                                 NULL));
    MT_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN,
                                 &key2, NULL));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_OK(MPI_Comm_set_attr(a, key, (void *)(intptr_t)5));
    MT_OK(MPI_Comm_set_attr(a, key2, (void *)(intptr_t)6));
    MT_OK(MPI_Comm_delete_attr(a, key));
    MT_CHECK(deletes == 1, "delete_attr: %d", deletes);
    MT_OK(MPI_Comm_get_attr(a, key, &v, &flag));
    MT_CHECK(flag == 0, "deleted attribute still there");
    MT_OK(MPI_Comm_set_attr(a, key, (void *)(intptr_t)7));
    MT_OK(MPI_Comm_dup(a, &b)); /* NULL_COPY: not copied; DUP_FN: copied */
    MT_OK(MPI_Comm_get_attr(b, key, &v, &flag));
    MT_CHECK(flag == 0, "NULL_COPY_FN copied");
    MT_OK(MPI_Comm_get_attr(b, key2, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 6, "DUP_FN value %ld", (long)(intptr_t)v);
    MT_OK(MPI_Comm_free(&b));
    MT_CHECK(deletes == 1, "b had no key attribute, %d deletes", deletes);
    MT_OK(MPI_Comm_free(&a));
    MT_CHECK(deletes == 2, "a's attribute deleted: %d", deletes);
    MT_OK(MPI_Comm_free_keyval(&key));
    MT_OK(MPI_Comm_free_keyval(&key2));
    /* a delete callback that fails makes Comm_delete_attr fail */
    MT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuse_delete, &key,
                                 NULL));
    MT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL));
    MT_ERR(MPI_ERR_OTHER, MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    MT_OK(MPI_Comm_free_keyval(&key));
    /* a copy callback that fails makes Comm_dup fail, with no duplicate */
    MT_OK(MPI_Comm_create_keyval(refuse_copy, MPI_COMM_NULL_DELETE_FN, &key,
                                 NULL));
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_OK(MPI_Comm_set_attr(a, key, NULL));
    b = MPI_COMM_WORLD;
    MT_ERR(MPI_ERR_OTHER, MPI_Comm_dup(a, &b));
    MT_CHECK(b == MPI_COMM_NULL, "a failed dup left a communicator");
    MT_OK(MPI_Comm_free(&a));
    MT_OK(MPI_Comm_free_keyval(&key));
}

static void predefined(void)
{
    int *v, flag, size;

    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MT_CHECK(flag && *v == 0x7fffffff, "TAG_UB %d", flag ? *v : -1);
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    MT_CHECK(flag && *v == MPI_PROC_NULL, "HOST");
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    MT_CHECK(flag && *v == MPI_ANY_SOURCE, "IO");
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    MT_CHECK(flag && *v == 0, "WTIME_IS_GLOBAL");
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    MT_CHECK(flag && *v == size, "UNIVERSE_SIZE");
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    MT_CHECK(flag && *v == 0, "APPNUM");
    MT_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MT_CHECK(flag && *v == 0x7fffffff, "Attr_get TAG_UB");
    MT_ERR(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&(int){MPI_TAG_UB}));
}

static void types_and_kinds(void)
{
    MPI_Datatype t;
    int tkey, ckey, flag;
    void *v;

    MT_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &tkey, NULL));
    MT_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN,
                                 &ckey, NULL));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, NULL));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, ckey, NULL));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&ckey));
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MT_OK(MPI_Type_set_attr(t, tkey, (void *)(intptr_t)3));
    MT_OK(MPI_Type_get_attr(t, tkey, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 3, "type attribute");
    MT_OK(MPI_Type_delete_attr(t, tkey));
    MT_CHECK(type_deletes == 1, "type delete %d", type_deletes);
    MT_OK(MPI_Type_set_attr(MPI_INT, tkey, (void *)(intptr_t)4));
    MT_OK(MPI_Type_get_attr(MPI_INT, tkey, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 4, "predefined type attribute");
    MT_OK(MPI_Type_delete_attr(MPI_INT, tkey));
    MT_OK(MPI_Type_free(&t));
    /* a type copy callback that fails makes Type_dup fail, no type left */
    {
        int rkey;
        MPI_Datatype d = MPI_INT;
        MT_OK(MPI_Type_create_keyval(refuse_type_copy,
                                     MPI_TYPE_NULL_DELETE_FN, &rkey, NULL));
        MT_OK(MPI_Type_contiguous(3, MPI_INT, &t));
        MT_OK(MPI_Type_set_attr(t, rkey, NULL));
        MT_ERR(MPI_ERR_OTHER, MPI_Type_dup(t, &d));
        MT_CHECK(d == MPI_DATATYPE_NULL, "a failed Type_dup left a type");
        MT_OK(MPI_Type_free(&t));
        MT_OK(MPI_Type_free_keyval(&rkey));
    }
    MT_OK(MPI_Type_free_keyval(&tkey));
    MT_OK(MPI_Comm_free_keyval(&ckey));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&ckey));
    MT_ERR(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag));
}

static void deprecated(void)
{
    int key, flag;
    void *v;

    deletes = 0;
    MT_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, count_delete, &key, NULL));
    MT_OK(MPI_Attr_put(MPI_COMM_SELF, key, (void *)(intptr_t)9));
    MT_OK(MPI_Attr_get(MPI_COMM_SELF, key, &v, &flag));
    MT_CHECK(flag && (intptr_t)v == 9, "Attr_get");
    MT_OK(MPI_Attr_delete(MPI_COMM_SELF, key));
    MT_CHECK(deletes == 1, "Attr_delete ran the callback %d times", deletes);
    MT_OK(MPI_Keyval_free(&key));
}

int main(int argc, char **argv)
{
    int rank;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    callbacks();
    explicit_delete();
    predefined();
    types_and_kinds();
    deprecated();
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("attr_callbacks: ok\n");
    return 0;
}
