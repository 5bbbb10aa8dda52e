/*
 * The PMI-2 client against a scripted server in a thread: Hydra's and
 * Slurm's reply styles (length alignment, rc position), escaped ';' in
 * values, long values, replies split across reads, malformed and wrong
 * replies, a launcher that only speaks PMI-1, one that dies, one that does
 * not answer, port mode, and boot_init on top (locality from the mapping).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot.h"
#include "boot/boot_pmi2.h"
#include "fake_launcher.h"
#include "test.h"

#define TIMEOUT_NS 5000000000ull
#define NKEYS 64

typedef struct server {
    int fd, listen_fd;
    pthread_t thread;
    int slurm;            /* left-aligned length, rc first */
    int trickle;          /* write replies one byte at a time */
    int init_version;     /* what response_to_init says (2 unless set) */
    int rank_reply;       /* rank in fullinit-response */
    int close_after;      /* close after this many messages (0: never) */
    const char *fence_reply; /* raw bytes instead of the fence reply; "": none */
    const char *mapping;  /* PMI_process_mapping; NULL: found=FALSE */
    int requests, epoch_gets;
    char keys[NKEYS][64];
    char *values[NKEYS];
    int nkeys;
    char fullinit_rank[16], fullinit_jobid[64];
    char abort_msg[600];
    int aborted;
} server_t;

static void srv_write(server_t *s, const char *p, size_t n)
{
    if (s->trickle) {
        for (size_t i = 0; i < n; i++)
            if (write(s->fd, p + i, 1) != 1)
                T_FAIL("fake server write failed");
        return;
    }
    if (write(s->fd, p, n) != (ssize_t)n)
        T_FAIL("fake server write failed");
}

/* Send body "cmd=<cmd>-response;" + rc + rest in the server's style. */
static void reply(server_t *s, const char *cmd, const char *rest)
{
    char body[PMI2_BODY_MAX + 1], msg[PMI2_BODY_MAX + 8];
    int n;

    if (s->slurm)
        n = snprintf(body, sizeof(body), "cmd=%s-response;rc=0;%s", cmd,
                     rest);
    else
        n = snprintf(body, sizeof(body), "cmd=%s-response;%src=0;", cmd,
                     rest);
    T_ASSERT(n > 0 && n < (int)sizeof(body));
    n = snprintf(msg, sizeof(msg), s->slurm ? "%-6d%s" : "%6d%s", n, body);
    srv_write(s, msg, (size_t)n);
}

