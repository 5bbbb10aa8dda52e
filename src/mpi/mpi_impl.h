/*
 * mpi: MPI semantics on top of the active-message engine.
 *
 * This header is the contract between the files of src/mpi/: the layout of
 * every handle's object, the error path, the datatype engine's interface
 * (used by point-to-point and collectives to move non-contiguous data), the
 * internal point-to-point calls collectives and communicator construction
 * are built on, and the lock that makes MPI_THREAD_MULTIPLE safe.
 *
 * Who owns what: one room per chapter group, one idea per file.
 *   core/   init.c (Init/Finalize, the global state `mpi`), error.c and
 *           errhandler.c (classes, strings, handlers; mpi_error()),
 *           request.c (waits and tests), status.c, info.c,
 *           handle_f2c.c (Fortran handles), progress_thread.c
 *   p2p/    p2p_engine.c (matching, eager and rendezvous protocols),
 *           p2p_api.c (the calls), p2p_bsend.c (buffered sends)
 *   dt/     dt_*.c: constructors, layout builder, engine, pack, external32
 *   comm/   group_*.c, comm_*.c (construction, context ids), attr.c,
 *           topo_*.c
 *   coll/   coll_api_*.c (the calls), coll_forms.c (nonblocking and
 *           persistent forms), coll_transport.c (glue to src/coll/),
 *           op.c (reduction ops), coll_tolerant.c (Pakin's barrier)
 *
 * Every public function is defined as PMPI_X and aliased weakly as MPI_X
 * with SHOAL_MPI_WEAK(X).  Internal callers use PMPI_X or mpi_* functions,
 * never MPI_X, so a profiling tool sees each user call exactly once.
 */
#ifndef SHOAL_MPI_IMPL_H
#define SHOAL_MPI_IMPL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/uio.h>

#define SHOAL_MPI_INTERNAL 1
#include "mpi.h"
#include "shoal.h"

#include "base/base.h"
#include "base/base_list.h"

/* Make MPI_name a weak alias of PMPI_name (put after the definition).  An
 * alias attribute, not `#pragma weak`: clang ignores the pragma for a name
 * mpi.h already declared. */
