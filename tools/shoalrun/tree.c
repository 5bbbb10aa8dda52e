/*
 * The daemon tree.  Node 0 is the launcher; remote hosts are nodes 1..R in
 * host order, and node i's children are i*K+1 .. i*K+K (K = --fanout), so
 * the launcher starts at most K remote-exec commands and each daemon
 * starts the next level itself: launch time grows with log_K(R), not R.
 * Each parent listens on one TCP port; a child connects back to the
 * address its parent reaches it from, proves the job's secret (auth.c) and
 * gets the job.  Upward, the launcher's business (output, exits, aborts,
 * failures, lost hosts) is relayed unchanged; downward, its commands
 * (signals, stop, kill) are.  The fence is combined: a node sends its
 * subtree's puts up once its own ranks and all its children are in; the
 * launcher sends the union of the whole job back down.  Every connection
 * carries a ping a second both ways, so a host that goes silent is lost
 * after SHOAL_HOST_TIMEOUT even when no connection closes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shoalrun.h"

#define PING_NS 1000000000ull
#define PENDING_MAX 16
#define AUTH_FRAME_MAX 256
#define FRAME_MAX (512u << 20)

enum { CH_STARTING, CH_UP, CH_DONE, CH_LOST };

typedef struct child {
    shoalrun_tree_t *t;
    int node;
    const shoalrun_host_t *host;
    shoalrun_conn_t conn; /* fd -1 until it has authenticated */
    pid_t rsh_pid;        /* 0 once reaped */
    int state;
    int fence_in;
    uint64_t started;
    shoalrun_msg_t queued; /* frames sent down before it connected */
} child_t;

/* A connection that has not proved the secret yet. */
typedef struct pending {
    shoalrun_tree_t *t;
    shoalrun_conn_t conn; /* fd -1: slot free */
    unsigned char nonce[SHOALRUN_NONCE_LEN];
    char peer[64];
    uint64_t since;
} pending_t;

struct shoalrun_tree {
    shoalrun_tree_conf_t conf;
    shoalrun_loop_t *loop;
    shoalrun_tree_events_t ev;
    shoalrun_watchdog_t *wd;
    int listen_fd;
    shoalrun_conn_t *parent; /* NULL: we are the launcher */
    int orphaned;
    child_t *children;
    int nchildren;
    pending_t pending[PENDING_MAX];
    int fence_local;
    shoalrun_msg_t fence_buf;
};

static void child_lost(child_t *c, const char *fmt, ...) BASE_PRINTF(2, 3);

/* ---- helpers ------------------------------------------------------------- */

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int shoalrun_tree_below(const shoalrun_tree_t *t, int node, int top)
{
    int k = t->conf.fanout;

    while (node > top)
        node = (node - 1) / k;
    return node == top;
}

static int remote_hosts(const shoalrun_hosts_t *h)
{
    int n = 0;

    for (int i = 0; i < h->n; i++)
        n += !h->v[i].local;
    return n;
}

/* The address our kernel would send from to reach addr: the one a child
 * can connect back to. */
static int source_addr(const char *addr, char *out, size_t cap)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM,
                             .ai_flags = AI_NUMERICHOST};
    struct addrinfo *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int rc = -1;

    if (getaddrinfo(addr, "9", &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, out, (socklen_t)cap, NULL, 0,
                    NI_NUMERICHOST) == 0)
        rc = 0;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    /* A v4 address seen through a dual-stack socket: give it plain. */
    if (rc == 0 && strncmp(out, "::ffff:", 7) == 0)
        memmove(out, out + 7, strlen(out + 7) + 1);
    return rc;
}

/* ---- listening and authentication ---------------------------------------- */