static int read_full(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The init line, byte by byte up to its newline. */
static int serve_init(server_t *s)
{
    char line[128], out[128];
    size_t n = 0;

    while (n < sizeof(line) - 1) {
        if (read(s->fd, line + n, 1) != 1)
            return -1;
        if (line[n++] == '\n')
            break;
    }
    line[n] = '\0';
    T_STREQ(line, "cmd=init pmi_version=2 pmi_subversion=0\n");
    snprintf(out, sizeof(out),
             "cmd=response_to_init pmi_version=%d pmi_subversion=%d rc=%d\n",
             s->init_version, s->init_version == 2 ? 0 : 1,
             s->init_version == 2 ? 0 : -1);
    srv_write(s, out, strlen(out));
    return 0;
}

static const char *lookup(server_t *s, const char *key)
{
    for (int i = 0; i < s->nkeys; i++)
        if (strcmp(s->keys[i], key) == 0)
            return s->values[i];
    return NULL;
}

/* Escape ';' as the wire wants it. */
static void escaped(const char *v, char *out, size_t cap)
{
    size_t n = 0;

    for (; *v != '\0' && n + 3 < cap; v++) {
        out[n++] = *v;
        if (*v == ';')
            out[n++] = ';';
    }
    out[n] = '\0';
}

static void serve_get(server_t *s, const pmi2_msg_t *m, const char *cmd,
                      const char *v)
{
    char rest[PMI2_BODY_MAX], esc[PMI2_BODY_MAX - 64];

    (void)m;
    if (v == NULL) {
        reply(s, cmd, "found=FALSE;");
        return;
    }
    escaped(v, esc, sizeof(esc));
    snprintf(rest, sizeof(rest), "found=TRUE;value=%s;", esc);
    reply(s, cmd, rest);
}

static void serve_msg(server_t *s, const pmi2_msg_t *m)
{
    char rest[256];

    if (strcmp(m->cmd, "fullinit") == 0) {
        snprintf(s->fullinit_rank, sizeof(s->fullinit_rank), "%s",
                 pmi2_get(m, "pmirank"));
        snprintf(s->fullinit_jobid, sizeof(s->fullinit_jobid), "%s",
                 pmi2_get(m, "pmijobid"));
        T_STREQ(pmi2_get(m, "threaded"), "FALSE");
        snprintf(rest, sizeof(rest),
                 "pmi-version=2;pmi-subversion=0;rank=%d;size=4;appnum=0;"
                 "debugged=FALSE;pmiverbose=FALSE;",
                 s->rank_reply);
        reply(s, "fullinit", rest);
    } else if (strcmp(m->cmd, "job-getid") == 0)
        reply(s, "job-getid", "jobid=kvs_7;;odd;"); /* escaped */
    else if (strcmp(m->cmd, "info-getjobattr") == 0) {
        T_STREQ(pmi2_get(m, "key"), "PMI_process_mapping");
        serve_get(s, m, "info-getjobattr", s->mapping);
    } else if (strcmp(m->cmd, "kvs-put") == 0) {
        T_ASSERT(s->nkeys < NKEYS);
        snprintf(s->keys[s->nkeys], 64, "%s", pmi2_get(m, "key"));
        s->values[s->nkeys++] = strdup(pmi2_get(m, "value"));
        reply(s, "kvs-put", "");
    } else if (strcmp(m->cmd, "kvs-get") == 0) {
        T_STREQ(pmi2_get(m, "jobid"), "kvs_7;odd");
        s->epoch_gets += strcmp(pmi2_get(m, "key"), PMI2_EPOCH_KEY) == 0;
        serve_get(s, m, "kvs-get", lookup(s, pmi2_get(m, "key")));
    } else if (strcmp(m->cmd, "kvs-fence") == 0) {
        if (s->fence_reply == NULL)
            reply(s, "kvs-fence", "");
        else
            srv_write(s, s->fence_reply, strlen(s->fence_reply));
    } else if (strcmp(m->cmd, "finalize") == 0)
        reply(s, "finalize", "");
    else if (strcmp(m->cmd, "abort") == 0) {
        s->aborted = 1;
        snprintf(s->abort_msg, sizeof(s->abort_msg), "%s",
                 pmi2_get(m, "msg"));
    } else
        T_FAIL("fake server: unexpected command %s", m->cmd);
}

static void *server_main(void *arg)
{
    server_t *s = arg;
    static pmi2_msg_t m; /* one server thread at a time */
    char hdr[PMI2_HDR_LEN + 1], body[PMI2_BODY_MAX];
    size_t len;

    if (s->listen_fd >= 0) {
        s->fd = accept(s->listen_fd, NULL, NULL);
        T_ASSERT(s->fd >= 0);
    }
    if (serve_init(s) != 0 || s->init_version != 2)
        goto out;
    while (read_full(s->fd, hdr, PMI2_HDR_LEN) == 0) {
        hdr[PMI2_HDR_LEN] = '\0';
        T_OK(pmi2_parse_header(hdr, &len));
        T_ASSERT(hdr[0] != ' '); /* the client left-aligns */
        if (read_full(s->fd, body, len) != 0)
            break;
        T_OK(pmi2_parse(&m, body, len));
        serve_msg(s, &m);
        if (++s->requests == s->close_after)
            break;
    }
out:
    close(s->fd);
    return NULL;
}

static server_t *server_new(void)
{
    server_t *s = calloc(1, sizeof(*s));

    T_ASSERT(s != NULL);
    s->listen_fd = -1;
    s->init_version = 2;
    return s;
}

static int server_start(server_t *s)
{
    int client = fake_socketpair(&s->fd);

    T_ASSERT(pthread_create(&s->thread, NULL, server_main, s) == 0);
    return client;
}

static void server_join(server_t *s)
{
    pthread_join(s->thread, NULL);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    for (int i = 0; i < s->nkeys; i++)
        free(s->values[i]);
    free(s);
}

/* ---- cases --------------------------------------------------------------- */

static void exchange(boot_pmi2_t *c)
{
    char value[PMI2_VALUE_MAX + 1], longv[PMI2_VALUE_MAX + 2];

    T_STREQ(c->jobid, "kvs_7;odd");
    T_OK(boot_pmi2_put(c, "shoal-0-a", "v0123=x;y;;z"));
    memset(longv, 'L', PMI2_VALUE_MAX);
    longv[PMI2_VALUE_MAX] = '\0';
    T_OK(boot_pmi2_put(c, "shoal-0-long", longv));
    T_OK(boot_pmi2_fence(c));
    T_OK(boot_pmi2_get(c, "shoal-0-a", value, sizeof(value)));
    T_STREQ(value, "v0123=x;y;;z");
    T_OK(boot_pmi2_get(c, "shoal-0-long", value, sizeof(value)));
    T_STREQ(value, longv);
    T_ERR(boot_pmi2_get(c, "shoal-0-b", value, sizeof(value)),
          SHOAL_ERR_NOT_FOUND);
    T_ERR(boot_pmi2_get(c, "shoal-0-a", value, 4), SHOAL_ERR_TOO_LARGE);
    /* Too long for Hydra, refused before it goes out. */
    longv[PMI2_VALUE_MAX] = 'L';
    longv[PMI2_VALUE_MAX + 1] = '\0';
    T_ERR(boot_pmi2_put(c, "shoal-0-x", longv), SHOAL_ERR_TOO_LARGE);
    T_ERR(boot_pmi2_jobattr(c, "PMI_process_mapping", value, sizeof(value)),
          SHOAL_ERR_NOT_FOUND);
}

static void run_style(int slurm, int trickle)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    s->slurm = slurm;
    s->trickle = trickle;
    s->rank_reply = 2;
    T_OK(boot_pmi2_open_fd(&c, server_start(s), 2, "12.0", TIMEOUT_NS));
    T_STREQ(s->fullinit_rank, "2");
    T_STREQ(s->fullinit_jobid, "12.0");
    T_EQ(c.rank, 2);
    T_EQ(c.size, 4);
    T_EQ(c.appnum, 0);
    exchange(&c);
    /* Every fence is followed by the get Hydra holds until all fenced. */
    T_EQ(s->epoch_gets, 1);
    T_OK(boot_pmi2_finalize(&c));
    boot_pmi2_close(&c);
    server_join(s);
}

