/* Conformance generator: collectives, blocking, nonblocking and persistent,
 * on intra- and intercommunicators.
 *
 * A collective is set up once (cop_new: kind, root, in-place, types,
 * counts, displacements, buffers), then run for one or more iterations:
 * cop_fill writes the inputs of iteration `it`, cop_start makes the call (or
 * starts it), cop_verify compares every buffer with a reference built from
 * block lists: data blocks (streams in some type's layout) and reduction
 * blocks (values folded in rank order). */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_BCAST, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLGATHER, C_ALLGATHERV,
       C_ALLTOALL, C_ALLTOALLV, C_ALLTOALLW, C_REDUCE, C_ALLREDUCE, C_REDUCE_SCATTER,
       C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN, C_BARRIER, C_NKINDS };
static const char *kind_name[] = { "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
                                   "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce",
                                   "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
                                   "exscan", "barrier" };
static const char *form_name[] = { "blocking", "nonblocking", "persistent" };

/* ---- reduction types and operations -------------------------------------- */
enum { T_INT, T_LL, T_UNS, T_SHORT, T_DOUBLE, T_FLOAT, T_2INT, T_AFFINE, T_NTYPES };
static const char *rtype_name[] = { "int", "long long", "unsigned", "short", "double", "float",
                                    "2int", "affine(2 unsigned)" };
static const int rtype_size[] = { 4, 8, 4, 2, 8, 4, 8, 8 };
enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, O_MAXLOC,
       O_MINLOC, O_USER_AFFINE, O_USER_SUM, O_NOPS };
static const char *op_name[] = { "sum", "prod", "max", "min", "band", "bor", "bxor", "land", "lor",
                                 "lxor", "maxloc", "minloc", "user affine (non-commutative)",
                                 "user sum (commutative)" };

static MPI_Datatype g_affine_type = MPI_DATATYPE_NULL;
static MPI_Op g_affine_op = MPI_OP_NULL, g_usum_op = MPI_OP_NULL;

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++) {
        unsigned a1 = a[2 * i], b1 = a[2 * i + 1], a2 = b[2 * i], b2 = b[2 * i + 1];
        b[2 * i] = a1 * a2;
        b[2 * i + 1] = a1 * b2 + b1;
    }
}

static void usum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (int)((unsigned)a[i] + (unsigned)b[i]);
}

void coll_global_init(void)
{
    CHK(MPI_Type_contiguous(2, MPI_UNSIGNED, &g_affine_type));
    CHK(MPI_Type_commit(&g_affine_type));
    CHK(MPI_Op_create(affine_fn, 0, &g_affine_op));
    CHK(MPI_Op_create(usum_fn, 1, &g_usum_op));
}

void coll_global_fini(void)
{
    MPI_Op_free(&g_affine_op);
    MPI_Op_free(&g_usum_op);
    MPI_Type_free(&g_affine_type);
}

static MPI_Datatype rtype_dt(int t)
{
    switch (t) {
    case T_INT: return MPI_INT;
    case T_LL: return MPI_LONG_LONG;
    case T_UNS: return MPI_UNSIGNED;
    case T_SHORT: return MPI_SHORT;
    case T_DOUBLE: return MPI_DOUBLE;
    case T_FLOAT: return MPI_FLOAT;
    case T_2INT: return MPI_2INT;
    default: return g_affine_type;
    }
}

static MPI_Op op_handle(int o)
{
    switch (o) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    case O_BXOR: return MPI_BXOR;
    case O_LAND: return MPI_LAND;
    case O_LOR: return MPI_LOR;
    case O_LXOR: return MPI_LXOR;
    case O_MAXLOC: return MPI_MAXLOC;
    case O_MINLOC: return MPI_MINLOC;
    case O_USER_AFFINE: return g_affine_op;
    default: return g_usum_op;
    }
}

typedef struct { int64_t a, b; double d; } val_t;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static int is_float(int t) { return t == T_DOUBLE || t == T_FLOAT; }

/* The input of (group, rank) at vector index i in iteration it. */
static val_t gen_val(int op, int t, uint64_t key, int group, int rank, MPI_Aint i, int it)
{
    uint64_t h = mix(key ^ mix(((uint64_t)group << 40) ^ ((uint64_t)rank << 20) ^ (uint64_t)it) ^
                     ((uint64_t)i * 0x9E3779B97F4A7C15ULL));
    val_t v = { 0, 0, 0 };
    switch (op) {
    case O_SUM:
    case O_USER_SUM:
        v.a = t == T_UNS ? (int64_t)(h % 41) : (int64_t)(h % 41) - 20;
        break;
    case O_PROD: {
        static const int64_t s[] = { 1, -1, 2, 1 }, u[] = { 1, 2, 3, 1 };
        v.a = t == T_SHORT ? ((h & 1) ? 1 : -1) : t == T_UNS ? u[h % 4] : s[h % 4];
        break;
    }
    case O_MAX:
    case O_MIN:
        v.a = t == T_UNS ? (int64_t)(h % 2001) : (int64_t)(h % 2001) - 1000;
        break;
    case O_BAND: case O_BOR: case O_BXOR:
        v.a = t == T_SHORT ? (int16_t)(h >> 7) : t == T_LL ? (int64_t)(h >> 2) : (int64_t)(int32_t)(h >> 9);
        if (t == T_UNS)
            v.a = (int64_t)(uint32_t)(h >> 9);
        break;
    case O_LAND: case O_LOR: case O_LXOR: {
        static const int64_t s[] = { 0, 1, 7 };
        v.a = s[h % 3];
        break;
    }
    case O_MAXLOC:
    case O_MINLOC:
        v.a = (int64_t)(h % 11) - 5;
        v.b = (int64_t)rank * 3 + 1;
        break;
    default: /* affine */
        v.a = (int64_t)(uint32_t)h;
        v.b = (int64_t)(uint32_t)(h >> 32);
        break;
    }
    v.d = (double)v.a;
    return v;
}

