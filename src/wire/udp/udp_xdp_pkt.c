/*
 * The datagram wire's packets as the link sees them, for the AF_XDP path
 * (udp_xdp.c): an Ethernet, IPv4 or IPv6 and UDP header in front of the
 * datagram, built for sending and checked on receipt.  What the kernel's
 * UDP socket would write and read, so that a peer on the socket path and
 * one on the AF_XDP path exchange the same packets.  Pure functions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "udp.h"

#define ETH_HDR 14u
#define IP4_HDR 20u
#define IP6_HDR 40u
#define UDPH 8u
#define ETHERTYPE_IP4 0x0800u
#define ETHERTYPE_IP6 0x86ddu
#define PROTO_UDP 17u

size_t udp_pkt_hdr_len(int family)
{
    return ETH_HDR + (family == AF_INET6 ? IP6_HDR : IP4_HDR) + UDPH;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint32_t get16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

/* One's complement sum of len bytes (big-endian 16-bit words), added to
 * sum; not folded. */
static uint64_t csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
    while (len >= 8) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + 4, 4);
        /* Host-order 32-bit words; byte order is fixed up by the fold
         * (one's complement sums are byte-order independent up to a
         * final swap, done in csum_fold). */
        sum += (uint64_t)a + b;
        p += 8;
        len -= 8;
    }
    while (len >= 2) {
        uint16_t a;
        memcpy(&a, p, 2);
        sum += a;
        p += 2;
        len -= 2;
    }
    if (len > 0) {
        uint16_t a = 0;
        memcpy(&a, p, 1); /* the odd byte, padded with a zero */
        sum += a;
    }
    return sum;
}

