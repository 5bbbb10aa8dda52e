/*
 * Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge.
 *
 * Both groups must use one context id (the engine matches by context and
 * the sender's local rank), so the id is agreed across both: each group
 * combines its free-id masks, the two leaders swap theirs over the peer
 * communicator and broadcast the combination to their group.  Everyone
 * ends with the same mask and so the same choice, or the same decision to
 * try again.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

/* What a leader tells its group about the other side. */
typedef struct leader_news {
    int rc;          /* nonzero: the call fails everywhere */
    int remote_size;
} leader_news_t;

/* Leaders: swap world-rank lists over peer_comm. */
static int leaders_swap_groups(MPI_Comm local, MPI_Comm peer, int remote_leader,
                               int tag, int **remote_p, int *n_p)
{
    int n = 0, rc;

    rc = mpi_sendrecv_internal(&local->size, 1, MPI_INT, remote_leader, &n,
                               1, MPI_INT, remote_leader, tag, peer, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n <= 0)
        return MPI_ERR_INTERN;
    *remote_p = malloc((size_t)n * sizeof(int));
    if (*remote_p == NULL)
        return MPI_ERR_NO_MEM;
    *n_p = n;
    return mpi_sendrecv_internal(local->group->world, local->size, MPI_INT,
                                 remote_leader, *remote_p, n, MPI_INT,
                                 remote_leader, tag, peer, 1);
}

/* The leader's part of the first step, with its argument checks. */
static int leader_first(MPI_Comm local, MPI_Comm peer, int remote_leader,
                        int tag, int **remote_p, int *n_p)
{
    if (!mpi_comm_ok(peer) || peer->is_inter)
        return MPI_ERR_COMM;
    if (remote_leader < 0 || remote_leader >= peer->size ||
        remote_leader == peer->rank)
        return MPI_ERR_RANK;
    return leaders_swap_groups(local, peer, remote_leader, tag, remote_p,
                               n_p);
}

/* Does any world rank appear in both lists? */
static int overlap(MPI_Group g, const int *world, int n)
{
    int *idx = mpi_group_world_index(g), hit = 0;

    if (idx == NULL)
        return 1;
    for (int i = 0; i < n && !hit; i++)
        hit = idx[world[i]] >= 0;
    free(idx);
    return hit;
}

/* Agree on a context id across both groups. */
static int inter_ctx(const mpi_members_t *m, int leader, MPI_Comm peer,
                     int remote_leader, int tag, uint32_t *ctx_p)
{
    mpi_ctx_try_t t;
    mpi_ctx_mask_t theirs;
    int rc;

    t.waiting = 0;
    t.nonblocking = 0;
    t.wide = 0;
    do {
        mpi_ctx_begin(&t, mpi_ctx_key(m->comm->ctx, MPI_CTX_NTH_BLOCKING));
        rc = mpi_members_allreduce(m, &t.mask, sizeof(t.mask),
                                   mpi_ctx_combine);
        if (rc == MPI_SUCCESS && m->me == leader) {
            rc = mpi_sendrecv_internal(&t.mask, sizeof(t.mask), MPI_BYTE,
                                       remote_leader, &theirs,
                                       sizeof(theirs), MPI_BYTE,
                                       remote_leader, tag, peer, 1);
            mpi_ctx_combine(&t.mask, &theirs, sizeof(theirs));
        }
        if (rc == MPI_SUCCESS)
            rc = mpi_members_bcast(m, leader, &t.mask, sizeof(t.mask));
        if (rc != MPI_SUCCESS) {
            mpi_ctx_end(&t, &(mpi_ctx_mask_t){{0}, 0, 0, 0}, 0, ctx_p);
            return rc;
        }
        rc = mpi_ctx_end(&t, &t.mask, 1, ctx_p);
    } while (rc == -1);
    return rc;
}

