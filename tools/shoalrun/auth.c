/*
 * Proving the job's secret.  The launcher draws 16 random bytes per job and
 * hands them to each daemon on the remote-exec command's stdin (never in
 * argv or the environment, which other users can read in /proc).  A daemon
 * that connects is sent a fresh nonce and must answer with a MAC of it
 * under the secret; it then checks the parent's MAC of its own nonce, so
 * neither side talks to a stranger.  The MAC is SipHash-2-4 (Aumasson and
 * Bernstein), twice with different domain bytes for 128 bits.
 */
#define _GNU_SOURCE
#include <string.h>

#include "shoalrun.h"

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static uint64_t load64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#define SIPROUND                                                               \
    do {                                                                       \
        v0 += v1;                                                              \
        v1 = rotl(v1, 13);                                                     \
        v1 ^= v0;                                                              \
        v0 = rotl(v0, 32);                                                     \
        v2 += v3;                                                              \
        v3 = rotl(v3, 16);                                                     \
        v3 ^= v2;                                                              \
        v0 += v3;                                                              \
        v3 = rotl(v3, 21);                                                     \
        v3 ^= v0;                                                              \
        v2 += v1;                                                              \
        v1 = rotl(v1, 17);                                                     \
        v1 ^= v2;                                                              \
        v2 = rotl(v2, 32);                                                     \
    } while (0)

uint64_t shoalrun_siphash(const unsigned char key[16], const void *data,
                          size_t len)
{
    const unsigned char *m = data;
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    uint64_t b = (uint64_t)len << 56;
    size_t full = len - len % 8;

    for (size_t i = 0; i < full; i += 8) {
        uint64_t w = load64(m + i);
        v3 ^= w;
        SIPROUND;
        SIPROUND;
        v0 ^= w;
    }
    for (size_t i = 0; i < len % 8; i++)
        b |= (uint64_t)m[full + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

void shoalrun_auth_mac(const unsigned char secret[SHOALRUN_SECRET_LEN],
                       char role, const unsigned char nonce[SHOALRUN_NONCE_LEN],
                       uint32_t node, unsigned char mac[SHOALRUN_MAC_LEN])
{
    unsigned char msg[2 + SHOALRUN_NONCE_LEN + 4];

    msg[1] = (unsigned char)role;
    memcpy(msg + 2, nonce, SHOALRUN_NONCE_LEN);
    for (int i = 0; i < 4; i++)
        msg[2 + SHOALRUN_NONCE_LEN + i] = (unsigned char)(node >> (8 * i));
    for (int half = 0; half < 2; half++) {
        msg[0] = (unsigned char)half;
        uint64_t h = shoalrun_siphash(secret, msg, sizeof(msg));
        for (int i = 0; i < 8; i++)
            mac[8 * half + i] = (unsigned char)(h >> (8 * i));
    }
}

int shoalrun_auth_equal(const unsigned char *a, const unsigned char *b,
                        size_t n)
{
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}