/* acc = acc op x (acc from lower ranks). */
static val_t fold(int op, int t, val_t acc, val_t x)
{
    val_t r = acc;
    switch (op) {
    case O_SUM: case O_USER_SUM: r.a = acc.a + x.a; r.d = acc.d + x.d; break;
    case O_PROD: r.a = acc.a * x.a; r.d = acc.d * x.d; break;
    case O_MAX: r.a = x.a > acc.a ? x.a : acc.a; r.d = x.d > acc.d ? x.d : acc.d; break;
    case O_MIN: r.a = x.a < acc.a ? x.a : acc.a; r.d = x.d < acc.d ? x.d : acc.d; break;
    case O_BAND: r.a = acc.a & x.a; break;
    case O_BOR: r.a = acc.a | x.a; break;
    case O_BXOR: r.a = acc.a ^ x.a; break;
    case O_LAND: r.a = (acc.a != 0) && (x.a != 0); break;
    case O_LOR: r.a = (acc.a != 0) || (x.a != 0); break;
    case O_LXOR: r.a = (acc.a != 0) != (x.a != 0); break;
    case O_MAXLOC:
        if (x.a > acc.a || (x.a == acc.a && x.b < acc.b)) { r.a = x.a; r.b = x.b; }
        break;
    case O_MINLOC:
        if (x.a < acc.a || (x.a == acc.a && x.b < acc.b)) { r.a = x.a; r.b = x.b; }
        break;
    default: { /* (a1,b1) o (a2,b2) = (a1 a2, a1 b2 + b1), mod 2^32 */
        uint32_t a1 = (uint32_t)acc.a, b1 = (uint32_t)acc.b, a2 = (uint32_t)x.a, b2 = (uint32_t)x.b;
        r.a = (uint32_t)(a1 * a2);
        r.b = (uint32_t)(a1 * b2 + b1);
        break;
    }
    }
    (void)t;
    return r;
}

static void store(int t, unsigned char *p, val_t v)
{
    switch (t) {
    case T_INT: { int x = (int)v.a; memcpy(p, &x, 4); break; }
    case T_LL: { long long x = v.a; memcpy(p, &x, 8); break; }
    case T_UNS: { unsigned x = (unsigned)v.a; memcpy(p, &x, 4); break; }
    case T_SHORT: { short x = (short)v.a; memcpy(p, &x, 2); break; }
    case T_DOUBLE: memcpy(p, &v.d, 8); break;
    case T_FLOAT: { float x = (float)v.d; memcpy(p, &x, 4); break; }
    default: { int x[2] = { (int)v.a, (int)v.b }; memcpy(p, x, 8); break; }
    }
}

/* ---- block lists --------------------------------------------------------- */
typedef struct {
    const tmodel *t;          /* data block: stream in t's layout */
    MPI_Aint first;           /* element index in t (data) or in the vector (reduction) */
    MPI_Aint bdisp;           /* byte displacement of element 0 from the buffer base */
    MPI_Aint nbytes;          /* data: bytes; reduction: number of values */
    uint64_t key;
    /* reduction block: values of ranks [r0, r1) of group `group`, vector
     * index gofs + k, folded */
    int red, group, r0, r1;
    MPI_Aint gofs;
} blk_t;

typedef struct {
    blk_t *v;
    int n, cap;
} blist_t;

static void bl_add(blist_t *l, blk_t b)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = b;
}

struct cop {
    int kind, form, iters, inplace, root, rootgroup, role, small;
    ccomm_t c;
    rng_t r;
    /* data collectives */
    tmodel *ts, *tr, *tb;     /* send, receive, basic (tb may be NULL if mixed) */
    MPI_Aint unit_s, unit_r, unit_b, bsz;
    MPI_Aint cs, cr;
    int *scounts, *rcounts, *sdispls, *rdispls;
    MPI_Datatype *stypes, *rtypes;
    /* reductions */
    int rt, op;
    MPI_Aint rn;              /* values in the send vector / rc for scatter forms */
    int rc_me;
    uint64_t key;
    buf_t sb, rb, sref, rref;
    blist_t sblk, pblk, eblk, dontcare;
    MPI_Request req;
    int inited;
    double t_enter;
    double t_call;            /* when the MPI call of the last cop_start began */
    int sleeper;
    char d[1024];
};

/* role for rooted collectives across an intercommunicator */
enum { R_NONE, R_ROOT, R_OTHER };

static uint64_t dkey(const cop_t *o, int sgroup, int src, int dst)
{
    return mix(o->key ^ ((uint64_t)sgroup << 50) ^ ((uint64_t)src << 25) ^ (uint64_t)dst);
}

/* ---- layouts -------------------------------------------------------------- */
static MPI_Aint floor_div(MPI_Aint a, MPI_Aint b)
{
    MPI_Aint q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Element displacements for n blocks of counts[i] elements of t, not
 * overlapping, in a random order with random gaps.  Returns the span. */
static void layout_elems(rng_t *r, const tmodel *t, int n, const int *counts, int *displs,
                         MPI_Aint *lo, MPI_Aint *hi)
{
    int *order = malloc((size_t)n * sizeof *order);
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (rng_chance(r, 60))
        rng_shuffle(r, order, n);
    MPI_Aint ext = tm_extent(t), cursor = 0;
    int any = 0;
    *lo = *hi = 0;
    if (n == 1 && g_quirk_mpich40) {
        displs[0] = 0;      /* MPICH 4.0 ignores displs on one rank */
        tm_span(t, counts[0], lo, hi);
        free(order);
        return;
    }
    for (int k = 0; k < n; k++) {
        int i = order[k];
        MPI_Aint l, h;
        tm_span(t, counts[i], &l, &h);
        if (counts[i] == 0) {
            displs[i] = (int)floor_div(cursor, ext) + rng_range(r, 0, 2);
            continue;
        }
        MPI_Aint d = -floor_div(-(cursor - l), ext) + (rng_chance(r, 50) ? 0 : rng_range(r, 1, 2));
        displs[i] = (int)d;
        MPI_Aint blo = d * ext + l, bhi = d * ext + h;
        if (!any || blo < *lo) *lo = blo;
        if (!any || bhi > *hi) *hi = bhi;
        any = 1;
        cursor = bhi;
    }
    free(order);
}

/* Byte displacements for blocks of differing types (alltoallw). */
static void layout_bytes(rng_t *r, int n, tmodel *const *t, const int *counts, int *displs,
                         MPI_Aint *lo, MPI_Aint *hi)
{
    int *order = malloc((size_t)n * sizeof *order);
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (rng_chance(r, 60))
        rng_shuffle(r, order, n);
    MPI_Aint cursor = 0;
    int any = 0;
    *lo = *hi = 0;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        MPI_Aint l, h;
        tm_span(t[i], counts[i], &l, &h);
        if (counts[i] == 0) {
            displs[i] = (int)cursor;
            continue;
        }
        MPI_Aint d = cursor - l;
        d = (d + 15) & ~(MPI_Aint)15;
        d += 16 * rng_range(r, 0, 1);
        displs[i] = (int)d;
        if (!any || d + l < *lo) *lo = d + l;
        if (!any || d + h > *hi) *hi = d + h;
        any = 1;
        cursor = d + h;
    }
    free(order);
}

