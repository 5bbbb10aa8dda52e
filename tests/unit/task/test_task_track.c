/*
 * Write tracking: first writes are twinned and only they; collected diffs
 * hold exactly what changed since the last reset; faults outside tracked
 * regions go to the previous handler or kill the process as before (each
 * such case runs in a child process); the handler goes away with the last
 * region; two threads writing at once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_track.h"
#include "test.h"

static size_t page;

static uint8_t *map_pages(size_t n)
{
    void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    T_ASSERT(p != MAP_FAILED);
    return p;
}

/* Collects t's diff and checks that it turns before[] into mem[]. */
static void check_diff(task_track_t *t, const uint8_t *before,
                       const uint8_t *mem, size_t len, uint32_t want_runs)
{
    task_diff_writer_t w;
    const uint8_t *d;
    size_t dl;
    uint32_t runs;
    uint8_t *copy = malloc(len);

    task_diff_writer_init(&w, NULL, 0);
    T_OK(task_track_collect(t, &w));
    T_OK(task_diff_finish(&w, &d, &dl));
    T_OK(task_diff_check(d, dl, len, &runs, NULL));
    T_EQ(runs, want_runs);
    memcpy(copy, before, len);
    T_OK(task_diff_apply(d, dl, copy, len));
    T_ASSERT(memcmp(copy, mem, len) == 0);
    task_diff_writer_fini(&w);
    free(copy);
}

static void test_twins_and_diffs(void)
{
    enum { N = 16 };
    uint8_t *mem = map_pages(N), *before = malloc(N * page);
    task_track_t *t;
    volatile uint8_t sink = 0;

    for (size_t i = 0; i < N * page; i++)
        mem[i] = (uint8_t)(i * 7);
    memcpy(before, mem, N * page);
    T_OK(task_track_create(mem, N * page, 0, &t));
    T_EQ(task_track_page_size(t), page);
    for (size_t i = 0; i < N * page; i += 64)
        sink ^= mem[i]; /* reads do not dirty */
    T_EQ(task_track_dirty_count(t), 0);
    /* Written in a shuffled order; diffs come out in address order. */
    mem[15 * page + 100] = 1;
    mem[5 * page] = 2;
    mem[5 * page + 1] = 3;
    mem[1 * page + page - 1] = 4;
    mem[5 * page + 50] = mem[5 * page + 50]; /* same value: no change */
    T_EQ(task_track_dirty_count(t), 3);
    T_ASSERT(task_track_is_dirty(t, 1) && task_track_is_dirty(t, 5) &&
             task_track_is_dirty(t, 15) && !task_track_is_dirty(t, 2));
    T_ASSERT(task_track_twin(t, 2) == NULL);
    T_ASSERT(memcmp(task_track_twin(t, 5), before + 5 * page, page) == 0);
    check_diff(t, before, mem, N * page, 3);

    /* After a reset, the next diff is against the memory as it is now. */
    T_OK(task_track_reset(t));
    T_EQ(task_track_dirty_count(t), 0);
    memcpy(before, mem, N * page);
    mem[5 * page + 2] = 9;
    T_EQ(task_track_dirty_count(t), 1);
    check_diff(t, before, mem, N * page, 1);
    /* A page written back to its twin's bytes has no run. */
    mem[5 * page + 2] = before[5 * page + 2];
    check_diff(t, before, mem, N * page, 0);
    task_track_destroy(t);
    mem[3] = 1; /* writable again, no fault */
    T_EQ(mem[3], 1);
    munmap(mem, N * page);
    free(before);
    (void)sink;
}

static void test_bad_ranges(void)
{
    uint8_t *mem = map_pages(4);
    task_track_t *t, *u;

    T_ERR(task_track_create(mem + 1, page, 0, &t), SHOAL_ERR_INVALID);
    T_ERR(task_track_create(mem, page + 1, 0, &t), SHOAL_ERR_INVALID);
    T_ERR(task_track_create(mem, 0, 0, &t), SHOAL_ERR_INVALID);
    T_OK(task_track_create(mem, 2 * page, 0, &t));
    T_ERR(task_track_create(mem + page, 2 * page, 0, &u), SHOAL_ERR_INVALID);
    /* A second region beside the first works alongside it. */
    T_OK(task_track_create(mem + 2 * page, 2 * page, 0, &u));
    mem[0] = 1;
    mem[3 * page] = 1;
    T_EQ(task_track_dirty_count(t), 1);
    T_EQ(task_track_dirty_count(u), 1);
    task_track_destroy(u);
    task_track_destroy(t);
    munmap(mem, 4 * page);
}

/* Runs fn in a child; returns its wait status. */
static int in_child(void (*fn)(void))
{
    pid_t pid = fork();
    int st;

    T_ASSERT(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    T_ASSERT(waitpid(pid, &st, 0) == pid);
    return st;
}

static void set_default_segv(void)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};

    sigemptyset(&dfl.sa_mask);
    sigaction(SIGSEGV, &dfl, NULL);
}

