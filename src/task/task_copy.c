/*
 * A copy: one run of one job, in a child process of a worker (task_rt.h).
 * It starts from the pristine shared memory the worker keeps, with every
 * page absent and fetched from its parent when touched (task_page.c; or,
 * SHOAL_TASK_PAGES=0, with its parent's whole state applied), tracks its
 * own writes and ends by sending them (its diff) and its output.  The job calls of shoal/task.h run here: a block
 * sends its routines and this copy's state to the coordinator and waits
 * for the children's diffs, which it merges into its own memory; a lock
 * asks the coordinator and waits for the grant with the variables' bytes.
 *
 * Misuse that every run of the job would repeat is reported to the
 * coordinator (TM_FAIL), which ends the run with the message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"
#include "task/task_rand.h"
#include "task/task_rt.h"

#define COPY_FAIL_EXIT 111

static struct {
    int active, fd;
    uint32_t copy;
    task_path_t path;
    char path_text[256]; /* (job_text: made when a message needs it) */
    int path_text_ok;
    uint32_t nblocks, nreq;
    uint32_t subreq; /* lock requests of the children's subtrees */
    task_rand_t rand;
    int open;
    task_buf_t desc;
    uint32_t nroutines;
    uint64_t njobs;
    uint32_t *held; /* per lock: request + 1 while held */
    /* The shared heap's chunk this run allocates from (offsets in the
     * heap), and the bytes of all its chunks. */
    uint64_t chunk_next, chunk_left, alloc_total;
    uint32_t flags;   /* TM_RUN's */
    uint32_t waiting; /* block + 1 while it waits at it (serves pages) */
    size_t outlen;    /* the output the last run left in the memfd */
} cp;

/* The job's path as text, for messages: made on first use (formatting
 * a path costs its depth, at every run of a deep chain's jobs). */
static const char *job_text(void)
{
    if (!cp.path_text_ok) {
        task_path_format(&cp.path, cp.path_text, sizeof(cp.path_text));
        cp.path_text_ok = 1;
    }
    return cp.path_text;
}

static void send_msg(task_buf_t *b)
{
    if (b->err)
        base_fatal("task: job %s: %s", job_text(), shoal_error_detail());
    if (task_chan_send(cp.fd, b->p, b->len) != SHOAL_OK)
        _exit(0); /* the worker is gone: so is this run */
    task_buf_free(b);
    task_ring();
}

static void fail(int status, const char *fmt, ...) BASE_PRINTF(2, 3)
    BASE_NORETURN;

static void fail(int status, const char *fmt, ...)
{
    char text[1024];
    int n = snprintf(text, sizeof(text), "job %s: ", job_text());
    va_list ap;
    task_buf_t b = {0};

    va_start(ap, fmt);
    vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
    va_end(ap);
    cp.active = 0;
    task_msg_start(&b, TM_FAIL, cp.copy);
    task_buf_u32(&b, (uint32_t)status);
    task_buf_bytes(&b, text, strlen(text));
    send_msg(&b);
    _exit(COPY_FAIL_EXIT);
}

/* The next message from the coordinator, which must be of type want;
 * page requests that come meanwhile are served (task_page.c). */
static void recv_msg(uint32_t want, uint8_t **msg_p, task_rd_t *rd)
{
    size_t len;
    uint32_t type;

    for (;;) {
        int s = task_chan_recv(cp.fd, msg_p, &len);
        if (s != 1)
            _exit(0);
        type = len >= 4 ? (*msg_p)[0] : 0;
        if (type == TM_PAGE_REQ)
            task_page_serve(cp.fd, *msg_p, len, cp.waiting);
        else if (type == TM_PAGE)
            task_page_take(cp.fd, *msg_p, len, cp.waiting);
        else
            break;
        free(*msg_p);
    }
    task_rd_init(rd, *msg_p, len);
    type = task_rd_u32(rd);
    uint32_t copy = task_rd_u32(rd);
    if (type != want || copy != cp.copy)
        fail(SHOAL_ERR_PROTOCOL, "expected message %u, got %u", want, type);
}

static void on_exit_call(void)
{
    if (cp.active)
        fail(SHOAL_ERR_INVALID, "exit() called inside a job (return from "
                                "the routine instead)");
}

static int outside(const char *fn)
{
    return base_err(SHOAL_ERR_NOT_INIT, "%s: not inside a job of a task "
                                        "program",
                    fn);
}

