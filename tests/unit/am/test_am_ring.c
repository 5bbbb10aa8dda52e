/*
 * The ring of watches (src/am/am_ring.c, docs/FT.md): am_ring_plan over
 * placements.  Whatever the placement (blocks per host, cyclic, hosts of
 * unequal rank counts, random) and whichever ranks are dead, every live
 * rank that has a live rank on another host is watched by one of them,
 * and only a rank alone with its host's ranks has no watcher; with hosts
 * of equal rank counts (blocks or cyclic) each rank watches exactly one,
 * the one of its own index on the next host.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "test.h"

#define MAXN 97

typedef struct plan {
    int n, m;
    int host[MAXN], dead[MAXN], live[MAXN], watcher[MAXN], load[MAXN];
} plan_t;

/* List the live ranks host by host, plan, and check the plan. */
static void run(plan_t *p)
{
    p->m = 0;
    for (int h = 0; h < MAXN; h++)
        for (int r = 0; r < p->n; r++)
            if (p->host[r] == h && !p->dead[r])
                p->live[p->m++] = r;
    for (int r = 0; r < p->n; r++) {
        p->watcher[r] = -2; /* untouched */
        p->load[r] = 0;
    }
    am_ring_plan(p->m, p->live, p->host, p->watcher);
    for (int i = 0; i < p->m; i++) {
        int r = p->live[i], w = p->watcher[r], elsewhere = 0;
        for (int j = 0; j < p->m; j++)
            elsewhere |= p->host[p->live[j]] != p->host[r];
        if (!elsewhere) {
            if (w != -1)
                T_FAIL("n %d: rank %d, alone with its host, has watcher %d",
                       p->n, r, w);
            continue;
        }
        if (w < 0 || w >= p->n)
            T_FAIL("n %d: rank %d (host %d) has no watcher (%d)", p->n, r,
                   p->host[r], w);
        if (p->dead[w] || p->host[w] == p->host[r])
            T_FAIL("n %d: rank %d (host %d) is watched by rank %d (host %d, "
                   "%s)", p->n, r, p->host[r], w, p->host[w],
                   p->dead[w] ? "dead" : "the same host");
        p->load[w]++;
    }
}

static void place_block(plan_t *p, int n, int k)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    for (int r = 0; r < n; r++)
        p->host[r] = (int)((long)r * k / n);
}

static void place_cyclic(plan_t *p, int n, int k)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    for (int r = 0; r < n; r++)
        p->host[r] = r % k;
}

/* Hosts of equal rank counts: each rank watches exactly one, and the
 * i-th rank of a host is watched by the i-th of the host before it. */
static void test_equal_hosts(void)
{
    plan_t p;

    for (int k = 2; k <= 8; k++)
        for (int per = 1; per <= 6; per++)
            for (int cyc = 0; cyc < 2; cyc++) {
                int n = k * per;
                if (cyc)
                    place_cyclic(&p, n, k);
                else
                    place_block(&p, n, k);
                run(&p);
                for (int r = 0; r < n; r++) {
                    T_EQ(p.load[r], 1);
                    int w = p.watcher[r], idx = 0, widx = 0;
                    for (int s = 0; s < r; s++)
                        idx += p.host[s] == p.host[r];
                    for (int s = 0; s < w; s++)
                        widx += p.host[s] == p.host[w];
                    T_EQ(p.host[w], (p.host[r] + k - 1) % k);
                    T_EQ(widx, idx);
                }
            }
}

/* The placements the old ring missed: 6 ranks cyclic on 3 hosts (rank 4
 * had no watcher), 5 in blocks on 2 hosts of 3 and 2 (rank 2 had none),
 * and a host of 3 next to a host of 1, whose rank watches all three. */
static void test_known_cases(void)
{
    plan_t p;

    place_cyclic(&p, 6, 3);
    run(&p);
    T_ASSERT(p.watcher[4] >= 0 && p.host[p.watcher[4]] != 1);
    place_block(&p, 5, 2);
    run(&p);
    T_ASSERT(p.watcher[2] >= 3);
    memset(&p, 0, sizeof(p));
    p.n = 4;
    p.host[3] = 1;
    run(&p);
    T_EQ(p.load[3], 3);
    T_EQ(p.watcher[3] >= 0 && p.watcher[3] <= 2, 1);
    /* One host left alive: nobody watches anyone. */
    place_block(&p, 8, 2);
    for (int r = 4; r < 8; r++)
        p.dead[r] = 1;
    run(&p);
    for (int r = 0; r < 4; r++)
        T_EQ(p.watcher[r], -1);
}

/* Random placements and dead sets, including a whole host lost. */
static void test_random(void)
{
    plan_t p;
    unsigned seed = 12345;

    for (int iter = 0; iter < 20000; iter++) {
        int n = 1 + (int)(rand_r(&seed) % MAXN);
        int k = 1 + (int)(rand_r(&seed) % 9);
        memset(&p, 0, sizeof(p));
        p.n = n;
        for (int r = 0; r < n; r++) {
            p.host[r] = (int)(rand_r(&seed) % (unsigned)k);
            p.dead[r] = rand_r(&seed) % 5 == 0;
        }
        if (iter % 3 == 0) { /* a host lost whole */
            int lost = (int)(rand_r(&seed) % (unsigned)k);
            for (int r = 0; r < n; r++)
                p.dead[r] |= p.host[r] == lost;
        }
        run(&p);
    }
}

static const t_case_t cases[] = {
    {"equal_hosts", test_equal_hosts},
    {"known_cases", test_known_cases},
    {"random", test_random},
};

int main(int argc, char **argv)
{
    return T_RUN(cases, argc, argv);
}
