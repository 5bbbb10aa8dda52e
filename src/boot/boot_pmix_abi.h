/*
 * The few pieces of the PMIx client ABI that boot_pmix.c uses, declared
 * here so Shoal builds without pmix.h and loads libpmix.so.2 with dlopen
 * only when a PMIx launcher started the program.  Layouts and constants
 * follow the PMIx Standard v4 (OpenPMIx 4.x, the library Debian 12 ships);
 * every one of them also exists in PMIx v3, which older Open MPI embeds.
 * When pmix.h is found at configure time, boot_pmix_abi_check.c compares
 * all of this with the real header (sizes, offsets, values).
 *
 * Names carry an spmix_ prefix so the check can include both headers.
 */
#ifndef SHOAL_BOOT_PMIX_ABI_H
#define SHOAL_BOOT_PMIX_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int spmix_status_t;
typedef uint32_t spmix_rank_t;
typedef uint16_t spmix_data_type_t;
typedef uint8_t spmix_scope_t;
typedef uint32_t spmix_info_directives_t;

#define SPMIX_MAX_NSLEN 255
#define SPMIX_MAX_KEYLEN 511

#define SPMIX_RANK_UNDEF UINT32_MAX
#define SPMIX_RANK_WILDCARD (UINT32_MAX - 1)

#define SPMIX_SUCCESS 0
#define SPMIX_ERR_UNREACH (-25)
#define SPMIX_ERR_NOT_FOUND (-46)

/* Data types (pmix_data_type_t). */
#define SPMIX_BOOL 1
#define SPMIX_STRING 3
#define SPMIX_SIZE 4
#define SPMIX_INT 6
#define SPMIX_INT32 9
#define SPMIX_UINT 11
#define SPMIX_UINT16 13
#define SPMIX_UINT32 14
#define SPMIX_PROC_RANK 40

/* Put scopes (pmix_scope_t). */
#define SPMIX_GLOBAL 3

/* Attribute keys. */
#define SPMIX_JOB_SIZE "pmix.job.size"
#define SPMIX_LOCAL_RANK "pmix.lrank"
#define SPMIX_LOCAL_SIZE "pmix.local.size"
#define SPMIX_LOCAL_PEERS "pmix.lpeers"
#define SPMIX_COLLECT_DATA "pmix.collect"

typedef struct spmix_proc {
    char nspace[SPMIX_MAX_NSLEN + 1];
    spmix_rank_t rank;
} spmix_proc_t;

/*
 * pmix_value_t: a type tag and a union whose largest members are three
 * words (pmix_envar_t: two pointers and a char); only the members used
 * here are named.
 */
typedef struct spmix_value {
    spmix_data_type_t type;
    union {
        bool flag;
        char *string;
        size_t size;
        int integer;
        int32_t int32;
        unsigned int uint;
        uint16_t uint16;
        uint32_t uint32;
        spmix_rank_t rank;
        void *ptr;
        char envar_room[3 * sizeof(void *)];
    } data;
} spmix_value_t;

typedef struct spmix_info {
    char key[SPMIX_MAX_KEYLEN + 1];
    spmix_info_directives_t flags;
    spmix_value_t value;
} spmix_info_t;

/* The client functions, as pointers filled by dlsym. */
typedef spmix_status_t (*spmix_init_fn)(spmix_proc_t *proc,
                                        spmix_info_t info[], size_t ninfo);
typedef spmix_status_t (*spmix_finalize_fn)(const spmix_info_t info[],
                                            size_t ninfo);
typedef spmix_status_t (*spmix_abort_fn)(int status, const char msg[],
                                         spmix_proc_t procs[], size_t nprocs);
typedef spmix_status_t (*spmix_put_fn)(spmix_scope_t scope, const char key[],
                                       spmix_value_t *val);
typedef spmix_status_t (*spmix_commit_fn)(void);
typedef spmix_status_t (*spmix_fence_fn)(const spmix_proc_t procs[],
                                         size_t nprocs,
                                         const spmix_info_t info[],
                                         size_t ninfo);
typedef spmix_status_t (*spmix_get_fn)(const spmix_proc_t *proc,
                                       const char key[],
                                       const spmix_info_t info[],
                                       size_t ninfo, spmix_value_t **val);
typedef const char *(*spmix_error_string_fn)(spmix_status_t status);
typedef void (*spmix_value_destruct_fn)(spmix_value_t *val);

#endif /* SHOAL_BOOT_PMIX_ABI_H */