/* ---- shared heap --------------------------------------------------------- */

/*
 * The heap's top is the variable of a lock of its own (task_rt.heap_lock):
 * a job takes a range of the heap in a critical section, so siblings get
 * disjoint ranges, and every run of the job is granted the same top (a
 * replay) and so gets the same addresses.  To make that one round trip
 * for many allocations, a job takes a chunk: the first exactly what was
 * asked, each later one as large as the job's chunks so far (at most
 * TASK_HEAP_CHUNK_MAX), and serves allocations from it until it is used
 * up; the rest of a job's last chunk stays unused (at most half of what
 * it allocated).  The chunk's sizes depend only on the job's own calls,
 * so they are the same in every run.
 */
static void lock_request(uint32_t id);
static void unlock_request(uint32_t id);

#define TASK_HEAP_CHUNK_MAX ((uint64_t)1 << 20)
#define TASK_HEAP_START 64 /* the heap's first bytes are not handed out */

/* used: the heap's top, or UINT64_MAX when not asked (size alone is too
 * large). */
static int heap_full(size_t size, uint64_t used, size_t heap)
{
    if (used == UINT64_MAX)
        return base_err(SHOAL_ERR_NOMEM,
                        "shoal_task_alloc: %zu bytes do not fit in the "
                        "shared heap (%zu bytes; SHOAL_TASK_HEAP)",
                        size, heap);
    return base_err(SHOAL_ERR_NOMEM,
                    "shoal_task_alloc: %zu bytes do not fit in the shared "
                    "heap (%llu of %zu bytes in use; SHOAL_TASK_HEAP)",
                    size, (unsigned long long)used, heap);
}

int shoal_task_alloc(size_t size, void **ptr_p)
{
    task_area_t *h = &task_rt.region.area[1];

    if (!cp.active)
        return outside("shoal_task_alloc");
    if (ptr_p == NULL)
        return base_err(SHOAL_ERR_INVALID, "shoal_task_alloc: ptr_p is NULL");
    uint64_t want = ((uint64_t)size + 15) & ~(uint64_t)15;
    if (h->size <= TASK_HEAP_START || want < size ||
        want > h->size - TASK_HEAP_START)
        return heap_full(size, UINT64_MAX, h->size);
    if (want <= cp.chunk_left) {
        *ptr_p = h->base + cp.chunk_next;
        cp.chunk_next += want;
        cp.chunk_left -= want;
        return SHOAL_OK;
    }
    uint32_t id = task_rt.heap_lock;
    lock_request(id);
    uint64_t used = task_rt.heap_top < TASK_HEAP_START ? TASK_HEAP_START
                                                       : task_rt.heap_top;
    uint64_t room = used <= h->size ? h->size - used : 0;
    uint64_t chunk = cp.alloc_total < TASK_HEAP_CHUNK_MAX
                         ? cp.alloc_total
                         : TASK_HEAP_CHUNK_MAX;
    if (chunk < want || chunk > room)
        chunk = want;
    if (want > room) {
        unlock_request(id); /* the top unchanged */
        return heap_full(size, used, h->size);
    }
    task_rt.heap_top = used + chunk;
    unlock_request(id);
    *ptr_p = h->base + used;
    cp.chunk_next = used + want;
    cp.chunk_left = chunk - want;
    cp.alloc_total += chunk;
    return SHOAL_OK;
}

/* ---- blocks -------------------------------------------------------------- */

static const char *held_lock(void)
{
    for (uint32_t i = 0; i < task_rt.nlocks; i++)
        if (cp.held[i])
            return task_rt.locks[i].name;
    return NULL;
}

int shoal_task_parbegin(void)
{
    if (!cp.active)
        return outside("shoal_task_parbegin");
    if (cp.open)
        fail(SHOAL_ERR_INVALID, "SHOAL_PARBEGIN inside an open block");
    const char *lock = held_lock();
    if (lock != NULL)
        fail(SHOAL_ERR_INVALID, "a block (SHOAL_PARBEGIN) inside the "
                                "critical section of lock %s",
             lock);
    cp.open = 1;
    cp.desc.len = 0;
    cp.nroutines = 0;
    cp.njobs = 0;
    return SHOAL_OK;
}

