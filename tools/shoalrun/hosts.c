/*
 * The hosts of a job and where its ranks go.  A host is named as the
 * remote-exec command knows it ("node7", or a network namespace for
 * `ip netns exec`); "name=addr" gives the address its daemon is reached
 * at when the name does not resolve (namespaces have no DNS).  Placement is
 * by blocks: ranks 0..s0-1 on the first host, and so on; -n below the total
 * of slots fills hosts in order; above it is refused unless
 * --oversubscribe, which spreads the extra ranks evenly.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shoalrun.h"

#define SLOTS_MAX SHOALRUN_MAX_RANKS

void shoalrun_hosts_fini(shoalrun_hosts_t *h)
{
    for (int i = 0; i < h->n; i++) {
        free(h->v[i].name);
        free(h->v[i].addr);
    }
    free(h->v);
    h->v = NULL;
    h->n = 0;
}

static int is_local_name(const char *name)
{
    char me[256];

    if (strcmp(name, "localhost") == 0)
        return 1;
    if (gethostname(me, sizeof(me) - 1) != 0)
        return 0;
    me[sizeof(me) - 1] = '\0';
    if (strcmp(name, me) == 0)
        return 1;
    size_t short_len = strcspn(me, ".");
    return strlen(name) == short_len && strncmp(name, me, short_len) == 0;
}

static int parse_slots(const char *text, size_t len, int *out)
{
    char buf[16];
    char *end;

    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    long v = strtol(buf, &end, 10);
    if (*end != '\0' || v <= 0 || v > SLOTS_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* Add name (merging a repeated one, and all names of this machine). */
static int add_host(shoalrun_hosts_t *h, const char *name, size_t nlen,
                    const char *addr, size_t alen, int slots)
{
    char *n = strndup(name, nlen);
    int local;

    if (n == NULL)
        return base_err(SHOAL_ERR_NOMEM, "out of memory");
    local = alen == 0 && is_local_name(n);
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->v[i].name, n) == 0 || (local && h->v[i].local)) {
            h->v[i].slots += slots ? slots : 1;
            free(n);
            return SHOAL_OK;
        }
    shoalrun_host_t *grown = realloc(h->v, (size_t)(h->n + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(n);
        return base_err(SHOAL_ERR_NOMEM, "out of memory");
    }
    h->v = grown;
    shoalrun_host_t *e = &h->v[h->n++];
    memset(e, 0, sizeof(*e));
    e->name = n;
    e->slots = slots ? slots : 1;
    e->local = local;
    if (alen > 0 && (e->addr = strndup(addr, alen)) == NULL)
        return base_err(SHOAL_ERR_NOMEM, "out of memory");
    return SHOAL_OK;
}

/* One "name[=addr][:N]" word; slots_word is an extra "slots=N" or NULL. */
static int parse_word(shoalrun_hosts_t *h, const char *w, size_t len, int slots,
                      const char *where)
{
    const char *colon = memchr(w, ':', len), *eq = memchr(w, '=', len);
    size_t end = colon ? (size_t)(colon - w) : len;
    size_t nlen = eq && (size_t)(eq - w) < end ? (size_t)(eq - w) : end;
    const char *addr = w + nlen + (nlen < end);
    size_t alen = nlen < end ? end - nlen - 1 : 0;

    if (colon != NULL && parse_slots(colon + 1, len - end - 1, &slots) != 0)
        return base_err(SHOAL_ERR_CONFIG,
                        "%s: '%.*s': the slots after ':' must be a number "
                        "from 1 to %d",
                        where, (int)len, w, SLOTS_MAX);
    if (nlen == 0 || (nlen < end && alen == 0))
        return base_err(SHOAL_ERR_CONFIG,
                        "%s: '%.*s' is not host[=address][:slots]", where,
                        (int)len, w);
    for (size_t i = 0; i < nlen; i++)
        if (isspace((unsigned char)w[i]) || w[i] == ',')
            return base_err(SHOAL_ERR_CONFIG, "%s: bad host name '%.*s'", where,
                            (int)nlen, w);
    return add_host(h, w, nlen, addr, alen, slots);
}

static int parse_spec(shoalrun_hosts_t *h, const char *spec)
{
    const char *p = spec;

    if (*p == '\0')
        return base_err(SHOAL_ERR_CONFIG, "--host: empty host list");
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        int status = parse_word(h, p, len, 0, "--host");
        if (status != SHOAL_OK)
            return status;
        p += len + (p[len] == ',');
    }
    return SHOAL_OK;
}

/* "host slots=N", "host:N", "host" ('#' starts a comment). */
static int parse_line(shoalrun_hosts_t *h, char *line, const char *where)
{
    char *save = NULL, *host = NULL;
    int slots = 0;

    line[strcspn(line, "#\n")] = '\0';
    for (char *w = strtok_r(line, " \t\r", &save); w != NULL;
         w = strtok_r(NULL, " \t\r", &save)) {
        if (host == NULL)
            host = w;
        else if (strncmp(w, "slots=", 6) == 0) {
            if (parse_slots(w + 6, strlen(w + 6), &slots) != 0)
                return base_err(SHOAL_ERR_CONFIG, "%s: bad '%s'", where, w);
        } else if (strncmp(w, "max_slots=", 10) != 0)
            return base_err(SHOAL_ERR_CONFIG,
                            "%s: unknown word '%s' (expected slots=N)", where,
                            w);
    }
    return host == NULL ? SHOAL_OK
                        : parse_word(h, host, strlen(host), slots, where);
}

