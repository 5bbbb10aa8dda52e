/* Conformance generator: random datatypes, their models, buffers, streams. */
#include "conform.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ------------------------------------------------------ */
uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t rng_below(rng_t *r, uint64_t n)
{
    return n <= 1 ? 0 : rng_next(r) % n;
}

int rng_range(rng_t *r, int lo, int hi)
{
    return lo + (int)rng_below(r, (uint64_t)(hi - lo + 1));
}

int rng_chance(rng_t *r, int percent)
{
    return (int)rng_below(r, 100) < percent;
}

rng_t rng_derive(uint64_t a, uint64_t b)
{
    rng_t r = { a * 0xD1B54A32D192ED03ULL ^ (b + 0x8CB92BA72F3D8DD7ULL) };
    rng_next(&r);
    r.s ^= b * 0xABC98388FB8FAC03ULL;
    rng_next(&r);
    return r;
}

void rng_shuffle(rng_t *r, int *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint64_t)i + 1);
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* ---- strings ------------------------------------------------------------- */
static char *xstrdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xstrdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* Appends "a,b,c" of n integers to a small buffer. */
static void list_str(char *out, size_t cap, const MPI_Aint *v, int n)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < n && used + 24 < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", i ? "," : "", (long)v[i]);
}

/* ---- basic types --------------------------------------------------------- */
static const struct { const char *name; int size; } basics_info[] = {
    { "byte", 1 }, { "short", 2 }, { "int", 4 }, { "float", 4 }, { "double", 8 },
    { "long long", 8 },
};

static MPI_Datatype basic_dt(int i)
{
    switch (i) {
    case 0: return MPI_BYTE;
    case 1: return MPI_SHORT;
    case 2: return MPI_INT;
    case 3: return MPI_FLOAT;
    case 4: return MPI_DOUBLE;
    default: return MPI_LONG_LONG;
    }
}

static int basic_index(MPI_Datatype dt)
{
    for (int i = 0; i < 6; i++)
        if (basic_dt(i) == dt)
            return i;
    return -1;
}

const char *basic_name(MPI_Datatype dt)
{
    int i = basic_index(dt);
    if (i >= 0)
        return basics_info[i].name;
    if (dt == MPI_UNSIGNED) return "unsigned";
    if (dt == MPI_2INT) return "2int";
    if (dt == MPI_CHAR) return "char";
    return "?";
}

MPI_Datatype random_basic(rng_t *r)
{
    return basic_dt((int)rng_below(r, 6));
}

/* ---- models -------------------------------------------------------------- */
static tmodel *tm_new(void)
{
    tmodel *t = calloc(1, sizeof *t);
    t->dt = MPI_DATATYPE_NULL;
    return t;
}

static void seg_push(tmodel *t, MPI_Aint off, MPI_Aint len, int esz)
{
    if (len == 0)
        return;
    if (t->nsegs > 0) {
        seg_t *l = &t->segs[t->nsegs - 1];
        if (l->off + l->len == off && l->esz == esz) {
            l->len += len;
            return;
        }
    }
    if (t->nsegs == t->capsegs) {
        t->capsegs = t->capsegs ? 2 * t->capsegs : 8;
        t->segs = realloc(t->segs, t->capsegs * sizeof *t->segs);
    }
    t->segs[t->nsegs++] = (seg_t){ off, len, esz };
}

tmodel *tm_basic(MPI_Datatype dt)
{
    tmodel *t = tm_new();
    int sz;
    MPI_Type_size(dt, &sz);
    t->dt = dt;
    t->owned = 0;
    seg_push(t, 0, sz, sz);
    t->lb = 0;
    t->ub = sz;
    t->tlb = 0;
    t->tub = sz;
    t->size = sz;
    t->nelem = 1;
    t->basic = dt;
    t->bsize = sz;
    t->desc = xstrdup_printf("%s", basic_name(dt));
    return t;
}

/* A model under construction: copies of children at displacements. */
typedef struct {
    tmodel *t;
    int any;
} builder_t;

static builder_t build_begin(void)
{
    builder_t b = { tm_new(), 0 };
    return b;
}