int shoal_task_routine(int width, shoal_task_fn_t fn, const void *arg,
                       size_t len)
{
    if (!cp.active)
        return outside("shoal_task_routine");
    if (!cp.open)
        fail(SHOAL_ERR_INVALID, "SHOAL_ROUTINE outside a block");
    if (width < 0 || fn == NULL || (len > 0 && arg == NULL))
        fail(SHOAL_ERR_INVALID, "SHOAL_ROUTINE(%d, %p, %p, %zu): a bad "
                                "width, routine or argument",
             width, (void *)(uintptr_t)fn, arg, len);
    if (len > SHOAL_TASK_MAX_ARG)
        fail(SHOAL_ERR_TOO_LARGE, "SHOAL_ROUTINE with %zu argument bytes "
                                  "(at most %d)",
             len, SHOAL_TASK_MAX_ARG);
    task_buf_u64(&cp.desc, (uint64_t)((uintptr_t)fn -
                                      (uintptr_t)task_rt.prog->main));
    task_buf_u32(&cp.desc, (uint32_t)width);
    task_buf_bytes(&cp.desc, arg, len);
    cp.nroutines++;
    cp.njobs += (uint64_t)width;
    if (cp.njobs > UINT32_MAX / 2)
        fail(SHOAL_ERR_TOO_LARGE, "a block of %llu jobs",
             (unsigned long long)cp.njobs);
    return SHOAL_OK;
}

static void merge_results(const uint8_t *msg, task_rd_t *rd)
{
    uint32_t n = task_rd_u32(rd);
    task_region_part_t *parts = calloc(n ? n : 1, sizeof(*parts));
    task_path_t *paths = calloc(n ? n : 1, sizeof(*paths));
    const uint8_t **out = calloc(n ? n : 1, sizeof(*out));
    size_t *outlen = calloc(n ? n : 1, sizeof(*outlen));

    if (parts == NULL || paths == NULL || out == NULL || outlen == NULL)
        fail(SHOAL_ERR_NOMEM, "merging %u results", n);
    for (uint32_t k = 0; k < n && !rd->err; k++) {
        size_t plen;
        const uint8_t *p = task_rd_bytes(rd, &plen);
        if (!rd->err && task_path_decode(p, plen, &paths[k]) != SHOAL_OK)
            fail(SHOAL_ERR_PROTOCOL, "%s", shoal_error_detail());
        parts[k].path = &paths[k];
        parts[k].diff = task_rd_bytes(rd, &parts[k].len);
        out[k] = task_rd_bytes(rd, &outlen[k]);
        uint32_t sub = task_rd_u32(rd);
        cp.subreq = sub > UINT32_MAX - cp.subreq ? UINT32_MAX
                                                 : cp.subreq + sub;
    }
    if (rd->err)
        fail(SHOAL_ERR_PROTOCOL, "%s", shoal_error_detail());
    if (task_region_merge(&task_rt.region, parts, n) != SHOAL_OK)
        fail(SHOAL_ERR_INVALID, "%s", shoal_error_detail());
    for (uint32_t k = 0; k < n; k++) {
        size_t off = 0;
        while (off < outlen[k]) {
            ssize_t w = write(STDOUT_FILENO, out[k] + off, outlen[k] - off);
            if (w <= 0)
                fail(SHOAL_ERR_SYSTEM, "collecting output: %s",
                     strerror(errno));
            off += (size_t)w;
        }
        task_path_free(&paths[k]);
    }
    (void)msg;
    free(parts);
    free(paths);
    free(out);
    free(outlen);
}

/* Adds this copy's state (or diff) to a message as one byte string. */
static int add_blob(task_buf_t *b, int state)
{
    task_buf_t x = {0};
    int s = state ? task_region_state(&task_rt.region, &x)
                  : task_region_diff(&task_rt.region, &x);

    if (s == SHOAL_OK) {
        task_buf_bytes(b, x.p, x.len);
        s = b->err;
    }
    task_buf_free(&x);
    return s;
}

