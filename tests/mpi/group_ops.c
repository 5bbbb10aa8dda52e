/*
 * Groups: size/rank, translation (MPI_PROC_NULL, MPI_UNDEFINED), compare,
 * the set operations (empty results are MPI_GROUP_EMPTY), incl/excl and
 * the range forms, bad arguments with the right classes, Comm_group.
 */
#include "mpitest.h"

static int size, rank;

/* The group of world ranks listed. */
static MPI_Group make(MPI_Group world, int n, const int *ranks)
{
    MPI_Group g;
    MT_OK(MPI_Group_incl(world, n, ranks, &g));
    return g;
}

static void expect_members(MPI_Group world, MPI_Group g, int n,
                           const int *want)
{
    int gs, *in = malloc(sizeof(int) * (size_t)(n + 1)),
            *out = malloc(sizeof(int) * (size_t)(n + 1));

    MT_OK(MPI_Group_size(g, &gs));
    MT_CHECK(gs == n, "size %d, want %d", gs, n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MT_OK(MPI_Group_translate_ranks(g, n, in, world, out));
    for (int i = 0; i < n; i++)
        MT_CHECK(out[i] == want[i], "member %d is %d, want %d", i, out[i],
                 want[i]);
    free(in);
    free(out);
}

static void queries(MPI_Group world)
{
    int s, r, res;
    MPI_Group empty;

    MT_OK(MPI_Group_size(world, &s));
    MT_CHECK(s == size, "world group size %d", s);
    MT_OK(MPI_Group_rank(world, &r));
    MT_CHECK(r == rank, "world group rank %d", r);
    MT_OK(MPI_Group_size(MPI_GROUP_EMPTY, &s));
    MT_CHECK(s == 0, "empty size %d", s);
    MT_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    MT_CHECK(r == MPI_UNDEFINED, "empty rank %d", r);
    MT_OK(MPI_Group_compare(world, world, &res));
    MT_CHECK(res == MPI_IDENT, "self compare %d", res);
    MT_OK(MPI_Group_incl(world, 0, NULL, &empty));
    MT_CHECK(empty == MPI_GROUP_EMPTY, "incl of nothing is MPI_GROUP_EMPTY");
    MT_OK(MPI_Group_compare(empty, MPI_GROUP_EMPTY, &res));
    MT_CHECK(res == MPI_IDENT, "empty compare %d", res);
}

static void translate(MPI_Group world)
{
    int evens[64], ne = 0, in[3], out[3];
    MPI_Group g;

    for (int i = 0; i < size; i += 2)
        evens[ne++] = i;
    g = make(world, ne, evens);
    /* world rank 1 is not in the evens: MPI_UNDEFINED */
    in[0] = size - 1;
    in[1] = MPI_PROC_NULL;
    in[2] = 0;
    MT_OK(MPI_Group_translate_ranks(world, 3, in, g, out));
    MT_CHECK(out[0] == ((size - 1) % 2 == 0 ? (size - 1) / 2 : MPI_UNDEFINED),
             "last rank translated to %d", out[0]);
    MT_CHECK(out[1] == MPI_PROC_NULL, "PROC_NULL translated to %d", out[1]);
    MT_CHECK(out[2] == 0, "rank 0 translated to %d", out[2]);
    MT_OK(MPI_Group_translate_ranks(g, 0, NULL, world, NULL));
    MT_OK(MPI_Group_translate_ranks(MPI_GROUP_EMPTY, 1, (int[]){MPI_PROC_NULL},
                                    world, out));
    MT_CHECK(out[0] == MPI_PROC_NULL, "empty PROC_NULL -> %d", out[0]);
    MT_ERR(MPI_ERR_RANK, MPI_Group_translate_ranks(g, 1, (int[]){ne}, world,
                                                   out));
    MT_OK(MPI_Group_free(&g));
    MT_CHECK(g == MPI_GROUP_NULL, "free sets MPI_GROUP_NULL");
}

static void set_ops(MPI_Group world)
{
    int evens[64] = {0}, odds[64] = {0}, ne = 0, no = 0, res, all[64];
    MPI_Group ge, go, u, i, d, rev;

    for (int k = 0; k < size; k++) {
        if (k % 2 == 0)
            evens[ne++] = k;
        else
            odds[no++] = k;
        all[k] = size - 1 - k;
    }
    ge = make(world, ne, evens);
    go = make(world, no, odds);
    /* union: ge's members, then go's in order */
    MT_OK(MPI_Group_union(ge, go, &u));
    {
        int want[64], n = 0;
        for (int k = 0; k < ne; k++)
            want[n++] = evens[k];
        for (int k = 0; k < no; k++)
            want[n++] = odds[k];
        expect_members(world, u, n, want);
    }
    MT_OK(MPI_Group_compare(u, world, &res));
    MT_CHECK(res == (size <= 2 ? MPI_IDENT : MPI_SIMILAR), "union vs world %d",
             res);
    MT_OK(MPI_Group_intersection(ge, go, &i));
    MT_CHECK(i == MPI_GROUP_EMPTY, "disjoint intersection not EMPTY");
    MT_OK(MPI_Group_intersection(world, ge, &d));
    expect_members(world, d, ne, evens);
    MT_OK(MPI_Group_free(&d));
    MT_OK(MPI_Group_difference(world, ge, &d));
    if (no == 0)
        MT_CHECK(d == MPI_GROUP_EMPTY, "difference to nothing not EMPTY");
    else
        expect_members(world, d, no, odds);
    if (d != MPI_GROUP_EMPTY)
        MT_OK(MPI_Group_free(&d));
    MT_OK(MPI_Group_difference(ge, world, &d));
    MT_CHECK(d == MPI_GROUP_EMPTY, "ge - world not EMPTY");
    /* union with overlap keeps the first group's order */
    MT_OK(MPI_Group_union(world, ge, &d));
    MT_OK(MPI_Group_compare(d, world, &res));
    MT_CHECK(res == MPI_IDENT, "world u evens vs world %d", res);
    MT_OK(MPI_Group_free(&d));
    rev = make(world, size, all);
    MT_OK(MPI_Group_compare(rev, world, &res));
    MT_CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "reverse %d", res);
    MT_OK(MPI_Group_compare(ge, world, &res));
    MT_CHECK(res == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "evens %d", res);
    MT_OK(MPI_Group_free(&rev));
    MT_OK(MPI_Group_free(&u));
    MT_OK(MPI_Group_free(&ge));
    if (go != MPI_GROUP_EMPTY)
        MT_OK(MPI_Group_free(&go));
}

