/*
 * Fuzz target for what shoalrun and the PMI-1 client read from the other
 * side: the line splitter, the line parser (with a format/parse round trip
 * as the oracle), the abort parser and the process-mapping parser.  Built
 * as a libFuzzer target with SHOAL_BUILD_FUZZ=ON (clang), and with
 * fuzz_main.c as a program that replays tests/fuzz/corpus/pmi in CTest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot_internal.h"
#include "boot/pmi_wire.h"

#include "fuzz.h"

static int clean(const char *s, int allow_eq)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == ' ' ||
            (!allow_eq && *s == '='))
            return 0;
    return 1;
}

/* A parsed line formats back into one that parses to the same tokens. */
static void round_trip(const pmi_msg_t *m)
{
    pmi_fmt_t f;
    static pmi_msg_t again;

    CHECK(m->cmd != NULL && m->cmd[0] != '\0' && m->ntokens >= 1);
    pmi_fmt_init(&f, m->cmd);
    for (int i = 0; i < m->ntokens; i++) {
        CHECK(m->tokens[i].key[0] != '\0');
        CHECK(clean(m->tokens[i].key, 0) && clean(m->tokens[i].value, 1));
        if (strcmp(m->tokens[i].key, "cmd") != 0)
            pmi_fmt_add(&f, m->tokens[i].key, m->tokens[i].value);
    }
    CHECK(pmi_fmt_end(&f) == 0);
    CHECK(f.len <= PMI_LINE_MAX && f.buf[f.len - 1] == '\n');
    CHECK(pmi_parse(&again, f.buf, f.len) == 0);
    CHECK(again.ntokens == m->ntokens);
    for (int i = 0; i < m->ntokens; i++) {
        const char *v = pmi_get(&again, m->tokens[i].key);
        CHECK(v != NULL && strcmp(v, m->tokens[i].value) == 0);
    }
    (void)pmi_rc(m);
}

static void one_line(const char *line, size_t len)
{
    static pmi_msg_t m;
    char msg[300];
    long code;

    if (pmi_parse(&m, line, len) == 0)
        round_trip(&m);
    if (pmi_parse_abort(line, len, &code, msg, sizeof(msg))) {
        CHECK(strlen(msg) < sizeof(msg));
        for (const char *p = msg; *p; p++)
            CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
    }
}

static void split_lines(const uint8_t *data, size_t size)
{
    pmi_linebuf_t lb;
    char line[PMI_LINE_MAX + 1];
    size_t len, room;

    pmi_linebuf_init(&lb);
    while (size > 0) {
        char *space = pmi_linebuf_space(&lb, &room);
        /* Odd chunk sizes, so lines straddle reads. */
        size_t n = size < 777 ? size : 777;
        CHECK(room >= n);
        memcpy(space, data, n);
        pmi_linebuf_added(&lb, n);
        data += n;
        size -= n;
        int got;
        while ((got = pmi_linebuf_take(&lb, line, &len)) != 0) {
            if (got < 0)
                continue;
            CHECK(len >= 1 && len <= PMI_LINE_MAX && line[len - 1] == '\n');
            one_line(line, len);
        }
    }
}

static void mapping(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    int node_of[64];

    if (text == NULL)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    if (boot_mapping_parse(text, 64, node_of) == 0)
        for (int r = 0; r < 64; r++)
            CHECK(node_of[r] >= 0);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_line((const char *)data, size);
    split_lines(data, size);
    if (size < 4096)
        mapping(data, size);
    return 0;
}
