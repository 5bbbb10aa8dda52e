/*
 * boot: backend selection (launchers.md §6.1) and the calls of boot.h on top
 * of whichever backend runs.  Selection never guesses silently: a launcher
 * we cannot talk to is refused with a message naming what to use instead,
 * because starting N independent singletons would look like success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/base_strmap.h"
#include "boot/boot.h"
#include "boot/boot_internal.h"

/* Index of SHOAL_BOOT's choices "auto|pmi1|pmi2|pmix|single". */
enum { BOOT_AUTO, BOOT_PMI1, BOOT_PMI2, BOOT_PMIX, BOOT_SINGLE };

static struct {
    int active;
    boot_backend_t be;
    boot_info_t info;
    int *local_ranks;
    int *node_of; /* node index of every rank (NULL: not found) */
    base_strmap_t put_keys; /* keys this rank has put: each only once */
} boot;

const boot_backend_t *boot_backend(void)
{
    return boot.active ? &boot.be : NULL;
}

void boot_shm_prefix(const char *jobid, char *out, size_t cap)
{
    uint64_t h = base_hash64(jobid, strlen(jobid));

    snprintf(out, cap, "shoal-%016llx-", (unsigned long long)h);
}

static int has_pmi(void)
{
    return getenv("PMI_FD") != NULL ||
           (getenv("PMI_PORT") != NULL && getenv("PMI_ID") != NULL);
}

int boot_has_pmix(void)
{
    extern char **environ;

    if (getenv("PMIX_NAMESPACE") != NULL || getenv("PMIX_RANK") != NULL)
        return 1;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return 1;
    return 0;
}

/* srun --mpi=pmi2 (shoalrun sets PMI_JOBID too, so that says nothing). */
static int slurm_pmi2(void)
{
    const char *t = getenv("SLURM_MPI_TYPE");

    return t != NULL && strcmp(t, "pmi2") == 0;
}

/* srun without a PMI plugin: recognised, but there is no KVS to use. */
static int refuse_launcher(void)
{
    if (getenv("SLURM_PROCID") != NULL) {
        const char *n = getenv("SLURM_STEP_NUM_TASKS");
        if (n != NULL && strcmp(n, "1") == 0)
            return SHOAL_OK;
        return base_err(SHOAL_ERR_BOOT,
                        "this process was started by srun without a PMI "
                        "interface (SLURM_PROCID is set, PMI_FD and PMIX_* "
                        "are not): use srun --mpi=pmi2 or srun --mpi=pmix, "
                        "or shoalrun; SHOAL_BOOT=single runs every process "
                        "alone as rank 0 of 1");
    }
    return SHOAL_OK;
}

static int open_pmi(int choice)
{
    boot_info_t *in = &boot.info;

    if (!has_pmi())
        return base_err(SHOAL_ERR_BOOT,
                        "SHOAL_BOOT=%s, but neither PMI_FD nor PMI_PORT "
                        "with PMI_ID is set: start the program with a PMI "
                        "launcher (shoalrun, mpiexec.mpich, srun "
                        "--mpi=pmi2)",
                        choice == BOOT_PMI2 ? "pmi2" : "pmi1");
    if (choice == BOOT_PMI2)
        return boot_pmi2_backend(&boot.be, &in->rank, &in->size, in->jobid,
                                 sizeof(in->jobid));
    return boot_pmi1_backend(&boot.be, &in->rank, &in->size, in->jobid,
                             sizeof(in->jobid));
}

/*
 * launchers.md §6.1: PMIx first (mpirun, srun --mpi=pmix), then the PMI
 * wire (PMI_FD, then PMI_PORT), then srun without PMI is refused, else a
 * singleton.  On PMI_FD, Slurm's pmi2 plugin gets PMI-2: its PMI-1 loses
 * a put line longer than 1024 bytes while answering rc=0, and PMI-2's
 * length-framed messages cannot be cut that way.  Hydra and shoalrun get
 * PMI-1, the protocol every PMI launcher serves.
 */
