/*
 * Doorbells: a futex word in each rank's control block.  The owner sets it
 * to 1 before it sleeps and rechecks its channels; a sender that finds it 1
 * after publishing swaps it to 0 and wakes the owner.  Senders pay one load
 * of a line that stays in their cache while nobody sleeps.
 *
 * That is a Dekker pattern (store data, load flag / store flag, load data)
 * and needs a full barrier on both sides.  The senders' side runs on every
 * message, the sleepers' side after milliseconds of waiting, so the cost is
 * moved there: every rank registers for membarrier(GLOBAL_EXPEDITED) and a
 * rank about to sleep calls it after raising its flag, which makes every
 * running thread of the registered processes pass a full barrier (and a
 * thread that is not running passed one when it was switched out).  Then a
 * sender's plain store is visible to the sleeper's recheck, or the sender's
 * load sees the flag.  When membarrier is missing (old kernels, seccomp) or
 * SHOAL_SHM_FENCE=full, every rank uses fenced stores instead.
 *
 * A rank that must also wake for sockets (the TCP wire is up) sleeps in
 * epoll instead of on the futex: it raises its flag to 2, not 1, and a
 * sender that swaps a 2 away sends a byte to the sleeper's datagram socket
 * (abstract unix name from the job's prefix and the rank), which that
 * epoll watches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "shm.h"

uint32_t shm_sleep_value = 1;
static int wake_fd = -1; /* ours, bound, when the doorbell is a socket */
static int ring_fd = -1; /* unbound, for sending wake-ups */

static socklen_t wake_name(int rank, struct sockaddr_un *sa)
{
    int n;

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* Abstract: sun_path[0] is NUL; nothing appears in the file system. */
    n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%swake%d",
                 shm_state.job->shm_prefix, rank);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int wire_shm_wake_fd(void)
{
    struct sockaddr_un sa;
    socklen_t len;

    if (wake_fd >= 0)
        return wake_fd;
    if (shm_state.job == NULL)
        return -1;
    len = wake_name(shm_state.job->rank, &sa);
    wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (wake_fd >= 0 && bind(wake_fd, (struct sockaddr *)&sa, len) != 0) {
        base_warn("shm", "cannot bind the wake-up socket: %s; sleeping "
                  "ranks wake for shared memory every few milliseconds",
                  strerror(errno));
        close(wake_fd);
        wake_fd = -1;
    }
    if (wake_fd >= 0)
        shm_sleep_value = 2;
    return wake_fd;
}

void shm_doorbell_fini(void)
{
    if (wake_fd >= 0)
        close(wake_fd);
    if (ring_fd >= 0)
        close(ring_fd);
    wake_fd = ring_fd = -1;
    shm_sleep_value = 1;
}

static void ring_socket(int rank)
{
    struct sockaddr_un sa;
    socklen_t len = wake_name(rank, &sa);
    char byte = 1;

    if (ring_fd < 0)
        ring_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* A full socket already holds a wake-up: losing this one is fine. */
    if (ring_fd >= 0)
        sendto(ring_fd, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
               (struct sockaddr *)&sa, len);
}

static long futex_op(_Atomic uint32_t *word, int op, uint32_t val,
                     const struct timespec *timeout)
{
    /* Not FUTEX_PRIVATE: the word is shared between processes. */
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

int shm_doorbell_ring(shm_ctrl_t *ctrl)
{
    if (BASE_LIKELY(atomic_load_explicit(&ctrl->sleeping,
                                         memory_order_seq_cst) == 0))
        return 0;
    uint32_t was =
        atomic_exchange_explicit(&ctrl->sleeping, 0, memory_order_acq_rel);
    if (was == 0)
        return 0; /* another sender rang first */
    if (was == 2)
        ring_socket(ctrl->rank);
    else
        futex_op(&ctrl->sleeping, FUTEX_WAKE, 1, NULL);
    return 1;
}

void wire_shm_wake(int rank)
{
    shm_state_t *s = &shm_state;
    int slot;

    if (s->job == NULL || rank < 0 || rank >= s->job->size)
        return;
    slot = s->slot_of[rank];
    if (slot >= 0 && s->peers[slot].ctrl != NULL &&
        shm_doorbell_ring(s->peers[slot].ctrl))
        wire_stats.doorbells++;
}

const _Atomic uint32_t *wire_shm_bell(int rank)
{
    shm_ctrl_t *ctrl = shm_local_ctrl(rank);

    return ctrl != NULL ? &ctrl->sleeping : NULL;
}

int wire_shm_rung(void)
{
    /* A ring swaps the word the arm set to 0 (shm_doorbell_ring). */
    return shm_state.me == NULL ||
           atomic_load_explicit(&shm_state.me->sleeping,
                                memory_order_acquire) == 0;
}

void wire_shm_wake_self(void)
{
    if (shm_state.me != NULL)
        shm_doorbell_ring(shm_state.me);
}

/* A load and a store, not a locked add: the count is advice (whom to ask
 * for help copying), and a wait's end is on the small-message path.  Two
 * threads racing may leave it off by one: a peer then asks for help that
 * comes at our next MPI call, or copies alone. */
void wire_shm_waiting(int delta)
{
    _Atomic uint32_t *w;

    if (shm_state.me == NULL)
        return;
    w = &shm_state.me->waiting;
    atomic_store_explicit(
        w, atomic_load_explicit(w, memory_order_relaxed) + (uint32_t)delta,
        memory_order_relaxed);
}

int wire_shm_peer_waiting(int rank)
{
    shm_ctrl_t *ctrl = shm_local_ctrl(rank);

    return ctrl != NULL &&
           atomic_load_explicit(&ctrl->waiting, memory_order_relaxed) != 0;
}

int shm_doorbell_wait(shm_ctrl_t *ctrl, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u),
                          (long)(timeout_ns % 1000000000u)};

    if (shm_sleep_value == 2) {
        /* The doorbell is the socket (a thread sleeping here alone). */
        struct pollfd pfd = {wake_fd, POLLIN, 0};
        char sink[64];
        poll(&pfd, 1, (int)((timeout_ns + 999999) / 1000000));
        while (recv(wake_fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
            ;
        return SHOAL_OK;
    }
    if (futex_op(&ctrl->sleeping, FUTEX_WAIT, 1, &ts) != 0 &&
        errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT)
        return base_err(SHOAL_ERR_SYSTEM, "futex wait failed");
    return SHOAL_OK;
}

int shm_fence_register(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED))
        return 0;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0,
                   0) == 0;
}

void shm_fence_heavy(void)
{
    if (shm_state.light &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
        base_fatal("membarrier failed after it was registered: %s",
                   strerror(errno));
}
