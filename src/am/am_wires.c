/*
 * Which wire serves which peer: a table, not code.
 *
 * SHOAL_WIRES lists wires in order of preference; a peer goes to the first
 * listed wire that is up and reaches it.  A rank reaches itself through its
 * own shared-memory rings whatever the list says (shm is always up: it also
 * carries this process's doorbell).  Shared memory reaches the ranks of
 * this host, or with SHOAL_WIRES_FAKE_HOSTS=K only those of the same
 * pretend host, so that one machine can test what spans hosts.  Adding a
 * wire is one entry in known[] below and its ops table in src/wire.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "am.h"

/* Every wire SHOAL_WIRES may name; all but shm are network wires. */
static const wire_ops_t *const known[] = {
    &wire_shm_ops,
    &wire_udp_ops,
    &wire_tcp_ops,
};

_Static_assert(BASE_ARRAY_SIZE(known) <= AM_WIRES_MAX, "AM_WIRES_MAX");

const wire_ops_t *am_wire_known(int i)
{
    return i >= 0 && (size_t)i < BASE_ARRAY_SIZE(known) ? known[i] : NULL;
}

/* ---- SHOAL_WIRES ---------------------------------------------------------- */

static void known_names(char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < BASE_ARRAY_SIZE(known) && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                 i > 0 ? ", " : "", known[i]->name);
}

static const wire_ops_t *find_known(const char *name, size_t len)
{
    for (size_t i = 0; i < BASE_ARRAY_SIZE(known); i++)
        if (strlen(known[i]->name) == len &&
            strncasecmp(known[i]->name, name, len) == 0)
            return known[i];
    return NULL;
}

/* w is in SHOAL_WIRES (as parsed so far). */
static int listed(const wire_ops_t *w)
{
    for (int i = 0; i < am.nlisted; i++)
        if (am.listed[i] == w)
            return 1;
    return 0;
}

/* Refused here, before any rank starts anything, so that a typo fails
 * every rank alike instead of running on other wires than meant. */
int am_wires_parse(const char *list)
{
    char names[64];
    const char *p = list;

    known_names(names, sizeof(names));
    am.nlisted = 0;
    am.shm_listed = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *item = p;
        size_t n = len;
        const wire_ops_t *w;

        while (n > 0 && isspace((unsigned char)item[0]))
            item++, n--;
        while (n > 0 && isspace((unsigned char)item[n - 1]))
            n--;
        if (n == 0 && p == list && p[len] == '\0')
            return base_err(SHOAL_ERR_CONFIG,
                            "SHOAL_WIRES is empty: list one or more of %s, "
                            "in order of preference",
                            names);
        if (n == 0)
            return base_err(SHOAL_ERR_CONFIG,
                            "SHOAL_WIRES=%s has an empty item: list wires "
                            "(%s) separated by single commas",
                            list, names);
        w = find_known(item, n);
        if (w == NULL)
            return base_err(SHOAL_ERR_CONFIG,
                            "SHOAL_WIRES=%s: unknown wire \"%.*s\" (known: "
                            "%s)",
                            list, (int)n, item, names);
        if (listed(w))
            return base_err(SHOAL_ERR_CONFIG,
                            "SHOAL_WIRES=%s lists \"%s\" twice", list,
                            w->name);
        am.listed[am.nlisted++] = w;
        am.shm_listed |= w == &wire_shm_ops;
        if (p[len] == '\0')
            return SHOAL_OK;
        p += len + 1;
    }
}

/* ---- which wire reaches whom ---------------------------------------------- */

static int shm_reaches(int rank)
{
    return wire_shm_ops.reaches(rank) &&
           wire_fake_host(rank, am.job->size) ==
               wire_fake_host(am.job->rank, am.job->size);
}

int am_wire_same_host(int rank)
{
    return shm_reaches(rank);
}

static int net_up(const wire_ops_t *w)
{
    for (int i = 0; i < am.nnet; i++)
        if (am.net[i].ops == w)
            return 1;
    return 0;
}

