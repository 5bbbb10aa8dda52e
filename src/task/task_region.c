/*
 * The shared areas of a task program: set-up, states, diffs and merges
 * (task_region.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_diff.h"
#include "task/task_region.h"

static const char *const area_name[TASK_AREAS] = {"static shared section",
                                                  "shared heap"};

static int map_heap(task_area_t *a, size_t size)
{
    void *want = (void *)TASK_HEAP_ADDR;
    void *p = mmap(want, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                       MAP_FIXED_NOREPLACE,
                   -1, 0);

    if (p == MAP_FAILED || p != want) {
        if (p != MAP_FAILED)
            munmap(p, size);
        return base_err(SHOAL_ERR_UNSUPPORTED,
                        "task: cannot map the %zu-byte shared heap at %p "
                        "(SHOAL_TASK_HEAP; the address is taken here)",
                        size, want);
    }
    a->base = p;
    a->size = size;
    return SHOAL_OK;
}

static int init_static(task_region_t *r, char *begin, char *end)
{
    task_area_t *a = &r->area[0];

    if (begin == NULL || end <= begin)
        return SHOAL_OK;
    size_t size = (size_t)(end - begin);
    uint8_t *copy = malloc(size);
    if (copy == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: pristine section");
    memcpy(copy, begin, size);
    a->base = begin;
    a->size = size;
    a->pristine = copy;
    return SHOAL_OK;
}

int task_region_init(task_region_t *r, char *begin, char *end,
                     size_t heap_size)
{
    memset(r, 0, sizeof(*r));
    r->page = (size_t)sysconf(_SC_PAGESIZE);
    int s = init_static(r, begin, end);
    heap_size = (heap_size + r->page - 1) / r->page * r->page;
    if (s == SHOAL_OK && heap_size > 0)
        s = map_heap(&r->area[1], heap_size);
    for (int i = 0; s == SHOAL_OK && i < TASK_AREAS; i++) {
        size_t n = r->area[i].size / r->page;
        r->area[i].touched = calloc(n ? n : 1, 1);
        if (r->area[i].touched == NULL)
            s = base_err(SHOAL_ERR_NOMEM, "task: page map");
    }
    if (s != SHOAL_OK)
        task_region_fini(r);
    return s;
}

void task_region_fini(task_region_t *r)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->track != NULL)
            task_track_destroy(a->track);
        if (i == 1 && a->base != NULL)
            munmap(a->base, a->size);
        free((void *)a->pristine);
        free(a->touched);
    }
    free(r->excl);
    memset(r, 0, sizeof(*r));
}

int task_region_in_static(const task_region_t *r, const void *addr,
                          size_t len)
{
    const task_area_t *a = &r->area[0];
    uintptr_t p = (uintptr_t)addr, b = (uintptr_t)a->base;

    return a->size > 0 && p >= b && len <= a->size && p - b <= a->size - len;
}

int task_region_exclude(task_region_t *r, const void *addr, size_t len)
{
    if (!task_region_in_static(r, addr, len) || len == 0)
        return base_err(SHOAL_ERR_INVALID,
                        "task: %zu bytes at %p are not in the static shared "
                        "section",
                        len, addr);
    uint64_t off = (uint64_t)((uintptr_t)addr - (uintptr_t)r->area[0].base);
    size_t k = 0;
    while (k < r->nexcl && r->excl[k].off < off)
        k++;
    if ((k < r->nexcl && r->excl[k].off < off + len) ||
        (k > 0 && r->excl[k - 1].off + r->excl[k - 1].len > off))
        return base_err(SHOAL_ERR_INVALID,
                        "task: the variables at %p (%zu bytes) belong to "
                        "two locks",
                        addr, len);
    task_excl_t *e = realloc(r->excl, (r->nexcl + 1) * sizeof(*e));
    if (e == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: lock ranges");
    memmove(e + k + 1, e + k, (r->nexcl - k) * sizeof(*e));
    e[k] = (task_excl_t){off, len};
    r->excl = e;
    r->nexcl++;
    return SHOAL_OK;
}

/* Marks the pages a diff touches. */
static int mark_touched(task_area_t *a, size_t page, const uint8_t *d,
                        size_t len)
{
    task_diff_iter_t it;
    task_diff_run_t run;
    int s = task_diff_iter_init(&it, d, len, a->size);

    while (s == SHOAL_OK && (s = task_diff_iter_next(&it, &run)) == 1) {
        for (uint64_t p = run.off / page; p <= (run.off + run.len - 1) / page;
             p++)
            a->touched[p] = 1;
        s = SHOAL_OK;
    }
    return s;
}

