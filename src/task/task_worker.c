/*
 * A worker (task_rt.h): has a copy made for each TM_RUN from the pristine
 * memory its template keeps (task_spawn.c), routes the pages its copies
 * ask for and serve (task_page.c), stops (SIGSTOP), continues and kills
 * copies as the coordinator orders, relays their other messages both
 * ways unchanged, reports a copy that ended without finishing (TM_LOST:
 * it crashed), and at the end of the run ends its copies and says
 * goodbye (TM_END, TM_BYE) before it is ordered out (TM_EXIT).
 * Copies ring the worker's doorbell after each message (task_ring), and
 * so does SIGCHLD, so the worker sleeps in the active-message wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"
#include "task/task_grow.h"
#include "task/task_msg.h"
#include "task/task_rt.h"
#include "wire/wire.h"

typedef struct w_copy {
    uint32_t copy;
    pid_t pid;
    int fd;
    int done, killed;
    /* pages on demand: where its pages come from (copy TASK_NONE: the
     * coordinator), and the page it waits for */
    uint32_t src_rank, src_copy, src_block;
    int pend, pend_coord;
    uint32_t pend_area;
    uint64_t pend_page, pend_since;
    uint32_t runs; /* of its process, this one included */
    int absent;    /* its pages come on demand: the process may be reused */
    int shut;      /* finished and told to exit */
    int stopped;   /* SIGSTOP sent, no SIGCONT since */
    uint32_t waits; /* block + 1 while it waits at it (TM_BLOCK sent,
                       TM_RESULTS not yet passed on): its memory is the
                       block's children's start, still */
    int32_t next;   /* the next copy in its news bucket (wk.head); -1 */
    uint8_t *path;  /* its job's (task_keeps_results: its result is kept) */
    uint32_t pathlen;
    int blocks;     /* it sent a TM_BLOCK: its job has children */
} w_copy_t;

/* A result one of this worker's copies sent (TM_DONE), kept for a new
 * coordinator should the coordinator die (task_keeps_results): the job's
 * path and the message's body after its type and copy.  from: the rank
 * that handed it over as the coordinator's (TM_KEEP), or -1. */
typedef struct w_kept {
    uint8_t *path, *res;
    uint32_t pathlen;
    size_t reslen;
    int from;
} w_kept_t;

/* A warm copy's process between runs (task_copy.c, next_run). */
typedef struct w_idle {
    pid_t pid;
    int fd;
    uint32_t runs;
} w_idle_t;

/* Processes kept waiting for a run (SHOAL_TASK_IDLE, at most IDLE_MAX):
 * a worker runs one copy at a time, plus parents waiting at their blocks,
 * one process each, so a nested shape needs as many processes as it has
 * parents waiting at once, each time it runs: those kept from the last
 * time need no fork, no first touch of their memory and no exit. */
#define IDLE_MAX 1024

#define NO_COPY UINT32_MAX

static struct {
    w_copy_t *c;
    size_t n, cap;
    w_idle_t idle[IDLE_MAX];
    size_t nidle;
    uint64_t runs, procs, direct, asked, up; /* for the summary (SHOAL_LOG=info) */
    struct sigaction old_chld;
    uint64_t next_beat;
    uint64_t next_sweep; /* every channel read, every process looked at */
    int over; /* the coordinator said the run is over (TM_END) */
    /* Copies by news bucket (copy id modulo TASK_NEWS): the index in c
     * of the first, chained by next; -1: none.  A deep chain keeps
     * thousands of parents waiting on a worker, and every message to a
     * copy and every raised news bit would otherwise look at each. */
    int32_t head[TASK_NEWS];
    int retire_due;       /* a copy finished since retire last looked */
    uint64_t next_ptime;  /* page_timeouts' next look */
    w_kept_t *kept;
    size_t nkept, capkept;
} wk;

/* A child exited (SIGCHLD): reap looks. */
static volatile sig_atomic_t chld;

void task_ring(void)
{
    /* The flag after the message it announces, before the bell. */
    if (task_rt.my_news != NULL)
        atomic_fetch_or(task_rt.my_news, task_rt.my_news_bit);
    if (task_rt.bell != NULL)
        atomic_store_explicit(task_rt.bell, 1, memory_order_release);
    wire_shm_wake_self();
}

static void on_chld(int sig)
{
    int e = errno;
    (void)sig;
    chld = 1;
    task_ring();
    errno = e;
}

/*
 * The source slots' page is shared across the host (task_rt.h,
 * host_srcs): it is a memfd on a fixed descriptor (TASK_SLOTS_FD), marked
 * with this rank and pid, which a child of another worker of the host
 * maps the first time it needs it (task_page.c), with pidfd_getfd.  No
 * exchange at start-up: a fence there would stop every worker when a
 * host is lost before the run begins.  Where the descriptor is taken,
 * the page stays private and pages of this worker's sources come
 * through the workers as before.
 */
