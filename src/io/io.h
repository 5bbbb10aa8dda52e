/*
 * io: MPI-IO (the file chapter of MPI 4.1) on POSIX files.
 *
 * This header is the contract between the files of src/io/, one idea each:
 *   io_errh.c    the file error path (io_error) and the file error-handler
 *                calls; MPI_FILE_NULL's handler
 *   io_open.c    open (collective agreement on amode and outcome), close,
 *                delete
 *   io_size.c    get_size, set_size, preallocate, sync
 *   io_hints.c   info hints, amode, group, atomicity flag
 *   io_datarep.c data representations: external32 and MPI_Register_datarep;
 *                file layouts of types whose sizes change in the file
 *   io_view.c    file views: flattening a filetype into blocks, mapping a
 *                position of the view's data stream to file offsets
 *   io_list.c    list IO: one preadv/pwritev per contiguous file run over
 *                the memory blocks that go there
 *   io_lock.c    fcntl byte-range locks (atomic mode, the shared pointer)
 *   io_access.c  argument checks and the one access path every read and
 *                write family takes; statuses
 *   io_calls.h   macros writing a data-access call in its int and _c forms
 *   io_indep.c   independent calls: explicit offsets, individual pointer,
 *                seek, nonblocking forms
 *   io_async.c   the IO thread: nonblocking independent accesses in the
 *                background
 *   io_coll.c    collective calls, split collectives, nonblocking
 *                collectives
 *   io_twophase.c  two-phase collective buffering through aggregators,
 *                blocking, and nonblocking (a schedule of point-to-point
 *                messages advanced by the progress engine, the
 *                aggregators' IO in the IO thread)
 *   io_shared.c  the shared file pointer (a locked counter in a hidden
 *                side file next to the data file) and ordered access
 *
 * A file handle owns a private duplicate of the communicator it was opened
 * on (internal collectives never meet the user's), a POSIX descriptor, its
 * view and its pointers.  Positions are kept in bytes of the view's data
 * stream: offset k in etypes is byte k * esize of the stream.
 */
#ifndef SHOAL_IO_H
#define SHOAL_IO_H

#include <sys/types.h>
#include <sys/uio.h>

#include "mpi/mpi_impl.h"

#define MPI_MAGIC_FILE 0x46696c65u /* "File" */

/* Every amode bit the standard defines. */
#define IO_AMODE_ALL                                                           \
    (MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |     \
     MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |         \
     MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL)

/* A data representation other than "native" (io_datarep.c): external32,
 * or one registered by MPI_Register_datarep. */
typedef struct io_rep {
    char name[MPI_MAX_DATAREP_STRING];
    int ext32; /* the built-in external32 (the datatype engine converts) */
    MPI_Datarep_conversion_function *rd, *wr;       /* MPI_Register_datarep */
    MPI_Datarep_conversion_function_c *rd_c, *wr_c; /* ..._c */
    MPI_Datarep_extent_function *extent;
    void *extra;
    struct io_rep *next;
} io_rep_t;

/* A file view, flattened (io_view.c). */
typedef struct io_view {
    MPI_Offset disp;           /* bytes from the start of the file */
    MPI_Datatype etype, ftype; /* retained */
    MPI_Count esize;           /* bytes of data of one etype */
    MPI_Count fsize;           /* bytes of data of one filetype */
    MPI_Aint fext;             /* extent of one filetype */
    MPI_Count nsegs;           /* blocks of one filetype */
    mpi_dt_seg_t *segs;        /* displacement (from disp), length */
    MPI_Count *start;          /* stream byte where segs[i] begins */
    int dense;                 /* one block filling the extent: no holes */
    int overlap;               /* some block starts before another's end
                                  (read-only files): stream order is not
                                  file order */
    MPI_Aint reach;            /* the furthest end of a block */
    const io_rep_t *rep;       /* NULL for "native" and "internal"; else
                                  the file holds that representation (sizes
                                  and positions above are of it) */
    char datarep[MPI_MAX_DATAREP_STRING];
} io_view_t;

