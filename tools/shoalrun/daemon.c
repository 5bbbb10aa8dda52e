/*
 * `shoalrun --daemon ADDR PORT NODE`: what the remote-exec command starts
 * on each remote host.  It reads the job's secret from stdin (one line of
 * hex: never argv, which `ps` shows to everyone), connects back to its
 * parent, proves the secret and checks the parent's proof, receives the
 * job (program, arguments, environment, working directory, hosts), starts
 * its own children daemons and ranks, and runs job.c as a follower: the
 * launcher decides, the daemon relays and obeys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shoalrun.h"

#define JOB_VERSION 2
#define DAEMON_FRAME_MAX (64u << 20)

extern char **environ;

/* Variables that describe where a process runs, not what the job wants. */
static int env_is_local(const char *e)
{
    static const char *const skip[] = {
        "PMI_",   "SSH_", "HOSTNAME=", "PWD=",     "OLDPWD=",
        "SHLVL=", "_=",   "TERM=",     "DISPLAY=", "XAUTHORITY="};

    for (size_t i = 0; i < BASE_ARRAY_SIZE(skip); i++)
        if (strncmp(e, skip[i], strlen(skip[i])) == 0)
            return 1;
    return strchr(e, '=') == NULL;
}

/* Split SHOAL_RSH/--rsh into words (spaces; no quoting). */
static int rsh_words(const char *text, shoalrun_msg_t *m)
{
    char *copy = strdup(text), *save = NULL;
    int n = 0;

    if (copy == NULL)
        return -1;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save))
        n++;
    shoalrun_msg_u32(m, (uint32_t)n);
    strcpy(copy, text);
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save))
        shoalrun_msg_str(m, w);
    free(copy);
    return n;
}

int shoalrun_daemon_job(const shoalrun_args_t *args, const char *kvsname,
                        const char *self, shoalrun_msg_t *m)
{
    char cwd[PATH_MAX];
    int nenv = 0, argc = 0;

    if (getcwd(cwd, sizeof(cwd)) == NULL)
        cwd[0] = '\0';
    shoalrun_msg_u32(m, JOB_VERSION);
    shoalrun_msg_str(m, kvsname);
    shoalrun_msg_u32(m, (uint32_t)args->nranks);
    shoalrun_msg_u32(m, (uint32_t)args->bind);
    shoalrun_msg_u32(m, (uint32_t)args->fanout);
    shoalrun_msg_u64(m, (uint64_t)base_cfg.HOST_TIMEOUT);
    shoalrun_msg_str(m, args->path);
    while (args->argv[argc] != NULL)
        argc++;
    shoalrun_msg_u32(m, (uint32_t)argc);
    for (int i = 0; i < argc; i++)
        shoalrun_msg_str(m, args->argv[i]);
    shoalrun_msg_str(m, cwd);
    for (char **e = environ; *e != NULL; e++)
        nenv += !env_is_local(*e);
    shoalrun_msg_u32(m, (uint32_t)nenv);
    for (char **e = environ; *e != NULL; e++)
        if (!env_is_local(*e))
            shoalrun_msg_str(m, *e);
    if (rsh_words(args->rsh, m) <= 0)
        return base_err(SHOAL_ERR_CONFIG,
                        "the remote-exec command '%s' is "
                        "empty",
                        args->rsh);
    shoalrun_msg_str(m, self);
    shoalrun_msg_u32(m, (uint32_t)args->hosts.n);
    for (int i = 0; i < args->hosts.n; i++) {
        const shoalrun_host_t *h = &args->hosts.v[i];
        shoalrun_msg_str(m, h->name);
        shoalrun_msg_str(m, h->addr ? h->addr : "");
        shoalrun_msg_u32(m, (uint32_t)h->first);
        shoalrun_msg_u32(m, (uint32_t)h->count);
        shoalrun_msg_u32(m, (uint32_t)h->node);
        shoalrun_msg_u32(m, (uint32_t)h->local);
    }
    /* --noise: every rank's plan (each daemon acts on its own ranks). */
    shoalrun_msg_u32(m, args->noise != NULL);
    for (int r = 0; args->noise != NULL && r < args->nranks; r++) {
        const shoalrun_noise_plan_t *pl = &args->noise[r];
        shoalrun_msg_u64(m, pl->stop_ns);
        shoalrun_msg_u64(m, pl->every_ns);
        shoalrun_msg_u64(m, pl->start_ns);
        shoalrun_msg_u32(m, (uint32_t)pl->random);
        shoalrun_msg_u32(m, (uint32_t)pl->busy);
        shoalrun_msg_u32(m, (uint32_t)pl->duty);
        shoalrun_msg_u32(m, (uint32_t)pl->sched_rr);
    }
    shoalrun_msg_u32(m, (uint32_t)args->noise_report);
    return m->nomem ? base_err(SHOAL_ERR_NOMEM, "out of memory") : SHOAL_OK;
}

