/*
 * Starting and stopping Shoal, and what a rank knows about the job.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am.h"

am_state_t am;

void am_mark_dead(int rank, int status, const char *why)
{
    am_peer_t *p = &am.peers[rank];

    if (p->dead)
        return;
    p->dead = 1;
    am_accuse_cleared(p);
    am.unreported_deaths++;
    if (am.dead_order != NULL)
        am.dead_order[am.deaths] = rank;
    am.deaths++;
    /* Under SHOAL_FT a death is expected and the program goes on; every
     * other rank is told (am_tell.c). */
    if (base_cfg.FT) {
        base_warn("am", "rank %d failed: %s (%s)", rank, why,
                  shoal_strerror(status));
        am_tell_death(rank);
    } else
        base_error("am", "rank %d failed: %s (%s)", rank, why,
                   shoal_strerror(status));
}

static void am_peer_failed(void *arg, int rank, int status, const char *why)
{
    (void)arg;
    if (!am_accuse(rank, status, why))
        am_mark_dead(rank, status, why);
}

static void am_declared_dead(void *arg, int by, const char *why)
{
    (void)arg;
    am_fail_stop(by, why);
}

static void am_segment(void *arg, unsigned ep, void **base_p, size_t *size_p)
{
    (void)arg;
    *base_p = NULL;
    *size_p = 0;
    if (ep < SHOAL_MAX_ENDPOINTS && am.eps[ep] != NULL) {
        *base_p = am.eps[ep]->seg;
        *size_p = am.eps[ep]->seg_size;
    }
}

int am_entry_error(const char *fn, int allow_in_handler)
{
    if (am.init_count == 0)
        return base_err(SHOAL_ERR_NOT_INIT, "%s: call shoal_init first", fn);
    if (am.in_handler && !allow_in_handler)
        return base_err(SHOAL_ERR_IN_HANDLER,
                        "%s may not be called from a handler", fn);
    return SHOAL_OK;
}

static int check_config(void)
{
    if (base_cfg.AM_MEDIUM_MAX > base_cfg.SHM_BULK / 2)
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_AM_MEDIUM_MAX=%lld is more than half of "
                        "SHOAL_SHM_BULK=%lld; raise SHOAL_SHM_BULK or lower "
                        "the maximum",
                        (long long)base_cfg.AM_MEDIUM_MAX,
                        (long long)base_cfg.SHM_BULK);
    return am_wires_parse(base_cfg.WIRES);
}

static int all_open(void *arg, int handled)
{
    (void)arg;
    (void)handled;
    if (am.deaths > 0)
        return base_err(SHOAL_ERR_PEER_DEAD,
                        "a peer died while connections opened");
    for (int i = 0; i < am.nnet; i++)
        if (am.net[i].ops->connecting() > 0)
            return 0;
    return 1;
}

static int connect_all(void)
{
    const wire_ops_t *pending;

    /* First-contact probes to every peer go out together. */
    for (int r = 0; r < am.job->size; r++)
        (void)am_wire_for(r, &pending);
    for (int r = 0; r < am.job->size; r++) {
        am_peer_t *p;
        int status = am_peer_get(r, &p);
        if (status != SHOAL_OK)
            return status;
    }
    /* Every connection open (and authenticated) before init returns. */
    return am.nnet > 0 ? am_block(all_open, NULL, NULL, 0, -1) : SHOAL_OK;
}

static int am_start(void)
{
    wire_upcalls_t up = {.deliver = am_deliver,
                         .peer_failed = am_peer_failed,
                         .segment = am_segment,
                         .arg = NULL,
                         .place = am_place,
                         .declared_dead = am_declared_dead};
    char wires[64];
    int status;

    status = base_config_load(0);
    if (status == SHOAL_OK)
        status = check_config();
    if (status != SHOAL_OK)
        return status;
    status = boot_init(&am.job); /* also sets the log prefix, shoal[rank] */
    if (status != SHOAL_OK)
        return status;
    am.peers = calloc((size_t)am.job->size, sizeof(*am.peers));
    am.dead_order = calloc((size_t)am.job->size, sizeof(int));
    if (am.peers == NULL || am.dead_order == NULL) {
        status = base_err(SHOAL_ERR_NOMEM, "peer table of %d ranks",
                          am.job->size);
        free(am.peers);
        am.peers = NULL;
        free(am.dead_order);
        am.dead_order = NULL;
        goto err_boot;
    }
    for (int r = 0; r < am.job->size; r++) {
        base_list_init(&am.peers[r].pending);
        base_list_init(&am.peers[r].pending_link);
        base_list_init(&am.peers[r].space_link);
    }
    base_list_init(&am.pending_peers);
    base_list_init(&am.space_wanted);
    if (base_cfg.FT) {
        status = am_tell_init();
        if (status != SHOAL_OK)
            goto err_peers;
    }
    status = wire_shm_ops.init(am.job, &up);
    if (status != SHOAL_OK)
        goto err_peers;
    status = am_wires_start(&up);
    if (status != SHOAL_OK)
        goto err_shm;
    am.window = (uint32_t)base_cfg.AM_WINDOW;
    am.max_medium = (size_t)base_cfg.AM_MEDIUM_MAX;
    am.oversubscribed = am.job->local_size > wire_shm_host_cpus();
    am.last_peer_check = base_time_ns();
    am.peer_check = (uint64_t)base_cfg.PEER_CHECK;
    if (base_cfg.FT && (uint64_t)base_cfg.FT_DETECT < am.peer_check)
        am.peer_check = (uint64_t)base_cfg.FT_DETECT;
    if (base_cfg.CONNECT == 1) {
        status = connect_all();
        if (status != SHOAL_OK)
            goto err_wire;
    }
    /* The ring's connection, before any death can come (am_tell.c). */
    if (base_cfg.FT)
        am_ring_beat(base_time_ns());
    am_wires_describe(wires, sizeof(wires));
    base_info("am", "rank %d of %d (%d on this host, %s), launcher %s, "
              "wires %s",
              am.job->rank, am.job->size, am.job->local_size,
              am.oversubscribed ? "oversubscribed" : "a CPU each",
              am.job->backend, wires);
    return SHOAL_OK;

err_wire:
    am_wires_stop();
err_shm:
    wire_shm_ops.fini();
err_peers:
    am_tell_fini();
    free(am.peers);
    am.peers = NULL;
    free(am.dead_order);
    am.dead_order = NULL;
err_boot:
    boot_fini();
    return status;
}