static void subsets(MPI_Group world)
{
    MPI_Group g, h;
    int ranges[2][3], want[64], n = 0, r;

    /* excl of everything is empty; excl of nothing is a copy */
    {
        int all[64];
        for (int k = 0; k < size; k++)
            all[k] = k;
        MT_OK(MPI_Group_excl(world, size, all, &g));
        MT_CHECK(g == MPI_GROUP_EMPTY, "excl all not EMPTY");
        MT_OK(MPI_Group_excl(world, 0, NULL, &g));
        MT_OK(MPI_Group_compare(g, world, &r));
        MT_CHECK(r == MPI_IDENT, "excl none %d", r);
        MT_OK(MPI_Group_free(&g));
    }
    /* range_incl: descending stride and a single rank */
    ranges[0][0] = size - 1;
    ranges[0][1] = 0;
    ranges[0][2] = -2;
    for (int k = size - 1; k >= 0; k -= 2)
        want[n++] = k;
    MT_OK(MPI_Group_range_incl(world, 1, ranges, &g));
    expect_members(world, g, n, want);
    MT_OK(MPI_Group_rank(g, &r));
    MT_CHECK(r == ((size - 1 - rank) % 2 == 0 ? (size - 1 - rank) / 2
                                                : MPI_UNDEFINED),
             "rank in range group %d", r);
    /* range_excl of the same leaves the rest, in order */
    MT_OK(MPI_Group_range_excl(world, 1, ranges, &h));
    {
        int rest[64], m = 0;
        for (int k = 0; k < size; k++)
            if ((size - 1 - k) % 2 != 0)
                rest[m++] = k;
        if (m == 0)
            MT_CHECK(h == MPI_GROUP_EMPTY, "range_excl all not EMPTY");
        else
            expect_members(world, h, m, rest);
    }
    if (h != MPI_GROUP_EMPTY)
        MT_OK(MPI_Group_free(&h));
    MT_OK(MPI_Group_free(&g));
}

static void bad_args(MPI_Group world)
{
    MPI_Group g = MPI_GROUP_NULL, dead;
    int ranges[2][3] = {{0, 0, 1}, {0, 0, 1}}, s;

    MT_ERR(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &s));
    MT_ERR(MPI_ERR_ARG, MPI_Group_size(world, NULL));
    MT_ERR(MPI_ERR_RANK, MPI_Group_incl(world, 1, (int[]){size}, &g));
    MT_ERR(MPI_ERR_RANK, MPI_Group_incl(world, 1, (int[]){-1}, &g));
    if (size >= 2)
        MT_ERR(MPI_ERR_RANK, MPI_Group_incl(world, 2, (int[]){0, 0}, &g));
    MT_ERR(MPI_ERR_ARG, MPI_Group_excl(world, size + 1, NULL, &g));
    /* the same rank from two ranges */
    MT_ERR(MPI_ERR_RANK, MPI_Group_range_incl(world, 2, ranges, &g));
    ranges[0][2] = 0;
    MT_ERR(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, ranges, &g));
    if (size >= 2) {
        ranges[0][0] = 0;
        ranges[0][1] = 1;
        ranges[0][2] = -1; /* cannot go up with a negative stride */
        MT_ERR(MPI_ERR_ARG, MPI_Group_range_excl(world, 1, ranges, &g));
    }
    ranges[0][0] = 0;
    ranges[0][1] = size;
    ranges[0][2] = 1;
    MT_ERR(MPI_ERR_RANK, MPI_Group_range_incl(world, 1, ranges, &g));
    MT_CHECK(g == MPI_GROUP_NULL, "failed calls leave newgroup alone");
    /* a freed group is no longer valid */
    MT_OK(MPI_Group_incl(world, 1, (int[]){0}, &dead));
    MT_OK(MPI_Group_free(&dead));
    MT_ERR(MPI_ERR_GROUP, MPI_Group_free(&dead));
    MT_ERR(MPI_ERR_ARG, MPI_Group_free(NULL));
}

int main(int argc, char **argv)
{
    MPI_Group world, remote;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (size > 64) {
        MPI_Finalize();
        return 77;
    }
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    queries(world);
    translate(world);
    set_ops(world);
    subsets(world);
    bad_args(world);
    MT_ERR(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &remote));
    MT_OK(MPI_Group_free(&world));
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("group_ops: ok on %d ranks\n", size);
    return 0;
}