/* ---- the daemon's side --------------------------------------------------- */

typedef struct daemon {
    shoalrun_args_t args;
    shoalrun_tree_conf_t conf;
    shoalrun_conn_t parent;
    const char *kvsname;
    char **argv, **rsh;
    char *self;
    char name[128];
} daemon_t;

static int read_secret(unsigned char *secret)
{
    char line[2 * SHOALRUN_SECRET_LEN + 2];
    size_t n = 0;

    while (n < sizeof(line) - 1) {
        ssize_t r = read(STDIN_FILENO, line + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0 && null != STDIN_FILENO) {
        dup2(null, STDIN_FILENO);
        close(null);
    }
    if (n != 2 * SHOALRUN_SECRET_LEN ||
        base_hex_decode(line, n, secret, SHOALRUN_SECRET_LEN) !=
            SHOALRUN_SECRET_LEN)
        return base_err(SHOAL_ERR_CONFIG,
                        "no job secret on stdin (a daemon is started by "
                        "shoalrun --host, not by hand)");
    return SHOAL_OK;
}

static int dial(const char *addr, const char *port, uint64_t timeout_ns)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(addr, port, &hints, &res), one = 1;

    if (rc != 0)
        return base_err(SHOAL_ERR_CONFIG, "parent address %s port %s: %s", addr,
                        port, gai_strerror(rc));
    int fd =
        socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(res);
        return base_err(SHOAL_ERR_SYSTEM, "socket: %s", strerror(errno));
    }
    rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof(err);
        rc = poll(&pfd, 1, (int)(timeout_ns / 1000000));
        if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0)
            errno = err;
        else if (rc == 0)
            errno = ETIMEDOUT;
        rc = rc == 1 && err == 0 ? 0 : -1;
    }
    if (rc != 0) {
        int e = errno;
        close(fd);
        return base_err(SHOAL_ERR_SYSTEM,
                        "cannot connect back to %s port "
                        "%s: %s",
                        addr, port, strerror(e));
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Wait for the next frame of the given type. */
static int expect_frame(shoalrun_conn_t *c, int want, const char **p,
                        uint32_t *len, uint64_t deadline)
{
    int type;

    for (;;) {
        int got = shoalrun_conn_next(c, &type, p, len);
        if (got < 0 || (got > 0 && type != want))
            return base_err(SHOAL_ERR_PROTOCOL,
                            "the launcher sent an unexpected frame");
        if (got > 0)
            return SHOAL_OK;
        uint64_t now = base_time_ns();
        if (now >= deadline)
            return base_err(SHOAL_ERR_TIMEOUT, "the launcher did not answer");
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) < 0 &&
            errno != EINTR)
            return base_err(SHOAL_ERR_SYSTEM, "poll: %s", strerror(errno));
        if (pfd.revents && !shoalrun_conn_read(c))
            return base_err(SHOAL_ERR_BOOT,
                            "the launcher closed the connection (wrong "
                            "secret?)");
    }
}

static int handshake(daemon_t *d, uint32_t node, uint64_t timeout_ns)
{
    unsigned char nonce[SHOALRUN_NONCE_LEN], mac[SHOALRUN_MAC_LEN];
    uint64_t deadline = base_time_ns() + timeout_ns;
    shoalrun_msg_t m = {0};
    const char *p;
    uint32_t len;

    int status =
        expect_frame(&d->parent, SHOALRUN_F_CHALLENGE, &p, &len, deadline);
    if (status == SHOAL_OK && len != SHOALRUN_NONCE_LEN)
        status = base_err(SHOAL_ERR_PROTOCOL, "bad challenge");
    if (status == SHOAL_OK)
        status = base_random(nonce, sizeof(nonce));
    if (status != SHOAL_OK)
        return status;
    shoalrun_auth_mac(d->conf.secret, 'C', (const unsigned char *)p, node, mac);
    shoalrun_msg_u32(&m, node);
    shoalrun_msg_bytes(&m, nonce, sizeof(nonce));
    shoalrun_msg_bytes(&m, mac, sizeof(mac));
    int rc = m.nomem ? -1
                     : shoalrun_conn_send(&d->parent, SHOALRUN_F_HELLO, m.buf,
                                          m.len);
    shoalrun_msg_fini(&m);
    if (rc != 0)
        return base_err(SHOAL_ERR_SYSTEM, "cannot greet the launcher");
    status = expect_frame(&d->parent, SHOALRUN_F_WELCOME, &p, &len, deadline);
    if (status != SHOAL_OK)
        return status;
    shoalrun_auth_mac(d->conf.secret, 'P', nonce, node, mac);
    if (len != SHOALRUN_MAC_LEN ||
        !shoalrun_auth_equal(mac, (const unsigned char *)p, sizeof(mac)))
        return base_err(SHOAL_ERR_PROTOCOL,
                        "the launcher did not prove the job's secret");
    return SHOAL_OK;
}