static int listen_any(int *port_p)
{
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
                              .sin6_addr = in6addr_any};
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int off = 0;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    /* Dual stack where the kernel has IPv6, else IPv4 only. */
    if (fd >= 0 &&
        (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) != 0 ||
         bind(fd, (struct sockaddr *)&a6, sizeof(a6)) != 0)) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a4, sizeof(a4)) != 0)
            goto err;
    }
    if (listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        goto err;
    *port_p = ss.ss_family == AF_INET6
                  ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                  : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return fd;
err:
    if (fd >= 0)
        close(fd);
    return -1;
}

static void pending_close(pending_t *p)
{
    if (p->conn.fd >= 0)
        shoalrun_loop_remove(p->t->loop, p->conn.fd);
    shoalrun_conn_fini(&p->conn);
}

static void refuse(pending_t *p, const char *why)
{
    shoalrun_say("refused a daemon connection from %s: %s", p->peer, why);
    pending_close(p);
}

static void child_on_io(void *ctx, int fd, short revents);

/* HELLO: node, the child's nonce, its MAC of our nonce. */
static void pending_hello(pending_t *p, const char *data, uint32_t len)
{
    shoalrun_tree_t *t = p->t;
    unsigned char want[SHOALRUN_MAC_LEN], mac[SHOALRUN_MAC_LEN];
    shoalrun_rd_t r = {data, len, 0};
    uint32_t node = shoalrun_rd_u32(&r);
    size_t nn, nm;
    const char *cnonce = shoalrun_rd_bytes(&r, &nn);
    const char *cmac = shoalrun_rd_bytes(&r, &nm);
    child_t *c = NULL;

    if (r.bad || nn != SHOALRUN_NONCE_LEN || nm != SHOALRUN_MAC_LEN) {
        refuse(p, "malformed greeting");
        return;
    }
    shoalrun_auth_mac(t->conf.secret, 'C', p->nonce, node, want);
    if (!shoalrun_auth_equal(want, (const unsigned char *)cmac,
                             SHOALRUN_MAC_LEN)) {
        refuse(p, "wrong secret");
        return;
    }
    for (int i = 0; i < t->nchildren; i++)
        if (t->children[i].node == (int)node)
            c = &t->children[i];
    if (c == NULL || c->state != CH_STARTING) {
        refuse(p, "not a daemon this node is waiting for");
        return;
    }
    shoalrun_auth_mac(t->conf.secret, 'P', (const unsigned char *)cnonce, node,
                      mac);
    shoalrun_loop_remove(t->loop, p->conn.fd);
    c->conn = p->conn;
    c->conn.max_frame = FRAME_MAX;
    memset(&p->conn, 0, sizeof(p->conn));
    p->conn.fd = -1;
    c->state = CH_UP;
    base_debug("shoalrun", "daemon of host %s (node %d) connected",
               c->host->name, c->node);
    if (shoalrun_loop_add(t->loop, c->conn.fd, POLLIN, child_on_io, c) !=
        SHOAL_OK) {
        child_lost(c, "out of memory");
        return;
    }
    shoalrun_conn_send(&c->conn, SHOALRUN_F_WELCOME, mac, sizeof(mac));
    shoalrun_conn_send(&c->conn, SHOALRUN_F_JOB, t->conf.job, t->conf.job_len);
    /* What was sent down meanwhile (a STOP when the job is ending, our
     * stdin for rank 0): in order, after the job. */
    if (c->queued.len > 0)
        shoalrun_conn_send_raw(&c->conn, c->queued.buf, c->queued.len);
    shoalrun_msg_fini(&c->queued);
    if (c->conn.out_len > 0)
        shoalrun_loop_set_events(t->loop, c->conn.fd, POLLIN | POLLOUT);
}

static void pending_on_io(void *ctx, int fd, short revents)
{
    pending_t *p = ctx;
    int type, more = shoalrun_conn_read(&p->conn);
    const char *data;
    uint32_t len;

    int got = shoalrun_conn_next(&p->conn, &type, &data, &len);
    if (got < 0 || (got > 0 && type != SHOALRUN_F_HELLO))
        refuse(p, "not a shoalrun daemon");
    else if (got > 0)
        pending_hello(p, data, len);
    else if (!more)
        refuse(p, "closed before proving the secret");
}

