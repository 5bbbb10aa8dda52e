/*
 * Fuzz target for the AF_XDP path's packet headers (udp_xdp_pkt.c): what
 * the datagram wire reads from its AF_XDP socket before the datagram's own
 * checks, and what it writes in front of the datagrams it sends.  The
 * first input byte picks the family (bit 0: IPv6) and the mode (bit 1):
 * set, the rest is a datagram that udp_pkt_build wraps and udp_pkt_parse
 * must give back whole, from the right sender, with IP and UDP checksums
 * that a byte-by-byte one's complement sum written here finds correct;
 * clear, the rest is a frame off the link, which the parser either
 * refuses with a reason or accepts with a payload inside the frame, as
 * long as its UDP length says.  Replayed in CTest by fuzz_main.c over
 * tests/fuzz/corpus/fuzz_udp_pkt; a libFuzzer target with
 * SHOAL_BUILD_FUZZ=ON.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/udp/udp.h"

#include "fuzz.h"

/* One's complement sum of big-endian 16-bit words, folded. */
static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)p[i] << 8 | p[i + 1];
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return s;
}

static void addrs(int v6, struct sockaddr_storage *me,
                  struct sockaddr_storage *peer)
{
    memset(me, 0, sizeof(*me));
    memset(peer, 0, sizeof(*peer));
    if (v6) {
        struct sockaddr_in6 *a = (void *)me, *b = (void *)peer;
        a->sin6_family = b->sin6_family = AF_INET6;
        inet_pton(AF_INET6, "fd77::10", &a->sin6_addr);
        inet_pton(AF_INET6, "fd77::11", &b->sin6_addr);
        a->sin6_port = htons(40001);
        b->sin6_port = htons(50002);
    } else {
        struct sockaddr_in *a = (void *)me, *b = (void *)peer;
        a->sin_family = b->sin_family = AF_INET;
        inet_pton(AF_INET, "10.77.3.10", &a->sin_addr);
        inet_pton(AF_INET, "10.77.3.11", &b->sin_addr);
        a->sin_port = htons(40001);
        b->sin_port = htons(50002);
    }
}

static void round_trip(int v6, const uint8_t *d, size_t n)
{
    static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1};
    static const uint8_t mac_b[6] = {2, 0, 0, 0, 0, 2};
    struct sockaddr_storage me, peer, from;
    uint8_t f[2048];
    size_t hl = udp_pkt_hdr_len(v6 ? AF_INET6 : AF_INET), len;
    const uint8_t *payload;
    const char *why = NULL;

    if (n > sizeof(f) - hl)
        n = sizeof(f) - hl;
    addrs(v6, &me, &peer);
    /* The peer sends to me. */
    memcpy(f + hl, d, n);
    udp_pkt_build(f, mac_a, mac_b, &peer, &me, n);
    CHECK(memcmp(f, mac_a, 6) == 0 && memcmp(f + 6, mac_b, 6) == 0);
    CHECK(udp_pkt_parse(f, hl + n, &me, &from, &payload, &len, &why) == 0);
    CHECK(payload == f + hl && len == n && memcmp(payload, d, n) == 0);
    CHECK(from.ss_family == peer.ss_family);
    if (v6)
        CHECK(memcmp(&((struct sockaddr_in6 *)(void *)&from)->sin6_addr,
                     &((struct sockaddr_in6 *)(void *)&peer)->sin6_addr,
                     16) == 0 &&
              ((struct sockaddr_in6 *)(void *)&from)->sin6_port ==
                  ((struct sockaddr_in6 *)(void *)&peer)->sin6_port);
    else
        CHECK(((struct sockaddr_in *)(void *)&from)->sin_addr.s_addr ==
                  ((struct sockaddr_in *)(void *)&peer)->sin_addr.s_addr &&
              ((struct sockaddr_in *)(void *)&from)->sin_port ==
                  ((struct sockaddr_in *)(void *)&peer)->sin_port);
    /* Checksums: the IPv4 header's, and UDP's over the pseudo-header. */
    const uint8_t *ip = f + 14, *udp = f + hl - 8;
    uint32_t s;
    if (v6) {
        uint8_t ph[8] = {0, 0, (uint8_t)((n + 8) >> 8), (uint8_t)(n + 8),
                         0, 0, 0, 17};
        s = sum16(sum16(0, ip + 8, 32), ph, 8);
    } else {
        CHECK(sum16(0, ip, 20) == 0xffff);
        uint8_t ph[4] = {0, 17, (uint8_t)((n + 8) >> 8), (uint8_t)(n + 8)};
        s = sum16(sum16(0, ip + 12, 8), ph, 4);
    }
    CHECK(udp[6] != 0 || udp[7] != 0);
    CHECK(sum16(s, udp, n + 8) == 0xffff);
    /* Not for another port. */
    ((struct sockaddr_in *)(void *)&me)->sin_port = htons(40002);
    if (v6)
        ((struct sockaddr_in6 *)(void *)&me)->sin6_port = htons(40002);
    CHECK(udp_pkt_parse(f, hl + n, &me, &from, &payload, &len, &why) < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sockaddr_storage me, peer, from;
    const uint8_t *payload;
    const char *why = NULL;
    size_t len;
    int v6;

    if (size < 1)
        return 0;
    v6 = data[0] & 1;
    if (data[0] & 2) {
        round_trip(v6, data + 1, size - 1);
        return 0;
    }
    addrs(v6, &me, &peer);
    if (udp_pkt_parse(data + 1, size - 1, &me, &from, &payload, &len, &why) <
        0) {
        CHECK(why != NULL);
        return 0;
    }
    CHECK(payload >= data + 1 && payload + len <= data + size);
    CHECK(from.ss_family == me.ss_family);
    return 0;
}
