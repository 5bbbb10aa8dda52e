/*
 * PMI-1 client (see ../../shared/notes/launchers.md §2.1 and §6.3).  Blocking
 * I/O bounded by poll(); replies are parsed by key in any order, a missing
 * rc means success, and every request line stays within PMI_LINE_MAX.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot_internal.h"
#include "boot/boot_pmi1.h"

#define PMI1_DIED "the launcher closed the PMI connection (did it die?)"

/* Remember an I/O failure: the stream is out of step from here on. */
static int pmi1_fail(boot_pmi1_t *c, int status)
{
    c->failed = 1;
    c->fail_status = status;
    return status;
}

/* Milliseconds left until deadline for poll(), at least 0. */
static int ms_left(uint64_t deadline)
{
    uint64_t now = base_time_ns();

    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int pmi1_timeout(boot_pmi1_t *c, const char *what)
{
    return pmi1_fail(c, base_err(SHOAL_ERR_TIMEOUT,
                                 "no reply from the launcher to PMI '%s' "
                                 "within %.3g s (SHOAL_BOOT_TIMEOUT)",
                                 what, (double)c->timeout_ns / 1e9));
}

/* Wait until fd is ready for events; SHOAL_ERR_TIMEOUT at the deadline. */
static int pmi1_wait(boot_pmi1_t *c, short events, uint64_t deadline,
                     const char *what)
{
    struct pollfd pfd = {.fd = c->fd, .events = events};

    for (;;) {
        int n = poll(&pfd, 1, ms_left(deadline));
        if (n > 0)
            return SHOAL_OK;
        if (n == 0)
            return pmi1_timeout(c, what);
        if (errno != EINTR)
            return pmi1_fail(c, base_err(SHOAL_ERR_SYSTEM, "PMI poll: %s",
                                         strerror(errno)));
    }
}

static ssize_t pmi1_send(int fd, const char *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

    /* PMI_FD is a socket with every launcher we know, but be lenient. */
    if (w < 0 && errno == ENOTSOCK)
        w = write(fd, p, n);
    return w;
}

int boot_pmi1_send(boot_pmi1_t *c, const char *line, size_t len,
                   uint64_t deadline, const char *what)
{
    while (len > 0) {
        ssize_t w = pmi1_send(c->fd, line, len);
        if (w >= 0) {
            line += w;
            len -= (size_t)w;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int status = pmi1_wait(c, POLLOUT, deadline, what);
            if (status != SHOAL_OK)
                return status;
            continue;
        }
        if (errno == EPIPE || errno == ECONNRESET)
            return pmi1_fail(c, base_err(SHOAL_ERR_BOOT,
                                         PMI1_DIED " (sending '%s')", what));
        return pmi1_fail(c, base_err(SHOAL_ERR_SYSTEM,
                                     "PMI write of '%s' on fd %d: %s", what,
                                     c->fd, strerror(errno)));
    }
    return SHOAL_OK;
}

/* Read more bytes into the line buffer. */
static int pmi1_fill(boot_pmi1_t *c, uint64_t deadline, const char *what)
{
    for (;;) {
        size_t room;
        char *space = pmi_linebuf_space(&c->in, &room);
        ssize_t n = read(c->fd, space, room);
        if (n > 0) {
            pmi_linebuf_added(&c->in, (size_t)n);
            return SHOAL_OK;
        }
        if (n == 0 || errno == ECONNRESET)
            return pmi1_fail(c, base_err(SHOAL_ERR_BOOT,
                                         PMI1_DIED " (waiting for the reply "
                                         "to '%s')",
                                         what));
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return pmi1_fail(c, base_err(SHOAL_ERR_SYSTEM,
                                         "PMI read on fd %d: %s", c->fd,
                                         strerror(errno)));
        int status = pmi1_wait(c, POLLIN, deadline, what);
        if (status != SHOAL_OK)
            return status;
    }
}

/* A checkpoint request or target of shoalrun: keep the newest; 1 when
 * msg was one. */
static int take_ckpt_notice(boot_pmi1_t *c, const pmi_msg_t *msg)
{
    long id, count;

    if (strcmp(msg->cmd, "shoal-ckpt-request") == 0) {
        if (pmi_get_long(msg, "id", &id) == SHOAL_OK && id > c->ckpt_req)
            c->ckpt_req = id;
        return 1;
    }
    if (strcmp(msg->cmd, "shoal-ckpt-target") != 0)
        return 0;
    if (pmi_get_long(msg, "id", &id) == SHOAL_OK &&
        pmi_get_long(msg, "count", &count) == SHOAL_OK && id > 0 &&
        count > 0 && id > c->ckpt_tgt_id) {
        c->ckpt_tgt_id = id;
        c->ckpt_tgt = count;
    }
    return 1;
}

/* Keep a rank the launcher said died, for boot_pmi1_take_notice.  The
 * caller holds the lock. */
static void add_notice(boot_pmi1_t *c, int rank)
{
    if (c->nnotice == c->notice_cap) {
        int cap = c->notice_cap ? 2 * c->notice_cap : 16;
        int *grown = realloc(c->notice, (size_t)cap * sizeof(int));
        if (grown == NULL)
            return; /* the wires will tell */
        c->notice = grown;
        c->notice_cap = cap;
    }
    c->notice[c->nnotice++] = rank;
}

/* A notice of shoalrun --ft (or a checkpoint's): keep its rank; 1 when
 * msg was one. */
static int take_notice(boot_pmi1_t *c, const pmi_msg_t *msg)
{
    long rank;

    if (take_ckpt_notice(c, msg))
        return 1;
    if (strcmp(msg->cmd, "shoal-ft-dead") != 0)
        return 0;
    if (pmi_get_long(msg, "rank", &rank) == SHOAL_OK && rank >= 0 &&
        rank <= INT_MAX)
        add_notice(c, (int)rank);
    return 1;
}

int boot_pmi1_recv_line(boot_pmi1_t *c, pmi_msg_t *msg, uint64_t deadline,
                        const char *what)
{
    char line[PMI_LINE_MAX + 1];
    size_t len;

    for (;;) {
        for (;;) {
            int got = pmi_linebuf_take(&c->in, line, &len);
            if (got < 0)
                return pmi1_fail(c, got);
            if (got > 0)
                break;
            int status = pmi1_wait(c, POLLIN, deadline, what);
            if (status == SHOAL_OK)
                status = pmi1_fill(c, deadline, what);
            if (status != SHOAL_OK)
                return status;
        }
        int status = pmi_parse(msg, line, len);
        if (status != SHOAL_OK)
            return pmi1_fail(c, base_err(status,
                                         "bad PMI reply to '%s' from the "
                                         "launcher: %s",
                                         what, shoal_error_detail()));
        if (!take_notice(c, msg))
            return SHOAL_OK;
    }
}

void boot_pmi1_poll(boot_pmi1_t *c)
{
    char line[PMI_LINE_MAX + 1];
    size_t len;
    pmi_msg_t msg;

    if (c->fd < 0 || pthread_mutex_trylock(&c->lock) != 0)
        return;
    if (!c->failed) {
        struct pollfd pfd = {c->fd, POLLIN, 0};
        if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
            size_t room;
            char *space = pmi_linebuf_space(&c->in, &room);
            ssize_t n = read(c->fd, space, room);
            if (n > 0)
                pmi_linebuf_added(&c->in, (size_t)n);
        }
        /* Between calls only notices come; anything else is dropped. */
        while (pmi_linebuf_take(&c->in, line, &len) > 0)
            if (pmi_parse(&msg, line, len) == SHOAL_OK &&
                !take_notice(c, &msg))
                base_warn("boot", "unexpected PMI line from the launcher "
                                  "between calls: %s", msg.cmd);
    }
    pthread_mutex_unlock(&c->lock);
}

