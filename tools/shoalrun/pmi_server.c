/*
 * The PMI-1 server.  It keeps Hydra's rules so that code tested under
 * shoalrun also works there: a put is visible to nobody (not even its
 * author) before the next barrier, and limits are 256/64/1024 as get_maxes
 * reports.  What a rank sends is untrusted: bad requests are reported with
 * the rank's number and answered with rc=-1 where PMI-1 has an answer; a
 * rank that does not read its replies is cut off rather than letting our
 * buffer grow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base_vec.h"
#include "shoalrun.h"

#define KVSNAME_MAX 256
#define KEYLEN_MAX 64  /* with the NUL, as Hydra and Slurm count */
#define VALLEN_MAX 1024
#define KVS_BYTES_MAX (256u << 20)
#define OUT_MAX (1u << 20)
#define COMPLAINTS_MAX 10

typedef struct kv {
    char *key, *value;
} kv_t;

struct shoalrun_pmi_conn {
    shoalrun_pmi_t *srv;
    int rank;
    int fd; /* -1 once closed */
    pmi_linebuf_t in;
    char *out;
    size_t out_len;
    int initialized, finalized, entered, aborted, gone, left, expendable;
    int complaints;
    base_vec_t pending; /* kv_t: puts since the last barrier */
};

typedef void (*handler_fn)(shoalrun_pmi_conn_t *c, const pmi_msg_t *m);

static void complain(shoalrun_pmi_conn_t *c, const char *fmt, ...)
    BASE_PRINTF(2, 3);

static void complain(shoalrun_pmi_conn_t *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (c->complaints++ >= COMPLAINTS_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    shoalrun_say("rank %d sent a bad PMI request: %s%s", c->rank, msg,
                 c->complaints == COMPLAINTS_MAX
                     ? " (further ones from this rank are not reported)"
                     : "");
}

/* ---- output -------------------------------------------------------------- */

static void conn_close(shoalrun_pmi_conn_t *c)
{
    if (c->fd < 0)
        return;
    shoalrun_loop_remove(c->srv->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    c->out_len = 0;
}

static void conn_flush(shoalrun_pmi_conn_t *c)
{
    size_t done = 0;

    while (done < c->out_len) {
        ssize_t w = send(c->fd, c->out + done, c->out_len - done,
                         MSG_NOSIGNAL);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        /* The rank closed its end; whatever it was waiting for is moot. */
        conn_close(c);
        return;
    }
    memmove(c->out, c->out + done, c->out_len - done);
    c->out_len -= done;
    shoalrun_loop_set_events(c->srv->loop, c->fd,
                             c->out_len ? POLLIN | POLLOUT : POLLIN);
}

static void conn_send(shoalrun_pmi_conn_t *c, pmi_fmt_t *f)
{
    if (c->fd < 0)
        return;
    if (pmi_fmt_end(f) != SHOAL_OK) {
        shoalrun_say("internal error: PMI reply to rank %d: %s", c->rank,
                     shoal_error_detail());
        return;
    }
    if (c->out_len + f->len > OUT_MAX) {
        shoalrun_say("rank %d does not read its PMI replies; closing its "
                     "PMI connection", c->rank);
        conn_close(c);
        return;
    }
    char *grown = realloc(c->out, c->out_len + f->len);
    if (grown == NULL) {
        conn_close(c);
        return;
    }
    c->out = grown;
    memcpy(c->out + c->out_len, f->buf, f->len);
    c->out_len += f->len;
    conn_flush(c);
}

/* A reply "cmd=<cmd> rc=<rc>" with msg when rc != 0. */
static void reply_rc(shoalrun_pmi_conn_t *c, const char *cmd, int rc,
                     const char *msg)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, cmd);
    pmi_fmt_add_long(&f, "rc", rc);
    if (msg != NULL)
        pmi_fmt_add(&f, "msg", msg);
    conn_send(c, &f);
}