int shoal_task_parend(void)
{
    task_buf_t b = {0};
    uint8_t *msg;
    task_rd_t rd;

    if (!cp.active)
        return outside("shoal_task_parend");
    if (!cp.open)
        fail(SHOAL_ERR_INVALID, "SHOAL_PAREND without SHOAL_PARBEGIN");
    cp.open = 0;
    uint32_t block = cp.nblocks++;
    if (cp.njobs == 0)
        return SHOAL_OK;
    fflush(stdout);
    task_msg_start(&b, TM_BLOCK, cp.copy);
    task_buf_u32(&b, block);
    task_buf_u32(&b, cp.nroutines);
    task_buf_raw(&b, cp.desc.p, cp.desc.len);
    /* The coordinator keeps what the children start from: the state, or
     * this copy's diff (which, on its parent block's, makes the state). */
    if (cp.desc.err ||
        add_blob(&b, !(cp.flags & TASK_RUN_DIFFS)) != SHOAL_OK)
        fail(SHOAL_ERR_NOMEM, "%s", shoal_error_detail());
    cp.waiting = block + 1;
    send_msg(&b);
    recv_msg(TM_RESULTS, &msg, &rd);
    cp.waiting = 0;
    merge_results(msg, &rd);
    free(msg);
    return SHOAL_OK;
}

size_t shoal_task_path(char *buf, size_t cap)
{
    if (!cp.active) {
        if (buf != NULL && cap > 0)
            buf[0] = '\0';
        return 0;
    }
    return task_path_format(&cp.path, buf, cap);
}

/* ---- random stream ------------------------------------------------------- */

uint64_t shoal_task_rand(void)
{
    return cp.active ? task_rand_next(&cp.rand) : 0;
}

uint64_t shoal_task_rand_below(uint64_t bound)
{
    return cp.active && bound > 0 ? task_rand_below(&cp.rand, bound) : 0;
}

double shoal_task_rand_unit(void)
{
    return cp.active ? task_rand_unit(&cp.rand) : 0.0;
}

/* ---- locks --------------------------------------------------------------- */

static uint32_t lock_id(shoal_task_lock_t *lock, const char *fn)
{
    const shoal_task_program_t *p = task_rt.prog;

    if (lock == NULL || lock < p->locks_begin || lock >= p->locks_end)
        fail(SHOAL_ERR_INVALID, "%s: %p is not a lock defined with "
                                "SHOAL_TASK_LOCK in the program",
             fn, (void *)lock);
    return (uint32_t)(lock - p->locks_begin);
}

/* The job's next lock request, for lock id: waits for the grant, whose
 * bytes become the lock's variables. */
static void lock_request(uint32_t id)
{
    const shoal_task_lock_t *l = &task_rt.locks[id];
    task_buf_t b = {0};
    uint8_t *msg;
    task_rd_t rd;

    task_msg_start(&b, TM_LOCK, cp.copy);
    task_buf_u32(&b, cp.nreq);
    task_buf_u32(&b, id);
    send_msg(&b);
    recv_msg(TM_GRANT, &msg, &rd);
    (void)task_rd_u32(&rd); /* released: the unlock is sent anyway */
    size_t n;
    const uint8_t *data = task_rd_bytes(&rd, &n);
    if (rd.err || n != l->len)
        fail(SHOAL_ERR_PROTOCOL, "a grant of lock %s with %zu bytes",
             l->name, n);
    memcpy(l->addr, data, n);
    free(msg);
    cp.held[id] = ++cp.nreq;
}

/* Leaves the critical section of lock id, sending its variables. */
static void unlock_request(uint32_t id)
{
    const shoal_task_lock_t *l = &task_rt.locks[id];
    task_buf_t b = {0};

    task_msg_start(&b, TM_UNLOCK, cp.copy);
    task_buf_u32(&b, cp.held[id] - 1);
    task_buf_u32(&b, id);
    task_buf_bytes(&b, l->addr, l->len);
    send_msg(&b);
    cp.held[id] = 0;
}

int shoal_task_lock(shoal_task_lock_t *lock)
{
    if (!cp.active)
        return outside("shoal_task_lock");
    uint32_t id = lock_id(lock, "shoal_task_lock");
    if (cp.held[id])
        fail(SHOAL_ERR_INVALID, "shoal_task_lock: lock %s is held by this "
                                "job already (locks are not recursive)",
             lock->name);
    lock_request(id);
    return SHOAL_OK;
}

int shoal_task_unlock(shoal_task_lock_t *lock)
{
    if (!cp.active)
        return outside("shoal_task_unlock");
    uint32_t id = lock_id(lock, "shoal_task_unlock");
    if (!cp.held[id])
        fail(SHOAL_ERR_INVALID, "shoal_task_unlock: lock %s is not held by "
                                "this job",
             lock->name);
    unlock_request(id);
    return SHOAL_OK;
}

