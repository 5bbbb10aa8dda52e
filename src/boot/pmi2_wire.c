/*
 * PMI-2 body parser and formatter (pmi2_wire.h).  The parser faces whatever
 * the launcher sends, so every byte is checked and every rejection says
 * what was wrong.  Values are unescaped in place: ";;" becomes ';', a
 * single ';' ends the token.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "boot/pmi2_wire.h"

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* ---- parsing ------------------------------------------------------------- */

int pmi2_parse_header(const char *hdr, size_t *len_p)
{
    size_t i = 0, v = 0;
    int digits = 0;

    while (i < PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    while (i < PMI2_HDR_LEN && hdr[i] >= '0' && hdr[i] <= '9') {
        v = v * 10 + (size_t)(hdr[i] - '0');
        digits++;
        i++;
    }
    while (i < PMI2_HDR_LEN && hdr[i] == ' ')
        i++;
    if (i != PMI2_HDR_LEN || digits == 0 || v == 0 || v > PMI2_BODY_MAX)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 length field '%c%c%c%c%c%c' is not a length "
                        "in 1..%d",
                        is_control((unsigned char)hdr[0]) ? '?' : hdr[0],
                        is_control((unsigned char)hdr[1]) ? '?' : hdr[1],
                        is_control((unsigned char)hdr[2]) ? '?' : hdr[2],
                        is_control((unsigned char)hdr[3]) ? '?' : hdr[3],
                        is_control((unsigned char)hdr[4]) ? '?' : hdr[4],
                        is_control((unsigned char)hdr[5]) ? '?' : hdr[5],
                        PMI2_BODY_MAX);
    *len_p = v;
    return SHOAL_OK;
}

/* Add the token key=value; both already NUL-terminated inside msg->buf. */
static int add_token(pmi2_msg_t *msg, const char *key, const char *value)
{
    if (pmi2_get(msg, key) != NULL)
        return base_err(SHOAL_ERR_PROTOCOL, "PMI-2 key '%.40s' appears twice",
                        key);
    if (msg->ntokens == PMI2_TOKENS_MAX)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 message has more than %d tokens",
                        PMI2_TOKENS_MAX);
    msg->tokens[msg->ntokens].key = key;
    msg->tokens[msg->ntokens].value = value;
    msg->ntokens++;
    return SHOAL_OK;
}

/*
 * Split buf[0..len) into tokens in place.  r reads, w writes the unescaped
 * value (w <= r always, so one buffer is enough).
 */
static int parse_tokens(pmi2_msg_t *msg, size_t len)
{
    char *b = msg->buf;
    size_t r = 0;

    while (r < len) {
        char *key = b + r;
        size_t k = r;
        while (k < len && b[k] != '=' && b[k] != ';')
            k++;
        if (k == len || b[k] == ';' || k == r)
            return base_err(SHOAL_ERR_PROTOCOL,
                            "PMI-2 token at offset %zu is not key=value; "
                            "('%.20s')",
                            r, key);
        b[k] = '\0';
        char *value = b + k + 1;
        size_t w = k + 1;
        r = k + 1;
        while (r < len) {
            if (b[r] == ';' && r + 1 < len && b[r + 1] == ';') {
                b[w++] = ';';
                r += 2;
            } else if (b[r] == ';') {
                r++;
                break;
            } else
                b[w++] = b[r++];
        }
        b[w] = '\0';
        int status = add_token(msg, key, value);
        if (status != SHOAL_OK)
            return status;
    }
    return SHOAL_OK;
}

int pmi2_parse(pmi2_msg_t *msg, const char *body, size_t len)
{
    msg->cmd = NULL;
    msg->ntokens = 0;
    if (len == 0)
        return base_err(SHOAL_ERR_PROTOCOL, "empty PMI-2 message");
    if (len > PMI2_BODY_MAX)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 message of %zu bytes exceeds the limit of %d",
                        len, PMI2_BODY_MAX);
    for (size_t i = 0; i < len; i++)
        if (is_control((unsigned char)body[i]))
            return base_err(SHOAL_ERR_PROTOCOL,
                            "PMI-2 message has control byte 0x%02x at "
                            "offset %zu",
                            (unsigned char)body[i], i);
    memcpy(msg->buf, body, len);
    msg->buf[len] = '\0';
    int status = parse_tokens(msg, len);
    if (status != SHOAL_OK) {
        msg->ntokens = 0;
        return status;
    }
    msg->cmd = pmi2_get(msg, "cmd");
    if (msg->cmd == NULL || msg->cmd[0] == '\0')
        return base_err(SHOAL_ERR_PROTOCOL, "PMI-2 message has no cmd=");
    return SHOAL_OK;
}

