/*
 * CPU binding.  A rank pinned to a core of its own keeps its caches and
 * never migrates.  With more ranks than CPUs one might expect pinning to
 * hurt (ranks queue on one CPU while another idles), but measurement says
 * otherwise: bench/binding.sh on 2 CPUs found core equal to or better than
 * none at 2, 3, 5 and 8 ranks for latency, message rate, bandwidth,
 * barrier, token ring and compute-then-barrier steps (the kernel does not
 * rebalance within a few milliseconds either).  So auto means core; the
 * numbers are in docs/PERFORMANCE.md.  The rule lives here alone so a
 * measurement can change it in one place.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "shoalrun.h"

int shoalrun_bind_resolve(int mode, int nranks, int ncpus)
{
    (void)nranks;
    (void)ncpus;
    return mode == SHOALRUN_BIND_AUTO ? SHOALRUN_BIND_CORE : mode;
}

const char *shoalrun_bind_name(int mode)
{
    switch (mode) {
    case SHOALRUN_BIND_CORE:
        return "core";
    case SHOALRUN_BIND_NONE:
        return "none";
    default:
        return "auto";
    }
}

int shoalrun_bind_cpus(int *cpus, int cap)
{
    cpu_set_t set;
    int n = 0;

    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        cpus[0] = 0;
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    if (n == 0)
        cpus[n++] = 0;
    return n;
}

void shoalrun_bind_rank(int rank, const int *cpus, int ncpus)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpus[rank % ncpus], &set);
    /* Failure leaves the rank unbound, which is still correct. */
    (void)sched_setaffinity(0, sizeof(set), &set);
}
