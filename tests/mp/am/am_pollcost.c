/*
 * What an idle progress call costs: shoal_poll in a loop with nothing to
 * deliver, as ns per call, and the cost of one raw epoll_wait(0) on an
 * empty set for comparison.  Run it with shared memory only, with
 * SHOAL_WIRES=tcp (adaptive TCP polling) and with SHOAL_WIRES=tcp
 * SHOAL_TCP_POLL_MAX=1 (a socket poll on every call); docs/TCP.md quotes
 * the numbers.  Registered as a smoke test (it checks nothing but runs).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "shoal.h"
#include "test.h"

#define CALLS 2000000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double best_of(shoal_ep_t *ep, int reps)
{
    double best = 1e30;

    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (int i = 0; i < CALLS; i++)
            if (shoal_poll(ep) < 0)
                T_FAIL("shoal_poll failed");
        double ns = (now_ns() - t0) / CALLS;
        if (ns < best)
            best = ns;
    }
    return best;
}

static double epoll_ns(void)
{
    struct epoll_event ev;
    int fd = epoll_create1(0);
    double best = 1e30;

    for (int r = 0; r < 5; r++) {
        double t0 = now_ns();
        for (int i = 0; i < CALLS / 10; i++)
            epoll_wait(fd, &ev, 1, 0);
        double ns = (now_ns() - t0) / (CALLS / 10);
        if (ns < best)
            best = ns;
    }
    close(fd);
    return best;
}

int main(void)
{
    shoal_ep_t *ep;
    shoal_ep_params_t p = {.field_mask = 0};

    T_OK(shoal_init(NULL));
    T_OK(shoal_ep_create(&p, &ep));
    T_OK(shoal_barrier(ep));
    double poll = best_of(ep, 5);
    T_OK(shoal_barrier(ep));
    if (shoal_rank() == 0)
        printf("idle shoal_poll: %.1f ns per call; raw epoll_wait(0): %.1f ns\n",
               poll, epoll_ns());
    T_OK(shoal_finalize());
    return 0;
}
