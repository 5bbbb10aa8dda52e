/*
 * MPI_Comm_create (collective over the parent, intra- or
 * intercommunicator) and MPI_Comm_create_group
 * (collective over the group's members only, so its agreement runs among
 * them, separated from concurrent ones by the caller's tag).
 */
#include <stdlib.h>

#include "mpi/comm/comm.h"

/* Parent ranks of group's members, in group order; -1 when not all are. */
static int parent_ranks(MPI_Comm comm, MPI_Group group, int *ranks)
{
    int *idx = mpi_group_world_index(comm->group);

    if (idx == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < group->size; i++) {
        ranks[i] = idx[group->world[i]];
        if (ranks[i] < 0) {
            free(idx);
            return -1;
        }
    }
    free(idx);
    return MPI_SUCCESS;
}

static int check_args(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm,
                      int allow_inter, int **ranks_p, const char *fn)
{
    int rc;

    MPI_COMM_CHECK(comm, fn);
    if (!mpi_group_ok(group))
        return mpi_error(comm, MPI_ERR_GROUP, fn, "invalid group %p",
                         (void *)group);
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (comm->is_inter && !allow_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "comm must be an intracommunicator");
    *ranks_p = malloc(((size_t)group->size + 1) * sizeof(int));
    if (*ranks_p == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    rc = parent_ranks(comm, group, *ranks_p);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    free(*ranks_p);
    if (rc == -1)
        return mpi_error(comm, MPI_ERR_GROUP, fn,
                         "the group has processes outside the communicator");
    return mpi_error(comm, rc, fn, "no memory");
}

/*
 * Comm_create over an intercommunicator: group is a subgroup of the local
 * group, and the new intercommunicator joins it to the group the remote
 * processes passed.  Every process tells everyone its place in its group,
 * which rebuilds the remote group in its own order.  When either group is
 * empty nobody gets a communicator.
 */
static int inter_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int32_t mine = group->rank == MPI_UNDEFINED ? -1 : group->rank;
    int32_t *lall = malloc((size_t)comm->size * sizeof(*lall));
    int32_t *rall = malloc((size_t)comm->remote_size * sizeof(*rall));
    int *world = malloc((size_t)comm->remote_size * sizeof(*world));
    MPI_Group remote = MPI_GROUP_NULL;
    uint32_t ctx = 0;
    int n = 0, rc = lall && rall && world ? MPI_SUCCESS : MPI_ERR_NO_MEM;

    if (rc == MPI_SUCCESS)
        rc = mpi_inter_allgather(comm, &mine, sizeof(mine), lall, rall,
                                 MPI_COMM_TAG_ISPLIT);
    if (rc == MPI_SUCCESS)
        rc = mpi_ctx_agree_inter(comm, &ctx);
    for (int j = 0; rc == MPI_SUCCESS && j < comm->remote_size; j++)
        n += rall[j] >= 0;
    for (int j = 0; rc == MPI_SUCCESS && j < comm->remote_size; j++) {
        if (rall[j] < 0)
            continue;
        /* The remote processes disagree about their group. */
        if (rall[j] >= n)
            rc = MPI_ERR_GROUP;
        else
            world[rall[j]] = comm->remote_group->world[j];
    }
    if (rc == MPI_SUCCESS && mine >= 0 && n > 0)
        rc = mpi_group_new(n, world, &remote);
    if (rc == MPI_SUCCESS && remote != MPI_GROUP_NULL) {
        rc = mpi_comm_make(comm, group, remote, ctx, newcomm);
        mpi_group_release(remote);
    } else if (ctx != 0) {
        mpi_ctx_free(ctx);
    }
    free(lall);
    free(rall);
    free(world);
    return rc;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create";
    mpi_members_t m;
    uint32_t ctx;
    int *ranks, rc, member;

    MPI_CHECK_INIT(fn);
    rc = check_args(comm, group, newcomm, 1, &ranks, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    free(ranks);
    *newcomm = MPI_COMM_NULL;
    if (comm->is_inter) {
        rc = inter_create(comm, group, newcomm);
        if (rc != MPI_SUCCESS)
            return mpi_error(comm, rc, fn,
                             "building the intercommunicator failed");
        return MPI_SUCCESS;
    }
    member = group->rank != MPI_UNDEFINED;
    mpi_members_init(&m, comm, comm->size, NULL, MPI_COMM_TAG_CTX);
    rc = mpi_ctx_agree(&m, member, &ctx);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "agreeing on a context id failed");
    if (!member)
        return MPI_SUCCESS;
    rc = mpi_comm_make(comm, group, MPI_GROUP_NULL, ctx, newcomm);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "building the communicator failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_create)

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                           MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_group";
    mpi_members_t m;
    uint32_t ctx;
    int *ranks, rc;

    MPI_CHECK_INIT(fn);
    rc = check_args(comm, group, newcomm, 0, &ranks, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (tag < 0) {
        free(ranks);
        return mpi_error(comm, MPI_ERR_TAG, fn, "tag %d is negative", tag);
    }
    *newcomm = MPI_COMM_NULL;
    if (group->rank == MPI_UNDEFINED) {
        free(ranks);
        return mpi_error(comm, MPI_ERR_GROUP, fn,
                         "the calling process is not in the group");
    }
    mpi_members_init(&m, comm, group->size, ranks, mpi_comm_tag_group(tag));
    rc = mpi_ctx_agree(&m, 1, &ctx);
    free(ranks);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "agreeing on a context id failed");
    rc = mpi_comm_make(comm, group, MPI_GROUP_NULL, ctx, newcomm);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "building the communicator failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_create_group)