void boot_pmi1_ckpt_notices(boot_pmi1_t *c, long *req, long *tgt_id,
                            long *tgt)
{
    boot_pmi1_poll(c);
    pthread_mutex_lock(&c->lock);
    *req = c->ckpt_req;
    *tgt_id = c->ckpt_tgt_id;
    *tgt = c->ckpt_tgt;
    pthread_mutex_unlock(&c->lock);
}

int boot_pmi1_tell(boot_pmi1_t *c, const char *cmd, long id, const char *key,
                   long value)
{
    pmi_fmt_t f;
    int status;

    pmi_fmt_init(&f, cmd);
    if (id >= 0)
        pmi_fmt_add_long(&f, "id", id);
    pmi_fmt_add_long(&f, key, value);
    status = pmi_fmt_end(&f);
    if (status != SHOAL_OK)
        return status;
    pthread_mutex_lock(&c->lock);
    if (c->failed)
        status = base_err(c->fail_status, "PMI connection unusable after "
                          "an earlier failure");
    else
        status = boot_pmi1_send(c, f.buf, f.len,
                                base_time_ns() + c->timeout_ns, cmd);
    pthread_mutex_unlock(&c->lock);
    return status;
}

void boot_pmi1_await(boot_pmi1_t *c, int timeout_ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int wait;

    pthread_mutex_lock(&c->lock);
    wait = c->fd >= 0 && !c->failed && pmi_linebuf_pending(&c->in) == 0;
    pthread_mutex_unlock(&c->lock);
    if (wait)
        poll(&pfd, 1, timeout_ms);
}

