/*
 * The group API: queries, translation, comparison and the set operations.
 * A group is an ordered list of world ranks (group_obj.c), so every
 * operation works on world ranks; membership tests go through a table
 * indexed by world rank, built once per call.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

#define GROUP_CHECK(g, fn, what)                                             \
    do {                                                                     \
        if (BASE_UNLIKELY(!mpi_group_ok(g)))                                 \
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_GROUP, fn,              \
                             "%s is not a valid group (%p)", what,           \
                             (void *)(g));                                   \
    } while (0)

#define OUT_CHECK(p, fn, what)                                               \
    do {                                                                     \
        if (BASE_UNLIKELY((p) == NULL))                                      \
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%s is NULL",  \
                             what);                                          \
    } while (0)

int *mpi_group_world_index(MPI_Group g)
{
    int *idx = malloc((size_t)(mpi.world_size > 0 ? mpi.world_size : 1) *
                      sizeof(int));

    if (idx == NULL)
        return NULL;
    for (int i = 0; i < mpi.world_size; i++)
        idx[i] = -1;
    for (int i = 0; i < g->size; i++)
        idx[g->world[i]] = i;
    return idx;
}

int mpi_group_cmp(MPI_Group a, MPI_Group b)
{
    int *idx, same_order = 1, result = MPI_SIMILAR;

    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = a->world[i] == b->world[i];
    if (same_order)
        return MPI_IDENT;
    idx = mpi_group_world_index(b);
    if (idx == NULL)
        return MPI_UNEQUAL;
    for (int i = 0; i < a->size; i++)
        if (idx[a->world[i]] < 0)
            result = MPI_UNEQUAL;
    free(idx);
    return result;
}

/* A new group (or MPI_GROUP_EMPTY) from n world ranks. */
static int group_out(int n, const int *world, MPI_Group *out, const char *fn)
{
    int rc;

    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    rc = mpi_group_new(n, world, out);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, fn, "no memory for %d members",
                         n);
    return MPI_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------ */

int PMPI_Group_size(MPI_Group group, int *size)
{
    MPI_CHECK_INIT("MPI_Group_size");
    GROUP_CHECK(group, "MPI_Group_size", "group");
    OUT_CHECK(size, "MPI_Group_size", "size");
    *size = group->size;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    MPI_CHECK_INIT("MPI_Group_rank");
    GROUP_CHECK(group, "MPI_Group_rank", "group");
    OUT_CHECK(rank, "MPI_Group_rank", "rank");
    *rank = group->rank;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                               MPI_Group group2, int ranks2[])
{
    const char *fn = "MPI_Group_translate_ranks";
    int *idx;

    MPI_CHECK_INIT(fn);
    GROUP_CHECK(group1, fn, "group1");
    GROUP_CHECK(group2, fn, "group2");
    if (n < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n is %d", n);
    if (n > 0 && (ranks1 == NULL || ranks2 == NULL))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "ranks1 or ranks2 is NULL with n = %d", n);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL &&
            (ranks1[i] < 0 || ranks1[i] >= group1->size))
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                             "ranks1[%d] = %d is not a rank of group1 "
                             "(size %d)",
                             i, ranks1[i], group1->size);
    idx = mpi_group_world_index(group2);
    if (idx == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL)
            ranks2[i] = MPI_PROC_NULL;
        else if (idx[group1->world[r]] < 0)
            ranks2[i] = MPI_UNDEFINED;
        else
            ranks2[i] = idx[group1->world[r]];
    }
    free(idx);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    MPI_CHECK_INIT("MPI_Group_compare");
    GROUP_CHECK(group1, "MPI_Group_compare", "group1");
    GROUP_CHECK(group2, "MPI_Group_compare", "group2");
    OUT_CHECK(result, "MPI_Group_compare", "result");
    *result = mpi_group_cmp(group1, group2);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_compare)

/* ---- set operations --------------------------------------------------------- */

enum { OP_UNION, OP_INTERSECTION, OP_DIFFERENCE };

static int set_op(int op, MPI_Group a, MPI_Group b, MPI_Group *out,
                  const char *fn)
{
    int *idx, *world, n = 0, rc;

    MPI_CHECK_INIT(fn);
    GROUP_CHECK(a, fn, "group1");
    GROUP_CHECK(b, fn, "group2");
    OUT_CHECK(out, fn, "newgroup");
    idx = mpi_group_world_index(b);
    world = malloc((size_t)(a->size + b->size + 1) * sizeof(int));
    if (idx == NULL || world == NULL) {
        free(idx);
        free(world);
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    }
    for (int i = 0; i < a->size; i++) {
        int in_b = idx[a->world[i]] >= 0;
        if (op == OP_UNION || (op == OP_INTERSECTION) == in_b)
            world[n++] = a->world[i];
    }
    if (op == OP_UNION) {
        /* b's members not in a, in b's order: mark a's members first. */
        for (int i = 0; i < b->size; i++)
            idx[b->world[i]] = 1;
        for (int i = 0; i < a->size; i++)
            idx[a->world[i]] = 0;
        for (int i = 0; i < b->size; i++)
            if (idx[b->world[i]] == 1)
                world[n++] = b->world[i];
    }
    rc = group_out(n, world, out, fn);
    free(idx);
    free(world);
    return rc;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(OP_UNION, group1, group2, newgroup, "MPI_Group_union");
}
SHOAL_MPI_WEAK(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                            MPI_Group *newgroup)
{
    return set_op(OP_INTERSECTION, group1, group2, newgroup,
                  "MPI_Group_intersection");
}
SHOAL_MPI_WEAK(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                          MPI_Group *newgroup)
{
    return set_op(OP_DIFFERENCE, group1, group2, newgroup,
                  "MPI_Group_difference");
}
SHOAL_MPI_WEAK(Group_difference)