#define SHOAL_MPI_WEAK(name)                                                 \
    extern __typeof__(PMPI_##name) MPI_##name                                \
        __attribute__((weak, alias("PMPI_" #name)));

/* Object kinds, checked on every handle a caller passes in. */
#define MPI_MAGIC_COMM 0x436f6d6du  /* "Comm" */
#define MPI_MAGIC_GROUP 0x47727075u /* "Grpu" */
#define MPI_MAGIC_DT 0x44747970u    /* "Dtyp" */
#define MPI_MAGIC_REQ 0x52657175u   /* "Requ" */
#define MPI_MAGIC_OP 0x4f706572u    /* "Oper" */
#define MPI_MAGIC_ERRH 0x45727268u  /* "Errh" */
#define MPI_MAGIC_INFO 0x496e666fu  /* "Info" */
/* The highest error class MPI (and ULFM, and MPI_T) defines. */
#define MPI_LAST_PREDEF_CLASS MPI_T_ERR_INVALID_NAME
#define MPI_MAGIC_SESSION 0x53657373u /* "Sess" */
#define MPI_MAGIC_DEAD 0xdeadbeefu  /* freed objects get this */

/* ---- global state (init.c) ------------------------------------------- */

typedef struct mpi_state {
    int initialized, finalized; /* MPI_Init and MPI_Finalize (the world
                                   model) have run */
    int up;              /* the library runs: from MPI_Init or the first
                            MPI_Session_init to its end (init.c) */
    int sessions;        /* MPI_Session_init's not finalized yet */
    int thread_level;    /* provided */
    int mt;              /* 1 when THREAD_MULTIPLE: take `lock` */
    pthread_t main_thread;
    pthread_mutex_t lock;
    int world_rank, world_size;
    shoal_ep_t *ep;       /* the endpoint MPI traffic uses */
    int in_wait;          /* inside a wait's progress callback: no
                             blocking sends (they would nest waits) */
    double wtime_base;
    char processor_name[MPI_MAX_PROCESSOR_NAME];
} mpi_state_t;

extern mpi_state_t mpi;

/* The engine lock: taken by point-to-point primitives and progress only. */
static inline void mpi_lock(void)
{
    if (BASE_UNLIKELY(mpi.mt))
        pthread_mutex_lock(&mpi.lock);
}
static inline void mpi_unlock(void)
{
    if (BASE_UNLIKELY(mpi.mt))
        pthread_mutex_unlock(&mpi.lock);
}

/* Reference counts: atomic only when several threads may call MPI. */
static inline void mpi_ref_inc(int *refs)
{
    if (BASE_UNLIKELY(mpi.mt))
        __atomic_add_fetch(refs, 1, __ATOMIC_RELAXED);
    else
        ++*refs;
}
static inline int mpi_ref_dec(int *refs) /* the count left */
{
    if (BASE_UNLIKELY(mpi.mt))
        return __atomic_sub_fetch(refs, 1, __ATOMIC_ACQ_REL);
    return --*refs;
}

/* Objects that are not the engine's (handle tables, keyvals, error
 * strings) are guarded by this lock; never held while waiting. */
extern pthread_mutex_t mpi_obj_lock;

/* ---- errors (error.c) --------------------------------------------------- */

/*
 * Report an error from MPI function fn: format a detail message, run the
 * error handler of comm (MPI_COMM_WORLD's when comm is NULL or invalid),
 * and return the code to hand back to the caller.  errclass is an MPI error
 * class or a code from MPI_Add_error_code.
 */
int mpi_error(MPI_Comm comm, int errclass, const char *fn, const char *fmt,
              ...) BASE_PRINTF(4, 5);

/* The MPI class for a Shoal status (SHOAL_ERR_PEER_DEAD -> MPI_ERR_PROC_ABORTED...). */
int mpi_class_of_status(int shoal_status);

/* Called first by every public function before Init or after Finalize:
 * ends the process with a message (the initial error handler,
 * MPI_ERRORS_ARE_FATAL).  mpi_fatal_outside does the same for a failed
 * MPI_Init. */
BASE_NORETURN int mpi_check_init(const char *fn);

/* The library's life (init.c): up at MPI_Init or the first
 * MPI_Session_init (a later one may only raise the thread level), down
 * when neither the world model nor a session needs it. */
void mpi_runtime_up(int required, const char *fn);
int mpi_runtime_down(const char *fn);
BASE_NORETURN void mpi_fatal_outside(const char *fn, const char *fmt, ...)
    BASE_PRINTF(2, 3);
#define MPI_CHECK_INIT(fn)                                                   \
    do {                                                                     \
        if (BASE_UNLIKELY(!mpi.up))                                          \
            return mpi_check_init(fn);                                       \
    } while (0)

struct shoal_mpi_errhandler {
    union {
        struct {
            uint32_t magic;
            int refs;
            int kind; /* 1 fatal, 2 return, 3 abort, 4 user comm function,
                         5 user file function (src/io), 6 user session
                         function (session.c) */
            MPI_Comm_errhandler_function *fn;
            MPI_File_errhandler_function *file_fn;
            MPI_Session_errhandler_function *session_fn;
        };
        char shoal_stride_[SHOAL_MPI_ERRH_STRIDE];
    };
};
_Static_assert(sizeof(struct shoal_mpi_errhandler) == SHOAL_MPI_ERRH_STRIDE,
               "predefined error handlers are array elements of this size");
SHOAL_MPI_API extern struct shoal_mpi_errhandler
    shoal_mpi_errh_predef[SHOAL_MPI_ERRH_SLOTS];

/* Error handler references held by communicators and files; predefined
 * handlers are never freed (errhandler.c). */
void mpi_errh_retain(MPI_Errhandler eh);
/* A new user error handler of kind (4 comm, 5 file, 6 session) with one
 * reference, its function still to set; NULL when out of memory. */
MPI_Errhandler mpi_errh_new(int kind);
void mpi_errh_release(MPI_Errhandler eh);

/*
 * For objects whose handlers are not a communicator's (files, src/io):
 * record the detail of an error of fn as mpi_error does, so that
 * MPI_Error_string of the code appends it; and end the job as the
 * predefined fatal (abort = 0) or abort (abort = 1) handler does.
 */
BASE_PRINTF(3, 0)
void mpi_error_record(int errclass, const char *fn, const char *fmt,
                      va_list ap);
BASE_NORETURN void mpi_error_die(int errclass, int abort);

/* Run error handler eh (MPI_ERRORS_ARE_FATAL when NULL) for an error of
 * fn on obj (the MPI_Comm or MPI_Session its function gets): for calls
 * whose handler is not a communicator's (sessions, and the constructors
 * that take one, MPI_Comm_create_from_group).  Returns errclass. */
int mpi_error_raise(MPI_Errhandler eh, void *obj, int errclass,
                    const char *fn, const char *fmt, ...) BASE_PRINTF(5, 6);

/* ---- info (info.c) ------------------------------------------------------ */

struct shoal_mpi_info {
    uint32_t magic;
    int refs;
    int nkeys, cap;
    char **keys, **vals;
};

/* Value of key in info (NULL when absent or info is MPI_INFO_NULL). */
const char *mpi_info_lookup(MPI_Info info, const char *key);

/* ---- attributes (attr.c) ------------------------------------------------ */

typedef struct mpi_attr {
    struct mpi_attr *next;
    int keyval;
    void *val;
} mpi_attr_t;

/* Object kinds for keyvals. */
#define MPI_ATTR_COMM 1
#define MPI_ATTR_TYPE 2

/* Copy every attribute of `from` (an object of kind) by its copy callback;
 * delete all of `obj`'s attributes by their delete callbacks. */
int mpi_attr_copy_all(int kind, void *from_obj, mpi_attr_t *from,
                      mpi_attr_t **to);
int mpi_attr_delete_all(int kind, void *obj, mpi_attr_t **list);

/* ---- groups (group_api.c) --------------------------------------------------- */

struct shoal_mpi_group {
    uint32_t magic;
    int refs;
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *world; /* world rank of each member */
};

/* A new group of n members (world ranks copied); refs = 1. */
int mpi_group_new(int n, const int *world, MPI_Group *group_p);
void mpi_group_release(MPI_Group g); /* drop a reference; frees at 0 */

/* ---- communicators (comm/) -------------------------------------------- */

typedef struct mpi_matchq mpi_matchq_t;
struct mpi_topo;

struct shoal_mpi_comm {
    uint32_t magic;
    int refs;       /* user handle + pending operations */
    int revoked;    /* MPIX_Comm_revoke reached this process (FT) */
    uint32_t ctx;   /* point-to-point context; ctx + 1 carries collectives */
    int rank, size; /* in the local group */
    int is_inter;
    int remote_size;        /* = size for intracommunicators */
    MPI_Group group;        /* local group */
    MPI_Group remote_group; /* intercommunicators; else = group */
    const int *peer_world;  /* world rank of each destination rank */
    mpi_matchq_t *mq, *cq;  /* match queues of ctx and ctx + 1 */
    MPI_Errhandler errh;
    MPI_Info info;
    mpi_attr_t *attrs;
    struct mpi_topo *topo;
    void *coll; /* the collective layer's state for this comm */
    uint32_t next_child; /* collective calls that create comms, counted */
    uint32_t tol_seq;    /* tolerant barriers started on this communicator */
    uint16_t ep; /* digest of the epoch agreed with ctx (mpi_ep_of), which
                    every message on it carries: computed once, here */
    struct mpi_ft_comm *ft; /* agreement state (core/ft_agree.c), or NULL */
    char name[MPI_MAX_OBJECT_NAME];
};

/* Is comm a live communicator?  (NULL, freed and foreign pointers: no.) */
static inline int mpi_comm_ok(MPI_Comm comm)
{
    return comm != NULL && comm->magic == MPI_MAGIC_COMM;
}

/*
 * Build a communicator over group (and remote_group for intercomms) with
 * context ctx: sets up matching queues, peer table, error handler
 * (inherited from parent), refs = 1.  ctx must be agreed by all members.
 */
int mpi_comm_build(MPI_Comm parent, MPI_Group group, MPI_Group remote_group,
                   uint32_t ctx, MPI_Comm *comm_p);
/* Drop a reference; frees (and releases ctx and queues) at 0. */
void mpi_comm_release(MPI_Comm comm);

/*
 * Agree on a fresh context id among the members of `parent` listed in
 * `members` (comm ranks of parent, in order; NULL means all), collectively
 * over those members.  tag separates concurrent agreements (Comm_create_group).
 */
int mpi_ctx_alloc(MPI_Comm parent, int nmembers, const int *members, int tag,
                  uint32_t *ctx_p);
void mpi_ctx_free(uint32_t ctx);

/* ---- datatypes (dt/) --------------------------------------------------- */

/* flags of a datatype */
#define MPI_DT_PREDEF 0x1u    /* predefined: never freed */
#define MPI_DT_COMMITTED 0x2u
#define MPI_DT_CONTIG 0x4u    /* one element is one block, no gaps; and
                                 count elements are one block (size==extent) */
#define MPI_DT_PAIR 0x8u      /* MPI_FLOAT_INT and friends */

/* One contiguous block of one element: displacement from the buffer. */
typedef struct mpi_dt_seg {
    MPI_Aint disp;
    MPI_Count len;
} mpi_dt_seg_t;

struct shoal_mpi_datatype {
    union {
        struct {
            uint32_t magic;
            int refs;
            unsigned flags;
            int combiner;
            int basic;       /* predefined index of the one basic type every basic
                                element has (reductions), or 0 when mixed */
            MPI_Count size;  /* bytes of data in one element */
            MPI_Aint lb, extent, true_lb, true_extent;
            MPI_Count nelems; /* basic elements in one element */
            mpi_dt_seg_t *segs; /* blocks of one element, in typemap order */
            MPI_Count nsegs;
            void *typemap;      /* the engine's private description (elements) */
            /* MPI_Type_get_contents */
            int nints, naddrs, ntypes;
            int *ints;
            MPI_Aint *addrs;
            MPI_Datatype *types;
            mpi_attr_t *attrs;
            char name[MPI_MAX_OBJECT_NAME];
        };
        char shoal_stride_[SHOAL_MPI_DT_STRIDE];
    };
};
_Static_assert(sizeof(struct shoal_mpi_datatype) == SHOAL_MPI_DT_STRIDE,
               "predefined datatypes are array elements of this size");
_Static_assert(SHOAL_MPI_NPREDEF_TYPES <= SHOAL_MPI_DT_SLOTS,
               "more predefined datatypes than SHOAL_MPI_DT_SLOTS");
SHOAL_MPI_API extern struct shoal_mpi_datatype
    shoal_mpi_dt_predef[SHOAL_MPI_DT_SLOTS];

/* Check a datatype handle for use in communication: not NULL, a datatype,
 * committed.  Returns MPI_SUCCESS or reports through mpi_error. */
int mpi_dt_check(MPI_Comm comm, MPI_Datatype dt, const char *fn);

static inline int mpi_dt_contig(MPI_Datatype dt)
{
    return (dt->flags & MPI_DT_CONTIG) != 0;
}

void mpi_dt_retain(MPI_Datatype dt);  /* pending operations keep types */
void mpi_dt_release(MPI_Datatype dt); /* frees a type freed by the user */

/*
 * A position in the packed byte stream of (buf, count, dt).  pack copies
 * the next bytes of the stream out, unpack writes them in, iov describes
 * them as memory blocks; all three advance the cursor and return how many
 * bytes they covered (less than asked only at the end of the stream).
 */
typedef struct mpi_dt_cursor {
    MPI_Datatype dt;
    char *buf;
    MPI_Count count;  /* elements */
    MPI_Count elem;   /* current element */
    MPI_Count seg;    /* current block of that element */
    MPI_Count off;    /* bytes done in that block */
    MPI_Count done, total; /* stream bytes done, in all */
} mpi_dt_cursor_t;

void mpi_dt_cursor_init(mpi_dt_cursor_t *c, MPI_Datatype dt, MPI_Count count,
                        const void *buf, MPI_Count skip);
MPI_Count mpi_dt_cursor_pack(mpi_dt_cursor_t *c, void *out, MPI_Count n);
MPI_Count mpi_dt_cursor_unpack(mpi_dt_cursor_t *c, const void *in,
                               MPI_Count n);
/* Up to max blocks covering at most n bytes; *niov_p = blocks used. */
MPI_Count mpi_dt_cursor_iov(mpi_dt_cursor_t *c, struct iovec *iov, int max,
                            MPI_Count n, int *niov_p);

/* Basic elements in the first `bytes` bytes of a stream of dt. */
MPI_Count mpi_dt_elements(MPI_Datatype dt, MPI_Count bytes);

/*
 * How the typemap of one element of dt is ordered, worst first: a negative
 * displacement, a basic element starting before the one listed before it,
 * or elements overlapping (nondecreasing but not disjoint: a repeated
 * displacement, say).  MPI 4.0 section 14.1 wants etypes and filetypes
 * nonnegative and nondecreasing, and section 14.3 also disjoint in files
 * opened for writing.
 */
enum {
    MPI_DT_ORDER_OK = 0,
    MPI_DT_ORDER_OVERLAP,
    MPI_DT_ORDER_DECREASE,
    MPI_DT_ORDER_NEGATIVE
};
int mpi_dt_order(MPI_Datatype dt);
/* The same for blocks segs[0, n) of one element of dt, or, without dt
 * (NULL), of a layout whose elements are not known: then a block's first
 * element is taken to start where it does, its last to fill it. */
int mpi_dt_blocks_order(const mpi_dt_seg_t *segs, MPI_Count n,
                        MPI_Datatype dt);

/* The large counts of a type built by a _c constructor with arguments an
 * int cannot hold (MPI_Type_get_contents_c's array_of_large_counts; then
 * the arguments that stay ints are in dt->ints), *n of them; NULL and 0
 * for every other type. */
const MPI_Count *mpi_dt_large_counts(MPI_Datatype dt, MPI_Count *n);

/* Copy count elements of dt from src to dst (local copy, both layouts dt). */
void mpi_dt_copy(MPI_Datatype dt, MPI_Count count, const void *src,
                 void *dst);

/* external32 for files (dt_external.c; src/io): bytes of one element in
 * external32; count elements of (buf, dt) encoded into out (MPI_SUCCESS,
 * or MPI_ERR_CONVERSION for a value external32 cannot hold, not
 * reported); and decoded back. */
MPI_Count mpi_dt_ext32_size(MPI_Datatype dt);
int mpi_dt_ext32_pack(const void *buf, MPI_Count count, MPI_Datatype dt,
                      void *out);
void mpi_dt_ext32_unpack(const void *in, void *buf, MPI_Count count,
                         MPI_Datatype dt);

/* The predefined type of index i (1..SHOAL_MPI_NPREDEF_TYPES-1). */
#define MPI_DT_PREDEF_AT(i) (&shoal_mpi_dt_predef[(i)])

/* ---- operations (op.c) ------------------------------------------------------ */

struct shoal_mpi_op {
    union {
        struct {
            uint32_t magic;
            int refs;
            int predef;  /* index in shoal_mpi_op_predef, or 0 for user ops */
            int commute;
            MPI_User_function *fn;
            MPI_User_function_c *fn_c;
        };
        char shoal_stride_[SHOAL_MPI_OP_STRIDE];
    };
};
_Static_assert(sizeof(struct shoal_mpi_op) == SHOAL_MPI_OP_STRIDE,
               "predefined operations are array elements of this size");
_Static_assert(SHOAL_MPI_NPREDEF_OPS <= SHOAL_MPI_OP_SLOTS,
               "more predefined operations than SHOAL_MPI_OP_SLOTS");
SHOAL_MPI_API extern struct shoal_mpi_op shoal_mpi_op_predef[SHOAL_MPI_OP_SLOTS];

/* inout[i] = in[i] op inout[i] for count elements of dt (native layout).
 * Returns MPI_SUCCESS or MPI_ERR_OP when op is not defined for dt. */
int mpi_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count,
                 MPI_Datatype dt);
/* The kernel of a predefined op on count elements of dt when they go to it
 * in one piece, as mpi_op_apply would pass them: dt contiguous and not a
 * pair type.  It takes n = count * *per units, from the true lower bound
 * of both buffers, which must be aligned to *align, a power of two
 * (mpi_op_apply otherwise).  NULL when there is no such kernel. */
typedef void mpi_op_kernel_t(const void *in, void *inout, int64_t n);
mpi_op_kernel_t *mpi_op_kernel(MPI_Op op, MPI_Datatype dt, int64_t *per,
                               size_t *align);
/* Is op defined on dt?  (MPI_SUCCESS or MPI_ERR_OP, for argument checks.) */
int mpi_op_check(MPI_Op op, MPI_Datatype dt);
/* References of requests that use a user op (predefined ops: no-ops). */
void mpi_op_retain(MPI_Op op);
void mpi_op_release(MPI_Op op);

/* ---- requests and point-to-point (mpi_p2p*.c) ---------------------------------- */

#define MPI_REQ_SEND 1
#define MPI_REQ_RECV 2
#define MPI_REQ_GREQ 3    /* generalized */
#define MPI_REQ_COLL 4    /* collective or comm construction */
#define MPI_REQ_MESSAGE 5 /* MPI_Message from Mprobe */
#define MPI_REQ_FILE 6    /* nonblocking file access (src/io) */

struct shoal_mpi_request {
    uint32_t magic;
    uint8_t kind;
    uint8_t persistent; /* Send_init/Recv_init: survives completion */
    uint8_t active;     /* persistent: started and not yet completed */
    uint8_t user_freed; /* MPI_Request_free: release at completion */
    uint8_t blocking;   /* the caller waits for it at once (MPI_Send) */
    uint8_t deferred;   /* a send queued for room (p2p_engine.c) */
    /* The peer may still name this request in a frame, or read or write
     * its buffer: a send whose RTS or synchronous eager message is out, a
     * receive matched to a rendezvous whose data is still moving. */
    uint8_t inflight;
    int done; /* read with mpi_req_is_done, set with mpi_req_complete */
    MPI_Status status;
    MPI_Comm comm;
    /* the operation */
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    int peer; /* comm rank (dest or source; may be MPI_ANY_SOURCE) */
    int tag;
    int mode; /* send mode: MPI_P2P_STANDARD / SYNC / BUFFERED / READY */
    int ctx_off; /* 0 point-to-point, 1 collective context */
    /* engine state (mpi_p2p*.c) */
    base_list_t link;   /* posted queue / progress lists */
    base_list_t link2;  /* second queue (wildcard posted list) */
    uint64_t seq;       /* post order */
    void *umsg;         /* Mprobe'd message, or matched rendezvous */
    MPI_Count bytes;    /* stream bytes moved so far */
    uint64_t remote;    /* the peer's request id (rendezvous, sync) */
    void *bsend_block;  /* buffered sends: space in the attached buffer */
    /* generalized and collective requests */
    int (*poll_fn)(MPI_Request req); /* advance; 1 when done */
    int (*free_fn)(MPI_Request req);
    int (*cancel_fn)(MPI_Request req, int complete);
    int (*query_fn)(MPI_Request req, MPI_Status *status);
    /* Raise an error of the operation at completion (MPI_Wait and
     * friends) on the object it refers to, before the request is retired:
     * file requests run the file's handler (MPI 4.1 section 9.3).  NULL:
     * the request's communicator's handler. */
    int (*raise_fn)(MPI_Request req, int err, const char *fn);
    void *extra;
    base_list_t poll_link; /* in the list of requests with poll_fn */
    base_list_t free_link; /* freed by the user while still active */
};

#define MPI_P2P_STANDARD 0
#define MPI_P2P_SYNC 1
#define MPI_P2P_BUFFERED 2
#define MPI_P2P_READY 3

/* What a request of kind MPI_REQ_COLL is (core/ckpt.c finishes the
 * collectives at a checkpoint's cut): a schedule of the collective layer,
 * a nonblocking or started persistent collective (coll_transport.c); or
 * MPI_Isendrecv's, point-to-point (p2p_api.c). */
int mpi_coll_req_is_sched(const struct shoal_mpi_request *r);
int mpi_req_is_isendrecv(const struct shoal_mpi_request *r);
/* A generalized request's functions and extra state, as the program gave
 * them to MPI_Grequest_start (1), or 0 when r is not one (request.c). */
int mpi_req_greq_fns(const struct shoal_mpi_request *r, uint64_t *query,
                     uint64_t *free_fn, uint64_t *cancel, uint64_t *state);

/* Allocate a request (from a pool) of kind; released by mpi_req_free. */
MPI_Request mpi_req_alloc(int kind, MPI_Comm comm);
extern int mpi_req_placing; /* core/ckpt_objs.c: the next from the arena */
MPI_Request mpi_req_done_again(int kind, MPI_Comm comm, MPI_Datatype dt,
                               const MPI_Status *st);
void mpi_req_free(MPI_Request req);

/* Mark a request complete (any thread holding the engine lock). */
static inline void mpi_req_complete(MPI_Request req)
{
    __atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
}

/* Has it completed?  Safe without the engine lock (the request's owner
 * polls while another thread's progress completes it). */
static inline int mpi_req_is_done(const struct shoal_mpi_request *req)
{
    return __atomic_load_n(&req->done, __ATOMIC_ACQUIRE);
}

/*
 * A request whose progress is poll_fn(req) (collectives, idup, generalized
 * requests): progress calls it until it returns 1.
 */
void mpi_req_add_poll(MPI_Request req);
/* Free req once it completes (MPI_Request_free of an active request). */
void mpi_req_free_later(MPI_Request req);

/*
 * Internal point-to-point for collectives and communicator construction:
 * ctx_off 1 uses the communicator's collective context, so these never
 * match user receives.  Arguments are not checked.  peer is a comm rank
 * (remote group for intercomms).
 */
int mpi_isend_internal(const void *buf, MPI_Count count, MPI_Datatype dt,
                       int dest, int tag, MPI_Comm comm, int ctx_off,
                       MPI_Request *req_p);
int mpi_irecv_internal(void *buf, MPI_Count count, MPI_Datatype dt,
                       int source, int tag, MPI_Comm comm, int ctx_off,
                       MPI_Request *req_p);
/* Wait for and free requests (MPI_REQUEST_NULL entries skipped); the
 * first error is returned (MPI_ERR_TRUNCATE, MPI_ERR_PROC_ABORTED...). */
int mpi_wait_internal(MPI_Request *req, MPI_Status *status);

/* Give the user a request's status.  MPI_ERROR stays the caller's: only
 * the multiple-completion calls set it, and only when they return
 * MPI_ERR_IN_STATUS (MPI 4.1 section 3.2.5). */
static inline void mpi_status_give(MPI_Status *to, const MPI_Status *from)
{
    int keep;

    if (to == MPI_STATUS_IGNORE)
        return;
    keep = to->MPI_ERROR;
    *to = *from;
    to->MPI_ERROR = keep;
}
int mpi_waitall_internal(int n, MPI_Request *reqs);
/* Blocking helpers built on the above. */
int mpi_send_internal(const void *buf, MPI_Count count, MPI_Datatype dt,
                      int dest, int tag, MPI_Comm comm, int ctx_off);
int mpi_recv_internal(void *buf, MPI_Count count, MPI_Datatype dt,
                      int source, int tag, MPI_Comm comm, int ctx_off,
                      MPI_Status *status);
int mpi_sendrecv_internal(const void *sbuf, MPI_Count scount,
                          MPI_Datatype sdt, int dest, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rdt, int source,
                          int tag, MPI_Comm comm, int ctx_off);

/* One round of progress (wires, rendezvous, polled requests). */
void mpi_progress(void);

/* Set up / tear down the engine (init.c calls these). */
int mpi_p2p_init(void);
void mpi_p2p_fini(void);
mpi_matchq_t *mpi_matchq_get(uint32_t ctx); /* created on first use */
/* The epoch digest of the communicator q serves (mpi_ep_of). */
uint16_t mpi_matchq_ep(const mpi_matchq_t *q);
void mpi_matchq_put(mpi_matchq_t *q);

/* ---- collectives (coll_transport.c) ------------------------------------------------ */

/* Set up and release the collective layer's state of a communicator. */
int mpi_coll_comm_init(MPI_Comm comm);
void mpi_coll_comm_fini(MPI_Comm comm);
/* The host map of multi-host jobs (after COMM_WORLD exists), and its end. */
int mpi_coll_world_init(void);
void mpi_coll_world_fini(void);
/* MPI_Start of a persistent collective request (engine lock held). */
int mpi_coll_start(MPI_Request r);

/* ---- set-up and tear-down of the predefined objects --------------------------- */

int mpi_comm_init_predef(void);  /* COMM_WORLD and COMM_SELF (comm_obj.c) */
void mpi_comm_fini_predef(void);
void mpi_req_pool_fini(void);    /* request.c */
void mpi_handle_fini(void);      /* Fortran handle table (handle_f2c.c) */

#endif /* SHOAL_MPI_IMPL_H */
