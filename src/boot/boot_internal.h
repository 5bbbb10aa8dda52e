/*
 * Inside the boot layer: the backend interface, the value codec and the
 * locality helpers.  Only the files of src/boot, shoalrun and the tests include this;
 * upper layers use boot.h.
 */
#ifndef SHOAL_BOOT_INTERNAL_H
#define SHOAL_BOOT_INTERNAL_H

#include <stddef.h>

#include "boot/boot.h"

/*
 * A string key-value store as a backend offers it: one value of at most
 * room(keylen) characters per key, [!-~] only.  The codec (boot_kvs.c) turns
 * binary values of any size into such strings.
 */
typedef struct boot_kvs {
    void *ctx;
    int (*put)(void *ctx, const char *key, const char *value);
    /* SHOAL_ERR_NOT_FOUND when absent; value has cap bytes for text + NUL. */
    int (*get)(void *ctx, const char *key, char *value, size_t cap);
    /* Longest value that fits in one put beside a key of keylen chars. */
    size_t (*room)(void *ctx, size_t keylen);
    size_t key_max; /* longest key the store takes */
} boot_kvs_t;

/* A backend: the store plus the collective and lifecycle calls. */
typedef struct boot_backend {
    const char *name;
    boot_kvs_t kvs;
    /*
     * Optional (NULL when the launcher has none): a launcher-reserved
     * value such as PMI_process_mapping, raw; SHOAL_ERR_NOT_FOUND.
     */
    int (*get_reserved)(void *ctx, const char *key, char *value, size_t cap);
    /*
     * Optional: the world ranks on this rank's node, ascending (allocated;
     * free with free()), when the launcher says so directly (PMIx).
     * SHOAL_ERR_NOT_FOUND sends boot to the mapping or an exchange.
     */
    int (*local_peers)(void *ctx, int **ranks_p, int *n_p);
    int (*fence)(void *ctx);    /* publish puts, then wait for everyone */
    int (*barrier)(void *ctx);
    void (*abort)(void *ctx, int code, const char *msg); /* may return */
    int (*fini)(void *ctx);     /* also frees ctx */
    /* Optional: a rank the launcher said died (shoalrun --ft), or -1;
     * never waits. */
    int (*failed_rank)(void *ctx);
    /* Optional (shoalrun): the launcher's checkpoint requests (boot.h,
     * boot_ckpt_notices), lines it does not answer, and waiting for it. */
    void (*ckpt_notices)(void *ctx, long *req, long *tgt_id, long *tgt);
    int (*tell)(void *ctx, const char *cmd, long id, const char *key,
                long value);
    void (*await)(void *ctx, int timeout_ms);
} boot_backend_t;

/* Largest value boot_put accepts (keeps a runaway caller from flooding). */
#define BOOT_VALUE_MAX (16u << 20)
/* Longest value text a backend hands back (a PMI-1 value is at most 1023). */
#define BOOT_TEXT_MAX 1024

/* ---- codec (boot_kvs.c) -------------------------------------------------- */

/* True when key is 1..BOOT_KEY_MAX characters of [A-Za-z0-9_-]. */
int boot_key_ok(const char *key);

/*
 * Store rank's key as "shoal-<rank>-<key>": "v<hex>" when it fits in one
 * put, else "c<chunks>:<bytes>" with the hex split over keys
 * "shoal-<rank>-<key>.<i>".
 */
int boot_kvs_put(const boot_kvs_t *kvs, int rank, const char *key,
                 const void *data, size_t len);
/*
 * Read it back into buf.  *len_p gets the value's length, also when
 * SHOAL_ERR_TOO_LARGE says it does not fit in cap.
 */
int boot_kvs_get(const boot_kvs_t *kvs, int rank, const char *key, void *buf,
                 size_t cap, size_t *len_p);

/* ---- locality (boot_locality.c) ------------------------------------------ */

/*
 * Parse PMI_process_mapping "(vector,(first_node,nnodes,ppn),...)" into the
 * node index of each of size ranks.  The block list repeats cyclically until
 * every rank has a node (Hydra's "(vector,(0,1,1))" puts all ranks on node
 * 0).  SHOAL_ERR_PROTOCOL when it does not parse.
 */
int boot_mapping_parse(const char *text, int size, int *node_of);

/*
 * From the node index of every rank, the ranks sharing rank's node
 * (ascending, allocated; free with free()), its index among them and their
 * count.
 */
int boot_local_ranks(const int *node_of, int size, int rank, int **ranks_p,
                     int *local_rank_p, int *local_size_p);

/* This node's identity: hash of hostname, boot id and network namespace. */
void boot_node_id(char *out, size_t cap);

/*
 * Collective: learn the node of every rank by exchanging node ids through
 * the KVS under key (put, fence, size gets).  node_of gets small node
 * indices.  boot_init uses the key "boot-node".
 */
int boot_nodes_by_exchange(const boot_backend_t *be, int rank, int size,
                           const char *key, const char *node_id,
                           int *node_of);

