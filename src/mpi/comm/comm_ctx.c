/*
 * Context ids: every communicator uses ctx (point-to-point) and ctx + 1
 * (collectives), so ids are even; 0 is MPI_COMM_WORLD's, 2 MPI_COMM_SELF's.
 * A new communicator's id must be free in every member, so each process
 * keeps a bitmap of its free slots (slot = ctx / 2) and the members AND
 * their bitmaps together and take the lowest common slot.
 *
 * With MPI_THREAD_MULTIPLE two threads may agree at once on different
 * parents, and a nonblocking agreement (MPI_Comm_idup, the shrinks) runs
 * from the progress engine while the program makes other communicators;
 * their picks could collide.  One agreement per process owns the bitmap at
 * a time; any other contributes nothing and marks the result busy, so all
 * its members retry.  Ownership goes to the waiting agreement with the
 * lowest key (the parent's ctx, then the idup's number on it: see
 * mpi_ctx_key), the same order in every process, so some agreement always
 * completes.  Keys must be unique among agreements in flight: with two
 * idups of one parent under one key, each process could hand the bitmap
 * back to whichever of the two finished its round first, and the two
 * would keep making each other busy forever.
 *
 * Blocking and nonblocking agreements own the bitmap separately, each
 * offering only its half of the slots (blocking the lower, nonblocking the
 * upper): an idup started on some ranks before a blocking construction
 * and on the others after it (MPI allows it: MPI_Comm_create_group is
 * collective over its group only) cannot hold the bitmap while it waits
 * for ranks that are inside the blocking agreement, which would stay busy
 * forever.  When a member's half is full it says so (wide), and the next
 * round offers every free slot, owning both halves.
 *
 * An owner waits for the other members' part of its round, so it must
 * only own once they have all started the agreement: an idup's first
 * round only joins (comm_idup.c), and an agreement of one member takes
 * its slot without owning anything (mpi_ctx_alone).
 */
#include <sched.h>
#include <string.h>

#include "base/base_bitmap.h"
#include "mpi/comm/comm.h"

static uint64_t free_slots[MPI_CTX_WORDS];
static int slots_ready, in_flight[2]; /* [nonblocking] */
/* The epoch clock, and each taken slot's epoch (mpi_ctx_epoch). */
static uint64_t epoch_clock, slot_epoch[MPI_CTX_SLOTS];

#define MAX_WAITERS 64
static uint64_t waiters[MAX_WAITERS];
static int waiter_class[MAX_WAITERS];
static int nwaiters;

/* Slots of a class's half: [0, SLOTS/2) blocking, the rest nonblocking. */
#define HALF_WORDS (MPI_CTX_WORDS / 2)

/* Called with mpi_obj_lock held. */
static void slots_init(void)
{
    if (slots_ready)
        return;
    memset(free_slots, 0xff, sizeof(free_slots));
    base_bitmap_clear(free_slots, 0);
    base_bitmap_clear(free_slots, 1);
    slots_ready = 1;
}

/* A wide round waits for both classes, a narrow one for its own. */
static int lowest_waiter(int cls, int wide, uint64_t key)
{
    for (int i = 0; i < nwaiters; i++)
        if (waiters[i] < key && (wide || waiter_class[i] == cls))
            return 0;
    return 1;
}

static void waiter_add(mpi_ctx_try_t *t)
{
    if (!t->waiting && nwaiters < MAX_WAITERS) {
        waiter_class[nwaiters] = t->nonblocking != 0;
        waiters[nwaiters++] = t->key;
        t->waiting = 1;
    }
}

static void waiter_remove(mpi_ctx_try_t *t)
{
    if (!t->waiting)
        return;
    for (int i = 0; i < nwaiters; i++)
        if (waiters[i] == t->key &&
            waiter_class[i] == (t->nonblocking != 0)) {
            waiters[i] = waiters[--nwaiters];
            waiter_class[i] = waiter_class[nwaiters];
            break;
        }
    t->waiting = 0;
}

static int half_full(int cls)
{
    for (int w = 0; w < HALF_WORDS; w++)
        if (free_slots[cls * HALF_WORDS + w] != 0)
            return 0;
    return 1;
}