int task_region_apply(task_region_t *r, const uint8_t *state, size_t len)
{
    task_rd_t rd;

    task_rd_init(&rd, state, len);
    for (int i = 0; i < TASK_AREAS; i++) {
        size_t n;
        const uint8_t *d = task_rd_bytes(&rd, &n);
        if (rd.err)
            return rd.err;
        if (n == 0)
            continue;
        int s = task_diff_apply(d, n, r->area[i].base, r->area[i].size);
        if (s == SHOAL_OK)
            s = mark_touched(&r->area[i], r->page, d, n);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_region_track(task_region_t *r)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->size == 0)
            continue;
        int s = task_track_create(a->base, a->size, 0, &a->track);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_region_absent(task_region_t *r, task_track_fetch_fn fetch)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->track == NULL)
            continue;
        int s = task_track_absent(a->track, fetch, (void *)(uintptr_t)i);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_region_rearm(task_region_t *r)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->track == NULL)
            continue;
        int s = task_track_rearm(a->track);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_region_prefetch(task_region_t *r, task_track_peek_fn peek)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->track == NULL)
            continue;
        int s = task_track_prefetch(a->track, peek);
        if (s < 0)
            return s;
    }
    return SHOAL_OK;
}

int task_region_rewind(task_region_t *r)
{
    for (int i = 0; i < TASK_AREAS; i++) {
        task_area_t *a = &r->area[i];
        if (a->track == NULL)
            continue;
        int s = task_track_rewind(a->track);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

/* Puts the pristine bytes of the excluded ranges back into a copy of
 * page p of area 0. */
static void unexclude(const task_region_t *r, size_t p, uint8_t *out)
{
    uint64_t lo = (uint64_t)p * r->page, hi = lo + r->page;

    for (size_t k = 0; k < r->nexcl; k++) {
        uint64_t a = r->excl[k].off, b = a + r->excl[k].len;
        if (b <= lo || a >= hi)
            continue;
        a = a < lo ? lo : a;
        b = b > hi ? hi : b;
        memcpy(out + (a - lo), r->area[0].pristine + a, (size_t)(b - a));
    }
}

int task_region_page(const task_region_t *r, int area, size_t page,
                     void *out)
{
    const task_area_t *a = &r->area[area];

    if (area < 0 || area >= TASK_AREAS || page >= a->size / r->page ||
        (a->track != NULL && !task_track_is_present(a->track, page)))
        return 0;
    memcpy(out, a->base + page * r->page, r->page);
    if (area == 0)
        unexclude(r, page, out);
    return 1;
}

int task_region_fill(task_region_t *r, int area, size_t page,
                     const void *data)
{
    if (area < 0 || area >= TASK_AREAS || r->area[area].track == NULL)
        return 0;
    return task_track_fill(r->area[area].track, page, data);
}

int task_region_page_of(const task_region_t *r, pid_t pid, int area,
                        size_t page, void *out)
{
    if (area < 0 || area >= TASK_AREAS ||
        page >= r->area[area].size / r->page)
        return 0;
    struct iovec local = {out, r->page};
    struct iovec remote = {r->area[area].base + page * r->page, r->page};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)r->page)
        return 0;
    if (area == 0)
        unexclude(r, page, out);
    return 1;
}

