/*
 * The ring of watches (docs/FT.md, "How deaths are noticed"), SHOAL_FT
 * only.
 *
 * A rank alone on its host has no neighbour watching its process, and
 * with connections opened on first use nobody may have one to it.  So
 * every rank is watched by a rank of another host: the watcher keeps a
 * connection to it and sends it an empty system frame AM_SYS_BEAT every
 * beat period (1 s, or a quarter of SHOAL_FT_TIMEOUT when shorter), and
 * its wire then watches it as it watches every peer it sends to (a
 * connection closed by the dead process's kernel at once, a silent link
 * or host after the wire's timeout); the in-band notices (am_tell.c) tell
 * the rest.
 *
 * Who watches whom is a pure function of the placement and of the ranks
 * known dead (am_ring_plan), so it covers every rank whatever the
 * placement: blocks per host (srun's default), cyclic (srun -m cyclic),
 * hosts of unequal rank counts.  The live ranks are listed host by host;
 * the i-th of the c ranks of a host is watched by the rank
 * ((c - 1 - i) mod k) + 1 places before the host's first rank in that
 * list, cyclically, k being the number of live ranks on other hosts: the
 * k places before a host's first rank are exactly the other hosts'
 * ranks.  With blocks of equal hosts, the i-th rank of a host is so
 * watched by the i-th rank of the host before it, and each rank watches
 * one; a host of c ranks among k others loads each of its watchers with
 * at most ceil(c / k).  A host lost whole is then seen rank by rank, in
 * parallel, after the wire's timeout; a watcher lost with it is replaced
 * at the next beat once its death is known.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "am.h"

void am_ring_plan(int m, const int *live, const int *host, int *watcher)
{
    int a = 0;

    while (a < m) {
        int b = a + 1;
        while (b < m && host[live[b]] == host[live[a]])
            b++;
        int c = b - a, k = m - c;
        for (int i = 0; i < c; i++) {
            int r = live[a + i];
            if (k == 0) {
                watcher[r] = -1; /* every live rank is on this host */
                continue;
            }
            int back = 1 + (c - 1 - i) % k;
            watcher[r] = live[((a - back) % m + m) % m];
        }
        a = b;
    }
}

typedef struct ring_key {
    int64_t host;
    int rank;
} ring_key_t;

static int key_cmp(const void *x, const void *y)
{
    const ring_key_t *p = x, *q = y;

    if (p->host != q->host)
        return p->host < q->host ? -1 : 1;
    return (p->rank > q->rank) - (p->rank < q->rank);
}

int am_ring_init(void)
{
    int n = am.job->size;
    int64_t k = base_cfg.WIRES_FAKE_HOSTS > 1 ? base_cfg.WIRES_FAKE_HOSTS : 1;
    ring_key_t *keys = malloc((size_t)n * sizeof(*keys));

    am.ring_host = malloc((size_t)n * sizeof(int));
    am.ring_order = malloc((size_t)n * sizeof(int));
    am.ring_live = malloc((size_t)n * sizeof(int));
    am.ring_watcher = malloc((size_t)n * sizeof(int));
    if (keys == NULL || am.ring_host == NULL || am.ring_order == NULL ||
        am.ring_live == NULL || am.ring_watcher == NULL) {
        free(keys);
        am_ring_fini();
        return base_err(SHOAL_ERR_NOMEM, "SHOAL_FT: the watch of %d ranks",
                        n);
    }
    /* A host is a node of the launcher's placement and, for tests, a
     * pretend host on it (SHOAL_WIRES_FAKE_HOSTS).  Without the nodes
     * (not under SHOAL_FT: boot finds them then) each rank counts as a
     * host of its own. */
    for (int r = 0; r < n; r++) {
        int64_t node = am.job->node_of != NULL ? am.job->node_of[r] : r;
        keys[r].host = node * k + wire_fake_host(r, n);
        keys[r].rank = r;
    }
    qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
    for (int i = 0, h = -1; i < n; i++) {
        if (i == 0 || keys[i].host != keys[i - 1].host)
            h++;
        am.ring_order[i] = keys[i].rank;
        am.ring_host[keys[i].rank] = h;
    }
    free(keys);
    am.ring_watching = UINT64_MAX;
    return SHOAL_OK;
}

void am_ring_fini(void)
{
    free(am.ring_host);
    free(am.ring_order);
    free(am.ring_live);
    free(am.ring_watcher);
    am.ring_host = am.ring_order = am.ring_live = am.ring_watcher = NULL;
}

void am_ring_beat(uint64_t now)
{
    uint64_t period = 1000000000ull;
    int n = am.job->size, me = am.job->rank, m = 0;
    uint64_t watching = 0;

    if (am.ring_order == NULL || am.tell_stopped || am.in_handler ||
        now < am.ring_next_beat)
        return;
    if (base_cfg.FT_TIMEOUT > 0 && (uint64_t)base_cfg.FT_TIMEOUT / 4 < period)
        period = (uint64_t)base_cfg.FT_TIMEOUT / 4;
    am.ring_next_beat = now + period;
    for (int i = 0; i < n; i++) {
        int r = am.ring_order[i];
        if (r == me || !am.peers[r].dead)
            am.ring_live[m++] = r;
    }
    am_ring_plan(m, am.ring_live, am.ring_host, am.ring_watcher);
    char list[160];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < m; i++) {
        int r = am.ring_live[i];
        if (r == me || am.ring_watcher[r] != me)
            continue;
        watching = watching * 1000003 + (uint64_t)r + 1; /* the set, for the log */
        if (len + 16 < sizeof(list))
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
                                    len > 0 ? " " : "", r);
        /* A full channel is tried again at the next beat; an error is the
         * wire's, which reports the death itself. */
        (void)am_system_try(r, AM_SYS_BEAT, NULL, 0);
    }
    if (watching != am.ring_watching)
        base_debug("am", "SHOAL_FT: watching ranks [%s%s] of other hosts",
                   list, len + 16 >= sizeof(list) ? " ..." : "");
    am.ring_watching = watching;
}
