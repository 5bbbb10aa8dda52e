/*
 * PMI-1 line parser, formatter and line splitter.  The parser is the code
 * that faces whatever a launcher or a misbehaving rank sends, so it checks
 * every byte and reports what it rejected (tests/fuzz/fuzz_pmi_wire.c
 * feeds it garbage).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "boot/pmi_wire.h"

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* A printable excerpt of bad input for error details. */
static const char *excerpt(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = len < cap - 4 ? len : cap - 4;

    for (size_t i = 0; i < n; i++)
        out[i] = is_control((unsigned char)s[i]) ? '?' : s[i];
    if (n < len) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

/* ---- parsing ------------------------------------------------------------- */

static int parse_check_bytes(const char *line, size_t len)
{
    char ex[48];

    for (size_t i = 0; i < len; i++) {
        if (is_control((unsigned char)line[i]))
            return base_err(SHOAL_ERR_PROTOCOL,
                            "PMI line has control byte 0x%02x at offset %zu "
                            "('%s')",
                            (unsigned char)line[i], i,
                            excerpt(line, len, ex, sizeof(ex)));
    }
    return SHOAL_OK;
}

static int parse_token(pmi_msg_t *msg, char *tok)
{
    char ex[48];
    char *eq = strchr(tok, '=');

    if (eq == NULL || eq == tok)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI token '%s' is not key=value",
                        excerpt(tok, strlen(tok), ex, sizeof(ex)));
    *eq = '\0';
    if (pmi_get(msg, tok) != NULL)
        return base_err(SHOAL_ERR_PROTOCOL, "PMI key '%s' appears twice",
                        excerpt(tok, strlen(tok), ex, sizeof(ex)));
    if (msg->ntokens == PMI_TOKENS_MAX)
        return base_err(SHOAL_ERR_PROTOCOL, "PMI line has more than %d tokens",
                        PMI_TOKENS_MAX);
    msg->tokens[msg->ntokens].key = tok;
    msg->tokens[msg->ntokens].value = eq + 1;
    msg->ntokens++;
    return SHOAL_OK;
}

int pmi_parse(pmi_msg_t *msg, const char *line, size_t len)
{
    char *p, *save = NULL;
    int status;

    msg->cmd = NULL;
    msg->ntokens = 0;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    /* len + 1: the newline counts against the limit whether sent or not. */
    if (len + 1 > PMI_LINE_MAX)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI line of %zu bytes exceeds the limit of %d",
                        len + 1, PMI_LINE_MAX);
    status = parse_check_bytes(line, len);
    if (status != SHOAL_OK)
        return status;
    memcpy(msg->buf, line, len);
    msg->buf[len] = '\0';
    for (p = strtok_r(msg->buf, " ", &save); p != NULL;
         p = strtok_r(NULL, " ", &save)) {
        status = parse_token(msg, p);
        if (status != SHOAL_OK)
            return status;
    }
    if (msg->ntokens == 0)
        return base_err(SHOAL_ERR_PROTOCOL, "empty PMI line");
    msg->cmd = pmi_get(msg, "cmd");
    if (msg->cmd == NULL || msg->cmd[0] == '\0')
        return base_err(SHOAL_ERR_PROTOCOL, "PMI line has no cmd= token");
    return SHOAL_OK;
}

const char *pmi_get(const pmi_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->ntokens; i++)
        if (strcmp(msg->tokens[i].key, key) == 0)
            return msg->tokens[i].value;
    return NULL;
}

int pmi_to_long(const char *text, long *out)
{
    char *end;

    if (text[0] == '\0')
        return -1;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int pmi_get_long(const pmi_msg_t *msg, const char *key, long *out)
{
    const char *v = pmi_get(msg, key);

    if (v == NULL)
        return base_err(SHOAL_ERR_NOT_FOUND, "PMI '%s' reply has no %s=",
                        msg->cmd ? msg->cmd : "?", key);
    if (pmi_to_long(v, out) != 0)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI '%s' reply has %s=%.40s, not an integer",
                        msg->cmd ? msg->cmd : "?", key, v);
    return SHOAL_OK;
}

long pmi_rc(const pmi_msg_t *msg)
{
    const char *v = pmi_get(msg, "rc");
    long rc;

    if (v == NULL)
        return 0;
    return pmi_to_long(v, &rc) == 0 ? rc : -1;
}

int pmi_value_ok(const char *s)
{
    for (; *s != '\0'; s++)
        if (*s == ' ' || is_control((unsigned char)*s))
            return 0;
    return 1;
}

int pmi_key_ok(const char *s)
{
    return s[0] != '\0' && strchr(s, '=') == NULL && pmi_value_ok(s);
}

static const char *find_token(const char *line, size_t len, const char *key)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i + klen <= len; i++)
        if ((i == 0 || line[i - 1] == ' ') && memcmp(line + i, key, klen) == 0)
            return line + i + klen;
    return NULL;
}

