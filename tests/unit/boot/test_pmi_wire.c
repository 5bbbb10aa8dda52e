/* The PMI-1 line parser, formatter and line splitter. */
#define _GNU_SOURCE
#include <string.h>

#include "boot/pmi_wire.h"
#include "test.h"

static pmi_msg_t msg;

static int parse(const char *line)
{
    return pmi_parse(&msg, line, strlen(line));
}

static void test_good_lines(void)
{
    T_OK(parse("cmd=put kvsname=kvs_1 key=shoal-0-a value=00ff\n"));
    T_STREQ(msg.cmd, "put");
    T_STREQ(pmi_get(&msg, "kvsname"), "kvs_1");
    T_STREQ(pmi_get(&msg, "key"), "shoal-0-a");
    T_STREQ(pmi_get(&msg, "value"), "00ff");
    T_ASSERT(pmi_get(&msg, "missing") == NULL);
    /* Without the newline, with extra spaces anywhere. */
    T_OK(parse("   cmd=barrier_out    rc=0  "));
    T_STREQ(msg.cmd, "barrier_out");
    T_EQ(msg.ntokens, 2);
}

static void test_any_order(void)
{
    /* Slurm puts rc first, Hydra last; cmd need not be first either. */
    T_OK(parse("rc=0 value=abc cmd=get_result msg=success\n"));
    T_STREQ(msg.cmd, "get_result");
    T_STREQ(pmi_get(&msg, "value"), "abc");
    T_EQ(pmi_rc(&msg), 0);
    T_OK(parse("cmd=get_result msg=key_x_not_found value=unknown rc=-1\n"));
    T_EQ(pmi_rc(&msg), -1);
}

static void test_values(void)
{
    long v;

    T_OK(parse("cmd=put key=k value=a=b,c;d==\n"));
    T_STREQ(pmi_get(&msg, "value"), "a=b,c;d==");
    T_OK(parse("cmd=x msg= rc=7\n"));
    T_STREQ(pmi_get(&msg, "msg"), "");
    T_EQ(pmi_rc(&msg), 7);
    T_OK(parse("cmd=finalize_ack\n"));
    T_EQ(pmi_rc(&msg), 0); /* missing rc means success */
    T_OK(parse("cmd=x rc=yes size=12 bad=1x\n"));
    T_EQ(pmi_rc(&msg), -1); /* a non-number rc is a failure */
    T_OK(pmi_get_long(&msg, "size", &v));
    T_EQ(v, 12);
    T_ERR(pmi_get_long(&msg, "bad", &v), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi_get_long(&msg, "none", &v), SHOAL_ERR_NOT_FOUND);
}

/* A line of total bytes (newline included when nl). */
static void make_line(char *buf, size_t total, int nl)
{
    size_t body = nl ? total - 1 : total;

    memcpy(buf, "cmd=put value=", 14);
    memset(buf + 14, 'v', body - 14);
    if (nl)
        buf[body] = '\n';
    buf[total] = '\0';
}

static void test_length_limit(void)
{
    char line[1100];

    make_line(line, PMI_LINE_MAX, 1);
    T_OK(parse(line));
    T_EQ(strlen(pmi_get(&msg, "value")), PMI_LINE_MAX - 15);
    make_line(line, PMI_LINE_MAX + 1, 1);
    T_ERR(parse(line), SHOAL_ERR_PROTOCOL);
    T_ASSERT(strstr(shoal_error_detail(), "1025") != NULL);
    /* The newline counts even when absent. */
    make_line(line, PMI_LINE_MAX, 0);
    T_ERR(parse(line), SHOAL_ERR_PROTOCOL);
    make_line(line, PMI_LINE_MAX - 1, 0);
    T_OK(parse(line));
}

