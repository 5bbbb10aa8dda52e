/*
 * Intracommunicators: dup (and traffic on the duplicate never matching
 * the parent's, same tag), split (MPI_UNDEFINED, key order and ties),
 * create, create_group, compare, free, names, info, idup, Fortran
 * handles, and context ids being recycled.
 */
#include "mpitest.h"

static int wsize, wrank;

/* World rank of rank r of comm. */
static int world_of(MPI_Comm comm, int r)
{
    MPI_Group g, w;
    int out;

    MT_OK(MPI_Comm_group(comm, &g));
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MT_OK(MPI_Group_translate_ranks(g, 1, &r, w, &out));
    MT_OK(MPI_Group_free(&g));
    MT_OK(MPI_Group_free(&w));
    return out;
}

/* Each rank sends its world rank around a ring of comm. */
static void ring(MPI_Comm comm)
{
    int n, r, got = -1, tag = 11;

    MT_OK(MPI_Comm_size(comm, &n));
    MT_OK(MPI_Comm_rank(comm, &r));
    MT_OK(MPI_Sendrecv(&wrank, 1, MPI_INT, (r + 1) % n, tag, &got, 1, MPI_INT,
                       (r + n - 1) % n, tag, comm, MPI_STATUS_IGNORE));
    MT_CHECK(got == world_of(comm, (r + n - 1) % n),
             "ring got %d from comm rank %d", got, (r + n - 1) % n);
}

static void dup_isolation(void)
{
    MPI_Comm dup;
    int res, a = -1, b = -1;

    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &res));
    MT_CHECK(res == MPI_CONGRUENT, "dup compare %d", res);
    MT_OK(MPI_Comm_compare(dup, dup, &res));
    MT_CHECK(res == MPI_IDENT, "self compare %d", res);
    ring(dup);
    if (wsize >= 2 && wrank < 2) {
        /* rank 0 sends on dup first, then on world, same tag: rank 1's
         * receive on world must get the world message. */
        if (wrank == 0) {
            MPI_Request r[2];
            int x = 111, y = 222;
            MT_OK(MPI_Isend(&x, 1, MPI_INT, 1, 5, dup, &r[0]));
            MT_OK(MPI_Isend(&y, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[1]));
            MT_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
            MT_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        } else {
            MT_OK(MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_OK(MPI_Recv(&a, 1, MPI_INT, 0, 5, dup, MPI_STATUS_IGNORE));
            MT_CHECK(b == 222 && a == 111, "world got %d, dup got %d", b, a);
        }
    }
    MT_OK(MPI_Comm_free(&dup));
    MT_CHECK(dup == MPI_COMM_NULL, "free sets MPI_COMM_NULL");
}

static void split(void)
{
    MPI_Comm c;
    int color, n, r, res;

    /* Last rank opts out (when there are 3 or more); keys reverse order. */
    color = (wsize > 2 && wrank == wsize - 1) ? MPI_UNDEFINED : wrank % 2;
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, color, -wrank, &c));
    if (color == MPI_UNDEFINED) {
        MT_CHECK(c == MPI_COMM_NULL, "undefined color got a communicator");
    } else {
        int members = 0, mine = 0;
        for (int k = 0; k < wsize; k++)
            if (!(wsize > 2 && k == wsize - 1) && k % 2 == color) {
                members++;
                if (k > wrank)
                    mine++;
            }
        MT_OK(MPI_Comm_size(c, &n));
        MT_OK(MPI_Comm_rank(c, &r));
        MT_CHECK(n == members && r == mine, "split size %d rank %d, want %d %d",
                 n, r, members, mine);
        MT_CHECK(world_of(c, 0) > world_of(c, n - 1) || n == 1,
                 "keys did not reverse the order");
        ring(c);
        MT_OK(MPI_Comm_free(&c));
    }
    /* Equal keys: parent order, so congruent with world. */
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 7, &c));
    MT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    MT_CHECK(res == MPI_CONGRUENT, "tied keys compare %d", res);
    MT_OK(MPI_Comm_free(&c));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c));
    MT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    MT_CHECK(res == (wsize == 1 ? MPI_CONGRUENT : MPI_SIMILAR),
             "reversed compare %d", res);
    ring(c);
    MT_OK(MPI_Comm_free(&c));
    MT_ERR(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c));
}

