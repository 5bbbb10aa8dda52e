/*
 * The pmix backend (launchers.md §6.5): Open MPI's mpirun and srun
 * --mpi=pmix.  We never speak the PMIx wire protocol; we load the site's
 * libpmix.so.2 with dlopen when a PMIx launcher started us, so Shoal needs
 * only libc and pthreads to build and run.  The ABI we rely on is declared
 * in boot_pmix_abi.h.  Puts are PMIx_Put(GLOBAL) of strings, the fence is
 * PMIx_Commit + PMIx_Fence(collect data) over the whole namespace, and
 * gets after it look only at the data the fence brought (PMIX_OPTIONAL),
 * so a missing key is reported instead of waited for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot_internal.h"
#include "boot/boot_pmix_abi.h"

#define PMIX_LIB "libpmix.so.2"
#define PMIX_OPTIONAL_KEY "pmix.optional"
#define PMIX_INSTALL_HINT                                                    \
    "install it (Debian/Ubuntu: apt-get install libpmix2; RHEL: dnf "        \
    "install pmix), or start the program with shoalrun, mpiexec.mpich or "  \
    "srun --mpi=pmi2"

typedef struct pmix_api {
    void *lib;
    spmix_init_fn init;
    spmix_finalize_fn finalize;
    spmix_abort_fn abort;
    spmix_put_fn put;
    spmix_commit_fn commit;
    spmix_fence_fn fence;
    spmix_get_fn get;
    spmix_error_string_fn error_string;
    spmix_value_destruct_fn value_destruct;
} pmix_api_t;

typedef struct pmix_ctx {
    pmix_api_t api;
    spmix_proc_t me;
    int size;
} pmix_ctx_t;

/* dlsym into a function pointer without a pedantic object/function cast. */
static int sym(void *lib, const char *name, void *fn_p, char *missing,
               size_t cap)
{
    void *p = dlsym(lib, name);

    if (p == NULL) {
        snprintf(missing, cap, "%s", name);
        return -1;
    }
    memcpy(fn_p, &p, sizeof(p));
    return 0;
}

static int api_load(pmix_api_t *a, char *why, size_t cap)
{
    char missing[64];

    memset(a, 0, sizeof(*a));
    a->lib = dlopen(PMIX_LIB, RTLD_NOW | RTLD_GLOBAL);
    if (a->lib == NULL) {
        const char *e = dlerror();
        snprintf(why, cap, "%s", e != NULL ? e : PMIX_LIB " not found");
        return -1;
    }
    if (sym(a->lib, "PMIx_Init", &a->init, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Finalize", &a->finalize, missing,
            sizeof(missing)) ||
        sym(a->lib, "PMIx_Abort", &a->abort, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Put", &a->put, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Commit", &a->commit, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Fence", &a->fence, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Get", &a->get, missing, sizeof(missing)) ||
        sym(a->lib, "PMIx_Error_string", &a->error_string, missing,
            sizeof(missing)) ||
        sym(a->lib, "PMIx_Value_destruct", &a->value_destruct, missing,
            sizeof(missing))) {
        snprintf(why, cap, "%s lacks %s (not a PMIx v3/v4 client library)",
                 PMIX_LIB, missing);
        dlclose(a->lib);
        a->lib = NULL;
        return -1;
    }
    return 0;
}

int boot_pmix_available(char *detail, size_t cap)
{
    pmix_api_t a;

    if (api_load(&a, detail, cap) != 0)
        return 0;
    snprintf(detail, cap, "%s loaded", PMIX_LIB);
    dlclose(a.lib);
    return 1;
}

static int pmix_fail(pmix_ctx_t *c, spmix_status_t rc, const char *what)
{
    return base_err(rc == SPMIX_ERR_NOT_FOUND ? SHOAL_ERR_NOT_FOUND
                                              : SHOAL_ERR_BOOT,
                    "PMIx %s failed: %s (%d)", what,
                    c->api.error_string(rc), rc);
}

static void info_bool(spmix_info_t *info, const char *key)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type = SPMIX_BOOL;
    info->value.data.flag = true;
}

/* An integer attribute, whatever integer type the server chose. */
static int value_long(const spmix_value_t *v, long *out)
{
    switch (v->type) {
    case SPMIX_UINT32:
    case SPMIX_PROC_RANK:
        *out = (long)v->data.uint32;
        return 0;
    case SPMIX_UINT16:
        *out = v->data.uint16;
        return 0;
    case SPMIX_INT:
    case SPMIX_INT32:
        *out = v->data.integer;
        return 0;
    case SPMIX_UINT:
        *out = (long)v->data.uint;
        return 0;
    case SPMIX_SIZE:
        *out = (long)v->data.size;
        return 0;
    default:
        return -1;
    }
}

