/*
 * Info objects: ordered (key, value) string pairs, and MPI_INFO_ENV, the
 * environment the job started with.
 *
 * MPI 4.0 lets the Info calls run before MPI_Init and after
 * MPI_Finalize, so they skip the initialization check.  An info object is
 * used by one thread at a time (the standard's rule); MPI_INFO_ENV is
 * filled once, under mpi_obj_lock, on first use, and is read-only.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi/core/errhandler.h"
#include "mpi/core/obj_arena.h"
#include "mpi/mpi_impl.h"


static int env_filled;

static int info_add(MPI_Info info, const char *key, const char *val);

/* ---- MPI_INFO_ENV ------------------------------------------------------------ */

/* The command line from /proc: argv[0] and the rest, space-separated. */
static void read_cmdline(char *cmd, size_t cmdcap, char *args, size_t argcap)
{
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0, at;

    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    snprintf(cmd, cmdcap, "%s", buf);
    args[0] = '\0';
    at = strlen(buf) + 1;
    while (at < n) {
        size_t len = strlen(args);
        snprintf(args + len, argcap - len, "%s%s", len ? " " : "", buf + at);
        at += strlen(buf + at) + 1;
    }
}

static const char *thread_level_name(int level)
{
    static const char *const names[] = {
        "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
        "MPI_THREAD_MULTIPLE"};

    return level >= 0 && level <= 3 ? names[level] : "MPI_THREAD_SINGLE";
}

/* The environment's keys, into info (argv given or read from /proc). */
static void env_fill(MPI_Info info, int argc, char **argv)
{
    char cmd[1024], args[MPI_MAX_INFO_VAL], wdir[1024], num[32];
    struct utsname u;

    read_cmdline(cmd, sizeof(cmd), args, sizeof(args));
    if (argv != NULL && argc > 0) {
        snprintf(cmd, sizeof(cmd), "%s", argv[0]);
        args[0] = '\0';
        for (int i = 1; i < argc && argv[i] != NULL; i++) {
            size_t len = strlen(args);
            snprintf(args + len, sizeof(args) - len, "%s%s", len ? " " : "",
                     argv[i]);
        }
    }
    info_add(info, "command", cmd);
    info_add(info, "argv", args);
    if (mpi.up) {
        snprintf(num, sizeof(num), "%d", mpi.world_size);
        info_add(info, "maxprocs", num);
        info_add(info, "soft", num);
        info_add(info, "thread_level", thread_level_name(mpi.thread_level));
        info_add(info, "mpi_initial_errhandler", mpi_errh_initial_name());
    }
    if (gethostname(wdir, sizeof(wdir) - 1) == 0) {
        wdir[sizeof(wdir) - 1] = '\0';
        info_add(info, "host", wdir);
    }
    if (uname(&u) == 0)
        info_add(info, "arch", u.machine);
    if (getcwd(wdir, sizeof(wdir)) != NULL)
        info_add(info, "wdir", wdir);
}

