/* Conformance generator: shared declarations.
 *
 * Written against the standard mpi.h only, so that the same program builds
 * with shoalcc, mpicc.mpich and mpicc.openmpi and runs under each one's
 * launcher.  See conform.c for the case loop and docs/TESTING.md for how to
 * run it. */
#ifndef CONFORM_H
#define CONFORM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- random numbers: every rank draws the same sequence from the seed ---- */
typedef struct { uint64_t s; } rng_t;
uint64_t rng_next(rng_t *r);
uint64_t rng_below(rng_t *r, uint64_t n);          /* 0 .. n-1 (n > 0) */
int rng_range(rng_t *r, int lo, int hi);           /* lo .. hi inclusive */
int rng_chance(rng_t *r, int percent);
rng_t rng_derive(uint64_t a, uint64_t b);
void rng_shuffle(rng_t *r, int *v, int n);

/* ---- datatype model ------------------------------------------------------
 * Every generated datatype is built twice: as an MPI datatype and as our own
 * model of its type map (the byte segments of one element in type-map
 * order, its lb/ub and true lb/ub).  The model packs and unpacks reference
 * data, so every received byte and every gap byte can be checked. */
typedef struct {
    MPI_Aint off;
    MPI_Aint len;
    int esz;                  /* size of the basic type in this segment */
} seg_t;

typedef struct tmodel {
    MPI_Datatype dt;
    int owned;                /* dt was created here: free it */
    seg_t *segs;
    size_t nsegs, capsegs;
    MPI_Aint lb, ub;          /* extent = ub - lb */
    MPI_Aint tlb, tub;        /* true lb, true ub */
    MPI_Aint size;            /* bytes of data in one element */
    MPI_Aint nelem;           /* basic elements in one element */
    MPI_Datatype basic;       /* the one basic type, or MPI_DATATYPE_NULL if mixed */
    int bsize;                /* its size (largest basic size if mixed) */
    int marked;               /* lb/ub set explicitly (resized, subarray, darray) */
    int has_darray;
    char *desc;
} tmodel;

static inline MPI_Aint tm_extent(const tmodel *t) { return t->ub - t->lb; }

tmodel *tm_basic(MPI_Datatype dt);
/* A random datatype over `basic` (or mixed basic types when allow_mixed),
 * with up to `depth` levels of constructors.  Committed. */
tmodel *tm_generate(rng_t *r, MPI_Datatype basic, int depth, int allow_mixed);
void tm_free(tmodel *t);
const char *basic_name(MPI_Datatype dt);
MPI_Datatype random_basic(rng_t *r);

/* Memory a buffer of `count` elements touches, relative to its base. */
void tm_span(const tmodel *t, MPI_Aint count, MPI_Aint *lo, MPI_Aint *hi);
/* 1 when `count` elements of t touch some byte twice. */
int tm_overlaps(const tmodel *t, MPI_Aint count);

/* ---- buffers ------------------------------------------------------------- */
#define SENTINEL 0xA5
#define GUARD 64
typedef struct {
    unsigned char *alloc;
    size_t len;
    unsigned char *base;      /* what is passed to MPI */
} buf_t;

/* A buffer for count elements of t, filled with SENTINEL, GUARD bytes of
 * sentinel on both sides. */
void buf_for(buf_t *b, const tmodel *t, MPI_Aint count);
void buf_span(buf_t *b, MPI_Aint lo, MPI_Aint hi);
void buf_free(buf_t *b);
void buf_clone(buf_t *dst, const buf_t *src);   /* same geometry and contents */
void buf_reset(buf_t *b);                       /* all SENTINEL */

/* Writes `nbytes` bytes of stream `key` into the layout of t starting at
 * element `first` of the buffer at `base`. */
void put_stream(unsigned char *base, const tmodel *t, MPI_Aint first,
                MPI_Aint nbytes, uint64_t key);
/* Compares actual with reference; on a difference reports it (what: which
 * buffer) and returns 1. */
int buf_check(const buf_t *actual, const buf_t *ref, const char *what);

/* ---- the current case, failures ----------------------------------------- */
extern int g_rank, g_size;
extern uint64_t g_seed;
extern long g_case;
extern int g_same_host;
extern int g_thread_level;
/* Known bugs of a peer library, worked around so its runs stay a check of
 * the cases (see docs/TESTING.md): set for MPICH 4.0.x. */