static void child_write_outside(void)
{
    uint8_t *mem = map_pages(2), *ro = map_pages(1);
    task_track_t *t;

    set_default_segv();
    if (task_track_create(mem, 2 * page, 0, &t) != SHOAL_OK)
        _exit(3);
    mem[0] = 1; /* ours */
    mprotect(ro, page, PROT_READ);
    ro[0] = 1; /* not ours: a crash */
    _exit(4);
}

static void child_pool_exhausted(void)
{
    uint8_t *mem = map_pages(4);
    task_track_t *t;

    set_default_segv();
    if (task_track_create(mem, 4 * page, 2, &t) != SHOAL_OK)
        _exit(3);
    mem[0] = 1;
    mem[page] = 1;
    mem[2 * page] = 1; /* third page, two twins */
    _exit(4);
}

static void child_sent_signal(void)
{
    uint8_t *mem = map_pages(1);
    task_track_t *t;

    set_default_segv();
    if (task_track_create(mem, page, 0, &t) != SHOAL_OK)
        _exit(3);
    kill(getpid(), SIGSEGV);
    _exit(4);
}

static void prev_handler(int sig, siginfo_t *si, void *uc)
{
    _exit(42);
}

static void child_chain_to_previous(void)
{
    struct sigaction sa = {.sa_sigaction = prev_handler,
                           .sa_flags = SA_SIGINFO};
    uint8_t *mem = map_pages(2);
    task_track_t *t;

    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    if (task_track_create(mem, page, 0, &t) != SHOAL_OK)
        _exit(3);
    mem[0] = 1; /* ours: the previous handler does not see it */
    if (task_track_dirty_count(t) != 1)
        _exit(5);
    task_track_destroy(t);
    /* The previous handler is back. */
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    if (now.sa_sigaction != prev_handler)
        _exit(6);
    if (task_track_create(mem, page, 0, &t) != SHOAL_OK)
        _exit(3);
    mprotect(mem + page, page, PROT_READ);
    mem[page] = 1; /* not ours: to the previous handler */
    _exit(4);
}

static void test_foreign_faults(void)
{
    int st = in_child(child_write_outside);
    T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = in_child(child_pool_exhausted);
    T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = in_child(child_sent_signal);
    T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = in_child(child_chain_to_previous);
    T_ASSERT(WIFEXITED(st));
    T_EQ(WEXITSTATUS(st), 42);
}

typedef struct writer_arg {
    uint8_t *mem;
    int first;
} writer_arg_t;

/* Every other page, one byte at a time, many times. */
static void *writer(void *p)
{
    writer_arg_t *a = p;

    for (int round = 0; round < 50; round++)
        for (int pg = a->first; pg < 64; pg += 2)
            a->mem[pg * page + (size_t)round] = (uint8_t)(round + 1);
    return NULL;
}

/* Two threads fault on pages of one region at once (and, through the
 * shared first page, on the same page). */