static void on_accept(void *ctx, int fd, short revents)
{
    shoalrun_tree_t *t = ctx;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int cfd =
        accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    pending_t *p = NULL;

    if (cfd < 0)
        return;
    for (int i = 0; i < PENDING_MAX && p == NULL; i++)
        if (t->pending[i].conn.fd < 0)
            p = &t->pending[i];
    /* Full of strangers that say nothing: drop the one waiting longest.
     * A daemon proves itself within a round trip, so silent squatters
     * cannot keep it out. */
    if (p == NULL) {
        p = &t->pending[0];
        for (int i = 1; i < PENDING_MAX; i++)
            if (t->pending[i].since < p->since)
                p = &t->pending[i];
        refuse(p, "silent while others wait");
    }
    p->t = t;
    shoalrun_conn_init(&p->conn, cfd, AUTH_FRAME_MAX);
    p->since = base_time_ns();
    if (getnameinfo((struct sockaddr *)&ss, sl, p->peer, sizeof(p->peer), NULL,
                    0, NI_NUMERICHOST) != 0)
        snprintf(p->peer, sizeof(p->peer), "?");
    if (strncmp(p->peer, "::ffff:", 7) == 0) /* v4 on a dual-stack socket */
        memmove(p->peer, p->peer + 7, strlen(p->peer + 7) + 1);
    if (base_random(p->nonce, sizeof(p->nonce)) != SHOAL_OK ||
        shoalrun_loop_add(t->loop, cfd, POLLIN, pending_on_io, p) != SHOAL_OK) {
        shoalrun_conn_fini(&p->conn);
        return;
    }
    shoalrun_conn_send(&p->conn, SHOALRUN_F_CHALLENGE, p->nonce,
                       sizeof(p->nonce));
}

/* ---- starting children --------------------------------------------------- */

static void rsh_child(const shoalrun_tree_t *t, const child_t *c, int in_fd,
                      char **argv)
{
    setpgid(0, 0);
    dup2(in_fd, STDIN_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO); /* a daemon's words are messages */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[0], argv);
    dprintf(STDERR_FILENO,
            "%s: host %s: cannot execute the remote-exec "
            "command '%s': %s\n",
            shoalrun_name, c->host->name, argv[0], strerror(errno));
    (void)t;
    _exit(SHOALRUN_EXIT_NOTFOUND);
}

static int start_child(shoalrun_tree_t *t, child_t *c, int port)
{
    char from[NI_MAXHOST], portstr[16], nodestr[16];
    char hex[2 * SHOALRUN_SECRET_LEN + 2];
    char *argv[64];
    int n = 0, p[2];

    if (source_addr(c->host->addr, from, sizeof(from)) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "host %s: no route to its address %s",
                        c->host->name, c->host->addr);
    snprintf(portstr, sizeof(portstr), "%d", port);
    snprintf(nodestr, sizeof(nodestr), "%d", c->node);
    for (int i = 0; i < t->conf.nrsh && n < 56; i++)
        argv[n++] = t->conf.rsh[i];
    argv[n++] = c->host->name;
    argv[n++] = (char *)t->conf.self;
    argv[n++] = "--daemon";
    argv[n++] = from;
    argv[n++] = portstr;
    argv[n++] = nodestr;
    argv[n] = NULL;
    if (pipe2(p, O_CLOEXEC) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return base_err(SHOAL_ERR_SYSTEM, "fork: %s", strerror(errno));
    }
    if (pid == 0)
        rsh_child(t, c, p[0], argv);
    setpgid(pid, pid);
    close(p[0]);
    /* The secret goes on the command's stdin, which a pipe this small
     * takes at once; then EOF. */
    base_hex_encode(t->conf.secret, SHOALRUN_SECRET_LEN, hex);
    strcat(hex, "\n");
    ssize_t w = write(p[1], hex, strlen(hex));
    (void)w;
    close(p[1]);
    c->rsh_pid = pid;
    c->started = base_time_ns();
    if (t->wd != NULL)
        shoalrun_watchdog_add(t->wd, pid);
    base_debug("shoalrun",
               "started the daemon of host %s (node %d) with "
               "'%s ...', connecting back to %s port %s",
               c->host->name, c->node, argv[0], from, portstr);
    return SHOAL_OK;
}

