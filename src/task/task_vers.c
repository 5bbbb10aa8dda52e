/*
 * A lock's versions, each whole or as a diff against a kept version below
 * it (task_vers.h).  Invariants: a diff's base is kept, has the same
 * length and a depth one less; ndeps counts the kept diffs against a
 * version.  Reading a version follows its bases down to a whole one (at
 * most TASK_VERS_CHAIN steps) and applies the diffs back up.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "task/task_diff.h"
#include "task/task_grow.h"
#include "task/task_vers.h"

enum { ABSENT, WHOLE, DIFF };

/* How far below a new version its base is looked for. */
#define BASE_REACH 4096u

static int room(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return SHOAL_OK;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    uint8_t *p = realloc(*buf, c);
    if (p == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: lock versions");
    *buf = p;
    *cap = c;
    return SHOAL_OK;
}

static uint8_t *dup_bytes(const void *data, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);

    if (p != NULL && len > 0)
        memcpy(p, data, len);
    return p;
}

/* Version v's bytes (kept): its own when whole, the tip's, else rebuilt
 * in s->out. */
static int build(task_vers_t *s, uint32_t v, const uint8_t **data)
{
    uint32_t chain[TASK_VERS_CHAIN + 1];
    size_t n = 0;

    if (s->e[v].kind == WHOLE) {
        *data = s->e[v].p;
        return SHOAL_OK;
    }
    if (s->tip_ok && s->tip_v == v) {
        *data = s->tip;
        return SHOAL_OK;
    }
    uint32_t k = v;
    while (s->e[k].kind == DIFF && n < TASK_VERS_CHAIN) {
        chain[n++] = k;
        k = s->e[k].base;
    }
    if (s->e[k].kind != WHOLE)
        return base_err(SHOAL_ERR_INTERNAL, "task: lock version %u has no "
                        "whole version below it", v);
    if (room(&s->out, &s->outcap, s->e[v].len) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    memcpy(s->out, s->e[k].p, s->e[k].len);
    while (n > 0) {
        const task_vers_ent_t *e = &s->e[chain[--n]];
        int r = task_diff_apply(e->p, e->plen, s->out, e->len);
        if (r != SHOAL_OK)
            return r;
    }
    *data = s->out;
    return SHOAL_OK;
}

static void release(task_vers_t *s, uint32_t v)
{
    task_vers_ent_t *e = &s->e[v];

    if (e->kind == DIFF)
        s->e[e->base].ndeps--;
    s->held -= e->plen;
    free(e->p);
    uint32_t ndeps = e->ndeps;
    *e = (task_vers_ent_t){NULL, 0, 0, 0, ndeps, ABSENT, 0};
}

/* Makes version v whole (it is a diff). */
static int make_whole(task_vers_t *s, uint32_t v)
{
    const uint8_t *b;
    int r = build(s, v, &b);

    if (r != SHOAL_OK)
        return r;
    size_t len = s->e[v].len;
    uint8_t *p = dup_bytes(b, len);
    if (p == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: lock versions");
    release(s, v);
    s->e[v].p = p;
    s->e[v].plen = s->e[v].len = len;
    s->e[v].kind = WHOLE;
    s->held += len;
    return SHOAL_OK;
}

/* Makes every diff against v whole (v is about to change or go). */
static int free_deps(task_vers_t *s, uint32_t v)
{
    for (size_t u = (size_t)v + 1; u < s->n && s->e[v].ndeps > 0; u++)
        if (s->e[u].kind == DIFF && s->e[u].base == v) {
            int r = make_whole(s, (uint32_t)u);
            if (r != SHOAL_OK)
                return r;
        }
    return SHOAL_OK;
}

/* Stores data as version v (absent now), as a diff against base b (kept;
 * prev its bytes) when that is less than half. */
static int store(task_vers_t *s, uint32_t v, const uint8_t *data,
                 size_t len, uint32_t b, const uint8_t *prev)
{
    task_vers_ent_t e = {NULL, 0, len, 0, s->e[v].ndeps, WHOLE, 0};

    if (prev != NULL) {
        task_diff_writer_t w;
        const uint8_t *d;
        size_t dl;
        task_diff_writer_init(&w, NULL, 0);
        if (task_diff_add(&w, 0, prev, data, len) == SHOAL_OK &&
            task_diff_finish(&w, &d, &dl) == SHOAL_OK && dl < len / 2) {
            e.p = dup_bytes(d, dl);
            e.plen = dl;
            e.base = b;
            e.kind = DIFF;
            e.depth = (uint8_t)(s->e[b].depth + 1);
            if (e.p == NULL) {
                task_diff_writer_fini(&w);
                return base_err(SHOAL_ERR_NOMEM, "task: lock versions");
            }
        }
        task_diff_writer_fini(&w);
    }
    if (e.kind == WHOLE) {
        e.p = dup_bytes(data, len);
        e.plen = len;
        if (e.p == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: lock versions");
    } else
        s->e[b].ndeps++;
    s->e[v] = e;
    s->held += e.plen;
    return SHOAL_OK;
}

int task_vers_put(task_vers_t *s, uint32_t v, const void *data, size_t len)
{
    uint8_t *copy = NULL;
    int r = SHOAL_OK;

    if ((size_t)v + 1 > s->cap) {
        size_t old = s->cap;
        r = task_grow((void **)&s->e, &s->cap, (size_t)v + 1, sizeof(*s->e),
                      "task: lock versions");
        if (r != SHOAL_OK)
            return r;
        memset(s->e + old, 0, (s->cap - old) * sizeof(*s->e));
    }
    if ((size_t)v + 1 > s->n)
        s->n = (size_t)v + 1;
    /* data may be an answer of task_vers_get (the tip, the rebuilt
     * bytes, a whole version's own), which the work below may overwrite
     * (s->out) or free (v's own bytes). */
    const uint8_t *d = data, *own = s->e[v].p;
    if (len > 0 && ((d >= s->out && d < s->out + s->outcap) ||
                    (d >= s->tip && d < s->tip + s->tipcap) ||
                    (own != NULL && d >= own && d < own + s->e[v].plen))) {
        if ((copy = dup_bytes(d, len)) == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: lock versions");
        d = copy;
    }
    if (s->e[v].kind != ABSENT) {
        if (s->e[v].ndeps > 0)
            r = free_deps(s, v); /* their base changes */
        if (r == SHOAL_OK)
            release(s, v);
    }
    /* The base: the nearest kept version below v, if close enough, as
     * long as itself, and not too deep. */
    const uint8_t *prev = NULL;
    uint32_t b = v;
    for (uint32_t k = 1; r == SHOAL_OK && k <= BASE_REACH && k <= v; k++)
        if (s->e[v - k].kind != ABSENT) {
            b = v - k;
            break;
        }
    if (r == SHOAL_OK && b != v && s->e[b].len == len && len >= 64 &&
        s->e[b].depth + 1 < TASK_VERS_CHAIN)
        r = build(s, b, &prev);
    if (r == SHOAL_OK)
        r = store(s, v, d, len, b, prev);
    if (r == SHOAL_OK && (r = room(&s->tip, &s->tipcap, len)) == SHOAL_OK) {
        if (len > 0)
            memcpy(s->tip, d, len);
        s->tiplen = len;
        s->tip_v = v;
        s->tip_ok = 1;
    } else
        s->tip_ok = 0;
    free(copy);
    return r;
}

int task_vers_has(const task_vers_t *s, uint32_t v)
{
    return v < s->n && s->e[v].kind != ABSENT;
}

int task_vers_get(task_vers_t *s, uint32_t v, const void **data,
                  size_t *len)
{
    const uint8_t *b;

    if (!task_vers_has(s, v))
        return base_err(SHOAL_ERR_NOT_FOUND, "task: lock version %u is not "
                        "kept", v);
    int r = build(s, v, &b);
    if (r != SHOAL_OK)
        return r;
    *data = b;
    *len = s->e[v].len;
    return SHOAL_OK;
}

int task_vers_drop(task_vers_t *s, uint32_t v)
{
    if (!task_vers_has(s, v))
        return SHOAL_OK;
    if (s->e[v].ndeps > 0) {
        int r = free_deps(s, v);
        if (r != SHOAL_OK)
            return r;
    }
    if (s->tip_ok && s->tip_v == v)
        s->tip_ok = 0;
    release(s, v);
    return SHOAL_OK;
}

void task_vers_free(task_vers_t *s)
{
    for (size_t v = 0; v < s->n; v++)
        free(s->e[v].p);
    free(s->e);
    free(s->tip);
    free(s->out);
    memset(s, 0, sizeof(*s));
}
