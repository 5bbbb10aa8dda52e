/*
 * Checkpoints the launcher asks for (docs/FT.md, "Checkpoints the
 * launcher asks for"): shoalrun --checkpoint-every SECONDS, or SIGUSR1 to
 * shoalrun.  A rank can only resume where the program knows how to, so
 * the checkpoint is taken at a point the program offers: it calls
 * MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, &taken) once per iteration
 * (every rank the same number of times), and that call writes a
 * checkpoint (MPIX_Checkpoint) only at the call number every rank agreed
 * on; otherwise it costs a counter, a clock read every CLOCK_EVERY calls
 * and, at most every LOOK_NS, a look at the launcher's socket.  No message between the ranks when nothing is
 * asked.
 *
 * The agreement, with the launcher as the coordinator:
 *   1. shoalrun sends every rank "shoal-ckpt-request id=K";
 *   2. each rank, where it first sees it -- in this call, or in any MPI
 *      wait (the waits look at the launcher's socket with the peer check,
 *      am.wait_hook) -- answers "shoal-ckpt-at id=K count=C", C the calls
 *      it has completed; a rank that finishes says its last count once
 *      ("shoal-ckpt-final");
 *   3. with every answer in, shoalrun sends "shoal-ckpt-target id=K
 *      count=T", T = the largest C + 1;
 *   4. a rank that answered and reaches its next call before it knows T
 *      waits there for T (no rank can pass T unknowingly: T is past every
 *      rank's count when it answered); the call numbered T checkpoints.
 * No deadlock: a rank waiting for T waits only for answers, and every
 * other rank answers from wherever it waits, without needing it.
 * shoalrun starts a request only when every rank said it is ready (end
 * of MPI_Init), and one at a time; a rank handles them in order.
 */
#include <pthread.h>

#include "am/am.h"
#include "boot/boot.h"
#include "mpi/core/ft.h"

/* A call looks at the launcher's socket at most this often when no
 * request is known (a syscall; the clock read is tens of ns). */
#define LOOK_NS 1000000ull
#define CLOCK_EVERY 16
/* Waiting for the target: progress, then wait this long on the socket. */
#define AWAIT_MS 1
/* A rank asleep in an MPI wait (often for a rank that waits for the
 * target) looks at the launcher's socket at least this often: as often
 * as SHOAL_FT_DETECT's default looks for dead peers (a shorter nap makes
 * am_wait.c's lost wake-up check misfire on a loaded host, where a
 * waker may be descheduled for longer). */
#define WAIT_LOOK_NS 50000000ull

static struct {
    pthread_mutex_t lock;
    int on;             /* shoalrun may ask (SHOAL_CKPT_TRIGGER) */
    int final;          /* MPI_Finalize said our last count */
    uint64_t calls;     /* MPIX_Checkpoint_if_requested calls completed */
    uint64_t last_look; /* base_time_ns of the last look */
    unsigned tick;      /* calls since the clock was read (one thread) */
    long handled;       /* newest request answered */
    long cur;           /* the request answered, not taken yet; 0: none */
    long target;        /* its call number, once known; 0: not yet */
} trig = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Read the launcher's notices; answer a new request if none is pending.
 * Under trig.lock. */
static void look_locked(void)
{
    long req, tid, t;

    boot_ckpt_notices(&req, &tid, &t);
    if (trig.cur == 0 && req > trig.handled && !trig.final) {
        trig.cur = trig.handled = req;
        trig.target = 0;
        if (boot_tell("shoal-ckpt-at", req, (long)trig.calls) != SHOAL_OK)
            base_warn("ckpt", "cannot answer the launcher's checkpoint "
                      "request %ld: %s", req, shoal_error_detail());
    }
    if (trig.cur != 0 && tid == trig.cur)
        trig.target = t;
}

/* In MPI waits (am_wait.c, with the peer check). */
static void wait_hook(void)
{
    if (pthread_mutex_trylock(&trig.lock) != 0)
        return;
    if (trig.on && !trig.final)
        look_locked();
    pthread_mutex_unlock(&trig.lock);
}

