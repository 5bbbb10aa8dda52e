/*
 * The machine's own limits, measured by the same two processes on the
 * same cores as the active-message tests: moving one cache line between
 * them, copying memory in one thread, and waking a sleeping process.
 * Ranks 0 and 1 share one page (rank 0's memfd, which rank 1 maps through
 * pidfd_getfd).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "test.h"

typedef struct shared_page {
    _Atomic uint64_t a;
    char pad0[120];
    _Atomic uint64_t b;
    char pad1[120];
    _Atomic uint32_t word; /* futex */
    char pad2[124];
    _Atomic uint64_t stamp;
} shared_page_t;

static shared_page_t *page;
static volatile int page_ready;
static volatile uint64_t page_owner[2];

enum { H_SHARE = 20 };

static void on_share(shoal_token_t *t, const uint64_t *a, unsigned na,
                     void *payload, size_t len)
{
    page_owner[0] = a[0]; /* pid */
    page_owner[1] = a[1]; /* fd */
    page_ready = 1;
}

void bench_limits_setup(void)
{
    shoal_handler_entry_t h = {H_SHARE, on_share, "share",
                               SHOAL_HANDLER_REQUEST};

    T_OK(shoal_ep_register(bench_ep, &h, 1));
    bench_barrier();
    if (bench_rank == 0) {
        int fd = memfd_create("shoal-bench", MFD_CLOEXEC);
        T_ASSERT(fd >= 0 && ftruncate(fd, 4096) == 0);
        page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        T_ASSERT(page != MAP_FAILED);
        uint64_t a[2] = {(uint64_t)getpid(), (uint64_t)fd};
        if (bench_size > 1)
            T_OK(shoal_am_request_short(bench_ep, 1, H_SHARE, a, 2));
    } else if (bench_rank == 1) {
        T_OK(SHOAL_WAIT_UNTIL(bench_ep, page_ready));
        int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)page_owner[0], 0);
        int fd = pidfd < 0 ? -1
                           : (int)syscall(SYS_pidfd_getfd, pidfd,
                                          (int)page_owner[1], 0);
        if (fd < 0)
            T_SKIP("cannot share a page with rank 0 (pidfd_getfd)");
        page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        T_ASSERT(page != MAP_FAILED);
        close(fd);
        close(pidfd);
    }
    bench_barrier();
}

double bench_cacheline_oneway(int iters)
{
    double ns = 0;

    bench_barrier();
    atomic_store(&page->a, 0);
    atomic_store(&page->b, 0);
    bench_barrier();
    if (bench_rank == 0) {
        uint64_t t0 = bench_now_ns();
        for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
            atomic_store_explicit(&page->a, i, memory_order_release);
            while (atomic_load_explicit(&page->b, memory_order_acquire) != i)
                ;
        }
        ns = (double)(bench_now_ns() - t0) / iters / 2;
    } else if (bench_rank == 1) {
        for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
            while (atomic_load_explicit(&page->a, memory_order_acquire) != i)
                ;
            atomic_store_explicit(&page->b, i, memory_order_release);
        }
    }
    bench_barrier();
    return ns;
}

double bench_memcpy_gbs(size_t size)
{
    static char *src, *dst;
    static size_t cap;
    int reps = (int)(2e9 / (double)size);

    if (size > cap) {
        free(src);
        free(dst);
        src = aligned_alloc(4096, size);
        dst = aligned_alloc(4096, size);
        memset(src, 1, size);
        memset(dst, 2, size);
        cap = size;
    }
    if (bench_opts.quick)
        reps /= 10;
    if (reps < 4)
        reps = 4;
    memcpy(dst, src, size);
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < reps; i++) {
        memcpy(dst, src, size);
        __asm__ __volatile__("" : : "r"(dst), "r"(src) : "memory");
    }
    return (double)size * reps / (double)(bench_now_ns() - t0);
}

static void futex(_Atomic uint32_t *w, int op, uint32_t v, const struct timespec *t)
{
    syscall(SYS_futex, (uint32_t *)w, op, v, t, NULL, 0);
}

double bench_futex_wake_us(double sleep_s)
{
    double us = 0;

    bench_barrier();
    atomic_store(&page->word, 0);
    bench_barrier();
    if (bench_rank == 0) {
        struct timespec ts = {(time_t)sleep_s,
                              (long)((sleep_s - (time_t)sleep_s) * 1e9)};
        nanosleep(&ts, NULL);
        uint64_t t0 = bench_now_ns();
        atomic_store(&page->word, 1);
        futex(&page->word, FUTEX_WAKE, 1, NULL);
        while (atomic_load(&page->word) != 2)
            sched_yield();
        us = (double)(atomic_load(&page->stamp) - t0) / 1e3;
    } else if (bench_rank == 1) {
        struct timespec limit = {30, 0};
        while (atomic_load(&page->word) == 0)
            futex(&page->word, FUTEX_WAIT, 0, &limit);
        atomic_store(&page->stamp, bench_now_ns());
        atomic_store(&page->word, 2);
    }
    bench_barrier();
    return us;
}

/*
 * The cost of handing a CPU to another process: rank 0 forks a child onto
 * its own CPU and they take turns with sched_yield.  This is what every
 * step costs when ranks outnumber CPUs.  The other ranks are asleep in a
 * barrier meanwhile (they waited long enough to stop yielding).
 */
double bench_yield_handoff_us(int iters)
{
    _Atomic uint64_t *turn;
    cpu_set_t set;
    double us = 0;
    pid_t child;

    bench_barrier();
    if (bench_rank != 0) {
        bench_barrier();
        return 0;
    }
    usleep(20000); /* let the others fall asleep in the barrier */
    turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    T_ASSERT(turn != MAP_FAILED);
    sched_getaffinity(0, sizeof(set), &set);
    if (CPU_COUNT(&set) != 1) { /* not bound: use the first CPU */
        int first = 0;
        while (!CPU_ISSET(first, &set))
            first++;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
    }
    cpu_set_t old;
    sched_getaffinity(0, sizeof(old), &old);
    sched_setaffinity(0, sizeof(set), &set);
    child = fork();
    T_ASSERT(child >= 0);
    if (child == 0) {
        for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
            while (atomic_load(turn) != 2 * i - 1)
                sched_yield();
            atomic_store(turn, 2 * i);
        }
        _exit(0);
    }
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 1; i <= (uint64_t)iters; i++) {
        atomic_store(turn, 2 * i - 1);
        while (atomic_load(turn) != 2 * i)
            sched_yield();
    }
    us = (double)(bench_now_ns() - t0) / iters / 2 / 1e3;
    waitpid(child, NULL, 0);
    munmap((void *)turn, 4096);
    sched_setaffinity(0, sizeof(old), &old);
    bench_barrier();
    return us;
}
