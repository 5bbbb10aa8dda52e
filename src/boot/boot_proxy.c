/*
 * The rank's PMIx client in its guardian (docs/FT.md, "Under Slurm and
 * PMIx launchers").
 *
 * Slurm's PMIx plugin (mpi/pmix_v4, 22.05) ends the whole step when its
 * PMIx server reports a client lost without PMIx_Finalize (its error
 * handler kills the step on PMIX_ERR_LOST_CONNECTION), so under SHOAL_FT
 * a rank's death would end the job.  There the guardian process (the task
 * srun started) is the PMIx client instead of the rank: the rank's boot
 * backend sends each call over a socket pair to the guardian, which makes
 * it and answers.  When the rank dies, the guardian finalizes PMIx
 * cleanly before it leaves, and the step goes on.
 *
 * One request, one answer, each one SOCK_SEQPACKET message: a px_msg_t
 * (for local_peers the answer carries the ranks after it).  The guardian
 * opens PMIx once, when it starts, and finalizes it when the rank has
 * ended; the rank's boot_init asks for the job (PX_HELLO) and its
 * boot_fini says it is done (PX_FINI), as often as it starts again (a
 * failed shoal_init tried anew), over the one socket pair.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot_internal.h"

enum {
    PX_HELLO,   /* -> status, rank (a), size (b), jobid */
    PX_PUT,     /* key, text */
    PX_GET,     /* key -> text */
    PX_FENCE,
    PX_BARRIER,
    PX_PEERS,   /* -> n (a), then n ints */
    PX_ABORT,   /* code (a), text; no answer */
    PX_FINI,
};

typedef struct px_msg {
    int32_t op, status, a, b;
    char key[BOOT_KEY_MAX * 2 + 1];
    char text[BOOT_TEXT_MAX + 1]; /* a value, a jobid, or an error's detail */
} px_msg_t;

/* Largest job whose local peers fit one answer. */
#define PX_PEERS_MAX 16384

typedef struct px_ctx {
    int fd;
} px_ctx_t;