static void test_hydra_style(void)
{
    run_style(0, 0);
}

static void test_slurm_style(void)
{
    run_style(1, 0);
}

static void test_split_reads(void)
{
    run_style(1, 1);
}

static void test_pmi1_only(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    s->init_version = 1;
    T_ERR(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, TIMEOUT_NS),
          SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "SHOAL_BOOT=pmi1") != NULL);
    server_join(s);
}

static void test_wrong_rank(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    s->rank_reply = 3;
    T_ERR(boot_pmi2_open_fd(&c, server_start(s), 1, NULL, TIMEOUT_NS),
          SHOAL_ERR_PROTOCOL);
    T_STREQ(s->fullinit_jobid, "");
    server_join(s);
}

static void test_malformed_replies(void)
{
    static const char *const replies[] = {
        "26    cmd=kvs-put-response;rc=0;", /* the wrong command */
        "abcdefcmd=kvs-fence-response;",      /* a bad length */
        "000000",                             /* a zero length */
        "99999 cmd=kvs-fence-response;rc=0;", /* more than the limit */
        "40    cmd=kvs-fence-resp",           /* a short body, then EOF */
        "18    garbage-without-eq",           /* no key=value */
        "33    cmd=kvs-fence-response;rc=0;rc=0;", /* a repeated key */
        "28    cmd=kvs-fence-response;\001c=0;", /* a control byte */
    };

    for (size_t i = 0; i < BASE_ARRAY_SIZE(replies); i++) {
        server_t *s = server_new();
        boot_pmi2_t c;
        char v[8];
        s->fence_reply = replies[i];
        s->close_after = i == 4 ? 3 : 0;
        T_OK(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, TIMEOUT_NS));
        int status = boot_pmi2_fence(&c);
        T_ASSERT(status == SHOAL_ERR_PROTOCOL || status == SHOAL_ERR_BOOT);
        if (i == 5)
            T_ASSERT(strstr(shoal_error_detail(),
                            "bad PMI-2 reply to 'kvs-fence' from the "
                            "launcher: PMI-2 token at offset 0 is not "
                            "key=value;") != NULL);
        /* Out of step from now on: fail at once with the same code. */
        T_ERR(boot_pmi2_get(&c, "k", v, sizeof(v)), status);
        shutdown(c.conn.fd, SHUT_RDWR);
        boot_pmi2_close(&c);
        server_join(s);
    }
    /* A fence that reports failure. */
    server_t *s = server_new();
    boot_pmi2_t c;
    s->fence_reply = "40    cmd=kvs-fence-response;rc=5;errmsg=nope;";
    T_OK(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, TIMEOUT_NS));
    T_ERR(boot_pmi2_fence(&c), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "nope") != NULL);
    T_OK(boot_pmi2_finalize(&c));
    boot_pmi2_close(&c);
    server_join(s);
}