static void test_garbage(void)
{
    static const char *const bad[] = {
        "hello world\n",     /* tokens without '=' */
        "=x cmd=a\n",        /* empty key */
        "cmd\n",             /* no '=' */
        "cmd=a\tb=c\n",      /* control character */
        "cmd=a b=c\r\n",     /* carriage return */
        "cmd=a b=\x7f\n",    /* DEL */
        "cmd=a key=1 key=2\n", /* repeated key */
        "cmd=a cmd=b\n",
    };
    char nul[] = "cmd=a\0b=c\n";

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (parse(bad[i]) != SHOAL_ERR_PROTOCOL)
            T_FAIL("accepted bad line %zu: %s", i, bad[i]);
        T_ASSERT(shoal_error_detail()[0] != '\0');
    }
    T_ERR(pmi_parse(&msg, nul, sizeof(nul) - 1), SHOAL_ERR_PROTOCOL);
}

static void test_empty_and_no_cmd(void)
{
    T_ERR(parse(""), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("\n"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("    \n"), SHOAL_ERR_PROTOCOL);
    T_ASSERT(strstr(shoal_error_detail(), "empty") != NULL);
    T_ERR(parse("key=value value=x\n"), SHOAL_ERR_PROTOCOL);
    T_ASSERT(strstr(shoal_error_detail(), "cmd") != NULL);
    T_ERR(parse("cmd= x=y\n"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("mcmd=spawn\n"), SHOAL_ERR_PROTOCOL);
}

static void test_too_many_tokens(void)
{
    char line[PMI_LINE_MAX];
    size_t n = (size_t)snprintf(line, sizeof(line), "cmd=x");

    for (int i = 0; i < PMI_TOKENS_MAX; i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, " k%d=v", i);
    T_ERR(parse(line), SHOAL_ERR_PROTOCOL);
}

static void test_format(void)
{
    pmi_fmt_t f;

    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "kvsname", "kvs_7");
    pmi_fmt_add(&f, "key", "k");
    pmi_fmt_add(&f, "value", "a=b");
    pmi_fmt_add_long(&f, "n", -12);
    T_OK(pmi_fmt_end(&f));
    T_STREQ(f.buf, "cmd=put kvsname=kvs_7 key=k value=a=b n=-12\n");
    T_EQ(f.len, strlen(f.buf));
    /* What we format, we parse back. */
    T_OK(pmi_parse(&msg, f.buf, f.len));
    T_STREQ(pmi_get(&msg, "value"), "a=b");

    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "value", "has space");
    T_ERR(pmi_fmt_end(&f), SHOAL_ERR_INVALID);
    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "k=y", "v");
    T_ERR(pmi_fmt_end(&f), SHOAL_ERR_INVALID);
    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "value", "new\nline");
    T_ERR(pmi_fmt_end(&f), SHOAL_ERR_INVALID);
    pmi_fmt_init(&f, "bad cmd");
    T_ERR(pmi_fmt_end(&f), SHOAL_ERR_INVALID);
}

static void test_format_limit(void)
{
    char value[PMI_LINE_MAX];
    pmi_fmt_t f;
    /* "cmd=put value=" + v + "\n" == PMI_LINE_MAX exactly. */
    size_t fits = PMI_LINE_MAX - strlen("cmd=put value=") - 1;

    memset(value, 'x', fits);
    value[fits] = '\0';
    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "value", value);
    T_OK(pmi_fmt_end(&f));
    T_EQ(f.len, PMI_LINE_MAX);
    value[fits] = 'x';
    value[fits + 1] = '\0';
    pmi_fmt_init(&f, "put");
    pmi_fmt_add(&f, "value", value);
    T_ERR(pmi_fmt_end(&f), SHOAL_ERR_TOO_LARGE);
}