struct shoal_mpi_file {
    uint32_t magic;
    int fd;
    base_list_t open_link; /* in this process's open files (io_open.c) */
    int amode;
    int atomic;          /* MPI_File_set_atomicity */
    int dirty;           /* written since the last sync */
    MPI_Comm comm;       /* private duplicate, errors returned */
    char *path;          /* as opened (prefix such as "ufs:" removed) */
    MPI_Info hints;      /* the hints given, kept (never MPI_INFO_NULL) */
    MPI_Errhandler errh; /* retained */
    io_view_t view;
    MPI_Offset pos; /* individual pointer: stream bytes */
    /* shared pointer (io_shared.c) */
    int shfd;   /* side file, -1 when it could not be made */
    int sh_err; /* why not: an MPI error class */
    /* collective buffering (io_twophase.c), agreed at open, set_view and
     * set_info from rank 0's hints */
    int cb_read, cb_write; /* collective buffering used for reads / writes
                              now (io_cb_decide) */
    int cb_read_mode, cb_write_mode; /* romio_cb_read / romio_cb_write:
                                        0 disable, 1 enable, 2 automatic */
    int netfs_mode; /* shoal_netfs: 0 disable, 1 enable, 2 automatic */
    int netfs_any;  /* some rank's file is on a network or cluster file
                       system (statfs, io_fs.c; agreed at open) */
    long fs_magic;  /* this rank's statfs f_type of the file */
    int nolocks_any; /* some rank's file system keeps fcntl locks to
                        its own host (FUSE, io_fs.c; agreed at open): no
                        automatic sieving of writes */
    int cbw_small_any, cbr_small_any; /* some rank's view has holes and
                                         small blocks, for collective
                                         buffering's automatic choice
                                         (agreed, io_ds_agree) */
    int cb_nodes;          /* aggregators to use (0: one per host) */
    int cb_stripes;        /* striping_factor: aggregators when cb_nodes
                              is not given (0: not given) */
    MPI_Offset cb_bufsize; /* bytes of file per round (cb_buffer_size) */
    MPI_Offset cb_align;   /* file domains start at multiples (striping_unit) */
    int cb_double; /* shoal_cb_double_buffer: 0 disable, 1 enable, 2
                      automatic (io_twophase.c: the blocking calls'
                      rounds double-buffered, the nonblocking calls'
                      not, as measured) */
    int *aggs; /* ranks of the aggregators: local rank 0 of each host */
    int naggs;
    /* data sieving (io_list.c): 0 disable, 1 enable, 2 automatic */
    int ds_read, ds_write;
    int ds_any; /* some rank's view sieves writes (agreed, io_ds_agree) */
    int ov_any; /* some rank's view overlaps itself (agreed, io_ds_agree):
                   no collective buffering */
    /* file-noncontiguous list IO through io_uring (io_uring.c):
     * shoal_io_uring, 0 disable, 1 enable, 2 automatic */
    int uring;
    /* split collective in progress (io_coll.c) */
    int split; /* 0, or 1 + the kind of access begun */
    int split_rc;
    MPI_Count split_bytes;
    /* nonblocking accesses queued or running in the IO thread
     * (io_async.c; under its lock) */
    int async;
    /* nonblocking collective accesses through the aggregators not yet
     * finished, oldest first (io_twophase.c; changed under the engine
     * lock), and how many this handle has started (their tags) */
    struct io_tpnb *tp_head, *tp_tail;
    unsigned tp_seq;
    /* references: the open handle, and each nonblocking request not yet
     * completed by the user, whose errors are raised on the file (atomic;
     * io_file_unref frees the last) */
    int refs;
};

/* ---- errors (io_errh.c) ---------------------------------------------------
 */

/*
 * Report an error of fn on file fh: record the detail, run fh's handler
 * (MPI_FILE_NULL's when fh is MPI_FILE_NULL or not a file), return the
 * class for the caller to return.
 */
int io_error(MPI_File fh, int errclass, const char *fn, const char *fmt, ...)
    BASE_PRINTF(4, 5);
/* The MPI class for an errno value of a failed system call. */
int io_errno_class(int err);

static inline int io_file_ok(MPI_File fh)
{
    return fh != NULL && fh->magic == MPI_MAGIC_FILE;
}

/* Init check and handle check: MPI_SUCCESS or the error reported.  Then
 * waits until the file's nonblocking accesses in the background are done
 * (io_async_drain), so the caller may use and change the handle. */
