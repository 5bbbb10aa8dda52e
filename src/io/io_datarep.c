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
        if (dt->nints < 1 + dt->ntypes)
            return MPI_ERR_UNSUPPORTED_DATAREP; /* large counts */
        for (int i = 0; i < dt->ntypes; i++) {
            if ((rc = io_rep_size(rep, dt->types[i], &cs)) != MPI_SUCCESS)
                return rc;
            s += (MPI_Count)dt->ints[1 + i] * cs;
        }
        *size = s;
        return MPI_SUCCESS;
    }
    /* One old type: as many copies of it as its size goes into ours. */
    if (dt->ntypes != 1 || dt->types[0]->size <= 0)
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if ((rc = io_rep_size(rep, dt->types[0], &cs)) != MPI_SUCCESS)
        return rc;
    *size = dt->size / dt->types[0]->size * cs;
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
            mpi_dt_seg_t *s = realloc(l->segs, (size_t)cap * sizeof(*s));
            if (s == NULL)
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

/* count copies of c at disp, disp + stride, ... */
static int place(io_layout_t *l, const io_layout_t *c, MPI_Aint disp,
                 MPI_Count count, MPI_Aint stride)
{
    int rc;

    if (count <= 0)
        return MPI_SUCCESS;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Aint at = disp + (MPI_Aint)i * stride;
        for (MPI_Count k = 0; k < c->n; k++)
            if ((rc = add_seg(l, at + c->segs[k].disp, c->segs[k].len)) !=
                MPI_SUCCESS)
                return rc;
    }
    {
        MPI_Aint last = disp + (MPI_Aint)(count - 1) * stride;
        MPI_Aint lo = (last < disp ? last : disp) + c->lb;
        MPI_Aint hi = (last > disp ? last : disp) + c->ub;
        if (!l->placed || lo < l->lb)
            l->lb = lo;
        if (!l->placed || hi > l->ub)
            l->ub = hi;
        l->placed = 1;
    }
    return MPI_SUCCESS;
}

/*
 * An array type (subarray, darray): the copies of old at the index tuples
 * the process owns, idx[d][0..cnt[d]) in dimension d (increasing), in
 * typemap order: the last dimension fastest in C order, the first in
 * Fortran order.  Its extent is the whole array's, from 0.
 */
static int grid(io_layout_t *l, const io_layout_t *c, int nd, const int *sizes,
                int *const *idx, const int *cnt, int order)
{
    MPI_Aint stride[32], total = c->ub - c->lb;
    int at[32], rc, empty = 0;

    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest first */
        stride[d] = total;
        total *= sizes[d];
        empty |= cnt[d] <= 0;
        at[d] = 0;
    }
    while (!empty) {
        MPI_Aint disp = 0;
        int k;
        for (int d = 0; d < nd; d++)
            disp += (MPI_Aint)idx[d][at[d]] * stride[d];
        if ((rc = place(l, c, disp, 1, 0)) != MPI_SUCCESS)
            return rc;
        for (k = 0; k < nd; k++) {
            int d = order == MPI_ORDER_C ? nd - 1 - k : k;
            if (++at[d] < cnt[d])
                break;
            at[d] = 0;
        }
        if (k == nd)
            break;
    }
    l->lb = 0;
    l->ub = total;
    l->placed = 1;
    return MPI_SUCCESS;
}

/* The indices of one dimension of a darray that process coordinate p
 * owns (MPI 4.1 section 5.1.4): into idx (room for gsize), their count. */
static int owned(int gsize, int distrib, int darg, int psize, int p, int *idx)
{
    int n = 0;

    if (distrib == MPI_DISTRIBUTE_NONE) {
        for (int i = 0; i < gsize; i++)
            idx[n++] = i;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize
                                                 : darg;
        for (long long i = (long long)p * b;
             i < (long long)(p + 1) * b && i < gsize; i++)
            idx[n++] = (int)i;
    } else { /* MPI_DISTRIBUTE_CYCLIC */
        int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (long long i = (long long)p * k; i < gsize;
             i += (long long)k * psize)
            for (long long j = i; j < i + k && j < gsize; j++)
                idx[n++] = (int)j;
    }
    return n;
}

/* Subarray (ints: ndims, sizes, subsizes, starts, order) or darray
 * (size, rank, ndims, gsizes, distribs, dargs, psizes, order) of c. */