int boot_pmi1_take_notice(boot_pmi1_t *c)
{
    int rank = -1;

    if (pthread_mutex_trylock(&c->lock) != 0)
        return -1;
    if (c->nnotice > 0) {
        rank = c->notice[0];
        memmove(c->notice, c->notice + 1,
                (size_t)(c->nnotice - 1) * sizeof(int));
        c->nnotice--;
    }
    pthread_mutex_unlock(&c->lock);
    return rank;
}

int boot_pmi1_recv_bytes(boot_pmi1_t *c, char *buf, size_t n,
                         uint64_t deadline, const char *what)
{
    size_t got = 0;

    for (;;) {
        got += pmi_linebuf_take_bytes(&c->in, buf + got, n - got);
        if (got == n)
            return SHOAL_OK;
        int status = pmi1_wait(c, POLLIN, deadline, what);
        if (status == SHOAL_OK)
            status = pmi1_fill(c, deadline, what);
        if (status != SHOAL_OK)
            return status;
    }
}

/*
 * One request, one reply of command expect.  The caller holds the lock.
 * A reply of another command means we lost step with the server.
 */
static int pmi1_call(boot_pmi1_t *c, pmi_fmt_t *req, const char *expect,
                     pmi_msg_t *reply)
{
    const char *what = req->buf + 4; /* after "cmd=" */
    char name[32];
    int status;

    snprintf(name, sizeof(name), "%.*s", (int)strcspn(what, " \n"), what);
    if (c->failed)
        return base_err(c->fail_status,
                        "PMI connection unusable after an earlier failure");
    status = pmi_fmt_end(req);
    if (status != SHOAL_OK)
        return status;
    uint64_t deadline = base_time_ns() + c->timeout_ns;
    status = boot_pmi1_send(c, req->buf, req->len, deadline, name);
    if (status == SHOAL_OK)
        status = boot_pmi1_recv_line(c, reply, deadline, name);
    if (status != SHOAL_OK)
        return status;
    if (strcmp(reply->cmd, expect) != 0)
        return pmi1_fail(c, base_err(SHOAL_ERR_PROTOCOL,
                                     "launcher replied '%s' to PMI '%s' "
                                     "(expected '%s')",
                                     reply->cmd, name, expect));
    return SHOAL_OK;
}

static int pmi1_call_locked(boot_pmi1_t *c, pmi_fmt_t *req,
                            const char *expect, pmi_msg_t *reply)
{
    pthread_mutex_lock(&c->lock);
    int status = pmi1_call(c, req, expect, reply);
    pthread_mutex_unlock(&c->lock);
    return status;
}

static const char *reply_msg(const pmi_msg_t *m)
{
    const char *msg = pmi_get(m, "msg");
    return msg != NULL ? msg : "(no message)";
}

/* ---- handshake ----------------------------------------------------------- */

static int pmi1_init(boot_pmi1_t *c)
{
    pmi_fmt_t req;
    pmi_msg_t rep;
    long version = 1;

    pmi_fmt_init(&req, "init");
    pmi_fmt_add(&req, "pmi_version", "1");
    pmi_fmt_add(&req, "pmi_subversion", "1");
    int status = pmi1_call(c, &req, "response_to_init", &rep);
    if (status != SHOAL_OK)
        return status;
    if (pmi_rc(&rep) != 0)
        return base_err(SHOAL_ERR_BOOT, "the launcher refused PMI-1 init: %s",
                        reply_msg(&rep));
    if (pmi_get(&rep, "pmi_version") != NULL &&
        (pmi_get_long(&rep, "pmi_version", &version) != SHOAL_OK ||
         version != 1))
        return base_err(SHOAL_ERR_BOOT,
                        "the launcher answered PMI-1 init with version %s",
                        pmi_get(&rep, "pmi_version"));
    return SHOAL_OK;
}