int io_check_file(MPI_File fh, const char *fn);
/* The checks alone, without waiting: the calls that queue accesses, and
 * those that only read the handle or move the pointers, which the IO
 * thread does not use. */
int io_check_file_nowait(MPI_File fh, const char *fn);

/* A file name without a file system prefix ("ufs:", "nfs:", ...), as
 * ROMIO's callers may pass it. */
const char *io_strip_prefix(const char *name);

/* A reference to the handle's memory (io_open.c): a request keeps its
 * file's until it is retired, so that a file closed before MPI_Wait can
 * still be told apart (its magic is dead then). */
void io_file_ref(MPI_File f);
void io_file_unref(MPI_File f);

/* The handler MPI_FILE_NULL holds now (retained by the caller if kept). */
MPI_Errhandler io_null_errh(void);

/* ---- hints (io_hints.c) ----------------------------------------------------
 */

/* Add info's hints to the file's (set_info, set_view): MPI_SUCCESS or
 * MPI_ERR_NO_MEM. */
int io_hints_merge(MPI_File fh, MPI_Info info);

/* Agree on the hints that change behaviour: rank 0's win (collective). */
int io_hints_apply(MPI_File fh);
/* Whether collective reads and writes go through the aggregators, from
 * the agreed hints, file system and views (io_hints.c): enable or disable
 * as hinted; automatic on a network file system when some rank's view has
 * holes and small blocks (cbw_small_any, cbr_small_any). */
void io_cb_decide(MPI_File fh);
/* Views whose blocks average under this many bytes go through the
 * aggregators by default on a network file system (measured: docs/IO.md,
 * "Collective buffering on a network file system"). */
#define IO_CB_NETFS_SMALL (8 << 10)
/* The file system of an open descriptor (io_fs.c): its statfs f_type in
 * *magic, a short name ("nfs", "fuse", "ext4", ... or "0x..."), and
 * whether it is in the list of network and cluster file systems on which
 * collective buffering is used by default. */
int io_fs_kind(int fd, long *magic, const char **name, int *nolocks);
const char *io_fs_name(long magic, int *netfs, int *nolocks);

/* ---- collective buffering (io_twophase.c) -----------------------------------
 */

/* At open, collectively: one aggregator per host. */
int io_twophase_setup(MPI_File fh);
/* Does this collective access go through the aggregators? */
static inline int io_twophase_on(MPI_File fh, int wr)
{
    return !fh->atomic && !fh->ov_any && fh->naggs > 0 &&
           (wr ? fh->cb_write : fh->cb_read);
}
/* Two-phase collective read or write of (buf, count, dt) from stream byte
 * pos (every rank of fh calls it): data travel to the aggregator owning
 * their file domain, which reads or writes its domain with list IO.
 * *done_p as io_list_rw; the outcome is agreed, so every rank returns the
 * same class. */
int io_twophase_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf,
                   MPI_Count count, MPI_Datatype dt, MPI_Count *done_p,
                   int *err_p);
/* The same in the background (iread_all, iwrite_at_all, ...): every rank
 * calls it in the same order on fh; bytes stream bytes from pos (checked
 * and placed by the caller).  Returns at once with *request, which the
 * progress engine advances: the exchange is point-to-point messages in
 * fh's private communicator's collective context, tagged by the access's
 * number on fh, the aggregators' file IO runs in the IO thread, round by
 * round of cb_buffer_size.  fh's accesses of this kind run one after the
 * other, in call order.  MPI_SUCCESS or the error reported. */
int io_twophase_start(MPI_File fh, const char *fn, int wr, MPI_Offset pos,
                      void *buf, MPI_Count count, MPI_Datatype dt,
                      MPI_Count bytes, MPI_Request *request);
/* The same through a representation that converts (external32 or a
 * user's): esz stream bytes per element of dt; a write's data converted
 * at the call, in the caller's thread; a read's once its bytes are in,
 * by the progress engine for external32 and by the IO thread for a
 * user's read function (which may call MPI: never under the engine's
 * lock). */
int io_twophase_start_conv(MPI_File fh, const char *fn, int wr,
                           MPI_Offset pos, void *buf, MPI_Count count,
                           MPI_Datatype dt, MPI_Count bytes, MPI_Count esz,
                           MPI_Request *request);
