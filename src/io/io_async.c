/*
 * Nonblocking independent access in the background: one IO thread per
 * process works a FIFO queue of jobs, each one access already checked and
 * placed by the calling thread (the start position taken, the individual
 * or shared pointer advanced at call time, as the standard says).  The job
 * is the same data movement a blocking call does (io_move: list IO, with
 * atomic mode's lock, and the conversion to and from the file's data
 * representation through a staging buffer, so the user's buffer is only
 * read or written here, before the request completes); the request
 * completes in the caller's progress: its poll function sees the job
 * finished and hands out the status (bytes moved, or the error class).
 *
 * Errors are raised at completion on the file's error handler (raise_fn,
 * MPI 4.1 section 9.3), or MPI_FILE_NULL's when the file was closed
 * before: the request holds a reference to the handle's memory.
 * MPI_Cancel of a job still in the queue takes it out: nothing is
 * accessed and the status says cancelled; the job the thread runs is out
 * of the queue already, and completes.
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
 * The thread also runs calls queued by io_async_call: the aggregators'
 * file IO of a nonblocking collective through collective buffering
 * (io_twophase.c), one round at a time, in order with the file's other
 * jobs; its owner polls the job's finished flag and frees it.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "wire/wire.h"

typedef struct io_job {
    struct io_job *next;
    MPI_File fh; /* referenced (io_file_ref) until the request goes */
    const char *fn; /* the call that started it */
    int wr;
    io_acc_t a;
    void *buf;
    MPI_Count count;
    MPI_Datatype dt; /* retained by the request (r->dt) */
    /* results, written by the thread (or a cancel) before it sets
     * finished */
    io_move_t m;
    int cancelled;
    char why[IO_WHY_MAX]; /* the failure, for the file's handler */
    int finished; /* atomic: the thread is done with the job */
    /* A call instead of an access (io_async_call: an aggregator's file
     * IO of nonblocking collective buffering); its owner frees the job. */
    void (*call)(void *arg);
    void *arg;
} io_job_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work; /* the thread waits for jobs */
    pthread_cond_t idle; /* drains wait for a file's jobs to finish */
    io_job_t *head, *tail; /* not started yet */
    int started; /* the thread runs (in this process: reset after fork) */
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
       PTHREAD_COND_INITIALIZER, NULL, NULL, 0};

/* One job: the blocking path's data movement. */
static void run_job(io_job_t *j)
{
    if (j->call != NULL) {
        j->call(j->arg);
        return;
    }
    if (io_move(j->fh, j->wr, 0, &j->a, j->buf, j->count, j->dt, &j->m) !=
        MPI_SUCCESS)
        io_move_why(j->fh, j->wr, &j->a, &j->m, j->why, sizeof(j->why));
}

/* The job is over (q.lock held): the file's count of jobs drops, drains
 * wake, and so does a waiter asleep on this process's doorbell. */
static void job_over(io_job_t *j)
{
    j->fh->async--;
    pthread_cond_broadcast(&q.idle);
    /* The last touch of the job: the request's poll may free it. */
    __atomic_store_n(&j->finished, 1, __ATOMIC_SEQ_CST);
    wire_shm_wake_self();
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
        /* Out of the queue once started: a cancel no longer finds it. */
        j = q.head;
        q.head = j->next;
        if (q.head == NULL)
            q.tail = NULL;
        pthread_mutex_unlock(&q.lock);
        run_job(j);
        pthread_mutex_lock(&q.lock);
        job_over(j);
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
    io_status_set(&r->status, j->m.bytes);
    r->status.shoal_cancelled = j->cancelled;
    r->status.MPI_ERROR = j->m.rc;
    return 1; /* progress completes it */
}

/* MPI_Cancel: a job still waiting in the queue comes out of it. */
static int job_cancel(MPI_Request r, int complete)
{
    io_job_t *j = r->extra, *prev = NULL, *k;

    (void)complete;
    pthread_mutex_lock(&q.lock);
    for (k = q.head; k != NULL && k != j; k = k->next)
        prev = k;
    if (k == j) {
        if (prev != NULL)
            prev->next = j->next;
        else
            q.head = j->next;
        if (q.tail == j)
            q.tail = prev;
        j->m = (io_move_t){0};
        j->cancelled = 1;
        job_over(j);
    }
    pthread_mutex_unlock(&q.lock);
    return MPI_SUCCESS;
}

/* An error of the access, raised by the completing call (MPI_Wait, ...:
 * fn) on the file's handler; MPI_FILE_NULL's once the file is closed. */
static int job_raise(MPI_Request r, int err, const char *fn)
{
    io_job_t *j = r->extra;
    MPI_File fh = io_file_ok(j->fh) ? j->fh : MPI_FILE_NULL;

    if (err == MPI_ERR_IN_STATUS)
        return io_error(fh, err, fn,
                        "a request failed (%s in the background: %s); see "
                        "the statuses",
                        j->fn, j->why);
    return io_error(fh, err, fn, "%s in the background: %s", j->fn, j->why);
}

static int job_free(MPI_Request r)
{
    io_job_t *j = r->extra;

    io_file_unref(j->fh);
    free(j);
    r->extra = NULL;
    return MPI_SUCCESS;
}

int io_async_start(MPI_File fh, const char *fn, int wr, const io_acc_t *a,
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
    j->fh = fh;
    j->fn = fn;
    j->wr = wr;
    j->a = *a;
    j->buf = buf;
    j->count = count;
    j->dt = dt;
    mpi_dt_retain(dt);
    io_file_ref(fh);
    r->dt = dt;
    r->buf = buf;
    r->count = count;
    r->extra = j;
    r->poll_fn = job_poll;
    r->free_fn = job_free;
    r->cancel_fn = job_cancel;
    r->raise_fn = job_raise;
    pthread_mutex_lock(&q.lock);
    if ((rc = start_thread()) != 0) {
        pthread_mutex_unlock(&q.lock);
        mpi_req_free(r); /* releases dt */
        io_file_unref(fh);
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

io_job_t *io_async_call(MPI_File fh, void (*call)(void *arg), void *arg,
                        int *err_p)
{
    io_job_t *j = calloc(1, sizeof(*j));
    int rc;

    *err_p = 0;
    if (j == NULL) {
        *err_p = ENOMEM;
        return NULL;
    }
    j->fh = fh;
    j->call = call;
    j->arg = arg;
    pthread_mutex_lock(&q.lock);
    if ((rc = start_thread()) != 0) {
        pthread_mutex_unlock(&q.lock);
        free(j);
        *err_p = rc;
        return NULL;
    }
    if (q.tail != NULL)
        q.tail->next = j;
    else
        q.head = j;
    q.tail = j;
    fh->async++;
    pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    return j;
}

int io_async_call_done(io_job_t *j)
{
    return __atomic_load_n(&j->finished, __ATOMIC_SEQ_CST);
}

void io_async_call_wait(io_job_t *j)
{
    /* job_over marks it finished and broadcasts idle under the lock. */
    pthread_mutex_lock(&q.lock);
    while (!__atomic_load_n(&j->finished, __ATOMIC_SEQ_CST))
        pthread_cond_wait(&q.idle, &q.lock);
    pthread_mutex_unlock(&q.lock);
}

void io_async_call_free(io_job_t *j)
{
    free(j);
}