static int start_children(shoalrun_tree_t *t)
{
    int nremote = remote_hosts(t->conf.hosts), port = 0;
    int k = t->conf.fanout, me = t->conf.node;

    t->children = calloc((size_t)k, sizeof(*t->children));
    if (t->children == NULL)
        return base_err(SHOAL_ERR_NOMEM, "out of memory");
    for (int node = me * k + 1; node <= me * k + k && node <= nremote; node++) {
        child_t *c = &t->children[t->nchildren++];
        c->t = t;
        c->node = node;
        c->host = shoalrun_hosts_of_node(t->conf.hosts, node);
        c->state = CH_STARTING;
        shoalrun_conn_init(&c->conn, -1, FRAME_MAX);
    }
    if (t->nchildren == 0)
        return SHOAL_OK;
    t->listen_fd = listen_any(&port);
    if (t->listen_fd < 0)
        return base_err(SHOAL_ERR_SYSTEM, "cannot listen for daemons: %s",
                        strerror(errno));
    base_debug("shoalrun", "node %d listens on port %d for %d daemon%s", me,
               port, t->nchildren, t->nchildren == 1 ? "" : "s");
    int status = shoalrun_loop_add(t->loop, t->listen_fd, POLLIN, on_accept, t);
    for (int i = 0; status == SHOAL_OK && i < t->nchildren; i++)
        status = start_child(t, &t->children[i], port);
    return status;
}

/* ---- the fence ----------------------------------------------------------- */

static void fence_check(shoalrun_tree_t *t)
{
    int any = t->fence_local;

    for (int i = 0; i < t->nchildren; i++) {
        child_t *c = &t->children[i];
        if (c->state == CH_STARTING || (c->state == CH_UP && !c->fence_in))
            return;
        any |= c->fence_in;
    }
    /* A node without ranks of its own is in whenever its children are. */
    const shoalrun_host_t *me =
        shoalrun_hosts_of_node(t->conf.hosts, t->conf.node);
    if (!any || (!t->fence_local && me != NULL && me->count > 0))
        return;
    if (t->fence_buf.nomem) {
        shoalrun_say("out of memory in the fence");
        return;
    }
    if (t->parent != NULL)
        shoalrun_conn_send(t->parent, SHOALRUN_F_FENCE_UP, t->fence_buf.buf,
                           t->fence_buf.len);
    else {
        shoalrun_tree_down(t, SHOALRUN_F_FENCE_DOWN, t->fence_buf.buf,
                           t->fence_buf.len);
        t->ev.fence_done(t->ev.ctx, t->fence_buf.buf, t->fence_buf.len);
    }
    t->fence_buf.len = 0;
    t->fence_local = 0;
    for (int i = 0; i < t->nchildren; i++)
        t->children[i].fence_in = 0;
}

void shoalrun_tree_fence(shoalrun_tree_t *t, const char *kv, size_t len)
{
    shoalrun_msg_raw(&t->fence_buf, kv, len);
    t->fence_local = 1;
    fence_check(t);
}

/* ---- children's messages ------------------------------------------------- */

static void child_close(child_t *c)
{
    if (c->conn.fd >= 0)
        shoalrun_loop_remove(c->t->loop, c->conn.fd);
    shoalrun_conn_fini(&c->conn);
}