static void share_slots(int *mfd_p, void *bell)
{
    struct task_slots_mark *mark =
        (struct task_slots_mark *)((char *)bell + TASK_SLOTS_MARK);

    if (*mfd_p != TASK_SLOTS_FD) {
        errno = 0;
        if (fcntl(TASK_SLOTS_FD, F_GETFD) != -1 || errno != EBADF ||
            dup2(*mfd_p, TASK_SLOTS_FD) != TASK_SLOTS_FD) {
            base_info("task", "rank %d: descriptor %d is taken: the source "
                      "slots stay private", task_rt.rank, TASK_SLOTS_FD);
            return;
        }
        close(*mfd_p);
        *mfd_p = TASK_SLOTS_FD;
    }
    mark->magic = TASK_SLOTS_MAGIC;
    mark->rank = task_rt.rank;
    mark->pid = (int32_t)getpid();
    task_rt.host_srcs = calloc((size_t)task_rt.size,
                               sizeof(*task_rt.host_srcs));
    task_rt.host_pidfd = malloc((size_t)task_rt.size *
                                sizeof(*task_rt.host_pidfd));
    task_rt.host_tries = calloc((size_t)task_rt.size, 1);
    if (task_rt.host_srcs == NULL || task_rt.host_pidfd == NULL ||
        task_rt.host_tries == NULL) {
        free(task_rt.host_srcs);
        free(task_rt.host_pidfd);
        free(task_rt.host_tries);
        task_rt.host_srcs = NULL;
        task_rt.host_pidfd = NULL;
        task_rt.host_tries = NULL;
        return;
    }
    for (int r = 0; r < task_rt.size; r++)
        task_rt.host_pidfd[r] = -1;
}

int task_worker_init(void)
{
    struct sigaction sa;
    int mfd = memfd_create("shoal-task-bell", MFD_CLOEXEC);
    void *bell = MAP_FAILED;

    /* (Kept open: the other workers of the host take it, share_slots.) */
    if (mfd >= 0 && ftruncate(mfd, TASK_BELL_SIZE) == 0)
        bell = mmap(NULL, TASK_BELL_SIZE, PROT_READ | PROT_WRITE,
                    MAP_SHARED, mfd, 0);
    if (bell == MAP_FAILED) {
        if (mfd >= 0)
            close(mfd);
        return base_err(SHOAL_ERR_NOMEM, "task: doorbell page: %s",
                        strerror(errno));
    }
    task_rt.bell = bell;
    task_rt.self_reads = (_Atomic uint64_t *)((char *)bell + 8);
    task_rt.srcs = (task_src_slot_t *)((char *)bell + TASK_SRC_OFFSET);
    task_rt.news = (_Atomic uint64_t *)((char *)bell + 4096);
    for (size_t i = 0; i < TASK_NEWS; i++)
        wk.head[i] = -1;
    for (size_t i = 0; i < TASK_SRC_SLOTS; i++)
        atomic_store(&task_rt.srcs[i].copy, UINT32_MAX);
    share_slots(&mfd, bell);
    /* The template of copies, before this worker writes anything. */
    int s = task_spawn_init();
    if (s != SHOAL_OK)
        return s;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, &wk.old_chld) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task: sigaction: %s",
                        strerror(errno));
    return SHOAL_OK;
}

/* ---- results kept for a new coordinator (TM_KEPT) ---------------------- */

int task_keeps_results(void)
{
    return base_cfg.TASK_FAILOVER && task_rt.size > 1;
}

static void kept_clear(void)
{
    for (size_t i = 0; i < wk.nkept; i++) {
        free(wk.kept[i].path);
        free(wk.kept[i].res);
    }
    wk.nkept = 0;
}

/* Forgets the results of path's proper descendants (path is done: its own
 * result holds their writes); paths are canonical, so a descendant's
 * starts with its ancestor's bytes. */
static void kept_forget_below(const uint8_t *path, size_t len)
{
    for (size_t i = 0; i < wk.nkept;) {
        w_kept_t *k = &wk.kept[i];
        if (k->pathlen > len && (len == 0 || memcmp(k->path, path, len) == 0)) {
            free(k->path);
            free(k->res);
            *k = wk.kept[--wk.nkept];
        } else
            i++;
    }
}

int task_worker_heir(void)
{
    if (!task_keeps_results())
        return -1;
    for (int r = task_rt.coord + 1; r < task_rt.size; r++)
        if (!task_msg_dead(r))
            return r;
    return -1;
}

/* Keeps the result res (TM_DONE's body) of the job at path; the results
 * below it (its own holds their writes) are forgotten when it had
 * children.  (Two copies of one job that both finish here keep two equal
 * results: rare, and not worth a search at every run.) */
static int kept_store(const uint8_t *path, size_t pathlen, int blocks,
                      const uint8_t *res, size_t reslen, int from)
{
    if (blocks)
        kept_forget_below(path, pathlen);
    int s = task_grow((void **)&wk.kept, &wk.capkept, wk.nkept + 1,
                      sizeof(*wk.kept), "task: kept results");
    if (s != SHOAL_OK)
        return s;
    w_kept_t k = {malloc(pathlen ? pathlen : 1), malloc(reslen ? reslen : 1),
                  (uint32_t)pathlen, reslen, from};
    if (k.path == NULL || k.res == NULL) {
        free(k.path);
        free(k.res);
        return base_err(SHOAL_ERR_NOMEM, "task: a kept result");
    }
    if (pathlen > 0)
        memcpy(k.path, path, pathlen);
    if (reslen > 0)
        memcpy(k.res, res, reslen);
    wk.kept[wk.nkept++] = k;
    return SHOAL_OK;
}

/* A result of the coordinator's rank, to its heir (TM_KEEP), which keeps
 * it for the next coordinator: here it would die with the coordinator. */
