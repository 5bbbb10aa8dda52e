/*
 * Fuzz target for what the datagram wire reads from its socket before it
 * believes anything: the header decoder and its tag check.  Random bytes
 * almost never carry a valid tag, so the first input byte picks a mode:
 * odd, the input's header is tagged under the test key first (the decoder
 * then checks every field, as for a datagram of the job that is
 * malformed); even, the bytes go in as they are (a stranger's datagram).
 * Oracles: an accepted header encodes back to the same 48 bytes, carries
 * exactly its payload, and fails under any other key.  Built as a
 * libFuzzer target with SHOAL_BUILD_FUZZ=ON (clang), and with fuzz_main.c
 * as a program that replays tests/fuzz/corpus/fuzz_udp_hdr in CTest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/udp/udp.h"

#include "fuzz.h"

static const uint8_t key[16] = "shoal-fuzz-key!";
static const uint8_t other[16] = "another-job-key";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t buf[UDP_HDR + 256], out[UDP_HDR];
    udp_hdr_t h;
    const char *why = NULL;
    size_t n;
    int r;

    if (size < 1)
        return 0;
    n = size - 1 > sizeof(buf) ? sizeof(buf) : size - 1;
    memcpy(buf, data + 1, n);
    if ((data[0] & 1) && n >= UDP_HDR) {
        uint64_t tag = base_siphash(key, buf, UDP_TAGGED);
        for (int i = 0; i < 8; i++)
            buf[UDP_TAGGED + i] = (uint8_t)(tag >> (8 * i));
    }
    r = udp_hdr_decode(buf, n, key, &h, &why);
    if (r < 0) {
        CHECK(r == SHOAL_ERR_PROTOCOL && why != NULL);
        return 0;
    }
    CHECK(r == UDP_HDR && n >= UDP_HDR);
    CHECK((size_t)h.len == n - UDP_HDR);
    CHECK(h.type >= UDP_T_DATA && h.type <= UDP_T_DEAD);
    CHECK(h.type == UDP_T_DATA || h.len == 0);
    udp_hdr_encode(&h, key, out);
    CHECK(memcmp(out, buf, UDP_HDR) == 0);
    CHECK(udp_hdr_decode(buf, n, other, &h, &why) == SHOAL_ERR_PROTOCOL);
    return 0;
}
