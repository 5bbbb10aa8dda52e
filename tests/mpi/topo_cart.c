/*
 * Cartesian topologies: Dims_create (balanced, fixed entries, errors),
 * Cart_create (extra ranks get MPI_COMM_NULL), rank/coords round trips,
 * shifts at periodic and non-periodic edges, Cart_sub, Cart_map, the
 * topology surviving Comm_dup, and Topo_test.
 */
#include "mpitest.h"

static int wsize, wrank;

static void dims(void)
{
    static const struct {
        int nnodes, ndims, in[4], out[4];
    } cases[] = {
        {6, 2, {0, 0}, {3, 2}},
        {7, 2, {0, 0}, {7, 1}},
        {6, 3, {0, 3, 0}, {2, 3, 1}},
        {16, 3, {0, 0, 0}, {4, 2, 2}},
        {72, 2, {0, 0}, {9, 8}},
        {72, 3, {0, 0, 0}, {6, 4, 3}},
        {1, 3, {0, 0, 0}, {1, 1, 1}},
        {12, 2, {0, 4}, {3, 4}},
        {24, 4, {0, 0, 0, 0}, {3, 2, 2, 2}},
        {8, 1, {8}, {8}},
    };
    int d[4];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(d, cases[i].in, sizeof(d));
        MT_OK(MPI_Dims_create(cases[i].nnodes, cases[i].ndims, d));
        for (int k = 0; k < cases[i].ndims; k++)
            MT_CHECK(d[k] == cases[i].out[k], "case %zu dim %d: %d, want %d",
                     i, k, d[k], cases[i].out[k]);
    }
    d[0] = 0;
    d[1] = 4;
    MT_ERR(MPI_ERR_DIMS, MPI_Dims_create(6, 2, d)); /* 4 does not divide 6 */
    d[1] = -1;
    MT_ERR(MPI_ERR_DIMS, MPI_Dims_create(6, 2, d));
    MT_ERR(MPI_ERR_DIMS, MPI_Dims_create(6, -1, d));
    d[0] = 2;
    d[1] = 2;
    MT_ERR(MPI_ERR_DIMS, MPI_Dims_create(6, 2, d)); /* all fixed, 4 != 6 */
}

/* A 2-D grid over the largest even prefix of the world. */
static void grid(void)
{
    int d[2] = {0, 0}, periods[2] = {1, 0}, n = wsize, coords[2], r, src,
        dst, st, nd, dd[2], pp[2], cc[2];
    MPI_Comm cart, dup, row;

    if (n >= 4 && n % 2 == 1)
        n--;
    MT_OK(MPI_Dims_create(n, 2, d));
    MT_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, periods, 1, &cart));
    MT_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, d, periods, &r));
    if (wrank >= n) {
        MT_CHECK(cart == MPI_COMM_NULL, "extra rank got a grid");
        MT_CHECK(r == MPI_UNDEFINED, "Cart_map gave %d", r);
        return;
    }
    MT_CHECK(r == wrank, "Cart_map gave %d", r);
    MT_OK(MPI_Topo_test(cart, &st));
    MT_CHECK(st == MPI_CART, "topo_test %d", st);
    MT_OK(MPI_Cartdim_get(cart, &nd));
    MT_CHECK(nd == 2, "cartdim %d", nd);
    MT_OK(MPI_Cart_get(cart, 2, dd, pp, cc));
    MT_CHECK(dd[0] == d[0] && dd[1] == d[1] && pp[0] == 1 && pp[1] == 0,
             "cart_get");
    MT_CHECK(cc[0] == wrank / d[1] && cc[1] == wrank % d[1], "row-major");
    for (int k = 0; k < n; k++) {
        MT_OK(MPI_Cart_coords(cart, k, 2, coords));
        MT_OK(MPI_Cart_rank(cart, coords, &r));
        MT_CHECK(r == k, "round trip %d -> %d", k, r);
    }
    /* dimension 0 is periodic: wraps */
    MT_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    MT_CHECK(dst == ((cc[0] + 1) % d[0]) * d[1] + cc[1], "periodic dest %d",
             dst);
    MT_CHECK(src == ((cc[0] + d[0] - 1) % d[0]) * d[1] + cc[1],
             "periodic source %d", src);
    /* dimension 1 is not: MPI_PROC_NULL past the edges */
    MT_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    MT_CHECK(dst == (cc[1] == d[1] - 1 ? MPI_PROC_NULL : wrank + 1),
             "edge dest %d", dst);
    MT_CHECK(src == (cc[1] == 0 ? MPI_PROC_NULL : wrank - 1), "edge source %d",
             src);
    MT_OK(MPI_Cart_shift(cart, 1, d[1], &src, &dst));
    MT_CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "long shift");
    coords[0] = -1;
    coords[1] = 0;
    MT_OK(MPI_Cart_rank(cart, coords, &r));
    MT_CHECK(r == (d[0] - 1) * d[1], "periodic wrap rank %d", r);
    coords[0] = 0;
    coords[1] = d[1];
    MT_ERR(MPI_ERR_ARG, MPI_Cart_rank(cart, coords, &r));
    MT_ERR(MPI_ERR_ARG, MPI_Cart_shift(cart, 2, 1, &src, &dst));
    MT_ERR(MPI_ERR_RANK, MPI_Cart_coords(cart, n, 2, coords));
    /* traffic along a shift */
    {
        int got = -1;
        MT_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
        MT_OK(MPI_Sendrecv(&wrank, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src,
                           0, cart, MPI_STATUS_IGNORE));
        MT_CHECK(got == src, "shift traffic got %d from %d", got, src);
    }
    /* a duplicate keeps the topology */
    MT_OK(MPI_Comm_dup(cart, &dup));
    MT_OK(MPI_Topo_test(dup, &st));
    MT_CHECK(st == MPI_CART, "dup lost the topology");
    MT_OK(MPI_Cart_get(dup, 2, dd, pp, cc));
    MT_CHECK(dd[0] == d[0] && pp[0] == 1, "dup topology differs");
    MT_OK(MPI_Comm_free(&dup));
    /* rows: keep dimension 1 */
    MT_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    MT_OK(MPI_Comm_size(row, &r));
    MT_CHECK(r == d[1], "row size %d", r);
    MT_OK(MPI_Comm_rank(row, &r));
    MT_CHECK(r == cc[1], "row rank %d", r);
    MT_OK(MPI_Cartdim_get(row, &nd));
    MT_CHECK(nd == 1, "row dims %d", nd);
    MT_OK(MPI_Comm_free(&row));
    /* nothing kept: a 0-dimensional grid of one process */
    MT_OK(MPI_Cart_sub(cart, (int[]){0, 0}, &row));
    MT_OK(MPI_Comm_size(row, &r));
    MT_CHECK(r == 1, "0-d sub size %d", r);
    MT_OK(MPI_Comm_free(&row));
    MT_OK(MPI_Comm_free(&cart));
}

static void errors(void)
{
    MPI_Comm c;
    int st, d[2] = {wsize + 1, 1}, p[2] = {0, 0};

    MT_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    MT_CHECK(st == MPI_UNDEFINED, "world has no topology");
    MT_ERR(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &c));
    d[0] = 0;
    MT_ERR(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &c));
    MT_ERR(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &st));
    MT_ERR(MPI_ERR_TOPOLOGY, MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &st, &st));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    dims();
    errors();
    grid();
    MT_OK(MPI_Finalize());
    if (wrank == 0)
        printf("topo_cart: ok on %d ranks\n", wsize);
    return 0;
}