static int keep_at_heir(int blocks, const uint8_t *path, size_t pathlen,
                        const uint8_t *res, size_t reslen)
{
    int heir = task_worker_heir();
    if (heir < 0)
        return SHOAL_OK;
    task_buf_t b = {0};
    task_msg_start(&b, TM_KEEP, (uint32_t)task_rt.rank);
    task_buf_u32(&b, (uint32_t)blocks);
    task_buf_bytes(&b, path, pathlen);
    task_buf_bytes(&b, res, reslen);
    return b.err ? b.err : task_msg_send(heir, b.p, b.len);
}

/* Copy c finished (its TM_DONE, msg): its result is kept until its
 * parent is done; on the coordinator's rank, whose results would die
 * with the coordinator, by its heir (TM_KEEP).  Results of jobs whose
 * subtree took locks too: a new coordinator keeps them when the lock
 * manager it rebuilds from the workers' lock records holds all their
 * grants (task_lockrec.c). */
static int kept_add(const w_copy_t *c, const uint8_t *msg, size_t len)
{
    if (c->path == NULL || len < 12)
        return SHOAL_OK;
    if (task_rt.rank != task_rt.coord)
        return kept_store(c->path, c->pathlen, c->blocks, msg + 8, len - 8,
                          -1);
    return keep_at_heir(c->blocks, c->path, c->pathlen, msg + 8, len - 8);
}

/* TM_KEEP: a result of the coordinator's rank's, kept here (the heir);
 * handed to the coordinator at once when this rank has become it. */
static int kept_keep(int src, task_rd_t *rd)
{
    size_t plen, rlen;
    uint32_t blocks = task_rd_u32(rd);
    const uint8_t *path = task_rd_bytes(rd, &plen);
    const uint8_t *res = task_rd_bytes(rd, &rlen);

    if (rd->err)
        return rd->err;
    if (task_rt.rank != task_rt.coord)
        return kept_store(path, plen, (int)blocks, res, rlen, src);
    task_buf_t b = {0};
    task_msg_start(&b, TM_KEPT, (uint32_t)task_rt.rank);
    task_buf_u32(&b, 1);
    task_buf_bytes(&b, path, plen);
    task_buf_bytes(&b, res, rlen);
    int s = b.err ? b.err : task_coord_handle(task_rt.rank, b.p, b.len);
    task_buf_free(&b);
    return s;
}

/* TM_FORGET: jobs whose children's results are not needed any more. */
static int kept_forget(task_rd_t *rd)
{
    uint32_t n = task_rd_u32(rd);

    for (uint32_t i = 0; i < n && !rd->err; i++) {
        size_t len;
        const uint8_t *path = task_rd_bytes(rd, &len);
        if (!rd->err)
            kept_forget_below(path, len);
    }
    return rd->err;
}

int task_worker_send_kept(void)
{
    task_buf_t b = {0};
    uint32_t n = 0;

    /* (Not those the coordinator handed over itself, as its heir's: it
     * has them, if this worker saw its TM_KEEP before the failover.) */
    task_msg_start(&b, TM_KEPT, (uint32_t)task_rt.rank);
    task_buf_u32(&b, 0);
    for (size_t i = 0; i < wk.nkept; i++) {
        if (task_rt.coord != task_rt.rank && wk.kept[i].from == task_rt.coord)
            continue;
        task_buf_bytes(&b, wk.kept[i].path, wk.kept[i].pathlen);
        task_buf_bytes(&b, wk.kept[i].res, wk.kept[i].reslen);
        n++;
    }
    task_lockrec_put(&b);
    if (b.err)
        return b.err;
    for (int k = 0; k < 4; k++) /* the count, after type and rank */
        b.p[8 + k] = (uint8_t)(n >> 8 * k);
    size_t ne, nv;
    task_lockrec_size(&ne, &nv);
    base_info("task", "rank %d: %u kept results to the coordinator (rank "
              "%d), a lock record of %zu entries and %zu versions",
              task_rt.rank, n, task_rt.coord, ne, nv);
    if (task_rt.coord != task_rt.rank)
        return task_msg_send(task_rt.coord, b.p, b.len);
    /* This rank coordinates now: the results and the lock record are
     * its coordinator's, and only it has them (its own copies', and the
     * dead coordinator's rank's, which it kept as the heir): its heir
     * keeps them for the next coordinator, at once (this rank may die
     * before its lock manager is rebuilt), as it will keep this rank's
     * copies' from now on. */
    int s = task_coord_handle(task_rt.rank, b.p, b.len);
    free(b.p);
    for (size_t i = 0; i < wk.nkept && s == SHOAL_OK; i++)
        s = keep_at_heir(0, wk.kept[i].path, wk.kept[i].pathlen,
                         wk.kept[i].res, wk.kept[i].reslen);
    int heir = task_worker_heir();
    if (s == SHOAL_OK && heir >= 0 && task_rt.nlocks > 0) {
        task_buf_t r = {0};
        task_msg_start(&r, TM_LOCKREC, (uint32_t)task_rt.rank);
        task_buf_u32(&r, 2);
        task_lockrec_put(&r);
        if ((s = r.err) != SHOAL_OK)
            task_buf_free(&r);
        else
            s = task_msg_send(heir, r.p, r.len);
    }
    kept_clear();
    task_lockrec_clear();
    return s;
}