/* ---- the copy's life ----------------------------------------------------- */

/* What a run of a job starts from, in this process's first run and in
 * each later one (a warm copy). */
static void begin_run(uint32_t copy, const task_path_t *path, uint32_t flags)
{
    cp.copy = copy;
    cp.flags = flags;
    task_rt.my_news =
        task_rt.news ? &task_rt.news[(copy % TASK_NEWS) / 64] : NULL;
    task_rt.my_news_bit = 1ull << (copy % 64);
    cp.nblocks = cp.nreq = cp.nroutines = cp.waiting = cp.subreq = 0;
    cp.chunk_next = cp.chunk_left = cp.alloc_total = 0;
    cp.open = 0;
    cp.njobs = 0;
    cp.desc.len = 0;
    cp.path_text_ok = 0;
    task_path_free(&cp.path);
    if (task_path_copy(path, &cp.path) != SHOAL_OK) {
        task_path_format(path, cp.path_text, sizeof(cp.path_text));
        base_fatal("task: job %s: %s", cp.path_text, shoal_error_detail());
    }
    task_rand_init(&cp.rand, task_rt.seed, &cp.path);
}

static void setup(int fd, uint32_t copy, const task_path_t *path,
                  const uint8_t *state, size_t statelen, uint32_t flags)
{
    int mfd = memfd_create("shoal-task-out", 0);

    cp.fd = fd;
    begin_run(copy, path, flags);
    cp.held = calloc(task_rt.nlocks ? task_rt.nlocks : 1, sizeof(*cp.held));
    if (mfd < 0 || dup2(mfd, STDOUT_FILENO) < 0 || cp.held == NULL)
        base_fatal("task: job %s: output capture: %s", job_text(),
                   strerror(errno));
    close(mfd);
    cp.active = 1;
    atexit(on_exit_call);
    if (((flags & TASK_RUN_ABSENT) == 0 &&
         task_region_apply(&task_rt.region, state, statelen) != SHOAL_OK) ||
        task_region_track(&task_rt.region) != SHOAL_OK ||
        ((flags & TASK_RUN_ABSENT) && task_page_absent(fd, copy) != SHOAL_OK))
        fail(SHOAL_ERR_INTERNAL, "shared memory: %s", shoal_error_detail());
}

/*
 * A warm copy (SHOAL_TASK_REUSE): after its run, a copy whose pages came
 * on demand waits for its worker's next TM_RUN instead of exiting, and
 * starts that run with every shared page absent again, its output empty
 * and the job's state (path, random stream, blocks, locks) new.  The
 * worker ends it by closing the channel.  0 and the run's message (free
 * it), or -1 at the channel's end.
 */
static int next_run(uint8_t **msg_p, task_run_msg_t *m, uint32_t *copy_p,
                    task_path_t *path)
{
    for (;;) {
        size_t len;
        task_rd_t rd;
        if (task_chan_recv(cp.fd, msg_p, &len) != 1)
            return -1;
        task_rd_init(&rd, *msg_p, len);
        uint32_t type = task_rd_u32(&rd);
        *copy_p = task_rd_u32(&rd);
        if (type == TM_RUN && task_run_read(&rd, m) == SHOAL_OK &&
            (m->flags & TASK_RUN_ABSENT) &&
            task_path_decode(m->path, m->pathlen, path) == SHOAL_OK)
            return 0;
        free(*msg_p); /* an answer meant for the run before */
    }
}

/* 1 when a and b are jobs of one block of one parent: they start from
 * the same memory (the parent's at that SHOAL_PARBEGIN, the same in every
 * copy of the parent). */
static int siblings(const task_path_t *a, const task_path_t *b)
{
    task_path_t pa, pb;
    task_path_level_t la, lb;
    int same = 0;

    if (a->depth == 0 || a->depth != b->depth ||
        task_path_level(a, a->depth - 1, &la) != SHOAL_OK ||
        task_path_level(b, b->depth - 1, &lb) != SHOAL_OK ||
        la.block != lb.block)
        return 0;
    if (task_path_parent(a, &pa) != SHOAL_OK)
        return 0;
    if (task_path_parent(b, &pb) == SHOAL_OK) {
        same = task_path_equal(&pa, &pb);
        task_path_free(&pb);
    }
    task_path_free(&pa);
    return same;
}

