/*
 * File views: a view is a displacement, an etype and a filetype tiled
 * over the file from the displacement on.  The data a process sees is the
 * stream of the filetype's data bytes, copy after copy; holes are not part
 * of it.
 *
 * The filetype is flattened once, when the view is set, from the blocks
 * the datatype engine already keeps for one element (`segs`, adjacent
 * blocks merged, in typemap order): copied with the stream byte each block
 * starts at, so finding the block of a stream position is a binary search
 * and walking on from there is a step along the array.  MPI 4.0 section
 * 14.1 requires the typemap displacements of the etype and the filetype
 * to be nonnegative and monotonically nondecreasing, and section 14.3
 * forbids overlaps in either when the file is opened for writing; both
 * are checked on the basic elements of the typemap (mpi_dt_order).  So
 * block starts never decrease, and stream order is file order unless a
 * filetype of a file only read overlaps itself (a repeated displacement):
 * such a view is marked, and what needs file order (the end of file in
 * etypes, lock ranges, sieving windows, collective buffering) allows for
 * it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int io_view_default(io_view_t *v)
{
    const char *why;

    return io_view_build(v, 0, MPI_BYTE, MPI_BYTE, "native", 0, &why);
}

void io_view_free(io_view_t *v)
{
    free(v->segs);
    free(v->start);
    v->segs = NULL;
    v->start = NULL;
    v->nsegs = 0;
    if (v->etype != NULL)
        mpi_dt_release(v->etype);
    if (v->ftype != NULL)
        mpi_dt_release(v->ftype);
    v->etype = v->ftype = NULL;
}

/* The blocks of one filetype into v, with the stream byte each starts at,
 * and the file range they cover; overlapping ones (allowed in files only
 * read) mark the view. */
static int set_segs(io_view_t *v, const mpi_dt_seg_t *segs, MPI_Count n,
                    const char **why)
{
    MPI_Count at = 0;

    if (n > 0) {
        v->segs = malloc((size_t)n * sizeof(*v->segs));
        v->start = malloc((size_t)n * sizeof(*v->start));
        if (v->segs == NULL || v->start == NULL) {
            *why = "no memory for the flattened filetype";
            return MPI_ERR_NO_MEM;
        }
    }
    for (MPI_Count i = 0; i < n; i++) {
        MPI_Aint end = segs[i].disp + (MPI_Aint)segs[i].len;
        if (i > 0 && segs[i].disp < v->reach)
            v->overlap = 1;
        if (i == 0 || end > v->reach)
            v->reach = end;
        v->segs[i] = segs[i];
        v->start[i] = at;
        at += segs[i].len;
    }
    v->nsegs = n;
    return MPI_SUCCESS;
}

/* The typemap rules of MPI 4.0 sections 14.1 and 14.3 for the etype
 * (is_etype) or the filetype ordered as order (MPI_DT_ORDER_*): NULL when
 * they are kept, else why not. */
static const char *order_why(int order, int wr, int is_etype)
{
    static const char *const why[2][3] = {
        {"the filetype has a negative displacement",
         "the filetype's displacements decrease (they must be monotonically "
         "nondecreasing)",
         "the filetype overlaps itself, which a file opened for writing "
         "does not allow"},
        {"the etype has a negative displacement",
         "the etype's displacements decrease (they must be monotonically "
         "nondecreasing)",
         "the etype overlaps itself, which a file opened for writing does "
         "not allow"}};

    switch (order) {
    case MPI_DT_ORDER_NEGATIVE:
        return why[is_etype][0];
    case MPI_DT_ORDER_DECREASE:
        return why[is_etype][1];
    case MPI_DT_ORDER_OVERLAP:
        return wr ? why[is_etype][2] : NULL;
    default:
        return NULL;
    }
}

/* The etype's rules: by its elements, or by its blocks in the file when
 * the representation changes its size (de). */
static int etype_rules(const io_rep_t *rep, MPI_Datatype etype, int de,
                       int wr, const char **why)
{
    io_layout_t le;
    int rc, order;

    if (!de) {
        order = mpi_dt_order(etype);
    } else {
        memset(&le, 0, sizeof(le));
        if ((rc = io_rep_layout(rep, etype, &le, why)) != MPI_SUCCESS)
            return rc;
        order = mpi_dt_blocks_order(le.segs, le.n, NULL);
        io_layout_free(&le);
    }
    *why = order_why(order, wr, 1);
    return *why != NULL ? MPI_ERR_TYPE : MPI_SUCCESS;
}