static void test_abort(void)
{
    char m[128];
    long code;
    const char *mpich = "cmd=abort exitcode=5 message=Fatal error in x: y\n";

    T_EQ(pmi_parse_abort(mpich, strlen(mpich), &code, m, sizeof(m)), 1);
    T_EQ(code, 5);
    T_STREQ(m, "Fatal error in x: y");
    T_EQ(pmi_parse_abort("cmd=abort\n", 10, &code, m, sizeof(m)), 1);
    T_EQ(code, 1);
    T_STREQ(m, "");
    T_EQ(pmi_parse_abort("cmd=abort exitcode=zz error_msg=a\tb", 35, &code,
                         m, sizeof(m)),
         1);
    T_EQ(code, 1);
    T_STREQ(m, "a b");
    T_EQ(pmi_parse_abort("cmd=aborted\n", 12, &code, m, sizeof(m)), 0);
    T_EQ(pmi_parse_abort("cmd=put\n", 8, &code, m, sizeof(m)), 0);
    /* Truncated to the buffer. */
    T_EQ(pmi_parse_abort(mpich, strlen(mpich), &code, m, 6), 1);
    T_STREQ(m, "Fatal");
}

static void feed(pmi_linebuf_t *lb, const char *data, size_t n)
{
    while (n > 0) {
        size_t room;
        char *space = pmi_linebuf_space(lb, &room);
        size_t k = n < room ? n : room;
        memcpy(space, data, k);
        pmi_linebuf_added(lb, k);
        data += k;
        n -= k;
        if (n > 0)
            T_FAIL("line buffer full without taking lines");
    }
}

static void test_linebuf(void)
{
    pmi_linebuf_t lb;
    char line[PMI_LINE_MAX + 1];
    size_t len;

    pmi_linebuf_init(&lb);
    feed(&lb, "cmd=a\ncmd=b x=1\ncmd=", 20);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_STREQ(line, "cmd=a\n");
    T_EQ(len, 6);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_STREQ(line, "cmd=b x=1\n");
    T_EQ(pmi_linebuf_take(&lb, line, &len), 0);
    T_EQ(pmi_linebuf_pending(&lb), 4);
    feed(&lb, "c\n", 2);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_STREQ(line, "cmd=c\n");
    T_EQ(pmi_linebuf_take(&lb, line, &len), 0);
}

static void test_linebuf_overlong(void)
{
    pmi_linebuf_t lb;
    char junk[1500], line[PMI_LINE_MAX + 1];
    size_t len;

    memset(junk, 'j', sizeof(junk));
    pmi_linebuf_init(&lb);
    /* No newline within the limit: reported once, skipped to the newline. */
    feed(&lb, junk, 1200);
    T_ERR(pmi_linebuf_take(&lb, line, &len), SHOAL_ERR_PROTOCOL);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 0);
    feed(&lb, junk, 300);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 0);
    feed(&lb, "jj\ncmd=ok\n", 10);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_STREQ(line, "cmd=ok\n");
    /* A long line that ends inside the buffer. */
    junk[1100] = '\n';
    feed(&lb, junk, 1101);
    T_ERR(pmi_linebuf_take(&lb, line, &len), SHOAL_ERR_PROTOCOL);
    feed(&lb, "cmd=next\n", 9);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_STREQ(line, "cmd=next\n");
    /* Exactly the limit is fine. */
    memset(junk, 'k', PMI_LINE_MAX - 1);
    junk[PMI_LINE_MAX - 1] = '\n';
    feed(&lb, junk, PMI_LINE_MAX);
    T_EQ(pmi_linebuf_take(&lb, line, &len), 1);
    T_EQ(len, PMI_LINE_MAX);
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"good_lines", test_good_lines},
        {"any_order", test_any_order},
        {"values", test_values},
        {"length_limit", test_length_limit},
        {"garbage", test_garbage},
        {"empty_and_no_cmd", test_empty_and_no_cmd},
        {"too_many_tokens", test_too_many_tokens},
        {"format", test_format},
        {"format_limit", test_format_limit},
        {"abort", test_abort},
        {"linebuf", test_linebuf},
        {"linebuf_overlong", test_linebuf_overlong},
    };
    return T_RUN(cases, argc, argv);
}