static int open_backend(void)
{
    boot_info_t *in = &boot.info;
    int choice = (int)base_cfg.BOOT;

    if (choice == BOOT_AUTO) {
        if (boot_has_pmix())
            choice = BOOT_PMIX;
        else if (getenv("PMI_FD") != NULL && slurm_pmi2())
            choice = BOOT_PMI2;
        else if (has_pmi())
            choice = BOOT_PMI1;
        else {
            int status = refuse_launcher();
            if (status != SHOAL_OK)
                return status;
            choice = BOOT_SINGLE;
        }
    }
    switch (choice) {
    case BOOT_PMIX:
        if (boot_guard_proxy_fd() >= 0)
            return boot_proxy_backend(&boot.be, boot_guard_proxy_fd(),
                                      &in->rank, &in->size, in->jobid,
                                      sizeof(in->jobid));
        if (!boot_has_pmix())
            return base_err(SHOAL_ERR_BOOT,
                            "SHOAL_BOOT=pmix, but no PMIX_NAMESPACE, "
                            "PMIX_RANK or PMIX_SERVER_URI* is set: start "
                            "the program with a PMIx launcher (Open MPI's "
                            "mpirun, srun --mpi=pmix)");
        return boot_pmix_backend(&boot.be, &in->rank, &in->size, in->jobid,
                                 sizeof(in->jobid));
    case BOOT_PMI1:
    case BOOT_PMI2:
        return open_pmi(choice);
    default:
        in->rank = 0;
        in->size = 1;
        return boot_single_backend(&boot.be, in->jobid, sizeof(in->jobid));
    }
}

/* Node of every rank, from the launcher's mapping or by exchange. */
static int find_nodes(int *node_of)
{
    boot_info_t *in = &boot.info;
    char map[BOOT_TEXT_MAX + 1];
    int status = SHOAL_ERR_NOT_FOUND;

    if (strcmp(boot.be.name, "single") == 0) {
        node_of[0] = 0;
        return SHOAL_OK;
    }
    /* Every rank gets the same mapping, so all take the same branch. */
    if (boot.be.get_reserved != NULL)
        status = boot.be.get_reserved(boot.be.kvs.ctx, "PMI_process_mapping",
                                      map, sizeof(map));
    if (status == SHOAL_OK)
        status = boot_mapping_parse(map, in->size, node_of);
    if (status == SHOAL_OK)
        return SHOAL_OK;
    /* A broken connection is not a missing mapping: report it. */
    if (status != SHOAL_ERR_NOT_FOUND && status != SHOAL_ERR_PROTOCOL)
        return status;
    base_debug("boot", "no usable PMI_process_mapping; exchanging node ids");
    return boot_nodes_by_exchange(&boot.be, in->rank, in->size, "boot-node",
                                  in->node_id, node_of);
}

/* The launcher's own word on the node-local rank, when it gives one. */
static void cross_check(const char *what, const char *id, const char *n)
{
    boot_info_t *in = &boot.info;

    if (id == NULL)
        return;
    if (atoi(id) != in->local_rank ||
        (n != NULL && atoi(n) != in->local_size))
        base_warn("boot",
                  "%s says local rank %s of %s, the launcher's mapping %d "
                  "of %d; using the mapping",
                  what, id, n != NULL ? n : "?", in->local_rank,
                  in->local_size);
}

/*
 * Hydra's MPI_LOCALRANKID/MPI_LOCALNRANKS and Slurm's SLURM_LOCALID are
 * hints: they should agree with what the backend said.  SLURM_LOCALID
 * counts only when srun started the ranks with a PMI plugin: Hydra or
 * mpirun inside an allocation start their daemons with srun, and the
 * ranks inherit the daemon's SLURM_LOCALID.
 */
static void cross_check_local(void)
{
    const char *mpi = getenv("SLURM_MPI_TYPE");

    cross_check("MPI_LOCALRANKID", getenv("MPI_LOCALRANKID"),
                getenv("MPI_LOCALNRANKS"));
    if (mpi != NULL && strcmp(mpi, "none") != 0 &&
        getenv("MPI_LOCALRANKID") == NULL)
        cross_check("SLURM_LOCALID", getenv("SLURM_LOCALID"), NULL);
}