/* Port mode: identify with PMI_ID; the server answers initack + 3 "set". */
static int pmi1_initack(boot_pmi1_t *c, int id)
{
    pmi_fmt_t req;
    pmi_msg_t rep;
    long v;

    pmi_fmt_init(&req, "initack");
    pmi_fmt_add_long(&req, "pmiid", id);
    int status = pmi1_call(c, &req, "initack", &rep);
    uint64_t deadline = base_time_ns() + c->timeout_ns;
    for (int i = 0; i < 3 && status == SHOAL_OK; i++) {
        status = boot_pmi1_recv_line(c, &rep, deadline, "initack");
        if (status != SHOAL_OK)
            break;
        if (strcmp(rep.cmd, "set") != 0)
            return pmi1_fail(c, base_err(SHOAL_ERR_PROTOCOL,
                                         "launcher sent '%s' after initack "
                                         "(expected 'set')",
                                         rep.cmd));
        if (pmi_get_long(&rep, "size", &v) == SHOAL_OK)
            c->size = (int)v;
        if (pmi_get_long(&rep, "rank", &v) == SHOAL_OK)
            c->rank = (int)v;
    }
    return status;
}

static long maxes_value(const pmi_msg_t *rep, const char *key, long def)
{
    long v;

    return pmi_get_long(rep, key, &v) == SHOAL_OK ? v : def;
}

static int pmi1_maxes(boot_pmi1_t *c)
{
    pmi_fmt_t req;
    pmi_msg_t rep;

    pmi_fmt_init(&req, "get_maxes");
    int status = pmi1_call(c, &req, "maxes", &rep);
    if (status != SHOAL_OK)
        return status;
    c->kvsname_max = maxes_value(&rep, "kvsname_max", 256);
    c->keylen_max = maxes_value(&rep, "keylen_max", 64);
    c->vallen_max = maxes_value(&rep, "vallen_max", 1024);
    /* Below these, our namespaced keys and chunked values cannot work. */
    if (c->keylen_max < 48 || c->vallen_max < 64 || c->kvsname_max < 2)
        return base_err(SHOAL_ERR_BOOT,
                        "the launcher's PMI limits are too small: "
                        "keylen_max=%ld (need 48) vallen_max=%ld (need 64)",
                        c->keylen_max, c->vallen_max);
    if (c->vallen_max > PMI_LINE_MAX)
        c->vallen_max = PMI_LINE_MAX;
    return SHOAL_OK;
}

static int pmi1_kvsname(boot_pmi1_t *c)
{
    pmi_fmt_t req;
    pmi_msg_t rep;

    pmi_fmt_init(&req, "get_my_kvsname");
    int status = pmi1_call(c, &req, "my_kvsname", &rep);
    if (status != SHOAL_OK)
        return status;
    const char *name = pmi_get(&rep, "kvsname");
    if (pmi_rc(&rep) != 0 || name == NULL || name[0] == '\0')
        return base_err(SHOAL_ERR_BOOT, "the launcher gave no kvsname: %s",
                        reply_msg(&rep));
    if (strlen(name) >= sizeof(c->kvsname) ||
        strlen(name) >= (size_t)c->kvsname_max)
        return base_err(SHOAL_ERR_BOOT, "the launcher's kvsname is too long");
    strcpy(c->kvsname, name);
    return SHOAL_OK;
}

void boot_pmi1_setup(boot_pmi1_t *c, int fd, uint64_t timeout_ns)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->timeout_ns = timeout_ns;
    pthread_mutex_init(&c->lock, NULL);
    pmi_linebuf_init(&c->in);
}

static int pmi1_handshake(boot_pmi1_t *c, int port_id)
{
    int status = pmi1_init(c);

    if (status == SHOAL_OK && port_id >= 0)
        status = pmi1_initack(c, port_id);
    if (status == SHOAL_OK)
        status = pmi1_maxes(c);
    if (status == SHOAL_OK)
        status = pmi1_kvsname(c);
    return status;
}

