/*
 * The PMI-1 client against a scripted server in a thread: Hydra's and
 * Slurm's reply styles, limits, the line budget, a launcher that dies, one
 * that does not answer, one that answers nonsense, and port mode.
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
#include "boot/boot_internal.h"
#include "boot/boot_pmi1.h"
#include "fake_launcher.h"
#include "test.h"

#define TIMEOUT_NS 5000000000ull

typedef struct server {
    int fd, listen_fd;
    pthread_t thread;
    int slurm;          /* rc first, no msg; else Hydra's order */
    int no_rc;          /* omit rc in every reply */
    int init_rc;
    long vallen_max;
    int close_after;    /* close after this many requests (0: never) */
    const char *barrier_reply; /* NULL: "cmd=barrier_out"; "": no reply */
    const char *mapping; /* PMI_process_mapping; NULL: not found */
    const char *dead;   /* PMI_dead_processes (Hydra); NULL: not found */
    int requests, puts;
    size_t longest;     /* longest request line, newline included */
    char kvs_key[64], kvs_value[1024];
    char abort_msg[256];
    long abort_code;
} server_t;

static void srv_send(server_t *s, const char *text)
{
    size_t n = strlen(text);

    if (write(s->fd, text, n) != (ssize_t)n)
        T_FAIL("fake server write failed");
}

/* "cmd=<cmd> [rc=<rc>] <rest>" in the server's style. */
static void reply(server_t *s, const char *cmd, int rc, const char *rest)
{
    char line[2048];

    if (s->no_rc)
        snprintf(line, sizeof(line), "cmd=%s%s%s\n", cmd, *rest ? " " : "",
                 rest);
    else if (s->slurm)
        snprintf(line, sizeof(line), "cmd=%s rc=%d%s%s\n", cmd, rc,
                 *rest ? " " : "", rest);
    else
        snprintf(line, sizeof(line), "cmd=%s %s%src=%d\n", cmd, rest,
                 *rest ? " " : "", rc);
    srv_send(s, line);
}

static void serve_get(server_t *s, const pmi_msg_t *m)
{
    char rest[1200];

    T_STREQ(pmi_get(m, "kvsname"), "kvs_Odd-Name.7");
    if (strcmp(pmi_get(m, "key"), "PMI_process_mapping") == 0 &&
        s->mapping != NULL) {
        snprintf(rest, sizeof(rest), "value=%s", s->mapping);
        reply(s, "get_result", 0, rest);
    } else if (strcmp(pmi_get(m, "key"), "PMI_dead_processes") == 0 &&
               s->dead != NULL) {
        snprintf(rest, sizeof(rest), "msg=success value=%s", s->dead);
        reply(s, "get_result", 0, rest);
    } else if (strcmp(pmi_get(m, "key"), s->kvs_key) == 0) {
        snprintf(rest, sizeof(rest), "%svalue=%s",
                 s->slurm ? "" : "msg=success ", s->kvs_value);
        reply(s, "get_result", 0, rest);
    } else if (s->slurm)
        reply(s, "get_result", 1, "");
    else
        reply(s, "get_result", -1, "msg=key_not_found value=unknown");
}

static void serve_line(server_t *s, const char *line, size_t len)
{
    char rest[128];
    pmi_msg_t m;

    if (len > s->longest)
        s->longest = len;
    if (pmi_parse_abort(line, len, &s->abort_code, s->abort_msg,
                        sizeof(s->abort_msg)))
        return;
    T_OK(pmi_parse(&m, line, len));
    if (strcmp(m.cmd, "init") == 0)
        reply(s, "response_to_init", s->init_rc,
              "pmi_version=1 pmi_subversion=1");
    else if (strcmp(m.cmd, "initack") == 0) {
        T_STREQ(pmi_get(&m, "pmiid"), "3");
        srv_send(s, "cmd=initack\ncmd=set size=4\ncmd=set rank=3\n"
                    "cmd=set debug=0\n");
    } else if (strcmp(m.cmd, "get_maxes") == 0) {
        snprintf(rest, sizeof(rest),
                 "kvsname_max=256 keylen_max=64 vallen_max=%ld",
                 s->vallen_max);
        reply(s, "maxes", 0, rest);
    } else if (strcmp(m.cmd, "get_my_kvsname") == 0)
        reply(s, "my_kvsname", 0, "kvsname=kvs_Odd-Name.7");
    else if (strcmp(m.cmd, "put") == 0) {
        T_STREQ(pmi_get(&m, "kvsname"), "kvs_Odd-Name.7");
        snprintf(s->kvs_key, sizeof(s->kvs_key), "%s", pmi_get(&m, "key"));
        snprintf(s->kvs_value, sizeof(s->kvs_value), "%s",
                 pmi_get(&m, "value"));
        s->puts++;
        reply(s, "put_result", 0, s->slurm ? "" : "msg=success");
    } else if (strcmp(m.cmd, "get") == 0)
        serve_get(s, &m);
    else if (strcmp(m.cmd, "barrier_in") == 0) {
        if (s->barrier_reply == NULL)
            reply(s, "barrier_out", 0, "");
        else
            srv_send(s, s->barrier_reply);
    } else if (strcmp(m.cmd, "finalize") == 0)
        reply(s, "finalize_ack", 0, "");
    else
        T_FAIL("fake server: unexpected command %s", m.cmd);
}