static void build_add(builder_t *b, const tmodel *c, MPI_Aint shift)
{
    tmodel *t = b->t;
    for (size_t i = 0; i < c->nsegs; i++)
        seg_push(t, c->segs[i].off + shift, c->segs[i].len, c->segs[i].esz);
    if (!b->any) {
        t->lb = c->lb + shift;
        t->ub = c->ub + shift;
        t->tlb = c->tlb + shift;
        t->tub = c->tub + shift;
        t->basic = c->basic;
        t->bsize = c->bsize;
        t->marked = c->marked;
        t->has_darray = c->has_darray;
        b->any = 1;
    } else {
        if (c->lb + shift < t->lb) t->lb = c->lb + shift;
        if (c->ub + shift > t->ub) t->ub = c->ub + shift;
        if (c->tlb + shift < t->tlb) t->tlb = c->tlb + shift;
        if (c->tub + shift > t->tub) t->tub = c->tub + shift;
        if (t->basic != c->basic)
            t->basic = MPI_DATATYPE_NULL;
        if (c->bsize > t->bsize)
            t->bsize = c->bsize;
        t->marked |= c->marked;
        t->has_darray |= c->has_darray;
    }
    t->size += c->size;
    t->nelem += c->nelem;
}

/* Limits that keep one element (and so a case) small enough. */
#define MAX_ELEM_SIZE (64 * 1024)
#define MAX_EXTENT (1024 * 1024)
#define MAX_SEGS 4096

static int too_big(const tmodel *t)
{
    return t->size > MAX_ELEM_SIZE || t->ub - t->lb > MAX_EXTENT ||
           t->tub - t->tlb > MAX_EXTENT || t->nsegs > MAX_SEGS;
}

void tm_free(tmodel *t)
{
    if (!t)
        return;
    if (t->owned && t->dt != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->dt);
    free(t->segs);
    free(t->desc);
    free(t);
}

/* Non-overlapping positions for n blocks of `len[i]` units each, with gaps,
 * in a random memory order; optionally shifted so some are negative.  Units
 * are whatever the caller multiplies by. */
static void place_blocks(rng_t *r, int n, const MPI_Aint *len, MPI_Aint *pos, int negative)
{
    int order[8];
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (rng_chance(r, 50))
        rng_shuffle(r, order, n);
    MPI_Aint cur = rng_range(r, 0, 2);
    for (int k = 0; k < n; k++) {
        int i = order[k];
        pos[i] = cur;
        cur += len[i] + (rng_chance(r, 40) ? 0 : rng_range(r, 1, 3));
    }
    if (negative) {
        MPI_Aint shift = rng_range(r, 1, (int)(cur > 1 ? cur : 1));
        for (int i = 0; i < n; i++)
            pos[i] -= shift;
    }
    /* A zero-length block takes another block's place, so it can never be
     * the lowest or highest displacement (implementations may disagree
     * whether an empty block counts for lb/ub; the type map says no). */
    for (int i = 0; i < n; i++)
        if (len[i] == 0) {
            for (int j = 0; j < n; j++)
                if (len[j] > 0) {
                    pos[i] = pos[j];
                    break;
                }
        }
}

static tmodel *gen(rng_t *r, MPI_Datatype basic, int depth, int allow_mixed);

/* Up to `depth` levels of constructors (0: the basic type itself). */
static tmodel *gen_child(rng_t *r, MPI_Datatype basic, int depth)
{
    if (depth <= 0 || rng_chance(r, 35))
        return tm_basic(basic);
    tmodel *t = gen(r, basic, depth, 0);
    return t ? t : tm_basic(basic);
}

/* A child whose lb is 0 (for subarray and darray). */
static tmodel *gen_child_lb0(rng_t *r, MPI_Datatype basic, int depth)
{
    for (int tries = 0; tries < 4; tries++) {
        tmodel *c = gen_child(r, basic, depth);
        if (c->lb == 0 && c->ub > 0)
            return c;
        tm_free(c);
    }
    return tm_basic(basic);
}

enum { K_CONTIG, K_VECTOR, K_HVECTOR, K_INDEXED, K_HINDEXED, K_INDEXED_BLOCK,
       K_HINDEXED_BLOCK, K_STRUCT, K_SUBARRAY, K_DARRAY, K_RESIZED, K_N };

static tmodel *gen_contig(rng_t *r, tmodel *c)
{
    int n = rng_range(r, 1, 6);
    builder_t b = build_begin();
    for (int i = 0; i < n; i++)
        build_add(&b, c, i * tm_extent(c));
    CHK(MPI_Type_contiguous(n, c->dt, &b.t->dt));
    b.t->desc = xstrdup_printf("contig(%d){%s}", n, c->desc);
    return b.t;
}