extern int g_quirk_mpich40;
extern int g_quirk_ompi4;     /* Open MPI 4.x */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mpi_fail(const char *call, int rc, const char *file, int line);
#define CHK(call) do { int rc_ = (call); \
    if (rc_ != MPI_SUCCESS) mpi_fail(#call, rc_, __FILE__, __LINE__); } while (0)
void add_bytes(double bytes);                     /* for the case's time budget */
void add_sleep(double seconds);
double now(void);
void sleep_ms(int ms);
/* The generator's own work (filling and checking buffers, building
 * references) is not MPI's: it is timed apart and added to the case's
 * budget.  Nested calls count once. */
void local_enter(void);
void local_leave(void);
/* A call that must be local (a nonblocking start, a buffered send, MPI_Start)
 * made while a peer sleeps `slept` seconds outside MPI: fails the case
 * naming `call` when it took more than a quarter of the sleep.  t0: now()
 * before the call. */
void check_local_call(const char *call, double t0, double slept);
#define TIMED_LOCAL(name, slept, call) do { double t0_ = now(); CHK(call); \
    check_local_call(name, t0_, slept); } while (0)

/* Description of the case, appended to as it is generated. */
void desc_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Status checks shared by point-to-point and the special scenarios. */
#define ERR_SENTINEL 0x5eed
void status_init(MPI_Status *st);
/* source/tag: expected values (-1: do not check); nbytes: bytes received
 * into rt. */
void check_status(const MPI_Status *st, int source, int tag, const tmodel *rt,
                  MPI_Aint nbytes, int check_error, const char *what);
/* Whether this MPI has the MPI 4.0 persistent collectives. */
#if MPI_VERSION >= 4
#define HAVE_MPI4 1
#else
#define HAVE_MPI4 0
#endif
/* Set in threaded cases: no MPI_Buffer_attach (one buffer per process). */
extern _Thread_local int t_no_bsend;
extern _Thread_local int t_thread;

/* ---- communicators ------------------------------------------------------- */
typedef struct {
    MPI_Comm comm;
    int inter;
    int rank, size;           /* local */
    int rsize;                /* remote size (inter) */
    int group;                /* 0 or 1 for intercommunicators */
    int owned;
    char desc[400];
} ccomm_t;

void comm_make(ccomm_t *c, rng_t *r, int kind);
void comm_release(ccomm_t *c);
enum { CK_WORLD, CK_DUP, CK_SPLIT, CK_INTER, CK_IDUP, CK_NKINDS };

/* ---- operations ---------------------------------------------------------- */
/* Point-to-point: one operation with its checks, on c. */
void p2p_case(rng_t *r, ccomm_t *c, int allow_sleep);
/* Collectives. */
enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT };
typedef struct cop cop_t;
cop_t *cop_new(rng_t *r, ccomm_t *c, int form, int small);
void cop_fill(cop_t *o, int it);
void cop_start(cop_t *o, int it);     /* blocking: the whole call */
MPI_Request *cop_request(cop_t *o);
void cop_verify(cop_t *o, int it);
int cop_iters(const cop_t *o);
int cop_form(const cop_t *o);
/* now() when the last cop_start's MPI call began (after any deliberate sleep). */
double cop_call_time(const cop_t *o);
const char *cop_name(const cop_t *o);   /* "MPI_Ibcast", "MPI_Start of allreduce" */
void cop_free(cop_t *o);
void complete_one(rng_t *r, MPI_Request *req);
/* A whole collective (drawn form) on c, all iterations, verified. */
void run_cop_whole(rng_t *r, ccomm_t *c, int small);
int random_comm_kind(rng_t *r);
void comm_fill_info(ccomm_t *c);
void coll_global_init(void);   /* user ops and types, once */
void coll_global_fini(void);

/* Scenarios aimed at known kinds of bug (stress.c): large noncontiguous
 * messages into untouched memory, local calls made while a peer sleeps,
 * idups of intercommunicators with traffic between them. */
void scenario_bigtype(rng_t *r);
void scenario_sleeper(rng_t *r);
void scenario_idup_traffic(rng_t *r);
/* How long the sleeping peer of those scenarios sleeps (seconds). */
#define PEER_SLEEP 0.15

/* A model for a datatype the caller built: one element's segments
 * (type-map order), its bounds; takes ownership of dt (committed here). */
tmodel *tm_custom(MPI_Datatype dt, const seg_t *segs, size_t nsegs, MPI_Aint lb, MPI_Aint ub,
                  MPI_Datatype basic, const char *desc);
/* Checks that the buffer at base holds stream `key` (nbytes bytes in t's
 * layout); zeroes every data byte it checked.  Returns the stream index of
 * the first wrong byte, or -1. */
MPI_Aint check_stream_zero(unsigned char *base, const tmodel *t, MPI_Aint nbytes, uint64_t key);

/* Count draw: weighted towards small, some up to several MiB of data. */
MPI_Aint draw_bytes(rng_t *r, MPI_Aint cap);

#endif