static void env_ready(MPI_Info info)
{
    if (info != MPI_INFO_ENV || __atomic_load_n(&env_filled, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&mpi_obj_lock);
    if (!env_filled) {
        env_fill(info, 0, NULL);
        __atomic_store_n(&env_filled, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&mpi_obj_lock);
}

/* ---- storage ------------------------------------------------------------------ */

static int find_key(MPI_Info info, const char *key)
{
    for (int i = 0; i < info->nkeys; i++)
        if (strcmp(info->keys[i], key) == 0)
            return i;
    return -1;
}

static int info_add(MPI_Info info, const char *key, const char *val)
{
    int i = find_key(info, key);
    char *v = strdup(val), *k;

    if (v == NULL)
        return MPI_ERR_NO_MEM;
    if (i >= 0) {
        free(info->vals[i]);
        info->vals[i] = v;
        return MPI_SUCCESS;
    }
    if (info->nkeys == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        char **ks = realloc(info->keys, (size_t)cap * sizeof(char *));
        if (ks != NULL)
            info->keys = ks;
        char **vs = ks != NULL ? realloc(info->vals, (size_t)cap * sizeof(char *))
                               : NULL;
        if (vs == NULL) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        info->vals = vs;
        info->cap = cap;
    }
    k = strdup(key);
    if (k == NULL) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    info->keys[info->nkeys] = k;
    info->vals[info->nkeys++] = v;
    return MPI_SUCCESS;
}

static void info_clear(MPI_Info info)
{
    for (int i = 0; i < info->nkeys; i++) {
        free(info->keys[i]);
        free(info->vals[i]);
    }
    free(info->keys);
    free(info->vals);
    info->keys = info->vals = NULL;
    info->nkeys = info->cap = 0;
}

static int info_new(MPI_Info *info_p)
{
    /* In the objects' arena when checkpoints are on (a handle the program
     * keeps in a registered region comes back: core/ckpt_objs.c). */
    MPI_Info info = mpi_obj_alloc(sizeof(*info));

    if (info == NULL)
        return MPI_ERR_NO_MEM;
    info->magic = MPI_MAGIC_INFO;
    info->refs = 1;
    *info_p = info;
    return MPI_SUCCESS;
}

const char *mpi_info_lookup(MPI_Info info, const char *key)
{
    int i;

    if (info == MPI_INFO_NULL || info->magic != MPI_MAGIC_INFO)
        return NULL;
    env_ready(info);
    i = find_key(info, key);
    return i >= 0 ? info->vals[i] : NULL;
}

/* ---- checks --------------------------------------------------------------------- */

static int check_info(MPI_Info info, const char *fn)
{
    if (info == MPI_INFO_NULL || info->magic != MPI_MAGIC_INFO)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, fn,
                         "invalid info object %p", (void *)info);
    env_ready(info);
    return MPI_SUCCESS;
}

static int check_key(const char *key, const char *fn)
{
    size_t len;

    if (key == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn, "key is NULL");
    len = strlen(key);
    if (len == 0 || len > MPI_MAX_INFO_KEY)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn,
                         "key of %zu characters; must be 1 to %d", len,
                         MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

/* Check both, for calls taking (info, key). */
static int check_info_key(MPI_Info info, const char *key, const char *fn)
{
    int rc = check_info(info, fn);

    return rc != MPI_SUCCESS ? rc : check_key(key, fn);
}

static int check_writable(MPI_Info info, const char *fn)
{
    if (info == MPI_INFO_ENV)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, fn,
                         "MPI_INFO_ENV cannot be changed");
    return MPI_SUCCESS;
}

/* ---- the calls ------------------------------------------------------------------- */

int PMPI_Info_create(MPI_Info *info)
{
    if (info == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create",
                         "info is NULL");
    if (info_new(info) != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_create",
                         "no memory");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_create)

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (info == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create_env",
                         "info is NULL");
    if (argc < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create_env",
                         "argc is %d", argc);
    if (info_new(info) != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                         "MPI_Info_create_env", "no memory");
    env_fill(*info, argc, argv);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_create_env)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    const char *fn = "MPI_Info_set";
    int rc = check_info_key(info, key, fn);

    if (rc == MPI_SUCCESS)
        rc = check_writable(info, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (value == NULL || strlen(value) > MPI_MAX_INFO_VAL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, fn,
                         "value for key \"%s\" is NULL or longer than %d",
                         key, MPI_MAX_INFO_VAL);
    if (info_add(info, key, value) != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_set)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
                  int *flag)
{
    const char *fn = "MPI_Info_get";
    int rc = check_info_key(info, key, fn), i;

    if (rc != MPI_SUCCESS)
        return rc;
    if (valuelen < 0 || value == NULL || flag == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "valuelen %d, value %p, flag %p", valuelen,
                         (void *)value, (void *)flag);
    i = find_key(info, key);
    *flag = i >= 0;
    if (i >= 0) {
        /* valuelen excludes the terminating NUL; longer values truncate. */
        size_t n = strlen(info->vals[i]);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, info->vals[i], n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_get)

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen,
                         char *value, int *flag)
{
    const char *fn = "MPI_Info_get_string";
    int rc = check_info_key(info, key, fn), i;

    if (rc != MPI_SUCCESS)
        return rc;
    if (buflen == NULL || *buflen < 0 || flag == NULL ||
        (*buflen > 0 && value == NULL))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "buflen, value or flag is invalid");
    i = find_key(info, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    {
        size_t n = strlen(info->vals[i]);
        if (*buflen > 0) {
            size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
            memcpy(value, info->vals[i], m);
            value[m] = '\0';
        }
        *buflen = (int)n + 1; /* what a full copy needs */
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_get_string)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
                           int *flag)
{
    const char *fn = "MPI_Info_get_valuelen";
    int rc = check_info_key(info, key, fn), i;

    if (rc != MPI_SUCCESS)
        return rc;
    if (valuelen == NULL || flag == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "valuelen or flag is NULL");
    i = find_key(info, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(info->vals[i]);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_get_valuelen)

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    const char *fn = "MPI_Info_delete";
    int rc = check_info_key(info, key, fn), i;

    if (rc == MPI_SUCCESS)
        rc = check_writable(info, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    i = find_key(info, key);
    if (i < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, fn,
                         "no key \"%s\"", key);
    free(info->keys[i]);
    free(info->vals[i]);
    /* Keep the order of the others: nthkey numbers follow insertion. */
    memmove(&info->keys[i], &info->keys[i + 1],
            (size_t)(info->nkeys - i - 1) * sizeof(char *));
    memmove(&info->vals[i], &info->vals[i + 1],
            (size_t)(info->nkeys - i - 1) * sizeof(char *));
    info->nkeys--;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_delete)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    int rc = check_info(info, "MPI_Info_get_nkeys");

    if (rc != MPI_SUCCESS)
        return rc;
    if (nkeys == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nkeys",
                         "nkeys is NULL");
    *nkeys = info->nkeys;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    int rc = check_info(info, "MPI_Info_get_nthkey");

    if (rc != MPI_SUCCESS)
        return rc;
    if (key == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                         "key is NULL");
    if (n < 0 || n >= info->nkeys)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                         "n = %d is not in [0, %d)", n, info->nkeys);
    strcpy(key, info->keys[n]);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_get_nthkey)

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    int rc = check_info(info, "MPI_Info_dup");

    if (rc != MPI_SUCCESS)
        return rc;
    if (newinfo == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_dup",
                         "newinfo is NULL");
    rc = info_new(newinfo);
    for (int i = 0; i < info->nkeys && rc == MPI_SUCCESS; i++)
        rc = info_add(*newinfo, info->keys[i], info->vals[i]);
    if (rc != MPI_SUCCESS) {
        if (*newinfo != NULL) {
            info_clear(*newinfo);
            mpi_obj_free(*newinfo);
        }
        *newinfo = MPI_INFO_NULL;
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_dup",
                         "no memory");
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_dup)

int PMPI_Info_free(MPI_Info *info)
{
    MPI_Info i;

    if (info == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_free",
                         "info is NULL");
    i = *info;
    if (i == MPI_INFO_NULL || i->magic != MPI_MAGIC_INFO)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free",
                         "invalid info object %p", (void *)i);
    if (i == MPI_INFO_ENV)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free",
                         "MPI_INFO_ENV cannot be freed");
    info_clear(i);
    i->magic = MPI_MAGIC_DEAD;
    mpi_obj_free(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Info_free)