/* ---- barrier ------------------------------------------------------------- */

static void publish(shoalrun_pmi_t *s, shoalrun_pmi_conn_t *c)
{
    for (size_t i = 0; i < c->pending.len; i++) {
        kv_t *kv = base_vec_at(&c->pending, i);
        void *old = NULL;
        if (base_strmap_put(&s->kvs, kv->key, kv->value, &old) != SHOAL_OK)
            free(kv->value); /* out of memory: the get will say not found */
        free(old);
        free(kv->key);
    }
    c->pending.len = 0;
}

static void barrier_release(shoalrun_pmi_t *s)
{
    s->in_barrier = 0;
    for (int r = 0; r < s->nlocal; r++) {
        s->conns[r].entered = 0;
        reply_rc(&s->conns[r], "barrier_out", 0, NULL);
    }
}

static void barrier_complete(shoalrun_pmi_t *s)
{
    for (int r = 0; r < s->nlocal; r++)
        publish(s, &s->conns[r]);
    barrier_release(s);
}

void shoalrun_pmi_fence_take(shoalrun_pmi_t *s, shoalrun_msg_t *m)
{
    for (int r = 0; r < s->nlocal; r++) {
        shoalrun_pmi_conn_t *c = &s->conns[r];
        for (size_t i = 0; i < c->pending.len; i++) {
            kv_t *kv = base_vec_at(&c->pending, i);
            shoalrun_msg_str(m, kv->key);
            shoalrun_msg_str(m, kv->value);
            free(kv->key);
            free(kv->value);
        }
        c->pending.len = 0;
    }
}

int shoalrun_pmi_fence_release(shoalrun_pmi_t *s, const char *kv, size_t len)
{
    shoalrun_rd_t r = {kv, len, 0};
    int status = SHOAL_OK;

    while (r.left > 0 && !r.bad) {
        const char *key = shoalrun_rd_str(&r), *value = shoalrun_rd_str(&r);
        if (r.bad)
            break;
        char *v = strdup(value);
        void *old = NULL;
        if (v == NULL || base_strmap_put(&s->kvs, key, v, &old) != SHOAL_OK) {
            free(v);
            status = base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
        }
        free(old);
    }
    if (r.bad)
        status = base_err(SHOAL_ERR_PROTOCOL, "malformed fence data");
    barrier_release(s);
    return status;
}

/* Waiting ranks can never leave if some rank can no longer enter. */
static void check_stuck(shoalrun_pmi_t *s)
{
    if (s->in_barrier == 0 || s->stuck_reported)
        return;
    for (int r = 0; r < s->nlocal; r++) {
        shoalrun_pmi_conn_t *c = &s->conns[r];
        if (c->entered || !(c->gone || c->finalized))
            continue;
        s->stuck_reported = 1;
        s->ev.stuck(s->ev.ctx, c->rank,
                    c->finalized ? "called PMI finalize" : "exited");
        return;
    }
}

/* ---- requests ------------------------------------------------------------ */

static void h_init(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    const char *v = pmi_get(m, "pmi_version");
    pmi_fmt_t f;
    int ok = v == NULL || strcmp(v, "1") == 0;

    pmi_fmt_init(&f, "response_to_init");
    pmi_fmt_add(&f, "pmi_version", "1");
    pmi_fmt_add(&f, "pmi_subversion", "1");
    pmi_fmt_add_long(&f, "rc", ok ? 0 : -1);
    c->initialized |= ok;
    if (!ok) {
        pmi_fmt_add(&f, "msg", "shoalrun_speaks_PMI-1_only");
        shoalrun_say("rank %d asked for PMI version %s; shoalrun speaks "
                     "PMI-1 only", c->rank, v);
    }
    conn_send(c, &f);
}

