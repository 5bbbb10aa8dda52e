/*
 * The multicast broadcast's datagram header and control records: encoding
 * and checking only, no state, so the decoders can be fuzzed on their own
 * (tests/fuzz/fuzz_mcast_hdr.c).  Layouts are in mcast.h.
 */
#include <string.h>

#include "base/base.h"
#include "coll/mcast/mcast.h"
#include "wire/wire_frame.h"

uint64_t mcast_nfrags(uint64_t total, uint32_t fsize)
{
    return fsize == 0 ? 0 : (total + fsize - 1) / fsize;
}

size_t mcast_frag_len(uint64_t total, uint32_t fsize, uint64_t i)
{
    uint64_t start = i * fsize;

    if (start >= total)
        return 0;
    return (size_t)(total - start < fsize ? total - start : fsize);
}

void mcast_hdr_put(uint8_t out[MCAST_HDR], const mcast_hdr_t *h,
                   const uint8_t key[16])
{
    out[0] = 'S';
    out[1] = 'M';
    out[2] = MCAST_VERSION;
    out[3] = MCAST_T_DATA;
    wire_put32(out + 4, h->root);
    wire_put64(out + 8, h->gid);
    wire_put32(out + 16, h->seq);
    wire_put32(out + 20, h->frag);
    wire_put64(out + 24, h->total);
    wire_put32(out + 32, h->fsize);
    wire_put32(out + 36, h->run);
    wire_put64(out + 40, base_siphash(key, out, 40));
}

int mcast_hdr_get(const uint8_t *in, size_t len, const uint8_t key[16],
                  mcast_hdr_t *h)
{
    if (len < MCAST_HDR || in[0] != 'S' || in[1] != 'M' ||
        in[2] != MCAST_VERSION || in[3] != MCAST_T_DATA)
        return -1;
    if (wire_get64(in + 40) != base_siphash(key, in, 40))
        return -1;
    h->root = wire_get32(in + 4);
    h->gid = wire_get64(in + 8);
    h->seq = wire_get32(in + 16);
    h->frag = wire_get32(in + 20);
    h->total = wire_get64(in + 24);
    h->fsize = wire_get32(in + 32);
    h->run = wire_get32(in + 36);
    if (h->fsize == 0 || h->total == 0 ||
        h->frag >= mcast_nfrags(h->total, h->fsize))
        return -1;
    if (len - MCAST_HDR != mcast_frag_len(h->total, h->fsize, h->frag))
        return -1;
    return 0;
}

void mcast_ack_put(uint8_t out[MCAST_ACK_BYTES], const mcast_ack_t *a)
{
    wire_put32(out, a->kind);
    wire_put32(out + 4, a->flags);
    wire_put64(out + 8, a->cum);
    wire_put64(out + 16, a->high);
    wire_put64(out + 24, a->mc);
    for (int i = 0; i < MCAST_ACK_BITS / 64; i++)
        wire_put64(out + 32 + 8 * i, a->bits[i]);
}

int mcast_ack_get(const uint8_t in[MCAST_ACK_BYTES], mcast_ack_t *a)
{
    a->kind = wire_get32(in);
    a->flags = wire_get32(in + 4);
    a->cum = wire_get64(in + 8);
    a->high = wire_get64(in + 16);
    a->mc = wire_get64(in + 24);
    for (int i = 0; i < MCAST_ACK_BITS / 64; i++)
        a->bits[i] = wire_get64(in + 32 + 8 * i);
    if (a->kind < MCAST_ACK_PROGRESS || a->kind > MCAST_ACK_BYE ||
        a->cum > a->high)
        return -1;
    return 0;
}