/* Progress until fh has no such access left (io_check_file). */
void io_twophase_drain(MPI_File fh);

/* ---- data representations (io_datarep.c) ----------------------------------
 */

/* The representation called name: 0 with *rep (NULL for "native" and
 * "internal"), or -1 when there is none of that name. */
int io_rep_lookup(const char *name, const io_rep_t **rep);
/* File extent of a predefined type (MPI_ERR_CONVERSION when the user's
 * extent function fails). */
int io_rep_fext(const io_rep_t *rep, MPI_Datatype dt, MPI_Aint *ext);
/* Does some predefined type of dt have a file size other than its own? */
int io_rep_differs(const io_rep_t *rep, MPI_Datatype dt, int *differs);
/* Bytes in the file of one element of dt. */
int io_rep_size(const io_rep_t *rep, MPI_Datatype dt, MPI_Count *size);

/* The layout of one element of a datatype in the file. */
typedef struct io_layout {
    mpi_dt_seg_t *segs; /* blocks in typemap order, adjacent ones merged */
    MPI_Count n, cap;
    MPI_Count size;   /* bytes of data */
    MPI_Aint lb, ub;  /* file lower and upper bounds */
    int placed;
} io_layout_t;

/* Compute it from dt's constructors and the file extents of its
 * predefined types: MPI_SUCCESS, or a class with *why set. */
int io_rep_layout(const io_rep_t *rep, MPI_Datatype dt, io_layout_t *l,
                  const char **why);
void io_layout_free(io_layout_t *l);

/* Does this direction move native bytes unconverted (no representation, or
 * MPI_CONVERSION_FN_NULL)? */
int io_rep_direct(const io_rep_t *rep, int wr);
/* Convert count elements of dt at buf to (wr) or from the file
 * representation at file (esz bytes each): MPI_SUCCESS, or
 * MPI_ERR_CONVERSION with the user function's code in *ret. */
int io_rep_convert(const io_rep_t *rep, int wr, void *buf, MPI_Count count,
                   MPI_Datatype dt, void *file, MPI_Count esz, int *ret);

/* ---- views (io_view.c) -----------------------------------------------------
 */

/* The default view: disp 0, MPI_BYTE, MPI_BYTE, "native" (MPI_SUCCESS
 * or MPI_ERR_NO_MEM). */
int io_view_default(io_view_t *v);
void io_view_free(io_view_t *v);
/* Build v from the arguments (checked by the caller; wr: the file is
 * opened for writing); MPI_SUCCESS, or a class with *why set. */
int io_view_build(io_view_t *v, MPI_Offset disp, MPI_Datatype etype,
                  MPI_Datatype ftype, const char *datarep, int wr,
                  const char **why);
/* The file offset of stream byte pos (that byte's place in the file). */
MPI_Offset io_view_offset(const io_view_t *v, MPI_Offset pos);
/* [*lo, *hi): file bytes that bytes > 0 stream bytes from pos lie in. */
void io_view_span(const io_view_t *v, MPI_Offset pos, MPI_Count bytes,
                  MPI_Offset *lo, MPI_Offset *hi);
/* Stream bytes of the view before the first one at or past file offset
 * off (those that lie before off, unless the view overlaps itself). */
MPI_Offset io_view_stream_before(const io_view_t *v, MPI_Offset off);

/* A walk over the file blocks of the stream from a position on. */
typedef struct io_walk {
    const io_view_t *v;
    MPI_Offset tile; /* filetype copy */
    MPI_Count seg;   /* block of it */
    MPI_Count off;   /* bytes done in that block */
} io_walk_t;

void io_walk_init(io_walk_t *w, const io_view_t *v, MPI_Offset pos);
/* The next file block, at most max bytes: its length (0 when the view has
 * no data), its offset in *off. */
MPI_Count io_walk_next(io_walk_t *w, MPI_Count max, MPI_Offset *off);

/* ---- list IO (io_list.c)
 * ----------------------------------------------------- */

/*
 * Move count elements of dt at buf to (wr) or from the file through fh's
 * view, from stream byte pos on.  *done_p = bytes moved (a read stops at
 * the end of the file).  MPI_SUCCESS or a class, with *err_p = errno.
 */
