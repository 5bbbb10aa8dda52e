/*
 * Every rank publishes values (one larger than a PMI line, to exercise
 * chunking, and one empty), fences, and checks every other rank's; then
 * checks the locality boot derived against an exchange of node ids.  Run
 * under shoalrun, mpiexec.mpich (PMI-1 or PMI-2), mpirun.openmpi and srun
 * --mpi=pmix (PMIx), srun --mpi=pmi2, or alone (singleton).
 *
 *   mp_boot_kvs [--backend pmi1|pmi2|pmix|single] [--size N]
 *               [--ft-victim V | --ft-thread 1]
 *
 * With --ft-victim (under SHOAL_FT=1 and mpiexec.mpich
 * -disable-auto-cleanup; docs/FT.md, "Under MPICH's Hydra"): rank V kills
 * itself with SIGKILL once every rank is up, and every other rank must
 * hear of it from the launcher (boot_failed_rank: Hydra's SIGUSR1, then
 * PMI_dead_processes), once, within 10 s, and live on; a SIGUSR1 handler
 * the program installed before must still run.  With --ft-thread 1 a
 * thread runs before boot_init: no guardian (the library says so), the
 * SIGUSR1 handler all the same.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "boot/boot_internal.h"
#include "test.h"

#define BIG 5000

static const char *want_backend;
static int want_size = -1;
static int ft_victim = -1, ft_thread;
static volatile sig_atomic_t own_usr1;

static void count_usr1(int sig)
{
    (void)sig;
    own_usr1++;
}

static void *idle_thread(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

/* --ft-thread: a thread ran before boot_init, so no guardian. */
static void ft_threaded(const boot_info_t *in)
{
    T_ASSERT(boot_hydra_parent());
    T_ASSERT(boot_hydra_watching());
    T_OK(boot_barrier());
    printf("boot ft ok: rank %d has no guardian (a thread ran first)\n",
           in->rank);
    T_OK(boot_fini());
}

/* --ft-victim: the victim dies, the others are told by the launcher. */
static void ft_death(const boot_info_t *in)
{
    T_ASSERT(ft_victim >= 0 && ft_victim < in->size);
    /* A guardian process stands between Hydra's proxy and the rank. */
    T_ASSERT(!boot_hydra_parent());
    T_ASSERT(boot_hydra_watching());
    T_OK(boot_barrier());
    if (in->rank == ft_victim)
        raise(SIGKILL);
    uint64_t t0 = base_time_ns();
    int dead = -1;
    while (dead < 0 && base_time_ns() - t0 < 10000000000ull) {
        dead = boot_failed_rank();
        if (dead < 0)
            usleep(5000);
    }
    if (dead < 0)
        T_FAIL("rank %d: no word of rank %d's death from the launcher "
               "in 10 s", in->rank, ft_victim);
    double ms = (double)(base_time_ns() - t0) / 1e6;
    T_EQ(dead, ft_victim);
    T_ASSERT(own_usr1 > 0);
    /* Told once, however many SIGUSR1 come. */
    for (int i = 0; i < 20; i++) {
        T_EQ(boot_failed_rank(), -1);
        usleep(5000);
    }
    printf("boot ft ok: rank %d told of rank %d's death in %.1f ms\n",
           in->rank, dead, ms);
    T_OK(boot_fini());
}

static void fill_big(unsigned char *p, int rank, int round)
{
    for (int i = 0; i < BIG; i++)
        p[i] = (unsigned char)(i * 7 + rank * 13 + round);
}

/* Keys of a round: "small0", "big0", "empty0", ... (keys are write-once). */
static const char *key(const char *name, int round)
{
    static char buf[4][32];
    static int next;
    char *k = buf[next++ % 4];

    snprintf(k, 32, "%s%d", name, round);
    return k;
}

static void put_values(const boot_info_t *in, int round)
{
    unsigned char big[BIG];
    char small[64];

    snprintf(small, sizeof(small), "round %d from rank %d", round, in->rank);
    fill_big(big, in->rank, round);
    T_OK(boot_put(key("small", round), small, strlen(small)));
    T_OK(boot_put(key("big", round), big, sizeof(big)));
    T_OK(boot_put(key("empty", round), "", 0));
    T_ERR(boot_put(key("small", round), "again", 5), SHOAL_ERR_ALREADY);
}

