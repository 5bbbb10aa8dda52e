/*
 * Fuzz target for the death notice's arguments (src/am/am_notice.c), which
 * arrive from other ranks in AM_SYS_DEAD frames: the decoder, and the
 * cutting of a set of ranks into notices.  Input: a byte of argument
 * count, two bytes of job size, then the arguments (8 bytes each, as
 * many as there are, little-endian); the rest of the input is also read
 * as a bitmap of dead ranks.  Oracles: a notice is accepted only when it
 * names at least one rank and every rank it names is in the job, and the
 * set form encodes back to the very same arguments; every set of ranks
 * cut into notices decodes back to itself, each notice in order, none
 * empty at either end.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "am/am_notice.h"

#include "fuzz.h"

#define MAX_WORDS 64 /* bitmaps up to 4096 ranks */

static void decode(const uint8_t *data, size_t size)
{
    uint64_t args[8] = {0}, again[8];
    am_notice_t n;

    if (size < 3)
        return;
    unsigned nargs = data[0] % 8;
    int job = data[1] | data[2] << 8;
    size_t have = (size - 3) / 8;
    for (size_t i = 0; i < have && i < 8; i++)
        memcpy(&args[i], data + 3 + 8 * i, 8);
    if (!am_notice_decode(args, nargs, job, &n))
        return;
    CHECK(job > 0 && nargs >= 1 && nargs <= 1 + AM_NOTICE_WORDS);
    CHECK(n.nwords >= 1 && n.nwords <= AM_NOTICE_WORDS);
    int named = 0;
    for (unsigned i = 0; i < n.nwords * 64; i++) {
        uint64_t r = (uint64_t)n.w0 * 64 + i;
        int bit = (int)(n.bits[i / 64] >> (i % 64) & 1);
        if (!bit)
            continue;
        CHECK(r < (uint64_t)job);
        CHECK(am_notice_has(&n, (int)r));
        named++;
    }
    CHECK(named > 0);
    if (nargs == 1) {
        CHECK(named == 1 && am_notice_has(&n, (int)args[0]));
        return;
    }
    CHECK(am_notice_encode(&n, again) == nargs);
    CHECK(memcmp(again, args, nargs * sizeof(uint64_t)) == 0);
}

static void cut(const uint8_t *data, size_t size)
{
    uint64_t dead[MAX_WORDS] = {0}, back[MAX_WORDS] = {0};
    uint32_t words = (uint32_t)(size / 8 < MAX_WORDS ? size / 8 : MAX_WORDS);
    uint32_t w = 0, end = 0;
    am_notice_t n, d;

    if (words == 0)
        return;
    memcpy(dead, data, words * 8);
    while (am_notice_next(dead, words, &w, &n)) {
        uint64_t args[8];
        unsigned nargs = am_notice_encode(&n, args);
        CHECK(n.w0 >= end && w == n.w0 + n.nwords && w <= words);
        CHECK(n.bits[0] != 0 && n.bits[n.nwords - 1] != 0);
        CHECK(am_notice_decode(args, nargs, (int)words * 64, &d));
        CHECK(memcmp(&d, &n, sizeof(d)) == 0);
        for (unsigned i = 0; i < n.nwords; i++)
            back[n.w0 + i] |= n.bits[i];
        end = w;
    }
    CHECK(w == words);
    CHECK(memcmp(back, dead, sizeof(dead)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode(data, size);
    cut(data, size);
    return 0;
}