int task_region_blob_skips(const task_region_t *r, const uint8_t *blob,
                           size_t len, task_diff_skip_t *sk)
{
    task_rd_t rd;
    int s = SHOAL_OK;

    task_rd_init(&rd, blob, len);
    for (int i = 0; i < TASK_AREAS; i++)
        sk[i] = (task_diff_skip_t){NULL, 0};
    for (int i = 0; i < TASK_AREAS && s == SHOAL_OK; i++) {
        size_t dlen = 0;
        const uint8_t *d = task_rd_bytes(&rd, &dlen);
        if (rd.err)
            s = rd.err;
        else if (dlen > 0)
            s = task_diff_skip_build(d, dlen, r->area[i].size, &sk[i]);
    }
    if (s != SHOAL_OK)
        for (int i = 0; i < TASK_AREAS; i++)
            task_diff_skip_free(&sk[i]);
    return s;
}

int task_region_page_from(const task_region_t *r, int area, size_t page,
                          const uint8_t *const *blobs, const size_t *lens,
                          const task_diff_skip_t *const *skips, size_t n,
                          void *out)
{
    const task_area_t *a = &r->area[area];
    uint64_t lo = (uint64_t)page * r->page, hi = lo + r->page;

    if (area < 0 || area >= TASK_AREAS || page >= a->size / r->page)
        return base_err(SHOAL_ERR_INVALID, "task: page %zu of area %d",
                        page, area);
    if (a->pristine != NULL)
        memcpy(out, a->pristine + lo, r->page);
    else
        memset(out, 0, r->page);
    for (size_t k = 0; k < n; k++) {
        task_rd_t rd;
        size_t dlen = 0;
        const uint8_t *d = NULL;
        task_rd_init(&rd, blobs[k], lens[k]);
        for (int i = 0; i <= area; i++)
            d = task_rd_bytes(&rd, &dlen);
        if (rd.err)
            return rd.err;
        if (dlen == 0)
            continue;
        task_diff_iter_t it;
        task_diff_run_t run;
        int s = task_diff_iter_init(&it, d, dlen, a->size);
        if (s == SHOAL_OK && skips != NULL && skips[k] != NULL)
            task_diff_skip_seek(&skips[k][area], lo, &it);
        while (s == SHOAL_OK && (s = task_diff_iter_next(&it, &run)) == 1) {
            s = SHOAL_OK;
            if (run.off >= hi)
                break;
            if (run.off + run.len <= lo)
                continue;
            uint64_t x = run.off < lo ? lo : run.off;
            uint64_t y = run.off + run.len > hi ? hi : run.off + run.len;
            memcpy((uint8_t *)out + (x - lo), run.bytes + (x - run.off),
                   (size_t)(y - x));
        }
        if (s < 0)
            return s;
    }
    return SHOAL_OK;
}

/* Adds cur against ref over [off, off+len) of area i, minus the excluded
 * ranges. */
static void add_excluding(const task_region_t *r, int i,
                          task_diff_writer_t *w, uint64_t off,
                          const uint8_t *ref, const uint8_t *cur, size_t len)
{
    uint64_t at = off, end = off + len;

    for (size_t k = 0; i == 0 && k < r->nexcl && at < end; k++) {
        const task_excl_t *e = &r->excl[k];
        if (e->off + e->len <= at)
            continue;
        if (e->off >= end)
            break;
        if (e->off > at)
            task_diff_add(w, at, ref + (at - off), cur + (at - off),
                          (size_t)(e->off - at));
        at = e->off + e->len < end ? e->off + e->len : end;
    }
    if (at < end)
        task_diff_add(w, at, ref + (at - off), cur + (at - off),
                      (size_t)(end - at));
}

/* One page into w: against its twin (a diff) or its pristine bytes (the
 * state). */
