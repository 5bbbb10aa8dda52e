/*
 * Which ranks share this rank's node.  The launcher's PMI_process_mapping
 * says it without communication; when it is missing or unreadable, ranks
 * exchange node ids through the KVS.  A node id covers the host, its boot
 * and the network namespace, so ranks in different namespaces of one
 * machine count as different hosts (they cannot share our sockets' view).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/base_strmap.h"
#include "boot/boot_internal.h"

typedef struct map_block {
    long first, nnodes, ppn;
} map_block_t;

/* Cursor over the mapping text; whitespace is skipped everywhere. */
static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

static int expect(const char **p, const char *lit)
{
    *p = skip_ws(*p);
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0)
        return -1;
    *p += n;
    return 0;
}

/* A non-negative number of at most 9 digits (keeps sums in int range). */
static int number(const char **p, long *out)
{
    long v = 0;
    int digits = 0;

    *p = skip_ws(*p);
    while (isdigit((unsigned char)**p) && digits < 10) {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    if (digits == 0 || digits > 9)
        return -1;
    *out = v;
    return 0;
}

static int parse_block(const char **p, map_block_t *b)
{
    if (expect(p, "(") || number(p, &b->first) || expect(p, ",") ||
        number(p, &b->nnodes) || expect(p, ",") || number(p, &b->ppn) ||
        expect(p, ")"))
        return -1;
    return b->nnodes > 0 && b->ppn > 0 ? 0 : -1;
}

/* Fill node_of cyclically from the blocks. */
static void assign_nodes(const map_block_t *blocks, size_t nblocks, int size,
                         int *node_of)
{
    int r = 0;

    while (r < size) {
        for (size_t b = 0; b < nblocks && r < size; b++)
            for (long n = 0; n < blocks[b].nnodes && r < size; n++)
                for (long k = 0; k < blocks[b].ppn && r < size; k++)
                    node_of[r++] = (int)(blocks[b].first + n);
    }
}

int boot_mapping_parse(const char *text, int size, int *node_of)
{
    const char *p = text;
    size_t nblocks = 0, cap = strlen(text) / 7 + 1;
    map_block_t *blocks = calloc(cap, sizeof(*blocks));
    int status = SHOAL_OK;

    if (blocks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "mapping parse: out of memory");
    if (expect(&p, "(") || expect(&p, "vector"))
        goto err_syntax;
    while (expect(&p, ",") == 0) {
        if (nblocks == cap || parse_block(&p, &blocks[nblocks]) != 0)
            goto err_syntax;
        nblocks++;
    }
    if (nblocks == 0 || expect(&p, ")") || *skip_ws(p) != '\0')
        goto err_syntax;
    assign_nodes(blocks, nblocks, size, node_of);
    free(blocks);
    return SHOAL_OK;
err_syntax:
    status = base_err(SHOAL_ERR_PROTOCOL,
                      "PMI_process_mapping '%.80s' is not "
                      "(vector,(node,nodes,ranks-per-node),...)",
                      text);
    free(blocks);
    return status;
}

int boot_local_ranks(const int *node_of, int size, int rank, int **ranks_p,
                     int *local_rank_p, int *local_size_p)
{
    int n = 0, me = -1;
    int *ranks;

    for (int r = 0; r < size; r++)
        n += node_of[r] == node_of[rank];
    ranks = malloc((size_t)n * sizeof(*ranks));
    if (ranks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    n = 0;
    for (int r = 0; r < size; r++) {
        if (node_of[r] != node_of[rank])
            continue;
        if (r == rank)
            me = n;
        ranks[n++] = r;
    }
    *ranks_p = ranks;
    *local_rank_p = me;
    *local_size_p = n;
    return SHOAL_OK;
}

static void read_boot_id(char *out, size_t cap)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

    out[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(out, (int)cap, f) == NULL)
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

void boot_node_id(char *out, size_t cap)
{
    char host[256] = "", bootid[64], text[512];
    struct stat st;
    unsigned long long netns = 0;

    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    read_boot_id(bootid, sizeof(bootid));
    if (stat("/proc/self/ns/net", &st) == 0)
        netns = (unsigned long long)st.st_ino;
    int n = snprintf(text, sizeof(text), "%s\n%s\n%llu", host, bootid, netns);
    uint64_t h = base_hash64(text, n > 0 ? (size_t)n : 0);
    snprintf(out, cap, "%016llx", (unsigned long long)h);
}

/* Give each distinct node id a small index, in order of first appearance. */
static int index_node(base_strmap_t *seen, const char *id, int *index_p)
{
    void *v = base_strmap_get(seen, id);

    if (v != NULL) {
        *index_p = (int)(intptr_t)v - 1;
        return SHOAL_OK;
    }
    *index_p = (int)seen->len;
    return base_strmap_put(seen, id, (void *)(intptr_t)(*index_p + 1), NULL);
}

int boot_nodes_by_exchange(const boot_backend_t *be, int rank, int size,
                           const char *key, const char *node_id,
                           int *node_of)
{
    base_strmap_t seen;
    char id[64];
    size_t len;
    int status = boot_kvs_put(&be->kvs, rank, key, node_id, strlen(node_id));

    if (status == SHOAL_OK)
        status = be->fence(be->kvs.ctx);
    if (status != SHOAL_OK)
        return status;
    base_strmap_init(&seen);
    for (int r = 0; r < size && status == SHOAL_OK; r++) {
        status = boot_kvs_get(&be->kvs, r, key, id, sizeof(id) - 1, &len);
        if (status != SHOAL_OK)
            break;
        id[len] = '\0';
        status = index_node(&seen, id, &node_of[r]);
    }
    base_strmap_fini(&seen);
    return status;
}