static void h_initack(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    static const char *const keys[] = {"size", "rank", "debug"};
    long vals[] = {c->srv->nranks, c->rank, 0};
    pmi_fmt_t f;

    reply_rc(c, "initack", 0, NULL);
    for (int i = 0; i < 3; i++) {
        pmi_fmt_init(&f, "set");
        pmi_fmt_add_long(&f, keys[i], vals[i]);
        conn_send(c, &f);
    }
}

static void h_maxes(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, "maxes");
    pmi_fmt_add_long(&f, "rc", 0);
    pmi_fmt_add_long(&f, "kvsname_max", KVSNAME_MAX);
    pmi_fmt_add_long(&f, "keylen_max", KEYLEN_MAX);
    pmi_fmt_add_long(&f, "vallen_max", VALLEN_MAX);
    conn_send(c, &f);
}

static void h_universe(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, "universe_size");
    pmi_fmt_add_long(&f, "rc", 0);
    pmi_fmt_add_long(&f, "size", c->srv->nranks);
    conn_send(c, &f);
}

static void h_appnum(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, "appnum");
    pmi_fmt_add_long(&f, "rc", 0);
    pmi_fmt_add_long(&f, "appnum", 0);
    conn_send(c, &f);
}

static void h_kvsname(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, "my_kvsname");
    pmi_fmt_add_long(&f, "rc", 0);
    pmi_fmt_add(&f, "kvsname", c->srv->kvsname);
    conn_send(c, &f);
}

/* The common checks of put and get; returns the reply msg on failure. */
static const char *check_key(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    const char *kvs = pmi_get(m, "kvsname"), *key = pmi_get(m, "key");

    if (kvs == NULL || key == NULL || key[0] == '\0') {
        complain(c, "'%s' without kvsname= or key=", m->cmd);
        return "missing_kvsname_or_key";
    }
    if (strcmp(kvs, c->srv->kvsname) != 0) {
        complain(c, "'%s' names kvsname '%.64s'; this job's is '%s'",
                 m->cmd, kvs, c->srv->kvsname);
        return "wrong_kvsname";
    }
    if (strlen(key) >= KEYLEN_MAX) {
        complain(c, "'%s' key of %zu characters (at most %d)", m->cmd,
                 strlen(key), KEYLEN_MAX - 1);
        return "key_too_long";
    }
    return NULL;
}

static const char *put_check(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    const char *value = pmi_get(m, "value");
    const char *err = check_key(c, m);

    if (err != NULL)
        return err;
    if (value == NULL) {
        complain(c, "'put' without value=");
        return "missing_value";
    }
    if (strlen(value) >= VALLEN_MAX) {
        complain(c, "'put' value of %zu characters (at most %d)",
                 strlen(value), VALLEN_MAX - 1);
        return "value_too_long";
    }
    if (c->srv->kvs_bytes > KVS_BYTES_MAX) {
        complain(c, "'put' after %u MiB of puts in this job",
                 KVS_BYTES_MAX >> 20);
        return "kvs_full";
    }
    return NULL;
}

static void h_put(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    const char *err = put_check(c, m);
    kv_t kv = {NULL, NULL};

    if (err != NULL) {
        reply_rc(c, "put_result", -1, err);
        return;
    }
    const char *key = pmi_get(m, "key");
    size_t klen = strlen(key), elen = strlen(SHOALRUN_EXPENDABLE_KEY);
    if (klen > elen &&
        strcmp(key + klen - elen, SHOALRUN_EXPENDABLE_KEY) == 0 &&
        !c->expendable) {
        c->expendable = 1;
        /* (Rank 0 too: the task runtime's coordinator is replaced when
         * it dies, with its host or alone; SHOALRUN_PMI_EXPENDABLE.) */
        if (c->srv->ev.expendable != NULL)
            c->srv->ev.expendable(c->srv->ev.ctx, c->rank);
    }
    kv.key = strdup(key);
    kv.value = strdup(pmi_get(m, "value"));
    if (kv.key == NULL || kv.value == NULL ||
        base_vec_push(&c->pending, &kv) != SHOAL_OK) {
        free(kv.key);
        free(kv.value);
        reply_rc(c, "put_result", -1, "out_of_memory");
        return;
    }
    c->srv->kvs_bytes += strlen(kv.key) + strlen(kv.value) + 2;
    reply_rc(c, "put_result", 0, "success");
}