void task_worker_fini(void)
{
    /* (No shared page when the set-up failed before it.) */
    uint64_t own = task_rt.self_reads ? atomic_load(task_rt.self_reads) : 0;
    base_info("task", "rank %d: %llu runs of jobs in %llu processes; "
                      "%llu pages read from waiting parents (%llu by the "
                      "children themselves); %llu page requests of copies, "
                      "%llu passed up; at most %zu messages waited to go to "
                      "one rank",
              task_rt.rank, (unsigned long long)wk.runs,
              (unsigned long long)wk.procs,
              (unsigned long long)(wk.direct + own), (unsigned long long)own,
              (unsigned long long)wk.asked, (unsigned long long)wk.up,
              task_msg_most_queued());
    task_worker_kill_all();
    task_spawn_fini();
    sigaction(SIGCHLD, &wk.old_chld, NULL);
    kept_clear();
    task_lockrec_fini();
    free(wk.kept);
    free(wk.c);
    memset(&wk, 0, sizeof(wk));
}

static w_copy_t *find(uint32_t copy)
{
    for (int32_t i = wk.head[copy % TASK_NEWS]; i >= 0; i = wk.c[i].next)
        if (wk.c[i].copy == copy)
            return &wk.c[i];
    return NULL;
}

/* Where the index of wk.c[i] is kept: its bucket's head or the next of
 * the copy before it. */
static int32_t *link_to(size_t i)
{
    int32_t *l = &wk.head[wk.c[i].copy % TASK_NEWS];
    while (*l != (int32_t)i)
        l = &wk.c[*l].next;
    return l;
}

/* Takes wk.c[i] out of the table: the last copy moves to its place. */
static void c_remove(size_t i)
{
    size_t last = wk.n - 1;

    *link_to(i) = wk.c[i].next;
    if (i != last) {
        *link_to(last) = (int32_t)i;
        wk.c[i] = wk.c[last];
    }
    wk.n--;
}

/* ---- sources in the shared page (task_rt.h) ---------------------------- */

static void src_set(task_src_slot_t *s, uint32_t copy, uint32_t waits,
                    pid_t pid)
{
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->copy, copy);
    atomic_store(&s->waits, waits);
    atomic_store(&s->pid, (int32_t)pid);
    atomic_fetch_add(&s->seq, 1);
}

static task_src_slot_t *src_find(uint32_t copy, int make)
{
    task_src_slot_t *free_slot = NULL;

    for (size_t i = 0; i < TASK_SRC_SLOTS; i++) {
        task_src_slot_t *s = &task_rt.srcs[i];
        uint32_t k = atomic_load_explicit(&s->copy, memory_order_relaxed);
        if (k == copy)
            return s;
        if (k == UINT32_MAX && free_slot == NULL)
            free_slot = s;
    }
    return make ? free_slot : NULL; /* full: its children ask the worker */
}

/* c's waits (block + 1, or 0) as its children see it. */
static void src_publish(const w_copy_t *c)
{
    task_src_slot_t *s = src_find(c->copy, c->waits != 0);

    if (s != NULL)
        src_set(s, c->copy, c->waits, c->pid);
}

static void src_forget_pid(pid_t pid)
{
    for (size_t i = 0; i < TASK_SRC_SLOTS; i++) {
        task_src_slot_t *s = &task_rt.srcs[i];
        if (atomic_load(&s->copy) != UINT32_MAX &&
            atomic_load(&s->pid) == (int32_t)pid)
            src_set(s, UINT32_MAX, 0, 0);
    }
}

static void src_forget(uint32_t copy)
{
    task_src_slot_t *s = src_find(copy, 0);

    if (s != NULL)
        src_set(s, UINT32_MAX, 0, 0);
}

static int fork_copy(uint32_t copy, task_rd_t *rd, const uint8_t *msg,
                     size_t len)
{
    task_run_msg_t m;
    task_path_t path;
    int fds[2];
    pid_t pid;

    if (task_run_read(rd, &m) != SHOAL_OK)
        return rd->err;
    int s = task_grow((void **)&wk.c, &wk.cap, wk.n + 1, sizeof(*wk.c),
                      "task: copies");
    if (s != SHOAL_OK)
        return s;
    uint32_t runs = 1;
    while ((m.flags & TASK_RUN_ABSENT) && wk.nidle > 0) {
        w_idle_t w = wk.idle[--wk.nidle];
        if (task_chan_send(w.fd, msg, len) == SHOAL_OK) {
            pid = w.pid;
            fds[0] = w.fd;
            runs = w.runs + 1;
            goto made;
        }
        kill(w.pid, SIGKILL); /* reaped as a stranger */
        close(w.fd);
    }
    s = task_spawn(msg, len, &pid, &fds[0]);
    if (s == SHOAL_OK)
        goto made;
    if (s != SHOAL_ERR_AGAIN)
        return s;
    /* No template: fork from here. */
    s = task_path_decode(m.path, m.pathlen, &path);
    if (s == SHOAL_OK)
        s = task_chan_pair(fds);
    if (s != SHOAL_OK) {
        task_path_free(&path);
        return s;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        for (size_t i = 0; i < wk.n; i++)
            close(wk.c[i].fd);
        sigaction(SIGCHLD, &wk.old_chld, NULL);
        task_page_source(m.src_rank, m.src_copy, m.src_block);
        task_copy_main(fds[1], copy, &path, m.fn, m.width, m.id, m.arg,
                       m.arglen, m.state, m.statelen, m.flags);
    }
    close(fds[1]);
    task_path_free(&path);
    if (pid < 0) {
        close(fds[0]);
        return base_err(SHOAL_ERR_SYSTEM, "task: fork: %s", strerror(errno));
    }
made:
    wk.runs++;
    wk.procs += runs == 1;
    uint8_t *kpath = NULL;
    if (task_keeps_results()) {
        kpath = malloc(m.pathlen ? m.pathlen : 1);
        if (kpath == NULL)
            s = base_err(SHOAL_ERR_NOMEM, "task: a path");
        else if (m.pathlen > 0)
            memcpy(kpath, m.path, m.pathlen);
    }
    wk.c[wk.n] = (w_copy_t){.copy = copy, .pid = pid, .fd = fds[0],
                              .src_rank = m.src_rank,
                              .src_copy = m.src_copy,
                              .src_block = m.src_block, .runs = runs,
                              .absent = !!(m.flags & TASK_RUN_ABSENT),
                              .path = kpath,
                              .pathlen = (uint32_t)m.pathlen,
                              .next = wk.head[copy % TASK_NEWS]};
    wk.head[copy % TASK_NEWS] = (int32_t)wk.n++;
    return s;
}