static int array(io_layout_t *l, const io_layout_t *c, int darray,
                 const int *in, const char **why)
{
    int nd = darray ? in[2] : in[0], cnt[32], *idx[32] = {NULL}, rc;
    const int *sizes = darray ? in + 3 : in + 1;
    int order = darray ? in[3 + 4 * nd] : in[1 + 3 * nd];
    int coord[32];

    if (nd <= 0 || nd > 32) {
        *why = "an array type of more than 32 dimensions";
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (darray) /* the process grid is row-major whatever the order */
        for (int d = nd - 1, r = in[1]; d >= 0; d--) {
            coord[d] = r % in[3 + 3 * nd + d];
            r /= in[3 + 3 * nd + d];
        }
    for (int d = 0; d < nd; d++) {
        if ((idx[d] = malloc((size_t)(sizes[d] > 0 ? sizes[d] : 1) *
                             sizeof(int))) == NULL) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        if (darray) {
            cnt[d] = owned(sizes[d], in[3 + nd + d], in[3 + 2 * nd + d],
                           in[3 + 3 * nd + d], coord[d], idx[d]);
        } else {
            cnt[d] = in[1 + nd + d];
            for (int i = 0; i < cnt[d]; i++)
                idx[d][i] = in[1 + 2 * nd + d] + i;
        }
    }
    rc = grid(l, c, nd, sizes, idx, cnt, order);
out:
    for (int d = 0; d < nd; d++)
        free(idx[d]);
    return rc;
}

int io_rep_layout(const io_rep_t *rep, MPI_Datatype dt, io_layout_t *l,
                  const char **why)
{
    io_layout_t c;
    const int *in = dt->ints;
    const MPI_Aint *ad = dt->addrs;
    int rc = MPI_SUCCESS, n, need_i = 0, need_a = 0;

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
    n = dt->nints > 0 ? in[0] : 0;
    switch (dt->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        break;
    case MPI_COMBINER_CONTIGUOUS:
        need_i = 1;
        break;
    case MPI_COMBINER_VECTOR:
        need_i = 3;
        break;
    case MPI_COMBINER_HVECTOR:
        need_i = 2, need_a = 1;
        break;
    case MPI_COMBINER_INDEXED:
        need_i = 1 + 2 * n;
        break;
    case MPI_COMBINER_HINDEXED:
        need_i = 1 + n, need_a = n;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        need_i = 2 + n;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        need_i = 2, need_a = n;
        break;
    case MPI_COMBINER_STRUCT:
        need_i = 1 + n, need_a = n;
        break;
    case MPI_COMBINER_SUBARRAY:
        need_i = 2 + 3 * n;
        break;
    case MPI_COMBINER_DARRAY:
        need_i = dt->nints >= 3 ? 4 + 4 * in[2] : 3;
        break;
    default:
        *why = "the file layout of this datatype (an F90 type) in a data "
               "representation that changes sizes is not supported";
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (dt->nints < need_i || dt->naddrs < need_a || need_i < 0) {
        *why = "the file layout of a datatype made with large counts, in a "
               "data representation that changes sizes, is not supported";
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (dt->combiner == MPI_COMBINER_STRUCT) {
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            if ((rc = io_rep_layout(rep, dt->types[i], &c, why)) ==
                MPI_SUCCESS)
                rc = place(l, &c, ad[i], in[1 + i], c.ub - c.lb);
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
            l->lb = ad[0];
            l->ub = ad[0] + ad[1];
            break;
        case MPI_COMBINER_CONTIGUOUS:
            rc = place(l, &c, 0, in[0], ext);
            break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR: {
            MPI_Aint stride = dt->combiner == MPI_COMBINER_VECTOR
                                  ? (MPI_Aint)in[2] * ext
                                  : ad[0];
            for (int i = 0; i < in[0] && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, (MPI_Aint)i * stride, in[1], ext);
            break;
        }
        case MPI_COMBINER_INDEXED:
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, (MPI_Aint)in[1 + n + i] * ext, in[1 + i],
                           ext);
            break;
        case MPI_COMBINER_HINDEXED:
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, ad[i], in[1 + i], ext);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, (MPI_Aint)in[2 + i] * ext, in[1], ext);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
                rc = place(l, &c, ad[i], in[1], ext);
            break;
        default: /* MPI_COMBINER_SUBARRAY, MPI_COMBINER_DARRAY */
            rc = array(l, &c, dt->combiner == MPI_COMBINER_DARRAY, in, why);
            break;
        }
    }
done:
    io_layout_free(&c);
    if (rc == MPI_ERR_NO_MEM)
        *why = "no memory for the file layout of the datatype";
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