static void encode_page(task_region_t *r, int i, int state,
                        const uint8_t *zero, size_t p, task_diff_writer_t *w)
{
    task_area_t *a = &r->area[i];
    uint64_t off = (uint64_t)p * r->page;
    const uint8_t *ref;

    if (!state)
        ref = task_track_twin(a->track, p);
    else
        ref = a->pristine != NULL ? a->pristine + off : zero;
    if (ref != NULL) /* (a twin is missing only if its twinning failed) */
        add_excluding(r, i, w, off, ref, (uint8_t *)a->base + off, r->page);
}

static int encode(task_region_t *r, int state, task_buf_t *out)
{
    uint8_t *zero = state ? calloc(1, r->page) : NULL;

    if (state && zero == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: zero page");
    int s = SHOAL_OK;
    for (int i = 0; i < TASK_AREAS && s == SHOAL_OK; i++) {
        task_area_t *a = &r->area[i];
        task_diff_writer_t w;
        const uint8_t *d = NULL;
        size_t n = 0;

        task_diff_writer_init(&w, NULL, 0);
        if (!state) {
            /* A diff: the written pages only, whatever the area's size
             * (the shared heap has thousands of pages). */
            uint32_t *pages = NULL;
            size_t np = 0;
            if (a->track != NULL)
                s = task_track_dirty_pages(a->track, &pages, &np);
            for (size_t k = 0; k < np; k++)
                encode_page(r, i, 0, zero, pages[k], &w);
            free(pages);
        } else {
            for (size_t p = 0; p < a->size / r->page; p++)
                if (a->touched[p] ||
                    (a->track != NULL && task_track_is_dirty(a->track, p)))
                    encode_page(r, i, 1, zero, p, &w);
        }
        if (s == SHOAL_OK)
            s = task_diff_finish(&w, &d, &n);
        if (s == SHOAL_OK)
            task_buf_bytes(out, d, n);
        task_diff_writer_fini(&w);
        if (s == SHOAL_OK)
            s = out->err;
    }
    free(zero);
    return s;
}

int task_region_state(task_region_t *r, task_buf_t *out)
{
    return encode(r, 1, out);
}

int task_region_diff(task_region_t *r, task_buf_t *out)
{
    return encode(r, 0, out);
}

static int conflict_error(const task_diff_conflict_t *c, int area)
{
    char a[256], b[256];

    task_path_format(c->a, a, sizeof(a));
    task_path_format(c->b, b, sizeof(b));
    return base_err(SHOAL_ERR_INVALID,
                    "write conflict: sibling jobs %s and %s wrote different "
                    "values (%u and %u) to byte %llu of the %s (siblings "
                    "may write one byte only with the same value)",
                    a, b, c->va, c->vb, (unsigned long long)c->off,
                    area_name[area]);
}

int task_region_merge(task_region_t *r, const task_region_part_t *parts,
                      size_t n)
{
    task_diff_part_t *dp = calloc(n ? n : 1, sizeof(*dp));
    task_rd_t *rd = calloc(n ? n : 1, sizeof(*rd));
    int s = dp == NULL || rd == NULL
                ? base_err(SHOAL_ERR_NOMEM, "task: a merge of %zu", n)
                : SHOAL_OK;

    for (size_t k = 0; s == SHOAL_OK && k < n; k++)
        task_rd_init(&rd[k], parts[k].diff, parts[k].len);
    for (int i = 0; s == SHOAL_OK && i < TASK_AREAS; i++) {
        task_diff_conflict_t c = {0};
        for (size_t k = 0; k < n; k++) {
            dp[k].path = parts[k].path;
            dp[k].diff = task_rd_bytes(&rd[k], &dp[k].len);
            if (rd[k].err)
                s = rd[k].err;
        }
        if (s != SHOAL_OK || r->area[i].size == 0)
            continue;
        s = task_diff_merge(dp, n, r->area[i].base, r->area[i].size, &c);
        if (s == SHOAL_ERR_INVALID && c.a != NULL)
            s = conflict_error(&c, i);
    }
    free(dp);
    free(rd);
    return s;
}
