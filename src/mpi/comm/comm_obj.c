/*
 * Communicator objects: building one from groups and an agreed context,
 * and releasing it when the last reference goes.  The calls that create
 * communicators (dup, split, ...) are in comm_*.c; they all end here.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"
#include "mpi/core/obj_arena.h"
#include "mpi/core/ft.h"
#include "mpi/p2p/p2p_engine.h"


/*
 * Freed communicators go to a list for reuse instead of back to malloc, so
 * a stale handle still points at readable memory whose magic says "freed"
 * (MPI_ERR_COMM) rather than at memory the allocator handed elsewhere.
 */
static MPI_Comm recycled;

static MPI_Comm comm_alloc(void)
{
    MPI_Comm c;

    pthread_mutex_lock(&mpi_obj_lock);
    c = recycled;
    if (c != NULL)
        recycled = (MPI_Comm)c->coll;
    pthread_mutex_unlock(&mpi_obj_lock);
    if (c == NULL)
        return mpi_obj_alloc(sizeof(*c));
    memset(c, 0, sizeof(*c));
    return c;
}

static void comm_recycle(MPI_Comm c)
{
    pthread_mutex_lock(&mpi_obj_lock);
    c->coll = recycled; /* the link; magic stays MPI_MAGIC_DEAD */
    recycled = c;
    pthread_mutex_unlock(&mpi_obj_lock);
}

static int comm_setup(MPI_Comm c, MPI_Comm parent, MPI_Group group,
                      MPI_Group remote, uint32_t ctx)
{
    if (remote == NULL)
        remote = group;
    c->magic = MPI_MAGIC_COMM;
    c->refs = 1;
    c->ctx = ctx;
    c->group = group;
    c->remote_group = remote;
    __atomic_add_fetch(&group->refs, 1, __ATOMIC_RELAXED);
    if (remote != group)
        __atomic_add_fetch(&remote->refs, 1, __ATOMIC_RELAXED);
    c->rank = group->rank;
    c->size = group->size;
    c->is_inter = remote != group;
    c->remote_size = remote->size;
    c->peer_world = remote->world;
    c->mq = mpi_matchq_get(ctx);
    c->cq = mpi_matchq_get(ctx + 1);
    if (c->mq == NULL || c->cq == NULL)
        return MPI_ERR_INTERN;
    c->ep = mpi_matchq_ep(c->mq);
    c->errh = parent != NULL && parent->errh != NULL ? parent->errh
                                                     : MPI_ERRORS_ARE_FATAL;
    __atomic_add_fetch(&c->errh->refs, 1, __ATOMIC_RELAXED);
    if (BASE_UNLIKELY(mpi_ft.by_ctx != NULL))
        mpi_ft_comm_register(c);
    return mpi_coll_comm_init(c);
}

int mpi_comm_build(MPI_Comm parent, MPI_Group group, MPI_Group remote_group,
                   uint32_t ctx, MPI_Comm *comm_p)
{
    MPI_Comm c = comm_alloc();
    int rc;

    if (c == NULL)
        return MPI_ERR_NO_MEM;
    mpi_lock();
    rc = comm_setup(c, parent, group, remote_group, ctx);
    mpi_unlock();
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(c);
        return rc;
    }
    *comm_p = c;
    return MPI_SUCCESS;
}

static void comm_teardown(MPI_Comm c)
{
    mpi_comm_destroy_hook(c);
    if (BASE_UNLIKELY(mpi_ft.on)) {
        mpi_lock();
        /* What a failure or a revocation left unreceived is no news.
         * Some of it may still be on its way (the messages of a
         * collective that gave up, of a send nobody will receive): they
         * carry this communicator's epoch, so a later one made with the
         * same context id drops them (p2p_engine.c, mpi_arrive and
         * mpi_matchq_get), and the id is free again at once. */
        if (c->mq != NULL && mpi_ft_comm_broken(c) != MPI_SUCCESS) {
            c->mq->quiet = 1;
            c->cq->quiet = 1;
        }
        mpi_ft_comm_unregister(c);
        mpi_unlock();
    } else if (BASE_UNLIKELY(mpi_ft.by_ctx != NULL)) {
        mpi_lock();
        mpi_ft_comm_unregister(c); /* kept for checkpoints */
        mpi_unlock();
    }
    if (c->coll != NULL)
        mpi_coll_comm_fini(c);
    mpi_lock();
    mpi_matchq_put(c->mq);
    mpi_matchq_put(c->cq);
    mpi_unlock();
    c->mq = c->cq = NULL;
    if (c != MPI_COMM_WORLD && c != MPI_COMM_SELF)
        mpi_ctx_free(c->ctx);
    if (c->remote_group != NULL && c->remote_group != c->group)
        mpi_group_release(c->remote_group);
    mpi_group_release(c->group);
    if (c->errh != NULL && c->errh->kind == 4 &&
        __atomic_sub_fetch(&c->errh->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        c->errh->magic = MPI_MAGIC_DEAD;
        mpi_obj_free(c->errh);
    }
    c->magic = MPI_MAGIC_DEAD;
}

void mpi_comm_release(MPI_Comm c)
{
    if (c == NULL || mpi_ref_dec(&c->refs) > 0)
        return;
    comm_teardown(c);
    if (c != MPI_COMM_WORLD && c != MPI_COMM_SELF)
        comm_recycle(c);
}

/* COMM_WORLD (context 0) and COMM_SELF (context 2). */
int mpi_comm_init_predef(void)
{
    MPI_Group world, self;
    int *ranks = malloc((size_t)mpi.world_size * sizeof(int));
    int rc;

    if (ranks == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < mpi.world_size; i++)
        ranks[i] = i;
    rc = mpi_group_new(mpi.world_size, ranks, &world);
    free(ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpi_group_new(1, &mpi.world_rank, &self);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = comm_setup(MPI_COMM_WORLD, NULL, world, NULL, 0);
    if (rc == MPI_SUCCESS)
        rc = comm_setup(MPI_COMM_SELF, NULL, self, NULL, 2);
    mpi_group_release(world); /* the communicators hold them */
    mpi_group_release(self);
    strcpy(MPI_COMM_WORLD->name, "MPI_COMM_WORLD");
    strcpy(MPI_COMM_SELF->name, "MPI_COMM_SELF");
    return rc;
}

void mpi_comm_fini_predef(void)
{
    mpi_comm_release(MPI_COMM_SELF);
    mpi_comm_release(MPI_COMM_WORLD);
}
