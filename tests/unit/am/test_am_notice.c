/*
 * The death notice's arguments (src/am/am_notice.c, docs/FT.md): a set of
 * dead ranks cut into notices and read back, and what the decoder must
 * refuse.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "am/am_notice.h"
#include "test.h"

#define MAXW 20 /* bitmap words: up to 1280 ranks */

/* Cut dead (size ranks) into notices, encode, decode each, and check the
 * union is dead exactly; returns the number of notices. */
static int roundtrip(const uint64_t *dead, int size)
{
    uint32_t words = (uint32_t)(size + 63) / 64, w = 0, last_end = 0;
    uint64_t back[MAXW] = {0};
    am_notice_t n, d;
    int count = 0;

    while (am_notice_next(dead, words, &w, &n)) {
        uint64_t args[5];
        unsigned nargs = am_notice_encode(&n, args);
        T_ASSERT(nargs >= 2 && nargs <= 5);
        T_ASSERT(n.w0 >= last_end && n.bits[0] != 0 &&
                 n.bits[n.nwords - 1] != 0);
        T_ASSERT(am_notice_decode(args, nargs, size, &d));
        T_ASSERT(d.w0 == n.w0 && d.nwords == n.nwords);
        for (unsigned i = 0; i < n.nwords; i++) {
            T_ASSERT(d.bits[i] == n.bits[i]);
            back[n.w0 + i] |= d.bits[i];
        }
        for (int r = 0; r < size; r++)
            T_ASSERT(am_notice_has(&d, r) ==
                     (r / 64 >= (int)n.w0 &&
                      r / 64 < (int)(n.w0 + n.nwords) &&
                      (int)(dead[r / 64] >> (r % 64) & 1)));
        last_end = w;
        count++;
    }
    T_ASSERT(w == words);
    for (uint32_t i = 0; i < words; i++)
        T_ASSERT(back[i] == dead[i]);
    return count;
}

static void set(uint64_t *bm, int r) { bm[r / 64] |= 1ull << (r % 64); }

static void test_hosts(void)
{
    uint64_t dead[MAXW];

    /* A host of 4 in blocks among 8: one notice. */
    memset(dead, 0, sizeof(dead));
    for (int r = 4; r < 8; r++)
        set(dead, r);
    T_EQ(roundtrip(dead, 8), 1);
    /* A host of 64 ranks in blocks at 1000: one. */
    memset(dead, 0, sizeof(dead));
    for (int r = 900; r < 964; r++)
        set(dead, r);
    T_EQ(roundtrip(dead, 1024), 1);
    /* Every 4th of 1024 (cyclic on 4 hosts): 256 ranks a notice. */
    memset(dead, 0, sizeof(dead));
    for (int r = 1; r < 1024; r += 4)
        set(dead, r);
    T_EQ(roundtrip(dead, 1024), 4);
    /* Far apart: one notice each; none: no notice. */
    memset(dead, 0, sizeof(dead));
    set(dead, 3);
    set(dead, 700);
    T_EQ(roundtrip(dead, 1001), 2);
    memset(dead, 0, sizeof(dead));
    T_EQ(roundtrip(dead, 1001), 0);
}

static void test_random(void)
{
    uint64_t dead[MAXW];

    srand(18);
    for (int t = 0; t < 5000; t++) {
        int size = 1 + rand() % (MAXW * 64);
        memset(dead, 0, sizeof(dead));
        for (int k = rand() % 40; k > 0; k--)
            set(dead, rand() % size);
        roundtrip(dead, size);
    }
}

static void test_refused(void)
{
    am_notice_t n;
    uint64_t hdr = (uint64_t)AM_NOTICE_V1 << 56;
    uint64_t a[6];

    /* The single-rank form: a rank of the job only. */
    a[0] = 7;
    T_ASSERT(am_notice_decode(a, 1, 8, &n) && am_notice_has(&n, 7) &&
             !am_notice_has(&n, 6));
    T_ASSERT(!am_notice_decode(a, 1, 7, &n));
    T_ASSERT(!am_notice_decode(a, 0, 8, &n));
    /* The set form. */
    a[0] = hdr;
    a[1] = 0xf0;
    T_ASSERT(am_notice_decode(a, 2, 8, &n));
    T_ASSERT(!am_notice_decode(a, 2, 7, &n)); /* rank 7 past the job */
    a[1] = 0;
    T_ASSERT(!am_notice_decode(a, 2, 8, &n)); /* names nobody */
    a[1] = 1;
    a[0] = (uint64_t)0xd2 << 56; /* another version */
    T_ASSERT(!am_notice_decode(a, 2, 8, &n));
    a[0] = hdr | 1ull << 40; /* reserved bits */
    T_ASSERT(!am_notice_decode(a, 2, 8, &n));
    a[0] = hdr | 1; /* word 1 of a one-word job */
    T_ASSERT(!am_notice_decode(a, 2, 64, &n));
    T_ASSERT(am_notice_decode(a, 2, 65, &n) && am_notice_has(&n, 64));
    a[0] = hdr | 0xffffffffu; /* w0 + words must not wrap */
    T_ASSERT(!am_notice_decode(a, 5, 1000, &n));
    for (int i = 1; i < 6; i++)
        a[i] = 1;
    a[0] = hdr;
    T_ASSERT(am_notice_decode(a, 5, 256, &n));
    T_ASSERT(!am_notice_decode(a, 6, 512, &n)); /* 5 words: too many */
}

static const t_case_t cases[] = {
    {"hosts", test_hosts},
    {"random", test_random},
    {"refused", test_refused},
};

int main(int argc, char **argv)
{
    return T_RUN(cases, argc, argv);
}