static void child_lost(child_t *c, const char *fmt, ...)
{
    shoalrun_tree_t *t = c->t;
    char why[256];
    va_list ap;

    if (c->state == CH_LOST || c->state == CH_DONE)
        return;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    c->state = CH_LOST;
    child_close(c);
    /* Its remote-exec command (an ssh client, say) is of no more use. */
    if (c->rsh_pid > 0)
        kill(-c->rsh_pid, SIGKILL);
    if (t->parent == NULL)
        t->ev.lost(t->ev.ctx, c->node, why);
    else {
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)c->node);
        shoalrun_msg_str(&m, why);
        shoalrun_tree_up(t, SHOALRUN_F_LOST, m.buf, m.len);
        shoalrun_msg_fini(&m);
    }
}

/* An EXPENDABLE frame from c names a rank of a host in c's subtree. */
static int expendable_ok(const child_t *c, const char *p, uint32_t len)
{
    const shoalrun_hosts_t *hs = c->t->conf.hosts;
    int nranks = 0;

    for (int i = 0; i < hs->n; i++)
        if (hs->v[i].first + hs->v[i].count > nranks)
            nranks = hs->v[i].first + hs->v[i].count;
    int rank = shoalrun_rd_expendable(p, len, nranks);
    const shoalrun_host_t *h =
        rank >= 0 ? shoalrun_hosts_of_rank(hs, rank) : NULL;
    return h != NULL && !h->local &&
           shoalrun_tree_below(c->t, h->node, c->node);
}

static void child_frame(child_t *c, int type, const char *p, uint32_t len)
{
    shoalrun_tree_t *t = c->t;
    shoalrun_rd_t r = {p, len, 0};

    switch (type) {
    case SHOALRUN_F_PING:
        break;
    case SHOALRUN_F_DONE:
        c->state = CH_DONE;
        break;
    case SHOALRUN_F_FENCE_UP:
        shoalrun_msg_raw(&t->fence_buf, p, len);
        c->fence_in = 1;
        fence_check(t);
        break;
    case SHOALRUN_F_LOST:
        if (t->parent != NULL)
            shoalrun_tree_up(t, type, p, len);
        else {
            int node = (int)shoalrun_rd_u32(&r);
            const char *why = shoalrun_rd_str(&r);
            if (!r.bad)
                t->ev.lost(t->ev.ctx, node, why);
        }
        break;
    case SHOALRUN_F_EXPENDABLE:
    case SHOALRUN_F_ACCUSE:
        /* EXPENDABLE lets the job lose ranks, ACCUSE may get one killed:
         * a daemon vouches only for its own subtree's ranks (an
         * accusation's first word is the accuser). */
        if (type == SHOALRUN_F_ACCUSE ? len != 8 || !expendable_ok(c, p, 4)
                                      : !expendable_ok(c, p, len)) {
            child_lost(c, "its daemon sent a malformed frame");
            break;
        }
        if (t->parent != NULL)
            shoalrun_tree_up(t, type, p, len);
        else
            t->ev.up(t->ev.ctx, type, &r);
        break;
    case SHOALRUN_F_OUTPUT:
    case SHOALRUN_F_STDIN_ACK:
    case SHOALRUN_F_WAITING:
    case SHOALRUN_F_LEFT:
    case SHOALRUN_F_EXITED:
    case SHOALRUN_F_ABORT:
    case SHOALRUN_F_FAILED:
    case SHOALRUN_F_SAY:
    case SHOALRUN_F_CKPT_UP:
        if (t->parent != NULL)
            shoalrun_tree_up(t, type, p, len);
        else
            t->ev.up(t->ev.ctx, type, &r);
        break;
    default:
        child_lost(c, "its daemon sent an unexpected frame (type %d)", type);
    }
}

