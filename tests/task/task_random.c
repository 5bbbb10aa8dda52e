/*
 * Random nested programs (tests/task): a seeded tree of jobs, each writing
 * its own part of a shared array from what its parent gave it, spawning
 * random blocks and folding its children's results into its part after
 * SHOAL_PAREND; every job also writes one common byte with the same value
 * (common CRCW).  The root then runs the same tree sequentially in private
 * memory, children one after another, and the two arrays must be equal.
 *
 *     task_random [seed [spin_us [trees]]]  (seed "" or none:
 *                                           TASK_TEST_SEED, else 1)
 *
 * With several trees, tree i uses seed + i, one after another.
 * spin_us makes each job compute that long, so that faults injected from
 * outside (task_faults.sh) land while jobs run.  With TASK_TEST_PROGRESS
 * set, each run of a job prints "ran <path>" to stderr as it ends.  Prints the seed, the job
 * count and a checksum; exits 1 with the first differing cell.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/task.h>

#define CELLS 8192
#define MAX_DEPTH 4
#define MAX_KIDS 5

SHOAL_SHARED int mem[CELLS];

typedef struct node {
    uint64_t key;
    uint32_t depth, lo, hi;
    uint32_t spin_us; /* in the arguments: children do not see the root's
                         private globals */
} node_t;

typedef void (*spawn_fn)(int *m, const node_t *kids, int n);


static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    return x ^ (x >> 33);
}

static uint64_t next(uint64_t *r)
{
    *r = mix(*r + 0x9e3779b97f4a7c15ull);
    return *r;
}

static volatile uint64_t sink;

/* Work that takes about spin_us; returns 0. */
static int spin(uint64_t x, uint64_t spin_us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (int i = 0; i < 1000; i++)
            x = mix(x);
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t us = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000u +
                      (uint64_t)(t.tv_nsec - t0.tv_nsec) / 1000u;
        if (us >= spin_us) {
            sink = x;
            return 0;
        }
    }
}

static unsigned jobs_run;

static void job(int *m, const node_t *n, spawn_fn spawn)
{
    uint64_t r = n->key;
    int in = m[n->lo];
    uint32_t lo = n->lo + 1, hi = n->hi;
    node_t kids[MAX_KIDS];
    int nk = 0;

    memset(kids, 0, sizeof(kids)); /* padding too: arguments are bytes */
    jobs_run++;
    m[0] = 7; /* every job: the same value */
    if (n->spin_us > 0)
        m[lo] += spin(r, n->spin_us); /* 0: only delays */
    if (n->depth < MAX_DEPTH && hi - lo >= 4 * MAX_KIDS && next(&r) % 4) {
        nk = 1 + (int)(next(&r) % MAX_KIDS);
        uint32_t step = (hi - lo) / (uint32_t)nk;
        for (int k = 0; k < nk; k++) {
            kids[k].key = mix(n->key ^ (uint64_t)k);
            kids[k].depth = n->depth + 1;
            kids[k].lo = lo + (uint32_t)k * step;
            kids[k].hi = lo + (uint32_t)(k + 1) * step;
            kids[k].spin_us = n->spin_us;
            m[kids[k].lo] = (int)((uint32_t)in * 31u + (uint32_t)k +
                                  (uint32_t)(next(&r) % 1000));
        }
        spawn(m, kids, nk);
        uint64_t acc = (uint64_t)in;
        for (int k = 0; k < nk; k++)
            for (uint32_t i = kids[k].lo; i < kids[k].hi; i += 7)
                acc = mix(acc ^ (uint64_t)(uint32_t)m[i]);
        m[n->lo] = (int)acc;
        return;
    }
    for (uint32_t i = lo; i < hi; i++)
        if (next(&r) % 3 == 0)
            m[i] = (int)(next(&r) ^ (uint64_t)in);
    m[n->lo] = (int)((uint32_t)in + 1u);
}

static void spawn_seq(int *m, const node_t *kids, int n)
{
    for (int k = 0; k < n; k++)
        job(m, &kids[k], spawn_seq);
}

static void spawn_par(int *m, const node_t *kids, int n);

SHOAL_TASK_ROUTINE(child)
{
    (void)width;
    (void)len;
    job(mem, &((const node_t *)arg)[id], spawn_par);
    if (getenv("TASK_TEST_PROGRESS") != NULL) {
        /* Every run of a job that finishes says so, straight out:
         * task_faults.sh's coordlate counts them. */
        char p[256];
        shoal_task_path(p, sizeof(p));
        fprintf(stderr, "ran %s\n", p);
    }
}

static void spawn_par(int *m, const node_t *kids, int n)
{
    (void)m;
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(n, child, kids, (size_t)n * sizeof(*kids));
    SHOAL_PAREND;
}

/* One tree: run in parallel, then sequentially; 0 when they agree. */
static int tree(uint64_t seed, uint32_t spin_us, int *ref)
{
    node_t root = {mix(seed), 0, 1, CELLS, spin_us};

    memset(mem, 0, sizeof(mem));
    memset(ref, 0, sizeof(mem));
    mem[1] = ref[1] = (int)seed;
    job(mem, &root, spawn_par);
    root.spin_us = 0;
    unsigned mid = jobs_run;
    job(ref, &root, spawn_seq);
    uint64_t sum = 0;
    for (int i = 0; i < CELLS; i++) {
        if (mem[i] != ref[i]) {
            printf("FAIL seed=%llu: cell %d is %d, sequentially %d\n",
                   (unsigned long long)seed, i, mem[i], ref[i]);
            return 1;
        }
        sum = mix(sum ^ (uint64_t)(uint32_t)mem[i]);
    }
    printf("ok seed=%llu jobs=%u sum=%016llx\n", (unsigned long long)seed,
           jobs_run - mid, (unsigned long long)sum);
    return 0;
}

static int task_main(int argc, char **argv)
{
    const char *env = getenv("TASK_TEST_SEED");
    uint64_t seed = argc > 1 && argv[1][0] ? strtoull(argv[1], NULL, 0)
                    : env != NULL ? strtoull(env, NULL, 0)
                                  : 1; /* not the time: every run alike */
    int trees = argc > 3 ? atoi(argv[3]) : 1;
    uint32_t spin_us = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 0;
    int *ref = calloc(CELLS, sizeof(int));

    if (ref == NULL)
        return 2;
    for (int t = 0; t < trees; t++)
        if (tree(seed + (uint64_t)t, spin_us, ref) != 0)
            return 1;
    free(ref);
    return 0;
}
SHOAL_TASK_MAIN(task_main)