/* ---- pages on demand (task_page.c) --------------------------------------- */

/* Asks the coordinator for a page of copy's (it keeps what every open
 * block's children start from). */
static int page_from_coord(uint32_t copy, uint32_t rank, uint32_t area,
                           uint64_t page)
{
    task_buf_t b = {0};

    task_msg_start(&b, TM_PAGE_COORD, copy);
    task_buf_u32(&b, rank);
    task_buf_u32(&b, area);
    task_buf_u64(&b, page);
    if (b.err)
        return b.err;
    return task_msg_send(task_rt.coord, b.p, b.len);
}

static int page_msg(uint32_t type, uint32_t copy, task_rd_t *rd,
                    const uint8_t *msg, size_t len);

/* A page message for this worker's copy: handled at once, not through
 * the inbox (a turn of the loop saved). */
static int page_here(task_buf_t *b)
{
    task_rd_t rd;

    if (b->err)
        return b->err;
    task_rd_init(&rd, b->p, b->len);
    uint32_t type = task_rd_u32(&rd), copy = task_rd_u32(&rd);
    int s = page_msg(type, copy, &rd, b->p, b->len);
    task_buf_free(b);
    return s;
}

/* Sends a request for a page of (rank, copy)'s to the source of c (a
 * copy of this worker: the requester, or the source that lacks it). */
static int page_to_source(const w_copy_t *c, uint32_t rank, uint32_t copy,
                          uint32_t area, uint64_t page)
{
    task_buf_t b = {0};

    if (c->src_copy == NO_COPY || task_msg_dead((int)c->src_rank))
        return page_from_coord(copy, rank, area, page);
    task_msg_start(&b, TM_PAGE_REQ, c->src_copy);
    task_buf_u32(&b, c->src_block);
    task_buf_u32(&b, area);
    task_buf_u64(&b, page);
    task_buf_u32(&b, rank);
    task_buf_u32(&b, copy);
    if ((int)c->src_rank == task_rt.rank)
        return page_here(&b);
    if (b.err)
        return b.err;
    return task_msg_send((int)c->src_rank, b.p, b.len);
}

/* A page message from copy c; 1 when it was one (msg taken over). */
static int page_from_copy(w_copy_t *c, uint8_t *msg, size_t len, int *s_p)
{
    task_rd_t rd;

    task_rd_init(&rd, msg, len);
    uint32_t type = task_rd_u32(&rd);
    (void)task_rd_u32(&rd);
    if (type == TM_PAGE_REQ) { /* its own: it faulted */
        wk.asked++;
        c->pend_area = task_rd_u32(&rd);
        c->pend_page = task_rd_u64(&rd);
        c->pend = 1;
        c->pend_coord = 0;
        c->pend_since = base_time_ns();
        *s_p = rd.err ? rd.err
                      : page_to_source(c, (uint32_t)task_rt.rank, c->copy,
                                       c->pend_area, c->pend_page);
    } else if (type == TM_PAGE) { /* it served a child */
        uint32_t rank = task_rd_u32(&rd);
        if (rd.err || rank >= (uint32_t)task_rt.size) {
            free(msg);
            *s_p = SHOAL_ERR_PROTOCOL;
            return 1;
        }
        if ((int)rank == task_rt.rank) {
            task_buf_t b = {msg, len, len, 0};
            *s_p = page_here(&b);
        } else
            *s_p = task_msg_send((int)rank, msg, len);
        return 1;
    } else if (type == TM_PAGE_UP) { /* it lacks the page: to its source */
        wk.up++;
        (void)task_rd_u32(&rd);
        uint32_t area = task_rd_u32(&rd);
        uint64_t page = task_rd_u64(&rd);
        uint32_t rank = task_rd_u32(&rd), copy = task_rd_u32(&rd);
        *s_p = rd.err ? rd.err : page_to_source(c, rank, copy, area, page);
    } else
        return 0;
    free(msg);
    return 1;
}

/* A page of source copy c, which waits at the requested block, read by
 * this worker from c's memory (process_vm_readv) and sent to the
 * requester: two process wake-ups fewer than asking c (it would answer
 * from the same memory, task_page_serve).  0 sent, 1 when the page is
 * absent in c too (c passes the request up), <0 an error. */