/* PMIx_Get of an integer attribute of proc (rank or wildcard). */
static int get_long(pmix_ctx_t *c, spmix_rank_t rank, const char *key,
                    long *out)
{
    spmix_proc_t p = c->me;
    spmix_value_t *v = NULL;

    p.rank = rank;
    spmix_status_t rc = c->api.get(&p, key, NULL, 0, &v);
    if (rc != SPMIX_SUCCESS)
        return pmix_fail(c, rc, key);
    int bad = value_long(v, out);
    int type = v->type;
    c->api.value_destruct(v);
    free(v);
    if (bad)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMIx %s has data type %d, not an integer", key,
                        type);
    return SHOAL_OK;
}

/* PMIx_Get of a string of rank (or wildcard) into value[cap]. */
static int get_string(pmix_ctx_t *c, spmix_rank_t rank, const char *key,
                      int optional, char *value, size_t cap)
{
    spmix_proc_t p = c->me;
    spmix_value_t *v = NULL;
    spmix_info_t opt;

    p.rank = rank;
    info_bool(&opt, PMIX_OPTIONAL_KEY);
    spmix_status_t rc = c->api.get(&p, key, optional ? &opt : NULL,
                                   optional ? 1 : 0, &v);
    if (rc != SPMIX_SUCCESS)
        return pmix_fail(c, rc, key);
    int status = SHOAL_OK;
    if (v->type != SPMIX_STRING || v->data.string == NULL)
        status = base_err(SHOAL_ERR_PROTOCOL,
                          "PMIx %s has data type %d, not a string", key,
                          v->type);
    else if (strlen(v->data.string) >= cap)
        status = base_err(SHOAL_ERR_TOO_LARGE,
                          "PMIx value of '%s' has %zu characters, room for "
                          "%zu",
                          key, strlen(v->data.string), cap - 1);
    else
        strcpy(value, v->data.string);
    c->api.value_destruct(v);
    free(v);
    return status;
}

/* ---- the backend interface ----------------------------------------------- */

/* Keys are "shoal-<rank>-<key>"; the rank whose value it is comes first. */
static int key_rank(const char *key)
{
    if (strncmp(key, "shoal-", 6) != 0)
        return -1;
    return atoi(key + 6);
}

static int pmix_put(void *ctx, const char *key, const char *value)
{
    pmix_ctx_t *c = ctx;
    spmix_value_t v;

    memset(&v, 0, sizeof(v));
    v.type = SPMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies */
    spmix_status_t rc = c->api.put(SPMIX_GLOBAL, key, &v);
    return rc == SPMIX_SUCCESS ? SHOAL_OK : pmix_fail(c, rc, "Put");
}

static int pmix_get(void *ctx, const char *key, char *value, size_t cap)
{
    pmix_ctx_t *c = ctx;
    int rank = key_rank(key);

    if (rank < 0 || rank >= c->size)
        return base_err(SHOAL_ERR_INVALID, "PMIx get of foreign key '%s'",
                        key);
    return get_string(c, (spmix_rank_t)rank, key, 1, value, cap);
}

static size_t pmix_room(void *ctx, size_t keylen)
{
    (void)ctx;
    (void)keylen;
    return BOOT_TEXT_MAX - 1;
}

static int pmix_fence(void *ctx)
{
    pmix_ctx_t *c = ctx;
    spmix_info_t collect;
    spmix_status_t rc = c->api.commit();

    if (rc != SPMIX_SUCCESS)
        return pmix_fail(c, rc, "Commit");
    info_bool(&collect, SPMIX_COLLECT_DATA);
    rc = c->api.fence(NULL, 0, &collect, 1);
    return rc == SPMIX_SUCCESS ? SHOAL_OK : pmix_fail(c, rc, "Fence");
}

