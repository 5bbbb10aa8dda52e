/*
 * SipHash-2-4 (Aumasson and Bernstein), written from the paper's
 * description: the keyed hash with which both the TCP wire and shoalrun's
 * daemons prove they hold the job's secret without sending it.
 */
#include <string.h>

#include "base.h"

#define ROT(x, b) base_rotl64(x, b)
#define SIPROUND(v0, v1, v2, v3)                                            \
    do {                                                                    \
        v0 += v1; v1 = ROT(v1, 13); v1 ^= v0; v0 = ROT(v0, 32);             \
        v2 += v3; v3 = ROT(v3, 16); v3 ^= v2;                               \
        v0 += v3; v3 = ROT(v3, 21); v3 ^= v0;                               \
        v2 += v1; v1 = ROT(v1, 17); v1 ^= v2; v2 = ROT(v2, 32);             \
    } while (0)

uint64_t base_siphash(const uint8_t key[16], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = base_load64le(key), k1 = base_load64le(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    uint64_t last = (uint64_t)len << 56;
    size_t full = len & ~(size_t)7;

    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = base_load64le(in + i);
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    for (size_t i = 0; i < (len & 7); i++)
        last |= (uint64_t)in[full + i] << (8 * i);
    v3 ^= last;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