/* The folded complement, in network order bytes as a host uint16_t. */
static uint16_t csum_fold(uint64_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

void udp_pkt_build(uint8_t *f, const uint8_t dst_mac[6],
                   const uint8_t src_mac[6],
                   const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst, size_t payload)
{
    int v6 = src->ss_family == AF_INET6;
    uint8_t *ip = f + ETH_HDR;
    uint8_t *udp = ip + (v6 ? IP6_HDR : IP4_HDR);
    uint32_t ulen = (uint32_t)(UDPH + payload);
    uint64_t sum;
    uint16_t c;

    memcpy(f, dst_mac, 6);
    memcpy(f + 6, src_mac, 6);
    put16(f + 12, v6 ? ETHERTYPE_IP6 : ETHERTYPE_IP4);
    if (v6) {
        const struct sockaddr_in6 *s = (const void *)src, *d = (const void *)dst;
        ip[0] = 0x60;
        ip[1] = ip[2] = ip[3] = 0;
        put16(ip + 4, ulen);
        ip[6] = PROTO_UDP;
        ip[7] = 64; /* hop limit */
        memcpy(ip + 8, &s->sin6_addr, 16);
        memcpy(ip + 24, &d->sin6_addr, 16);
        memcpy(udp, &s->sin6_port, 2);
        memcpy(udp + 2, &d->sin6_port, 2);
        sum = csum_add(0, ip + 8, 32);
    } else {
        const struct sockaddr_in *s = (const void *)src, *d = (const void *)dst;
        ip[0] = 0x45;
        ip[1] = 0;
        put16(ip + 2, IP4_HDR + ulen);
        put16(ip + 4, 0);      /* id: unused with DF (RFC 6864) */
        put16(ip + 6, 0x4000); /* DF: never fragmented, as the socket */
        ip[8] = 64;            /* ttl */
        ip[9] = PROTO_UDP;
        put16(ip + 10, 0);
        memcpy(ip + 12, &s->sin_addr, 4);
        memcpy(ip + 16, &d->sin_addr, 4);
        c = csum_fold(csum_add(0, ip, IP4_HDR));
        memcpy(ip + 10, &c, 2);
        memcpy(udp, &s->sin_port, 2);
        memcpy(udp + 2, &d->sin_port, 2);
        sum = csum_add(0, ip + 12, 8);
    }
    put16(udp + 4, ulen);
    put16(udp + 6, 0);
    {
        uint8_t pseudo[4] = {0, PROTO_UDP, (uint8_t)(ulen >> 8),
                             (uint8_t)ulen};
        uint8_t pl[4] = {0, 0, 0, PROTO_UDP};
        if (v6) {
            /* IPv6 pseudo-header: 32-bit length, 3 zero bytes, next
             * header. */
            uint8_t len6[4] = {(uint8_t)(ulen >> 24), (uint8_t)(ulen >> 16),
                               (uint8_t)(ulen >> 8), (uint8_t)ulen};
            sum = csum_add(sum, len6, 4);
            sum = csum_add(sum, pl, 4);
        } else {
            sum = csum_add(sum, pseudo, 4);
        }
    }
    sum = csum_add(sum, udp, ulen);
    c = csum_fold(sum);
    if (c == 0)
        c = 0xffff; /* 0 means "no checksum" (IPv4) and is invalid (IPv6) */
    memcpy(udp + 6, &c, 2);
}

int udp_pkt_parse(const uint8_t *f, size_t n,
                  const struct sockaddr_storage *me,
                  struct sockaddr_storage *from, const uint8_t **payload,
                  size_t *len, const char **why)
{
    int v6 = me->ss_family == AF_INET6;
    size_t hl = udp_pkt_hdr_len(me->ss_family), iplen, ulen;
    const uint8_t *ip = f + ETH_HDR, *udp;

    if (n < hl) {
        *why = "shorter than its headers";
        return -1;
    }
    memset(from, 0, sizeof(*from));
    if (v6) {
        const struct sockaddr_in6 *m = (const void *)me;
        struct sockaddr_in6 *a = (void *)from;
        if (get16(f + 12) != ETHERTYPE_IP6 || (ip[0] >> 4) != 6 ||
            ip[6] != PROTO_UDP) {
            *why = "not UDP over IPv6 without extension headers";
            return -1;
        }
        if (memcmp(ip + 24, &m->sin6_addr, 16) != 0) {
            *why = "to another address";
            return -1;
        }
        iplen = IP6_HDR + get16(ip + 4);
        udp = ip + IP6_HDR;
        a->sin6_family = AF_INET6;
        memcpy(&a->sin6_addr, ip + 8, 16);
        memcpy(&a->sin6_port, udp, 2);
    } else {
        const struct sockaddr_in *m = (const void *)me;
        struct sockaddr_in *a = (void *)from;
        size_t ihl = (size_t)(ip[0] & 15) * 4;
        if (get16(f + 12) != ETHERTYPE_IP4 || (ip[0] >> 4) != 4 ||
            ihl < IP4_HDR || ip[9] != PROTO_UDP) {
            *why = "not UDP over IPv4";
            return -1;
        }
        if ((get16(ip + 6) & 0x3fffu) != 0) {
            *why = "an IP fragment";
            return -1;
        }
        if (memcmp(ip + 16, &m->sin_addr, 4) != 0) {
            *why = "to another address";
            return -1;
        }
        iplen = get16(ip + 2);
        if (iplen < ihl + UDPH) {
            *why = "an IP length shorter than its headers";
            return -1;
        }
        iplen -= ihl - IP4_HDR; /* as if without options */
        udp = ip + ihl;
        if (ETH_HDR + ihl + UDPH > n) {
            *why = "shorter than its headers";
            return -1;
        }
        a->sin_family = AF_INET;
        memcpy(&a->sin_addr, ip + 12, 4);
        memcpy(&a->sin_port, udp, 2);
    }
    if (memcmp(udp + 2, &((const struct sockaddr_in *)(const void *)me)->sin_port,
               2) != 0 && !v6) {
        *why = "to another port";
        return -1;
    }
    if (v6 && memcmp(udp + 2,
                     &((const struct sockaddr_in6 *)(const void *)me)->sin6_port,
                     2) != 0) {
        *why = "to another port";
        return -1;
    }
    ulen = get16(udp + 4);
    /* The frame may carry link padding past the IP packet. */
    if (ulen < UDPH || (size_t)(udp - f) + ulen > n ||
        ulen != iplen - (v6 ? IP6_HDR : IP4_HDR)) {
        *why = "UDP length does not match the packet";
        return -1;
    }
    *payload = udp + UDPH;
    *len = ulen - UDPH;
    return 0;
}