static void h_get(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    const char *err = check_key(c, m);
    const char *key = pmi_get(m, "key"), *value = NULL;
    pmi_fmt_t f;

    if (err == NULL) {
        if (strcmp(key, "PMI_process_mapping") == 0)
            value = c->srv->mapping[0] ? c->srv->mapping : NULL;
        else
            value = base_strmap_get(&c->srv->kvs, key);
        if (value == NULL)
            err = "key_not_found";
    }
    if (err != NULL) {
        reply_rc(c, "get_result", -1, err);
        return;
    }
    pmi_fmt_init(&f, "get_result");
    pmi_fmt_add_long(&f, "rc", 0);
    pmi_fmt_add(&f, "msg", "success");
    pmi_fmt_add(&f, "value", value);
    conn_send(c, &f);
}

static void h_barrier(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    shoalrun_pmi_t *s = c->srv;

    if (c->entered) {
        complain(c, "'barrier_in' while already in the barrier");
        return;
    }
    c->entered = 1;
    if (++s->in_barrier == 1 && s->ev.waiting != NULL)
        s->ev.waiting(s->ev.ctx);
    if (s->in_barrier < s->nlocal)
        check_stuck(s);
    else if (s->ev.fence != NULL)
        s->ev.fence(s->ev.ctx);
    else
        barrier_complete(s);
}

/* Tell the job, once, that c can enter no barrier any more. */
static void report_left(shoalrun_pmi_conn_t *c, const char *why)
{
    if (c->left || c->entered || c->srv->ev.left == NULL)
        return;
    c->left = 1;
    c->srv->ev.left(c->srv->ev.ctx, c->rank, why);
}

static void h_finalize(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    report_left(c, "called PMI finalize");
    c->finalized = 1;
    reply_rc(c, "finalize_ack", 0, NULL);
    check_stuck(c->srv);
}

/* Name service and spawn: a reply saying no, so the client need not hang. */
static void h_unsupported(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    char reply[64];
    size_t n = strcspn(m->cmd, "_");

    snprintf(reply, sizeof(reply), "%.*s_result", (int)n, m->cmd);
    complain(c, "'%s' is not supported by shoalrun", m->cmd);
    reply_rc(c, reply, -1, "unsupported_by_shoalrun");
}

/* Lines of checkpoints the launcher asks for (ckpt_trigger.c); no reply. */
static void h_ckpt(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    shoalrun_pmi_t *s = c->srv;
    long id = 0, count = 0;
    int what = strcmp(m->cmd, "shoal-ckpt-ready") == 0 ? SHOALRUN_CKPT_READY
               : strcmp(m->cmd, "shoal-ckpt-at") == 0  ? SHOALRUN_CKPT_AT
                                                        : SHOALRUN_CKPT_FINAL;

    if ((what == SHOALRUN_CKPT_AT &&
         (pmi_get_long(m, "id", &id) != SHOAL_OK || id <= 0)) ||
        pmi_get_long(m, "count", &count) != SHOAL_OK || count < 0) {
        complain(c, "'%s' without a valid id and count", m->cmd);
        return;
    }
    if (s->ev.ckpt != NULL)
        s->ev.ckpt(s->ev.ctx, c->rank, what, id, count);
}

/* A rank's wire gave up a rank of another host (am_accuse.c); no reply. */
static void h_accuse(shoalrun_pmi_conn_t *c, const pmi_msg_t *m)
{
    shoalrun_pmi_t *s = c->srv;
    long accused = -1;

    if (pmi_get_long(m, "rank", &accused) != SHOAL_OK || accused < 0 ||
        accused >= s->nranks || accused == c->rank) {
        complain(c, "'%s' without a valid rank", m->cmd);
        return;
    }
    if (s->ev.accuse != NULL)
        s->ev.accuse(s->ev.ctx, c->rank, (int)accused);
}

