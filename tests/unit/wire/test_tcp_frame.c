/*
 * The TCP wire's pure parts in one process: SipHash-2-4 against the
 * reference vectors, the handshake MAC (depends on every input), frame
 * encode/decode round trips, partial input, and malformed headers.
 */
#define _GNU_SOURCE
#include <string.h>

#include "test.h"
#include "wire/tcp/tcp.h"

static void test_siphash_vectors(void)
{
    uint8_t key[16], msg[64];

    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    /* From the SipHash paper (appendix A) and its reference vectors. */
    T_ASSERT(base_siphash(key, msg, 15) == 0xa129ca6149be45e5ull);
    T_ASSERT(base_siphash(key, msg, 0) == 0x726fdb47dd0e0e31ull);
}

static void test_mac(void)
{
    uint8_t secret[TCP_SECRET], ni[TCP_NONCE], na[TCP_NONCE];
    uint8_t a[TCP_MAC], b[TCP_MAC];

    memset(secret, 7, sizeof(secret));
    memset(ni, 1, sizeof(ni));
    memset(na, 2, sizeof(na));
    tcp_auth_mac(secret, 'A', ni, na, 3, 4, a);
    tcp_auth_mac(secret, 'A', ni, na, 3, 4, b);
    T_ASSERT(tcp_auth_equal(a, b));
    tcp_auth_mac(secret, 'I', ni, na, 3, 4, b); /* role */
    T_ASSERT(!tcp_auth_equal(a, b));
    tcp_auth_mac(secret, 'A', ni, na, 4, 3, b); /* ranks */
    T_ASSERT(!tcp_auth_equal(a, b));
    tcp_auth_mac(secret, 'A', na, ni, 3, 4, b); /* nonces */
    T_ASSERT(!tcp_auth_equal(a, b));
    secret[31] ^= 1; /* the second half of the secret counts too */
    tcp_auth_mac(secret, 'A', ni, na, 3, 4, b);
    T_ASSERT(!tcp_auth_equal(a, b));
}

static void test_round_trip(void)
{
    static const uint8_t kinds[] = {
        WIRE_CAT_SHORT, WIRE_CAT_MEDIUM | WIRE_F_REPLY,
        WIRE_CAT_LONG | WIRE_F_SYSTEM, WIRE_CAT_LONG | WIRE_F_LANDED,
        WIRE_CAT_LONG | WIRE_F_FRAGMENT};

    for (unsigned k = 0; k < sizeof(kinds); k++)
        for (unsigned nargs = 0; nargs <= WIRE_MAX_ARGS; nargs++) {
            wire_frame_t f = {.type = WIRE_FRAME_AM, .kind = kinds[k],
                             .ep = 15, .handler = 200, .nargs = (uint8_t)nargs,
                             .len = (kinds[k] & WIRE_CAT_MASK) ? 100 : 0,
                             .credits = 1ull << 40, .offset = 12345};
            uint8_t buf[WIRE_FRAME_HDR_MAX];
            wire_frame_t g;
            const char *why = NULL;

            for (unsigned i = 0; i < nargs; i++)
                f.args[i] = ~(uint64_t)i;
            if ((kinds[k] & WIRE_CAT_MASK) != WIRE_CAT_LONG)
                f.offset = 0;
            size_t n = wire_frame_encode(&f, buf);
            T_EQ(n, wire_frame_hdr_len(&f));
            /* Every prefix asks for more; the whole decodes. */
            for (size_t cut = 0; cut < n; cut++)
                T_EQ(wire_frame_decode(buf, cut, 4096, &g, &why), 0);
            T_EQ(wire_frame_decode(buf, n, 4096, &g, &why), (int)n);
            T_EQ(g.kind, f.kind);
            T_EQ(g.nargs, f.nargs);
            T_EQ(g.len, f.len);
            T_EQ(g.credits, f.credits);
            T_EQ(g.offset, f.offset);
            for (unsigned i = 0; i < nargs; i++)
                T_EQ(g.args[i], f.args[i]);
            T_EQ(wire_frame_data_len(&g),
                 (kinds[k] & WIRE_F_LANDED) ? 0 : f.len);
        }
}

static void expect_bad(const uint8_t *buf, size_t n, const char *what)
{
    wire_frame_t f;
    const char *why = NULL;

    if (wire_frame_decode(buf, n, 4096, &f, &why) != SHOAL_ERR_PROTOCOL ||
        why == NULL)
        T_FAIL("%s was accepted", what);
}

static void test_malformed(void)
{
    wire_frame_t f = {.type = WIRE_FRAME_AM, .kind = WIRE_CAT_MEDIUM, .len = 10};
    uint8_t good[WIRE_FRAME_HDR_MAX], bad[WIRE_FRAME_HDR_MAX];
    size_t n = wire_frame_encode(&f, good);

#define MUTATE(i, v, what)                                                   \
    do {                                                                     \
        memcpy(bad, good, n);                                                \
        bad[i] = (v);                                                        \
        expect_bad(bad, n, what);                                            \
    } while (0)
    MUTATE(0, 0, "type 0");
    MUTATE(0, 9, "type 9");
    MUTATE(1, 3, "category 3");
    MUTATE(1, WIRE_CAT_MEDIUM | 0x40, "unknown kind bit");
    MUTATE(1, WIRE_CAT_MEDIUM | WIRE_F_FRAGMENT, "fragment of a medium");
    MUTATE(2, WIRE_MAX_EPS, "endpoint out of range");
    MUTATE(4, WIRE_MAX_ARGS + 1, "too many arguments");
    MUTATE(5, 1, "reserved byte");
    MUTATE(13, 1, "reserved byte");
    MUTATE(11, 1, "medium too long");
#undef MUTATE
    f.kind = WIRE_CAT_SHORT;
    f.len = 1;
    n = wire_frame_encode(&f, bad);
    expect_bad(bad, n, "short with payload");
}

static void test_handshake(void)
{
    tcp_hs_t h = {.type = TCP_HS_PROOF, .from = 5, .to = 9, .verdict = 1};
    tcp_hs_t g;
    uint8_t buf[TCP_HS_SIZE];
    const char *why = NULL;

    memset(h.nonce, 0x11, sizeof(h.nonce));
    memset(h.mac, 0x22, sizeof(h.mac));
    tcp_hs_encode(&h, buf);
    T_EQ(tcp_hs_decode(buf, 10, &g, &why), 0);
    T_EQ(tcp_hs_decode(buf, sizeof(buf), &g, &why), TCP_HS_SIZE);
    T_EQ(g.from, 5);
    T_EQ(g.to, 9);
    T_ASSERT(memcmp(g.mac, h.mac, TCP_MAC) == 0);
    buf[0] ^= 1; /* a stranger is known by its first byte */
    T_EQ(tcp_hs_decode(buf, 1, &g, &why), SHOAL_ERR_PROTOCOL);
    buf[0] ^= 1;
    buf[62] = 1;
    T_EQ(tcp_hs_decode(buf, sizeof(buf), &g, &why), SHOAL_ERR_PROTOCOL);
}

static const t_case_t cases[] = {
    {"siphash_vectors", test_siphash_vectors}, {"mac", test_mac},
    {"round_trip", test_round_trip},           {"malformed", test_malformed},
    {"handshake", test_handshake},
};

int main(int argc, char **argv)
{
    return T_RUN(cases, argc, argv);
}
