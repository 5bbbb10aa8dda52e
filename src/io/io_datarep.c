/*
 * Data representations other than "native": "external32" and the ones a
 * program registers with MPI_Register_datarep (MPI 4.1 section 14.5.3).
 *
 * A registered representation is a name, a read and a write conversion
 * function, a file-extent function and the caller's extra state; it is
 * local to the process and never removed.  MPI_CONVERSION_FN_NULL for a
 * direction means that direction moves the native bytes unconverted.
 *
 * File layouts.  A type whose predefined types all keep their size in the
 * file keeps its memory layout there.  Otherwise the layout in the file is
 * recomputed from the type's constructors (its contents) with the file
 * extents of the predefined types: displacements given in elements
 * (contiguous, vector, indexed, indexed_block, subarray, darray) are scaled to the
 * file extents of the old type; displacements and extents given in bytes
 * (hvector, hindexed, hindexed_block, struct, resized) are taken as they
 * are, as the standard says (section 14.5, "Advice to users").
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

static pthread_mutex_t reps_lock = PTHREAD_MUTEX_INITIALIZER;
static io_rep_t *reps; /* registered, newest first; never freed */
static io_rep_t ext32_rep = {.name = "external32", .ext32 = 1};

static int builtin(const char *name)
{
    return strcmp(name, "native") == 0 || strcmp(name, "internal") == 0 ||
           strcmp(name, "external32") == 0;
}

/* A registered representation (reps_lock held). */
static const io_rep_t *find_locked(const char *name)
{
    const io_rep_t *r;

    for (r = reps; r != NULL; r = r->next)
        if (strcmp(r->name, name) == 0)
            break;
    return r;
}

int io_rep_lookup(const char *name, const io_rep_t **rep)
{
    const io_rep_t *r;

    *rep = NULL;
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0)
        return 0;
    if (strcmp(name, "external32") == 0) {
        *rep = &ext32_rep;
        return 0;
    }
    pthread_mutex_lock(&reps_lock);
    r = find_locked(name);
    pthread_mutex_unlock(&reps_lock);
    *rep = r;
    return r != NULL ? 0 : -1;
}

static int is_leaf(MPI_Datatype dt)
{
    return (dt->flags & MPI_DT_PREDEF) || dt->combiner == MPI_COMBINER_NAMED;
}

int io_rep_fext(const io_rep_t *rep, MPI_Datatype dt, MPI_Aint *ext)
{
    MPI_Aint e = -1;

    if (rep == NULL) {
        *ext = (MPI_Aint)dt->size;
        return MPI_SUCCESS;
    }
    if (rep->ext32) {
        *ext = (MPI_Aint)mpi_dt_ext32_size(dt);
        return MPI_SUCCESS;
    }
    if (rep->extent(dt, &e, rep->extra) != MPI_SUCCESS || e < 0)
        return MPI_ERR_CONVERSION;
    *ext = e;
    return MPI_SUCCESS;
}