int pmi_parse_abort(const char *line, size_t len, long *code_p, char *msg,
                    size_t msg_cap)
{
    const char *p;
    char num[24];
    size_t n;

    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len < 9 || memcmp(line, "cmd=abort", 9) != 0 ||
        (len > 9 && line[9] != ' '))
        return 0;
    *code_p = 1;
    p = find_token(line, len, "exitcode=");
    if (p != NULL) {
        size_t rest = (size_t)(line + len - p);
        for (n = 0; n < rest && p[n] != ' ';)
            n++;
        if (n > 0 && n < sizeof(num)) {
            memcpy(num, p, n);
            num[n] = '\0';
            if (pmi_to_long(num, code_p) != 0)
                *code_p = 1;
        }
    }
    msg[0] = '\0';
    p = find_token(line, len, "message=");
    if (p == NULL)
        p = find_token(line, len, "error_msg=");
    if (p != NULL && msg_cap > 0) {
        n = (size_t)(line + len - p);
        if (n > msg_cap - 1)
            n = msg_cap - 1;
        for (size_t i = 0; i < n; i++)
            msg[i] = is_control((unsigned char)p[i]) ? ' ' : p[i];
        msg[n] = '\0';
    }
    return 1;
}

/* ---- formatting ---------------------------------------------------------- */

static void fmt_append(pmi_fmt_t *f, const char *s, size_t n)
{
    /* Keep one byte for the newline pmi_fmt_end adds. */
    if (f->len + n + 1 > PMI_LINE_MAX) {
        if (f->status == SHOAL_OK)
            f->status = base_err(SHOAL_ERR_TOO_LARGE,
                                 "PMI '%.*s' line would exceed %d bytes",
                                 (int)strcspn(f->buf + 4, " "), f->buf + 4,
                                 PMI_LINE_MAX);
        return;
    }
    memcpy(f->buf + f->len, s, n);
    f->len += n;
    f->buf[f->len] = '\0';
}

void pmi_fmt_init(pmi_fmt_t *f, const char *cmd)
{
    f->len = 0;
    f->status = SHOAL_OK;
    f->buf[0] = '\0';
    fmt_append(f, "cmd=", 4);
    if (!pmi_value_ok(cmd) || cmd[0] == '\0') {
        f->status = base_err(SHOAL_ERR_INVALID, "bad PMI command name");
        return;
    }
    fmt_append(f, cmd, strlen(cmd));
}

void pmi_fmt_add(pmi_fmt_t *f, const char *key, const char *value)
{
    if (f->status != SHOAL_OK)
        return;
    if (!pmi_key_ok(key) || !pmi_value_ok(value)) {
        f->status = base_err(SHOAL_ERR_INVALID,
                             "PMI %s: key or value holds a space, '=' or "
                             "control character",
                             key);
        return;
    }
    fmt_append(f, " ", 1);
    fmt_append(f, key, strlen(key));
    fmt_append(f, "=", 1);
    fmt_append(f, value, strlen(value));
}

void pmi_fmt_add_long(pmi_fmt_t *f, const char *key, long value)
{
    char text[32];

    snprintf(text, sizeof(text), "%ld", value);
    pmi_fmt_add(f, key, text);
}

int pmi_fmt_end(pmi_fmt_t *f)
{
    if (f->status != SHOAL_OK)
        return f->status;
    f->buf[f->len++] = '\n';
    f->buf[f->len] = '\0';
    return SHOAL_OK;
}

/* ---- line splitting ------------------------------------------------------ */

void pmi_linebuf_init(pmi_linebuf_t *lb)
{
    lb->len = 0;
    lb->skipping = 0;
}

char *pmi_linebuf_space(pmi_linebuf_t *lb, size_t *room_p)
{
    *room_p = sizeof(lb->buf) - lb->len;
    return lb->buf + lb->len;
}

void pmi_linebuf_added(pmi_linebuf_t *lb, size_t n)
{
    lb->len += n;
}

static void linebuf_drop(pmi_linebuf_t *lb, size_t n)
{
    memmove(lb->buf, lb->buf + n, lb->len - n);
    lb->len -= n;
}

int pmi_linebuf_take(pmi_linebuf_t *lb, char *line, size_t *len_p)
{
    char *nl;

    if (lb->skipping) {
        nl = memchr(lb->buf, '\n', lb->len);
        if (nl == NULL) {
            lb->len = 0;
            return 0;
        }
        linebuf_drop(lb, (size_t)(nl - lb->buf) + 1);
        lb->skipping = 0;
    }
    nl = memchr(lb->buf, '\n', lb->len);
    if (nl == NULL) {
        if (lb->len < PMI_LINE_MAX)
            return 0;
        /* No newline within the limit: skip the rest of this line. */
        lb->len = 0;
        lb->skipping = 1;
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI line longer than %d bytes; skipped",
                        PMI_LINE_MAX);
    }
    size_t n = (size_t)(nl - lb->buf) + 1;
    if (n > PMI_LINE_MAX) {
        linebuf_drop(lb, n);
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI line of %zu bytes exceeds the limit of %d; "
                        "skipped",
                        n, PMI_LINE_MAX);
    }
    memcpy(line, lb->buf, n);
    line[n] = '\0';
    *len_p = n;
    linebuf_drop(lb, n);
    return 1;
}

size_t pmi_linebuf_take_bytes(pmi_linebuf_t *lb, char *out, size_t n)
{
    if (lb->skipping)
        return 0;
    if (n > lb->len)
        n = lb->len;
    memcpy(out, lb->buf, n);
    linebuf_drop(lb, n);
    return n;
}

size_t pmi_linebuf_pending(const pmi_linebuf_t *lb)
{
    return lb->skipping ? 0 : lb->len;
}