static tmodel *gen_vector(rng_t *r, tmodel *c, int bytes)
{
    int count = rng_range(r, 1, 5), blen = rng_range(r, 1, 4);
    MPI_Aint ext = tm_extent(c);
    int stride_u = blen + rng_range(r, 0, 3);
    if (rng_chance(r, 25))
        stride_u = -stride_u;
    builder_t b = build_begin();
    if (!bytes) {
        for (int i = 0; i < count; i++)
            for (int j = 0; j < blen; j++)
                build_add(&b, c, ((MPI_Aint)i * stride_u + j) * ext);
        CHK(MPI_Type_vector(count, blen, stride_u, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("vector(%d,%d,%d){%s}", count, blen, stride_u, c->desc);
    } else {
        MPI_Aint align = c->bsize;
        MPI_Aint stride = (MPI_Aint)blen * ext + align * rng_range(r, 0, 3);
        if (stride_u < 0)
            stride = -stride;
        for (int i = 0; i < count; i++)
            for (int j = 0; j < blen; j++)
                build_add(&b, c, (MPI_Aint)i * stride + j * ext);
        CHK(MPI_Type_create_hvector(count, blen, stride, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("hvector(%d,%d,%ldB){%s}", count, blen, (long)stride, c->desc);
    }
    return b.t;
}

static tmodel *gen_indexed(rng_t *r, tmodel *c, int kind)
{
    int n = rng_range(r, 1, 5);
    int same = kind == K_INDEXED_BLOCK || kind == K_HINDEXED_BLOCK;
    int bytes = kind == K_HINDEXED || kind == K_HINDEXED_BLOCK;
    MPI_Aint len[8] = { 0 }, pos[8] = { 0 };
    int blens[8], idispl[8];
    MPI_Aint bdispl[8];
    int common = rng_range(r, 1, 4);
    for (int i = 0; i < n; i++) {
        len[i] = same ? common : (rng_chance(r, 10) ? 0 : rng_range(r, 1, 4));
        blens[i] = (int)len[i];
    }
    place_blocks(r, n, len, pos, rng_chance(r, 25));
    MPI_Aint ext = tm_extent(c);
    builder_t b = build_begin();
    for (int i = 0; i < n; i++) {
        idispl[i] = (int)pos[i];
        bdispl[i] = pos[i] * ext;
        for (int j = 0; j < blens[i]; j++)
            build_add(&b, c, (pos[i] + j) * ext);
    }
    if (!b.any) {                 /* every block empty: try again */
        tm_free(b.t);
        return NULL;
    }
    char ls[160], ds[160];
    list_str(ls, sizeof ls, len, n);
    list_str(ds, sizeof ds, bytes ? bdispl : pos, n);
    switch (kind) {
    case K_INDEXED:
        CHK(MPI_Type_indexed(n, blens, idispl, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("indexed([%s],[%s]){%s}", ls, ds, c->desc);
        break;
    case K_HINDEXED:
        CHK(MPI_Type_create_hindexed(n, blens, bdispl, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("hindexed([%s],[%sB]){%s}", ls, ds, c->desc);
        break;
    case K_INDEXED_BLOCK:
        CHK(MPI_Type_create_indexed_block(n, common, idispl, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("indexed_block(%d,[%s]){%s}", common, ds, c->desc);
        break;
    default:
        CHK(MPI_Type_create_hindexed_block(n, common, bdispl, c->dt, &b.t->dt));
        b.t->desc = xstrdup_printf("hindexed_block(%d,[%sB]){%s}", common, ds, c->desc);
        break;
    }
    return b.t;
}

static tmodel *wrap_resized(tmodel *c, MPI_Aint lb, MPI_Aint extent);

static tmodel *gen_struct(rng_t *r, MPI_Datatype basic, int depth, int mixed)
{
    int n = rng_range(r, 1, 4);
    tmodel *kids[8];
    MPI_Aint len[8] = { 0 }, pos[8] = { 0 }, span[8] = { 0 };
    MPI_Datatype types[8];
    int blens[8];
    MPI_Aint displs[8];
    int align = 1;
    for (int i = 0; i < n; i++) {
        MPI_Datatype bt = mixed ? random_basic(r) : basic;
        kids[i] = rng_chance(r, 60) ? tm_basic(bt) : gen_child(r, bt, depth - 1);
        blens[i] = rng_range(r, 1, 3);
        if (kids[i]->bsize > align)
            align = kids[i]->bsize;
    }
    /* Units of `align` bytes: each block's whole span in those units. */
    for (int i = 0; i < n; i++) {
        MPI_Aint lo, hi;
        tm_span(kids[i], blens[i], &lo, &hi);
        if (kids[i]->lb < lo) lo = kids[i]->lb;
        MPI_Aint top = kids[i]->lb + blens[i] * tm_extent(kids[i]);
        if (top > hi) hi = top;
        span[i] = lo;
        len[i] = (hi - lo + align - 1) / align;
    }
    place_blocks(r, n, len, pos, rng_chance(r, 25));
    builder_t b = build_begin();
    char body[400];
    size_t used = 0;
    body[0] = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = pos[i] * align - span[i];
        types[i] = kids[i]->dt;
        for (int j = 0; j < blens[i]; j++)
            build_add(&b, kids[i], displs[i] + j * tm_extent(kids[i]));
        if (used + 40 < sizeof body)
            used += (size_t)snprintf(body + used, sizeof body - used, "%s%d@%ld:%s",
                                     i ? "; " : "", blens[i], (long)displs[i], kids[i]->desc);
    }
    CHK(MPI_Type_create_struct(n, blens, displs, types, &b.t->dt));
    b.t->owned = 1;
    b.t->desc = xstrdup_printf("struct{%s}", body);
    int kid_marked[8];
    for (int i = 0; i < n; i++) {
        kid_marked[i] = kids[i]->marked;
        tm_free(kids[i]);
    }
    /* Implementations pad a struct's extent to the alignment of its basic
     * types (the standard's epsilon) in ways that differ once children carry
     * their own bounds; resize whenever the bounds are not already aligned,
     * so the extent is what we say. */
    tmodel *t = b.t;
    /* The standard's lb/ub markers are sticky: a struct mixing members with
     * explicit bounds (resized, subarray, darray) and members without takes
     * its lb/ub from the marked ones only (Open MPI does so, MPICH 4.0 does
     * not).  Such structs get explicit bounds of their own. */
    int marked = 0, plain = 0;
    for (int i = 0; i < n; i++) {
        marked |= kid_marked[i];
        plain |= !kid_marked[i];
    }
    if ((marked && plain) || t->basic == MPI_DATATYPE_NULL || t->lb % align || t->ub % align) {
        MPI_Aint lb = t->lb - (t->lb % align + align) % align;
        MPI_Aint ub = t->ub + (align - (t->ub % align + align) % align) % align;
        t = wrap_resized(t, lb, ub - lb);
    }
    return t;
}

static tmodel *wrap_resized(tmodel *c, MPI_Aint lb, MPI_Aint extent)
{
    builder_t b = build_begin();
    build_add(&b, c, 0);
    b.t->lb = lb;
    b.t->ub = lb + extent;
    b.t->marked = 1;
    CHK(MPI_Type_create_resized(c->dt, lb, extent, &b.t->dt));
    b.t->desc = xstrdup_printf("resized(%ld,%ld){%s}", (long)lb, (long)extent, c->desc);
    b.t->owned = 1;
    tm_free(c);
    return b.t;
}

static tmodel *gen_resized(rng_t *r, tmodel *c)
{
    MPI_Aint a = c->bsize;
    MPI_Aint lb, extent;
    int mode = rng_range(r, 0, 9);
    if (mode < 6) {            /* gaps before and after the data */
        MPI_Aint before = a * rng_range(r, 0, 3), after = a * rng_range(r, 0, 4);
        lb = c->tlb - before;
        extent = c->tub - c->tlb + before + after;
        if (rng_chance(r, 30))
            lb -= a * rng_range(r, 1, 4);      /* lb below the data: negative start */
    } else if (mode < 8) {     /* interleaving: extent smaller than the data */
        lb = c->tlb;
        extent = a * rng_range(r, 1, 3);
    } else {
        lb = c->lb;
        extent = tm_extent(c);
    }
    if (extent <= 0)
        extent = a;
    builder_t b = build_begin();
    build_add(&b, c, 0);
    b.t->lb = lb;
    b.t->ub = lb + extent;
    b.t->marked = 1;
    CHK(MPI_Type_create_resized(c->dt, lb, extent, &b.t->dt));
    b.t->desc = xstrdup_printf("resized(%ld,%ld){%s}", (long)lb, (long)extent, c->desc);
    return b.t;
}

/* Visits the elements of an ndims array (sizes gs, element extent ext) in
 * memory order, adding those `take` accepts. */
typedef int (*take_fn)(int dim, int idx, const void *arg);

static void walk_array(builder_t *b, const tmodel *c, int nd, const int *gs, int forder,
                       take_fn take, const void *arg)
{
    int idx[3] = { 0, 0, 0 };
    MPI_Aint total = 1;
    for (int d = 0; d < nd; d++)
        total *= gs[d];
    for (MPI_Aint lin = 0; lin < total; lin++) {
        MPI_Aint rest = lin;
        /* C order: last dimension fastest; Fortran: first fastest. */
        for (int k = 0; k < nd; k++) {
            int d = forder ? k : nd - 1 - k;
            idx[d] = (int)(rest % gs[d]);
            rest /= gs[d];
        }
        int ok = 1;
        for (int d = 0; d < nd && ok; d++)
            ok = take(d, idx[d], arg);
        if (ok)
            build_add(b, c, lin * tm_extent(c));
    }
}

struct sub_arg { const int *sub, *start; };
static int take_sub(int d, int i, const void *arg)
{
    const struct sub_arg *a = arg;
    return i >= a->start[d] && i < a->start[d] + a->sub[d];
}

static tmodel *gen_subarray(rng_t *r, tmodel *c)
{
    int nd = rng_range(r, 1, 3), gs[3], sub[3], start[3];
    int forder = rng_chance(r, 30);
    for (int d = 0; d < nd; d++) {
        gs[d] = rng_range(r, 1, 6);
        sub[d] = rng_range(r, 1, gs[d]);
        start[d] = rng_range(r, 0, gs[d] - sub[d]);
    }
    builder_t b = build_begin();
    struct sub_arg a = { sub, start };
    walk_array(&b, c, nd, gs, forder, take_sub, &a);
    MPI_Aint total = 1;
    for (int d = 0; d < nd; d++)
        total *= gs[d];
    b.t->lb = 0;
    b.t->ub = total * tm_extent(c);
    b.t->marked = 1;
    CHK(MPI_Type_create_subarray(nd, gs, sub, start, forder ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                                 c->dt, &b.t->dt));
    b.t->desc = xstrdup_printf("subarray(%s,[%d,%d,%d]/[%d,%d,%d]@[%d,%d,%d]){%s}",
                               forder ? "F" : "C", gs[0], nd > 1 ? gs[1] : 0, nd > 2 ? gs[2] : 0,
                               sub[0], nd > 1 ? sub[1] : 0, nd > 2 ? sub[2] : 0, start[0],
                               nd > 1 ? start[1] : 0, nd > 2 ? start[2] : 0, c->desc);
    return b.t;
}

struct dar_arg { const int *dist, *darg, *ps, *coord, *gs; };
static int take_dar(int d, int i, const void *arg)
{
    const struct dar_arg *a = arg;
    int p = a->ps[d], c = a->coord[d];
    switch (a->dist[d]) {
    case MPI_DISTRIBUTE_NONE:
        return 1;
    case MPI_DISTRIBUTE_BLOCK: {
        int blk = a->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (a->gs[d] + p - 1) / p : a->darg[d];
        return i >= c * blk && i < (c + 1) * blk;
    }
    default: {
        int k = a->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : a->darg[d];
        return (i / k) % p == c;
    }
    }
}

static tmodel *gen_darray(rng_t *r, tmodel *c)
{
    int nd = rng_range(r, 1, 3), gs[3], dist[3], darg[3], ps[3], coord[3];
    int forder = rng_chance(r, 30);
    int nprocs = 1;
    for (int d = 0; d < nd; d++) {
        gs[d] = rng_range(r, 1, 8);
        int kind = rng_range(r, 0, 2);
        if (kind == 0) {
            dist[d] = MPI_DISTRIBUTE_NONE;
            ps[d] = 1;
            darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
        } else if (kind == 1) {
            dist[d] = MPI_DISTRIBUTE_BLOCK;
            ps[d] = rng_range(r, 1, gs[d] < 3 ? gs[d] : 3);
            int dflt = (gs[d] + ps[d] - 1) / ps[d];
            darg[d] = rng_chance(r, 60) ? MPI_DISTRIBUTE_DFLT_DARG : dflt + rng_range(r, 0, 2);
        } else {
            dist[d] = MPI_DISTRIBUTE_CYCLIC;
            ps[d] = rng_range(r, 1, 3);
            darg[d] = rng_chance(r, 40) ? MPI_DISTRIBUTE_DFLT_DARG : rng_range(r, 1, 3);
        }
        nprocs *= ps[d];
    }
    int prank = rng_range(r, 0, nprocs - 1);
    /* The process grid is row-major whatever the array order. */
    int rest = prank;
    for (int d = nd - 1; d >= 0; d--) {
        coord[d] = rest % ps[d];
        rest /= ps[d];
    }
    builder_t b = build_begin();
    struct dar_arg a = { dist, darg, ps, coord, gs };
    walk_array(&b, c, nd, gs, forder, take_dar, &a);
    if (!b.any) {              /* this process holds nothing */
        tm_free(b.t);
        return NULL;
    }
    MPI_Aint total = 1;
    for (int d = 0; d < nd; d++)
        total *= gs[d];
    b.t->lb = 0;
    b.t->ub = total * tm_extent(c);
    b.t->marked = 1;
    b.t->has_darray = 1;
    CHK(MPI_Type_create_darray(nprocs, prank, nd, gs, dist, darg, ps,
                               forder ? MPI_ORDER_FORTRAN : MPI_ORDER_C, c->dt, &b.t->dt));
    char dd[3][16];
    for (int d = 0; d < 3; d++) {
        if (d >= nd) { snprintf(dd[d], sizeof dd[d], "-"); continue; }
        const char *k = dist[d] == MPI_DISTRIBUTE_NONE ? "n" : dist[d] == MPI_DISTRIBUTE_BLOCK ? "b" : "c";
        snprintf(dd[d], sizeof dd[d], "%d%s%d/%d", gs[d], k,
                 darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 0 : darg[d], ps[d]);
    }
    b.t->desc = xstrdup_printf("darray(%s,rank %d/%d,[%s,%s,%s]){%s}", forder ? "F" : "C", prank,
                               nprocs, dd[0], dd[1], dd[2], c->desc);
    return b.t;
}

/* One constructor over a random child; NULL when the draw made nothing
 * usable (the caller draws again). */
static tmodel *gen(rng_t *r, MPI_Datatype basic, int depth, int allow_mixed)
{
    int kind = (int)rng_below(r, K_N);
    if (kind == K_STRUCT)
        return gen_struct(r, basic, depth, allow_mixed && rng_chance(r, 50));
    tmodel *c = (kind == K_SUBARRAY || kind == K_DARRAY) ? gen_child_lb0(r, basic, depth - 1)
                                                         : gen_child(r, basic, depth - 1);
    if (!c)
        return NULL;
    tmodel *t = NULL;
    switch (kind) {
    case K_CONTIG: t = gen_contig(r, c); break;
    case K_VECTOR: t = gen_vector(r, c, 0); break;
    case K_HVECTOR: t = gen_vector(r, c, 1); break;
    case K_INDEXED: case K_HINDEXED: case K_INDEXED_BLOCK: case K_HINDEXED_BLOCK:
        t = gen_indexed(r, c, kind); break;
    case K_SUBARRAY: t = gen_subarray(r, c); break;
    case K_DARRAY: t = gen_darray(r, c); break;
    default: t = gen_resized(r, c); break;
    }
    if (t)
        t->owned = 1;
    tm_free(c);
    return t;
}

tmodel *tm_generate(rng_t *r, MPI_Datatype basic, int depth, int allow_mixed)
{
    for (int tries = 0; tries < 30; tries++) {
        tmodel *t = gen(r, basic, depth, allow_mixed);
        if (!t)
            continue;
        if (too_big(t) || t->size == 0 || tm_extent(t) <= 0 || tm_overlaps(t, 1)) {
            tm_free(t);
            continue;
        }
        CHK(MPI_Type_commit(&t->dt));
        return t;
    }
    return tm_basic(basic);
}

/* ---- geometry ------------------------------------------------------------ */
void tm_span(const tmodel *t, MPI_Aint count, MPI_Aint *lo, MPI_Aint *hi)
{
    if (count <= 0) {
        *lo = *hi = 0;
        return;
    }
    MPI_Aint ext = tm_extent(t), last = (count - 1) * ext;
    *lo = t->tlb + (last < 0 ? last : 0);
    *hi = t->tub + (last > 0 ? last : 0);
}

static int tm_overlaps_impl(const tmodel *t, MPI_Aint count)
{
    MPI_Aint lo, hi;
    tm_span(t, count, &lo, &hi);
    if (hi - lo > (MPI_Aint)64 << 20)
        return 1;
    size_t n = (size_t)(hi - lo);
    unsigned char *bits = calloc(n / 8 + 1, 1);
    int over = 0;
    for (MPI_Aint e = 0; e < count && !over; e++)
        for (size_t s = 0; s < t->nsegs && !over; s++) {
            MPI_Aint o = e * tm_extent(t) + t->segs[s].off - lo;
            for (MPI_Aint k = 0; k < t->segs[s].len; k++) {
                size_t p = (size_t)(o + k);
                if (bits[p / 8] & (1u << (p % 8))) {
                    over = 1;
                    break;
                }
                bits[p / 8] |= (unsigned char)(1u << (p % 8));
            }
        }
    free(bits);
    return over;
}

int tm_overlaps(const tmodel *t, MPI_Aint count)
{
    local_enter();
    int r_ = tm_overlaps_impl(t, count);
    local_leave();
    return r_;
}

/* ---- buffers ------------------------------------------------------------- */
static void buf_span_impl(buf_t *b, MPI_Aint lo, MPI_Aint hi)
{
    b->len = (size_t)(hi - lo) + 2 * GUARD + 16;
    b->alloc = malloc(b->len);
    if (!b->alloc) {
        fprintf(stderr, "conform: out of memory (%zu bytes)\n", b->len);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* base - lo must be at least GUARD into the allocation, and base
     * aligned to 16. */
    uintptr_t want = (uintptr_t)b->alloc + GUARD - (uintptr_t)lo;
    want = (want + 15) & ~(uintptr_t)15;
    b->base = (unsigned char *)want;
    memset(b->alloc, SENTINEL, b->len);
}

void buf_span(buf_t *b, MPI_Aint lo, MPI_Aint hi)
{
    local_enter();
    buf_span_impl(b, lo, hi);
    local_leave();
}

void buf_for(buf_t *b, const tmodel *t, MPI_Aint count)
{
    MPI_Aint lo, hi;
    tm_span(t, count, &lo, &hi);
    buf_span(b, lo, hi);
}

void buf_free(buf_t *b)
{
    free(b->alloc);
    b->alloc = b->base = NULL;
    b->len = 0;
}

static void buf_clone_impl(buf_t *dst, const buf_t *src)
{
    if (src->alloc == NULL) { /* a buffer never spanned: nothing to copy */
        dst->alloc = dst->base = NULL;
        dst->len = 0;
        return;
    }
    dst->len = src->len;
    dst->alloc = malloc(src->len ? src->len : 1);
    if (!dst->alloc) {
        fprintf(stderr, "conform: out of memory (%zu bytes)\n", src->len);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memcpy(dst->alloc, src->alloc, src->len);
    dst->base = dst->alloc + (src->base - src->alloc);
}

void buf_clone(buf_t *dst, const buf_t *src)
{
    local_enter();
    buf_clone_impl(dst, src);
    local_leave();
}

static void buf_reset_impl(buf_t *b)
{
    if (b->alloc != NULL)
        memset(b->alloc, SENTINEL, b->len);
}

void buf_reset(buf_t *b)
{
    local_enter();
    buf_reset_impl(b);
    local_leave();
}

static inline unsigned char pat(uint64_t key, uint64_t j)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ULL + (j >> 3) * 0xC2B2AE3D27D4EB4FULL;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    return (unsigned char)(x >> ((j & 7) * 8));
}

static void put_stream_impl(unsigned char *base, const tmodel *t, MPI_Aint first, MPI_Aint nbytes,
                            uint64_t key)
{
    uint64_t j = 0;
    MPI_Aint ext = tm_extent(t);
    for (MPI_Aint e = first; nbytes > 0; e++)
        for (size_t s = 0; s < t->nsegs && nbytes > 0; s++) {
            unsigned char *p = base + e * ext + t->segs[s].off;
            MPI_Aint n = t->segs[s].len < nbytes ? t->segs[s].len : nbytes;
            for (MPI_Aint k = 0; k < n; k++)
                p[k] = pat(key, j++);
            nbytes -= n;
        }
}

void put_stream(unsigned char *base, const tmodel *t, MPI_Aint first, MPI_Aint nbytes,
                uint64_t key)
{
    local_enter();
    put_stream_impl(base, t, first, nbytes, key);
    local_leave();
}

static int buf_check_impl(const buf_t *actual, const buf_t *ref, const char *what)
{
    if (actual->len == ref->len &&
        (actual->len == 0 || memcmp(actual->alloc, ref->alloc, actual->len) == 0))
        return 0;
    size_t first = (size_t)-1, ndiff = 0, last = 0;
    for (size_t i = 0; i < actual->len; i++)
        if (actual->alloc[i] != ref->alloc[i]) {
            if (first == (size_t)-1)
                first = i;
            last = i;
            ndiff++;
        }
    long off = (long)((ptrdiff_t)first - (actual->base - actual->alloc));
    const char *where = first < GUARD || first >= actual->len - GUARD ? " (outside the buffer: guard)"
                        : ref->alloc[first] == SENTINEL ? " (expected untouched sentinel: a gap?)"
                                                        : "";
    fail("%s: %zu byte(s) differ, first at offset %ld from the buffer start%s: expected 0x%02x, "
         "got 0x%02x; last at offset %ld",
         what, ndiff, off, where, ref->alloc[first], actual->alloc[first],
         (long)((ptrdiff_t)last - (actual->base - actual->alloc)));
    return 1;
}

int buf_check(const buf_t *actual, const buf_t *ref, const char *what)
{
    local_enter();
    int r_ = buf_check_impl(actual, ref, what);
    local_leave();
    return r_;
}

MPI_Aint draw_bytes(rng_t *r, MPI_Aint cap)
{
    int c = rng_range(r, 0, 99);
    MPI_Aint b;
    if (c < 8)
        b = 0;
    else if (c < 50)
        b = rng_range(r, 1, 256);
    else if (c < 75)
        b = rng_range(r, 257, 8192);
    else if (c < 90)
        b = rng_range(r, 8193, 256 * 1024);
    else
        b = rng_range(r, 256 * 1024, 4 * 1024 * 1024);
    return b < cap ? b : cap;
}

MPI_Aint check_stream_zero(unsigned char *base, const tmodel *t, MPI_Aint nbytes, uint64_t key)
{
    uint64_t j = 0;
    MPI_Aint ext = tm_extent(t), bad = -1;
    local_enter();
    for (MPI_Aint e = 0; nbytes > 0; e++)
        for (size_t s = 0; s < t->nsegs && nbytes > 0; s++) {
            unsigned char *p = base + e * ext + t->segs[s].off;
            MPI_Aint n = t->segs[s].len < nbytes ? t->segs[s].len : nbytes;
            for (MPI_Aint k = 0; k < n; k++, j++) {
                if (p[k] != pat(key, j) && bad < 0)
                    bad = (MPI_Aint)j;
                p[k] = 0;
            }
            nbytes -= n;
        }
    local_leave();
    return bad;
}

tmodel *tm_custom(MPI_Datatype dt, const seg_t *segs, size_t nsegs, MPI_Aint lb, MPI_Aint ub,
                  MPI_Datatype basic, const char *desc)
{
    tmodel *t = tm_new();
    int first = 1;
    for (size_t i = 0; i < nsegs; i++) {
        seg_push(t, segs[i].off, segs[i].len, segs[i].esz);
        t->size += segs[i].len;
        t->nelem += segs[i].len / segs[i].esz;
        if (first || segs[i].off < t->tlb)
            t->tlb = segs[i].off;
        if (first || segs[i].off + segs[i].len > t->tub)
            t->tub = segs[i].off + segs[i].len;
        if (segs[i].esz > t->bsize)
            t->bsize = segs[i].esz;
        first = 0;
    }
    t->lb = lb;
    t->ub = ub;
    t->marked = 1;
    t->basic = basic;
    t->dt = dt;
    t->owned = 1;
    t->desc = xstrdup_printf("%s", desc);
    CHK(MPI_Type_commit(&t->dt));
    return t;
}
