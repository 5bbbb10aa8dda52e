/* Fixed-size bitmaps over arrays of uint64_t words. */
#ifndef SHOAL_BASE_BITMAP_H
#define SHOAL_BASE_BITMAP_H

#include <stddef.h>
#include <stdint.h>

#define BASE_BITMAP_WORDS(nbits) (((nbits) + 63) / 64)

static inline void base_bitmap_set(uint64_t *map, size_t bit)
{
    map[bit / 64] |= (uint64_t)1 << (bit % 64);
}

static inline void base_bitmap_clear(uint64_t *map, size_t bit)
{
    map[bit / 64] &= ~((uint64_t)1 << (bit % 64));
}

static inline int base_bitmap_test(const uint64_t *map, size_t bit)
{
    return (int)((map[bit / 64] >> (bit % 64)) & 1);
}

/* Index of the first set bit at or after start, or nbits when none. */
static inline size_t base_bitmap_next_set(const uint64_t *map, size_t nbits,
                                          size_t start)
{
    while (start < nbits) {
        uint64_t w = map[start / 64] >> (start % 64);
        if (w != 0) {
            size_t bit = start + (size_t)__builtin_ctzll(w);
            return bit < nbits ? bit : nbits;
        }
        start = (start / 64 + 1) * 64;
    }
    return nbits;
}

static inline size_t base_bitmap_count(const uint64_t *map, size_t nbits)
{
    size_t n = 0;

    for (size_t i = 0; i < BASE_BITMAP_WORDS(nbits); i++) {
        uint64_t w = map[i];
        if ((i + 1) * 64 > nbits && nbits % 64 != 0)
            w &= ((uint64_t)1 << (nbits % 64)) - 1;
        n += (size_t)__builtin_popcountll(w);
    }
    return n;
}

#endif /* SHOAL_BASE_BITMAP_H */