int io_rep_differs(const io_rep_t *rep, MPI_Datatype dt, int *differs)
{
    int rc;

    *differs = 0;
    if (rep == NULL)
        return MPI_SUCCESS;
    if (is_leaf(dt)) {
        MPI_Aint e;
        if ((rc = io_rep_fext(rep, dt, &e)) != MPI_SUCCESS)
            return rc;
        *differs = e != (MPI_Aint)dt->size;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < dt->ntypes && !*differs; i++)
        if ((rc = io_rep_differs(rep, dt->types[i], differs)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

/* ---- a constructor's arguments -------------------------------------------
 */

/*
 * The integer and address arguments of a derived type's constructor in the
 * order the int constructors give them to MPI_Type_get_contents, whichever
 * form the datatype engine kept them in: ints and addresses, or, for a
 * type made by a _c constructor with a value an int cannot hold, every one
 * as a large count (the integers first, then what the int form gives as
 * addresses).  Array types keep their other arguments as ints and only the
 * size arrays as large counts: array_args widens them.
 */
typedef struct targs {
    const int *ints;
    const MPI_Aint *addrs;
    const MPI_Count *big; /* the large form, or NULL */
    MPI_Count nbig, ni;   /* ni: the integers before the addresses in big */
} targs_t;

static void targs_init(targs_t *t, MPI_Datatype dt)
{
    t->ints = dt->ints;
    t->addrs = dt->addrs;
    t->big = mpi_dt_large_counts(dt, &t->nbig);
    t->ni = 0;
}

/* Integer argument k. */
static MPI_Count ti(const targs_t *t, MPI_Count k)
{
    return t->big != NULL ? t->big[k] : t->ints[k];
}

/* Address argument k. */
static MPI_Aint ta(const targs_t *t, MPI_Count k)
{
    return t->big != NULL ? (MPI_Aint)t->big[t->ni + k] : t->addrs[k];
}

/*
 * The arguments of dt (not an array type) into t, and its count of blocks
 * (the first integer) into *n: MPI_SUCCESS; MPI_ERR_UNSUPPORTED_DATAREP
 * for a combiner without a known layout; MPI_ERR_INTERN when the recorded
 * arguments are short of what the combiner has.
 */
static int targs_get(MPI_Datatype dt, targs_t *t, MPI_Count *n)
{
    MPI_Count ni, na, have_i;

    targs_init(t, dt);
    have_i = t->big != NULL ? t->nbig : dt->nints;
    *n = have_i > 0 ? ti(t, 0) : 0;
    if (*n < 0)
        return MPI_ERR_INTERN;
    switch (dt->combiner) {
    case MPI_COMBINER_DUP:
        ni = 0, na = 0;
        break;
    case MPI_COMBINER_RESIZED:
        ni = 0, na = 2;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        ni = 1, na = 0;
        break;
    case MPI_COMBINER_VECTOR:
        ni = 3, na = 0;
        break;
    case MPI_COMBINER_HVECTOR:
        ni = 2, na = 1;
        break;
    case MPI_COMBINER_INDEXED:
        ni = 1 + 2 * *n, na = 0;
        break;
    case MPI_COMBINER_HINDEXED:
        ni = 1 + *n, na = *n;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        ni = 2 + *n, na = 0;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        ni = 2, na = *n;
        break;
    case MPI_COMBINER_STRUCT:
        ni = 1 + *n, na = *n;
        if (dt->ntypes < *n)
            return MPI_ERR_INTERN;
        break;
    default: /* F90 types (Shoal makes none), or something new */
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (dt->combiner != MPI_COMBINER_RESIZED && dt->ntypes < 1)
        return MPI_ERR_INTERN;
    if (t->big != NULL) {
        t->ni = ni;
        return t->nbig >= ni + na ? MPI_SUCCESS : MPI_ERR_INTERN;
    }
    return dt->nints >= ni && dt->naddrs >= na ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int io_rep_size(const io_rep_t *rep, MPI_Datatype dt, MPI_Count *size)
{
    int rc, differs;
    MPI_Count s = 0, cs;

    if ((rc = io_rep_differs(rep, dt, &differs)) != MPI_SUCCESS)
        return rc;
    if (!differs) {
        *size = dt->size;
        return MPI_SUCCESS;
    }
    if (is_leaf(dt)) {
        MPI_Aint e = 0;
        rc = io_rep_fext(rep, dt, &e);
        *size = e;
        return rc;
    }
    if (dt->combiner == MPI_COMBINER_STRUCT) {
        targs_t t;
        MPI_Count n;
        if ((rc = targs_get(dt, &t, &n)) != MPI_SUCCESS)
            return rc;
        for (MPI_Count i = 0; i < n; i++) {
            if ((rc = io_rep_size(rep, dt->types[i], &cs)) != MPI_SUCCESS)
                return rc;
            if (__builtin_mul_overflow(ti(&t, 1 + i), cs, &cs) ||
                __builtin_add_overflow(s, cs, &s))
                return MPI_ERR_TYPE;
        }
        *size = s;
        return MPI_SUCCESS;
    }
    /* One old type: as many copies of it as its size goes into ours. */
    if (dt->ntypes != 1 || dt->types[0]->size <= 0)
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if ((rc = io_rep_size(rep, dt->types[0], &cs)) != MPI_SUCCESS)
        return rc;
    if (__builtin_mul_overflow(dt->size / dt->types[0]->size, cs, size))
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

/* ---- file layouts -----------------------------------------------------------
 */

void io_layout_free(io_layout_t *l)
{
    free(l->segs);
    memset(l, 0, sizeof(*l));
}

static int add_seg(io_layout_t *l, MPI_Aint disp, MPI_Count len)
{
    if (len <= 0)
        return MPI_SUCCESS;
    if (l->n > 0 && l->segs[l->n - 1].disp + (MPI_Aint)l->segs[l->n - 1].len ==
                        disp) {
        l->segs[l->n - 1].len += len;
    } else {
        if (l->n == l->cap) {
            MPI_Count cap = l->cap ? 2 * l->cap : 16;
            mpi_dt_seg_t *s;
            if ((size_t)cap > SIZE_MAX / sizeof(*s) ||
                (s = realloc(l->segs, (size_t)cap * sizeof(*s))) == NULL)
                return MPI_ERR_NO_MEM;
            l->segs = s;
            l->cap = cap;
        }
        l->segs[l->n].disp = disp;
        l->segs[l->n].len = len;
        l->n++;
    }
    l->size += len;
    return MPI_SUCCESS;
}

/* a * b + c, or a set *ovf. */
static MPI_Aint muladd(MPI_Aint a, MPI_Aint b, MPI_Aint c, int *ovf)
{
    MPI_Aint r;

    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}

/* count copies of c at disp, disp + stride, ... */
static int place(io_layout_t *l, const io_layout_t *c, MPI_Aint disp,
                 MPI_Count count, MPI_Aint stride)
{
    MPI_Aint last, lo, hi, len;
    int rc, ovf = 0;

    if (count <= 0)
        return MPI_SUCCESS;
    last = muladd((MPI_Aint)(count - 1), stride, disp, &ovf);
    lo = muladd(1, last < disp ? last : disp, c->lb, &ovf);
    hi = muladd(1, last > disp ? last : disp, c->ub, &ovf);
    if (ovf)
        return MPI_ERR_TYPE;
    if (c->n == 1 && stride > 0 && (MPI_Aint)c->segs[0].len == stride) {
        /* Copies of one block as long as the stride touch: one block (so
         * a count beyond int of a leaf costs one step, as in the
         * datatype engine). */
        len = muladd((MPI_Aint)count, stride, 0, &ovf);
        if (ovf || __builtin_add_overflow(disp, c->segs[0].disp, &lo))
            return MPI_ERR_TYPE;
        if ((rc = add_seg(l, lo, (MPI_Count)len)) != MPI_SUCCESS)
            return rc;
        lo = muladd(1, last < disp ? last : disp, c->lb, &ovf);
    } else if (c->n > 0) {
        for (MPI_Count i = 0; i < count; i++) {
            MPI_Aint at = disp + (MPI_Aint)i * stride;
            for (MPI_Count k = 0; k < c->n; k++)
                if ((rc = add_seg(l, at + c->segs[k].disp, c->segs[k].len)) !=
                    MPI_SUCCESS)
                    return rc;
        }
    }
    if (!l->placed || lo < l->lb)
        l->lb = lo;
    if (!l->placed || hi > l->ub)
        l->ub = hi;
    l->placed = 1;
    return MPI_SUCCESS;
}

/*
 * Array types (subarray, darray): the copies of old at the index tuples
 * the process owns, given per dimension as intervals of indices
 * (increasing), in typemap order: the last dimension fastest in C order,
 * the first in Fortran order.  The intervals of the fastest dimension are
 * placed whole, so a long one costs one step.  The extent is the whole
 * array's, from 0.
 */
typedef struct io_iv {
    MPI_Count start, len;
} io_iv_t;

static int grid(io_layout_t *l, const io_layout_t *c, int nd,
                const MPI_Count *sizes, io_iv_t *const *ivs, const int *niv,
                int order)
{
    MPI_Aint stride[32], total = c->ub - c->lb;
    int iv[32] = {0}, fast = order == MPI_ORDER_C ? nd - 1 : 0, rc, ovf = 0;
    MPI_Count off[32] = {0};

    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest first */
        stride[d] = total;
        total = muladd(total, (MPI_Aint)sizes[d], 0, &ovf);
    }
    if (ovf)
        return MPI_ERR_TYPE;
    for (int d = 0; d < nd; d++)
        if (niv[d] <= 0)
            goto bounds; /* nothing selected */
    for (;;) {
        MPI_Aint base = 0;
        int k;
        for (int d = 0; d < nd; d++)
            if (d != fast)
                base += (MPI_Aint)(ivs[d][iv[d]].start + off[d]) * stride[d];
        for (int i = 0; i < niv[fast]; i++)
            if ((rc = place(l, c, base + (MPI_Aint)ivs[fast][i].start *
                                             stride[fast],
                            ivs[fast][i].len, stride[fast])) != MPI_SUCCESS)
                return rc;
        /* The next tuple of the other dimensions, the fastest of them
         * first. */
        for (k = 1; k < nd; k++) {
            int d = order == MPI_ORDER_C ? nd - 1 - k : k;
            if (++off[d] < ivs[d][iv[d]].len)
                break;
            off[d] = 0;
            if (++iv[d] < niv[d])
                break;
            iv[d] = 0;
        }
        if (k >= nd)
            break;
    }
bounds:
    l->lb = 0;
    l->ub = total;
    l->placed = 1;
    return MPI_SUCCESS;
}

/* The index intervals of one dimension of a darray that process
 * coordinate p owns (MPI 4.1 section 5.1.4), *n of them; NULL without
 * memory. */
static io_iv_t *owned(MPI_Count gsize, int distrib, int darg, int psize,
                      int p, int *n)
{
    MPI_Count b;
    io_iv_t *iv;

    *n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if ((iv = malloc(sizeof(*iv))) != NULL) {
            iv->start = 0;
            iv->len = gsize;
            *n = 1;
        }
        return iv;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK)
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize
                                             : darg;
    else
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (b <= 0 || (iv = malloc(((size_t)(gsize / b) + 1) * sizeof(*iv))) ==
                      NULL)
        return NULL;
    /* Block: one interval; cyclic: one every psize * b indices. */
    for (MPI_Count s = (MPI_Count)p * b; s < gsize; s += (MPI_Count)psize * b) {
        iv[*n].start = s;
        iv[*n].len = gsize - s < b ? gsize - s : b;
        (*n)++;
        if (distrib == MPI_DISTRIBUTE_BLOCK)
            break;
    }
    return iv;
}

/* Subarray (in: ndims, sizes, subsizes, starts, order) or darray (size,
 * rank, ndims, gsizes, distribs, dargs, psizes, order) of c; in holds the
 * arguments widened (array_args). */
static int array(io_layout_t *l, const io_layout_t *c, int darray,
                 const MPI_Count *in)
{
    int nd = (int)(darray ? in[2] : in[0]), niv[32] = {0}, coord[32], rc;
    const MPI_Count *sizes = darray ? in + 3 : in + 1;
    int order = (int)(darray ? in[3 + 4 * nd] : in[1 + 3 * nd]);
    io_iv_t *ivs[32] = {NULL};

    if (darray) /* the process grid is row-major whatever the order */
        for (int d = nd - 1, r = (int)in[1]; d >= 0; d--) {
            coord[d] = r % (int)in[3 + 3 * nd + d];
            r /= (int)in[3 + 3 * nd + d];
        }
    rc = MPI_SUCCESS;
    for (int d = 0; d < nd && rc == MPI_SUCCESS; d++) {
        if (darray) {
            ivs[d] = owned(sizes[d], (int)in[3 + nd + d],
                           (int)in[3 + 2 * nd + d], (int)in[3 + 3 * nd + d],
                           coord[d], &niv[d]);
        } else if ((ivs[d] = malloc(sizeof(io_iv_t))) != NULL) {
            ivs[d]->start = in[1 + 2 * nd + d];
            ivs[d]->len = in[1 + nd + d];
            niv[d] = ivs[d]->len > 0;
        }
        if (ivs[d] == NULL)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = grid(l, c, nd, sizes, ivs, niv, order);
    for (int d = 0; d < nd; d++)
        free(ivs[d]);
    return rc;
}

/* An array type's arguments, widened into in (room for 4 + 4 * 32): the
 * int form's order whichever form they were kept in.  0, or -1 when they
 * are not all there. */
static int array_args(MPI_Datatype dt, const targs_t *t, MPI_Count *in)
{
    int darray = dt->combiner == MPI_COMBINER_DARRAY, head = darray ? 3 : 1;
    int nd, wide = darray ? 1 : 3, narrow = darray ? 3 : 0, k = 0;

    if (dt->nints < head)
        return -1;
    nd = dt->ints[head - 1];
    if (nd <= 0 || nd > 32)
        return -1;
    if (t->big == NULL) {
        if (dt->nints < head + 4 * nd + 1 - (darray ? 0 : nd))
            return -1;
        for (int i = 0; i < head + (wide + narrow) * nd + 1; i++)
            in[i] = dt->ints[i];
        return 0;
    }
    /* Large form: the ints lose the size arrays, which are large counts. */
    if (dt->nints < head + narrow * nd + 1 || t->nbig < (MPI_Count)wide * nd)
        return -1;
    for (int i = 0; i < head; i++)
        in[k++] = dt->ints[i];
    for (int i = 0; i < wide * nd; i++)
        in[k++] = t->big[i];
    for (int i = head; i < head + narrow * nd + 1; i++)
        in[k++] = dt->ints[i];
    return 0;
}

int io_rep_layout(const io_rep_t *rep, MPI_Datatype dt, io_layout_t *l,
                  const char **why)
{
    io_layout_t c;
    targs_t t;
    MPI_Count n = 0, arr[4 + 4 * 32];
    int rc = MPI_SUCCESS, ovf = 0;

    memset(l, 0, sizeof(*l));
    memset(&c, 0, sizeof(c));
    if (is_leaf(dt)) {
        MPI_Aint e = 0;
        if ((rc = io_rep_fext(rep, dt, &e)) != MPI_SUCCESS) {
            *why = "the data representation's extent function failed";
            return rc;
        }
        l->ub = e;
        l->placed = 1;
        return add_seg(l, 0, (MPI_Count)e);
    }
    if (dt->combiner == MPI_COMBINER_SUBARRAY ||
        dt->combiner == MPI_COMBINER_DARRAY) {
        targs_init(&t, dt);
        rc = array_args(dt, &t, arr) == 0 ? MPI_SUCCESS : MPI_ERR_INTERN;
    } else {
        rc = targs_get(dt, &t, &n);
    }
    if (rc != MPI_SUCCESS) {
        *why = rc == MPI_ERR_UNSUPPORTED_DATAREP
                   ? "the file layout of this kind of datatype (combiner not "
                     "known to Shoal) in a data representation that changes "
                     "sizes is not supported"
                   : "the datatype's recorded constructor arguments are "
                     "incomplete (internal error)";
        return rc;
    }
    if (dt->combiner == MPI_COMBINER_STRUCT) {
        for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS; i++) {
            if ((rc = io_rep_layout(rep, dt->types[i], &c, why)) ==
                MPI_SUCCESS)
                rc = place(l, &c, ta(&t, i), ti(&t, 1 + i), c.ub - c.lb);
            else
                goto done; /* *why says why */
            io_layout_free(&c);
        }
        goto done;
    }
    if ((rc = io_rep_layout(rep, dt->types[0], &c, why)) != MPI_SUCCESS)
        goto done;
    {
        MPI_Aint ext = c.ub - c.lb;
        switch (dt->combiner) {
        case MPI_COMBINER_DUP:
            rc = place(l, &c, 0, 1, 0);
            break;
        case MPI_COMBINER_RESIZED:
            rc = place(l, &c, 0, 1, 0);
            l->lb = ta(&t, 0);
            l->ub = muladd(1, ta(&t, 0), ta(&t, 1), &ovf);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            rc = place(l, &c, 0, ti(&t, 0), ext);
            break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR: {
            MPI_Aint stride = dt->combiner == MPI_COMBINER_VECTOR
                                  ? muladd((MPI_Aint)ti(&t, 2), ext, 0, &ovf)
                                  : ta(&t, 0);
            for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS && !ovf; i++)
                rc = place(l, &c, muladd((MPI_Aint)i, stride, 0, &ovf),
                           ti(&t, 1), ext);
            break;
        }
        case MPI_COMBINER_INDEXED:
            for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS && !ovf; i++)
                rc = place(l, &c,
                           muladd((MPI_Aint)ti(&t, 1 + n + i), ext, 0, &ovf),
                           ti(&t, 1 + i), ext);
            break;
        case MPI_COMBINER_HINDEXED:
            for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, ta(&t, i), ti(&t, 1 + i), ext);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS && !ovf; i++)
                rc = place(l, &c,
                           muladd((MPI_Aint)ti(&t, 2 + i), ext, 0, &ovf),
                           ti(&t, 1), ext);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, ta(&t, i), ti(&t, 1), ext);
            break;
        default: /* MPI_COMBINER_SUBARRAY, MPI_COMBINER_DARRAY */
            rc = array(l, &c, dt->combiner == MPI_COMBINER_DARRAY, arr);
            break;
        }
    }
    if (ovf && rc == MPI_SUCCESS)
        rc = MPI_ERR_TYPE;
