/*
 * Byte buffers for the task runtime's messages: a writer that grows and a
 * reader that never reads past its end.  Integers are little-endian (all
 * workers run one binary on one architecture, but the layout is fixed).
 * Errors stick: check ->err once after a sequence of calls.
 */
#ifndef SHOAL_TASK_BUF_H
#define SHOAL_TASK_BUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

typedef struct task_buf {
    uint8_t *p;
    size_t len, cap;
    int err;
} task_buf_t;

typedef struct task_rd {
    const uint8_t *p;
    size_t len, pos;
    int err;
} task_rd_t;

static inline void *task_buf_room(task_buf_t *b, size_t n)
{
    if (b->err)
        return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (p == NULL) {
            b->err = base_err(SHOAL_ERR_NOMEM, "task: a message of %zu bytes",
                              b->len + n);
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    void *at = b->p + b->len;
    b->len += n;
    return at;
}

static inline void task_buf_raw(task_buf_t *b, const void *src, size_t n)
{
    void *at = task_buf_room(b, n);
    if (at != NULL && n > 0)
        memcpy(at, src, n);
}

static inline void task_buf_u32(task_buf_t *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                    (uint8_t)(v >> 24)};
    task_buf_raw(b, x, 4);
}

static inline void task_buf_u64(task_buf_t *b, uint64_t v)
{
    task_buf_u32(b, (uint32_t)v);
    task_buf_u32(b, (uint32_t)(v >> 32));
}

/* A length (u64) and the bytes. */
static inline void task_buf_bytes(task_buf_t *b, const void *src, size_t n)
{
    task_buf_u64(b, n);
    task_buf_raw(b, src, n);
}

static inline void task_buf_free(task_buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

static inline void task_rd_init(task_rd_t *r, const void *p, size_t len)
{
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->err = 0;
}

static inline const uint8_t *task_rd_raw(task_rd_t *r, size_t n)
{
    if (r->err || n > r->len - r->pos) {
        if (!r->err)
            r->err = base_err(SHOAL_ERR_PROTOCOL,
                              "task: a message ends %zu bytes short",
                              n - (r->len - r->pos));
        return NULL;
    }
    const uint8_t *at = r->p + r->pos;
    r->pos += n;
    return at;
}

static inline uint32_t task_rd_u32(task_rd_t *r)
{
    const uint8_t *x = task_rd_raw(r, 4);
    if (x == NULL)
        return 0;
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 |
           (uint32_t)x[3] << 24;
}

static inline uint64_t task_rd_u64(task_rd_t *r)
{
    uint64_t lo = task_rd_u32(r);
    return lo | (uint64_t)task_rd_u32(r) << 32;
}

static inline const uint8_t *task_rd_bytes(task_rd_t *r, size_t *n)
{
    uint64_t len = task_rd_u64(r);
    const uint8_t *at = task_rd_raw(r, (size_t)len);
    *n = at != NULL ? (size_t)len : 0;
    return at;
}

#endif /* SHOAL_TASK_BUF_H */
