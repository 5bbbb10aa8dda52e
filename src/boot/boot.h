/*
 * boot: how a rank learns who it is and exchanges addresses with the others.
 *
 * One small interface over several backends, selected by SHOAL_BOOT or
 * detected from the environment in this order (launchers.md §6.1):
 *   pmix    PMIx through libpmix.so.2, loaded with dlopen (Open MPI's
 *           mpirun, srun --mpi=pmix)
 *   pmi2    PMI-2 wire protocol over PMI_FD (srun --mpi=pmi2; Hydra when
 *           forced)
 *   pmi1    PMI-1 wire protocol over PMI_FD (shoalrun, Hydra) or over TCP
 *           to PMI_PORT with PMI_ID (Hydra -pmi-port)
 *   single  no launcher: rank 0 of 1
 * srun --mpi=none (SLURM_PROCID without PMI_FD or PMIX_*) is refused with a
 * message saying what to use instead, as is a PMIx launcher whose library
 * or server is missing.
 *
 * Values are binary; the layer encodes them for the wire and splits values
 * larger than one PMI line.  Keys are short names ([A-Za-z0-9_-], at most 32
 * characters) scoped by rank: boot_put publishes key for this rank,
 * boot_get(r, key) reads rank r's.  Puts become visible to others after the
 * next boot_fence; a key is put once.  Keys starting with "boot-" are this
 * layer's own.  None of these calls is thread-safe against each other; they
 * are used during initialization and finalization only.
 */
#ifndef SHOAL_BOOT_H
#define SHOAL_BOOT_H

#include <stddef.h>

#include "base/base.h"

#define BOOT_KEY_MAX 32

typedef struct boot_info {
    int rank;
    int size;
    int local_rank;      /* index of this rank among the ranks of its node */
    int local_size;      /* ranks on this node */
    const int *local_ranks; /* world ranks of this node, ascending (local_size) */
    const int *node_of;  /* node index of every rank (size entries); NULL
                            when the launcher named the local ranks itself,
                            unless SHOAL_FT (then always set) */
    char node_id[64];    /* identity of this node (host + boot + network namespace) */
    char jobid[256];     /* the launcher's name for the job (PMI kvsname,
                            PMI-2 jobid, PMIx namespace) */
    char shm_prefix[64]; /* "shoal-<16 hex digits of the job>-": names of this job's /dev/shm objects */
    const char *backend; /* "pmix", "pmi2", "pmi1" or "single" */
} boot_info_t;

/*
 * Start the bootstrap.  Returns the job description (owned by boot, valid
 * until boot_fini).  Fails with SHOAL_ERR_BOOT and a detail saying what was
 * tried and why it failed.
 */
int boot_init(const boot_info_t **info_p);

/*
 * Publish key=value for this rank (visible to others after boot_fence).
 * Each key is put once: SHOAL_ERR_ALREADY for a second put, because Hydra
 * does not reliably replace values.
 */
int boot_put(const char *key, const void *value, size_t len);

/* Collective: make every earlier put visible to every rank. */
int boot_fence(void);

/*
 * Read rank's value of key into buf (cap bytes).  *len_p receives its
 * length.  SHOAL_ERR_NOT_FOUND when rank never put key (or put it after the
 * last fence); SHOAL_ERR_TOO_LARGE when it does not fit, with *len_p set to
 * the size needed.
 */
int boot_get(int rank, const char *key, void *buf, size_t cap, size_t *len_p);

/* A rank the launcher said died (shoalrun --ft tells every rank alive),
 * or -1; never waits (docs/FT.md). */
int boot_failed_rank(void);
/* Whether the launcher signalled news that boot_failed_rank would read
 * (Hydra's SIGUSR1 under SHOAL_FT): a cheap look, for the wait loop. */
int boot_launcher_news(void);

/*
 * Checkpoints shoalrun asks for (docs/FT.md, "Checkpoints the launcher
 * asks for"; only under shoalrun, whose PMI-1 server speaks these lines).
 * boot_ckpt_notices: the newest request id and target (id, count) the
 * launcher sent, 0 when none, read without waiting; 0 when the backend
 * has none.  boot_tell: a line the launcher does not answer,
 * "cmd=<cmd> id=<id> count=<count>" (id < 0: left out);
 * SHOAL_ERR_UNSUPPORTED when the backend cannot.  boot_await: wait at
 * most timeout_ms for the launcher to send something.
 */
int boot_ckpt_notices(long *req, long *tgt_id, long *tgt);
int boot_tell(const char *cmd, long id, long count);
/* Under shoalrun --ft (SHOAL_FT_ACCUSE): "cmd=shoal-ft-accuse rank=R",
 * this rank's wire gave rank R of another host up; the launcher decides
 * which of the two is taken for dead and tells every rank (docs/FT.md,
 * "Partitions").  SHOAL_ERR_UNSUPPORTED when the backend cannot. */
int boot_accuse(int rank);
void boot_await(int timeout_ms);

/* Collective barrier through the launcher (slow; for init and finalize). */
int boot_barrier(void);

/*
 * Ask the launcher to end the whole job with exit code, printing msg.  Does
 * not return: exits the process if the launcher does not kill it first.
 */
void boot_abort(int code, const char *msg) BASE_NORETURN;

/* Tell the launcher this rank finished cleanly and release the backend. */
int boot_fini(void);

/*
 * The /dev/shm name prefix of a job, "shoal-<16 hex>-", from its PMI kvsname.
 * shoalrun uses it to sweep a job's objects; the library to name them.
 */
void boot_shm_prefix(const char *jobid, char *out, size_t cap);

#endif /* SHOAL_BOOT_H */
