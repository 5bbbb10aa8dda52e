/*
 * Pages on demand in a copy (task_rt.h, docs/TASK.md).  A child starts
 * with every shared page absent; the first touch of one faults, and the
 * SIGSEGV handler (task_track.c) calls fetch: it asks the copy's worker
 * for the page (TM_PAGE_REQ) and waits on the channel for it (TM_PAGE).
 * The worker sends the request to the source, the parent's copy that
 * waits at the block; the parent answers from its memory while it waits
 * in SHOAL_PAREND (task_page_serve), or, when the page is absent in it
 * too, takes it from its own source and serves it then, so a miss climbs
 * the job tree to the first ancestor that has the page once and leaves
 * it at every parent on the way.  The answer goes straight to the
 * requester's worker.  When the source is a copy of the same worker, or
 * of another worker of the host, that waits at the block, the child
 * reads the page from its memory itself (own_read: no message, no other
 * process woken), as the worker would.
 *
 * Everything here runs in a signal handler or next to one: no allocation,
 * fixed buffers, only system calls that are async-signal-safe.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"
#include "task/task_rt.h"
#include "wire/wire.h"

#define PAGE_MAX 65536 /* the largest page size served */
#define TASK_FILL_WAITERS 32 /* requests that wait for one page taken */

static struct {
    int fd;
    uint32_t copy;
    uint32_t src_rank, src_copy, src_block; /* the run's source */
    uint8_t in[TASK_PAGE_HDR + PAGE_MAX + 64];  /* fetch's answers */
    uint8_t out[TASK_PAGE_HDR + PAGE_MAX];      /* what serve sends */
    /* A page this copy, waiting at a block, takes for itself because a
     * child asked for it (task_page_serve): the requests that wait for
     * it. */
    struct {
        int on;
        uint32_t waiting, area;
        uint64_t page;
        unsigned n;
        uint8_t req[TASK_FILL_WAITERS][32];
    } fill;
} pg;

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void say(const char *s)
{
    ssize_t r = write(STDERR_FILENO, s, strlen(s));
    (void)r;
}

/* Maps the source slots of rank, a worker of this host (task_worker.c,
 * share_slots): 1 done.  A few tries per process (the worker may not have
 * made its page yet); only system calls, as in a fault handler. */
static int host_map(int r)
{
    struct stat st;
    int pid = wire_shm_local_pid(r);

    if (pid <= 0 || r == task_rt.rank || task_rt.host_tries[r] >= 8)
        return 0;
    task_rt.host_tries[r]++;
    int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    int fd = pfd < 0 ? -1
                     : (int)syscall(SYS_pidfd_getfd, pfd, TASK_SLOTS_FD, 0);
    void *map = MAP_FAILED;
    if (fd >= 0 && fstat(fd, &st) == 0 &&
        st.st_size == (off_t)TASK_BELL_SIZE)
        map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    const struct task_slots_mark *m =
        map == MAP_FAILED
            ? NULL
            : (const struct task_slots_mark *)((char *)map + TASK_SLOTS_MARK);
    if (m == NULL || m->magic != TASK_SLOTS_MAGIC || m->rank != r ||
        m->pid != pid) {
        if (map != MAP_FAILED)
            munmap(map, 4096);
        if (pfd >= 0)
            close(pfd);
        return 0;
    }
    task_rt.host_pidfd[r] = pfd;
    task_rt.host_srcs[r] = (task_src_slot_t *)((char *)map + TASK_SRC_OFFSET);
    return 1;
}

const struct task_slots_mark *task_page_host_mark(int rank)
{
    if (task_rt.host_srcs == NULL || rank < 0 || rank >= task_rt.size ||
        (task_rt.host_srcs[rank] == NULL && !host_map(rank)))
        return NULL;
    return (const struct task_slots_mark *)((const char *)
                                                task_rt.host_srcs[rank] -
                                            TASK_SRC_OFFSET +
                                            TASK_SLOTS_MARK);
}

/* The page read from the source's memory by this copy itself, when the
 * source is a copy of this worker that waits at the block (task_rt.h,
 * task_src_slot_t); 0 when it cannot be. */