void mpi_ckpt_trigger_init(void)
{
    if (!base_cfg.CKPT_TRIGGER || base_cfg.CKPT_DIR == NULL ||
        base_cfg.CKPT_DIR[0] == '\0')
        return;
    if (boot_tell("shoal-ckpt-ready", -1, 0) != SHOAL_OK) {
        base_warn("ckpt", "SHOAL_CKPT_TRIGGER is set but the launcher "
                  "cannot be told: %s; checkpoints it asks for are off",
                  shoal_error_detail());
        return;
    }
    pthread_mutex_lock(&trig.lock);
    trig.on = 1;
    pthread_mutex_unlock(&trig.lock);
    am.wait_hook = wait_hook;
    if (am.peer_check > WAIT_LOOK_NS)
        am.peer_check = WAIT_LOOK_NS;
}

void mpi_ckpt_trigger_final(void)
{
    pthread_mutex_lock(&trig.lock);
    if (trig.on && !trig.final) {
        trig.final = 1;
        boot_tell("shoal-ckpt-final", -1, (long)trig.calls);
    }
    pthread_mutex_unlock(&trig.lock);
    am.wait_hook = NULL;
}

void mpi_ckpt_trigger_fini(void)
{
    pthread_mutex_lock(&trig.lock);
    trig.on = trig.final = 0;
    trig.calls = trig.last_look = 0;
    trig.handled = trig.cur = trig.target = 0;
    pthread_mutex_unlock(&trig.lock);
}

/* The target of the pending request, waiting for it if need be. */
static long await_target(void)
{
    long t;

    pthread_mutex_lock(&trig.lock);
    t = trig.target;
    pthread_mutex_unlock(&trig.lock);
    while (t == 0) {
        mpi_progress(); /* the others may need us to get there */
        boot_await(AWAIT_MS);
        pthread_mutex_lock(&trig.lock);
        look_locked();
        t = trig.target;
        pthread_mutex_unlock(&trig.lock);
    }
    return t;
}

int PMPIX_Checkpoint_if_requested(MPI_Comm comm, int *taken)
{
    const char *fn = "MPIX_Checkpoint_if_requested";
    uint64_t now, here;
    long t;

    MPI_CHECK_INIT(fn);
    if (taken == NULL)
        return mpi_error(mpi_comm_ok(comm) ? comm : NULL, MPI_ERR_ARG, fn,
                         "taken is NULL");
    if (comm != MPI_COMM_WORLD)
        return mpi_error(mpi_comm_ok(comm) ? comm : NULL, MPI_ERR_COMM, fn,
                         "comm must be MPI_COMM_WORLD (checkpoints are of "
                         "the whole job)");
    *taken = 0;
    if (!trig.on) { /* no launcher to ask: a counter */
        trig.calls++;
        return MPI_SUCCESS;
    }
    /* Nothing pending, one thread (the wait hook runs in ours): the clock
     * only every CLOCK_EVERY calls, no lock. */
    if (!mpi.mt && trig.cur == 0 && (++trig.tick % CLOCK_EVERY != 0 ||
                                     base_time_ns() - trig.last_look <
                                         LOOK_NS)) {
        trig.calls++;
        return MPI_SUCCESS;
    }
    now = base_time_ns();
    pthread_mutex_lock(&trig.lock);
    if (trig.cur == 0 ? now - trig.last_look >= LOOK_NS : trig.target == 0) {
        trig.last_look = now;
        look_locked();
    }
    here = trig.calls + 1;
    if (trig.cur == 0) {
        trig.calls = here;
        pthread_mutex_unlock(&trig.lock);
        return MPI_SUCCESS;
    }
    pthread_mutex_unlock(&trig.lock);
    t = await_target();
    if ((uint64_t)t < here)
        return mpi_error(comm, MPI_ERR_INTERN, fn, "the checkpoint asked "
                         "for call %ld is past (this is call %llu)", t,
                         (unsigned long long)here);
    int rc = MPI_SUCCESS;
    if ((uint64_t)t == here) {
        rc = PMPIX_Checkpoint(comm);
        *taken = rc == MPI_SUCCESS;
    }
    pthread_mutex_lock(&trig.lock);
    if ((uint64_t)t == here) {
        trig.cur = trig.target = 0;
        trig.last_look = 0; /* a request waiting: answer it at once */
    }
    trig.calls = here;
    pthread_mutex_unlock(&trig.lock);
    return rc;
}
SHOAL_MPIX_WEAK(Checkpoint_if_requested)
