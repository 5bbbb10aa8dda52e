/*
 * PMI-2 client (launchers.md §2.2 and §6.4): Hydra and srun --mpi=pmi2
 * serve it on the same PMI_FD as PMI-1, chosen by the first line.  It runs
 * on a boot_pmi1_t connection (same socket handling, timeouts and failure
 * rules), strictly one request and one reply at a time under its mutex.
 */
#ifndef SHOAL_BOOT_PMI2_H
#define SHOAL_BOOT_PMI2_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot_pmi1.h"
#include "boot/pmi2_wire.h"

typedef struct boot_pmi2 {
    boot_pmi1_t conn;
    int rank, size, appnum; /* from fullinit-response */
    char jobid[256];        /* from job-getid */
} boot_pmi2_t;

/*
 * Handshake on a connected fd: the "cmd=init pmi_version=2" line, fullinit
 * (pmirank=rank, pmijobid=jobid_hint or empty) and job-getid.  The server's
 * rank must be rank.  Takes ownership of fd (closed by boot_pmi2_close,
 * also after a failure).  SHOAL_ERR_BOOT naming SHOAL_BOOT=pmi1 when the
 * launcher does not speak PMI-2.
 */
int boot_pmi2_open_fd(boot_pmi2_t *c, int fd, int rank,
                      const char *jobid_hint, uint64_t timeout_ns);
/* Connect to PMI_PORT and identify as PMI_ID (pmirank), then as above. */
int boot_pmi2_open_port(boot_pmi2_t *c, const char *hostport, int id,
                        const char *jobid_hint, uint64_t timeout_ns);

int boot_pmi2_put(boot_pmi2_t *c, const char *key, const char *value);
/* SHOAL_ERR_NOT_FOUND when the server has no such key (found=FALSE). */
int boot_pmi2_get(boot_pmi2_t *c, const char *key, char *value, size_t cap);
/* A job attribute such as PMI_process_mapping; SHOAL_ERR_NOT_FOUND. */
int boot_pmi2_jobattr(boot_pmi2_t *c, const char *key, char *value,
                      size_t cap);
/*
 * Publish the puts and wait for every process: kvs-fence, then a get of
 * PMI2_EPOCH_KEY (never put), which Hydra holds until all have fenced.
 */
int boot_pmi2_fence(boot_pmi2_t *c);
int boot_pmi2_finalize(boot_pmi2_t *c);
/* Send abort (no reply is expected; the launcher ends the job). */
void boot_pmi2_abort(boot_pmi2_t *c, const char *msg);
void boot_pmi2_close(boot_pmi2_t *c);

/* The key read after every fence; no one puts it (ours are shoal-<rank>-*). */
#define PMI2_EPOCH_KEY "shoal-epoch"
/* Longest value text we put: Hydra silently truncates past 1023. */
#define PMI2_VALUE_MAX 1023
/* Longest key (MPICH's PMI2_MAX_KEYLEN counts a NUL in 64). */
#define PMI2_KEY_MAX 63

#endif /* SHOAL_BOOT_PMI2_H */