static int own_read(uint32_t area, size_t page, void *dst)
{
    task_src_slot_t *slots = NULL;

    if (pg.src_copy == UINT32_MAX)
        return 0;
    if (pg.src_rank == (uint32_t)task_rt.rank)
        slots = task_rt.srcs;
    else if (task_rt.host_srcs != NULL &&
             pg.src_rank < (uint32_t)task_rt.size &&
             (task_rt.host_srcs[pg.src_rank] != NULL ||
              host_map((int)pg.src_rank))) {
        /* Another worker of this host: its slots name live copies only
         * while it lives (it forgets a pid before it reaps the process;
         * dead, it forgets nothing). */
        struct pollfd pfd = {task_rt.host_pidfd[pg.src_rank], POLLIN, 0};
        if (poll(&pfd, 1, 0) != 0)
            return 0;
        slots = task_rt.host_srcs[pg.src_rank];
    }
    if (slots == NULL)
        return 0;
    for (size_t i = 0; i < TASK_SRC_SLOTS; i++) {
        task_src_slot_t *s = &slots[i];
        uint32_t seq = atomic_load(&s->seq);
        if ((seq & 1) || atomic_load(&s->copy) != pg.src_copy)
            continue;
        if (atomic_load(&s->waits) != pg.src_block + 1)
            return 0;
        pid_t pid = (pid_t)atomic_load(&s->pid);
        if (!task_region_page_of(&task_rt.region, pid, (int)area, page, dst))
            return 0; /* absent there too, or gone: the worker's way */
        base_fence_full(); /* the read before the second look */
        if (atomic_load(&s->seq) != seq)
            return 0;
        atomic_fetch_add(task_rt.self_reads, 1);
        return 1;
    }
    return 0;
}

void task_page_source(uint32_t rank, uint32_t copy, uint32_t block)
{
    pg.src_rank = rank;
    pg.src_copy = copy;
    pg.src_block = block;
}

/* The fault handler's part: page of area ctx into dst. */
static int fetch(void *ctx, task_track_t *t, size_t page, void *dst)
{
    uint32_t area = (uint32_t)(uintptr_t)ctx;
    size_t psize = task_track_page_size(t);
    uint8_t req[20];

    if (area < TASK_AREAS && own_read(area, page, dst))
        return 0;

    put32(req, TM_PAGE_REQ);
    put32(req + 4, pg.copy);
    put32(req + 8, area);
    put64(req + 12, page);
    if (psize > PAGE_MAX || task_chan_send(pg.fd, req, sizeof req) !=
                                SHOAL_OK)
        _exit(0); /* the worker is gone: so is this run */
    task_ring();
    for (;;) {
        size_t len;
        int r = task_chan_recv_into(pg.fd, pg.in, sizeof pg.in, &len);
        if (r == SHOAL_ERR_PEER_DEAD)
            _exit(0);
        if (r != 1 || len < 8) {
            say("shoal task: a bad message while fetching a page\n");
            return -1;
        }
        uint32_t type = get32(pg.in);
        if (type == TM_PAGE_REQ)
            continue; /* this copy does not wait at a block: not its to
                         serve (the requester asks the coordinator) */
        if (type == TM_PAGE && get32(pg.in + 4) != pg.copy)
            continue; /* meant for an earlier run in this process */
        if (type != TM_PAGE || len != TASK_PAGE_HDR + psize) {
            say("shoal task: an unexpected message while fetching a "
                "page\n");
            return -1;
        }
        if (get32(pg.in + 12) != area || get64(pg.in + 16) != page)
            continue; /* a late answer to an earlier request */
        memcpy(dst, pg.in + TASK_PAGE_HDR, psize);
        return 0;
    }
}

int task_page_absent(int fd, uint32_t copy)
{
    pg.fd = fd;
    pg.copy = copy;
    pg.fill.on = 0;
    return task_region_absent(&task_rt.region, fetch);
}

/* A prefetch's page (task_track_prefetch): read by this copy itself
 * from its source on this worker, or not at all. */
static int peek(void *ctx, size_t page, void *dst)
{
    uint32_t area = (uint32_t)(uintptr_t)ctx;

    return area < TASK_AREAS && own_read(area, page, dst);
}

int task_page_rearm(uint32_t copy, int sibling)
{
    pg.copy = copy;
    pg.fill.on = 0;
    if (sibling)
        return task_region_rewind(&task_rt.region);
    /* The pages the last run touched, where the source is a copy of this
     * worker: a fault and its signal saved for each the job touches
     * again (a nested job's parent's pages, the shared variables every
     * job reads). */
    int s = task_region_rearm(&task_rt.region);
    return s == SHOAL_OK ? task_region_prefetch(&task_rt.region, peek) : s;
}