static void test_threads(void)
{
    uint8_t *mem = map_pages(64);
    task_track_t *t;
    pthread_t th[2];
    writer_arg_t args[2] = {{mem, 0}, {mem, 1}};

    T_OK(task_track_create(mem, 64 * page, 0, &t));
    for (int i = 0; i < 2; i++)
        T_ASSERT(pthread_create(&th[i], NULL, writer, &args[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    T_EQ(task_track_dirty_count(t), 64);
    for (int pg = 0; pg < 64; pg++)
        T_ASSERT(memcmp(task_track_twin(t, (size_t)pg),
                        (uint8_t[64]){0}, 64) == 0);
    task_track_destroy(t);
    munmap(mem, 64 * page);
}

/* Pages on demand: fetch fills a page with its number; peek does too,
 * up to peek_left pages, then cannot. */
/* (volatile: fetch runs in the fault handler, behind the compiler's
 * back) */
static volatile int fetches, peeks, peek_left;

static int fill_fetch(void *ctx, task_track_t *t, size_t pg, void *dst)
{
    (void)ctx;
    (void)t;
    fetches++;
    memset(dst, (int)(pg + 1), page);
    return 0;
}

static int fill_peek(void *ctx, size_t pg, void *dst)
{
    (void)ctx;
    if (peek_left-- <= 0)
        return 0;
    peeks++;
    memset(dst, (int)(pg + 1), page);
    return 1;
}

/* A run reads page 2 and writes page 6; after a rearm the next run gets
 * both without a fault, 6 twinned and writable (its diff holds exactly
 * the next write), and pages the peek cannot fill fault as before; the
 * one after that, which touched nothing, prefetches nothing. */
static void test_prefetch(void)
{
    enum { N = 8 };
    uint8_t *raw = map_pages(N);
    volatile uint8_t *mem = raw;
    volatile uint8_t sink;
    task_track_t *t;

    T_OK(task_track_create(raw, N * page, 0, &t));
    T_OK(task_track_absent(t, fill_fetch, NULL));
    sink = mem[2 * page];
    mem[6 * page + 1] = 0x55;
    T_EQ(fetches, 2);
    T_EQ(sink, 3);
    T_OK(task_track_rearm(t));
    T_ASSERT(!task_track_is_present(t, 2) && !task_track_is_present(t, 6));
    peek_left = 2;
    T_EQ(task_track_prefetch(t, fill_peek), 2);
    T_EQ(peeks, 2);
    T_ASSERT(task_track_is_present(t, 2) && !task_track_is_dirty(t, 2));
    T_ASSERT(task_track_is_dirty(t, 6));
    T_EQ(mem[6 * page + 1], 7); /* the peeked bytes, not the last run's */
    T_EQ(mem[2 * page + 9], 3);
    mem[6 * page + 3] = 0x66; /* no fault: twinned already */
    T_EQ(fetches, 2);
    uint8_t *before = malloc(N * page), *now = malloc(N * page);
    memset(before, 0, N * page);
    memset(now, 0, N * page);
    memset(before + 6 * page, 7, page);
    memcpy(now + 6 * page, raw + 6 * page, page);
    T_EQ(task_track_dirty_count(t), 1);
    T_ASSERT(memcmp(task_track_twin(t, 6), before + 6 * page, page) == 0);
    {
        /* Only page 6 is tracked dirty: compare that page alone. */
        task_diff_writer_t w;
        const uint8_t *d;
        size_t dl;
        uint32_t runs;
        task_diff_writer_init(&w, NULL, 0);
        T_OK(task_track_collect(t, &w));
        T_OK(task_diff_finish(&w, &d, &dl));
        T_OK(task_diff_check(d, dl, N * page, &runs, NULL));
        T_EQ(runs, 1);
        T_OK(task_diff_apply(d, dl, before, N * page));
        T_ASSERT(memcmp(before + 6 * page, now + 6 * page, page) == 0);
        task_diff_writer_fini(&w);
    }
    sink = mem[4 * page]; /* never touched before: a fault */
    T_EQ(fetches, 3);
    /* The peek fails at once: everything stays absent, touches fault. */
    T_OK(task_track_rearm(t));
    peek_left = 0;
    T_EQ(task_track_prefetch(t, fill_peek), 0);
    T_ASSERT(!task_track_is_present(t, 2) && !task_track_is_present(t, 6));
    sink = mem[6 * page];
    T_EQ(fetches, 4);
    /* A run that touched only page 6: the next prefetches it alone. */
    T_OK(task_track_rearm(t));
    peek_left = 8;
    T_EQ(task_track_prefetch(t, fill_peek), 1);
    T_ASSERT(!task_track_is_present(t, 2) && task_track_is_present(t, 6));
    task_track_destroy(t);
    munmap(raw, N * page);
    free(before);
    free(now);
    (void)sink;
}

/* A waiting parent takes a page its children asked for (task_page.c):
 * an absent page filled from outside the handler reads without a fault,
 * is clean (not in the diff), and its first write twins it against the
 * filled bytes; a present page is left alone; out of range is refused. */
static void test_fill(void)
{
    enum { N = 4 };
    uint8_t *raw = map_pages(N);
    volatile uint8_t *mem = raw;
    uint8_t *data = malloc(page);
    task_track_t *t;

    T_OK(task_track_create(raw, N * page, 0, &t));
    T_EQ(task_track_fill(t, 1, data), 0); /* not absent: nothing to do */
    T_OK(task_track_absent(t, fill_fetch, NULL));
    fetches = 0;
    memset(data, 0x42, page);
    T_EQ(task_track_fill(t, 1, data), 1);
    T_ASSERT(task_track_is_present(t, 1) && !task_track_is_dirty(t, 1));
    T_EQ(mem[page + 17], 0x42);
    T_EQ(fetches, 0);
    memset(data, 0x43, page);
    T_EQ(task_track_fill(t, 1, data), 0); /* present now: untouched */
    T_EQ(mem[page + 17], 0x42);
    T_EQ(task_track_fill(t, N, data), 0);
    T_EQ(task_track_dirty_count(t), 0);
    mem[page + 3] = 0x99;
    T_EQ(fetches, 0);
    T_ASSERT(task_track_is_dirty(t, 1));
    uint8_t *twin = malloc(page);
    memset(twin, 0x42, page);
    T_ASSERT(memcmp(task_track_twin(t, 1), twin, page) == 0);
    T_ASSERT(!task_track_is_present(t, 2));
    (void)mem[2 * page]; /* the others still fault */
    T_EQ(fetches, 1);
    task_track_destroy(t);
    munmap(raw, N * page);
    free(data);
    free(twin);
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    test_twins_and_diffs();
    test_bad_ranges();
    test_foreign_faults();
    test_threads();
    test_prefetch();
    test_fill();
    return 0;
}
