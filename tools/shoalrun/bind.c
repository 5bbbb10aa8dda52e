/*
 * CPU binding.  A rank pinned to a core of its own keeps its caches and
 * never migrates; ranks pinned when there are more of them than CPUs would
 * queue behind each other while other CPUs idle, so auto pins only when
 * every rank gets a CPU.  The rule lives in shoalrun_bind_resolve alone so
 * measurements can change it in one place.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "shoalrun.h"

int shoalrun_bind_resolve(int mode, int nranks, int ncpus)
{
    if (mode != SHOALRUN_BIND_AUTO)
        return mode;
    return nranks <= ncpus ? SHOALRUN_BIND_CORE : SHOALRUN_BIND_NONE;
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