done:
    io_layout_free(&c);
    if (rc == MPI_ERR_NO_MEM)
        *why = "no memory for the file layout of the datatype";
    else if (rc == MPI_ERR_TYPE)
        *why = "the datatype's layout in the file overflows MPI_Aint (its "
               "displacements counted in elements scaled to the file "
               "extents)";
    if (rc != MPI_SUCCESS)
        io_layout_free(l);
    return rc;
}

/* ---- MPI_Register_datarep ---------------------------------------------------
 */

static int reg(const char *fn, const char *datarep,
               MPI_Datarep_conversion_function *rd,
               MPI_Datarep_conversion_function *wr,
               MPI_Datarep_conversion_function_c *rd_c,
               MPI_Datarep_conversion_function_c *wr_c,
               MPI_Datarep_extent_function *extent, void *extra)
{
    io_rep_t *r;

    MPI_CHECK_INIT(fn);
    if (datarep == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn, "datarep is NULL");
    if (datarep[0] == '\0')
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn, "datarep is empty");
    if (strnlen(datarep, MPI_MAX_DATAREP_STRING) >= MPI_MAX_DATAREP_STRING)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn,
                        "datarep is longer than MPI_MAX_DATAREP_STRING - 1 "
                        "(%d) characters",
                        MPI_MAX_DATAREP_STRING - 1);
    if (extent == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn,
                        "dtype_file_extent_fn is NULL (it is required)");
    if (builtin(datarep))
        return io_error(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fn,
                        "\"%s\" is a predefined data representation",
                        datarep);
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_NO_MEM, fn,
                        "no memory for a data representation");
    strcpy(r->name, datarep);
    r->rd = rd;
    r->wr = wr;
    r->rd_c = rd_c;
    r->wr_c = wr_c;
    r->extent = extent;
    r->extra = extra;
    pthread_mutex_lock(&reps_lock);
    if (find_locked(datarep) != NULL) {
        pthread_mutex_unlock(&reps_lock);
        free(r);
        return io_error(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fn,
                        "data representation \"%s\" is already defined",
                        datarep);
    }
    r->next = reps;
    reps = r;
    pthread_mutex_unlock(&reps_lock);
    return MPI_SUCCESS;
}

