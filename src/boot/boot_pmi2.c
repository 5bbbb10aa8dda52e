/*
 * PMI-2 client and the pmi2 backend.  The transport (socket, poll-bounded
 * I/O, sticky failure) is the PMI-1 client's; this file adds the init line,
 * the length-framed messages and the mapping onto the backend interface.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/boot_internal.h"
#include "boot/boot_pmi2.h"

/* Read one framed message; the caller holds the lock. */
static int pmi2_recv(boot_pmi2_t *c, pmi2_msg_t *msg, uint64_t deadline,
                     const char *what)
{
    char hdr[PMI2_HDR_LEN];
    char *body = NULL;
    size_t len = 0;
    int status = boot_pmi1_recv_bytes(&c->conn, hdr, sizeof(hdr), deadline,
                                      what);

    if (status == SHOAL_OK)
        status = pmi2_parse_header(hdr, &len);
    if (status == SHOAL_OK && (body = malloc(len)) == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    if (status == SHOAL_OK)
        status = boot_pmi1_recv_bytes(&c->conn, body, len, deadline, what);
    if (status == SHOAL_OK)
        status = pmi2_parse(msg, body, len);
    free(body);
    if (status != SHOAL_OK && !c->conn.failed) {
        /* Out of step with the server from here on. */
        c->conn.failed = 1;
        c->conn.fail_status = status;
        base_err(status, "bad PMI-2 reply to '%s' from the launcher: %s",
                 what, shoal_error_detail());
    }
    return status;
}

/*
 * One request, one reply "<cmd>-response" with rc=0.  Takes the lock.
 */
static int pmi2_call(boot_pmi2_t *c, pmi2_fmt_t *req, const char *cmd,
                     pmi2_msg_t *reply)
{
    char expect[64];
    int status = pmi2_fmt_end(req);

    if (status != SHOAL_OK)
        return status;
    snprintf(expect, sizeof(expect), "%s-response", cmd);
    pthread_mutex_lock(&c->conn.lock);
    if (c->conn.failed) {
        status = base_err(c->conn.fail_status,
                          "PMI connection unusable after an earlier failure");
        goto out;
    }
    uint64_t deadline = base_time_ns() + c->conn.timeout_ns;
    status = boot_pmi1_send(&c->conn, req->buf, req->len, deadline, cmd);
    if (status == SHOAL_OK)
        status = pmi2_recv(c, reply, deadline, cmd);
    if (status != SHOAL_OK)
        goto out;
    if (strcmp(reply->cmd, expect) != 0) {
        c->conn.failed = 1;
        c->conn.fail_status = SHOAL_ERR_PROTOCOL;
        status = base_err(SHOAL_ERR_PROTOCOL,
                          "launcher replied '%s' to PMI-2 '%s' (expected "
                          "'%s')",
                          reply->cmd, cmd, expect);
        goto out;
    }
    if (pmi2_rc(reply) != 0) {
        const char *msg = pmi2_get(reply, "errmsg");
        status = base_err(SHOAL_ERR_BOOT, "PMI-2 %s failed with rc=%s: %s",
                          cmd, pmi2_get(reply, "rc"),
                          msg != NULL ? msg : "(no message)");
    }
out:
    pthread_mutex_unlock(&c->conn.lock);
    return status;
}

/* ---- handshake ----------------------------------------------------------- */

/* The PMI-1 style line that asks for version 2. */
static int pmi2_init_line(boot_pmi2_t *c)
{
    static const char line[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    uint64_t deadline = base_time_ns() + c->conn.timeout_ns;
    pmi_msg_t rep;
    long version = 0;
    int status = boot_pmi1_send(&c->conn, line, sizeof(line) - 1, deadline,
                                "init");

    if (status == SHOAL_OK)
        status = boot_pmi1_recv_line(&c->conn, &rep, deadline, "init");
    if (status != SHOAL_OK)
        return status;
    if (strcmp(rep.cmd, "response_to_init") != 0)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "launcher replied '%s' to PMI init", rep.cmd);
    if (pmi_get_long(&rep, "pmi_version", &version) != SHOAL_OK ||
        pmi_rc(&rep) != 0 || version != 2)
        return base_err(SHOAL_ERR_BOOT,
                        "the launcher does not speak PMI-2 (it answered init "
                        "with pmi_version=%s rc=%s): use SHOAL_BOOT=pmi1",
                        pmi_get(&rep, "pmi_version") ? pmi_get(&rep,
                                                               "pmi_version")
                                                     : "(none)",
                        pmi_get(&rep, "rc") ? pmi_get(&rep, "rc") : "0");
    return SHOAL_OK;
}

static int pmi2_fullinit(boot_pmi2_t *c, int rank, const char *jobid_hint)
{
    pmi2_fmt_t req;
    pmi2_msg_t rep;
    long v;

    pmi2_fmt_init(&req, "fullinit");
    pmi2_fmt_add(&req, "pmijobid", jobid_hint != NULL ? jobid_hint : "");
    pmi2_fmt_add_long(&req, "pmirank", rank);
    pmi2_fmt_add(&req, "threaded", "FALSE");
    int status = pmi2_call(c, &req, "fullinit", &rep);
    if (status != SHOAL_OK)
        return status;
    if (pmi2_get_long(&rep, "size", &v) != SHOAL_OK || v < 1 || v > INT_MAX)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 fullinit-response has no valid size");
    c->size = (int)v;
    if (pmi2_get_long(&rep, "rank", &v) != SHOAL_OK || v < 0 ||
        v >= c->size || (rank >= 0 && v != rank))
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 fullinit-response gives rank %s (size %d, we "
                        "are %d)",
                        pmi2_get(&rep, "rank") ? pmi2_get(&rep, "rank")
                                               : "(none)",
                        c->size, rank);
    c->rank = (int)v;
    c->appnum = pmi2_get_long(&rep, "appnum", &v) == SHOAL_OK ? (int)v : -1;
    return SHOAL_OK;
}

static int pmi2_jobid(boot_pmi2_t *c)
{
    pmi2_fmt_t req;
    pmi2_msg_t rep;

    pmi2_fmt_init(&req, "job-getid");
    int status = pmi2_call(c, &req, "job-getid", &rep);
    if (status != SHOAL_OK)
        return status;
    const char *id = pmi2_get(&rep, "jobid");
    if (id == NULL || id[0] == '\0' || strlen(id) >= sizeof(c->jobid))
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 job-getid-response has no usable jobid");
    strcpy(c->jobid, id);
    return SHOAL_OK;
}

static int pmi2_handshake(boot_pmi2_t *c, int rank, const char *jobid_hint)
{
    int status = pmi2_init_line(c);

    if (status == SHOAL_OK)
        status = pmi2_fullinit(c, rank, jobid_hint);
    if (status == SHOAL_OK)
        status = pmi2_jobid(c);
    if (status != SHOAL_OK)
        boot_pmi2_close(c);
    return status;
}

int boot_pmi2_open_fd(boot_pmi2_t *c, int fd, int rank,
                      const char *jobid_hint, uint64_t timeout_ns)
{
    memset(c, 0, sizeof(*c));
    boot_pmi1_setup(&c->conn, fd, timeout_ns);
    /* Programs this rank starts must not inherit the launcher's socket. */
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return pmi2_handshake(c, rank, jobid_hint);
}

int boot_pmi2_open_port(boot_pmi2_t *c, const char *hostport, int id,
                        const char *jobid_hint, uint64_t timeout_ns)
{
    int fd = -1;
    int status = boot_pmi1_connect(hostport, timeout_ns, &fd);

    if (status != SHOAL_OK)
        return status;
    memset(c, 0, sizeof(*c));
    boot_pmi1_setup(&c->conn, fd, timeout_ns);
    /* Hydra's port mode identifies a PMI-2 client by pmirank=PMI_ID. */
    return pmi2_handshake(c, id, jobid_hint);
}

/* ---- requests ------------------------------------------------------------ */

int boot_pmi2_put(boot_pmi2_t *c, const char *key, const char *value)
{
    pmi2_fmt_t req;
    pmi2_msg_t rep;

    if (strlen(key) > PMI2_KEY_MAX)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI-2 key '%s' is longer than %d", key, PMI2_KEY_MAX);
    if (strlen(value) > PMI2_VALUE_MAX)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI-2 value of '%s' is longer than %d", key,
                        PMI2_VALUE_MAX);
    pmi2_fmt_init(&req, "kvs-put");
    pmi2_fmt_add(&req, "key", key);
    pmi2_fmt_add(&req, "value", value);
    return pmi2_call(c, &req, "kvs-put", &rep);
}

