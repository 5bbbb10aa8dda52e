/*
 * The shared-memory wire: start-up, connections, segments, liveness.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm.h"

shm_state_t shm_state;
wire_stats_t wire_stats;

#define SHM_PAGE 4096

/* ---- geometry ------------------------------------------------------------ */

static size_t chan_cells_offset(void)
{
    return sizeof(shm_chan_hdr_t);
}

static size_t chan_bulk_offset(uint32_t ncells)
{
    return base_align_up(chan_cells_offset() + (size_t)ncells * SHM_CELL_SIZE,
                         SHM_PAGE);
}

static int shm_geometry(uint32_t *ncells_p, uint32_t *bulk_p)
{
    int64_t ncells = base_cfg.SHM_CELLS, bulk = base_cfg.SHM_BULK;

    if (!base_is_pow2((uint64_t)ncells))
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_SHM_CELLS=%lld must be a power of two",
                        (long long)ncells);
    if (!base_is_pow2((uint64_t)bulk))
        return base_err(SHOAL_ERR_CONFIG,
                        "SHOAL_SHM_BULK=%lld must be a power of two",
                        (long long)bulk);
    *ncells_p = (uint32_t)ncells;
    *bulk_p = (uint32_t)bulk;
    return SHOAL_OK;
}

static char *chan_base(shm_ctrl_t *ctrl, int slot)
{
    return (char *)ctrl + ctrl->chan_offset + (size_t)slot * ctrl->chan_stride;
}

/* ---- start-up -------------------------------------------------------------- */

static void ctrl_fill(shm_ctrl_t *c, const boot_info_t *job, uint32_t ncells,
                      uint32_t bulk)
{
    cpu_set_t set;

    c->version = SHM_VERSION;
    c->nslots = (uint32_t)job->local_size;
    c->ncells = ncells;
    c->bulk_size = bulk;
    c->chan_offset = base_align_up(sizeof(shm_ctrl_t), SHM_PAGE);
    c->chan_stride = chan_bulk_offset(ncells) + bulk;
    c->pid = (int32_t)getpid();
    c->rank = job->rank;
    c->owner_base = (uint64_t)(uintptr_t)c;
    c->membarrier = base_cfg.SHM_FENCE == 0 && shm_fence_register();
    snprintf(c->node_id, sizeof(c->node_id), "%s", job->node_id);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int cpu = 0; cpu < SHM_CPU_WORDS * 64 && cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &set))
                c->cpumask[cpu / 64] |= (uint64_t)1 << (cpu % 64);
    c->magic = SHM_MAGIC;
}

static int peer_attach(shm_peer_t *p, int rank, const boot_info_t *job)
{
    char name[128];
    size_t len = 0;
    void *base;
    shm_ctrl_t *c;
    int status;

    status = boot_get(rank, "shm", name, sizeof(name) - 1, &len);
    if (status != SHOAL_OK)
        return base_err(status, "rank %d published no shared-memory segment",
                        rank);
    name[len] = '\0';
    status = shm_seg_attach(name, &base, &p->size);
    if (status != SHOAL_OK)
        return status;
    c = base;
    if (c->magic != SHM_MAGIC || c->version != SHM_VERSION ||
        c->rank != rank || c->nslots != (uint32_t)job->local_size ||
        p->size < c->chan_offset + (size_t)c->nslots * c->chan_stride ||
        !base_is_pow2(c->ncells) || !base_is_pow2(c->bulk_size)) {
        munmap(base, p->size);
        return base_err(SHOAL_ERR_PROTOCOL,
                        "shared-memory segment %s of rank %d is not a Shoal "
                        "segment of this job (different Shoal version?)",
                        name, rank);
    }
    if (strncmp(c->node_id, job->node_id, sizeof(c->node_id)) != 0) {
        /* Report before unmapping: the message quotes the peer's node. */
        status = base_err(SHOAL_ERR_BOOT,
                          "rank %d was placed on this host by the launcher "
                          "but runs on another (node %.64s, here %s)",
                          rank, c->node_id, job->node_id);
        munmap(base, p->size);
        return status;
    }
    p->ctrl = c;
    return SHOAL_OK;
}

/* Light stores only if every rank of the host takes part in membarrier. */
static void fence_mode_compute(void)
{
    /* Alone on the host, only our own threads write to our rings: fenced
     * stores there cost less than a membarrier each time we sleep (which,
     * with TCP traffic, is often). */
    shm_state.light = shm_state.job->local_size > 1;
    for (int s = 0; s < shm_state.job->local_size; s++)
        if (!shm_state.peers[s].ctrl->membarrier)
            shm_state.light = 0;
}