static int parse_file(shoalrun_hosts_t *h, const char *path)
{
    char line[1024], where[PATH_MAX + 32];
    int status = SHOAL_OK, lineno = 0;
    FILE *f = fopen(path, "re");

    if (f == NULL)
        return base_err(SHOAL_ERR_CONFIG, "--hostfile %s: %s", path,
                        strerror(errno));
    while (status == SHOAL_OK && fgets(line, sizeof(line), f) != NULL) {
        snprintf(where, sizeof(where), "%s:%d", path, ++lineno);
        status = parse_line(h, line, where);
    }
    fclose(f);
    if (status == SHOAL_OK && h->n == 0)
        status = base_err(SHOAL_ERR_CONFIG, "--hostfile %s: no hosts", path);
    return status;
}

static int resolve(shoalrun_host_t *e)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    char num[NI_MAXHOST];
    const char *what = e->addr != NULL ? e->addr : e->name;

    if (e->local)
        return SHOAL_OK;
    hints.ai_flags = e->addr != NULL ? AI_NUMERICHOST : 0;
    int rc = getaddrinfo(what, NULL, &hints, &res);
    if (rc != 0)
        return base_err(SHOAL_ERR_CONFIG,
                        "host '%s': cannot resolve '%s': %s (give its "
                        "address as %s=ADDRESS)",
                        e->name, what, gai_strerror(rc), e->name);
    rc = getnameinfo(res->ai_addr, res->ai_addrlen, num, sizeof(num), NULL, 0,
                     NI_NUMERICHOST);
    freeaddrinfo(res);
    if (rc != 0)
        return base_err(SHOAL_ERR_CONFIG, "host '%s': %s", e->name,
                        gai_strerror(rc));
    free(e->addr);
    e->addr = strdup(num);
    return e->addr ? SHOAL_OK : base_err(SHOAL_ERR_NOMEM, "out of memory");
}

static int place(shoalrun_hosts_t *h, int *nranks_p, int oversubscribe)
{
    long total = 0;
    int n = *nranks_p, left, node = 1, kept = 0;

    for (int i = 0; i < h->n; i++)
        total += h->v[i].slots;
    if (n == 0)
        n = total > SHOALRUN_MAX_RANKS ? SHOALRUN_MAX_RANKS : (int)total;
    if (n > total && !oversubscribe)
        return base_err(SHOAL_ERR_CONFIG,
                        "%d ranks but only %ld slot%s on %d host%s (add "
                        "slots, or --oversubscribe)",
                        n, total, total == 1 ? "" : "s", h->n,
                        h->n == 1 ? "" : "s");
    left = n;
    for (int i = 0; i < h->n; i++) {
        h->v[i].count = left < h->v[i].slots ? left : h->v[i].slots;
        left -= h->v[i].count;
    }
    for (int i = 0; i < h->n; i++) /* oversubscribed: spread the rest */
        h->v[i].count += left / h->n + (i < left % h->n);
    for (int i = 0, first = 0; i < h->n; i++) {
        shoalrun_host_t e = h->v[i];
        if (e.count == 0) {
            free(e.name);
            free(e.addr);
            continue;
        }
        e.first = first;
        first += e.count;
        e.node = e.local ? 0 : node++;
        h->v[kept++] = e;
    }
    h->n = kept;
    *nranks_p = n;
    return SHOAL_OK;
}

int shoalrun_hosts_place(shoalrun_hosts_t *h, const char **specs, int nspecs,
                         const char *hostfile, int ppn, int *nranks_p,
                         int oversubscribe)
{
    int status = SHOAL_OK;

    memset(h, 0, sizeof(*h));
    for (int i = 0; status == SHOAL_OK && i < nspecs; i++)
        status = parse_spec(h, specs[i]);
    if (status == SHOAL_OK && hostfile != NULL)
        status = parse_file(h, hostfile);
    for (int i = 0; status == SHOAL_OK && ppn > 0 && i < h->n; i++)
        h->v[i].slots = ppn;
    if (status == SHOAL_OK)
        status = place(h, nranks_p, oversubscribe);
    for (int i = 0; status == SHOAL_OK && i < h->n; i++)
        status = resolve(&h->v[i]);
    return status;
}

void shoalrun_hosts_mapping(const shoalrun_hosts_t *h, char *out, size_t cap)
{
    size_t len = (size_t)snprintf(out, cap, "(vector");

    for (int i = 0; i < h->n && len < cap;) {
        int k = 1;
        while (i + k < h->n && h->v[i + k].count == h->v[i].count)
            k++;
        len += (size_t)snprintf(out + len, cap - len, ",(%d,%d,%d)", i, k,
                                h->v[i].count);
        i += k;
    }
    if (len < cap)
        len += (size_t)snprintf(out + len, cap - len, ")");
    if (len >= cap)
        out[0] = '\0'; /* ranks find their nodes by exchange instead */
}

const shoalrun_host_t *shoalrun_hosts_of_rank(const shoalrun_hosts_t *h,
                                              int rank)
{
    for (int i = 0; i < h->n; i++)
        if (rank >= h->v[i].first && rank < h->v[i].first + h->v[i].count)
            return &h->v[i];
    return NULL;
}

const shoalrun_host_t *shoalrun_hosts_of_node(const shoalrun_hosts_t *h,
                                              int node)
{
    for (int i = 0; i < h->n; i++)
        if (h->v[i].node == node && (node != 0 || h->v[i].local))
            return &h->v[i];
    return NULL;
}
