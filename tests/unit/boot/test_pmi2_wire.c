/*
 * The PMI-2 body parser and formatter: both servers' reply styles, the
 * ";;" escape, the length header in either alignment, limits and garbage.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "boot/pmi2_wire.h"
#include "test.h"

static pmi2_msg_t msg;

static int parse(const char *body)
{
    return pmi2_parse(&msg, body, strlen(body));
}

static void test_hydra_and_slurm(void)
{
    /* Hydra: rc last; Slurm: rc first (launchers.md §1.4, §4.3). */
    T_OK(parse("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;"
               "rank=0;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;"
               "rc=0;"));
    T_STREQ(msg.cmd, "fullinit-response");
    T_STREQ(pmi2_get(&msg, "size"), "2");
    T_EQ(pmi2_rc(&msg), 0);
    T_EQ(pmi2_get_bool(&msg, "debugged", -1), 0);
    T_OK(parse("cmd=kvs-get-response;rc=0;found=TRUE;value=hello-1;"));
    T_EQ(pmi2_get_bool(&msg, "found", -1), 1);
    T_STREQ(pmi2_get(&msg, "value"), "hello-1");
    T_OK(parse("cmd=kvs-get-response;rc=0;found=FALSE;"));
    T_EQ(pmi2_get_bool(&msg, "found", -1), 0);
    T_ASSERT(pmi2_get(&msg, "value") == NULL);
    T_EQ(pmi2_get_bool(&msg, "missing", 7), 7);
    /* Values may hold '=', ',', spaces and parentheses. */
    T_OK(parse("cmd=info-getjobattr-response;found=TRUE;"
               "value=(vector,(0,1,4));rc=0;"));
    T_STREQ(pmi2_get(&msg, "value"), "(vector,(0,1,4))");
    T_OK(parse("cmd=x;v=a=b c;"));
    T_STREQ(pmi2_get(&msg, "v"), "a=b c");
}

static void test_escapes(void)
{
    T_OK(parse("cmd=kvs-get-response;value=a;;b;;;rc=0;"));
    T_STREQ(pmi2_get(&msg, "value"), "a;b;");
    T_STREQ(pmi2_get(&msg, "rc"), "0");
    T_OK(parse("cmd=x;v=;;;;;"));
    T_STREQ(pmi2_get(&msg, "v"), ";;");
    /* Empty values, and a missing final ';' (lenient). */
    T_OK(parse("cmd=x;empty=;last=z"));
    T_STREQ(pmi2_get(&msg, "empty"), "");
    T_STREQ(pmi2_get(&msg, "last"), "z");
}