static int px_send(int fd, const void *buf, size_t len)
{
    ssize_t n;

    do
        n = send(fd, buf, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? SHOAL_OK : SHOAL_ERR_BOOT;
}

static ssize_t px_recv(int fd, void *buf, size_t cap)
{
    ssize_t n;

    do
        n = recv(fd, buf, cap, 0);
    while (n < 0 && errno == EINTR);
    return n;
}

/* ---- the rank's side ---------------------------------------------------- */

/* Send m, wait for the answer into m (and the rest into extra). */
static int px_call(px_ctx_t *c, px_msg_t *m, void *extra, size_t extra_cap)
{
    static char buf[sizeof(px_msg_t) + PX_PEERS_MAX * sizeof(int)];
    int op = m->op;

    if (px_send(c->fd, m, sizeof(*m)) != SHOAL_OK)
        return base_err(SHOAL_ERR_BOOT, "boot: the guardian process, which "
                        "holds this rank's PMIx connection, is gone: %s",
                        strerror(errno));
    ssize_t n = px_recv(c->fd, buf, sizeof(buf));
    if (n < (ssize_t)sizeof(*m))
        return base_err(SHOAL_ERR_BOOT, "boot: no answer from the guardian "
                        "process, which holds this rank's PMIx connection");
    memcpy(m, buf, sizeof(*m));
    if (m->op != op)
        return base_err(SHOAL_ERR_PROTOCOL, "boot: the guardian answered "
                        "request %d with %d", op, m->op);
    if (m->status != SHOAL_OK)
        return base_err(m->status, "%s", m->text);
    if (extra != NULL) {
        size_t more = (size_t)n - sizeof(*m);
        if (more > extra_cap)
            more = extra_cap;
        memcpy(extra, buf + sizeof(*m), more);
    }
    return SHOAL_OK;
}

static int px_simple(void *ctx, int op)
{
    px_msg_t m = {.op = op};

    return px_call(ctx, &m, NULL, 0);
}

static int px_put(void *ctx, const char *key, const char *value)
{
    px_msg_t m = {.op = PX_PUT};

    snprintf(m.key, sizeof(m.key), "%s", key);
    snprintf(m.text, sizeof(m.text), "%s", value);
    return px_call(ctx, &m, NULL, 0);
}

static int px_get(void *ctx, const char *key, char *value, size_t cap)
{
    px_msg_t m = {.op = PX_GET};

    snprintf(m.key, sizeof(m.key), "%s", key);
    int status = px_call(ctx, &m, NULL, 0);
    if (status != SHOAL_OK)
        return status;
    if (strlen(m.text) >= cap)
        return base_err(SHOAL_ERR_TOO_LARGE, "PMIx value of '%s' longer "
                        "than %zu bytes", key, cap - 1);
    strcpy(value, m.text);
    return SHOAL_OK;
}

static size_t px_room(void *ctx, size_t keylen)
{
    (void)ctx;
    (void)keylen;
    return BOOT_TEXT_MAX - 1; /* as the PMIx backend's */
}

static int px_fence(void *ctx)
{
    return px_simple(ctx, PX_FENCE);
}

static int px_barrier(void *ctx)
{
    return px_simple(ctx, PX_BARRIER);
}

static int px_peers(void *ctx, int **ranks_p, int *n_p)
{
    px_msg_t m = {.op = PX_PEERS};
    int *ranks = malloc(PX_PEERS_MAX * sizeof(int));

    if (ranks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    int status = px_call(ctx, &m, ranks, PX_PEERS_MAX * sizeof(int));
    if (status == SHOAL_OK && (m.a < 1 || m.a > PX_PEERS_MAX))
        status = base_err(SHOAL_ERR_PROTOCOL, "boot: %d local peers from "
                          "the guardian", m.a);
    if (status != SHOAL_OK) {
        free(ranks);
        return status;
    }
    *ranks_p = ranks;
    *n_p = m.a;
    return SHOAL_OK;
}

static void px_abort(void *ctx, int code, const char *msg)
{
    px_ctx_t *c = ctx;
    px_msg_t m = {.op = PX_ABORT, .a = code};

    snprintf(m.text, sizeof(m.text), "%s", msg);
    (void)px_send(c->fd, &m, sizeof(m)); /* the launcher kills the job */
}

static int px_fini(void *ctx)
{
    int status = px_simple(ctx, PX_FINI);

    free(ctx); /* the socket pair stays for a later boot_init */
    return status;
}

int boot_proxy_backend(boot_backend_t *be, int fd, int *rank_p, int *size_p,
                       char *jobid, size_t jobid_cap)
{
    px_ctx_t *c = calloc(1, sizeof(*c));
    px_msg_t m = {.op = PX_HELLO};

    if (c == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    c->fd = fd;
    int status = px_call(c, &m, NULL, 0);
    if (status == SHOAL_OK && strlen(m.text) >= jobid_cap)
        status = base_err(SHOAL_ERR_BOOT, "the PMIx namespace is too long");
    if (status != SHOAL_OK) {
        free(c);
        return status;
    }
    *be = (boot_backend_t){
        .name = "pmix",
        .kvs = {.ctx = c,
                .put = px_put,
                .get = px_get,
                .room = px_room,
                .key_max = 63},
        .local_peers = px_peers,
        .fence = px_fence,
        .barrier = px_barrier,
        .abort = px_abort,
        .fini = px_fini,
    };
    *rank_p = m.a;
    *size_p = m.b;
    strcpy(jobid, m.text);
    return SHOAL_OK;
}

/* ---- the guardian's side ------------------------------------------------ */

static struct {
    boot_backend_t be;
    int open; /* be is up and not finalized */
    int status, rank, size; /* how opening it went */
    char jobid[BOOT_TEXT_MAX + 1]; /* the namespace, or why it failed */
} px_srv;

static void answer_error(px_msg_t *m, int status)
{
    m->status = status;
    snprintf(m->text, sizeof(m->text), "%s", shoal_error_detail());
}

void boot_proxy_open(void)
{
    px_srv.status = boot_pmix_backend(&px_srv.be, &px_srv.rank,
                                      &px_srv.size, px_srv.jobid,
                                      sizeof(px_srv.jobid));
    if (px_srv.status == SHOAL_OK)
        px_srv.open = 1;
    else
        snprintf(px_srv.jobid, sizeof(px_srv.jobid), "%s",
                 shoal_error_detail());
}

int boot_proxy_serve(int fd)
{
    static char buf[sizeof(px_msg_t) + PX_PEERS_MAX * sizeof(int)];
    px_msg_t m;
    size_t len = sizeof(m);
    int status = SHOAL_OK;

    ssize_t n = px_recv(fd, &m, sizeof(m));
    if (n == 0 || (n < 0 && errno != EAGAIN))
        return 0; /* the rank closed its end, or died */
    if (n != (ssize_t)sizeof(m))
        return 1;
    m.key[sizeof(m.key) - 1] = m.text[sizeof(m.text) - 1] = '\0';
    if (m.op == PX_HELLO || !px_srv.open) {
        /* The job, or why there is none. */
        m.status = px_srv.open ? SHOAL_OK
                   : px_srv.status != SHOAL_OK ? px_srv.status
                                               : SHOAL_ERR_BOOT;
        m.a = px_srv.rank;
        m.b = px_srv.size;
        snprintf(m.text, sizeof(m.text), "%s",
                 px_srv.open ? px_srv.jobid
                 : px_srv.status != SHOAL_OK
                     ? px_srv.jobid
                     : "boot: the guardian's PMIx connection is closed");
        (void)px_send(fd, &m, sizeof(m));
        return 1;
    }
    boot_kvs_t *kvs = &px_srv.be.kvs;
    switch (m.op) {
    case PX_PUT:
        status = kvs->put(kvs->ctx, m.key, m.text);
        break;
    case PX_GET:
        status = kvs->get(kvs->ctx, m.key, m.text, sizeof(m.text));
        break;
    case PX_FENCE:
        status = px_srv.be.fence(kvs->ctx);
        break;
    case PX_BARRIER:
        status = px_srv.be.barrier(kvs->ctx);
        break;
    case PX_PEERS: {
        int *ranks = NULL, count = 0;
        status = px_srv.be.local_peers(kvs->ctx, &ranks, &count);
        if (status == SHOAL_OK && count > PX_PEERS_MAX)
            status = base_err(SHOAL_ERR_TOO_LARGE, "boot: %d local peers, "
                              "more than the guardian passes on (%d)",
                              count, PX_PEERS_MAX);
        if (status == SHOAL_OK) {
            m.a = count;
            memcpy(buf + sizeof(m), ranks, (size_t)count * sizeof(int));
            len += (size_t)count * sizeof(int);
        }
        free(ranks);
        break;
    }
    case PX_ABORT:
        px_srv.be.abort(kvs->ctx, m.a, m.text);
        return 1;
    case PX_FINI: /* PMIx stays open until the rank has ended */
        break;
    default:
        status = base_err(SHOAL_ERR_PROTOCOL, "boot: request %d unknown to "
                          "the guardian", m.op);
        break;
    }
    if (status != SHOAL_OK)
        answer_error(&m, status);
    else
        m.status = SHOAL_OK;
    memcpy(buf, &m, sizeof(m));
    (void)px_send(fd, buf, status == SHOAL_OK ? len : sizeof(m));
    return 1;
}

void boot_proxy_close(void)
{
    if (!px_srv.open)
        return;
    px_srv.open = 0;
    (void)px_srv.be.fini(px_srv.be.kvs.ctx);
}