int io_list_rw(MPI_File fh, int wr, MPI_Offset pos, void *buf, MPI_Count count,
               MPI_Datatype dt, MPI_Count *done_p, int *err_p);
/* All of iov[0..n) at off with preadv/pwritev, again after short
 * transfers and EINTR (a read may stop at the end of the file: *eof).
 * *moved += bytes moved; 0 or an errno. */
int io_rw_full(int fd, int wr, struct iovec *iov, int n, MPI_Offset off,
               MPI_Count *moved, int *eof);
/* A run of adjacent file blocks of one access. */
typedef struct io_run {
    MPI_Offset off;
    MPI_Count len;
} io_run_t;
#define IO_UR_BATCH 1024 /* runs per io_uring submission */
/* io_uring (io_uring.c; with liburing only): the runs[0..n) of one access,
 * in stream order, with the memory blocks the cursor c gives, submitted
 * in batches of up to IO_UR_BATCH entries, one system call each; *moved,
 * *eof as io_rw_full.  0, an errno, or ENOSYS when this thread has no
 * ring (then nothing was done). */
int io_ur_runs(int fd, int wr, mpi_dt_cursor_t *c, const io_run_t *runs,
               int n, MPI_Count *moved, int *eof);
/* Can this thread use io_uring (a ring made, or makeable)? */
int io_ur_available(void);
/* Do independent accesses through fh's view sieve (romio_ds_read/write)? */
int io_sieve_on(MPI_File fh, int wr);
/* Agree whether any rank's view sieves writes, and whether any overlaps
 * itself (collective: set_view, set_info): MPI_SUCCESS or the class of
 * the lost collective. */
int io_ds_agree(MPI_File fh);
/* Must a write that does not sieve hold a shared lock over its range?
 * When sieving writers may be about: some rank's view of this file sieves
 * writes (which never happens in a write-only file), and not in atomic
 * mode (whose locks are exclusive already). */
static inline int io_ds_guard(MPI_File fh)
{
    return fh->ds_any && !fh->atomic;
}

/* ---- locks (io_lock.c)
 * ------------------------------------------------------- */

/* Take (F_SETLKW) or drop a lock over [lo, hi) of fd; wr: exclusive.
 * 0 or an errno. */
int io_lock(int fd, int wr, MPI_Offset lo, MPI_Offset hi);
int io_unlock(int fd, MPI_Offset lo, MPI_Offset hi);

/* ---- access (io_access.c)
 * ---------------------------------------------------- */

/* Where an access starts. */
#define IO_AT 0      /* explicit offset */
#define IO_INDIV 1   /* individual file pointer */
#define IO_SHARED 2  /* shared file pointer */
#define IO_ORDERED 3 /* shared file pointer, rank order (collective) */

/*
 * The one access path: check the arguments, find the start, move the data,
 * advance the pointer, return the bytes in *bytes_p.  Errors are reported
 * through fh's handler under fn's name.  coll: a collective call (every
 * rank calls it).
 */
int io_access(MPI_File fh, const char *fn, int wr, int where, int coll,
              MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype dt,
              MPI_Count *bytes_p);

/* An access checked and placed (io_access.c). */
typedef struct io_acc {
    MPI_Count bytes; /* stream bytes asked for */
    MPI_Count esz;   /* stream bytes of one element of the datatype */
    MPI_Offset pos;  /* stream byte where it starts */
    int convert;     /* through a staging buffer in another representation */
} io_acc_t;

/* What an access's data movement (io_move) did, and where it failed. */
#define IO_FAIL_IO 0      /* list IO or two-phase: errno in err */
#define IO_FAIL_STAGE 1   /* no memory for the staging buffer */
#define IO_FAIL_LOCK 2    /* atomic mode's lock over [lo, hi): errno */
#define IO_FAIL_CONVERT 3 /* a conversion: the user function's uret */
#define IO_WHY_MAX 512    /* room for io_move_why's message */
typedef struct io_move {
    MPI_Count done;  /* stream bytes moved */
    MPI_Count bytes; /* for the status: native bytes of the whole elements
                        moved when converted, else done */
    int rc;          /* MPI_SUCCESS or the class */
    int what;        /* IO_FAIL_* when rc is not MPI_SUCCESS */
    int conv;        /* the class of a failed conversion, or MPI_SUCCESS */
    int err, uret;
    MPI_Offset lo, hi;
} io_move_t;