static int parse_hosts(daemon_t *d, shoalrun_rd_t *r)
{
    shoalrun_hosts_t *h = &d->args.hosts;
    uint32_t n = shoalrun_rd_u32(r);

    if (r->bad || n == 0 || n > SHOALRUN_MAX_RANKS)
        return -1;
    h->v = calloc(n, sizeof(*h->v));
    if (h->v == NULL)
        return -1;
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        shoalrun_host_t *e = &h->v[h->n++];
        e->name = strdup(shoalrun_rd_str(r));
        const char *addr = shoalrun_rd_str(r);
        e->addr = addr[0] ? strdup(addr) : NULL;
        e->first = (int)shoalrun_rd_u32(r);
        e->count = (int)shoalrun_rd_u32(r);
        e->node = (int)shoalrun_rd_u32(r);
        e->local = (int)shoalrun_rd_u32(r);
        if (e->name == NULL || e->first < 0 || e->count < 0 ||
            e->first + e->count > d->args.nranks)
            return -1;
    }
    return r->bad ? -1 : 0;
}

static char **parse_words(shoalrun_rd_t *r, int *n_p)
{
    uint32_t n = shoalrun_rd_u32(r);

    if (r->bad || n > 65536)
        return NULL;
    char **v = calloc(n + 1, sizeof(*v));
    for (uint32_t i = 0; v != NULL && i < n; i++)
        v[i] = (char *)shoalrun_rd_str(r);
    if (n_p != NULL)
        *n_p = (int)n;
    return r->bad ? NULL : v;
}

/* --noise's plans, one per rank, when the launcher had any. */
static int parse_noise(daemon_t *d, shoalrun_rd_t *r)
{
    uint32_t any = shoalrun_rd_u32(r);

    if (r->bad || any > 1)
        return -1;
    if (any) {
        d->args.noise = calloc((size_t)d->args.nranks, sizeof(*d->args.noise));
        if (d->args.noise == NULL)
            return -1;
    }
    for (int k = 0; any && k < d->args.nranks; k++) {
        shoalrun_noise_plan_t *pl = &d->args.noise[k];
        pl->stop_ns = shoalrun_rd_u64(r);
        pl->every_ns = shoalrun_rd_u64(r);
        pl->start_ns = shoalrun_rd_u64(r);
        pl->random = (int)shoalrun_rd_u32(r);
        pl->busy = (int)shoalrun_rd_u32(r);
        pl->duty = (int)shoalrun_rd_u32(r);
        pl->sched_rr = (int)shoalrun_rd_u32(r);
        /* (The launcher checked them; a bad one is a bad message.) */
        if (pl->busy < 0 || pl->busy > SHOALRUN_NOISE_MAX_BUSY ||
            pl->duty < 0 || pl->duty > 100 || (unsigned)pl->random > 1 ||
            (unsigned)pl->sched_rr > 1 ||
            (pl->stop_ns != 0 && pl->stop_ns >= pl->every_ns))
            return -1;
    }
    d->args.noise_report = (int)shoalrun_rd_u32(r);
    return r->bad ? -1 : 0;
}

