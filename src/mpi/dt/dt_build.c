/*
 * Building a derived type's layout: every constructor describes its type
 * as a sequence of placements "count copies of oldtype at disp, disp +
 * extent(oldtype), ...", in typemap order, and the builder turns them into
 * bounds, size, merged memory blocks and merged runs of basic elements.
 * Each constructor therefore costs time proportional to the blocks it
 * produces, and the result never refers back to the old types.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/dt/dt.h"

/* Blocks and runs one type may have at most (their arrays must fit memory). */
#define DT_MAX_ITEMS ((MPI_Count)1 << 40)

void dt_builder_init(dt_builder_t *b)
{
    memset(b, 0, sizeof(*b));
    b->basic = -1; /* no entry yet */
    b->align = 1;
}

void dt_builder_drop(dt_builder_t *b)
{
    free(b->segs);
    free(b->runs);
    b->segs = NULL;
    b->runs = NULL;
}

static void fail(dt_builder_t *b, int cls, const char *why)
{
    if (b->status == MPI_SUCCESS) {
        b->status = cls;
        b->why = why;
    }
}

/* Make room for one more item in an array of cap items of size sz. */
static int grow(dt_builder_t *b, void **arr, MPI_Count n, MPI_Count *cap,
                size_t sz)
{
    MPI_Count ncap;
    void *p;

    if (n < *cap)
        return 1;
    ncap = *cap ? *cap * 2 : 8;
    if (ncap > DT_MAX_ITEMS || (size_t)ncap > SIZE_MAX / sz ||
        (p = realloc(*arr, (size_t)ncap * sz)) == NULL) {
        fail(b, MPI_ERR_NO_MEM, "out of memory for the type's layout");
        return 0;
    }
    *arr = p;
    *cap = ncap;
    return 1;
}

/* Append a block, merged with the previous one when they touch. */
static void push_seg(dt_builder_t *b, MPI_Aint disp, MPI_Count len)
{
    if (b->nsegs > 0) {
        mpi_dt_seg_t *last = &b->segs[b->nsegs - 1];
        if (last->disp + last->len == disp) {
            last->len += len;
            return;
        }
    }
    if (!grow(b, (void **)&b->segs, b->nsegs, &b->capsegs, sizeof(*b->segs)))
        return;
    b->segs[b->nsegs].disp = disp;
    b->segs[b->nsegs].len = len;
    b->nsegs++;
}

static void push_run(dt_builder_t *b, int basic, MPI_Count n)
{
    if (b->nruns > 0 && b->runs[b->nruns - 1].basic == basic) {
        b->runs[b->nruns - 1].n += n;
        return;
    }
    if (!grow(b, (void **)&b->runs, b->nruns, &b->capruns, sizeof(*b->runs)))
        return;
    b->runs[b->nruns].basic = basic;
    b->runs[b->nruns].n = n;
    b->nruns++;
}

/* Bounds, size and markers of count copies of t at disp. */
static void add_bounds(dt_builder_t *b, MPI_Datatype t, MPI_Aint disp,
                       MPI_Count count)
{
    int ovf = 0;
    MPI_Aint span = dt_muladd((MPI_Aint)(count - 1), t->extent, 0, &ovf);
    MPI_Aint lo = span < 0 ? span : 0, hi = span > 0 ? span : 0;
    unsigned marks = dt_marks(t);

    if (t->size > 0) {
        MPI_Aint tl = dt_muladd(1, disp, t->true_lb, &ovf);
        MPI_Aint tu = dt_muladd(1, tl, t->true_extent, &ovf) + hi;
        tl += lo;
        if (!b->any_entry || tl < b->tlb)
            b->tlb = tl;
        if (!b->any_entry || tu > b->tub)
            b->tub = tu;
        b->any_entry = 1;
        if (dt_align(t) > b->align)
            b->align = dt_align(t);
        b->basic = b->basic == -1 || b->basic == t->basic ? t->basic : 0;
        if (__builtin_mul_overflow(count, t->size, &span) ||
            __builtin_add_overflow(b->size, (MPI_Count)span, &b->size) ||
            __builtin_mul_overflow(count, t->nelems, &span) ||
            __builtin_add_overflow(b->nelems, (MPI_Count)span, &b->nelems))
            ovf = 1;
    }
    if (marks & DT_MARK_LB) {
        MPI_Aint v = dt_muladd(1, disp, t->lb, &ovf) + lo;
        if (!(b->marks & DT_MARK_LB) || v < b->mlb)
            b->mlb = v;
        b->marks |= DT_MARK_LB;
    }
    if (marks & DT_MARK_UB) {
        MPI_Aint v =
            dt_muladd(1, dt_muladd(1, disp, t->lb, &ovf), t->extent, &ovf) + hi;
        if (!(b->marks & DT_MARK_UB) || v > b->mub)
            b->mub = v;
        b->marks |= DT_MARK_UB;
    }
    if (ovf)
        fail(b, MPI_ERR_ARG, "the type's displacements or size overflow");
}