/*
 * Move the data of an access begun: through a staging buffer in the
 * file's representation when a->convert, under atomic mode's lock, with
 * list IO or (twophase: every rank calls it) the aggregators.  Reports
 * nothing and touches no pointer: the caller does (the calling thread, or
 * the IO thread, io_async.c).  Returns m->rc.
 */
int io_move(MPI_File fh, int wr, int twophase, const io_acc_t *a, void *buf,
            MPI_Count count, MPI_Datatype dt, io_move_t *m);
/* The message for a failed io_move, into out[0..n). */
void io_move_why(MPI_File fh, int wr, const io_acc_t *a, const io_move_t *m,
                 char *out, size_t n);

/* io_access, then the status (blocking calls) or a request (nonblocking
 * ones: ordered ones, and collective ones through the aggregators in
 * another data representation, do their work at once; collective ones
 * through the aggregators otherwise in the background, io_twophase_start;
 * the others, conversions included, in the IO thread, io_async.c). */
int io_blocking(MPI_File fh, const char *fn, int wr, int where, int coll,
                MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype dt,
                MPI_Status *status);
int io_nonblocking(MPI_File fh, const char *fn, int wr, int where, int coll,
                   MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype dt, MPI_Request *request);

/* Check a datatype argument (live, committed): MPI_SUCCESS or reported. */
int io_check_type(MPI_File fh, MPI_Datatype dt, const char *fn,
                  const char *what);

/* A status saying bytes were moved (MPI_Get_count then works). */
void io_status_set(MPI_Status *status, MPI_Count bytes);
/* A completed request carrying that status (nonblocking forms). */
int io_request_done(MPI_File fh, const char *fn, MPI_Count bytes,
                    MPI_Request *request);

/* ---- background accesses (io_async.c)
 * ---------------------------------------- */

/* Queue an access already checked and placed (at least one byte; each
 * rank's own: no collective buffering) for the IO thread, which converts
 * through the file's data representation too, and return its request: it
 * completes in progress once the access is done, with the bytes moved or
 * the error class in its status, the error raised on the file's handler
 * by the completing call; MPI_Cancel takes it back while it waits in the
 * queue.  MPI_SUCCESS or the error reported. */
int io_async_start(MPI_File fh, const char *fn, int wr, const io_acc_t *a,
                   void *buf, MPI_Count count, MPI_Datatype dt,
                   MPI_Request *request);
/* Wait until fh has no access queued or running in the IO thread. */
void io_async_drain(MPI_File fh);
/* Queue call(arg) for the IO thread, in order with fh's accesses (it
 * counts as one of them for io_async_drain): the job, or NULL with an
 * errno in *err_p.  io_async_call_done says (acquire) when call returned,
 * and wakes a sleeping waiter; the caller then frees the job. */
typedef struct io_job io_job_t;
io_job_t *io_async_call(MPI_File fh, void (*call)(void *arg), void *arg,
                        int *err_p);
int io_async_call_done(io_job_t *j);
/* Sleep until call returned (the caller holds no lock the call needs). */
void io_async_call_wait(io_job_t *j);
void io_async_call_free(io_job_t *j);

/* ---- shared pointer (io_shared.c)
 * -------------------------------------------- */

/* At open, collectively: rank 0 makes the side file holding init (stream
 * bytes), the others open it.  Never fails the open: a file without one
 * fails shared-pointer calls with fh->sh_err. */
void io_shared_open(MPI_File fh, MPI_Offset init);
/* At close, collectively (after a barrier): closed, removed by rank 0. */
void io_shared_close(MPI_File fh);
/* Fetch the shared pointer and add n (stream bytes): MPI_SUCCESS or a
 * class (errno in *err_p). */
int io_shared_fetch_add(MPI_File fh, MPI_Offset n, MPI_Offset *old_p,
                        int *err_p);
/* Set it (rank 0 only calls this). */
int io_shared_set(MPI_File fh, MPI_Offset v, int *err_p);

#endif /* SHOAL_IO_H */
