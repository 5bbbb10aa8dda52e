/*
 * Job paths: building, decoding, ordering and printing (task_path.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "task/task_path.h"
#include "task/task_varint.h"

/* Reads the level at *pos, advancing it; 0 on a malformed level. */
static int get_level(const uint8_t *in, size_t len, size_t *pos,
                     task_path_level_t *lv)
{
    uint64_t v[3];

    for (int k = 0; k < 3; k++) {
        size_t n = task_varint_get(in + *pos, len - *pos,
                                   TASK_PATH_MAX_INDEX, &v[k]);
        if (n == 0)
            return 0;
        *pos += n;
    }
    lv->block = (uint32_t)v[0];
    lv->routine = (uint32_t)v[1];
    lv->id = (uint32_t)v[2];
    return 1;
}

static int take_bytes(const uint8_t *src, size_t len, uint32_t depth,
                      task_path_t *out)
{
    uint8_t *b = NULL;

    if (len > 0) {
        b = malloc(len);
        if (b == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task path: %zu bytes", len);
        memcpy(b, src, len);
    }
    *out = (task_path_t){b, (uint32_t)len, depth};
    return SHOAL_OK;
}

int task_path_child(const task_path_t *parent, uint32_t block,
                    uint32_t routine, uint32_t id, task_path_t *child)
{
    uint8_t level[3 * TASK_VARINT_MAX];
    size_t n = task_varint_put(level, block);

    n += task_varint_put(level + n, routine);
    n += task_varint_put(level + n, id);
    if (parent->len + n > TASK_PATH_MAX_BYTES)
        return base_err(SHOAL_ERR_TOO_LARGE,
                        "task path: nesting deeper than %u bytes of path "
                        "(depth %u)", TASK_PATH_MAX_BYTES, parent->depth);
    uint8_t *b = malloc(parent->len + n);
    if (b == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task path: %zu bytes",
                        parent->len + n);
    if (parent->len > 0)
        memcpy(b, parent->bytes, parent->len);
    memcpy(b + parent->len, level, n);
    *child = (task_path_t){b, (uint32_t)(parent->len + n), parent->depth + 1};
    return SHOAL_OK;
}

int task_path_parent(const task_path_t *p, task_path_t *parent)
{
    size_t pos = 0, last = 0;
    task_path_level_t lv;

    if (p->depth == 0)
        return base_err(SHOAL_ERR_INVALID, "task path: the root job has "
                                           "no parent");
    while (pos < p->len) {
        last = pos;
        if (!get_level(p->bytes, p->len, &pos, &lv))
            return base_err(SHOAL_ERR_INTERNAL, "task path: corrupt");
    }
    return take_bytes(p->bytes, last, p->depth - 1, parent);
}

int task_path_copy(const task_path_t *p, task_path_t *out)
{
    return take_bytes(p->bytes, p->len, p->depth, out);
}

void task_path_free(task_path_t *p)
{
    free(p->bytes);
    *p = TASK_PATH_ROOT;
}

int task_path_decode(const uint8_t *in, size_t len, task_path_t *out)
{
    size_t pos = 0;
    uint32_t depth = 0;
    task_path_level_t lv;

    if (len > TASK_PATH_MAX_BYTES)
        return base_err(SHOAL_ERR_PROTOCOL, "task path: %zu bytes, more "
                        "than %u", len, TASK_PATH_MAX_BYTES);
    while (pos < len) {
        if (!get_level(in, len, &pos, &lv))
            return base_err(SHOAL_ERR_PROTOCOL, "task path: level %u at "
                            "byte %zu is truncated, overlong or over 32 "
                            "bits", depth, pos);
        depth++;
    }
    return take_bytes(in, len, depth, out);
}

int task_path_level(const task_path_t *p, uint32_t i, task_path_level_t *lv)
{
    size_t pos = 0;

    if (i >= p->depth)
        return base_err(SHOAL_ERR_INVALID, "task path: level %u of a path "
                        "of depth %u", i, p->depth);
    for (uint32_t k = 0; k <= i; k++)
        if (!get_level(p->bytes, p->len, &pos, lv))
            return base_err(SHOAL_ERR_INTERNAL, "task path: corrupt");
    return SHOAL_OK;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

int task_path_cmp(const task_path_t *a, const task_path_t *b)
{
    size_t pa = 0, pb = 0;
    task_path_level_t la, lb;

    for (;;) {
        if (pa >= a->len || pb >= b->len)
            return cmp_u32(a->depth, b->depth); /* the shorter is above */
        if (!get_level(a->bytes, a->len, &pa, &la) ||
            !get_level(b->bytes, b->len, &pb, &lb))
            return cmp_u32(a->len, b->len); /* not canonical: never made */
        int c = cmp_u32(la.block, lb.block);
        if (c == 0)
            c = cmp_u32(la.routine, lb.routine);
        if (c == 0)
            c = cmp_u32(la.id, lb.id);
        if (c != 0)
            return c;
    }
}

int task_path_equal(const task_path_t *a, const task_path_t *b)
{
    return a->len == b->len && (a->len == 0 ||
                                memcmp(a->bytes, b->bytes, a->len) == 0);
}

/* A prefix of a canonical path that is a whole path ends on a level
 * boundary, so the byte prefix test is exact. */
int task_path_is_ancestor(const task_path_t *a, const task_path_t *b)
{
    return a->depth < b->depth && a->len < b->len &&
           (a->len == 0 || memcmp(a->bytes, b->bytes, a->len) == 0);
}

uint64_t task_path_hash(const task_path_t *p)
{
    static const uint8_t key[16] = "shoal-task-path";

    return base_siphash(key, p->bytes ? p->bytes : key, p->len);
}

size_t task_path_format(const task_path_t *p, char *buf, size_t cap)
{
    size_t pos = 0, out = 0;
    task_path_level_t lv;
    char level[40];

    if (p->depth == 0)
        return (size_t)snprintf(buf, cap, "/");
    if (cap > 0)
        buf[0] = '\0';
    while (pos < p->len && get_level(p->bytes, p->len, &pos, &lv)) {
        int n = snprintf(level, sizeof level, "/%u.%u[%u]", lv.block,
                         lv.routine, lv.id);
        if (out + (size_t)n < cap)
            memcpy(buf + out, level, (size_t)n + 1);
        else if (cap >= 4 && out < cap)
            memcpy(buf + (out < cap - 4 ? out : cap - 4), "...", 4);
        out += (size_t)n;
    }
    return out;
}