void dt_builder_add(dt_builder_t *b, MPI_Datatype t, MPI_Aint disp,
                    MPI_Count count)
{
    const dt_map_t *m = dt_map(t);
    MPI_Count k, i, work;

    if (b->status != MPI_SUCCESS || count <= 0)
        return;
    add_bounds(b, t, disp, count);
    if (b->status != MPI_SUCCESS || t->size == 0)
        return;
    /* Copies of a gap-free type tile into one block. */
    if (t->nsegs == 1 && t->segs[0].len == t->extent)
        push_seg(b, disp + t->segs[0].disp, count * t->segs[0].len);
    else if (__builtin_mul_overflow(count, t->nsegs, &work) ||
             work > DT_MAX_ITEMS)
        fail(b, MPI_ERR_NO_MEM, "the type has too many blocks to flatten");
    else
        for (k = 0; k < count && b->status == MPI_SUCCESS; k++) {
            MPI_Aint base = disp + (MPI_Aint)k * t->extent;
            for (i = 0; i < t->nsegs; i++)
                push_seg(b, base + t->segs[i].disp, t->segs[i].len);
        }
    if (m->nruns == 1)
        push_run(b, m->runs[0].basic, count * m->runs[0].n);
    else
        for (k = 0; k < count && b->status == MPI_SUCCESS; k++)
            for (i = 0; i < m->nruns; i++)
                push_run(b, m->runs[i].basic, m->runs[i].n);
}

void dt_builder_resize(dt_builder_t *b, MPI_Aint lb, MPI_Aint extent)
{
    b->marks = DT_MARK_LB | DT_MARK_UB;
    b->mlb = lb;
    if (__builtin_add_overflow(lb, extent, &b->mub))
        fail(b, MPI_ERR_ARG, "lb + extent overflows MPI_Aint");
}

/* lb, ub: markers win; else the entries, ub padded to the alignment. */
static int finish_bounds(dt_builder_t *b, struct shoal_mpi_datatype *t)
{
    MPI_Aint lb, ub;

    if (b->marks & DT_MARK_LB)
        lb = b->mlb;
    else
        lb = b->any_entry ? b->tlb : (b->marks & DT_MARK_UB) ? b->mub : 0;
    if (b->marks & DT_MARK_UB) {
        ub = b->mub;
    } else if (b->any_entry) {
        MPI_Aint r = (b->tub - lb) % b->align;
        ub = b->tub + (r == 0 ? 0 : r > 0 ? b->align - r : -r);
    } else {
        ub = lb;
    }
    if (__builtin_sub_overflow(ub, lb, &t->extent)) {
        fail(b, MPI_ERR_ARG, "the type's extent overflows MPI_Aint");
        return 0;
    }
    t->lb = lb;
    t->true_lb = b->any_entry ? b->tlb : 0;
    t->true_extent = b->any_entry ? b->tub - b->tlb : 0;
    return 1;
}

/* The shared layout object, with the prefix sums the cursor searches. */
static dt_map_t *finish_map(dt_builder_t *b)
{
    dt_map_t *m = calloc(1, sizeof(*m));
    MPI_Count i, off = 0, el = 0;

    if (m == NULL)
        return NULL;
    m->refs = 1;
    if (b->nsegs > 0) {
        m->seg_end = malloc((size_t)b->nsegs * sizeof(*m->seg_end));
        if (m->seg_end == NULL) {
            free(m);
            return NULL;
        }
        m->segs = realloc(b->segs, (size_t)b->nsegs * sizeof(*b->segs));
        if (m->segs == NULL)
            m->segs = b->segs;
    } else {
        free(b->segs);
    }
    b->segs = NULL;
    m->nsegs = b->nsegs;
    for (i = 0; i < m->nsegs; i++)
        m->seg_end[i] = off += m->segs[i].len;
    m->runs = b->nruns > 0
                  ? realloc(b->runs, (size_t)b->nruns * sizeof(*b->runs))
                  : NULL;
    if (m->runs == NULL)
        m->runs = b->runs;
    m->nruns = b->nruns;
    b->runs = NULL;
    for (i = 0, off = 0; i < m->nruns; i++) {
        const dt_basic_info_t *bi = &dt_basic[m->runs[i].basic];
        m->runs[i].bytes_before = off;
        m->runs[i].elems_before = el;
        off += m->runs[i].n * bi->native;
        el += m->runs[i].n;
        m->ext32_size += m->runs[i].n * bi->ext;
    }
    return m;
}

int dt_builder_finish(dt_builder_t *b, dt_obj_t *o)
{
    struct shoal_mpi_datatype *t = &o->pub;
    dt_map_t *m = NULL;

    if (b->status == MPI_SUCCESS && finish_bounds(b, t)) {
        m = finish_map(b);
        if (m == NULL)
            fail(b, MPI_ERR_NO_MEM, "out of memory for the type's layout");
    }
    if (b->status != MPI_SUCCESS || m == NULL) {
        dt_builder_drop(b);
        return b->status;
    }
    t->size = b->size;
    t->nelems = b->nelems;
    t->basic = b->basic < 0 ? 0 : b->basic;
    t->typemap = m;
    t->segs = m->segs;
    t->nsegs = m->nsegs;
    o->marks = b->marks;
    o->align = b->align;
    dt_set_contig(t);
    return MPI_SUCCESS;
}