static void *server_main(void *arg)
{
    server_t *s = arg;
    pmi_linebuf_t lb;
    char line[PMI_LINE_MAX + 1];
    size_t len, room;

    if (s->listen_fd >= 0) {
        s->fd = accept(s->listen_fd, NULL, NULL);
        T_ASSERT(s->fd >= 0);
    }
    pmi_linebuf_init(&lb);
    for (;;) {
        char *space = pmi_linebuf_space(&lb, &room);
        ssize_t n = read(s->fd, space, room);
        if (n <= 0)
            break;
        pmi_linebuf_added(&lb, (size_t)n);
        int got;
        while ((got = pmi_linebuf_take(&lb, line, &len)) != 0) {
            if (got < 0)
                T_FAIL("client sent an over-long line");
            serve_line(s, line, len);
            if (++s->requests == s->close_after)
                goto out;
        }
    }
out:
    close(s->fd);
    return NULL;
}

static server_t *server_new(void)
{
    server_t *s = calloc(1, sizeof(*s));

    T_ASSERT(s != NULL);
    s->vallen_max = 1024;
    s->listen_fd = -1;
    return s;
}

/* Start s on a socketpair; returns the client's end. */
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
    free(s);
}

/* ---- cases --------------------------------------------------------------- */

static void exchange(boot_pmi1_t *c, server_t *s)
{
    char value[1100];

    T_STREQ(c->kvsname, "kvs_Odd-Name.7");
    T_OK(boot_pmi1_put(c, "shoal-0-a", "v0123=x"));
    T_OK(boot_pmi1_barrier(c));
    T_OK(boot_pmi1_get(c, "shoal-0-a", value, sizeof(value)));
    T_STREQ(value, "v0123=x");
    T_ERR(boot_pmi1_get(c, "shoal-0-b", value, sizeof(value)),
          SHOAL_ERR_NOT_FOUND);
    T_ERR(boot_pmi1_get(c, "shoal-0-a", value, 4), SHOAL_ERR_TOO_LARGE);
}

static void run_style(int slurm, int no_rc)
{
    server_t *s = server_new();
    boot_pmi1_t c;

    s->slurm = slurm;
    s->no_rc = no_rc;
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS));
    T_EQ(c.rank, 0);
    T_EQ(c.size, 2);
    T_EQ(c.keylen_max, 64);
    exchange(&c, s);
    T_OK(boot_pmi1_finalize(&c));
    boot_pmi1_close(&c);
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

static void test_no_rc(void)
{
    /* A missing rc means success (get's not-found path needs rc). */
    server_t *s = server_new();
    boot_pmi1_t c;
    char value[64];

    s->no_rc = 1;
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 1, TIMEOUT_NS));
    T_OK(boot_pmi1_put(&c, "k", "v"));
    T_OK(boot_pmi1_barrier(&c));
    T_OK(boot_pmi1_get(&c, "k", value, sizeof(value)));
    T_OK(boot_pmi1_finalize(&c));
    boot_pmi1_close(&c);
    server_join(s);
}

static void test_line_budget(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;
    char value[1100], back[1100];

    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 1, TIMEOUT_NS));
    size_t room = boot_pmi1_room(&c, strlen("shoal-12-key.3"));
    memset(value, 'h', room);
    value[room] = '\0';
    T_OK(boot_pmi1_put(&c, "shoal-12-key.3", value));
    T_EQ(s->longest, PMI_LINE_MAX); /* exactly Slurm's limit */
    T_OK(boot_pmi1_get(&c, "shoal-12-key.3", back, sizeof(back)));
    T_STREQ(back, value);
    value[room] = 'h';
    value[room + 1] = '\0';
    T_ERR(boot_pmi1_put(&c, "shoal-12-key.3", value), SHOAL_ERR_TOO_LARGE);
    T_EQ(s->longest, PMI_LINE_MAX); /* nothing longer went out */
    boot_pmi1_close(&c);
    server_join(s);
}