/* found=TRUE;value=... into value, or SHOAL_ERR_NOT_FOUND. */
static int found_value(const pmi2_msg_t *rep, const char *key, char *value,
                       size_t cap)
{
    int found = pmi2_get_bool(rep, "found", -1);
    const char *v = pmi2_get(rep, "value");

    if (found == 0)
        return base_err(SHOAL_ERR_NOT_FOUND, "PMI-2 key '%s' not found", key);
    if (found < 0 || v == NULL)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 %s for '%s' has no found=TRUE|FALSE with a "
                        "value",
                        rep->cmd, key);
    if (strlen(v) >= cap)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI-2 value of '%s' has %zu characters, room for "
                        "%zu",
                        key, strlen(v), cap - 1);
    strcpy(value, v);
    return SHOAL_OK;
}

/* A request whose reply carries found= and value= (8 KiB: on the heap). */
static int pmi2_lookup(boot_pmi2_t *c, pmi2_fmt_t *req, const char *cmd,
                       const char *key, char *value, size_t cap)
{
    pmi2_msg_t *rep = malloc(sizeof(*rep));

    if (rep == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    int status = pmi2_call(c, req, cmd, rep);
    if (status == SHOAL_OK)
        status = found_value(rep, key, value, cap);
    free(rep);
    return status;
}

int boot_pmi2_get(boot_pmi2_t *c, const char *key, char *value, size_t cap)
{
    pmi2_fmt_t req;

    pmi2_fmt_init(&req, "kvs-get");
    pmi2_fmt_add(&req, "jobid", c->jobid);
    pmi2_fmt_add(&req, "srcid", "-1");
    pmi2_fmt_add(&req, "key", key);
    return pmi2_lookup(c, &req, "kvs-get", key, value, cap);
}

int boot_pmi2_jobattr(boot_pmi2_t *c, const char *key, char *value,
                      size_t cap)
{
    pmi2_fmt_t req;

    pmi2_fmt_init(&req, "info-getjobattr");
    pmi2_fmt_add(&req, "key", key);
    return pmi2_lookup(c, &req, "info-getjobattr", key, value, cap);
}

/*
 * kvs-fence is a barrier under Slurm, but Hydra answers it at once and
 * only holds back a later kvs-get until every process has fenced (its
 * "epoch").  So a get follows every fence, of a key nobody puts: then the
 * fence means "published, and everyone is here" under both (measured:
 * without it, a rank left Hydra's fence 0.5 s before a late peer came).
 */
int boot_pmi2_fence(boot_pmi2_t *c)
{
    pmi2_fmt_t req;
    pmi2_msg_t rep;
    char value[8];

    pmi2_fmt_init(&req, "kvs-fence");
    int status = pmi2_call(c, &req, "kvs-fence", &rep);
    if (status != SHOAL_OK)
        return status;
    status = boot_pmi2_get(c, PMI2_EPOCH_KEY, value, sizeof(value));
    return status == SHOAL_ERR_NOT_FOUND || status == SHOAL_ERR_TOO_LARGE
               ? SHOAL_OK
               : status;
}

int boot_pmi2_finalize(boot_pmi2_t *c)
{
    pmi2_fmt_t req;
    pmi2_msg_t rep;

    pmi2_fmt_init(&req, "finalize");
    return pmi2_call(c, &req, "finalize", &rep);
}

void boot_pmi2_abort(boot_pmi2_t *c, const char *msg)
{
    pmi2_fmt_t req;
    char clean[512];
    size_t n = 0;

    /* ';' is escaped by the formatter; control bytes must go. */
    for (; msg[n] != '\0' && n < sizeof(clean) - 1; n++)
        clean[n] = ((unsigned char)msg[n] < 0x20 || msg[n] == 0x7f)
                       ? ' '
                       : msg[n];
    clean[n] = '\0';
    pmi2_fmt_init(&req, "abort");
    pmi2_fmt_add(&req, "isworld", "TRUE");
    pmi2_fmt_add(&req, "msg", clean);
    if (pmi2_fmt_end(&req) != SHOAL_OK)
        return;
    pthread_mutex_lock(&c->conn.lock);
    if (!c->conn.failed)
        boot_pmi1_send(&c->conn, req.buf, req.len,
                       base_time_ns() + 1000000000ull, "abort");
    pthread_mutex_unlock(&c->conn.lock);
}

void boot_pmi2_close(boot_pmi2_t *c)
{
    boot_pmi1_close(&c->conn);
}

/* ---- the backend --------------------------------------------------------- */

static int be_put(void *ctx, const char *key, const char *value)
{
    return boot_pmi2_put(ctx, key, value);
}

static int be_get(void *ctx, const char *key, char *value, size_t cap)
{
    return boot_pmi2_get(ctx, key, value, cap);
}

static int be_reserved(void *ctx, const char *key, char *value, size_t cap)
{
    return boot_pmi2_jobattr(ctx, key, value, cap);
}

static size_t be_room(void *ctx, size_t keylen)
{
    (void)ctx;
    (void)keylen;
    return PMI2_VALUE_MAX;
}

static int be_fence(void *ctx)
{
    return boot_pmi2_fence(ctx);
}

static void be_abort(void *ctx, int code, const char *msg)
{
    (void)code; /* PMI-2 abort carries no exit code */
    boot_pmi2_abort(ctx, msg);
}

/* Hydra's SIGUSR1 under SHOAL_FT: PMI_dead_processes is a job attribute
 * to PMI-2 (boot_hydra.c). */
static int be_failed_rank(void *ctx)
{
    boot_pmi2_t *c = ctx;
    int rank = boot_pmi1_take_notice(&c->conn);

    if (rank < 0 && boot_hydra_read_dead(&c->conn, c->size, be_reserved, c))
        rank = boot_pmi1_take_notice(&c->conn);
    return rank;
}

static int be_fini(void *ctx)
{
    int status = boot_pmi2_finalize(ctx);

    boot_pmi2_close(ctx);
    free(ctx);
    return status;
}

int boot_pmi2_backend(boot_backend_t *be, int *rank_p, int *size_p,
                      char *jobid, size_t jobid_cap)
{
    boot_pmi2_t *c = calloc(1, sizeof(*c));
    uint64_t timeout = (uint64_t)base_cfg.BOOT_TIMEOUT;
    const char *hint = getenv("PMI_JOBID"); /* Slurm logs its absence */
    int status, fd, rank, size, opened = 0;

    if (c == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    if (getenv("PMI_FD") != NULL || getenv("PMI_PORT") == NULL) {
        status = boot_env_int("PMI_FD", 0, INT_MAX, &fd);
        if (status == SHOAL_OK)
            status = boot_env_int("PMI_SIZE", 1, INT_MAX, &size);
        if (status == SHOAL_OK)
            status = boot_env_int("PMI_RANK", 0, size - 1, &rank);
        if (status == SHOAL_OK)
            status = boot_pmi2_open_fd(c, fd, rank, hint, timeout);
        opened = status == SHOAL_OK;
        if (status == SHOAL_OK && c->size != size)
            status = base_err(SHOAL_ERR_BOOT,
                              "PMI_SIZE=%d but the launcher's PMI-2 says "
                              "size %d",
                              size, c->size);
    } else {
        status = boot_env_int("PMI_ID", 0, INT_MAX, &rank);
        if (status == SHOAL_OK)
            status = boot_pmi2_open_port(c, getenv("PMI_PORT"), rank, hint,
                                         timeout);
        opened = status == SHOAL_OK;
    }
    if (status == SHOAL_OK && strlen(c->jobid) >= jobid_cap)
        status = base_err(SHOAL_ERR_BOOT, "the launcher's jobid is too long");
    if (status != SHOAL_OK) {
        if (opened)
            boot_pmi2_close(c);
        free(c);
        return status;
    }
    *be = (boot_backend_t){
        .name = "pmi2",
        .kvs = {.ctx = c,
                .put = be_put,
                .get = be_get,
                .room = be_room,
                .key_max = PMI2_KEY_MAX},
        .get_reserved = be_reserved,
        .fence = be_fence,
        .barrier = be_fence,
        .abort = be_abort,
        .fini = be_fini,
        .failed_rank = be_failed_rank,
    };
    *rank_p = c->rank;
    *size_p = c->size;
    strcpy(jobid, c->jobid);
    return SHOAL_OK;
}