static int pmix_barrier(void *ctx)
{
    pmix_ctx_t *c = ctx;
    spmix_status_t rc = c->api.fence(NULL, 0, NULL, 0);

    return rc == SPMIX_SUCCESS ? SHOAL_OK : pmix_fail(c, rc, "Fence");
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/*
 * PMIX_LOCAL_RANK and PMIX_LOCAL_SIZE should agree with the peer list (a
 * server may number local ranks otherwise; the list is what boot uses).
 */
static void cross_check(pmix_ctx_t *c, const int *ranks, int n)
{
    long lrank = -1, lsize = -1;
    int index = -1;

    for (int i = 0; i < n; i++)
        if (ranks[i] == (int)c->me.rank)
            index = i;
    if (get_long(c, c->me.rank, SPMIX_LOCAL_RANK, &lrank) != SHOAL_OK ||
        get_long(c, SPMIX_RANK_WILDCARD, SPMIX_LOCAL_SIZE, &lsize) !=
            SHOAL_OK) {
        base_debug("boot", "PMIx gives no local rank or size: %s",
                   shoal_error_detail());
        return;
    }
    if (lrank != index || lsize != n)
        base_warn("boot",
                  "PMIx says local rank %ld of %ld, its local peers %d of "
                  "%d; using the peers",
                  lrank, lsize, index, n);
}

/* PMIX_LOCAL_PEERS "0,1,2,3" into a sorted rank list. */
static int pmix_local_peers(void *ctx, int **ranks_p, int *n_p)
{
    pmix_ctx_t *c = ctx;
    char text[BOOT_TEXT_MAX * 8];
    int status = get_string(c, SPMIX_RANK_WILDCARD, SPMIX_LOCAL_PEERS, 0,
                            text, sizeof(text));

    if (status != SHOAL_OK)
        return status;
    int n = 1;
    for (const char *p = text; *p != '\0'; p++)
        n += *p == ',';
    int *ranks = malloc((size_t)n * sizeof(*ranks));
    if (ranks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    int k = 0;
    for (char *p = text, *end; *p != '\0' && k < n; p = end) {
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= c->size || (*end != ',' && *end))
            break;
        ranks[k++] = (int)r;
        if (*end == ',')
            end++;
    }
    if (k != n) {
        free(ranks);
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMIx local peers '%.80s' is not a list of ranks",
                        text);
    }
    qsort(ranks, (size_t)n, sizeof(*ranks), cmp_int);
    cross_check(c, ranks, n);
    *ranks_p = ranks;
    *n_p = n;
    return SHOAL_OK;
}

static void pmix_abort(void *ctx, int code, const char *msg)
{
    pmix_ctx_t *c = ctx;

    c->api.abort(code, msg, NULL, 0);
}

static int pmix_fini(void *ctx)
{
    pmix_ctx_t *c = ctx;
    spmix_status_t rc = c->api.finalize(NULL, 0);
    int status = rc == SPMIX_SUCCESS ? SHOAL_OK : pmix_fail(c, rc, "Finalize");

    /* libpmix stays loaded: its threads and atexit hooks may outlive us. */
    free(c);
    return status;
}

int boot_pmix_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap)
{
    pmix_ctx_t *c = calloc(1, sizeof(*c));
    char why[512];
    long size;

    if (c == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    if (api_load(&c->api, why, sizeof(why)) != 0) {
        free(c);
        return base_err(SHOAL_ERR_BOOT,
                        "this process was started by a PMIx launcher "
                        "(PMIX_* is set: Open MPI's mpirun or srun "
                        "--mpi=pmix), but the PMIx client library cannot be "
                        "loaded: %s; " PMIX_INSTALL_HINT,
                        why);
    }
    spmix_status_t rc = c->api.init(&c->me, NULL, 0);
    if (rc != SPMIX_SUCCESS) {
        int status = base_err(SHOAL_ERR_BOOT,
                              "PMIx_Init failed: %s (%d)%s",
                              c->api.error_string(rc), rc,
                              rc == SPMIX_ERR_UNREACH
                                  ? ": the PMIx server of the launcher "
                                    "cannot be reached (PMIX_* variables "
                                    "left over from another job?)"
                                  : "");
        free(c);
        return status;
    }
    int status = get_long(c, SPMIX_RANK_WILDCARD, SPMIX_JOB_SIZE, &size);
    if (status == SHOAL_OK &&
        (size < 1 || c->me.rank >= (spmix_rank_t)size))
        status = base_err(SHOAL_ERR_BOOT,
                          "PMIx gives rank %u of job size %ld", c->me.rank,
                          size);
    if (status == SHOAL_OK && strlen(c->me.nspace) >= jobid_cap)
        status = base_err(SHOAL_ERR_BOOT, "the PMIx namespace is too long");
    if (status != SHOAL_OK) {
        c->api.finalize(NULL, 0);
        free(c);
        return status;
    }
    c->size = (int)size;
    *be = (boot_backend_t){
        .name = "pmix",
        .kvs = {.ctx = c,
                .put = pmix_put,
                .get = pmix_get,
                .room = pmix_room,
                .key_max = 63},
        .local_peers = pmix_local_peers,
        .fence = pmix_fence,
        .barrier = pmix_barrier,
        .abort = pmix_abort,
        .fini = pmix_fini,
    };
    *rank_p = (int)c->me.rank;
    *size_p = c->size;
    strcpy(jobid, c->me.nspace);
    return SHOAL_OK;
}