void mpi_ctx_begin(mpi_ctx_try_t *t, uint64_t key)
{
    int waiting = t->waiting, nonblocking = t->nonblocking, wide = t->wide;
    int cls = nonblocking != 0;

    memset(&t->mask, 0, sizeof(t->mask));
    t->nonblocking = nonblocking;
    t->wide = wide;
    t->key = key;
    t->owner = 0;
    t->waiting = waiting;
    pthread_mutex_lock(&mpi_obj_lock);
    slots_init();
    if (!wide && half_full(cls))
        t->mask.wide = 1; /* this round finds nothing; the next goes wide */
    if (!in_flight[cls] && (!wide || !in_flight[!cls]) &&
        lowest_waiter(cls, wide, key)) {
        in_flight[cls] = 1;
        if (wide)
            in_flight[!cls] = 1;
        t->owner = 1;
        waiter_remove(t);
        if (wide)
            memcpy(t->mask.free, free_slots, sizeof(free_slots));
        else
            memcpy(t->mask.free + cls * HALF_WORDS,
                   free_slots + cls * HALF_WORDS,
                   HALF_WORDS * sizeof(free_slots[0]));
    } else {
        waiter_add(t);
        t->mask.busy = 1;
    }
    t->mask.wide |= (uint64_t)wide;
    t->mask.epoch = epoch_clock;
    pthread_mutex_unlock(&mpi_obj_lock);
}

void mpi_ctx_combine(void *acc, const void *in, size_t len)
{
    mpi_ctx_mask_t *a = acc;
    const mpi_ctx_mask_t *b = in;

    (void)len;
    for (int i = 0; i < MPI_CTX_WORDS; i++)
        a->free[i] &= b->free[i];
    a->busy |= b->busy;
    a->wide |= b->wide;
    /* >= every member's: what the epoch needs.  The largest, so epochs
     * grow by one a communicator (an OR, which a shrink's agreement
     * takes, may double them). */
    if (b->epoch > a->epoch)
        a->epoch = b->epoch;
}

int mpi_ctx_end(mpi_ctx_try_t *t, const mpi_ctx_mask_t *agreed, int take,
                uint32_t *ctx_p)
{
    size_t slot = base_bitmap_next_set(agreed->free, MPI_CTX_SLOTS, 0);
    int rc;

    pthread_mutex_lock(&mpi_obj_lock);
    if (slot < MPI_CTX_SLOTS) {
        if (take) {
            uint64_t e = agreed->epoch + 1;
            base_bitmap_clear(free_slots, slot);
            __atomic_store_n(&slot_epoch[slot], e, __ATOMIC_RELAXED);
            if (e > epoch_clock)
                epoch_clock = e;
        }
        *ctx_p = (uint32_t)slot * 2;
        rc = MPI_SUCCESS;
    } else {
        /* Busy, or a member's half was full and this round was narrow:
         * once more (wide then); a wide round that found nothing: full. */
        rc = agreed->busy || (agreed->wide && !t->wide) ? -1 : MPI_ERR_OTHER;
    }
    if (t->owner) {
        in_flight[t->nonblocking != 0] = 0;
        if (t->wide)
            in_flight[t->nonblocking == 0] = 0;
    }
    t->owner = 0;
    t->wide = rc == -1 && agreed->wide != 0;
    if (rc != -1)
        waiter_remove(t);
    pthread_mutex_unlock(&mpi_obj_lock);
    if (rc == -1 && !t->nonblocking) {
        mpi_progress();
        sched_yield();
    }
    return rc;
}

void mpi_ctx_free(uint32_t ctx)
{
    size_t slot = ctx / 2;

    if (slot < 2 || slot >= MPI_CTX_SLOTS)
        return;
    pthread_mutex_lock(&mpi_obj_lock);
    base_bitmap_set(free_slots, slot);
    pthread_mutex_unlock(&mpi_obj_lock);
}

/*
 * A restart puts a communicator back with the context id and epoch it had
 * (core/ckpt_objs.c): every member does the same, so no agreement is
 * needed.  MPI_ERR_OTHER when the slot is taken (the program made that
 * communicator again first).
 */
int mpi_ctx_claim(uint32_t ctx, uint64_t epoch)
{
    size_t slot = ctx / 2;
    int rc = MPI_ERR_OTHER;

    if (slot < 2 || slot >= MPI_CTX_SLOTS || ctx % 2 != 0)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&mpi_obj_lock);
    slots_init();
    if (base_bitmap_test(free_slots, slot) && !in_flight[0] &&
        !in_flight[1]) {
        base_bitmap_clear(free_slots, slot);
        __atomic_store_n(&slot_epoch[slot], epoch, __ATOMIC_RELAXED);
        if (epoch > epoch_clock)
            epoch_clock = epoch;
        rc = MPI_SUCCESS;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    return rc;
}