static int page_direct(const w_copy_t *c, uint32_t block, uint32_t area,
                       uint64_t page, uint32_t rank, uint32_t req)
{
    task_buf_t b = {0};
    size_t psize = task_rt.region.page;

    (void)block;
    if (area >= TASK_AREAS || rank >= (uint32_t)task_rt.size)
        return 1;
    task_msg_start(&b, TM_PAGE, req);
    task_buf_u32(&b, rank);
    task_buf_u32(&b, area);
    task_buf_u64(&b, page);
    uint8_t *at = task_buf_room(&b, psize);
    if (at == NULL || !task_region_page_of(&task_rt.region, c->pid,
                                           (int)area, (size_t)page, at)) {
        int err = b.err;
        task_buf_free(&b);
        return err ? err : 1;
    }
    wk.direct++;
    if ((int)rank == task_rt.rank)
        return page_here(&b);
    return task_msg_send((int)rank, b.p, b.len);
}

/* A page request for copy (a source here) or a page for copy (it waits
 * for it) came from another worker or this one. */
static int page_msg(uint32_t type, uint32_t copy, task_rd_t *rd,
                    const uint8_t *msg, size_t len)
{
    w_copy_t *c = find(copy);

    if (type == TM_PAGE) {
        (void)task_rd_u32(rd); /* rank: this one */
        uint32_t area = task_rd_u32(rd);
        uint64_t page = task_rd_u64(rd);
        if (rd->err || c == NULL || c->killed || !c->pend ||
            area != c->pend_area || page != c->pend_page)
            return rd->err; /* a duplicate, or for a copy gone */
        c->pend = 0;
        int s = task_chan_send(c->fd, msg, len);
        return s == SHOAL_ERR_PEER_DEAD ? SHOAL_OK : s;
    }
    uint32_t block = task_rd_u32(rd);
    uint32_t area = task_rd_u32(rd);
    uint64_t page = task_rd_u64(rd);
    uint32_t rank = task_rd_u32(rd), req = task_rd_u32(rd);
    if (rd->err)
        return rd->err;
    if (c != NULL && !c->killed && c->waits == block + 1) {
        int s = page_direct(c, block, area, page, rank, req);
        if (s <= 0)
            return s;
    }
    if (c == NULL || c->killed || c->done ||
        task_chan_send(c->fd, msg, len) != SHOAL_OK)
        return page_from_coord(req, rank, area, page); /* source gone */
    return SHOAL_OK;
}

/* Requests waiting too long: their source is slow, stopped or dead; the
 * coordinator answers them, and the copy's later ones. */