static void create(void)
{
    MPI_Group world, evens, odds;
    MPI_Comm c;
    int ne = (wsize + 1) / 2, res;
    int ranges[1][3] = {{0, wsize - 1, 2}};

    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MT_OK(MPI_Group_range_incl(world, 1, ranges, &evens));
    MT_OK(MPI_Group_difference(world, evens, &odds));
    MT_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    if (wrank % 2 == 0) {
        int n, r;
        MT_OK(MPI_Comm_size(c, &n));
        MT_OK(MPI_Comm_rank(c, &r));
        MT_CHECK(n == ne && r == wrank / 2, "create: size %d rank %d", n, r);
        ring(c);
        MT_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
        MT_CHECK(res == (wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL),
                 "create compare %d", res);
        MT_OK(MPI_Comm_free(&c));
    } else {
        MT_CHECK(c == MPI_COMM_NULL, "non-member got a communicator");
    }
    /* create_group: only the odd ranks call. */
    if (wrank % 2 == 1) {
        MT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 7, &c));
        ring(c);
        MT_OK(MPI_Comm_free(&c));
    }
    /* and the even ones concurrently, with another tag */
    if (wrank % 2 == 0) {
        MT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 1 << 30, &c));
        ring(c);
        MT_OK(MPI_Comm_free(&c));
    }
    /* a process outside the group may not call */
    MT_ERR(MPI_ERR_GROUP, MPI_Comm_create_group(MPI_COMM_WORLD,
                                                wrank % 2 ? evens : odds, 3,
                                                &c));
    MT_OK(MPI_Group_free(&evens));
    if (odds != MPI_GROUP_EMPTY)
        MT_OK(MPI_Group_free(&odds));
    MT_OK(MPI_Group_free(&world));
}

static void names_info(void)
{
    char name[MPI_MAX_OBJECT_NAME], val[32];
    MPI_Comm c, d;
    MPI_Info info, used;
    int len, flag;

    MT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MT_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "name %s", name);
    MT_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    MT_CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "name %s", name);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "shoal_test_hint", "yes"));
    MT_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_Comm_get_name(c, name, &len));
    MT_CHECK(len == 0 && name[0] == '\0', "a duplicate has no name: %s", name);
    MT_OK(MPI_Comm_set_name(c, "shoal-test-comm"));
    MT_OK(MPI_Comm_get_name(c, name, &len));
    MT_CHECK(strcmp(name, "shoal-test-comm") == 0 && len == 15, "name %s",
             name);
    MT_OK(MPI_Comm_get_info(c, &used));
    MT_OK(MPI_Info_get(used, "shoal_test_hint", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && strcmp(val, "yes") == 0, "hint lost: %d %s", flag, val);
    MT_OK(MPI_Info_free(&used));
    /* dup copies info hints; the name stays behind */
    MT_OK(MPI_Comm_dup(c, &d));
    MT_OK(MPI_Comm_get_info(d, &used));
    MT_OK(MPI_Info_get(used, "shoal_test_hint", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag, "dup lost the hint");
    MT_OK(MPI_Info_free(&used));
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Comm_set_info(d, info));
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_Comm_get_info(d, &used));
    MT_OK(MPI_Info_get_nkeys(used, &len));
    MT_CHECK(len == 0, "set_info with an empty info left %d keys", len);
    MT_OK(MPI_Info_free(&used));
    MT_OK(MPI_Comm_free(&d));
    MT_OK(MPI_Comm_free(&c));
}

static void idup(void)
{
    MPI_Comm c;
    MPI_Request req;
    int inter = -1;

    MT_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
    MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_CHECK(req == MPI_REQUEST_NULL, "request not freed");
    ring(c);
    MT_OK(MPI_Comm_test_inter(c, &inter));
    MT_CHECK(inter == 0, "test_inter %d", inter);
    MT_OK(MPI_Comm_free(&c));
}

static void handles_and_free(void)
{
    MPI_Comm c, self = MPI_COMM_SELF, world = MPI_COMM_WORLD;
    MPI_Fint f;
    int n;

    MT_CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD,
             "world round trip");
    MT_CHECK(MPI_Comm_c2f(MPI_COMM_NULL) == 0, "null is 0");
    MT_CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) != MPI_Comm_c2f(MPI_COMM_SELF),
             "world and self differ");
    MT_CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "type");
    MT_CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "op");
    MT_CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) ==
                 MPI_ERRORS_RETURN,
             "errhandler");
    MT_CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)) == MPI_INFO_ENV, "info");
    MT_CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY,
             "group");
    MT_CHECK(MPI_Comm_f2c(12345) == MPI_COMM_NULL, "unknown integer");
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    f = MPI_Comm_c2f(c);
    MT_CHECK(f > 1 && MPI_Comm_c2f(c) == f, "stable integer %d", f);
    MT_CHECK(MPI_Comm_f2c(f) == c, "dup round trip");
    MT_OK(MPI_Comm_free(&c));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_free(&world));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_free(&self));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_size(MPI_COMM_NULL, &n));
    MT_ERR(MPI_ERR_COMM, MPI_Comm_free(&c)); /* c is MPI_COMM_NULL now */
    MT_ERR(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &n));
    MT_ERR(MPI_ERR_ARG, MPI_Comm_rank(MPI_COMM_WORLD, NULL));
}

/* More duplicates than there are context ids: ids must come back. */
static void recycle(void)
{
    for (int i = 0; i < 4200; i++) {
        MPI_Comm c;
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MT_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    dup_isolation();
    split();
    create();
    names_info();
    idup();
    handles_and_free();
    recycle();
    MT_OK(MPI_Finalize());
    if (wrank == 0)
        printf("comm_basic: ok on %d ranks\n", wsize);
    return 0;
}