static void test_malformed(void)
{
    T_ERR(parse(""), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=x;novalue;"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=x;=v;"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=x;k"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("rc=0;"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=;rc=0;"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=x;rc=0;rc=1;"), SHOAL_ERR_PROTOCOL);
    T_ERR(parse("cmd=x;v=a\nb;"), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse(&msg, "cmd=x;v=a\0b;", 12), SHOAL_ERR_PROTOCOL);
    T_OK(parse("cmd=x;rc=zero;"));
    T_EQ(pmi2_rc(&msg), -1);
    long v;
    T_ERR(pmi2_get_long(&msg, "rc", &v), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_get_long(&msg, "nope", &v), SHOAL_ERR_NOT_FOUND);
    T_OK(parse("cmd=x;found=maybe;"));
    T_EQ(pmi2_get_bool(&msg, "found", 0), -1);
}

static void test_limits(void)
{
    char *body = malloc(PMI2_BODY_MAX + 2);
    char many[40 * 8];
    size_t n = 0;

    T_ASSERT(body != NULL);
    /* A long value that just fits, then one byte too many. */
    memcpy(body, "cmd=x;v=", 8);
    memset(body + 8, 'a', PMI2_BODY_MAX - 9);
    body[PMI2_BODY_MAX - 1] = ';';
    T_OK(pmi2_parse(&msg, body, PMI2_BODY_MAX));
    T_EQ(strlen(pmi2_get(&msg, "v")), PMI2_BODY_MAX - 9);
    body[PMI2_BODY_MAX] = ';';
    T_ERR(pmi2_parse(&msg, body, PMI2_BODY_MAX + 1), SHOAL_ERR_PROTOCOL);
    free(body);
    n += (size_t)sprintf(many, "cmd=x;");
    for (int i = 0; i < PMI2_TOKENS_MAX; i++)
        n += (size_t)sprintf(many + n, "k%d=;", i);
    T_ERR(parse(many), SHOAL_ERR_PROTOCOL);
}

static void test_header(void)
{
    size_t len = 0;

    T_OK(pmi2_parse_header("   113", &len));
    T_EQ(len, 113);
    T_OK(pmi2_parse_header("48    ", &len));
    T_EQ(len, 48);
    T_OK(pmi2_parse_header(" 8192 ", &len));
    T_EQ(len, PMI2_BODY_MAX);
    T_ERR(pmi2_parse_header("      ", &len), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse_header("000000", &len), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse_header("  8193", &len), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse_header("4 8   ", &len), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse_header("cmd=in", &len), SHOAL_ERR_PROTOCOL);
    T_ERR(pmi2_parse_header("-1    ", &len), SHOAL_ERR_PROTOCOL);
}

static void test_format(void)
{
    pmi2_fmt_t f;
    size_t len;

    pmi2_fmt_init(&f, "kvs-put");
    pmi2_fmt_add(&f, "key", "shoal-0-a");
    pmi2_fmt_add(&f, "value", "x;y");
    pmi2_fmt_add_long(&f, "n", -3);
    T_OK(pmi2_fmt_end(&f));
    T_EQ(f.len, strlen(f.buf));
    T_STREQ(f.buf + PMI2_HDR_LEN, "cmd=kvs-put;key=shoal-0-a;value=x;;y;n=-3;");
    T_OK(pmi2_parse_header(f.buf, &len));
    T_EQ(len, f.len - PMI2_HDR_LEN);
    T_ASSERT(f.buf[0] != ' '); /* left-aligned */
    /* Round trip through the parser. */
    T_OK(pmi2_parse(&msg, f.buf + PMI2_HDR_LEN, len));
    T_STREQ(pmi2_get(&msg, "value"), "x;y");
    /* Bad keys and values stick. */
    pmi2_fmt_init(&f, "x");
    pmi2_fmt_add(&f, "a;b", "v");
    pmi2_fmt_add(&f, "ok", "v");
    T_ERR(pmi2_fmt_end(&f), SHOAL_ERR_INVALID);
    pmi2_fmt_init(&f, "x");
    pmi2_fmt_add(&f, "k", "line\nbreak");
    T_ERR(pmi2_fmt_end(&f), SHOAL_ERR_INVALID);
    pmi2_fmt_init(&f, "");
    T_ERR(pmi2_fmt_end(&f), SHOAL_ERR_INVALID);
}

static void test_format_limit(void)
{
    pmi2_fmt_t f;
    char *big = malloc(PMI2_BODY_MAX);

    T_ASSERT(big != NULL);
    memset(big, ';', PMI2_BODY_MAX / 2);
    big[PMI2_BODY_MAX / 2] = '\0';
    /* Escaping doubles it past the limit. */
    pmi2_fmt_init(&f, "kvs-put");
    pmi2_fmt_add(&f, "value", big);
    T_ERR(pmi2_fmt_end(&f), SHOAL_ERR_TOO_LARGE);
    free(big);
}

int main(int argc, char **argv)
{
    static const t_case_t cases[] = {
        {"hydra_and_slurm", test_hydra_and_slurm},
        {"escapes", test_escapes},
        {"malformed", test_malformed},
        {"limits", test_limits},
        {"header", test_header},
        {"format", test_format},
        {"format_limit", test_format_limit},
    };
    return T_RUN(cases, argc, argv);
}
