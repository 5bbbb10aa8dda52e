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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm.h"

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
    if (atomic_exchange_explicit(&ctrl->sleeping, 0, memory_order_acq_rel) ==
        0)
        return 0; /* another sender rang first */
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

void wire_shm_wake_self(void)
{
    if (shm_state.me != NULL)
        shm_doorbell_ring(shm_state.me);
}

int shm_doorbell_wait(shm_ctrl_t *ctrl, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u),
                          (long)(timeout_ns % 1000000000u)};

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
