/*
 * Shareable segment memory.  wire_shm_mem_alloc backs a segment with a
 * memfd (anonymous: nothing appears in /dev/shm, nothing can leak), and an
 * endpoint attached to such memory publishes the memfd's number.  A local
 * peer that sends a long message there takes a copy of the descriptor with
 * pidfd_getfd, maps it, and writes the payload with memcpy: one copy at
 * memory speed, with no system call after the first.  Other memory is
 * reached with cross-memory attach instead (shm_cma.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm.h"

typedef struct shm_mem {
    struct shm_mem *next;
    char *base;
    size_t size;
    int fd;
} shm_mem_t;

/* Allocations outlive shoal_init/finalize cycles: kept apart from the
 * wire's state. */
static shm_mem_t *mem_list;

int wire_shm_mem_alloc(size_t size, void **base_p)
{
    size_t len = base_align_up(size > 0 ? size : 1, 4096);
    shm_mem_t *m = calloc(1, sizeof(*m));
    int fd;
    void *base;

    if (m == NULL)
        return base_err(SHOAL_ERR_NOMEM, "segment record");
    fd = memfd_create("shoal-segment", MFD_CLOEXEC);
    if (fd < 0) {
        free(m);
        return base_err(SHOAL_ERR_SYSTEM, "memfd_create: %s", strerror(errno));
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        int e = errno;
        close(fd);
        free(m);
        return base_err(SHOAL_ERR_NOMEM, "segment of %zu bytes: %s", len,
                        strerror(e));
    }
    base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        close(fd);
        free(m);
        return base_err(SHOAL_ERR_NOMEM, "mapping a segment of %zu bytes: %s",
                        len, strerror(e));
    }
    m->base = base;
    m->size = len;
    m->fd = fd;
    m->next = mem_list;
    mem_list = m;
    *base_p = base;
    return SHOAL_OK;
}

int wire_shm_mem_free(void *base)
{
    for (shm_mem_t **pp = &mem_list; *pp != NULL; pp = &(*pp)->next) {
        shm_mem_t *m = *pp;
        if (m->base != base)
            continue;
        *pp = m->next;
        munmap(m->base, m->size);
        close(m->fd);
        free(m);
        return SHOAL_OK;
    }
    return base_err(SHOAL_ERR_INVALID,
                    "%p was not returned by shoal_segment_alloc", base);
}

int shm_mem_lookup(const void *base, size_t size, uint64_t *map_base_p,
                   uint64_t *map_size_p)
{
    const char *p = base;

    for (shm_mem_t *m = mem_list; m != NULL; m = m->next) {
        if (p >= m->base && p <= m->base + m->size &&
            size <= (size_t)(m->base + m->size - p)) {
            *map_base_p = (uint64_t)(uintptr_t)m->base;
            *map_size_p = m->size;
            return m->fd;
        }
    }
    return -1;
}

void shm_seg_read(shm_seg_entry_t *e, shm_seg_view_t *v)
{
    do {
        /* A writer mid-update takes a few stores, unless it was stopped
         * or descheduled right there: then give it the core.  (One that
         * died there ends the job: shoalrun stops every rank.) */
        for (unsigned spins = 1;
             (v->gen = atomic_load_explicit(&e->gen, memory_order_acquire)) &
             1;
             spins++) {
            if (spins % 64 == 0)
                sched_yield();
            else
                base_cpu_relax();
        }
        v->base = atomic_load_explicit(&e->base, memory_order_relaxed);
        v->size = atomic_load_explicit(&e->size, memory_order_relaxed);
        v->fd = atomic_load_explicit(&e->fd, memory_order_relaxed);
        v->map_base = atomic_load_explicit(&e->map_base, memory_order_relaxed);
        v->map_size = atomic_load_explicit(&e->map_size, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
    } while (atomic_load_explicit(&e->gen, memory_order_relaxed) != v->gen);
}

static void map_release(shm_peer_map_t *m)
{
    if (m->local != NULL)
        munmap(m->local, m->len);
    memset(m, 0, sizeof(*m));
}

static void map_peer(shm_conn_t *c, shm_peer_map_t *m, const shm_seg_view_t *v)
{
    int fd;
    void *local;

    map_release(m);
    m->gen = v->gen;
    if (c->pidfd < 0)
        return;
    fd = (int)syscall(SYS_pidfd_getfd, c->pidfd, (int)v->fd, 0);
    if (fd < 0) {
        base_info("shm", "cannot share rank %d's segment (pidfd_getfd: %s); "
                  "using cross-memory attach",
                  c->base.rank, strerror(errno));
        return;
    }
    local = mmap(NULL, v->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (local == MAP_FAILED)
        return;
    m->local = local;
    m->len = v->map_size;
    m->remote = v->map_base;
    m->usable = 1;
}

char *shm_peer_segment_local(shm_conn_t *c, unsigned ep,
                             const shm_seg_view_t *v)
{
    shm_peer_map_t *m = &c->maps[ep];

    if (v->fd < 0 || v->size == 0)
        return NULL;
    if (m->gen != v->gen)
        map_peer(c, m, v);
    if (!m->usable || v->base < m->remote ||
        v->base - m->remote > m->len || v->size > m->len - (v->base - m->remote))
        return NULL;
    return m->local + (v->base - m->remote);
}

void shm_peer_maps_release(shm_conn_t *c)
{
    for (unsigned ep = 0; ep < WIRE_MAX_EPS; ep++)
        map_release(&c->maps[ep]);
}