int io_view_build(io_view_t *v, MPI_Offset disp, MPI_Datatype etype,
                  MPI_Datatype ftype, const char *datarep, int wr,
                  const char **why)
{
    const io_rep_t *rep = NULL;
    int rc, de = 0, df = 0;
    io_layout_t l;

    memset(v, 0, sizeof(*v));
    memset(&l, 0, sizeof(l));
    if (io_rep_lookup(datarep, &rep) != 0) {
        *why = "no data representation of that name (\"native\", "
               "\"internal\", \"external32\" or one registered with "
               "MPI_Register_datarep)";
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    v->esize = etype->size;
    v->fsize = ftype->size;
    v->fext = ftype->extent;
    if ((rc = io_rep_differs(rep, etype, &de)) != MPI_SUCCESS ||
        (rc = io_rep_differs(rep, ftype, &df)) != MPI_SUCCESS) {
        *why = "the data representation's extent function failed";
        return rc;
    }
    if ((rc = etype_rules(rep, etype, de, wr, why)) != MPI_SUCCESS)
        return rc;
    if (de || df) {
        /* Sizes change in the file: the layout there is computed from the
         * filetype's constructors with the file extents (io_datarep.c). */
        if ((rc = io_rep_size(rep, etype, &v->esize)) != MPI_SUCCESS) {
            *why = "the etype's size in the file could not be computed";
            return rc;
        }
        if ((rc = io_rep_layout(rep, ftype, &l, why)) != MPI_SUCCESS)
            return rc;
        v->fsize = l.size;
        v->fext = l.ub - l.lb;
    }
    if (v->esize <= 0) {
        *why = "the etype has no data (size 0)";
        rc = MPI_ERR_TYPE;
    } else if (v->fsize % v->esize != 0) {
        *why = "the filetype's size is not a multiple of the etype's";
        rc = MPI_ERR_TYPE;
    } else if (v->fsize > 0 && v->fext <= 0) {
        *why = "the filetype's extent is not positive";
        rc = MPI_ERR_TYPE;
    } else if ((*why = order_why(de || df
                                      ? mpi_dt_blocks_order(l.segs, l.n, NULL)
                                      : mpi_dt_order(ftype),
                                  wr, 0)) != NULL) {
        rc = MPI_ERR_TYPE;
    } else {
        rc = de || df ? set_segs(v, l.segs, l.n, why)
                      : set_segs(v, ftype->segs, ftype->nsegs, why);
    }
    io_layout_free(&l);
    if (rc != MPI_SUCCESS) {
        free(v->segs);
        free(v->start);
        v->segs = NULL;
        v->start = NULL;
        return rc;
    }
    v->dense = v->nsegs == 1 && v->segs[0].disp == 0 &&
               v->segs[0].len == (MPI_Count)v->fext;
    v->disp = disp;
    v->rep = rep;
    mpi_dt_retain(etype);
    mpi_dt_retain(ftype);
    v->etype = etype;
    v->ftype = ftype;
    snprintf(v->datarep, sizeof(v->datarep), "%s", datarep);
    return MPI_SUCCESS;
}

/* The block of one filetype holding stream byte r (0 <= r < fsize). */
static MPI_Count find_seg(const io_view_t *v, MPI_Count r)
{
    MPI_Count lo = 0, hi = v->nsegs - 1;

    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (v->start[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void io_walk_init(io_walk_t *w, const io_view_t *v, MPI_Offset pos)
{
    w->v = v;
    if (v->fsize <= 0 || v->nsegs == 0) {
        w->tile = w->seg = w->off = 0;
        return;
    }
    w->tile = pos / v->fsize;
    w->seg = find_seg(v, pos % v->fsize);
    w->off = pos % v->fsize - v->start[w->seg];
}

MPI_Count io_walk_next(io_walk_t *w, MPI_Count max, MPI_Offset *off)
{
    const io_view_t *v = w->v;
    MPI_Count len;

    if (v->fsize <= 0 || v->nsegs == 0 || max <= 0)
        return 0;
    if (v->dense) {
        /* No holes: the whole request is one block. */
        MPI_Offset at = w->tile * (MPI_Offset)v->fsize + w->off;
        *off = v->disp + at;
        at += max;
        w->tile = at / v->fsize;
        w->off = at % v->fsize;
        return max;
    }
    len = v->segs[w->seg].len - w->off;
    if (len > max)
        len = max;
    *off =
        v->disp + w->tile * (MPI_Offset)v->fext + v->segs[w->seg].disp + w->off;
    w->off += len;
    if (w->off == v->segs[w->seg].len) {
        w->off = 0;
        if (++w->seg == v->nsegs) {
            w->seg = 0;
            w->tile++;
        }
    }
    return len;
}

MPI_Offset io_view_offset(const io_view_t *v, MPI_Offset pos)
{
    io_walk_t w;
    MPI_Offset off = v->disp;

    io_walk_init(&w, v, pos);
    io_walk_next(&w, 1, &off);
    return off;
}

void io_view_span(const io_view_t *v, MPI_Offset pos, MPI_Count bytes,
                  MPI_Offset *lo, MPI_Offset *hi)
{
    if (v->overlap) {
        /* Blocks go back: from the first block of the first tile to the
         * furthest end in the last (block starts never decrease). */
        *lo = v->disp + pos / v->fsize * (MPI_Offset)v->fext + v->segs[0].disp;
        *hi = v->disp + (pos + bytes - 1) / v->fsize * (MPI_Offset)v->fext +
              v->reach;
        return;
    }
    *lo = io_view_offset(v, pos);
    *hi = io_view_offset(v, pos + bytes - 1) + 1;
}

/* io_view_stream_before for a view whose blocks overlap: the first tile
 * reaching past off, and in it the first block that does. */
static MPI_Offset stream_before_overlap(const io_view_t *v, MPI_Offset off)
{
    MPI_Offset rel = off - v->disp, t;

    t = rel < v->reach ? 0 : (rel - v->reach) / v->fext + 1;
    rel -= t * v->fext;
    for (MPI_Count i = 0; i < v->nsegs; i++)
        if (v->segs[i].disp + (MPI_Offset)v->segs[i].len > rel)
            return t * v->fsize + v->start[i] +
                   (rel > v->segs[i].disp ? rel - v->segs[i].disp : 0);
    return (t + 1) * v->fsize; /* not reached */
}

MPI_Offset io_view_stream_before(const io_view_t *v, MPI_Offset off)
{
    MPI_Offset lo = 0, hi;

    if (off <= v->disp || v->fsize <= 0 || v->nsegs == 0)
        return 0;
    if (v->overlap)
        return stream_before_overlap(v, off);
    /* The offset of stream byte p grows with p: find the first p whose
     * byte lies at or after off. */
    hi = v->fsize;
    while (io_view_offset(v, hi) < off)
        hi *= 2;
    while (lo < hi) {
        MPI_Offset mid = lo + (hi - lo) / 2;
        if (io_view_offset(v, mid) < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- the calls -------------------------------------------------------------
 */

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                       MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
    const char *fn = "MPI_File_set_view", *why = NULL;
    int rc, lc = MPI_SUCCESS, rank, err = 0;
    long long agree[3], all[3];
    io_view_t nv;
    const io_rep_t *rep;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if ((rc = io_check_type(fh, etype, fn, "etype")) != MPI_SUCCESS ||
        (rc = io_check_type(fh, filetype, fn, "filetype")) != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(fh->comm, &rank);
    /* Local checks, agreed on below so that no rank is left waiting. */
    if (datarep == NULL) {
        lc = MPI_ERR_ARG;
        why = "datarep is NULL";
    } else if (io_rep_lookup(datarep, &rep) != 0) {
        lc = MPI_ERR_UNSUPPORTED_DATAREP;
        why = "unknown data representation (not \"native\", \"internal\" "
              "or \"external32\", and not registered with "
              "MPI_Register_datarep in this process)";
    } else if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO) {
        lc = MPI_ERR_INFO;
        why = "invalid info object";
    } else if (fh->split != 0) {
        lc = MPI_ERR_OTHER;
        why = "a split collective is in progress";
    } else if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(fh->amode & MPI_MODE_SEQUENTIAL)) {
            lc = MPI_ERR_ARG;
            why = "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL";
        }
    } else if (disp < 0) {
        lc = MPI_ERR_ARG;
        why = "disp is negative";
    }
    agree[0] = lc;
    agree[1] = etype->size;
    agree[2] = -etype->size;
    if ((rc = PMPI_Allreduce(agree, all, 3, MPI_LONG_LONG, MPI_MAX,
                             fh->comm)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (lc != MPI_SUCCESS)
        return io_error(fh, lc, fn, "%s", why);
    if (all[0] != MPI_SUCCESS)
        return io_error(fh, (int)all[0], fn,
                        "another rank's arguments were invalid");
    if (all[1] != -all[2])
        return io_error(fh, MPI_ERR_NOT_SAME, fn,
                        "the etype's size differs between the ranks");

    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* Sequential files: the view starts where the shared pointer is. */
        long long got[2] = {MPI_SUCCESS, 0};
        if (rank == 0) {
            MPI_Offset cur = 0;
            got[0] = io_shared_fetch_add(fh, 0, &cur, &err);
            got[1] = io_view_offset(&fh->view, cur);
        }
        if ((rc = PMPI_Bcast(got, 2, MPI_LONG_LONG, 0, fh->comm)) !=
            MPI_SUCCESS)
            return io_error(fh, rc, fn, "lost the other ranks");
        if (got[0] != MPI_SUCCESS)
            return io_error(fh, (int)got[0], fn,
                            "the shared file pointer of %s is not available",
                            fh->path);
        disp = got[1];
    }
    lc = io_view_build(&nv, disp, etype, filetype, datarep,
                       (fh->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0,
                       &why);
    agree[0] = lc;
    if ((rc = PMPI_Allreduce(agree, all, 1, MPI_LONG_LONG, MPI_MAX,
                             fh->comm)) != MPI_SUCCESS) {
        if (lc == MPI_SUCCESS)
            io_view_free(&nv);
        return io_error(fh, rc, fn, "lost the other ranks");
    }
    if (all[0] != MPI_SUCCESS) {
        if (lc == MPI_SUCCESS) {
            io_view_free(&nv);
            return io_error(fh, (int)all[0], fn,
                            "another rank's filetype was refused");
        }
        return io_error(fh, lc, fn, "%s", why);
    }
    if (info != MPI_INFO_NULL && (rc = io_hints_merge(fh, info)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "no memory for the hints");
    if ((rc = io_hints_apply(fh)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    io_view_free(&fh->view);
    fh->view = nv;
    if ((rc = io_ds_agree(fh)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    /* Both pointers go to the start of the new view. */
    fh->pos = 0;
    lc = MPI_SUCCESS;
    if (rank == 0 && fh->shfd >= 0)
        lc = io_shared_set(fh, 0, &err);
    if ((rc = PMPI_Bcast(&lc, 1, MPI_INT, 0, fh->comm)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (lc != MPI_SUCCESS)
        return io_error(fh, lc, fn, "resetting the shared pointer of %s: %s",
                        fh->path, err ? strerror(err) : "rank 0 failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_set_view)

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    const char *fn = "MPI_File_get_view";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (disp == NULL || etype == NULL || filetype == NULL || datarep == NULL)
        return io_error(fh, MPI_ERR_ARG, fn,
                        "disp, etype, filetype or datarep is NULL");
    *disp = fh->view.disp;
    /* Derived types come back as new handles the caller frees. */
    if (fh->view.etype->flags & MPI_DT_PREDEF)
        *etype = fh->view.etype;
    else if ((rc = PMPI_Type_dup(fh->view.etype, etype)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "could not copy the etype");
    if (fh->view.ftype->flags & MPI_DT_PREDEF) {
        *filetype = fh->view.ftype;
    } else if ((rc = PMPI_Type_dup(fh->view.ftype, filetype)) != MPI_SUCCESS) {
        if (!(fh->view.etype->flags & MPI_DT_PREDEF))
            PMPI_Type_free(etype);
        return io_error(fh, rc, fn, "could not copy the filetype");
    }
    strcpy(datarep, fh->view.datarep);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_view)

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
                              MPI_Aint *extent)
{
    const char *fn = "MPI_File_get_type_extent";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (datatype == NULL || datatype->magic != MPI_MAGIC_DT)
        return io_error(fh, MPI_ERR_TYPE, fn, "invalid datatype");
    if (extent == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "extent is NULL");
    /* "native" and "internal" store the memory layout, and so do other
     * representations for types whose sizes do not change; otherwise the
     * extent of the type's layout in the file (io_datarep.c). */
    *extent = datatype->extent;
    if (fh->view.rep != NULL) {
        int differs = 0;
        const char *why = "";
        io_layout_t l;
        if ((rc = io_rep_differs(fh->view.rep, datatype, &differs)) !=
            MPI_SUCCESS)
            return io_error(fh, rc, fn,
                            "the extent function of data representation "
                            "\"%s\" failed",
                            fh->view.datarep);
        if (differs) {
            if ((rc = io_rep_layout(fh->view.rep, datatype, &l, &why)) !=
                MPI_SUCCESS)
                return io_error(fh, rc, fn, "%s", why);
            *extent = l.ub - l.lb;
            io_layout_free(&l);
        }
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_type_extent)

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype,
                                MPI_Count *extent)
{
    MPI_Aint e = 0;
    int rc = PMPI_File_get_type_extent(fh, datatype, extent ? &e : NULL);

    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}
SHOAL_MPI_WEAK(File_get_type_extent_c)
