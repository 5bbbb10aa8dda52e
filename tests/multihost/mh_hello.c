/*
 * A rank of a job spread over namespace hosts, using only the boot layer
 * (PMI), so it needs no network wire:
 *   mh_hello PPN[,PPN...]
 * The list gives the ranks on each host in order (block placement).  Each
 * rank checks its rank, size, local rank and local size against it, checks
 * that the locality from PMI_process_mapping agrees with an exchange of
 * node ids (which tell network namespaces apart), publishes values, fences
 * twice and reads every other rank's, then prints one line:
 *   hello rank R of S host H local L of LS ns NETNS
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "boot/boot.h"
#include "boot/boot_internal.h"
#include "test.h"

#define MAX_HOSTS 64

static int ppn[MAX_HOSTS], nhosts;

static void parse(const char *text)
{
    while (*text != '\0' && nhosts < MAX_HOSTS) {
        char *end;
        ppn[nhosts++] = (int)strtol(text, &end, 10);
        text = *end == ',' ? end + 1 : end;
        if (end == text && *text != '\0')
            T_FAIL("bad PPN list");
    }
}

/* Which host (by the placement) holds rank r, and its first rank. */
static int host_of(int r, int *first_p)
{
    int first = 0;

    for (int h = 0; h < nhosts; h++) {
        if (r < first + ppn[h]) {
            *first_p = first;
            return h;
        }
        first += ppn[h];
    }
    T_FAIL("rank %d beyond the placement", r);
}

static void check_locality(const boot_info_t *in)
{
    int first, h = host_of(in->rank, &first);
    int *node_of = calloc((size_t)in->size, sizeof(int));
    int *ranks = NULL, lr = -1, ls = 0;

    T_EQ(in->local_size, ppn[h]);
    T_EQ(in->local_rank, in->rank - first);
    for (int i = 0; i < in->local_size; i++)
        T_EQ(in->local_ranks[i], first + i);
    T_ASSERT(node_of != NULL);
    T_OK(boot_nodes_by_exchange(boot_backend(), in->rank, in->size, "mh-node",
                                in->node_id, node_of));
    T_OK(boot_local_ranks(node_of, in->size, in->rank, &ranks, &lr, &ls));
    T_EQ(ls, in->local_size);
    T_EQ(lr, in->local_rank);
    free(ranks);
    free(node_of);
}

static void exchange(const boot_info_t *in, int round)
{
    char key[32], val[128], got[128];
    size_t len;

    snprintf(key, sizeof(key), "v%d", round);
    snprintf(val, sizeof(val), "round %d rank %d %s", round, in->rank,
             in->node_id);
    T_OK(boot_put(key, val, strlen(val)));
    T_OK(boot_fence());
    for (int r = 0; r < in->size; r++) {
        char want[64];
        T_OK(boot_get(r, key, got, sizeof(got) - 1, &len));
        got[len] = '\0';
        snprintf(want, sizeof(want), "round %d rank %d ", round, r);
        T_ASSERT(strncmp(got, want, strlen(want)) == 0);
    }
}

int main(int argc, char **argv)
{
    const boot_info_t *in = NULL;
    struct stat st;
    int total = 0, first;

    if (argc < 2)
        T_FAIL("usage: mh_hello PPN[,PPN...]");
    parse(argv[1]);
    for (int h = 0; h < nhosts; h++)
        total += ppn[h];
    T_OK(boot_init(&in));
    T_RANK(in->rank);
    T_EQ(in->size, total);
    T_STREQ(in->backend, "pmi1");
    check_locality(in);
    exchange(in, 0);
    exchange(in, 1);
    T_OK(boot_barrier());
    if (stat("/proc/self/ns/net", &st) != 0)
        st.st_ino = 0;
    printf("hello rank %d of %d host %d local %d of %d ns %llu\n", in->rank,
           in->size, host_of(in->rank, &first), in->local_rank, in->local_size,
           (unsigned long long)st.st_ino);
    T_OK(boot_fini());
    return 0;
}