/* A page this copy serves: pg.out's page, to the requester of req. */
static void answer(int fd, const uint8_t *req, uint32_t area, uint64_t page)
{
    put32(pg.out, TM_PAGE);
    put32(pg.out + 4, get32(req + 28));
    put32(pg.out + 8, get32(req + 24));
    put32(pg.out + 12, area);
    put64(pg.out + 16, page);
    if (task_chan_send(fd, pg.out, TASK_PAGE_HDR + task_rt.region.page) !=
        SHOAL_OK)
        _exit(0);
}

/* The request req, for a page absent here, to this copy's own source. */
static void pass_up(int fd, const uint8_t *req)
{
    uint8_t up[32];

    memcpy(up, req, sizeof up);
    put32(up, TM_PAGE_UP);
    if (task_chan_send(fd, up, sizeof up) != SHOAL_OK)
        _exit(0);
}

void task_page_serve(int fd, const uint8_t *msg, size_t len,
                     uint32_t waiting)
{
    /* copy, block, area, page, rank, copy of the requester */
    if (len < 32 || waiting == 0 || get32(msg + 8) != waiting - 1)
        return; /* not the block it waits at: a stale request */
    uint32_t area = get32(msg + 12);
    uint64_t page = get64(msg + 16);
    size_t psize = task_rt.region.page;
    uint8_t *at = pg.out + TASK_PAGE_HDR;

    if (area >= TASK_AREAS || psize > PAGE_MAX)
        pass_up(fd, msg);
    else if (task_region_page(&task_rt.region, (int)area, (size_t)page, at))
        answer(fd, msg, area, page);
    else if (pg.fill.on && pg.fill.waiting == waiting) {
        /* Taking a page already: this one joins it, or climbs. */
        if (pg.fill.area == area && pg.fill.page == page &&
            pg.fill.n < TASK_FILL_WAITERS)
            memcpy(pg.fill.req[pg.fill.n++], msg, 32);
        else
            pass_up(fd, msg);
    } else if (own_read(area, (size_t)page, at)) {
        /* Its parent on this worker has it: taken and served at once. */
        (void)task_region_fill(&task_rt.region, (int)area, (size_t)page,
                               at);
        answer(fd, msg, area, page);
    } else {
        /* Absent here and in the parent, or the parent is elsewhere: this
         * copy takes the page for itself (it is what its memory holds)
         * and serves it when it comes, so that the next child that asks,
         * here or below, finds it here instead of climbing the tree
         * again (a chain of waiting parents would climb it for every
         * level: quadratic in the depth). */
        uint8_t req[20];
        put32(req, TM_PAGE_REQ);
        put32(req + 4, pg.copy);
        put32(req + 8, area);
        put64(req + 12, page);
        if (task_chan_send(fd, req, sizeof req) != SHOAL_OK)
            _exit(0);
        pg.fill.on = 1;
        pg.fill.waiting = waiting;
        pg.fill.area = area;
        pg.fill.page = page;
        pg.fill.n = 1;
        memcpy(pg.fill.req[0], msg, 32);
    }
    task_ring();
}

void task_page_take(int fd, const uint8_t *msg, size_t len,
                    uint32_t waiting)
{
    size_t psize = task_rt.region.page;

    if (!pg.fill.on || len != TASK_PAGE_HDR + psize ||
        get32(msg + 4) != pg.copy || get32(msg + 12) != pg.fill.area ||
        get64(msg + 16) != pg.fill.page)
        return; /* an answer to a page taken before, or for another run */
    pg.fill.on = 0;
    if (pg.fill.waiting != waiting)
        return; /* it no longer waits at that block */
    int filled = task_region_fill(&task_rt.region, (int)pg.fill.area,
                                  (size_t)pg.fill.page, msg + TASK_PAGE_HDR);
    memcpy(pg.out + TASK_PAGE_HDR, msg + TASK_PAGE_HDR, psize);
    for (unsigned i = 0; i < pg.fill.n; i++) {
        if (filled >= 0)
            answer(fd, pg.fill.req[i], pg.fill.area, pg.fill.page);
        else
            pass_up(fd, pg.fill.req[i]);
    }
    task_ring();
}
