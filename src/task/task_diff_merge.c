/*
 * Merging the diffs of a sibling set (task_diff.h): check every diff, look
 * for common-CRCW conflicts, then apply in job-path order.  Checking comes
 * first so that a bad or conflicting set leaves the parent's memory as it
 * was, and the runtime can report the error with the jobs' paths.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "task/task_diff.h"

typedef struct run_ref {
    uint64_t off, end;
    const uint8_t *bytes;
    uint32_t rank; /* the part's place in job-path order */
} run_ref_t;

typedef struct ranked {
    const task_diff_part_t *part;
} ranked_t;

static int by_path(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;

    return task_path_cmp(x->part->path, y->part->path);
}

static int by_offset(const void *a, const void *b)
{
    const run_ref_t *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Orders the parts by path; refuses a job that appears twice. */
static int rank_parts(const task_diff_part_t *parts, size_t n, ranked_t *r)
{
    for (size_t i = 0; i < n; i++)
        r[i].part = &parts[i];
    qsort(r, n, sizeof *r, by_path);
    for (size_t i = 1; i < n; i++) {
        if (task_path_equal(r[i - 1].part->path, r[i].part->path)) {
            char p[128];
            task_path_format(r[i].part->path, p, sizeof p);
            return base_err(SHOAL_ERR_INVALID, "task diff merge: job %s "
                            "has two diffs in one merge", p);
        }
    }
    return SHOAL_OK;
}

/* Every run of every part, sorted by offset; the parts are checked on the
 * way. */
static int gather_runs(const ranked_t *r, size_t n, size_t size,
                       run_ref_t **out, size_t *nout)
{
    size_t total = 0, k = 0;
    uint32_t runs;

    for (size_t i = 0; i < n; i++) {
        int s = task_diff_check(r[i].part->diff, r[i].part->len, size,
                                &runs, NULL);
        if (s != SHOAL_OK)
            return s;
        total += runs;
    }
    run_ref_t *v = malloc((total ? total : 1) * sizeof *v);
    if (v == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task diff merge: %zu runs", total);
    for (size_t i = 0; i < n; i++) {
        task_diff_iter_t it;
        task_diff_run_t run;
        task_diff_iter_init(&it, r[i].part->diff, r[i].part->len, size);
        while (task_diff_iter_next(&it, &run) == 1)
            v[k++] = (run_ref_t){run.off, run.off + run.len, run.bytes,
                                 (uint32_t)i};
    }
    qsort(v, total, sizeof *v, by_offset);
    *out = v;
    *nout = total;
    return SHOAL_OK;
}

typedef struct found {
    int any;
    uint64_t off;
    uint32_t ra, rb; /* ra < rb */
    uint8_t va, vb;
} found_t;

/* Where two runs of different jobs overlap, the first byte they disagree
 * on; keeps the lowest (offset, ranks) seen. */
static void compare_overlap(const run_ref_t *a, const run_ref_t *b,
                            found_t *f)
{
    uint64_t lo = a->off > b->off ? a->off : b->off;
    uint64_t hi = a->end < b->end ? a->end : b->end;

    if (f->any && f->off < lo)
        return;
    for (uint64_t x = lo; x < hi; x++) {
        uint8_t va = a->bytes[x - a->off], vb = b->bytes[x - b->off];
        if (va == vb)
            continue;
        const run_ref_t *p = a->rank < b->rank ? a : b;
        const run_ref_t *q = p == a ? b : a;
        found_t g = {1, x, p->rank, q->rank, p->bytes[x - p->off],
                     q->bytes[x - q->off]};
        if (!f->any || g.off < f->off ||
            (g.off == f->off && (g.ra < f->ra ||
                                 (g.ra == f->ra && g.rb < f->rb))))
            *f = g;
        return;
    }
}

/* Sweeps the runs by offset, keeping those that still reach the current
 * one; runs of one job never overlap, so every overlap is two jobs. */
static int find_conflict(const run_ref_t *v, size_t n, found_t *f)
{
    size_t *active = malloc((n ? n : 1) * sizeof *active), na = 0;

    if (active == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task diff merge: %zu runs", n);
    for (size_t i = 0; i < n; i++) {
        size_t keep = 0;
        for (size_t j = 0; j < na; j++) {
            if (v[active[j]].end <= v[i].off)
                continue;
            compare_overlap(&v[active[j]], &v[i], f);
            active[keep++] = active[j];
        }
        na = keep;
        active[na++] = i;
    }
    free(active);
    return SHOAL_OK;
}

static int report(const ranked_t *r, const found_t *f,
                  task_diff_conflict_t *conflict)
{
    const task_path_t *a = r[f->ra].part->path, *b = r[f->rb].part->path;
    char pa[128], pb[128];

    if (conflict)
        *conflict = (task_diff_conflict_t){a, b, f->off, f->va, f->vb};
    task_path_format(a, pa, sizeof pa);
    task_path_format(b, pb, sizeof pb);
    return base_err(SHOAL_ERR_INVALID, "common-CRCW conflict at byte %llu "
                    "of shared memory: job %s wrote 0x%02x, its sibling %s "
                    "wrote 0x%02x", (unsigned long long)f->off, pa, f->va,
                    pb, f->vb);
}

int task_diff_merge(const task_diff_part_t *parts, size_t n, void *base,
                    size_t size, task_diff_conflict_t *conflict)
{
    ranked_t *r = malloc((n ? n : 1) * sizeof *r);
    run_ref_t *v = NULL;
    size_t nv = 0;
    found_t f = {0};
    int s;

    if (r == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task diff merge: %zu parts", n);
    s = rank_parts(parts, n, r);
    if (s == SHOAL_OK)
        s = gather_runs(r, n, size, &v, &nv);
    if (s == SHOAL_OK)
        s = find_conflict(v, nv, &f);
    if (s == SHOAL_OK && f.any)
        s = report(r, &f, conflict);
    if (s == SHOAL_OK)
        for (size_t i = 0; i < n; i++)
            task_diff_apply(r[i].part->diff, r[i].part->len, base, size);
    free(v);
    free(r);
    return s;
}
