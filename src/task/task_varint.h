/*
 * Unsigned LEB128 integers: seven bits a byte, low bits first, the top bit
 * set on every byte but the last.  Job paths and page diffs use them so
 * that the small numbers they are made of (sibling indices, gaps between
 * changed bytes) take one byte.  The decoder accepts only the shortest
 * encoding of each value, so that equal values have equal bytes and paths
 * can be compared and hashed as byte strings.
 */
#ifndef SHOAL_TASK_VARINT_H
#define SHOAL_TASK_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define TASK_VARINT_MAX 10 /* bytes of the largest uint64_t */

/* Writes v at out (room for TASK_VARINT_MAX bytes); returns the bytes used. */
static inline size_t task_varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Bytes task_varint_put would write for v. */
static inline size_t task_varint_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/*
 * Reads one value of at most max (inclusive) from in[0..len); returns the
 * bytes read, or 0 when the input is truncated, overlong (a needless
 * zero last byte), or larger than max.
 */
static inline size_t task_varint_get(const uint8_t *in, size_t len,
                                     uint64_t max, uint64_t *v)
{
    uint64_t x = 0;

    for (size_t i = 0; i < len && i < TASK_VARINT_MAX; i++) {
        uint64_t bits = in[i] & 0x7f;
        if (i == TASK_VARINT_MAX - 1 && bits > 1)
            return 0; /* more than 64 bits */
        x |= bits << (7 * i);
        if (in[i] & 0x80)
            continue;
        if (i > 0 && bits == 0)
            return 0; /* not the shortest form */
        if (x > max)
            return 0;
        *v = x;
        return i + 1;
    }
    return 0;
}

#endif /* SHOAL_TASK_VARINT_H */