static void test_small_limits(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;
    char value[300];

    s->vallen_max = 200;
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 1, TIMEOUT_NS));
    T_EQ(boot_pmi1_room(&c, 10), 199);
    memset(value, 'x', 200);
    value[200] = '\0';
    T_ERR(boot_pmi1_put(&c, "k", value), SHOAL_ERR_TOO_LARGE);
    value[199] = '\0';
    T_OK(boot_pmi1_put(&c, "k", value));
    boot_pmi1_close(&c);
    server_join(s);

    s = server_new();
    s->vallen_max = 20;
    T_ERR(boot_pmi1_open_fd(&c, server_start(s), 0, 1, TIMEOUT_NS),
          SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "too small") != NULL);
    server_join(s);
}

static void test_launcher_died(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;
    char value[8];

    s->close_after = 3; /* init, get_maxes, get_my_kvsname */
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS));
    T_ERR(boot_pmi1_barrier(&c), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "did it die?") != NULL);
    T_ASSERT(strstr(shoal_error_detail(), "barrier_in") != NULL);
    /* Out of step from now on: fail at once, same code. */
    T_ERR(boot_pmi1_get(&c, "k", value, sizeof(value)), SHOAL_ERR_BOOT);
    boot_pmi1_close(&c);
    server_join(s);

    s = server_new();
    s->close_after = 1;
    T_ERR(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS),
          SHOAL_ERR_BOOT);
    server_join(s);
}

static void test_timeout(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;

    s->barrier_reply = "";
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, 200000000ull));
    uint64_t t0 = base_time_ns();
    T_ERR(boot_pmi1_barrier(&c), SHOAL_ERR_TIMEOUT);
    uint64_t dt = base_time_ns() - t0;
    T_ASSERT(dt >= 190000000ull && dt < 3000000000ull);
    T_ASSERT(strstr(shoal_error_detail(), "SHOAL_BOOT_TIMEOUT") != NULL);
    boot_pmi1_close(&c);
    server_join(s);
}

static void test_nonsense_replies(void)
{
    static const char *const replies[] = {
        "cmd=put_result rc=0\n", /* the wrong command */
        "garbage without equals\n",
        "cmd=barrier_out rc=0 rc=1\n",
    };
    static const int codes[] = {SHOAL_ERR_PROTOCOL, SHOAL_ERR_PROTOCOL,
                                SHOAL_ERR_PROTOCOL};

    for (size_t i = 0; i < BASE_ARRAY_SIZE(replies); i++) {
        server_t *s = server_new();
        boot_pmi1_t c;
        s->barrier_reply = replies[i];
        T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS));
        T_ERR(boot_pmi1_barrier(&c), codes[i]);
        boot_pmi1_close(&c);
        server_join(s);
    }
    /* A barrier that reports failure. */
    server_t *s = server_new();
    boot_pmi1_t c;
    s->barrier_reply = "cmd=barrier_out rc=3 msg=nope\n";
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS));
    T_ERR(boot_pmi1_barrier(&c), SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "nope") != NULL);
    boot_pmi1_close(&c);
    server_join(s);
}

static void test_init_refused(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;

    s->init_rc = -1;
    T_ERR(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS),
          SHOAL_ERR_BOOT);
    T_ASSERT(strstr(shoal_error_detail(), "refused") != NULL);
    server_join(s);
}

static void test_abort_line(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;

    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 2, TIMEOUT_NS));
    boot_pmi1_abort(&c, 7, "bad thing\nhappened");
    boot_pmi1_close(&c);
    pthread_join(s->thread, NULL);
    T_EQ(s->abort_code, 7);
    T_STREQ(s->abort_msg, "bad thing happened");
    free(s);
}

static void test_port_mode(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;
    char hostport[64];

    s->listen_fd = fake_listen(hostport, sizeof(hostport));
    T_ASSERT(pthread_create(&s->thread, NULL, server_main, s) == 0);
    T_OK(boot_pmi1_open_port(&c, hostport, 3, TIMEOUT_NS));
    T_EQ(c.rank, 3);
    T_EQ(c.size, 4);
    exchange(&c, s);
    T_OK(boot_pmi1_finalize(&c));
    boot_pmi1_close(&c);
    server_join(s);
    /* Nobody listening there any more; and a malformed PMI_PORT. */
    T_ERR(boot_pmi1_open_port(&c, hostport, 3, TIMEOUT_NS), SHOAL_ERR_BOOT);
    T_ERR(boot_pmi1_open_port(&c, "no-port-here", 3, TIMEOUT_NS),
          SHOAL_ERR_BOOT);
}