static const struct {
    const char *cmd;
    handler_fn fn;
} handlers[] = {
    {"init", h_init},
    {"initack", h_initack},
    {"get_maxes", h_maxes},
    {"get_universe_size", h_universe},
    {"get_appnum", h_appnum},
    {"get_my_kvsname", h_kvsname},
    {"put", h_put},
    {"get", h_get},
    {"barrier_in", h_barrier},
    {"finalize", h_finalize},
    {"publish_name", h_unsupported},
    {"unpublish_name", h_unsupported},
    {"lookup_name", h_unsupported},
    {"shoal-ckpt-ready", h_ckpt},
    {"shoal-ckpt-at", h_ckpt},
    {"shoal-ckpt-final", h_ckpt},
    {"shoal-ft-accuse", h_accuse},
};

static void handle_line(shoalrun_pmi_conn_t *c, const char *line, size_t len)
{
    char msg[512];
    long code;
    pmi_msg_t m;

    if (c->aborted)
        return; /* MPICH's abort message may run over several lines */
    if (pmi_parse_abort(line, len, &code, msg, sizeof(msg))) {
        c->aborted = 1;
        c->srv->ev.abort(c->srv->ev.ctx, c->rank, code, msg);
        return;
    }
    if (pmi_parse(&m, line, len) != SHOAL_OK) {
        complain(c, "%s", shoal_error_detail());
        return;
    }
    for (size_t i = 0; i < BASE_ARRAY_SIZE(handlers); i++)
        if (strcmp(m.cmd, handlers[i].cmd) == 0) {
            handlers[i].fn(c, &m);
            return;
        }
    complain(c, "unknown command '%.40s'", m.cmd);
}

/* Read what is there; returns 0 at EOF or error, 1 when more may come. */
static int conn_read(shoalrun_pmi_conn_t *c)
{
    char line[PMI_LINE_MAX + 1];
    size_t room, len;

    for (int rounds = 0; rounds < 64 && c->fd >= 0; rounds++) {
        char *space = pmi_linebuf_space(&c->in, &room);
        ssize_t n = read(c->fd, space, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        if (n <= 0)
            return 0;
        pmi_linebuf_added(&c->in, (size_t)n);
        int got;
        while (c->fd >= 0 && (got = pmi_linebuf_take(&c->in, line, &len)))
            if (got < 0)
                complain(c, "%s", shoal_error_detail());
            else
                handle_line(c, line, len);
    }
    return 1;
}

static void conn_on_io(void *ctx, int fd, short revents)
{
    shoalrun_pmi_conn_t *c = ctx;

    if (revents & POLLOUT)
        conn_flush(c);
    if (c->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)) &&
        !conn_read(c)) {
        if (pmi_linebuf_pending(&c->in) > 0 && !c->aborted)
            complain(c, "unterminated last line (%zu bytes without a "
                     "newline)", pmi_linebuf_pending(&c->in));
        /* Not "gone" yet: its exit status, reaped soon, says more. */
        conn_close(c);
    }
}

/* ---- lifecycle ----------------------------------------------------------- */

