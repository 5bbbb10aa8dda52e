/*
 * Datatypes, private to the files of src/mpi/dt.
 *
 * A datatype's layout is flattened once, when it is constructed: `segs`
 * lists the memory blocks of one element (adjacent blocks merged) and the
 * runs list its basic elements in typemap order (consecutive elements of
 * one basic type merged), which is what element counting and external32
 * need.  Both live in a dt_map_t shared by a type and its duplicates and
 * resized copies, since resizing moves no data.
 *
 * Bounds follow the standard's typemap definition: lb and ub markers
 * (MPI_LB, MPI_UB, MPI_Type_create_resized, subarray, darray) are sticky;
 * without an ub marker the upper bound is the end of the last entry
 * rounded up to the largest alignment of the entries.
 */
#ifndef SHOAL_MPI_DT_H
#define SHOAL_MPI_DT_H

#include "mpi/mpi_impl.h"

/*
 * Errors raised by calls that have no communicator argument.  MPI 4.0
 * raises them on MPI_COMM_SELF; Shoal's MPI layer uses MPI_COMM_WORLD for
 * now, decided here only.
 */
#define DT_ERR_COMM MPI_COMM_WORLD

/* Marker bits: the type's lb / ub come from lb / ub markers. */
#define DT_MARK_LB 0x1u
#define DT_MARK_UB 0x2u

/* n basic elements of one basic type, consecutive in the packed stream. */
typedef struct dt_run {
    int basic; /* predefined index; never a pair type */
    MPI_Count n;
    MPI_Count bytes_before; /* stream bytes of one element before it */
    MPI_Count elems_before; /* basic elements of one element before it */
} dt_run_t;

typedef struct dt_map {
    int refs; /* owners; static maps have no owner count */
    int is_static;
    mpi_dt_seg_t *segs;
    MPI_Count nsegs;
    MPI_Count *seg_end; /* stream offset at the end of segs[i] */
    dt_run_t *runs;
    MPI_Count nruns;
    MPI_Count ext32_size; /* bytes of one element in external32 */
} dt_map_t;

/* A derived datatype: the public object plus what predefined types derive
 * from their index. */
typedef struct dt_obj {
    struct shoal_mpi_datatype pub; /* first: MPI_Datatype points here */
    unsigned marks;                /* DT_MARK_* */
    int align;                     /* largest alignment of the entries */
    int user_freed;                /* MPI_Type_free was called */
    /* Contents of a type built by a _c constructor with arguments an int
     * cannot hold, in the standard's large-count layout (the integer
     * arguments that fit stay in pub.ints); > 0: the envelope and contents
     * need the _c queries. */
    MPI_Count *big;
    MPI_Count nbig;
} dt_obj_t;

/* ---- predefined types (dt_predef.c) -----------------------------------
 */

/* How external32 encodes a basic type. */
enum dt_kind {
    DT_KIND_NONE = 0, /* markers and pairs: never a run */
    DT_KIND_BYTES,    /* copied as is (1-byte types) */
    DT_KIND_SINT,     /* signed integer, big-endian two's complement */
    DT_KIND_UINT,     /* unsigned integer, big-endian */
    DT_KIND_FLOAT,    /* IEEE binary32/64, big-endian */
    DT_KIND_LDOUBLE,  /* long double as IEEE binary128, big-endian */
    DT_KIND_COMPLEX   /* two parts of the component type `part` */
};

typedef struct dt_basic_info {
    int kind;
    int native; /* bytes in memory */
    int ext;    /* bytes in external32 */
    int align;
    int part; /* complex: predefined index of each part */
} dt_basic_info_t;

extern const dt_basic_info_t dt_basic[SHOAL_MPI_NPREDEF_TYPES];

static inline int dt_is_predef(MPI_Datatype dt)
{
    return (dt->flags & MPI_DT_PREDEF) != 0;
}

static inline int dt_index(MPI_Datatype dt)
{
    return (int)(dt - shoal_mpi_dt_predef);
}

static inline unsigned dt_marks(MPI_Datatype dt)
{
    if (dt_is_predef(dt))
        return dt == MPI_LB ? DT_MARK_LB : dt == MPI_UB ? DT_MARK_UB : 0u;
    return ((const dt_obj_t *)dt)->marks;
}

static inline int dt_align(MPI_Datatype dt)
{
    if (dt_is_predef(dt))
        return dt_basic[dt_index(dt)].align;
    return ((const dt_obj_t *)dt)->align;
}

static inline dt_map_t *dt_map(MPI_Datatype dt)
{
    return (dt_map_t *)dt->typemap;
}

