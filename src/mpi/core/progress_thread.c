/*
 * SHOAL_PROGRESS=thread: one thread per process advances the wires,
 * rendezvous transfers and polled requests (nonblocking collectives, idup)
 * while the application computes without calling MPI.  It is the
 * commodity stand-in for the NIC-resident progress of Yu's collectives
 * and Pakin's all-hardware barrier (digests 003 §6-7, 000 §4.5.2).
 *
 * The thread takes the engine lock for each round, so MPI_Init turns the
 * lock on (mpi.mt) even for single-threaded programs.  When rounds find
 * nothing it polls a little, yields a little, and then sleeps on this
 * process's doorbell like any waiting rank (on every wire: TCP sockets
 * too when TCP is up): arriving frames, and peers that set shared-memory
 * flags, ring it (wire_shm_wake).  The
 * application's own waits never sleep on that doorbell while the thread
 * runs (mpi_wait_until polls and naps instead), so it has one sleeper.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "am/am.h"
#include "mpi/p2p/p2p_engine.h"
#include "wire/wire.h"

/* Idle rounds spent polling, then yielding, before the thread sleeps:
 * short, because every round it spins is taken from the application. */
#define SPIN_ROUNDS 256
#define YIELD_ROUNDS 32
/* Longest sleep while the engine has something to retry (channel space,
 * credits): those wake no doorbell of ours. */
#define RETRY_NAP_NS 200000ull

static pthread_t thread;
static int running;
static atomic_int stopping;

static void doze(void)
{
    uint64_t nap = am.peer_check;
    int ready;

    mpi_lock();
    if (!mpi_progress_idle())
        nap = RETRY_NAP_NS;
    ready = am_sleep_arm();
    mpi_unlock();
    if (!ready && !atomic_load_explicit(&stopping, memory_order_acquire))
        am_sleep(nap);
    mpi_lock();
    am_sleep_disarm();
    mpi_unlock();
}

static void *progress_main(void *arg)
{
    unsigned idle = 0;

    (void)arg;
    while (!atomic_load_explicit(&stopping, memory_order_acquire)) {
        int handled;
        mpi_lock();
        handled = am_progress();
        mpi_progress_extra();
        mpi_unlock();
        if (handled > 0) {
            idle = 0;
        } else if (++idle < SPIN_ROUNDS) {
            base_cpu_relax();
        } else if (idle < SPIN_ROUNDS + YIELD_ROUNDS) {
            sched_yield();
        } else {
            doze();
            idle = SPIN_ROUNDS; /* after a wake-up: yield a little first */
        }
    }
    return NULL;
}

int mpi_progress_thread_start(void)
{
    int rc;

    if (base_cfg.PROGRESS != 1)
        return SHOAL_OK;
    mpi.mt = 1;
    atomic_store(&stopping, 0);
    rc = pthread_create(&thread, NULL, progress_main, NULL);
    if (rc != 0)
        return base_err(SHOAL_ERR_NOMEM, "SHOAL_PROGRESS=thread: cannot "
                        "start the progress thread: %s", strerror(rc));
    running = 1;
    wire_shm_waiting(1); /* the thread answers peers' requests */
    return SHOAL_OK;
}

void mpi_progress_thread_stop(void)
{
    if (!running)
        return;
    atomic_store_explicit(&stopping, 1, memory_order_release);
    wire_shm_wake_self();
    pthread_join(thread, NULL);
    running = 0;
    wire_shm_waiting(-1);
}