static int parse_job(daemon_t *d, const char *p, uint32_t len)
{
    shoalrun_rd_t r = {p, len, 0};
    int n;

    if (shoalrun_rd_u32(&r) != JOB_VERSION)
        return base_err(SHOAL_ERR_PROTOCOL, "the launcher is another "
                                            "version of shoalrun");
    d->kvsname = shoalrun_rd_str(&r);
    d->args.nranks = (int)shoalrun_rd_u32(&r);
    d->args.bind = (int)shoalrun_rd_u32(&r);
    d->args.fanout = (int)shoalrun_rd_u32(&r);
    d->conf.timeout_ns = shoalrun_rd_u64(&r);
    snprintf(d->args.path, sizeof(d->args.path), "%s", shoalrun_rd_str(&r));
    d->args.argv = d->argv = parse_words(&r, NULL);
    const char *cwd = shoalrun_rd_str(&r);
    char **env = parse_words(&r, &n);
    for (int i = 0; env != NULL && i < n; i++) {
        char *eq = strchr(env[i], '=');
        if (eq != NULL) {
            char *name = strndup(env[i], (size_t)(eq - env[i]));
            if (name != NULL)
                setenv(name, eq + 1, 1);
            free(name);
        }
    }
    free(env);
    d->conf.rsh = d->rsh = parse_words(&r, &d->conf.nrsh);
    d->self = (char *)shoalrun_rd_str(&r);
    if (r.bad || d->argv == NULL || d->rsh == NULL || d->args.nranks <= 0 ||
        d->args.nranks > SHOALRUN_MAX_RANKS || d->args.fanout < 1 ||
        parse_hosts(d, &r) != 0 || parse_noise(d, &r) != 0)
        return base_err(SHOAL_ERR_PROTOCOL, "malformed job description");
    if (cwd[0] != '\0' && chdir(cwd) != 0)
        base_debug("shoalrun", "cannot enter %s here; staying in $HOME", cwd);
    return SHOAL_OK;
}

static int daemon_setup(daemon_t *d, char **argv, const char **job_p,
                        uint32_t *job_len_p)
{
    uint64_t timeout = (uint64_t)base_cfg.HOST_TIMEOUT;
    char *end;
    long node = strtol(argv[4], &end, 10);

    if (*end != '\0' || node < 1)
        return base_err(SHOAL_ERR_CONFIG, "bad node number '%s'", argv[4]);
    d->conf.node = (int)node;
    int status = read_secret(d->conf.secret);
    if (status != SHOAL_OK)
        return status;
    int fd = dial(argv[2], argv[3], timeout);
    if (fd < 0)
        return fd;
    shoalrun_conn_init(&d->parent, fd, DAEMON_FRAME_MAX);
    status = handshake(d, (uint32_t)node, timeout);
    if (status == SHOAL_OK)
        status = expect_frame(&d->parent, SHOALRUN_F_JOB, job_p, job_len_p,
                              base_time_ns() + timeout);
    return status;
}

int shoalrun_daemon_main(int argc, char **argv)
{
    static daemon_t d;
    const char *job = NULL;
    uint32_t job_len = 0;
    int code = SHOALRUN_EXIT_FAILED;

    if (argc != 5) {
        shoalrun_say("usage: %s --daemon ADDRESS PORT NODE (started by "
                     "shoalrun --host, not by hand)",
                     shoalrun_name);
        return SHOALRUN_EXIT_USAGE;
    }
    d.parent.fd = -1;
    if (daemon_setup(&d, argv, &job, &job_len) != SHOAL_OK) {
        shoalrun_say("daemon (node %s): %s", argv[4], shoal_error_detail());
        goto out;
    }
    /* The frame lives in the connection's buffer until the next read;
     * the job's strings point into a copy of it. */
    char *copy = malloc(job_len ? job_len : 1);
    if (copy == NULL)
        goto out;
    memcpy(copy, job, job_len);
    if (parse_job(&d, copy, job_len) != SHOAL_OK) {
        shoalrun_say("daemon (node %s): %s", argv[4], shoal_error_detail());
        free(copy);
        goto out;
    }
    const shoalrun_host_t *me =
        shoalrun_hosts_of_node(&d.args.hosts, d.conf.node);
    if (me == NULL) {
        shoalrun_say("daemon: node %d has no host in the job", d.conf.node);
        free(copy);
        goto out;
    }
    /* Messages from here on name the host. */
    snprintf(d.name, sizeof(d.name), "shoalrun@%.100s", me->name);
    shoalrun_name = d.name;
    base_log_set_prefix(d.name);
    d.conf.fanout = d.args.fanout;
    d.conf.self = d.self;
    d.conf.hosts = &d.args.hosts;
    d.conf.job = copy;
    d.conf.job_len = job_len;
    d.conf.parent = &d.parent;
    d.args.rsh = "";
    code = shoalrun_job_run_daemon(&d.args, d.kvsname, &d.conf);
    free(copy);
out:
    shoalrun_conn_fini(&d.parent);
    shoalrun_hosts_fini(&d.args.hosts);
    free(d.argv);
    free(d.rsh);
    return code;
}