static void test_launcher_died(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    s->close_after = 2; /* fullinit, job-getid */
    T_OK(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, TIMEOUT_NS));
    T_ERR(boot_pmi2_fence(&c), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "did it die?") != NULL);
    boot_pmi2_close(&c);
    server_join(s);
}

static void test_timeout(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    s->fence_reply = "";
    T_OK(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, 200000000ull));
    T_ERR(boot_pmi2_fence(&c), SHOAL_ERR_TIMEOUT);
    T_ASSERT(strstr(shoal_error_detail(), "SHOAL_BOOT_TIMEOUT") != NULL);
    shutdown(c.conn.fd, SHUT_RDWR);
    boot_pmi2_close(&c);
    server_join(s);
}

static void test_abort(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;

    T_OK(boot_pmi2_open_fd(&c, server_start(s), 0, NULL, TIMEOUT_NS));
    boot_pmi2_abort(&c, "bad; thing\nhappened");
    boot_pmi2_close(&c);
    pthread_join(s->thread, NULL);
    T_EQ(s->aborted, 1);
    T_STREQ(s->abort_msg, "bad; thing happened");
    free(s);
}

static void test_port_mode(void)
{
    server_t *s = server_new();
    boot_pmi2_t c;
    char hostport[64];

    s->listen_fd = fake_listen(hostport, sizeof(hostport));
    s->rank_reply = 3;
    T_ASSERT(pthread_create(&s->thread, NULL, server_main, s) == 0);
    T_OK(boot_pmi2_open_port(&c, hostport, 3, NULL, TIMEOUT_NS));
    T_STREQ(s->fullinit_rank, "3");
    T_EQ(c.rank, 3);
    exchange(&c);
    T_OK(boot_pmi2_finalize(&c));
    boot_pmi2_close(&c);
    server_join(s);
}

/* boot_init over PMI-2: rank, size and locality from the mapping. */
static void test_boot_init(void)
{
    server_t *s = server_new();
    const boot_info_t *in;
    char fd[16];

    s->rank_reply = 2;
    s->mapping = "(vector,(0,2,2))"; /* ranks 0,1 on node 0; 2,3 on 1 */
    snprintf(fd, sizeof(fd), "%d", server_start(s));
    setenv("PMI_FD", fd, 1);
    setenv("PMI_RANK", "2", 1);
    setenv("PMI_SIZE", "4", 1);
    setenv("SLURM_MPI_TYPE", "pmi2", 1); /* auto picks PMI-2 under srun */
    unsetenv("SHOAL_BOOT");
    T_OK(base_config_load(1));
    T_OK(boot_init(&in));
    T_STREQ(in->backend, "pmi2");
    T_STREQ(in->jobid, "kvs_7;odd");
    T_EQ(in->rank, 2);
    T_EQ(in->size, 4);
    T_EQ(in->local_rank, 0);
    T_EQ(in->local_size, 2);
    T_EQ(in->local_ranks[0], 2);
    T_EQ(in->local_ranks[1], 3);
    T_OK(boot_put("k", "\x01;\x02", 3));
    T_OK(boot_fence());
    char back[8];
    size_t n;
    T_OK(boot_get(2, "k", back, sizeof(back), &n));
    T_EQ(n, 3);
    T_ASSERT(memcmp(back, "\x01;\x02", 3) == 0);
    T_OK(boot_fini());
    server_join(s);
    unsetenv("PMI_FD");
    unsetenv("SLURM_MPI_TYPE");
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"hydra_style", test_hydra_style},
        {"slurm_style", test_slurm_style},
        {"split_reads", test_split_reads},
        {"pmi1_only", test_pmi1_only},
        {"wrong_rank", test_wrong_rank},
        {"malformed_replies", test_malformed_replies},
        {"launcher_died", test_launcher_died},
        {"timeout", test_timeout},
        {"abort", test_abort},
        {"port_mode", test_port_mode},
        {"boot_init", test_boot_init},
    };
    return T_RUN(cases, argc, argv);
}