int PMPI_Register_datarep(const char *datarep,
                          MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn,
                          void *extra_state)
{
    return reg("MPI_Register_datarep", datarep, read_conversion_fn,
               write_conversion_fn, NULL, NULL, dtype_file_extent_fn,
               extra_state);
}
SHOAL_MPI_WEAK(Register_datarep)

int PMPI_Register_datarep_c(
    const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
    MPI_Datarep_conversion_function_c *write_conversion_fn,
    MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return reg("MPI_Register_datarep_c", datarep, NULL, NULL,
               read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
               extra_state);
}
SHOAL_MPI_WEAK(Register_datarep_c)

/* ---- conversion -------------------------------------------------------------
 */

int io_rep_direct(const io_rep_t *rep, int wr)
{
    if (rep == NULL)
        return 1;
    if (rep->ext32)
        return 0;
    return wr ? rep->wr == NULL && rep->wr_c == NULL
              : rep->rd == NULL && rep->rd_c == NULL;
}

int io_rep_convert(const io_rep_t *rep, int wr, void *buf, MPI_Count count,
                   MPI_Datatype dt, void *file, MPI_Count esz, int *ret)
{
    MPI_Count items = dt->nelems, per, done = 0;

    *ret = MPI_SUCCESS;
    if (rep->ext32) {
        if (wr)
            return mpi_dt_ext32_pack(buf, count, dt, file);
        mpi_dt_ext32_unpack(file, buf, count, dt);
        return MPI_SUCCESS;
    }
    if (count <= 0 || items <= 0)
        return MPI_SUCCESS;
    if (wr ? rep->wr_c != NULL : rep->rd_c != NULL) {
        *ret = (wr ? rep->wr_c : rep->rd_c)(buf, dt, count * items, file, 0,
                                             rep->extra);
        return *ret == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_CONVERSION;
    }
    /* int counts: whole elements at a time, position counting the data
     * items already converted. */
    per = INT_MAX / items;
    if (per <= 0)
        return MPI_ERR_COUNT;
    while (done < count) {
        MPI_Count k = count - done < per ? count - done : per;
        *ret = (wr ? rep->wr : rep->rd)(buf, dt, (int)(k * items),
                                         (char *)file + done * esz,
                                         (MPI_Offset)(done * items),
                                         rep->extra);
        if (*ret != MPI_SUCCESS)
            return MPI_ERR_CONVERSION;
        done += k;
    }
    return MPI_SUCCESS;
}