static void child_on_io(void *ctx, int fd, short revents)
{
    child_t *c = ctx;
    int type, got;
    const char *p;
    uint32_t len;

    if ((revents & POLLOUT) && shoalrun_conn_flush(&c->conn) != 0) {
        child_lost(c, "its daemon's connection broke");
        return;
    }
    int more = (revents & (POLLIN | POLLHUP | POLLERR))
                   ? shoalrun_conn_read(&c->conn)
                   : 1;
    while (c->state == CH_UP &&
           (got = shoalrun_conn_next(&c->conn, &type, &p, &len)) != 0) {
        if (got < 0) {
            child_lost(c, "its daemon sent a malformed frame");
            return;
        }
        child_frame(c, type, p, len);
    }
    if (!more && c->conn.fd >= 0) {
        if (c->state == CH_UP)
            child_lost(c, "its daemon's connection closed");
        else
            child_close(c);
        return;
    }
    if (c->conn.fd >= 0)
        shoalrun_loop_set_events(c->t->loop, c->conn.fd,
                                 c->conn.out_len ? POLLIN | POLLOUT : POLLIN);
}

/* ---- the parent's messages (daemons) ------------------------------------- */

static void orphan(shoalrun_tree_t *t, const char *why)
{
    if (t->orphaned)
        return;
    t->orphaned = 1;
    if (t->parent->fd >= 0)
        shoalrun_loop_remove(t->loop, t->parent->fd);
    shoalrun_conn_fini(t->parent);
    /* Our children see their connection close and do as we do. */
    for (int i = 0; i < t->nchildren; i++) {
        t->children[i].state = CH_LOST;
        child_close(&t->children[i]);
    }
    t->ev.orphaned(t->ev.ctx, why);
}

static void parent_on_io(void *ctx, int fd, short revents)
{
    shoalrun_tree_t *t = ctx;
    int type, got;
    const char *p;
    uint32_t len;

    if ((revents & POLLOUT) && shoalrun_conn_flush(t->parent) != 0) {
        orphan(t, "the connection to the launcher broke");
        return;
    }
    int more = (revents & (POLLIN | POLLHUP | POLLERR))
                   ? shoalrun_conn_read(t->parent)
                   : 1;
    while (!t->orphaned &&
           (got = shoalrun_conn_next(t->parent, &type, &p, &len)) != 0) {
        shoalrun_rd_t r = {p, len, 0};
        if (got < 0) {
            orphan(t, "the launcher sent a malformed frame");
            return;
        }
        switch (type) {
        case SHOALRUN_F_PING:
            break;
        case SHOALRUN_F_FENCE_DOWN:
            shoalrun_tree_down(t, type, p, len);
            t->ev.fence_done(t->ev.ctx, p, len);
            break;
        case SHOALRUN_F_SIGNAL:
        case SHOALRUN_F_STOP:
        case SHOALRUN_F_KILL:
        case SHOALRUN_F_STDIN:
        case SHOALRUN_F_FT_DEAD:
            shoalrun_tree_down(t, type, p, len);
            t->ev.down(t->ev.ctx, type, &r);
            break;
        case SHOALRUN_F_CKPT_DOWN:
        case SHOALRUN_F_CONDEMN: {
            /* One rank's line: on down the one branch that holds it. */
            shoalrun_rd_t head = r;
            int rank = (int)shoalrun_rd_u32(&head);
            const shoalrun_host_t *h =
                head.bad ? NULL : shoalrun_hosts_of_rank(t->conf.hosts, rank);
            if (h == NULL || !shoalrun_tree_below(t, h->node, t->conf.node)) {
                /* The launcher routes each line to its rank's branch. */
                shoalrun_say("daemon (node %d): a line for rank "
                             "%d, not of this branch of the tree; dropped",
                             t->conf.node, rank);
                break;
            }
            shoalrun_tree_down_rank(t, rank, type, p, len);
            t->ev.down(t->ev.ctx, type, &r);
            break;
        }
        default:
            orphan(t, "the launcher sent an unexpected frame");
            return;
        }
    }
    if (!more && !t->orphaned) {
        orphan(t, "the connection to the launcher closed");
        return;
    }
    if (!t->orphaned)
        shoalrun_loop_set_events(t->loop, t->parent->fd,
                                 t->parent->out_len ? POLLIN | POLLOUT
                                                    : POLLIN);
}