const char *pmi2_get(const pmi2_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->ntokens; i++)
        if (strcmp(msg->tokens[i].key, key) == 0)
            return msg->tokens[i].value;
    return NULL;
}

int pmi2_get_long(const pmi2_msg_t *msg, const char *key, long *out)
{
    const char *v = pmi2_get(msg, key);

    if (v == NULL)
        return base_err(SHOAL_ERR_NOT_FOUND, "PMI-2 '%s' has no %s=",
                        msg->cmd ? msg->cmd : "?", key);
    if (pmi_to_long(v, out) != 0)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "PMI-2 '%s' has %s=%.40s, not an integer",
                        msg->cmd ? msg->cmd : "?", key, v);
    return SHOAL_OK;
}

int pmi2_get_bool(const pmi2_msg_t *msg, const char *key, int def)
{
    const char *v = pmi2_get(msg, key);

    if (v == NULL)
        return def;
    if (strcasecmp(v, "TRUE") == 0)
        return 1;
    if (strcasecmp(v, "FALSE") == 0)
        return 0;
    return -1;
}

long pmi2_rc(const pmi2_msg_t *msg)
{
    const char *v = pmi2_get(msg, "rc");
    long rc;

    if (v == NULL)
        return 0;
    return pmi_to_long(v, &rc) == 0 ? rc : -1;
}

/* ---- formatting ---------------------------------------------------------- */

static void fmt_fail(pmi2_fmt_t *f, int status)
{
    if (f->status == SHOAL_OK)
        f->status = status;
}

static void fmt_append(pmi2_fmt_t *f, const char *s, size_t n)
{
    if (f->status != SHOAL_OK)
        return;
    if (f->len - PMI2_HDR_LEN + n > PMI2_BODY_MAX) {
        fmt_fail(f, base_err(SHOAL_ERR_TOO_LARGE,
                             "PMI-2 message would exceed %d bytes",
                             PMI2_BODY_MAX));
        return;
    }
    memcpy(f->buf + f->len, s, n);
    f->len += n;
    f->buf[f->len] = '\0';
}

static int key_ok(const char *key)
{
    if (key[0] == '\0')
        return 0;
    for (; *key != '\0'; key++)
        if (*key == '=' || *key == ';' || is_control((unsigned char)*key))
            return 0;
    return 1;
}

static int value_ok(const char *value)
{
    for (; *value != '\0'; value++)
        if (is_control((unsigned char)*value))
            return 0;
    return 1;
}

void pmi2_fmt_init(pmi2_fmt_t *f, const char *cmd)
{
    memset(f->buf, ' ', PMI2_HDR_LEN);
    f->len = PMI2_HDR_LEN;
    f->buf[f->len] = '\0';
    f->status = SHOAL_OK;
    if (cmd[0] == '\0' || !key_ok(cmd)) {
        fmt_fail(f, base_err(SHOAL_ERR_INVALID, "bad PMI-2 command name"));
        return;
    }
    pmi2_fmt_add(f, "cmd", cmd);
}

void pmi2_fmt_add(pmi2_fmt_t *f, const char *key, const char *value)
{
    if (f->status != SHOAL_OK)
        return;
    if (!key_ok(key) || !value_ok(value)) {
        fmt_fail(f, base_err(SHOAL_ERR_INVALID,
                             "PMI-2 %.40s: key holds '=' or ';', or key or "
                             "value a control character",
                             key));
        return;
    }
    fmt_append(f, key, strlen(key));
    fmt_append(f, "=", 1);
    for (const char *p = value; *p != '\0';) {
        size_t n = strcspn(p, ";");
        fmt_append(f, p, n);
        p += n;
        if (*p == ';') {
            fmt_append(f, ";;", 2);
            p++;
        }
    }
    fmt_append(f, ";", 1);
}

void pmi2_fmt_add_long(pmi2_fmt_t *f, const char *key, long value)
{
    char text[32];

    snprintf(text, sizeof(text), "%ld", value);
    pmi2_fmt_add(f, key, text);
}

int pmi2_fmt_end(pmi2_fmt_t *f)
{
    char hdr[PMI2_HDR_LEN + 1];

    if (f->status != SHOAL_OK)
        return f->status;
    /* Left-aligned like MPICH's and Slurm's clients; Hydra takes both. */
    snprintf(hdr, sizeof(hdr), "%-6zu", f->len - PMI2_HDR_LEN);
    memcpy(f->buf, hdr, PMI2_HDR_LEN);
    return SHOAL_OK;
}