/* ---- backends ------------------------------------------------------------ */

/*
 * An environment variable as an int in [lo, hi]; SHOAL_ERR_BOOT saying
 * what is wrong (unset, not a number, out of range).
 */
int boot_env_int(const char *name, long lo, long hi, int *out);

/*
 * Open the PMI-1 backend from PMI_FD/PMI_RANK/PMI_SIZE or PMI_PORT/PMI_ID.
 * Fills rank, size and the job id (the kvsname).
 */
int boot_pmi1_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap);
/*
 * Open the PMI-2 backend on the same variables (PMI_JOBID, set by Slurm, is
 * passed to fullinit).  Fills rank, size and the job id (job-getid).
 */
int boot_pmi2_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap);
/*
 * Open the PMIx backend through libpmix.so.2, loaded with dlopen: refused
 * with what is missing and how to install it when the library is absent.
 */
int boot_pmix_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap);
/*
 * Whether libpmix can be loaded, and from where or why not (for
 * shoal-info); loads and unloads it.
 */
int boot_pmix_available(char *detail, size_t cap);
/* The singleton: rank 0 of 1 with a KVS in this process. */
int boot_single_backend(boot_backend_t *be, char *jobid, size_t jobid_cap);

/* ---- the guardian and MPICH's Hydra under SHOAL_FT (boot_hydra.c) ------- */

/* True when the parent process is Hydra's proxy (hydra_pmi_proxy). */
int boot_hydra_parent(void);
/* True when a launcher that keeps no stop watch started this process
 * other than Hydra: the parent is Slurm's slurmstepd, or PMIX_* is set. */
int boot_foreign_parent(void);
/* Whether PMIX_NAMESPACE, PMIX_RANK or PMIX_SERVER_URI* is set. */
int boot_has_pmix(void);
/*
 * Under SHOAL_FT with Hydra's proxy (hydra 1) or another launcher that
 * keeps no stop watch (hydra 0) as parent (boot_init, before anything
 * else): under Hydra catch SIGUSR1 (a flag); then fork.  The process the
 * launcher started waits for the rank as its guardian, kills it when it
 * has been stopped past SHOAL_FT_TIMEOUT, and leaves with its status:
 * under Hydra by an exit (128 + the signal when one killed it), so that
 * the proxy does not kill every rank; else by the rank's own exit code
 * or signal.  The child returns and is the rank.  Without a fork
 * (threads already running, fork failing) it warns and returns SHOAL_OK.
 */
int boot_guard_start(int hydra);
/* Whether srun --mpi=pmix started this process (the parent is slurmstepd
 * and PMIX_* is set): Slurm's PMIx plugin ends the step when a client is
 * lost without PMIx_Finalize, so the guardian is the PMIx client. */
int boot_guard_slurm_pmix(void);
/* In the rank: its end of the socket pair to the guardian that holds its
 * PMIx connection, or -1 (boot_proxy.c). */
int boot_guard_proxy_fd(void);

/* ---- the PMIx client in the guardian (boot_proxy.c) ---------------------- */

/* The rank's backend: every call goes to the guardian over fd. */
int boot_proxy_backend(boot_backend_t *be, int fd, int *rank_p, int *size_p,
                       char *jobid, size_t jobid_cap);
/* In the guardian: open the PMIx backend (PX_HELLO tells how it went). */
void boot_proxy_open(void);
/* In the guardian: answer one request; 0 when the rank closed its end. */
int boot_proxy_serve(int fd);
/* In the guardian, once the rank has ended: finalize PMIx. */
void boot_proxy_close(void);
/* Whether SIGUSR1 came since the last call (Hydra's word of a death). */
int boot_hydra_take_signal(void);
/*
 * When SIGUSR1 came since the last call: read PMI_dead_processes with get
 * (a backend's get_reserved on its ctx) and keep its new ranks as notices
 * of conn (a boot_pmi1_t, also the PMI-2 client's connection), warning
 * when that fails.  1 when it read.
 */
struct boot_pmi1;
int boot_hydra_read_dead(struct boot_pmi1 *conn, int size,
                         int (*get)(void *ctx, const char *key, char *value,
                                    size_t cap),
                         void *ctx);
/* Whether SIGUSR1 came and was not taken yet (a look, cheap). */
int boot_hydra_signalled(void);
/* Whether boot_guard_start installed the SIGUSR1 handler (Hydra). */
int boot_hydra_watching(void);
/*
 * Parse Hydra's PMI_dead_processes, "" or ranks joined by commas ("5,3"),
 * into ranks (at most cap kept, *n_p of them); SHOAL_ERR_PROTOCOL when it
 * is not such a list of ranks below size.
 */
int boot_dead_list_parse(const char *text, int size, int *ranks, int cap,
                         int *n_p);

/* The backend of the running boot, for tests of the internals (NULL if
 * boot_init has not run). */
const boot_backend_t *boot_backend(void);

#endif /* SHOAL_BOOT_INTERNAL_H */