static void host_cpus_compute(void)
{
    uint64_t all[SHM_CPU_WORDS] = {0};
    int n = 0;

    for (int s = 0; s < shm_state.job->local_size; s++)
        for (int w = 0; w < SHM_CPU_WORDS; w++)
            all[w] |= shm_state.peers[s].ctrl->cpumask[w];
    for (int w = 0; w < SHM_CPU_WORDS; w++)
        n += __builtin_popcountll(all[w]);
    shm_state.host_cpus = n > 0 ? n : 1;
}

static int state_alloc(const boot_info_t *job)
{
    shm_state_t *s = &shm_state;

    s->peers = calloc((size_t)job->local_size, sizeof(*s->peers));
    s->slot_of = malloc((size_t)job->size * sizeof(*s->slot_of));
    s->active = calloc((size_t)job->local_size, sizeof(*s->active));
    s->waiting = calloc((size_t)job->local_size, sizeof(*s->waiting));
    if (!s->peers || !s->slot_of || !s->active || !s->waiting)
        return base_err(SHOAL_ERR_NOMEM, "shm wire state for %d ranks",
                        job->size);
    for (int r = 0; r < job->size; r++)
        s->slot_of[r] = -1;
    for (int slot = 0; slot < job->local_size; slot++) {
        s->slot_of[job->local_ranks[slot]] = slot;
        s->peers[slot].rank = job->local_ranks[slot];
        s->peers[slot].pidfd = -1;
    }
    return SHOAL_OK;
}

static void state_free(void)
{
    shm_state_t *s = &shm_state;

    if (s->peers != NULL) {
        for (int slot = 0; slot < s->job->local_size; slot++) {
            shm_peer_t *p = &s->peers[slot];
            shm_peer_maps_release(&p->conn);
            if (p->ctrl != NULL && p->ctrl != s->me)
                munmap(p->ctrl, p->size);
            if (p->pidfd >= 0)
                close(p->pidfd);
        }
    }
    if (s->me != NULL)
        munmap(s->me, s->me_size);
    free(s->peers);
    free(s->slot_of);
    free(s->active);
    free(s->waiting);
    memset(s, 0, sizeof(*s));
}

static int shm_init(const boot_info_t *job, const wire_upcalls_t *up)
{
    shm_state_t *s = &shm_state;
    char name[128];
    uint32_t ncells = 0, bulk = 0;
    int status;
    void *base;

    memset(s, 0, sizeof(*s));
    memset(&wire_stats, 0, sizeof(wire_stats));
    s->job = job;
    s->up = *up;
    s->my_slot = job->local_rank;
    s->cma_mode = (int)base_cfg.SHM_CMA;
    s->cma_min = (uint32_t)base_cfg.SHM_CMA_MIN;
    if (job->local_size > SHM_MAX_LOCAL)
        return base_err(SHOAL_ERR_UNSUPPORTED,
                        "%d ranks on one host; the shared-memory wire takes "
                        "at most %d",
                        job->local_size, SHM_MAX_LOCAL);
    status = shm_geometry(&ncells, &bulk);
    if (status != SHOAL_OK)
        return status;
    status = state_alloc(job);
    if (status != SHOAL_OK)
        goto err_state;

    snprintf(name, sizeof(name), "/%s%d", job->shm_prefix, job->rank);
    s->me_size = base_align_up(sizeof(shm_ctrl_t), SHM_PAGE) +
                 (size_t)job->local_size *
                     (chan_bulk_offset(ncells) + (size_t)bulk);
    status = shm_seg_create(name, s->me_size, &base);
    if (status != SHOAL_OK)
        goto err_state;
    s->me = base;
    ctrl_fill(s->me, job, ncells, bulk);

    status = boot_put("shm", name, strlen(name));
    if (status == SHOAL_OK)
        status = boot_fence();
    if (status != SHOAL_OK)
        goto err_unlink;
    for (int slot = 0; slot < job->local_size && status == SHOAL_OK; slot++) {
        if (slot == s->my_slot)
            s->peers[slot].ctrl = s->me;
        else
            status = peer_attach(&s->peers[slot], job->local_ranks[slot], job);
    }
    /* Everyone must have mapped every segment before any is unlinked. */
    if (status == SHOAL_OK)
        status = boot_fence();
    if (status != SHOAL_OK)
        goto err_unlink;
    shm_unlink(name);
    host_cpus_compute();
    fence_mode_compute();
    base_debug("shm", "segment %s: %zu bytes, %d channels of %u cells + %u "
               "bulk bytes; %d CPUs for %d local ranks; %s stores",
               name, s->me_size, job->local_size, ncells, bulk, s->host_cpus,
               job->local_size, s->light ? "light" : "fenced");
    return SHOAL_OK;

err_unlink:
    shm_unlink(name);
err_state:
    state_free();
    return status;
}

static void shm_fini(void)
{
    shm_doorbell_fini();
    state_free();
}

int wire_shm_host_cpus(void)
{
    return shm_state.host_cpus;
}