int boot_pmi1_open_fd(boot_pmi1_t *c, int fd, int rank, int size,
                      uint64_t timeout_ns)
{
    boot_pmi1_setup(c, fd, timeout_ns);
    c->rank = rank;
    c->size = size;
    /* Programs this rank starts must not inherit the launcher's socket. */
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    int status = pmi1_handshake(c, -1);
    if (status != SHOAL_OK)
        boot_pmi1_close(c);
    return status;
}

/* ---- port mode ----------------------------------------------------------- */

static int split_hostport(const char *hostport, char *host, size_t cap,
                          const char **port_p)
{
    const char *colon = strrchr(hostport, ':');

    if (colon == NULL || colon == hostport || colon[1] == '\0' ||
        (size_t)(colon - hostport) >= cap)
        return base_err(SHOAL_ERR_BOOT,
                        "PMI_PORT=%s is not host:port", hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    /* Accept "[v6addr]:port" too. */
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    *port_p = colon + 1;
    return SHOAL_OK;
}

/* Connect one address without blocking past the deadline. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline)
{
    int fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    int err = 0, one = 1;
    socklen_t len = sizeof(err);

    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (errno != EINPROGRESS)
            goto err_close;
        while (poll(&pfd, 1, ms_left(deadline)) < 0 && errno == EINTR)
            ;
        if (!(pfd.revents & (POLLOUT | POLLERR | POLLHUP)))
            goto err_close;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err) {
            errno = err;
            goto err_close;
        }
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
err_close:
    close(fd);
    return -1;
}

int boot_pmi1_connect(const char *hostport, uint64_t timeout_ns, int *fd_p)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char host[256];
    const char *port = NULL;
    int status = split_hostport(hostport, host, sizeof(host), &port);

    if (status != SHOAL_OK)
        return status;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return base_err(SHOAL_ERR_BOOT, "PMI_PORT=%s: cannot resolve %s: %s",
                        hostport, host, gai_strerror(gai));
    uint64_t deadline = base_time_ns() + timeout_ns;
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
        fd = connect_one(ai, deadline);
    int saved = errno;
    freeaddrinfo(res);
    if (fd < 0)
        return base_err(SHOAL_ERR_BOOT,
                        "cannot connect to the launcher at PMI_PORT=%s: %s",
                        hostport, strerror(saved));
    *fd_p = fd;
    return SHOAL_OK;
}

int boot_pmi1_open_port(boot_pmi1_t *c, const char *hostport, int id,
                        uint64_t timeout_ns)
{
    int fd = -1;
    int status = boot_pmi1_connect(hostport, timeout_ns, &fd);

    if (status != SHOAL_OK)
        return status;
    boot_pmi1_setup(c, fd, timeout_ns);
    c->rank = -1;
    c->size = -1;
    status = pmi1_handshake(c, id);
    if (status == SHOAL_OK && (c->size < 1 || c->rank < 0 ||
                               c->rank >= c->size))
        status = base_err(SHOAL_ERR_BOOT,
                          "the launcher at PMI_PORT=%s gave rank %d of "
                          "size %d",
                          hostport, c->rank, c->size);
    if (status != SHOAL_OK)
        boot_pmi1_close(c);
    return status;
}

/* ---- requests ------------------------------------------------------------ */

size_t boot_pmi1_room(const boot_pmi1_t *c, size_t keylen)
{
    /* "cmd=put kvsname=<k> key=<key> value=<v>\n" */
    size_t fixed = strlen("cmd=put kvsname=") + strlen(c->kvsname) +
                   strlen(" key=") + keylen + strlen(" value=") + 1;
    size_t room = fixed < PMI_LINE_MAX ? PMI_LINE_MAX - fixed : 0;
    size_t vmax = (size_t)c->vallen_max - 1; /* the limit counts a NUL */

    return room < vmax ? room : vmax;
}

int boot_pmi1_put(boot_pmi1_t *c, const char *key, const char *value)
{
    pmi_fmt_t req;
    pmi_msg_t rep;

    if (strlen(key) >= (size_t)c->keylen_max)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI key '%s' is longer than the launcher's %ld",
                        key, c->keylen_max - 1);
    if (strlen(value) >= (size_t)c->vallen_max)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI value of '%s' is longer than the launcher's %ld",
                        key, c->vallen_max - 1);
    pmi_fmt_init(&req, "put");
    pmi_fmt_add(&req, "kvsname", c->kvsname);
    pmi_fmt_add(&req, "key", key);
    pmi_fmt_add(&req, "value", value);
    int status = pmi1_call_locked(c, &req, "put_result", &rep);
    if (status == SHOAL_OK && pmi_rc(&rep) != 0)
        status = base_err(SHOAL_ERR_BOOT,
                          "the launcher refused PMI put of '%s': %s", key,
                          reply_msg(&rep));
    return status;
}