/* ---- setup ---------------------------------------------------------------- */
static MPI_Aint gcd(MPI_Aint a, MPI_Aint b)
{
    while (b) {
        MPI_Aint t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The send and receive types of a data collective and the units in which
 * counts are drawn: unit_s elements of ts carry the same type signature as
 * unit_r of tr and unit_b of the basic type. */
static void pick_types(cop_t *o, rng_t *r)
{
    MPI_Datatype b = random_basic(r);
    o->ts = rng_chance(r, 25) ? tm_basic(b) : tm_generate(r, b, rng_range(r, 1, 2), rng_chance(r, 10));
    int mixed = o->ts->basic == MPI_DATATYPE_NULL;
    int choice = mixed ? 0 : rng_range(r, 0, 3);
    if (choice <= 1)
        o->tr = NULL;         /* the same as ts */
    else if (choice == 2)
        o->tr = tm_basic(b);
    else
        o->tr = tm_generate(r, b, rng_range(r, 1, 2), 0);
    o->tb = mixed ? NULL : tm_basic(b);
}

static const tmodel *TR(const cop_t *o) { return o->tr ? o->tr : o->ts; }

static void units(cop_t *o)
{
    MPI_Aint a = o->ts->nelem, b = TR(o)->nelem;
    MPI_Aint l = a / gcd(a, b) * b;
    o->unit_s = l / a;
    o->unit_r = l / b;
    o->unit_b = l;
    o->bsz = o->unit_s * o->ts->size;   /* bytes per unit */
}

/* Units per block: from a byte budget. */
static int draw_units(cop_t *o, rng_t *r, MPI_Aint cap)
{
    MPI_Aint bytes = draw_bytes(r, cap);
    return (int)(bytes / o->bsz);
}

static int types_overlap(const cop_t *o, MPI_Aint maxs, MPI_Aint maxr)
{
    return tm_overlaps(o->ts, maxs) || tm_overlaps(TR(o), maxr);
}

/* Falls back to the basic type when counts would make a layout overlap
 * itself (resized types with small extents interleave only so far). */
static void fix_overlap(cop_t *o, MPI_Aint maxunits_s, MPI_Aint maxunits_r)
{
    if (!types_overlap(o, maxunits_s * o->unit_s, maxunits_r * o->unit_r))
        return;
    if (o->tr) {
        tm_free(o->tr);
        o->tr = NULL;
    }
    if (o->tb) {
        tm_free(o->ts);
        o->ts = tm_basic(o->tb->basic);
    } else {
        tm_free(o->ts);
        o->ts = tm_basic(MPI_INT);
        o->tb = tm_basic(MPI_INT);
    }
    units(o);
}

static int group_size(const cop_t *o, int g)
{
    if (!o->c.inter)
        return o->c.size;
    return g == o->c.group ? o->c.size : o->c.rsize;
}

static void data_block(blist_t *l, const tmodel *t, MPI_Aint first, MPI_Aint bdisp, MPI_Aint nbytes, uint64_t key)
{
    blk_t b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.first = first;
    b.bdisp = bdisp;
    b.nbytes = nbytes;
    b.key = key;
    bl_add(l, b);
}

static void red_block(blist_t *l, MPI_Aint first, MPI_Aint n, int group, int r0, int r1, MPI_Aint gofs)
{
    blk_t b;
    memset(&b, 0, sizeof b);
    b.red = 1;
    b.first = first;
    b.nbytes = n;
    b.group = group;
    b.r0 = r0;
    b.r1 = r1;
    b.gofs = gofs;
    bl_add(l, b);
}

static int *ialloc(int n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(int));
}

/* Rooted: intra root, or (inter) root group and root's local rank there. */
static void pick_root(cop_t *o, rng_t *r)
{
    if (!o->c.inter) {
        o->root = rng_range(r, 0, o->c.size - 1);
        o->role = o->c.rank == o->root ? R_ROOT : R_OTHER;
        return;
    }
    o->rootgroup = rng_range(r, 0, 1);
    o->root = rng_range(r, 0, group_size(o, o->rootgroup) - 1);
    if (o->c.group == o->rootgroup)
        o->role = o->c.rank == o->root ? R_ROOT : R_NONE;
    else
        o->role = R_OTHER;
}

/* The root argument this rank passes. */
static int root_arg(const cop_t *o)
{
    if (!o->c.inter)
        return o->root;
    if (o->role == R_ROOT) return MPI_ROOT;
    if (o->role == R_NONE) return MPI_PROC_NULL;
    return o->root;
}

static void setup_data(cop_t *o, rng_t *r)
{
    ccomm_t *c = &o->c;
    int n = c->size, me = c->rank, inter = c->inter;
    int g = c->group, og = 1 - g;
    int nr = inter ? c->rsize : n;      /* ranks on the other side */
    MPI_Aint cap = o->small ? 8192 : (n + nr > 8 ? 256 * 1024 : 1024 * 1024);
    pick_types(o, r);
    units(o);
    int mgrp = inter ? g : 0;           /* my group id in keys */
    /* Displacements are each rank's own business: drawn from its own
     * sequence (their draws depend on its counts). */
    rng_t lr = rng_derive(rng_next(r), 0x20000u + (uint64_t)g_rank);
    int ogrp = inter ? og : 0;
    MPI_Aint lo, hi;
    switch (o->kind) {
    case C_BCAST: {
        pick_root(o, r);
        int k = draw_units(o, r, o->small ? 8192 : 4 << 20);
        fix_overlap(o, k, k);
        o->cs = k * o->unit_s;
        o->cr = k * o->unit_r;
        uint64_t key = dkey(o, inter ? o->rootgroup : 0, o->root, 0);
        if (o->role == R_ROOT) {
            buf_for(&o->rb, o->ts, o->cs);
            data_block(&o->pblk, o->ts, 0, 0, k * o->bsz, key);
            data_block(&o->eblk, o->ts, 0, 0, k * o->bsz, key);
        } else if (o->role == R_OTHER) {
            buf_for(&o->rb, TR(o), o->cr);
            data_block(&o->eblk, TR(o), 0, 0, k * o->bsz, key);
        } else {
            buf_span(&o->rb, 0, 0);
        }
        snprintf(o->d, sizeof o->d, "root %s%d, %d units", inter ? (o->rootgroup ? "g1:" : "g0:") : "",
                 o->root, k);
        break;
    }
    case C_GATHER: case C_GATHERV: case C_SCATTER: case C_SCATTERV: {
        int gat = o->kind == C_GATHER || o->kind == C_GATHERV;
        int v = o->kind == C_GATHERV || o->kind == C_SCATTERV;
        pick_root(o, r);
        o->inplace = !inter && rng_chance(r, 30);
        /* units per contributing rank (the non-root side's ranks) */
        int np = inter ? group_size(o, 1 - o->rootgroup) : n;
        int *k = ialloc(np), kmax = 0, k0 = draw_units(o, r, cap);
        for (int i = 0; i < np; i++) {
            k[i] = v ? draw_units(o, r, cap) : k0;
            if (k[i] > kmax) kmax = k[i];
        }
        fix_overlap(o, gat ? kmax : (MPI_Aint)kmax * np, gat ? (MPI_Aint)kmax * np : kmax);
        const tmodel *big = gat ? TR(o) : o->ts;     /* the root's type */
        MPI_Aint ubig = gat ? o->unit_r : o->unit_s;
        const tmodel *small = gat ? o->ts : TR(o);
        MPI_Aint usmall = gat ? o->unit_s : o->unit_r;
        int *counts = gat ? (o->rcounts = ialloc(np)) : (o->scounts = ialloc(np));
        int *displs = gat ? (o->rdispls = ialloc(np)) : (o->sdispls = ialloc(np));
        for (int i = 0; i < np; i++) {
            counts[i] = (int)(k[i] * ubig);
            displs[i] = (int)(i * k0 * ubig);
        }
        int rootside_group = inter ? o->rootgroup : 0;
        int other_group = inter ? 1 - o->rootgroup : 0;
        if (o->role == R_ROOT) {
            if (v)
                layout_elems(&lr, big, np, counts, displs, &lo, &hi);
            else
                tm_span(big, (MPI_Aint)k0 * ubig * np, &lo, &hi);
            buf_t *bb = gat ? &o->rb : &o->sb;
            buf_span(bb, lo, hi);
            for (int i = 0; i < np; i++) {
                uint64_t key = gat ? dkey(o, other_group, i, 0) : dkey(o, rootside_group, o->root, i);
                if (!inter && i == me && o->inplace) {
                    /* in place: the root's own block stays where it is */
                    data_block(gat ? &o->pblk : &o->sblk, big, displs[i], 0, k[i] * o->bsz, key);
                    if (gat)
                        data_block(&o->eblk, big, displs[i], 0, k[i] * o->bsz, key);
                    continue;
                }
                data_block(gat ? &o->eblk : &o->sblk, big, displs[i], 0, k[i] * o->bsz, key);
            }
            if (gat && !o->inplace && !inter) {
                buf_for(&o->sb, small, k[me] * usmall);
                data_block(&o->sblk, small, 0, 0, k[me] * o->bsz, dkey(o, 0, me, 0));
            }
            if (!gat && !o->inplace && !inter) {
                buf_for(&o->rb, small, k[me] * usmall);
                data_block(&o->eblk, small, 0, 0, k[me] * o->bsz, dkey(o, 0, me, me));
            }
            if (inter) {
                if (gat) buf_span(&o->sb, 0, 0);
                else buf_span(&o->rb, 0, 0);
            }
            if (gat && o->inplace)
                buf_span(&o->sb, 0, 0);
            if (!gat && o->inplace)
                buf_span(&o->rb, 0, 0);
        } else if (o->role == R_OTHER) {
            buf_t *sm = gat ? &o->sb : &o->rb;
            buf_for(sm, small, k[me] * usmall);
            if (gat)
                data_block(&o->sblk, small, 0, 0, k[me] * o->bsz, dkey(o, other_group, me, 0));
            else
                data_block(&o->eblk, small, 0, 0, k[me] * o->bsz, dkey(o, rootside_group, o->root, me));
            buf_span(gat ? &o->rb : &o->sb, 0, 0);
        } else {
            buf_span(&o->sb, 0, 0);
            buf_span(&o->rb, 0, 0);
        }
        o->cs = gat ? (o->role == R_NONE ? 0 : k[o->role == R_OTHER || !inter ? me : 0] * usmall)
                    : k0 * ubig;
        o->cr = gat ? k0 * ubig : (o->role == R_NONE ? 0 : k[o->role == R_OTHER || !inter ? me : 0] * usmall);
        if (gat && o->role == R_ROOT && inter) o->cs = 0;
        if (!gat && o->role == R_ROOT && inter) o->cr = 0;
        snprintf(o->d, sizeof o->d, "root %s%d%s, units %d%s", inter ? (o->rootgroup ? "g1:" : "g0:") : "",
                 o->root, o->inplace ? ", in place" : "", k0, v ? " (varying)" : "");
        free(k);
        break;
    }
    case C_ALLGATHER: case C_ALLGATHERV: {
        int v = o->kind == C_ALLGATHERV;
        o->inplace = !inter && rng_chance(r, 30);
        /* units of every rank of both groups */
        int n0 = group_size(o, 0), n1 = inter ? group_size(o, 1) : 0;
        int *k[2] = { ialloc(n0), ialloc(n1) }, kmax = 0, k0 = draw_units(o, r, cap);
        for (int gg = 0; gg < (inter ? 2 : 1); gg++)
            for (int i = 0; i < (gg ? n1 : n0); i++) {
                k[gg][i] = v ? draw_units(o, r, cap) : k0;
                if (k[gg][i] > kmax) kmax = k[gg][i];
            }
        fix_overlap(o, kmax, (MPI_Aint)kmax * (n0 + n1));
        int *kin = k[inter ? og : 0], *kme = k[inter ? g : 0];
        o->rcounts = ialloc(nr);
        o->rdispls = ialloc(nr);
        for (int i = 0; i < nr; i++) {
            o->rcounts[i] = (int)(kin[i] * o->unit_r);
            o->rdispls[i] = (int)(i * k0 * o->unit_r);
        }
        if (v)
            layout_elems(&lr, TR(o), nr, o->rcounts, o->rdispls, &lo, &hi);
        else
            tm_span(TR(o), (MPI_Aint)k0 * o->unit_r * nr, &lo, &hi);
        buf_span(&o->rb, lo, hi);
        for (int i = 0; i < nr; i++) {
            uint64_t key = dkey(o, ogrp, i, 0);
            if (!inter && i == me && o->inplace)
                data_block(&o->pblk, TR(o), o->rdispls[i], 0, kin[i] * o->bsz, key);
            data_block(&o->eblk, TR(o), o->rdispls[i], 0, kin[i] * o->bsz, key);
        }
        if (o->inplace) {
            buf_span(&o->sb, 0, 0);
        } else {
            buf_for(&o->sb, o->ts, kme[me] * o->unit_s);
            data_block(&o->sblk, o->ts, 0, 0, kme[me] * o->bsz, dkey(o, mgrp, me, 0));
        }
        o->cs = kme[me] * o->unit_s;
        o->cr = k0 * o->unit_r;
        snprintf(o->d, sizeof o->d, "units %d%s%s", k0, v ? " (varying)" : "", o->inplace ? ", in place" : "");
        free(k[0]);
        free(k[1]);
        break;
    }
    case C_ALLTOALL: case C_ALLTOALLV: case C_ALLTOALLW: {
        int v = o->kind != C_ALLTOALL, w = o->kind == C_ALLTOALLW;
        o->inplace = !inter && rng_chance(r, 25);
        if (g_quirk_ompi4 && o->form != FORM_BLOCKING)
            o->inplace = 0;   /* Open MPI 4's libnbc hangs on in-place alltoall(v,w) */
        /* K[src group][src][dst]: units from src to dst */
        int n0 = group_size(o, 0), n1 = inter ? group_size(o, 1) : n0;
        MPI_Aint bcap = o->small ? 4096 : (n + nr > 6 ? 64 * 1024 : 512 * 1024);
        int k0 = draw_units(o, r, bcap), kmax = 0;
        int *K[2];
        K[0] = ialloc(n0 * n1);
        K[1] = ialloc(n0 * n1);
        for (int gg = 0; gg < (inter ? 2 : 1); gg++) {
            int ns = gg ? n1 : n0, nd = inter ? (gg ? n0 : n1) : n0;
            for (int i = 0; i < ns; i++)
                for (int j = 0; j < nd; j++) {
                    int x = v ? draw_units(o, r, bcap) : k0;
                    if (o->inplace && j < i)
                        x = K[gg][j * nd + i];       /* in place needs symmetric counts */
                    K[gg][i * nd + j] = x;
                    if (x > kmax) kmax = x;
                }
        }
        fix_overlap(o, (MPI_Aint)kmax * nr, (MPI_Aint)kmax * nr);
        int ndme = nr, nsme = nr;
        int *Kout = K[inter ? g : 0], *Kin = K[inter ? og : 0];
        /* my sends: Kout[me][j]; my receives: Kin[i][me] (row stride = that group's dest count) */
        int out_stride = nr, in_stride = inter ? n : n0;
        o->scounts = ialloc(nr);
        o->rcounts = ialloc(nr);
        o->sdispls = ialloc(nr);
        o->rdispls = ialloc(nr);
        tmodel **stm = calloc((size_t)nr, sizeof *stm), **rtm = calloc((size_t)nr, sizeof *rtm);
        /* type palette for alltoallw: per (sender, receiver) pair */
        tmodel *pal[3] = { o->ts, (tmodel *)TR(o), o->tb };
        MPI_Aint upal[3] = { o->unit_s, o->unit_r, o->unit_b };
        int npal = o->tb ? 3 : 1;
        if (!o->tb) { pal[1] = o->ts; upal[1] = o->unit_s; }
        if (w) {
            o->stypes = calloc((size_t)nr, sizeof *o->stypes);
            o->rtypes = calloc((size_t)nr, sizeof *o->rtypes);
        }
        /* palette choices drawn for every pair so all ranks agree */
        int ntot = (inter ? n0 + n1 : n0);
        int *ps = ialloc(ntot * ntot), *pr = ialloc(ntot * ntot);
        for (int i = 0; i < ntot * ntot; i++) {
            ps[i] = w ? rng_range(r, 0, npal - 1) : 0;
            pr[i] = w ? rng_range(r, 0, npal - 1) : 1;
        }
        /* global ids for pairs: group 0 ranks first */
        int myid = (inter && g == 1 ? n0 : 0) + me;
        int obase = inter ? (og == 1 ? n0 : 0) : 0;
        for (int j = 0; j < nr; j++) {
            int peer = obase + j;
            int sp = w ? ps[myid * ntot + peer] : 0;
            int rp = w ? pr[peer * ntot + myid] : 1;
            if (o->inplace)
                sp = rp;   /* in place sends from the receive layout */
            stm[j] = pal[sp];
            rtm[j] = pal[rp];
            o->scounts[j] = (int)(Kout[me * out_stride + j] * upal[sp]);
            o->rcounts[j] = (int)(Kin[j * in_stride + me] * upal[rp]);
            o->sdispls[j] = (int)(j * k0 * o->unit_s);
            o->rdispls[j] = (int)(j * k0 * o->unit_r);
            if (w) {
                o->stypes[j] = stm[j]->dt;
                o->rtypes[j] = rtm[j]->dt;
            }
        }
        (void)ndme;
        (void)nsme;
        if (w) {
            layout_bytes(&lr, nr, rtm, o->rcounts, o->rdispls, &lo, &hi);
            buf_span(&o->rb, lo, hi);
        } else if (v) {
            layout_elems(&lr, TR(o), nr, o->rcounts, o->rdispls, &lo, &hi);
            buf_span(&o->rb, lo, hi);
        } else {
            buf_for(&o->rb, TR(o), (MPI_Aint)k0 * o->unit_r * nr);
        }
        for (int i = 0; i < nr; i++) {
            const tmodel *t = w ? rtm[i] : TR(o);
            MPI_Aint first = w ? 0 : o->rdispls[i], bd = w ? o->rdispls[i] : 0;
            data_block(&o->eblk, t, first, bd, Kin[i * in_stride + me] * o->bsz, dkey(o, ogrp, i, me));
            if (o->inplace)
                data_block(&o->pblk, t, first, bd, Kout[me * out_stride + i] * o->bsz, dkey(o, mgrp, me, i));
        }
        if (o->inplace) {
            buf_span(&o->sb, 0, 0);
        } else {
            if (w) {
                layout_bytes(&lr, nr, stm, o->scounts, o->sdispls, &lo, &hi);
                buf_span(&o->sb, lo, hi);
            } else if (v) {
                layout_elems(&lr, o->ts, nr, o->scounts, o->sdispls, &lo, &hi);
                buf_span(&o->sb, lo, hi);
            } else {
                buf_for(&o->sb, o->ts, (MPI_Aint)k0 * o->unit_s * nr);
            }
            for (int j = 0; j < nr; j++) {
                const tmodel *t = w ? stm[j] : o->ts;
                MPI_Aint first = w ? 0 : o->sdispls[j], bd = w ? o->sdispls[j] : 0;
                data_block(&o->sblk, t, first, bd, Kout[me * out_stride + j] * o->bsz, dkey(o, mgrp, me, j));
            }
        }
        o->cs = k0 * o->unit_s;
        o->cr = k0 * o->unit_r;
        snprintf(o->d, sizeof o->d, "units %d%s%s", k0, v ? " (varying)" : "", o->inplace ? ", in place" : "");
        free(stm);
        free(rtm);
        free(ps);
        free(pr);
        free(K[0]);
        free(K[1]);
        break;
    }
    }
}

/* Reduction type and op, valid together. */
static void pick_reduction(cop_t *o, rng_t *r)
{
    static const int int_ops[] = { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR };
    static const int flt_ops[] = { O_SUM, O_PROD, O_MAX, O_MIN };
    int x = rng_range(r, 0, 99);
    if (x < 10) {
        o->rt = T_2INT;
        o->op = rng_chance(r, 50) ? O_MAXLOC : O_MINLOC;
    } else if (x < 20) {
        o->rt = T_AFFINE;
        o->op = O_USER_AFFINE;
    } else if (x < 27) {
        o->rt = T_INT;
        o->op = O_USER_SUM;
    } else {
        o->rt = rng_range(r, T_INT, T_FLOAT);
        o->op = is_float(o->rt) ? flt_ops[rng_range(r, 0, 3)] : int_ops[rng_range(r, 0, 9)];
    }
}

static MPI_Aint draw_nvals(cop_t *o, rng_t *r)
{
    MPI_Aint b = draw_bytes(r, o->small ? 4096 : 1 << 20);
    return b / rtype_size[o->rt];
}

static void setup_reduce(cop_t *o, rng_t *r)
{
    ccomm_t *c = &o->c;
    int n = c->size, me = c->rank, inter = c->inter, g = c->group, og = 1 - g;
    int es = 0;
    pick_reduction(o, r);
    es = rtype_size[o->rt];
    int src_group = inter ? og : 0;
    int nsrc = inter ? c->rsize : n;
    int mg = inter ? g : 0;
    (void)mg;
    switch (o->kind) {
    case C_REDUCE: case C_ALLREDUCE: {
        if (o->kind == C_REDUCE)
            pick_root(o, r);
        else
            o->role = R_OTHER;
        o->inplace = !inter && rng_chance(r, 30) && (o->kind == C_ALLREDUCE || o->role == R_ROOT);
        o->rn = draw_nvals(o, r);
        int receives = o->kind == C_ALLREDUCE || (inter ? o->role == R_ROOT : o->role == R_ROOT);
        int sends = o->kind == C_ALLREDUCE || (inter ? o->role == R_OTHER : 1);
        if (receives) {
            buf_span(&o->rb, 0, o->rn * es);
            red_block(&o->eblk, 0, o->rn, src_group, 0, nsrc, 0);
        } else {
            buf_span(&o->rb, 0, 0);
        }
        if (o->inplace) {
            red_block(&o->pblk, 0, o->rn, inter ? g : 0, me, me + 1, 0);
            buf_span(&o->sb, 0, 0);
        } else if (sends) {
            buf_span(&o->sb, 0, o->rn * es);
            red_block(&o->sblk, 0, o->rn, inter ? g : 0, me, me + 1, 0);
        } else {
            buf_span(&o->sb, 0, 0);
        }
        if (o->kind == C_REDUCE)
            snprintf(o->d, sizeof o->d, "root %s%d, ", inter ? (o->rootgroup ? "g1:" : "g0:") : "", o->root);
        break;
    }
    case C_REDUCE_SCATTER_BLOCK: case C_REDUCE_SCATTER: {
        o->inplace = !inter && rng_chance(r, 30);
        MPI_Aint total, off_me = 0;
        o->rcounts = ialloc(n);
        if (o->kind == C_REDUCE_SCATTER_BLOCK) {
            MPI_Aint budget = draw_nvals(o, r);
            if (inter) {
                /* n_A * rc_A = n_B * rc_B: a multiple of both sizes */
                MPI_Aint l = (MPI_Aint)n / gcd(n, c->rsize) * c->rsize;
                MPI_Aint u = budget / l;
                if (u > 64) u = 64;
                total = u * l;
            } else {
                total = budget / n * n;
            }
            for (int i = 0; i < n; i++)
                o->rcounts[i] = (int)(total / n);
        } else {
            /* Both groups partition the same total. */
            total = draw_nvals(o, r) / 2;
            int n0 = inter ? (g == 0 ? n : c->rsize) : n, n1 = inter ? (g == 0 ? c->rsize : n) : 0;
            int *parts[2] = { ialloc(n0), ialloc(n1) };
            for (int gg = 0; gg < (inter ? 2 : 1); gg++) {
                int np = gg ? n1 : n0;
                MPI_Aint left = total;
                for (int i = 0; i < np; i++) {
                    MPI_Aint x = i == np - 1 ? left : (MPI_Aint)rng_below(r, (uint64_t)left + 1);
                    if (rng_chance(r, 15) && i != np - 1)
                        x = 0;
                    parts[gg][i] = (int)x;
                    left -= x;
                }
            }
            memcpy(o->rcounts, parts[inter ? g : 0], (size_t)n * sizeof(int));
            free(parts[0]);
            free(parts[1]);
        }
        for (int i = 0; i < me; i++)
            off_me += o->rcounts[i];
        o->rn = total;
        o->rc_me = o->rcounts[me];
        if (o->inplace) {
            buf_span(&o->rb, 0, total * es);
            red_block(&o->pblk, 0, total, 0, me, me + 1, 0);
            red_block(&o->eblk, 0, o->rc_me, 0, 0, n, off_me);
            blk_t dc;
            memset(&dc, 0, sizeof dc);
            dc.bdisp = o->rc_me * es;
            dc.nbytes = (total - o->rc_me) * es;
            bl_add(&o->dontcare, dc);
            buf_span(&o->sb, 0, 0);
        } else {
            buf_span(&o->rb, 0, o->rc_me * es);
            red_block(&o->eblk, 0, o->rc_me, src_group, 0, nsrc, off_me);
            buf_span(&o->sb, 0, total * es);
            red_block(&o->sblk, 0, total, inter ? g : 0, me, me + 1, 0);
        }
        snprintf(o->d, sizeof o->d, "total %ld, mine %d, ", (long)total, o->rc_me);
        break;
    }
    default: { /* scan, exscan: intracommunicators only */
        o->inplace = rng_chance(r, 30);
        o->rn = draw_nvals(o, r);
        int ex = o->kind == C_EXSCAN;
        buf_span(&o->rb, 0, o->rn * es);
        if (!ex || me > 0)
            red_block(&o->eblk, 0, o->rn, 0, 0, ex ? me : me + 1, 0);
        if (ex && me == 0) {
            blk_t dc;
            memset(&dc, 0, sizeof dc);
            dc.nbytes = o->rn * es;
            bl_add(&o->dontcare, dc);
        }
        if (o->inplace) {
            red_block(&o->pblk, 0, o->rn, 0, me, me + 1, 0);
            buf_span(&o->sb, 0, 0);
        } else {
            buf_span(&o->sb, 0, o->rn * es);
            red_block(&o->sblk, 0, o->rn, 0, me, me + 1, 0);
        }
        break;
    }
    }
    size_t u = strlen(o->d);
    snprintf(o->d + u, sizeof o->d - u, "%s %s, %ld values%s", rtype_name[o->rt], op_name[o->op],
             (long)(o->kind == C_REDUCE_SCATTER || o->kind == C_REDUCE_SCATTER_BLOCK ? o->rc_me : o->rn),
             o->inplace ? ", in place" : "");
}

cop_t *cop_new(rng_t *r, ccomm_t *c, int form, int small)
{
    cop_t *o = calloc(1, sizeof *o);
    o->c = *c;
    o->form = form;
    o->small = small;
    o->req = MPI_REQUEST_NULL;
    o->key = mix(((uint64_t)g_case << 16) ^ rng_next(r));
    o->r = rng_derive(rng_next(r), 77);
    for (;;) {
        o->kind = rng_range(r, 0, C_NKINDS - 1);
        if (c->inter && (o->kind == C_SCAN || o->kind == C_EXSCAN))
            continue;
        break;
    }
    o->iters = form == FORM_PERSISTENT ? rng_range(r, 1, 3) : 1;
    if ((!HAVE_MPI4 || g_quirk_mpich40) && o->form == FORM_PERSISTENT)
        o->form = FORM_NONBLOCKING;   /* MPI 3 library: same draws, nonblocking calls */
    o->role = R_OTHER;
    switch (o->kind) {
    case C_BARRIER:
        o->sleeper = g_same_host ? rng_range(r, -1, (c->inter ? c->size + c->rsize : c->size) - 1) : -1;
        buf_span(&o->sb, 0, 0);
        buf_span(&o->rb, 0, 0);
        snprintf(o->d, sizeof o->d, "sleeper %d", o->sleeper);
        break;
    case C_REDUCE: case C_ALLREDUCE: case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
    case C_SCAN: case C_EXSCAN:
        setup_reduce(o, r);
        break;
    default:
        setup_data(o, r);
        break;
    }
    buf_clone(&o->sref, &o->sb);
    buf_clone(&o->rref, &o->rb);
    char types[900] = "";
    if (o->ts)
        snprintf(types, sizeof types, ", send type %s, recv type %s", o->ts->desc,
                 o->tr ? o->tr->desc : "same");
    desc_add("%s %s on %s: %s%s", form_name[form], kind_name[o->kind], c->desc, o->d, types);
    return o;
}

int cop_iters(const cop_t *o) { return o->iters; }
double cop_call_time(const cop_t *o) { return o->t_call; }
const char *cop_name(const cop_t *o)
{
    static _Thread_local char n[64];
    snprintf(n, sizeof n, "%s %s", o->form == FORM_BLOCKING ? "" : o->form == FORM_NONBLOCKING ? "MPI_I" : "MPI_Start of",
             kind_name[o->kind]);
    return n;
}
int cop_form(const cop_t *o) { return o->form; }
MPI_Request *cop_request(cop_t *o) { return &o->req; }

/* ---- fill, call, verify --------------------------------------------------- */
static void apply_blocks_(const cop_t *o, unsigned char *base, const blist_t *l, int it);
static void apply_blocks(const cop_t *o, unsigned char *base, const blist_t *l, int it)
{
    local_enter();
    apply_blocks_(o, base, l, it);
    local_leave();
}

static void apply_blocks_(const cop_t *o, unsigned char *base, const blist_t *l, int it)
{
    int es = rtype_size[o->rt];
    for (int i = 0; i < l->n; i++) {
        const blk_t *b = &l->v[i];
        if (!b->red) {
            put_stream(base + b->bdisp, b->t, b->first, b->nbytes, b->key ^ ((uint64_t)it * 0x2545F4914F6CDD1DULL));
            continue;
        }
        for (MPI_Aint k = 0; k < b->nbytes; k++) {
            val_t acc = gen_val(o->op, o->rt, o->key, b->group, b->r0, b->gofs + k, it);
            for (int rr = b->r0 + 1; rr < b->r1; rr++)
                acc = fold(o->op, o->rt, acc, gen_val(o->op, o->rt, o->key, b->group, rr, b->gofs + k, it));
            store(o->rt, base + (b->first + k) * es, acc);
        }
    }
}

void cop_fill(cop_t *o, int it)
{
    buf_reset(&o->sb);
    apply_blocks(o, o->sb.base, &o->sblk, it);
    buf_reset(&o->rb);
    apply_blocks(o, o->rb.base, &o->pblk, it);
}

#if HAVE_MPI4
#define INIT_CALL(init, ...) CHK(init(__VA_ARGS__, MPI_INFO_NULL, &o->req))
#else
#define INIT_CALL(init, ...) fail("persistent collectives need MPI 4")
#endif
#define CALL3(blk, nb, init, ...)                                          \
    do {                                                                   \
        if (o->form == FORM_BLOCKING) {                                    \
            CHK(blk(__VA_ARGS__));                                         \
        } else if (o->form == FORM_NONBLOCKING) {                          \
            CHK(nb(__VA_ARGS__, &o->req));                                 \
        } else {                                                           \
            if (!o->inited) {                                              \
                INIT_CALL(init, __VA_ARGS__);                              \
                o->inited = 1;                                             \
            }                                                              \
            if (it >= 0)                                                   \
                CHK(MPI_Start(&o->req));                                   \
        }                                                                  \
    } while (0)

void cop_start(cop_t *o, int it)
{
    MPI_Comm comm = o->c.comm;
    void *sb = o->inplace ? MPI_IN_PLACE : (void *)o->sb.base;
    void *rb = o->rb.base;
    MPI_Datatype ts = o->ts ? o->ts->dt : MPI_BYTE, tr = o->ts ? TR(o)->dt : MPI_BYTE;
    MPI_Datatype rdt = rtype_dt(o->rt);
    MPI_Op op = op_handle(o->op);
    int root = root_arg(o), cs = (int)o->cs, cr = (int)o->cr, rn = (int)o->rn;
    int gat_inplace_nonroot = 0;
    (void)gat_inplace_nonroot;
    if (it >= 0 && o->kind == C_BARRIER) {
        int idx = o->c.rank + (o->c.inter && o->c.group == 1 ? o->c.rsize : 0);
        if (idx == o->sleeper) {
            sleep_ms(20);
            add_sleep(0.02);
        }
        o->t_enter = now();
    }
    o->t_call = now();
    switch (o->kind) {
    case C_BCAST:
        CALL3(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, rb, o->role == R_ROOT ? cs : cr,
              o->role == R_ROOT ? ts : tr, root, comm);
        break;
    case C_GATHER:
        /* The in-place root passes MPI_IN_PLACE as sendbuf; others their data. */
        CALL3(MPI_Gather, MPI_Igather, MPI_Gather_init,
              (o->inplace && o->role == R_ROOT) ? MPI_IN_PLACE : (void *)o->sb.base, cs, ts, rb, cr, tr, root, comm);
        break;
    case C_GATHERV:
        CALL3(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init,
              (o->inplace && o->role == R_ROOT) ? MPI_IN_PLACE : (void *)o->sb.base, cs, ts, rb,
              o->rcounts, o->rdispls, tr, root, comm);
        break;
    case C_SCATTER:
        CALL3(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, o->sb.base, cs, ts,
              (o->inplace && o->role == R_ROOT) ? MPI_IN_PLACE : rb, cr, tr, root, comm);
        break;
    case C_SCATTERV:
        CALL3(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, o->sb.base, o->scounts, o->sdispls, ts,
              (o->inplace && o->role == R_ROOT) ? MPI_IN_PLACE : rb, cr, tr, root, comm);
        break;
    case C_ALLGATHER:
        CALL3(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, sb, cs, ts, rb, cr, tr, comm);
        break;
    case C_ALLGATHERV:
        CALL3(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, sb, cs, ts, rb, o->rcounts,
              o->rdispls, tr, comm);
        break;
    case C_ALLTOALL:
        CALL3(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, sb, cs, ts, rb, cr, tr, comm);
        break;
    case C_ALLTOALLV:
        CALL3(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, sb, o->scounts, o->sdispls, ts, rb,
              o->rcounts, o->rdispls, tr, comm);
        break;
    case C_ALLTOALLW:
        CALL3(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, sb, o->scounts, o->sdispls,
              o->inplace ? o->rtypes : o->stypes, rb, o->rcounts, o->rdispls, o->rtypes, comm);
        break;
    case C_REDUCE:
        CALL3(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init,
              (o->inplace && o->role == R_ROOT) ? MPI_IN_PLACE : (void *)o->sb.base, rb, rn, rdt, op, root, comm);
        break;
    case C_ALLREDUCE:
        CALL3(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, sb, rb, rn, rdt, op, comm);
        break;
    case C_REDUCE_SCATTER:
        CALL3(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, sb, rb, o->rcounts,
              rdt, op, comm);
        break;
    case C_REDUCE_SCATTER_BLOCK:
        CALL3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, sb,
              rb, o->rc_me, rdt, op, comm);
        break;
    case C_SCAN:
        CALL3(MPI_Scan, MPI_Iscan, MPI_Scan_init, sb, rb, rn, rdt, op, comm);
        break;
    case C_EXSCAN:
        CALL3(MPI_Exscan, MPI_Iexscan, MPI_Exscan_init, sb, rb, rn, rdt, op, comm);
        break;
    default:
        CALL3(MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, comm);
        break;
    }
    if (it >= 0) {
        double bytes = (double)(o->sb.len + o->rb.len);
        add_bytes(bytes);
    }
}