/* Asked once per peer, when it is first used: no hurry.  A wire whose
 * path to rank is still being probed ends the search with *pending set;
 * with pending NULL (a handler, which may not wait) it is passed over. */
const wire_ops_t *am_wire_for(int rank, const wire_ops_t **pending)
{
    if (pending != NULL)
        *pending = NULL;
    if (rank == am.job->rank)
        return &wire_shm_ops;
    for (int i = 0; i < am.nlisted; i++) {
        const wire_ops_t *w = am.listed[i];
        if (w == &wire_shm_ops) {
            if (shm_reaches(rank))
                return w;
            continue;
        }
        if (!net_up(w) || !w->reaches(rank))
            continue;
        int path = w->path != NULL ? w->path(rank, NULL, 0) : WIRE_PATH_OK;
        if (path == WIRE_PATH_OK)
            return w;
        if (path == WIRE_PATH_PENDING && pending != NULL) {
            *pending = w;
            return NULL;
        }
    }
    return NULL;
}

void am_wires_describe(char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "%s", wire_shm_ops.name);

    for (int i = 0; i < am.nnet && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "+%s",
                                 am.net[i].ops->name);
}

int am_net_side(const char *label, uint8_t key[16],
                struct sockaddr_storage *addr)
{
    if (am.nnet == 0)
        return base_err(SHOAL_ERR_UNSUPPORTED, "no network wire is up");
    return am.net[0].ops->side(label, key, addr);
}

int am_net_watch(int fd, int writable)
{
    const wire_ops_t *w = am.nnet > 0 ? am.net[0].ops : NULL;

    if (w == NULL || w->watch_fd == NULL || w->unwatch_fd == NULL)
        return base_err(SHOAL_ERR_UNSUPPORTED, "no network wire to watch "
                        "a descriptor in");
    return w->watch_fd(fd, writable ? WIRE_WATCH_OUT : WIRE_WATCH_IN);
}

void am_net_unwatch(int fd)
{
    if (am.nnet > 0 && am.net[0].ops->unwatch_fd != NULL)
        (void)am.net[0].ops->unwatch_fd(fd);
}

int am_wire_unreachable(int rank)
{
    char up[64];

    if (am.nlisted == am.shm_listed)
        return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                        "rank %d runs on another host and SHOAL_WIRES=%s",
                        rank, base_cfg.WIRES);
    am_wires_describe(up, sizeof(up));
    /* A wire that reaches rank but whose datagrams do not pass says why. */
    for (int i = 0; i < am.nnet; i++) {
        const wire_ops_t *w = am.net[i].ops;
        char why[256];
        if (w->path != NULL && w->reaches(rank) &&
            w->path(rank, why, sizeof(why)) == WIRE_PATH_BLOCKED)
            return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                            "rank %d is reached by no wire up here (%s): "
                            "%s; SHOAL_WIRES=%s%s",
                            rank, up, why, base_cfg.WIRES,
                            !listed(&wire_tcp_ops)
                                ? " (list tcp after it to fall back to TCP)"
                                : "");
    }
    return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                    "rank %d is reached by no wire up here (%s; "
                    "SHOAL_WIRES=%s)",
                    rank, up, base_cfg.WIRES);
}

/* ---- start and stop ------------------------------------------------------- */

/*
 * Network wires start only when some other rank is out of shared memory's
 * reach: on another host (then every rank has one, so all decide alike),
 * or with shm not listed, or on another pretend host.  Their init is
 * collective, so every rank brings up the same list in the same order.
 */
static int net_needed(void)
{
    const boot_info_t *job = am.job;

    return job->local_size < job->size ||
           (job->size > 1 &&
            (!am.shm_listed || base_cfg.WIRES_FAKE_HOSTS > 1));
}

static void net_add(const wire_ops_t *w)
{
    am_net_t *n = &am.net[am.nnet++];

    n->ops = w;
    n->every = 1;
    n->countdown = 0;
    /* Polling a network wire less often while it is quiet keeps
     * shared-memory latency low; a rank alone on its host has no
     * shared-memory peer to protect, and every skipped poll would delay
     * the next frame. */
    n->poll_max =
        am.job->local_size > 1 ? (uint32_t)base_cfg.TCP_POLL_MAX : 1;
}

