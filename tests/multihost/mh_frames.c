/*
 * Unit checks of what the daemon tree stands on, no processes needed:
 * SipHash-2-4 against the reference vectors, the MAC's binding to role,
 * nonce and node, and the frame decoder and payload readers on split,
 * malformed and truncated input, and the EXPENDABLE frame's check.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shoalrun.h"
#include "test.h"

/* main.c is not linked here. */
const char *shoalrun_name = "mh_frames";

void shoalrun_say(const char *fmt, ...)
{
    (void)fmt;
}

static void test_siphash(void)
{
    unsigned char key[16], msg[64];

    for (int i = 0; i < 16; i++)
        key[i] = (unsigned char)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (unsigned char)i;
    /* From the SipHash paper's reference implementation (vectors.h). */
    T_EQ(base_siphash(key, msg, 0), 0x726fdb47dd0e0e31ull);
    T_EQ(base_siphash(key, msg, 1), 0x74f839c593dc67fdull);
    T_EQ(base_siphash(key, msg, 15), 0xa129ca6149be45e5ull);
}

static void test_mac(void)
{
    unsigned char secret[SHOALRUN_SECRET_LEN] = {1, 2, 3};
    unsigned char nonce[SHOALRUN_NONCE_LEN] = {9};
    unsigned char a[SHOALRUN_MAC_LEN], b[SHOALRUN_MAC_LEN];

    shoalrun_auth_mac(secret, 'C', nonce, 1, a);
    shoalrun_auth_mac(secret, 'C', nonce, 1, b);
    T_ASSERT(shoalrun_auth_equal(a, b, sizeof(a)));
    shoalrun_auth_mac(secret, 'P', nonce, 1, b); /* another role */
    T_ASSERT(!shoalrun_auth_equal(a, b, sizeof(a)));
    shoalrun_auth_mac(secret, 'C', nonce, 2, b); /* another node */
    T_ASSERT(!shoalrun_auth_equal(a, b, sizeof(a)));
    nonce[15] ^= 1;
    shoalrun_auth_mac(secret, 'C', nonce, 1, b); /* another nonce */
    T_ASSERT(!shoalrun_auth_equal(a, b, sizeof(a)));
    nonce[15] ^= 1;
    secret[15] ^= 1;
    shoalrun_auth_mac(secret, 'C', nonce, 1, b); /* another secret */
    T_ASSERT(!shoalrun_auth_equal(a, b, sizeof(a)));
}

/* Frames written in pieces of every size arrive whole and in order. */
static void test_frames_split(void)
{
    shoalrun_msg_t m = {0};
    char big[5000];

    memset(big, 'x', sizeof(big));
    shoalrun_msg_frame(&m, SHOALRUN_F_PING, NULL, 0);
    shoalrun_msg_frame(&m, SHOALRUN_F_OUTPUT, big, sizeof(big));
    shoalrun_msg_frame(&m, SHOALRUN_F_DONE, "ab", 2);
    T_ASSERT(!m.nomem);
    for (size_t piece = 1; piece <= 4096; piece *= 4) {
        int sv[2], type, n = 0;
        const char *p;
        uint32_t len;
        shoalrun_conn_t c;

        T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
        shoalrun_conn_init(&c, sv[0], 1u << 20);
        for (size_t off = 0; off < m.len; off += piece) {
            size_t k = m.len - off < piece ? m.len - off : piece;
            T_ASSERT(write(sv[1], m.buf + off, k) == (ssize_t)k);
            T_EQ(shoalrun_conn_read(&c), 1);
            int got;
            while ((got = shoalrun_conn_next(&c, &type, &p, &len)) > 0) {
                static const int want[] = {SHOALRUN_F_PING, SHOALRUN_F_OUTPUT,
                                           SHOALRUN_F_DONE};
                T_ASSERT(n < 3);
                T_EQ(type, want[n]);
                T_EQ(len, n == 0 ? 0u : n == 1 ? sizeof(big) : 2u);
                if (n == 1)
                    T_ASSERT(memcmp(p, big, len) == 0);
                n++;
            }
            T_EQ(got, 0);
        }
        T_EQ(n, 3);
        close(sv[1]);
        T_EQ(shoalrun_conn_read(&c), 0); /* EOF */
        shoalrun_conn_fini(&c);
    }
    shoalrun_msg_fini(&m);
}

