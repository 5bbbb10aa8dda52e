/*
 * Fuzz target for what the multicast broadcast believes: the datagram
 * header decoder with its tag check (what arrives on the group socket,
 * from anyone on the network) and the control record decoder (what a
 * receiver reports to the root).  Random bytes almost never carry a valid
 * tag, so the first input byte picks a mode: bit 0 set, the header is
 * tagged under the test key first (the decoder then checks every field,
 * as for a malformed datagram of the job); clear, the bytes go in as they
 * are (a stranger's datagram).  Bit 1 feeds the rest to the record
 * decoder instead.  Oracles: an accepted header encodes back to the same
 * 48 bytes, its payload has exactly the length of its fragment, and it
 * fails under any other key; an accepted record encodes back to the same
 * bytes.  Built as a libFuzzer target with SHOAL_BUILD_FUZZ=ON (clang),
 * and with fuzz_main.c as a program that replays tests/fuzz/corpus/
 * fuzz_mcast_hdr in CTest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "coll/mcast/mcast.h"

#include "fuzz.h"

static const uint8_t key[16] = "shoal-fuzz-key!";
static const uint8_t other[16] = "another-job-key";

static void record(const uint8_t *in, size_t n)
{
    uint8_t buf[MCAST_ACK_BYTES] = {0}, out[MCAST_ACK_BYTES];
    mcast_ack_t a;

    memcpy(buf, in, n < sizeof(buf) ? n : sizeof(buf));
    if (mcast_ack_get(buf, &a) != 0)
        return;
    CHECK(a.kind >= MCAST_ACK_PROGRESS && a.kind <= MCAST_ACK_BYE);
    CHECK(a.cum <= a.high);
    mcast_ack_put(out, &a);
    CHECK(memcmp(out, buf, sizeof(buf)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t buf[MCAST_HDR + 2048], out[MCAST_HDR];
    mcast_hdr_t h;
    size_t n;

    if (size < 1)
        return 0;
    n = size - 1 > sizeof(buf) ? sizeof(buf) : size - 1;
    if (data[0] & 2) {
        record(data + 1, n);
        return 0;
    }
    memcpy(buf, data + 1, n);
    if ((data[0] & 1) && n >= MCAST_HDR) {
        uint64_t tag = base_siphash(key, buf, 40);
        for (int i = 0; i < 8; i++)
            buf[40 + i] = (uint8_t)(tag >> (8 * i));
    }
    if (mcast_hdr_get(buf, n, key, &h) != 0)
        return 0;
    CHECK(n >= MCAST_HDR && h.fsize > 0 && h.total > 0);
    CHECK(h.frag < mcast_nfrags(h.total, h.fsize));
    CHECK(n - MCAST_HDR == mcast_frag_len(h.total, h.fsize, h.frag));
    CHECK((uint64_t)h.frag * h.fsize < h.total);
    mcast_hdr_put(out, &h, key);
    CHECK(memcmp(out, buf, MCAST_HDR) == 0);
    CHECK(mcast_hdr_get(buf, n, other, &h) != 0);
    return 0;
}