/* The node of every rank, kept in boot.node_of. */
static int keep_nodes(void)
{
    boot.node_of = malloc((size_t)boot.info.size * sizeof(*boot.node_of));
    if (boot.node_of == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    int status = find_nodes(boot.node_of);
    if (status != SHOAL_OK) {
        free(boot.node_of);
        boot.node_of = NULL;
    }
    return status;
}

/* From the backend's peer list (PMIx), then the node of every rank.
 * Under SHOAL_FT every rank also finds every rank's node first (the
 * watch of ranks of other hosts needs the whole placement, am_ring.c):
 * with the launcher's mapping that costs nothing, by exchange a fence. */
static int find_local_ranks(void)
{
    boot_info_t *in = &boot.info;
    int status = SHOAL_ERR_NOT_FOUND;
    int n = 0;

    if (base_cfg.FT) {
        status = keep_nodes();
        if (status != SHOAL_OK)
            return status;
        status = SHOAL_ERR_NOT_FOUND;
    }
    if (boot.be.local_peers != NULL)
        status = boot.be.local_peers(boot.be.kvs.ctx, &boot.local_ranks, &n);
    /* A launcher that answers nonsense is reported, not worked around. */
    if (status != SHOAL_OK && status != SHOAL_ERR_NOT_FOUND)
        return status;
    if (status == SHOAL_OK) {
        in->local_size = n;
        in->local_rank = -1;
        for (int i = 0; i < n; i++)
            if (boot.local_ranks[i] == in->rank)
                in->local_rank = i;
        if (in->local_rank >= 0)
            return SHOAL_OK;
        free(boot.local_ranks);
        boot.local_ranks = NULL;
        base_warn("boot", "the launcher's local peers omit rank %d; "
                  "exchanging node ids", in->rank);
    }
    if (boot.node_of == NULL) {
        status = keep_nodes();
        if (status != SHOAL_OK)
            return status;
    }
    return boot_local_ranks(boot.node_of, in->size, in->rank,
                            &boot.local_ranks, &in->local_rank,
                            &in->local_size);
}

static int find_locality(void)
{
    int status = find_local_ranks();

    if (status != SHOAL_OK)
        return status;
    boot.info.local_ranks = boot.local_ranks;
    boot.info.node_of = boot.node_of;
    cross_check_local();
    return SHOAL_OK;
}

int boot_init(const boot_info_t **info_p)
{
    char prefix[32];

    if (boot.active)
        return base_err(SHOAL_ERR_ALREADY, "boot_init: already initialized");
    base_config_load(0); /* a bad SHOAL_* value was logged; use defaults */
    memset(&boot.info, 0, sizeof(boot.info));
    boot_node_id(boot.info.node_id, sizeof(boot.info.node_id));
    int status = SHOAL_OK;
    /* Before anything else: this may fork (docs/FT.md, the guardian). */
    if (base_cfg.FT && boot_hydra_parent())
        status = boot_guard_start(1);
    else if (base_cfg.FT && ((base_cfg.FT_TIMEOUT > 0 &&
                              boot_foreign_parent()) ||
                             boot_guard_slurm_pmix()))
        status = boot_guard_start(0);
    if (status == SHOAL_OK)
        status = open_backend();
    if (status != SHOAL_OK)
        goto err_log;
    boot.active = 1;
    base_strmap_init(&boot.put_keys);
    boot.info.backend = boot.be.name;
    boot_shm_prefix(boot.info.jobid, boot.info.shm_prefix,
                    sizeof(boot.info.shm_prefix));
    status = find_locality();
    if (status != SHOAL_OK)
        goto err_fini;
    snprintf(prefix, sizeof(prefix), "shoal[%d]", boot.info.rank);
    base_log_set_prefix(prefix);
    base_debug("boot", "rank %d of %d via %s, local %d of %d, job %s",
               boot.info.rank, boot.info.size, boot.be.name,
               boot.info.local_rank, boot.info.local_size, boot.info.jobid);
    *info_p = &boot.info;
    return SHOAL_OK;
err_fini:
    boot.be.fini(boot.be.kvs.ctx);
    free(boot.local_ranks);
    boot.local_ranks = NULL;
    free(boot.node_of);
    boot.node_of = NULL;
    base_strmap_fini(&boot.put_keys);
    boot.active = 0;
err_log:
    /* The one place a failed start is decided: say it even if the caller
     * only looks at the status. */
    base_error("boot", "%s", shoal_error_detail());
    return status;
}

static int not_init(const char *fn)
{
    return base_err(SHOAL_ERR_NOT_INIT, "%s: boot_init has not run", fn);
}

int boot_put(const char *key, const void *value, size_t len)
{
    if (!boot.active)
        return not_init("boot_put");
    /*
     * Hydra 4.0 does not reliably replace a value put again after a
     * barrier: peers may read the old one.  So keys are write-once.
     */
    if (base_strmap_get(&boot.put_keys, key) != NULL)
        return base_err(SHOAL_ERR_ALREADY,
                        "boot_put: key '%s' was already put (keys are "
                        "write-once)",
                        key);
    int status = boot_kvs_put(&boot.be.kvs, boot.info.rank, key, value, len);
    if (status == SHOAL_OK)
        status = base_strmap_put(&boot.put_keys, key, &boot, NULL);
    return status;
}

int boot_fence(void)
{
    if (!boot.active)
        return not_init("boot_fence");
    return boot.be.fence(boot.be.kvs.ctx);
}

int boot_get(int rank, const char *key, void *buf, size_t cap, size_t *len_p)
{
    if (!boot.active)
        return not_init("boot_get");
    if (rank < 0 || rank >= boot.info.size)
        return base_err(SHOAL_ERR_RANK, "boot_get: rank %d out of range "
                        "[0, %d)", rank, boot.info.size);
    return boot_kvs_get(&boot.be.kvs, rank, key, buf, cap, len_p);
}

int boot_failed_rank(void)
{
    if (!boot.active || boot.be.failed_rank == NULL)
        return -1;
    return boot.be.failed_rank(boot.be.kvs.ctx);
}

int boot_launcher_news(void)
{
    return boot_hydra_signalled();
}

int boot_ckpt_notices(long *req, long *tgt_id, long *tgt)
{
    *req = *tgt_id = *tgt = 0;
    if (!boot.active || boot.be.ckpt_notices == NULL)
        return 0;
    boot.be.ckpt_notices(boot.be.kvs.ctx, req, tgt_id, tgt);
    return 1;
}

int boot_tell(const char *cmd, long id, long count)
{
    if (!boot.active || boot.be.tell == NULL)
        return base_err(SHOAL_ERR_UNSUPPORTED, "boot: the launcher takes "
                        "no '%s'", cmd);
    return boot.be.tell(boot.be.kvs.ctx, cmd, id, "count", count);
}

int boot_accuse(int rank)
{
    if (!boot.active || boot.be.tell == NULL)
        return base_err(SHOAL_ERR_UNSUPPORTED, "boot: the launcher takes "
                        "no accusations");
    return boot.be.tell(boot.be.kvs.ctx, "shoal-ft-accuse", -1, "rank", rank);
}

void boot_await(int timeout_ms)
{
    if (boot.active && boot.be.await != NULL)
        boot.be.await(boot.be.kvs.ctx, timeout_ms);
}

int boot_barrier(void)
{
    if (!boot.active)
        return not_init("boot_barrier");
    return boot.be.barrier(boot.be.kvs.ctx);
}

void boot_abort(int code, const char *msg)
{
    if (msg == NULL)
        msg = "";
    base_error("boot", "aborting the job with exit code %d: %s", code, msg);
    if (boot.active)
        boot.be.abort(boot.be.kvs.ctx, code, msg);
    fflush(NULL);
    /* No atexit handlers: the process state is whatever made us abort. */
    _exit(code);
}

int boot_fini(void)
{
    if (!boot.active)
        return not_init("boot_fini");
    int status = boot.be.fini(boot.be.kvs.ctx);
    free(boot.local_ranks);
    boot.local_ranks = NULL;
    free(boot.node_of);
    boot.node_of = NULL;
    boot.info.node_of = NULL;
    base_strmap_fini(&boot.put_keys);
    boot.active = 0;
    return status;
}
