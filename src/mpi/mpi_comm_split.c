/*
 * MPI_Comm_split and MPI_Comm_split_type.  Every process learns every
 * (color, key) pair, so each can list its new group without further talk;
 * one context id agreed over the whole parent serves all colors, because
 * the new communicators have disjoint members.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_comm.h"

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

/* World ranks of the members of color, ordered. */
static int color_members(MPI_Comm comm, split_entry_t *all, int64_t color,
                         int **world_p, int *n_p)
{
    int n = 0, *world;

    for (int i = 0; i < comm->size; i++)
        if (all[i].color == color)
            all[n++] = all[i];
    qsort(all, (size_t)n, sizeof(*all), by_key);
    world = malloc((size_t)n * sizeof(int));
    if (world == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        world[i] = comm->group->world[all[i].rank];
    *world_p = world;
    *n_p = n;
    return MPI_SUCCESS;
}

int mpi_comm_split_core(MPI_Comm comm, int64_t color, int key,
                        MPI_Comm *newcomm_p)
{
    split_entry_t mine = {color < 0 ? -1 : color, key, comm->rank};
    split_entry_t *all = malloc((size_t)comm->size * sizeof(*all));
    mpi_members_t m;
    MPI_Group group = MPI_GROUP_NULL;
    uint32_t ctx = 0;
    int *world = NULL, n = 0, rc;

    *newcomm_p = MPI_COMM_NULL;
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
    rc = color_members(comm, all, mine.color, &world, &n);
    if (rc == MPI_SUCCESS)
        rc = mpi_group_new(n, world, &group);
    if (rc == MPI_SUCCESS) {
        rc = mpi_comm_make(comm, group, MPI_GROUP_NULL, ctx, newcomm_p);
        mpi_group_release(group);
    } else {
        mpi_ctx_free(ctx);
    }
    free(world);
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
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Comm_split",
                         "splitting intercommunicators is not supported");
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
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "splitting intercommunicators is not supported");
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
