/*
 * Write tracking by page protection (task_track.h).
 *
 * Per page one atomic state: CLEAN (read-only, no twin), BUSY (a thread is
 * taking its twin) and DIRTY (twinned and writable).  The handler moves a
 * page CLEAN -> BUSY with a compare-and-swap, so of two threads that fault
 * on one page one takes the twin and the other waits for DIRTY; twins are
 * handed out by an atomic counter over the preallocated pool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_track.h"

enum { CLEAN = 0, BUSY = 1, DIRTY = 2, ABSENT = 3 };

struct task_track {
    uint8_t *base;
    size_t size, page, npages;
    _Atomic uint8_t *state; /* per page */
    uint32_t *twin_of;      /* per page: its pool slot, when DIRTY */
    uint32_t *page_of;      /* per slot: the page it holds */
    uint8_t *pool;          /* pool_pages twins */
    size_t pool_pages;
    atomic_size_t used; /* slots handed out */
    task_track_fetch_fn fetch; /* fills ABSENT pages */
    void *fetch_ctx;
    /* pages this run fetched (first touches), and the last run's for
     * task_track_prefetch, with whether they were written */
    uint32_t hot[TASK_TRACK_HOT], want[TASK_TRACK_HOT];
    uint8_t want_dirty[TASK_TRACK_HOT];
    size_t nhot, nwant;
};

static _Atomic(task_track_t *) regions[TASK_TRACK_MAX];
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static int nregions;
static struct sigaction prev_action; /* set before the first region shows */

/* ---- the fault handler (async-signal-safe only) -------------------------- */

static void say(const char *s)
{
    ssize_t r = write(STDERR_FILENO, s, strlen(s));
    (void)r;
}

/* The fault was not ours: what would have happened without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    if ((prev_action.sa_flags & SA_SIGINFO) &&
        prev_action.sa_sigaction != NULL) {
        prev_action.sa_sigaction(sig, si, uc);
        return;
    }
    if (prev_action.sa_handler != SIG_DFL &&
        prev_action.sa_handler != SIG_IGN) {
        prev_action.sa_handler(sig);
        return;
    }
    /* Default action (a fault cannot be ignored): die of this signal once
     * the handler returns, by the re-run fault or, for a sent signal, the
     * raise that is pending until then. */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* An ABSENT page was touched: fetch it (the page is writable only while
 * it is filled) and leave it CLEAN, read-only; a write runs again and
 * faults once more to be twinned.  1 when the access may run again. */
static int fetch_page(task_track_t *t, size_t page)
{
    uint8_t *p = t->base + page * t->page;

    if (mprotect(p, t->page, PROT_READ | PROT_WRITE) != 0) {
        say("shoal task: mprotect failed on an absent page\n");
        atomic_store(&t->state[page], ABSENT);
        return 0;
    }
    if (t->fetch(t->fetch_ctx, t, page, p) != 0) {
        mprotect(p, t->page, PROT_NONE);
        atomic_store(&t->state[page], ABSENT);
        return 0;
    }
    mprotect(p, t->page, PROT_READ);
    atomic_store(&t->state[page], CLEAN);
    if (t->nhot < TASK_TRACK_HOT)
        t->hot[t->nhot++] = (uint32_t)page;
    return 1;
}

/* Takes the twin of page p (BUSY, readable) into the next pool slot; 0
 * when the pool is out of twins. */
static int take_twin(task_track_t *t, size_t page, const uint8_t *p)
{
    size_t slot = atomic_fetch_add(&t->used, 1);
    if (slot >= t->pool_pages) {
        say("shoal task: write tracking ran out of twins (more pages "
            "written than the pool holds); treating the write as a "
            "crash\n");
        return 0;
    }
    memcpy(t->pool + slot * t->page, p, t->page);
    t->twin_of[page] = (uint32_t)slot;
    t->page_of[slot] = (uint32_t)page;
    return 1;
}

/* 1 when the access that faulted at addr may run again: it was the first
 * touch of an absent page, now fetched, or the first write to a page of
 * t, now twinned and writable, or it raced with another thread's first
 * access to the page; 0 when the fault is not ours to handle. */
