/*
 * Group objects: a list of world ranks plus this process's position in it.
 * The group API (set operations, translation) is in group_api.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/core/obj_arena.h"
#include "mpi/mpi_impl.h"


int mpi_group_new(int n, const int *world, MPI_Group *group_p)
{
    MPI_Group g = mpi_obj_alloc(sizeof(*g));
    int *ranks = n > 0 ? malloc((size_t)n * sizeof(int)) : NULL;

    if (g == NULL || (n > 0 && ranks == NULL)) {
        mpi_obj_free(g);
        free(ranks);
        return MPI_ERR_NO_MEM;
    }
    g->magic = MPI_MAGIC_GROUP;
    g->refs = 1;
    g->size = n;
    g->rank = MPI_UNDEFINED;
    g->world = ranks;
    for (int i = 0; i < n; i++) {
        ranks[i] = world[i];
        if (world[i] == mpi.world_rank)
            g->rank = i;
    }
    *group_p = g;
    return MPI_SUCCESS;
}

void mpi_group_release(MPI_Group g)
{
    if (g == NULL || g == MPI_GROUP_EMPTY)
        return;
    if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    g->magic = MPI_MAGIC_DEAD;
    free(g->world);
    mpi_obj_free(g);
}