/* boot_init over PMI_FD: the mapping, or an exchange when it is unusable. */
static void run_boot_init(const char *mapping, int want_puts)
{
    server_t *s = server_new();
    const boot_info_t *in;
    char fd[16];

    s->mapping = mapping;
    snprintf(fd, sizeof(fd), "%d", server_start(s));
    setenv("PMI_FD", fd, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "1", 1);
    unsetenv("SHOAL_BOOT");
    T_OK(base_config_load(1));
    T_OK(boot_init(&in));
    T_STREQ(in->backend, "pmi1");
    T_STREQ(in->jobid, "kvs_Odd-Name.7");
    T_EQ(in->local_size, 1);
    T_EQ(in->local_ranks[0], 0);
    T_EQ(s->puts, want_puts);
    T_OK(boot_fini());
    server_join(s);
    unsetenv("PMI_FD");
}

/* What boot_hydra_read_dead does on Hydra's SIGUSR1 (a job of 8). */
static int read_dead(boot_pmi1_t *c)
{
    char text[BOOT_TEXT_MAX + 1];
    int status = boot_pmi1_get(c, "PMI_dead_processes", text, sizeof(text));

    return status == SHOAL_OK ? boot_pmi1_note_dead(c, text, 8) : status;
}

/* Hydra's list of dead ranks: each rank is taken once, in the list's
 * order, however often it is read. */
static void test_hydra_dead(void)
{
    server_t *s = server_new();
    boot_pmi1_t c;

    s->dead = "";
    T_OK(boot_pmi1_open_fd(&c, server_start(s), 0, 8, TIMEOUT_NS));
    T_OK(read_dead(&c));
    T_EQ(boot_pmi1_take_notice(&c), -1);
    s->dead = "5";
    T_OK(read_dead(&c));
    T_EQ(boot_pmi1_take_notice(&c), 5);
    T_EQ(boot_pmi1_take_notice(&c), -1);
    s->dead = "5,3,0";
    T_OK(read_dead(&c));
    T_OK(read_dead(&c));
    T_EQ(boot_pmi1_take_notice(&c), 3);
    T_EQ(boot_pmi1_take_notice(&c), 0);
    T_EQ(boot_pmi1_take_notice(&c), -1);
    s->dead = "5,8";
    T_ERR(read_dead(&c), SHOAL_ERR_PROTOCOL);
    T_EQ(boot_pmi1_take_notice(&c), -1);
    s->dead = NULL; /* a Hydra without the key */
    T_ERR(read_dead(&c), SHOAL_ERR_NOT_FOUND);
    T_OK(boot_pmi1_finalize(&c));
    boot_pmi1_close(&c);
    server_join(s);
}

static void test_dead_list_parse(void)
{
    static const char *bad[] = {",", "1,", ",1", "-1", " 1", "+1", "1 ",
                                "1,,2", "x", "4", "1;2", "99999999999"};
    int ranks[4], n = -1;

    T_OK(boot_dead_list_parse("", 4, ranks, 4, &n));
    T_EQ(n, 0);
    T_OK(boot_dead_list_parse("2", 4, ranks, 4, &n));
    T_EQ(n, 1);
    T_EQ(ranks[0], 2);
    T_OK(boot_dead_list_parse("3,0,1", 4, ranks, 4, &n));
    T_EQ(n, 3);
    T_EQ(ranks[0], 3);
    T_EQ(ranks[1], 0);
    T_EQ(ranks[2], 1);
    /* More than cap: the first cap are kept. */
    T_OK(boot_dead_list_parse("3,2,1,0,3", 4, ranks, 2, &n));
    T_EQ(n, 2);
    T_EQ(ranks[1], 2);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_ERR(boot_dead_list_parse(bad[i], 4, ranks, 4, &n),
              SHOAL_ERR_PROTOCOL);
        T_EQ(n, 0);
    }
}

static void test_boot_init_locality(void)
{
    run_boot_init("(vector,(0,1,1))", 0);
    run_boot_init(NULL, 1);            /* not found: exchange node ids */
    run_boot_init("(vector,(x))", 1);  /* unparsable: exchange too */
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"hydra_style", test_hydra_style},
        {"slurm_style", test_slurm_style},
        {"no_rc", test_no_rc},
        {"line_budget", test_line_budget},
        {"small_limits", test_small_limits},
        {"launcher_died", test_launcher_died},
        {"timeout", test_timeout},
        {"nonsense_replies", test_nonsense_replies},
        {"init_refused", test_init_refused},
        {"abort_line", test_abort_line},
        {"port_mode", test_port_mode},
        {"boot_init_locality", test_boot_init_locality},
        {"hydra_dead", test_hydra_dead},
        {"dead_list_parse", test_dead_list_parse},
    };
    return T_RUN(cases, argc, argv);
}