static int page_timeouts(uint64_t now)
{
    /* (Every millisecond: the waits are hundreds of them, and a deep
     * chain's worker has thousands of copies to look at.) */
    if (now < wk.next_ptime)
        return SHOAL_OK;
    wk.next_ptime = now + 1000000;
    for (size_t i = 0; i < wk.n; i++) {
        w_copy_t *c = &wk.c[i];
        /* A waiting parent's request (a page it takes for its children,
         * task_page.c) may climb far, each waiting parent above asking
         * its own source in turn: it gets the whole SHOAL_TASK_SUSPECT,
         * or a deep climb would send every parent on the way to the
         * coordinator at once (the child that asked goes there after
         * the shorter wait anyway). */
        uint64_t wait = c->waits ? task_rt.suspect_ns : task_rt.suspect_ns / 4;
        /* (A request made after the caller read the clock is not late:
         * without the first test, now - pend_since wrapped around and
         * every page asked for in the turn went to the coordinator.) */
        int late = now > c->pend_since && now - c->pend_since >= wait;
        if (!c->pend || c->pend_coord || c->killed ||
            (!late &&
             (c->src_copy == NO_COPY || !task_msg_dead((int)c->src_rank))))
            continue;
        c->pend_coord = 1;
        c->src_copy = NO_COPY;
        int s = page_from_coord(c->copy, (uint32_t)task_rt.rank,
                                c->pend_area, c->pend_page);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

static void signal_copy(uint32_t copy, int sig)
{
    w_copy_t *c = find(copy);

    if (c == NULL || (c->done && sig != SIGKILL))
        return; /* (a finished copy's process may run the next job) */
    if (sig == SIGKILL) {
        c->killed = 1;
        src_forget(copy);
    }
    c->stopped = sig == SIGSTOP;
    kill(c->pid, sig);
    if (sig == SIGKILL)
        kill(c->pid, SIGCONT);
}

/* A message for one of this worker's copies. */
static void to_copy(uint32_t copy, const uint8_t *msg, size_t len)
{
    w_copy_t *c = find(copy);

    if (c == NULL || c->killed)
        return; /* gone meanwhile */
    int s = task_chan_send(c->fd, msg, len);
    if (s != SHOAL_OK && s != SHOAL_ERR_PEER_DEAD) {
        base_warn("task", "copy %u: %s; killing it", copy,
                  shoal_error_detail());
        signal_copy(copy, SIGKILL);
    }
}

static int send_coord(task_buf_t *b)
{
    if (b->err)
        return b->err;
    int s = task_msg_send(task_rt.coord, b->p, b->len);
    memset(b, 0, sizeof(*b));
    return s;
}

int task_worker_handle(const uint8_t *msg, size_t len, int *exit_p,
                       int *status_p)
{
    task_rd_t rd;

    task_rd_init(&rd, msg, len);
    uint32_t type = task_rd_u32(&rd), copy = task_rd_u32(&rd);
    switch (type) {
    case TM_RUN:
        return fork_copy(copy, &rd, msg, len);
    case TM_SUSPEND:
        signal_copy(copy, SIGSTOP);
        return SHOAL_OK;
    case TM_CONT:
        signal_copy(copy, SIGCONT);
        return SHOAL_OK;
    case TM_KILL:
        signal_copy(copy, SIGKILL);
        return SHOAL_OK;
    case TM_RESULTS: {
        w_copy_t *c = find(copy);
        if (c != NULL) {
            c->waits = 0; /* it merges them: its memory changes */
            src_publish(c); /* (before they go: the seqlock's point) */
        }
        to_copy(copy, msg, len);
        return SHOAL_OK;
    }
    case TM_GRANT: {
        /* Its tail, if any, is this worker's (the lock record): the copy
         * gets the grant without it. */
        size_t n;
        (void)task_rd_u32(&rd); /* released */
        const uint8_t *data = task_rd_bytes(&rd, &n);
        size_t end = rd.pos;
        if (!rd.err && rd.pos < rd.len) {
            int s = task_lockrec_grant(&rd, data, n);
            if (s != SHOAL_OK)
                return s;
        }
        to_copy(copy, msg, rd.err ? len : end);
        return SHOAL_OK;
    }
    case TM_PAGE_REQ:
    case TM_PAGE:
        return page_msg(type, copy, &rd, msg, len);
    case TM_END: {
        /* Copies left running (a suspected worker's, say, whose kill
         * orders are still on their way) would only wait for results
         * that never come. */
        task_buf_t b = {0};
        task_worker_kill_all();
        kept_clear();
        task_lockrec_clear();
        wk.over = 1;
        task_worker_mark_over();
        task_msg_start(&b, TM_BYE, (uint32_t)task_rt.rank);
        return send_coord(&b);
    }
    case TM_FORGET:
        return kept_forget(&rd);
    case TM_KEEP:
        return kept_keep((int)copy, &rd); /* (copy: the sender's rank) */
    case TM_LOCKREC:
        return task_lockrec_heir(&rd);
    case TM_EXIT:
        *status_p = (int)task_rd_u32(&rd);
        *exit_p = task_rd_u32(&rd) ? 1 : 2;
        return rd.err;
    default:
        return base_err(SHOAL_ERR_PROTOCOL, "task: worker message type %u",
                        type);
    }
}

/* A copy's message (malloc'd, taken over) for the coordinator: handled
 * at once when it is this rank (no turn of the loop through the inbox;
 * the coordinator only queues what it sends, so it never calls back). */
static int to_coord(uint8_t *msg, size_t len)
{
    if (task_rt.coord != task_rt.rank)
        return task_msg_send(task_rt.coord, msg, len);
    int s = task_coord_handle(task_rt.rank, msg, len);
    free(msg);
    return s;
}

/* Relays what a copy sent to the coordinator. */
static int drain(w_copy_t *c)
{
    for (;;) {
        uint8_t *msg;
        size_t len;
        int r = task_chan_recv(c->fd, &msg, &len);
        if (r <= 0)
            return r == SHOAL_ERR_PEER_DEAD ? SHOAL_OK : r;
        if (len >= 4 && msg[0] == TM_DONE) {
            c->done = 1;
            wk.retire_due = 1;
        }
        if (len >= 12 && msg[0] == TM_BLOCK) {
            task_rd_t rd;
            task_rd_init(&rd, msg, len);
            (void)task_rd_u32(&rd);
            (void)task_rd_u32(&rd);
            c->waits = task_rd_u32(&rd) + 1;
            c->blocks = 1;
            if (!c->killed)
                src_publish(c);
        }
        if (c->killed) {
            free(msg);
            continue;
        }
        int s = SHOAL_OK;
        if (len >= 4 && msg[0] == TM_DONE)
            s = kept_add(c, msg, len);
        else if (len >= 4 && msg[0] == TM_UNLOCK && c->path != NULL &&
                 task_rt.rank != task_rt.coord)
            s = task_lockrec_unlock(c->path, c->pathlen, msg, len);
        if (s != SHOAL_OK) {
            free(msg);
            return s;
        }
        if (page_from_copy(c, msg, len, &s)) {
            if (s != SHOAL_OK)
                return s;
            continue;
        }
        s = to_coord(msg, len);
        if (s != SHOAL_OK)
            return s;
    }
}

static int reap(int sweep)
{
    int st;
    pid_t pid;
    siginfo_t si;

    if (!chld && !sweep)
        return SHOAL_OK;
    chld = 0; /* (before the look: an exit after it raises it again) */

    /* Each exited process is looked at before it is reaped: its pid,
     * which a child may be about to read from, is forgotten while no
     * other process can have it. */
    for (;;) {
        si.si_pid = 0;
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            si.si_pid == 0)
            break;
        src_forget_pid(si.si_pid);
        pid = waitpid(si.si_pid, &st, 0);
        if (pid <= 0)
            break;
        size_t i = 0;
        if (pid == task_spawn_pid())
            task_spawn_gone();
        for (size_t k = 0; k < wk.nidle; k++)
            if (wk.idle[k].pid == pid) {
                close(wk.idle[k].fd);
                wk.idle[k] = wk.idle[--wk.nidle];
                break;
            }
        while (i < wk.n && wk.c[i].pid != pid)
            i++;
        if (i == wk.n)
            continue;
        w_copy_t c = wk.c[i];
        int s = drain(&c);
        src_forget(c.copy);
        close(c.fd);
        free(c.path);
        c_remove(i);
        if (s == SHOAL_OK && !c.done && !c.killed) {
            task_buf_t b = {0};
            task_msg_start(&b, TM_LOST, c.copy);
            task_buf_u32(&b, (uint32_t)st);
            task_buf_u32(&b, (uint32_t)task_rt.rank);
            s = send_coord(&b);
        }
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

/* Finished copies: their processes wait for the next run (a warm copy,
 * SHOAL_TASK_REUSE) or are told to exit by the end of their channel. */
static void retire(void)
{
    if (!wk.retire_due)
        return;
    wk.retire_due = 0;
    for (size_t i = 0; i < wk.n;) {
        w_copy_t *c = &wk.c[i];
        if (!c->done || c->killed || c->shut) {
            i++;
            continue;
        }
        /* A suspend order that crossed its TM_DONE stopped it after it
         * finished: it must read its next run, or its end, running. */
        if (c->stopped)
            kill(c->pid, SIGCONT);
        src_forget(c->copy);
        if (c->absent && c->runs < (uint32_t)base_cfg.TASK_REUSE &&
            wk.nidle < (size_t)base_cfg.TASK_IDLE && wk.nidle < IDLE_MAX) {
            wk.idle[wk.nidle++] = (w_idle_t){c->pid, c->fd, c->runs};
            free(c->path);
            c_remove(i);
            continue;
        }
        shutdown(c->fd, SHUT_WR); /* it exits; reap forgets it */
        c->shut = 1;
        i++;
    }
}

/* The copies whose bit is up (task_rt.h, news): each word is taken
 * (its bits lowered) before their channels are read, so a message sent
 * after the read raises its bit again.  Copies sharing a bit are all
 * read.  A sweep reads every channel (once a heartbeat: a safety net, no
 * message waits longer).  (Draining a channel never changes the table of
 * copies: the indices chained from the buckets stay valid.) */
static int drain_news(int sweep)
{
    if (sweep) {
        for (size_t w = 0; w < TASK_NEWS_WORDS; w++)
            atomic_store(&task_rt.news[w], 0);
        for (size_t i = 0; i < wk.n; i++) {
            int s = drain(&wk.c[i]);
            if (s != SHOAL_OK)
                return s;
        }
        return SHOAL_OK;
    }
    for (size_t w = 0; w < TASK_NEWS_WORDS; w++) {
        if (atomic_load_explicit(&task_rt.news[w], memory_order_relaxed) == 0)
            continue;
        uint64_t bits = atomic_exchange(&task_rt.news[w], 0);
        while (bits != 0) {
            size_t b = w * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            for (int32_t i = wk.head[b]; i >= 0; i = wk.c[i].next) {
                int s = drain(&wk.c[i]);
                if (s != SHOAL_OK)
                    return s;
            }
        }
    }
    return SHOAL_OK;
}

int task_worker_tick(void)
{
    uint64_t now = base_time_ns();
    int sweep = now >= wk.next_sweep;

    if (sweep)
        wk.next_sweep = now + task_rt.beat_ns;
    /* (An exchange: a full barrier before the flags are read.) */
    atomic_exchange(task_rt.bell, 0);
    int s = drain_news(sweep);
    if (s != SHOAL_OK)
        return s;
    retire();
    s = reap(sweep);
    if (s == SHOAL_OK)
        s = page_timeouts(now);
    if (s == SHOAL_OK && task_rt.rank != task_rt.coord &&
        now >= wk.next_beat) {
        task_buf_t b = {0};
        task_msg_start(&b, TM_BEAT, (uint32_t)task_rt.rank);
        s = send_coord(&b);
        wk.next_beat = now + task_rt.beat_ns;
    }
    return s;
}

int task_worker_direct(const uint8_t *msg, size_t len)
{
    int exit_p = 0, status = 0;

    if (len < 8 || (msg[0] != TM_GRANT && msg[0] != TM_RESULTS))
        return 0;
    /* (Neither changes the table of copies, which a drain may be
     * walking: the coordinator is called from there.) */
    return task_worker_handle(msg, len, &exit_p, &status) == SHOAL_OK;
}

int task_worker_over(void)
{
    return wk.over;
}

void task_worker_mark_over(void)
{
    if (task_rt.bell != NULL)
        atomic_store(&((struct task_slots_mark *)((char *)task_rt.bell +
                                                  TASK_SLOTS_MARK))
                          ->over,
                     1);
}

void task_worker_kill_all(void)
{
    for (size_t i = 0; task_rt.srcs != NULL && i < TASK_SRC_SLOTS; i++)
        if (atomic_load(&task_rt.srcs[i].copy) != UINT32_MAX)
            src_set(&task_rt.srcs[i], UINT32_MAX, 0, 0);
    for (size_t i = 0; i < wk.nidle; i++) {
        kill(wk.idle[i].pid, SIGKILL);
        waitpid(wk.idle[i].pid, NULL, 0);
        close(wk.idle[i].fd);
    }
    wk.nidle = 0;
    for (size_t i = 0; i < wk.n; i++) {
        kill(wk.c[i].pid, SIGKILL);
        kill(wk.c[i].pid, SIGCONT);
    }
    for (size_t i = 0; i < wk.n; i++) {
        waitpid(wk.c[i].pid, NULL, 0);
        close(wk.c[i].fd);
        free(wk.c[i].path);
    }
    wk.n = 0;
    for (size_t i = 0; i < TASK_NEWS; i++)
        wk.head[i] = -1;
}