static void check_rank(int r, int round)
{
    unsigned char big[BIG], want_big[BIG], tiny[8];
    char small[64], want[64];
    size_t len = 0;

    snprintf(want, sizeof(want), "round %d from rank %d", round, r);
    T_OK(boot_get(r, key("small", round), small, sizeof(small), &len));
    T_EQ(len, strlen(want));
    T_ASSERT(memcmp(small, want, len) == 0);
    fill_big(want_big, r, round);
    T_OK(boot_get(r, key("big", round), big, sizeof(big), &len));
    T_EQ(len, BIG);
    T_ASSERT(memcmp(big, want_big, BIG) == 0);
    T_ERR(boot_get(r, key("big", round), tiny, sizeof(tiny), &len),
          SHOAL_ERR_TOO_LARGE);
    T_EQ(len, BIG);
    T_OK(boot_get(r, key("empty", round), tiny, sizeof(tiny), &len));
    T_EQ(len, 0);
}

static void check_errors(const boot_info_t *in)
{
    char buf[8];
    size_t len;

    T_ERR(boot_get(0, "never-put", buf, sizeof(buf), &len),
          SHOAL_ERR_NOT_FOUND);
    T_ERR(boot_get(in->size, "small0", buf, sizeof(buf), &len),
          SHOAL_ERR_RANK);
    T_ERR(boot_get(-1, "small0", buf, sizeof(buf), &len), SHOAL_ERR_RANK);
    T_ERR(boot_put("has space", "x", 1), SHOAL_ERR_INVALID);
    T_ERR(boot_put("", "x", 1), SHOAL_ERR_INVALID);
}

static void check_info(const boot_info_t *in)
{
    char prefix[64];

    T_ASSERT(in->size >= 1 && in->rank >= 0 && in->rank < in->size);
    if (want_size >= 0)
        T_EQ(in->size, want_size);
    if (want_backend != NULL)
        T_STREQ(in->backend, want_backend);
    T_ASSERT(in->local_size >= 1 && in->local_size <= in->size);
    T_ASSERT(in->local_rank >= 0 && in->local_rank < in->local_size);
    T_EQ(in->local_ranks[in->local_rank], in->rank);
    for (int i = 1; i < in->local_size; i++)
        T_ASSERT(in->local_ranks[i - 1] < in->local_ranks[i]);
    /* Every launcher tested here runs all ranks on this one machine. */
    T_EQ(in->local_size, in->size);
    T_EQ(strlen(in->node_id), 16);
    boot_shm_prefix(in->jobid, prefix, sizeof(prefix));
    T_STREQ(in->shm_prefix, prefix);
    T_ASSERT(strncmp(prefix, "shoal-", 6) == 0 && strlen(prefix) == 23);
    if (getenv("PMI_JOBID") != NULL && strcmp(in->backend, "pmi1") == 0)
        T_STREQ(in->jobid, getenv("PMI_JOBID"));
}

/* The mapping-derived locality must match an exchange of node ids. */
static void check_locality_by_exchange(const boot_info_t *in)
{
    int *node_of = calloc((size_t)in->size, sizeof(int));
    int *ranks = NULL, lr = -1, ls = 0;

    T_ASSERT(node_of != NULL);
    T_OK(boot_nodes_by_exchange(boot_backend(), in->rank, in->size,
                                "test-node", in->node_id, node_of));
    T_OK(boot_local_ranks(node_of, in->size, in->rank, &ranks, &lr, &ls));
    T_EQ(ls, in->local_size);
    T_EQ(lr, in->local_rank);
    for (int i = 0; i < ls; i++)
        T_EQ(ranks[i], in->local_ranks[i]);
    free(ranks);
    free(node_of);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0)
            want_backend = argv[i + 1];
        else if (strcmp(argv[i], "--size") == 0)
            want_size = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ft-victim") == 0)
            ft_victim = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ft-thread") == 0)
            ft_thread = atoi(argv[i + 1]);
    }
}

int main(int argc, char **argv)
{
    const boot_info_t *in = NULL;

    parse_args(argc, argv);
    if (ft_victim >= 0)
        signal(SIGUSR1, count_usr1);
    if (ft_thread) {
        pthread_t t;
        T_ASSERT(pthread_create(&t, NULL, idle_thread, NULL) == 0);
        T_ASSERT(pthread_detach(t) == 0);
    }
    T_OK(boot_init(&in));
    T_RANK(in->rank);
    check_info(in);
    if (ft_thread) {
        ft_threaded(in);
        return 0;
    }
    if (ft_victim >= 0) {
        ft_death(in);
        return 0;
    }
    for (int round = 0; round < 2; round++) {
        /* A second round of new keys after a fence. */
        put_values(in, round);
        T_OK(boot_fence());
        for (int r = 0; r < in->size; r++)
            check_rank(r, round);
    }
    check_errors(in);
    check_locality_by_exchange(in);
    T_OK(boot_barrier());
    if (in->rank == 0)
        printf("boot kvs ok: %d ranks via %s, %d local, job %s\n", in->size,
               in->backend, in->local_size, in->jobid);
    T_OK(boot_fini());
    return 0;
}
