/*
 * Info objects: set/get (and replacing), valuelen, get_string's
 * truncation and length reporting, nthkey order, delete, dup
 * independence, key and value limits, MPI_INFO_ENV and Info_create_env.
 */
#include "mpitest.h"

static void basics(void)
{
    MPI_Info info, copy;
    char val[64], key[MPI_MAX_INFO_KEY + 1];
    int flag, len, n;

    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_get_nkeys(info, &n));
    MT_CHECK(n == 0, "new info has %d keys", n);
    MT_OK(MPI_Info_set(info, "alpha", "1"));
    MT_OK(MPI_Info_set(info, "beta", "twenty-two"));
    MT_OK(MPI_Info_set(info, "gamma", "x"));
    MT_OK(MPI_Info_set(info, "alpha", "one")); /* replaces, keeps position */
    MT_OK(MPI_Info_get_nkeys(info, &n));
    MT_CHECK(n == 3, "%d keys", n);
    MT_OK(MPI_Info_get_nthkey(info, 0, key));
    MT_CHECK(strcmp(key, "alpha") == 0, "key 0 %s", key);
    MT_OK(MPI_Info_get_nthkey(info, 2, key));
    MT_CHECK(strcmp(key, "gamma") == 0, "key 2 %s", key);
    MT_ERR(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 3, key));
    MT_OK(MPI_Info_get(info, "alpha", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && strcmp(val, "one") == 0, "alpha %s", val);
    /* Info_get truncates to valuelen characters */
    MT_OK(MPI_Info_get(info, "beta", 6, val, &flag));
    MT_CHECK(flag && strcmp(val, "twenty") == 0, "truncated %s", val);
    MT_OK(MPI_Info_get_valuelen(info, "beta", &len, &flag));
    MT_CHECK(flag && len == 10, "valuelen %d", len);
    MT_OK(MPI_Info_get(info, "delta", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag == 0, "missing key found");
    MT_OK(MPI_Info_get_valuelen(info, "delta", &len, &flag));
    MT_CHECK(flag == 0, "missing key has a length");
    /* get_string: buflen in, full length + 1 out, truncation */
    len = 4;
    MT_OK(MPI_Info_get_string(info, "beta", &len, val, &flag));
    MT_CHECK(flag && len == 11 && strcmp(val, "twe") == 0,
             "get_string %d '%s'", len, val);
    len = 0;
    MT_OK(MPI_Info_get_string(info, "beta", &len, NULL, &flag));
    MT_CHECK(flag && len == 11, "get_string length query %d", len);
    len = sizeof(val);
    MT_OK(MPI_Info_get_string(info, "beta", &len, val, &flag));
    MT_CHECK(flag && len == 11 && strcmp(val, "twenty-two") == 0,
             "get_string full %d '%s'", len, val);
    len = 5;
    MT_OK(MPI_Info_get_string(info, "nope", &len, val, &flag));
    MT_CHECK(flag == 0 && len == 5, "missing: flag %d len %d", flag, len);
    /* dup is independent */
    MT_OK(MPI_Info_dup(info, &copy));
    MT_OK(MPI_Info_delete(info, "alpha"));
    MT_ERR(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "alpha"));
    MT_OK(MPI_Info_get_nthkey(info, 0, key));
    MT_CHECK(strcmp(key, "beta") == 0, "order after delete: %s", key);
    MT_OK(MPI_Info_get(copy, "alpha", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && strcmp(val, "one") == 0, "dup lost alpha");
    MT_OK(MPI_Info_get_nkeys(copy, &n));
    MT_CHECK(n == 3, "dup has %d keys", n);
    MT_OK(MPI_Info_free(&copy));
    MT_CHECK(copy == MPI_INFO_NULL, "free sets MPI_INFO_NULL");
    MT_OK(MPI_Info_free(&info));
}

static void limits(void)
{
    MPI_Info info;
    char longkey[MPI_MAX_INFO_KEY + 2], *longval = malloc(MPI_MAX_INFO_VAL + 2);
    int n;

    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    memset(longval, 'v', MPI_MAX_INFO_VAL + 1);
    longval[MPI_MAX_INFO_VAL + 1] = '\0';
    MT_OK(MPI_Info_create(&info));
    MT_ERR(MPI_ERR_INFO_KEY, MPI_Info_set(info, longkey, "x"));
    MT_ERR(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
    MT_ERR(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", longval));
    longkey[MPI_MAX_INFO_KEY] = '\0';
    longval[MPI_MAX_INFO_VAL] = '\0';
    MT_OK(MPI_Info_set(info, longkey, longval));
    MT_ERR(MPI_ERR_INFO, MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
    MT_ERR(MPI_ERR_INFO, MPI_Info_free(&(MPI_Info){MPI_INFO_ENV}));
    MT_OK(MPI_Info_free(&info));
    free(longval);
}

static void env(int argc, char **argv)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag, n;

    MT_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    MT_CHECK(n >= 3, "MPI_INFO_ENV has %d keys", n);
    MT_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && strstr(val, "info_ops") != NULL, "command %s", val);
    MT_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag));
    {
        int size;
        MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        MT_CHECK(flag && atoi(val) == size, "maxprocs %s", val);
    }
    MT_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, val,
                       &flag));
    MT_CHECK(flag && strncmp(val, "MPI_THREAD_", 11) == 0, "thread_level");
    MT_OK(MPI_Info_create_env(argc, argv, &info));
    MT_OK(MPI_Info_get(info, "command", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && strcmp(val, argv[0]) == 0, "create_env command %s", val);
    MT_OK(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    int rank;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    basics();
    limits();
    env(argc, argv);
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("info_ops: ok\n");
    return 0;
}
