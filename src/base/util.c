/* Small helpers: randomness, hex, hashing, CPU count, the stop watch. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base.h"

int base_random(void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return base_err(SHOAL_ERR_SYSTEM, "getrandom: %s", strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return SHOAL_OK;
}

void base_hex_encode(const void *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = data;

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long base_hex_decode(const char *text, size_t textlen, void *out, size_t cap)
{
    unsigned char *o = out;

    if (textlen % 2 != 0 || textlen / 2 > cap)
        return -1;
    for (size_t i = 0; i < textlen / 2; i++) {
        int hi = hex_value(text[2 * i]);
        int lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        o[i] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(textlen / 2);
}

uint64_t base_hash64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

int base_cpu_count(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

#if defined(__x86_64__)
#include <emmintrin.h>

void base_copy_large(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;

    /* 64 bytes per step with unaligned 16-byte moves; the loop is written
     * with intrinsics so the compiler cannot turn it back into memcpy. */
    while (n >= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_storeu_si128((__m128i *)(void *)d, a);
        _mm_storeu_si128((__m128i *)(void *)(d + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(d + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(d + 48), e);
        s += 64;
        d += 64;
        n -= 64;
    }
    memcpy(d, s, n);
}
#else
void base_copy_large(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

/* The state letter of pid and its main thread's context switches; 0 when
 * it cannot be read (the process is gone). */
static int proc_state(long pid, unsigned long *switches)
{
    char path[64], line[256];
    FILE *f;
    int state = 0;
    unsigned long v, n = 0;

    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    f = fopen(path, "re");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        char c;
        if (sscanf(line, "State: %c", &c) == 1)
            state = c;
        else if (sscanf(line, "voluntary_ctxt_switches: %lu", &v) == 1 ||
                 sscanf(line, "nonvoluntary_ctxt_switches: %lu", &v) == 1)
            n += v;
    }
    fclose(f);
    *switches = n;
    return state;
}

uint64_t base_stop_look(base_stop_watch_t *w, long pid, uint64_t now)
{
    unsigned long sw = 0;
    int state = proc_state(pid, &sw);

    if (state != 'T' && state != 't') {
        w->since = 0;
        return 0;
    }
    if (w->since == 0 || sw != w->switches) {
        w->since = now; /* stopped now, or again after running */
        w->switches = sw;
        return 0;
    }
    return now - w->since;
}
