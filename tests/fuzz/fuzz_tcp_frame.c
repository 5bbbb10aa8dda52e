/*
 * Fuzz target for what the TCP wire reads from a socket: the frame header
 * decoder and the handshake message decoder.  Oracles: a decoded frame
 * encodes back to the same bytes and decodes again to the same frame; the
 * decoders never read past what they were given and never accept a frame
 * the receiver could not hold (payload over max_inline).  Built as a
 * libFuzzer target with SHOAL_BUILD_FUZZ=ON (clang), and with fuzz_main.c
 * as a program that replays tests/fuzz/corpus/fuzz_tcp_frame in CTest.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/tcp/tcp.h"

#include "fuzz.h"

#define MAX_INLINE 4096u

static void frames(const uint8_t *data, size_t size)
{
    size_t off = 0;

    /* Decode back to back, as the receiver does with its buffer. */
    while (off < size) {
        wire_frame_t f, g;
        uint8_t out[WIRE_FRAME_HDR_MAX];
        const char *why = NULL;
        int r = wire_frame_decode(data + off, size - off, MAX_INLINE, &f, &why);

        if (r <= 0) {
            CHECK(r == 0 || (r == SHOAL_ERR_PROTOCOL && why != NULL));
            return;
        }
        CHECK((size_t)r <= size - off && (size_t)r == wire_frame_hdr_len(&f));
        CHECK(f.nargs <= WIRE_MAX_ARGS && f.ep < WIRE_MAX_EPS);
        if (f.type == WIRE_FRAME_AM &&
            (f.kind & WIRE_CAT_MASK) != WIRE_CAT_LONG)
            CHECK(wire_frame_data_len(&f) <= MAX_INLINE);
        CHECK(wire_frame_encode(&f, out) == (size_t)r);
        CHECK(memcmp(out, data + off, (size_t)r) == 0);
        CHECK(wire_frame_decode(out, (size_t)r, MAX_INLINE, &g, &why) == r);
        CHECK(memcmp(&f, &g, sizeof(f)) == 0);
        off += (size_t)r;
        /* Skip the payload as the receiver would. */
        uint32_t len = wire_frame_data_len(&f);
        if (len > size - off)
            return;
        off += len;
    }
}

static void handshake(const uint8_t *data, size_t size)
{
    tcp_hs_t h;
    uint8_t out[TCP_HS_SIZE];
    const char *why = NULL;
    int r = tcp_hs_decode(data, size, &h, &why);

    if (r <= 0) {
        CHECK(r == 0 || why != NULL);
        return;
    }
    CHECK(r == TCP_HS_SIZE && size >= TCP_HS_SIZE);
    tcp_hs_encode(&h, out);
    CHECK(memcmp(out, data, TCP_HS_SIZE) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frames(data, size);
    handshake(data, size);
    /* The MAC must not crash on any input either. */
    if (size >= TCP_SECRET + 2 * TCP_NONCE) {
        uint8_t mac[TCP_MAC];
        tcp_auth_mac(data, 'I', data + TCP_SECRET,
                     data + TCP_SECRET + TCP_NONCE, 1, 2, mac);
    }
    return 0;
}
