/*
 * The pmi1 backend: reads how the launcher reached us (PMI_FD with PMI_RANK
 * and PMI_SIZE, or PMI_PORT with PMI_ID), opens the client and plugs it
 * into the backend interface.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot_internal.h"
#include "boot/boot_pmi1.h"

int boot_env_int(const char *name, long lo, long hi, int *out)
{
    const char *text = getenv(name);
    char *end;

    if (text == NULL)
        return base_err(SHOAL_ERR_BOOT,
                        "%s is not set (PMI_FD, PMI_RANK and PMI_SIZE come "
                        "together from a PMI launcher)",
                        name);
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return base_err(SHOAL_ERR_BOOT, "%s=%s is not a number in [%ld, %ld]",
                        name, text, lo, hi);
    *out = (int)v;
    return SHOAL_OK;
}

static int pmi1_put(void *ctx, const char *key, const char *value)
{
    return boot_pmi1_put(ctx, key, value);
}

static int pmi1_get(void *ctx, const char *key, char *value, size_t cap)
{
    return boot_pmi1_get(ctx, key, value, cap);
}

static size_t pmi1_room(void *ctx, size_t keylen)
{
    return boot_pmi1_room(ctx, keylen);
}

static int pmi1_barrier(void *ctx)
{
    return boot_pmi1_barrier(ctx);
}

static void pmi1_abort(void *ctx, int code, const char *msg)
{
    boot_pmi1_abort(ctx, code, msg);
}

static int pmi1_fini(void *ctx)
{
    int status = boot_pmi1_finalize(ctx);

    boot_pmi1_close(ctx);
    free(ctx);
    return status;
}

static int pmi1_get_reserved(void *ctx, const char *key, char *value,
                           size_t cap)
{
    return boot_pmi1_get(ctx, key, value, cap);
}

static int open_fd_mode(boot_pmi1_t *c, uint64_t timeout)
{
    int fd, rank, size;
    int status = boot_env_int("PMI_FD", 0, INT_MAX, &fd);

    if (status == SHOAL_OK)
        status = boot_env_int("PMI_SIZE", 1, INT_MAX, &size);
    if (status == SHOAL_OK)
        status = boot_env_int("PMI_RANK", 0, size - 1, &rank);
    if (status != SHOAL_OK)
        return status;
    if (fcntl(fd, F_GETFD) < 0)
        return base_err(SHOAL_ERR_BOOT,
                        "PMI_FD=%d is not an open file descriptor (was this "
                        "process started by the launcher itself, not by a "
                        "program it started?)",
                        fd);
    return boot_pmi1_open_fd(c, fd, rank, size, timeout);
}

static int open_port_mode(boot_pmi1_t *c, uint64_t timeout)
{
    int id;
    int status = boot_env_int("PMI_ID", 0, INT_MAX, &id);

    if (status != SHOAL_OK)
        return status;
    return boot_pmi1_open_port(c, getenv("PMI_PORT"), id, timeout);
}

static int pmi1_failed_rank(void *ctx)
{
    boot_pmi1_t *c = ctx;
    int rank = boot_pmi1_take_notice(c);

    if (rank < 0) {
        boot_pmi1_poll(c);
        rank = boot_pmi1_take_notice(c);
    }
    /* Hydra's SIGUSR1: a rank died; mpiexec lists it (boot_hydra.c). */
    if (rank < 0 && boot_hydra_read_dead(c, c->size, pmi1_get_reserved, c))
        rank = boot_pmi1_take_notice(c);
    return rank;
}

static void pmi1_ckpt_notices(void *ctx, long *req, long *tgt_id, long *tgt)
{
    boot_pmi1_ckpt_notices(ctx, req, tgt_id, tgt);
}

static int pmi1_tell(void *ctx, const char *cmd, long id, const char *key,
                     long value)
{
    return boot_pmi1_tell(ctx, cmd, id, key, value);
}

static void pmi1_await(void *ctx, int timeout_ms)
{
    boot_pmi1_await(ctx, timeout_ms);
}

int boot_pmi1_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap)
{
    boot_pmi1_t *c = calloc(1, sizeof(*c));
    uint64_t timeout = (uint64_t)base_cfg.BOOT_TIMEOUT;
    int status;

    if (c == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    if (getenv("PMI_FD") != NULL || getenv("PMI_PORT") == NULL)
        status = open_fd_mode(c, timeout);
    else
        status = open_port_mode(c, timeout);
    if (status != SHOAL_OK)
        goto err_free;
    if (strlen(c->kvsname) >= jobid_cap) {
        status = base_err(SHOAL_ERR_BOOT, "the launcher's kvsname is too long");
        goto err_close;
    }
    *be = (boot_backend_t){
        .name = "pmi1",
        .kvs = {.ctx = c,
                .put = pmi1_put,
                .get = pmi1_get,
                .room = pmi1_room,
                .key_max = (size_t)c->keylen_max - 1},
        .get_reserved = pmi1_get_reserved,
        .fence = pmi1_barrier,
        .barrier = pmi1_barrier,
        .abort = pmi1_abort,
        .fini = pmi1_fini,
        .failed_rank = pmi1_failed_rank,
        .ckpt_notices = pmi1_ckpt_notices,
        .tell = pmi1_tell,
        .await = pmi1_await,
    };
    *rank_p = c->rank;
    *size_p = c->size;
    strcpy(jobid, c->kvsname);
    return SHOAL_OK;
err_close:
    boot_pmi1_close(c);
err_free:
    free(c);
    return status;
}