/* ---- sending ------------------------------------------------------------- */

void shoalrun_tree_up(shoalrun_tree_t *t, int type, const void *p, size_t len)
{
    if (t->parent == NULL || t->orphaned)
        return;
    if (shoalrun_conn_send(t->parent, type, p, len) != 0)
        return; /* parent_on_io sees the broken connection */
    if (t->parent->out_len > 0)
        shoalrun_loop_set_events(t->loop, t->parent->fd, POLLIN | POLLOUT);
}

static void child_send(shoalrun_tree_t *t, child_t *c, int type,
                       const void *p, size_t len)
{
    if (c->state == CH_STARTING) /* it gets them when it connects */
        shoalrun_msg_frame(&c->queued, type, p, len);
    if (c->state != CH_UP && c->state != CH_DONE)
        return;
    if (c->conn.fd < 0)
        return;
    shoalrun_conn_send(&c->conn, type, p, len);
    if (c->conn.out_len > 0)
        shoalrun_loop_set_events(t->loop, c->conn.fd, POLLIN | POLLOUT);
}

void shoalrun_tree_down(shoalrun_tree_t *t, int type, const void *p, size_t len)
{
    for (int i = 0; i < t->nchildren; i++)
        child_send(t, &t->children[i], type, p, len);
}

void shoalrun_tree_down_rank(shoalrun_tree_t *t, int rank, int type,
                             const void *p, size_t len)
{
    const shoalrun_host_t *h = shoalrun_hosts_of_rank(t->conf.hosts, rank);

    if (h == NULL || h->local)
        return;
    for (int i = 0; i < t->nchildren; i++)
        if (shoalrun_tree_below(t, h->node, t->children[i].node))
            child_send(t, &t->children[i], type, p, len);
}

void shoalrun_tree_done(shoalrun_tree_t *t)
{
    shoalrun_tree_up(t, SHOALRUN_F_DONE, NULL, 0);
}

int shoalrun_tree_orphaned(const shoalrun_tree_t *t)
{
    return t->orphaned;
}

int shoalrun_tree_children_done(const shoalrun_tree_t *t)
{
    for (int i = 0; i < t->nchildren; i++)
        if (t->children[i].state == CH_STARTING ||
            t->children[i].state == CH_UP)
            return 0;
    return 1;
}

/* ---- time ---------------------------------------------------------------- */

/* Timers run about once per PING_NS (the loops wait at most that long),
 * a little late each time: a ping due only after a whole PING_NS would
 * often wait for the next turn, leaving up to two periods of silence,
 * which a short SHOAL_HOST_TIMEOUT takes for a lost host.  Half a period
 * keeps the gaps near one. */
static void ping(shoalrun_tree_t *t, shoalrun_conn_t *c, uint64_t now)
{
    if (c->fd >= 0 && now - c->last_tx >= PING_NS / 2) {
        shoalrun_conn_send(c, SHOALRUN_F_PING, NULL, 0);
        c->last_tx = now; /* also when it is still queued */
        if (c->out_len > 0)
            shoalrun_loop_set_events(t->loop, c->fd, POLLIN | POLLOUT);
    }
}

int shoalrun_tree_timers(shoalrun_tree_t *t)
{
    uint64_t now = base_time_ns(), limit = t->conf.timeout_ns;

    for (int i = 0; i < PENDING_MAX; i++)
        if (t->pending[i].conn.fd >= 0 && now - t->pending[i].since > limit)
            refuse(&t->pending[i], "silent");
    for (int i = 0; i < t->nchildren; i++) {
        child_t *c = &t->children[i];
        if (c->state == CH_STARTING && now - c->started > limit)
            child_lost(c, "no daemon connected back within %g s", limit / 1e9);
        else if (c->state == CH_UP && now - c->conn.last_rx > limit)
            child_lost(c, "no word from its daemon for %g s", limit / 1e9);
        else if (c->state == CH_UP || c->state == CH_DONE)
            ping(t, &c->conn, now);
    }
    if (t->parent != NULL && !t->orphaned) {
        if (now - t->parent->last_rx > limit)
            orphan(t, "no word from the launcher");
        else
            ping(t, t->parent, now);
    }
    return (int)(PING_NS / 1000000);
}