/* buf + off without pointer arithmetic on NULL (MPI_BOTTOM). */
static inline char *dt_addr(const void *buf, MPI_Aint off)
{
    return (char *)(uintptr_t)((uintptr_t)buf + (uintptr_t)off);
}

/* ---- objects (dt_obj.c)
 * --------------------------------------------------- */

/* Is dt a live datatype handle? */
static inline int dt_ok(MPI_Datatype dt)
{
    return dt != NULL && dt->magic == MPI_MAGIC_DT;
}

/* Report a bad datatype argument (NULL, freed, not a datatype) named what. */
int dt_check_handle(MPI_Comm comm, MPI_Datatype dt, const char *fn,
                    const char *what);

dt_obj_t *dt_obj_alloc(int combiner);
/* Free a type nobody references any more (contents, map, memory). */
void dt_obj_destroy(dt_obj_t *o);
void dt_map_release(dt_map_t *m);

/* Record the constructor's arguments for MPI_Type_get_contents; takes a
 * reference on each derived type.  MPI_ERR_NO_MEM on failure. */
/* The large counts of o's contents (copied). */
int dt_set_big(dt_obj_t *o, MPI_Count n, const MPI_Count *vals);
int dt_set_contents(dt_obj_t *o, int nints, const int *ints, int naddrs,
                    const MPI_Aint *addrs, int ntypes,
                    const MPI_Datatype *types);

/* A new object sharing t's layout, bounds and flags (not PREDEF); the
 * caller sets the combiner's contents.  NULL when out of memory. */
dt_obj_t *dt_clone_layout(MPI_Datatype t, int combiner);

/* Set MPI_DT_CONTIG from the layout. */
void dt_set_contig(struct shoal_mpi_datatype *t);

/* ---- building layouts (dt_build.c)
 * --------------------------------------- */

typedef struct dt_builder {
    int status;      /* MPI_SUCCESS or the first failure's class */
    const char *why; /* failure detail */
    int any_entry, basic;
    unsigned marks;
    int align;
    MPI_Aint tlb, tub; /* entries' bounds */
    MPI_Aint mlb, mub; /* markers' bounds */
    MPI_Count size, nelems;
    mpi_dt_seg_t *segs;
    MPI_Count nsegs, capsegs;
    dt_run_t *runs;
    MPI_Count nruns, capruns;
} dt_builder_t;

void dt_builder_init(dt_builder_t *b);
/* Append count copies of type placed at disp, disp + extent, ... */
void dt_builder_add(dt_builder_t *b, MPI_Datatype type, MPI_Aint disp,
                    MPI_Count count);
/* Override the bounds with markers at lb and lb + extent (resized). */
void dt_builder_resize(dt_builder_t *b, MPI_Aint lb, MPI_Aint extent);
/* Finish into o (bounds, size, map, flags); frees the builder's arrays.
 * Returns MPI_SUCCESS or the error class (b->why says why). */
int dt_builder_finish(dt_builder_t *b, dt_obj_t *o);
void dt_builder_drop(dt_builder_t *b);

/* a * b + c in MPI_Aint, or 0 with *ovf set. */
static inline MPI_Aint dt_muladd(MPI_Aint a, MPI_Aint b, MPI_Aint c, int *ovf)
{
    MPI_Aint r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}

/* ---- constructors (dt_create.c)
 * -------------------------------------------- */

/* A type under construction: its object (contents recorded) and builder. */
typedef struct dt_new {
    dt_obj_t *o;
    dt_builder_t b;
} dt_new_t;

/* Start a type of combiner with the constructor's arguments as contents;
 * MPI_SUCCESS, or the error reported for fn. */
int dt_new_begin(const char *fn, int combiner, int nints, const int *ints,
                 int naddrs, const MPI_Aint *addrs, int ntypes,
                 const MPI_Datatype *types, dt_new_t *n);
/* Finish the layout and hand the type out, or free it and report. */
int dt_new_end(const char *fn, dt_new_t *n, MPI_Datatype *newtype);

/* Argument checks shared by the constructors (report through mpi_error). */
int dt_check_count(const char *fn, MPI_Count count, const char *what);
int dt_check_ptr(const char *fn, const void *p, MPI_Count n, const char *what);

/* ---- external32 (dt_external.c)
 * ------------------------------------------ */

/* Encode / decode n items of basic type `basic` between native and external32.
 * Encoding stops at the first value external32 cannot hold (a long beyond
 * 32 bits) and returns how many items it encoded: n when all fit. */
MPI_Count dt_ext_encode(int basic, const void *native, void *ext, MPI_Count n);
void dt_ext_decode(int basic, const void *ext, void *native, MPI_Count n);

#endif /* SHOAL_MPI_DT_H */
