/*
 * A stand-in libpmix.so.2 for test_pmix_backend.c: the PMIx client calls
 * boot_pmix.c makes, served from this process, so the pmix backend is
 * tested without a launcher.  Built with the ABI of boot_pmix_abi.h.  The
 * test steers it through the environment:
 *   FAKE_PMIX_MODE  ok | unreach | badtype | badpeers
 *   FAKE_PMIX_RANK  this process's rank (default 1) of 4
 * and reads what happened through fake_pmix_state().  Compiled with
 * -DFAKE_PMIX_INCOMPLETE it lacks PMIx_Fence, like a library that is not
 * a PMIx v3/v4 client.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot_pmix_abi.h"

#define NKEYS 64

typedef struct fake_state {
    int inits, finalizes, fences, collects, commits, aborts, abort_code;
    char abort_msg[256];
} fake_state_t;

static fake_state_t state;
static struct {
    char key[64];
    char *value;
    int published;
} store[NKEYS];
static int nkeys;

fake_state_t *fake_pmix_state(void);
spmix_status_t PMIx_Init(spmix_proc_t *proc, spmix_info_t info[],
                         size_t ninfo);
spmix_status_t PMIx_Finalize(const spmix_info_t info[], size_t ninfo);
spmix_status_t PMIx_Abort(int status, const char msg[], spmix_proc_t procs[],
                          size_t nprocs);
spmix_status_t PMIx_Put(spmix_scope_t scope, const char key[],
                        spmix_value_t *val);
spmix_status_t PMIx_Commit(void);
spmix_status_t PMIx_Fence(const spmix_proc_t procs[], size_t nprocs,
                          const spmix_info_t info[], size_t ninfo);
spmix_status_t PMIx_Get(const spmix_proc_t *proc, const char key[],
                        const spmix_info_t info[], size_t ninfo,
                        spmix_value_t **val);
const char *PMIx_Error_string(spmix_status_t status);
void PMIx_Value_destruct(spmix_value_t *val);

fake_state_t *fake_pmix_state(void)
{
    return &state;
}

static const char *mode(void)
{
    const char *m = getenv("FAKE_PMIX_MODE");

    return m != NULL ? m : "ok";
}

static int my_rank(void)
{
    const char *r = getenv("FAKE_PMIX_RANK");

    return r != NULL ? atoi(r) : 1;
}

spmix_status_t PMIx_Init(spmix_proc_t *proc, spmix_info_t info[],
                         size_t ninfo)
{
    (void)info;
    (void)ninfo;
    if (strcmp(mode(), "unreach") == 0)
        return SPMIX_ERR_UNREACH;
    state.inits++;
    snprintf(proc->nspace, sizeof(proc->nspace), "fake-namespace.7");
    proc->rank = (spmix_rank_t)my_rank();
    return SPMIX_SUCCESS;
}

spmix_status_t PMIx_Finalize(const spmix_info_t info[], size_t ninfo)
{
    (void)info;
    (void)ninfo;
    state.finalizes++;
    for (int i = 0; i < nkeys; i++)
        free(store[i].value);
    nkeys = 0;
    return SPMIX_SUCCESS;
}

spmix_status_t PMIx_Abort(int status, const char msg[], spmix_proc_t procs[],
                          size_t nprocs)
{
    (void)procs;
    (void)nprocs;
    state.aborts++;
    state.abort_code = status;
    snprintf(state.abort_msg, sizeof(state.abort_msg), "%s", msg);
    return SPMIX_SUCCESS;
}

spmix_status_t PMIx_Put(spmix_scope_t scope, const char key[],
                        spmix_value_t *val)
{
    if (scope != SPMIX_GLOBAL || val->type != SPMIX_STRING ||
        nkeys == NKEYS || strlen(key) >= sizeof(store[0].key))
        return -1;
    snprintf(store[nkeys].key, sizeof(store[0].key), "%s", key);
    store[nkeys].value = strdup(val->data.string);
    store[nkeys].published = 0;
    nkeys++;
    return SPMIX_SUCCESS;
}

spmix_status_t PMIx_Commit(void)
{
    state.commits++;
    return SPMIX_SUCCESS;
}

#ifndef FAKE_PMIX_INCOMPLETE
spmix_status_t PMIx_Fence(const spmix_proc_t procs[], size_t nprocs,
                          const spmix_info_t info[], size_t ninfo)
{
    (void)procs;
    (void)nprocs;
    state.fences++;
    for (size_t i = 0; i < ninfo; i++)
        if (strcmp(info[i].key, SPMIX_COLLECT_DATA) == 0 &&
            info[i].value.type == SPMIX_BOOL && info[i].value.data.flag)
            state.collects++;
    for (int i = 0; i < nkeys; i++)
        store[i].published = 1;
    return SPMIX_SUCCESS;
}
#endif

static spmix_value_t *new_value(spmix_data_type_t type)
{
    spmix_value_t *v = calloc(1, sizeof(*v));

    if (v != NULL)
        v->type = type;
    return v;
}

static spmix_value_t *string_value(const char *s)
{
    spmix_value_t *v = new_value(SPMIX_STRING);

    if (v != NULL)
        v->data.string = strdup(s);
    return v;
}

/* The job: 4 ranks, ranks 1 and 3 on this node (given out of order). */
static spmix_value_t *job_value(spmix_rank_t rank, const char *key)
{
    spmix_value_t *v = NULL;

    if (strcmp(key, SPMIX_JOB_SIZE) == 0 && rank == SPMIX_RANK_WILDCARD) {
        if (strcmp(mode(), "badtype") == 0)
            return string_value("4");
        v = new_value(SPMIX_UINT32);
        if (v != NULL)
            v->data.uint32 = 4;
    } else if (strcmp(key, SPMIX_LOCAL_PEERS) == 0) {
        if (strcmp(mode(), "badpeers") == 0)
            return string_value("1,x");
        return string_value("3,1");
    } else if (strcmp(key, SPMIX_LOCAL_RANK) == 0) {
        v = new_value(SPMIX_UINT16);
        if (v != NULL)
            v->data.uint16 = (uint16_t)(my_rank() == 3);
    } else if (strcmp(key, SPMIX_LOCAL_SIZE) == 0) {
        v = new_value(SPMIX_UINT32);
        if (v != NULL)
            v->data.uint32 = 2;
    }
    return v;
}

spmix_status_t PMIx_Get(const spmix_proc_t *proc, const char key[],
                        const spmix_info_t info[], size_t ninfo,
                        spmix_value_t **val)
{
    int optional = 0;

    for (size_t i = 0; i < ninfo; i++)
        optional |= strcmp(info[i].key, "pmix.optional") == 0;
    if (strcmp(proc->nspace, "fake-namespace.7") != 0)
        return -1;
    *val = job_value(proc->rank, key);
    if (*val != NULL)
        return SPMIX_SUCCESS;
    for (int i = 0; i < nkeys; i++)
        if (strcmp(store[i].key, key) == 0 && store[i].published) {
            *val = string_value(store[i].value);
            return SPMIX_SUCCESS;
        }
    /* A real server would wait for a remote key unless optional. */
    return optional ? SPMIX_ERR_NOT_FOUND : -1;
}

const char *PMIx_Error_string(spmix_status_t status)
{
    return status == SPMIX_ERR_UNREACH    ? "UNREACHABLE"
           : status == SPMIX_ERR_NOT_FOUND ? "NOT-FOUND"
                                           : "FAKE-ERROR";
}

void PMIx_Value_destruct(spmix_value_t *val)
{
    if (val->type == SPMIX_STRING)
        free(val->data.string);
    val->type = 0;
}
