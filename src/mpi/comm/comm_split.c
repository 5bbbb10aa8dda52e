/*
 * MPI_Comm_split and MPI_Comm_split_type, of intra- and
 * intercommunicators.  Every process learns every (color, key) pair, so
 * each can list its new group without further talk; one context id agreed
 * over the whole parent serves all colors, because the new communicators
 * have disjoint members.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/comm/comm.h"

typedef struct split_entry {
    int64_t color; /* < 0: MPI_UNDEFINED */
    int32_t key, rank;
} split_entry_t;

/* Order by key, ties by rank in the parent. */
static int by_key(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The group of the members of color among g's (all[i] from g's rank i),
 * ordered; MPI_GROUP_NULL when there are none. */
static int color_group(MPI_Group g, split_entry_t *all, int64_t color,
                       MPI_Group *group_p)
{
    int n = 0, *world, rc;

    *group_p = MPI_GROUP_NULL;
    for (int i = 0; i < g->size; i++)
        if (all[i].color == color)
            all[n++] = all[i];
    if (n == 0)
        return MPI_SUCCESS;
    qsort(all, (size_t)n, sizeof(*all), by_key);
    world = malloc((size_t)n * sizeof(int));
    if (world == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        world[i] = g->world[all[i].rank];
    rc = mpi_group_new(n, world, group_p);
    free(world);
    return rc;
}

/*
 * An intercommunicator splits into intercommunicators, one per color,
 * between that color's members in each group; where a color has members in
 * one group only, they get MPI_COMM_NULL.  One context id agreed over both
 * groups serves every color (the members are disjoint); whoever builds
 * nothing gives it back.
 */
static int inter_split(MPI_Comm comm, split_entry_t mine, MPI_Comm *newcomm_p)
{
    split_entry_t *lall = malloc((size_t)comm->size * sizeof(*lall));
    split_entry_t *rall = malloc((size_t)comm->remote_size * sizeof(*rall));
    MPI_Group lg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL;
    uint32_t ctx = 0;
    int rc = lall && rall ? MPI_SUCCESS : MPI_ERR_NO_MEM;

    if (rc == MPI_SUCCESS)
        rc = mpi_inter_allgather(comm, &mine, sizeof(mine), lall, rall,
                                 MPI_COMM_TAG_ISPLIT);
    if (rc == MPI_SUCCESS)
        rc = mpi_ctx_agree_inter(comm, &ctx);
    if (rc == MPI_SUCCESS && mine.color >= 0)
        rc = color_group(comm->group, lall, mine.color, &lg);
    if (rc == MPI_SUCCESS && mine.color >= 0)
        rc = color_group(comm->remote_group, rall, mine.color, &rg);
    if (rc == MPI_SUCCESS && rg != MPI_GROUP_NULL) {
        rc = mpi_comm_make(comm, lg, rg, ctx, newcomm_p);
    } else if (ctx != 0) {
        mpi_ctx_free(ctx);
    }
    if (lg != MPI_GROUP_NULL)
        mpi_group_release(lg);
    if (rg != MPI_GROUP_NULL)
        mpi_group_release(rg);
    free(lall);
    free(rall);
    return rc;
}

int mpi_comm_split_core(MPI_Comm comm, int64_t color, int key,
                        MPI_Comm *newcomm_p)
{
    split_entry_t mine = {color < 0 ? -1 : color, key, comm->rank};
    split_entry_t *all = malloc((size_t)comm->size * sizeof(*all));
    mpi_members_t m;
    MPI_Group group = MPI_GROUP_NULL;
    uint32_t ctx = 0;
    int rc;

    *newcomm_p = MPI_COMM_NULL;
    if (comm->is_inter) {
        free(all);
        return inter_split(comm, mine, newcomm_p);
    }
    if (all == NULL)
        return MPI_ERR_NO_MEM;
    mpi_members_init(&m, comm, comm->size, NULL, MPI_COMM_TAG_SPLIT);
    rc = mpi_members_allgather(&m, &mine, sizeof(mine), all);
    if (rc == MPI_SUCCESS) {
        m.tag = MPI_COMM_TAG_CTX;
        rc = mpi_ctx_agree(&m, mine.color >= 0, &ctx);
    }
    if (rc != MPI_SUCCESS || mine.color < 0) {
        free(all);
        return rc;
    }
    rc = color_group(comm->group, all, mine.color, &group);
    if (rc == MPI_SUCCESS) {
        rc = mpi_comm_make(comm, group, MPI_GROUP_NULL, ctx, newcomm_p);
        mpi_group_release(group);
    } else {
        mpi_ctx_free(ctx);
    }
    free(all);
    return rc;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc;

    MPI_CHECK_INIT("MPI_Comm_split");
    MPI_COMM_CHECK(comm, "MPI_Comm_split");
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split",
                         "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split",
                         "color %d is negative and not MPI_UNDEFINED",
                         color);
    rc = mpi_comm_split_core(comm, color == MPI_UNDEFINED ? -1 : color, key,
                             newcomm);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, "MPI_Comm_split",
                         "building the new communicator failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_split)

/* ---- split_type ------------------------------------------------------------------ */

/* This host, as a non-negative 63-bit color. */
static int64_t host_color(void)
{
    char host[256] = "";

    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    return (int64_t)(base_hash64(host, strlen(host)) >> 1);
}

/*
 * Whether split_type with this info splits by host.  Unguided splits must
 * give strict subsets; guided ones name the resource in the info.
 */
static int split_by_host(int split_type, MPI_Info info)
{
    const char *res;

    if (split_type == MPI_COMM_TYPE_SHARED ||
        split_type == MPI_COMM_TYPE_HW_UNGUIDED)
        return 1;
    res = mpi_info_lookup(info, "mpi_hw_resource_type");
    return res != NULL && strcmp(res, "mpi_shared_memory") == 0;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                         MPI_Info info, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split_type";
    int64_t color = -1;
    int rc;

    MPI_CHECK_INIT(fn);
    MPI_COMM_CHECK(comm, fn);
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED &&
        split_type != MPI_COMM_TYPE_HW_UNGUIDED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED)
        return mpi_error(comm, MPI_ERR_ARG, fn, "unknown split_type %d",
                         split_type);
    if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO)
        return mpi_error(comm, MPI_ERR_INFO, fn, "invalid info %p",
                         (void *)info);
    if (split_type != MPI_UNDEFINED && split_by_host(split_type, info))
        color = host_color();
    rc = mpi_comm_split_core(comm, color, key, newcomm);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "building the new communicator failed");
    /* An unguided split that would not shrink the parent gives nothing. */
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && *newcomm != MPI_COMM_NULL &&
        (*newcomm)->size == comm->size) {
        MPI_Comm c = *newcomm;
        *newcomm = MPI_COMM_NULL;
        mpi_comm_release(c);
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_split_type)