static void rearm(uint32_t copy, const task_path_t *path, uint32_t flags)
{
    int sibling = siblings(&cp.path, path);

    begin_run(copy, path, flags);
    memset(cp.held, 0, (task_rt.nlocks ? task_rt.nlocks : 1) *
                           sizeof(*cp.held));
    /* (Nothing to empty after a run that printed nothing: two system
     * calls a job saved.) */
    if (cp.outlen > 0 && (ftruncate(STDOUT_FILENO, 0) != 0 ||
                          lseek(STDOUT_FILENO, 0, SEEK_SET) != 0))
        base_fatal("task: job %s: output capture: %s", job_text(),
                   strerror(errno));
    cp.active = 1;
    if (task_page_rearm(copy, sibling) != SHOAL_OK)
        fail(SHOAL_ERR_INTERNAL, "shared memory: %s", shoal_error_detail());
}

static void read_output(task_buf_t *b)
{
    struct stat st;

    if (fstat(STDOUT_FILENO, &st) != 0)
        fail(SHOAL_ERR_SYSTEM, "output: %s", strerror(errno));
    size_t n = (size_t)st.st_size, off = 0;
    cp.outlen = n;
    task_buf_u64(b, n);
    uint8_t *at = task_buf_room(b, n);
    while (at != NULL && off < n) {
        ssize_t r = pread(STDOUT_FILENO, at + off, n - off, (off_t)off);
        if (r <= 0)
            fail(SHOAL_ERR_SYSTEM, "output: %s", strerror(errno));
        off += (size_t)r;
    }
}

/* Runs the routine and sends TM_DONE. */
static void run_job(uint64_t fn, uint32_t width, uint32_t id,
                    const uint8_t *arg, size_t arglen)
{
    task_buf_t b = {0};
    int ret = 0;

    /* The bytes sit anywhere in a message: the routine gets them aligned
     * for any type. */
    void *args = arglen ? malloc(arglen) : NULL;
    if (arglen && args == NULL)
        fail(SHOAL_ERR_NOMEM, "%zu argument bytes", arglen);
    if (arglen)
        memcpy(args, arg, arglen);
    if (fn == TASK_ROOT_FN)
        ret = task_rt.prog->main(task_rt.argc, task_rt.argv);
    else
        ((shoal_task_fn_t)((uintptr_t)task_rt.prog->main + (uintptr_t)fn))(
            (int)width, (int)id, args, arglen);
    free(args);
    if (cp.open)
        fail(SHOAL_ERR_INVALID, "the job ended inside an open block");
    const char *lock = held_lock();
    if (lock != NULL)
        fail(SHOAL_ERR_INVALID, "the job ended inside the critical section "
                                "of lock %s",
             lock);
    fflush(stdout);
    task_msg_start(&b, TM_DONE, cp.copy);
    task_buf_u32(&b, (uint32_t)ret);
    task_buf_u32(&b, cp.nreq);
    if (add_blob(&b, 0) != SHOAL_OK)
        fail(SHOAL_ERR_NOMEM, "%s", shoal_error_detail());
    read_output(&b);
    task_buf_u32(&b, cp.nreq > UINT32_MAX - cp.subreq ? UINT32_MAX
                                                      : cp.nreq + cp.subreq);
    cp.active = 0;
    send_msg(&b);
}

void task_copy_main(int fd, uint32_t copy, const task_path_t *path,
                    uint64_t fn, uint32_t width, uint32_t id,
                    const uint8_t *arg, size_t arglen, const uint8_t *state,
                    size_t statelen, uint32_t flags)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setup(fd, copy, path, state, statelen, flags);
    run_job(fn, width, id, arg, arglen);
    /* Only runs that fetched their pages leave nothing behind in shared
     * memory that the next run could see; the worker decides whether it
     * sends one (task_worker.c). */
    while (flags & TASK_RUN_ABSENT) {
        uint8_t *msg;
        task_run_msg_t m;
        task_path_t p;
        if (next_run(&msg, &m, &copy, &p) != 0)
            break;
        task_page_source(m.src_rank, m.src_copy, m.src_block);
        rearm(copy, &p, m.flags);
        task_path_free(&p);
        run_job(m.fn, m.width, m.id, m.arg, m.arglen);
        free(msg);
    }
    _exit(0);
}
