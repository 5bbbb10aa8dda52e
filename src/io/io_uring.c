/*
 * List IO through io_uring (built when liburing is found at configure
 * time, SHOAL_HAVE_LIBURING): the runs of one file-noncontiguous access
 * go to the kernel as one submission of up to IO_UR_BATCH read/write
 * entries (1024: a request of 1000 file segments is one io_uring_enter),
 * instead of one preadv/pwritev per run.  Each thread that does IO has its own ring,
 * made on first use (the caller's and the IO thread of io_async.c); a ring
 * that cannot be made (an old kernel, io_uring disabled or filtered) makes
 * the caller take the preadv/pwritev path, for good in that thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

#ifdef SHOAL_HAVE_LIBURING
#include <liburing.h>

#define IO_UR_DEPTH IO_UR_BATCH /* entries per submission */
#define IO_UR_IOVS 1024   /* memory blocks per submission */
#define IO_UR_MAXLEN (1 << 30) /* bytes per entry at most */

/* One entry of a submission: where it goes and its memory blocks. */
typedef struct ur_ent {
    MPI_Offset off;
    MPI_Count len;
    int iov0, niov;
    int res;
} ur_ent_t;

static __thread struct io_uring ring;
static __thread int ring_state; /* 0 not tried, 1 up, -1 cannot */
static __thread pid_t ring_pid; /* a fork's child makes its own */
/* A submission's entries and memory blocks, the thread's (48 KiB: not
 * on the stack of a thread that may have a small one), in one block that
 * the thread's exit frees (with its ring). */
static __thread ur_ent_t *ring_ent;
static __thread struct iovec *ring_iov;
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static int ring_key_ok;

static void ring_gone(void *mem)
{
    if (ring_state == 1 && ring_pid == getpid())
        io_uring_queue_exit(&ring);
    ring_state = 0;
    ring_ent = NULL;
    ring_iov = NULL;
    free(mem);
}

static void ring_key_make(void)
{
    ring_key_ok = pthread_key_create(&ring_key, ring_gone) == 0;
}

static int ring_get(void)
{
    if (ring_state == 1 && ring_pid != getpid())
        ring_state = 0; /* the parent's: left alone */
    if (ring_state == 0 && ring_ent == NULL) {
        void *mem;
        pthread_once(&ring_once, ring_key_make);
        mem = ring_key_ok ? malloc(IO_UR_DEPTH * sizeof(*ring_ent) +
                                   IO_UR_IOVS * sizeof(*ring_iov))
                          : NULL;
        if (mem == NULL || pthread_setspecific(ring_key, mem) != 0) {
            free(mem);
            return 0; /* plain calls this time; tried again later */
        }
        ring_ent = mem;
        ring_iov = (struct iovec *)(ring_ent + IO_UR_DEPTH);
    }
    if (ring_state == 0) {
        /* One thread submits and reaps (the ring is the thread's): the
         * kernel may then run completions when asked, not by interrupt
         * (kernels from 6.1; older ones take the plain ring). */
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
        if (io_uring_queue_init_params(IO_UR_DEPTH, &ring, &p) == 0 ||
            io_uring_queue_init(IO_UR_DEPTH, &ring, 0) == 0) {
            ring_state = 1;
            ring_pid = getpid();
        } else {
            ring_state = -1;
        }
    }
    return ring_state == 1;
}

int io_ur_available(void)
{
    return ring_get();
}

int io_ur_runs(int fd, int wr, mpi_dt_cursor_t *c, const io_run_t *runs,
               int n, MPI_Count *moved, int *eof)
{
    struct iovec *iov;
    ur_ent_t *ent;
    MPI_Count roff = 0; /* bytes of runs[i] submitted */
    int i = 0;

    if (!ring_get())
        return ENOSYS;
    iov = ring_iov;
    ent = ring_ent;
    while (i < n && !*eof) {
        int ns = 0, nv = 0, err = 0, left;

        while (i < n && ns < IO_UR_DEPTH && nv < IO_UR_IOVS) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            int niov = 0;
            MPI_Count want = runs[i].len - roff, got;
            if (want > IO_UR_MAXLEN)
                want = IO_UR_MAXLEN; /* an entry's length is 32 bits */
            got = mpi_dt_cursor_iov(c, iov + nv, IO_UR_IOVS - nv, want,
                                    &niov);
            if (sqe == NULL || got <= 0) {
                err = sqe == NULL ? EAGAIN : EIO;
                break;
            }
            if (niov == 1 && wr) /* no vector to import */
                io_uring_prep_write(sqe, fd, iov[nv].iov_base,
                                    (unsigned)iov[nv].iov_len,
                                    (__u64)(runs[i].off + roff));
            else if (niov == 1)
                io_uring_prep_read(sqe, fd, iov[nv].iov_base,
                                   (unsigned)iov[nv].iov_len,
                                   (__u64)(runs[i].off + roff));
            else if (wr)
                io_uring_prep_writev(sqe, fd, iov + nv, (unsigned)niov,
                                     (__u64)(runs[i].off + roff));
            else
                io_uring_prep_readv(sqe, fd, iov + nv, (unsigned)niov,
                                    (__u64)(runs[i].off + roff));
            io_uring_sqe_set_data64(sqe, (__u64)ns);
            ent[ns] = (ur_ent_t){runs[i].off + roff, got, nv, niov, 0};
            ns++;
            nv += niov;
            roff += got;
            if (roff == runs[i].len) {
                i++;
                roff = 0;
            }
        }
        /* Submitted entries must all complete before their memory goes,
         * even when one could not be added. */
        if (ns > 0) {
            int rc;
            do
                rc = io_uring_submit_and_wait(&ring, (unsigned)ns);
            while (rc == -EINTR);
            if (rc < 0)
                return -rc; /* nothing was submitted */
        }
        for (left = ns; left > 0; left--) {
            struct io_uring_cqe *cqe;
            int rc;
            do
                rc = io_uring_wait_cqe(&ring, &cqe);
            while (rc == -EINTR);
            if (rc < 0)
                return -rc;
            ent[io_uring_cqe_get_data64(cqe)].res = cqe->res;
            io_uring_cqe_seen(&ring, cqe);
        }
        if (err != 0)
            return err;
        /* In stream order: a short entry is finished with
         * preadv/pwritev (a read stops at the end of the file; the
         * entries after it found nothing there either). */
        for (int k = 0; k < ns && !*eof; k++) {
            ur_ent_t *e = &ent[k];
            struct iovec *v = iov + e->iov0;
            int nv2 = e->niov, r = e->res;
            MPI_Offset at;
            if (r < 0 && r != -EAGAIN && r != -EINTR)
                return -r;
            if (r < 0)
                r = 0;
            *moved += r;
            if (r == e->len)
                continue;
            at = e->off + r;
            while (nv2 > 0 && (size_t)r >= v->iov_len) {
                r -= (int)v->iov_len;
                v++;
                nv2--;
            }
            if (nv2 > 0) {
                v->iov_base = (char *)v->iov_base + r;
                v->iov_len -= (size_t)r;
            }
            if ((err = io_rw_full(fd, wr, v, nv2, at, moved, eof)) != 0)
                return err;
        }
    }
    return 0;
}

#else /* !SHOAL_HAVE_LIBURING */

int io_ur_available(void)
{
    return 0;
}

int io_ur_runs(int fd, int wr, mpi_dt_cursor_t *c, const io_run_t *runs,
               int n, MPI_Count *moved, int *eof)
{
    (void)fd, (void)wr, (void)c, (void)runs, (void)n, (void)moved, (void)eof;
    return ENOSYS;
}

#endif