/* ---- connections ----------------------------------------------------------- */

static int shm_reaches(int rank)
{
    return rank >= 0 && rank < shm_state.job->size &&
           shm_state.slot_of[rank] >= 0;
}

void shm_watch_peer(shm_peer_t *p)
{
    if (p->pidfd >= 0 || p->ctrl == shm_state.me)
        return;
    p->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)p->ctrl->pid, 0);
    if (p->pidfd < 0 && errno == ESRCH)
        p->dead = 1; /* reported by the next check_peers */
}

static void conn_setup(shm_peer_t *p)
{
    shm_state_t *s = &shm_state;
    shm_ctrl_t *c = p->ctrl;
    char *chan = chan_base(c, s->my_slot);
    shm_conn_t *conn = &p->conn;

    conn->base.ops = &wire_shm_ops;
    conn->base.rank = p->rank;
    conn->ctrl = c;
    conn->pid = c->pid;
    conn->prod.hdr = (shm_chan_hdr_t *)chan;
    conn->prod.cells = (shm_cell_t *)(chan + chan_cells_offset());
    conn->prod.mask = c->ncells - 1;
    conn->prod.bulk = chan + chan_bulk_offset(c->ncells);
    conn->prod.bulk_mask = c->bulk_size - 1;
    conn->pidfd = p->pidfd;
    conn->cma = s->cma_mode != 2;
    if (conn->cma && c != s->me && shm_cma_check(conn->pid, c->owner_base) != SHOAL_OK) {
        if (s->cma_mode == 1)
            base_warn("shm", "SHOAL_SHM_CMA=on but %s; long messages to rank "
                      "%d go through the bulk ring",
                      shoal_error_detail(), p->rank);
        else
            base_info("shm", "single copy to rank %d unavailable (%s)",
                      p->rank, shoal_error_detail());
        conn->cma = 0;
    }
}

static int shm_connect(int rank, wire_conn_t **conn_p)
{
    shm_state_t *s = &shm_state;
    int slot = shm_reaches(rank) ? s->slot_of[rank] : -1;
    shm_peer_t *p;

    if (slot < 0)
        return base_err(SHOAL_ERR_UNSUPPORTED,
                        "rank %d is not on this host", rank);
    p = &s->peers[slot];
    if (p->dead)
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", rank);
    if (!p->connected) {
        shm_watch_peer(p);
        conn_setup(p);
        atomic_fetch_or_explicit(&p->ctrl->connected[s->my_slot / 64],
                                 (uint64_t)1 << (s->my_slot % 64),
                                 memory_order_seq_cst);
        atomic_fetch_add_explicit(&p->ctrl->connect_gen, 1,
                                  memory_order_seq_cst);
        shm_doorbell_ring(p->ctrl);
        p->connected = 1;
        wire_stats.connections++;
        base_debug("shm", "connected to rank %d", rank);
    }
    *conn_p = &p->conn.base;
    return SHOAL_OK;
}

void shm_refresh_inchans(uint64_t gen)
{
    shm_state_t *s = &shm_state;

    s->seen_gen = gen;
    for (int slot = 0; slot < s->job->local_size; slot++) {
        shm_peer_t *p = &s->peers[slot];
        uint64_t word = atomic_load_explicit(&s->me->connected[slot / 64],
                                             memory_order_acquire);
        if (p->listening || !(word >> (slot % 64) & 1))
            continue;
        char *chan = chan_base(s->me, slot);
        p->in.slot = slot;
        p->in.src_rank = p->rank;
        p->in.cons.hdr = (shm_chan_hdr_t *)chan;
        p->in.cons.cells = (shm_cell_t *)(chan + chan_cells_offset());
        p->in.cons.mask = s->me->ncells - 1;
        p->in.cons.bulk = chan + chan_bulk_offset(s->me->ncells);
        p->in.cons.bulk_mask = s->me->bulk_size - 1;
        p->listening = 1;
        shm_watch_peer(p);
        s->active[s->nactive++] = &p->in;
    }
}

/* ---- segments ------------------------------------------------------------ */

static int shm_publish_segment(unsigned ep, const void *base, size_t size)
{
    shm_seg_entry_t *e;

    if (ep >= WIRE_MAX_EPS)
        return base_err(SHOAL_ERR_INVALID, "endpoint index %u", ep);
    uint64_t map_base = 0, map_size = 0;
    int fd = base != NULL ? shm_mem_lookup(base, size, &map_base, &map_size)
                          : -1;

    e = &shm_state.me->segs[ep];
    atomic_fetch_add_explicit(&e->gen, 1, memory_order_seq_cst); /* odd */
    atomic_store_explicit(&e->base, (uint64_t)(uintptr_t)base,
                          memory_order_relaxed);
    atomic_store_explicit(&e->size, (uint64_t)size, memory_order_relaxed);
    atomic_store_explicit(&e->fd, fd, memory_order_relaxed);
    atomic_store_explicit(&e->map_base, map_base, memory_order_relaxed);
    atomic_store_explicit(&e->map_size, map_size, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->gen, 1, memory_order_seq_cst); /* even */
    return SHOAL_OK;
}

