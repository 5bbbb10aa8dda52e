/*
 * Nonblocking independent access in the background: one IO thread per
 * process works a FIFO queue of jobs, each one access already checked and
 * placed by the calling thread (the start position taken, the individual
 * or shared pointer advanced at call time, as the standard says).  The job
 * is the same list IO a blocking call does (io_list_rw, with atomic mode's
 * lock); the request completes in the caller's progress: its poll function
 * sees the job finished and hands out the status (bytes moved, or the
 * error class).
 *
 * Nothing else changes or accesses a file while it has jobs queued or
 * running: every call on the handle that does (io_check_file) first waits
 * until its jobs are done (io_async_drain), so the thread reads the view,
 * the descriptor and the hint fields without locks, and fcntl locks of the
 * process (shared by its threads) are never taken and dropped from two
 * threads at once.  Calls that only read the handle or move the pointers
 * (get_position, seek, get_info, get_size, ...: io_check_file_nowait) do
 * not wait.
 *
 * Waking: a waiter sleeps on this process's doorbell (am_block); the
 * thread rings it after it marks a job finished (seq_cst on both sides:
 * the waiter arms, then looks; the thread marks, then rings).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "wire/wire.h"

typedef struct io_job {
    struct io_job *next;
    MPI_File fh;
    int wr;
    MPI_Offset pos;
    void *buf;
    MPI_Count count;
    MPI_Datatype dt; /* retained by the request (r->dt) */
    /* results, written by the thread before it sets finished */
    MPI_Count done;
    int rc, err;
    int finished; /* atomic: the thread is done with the job */
} io_job_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work; /* the thread waits for jobs */
    pthread_cond_t idle; /* drains wait for a file's jobs to finish */
    io_job_t *head, *tail;
    int started; /* the thread runs (in this process: reset after fork) */
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
       PTHREAD_COND_INITIALIZER, NULL, NULL, 0};

/* One job: the blocking path's lock and list IO. */
static void run_job(io_job_t *j)
{
    MPI_File fh = j->fh;
    MPI_Offset lo = 0, hi = 0;
    MPI_Count bytes = j->count * j->dt->size;
    int locked = 0;

    j->done = 0;
    j->err = 0;
    if (fh->atomic && bytes > 0 && fh->view.fsize > 0) {
        lo = io_view_offset(&fh->view, j->pos);
        hi = io_view_offset(&fh->view, j->pos + bytes - 1) + 1;
        if ((j->err = io_lock(fh->fd, j->wr, lo, hi)) != 0) {
            j->rc = io_errno_class(j->err);
            return;
        }
        locked = 1;
    }
    j->rc = io_list_rw(fh, j->wr, j->pos, j->buf, j->count, j->dt, &j->done,
                       &j->err);
    if (locked)
        io_unlock(fh->fd, lo, hi);
}

/* The thread may run on any CPU: a rank bound to one core (shoalrun
 * --bind-to core, the default when the ranks fit the CPUs) would otherwise
 * share it with its IO thread, and a copy into the page cache could never
 * overlap the rank's computation.  The kernel keeps it within the
 * process's cpuset; a failure leaves the inherited mask. */
static void float_thread(void)
{
    cpu_set_t all;
    long n = sysconf(_SC_NPROCESSORS_CONF);

    CPU_ZERO(&all);
    for (long i = 0; i < n && i < CPU_SETSIZE; i++)
        CPU_SET((int)i, &all);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
}

static void *io_thread(void *arg)
{
    (void)arg;
    float_thread();
    pthread_mutex_lock(&q.lock);
    for (;;) {
        io_job_t *j;
        while (q.head == NULL)
            pthread_cond_wait(&q.work, &q.lock);
        j = q.head;
        pthread_mutex_unlock(&q.lock);
        run_job(j);
        pthread_mutex_lock(&q.lock);
        q.head = j->next;
        if (q.head == NULL)
            q.tail = NULL;
        j->fh->async--;
        pthread_cond_broadcast(&q.idle);
        /* The last touch of the job: the request's poll may free it. */
        __atomic_store_n(&j->finished, 1, __ATOMIC_SEQ_CST);
        wire_shm_wake_self();
    }
    return NULL;
}

/* The child of a fork has no IO thread (and no jobs: they were the
 * parent's). */
static void after_fork_child(void)
{
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.work, NULL);
    pthread_cond_init(&q.idle, NULL);
    q.head = q.tail = NULL;
    q.started = 0;
}

/* Start the thread (q.lock held): 0 or an errno. */
static int start_thread(void)
{
    static int atfork;
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all, old;
    int rc;

    if (q.started)
        return 0;
    if (!atfork) {
        if ((rc = pthread_atfork(NULL, NULL, after_fork_child)) != 0)
            return rc;
        atfork = 1;
    }
    /* Signals stay the application's threads' business. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &attr, io_thread, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return rc;
    q.started = 1;
    return 0;
}

static int job_poll(MPI_Request r)
{
    io_job_t *j = r->extra;

    if (!__atomic_load_n(&j->finished, __ATOMIC_SEQ_CST))
        return 0;
    io_status_set(&r->status, j->done);
    r->status.MPI_ERROR = j->rc;
    return 1; /* progress completes it */
}

static int job_free(MPI_Request r)
{
    free(r->extra);
    r->extra = NULL;
    return MPI_SUCCESS;
}

int io_async_start(MPI_File fh, const char *fn, int wr, MPI_Offset pos,
                   void *buf, MPI_Count count, MPI_Datatype dt,
                   MPI_Request *request)
{
    io_job_t *j = calloc(1, sizeof(*j));
    MPI_Request r = j != NULL ? mpi_req_alloc(MPI_REQ_FILE, fh->comm) : NULL;
    int rc;

    if (r == NULL) {
        free(j);
        return io_error(fh, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    *j = (io_job_t){NULL, fh, wr, pos, buf, count, dt, 0, 0, 0, 0};
    mpi_dt_retain(dt);
    r->dt = dt;
    r->buf = buf;
    r->count = count;
    r->extra = j;
    r->poll_fn = job_poll;
    r->free_fn = job_free;
    pthread_mutex_lock(&q.lock);
    if ((rc = start_thread()) != 0) {
        pthread_mutex_unlock(&q.lock);
        mpi_req_free(r); /* releases dt */
        free(j);
        return io_error(fh, MPI_ERR_OTHER, fn,
                        "cannot start the IO thread: %s", strerror(rc));
    }
    if (q.tail != NULL)
        q.tail->next = j;
    else
        q.head = j;
    q.tail = j;
    fh->async++;
    pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    mpi_req_add_poll(r);
    *request = r;
    return MPI_SUCCESS;
}

void io_async_drain(MPI_File fh)
{
    pthread_mutex_lock(&q.lock);
    while (fh->async > 0)
        pthread_cond_wait(&q.idle, &q.lock);
    pthread_mutex_unlock(&q.lock);
}
