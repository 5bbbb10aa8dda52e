/*
 * TCP handshake messages: encoding and decoding only, no state, so the
 * decoder can be fuzzed on its own (tests/fuzz/fuzz_tcp_frame.c).  The
 * frames that follow the handshake are wire_frame.c's.
 */
#include <string.h>

#include "tcp.h"

#define HS_MAGIC 0x31504354414f4853ull /* "SHOATCP1" */

/*
 * Handshake message (64 bytes, little-endian): magic u64, type u8, 3 zero
 * bytes, from u32, to u32, verdict u32, 4 zero bytes, nonce[16], mac[16],
 * 4 zero bytes.
 */
void tcp_hs_encode(const tcp_hs_t *h, uint8_t out[TCP_HS_SIZE])
{
    memset(out, 0, TCP_HS_SIZE);
    wire_put64(out, HS_MAGIC);
    out[8] = h->type;
    wire_put32(out + 12, h->from);
    wire_put32(out + 16, h->to);
    wire_put32(out + 20, h->verdict);
    memcpy(out + 28, h->nonce, TCP_NONCE);
    memcpy(out + 44, h->mac, TCP_MAC);
}

int tcp_hs_decode(const uint8_t *buf, size_t avail, tcp_hs_t *h,
                  const char **why)
{
    uint8_t zero = 0;

    /* A stranger is recognised on its first bytes, not after 64. */
    for (size_t i = 0; i < avail && i < 8; i++)
        if (buf[i] != (uint8_t)(HS_MAGIC >> (8 * i))) {
            *why = "not a Shoal handshake (bad magic)";
            return SHOAL_ERR_PROTOCOL;
        }
    if (avail < TCP_HS_SIZE)
        return 0;
    for (size_t i = 9; i < 12; i++)
        zero |= buf[i];
    for (size_t i = 24; i < 28; i++)
        zero |= buf[i];
    for (size_t i = 60; i < 64; i++)
        zero |= buf[i];
    if (zero != 0) {
        *why = "reserved handshake bytes are not zero";
        return SHOAL_ERR_PROTOCOL;
    }
    h->type = buf[8];
    h->from = wire_get32(buf + 12);
    h->to = wire_get32(buf + 16);
    h->verdict = wire_get32(buf + 20);
    memcpy(h->nonce, buf + 28, TCP_NONCE);
    memcpy(h->mac, buf + 44, TCP_MAC);
    if (h->type < TCP_HS_HELLO || h->type > TCP_HS_VERDICT) {
        *why = "unknown handshake message";
        return SHOAL_ERR_PROTOCOL;
    }
    return TCP_HS_SIZE;
}