uint64_t mpi_ctx_epoch(uint32_t ctx)
{
    size_t slot = ctx / 2;

    return slot < MPI_CTX_SLOTS
               ? __atomic_load_n(&slot_epoch[slot], __ATOMIC_RELAXED)
               : 0;
}

/*
 * An agreement of one member (a dup of MPI_COMM_SELF, a group of one)
 * needs nobody else: it takes the lowest free slot of a half no agreement
 * owns, at once.  It must not wait for the bitmap: the owner may be
 * waiting for another process that waits, through the program's order of
 * calls in some thread, for this very agreement to finish (MPICH's
 * threads/comm/comm_dup_deadlock: each rank dups MPI_COMM_SELF, then a
 * communicator of all, in one thread while another thread dups another
 * communicator of all).  A slot outside every owned half cannot collide
 * with an owner's pick: owners copy the bitmap when they start.  With
 * both halves owned it waits as before (-1).  MPI_Comm_idup of a
 * one-process communicator uses it too.
 */
int mpi_ctx_alone(uint32_t *ctx_p)
{
    int rc = -1;

    pthread_mutex_lock(&mpi_obj_lock);
    slots_init();
    for (int cls = 0; cls < 2 && rc != MPI_SUCCESS; cls++) {
        size_t slot;

        if (in_flight[cls])
            continue;
        slot = base_bitmap_next_set(free_slots + cls * HALF_WORDS,
                                    MPI_CTX_SLOTS / 2, 0);
        if (slot < MPI_CTX_SLOTS / 2) {
            slot += (size_t)cls * (MPI_CTX_SLOTS / 2);
            base_bitmap_clear(free_slots, slot);
            __atomic_store_n(&slot_epoch[slot], ++epoch_clock,
                             __ATOMIC_RELAXED);
            *ctx_p = (uint32_t)slot * 2;
            rc = MPI_SUCCESS;
        }
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    return rc;
}

int mpi_ctx_agree(const mpi_members_t *m, int take, uint32_t *ctx_p)
{
    mpi_ctx_try_t t;
    int rc;

    if (m->n == 1 && take && mpi_ctx_alone(ctx_p) == MPI_SUCCESS)
        return MPI_SUCCESS;
    t.waiting = 0;
    t.nonblocking = 0;
    t.wide = 0;
    do {
        mpi_ctx_begin(&t, mpi_ctx_key(m->comm->ctx, MPI_CTX_NTH_BLOCKING));
        rc = mpi_members_allreduce(m, &t.mask, sizeof(t.mask),
                                   mpi_ctx_combine);
        if (rc != MPI_SUCCESS) {
            mpi_ctx_end(&t, &(mpi_ctx_mask_t){{0}, 0, 0, 0}, 0, ctx_p);
            return rc;
        }
        rc = mpi_ctx_end(&t, &t.mask, take, ctx_p);
    } while (rc == -1);
    return rc;
}

int mpi_ctx_agree_inter(MPI_Comm inter, uint32_t *ctx_p)
{
    mpi_ctx_try_t t;
    int rc;

    t.waiting = 0;
    t.nonblocking = 0;
    t.wide = 0;
    do {
        mpi_ctx_begin(&t, mpi_ctx_key(inter->ctx, MPI_CTX_NTH_BLOCKING));
        rc = mpi_inter_allreduce(inter, &t.mask, sizeof(t.mask),
                                 mpi_ctx_combine, MPI_COMM_TAG_INTER);
        if (rc != MPI_SUCCESS) {
            mpi_ctx_end(&t, &(mpi_ctx_mask_t){{0}, 0, 0, 0}, 0, ctx_p);
            return rc;
        }
        rc = mpi_ctx_end(&t, &t.mask, 1, ctx_p);
    } while (rc == -1);
    return rc;
}

int mpi_ctx_alloc(MPI_Comm parent, int nmembers, const int *members, int tag,
                  uint32_t *ctx_p)
{
    mpi_members_t m;
    int rc;

    if (parent->is_inter)
        return mpi_ctx_agree_inter(parent, ctx_p);
    rc = mpi_members_init(&m, parent, members != NULL ? nmembers
                                                      : parent->size,
                          members, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpi_ctx_agree(&m, 1, ctx_p);
}
