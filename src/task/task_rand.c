/*
 * The per-job random stream (task_rand.h).
 */
#include "base/base.h"
#include "task/task_rand.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

/* A bijective 64-bit finalizer (the murmur3/splitmix family's shifts and
 * odd multipliers), so distinct inputs never collide. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void seed_key(uint8_t key[16], uint64_t seed, uint64_t tag)
{
    for (int i = 0; i < 8; i++) {
        key[i] = (uint8_t)(seed >> (8 * i));
        key[8 + i] = (uint8_t)(tag >> (8 * i));
    }
}

void task_rand_init(task_rand_t *r, uint64_t seed, const task_path_t *path)
{
    static const uint8_t empty[1] = {0};
    const void *bytes = path->len > 0 ? (const void *)path->bytes : empty;
    uint8_t key[16];

    seed_key(key, seed, 0x3072646e61722d74ull); /* "t-rand0" */
    r->k0 = base_siphash(key, bytes, path->len);
    seed_key(key, seed, 0x3172646e61722d74ull); /* "t-rand1" */
    r->k1 = base_siphash(key, bytes, path->len);
    r->next = 0;
}

/* Every step is a bijection of i, so a stream never repeats a value
 * within 2^64 draws; k1 between the two mixes separates streams whose
 * k0 differ by a multiple of GOLDEN. */
uint64_t task_rand_at(const task_rand_t *r, uint64_t i)
{
    return mix64(mix64(i * GOLDEN + r->k0) ^ r->k1);
}

uint64_t task_rand_next(task_rand_t *r)
{
    return task_rand_at(r, r->next++);
}

/* Lemire's multiply-and-reject: the high word of x * bound is uniform
 * once the low words that would bias it are thrown back. */
uint64_t task_rand_below(task_rand_t *r, uint64_t bound)
{
    unsigned __int128 m = (unsigned __int128)task_rand_next(r) * bound;
    uint64_t low = (uint64_t)m;

    if (low < bound) {
        uint64_t floor = -bound % bound;
        while (low < floor) {
            m = (unsigned __int128)task_rand_next(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double task_rand_unit(task_rand_t *r)
{
    return (double)(task_rand_next(r) >> 11) * 0x1.0p-53;
}