int boot_pmi1_get(boot_pmi1_t *c, const char *key, char *value, size_t cap)
{
    pmi_fmt_t req;
    pmi_msg_t rep;

    pmi_fmt_init(&req, "get");
    pmi_fmt_add(&req, "kvsname", c->kvsname);
    pmi_fmt_add(&req, "key", key);
    int status = pmi1_call_locked(c, &req, "get_result", &rep);
    if (status != SHOAL_OK)
        return status;
    if (pmi_rc(&rep) != 0)
        return base_err(SHOAL_ERR_NOT_FOUND, "PMI key '%s' not found: %s",
                        key, reply_msg(&rep));
    const char *v = pmi_get(&rep, "value");
    if (v == NULL)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "the launcher's get_result for '%s' has no value",
                        key);
    if (strlen(v) >= cap)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "PMI value of '%s' has %zu characters, room for %zu",
                        key, strlen(v), cap - 1);
    strcpy(value, v);
    return SHOAL_OK;
}

int boot_pmi1_note_dead(boot_pmi1_t *c, const char *text, int size)
{
    int *ranks = malloc((size_t)size * sizeof(int));
    int n = 0;

    if (ranks == NULL)
        return base_err(SHOAL_ERR_NOMEM, "PMI_dead_processes: out of memory");
    int status = boot_dead_list_parse(text, size, ranks, size, &n);
    pthread_mutex_lock(&c->lock);
    if (status == SHOAL_OK && c->dead_seen == NULL) {
        c->dead_seen = calloc((size_t)size, 1);
        if (c->dead_seen == NULL)
            status = base_err(SHOAL_ERR_NOMEM,
                              "PMI_dead_processes: out of memory");
    }
    for (int i = 0; status == SHOAL_OK && i < n; i++)
        if (!c->dead_seen[ranks[i]]) {
            c->dead_seen[ranks[i]] = 1;
            add_notice(c, ranks[i]);
        }
    pthread_mutex_unlock(&c->lock);
    free(ranks);
    return status;
}

static int pmi1_simple(boot_pmi1_t *c, const char *cmd, const char *expect)
{
    pmi_fmt_t req;
    pmi_msg_t rep;

    pmi_fmt_init(&req, cmd);
    int status = pmi1_call_locked(c, &req, expect, &rep);
    if (status == SHOAL_OK && pmi_rc(&rep) != 0)
        status = base_err(SHOAL_ERR_BOOT, "PMI %s failed: %s", cmd,
                          reply_msg(&rep));
    return status;
}

int boot_pmi1_barrier(boot_pmi1_t *c)
{
    return pmi1_simple(c, "barrier_in", "barrier_out");
}

int boot_pmi1_finalize(boot_pmi1_t *c)
{
    return pmi1_simple(c, "finalize", "finalize_ack");
}

void boot_pmi1_abort(boot_pmi1_t *c, int code, const char *msg)
{
    char line[PMI_LINE_MAX + 1];
    int n;

    /*
     * Like MPICH, send the message raw after message=: launchers take the
     * rest of the line.  Only newlines and control bytes must go.
     */
    n = snprintf(line, sizeof(line) - 1, "cmd=abort exitcode=%d message=",
                 code);
    for (const char *p = msg; *p != '\0' && n < PMI_LINE_MAX - 1; p++)
        line[n++] = ((unsigned char)*p < 0x20 || *p == 0x7f) ? ' ' : *p;
    line[n++] = '\n';
    pthread_mutex_lock(&c->lock);
    if (!c->failed)
        boot_pmi1_send(c, line, (size_t)n, base_time_ns() + 1000000000ull,
                   "abort");
    pthread_mutex_unlock(&c->lock);
}

void boot_pmi1_close(boot_pmi1_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->notice);
    c->notice = NULL;
    c->nnotice = c->notice_cap = 0;
    free(c->dead_seen);
    c->dead_seen = NULL;
    pthread_mutex_destroy(&c->lock);
}