void cop_verify(cop_t *o, int it)
{
    char what[64];
    if (o->kind == C_BARRIER) {
        /* Open MPI 4's nonblocking barrier across an intercommunicator
         * lets ranks leave early: checked only elsewhere. */
        if (o->sleeper >= 0 && !(g_quirk_ompi4 && o->c.inter)) {
            /* Nobody leaves before everybody (across an intercommunicator:
             * everybody of the other group) has entered. */
            double t_exit = now(), maxin = 0;
            CHK(MPI_Allreduce(&o->t_enter, &maxin, 1, MPI_DOUBLE, MPI_MAX, o->c.comm));
            if (t_exit + 1e-4 < maxin)
                fail("barrier: left at %.6f, before the last rank entered at %.6f", t_exit, maxin);
        }
        return;
    }
    buf_reset(&o->sref);
    apply_blocks(o, o->sref.base, &o->sblk, it);
    buf_reset(&o->rref);
    apply_blocks(o, o->rref.base, &o->eblk, it);
    for (int i = 0; i < o->dontcare.n; i++)
        memcpy(o->rref.base + o->dontcare.v[i].bdisp, o->rb.base + o->dontcare.v[i].bdisp,
               (size_t)o->dontcare.v[i].nbytes);
    snprintf(what, sizeof what, "%s receive buffer (iteration %d)", kind_name[o->kind], it);
    buf_check(&o->rb, &o->rref, what);
    snprintf(what, sizeof what, "%s send buffer (iteration %d)", kind_name[o->kind], it);
    buf_check(&o->sb, &o->sref, what);
}

void cop_free(cop_t *o)
{
    if (o->form == FORM_PERSISTENT && o->inited && o->req != MPI_REQUEST_NULL)
        CHK(MPI_Request_free(&o->req));
    buf_free(&o->sb);
    buf_free(&o->rb);
    buf_free(&o->sref);
    buf_free(&o->rref);
    free(o->sblk.v);
    free(o->pblk.v);
    free(o->eblk.v);
    free(o->dontcare.v);
    free(o->scounts);
    free(o->rcounts);
    free(o->sdispls);
    free(o->rdispls);
    free(o->stypes);
    free(o->rtypes);
    tm_free(o->ts);
    tm_free(o->tr);
    tm_free(o->tb);
    free(o);
}