/* One frame header fed to a connection allowing max bytes of payload. */
static int next_of(const unsigned char hdr[8], uint32_t max)
{
    int sv[2], type;
    const char *p;
    uint32_t len;
    shoalrun_conn_t c;

    T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
    shoalrun_conn_init(&c, sv[0], max);
    T_ASSERT(write(sv[1], hdr, 8) == 8);
    shoalrun_conn_read(&c);
    int got = shoalrun_conn_next(&c, &type, &p, &len);
    close(sv[1]);
    shoalrun_conn_fini(&c);
    return got;
}

static void test_frames_bad(void)
{
    unsigned char ok[8] = {0, 0, 0, 0, SHOALRUN_F_PING, 0, 0, 0};
    unsigned char big[8] = {0x01, 0x01, 0, 0, SHOALRUN_F_HELLO, 0, 0, 0};
    unsigned char zero_type[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    unsigned char reserved[8] = {0, 0, 0, 0, SHOALRUN_F_PING, 0, 1, 0};

    T_EQ(next_of(ok, 256), 1);
    T_EQ(next_of(big, 256), -1); /* 257 bytes before authentication */
    T_EQ(next_of(big, 1024), 0); /* allowed: waits for the payload */
    T_EQ(next_of(zero_type, 256), -1);
    T_EQ(next_of(reserved, 256), -1);
}

static void test_readers(void)
{
    shoalrun_msg_t m = {0};

    shoalrun_msg_u32(&m, 7);
    shoalrun_msg_u64(&m, 0x0102030405060708ull);
    shoalrun_msg_str(&m, "key");
    shoalrun_msg_bytes(&m, "\0\1\2", 3);
    shoalrun_rd_t r = {m.buf, m.len, 0};
    size_t n;
    T_EQ(shoalrun_rd_u32(&r), 7u);
    T_EQ(shoalrun_rd_u64(&r), 0x0102030405060708ull);
    T_STREQ(shoalrun_rd_str(&r), "key");
    const char *b = shoalrun_rd_bytes(&r, &n);
    T_EQ(n, 3u);
    T_ASSERT(memcmp(b, "\0\1\2", 3) == 0);
    T_ASSERT(!r.bad && r.left == 0);
    T_EQ(shoalrun_rd_u32(&r), 0u); /* past the end: bad, never beyond */
    T_ASSERT(r.bad);

    /* Every truncation of the payload reads as bad, not past its end. */
    for (size_t cut = 0; cut < m.len; cut++) {
        shoalrun_rd_t t = {m.buf, cut, 0};
        shoalrun_rd_u32(&t);
        shoalrun_rd_u64(&t);
        shoalrun_rd_str(&t);
        shoalrun_rd_bytes(&t, &n);
        T_ASSERT(t.bad);
    }
    /* A string whose length points past its terminator, or that holds a
     * NUL inside, is bad. */
    char s1[] = {3, 0, 0, 0, 'a', 0, 'b', 0};
    shoalrun_rd_t t1 = {s1, sizeof(s1), 0};
    shoalrun_rd_str(&t1);
    T_ASSERT(t1.bad);
    char s2[] = {(char)0xff, (char)0xff, (char)0xff, (char)0xff, 'a', 0};
    shoalrun_rd_t t2 = {s2, sizeof(s2), 0};
    shoalrun_rd_str(&t2);
    T_ASSERT(t2.bad);
    shoalrun_msg_fini(&m);
}

/* EXPENDABLE lets the job lose a rank: one rank of 0..nranks-1 (rank 0,
 * the task runtime's coordinator, is replaced when it goes), exactly four
 * bytes, or refused. */
static void test_expendable(void)
{
    char ok[] = {3, 0, 0, 0};
    char big[] = {(char)0xff, (char)0xff, (char)0xff, (char)0xff};
    char zero[] = {0, 0, 0, 0};
    char longer[] = {3, 0, 0, 0, 0};

    T_EQ(shoalrun_rd_expendable(ok, sizeof(ok), 4), 3);
    T_EQ(shoalrun_rd_expendable(ok, sizeof(ok), 3), -1); /* not a rank */
    T_EQ(shoalrun_rd_expendable(big, sizeof(big), 4), -1);
    T_EQ(shoalrun_rd_expendable(zero, sizeof(zero), 4), 0); /* rank 0 */
    T_EQ(shoalrun_rd_expendable(longer, sizeof(longer), 4), -1);
    for (size_t cut = 0; cut < sizeof(ok); cut++)
        T_EQ(shoalrun_rd_expendable(ok, cut, 4), -1);
    T_EQ(shoalrun_rd_expendable(ok, sizeof(ok), 0), -1);
}

int main(void)
{
    test_siphash();
    test_mac();
    test_frames_split();
    test_frames_bad();
    test_readers();
    test_expendable();
    printf("mh_frames ok\n");
    return 0;
}
