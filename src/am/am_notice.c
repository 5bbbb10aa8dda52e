/*
 * The death notice's arguments (am_notice.h): encoding, windows of a
 * bitmap, and the decoder that validates what arrives from the network.
 */
#include <stddef.h>

#include "am_notice.h"

int am_notice_next(const uint64_t *dead, uint32_t words, uint32_t *w,
                   am_notice_t *n)
{
    uint32_t a = *w;

    while (a < words && dead[a] == 0)
        a++;
    if (a >= words) {
        *w = words;
        return 0;
    }
    uint32_t end = a + AM_NOTICE_WORDS < words ? a + AM_NOTICE_WORDS : words;
    while (dead[end - 1] == 0)
        end--; /* dead[a] is not zero: the loop stops there at the latest */
    n->w0 = a;
    n->nwords = end - a;
    for (unsigned i = 0; i < AM_NOTICE_WORDS; i++)
        n->bits[i] = i < n->nwords ? dead[a + i] : 0;
    *w = end;
    return 1;
}

unsigned am_notice_encode(const am_notice_t *n, uint64_t *args)
{
    args[0] = (uint64_t)AM_NOTICE_V1 << 56 | n->w0;
    for (unsigned i = 0; i < n->nwords; i++)
        args[1 + i] = n->bits[i];
    return 1 + n->nwords;
}

int am_notice_decode(const uint64_t *args, unsigned nargs, int size,
                     am_notice_t *n)
{
    if (size <= 0 || nargs == 0 || nargs > 1 + AM_NOTICE_WORDS)
        return 0;
    for (unsigned i = 0; i < AM_NOTICE_WORDS; i++)
        n->bits[i] = 0;
    if (nargs == 1) {
        if (args[0] >= (uint64_t)size)
            return 0;
        n->w0 = (uint32_t)(args[0] / 64);
        n->nwords = 1;
        n->bits[0] = 1ull << (args[0] % 64);
        return 1;
    }
    if (args[0] >> 56 != AM_NOTICE_V1 || (args[0] >> 32 & 0xffffffu) != 0)
        return 0;
    uint64_t w0 = args[0] & 0xffffffffu, words = ((uint64_t)size + 63) / 64;
    uint64_t any = 0;
    n->w0 = (uint32_t)w0;
    n->nwords = nargs - 1;
    if (w0 + n->nwords > words)
        return 0;
    for (unsigned i = 0; i < n->nwords; i++) {
        n->bits[i] = args[1 + i];
        any |= args[1 + i];
    }
    /* No rank past the job's last in the job's last word. */
    if (w0 + n->nwords == words && size % 64 != 0 &&
        (n->bits[n->nwords - 1] >> (size % 64)) != 0)
        return 0;
    return any != 0;
}

int am_notice_has(const am_notice_t *n, int rank)
{
    if (rank < 0 || (uint64_t)rank / 64 < n->w0 ||
        (uint64_t)rank / 64 >= (uint64_t)n->w0 + n->nwords)
        return 0;
    return (int)(n->bits[rank / 64 - n->w0] >> (rank % 64) & 1);
}