static int first_write(task_track_t *t, uintptr_t addr)
{
    size_t page = (addr - (uintptr_t)t->base) / t->page;
    uint8_t expect = atomic_load(&t->state[page]);

    if (expect == ABSENT &&
        atomic_compare_exchange_strong(&t->state[page], &expect, BUSY))
        return fetch_page(t, page);
    if (expect != CLEAN ||
        !atomic_compare_exchange_strong(&t->state[page], &expect, BUSY)) {
        /* Another thread faulted on the page too and takes the twin or
         * fetches it (or has: our fault came before its mprotect).  Once
         * it is done the access can run again. */
        while (expect == BUSY)
            expect = atomic_load(&t->state[page]);
        return expect == DIRTY || expect == CLEAN;
    }
    uint8_t *p = t->base + page * t->page;
    if (!take_twin(t, page, p)) {
        atomic_store(&t->state[page], CLEAN);
        return 0;
    }
    if (mprotect(p, t->page, PROT_READ | PROT_WRITE) != 0) {
        say("shoal task: mprotect failed on a tracked page\n");
        atomic_store(&t->state[page], CLEAN);
        return 0;
    }
    atomic_store(&t->state[page], DIRTY);
    return 1;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    uintptr_t addr = (uintptr_t)si->si_addr;

    /* Only protection faults: an unmapped address (SEGV_MAPERR) or a
     * signal someone sent (si_code <= 0) is never a first write. */
    if (si->si_code == SEGV_ACCERR) {
        for (int i = 0; i < TASK_TRACK_MAX; i++) {
            task_track_t *t = atomic_load(&regions[i]);
            if (t != NULL && addr >= (uintptr_t)t->base &&
                addr - (uintptr_t)t->base < t->size) {
                if (first_write(t, addr))
                    return;
                break;
            }
        }
    }
    chain(sig, si, uc);
}

/* ---- regions ------------------------------------------------------------- */

static int install_handler(void)
{
    struct sigaction sa = {.sa_sigaction = on_segv,
                           .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
    struct sigaction now;

    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &prev_action) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task track: sigaction: %s",
                        strerror(errno));
    if (sigaction(SIGSEGV, NULL, &now) != 0 ||
        !(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_segv) {
        sigaction(SIGSEGV, &prev_action, NULL);
        return base_err(SHOAL_ERR_UNSUPPORTED, "task track: the SIGSEGV "
                        "handler did not stay installed (a sanitizer that "
                        "keeps SIGSEGV? ASAN_OPTIONS=allow_user_segv_"
                        "handler=1)");
    }
    return SHOAL_OK;
}

