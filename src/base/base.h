/*
 * base: the bottom layer.  Errors with detail, logging, configuration,
 * clocks and the small helpers every other layer uses.  Depends on nothing
 * but libc.  This is the only base header other layers include; the
 * containers have their own headers (base_list.h, base_vec.h, base_strmap.h,
 * base_bitmap.h) because only some layers need them.
 */
#ifndef SHOAL_BASE_H
#define SHOAL_BASE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include "shoal/errors.h"

/* ---- compiler helpers ---------------------------------------------------- */

#define BASE_LIKELY(x) __builtin_expect(!!(x), 1)
#define BASE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BASE_CACHELINE 64
/* Adjacent-line prefetchers make 128 bytes the unit of false sharing. */
#define BASE_SHARING_UNIT 128
#define BASE_ALIGNED(n) __attribute__((aligned(n)))
#define BASE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define BASE_NORETURN __attribute__((noreturn))
#define BASE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BASE_CONTAINER_OF(ptr, type, member)                                 \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline size_t base_align_up(size_t n, size_t a)
{
    return (n + a - 1) & ~(a - 1);
}

static inline int base_is_pow2(uint64_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

static inline void base_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Ask for a cache line in exclusive state ahead of a write.  PREFETCHW is
 * a no-op on x86 processors that lack it; the compiler only emits it when
 * told the target has it, hence the assembly.
 */
/*
 * Copy for payloads that cross cores through shared memory.  glibc's memcpy
 * switches to `rep movsb` from 2 KiB, which on this class of machine (AMD
 * EPYC under a hypervisor) runs 3-9 times slower than vector moves when
 * the source lines sit dirty in another core's cache (measured:
 * bench/README.md).  Below 1 KiB memcpy already uses vector moves.
 */
void base_copy_large(void *dst, const void *src, size_t n);

/* Up to 32 bytes without a call: two loads and two stores that may
 * overlap (a message's payload on the small-message path). */
static inline void base_copy_small(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;

    if (n >= 16) {
        uint64_t a[2], b[2];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0) {
        char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

static inline void base_copy(void *dst, const void *src, size_t n)
{
    if (n <= 32)
        base_copy_small(dst, src, n);
    else if (n < 1024)
        memcpy(dst, src, n);
    else
        base_copy_large(dst, src, n);
}

/* ThreadSanitizer builds (gcc defines __SANITIZE_THREAD__, clang answers
 * __has_feature). */
#if defined(__SANITIZE_THREAD__)
#define BASE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BASE_TSAN 1
#endif
#endif

/*
 * A full fence: earlier stores are visible before later loads.
 * ThreadSanitizer does not model atomic_thread_fence, and gcc refuses it
 * there (-Wtsan) where it cannot merge it into a neighbouring locked
 * instruction; under it, a sequentially consistent read-modify-write of a
 * word of this thread's, a locked instruction and so a full barrier on
 * x86, which TSan does understand as an atomic.
 */
static inline void base_fence_full(void)
{
#ifdef BASE_TSAN
    static _Thread_local _Atomic unsigned fence_word;
    atomic_fetch_add_explicit(&fence_word, 0, memory_order_seq_cst);
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline void base_prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1);
#endif
}

/* ---- errors --------------------------------------------------------------- */

/*
 * Record why a call failed and return status, so callers write
 *     return base_err(SHOAL_ERR_RANK, "shoal_x: rank %d out of range", r);
 * The text is kept per thread (shoal_error_detail) and logged at debug level.
 * Call it where the error is decided, not in every caller on the way up.
 */
int base_err(int status, const char *fmt, ...) BASE_PRINTF(2, 3);
int base_verr(int status, const char *fmt, va_list ap) BASE_PRINTF(2, 0);
/* Forget the detail of an earlier error (used before retries). */
void base_err_clear(void);

/* Print a message naming the fix and abort the process. */
void base_fatal(const char *fmt, ...) BASE_PRINTF(1, 2) BASE_NORETURN;

/* ---- logging -------------------------------------------------------------- */

typedef enum base_log_level {
    BASE_LOG_ERROR = 0,
    BASE_LOG_WARN,
    BASE_LOG_INFO,
    BASE_LOG_DEBUG,
    BASE_LOG_TRACE
} base_log_level_t;

extern int base_log_level; /* current threshold, from SHOAL_LOG */

/* Set the prefix of every line, e.g. "shoal[3]" or "shoalrun". */
void base_log_set_prefix(const char *prefix);
void base_log_emit(int level, const char *subsys, const char *fmt, ...)
    BASE_PRINTF(3, 4);

#define base_log(level, subsys, ...)                                         \
    do {                                                                     \
        if (BASE_UNLIKELY((level) <= base_log_level))                        \
            base_log_emit((level), (subsys), __VA_ARGS__);                   \
    } while (0)
#define base_error(subsys, ...) base_log(BASE_LOG_ERROR, subsys, __VA_ARGS__)
#define base_warn(subsys, ...) base_log(BASE_LOG_WARN, subsys, __VA_ARGS__)
#define base_info(subsys, ...) base_log(BASE_LOG_INFO, subsys, __VA_ARGS__)
#define base_debug(subsys, ...) base_log(BASE_LOG_DEBUG, subsys, __VA_ARGS__)
#define base_trace(subsys, ...) base_log(BASE_LOG_TRACE, subsys, __VA_ARGS__)

/* ---- configuration -------------------------------------------------------- */

typedef enum base_config_type {
    BASE_CONFIG_INT,      /* signed integer, extra = "min:max" */
    BASE_CONFIG_SIZE,     /* bytes, suffixes k/m/g (powers of 1024), extra = "min:max" */
    BASE_CONFIG_BOOL,     /* 1/0, yes/no, on/off, true/false */
    BASE_CONFIG_ENUM,     /* one of extra = "a|b|c"; stored as its index */
    BASE_CONFIG_STRING,   /* free text */
    BASE_CONFIG_DURATION  /* time with unit ns/us/ms/s (default unit us); stored in ns */
} base_config_type_t;

typedef struct base_config_var {
    const char *name;  /* full name, "SHOAL_WAIT" */
    base_config_type_t type;
    const char *defval; /* default, as text */
    const char *extra;  /* range or choices */
    const char *doc;    /* one line */
    const char *scope;  /* "library", "shoalrun" or "both" */
} base_config_var_t;

/*
 * The parsed values, one field per variable named as in config_vars.h
 * (base_cfg.WAIT, base_cfg.SHM_CELLS, ...).  Integers, sizes, durations and
 * booleans are int64_t; enums are the index of the choice; strings are
 * const char * (never NULL).
 */
#define BASE_CONFIG_FIELD_INT int64_t
#define BASE_CONFIG_FIELD_SIZE int64_t
#define BASE_CONFIG_FIELD_BOOL int64_t
#define BASE_CONFIG_FIELD_ENUM int64_t
#define BASE_CONFIG_FIELD_DURATION int64_t
#define BASE_CONFIG_FIELD_STRING const char *
typedef struct base_config {
#define BASE_CONFIG_VAR(name, type, def, extra, scope, doc)                  \
    BASE_CONFIG_FIELD_##type name;
#include "config_vars.h"
#undef BASE_CONFIG_VAR
} base_config_t;

extern base_config_t base_cfg;

/*
 * Parse every SHOAL_* variable of the environment into base_cfg.  Idempotent
 * (only the first call reads the environment unless force is set).  A bad
 * value fails with SHOAL_ERR_CONFIG and a detail naming the variable, the
 * value and what is accepted; an unknown SHOAL_* name is logged as a warning
 * with the closest known name.
 */
int base_config_load(int force);

/* The registry, for shoal-info and docs. */
const base_config_var_t *base_config_vars(size_t *count_p);
const base_config_var_t *base_config_find(const char *name);
/* The value in effect, as text (the environment's if set, else the default). */
const char *base_config_current(const base_config_var_t *var);

/*
 * Parse one value of a variable.  On success stores an int64 (or, for
 * strings, leaves *out untouched) and returns SHOAL_OK; otherwise returns
 * SHOAL_ERR_CONFIG with a detail.  Used by base_config_load and the tests.
 */
int base_config_parse(const base_config_var_t *var, const char *text,
                      int64_t *out);

/* ---- clocks --------------------------------------------------------------- */

/* Monotonic time in nanoseconds (vDSO clock_gettime, no system call). */
uint64_t base_time_ns(void);

/* ---- misc ---------------------------------------------------------------- */

/* Fill buf with len random bytes from the kernel; SHOAL_ERR_SYSTEM on failure. */
int base_random(void *buf, size_t len);

/* Encode len bytes as lower-case hex into out (2*len+1 bytes with the NUL). */
void base_hex_encode(const void *data, size_t len, char *out);
/* Decode hex text of even length into out (cap bytes); returns bytes or -1. */
long base_hex_decode(const char *text, size_t textlen, void *out, size_t cap);

/* 64-bit FNV-1a hash. */
uint64_t base_hash64(const void *data, size_t len);

/* The hashes' words: a 64-bit rotation left (b in 1..63), and a 64-bit
 * little-endian load from any address (one instruction on x86-64). */
static inline uint64_t base_rotl64(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static inline uint64_t base_load64le(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* SipHash-2-4 of data under a 16-byte key (a MAC: siphash.c). */
uint64_t base_siphash(const uint8_t key[16], const void *data, size_t len);
/* A fast checksum of data (not a MAC: sum64.c), several GB/s. */
uint64_t base_sum64(const void *data, size_t len, uint64_t seed);

/* Number of CPUs this process may run on (its affinity mask). */
int base_cpu_count(void);

/*
 * SHOAL_FT_TIMEOUT's stop watch (docs/FT.md, "Failure model"), kept by a
 * process's launcher (shoalrun, a host daemon, or under Hydra the rank's
 * guardian): looked at every so often, it says how long process pid has
 * been stopped (state T or t in /proc/PID/status) without running in
 * between (the same count of context switches at every look; a SIGCONT
 * and a new stop count one).  The first look that sees the stop starts
 * the clock.  0: running, gone, or stopped since this look only.
 */
typedef struct base_stop_watch {
    uint64_t since;         /* stopped since this look's time (0: not) */
    unsigned long switches; /* its context switches then */
} base_stop_watch_t;
uint64_t base_stop_look(base_stop_watch_t *w, long pid, uint64_t now);

#endif /* SHOAL_BASE_H */