/* A sleep in net[0] must end for the other wires too: local senders ring
 * a socket instead of the futex, the other network wires' epoll sets
 * become readable.  What cannot be watched makes sleeps short naps
 * (am_wait.c). */
static void net_watch(void)
{
    const wire_ops_t *first = am.net[0].ops;
    int fd = wire_shm_wake_fd();

    am.net_blind = first->watch_fd == NULL || fd < 0 ||
                   first->watch_fd(fd, WIRE_WATCH_DRAIN) != SHOAL_OK;
    for (int i = 1; i < am.nnet; i++) {
        const wire_ops_t *w = am.net[i].ops;
        int efd = w->event_fd != NULL ? w->event_fd() : -1;
        if (first->watch_fd == NULL || efd < 0 ||
            first->watch_fd(efd, WIRE_WATCH_IN) != SHOAL_OK) {
            base_info("am", "a sleep in wire %s cannot watch wire %s: "
                      "sleeps will be short naps", first->name, w->name);
            am.net_blind = 1;
        }
    }
}

/* Tell each network wire how many ranks it is the first listed wire for
 * (paths still unprobed counted as passing): the most it will carry; and
 * how many other ranks shared memory reaches. */
static void net_expect(void)
{
    const boot_info_t *job = am.job;
    int nshm = 0;

    for (int r = 0; am.shm_listed && r < job->size; r++)
        nshm += r != job->rank && shm_reaches(r);
    for (int i = 0; i < am.nnet; i++) {
        const wire_ops_t *w = am.net[i].ops;
        int n = 0;

        if (w->expect_peers == NULL)
            continue;
        for (int r = 0; r < job->size; r++) {
            const wire_ops_t *first = NULL;
            for (int j = 0; j < am.nlisted && first == NULL && r != job->rank;
                 j++) {
                const wire_ops_t *x = am.listed[j];
                if (x == &wire_shm_ops ? shm_reaches(r)
                                       : net_up(x) && x->reaches(r))
                    first = x;
            }
            n += first == w;
        }
        w->expect_peers(n, nshm);
    }
}

int am_wires_start(const wire_upcalls_t *up)
{
    char down[256];
    size_t used = 0;

    down[0] = '\0';
    if (!net_needed())
        return SHOAL_OK;
    if (am.nlisted == am.shm_listed) {
        base_info("am", "SHOAL_WIRES=%s: ranks on other hosts are "
                  "unreachable", base_cfg.WIRES);
        return SHOAL_OK;
    }
    for (int i = 0; i < am.nlisted; i++) {
        const wire_ops_t *w = am.listed[i];
        int status;

        if (w == &wire_shm_ops)
            continue;
        status = w->init(am.job, up);
        if (status == SHOAL_ERR_UNSUPPORTED) {
            /* The wire ran its collective part and tells its peers it
             * is down, so that reaches() agrees on both sides. */
            base_info("am", "wire %s is not up: %s", w->name,
                      shoal_error_detail());
            if (used < sizeof(down))
                used += (size_t)snprintf(down + used, sizeof(down) - used,
                                         "%s%s: %s", used > 0 ? "; " : "",
                                         w->name, shoal_error_detail());
            continue;
        }
        if (status != SHOAL_OK) {
            am_wires_stop();
            return status;
        }
        net_add(w);
    }
    if (am.nnet == 0)
        return base_err(SHOAL_ERR_PEER_UNREACHABLE,
                        "SHOAL_WIRES=%s: no network wire came up (%s), and "
                        "ranks out of shared memory's reach need one",
                        base_cfg.WIRES, down);
    net_expect();
    net_watch();
    return SHOAL_OK;
}

void am_wires_stop(void)
{
    /* The last first: net[0] watches the others' descriptors. */
    while (am.nnet > 0)
        am.net[--am.nnet].ops->fini();
}