static int shm_peer_segment(wire_conn_t *conn, unsigned ep,
                            wire_segment_t *seg)
{
    shm_seg_view_t v;

    if (ep >= WIRE_MAX_EPS)
        return base_err(SHOAL_ERR_INVALID, "endpoint index %u", ep);
    shm_seg_read(&((shm_conn_t *)conn)->ctrl->segs[ep], &v);
    seg->base = v.base;
    seg->size = v.size;
    return SHOAL_OK;
}

/* ---- liveness -------------------------------------------------------------- */

static int peer_gone(shm_peer_t *p)
{
    if (p->dead)
        return 1;
    if (p->pidfd >= 0) {
        struct pollfd pfd = {p->pidfd, POLLIN, 0};
        return poll(&pfd, 1, 0) == 1;
    }
    return kill((pid_t)p->ctrl->pid, 0) != 0 && errno == ESRCH;
}

static void shm_check_peers(void)
{
    shm_state_t *s = &shm_state;
    int fake = base_cfg.WIRES_FAKE_HOSTS > 1, n = s->job->size;

    for (int slot = 0; slot < s->job->local_size; slot++) {
        shm_peer_t *p = &s->peers[slot];
        char why[96];

        /* Every rank of the host, talked to or not: a barrier waits for
         * all of them.  With pretend hosts, those of this pretend host
         * only: across real hosts nobody watches another host's
         * processes. */
        if (p->ctrl == s->me || p->conn.dead ||
            (fake && wire_fake_host(p->rank, n) !=
                         wire_fake_host(s->job->rank, n)) ||
            !peer_gone(p))
            continue;
        p->dead = 1;
        p->conn.dead = 1;
        /* It passed its last barrier, so everything it sent is here: a
         * rank of another host may still hold this one in that barrier,
         * and that is no reason to call the barrier broken. */
        if (atomic_load_explicit(&p->ctrl->finished, memory_order_acquire))
            continue;
        snprintf(why, sizeof(why), "process %d on this host exited",
                 (int)p->ctrl->pid);
        s->up.peer_failed(s->up.arg, p->rank, SHOAL_ERR_PEER_DEAD, why);
    }
}

void wire_shm_finished(void)
{
    if (shm_state.me != NULL)
        atomic_store_explicit(&shm_state.me->finished, 1,
                              memory_order_release);
}

/* The ops table; the data-path entries live in shm_xfer.c. */
const wire_ops_t wire_shm_ops = {
    .name = "shm",
    .init = shm_init,
    .fini = shm_fini,
    .reaches = shm_reaches,
    .connect = shm_connect,
    .send = shm_send,
    .max_payload = shm_max_payload,
    .credits = shm_credits,
    .peer_segment = shm_peer_segment,
    .publish_segment = shm_publish_segment,
    .poll = shm_poll,
    .arm = shm_arm,
    .want_space = shm_want_space,
    .sleep = shm_sleep,
    .disarm = shm_disarm,
    .check_peers = shm_check_peers,
};

/* ---- host barrier ------------------------------------------------------------ */

void wire_shm_hbar_arrive(unsigned idx)
{
    shm_state_t *s = &shm_state;
    shm_ctrl_t *home = s->peers[0].ctrl; /* local rank 0 */
    uint32_t n = (uint32_t)s->job->local_size;

    if (atomic_fetch_add_explicit(&home->hbar[idx].count, 1,
                                  memory_order_acq_rel) +
            1 !=
        n)
        return;
    /* Last in: reset for the next barrier before releasing this one (no
     * rank can arrive again until it sees the new epoch). */
    atomic_store_explicit(&home->hbar[idx].count, 0, memory_order_relaxed);
    atomic_store_explicit(&home->hbar[idx].epoch, s->hbar_epoch[idx] + 1,
                          memory_order_seq_cst);
    for (uint32_t slot = 0; slot < n; slot++)
        if (s->peers[slot].ctrl != s->me &&
            shm_doorbell_ring(s->peers[slot].ctrl))
            wire_stats.doorbells++;
}

int wire_shm_hbar_done(unsigned idx)
{
    shm_state_t *s = &shm_state;
    shm_ctrl_t *home = s->peers[0].ctrl;

    /* seq_cst: a waiter that armed its doorbell must see a release made
     * before the releaser looked at the doorbell. */
    if (atomic_load_explicit(&home->hbar[idx].epoch, memory_order_seq_cst) ==
        s->hbar_epoch[idx])
        return 0;
    s->hbar_epoch[idx]++;
    return 1;
}
