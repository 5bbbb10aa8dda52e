/*
 * Datagram headers: encoding, decoding and the tag, no state, so the
 * decoder can be fuzzed on its own (tests/fuzz/fuzz_udp_hdr.c).
 *
 * Header (48 bytes, little-endian):
 *   0  magic     0xd5
 *   1  version   1
 *   2  type      UDP_T_*
 *   3  flags     UDP_F_*
 *   4  src       sending rank (u32)
 *   8  dst       receiving rank (u32)
 *   12 seq       (u32)
 *   16 ack       (u32)
 *   20 window    (u16)
 *   22 len       payload bytes (u16)
 *   24 sack      (u64)
 *   32 src_epoch (u32)
 *   36 dst_epoch (u32)
 *   40 tag       SipHash-2-4 of bytes 0..39 under the job's key (u64)
 * then len payload bytes: a piece of the sender's frame stream (DATA), or
 * nothing.
 */
#define _GNU_SOURCE
#include <string.h>

#include "udp.h"

void udp_hdr_encode(const udp_hdr_t *h, const uint8_t key[16],
                    uint8_t out[UDP_HDR])
{
    out[0] = UDP_MAGIC;
    out[1] = UDP_VERSION;
    out[2] = h->type;
    out[3] = h->flags;
    wire_put32(out + 4, h->src);
    wire_put32(out + 8, h->dst);
    wire_put32(out + 12, h->seq);
    wire_put32(out + 16, h->ack);
    wire_put16(out + 20, h->window);
    wire_put16(out + 22, h->len);
    wire_put64(out + 24, h->sack);
    wire_put32(out + 32, h->src_epoch);
    wire_put32(out + 36, h->dst_epoch);
    wire_put64(out + 40, base_siphash(key, out, UDP_TAGGED));
}

int udp_hdr_decode(const uint8_t *buf, size_t n, const uint8_t key[16],
                   udp_hdr_t *h, const char **why)
{
    uint64_t tag;
    uint8_t diff = 0;

    if (n < UDP_HDR) {
        *why = "shorter than a header";
        return SHOAL_ERR_PROTOCOL;
    }
    if (buf[0] != UDP_MAGIC || buf[1] != UDP_VERSION) {
        *why = "not a Shoal datagram (magic or version)";
        return SHOAL_ERR_PROTOCOL;
    }
    /* The tag first: nothing a stranger wrote is looked at further.
     * Compared without an early exit, so timing tells nothing. */
    tag = base_siphash(key, buf, UDP_TAGGED);
    for (int i = 0; i < 8; i++)
        diff |= (uint8_t)(buf[40 + i] ^ (uint8_t)(tag >> (8 * i)));
    if (diff != 0) {
        *why = "wrong tag (not from this job)";
        return SHOAL_ERR_PROTOCOL;
    }
    h->type = buf[2];
    h->flags = buf[3];
    h->src = wire_get32(buf + 4);
    h->dst = wire_get32(buf + 8);
    h->seq = wire_get32(buf + 12);
    h->ack = wire_get32(buf + 16);
    h->window = wire_get16(buf + 20);
    h->len = wire_get16(buf + 22);
    h->sack = wire_get64(buf + 24);
    h->src_epoch = wire_get32(buf + 32);
    h->dst_epoch = wire_get32(buf + 36);
    h->tag = tag;
    if (h->type < UDP_T_DATA || h->type > UDP_T_DEAD) {
        *why = "unknown datagram type";
        return SHOAL_ERR_PROTOCOL;
    }
    if (h->flags & ~UDP_F_MASK) {
        *why = "unknown flags";
        return SHOAL_ERR_PROTOCOL;
    }
    if ((size_t)h->len != n - UDP_HDR) {
        *why = "length field does not match the datagram";
        return SHOAL_ERR_PROTOCOL;
    }
    if (h->type != UDP_T_DATA && h->len != 0) {
        *why = "payload on a datagram that carries none";
        return SHOAL_ERR_PROTOCOL;
    }
    return UDP_HDR;
}