int shoalrun_tree_reaped(shoalrun_tree_t *t, pid_t pid, int status)
{
    for (int i = 0; t != NULL && i < t->nchildren; i++) {
        child_t *c = &t->children[i];
        if (c->rsh_pid != pid)
            continue;
        c->rsh_pid = 0;
        if (c->state == CH_STARTING) {
            if (WIFSIGNALED(status))
                child_lost(c,
                           "the remote-exec command was killed by "
                           "signal %d before a daemon connected back",
                           WTERMSIG(status));
            else
                child_lost(c,
                           "the remote-exec command exited with code %d "
                           "before a daemon connected back",
                           WEXITSTATUS(status));
        }
        return 1;
    }
    return 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

int shoalrun_tree_start(shoalrun_tree_t **tp, const shoalrun_tree_conf_t *conf,
                        shoalrun_loop_t *loop, const shoalrun_tree_events_t *ev,
                        shoalrun_watchdog_t *wd)
{
    shoalrun_tree_t *t = calloc(1, sizeof(*t));

    *tp = t;
    if (t == NULL)
        return base_err(SHOAL_ERR_NOMEM, "out of memory");
    t->conf = *conf;
    t->loop = loop;
    t->ev = *ev;
    t->wd = wd;
    t->listen_fd = -1;
    for (int i = 0; i < PENDING_MAX; i++)
        t->pending[i].conn.fd = -1;
    if (conf->parent != NULL) {
        t->parent = conf->parent;
        if (set_nonblock(t->parent->fd) != 0 ||
            shoalrun_loop_add(loop, t->parent->fd, POLLIN, parent_on_io, t) !=
                SHOAL_OK)
            return base_err(SHOAL_ERR_SYSTEM, "cannot watch the launcher's "
                                              "connection");
        /* What came with the job (a STOP, say) is no news to poll(). */
        parent_on_io(t, t->parent->fd, 0);
    }
    return start_children(t);
}

void shoalrun_tree_fini(shoalrun_tree_t *t)
{
    if (t == NULL)
        return;
    for (int i = 0; i < PENDING_MAX; i++)
        pending_close(&t->pending[i]);
    for (int i = 0; i < t->nchildren; i++)
        child_close(&t->children[i]);
    if (t->listen_fd >= 0) {
        shoalrun_loop_remove(t->loop, t->listen_fd);
        close(t->listen_fd);
    }
    if (t->parent != NULL && !t->orphaned) {
        shoalrun_loop_remove(t->loop, t->parent->fd);
        shoalrun_conn_fini(t->parent);
    }
    /* The daemons exit when their connection closes; give them a moment,
     * then make sure. */
    uint64_t until = base_time_ns() + 2000000000ull;
    for (int i = 0; i < t->nchildren; i++) {
        child_t *c = &t->children[i];
        while (c->rsh_pid > 0) {
            pid_t r = waitpid(c->rsh_pid, NULL, WNOHANG);
            if (r == c->rsh_pid || (r < 0 && errno != EINTR))
                c->rsh_pid = 0;
            else if (base_time_ns() > until) {
                kill(-c->rsh_pid, SIGKILL);
                waitpid(c->rsh_pid, NULL, 0);
                c->rsh_pid = 0;
            } else
                usleep(1000);
        }
    }
    shoalrun_msg_fini(&t->fence_buf);
    for (int i = 0; i < t->nchildren; i++)
        shoalrun_msg_fini(&t->children[i].queued);
    free(t->children);
    free(t);
}