/* ---- subsets by rank -------------------------------------------------------- */

/*
 * Check that ranks[0..n) are distinct ranks of g; marks them in seen
 * (g->size entries, zeroed by the caller).
 */
static int check_ranks(MPI_Group g, int n, const int *ranks, char *seen,
                       const char *fn)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                             "ranks[%d] = %d is not a rank of the group "
                             "(size %d)",
                             i, r, g->size);
        if (seen[r])
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                             "rank %d appears twice in ranks", r);
        seen[r] = 1;
    }
    return MPI_SUCCESS;
}

/* Keep the ranks of g listed (incl) or those not listed (excl). */
static int subset(MPI_Group g, int n, const int *ranks, int incl,
                  MPI_Group *out, const char *fn)
{
    char *seen;
    int *world, m = 0, rc;

    MPI_CHECK_INIT(fn);
    GROUP_CHECK(g, fn, "group");
    OUT_CHECK(out, fn, "newgroup");
    if (n < 0 || n > g->size)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "n = %d is not in [0, %d] (the group's size)", n,
                         g->size);
    if (n > 0 && ranks == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "ranks is NULL with n = %d", n);
    seen = calloc((size_t)g->size + 1, 1);
    world = malloc(((size_t)g->size + 1) * sizeof(int));
    if (seen == NULL || world == NULL) {
        free(seen);
        free(world);
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    }
    rc = check_ranks(g, n, ranks, seen, fn);
    if (rc == MPI_SUCCESS) {
        if (incl)
            for (int i = 0; i < n; i++)
                world[m++] = g->world[ranks[i]];
        else
            for (int r = 0; r < g->size; r++)
                if (!seen[r])
                    world[m++] = g->world[r];
        rc = group_out(m, world, out, fn);
    }
    free(seen);
    free(world);
    return rc;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                    MPI_Group *newgroup)
{
    return subset(group, n, ranks, 1, newgroup, "MPI_Group_incl");
}
SHOAL_MPI_WEAK(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                    MPI_Group *newgroup)
{
    return subset(group, n, ranks, 0, newgroup, "MPI_Group_excl");
}
SHOAL_MPI_WEAK(Group_excl)

/* Expand (first, last, stride) triplets into a list of ranks. */
static int expand_ranges(MPI_Group g, int n, int ranges[][3], int **list_p,
                         int *count_p, const char *fn)
{
    long total = 0;
    int *list, k = 0;

    if (n < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n is %d", n);
    if (n > 0 && ranges == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                         "ranges is NULL with n = %d", n);
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                             "ranges[%d] = (%d, %d, %d) names a rank outside "
                             "[0, %d)",
                             i, first, last, stride, g->size);
        if (stride == 0 || (first < last && stride < 0) ||
            (first > last && stride > 0))
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                             "ranges[%d] = (%d, %d, %d): stride %d cannot go "
                             "from %d to %d",
                             i, first, last, stride, stride, first, last);
        total += ((long)last - first) / stride + 1;
        if (total > g->size)
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
                             "the ranges name more ranks than the group's "
                             "%d, so some repeat",
                             g->size);
    }
    list = malloc(((size_t)total + 1) * sizeof(int));
    if (list == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride)
            list[k++] = (int)r;
    }
    *list_p = list;
    *count_p = k;
    return MPI_SUCCESS;
}

static int range_subset(MPI_Group g, int n, int ranges[][3], int incl,
                        MPI_Group *out, const char *fn)
{
    int *list = NULL, count = 0, rc;

    MPI_CHECK_INIT(fn);
    GROUP_CHECK(g, fn, "group");
    OUT_CHECK(out, fn, "newgroup");
    rc = expand_ranges(g, n, ranges, &list, &count, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = subset(g, count, list, incl, out, fn);
    free(list);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group *newgroup)
{
    return range_subset(group, n, ranges, 1, newgroup,
                        "MPI_Group_range_incl");
}
SHOAL_MPI_WEAK(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group *newgroup)
{
    return range_subset(group, n, ranges, 0, newgroup,
                        "MPI_Group_range_excl");
}
SHOAL_MPI_WEAK(Group_range_excl)

int PMPI_Group_free(MPI_Group *group)
{
    MPI_CHECK_INIT("MPI_Group_free");
    OUT_CHECK(group, "MPI_Group_free", "group");
    GROUP_CHECK(*group, "MPI_Group_free", "*group");
    mpi_group_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_free)

/* ---- groups of communicators ------------------------------------------------- */

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    MPI_CHECK_INIT("MPI_Comm_group");
    MPI_COMM_CHECK(comm, "MPI_Comm_group");
    if (group == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_group",
                         "group is NULL");
    mpi_group_retain(comm->group);
    *group = comm->group;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_group)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    MPI_CHECK_INIT("MPI_Comm_remote_group");
    MPI_COMM_CHECK(comm, "MPI_Comm_remote_group");
    if (!comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Comm_remote_group",
                         "not an intercommunicator");
    if (group == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_remote_group",
                         "group is NULL");
    mpi_group_retain(comm->remote_group);
    *group = comm->remote_group;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_remote_group)