/* Puts the old handler back unless someone replaced ours meanwhile. */
static void uninstall_handler(void)
{
    struct sigaction now;

    if (sigaction(SIGSEGV, NULL, &now) == 0 &&
        (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv)
        sigaction(SIGSEGV, &prev_action, NULL);
}

static int overlaps(const uint8_t *base, size_t size)
{
    for (int i = 0; i < TASK_TRACK_MAX; i++) {
        task_track_t *t = atomic_load(&regions[i]);
        if (t != NULL && base < t->base + t->size && t->base < base + size)
            return 1;
    }
    return 0;
}

static int add_region(task_track_t *t)
{
    int s = SHOAL_OK, slot = -1;

    pthread_mutex_lock(&regions_lock);
    for (int i = 0; i < TASK_TRACK_MAX && slot < 0; i++)
        if (atomic_load(&regions[i]) == NULL)
            slot = i;
    if (overlaps(t->base, t->size))
        s = base_err(SHOAL_ERR_INVALID, "task track: %p+%zu overlaps a "
                     "tracked region", (void *)t->base, t->size);
    else if (slot < 0)
        s = base_err(SHOAL_ERR_AGAIN, "task track: %d regions are tracked "
                     "already", TASK_TRACK_MAX);
    else if (nregions == 0)
        s = install_handler();
    if (s == SHOAL_OK) {
        atomic_store(&regions[slot], t);
        nregions++;
    }
    pthread_mutex_unlock(&regions_lock);
    return s;
}

static void remove_region(task_track_t *t)
{
    pthread_mutex_lock(&regions_lock);
    for (int i = 0; i < TASK_TRACK_MAX; i++) {
        if (atomic_load(&regions[i]) == t) {
            atomic_store(&regions[i], NULL);
            if (--nregions == 0)
                uninstall_handler();
        }
    }
    pthread_mutex_unlock(&regions_lock);
}

static void free_track(task_track_t *t)
{
    if (t->pool != NULL && t->pool != MAP_FAILED)
        munmap(t->pool, t->pool_pages * t->page);
    free((void *)t->state);
    free(t->twin_of);
    free(t->page_of);
    free(t);
}

static int alloc_track(void *base, size_t size, size_t pool_pages,
                       task_track_t **out)
{
    task_track_t *t = calloc(1, sizeof *t);

    if (t == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task track");
    t->base = base;
    t->size = size;
    t->page = (size_t)sysconf(_SC_PAGESIZE);
    t->npages = size / t->page;
    t->pool_pages = pool_pages == 0 || pool_pages > t->npages ? t->npages
                                                               : pool_pages;
    t->state = calloc(t->npages, sizeof *t->state);
    t->twin_of = calloc(t->npages, sizeof *t->twin_of);
    t->page_of = calloc(t->pool_pages, sizeof *t->page_of);
    t->pool = mmap(NULL, t->pool_pages * t->page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->state == NULL || t->twin_of == NULL || t->page_of == NULL ||
        t->pool == MAP_FAILED) {
        free_track(t);
        return base_err(SHOAL_ERR_NOMEM, "task track: twins for %zu pages",
                        pool_pages);
    }
    *out = t;
    return SHOAL_OK;
}

int task_track_create(void *base, size_t size, size_t pool_pages,
                      task_track_t **out)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    task_track_t *t = NULL;
    int s;

    if (base == NULL || size == 0 || (uintptr_t)base % page != 0 ||
        size % page != 0 || size > UINT32_MAX * (uint64_t)page)
        return base_err(SHOAL_ERR_INVALID, "task track: %p+%zu is not a "
                        "non-empty run of whole %zu-byte pages", base, size,
                        page);
    s = alloc_track(base, size, pool_pages, &t);
    if (s != SHOAL_OK)
        return s;
    s = add_region(t);
    if (s == SHOAL_OK && mprotect(base, size, PROT_READ) != 0) {
        s = base_err(SHOAL_ERR_SYSTEM, "task track: mprotect %p+%zu: %s",
                     base, size, strerror(errno));
        remove_region(t);
    }
    if (s != SHOAL_OK) {
        free_track(t);
        return s;
    }
    *out = t;
    return SHOAL_OK;
}

void task_track_destroy(task_track_t *t)
{
    if (t == NULL)
        return;
    remove_region(t);
    mprotect(t->base, t->size, PROT_READ | PROT_WRITE);
    free_track(t);
}

int task_track_absent(task_track_t *t, task_track_fetch_fn fetch, void *ctx)
{
    if (fetch == NULL || atomic_load(&t->used) != 0)
        return base_err(SHOAL_ERR_INVALID, "task track: absent pages need "
                        "a fetch function and a region not written yet");
    t->fetch = fetch;
    t->fetch_ctx = ctx;
    /* Before any fault can read the states (no page is absent yet, so
     * the handler looks at none): a plain fill, not a store per page. */
    memset((void *)t->state, ABSENT, t->npages);
    atomic_thread_fence(memory_order_release);
    if (mprotect(t->base, t->size, PROT_NONE) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect %p+%zu: %s",
                        (void *)t->base, t->size, strerror(errno));
    return SHOAL_OK;
}

int task_track_rearm(task_track_t *t)
{
    if (t->fetch == NULL)
        return base_err(SHOAL_ERR_INVALID, "task track: rearm without "
                        "absent pages");
    for (size_t i = 0; i < t->nhot; i++) {
        t->want[i] = t->hot[i];
        t->want_dirty[i] = atomic_load(&t->state[t->hot[i]]) == DIRTY;
    }
    t->nwant = t->nhot;
    t->nhot = 0;
    atomic_store(&t->used, 0);
    memset((void *)t->state, ABSENT, t->npages);
    atomic_thread_fence(memory_order_release);
    if (mprotect(t->base, t->size, PROT_NONE) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect %p+%zu: %s",
                        (void *)t->base, t->size, strerror(errno));
    return SHOAL_OK;
}

int task_track_prefetch(task_track_t *t, task_track_peek_fn peek)
{
    int n = 0;

    for (size_t i = 0; i < t->nwant; i++) {
        size_t page = t->want[i];
        uint8_t *p = t->base + page * t->page;
        uint8_t expect = ABSENT;
        if (!atomic_compare_exchange_strong(&t->state[page], &expect, BUSY))
            continue;
        if (mprotect(p, t->page, PROT_READ | PROT_WRITE) != 0) {
            atomic_store(&t->state[page], ABSENT);
            return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                            strerror(errno));
        }
        if (peek(t->fetch_ctx, page, p) != 1) {
            mprotect(p, t->page, PROT_NONE);
            atomic_store(&t->state[page], ABSENT);
            break;
        }
        if (t->nhot < TASK_TRACK_HOT)
            t->hot[t->nhot++] = (uint32_t)page;
        n++;
        /* Written last time: twinned now, writable (no write fault). */
        if (t->want_dirty[i] && take_twin(t, page, p)) {
            atomic_store(&t->state[page], DIRTY);
            continue;
        }
        if (mprotect(p, t->page, PROT_READ) != 0)
            return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                            strerror(errno));
        atomic_store(&t->state[page], CLEAN);
    }
    t->nwant = 0;
    return n;
}

