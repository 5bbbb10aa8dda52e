/*
 * A fast 64-bit checksum of large buffers (checkpoint images: a corrupt or
 * truncated image must be found, at the speed of memory, where SipHash
 * runs at about 1 GB/s).  Not a MAC: nothing here resists an adversary.
 * The structure of Yann Collet's XXH64, written from its published
 * description (four lanes of multiply-rotate over 32-byte stripes, merged
 * and mixed at the end); it is not meant to match XXH64's values.
 */
#include <string.h>

#include "base.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t round64(uint64_t acc, uint64_t m)
{
    return base_rotl64(acc + m * P2, 31) * P1;
}

static uint64_t merge(uint64_t h, uint64_t v)
{
    return (h ^ round64(0, v)) * P1 + P4;
}

uint64_t base_sum64(const void *data, size_t len, uint64_t seed)
{
    const uint8_t *p = data, *end = p + len;
    uint64_t h;

    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed,
                 v4 = seed - P1;
        for (; end - p >= 32; p += 32) {
            v1 = round64(v1, base_load64le(p));
            v2 = round64(v2, base_load64le(p + 8));
            v3 = round64(v3, base_load64le(p + 16));
            v4 = round64(v4, base_load64le(p + 24));
        }
        h = base_rotl64(v1, 1) + base_rotl64(v2, 7) + base_rotl64(v3, 12) +
            base_rotl64(v4, 18);
        h = merge(merge(merge(merge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    for (; end - p >= 8; p += 8)
        h = base_rotl64(h ^ round64(0, base_load64le(p)), 27) * P1 + P4;
    for (; p < end; p++)
        h = base_rotl64(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}
