/*
 * Fuzz target for what the PMI-2 client reads from the launcher: the
 * 6-byte length header and the body parser, with a format/parse round trip
 * as the oracle (every parsed message formats back, ';' escaped, into one
 * that parses to the same tokens).  The input is read as a stream of
 * framed messages, as the client reads it, and also whole as one body.
 * Built as a libFuzzer target with SHOAL_BUILD_FUZZ=ON (clang), and with
 * fuzz_main.c as a program that replays tests/fuzz/corpus/fuzz_pmi2_wire.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/pmi2_wire.h"

#include "fuzz.h"

static void round_trip(const pmi2_msg_t *m)
{
    static pmi2_fmt_t f;
    static pmi2_msg_t again;
    size_t len;

    CHECK(m->cmd != NULL && m->cmd[0] != '\0' && m->ntokens >= 1);
    pmi2_fmt_init(&f, m->cmd);
    for (int i = 0; i < m->ntokens; i++) {
        const char *k = m->tokens[i].key;
        CHECK(k[0] != '\0' && strchr(k, '=') == NULL &&
              strchr(k, ';') == NULL);
        for (const char *p = m->tokens[i].value; *p; p++)
            CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
        if (strcmp(k, "cmd") != 0)
            pmi2_fmt_add(&f, k, m->tokens[i].value);
    }
    /* Escaping may double a body past the limit; anything else is a bug. */
    int status = pmi2_fmt_end(&f);
    if (status != 0)
        return;
    CHECK(pmi2_parse_header(f.buf, &len) == 0);
    CHECK(len == f.len - PMI2_HDR_LEN);
    CHECK(pmi2_parse(&again, f.buf + PMI2_HDR_LEN, len) == 0);
    CHECK(again.ntokens == m->ntokens);
    for (int i = 0; i < m->ntokens; i++) {
        const char *v = pmi2_get(&again, m->tokens[i].key);
        CHECK(v != NULL && strcmp(v, m->tokens[i].value) == 0);
    }
    (void)pmi2_rc(m);
    (void)pmi2_get_bool(m, "found", 0);
}

static void one_body(const char *body, size_t len)
{
    static pmi2_msg_t m;

    if (pmi2_parse(&m, body, len) == 0)
        round_trip(&m);
}

/* Header, body, header, body ... until the stream stops making sense. */
static void stream(const uint8_t *data, size_t size)
{
    size_t len;

    while (size >= PMI2_HDR_LEN) {
        if (pmi2_parse_header((const char *)data, &len) != 0)
            return;
        CHECK(len >= 1 && len <= PMI2_BODY_MAX);
        data += PMI2_HDR_LEN;
        size -= PMI2_HDR_LEN;
        if (len > size)
            return;
        one_body((const char *)data, len);
        data += len;
        size -= len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_body((const char *)data, size);
    stream(data, size);
    return 0;
}