int shoal_init_version(unsigned api_version, const shoal_init_params_t *params)
{
    int status;

    if (api_version >> 16 != SHOAL_VERSION_MAJOR ||
        (api_version & 0xffff) > SHOAL_VERSION_MINOR)
        return base_err(SHOAL_ERR_UNSUPPORTED,
                        "program built for shoal.h %u.%u, library is %d.%d",
                        api_version >> 16, api_version & 0xffff,
                        SHOAL_VERSION_MAJOR, SHOAL_VERSION_MINOR);
    if (params != NULL && params->field_mask != 0)
        return base_err(SHOAL_ERR_INVALID,
                        "shoal_init: unknown bits 0x%llx in field_mask",
                        (unsigned long long)params->field_mask);
    if (am.in_handler)
        return base_err(SHOAL_ERR_IN_HANDLER,
                        "shoal_init may not be called from a handler");
    if (am.init_count > 0) {
        am.init_count++;
        return SHOAL_OK;
    }
    memset(&am, 0, sizeof(am));
    status = am_start();
    if (status != SHOAL_OK)
        return status;
    am.init_count = 1;
    return SHOAL_OK;
}

static void free_deferred(void)
{
    for (int r = 0; r < am.job->size; r++) {
        base_list_t *e;
        while ((e = base_list_pop_front(&am.peers[r].pending)) != NULL)
            free(BASE_CONTAINER_OF(e, am_deferred_t, link));
    }
}

int shoal_finalize(void)
{
    int status = am_check_entry("shoal_finalize", 0);

    if (status != SHOAL_OK)
        return status;
    if (am.init_count > 1) {
        am.init_count--;
        return SHOAL_OK;
    }
    /* Deaths from now on are those of ranks that leave: nobody is told.
     * Those learned before are, as far as channels have room now. */
    am_tell_flush();
    am_tell_fini();
    /* Nothing may be in flight when the channels go away. */
    status = am_quiesce(AM_SYSTEM_EP);
    if (status == SHOAL_OK)
        wire_shm_finished();
    for (int i = 0; i < SHOAL_MAX_ENDPOINTS; i++) {
        free(am.eps[i]);
        am.eps[i] = NULL;
    }
    am.neps = 0;
    free_deferred();
    am_wires_stop();
    wire_shm_ops.fini();
    free(am.peers);
    free(am.dead_order);
    int boot_status = boot_fini();
    memset(&am, 0, sizeof(am));
    base_log_set_prefix("shoal");
    return status != SHOAL_OK ? status : boot_status;
}

int shoal_rank(void)
{
    int status = am_check_entry("shoal_rank", 1);

    return status != SHOAL_OK ? status : am.job->rank;
}

int shoal_size(void)
{
    int status = am_check_entry("shoal_size", 1);

    return status != SHOAL_OK ? status : am.job->size;
}

int shoal_job_info(shoal_job_info_t *info_p)
{
    int status = am_check_entry("shoal_job_info", 1);

    if (status != SHOAL_OK)
        return status;
    if (info_p == NULL)
        return base_err(SHOAL_ERR_INVALID, "shoal_job_info: NULL info_p");
    info_p->rank = am.job->rank;
    info_p->size = am.job->size;
    info_p->local_rank = am.job->local_rank;
    info_p->local_size = am.job->local_size;
    info_p->launcher = am.job->backend;
    return SHOAL_OK;
}

void shoal_abort(int code, const char *msg)
{
    if (am.init_count > 0)
        boot_abort(code, msg != NULL ? msg : "shoal_abort");
    fprintf(stderr, "shoal: abort (code %d): %s\n", code,
            msg != NULL ? msg : "");
    _exit(code != 0 ? code : 1);
}

int shoal_stats_get(shoal_stats_t *stats_p)
{
    int status = am_check_entry("shoal_stats_get", 1);

    if (status != SHOAL_OK)
        return status;
    if (stats_p == NULL)
        return base_err(SHOAL_ERR_INVALID, "shoal_stats_get: NULL stats_p");
    *stats_p = am.stats;
    stats_p->long_single_copy = wire_stats.single_copy;
    stats_p->sleeps = wire_stats.sleeps;
    stats_p->doorbells_rung = wire_stats.doorbells;
    stats_p->connections = wire_stats.connections;
    stats_p->dropped += wire_stats.dropped + wire_stats.rejected;
    return SHOAL_OK;
}