int task_track_rewind(task_track_t *t)
{
    size_t n = task_track_dirty_count(t);
    int s = SHOAL_OK;

    for (size_t i = 0; i < n; i++) {
        uint32_t page = t->page_of[i];
        uint8_t *p = t->base + (size_t)page * t->page;
        if (atomic_load(&t->state[page]) != DIRTY)
            continue; /* its twinning failed */
        memcpy(p, t->pool + i * t->page, t->page);
        if (mprotect(p, t->page, PROT_READ) != 0)
            s = base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                         strerror(errno));
        atomic_store(&t->state[page], CLEAN);
    }
    atomic_store(&t->used, 0);
    return s;
}

int task_track_fill(task_track_t *t, size_t page, const void *data)
{
    uint8_t expect = ABSENT;

    if (page >= t->npages || t->fetch == NULL ||
        !atomic_compare_exchange_strong(&t->state[page], &expect, BUSY))
        return 0;
    uint8_t *p = t->base + page * t->page;
    if (mprotect(p, t->page, PROT_READ | PROT_WRITE) != 0) {
        atomic_store(&t->state[page], ABSENT);
        return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                        strerror(errno));
    }
    memcpy(p, data, t->page);
    if (mprotect(p, t->page, PROT_READ) != 0) {
        /* (never left writable and untracked) */
        mprotect(p, t->page, PROT_NONE);
        atomic_store(&t->state[page], ABSENT);
        return base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                        strerror(errno));
    }
    atomic_store(&t->state[page], CLEAN);
    return 1;
}

int task_track_is_present(const task_track_t *t, size_t page)
{
    if (page >= t->npages)
        return 0;
    uint8_t s = atomic_load(&t->state[page]);
    return s == CLEAN || s == DIRTY;
}

size_t task_track_page_size(const task_track_t *t)
{
    return t->page;
}

size_t task_track_dirty_count(const task_track_t *t)
{
    size_t used = atomic_load(&t->used);

    return used < t->pool_pages ? used : t->pool_pages;
}

int task_track_is_dirty(const task_track_t *t, size_t page)
{
    return page < t->npages && atomic_load(&t->state[page]) == DIRTY;
}

const void *task_track_twin(const task_track_t *t, size_t page)
{
    if (!task_track_is_dirty(t, page))
        return NULL;
    return t->pool + (size_t)t->twin_of[page] * t->page;
}

static int by_page(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

int task_track_dirty_pages(const task_track_t *t, uint32_t **pages_p,
                           size_t *n_p)
{
    size_t n = task_track_dirty_count(t);
    uint32_t *pages = malloc((n ? n : 1) * sizeof *pages);

    if (pages == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task track: %zu pages", n);
    /* Slots are in the order of first writes. */
    memcpy(pages, t->page_of, n * sizeof *pages);
    qsort(pages, n, sizeof *pages, by_page);
    *pages_p = pages;
    *n_p = n;
    return SHOAL_OK;
}

int task_track_collect(task_track_t *t, task_diff_writer_t *w)
{
    uint32_t *pages = NULL;
    size_t n = 0;
    int s = task_track_dirty_pages(t, &pages, &n);

    for (size_t i = 0; i < n && s == SHOAL_OK; i++) {
        size_t at = (size_t)pages[i] * t->page;
        const uint8_t *twin = task_track_twin(t, pages[i]);
        if (twin == NULL)
            continue; /* its twinning failed: it was never written */
        s = task_diff_add(w, at, twin, t->base + at, t->page);
    }
    free(pages);
    return s;
}

int task_track_reset(task_track_t *t)
{
    size_t n = task_track_dirty_count(t);
    int s = SHOAL_OK;

    for (size_t i = 0; i < n; i++) {
        uint32_t page = t->page_of[i];
        if (mprotect(t->base + (size_t)page * t->page, t->page, PROT_READ))
            s = base_err(SHOAL_ERR_SYSTEM, "task track: mprotect: %s",
                         strerror(errno));
        atomic_store(&t->state[page], CLEAN);
    }
    atomic_store(&t->used, 0);
    return s;
}
