/*
 * Configure-time check (src/boot/sources.cmake, when pmix.h is found):
 * the declarations of boot_pmix_abi.h must match the real PMIx header in
 * every size, offset and constant boot_pmix.c relies on.  Not part of the
 * library; a mismatch fails the configure step with the compiler's message.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include <pmix.h>

#include "boot/boot_pmix_abi.h"

#define SAME_SIZE(a, b) static_assert(sizeof(a) == sizeof(b), #a " != " #b)
#define SAME_OFFSET(a, fa, b, fb)                                            \
    static_assert(offsetof(a, fa) == offsetof(b, fb),                        \
                  "offset of " #a "." #fa " != " #b "." #fb)
#define SAME_VALUE(a, b) static_assert((a) == (b), #a " != " #b)

SAME_SIZE(spmix_status_t, pmix_status_t);
SAME_SIZE(spmix_rank_t, pmix_rank_t);
SAME_SIZE(spmix_data_type_t, pmix_data_type_t);
SAME_SIZE(spmix_scope_t, pmix_scope_t);
SAME_SIZE(spmix_info_directives_t, pmix_info_directives_t);

SAME_SIZE(spmix_proc_t, pmix_proc_t);
SAME_OFFSET(spmix_proc_t, nspace, pmix_proc_t, nspace);
SAME_OFFSET(spmix_proc_t, rank, pmix_proc_t, rank);
SAME_SIZE(((spmix_proc_t *)0)->nspace, ((pmix_proc_t *)0)->nspace);

SAME_SIZE(spmix_value_t, pmix_value_t);
SAME_OFFSET(spmix_value_t, type, pmix_value_t, type);
SAME_OFFSET(spmix_value_t, data, pmix_value_t, data);
SAME_OFFSET(spmix_value_t, data.string, pmix_value_t, data.string);
SAME_OFFSET(spmix_value_t, data.uint32, pmix_value_t, data.uint32);

SAME_SIZE(spmix_info_t, pmix_info_t);
SAME_OFFSET(spmix_info_t, key, pmix_info_t, key);
SAME_OFFSET(spmix_info_t, flags, pmix_info_t, flags);
SAME_OFFSET(spmix_info_t, value, pmix_info_t, value);
SAME_SIZE(((spmix_info_t *)0)->key, ((pmix_info_t *)0)->key);

SAME_VALUE(SPMIX_RANK_UNDEF, PMIX_RANK_UNDEF);
SAME_VALUE(SPMIX_RANK_WILDCARD, PMIX_RANK_WILDCARD);
SAME_VALUE(SPMIX_SUCCESS, PMIX_SUCCESS);
SAME_VALUE(SPMIX_ERR_UNREACH, PMIX_ERR_UNREACH);
SAME_VALUE(SPMIX_ERR_NOT_FOUND, PMIX_ERR_NOT_FOUND);
SAME_VALUE(SPMIX_BOOL, PMIX_BOOL);
SAME_VALUE(SPMIX_STRING, PMIX_STRING);
SAME_VALUE(SPMIX_SIZE, PMIX_SIZE);
SAME_VALUE(SPMIX_INT, PMIX_INT);
SAME_VALUE(SPMIX_INT32, PMIX_INT32);
SAME_VALUE(SPMIX_UINT, PMIX_UINT);
SAME_VALUE(SPMIX_UINT16, PMIX_UINT16);
SAME_VALUE(SPMIX_UINT32, PMIX_UINT32);
SAME_VALUE(SPMIX_PROC_RANK, PMIX_PROC_RANK);
SAME_VALUE(SPMIX_GLOBAL, PMIX_GLOBAL);

/* The function types: assigning the real functions must compile. */
static void check_functions(void)
{
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t[], size_t) = PMIx_Init;
    pmix_status_t (*put)(pmix_scope_t, const pmix_key_t, pmix_value_t *) =
        PMIx_Put;
    pmix_status_t (*fence)(const pmix_proc_t[], size_t, const pmix_info_t[],
                           size_t) = PMIx_Fence;
    pmix_status_t (*get)(const pmix_proc_t *, const pmix_key_t,
                         const pmix_info_t[], size_t, pmix_value_t **) =
        PMIx_Get;
    (void)init;
    (void)put;
    (void)fence;
    (void)get;
}

int main(void)
{
    check_functions();
    return strcmp(SPMIX_JOB_SIZE, PMIX_JOB_SIZE) != 0 ||
           strcmp(SPMIX_LOCAL_RANK, PMIX_LOCAL_RANK) != 0 ||
           strcmp(SPMIX_LOCAL_SIZE, PMIX_LOCAL_SIZE) != 0 ||
           strcmp(SPMIX_LOCAL_PEERS, PMIX_LOCAL_PEERS) != 0 ||
           strcmp(SPMIX_COLLECT_DATA, PMIX_COLLECT_DATA) != 0 ||
           strcmp("pmix.optional", PMIX_OPTIONAL) != 0;
}