/* Every member learns the remote group (world ranks) from the leader. */
static int learn_remote(const mpi_members_t *m, int leader, MPI_Comm peer,
                        int remote_leader, int tag, int **remote_p, int *n_p)
{
    leader_news_t news = {MPI_SUCCESS, 0};
    int *remote = NULL, rc;

    if (m->me == leader) {
        news.rc = leader_first(m->comm, peer, remote_leader, tag, &remote,
                               &news.remote_size);
        if (news.rc == MPI_SUCCESS &&
            overlap(m->comm->group, remote, news.remote_size))
            news.rc = MPI_ERR_COMM;
    }
    rc = mpi_members_bcast(m, leader, &news, sizeof(news));
    if (rc == MPI_SUCCESS)
        rc = news.rc;
    if (rc == MPI_SUCCESS && m->me != leader) {
        remote = malloc((size_t)news.remote_size * sizeof(int));
        rc = remote != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = mpi_members_bcast(m, leader, remote,
                               (size_t)news.remote_size * sizeof(int));
    if (rc != MPI_SUCCESS) {
        free(remote);
        return rc;
    }
    *remote_p = remote;
    *n_p = news.remote_size;
    return MPI_SUCCESS;
}

int mpi_intercomm_make(MPI_Comm local_comm, int local_leader,
                       MPI_Comm peer_comm, int remote_leader, int itag,
                       MPI_Comm *newintercomm)
{
    MPI_Group remote_group = MPI_GROUP_NULL;
    mpi_members_t m;
    uint32_t ctx;
    int *remote = NULL, n = 0, rc;

    mpi_members_init(&m, local_comm, local_comm->size, NULL,
                     MPI_COMM_TAG_BCAST);
    rc = learn_remote(&m, local_leader, peer_comm, remote_leader, itag,
                      &remote, &n);
    if (rc != MPI_SUCCESS)
        return -rc - 1; /* told apart from the building's errors below */
    m.tag = MPI_COMM_TAG_CTX;
    rc = inter_ctx(&m, local_leader, peer_comm, remote_leader, itag, &ctx);
    if (rc == MPI_SUCCESS) {
        rc = mpi_group_new(n, remote, &remote_group);
        if (rc != MPI_SUCCESS)
            mpi_ctx_free(ctx);
    }
    free(remote);
    if (rc == MPI_SUCCESS) {
        rc = mpi_comm_make(local_comm, local_comm->group, remote_group, ctx,
                           newintercomm);
        mpi_group_release(remote_group);
    }
    return rc;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                          MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    int rc;

    MPI_CHECK_INIT(fn);
    MPI_COMM_CHECK(local_comm, fn);
    if (local_comm->is_inter)
        return mpi_error(local_comm, MPI_ERR_COMM, fn,
                         "local_comm is an intercommunicator");
    if (local_leader < 0 || local_leader >= local_comm->size)
        return mpi_error(local_comm, MPI_ERR_RANK, fn,
                         "local_leader %d is not in [0, %d)", local_leader,
                         local_comm->size);
    if (tag < 0)
        return mpi_error(local_comm, MPI_ERR_TAG, fn, "tag %d is negative",
                         tag);
    if (newintercomm == NULL)
        return mpi_error(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
    *newintercomm = MPI_COMM_NULL;
    rc = mpi_intercomm_make(local_comm, local_leader, peer_comm,
                            remote_leader, mpi_comm_tag_inter(tag),
                            newintercomm);
    if (rc < 0)
        return mpi_error(local_comm, -rc - 1, fn,
                         "the leaders could not exchange groups (bad "
                         "peer_comm or remote_leader %d, or the groups "
                         "overlap)",
                         remote_leader);
    if (rc != MPI_SUCCESS)
        return mpi_error(local_comm, rc, fn,
                         "building the intercommunicator failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Intercomm_create)

/* ---- merge ---------------------------------------------------------------------- */

/* Does the local group come first in the merged communicator? */
static int local_first(MPI_Comm inter, int high, int remote_high)
{
    if (high != remote_high)
        return !high;
    return inter->group->world[0] < inter->remote_group->world[0];
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Group first, second;
    uint32_t ctx;
    int *world, rc, mine = high != 0, theirs = 0;

    MPI_CHECK_INIT(fn);
    MPI_COMM_CHECK(intercomm, fn);
    if (!intercomm->is_inter)
        return mpi_error(intercomm, MPI_ERR_COMM, fn,
                         "not an intercommunicator");
    if (newintracomm == NULL)
        return mpi_error(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
    rc = mpi_inter_swap(intercomm, &mine, &theirs, sizeof(int),
                        MPI_COMM_TAG_MERGE);
    if (rc == MPI_SUCCESS)
        rc = mpi_ctx_agree_inter(intercomm, &ctx);
    if (rc != MPI_SUCCESS)
        return mpi_error(intercomm, rc, fn, "agreeing with the remote group "
                                            "failed");
    first = local_first(intercomm, mine, theirs) ? intercomm->group
                                                  : intercomm->remote_group;
    second = first == intercomm->group ? intercomm->remote_group
                                       : intercomm->group;
    world = malloc((size_t)(first->size + second->size) * sizeof(int));
    rc = world != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        memcpy(world, first->world, (size_t)first->size * sizeof(int));
        memcpy(world + first->size, second->world,
               (size_t)second->size * sizeof(int));
        rc = mpi_group_new(first->size + second->size, world, &group);
    }
    free(world);
    if (rc != MPI_SUCCESS) {
        mpi_ctx_free(ctx);
        return mpi_error(intercomm, rc, fn, "no memory");
    }
    rc = mpi_comm_make(intercomm, group, MPI_GROUP_NULL, ctx, newintracomm);
    mpi_group_release(group);
    if (rc != MPI_SUCCESS)
        return mpi_error(intercomm, rc, fn, "building the communicator failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Intercomm_merge)