int shoalrun_pmi_init(shoalrun_pmi_t *s, shoalrun_loop_t *loop, int nranks,
                      int first, int nlocal, const char *kvsname,
                      const char *mapping, const shoalrun_pmi_events_t *ev)
{
    memset(s, 0, sizeof(*s));
    s->conns = calloc((size_t)(nlocal ? nlocal : 1), sizeof(*s->conns));
    if (s->conns == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    s->nranks = nranks;
    s->first = first;
    s->nlocal = nlocal;
    s->loop = loop;
    s->ev = *ev;
    snprintf(s->kvsname, sizeof(s->kvsname), "%s", kvsname);
    /* One node holding every rank; Hydra's form, read cyclically. */
    if (mapping == NULL)
        snprintf(s->mapping, sizeof(s->mapping), "(vector,(0,1,%d))", nranks);
    else
        snprintf(s->mapping, sizeof(s->mapping), "%s", mapping);
    base_strmap_init(&s->kvs);
    for (int r = 0; r < nlocal; r++) {
        shoalrun_pmi_conn_t *c = &s->conns[r];
        c->srv = s;
        c->rank = first + r;
        c->fd = -1;
        pmi_linebuf_init(&c->in);
        base_vec_init(&c->pending, sizeof(kv_t));
    }
    return SHOAL_OK;
}

int shoalrun_pmi_attach(shoalrun_pmi_t *s, int rank, int fd)
{
    shoalrun_pmi_conn_t *c = &s->conns[rank - s->first];
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        close(fd);
        return base_err(SHOAL_ERR_SYSTEM, "fcntl: %s", strerror(errno));
    }
    c->fd = fd;
    int status = shoalrun_loop_add(s->loop, fd, POLLIN, conn_on_io, c);
    if (status != SHOAL_OK) {
        close(fd);
        c->fd = -1;
    }
    return status;
}

void shoalrun_pmi_drain(shoalrun_pmi_t *s, int rank)
{
    shoalrun_pmi_conn_t *c = &s->conns[rank - s->first];

    if (c->fd >= 0)
        conn_read(c);
}

int shoalrun_pmi_state(const shoalrun_pmi_t *s, int rank)
{
    const shoalrun_pmi_conn_t *c = &s->conns[rank - s->first];

    return (c->initialized ? SHOALRUN_PMI_INITIALIZED : 0) |
           (c->finalized ? SHOALRUN_PMI_FINALIZED : 0) |
           (c->expendable ? SHOALRUN_PMI_EXPENDABLE : 0);
}

void shoalrun_pmi_rank_exited(shoalrun_pmi_t *s, int rank)
{
    shoalrun_pmi_conn_t *c = &s->conns[rank - s->first];

    conn_close(c);
    report_left(c, "exited");
    c->gone = 1;
    check_stuck(s);
}

void shoalrun_pmi_notify_dead(shoalrun_pmi_t *s, int dead)
{
    for (int i = 0; i < s->nlocal; i++) {
        shoalrun_pmi_conn_t *c = &s->conns[i];
        pmi_fmt_t f;
        if (c->fd < 0 || c->rank == dead || !c->initialized || c->finalized)
            continue;
        pmi_fmt_init(&f, "shoal-ft-dead");
        pmi_fmt_add_long(&f, "rank", dead);
        conn_send(c, &f);
    }
}

void shoalrun_pmi_tell(shoalrun_pmi_t *s, int rank, const char *cmd, long id,
                       long count)
{
    shoalrun_pmi_conn_t *c = &s->conns[rank - s->first];
    pmi_fmt_t f;

    if (c->fd < 0)
        return;
    pmi_fmt_init(&f, cmd);
    pmi_fmt_add_long(&f, "id", id);
    if (count >= 0)
        pmi_fmt_add_long(&f, "count", count);
    conn_send(c, &f);
}

void shoalrun_pmi_fini(shoalrun_pmi_t *s)
{
    const char *k;
    void *v;

    for (int r = 0; s->conns != NULL && r < s->nlocal; r++) {
        shoalrun_pmi_conn_t *c = &s->conns[r];
        conn_close(c);
        for (size_t i = 0; i < c->pending.len; i++) {
            kv_t *kv = base_vec_at(&c->pending, i);
            free(kv->key);
            free(kv->value);
        }
        base_vec_fini(&c->pending);
        free(c->out);
    }
    for (size_t i = 0; base_strmap_next(&s->kvs, &i, &k, &v);)
        free(v);
    base_strmap_fini(&s->kvs);
    free(s->conns);
    s->conns = NULL;
}
