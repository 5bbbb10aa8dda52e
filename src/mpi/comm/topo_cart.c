/*
 * Topology objects (copy, free, test) and Cartesian grids: Dims_create,
 * Cart_create and the Cartesian queries.  Ranks are laid out row-major
 * (the last dimension varies fastest); reorder is accepted and ignored,
 * so a process keeps its rank.  Graphs are in topo_graph.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"
#include "mpi/comm/topo.h"

/* ---- objects ------------------------------------------------------------------ */

static int *dup_ints(const int *a, int n, int *ok)
{
    int *b;

    if (a == NULL || n <= 0)
        return NULL;
    b = malloc((size_t)n * sizeof(int));
    if (b == NULL)
        *ok = 0;
    else
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

int mpi_topo_dup(const struct mpi_topo *from, struct mpi_topo **to_p)
{
    struct mpi_topo *t = malloc(sizeof(*t));
    int ok = 1;

    if (t == NULL)
        return MPI_ERR_NO_MEM;
    *t = *from;
    t->dims = dup_ints(from->dims, from->ndims, &ok);
    t->periods = dup_ints(from->periods, from->ndims, &ok);
    t->index = dup_ints(from->index, from->nnodes, &ok);
    t->edges = dup_ints(from->edges, from->nedges, &ok);
    t->sources = dup_ints(from->sources, from->indegree, &ok);
    t->sourceweights = dup_ints(from->sourceweights, from->indegree, &ok);
    t->dests = dup_ints(from->dests, from->outdegree, &ok);
    t->destweights = dup_ints(from->destweights, from->outdegree, &ok);
    if (!ok) {
        mpi_topo_free(t);
        return MPI_ERR_NO_MEM;
    }
    *to_p = t;
    return MPI_SUCCESS;
}

void mpi_topo_free(struct mpi_topo *t)
{
    if (t == NULL)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->dests);
    free(t->destweights);
    free(t);
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    MPI_CHECK_INIT("MPI_Topo_test");
    MPI_COMM_CHECK(comm, "MPI_Topo_test");
    if (status == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Topo_test",
                         "status is NULL");
    *status = comm->topo != NULL ? comm->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Topo_test)

/* ---- Dims_create ---------------------------------------------------------------- */

/* Largest y with y^e <= x. */
static long root_floor(long x, int e)
{
    long lo = 1, hi = x;

    while (lo < hi) {
        long mid = lo + (hi - lo + 1) / 2, p = 1;
        for (int i = 0; i < e && p <= x; i++)
            p = p > x / mid ? x + 1 : p * mid;
        if (p <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

typedef struct dims_search {
    const long *divs; /* divisors of the product, ascending */
    int ndivs;
    long *cur, *best;
    long best_spread;
} dims_search_t;

/*
 * Fill cur[depth..depth+j) with non-increasing factors of r, each at most
 * maxd, keeping in best the choice whose largest and smallest factors are
 * closest.  Factors are tried smallest first and the search stops once
 * the spread cannot beat the best.
 */
static void dims_search(dims_search_t *s, long r, int j, long maxd, int depth)
{
    if (j == 1) {
        long spread = (depth == 0 ? r : s->cur[0]) - r;
        if (r <= maxd && spread < s->best_spread) {
            s->cur[depth] = r;
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)(depth + 1) * sizeof(long));
        }
        return;
    }
    for (int i = 0; i < s->ndivs; i++) {
        long d = s->divs[i], top;
        if (d > maxd || d > r)
            break;
        if (r % d != 0 || root_floor(r, j) > d)
            continue; /* d must be the largest of the j factors */
        top = depth == 0 ? d : s->cur[0];
        if (top - root_floor(r / d, j - 1) >= s->best_spread)
            break;
        s->cur[depth] = d;
        dims_search(s, r / d, j - 1, d, depth + 1);
    }
}

/* Balanced factors of m into k >= 1 parts, non-increasing, into out. */
static int balanced_factors(long m, int k, long *out)
{
    dims_search_t s = {NULL, 0, NULL, out, m + 1};
    long *divs = malloc(2 * 1600 * sizeof(long)), n = 0;
    int rc = MPI_ERR_NO_MEM;

    s.cur = malloc((size_t)k * sizeof(long));
    if (divs != NULL && s.cur != NULL) {
        for (long d = 1; d * d <= m; d++)
            if (m % d == 0)
                divs[n++] = d;
        for (long i = n - 1; i >= 0; i--)
            if (divs[i] * divs[i] != m)
                divs[n++] = m / divs[i];
        s.divs = divs;
        s.ndivs = (int)n;
        dims_search(&s, m, k, m, 0);
        rc = MPI_SUCCESS;
    }
    free(divs);
    free(s.cur);
    return rc;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *fn = "MPI_Dims_create";
    long fixed = 1, *f;
    int nfree = 0, rc;

    MPI_CHECK_INIT(fn);
    if (nnodes <= 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "nnodes is %d",
                         nnodes);
    if (ndims < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, fn, "ndims is %d",
                         ndims);
    if (ndims > 0 && dims == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "dims is NULL");
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, fn,
                             "dims[%d] = %d is negative", i, dims[i]);
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            break;
    }
    if (nnodes % fixed != 0 || (nfree == 0 && fixed != nnodes))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_DIMS, fn,
                         "the fixed dimensions do not divide nnodes = %d",
                         nnodes);
    if (nfree == 0)
        return MPI_SUCCESS;
    f = malloc((size_t)nfree * sizeof(long));
    if (f == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory");
    rc = balanced_factors(nnodes / fixed, nfree, f);
    if (rc == MPI_SUCCESS)
        for (int i = 0, j = 0; i < ndims; i++)
            if (dims[i] == 0)
                dims[i] = (int)f[j++];
    free(f);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : mpi_error(MPI_COMM_WORLD, rc, fn, "no memory");
}
SHOAL_MPI_WEAK(Dims_create)

/* ---- Cartesian grids ------------------------------------------------------------ */

void mpi_topo_cart_coords(const struct mpi_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* A Cartesian topology object (periods normalised to 0/1). */
static int cart_new(int ndims, const int *dims, const int *periods,
                    struct mpi_topo **t_p)
{
    struct mpi_topo *t = calloc(1, sizeof(*t));
    int ok = 1;

    if (t == NULL)
        return MPI_ERR_NO_MEM;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims, &ok);
    t->periods = dup_ints(periods, ndims, &ok);
    if (!ok) {
        mpi_topo_free(t);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < ndims; i++)
        t->periods[i] = t->periods[i] != 0;
    *t_p = t;
    return MPI_SUCCESS;
}

/* Attach t to *comm (consumed); on failure release both. */
static int attach(MPI_Comm *comm, struct mpi_topo *t, int rc)
{
    if (*comm == MPI_COMM_NULL) {
        mpi_topo_free(t);
        return rc;
    }
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(*comm);
        *comm = MPI_COMM_NULL;
        return rc;
    }
    (*comm)->topo = t;
    return MPI_SUCCESS;
}

/* Product of dims, or -1 when a dimension is not positive or it overflows. */
static long grid_size(int ndims, const int *dims, long limit)
{
    long n = 1;

    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return -1;
        n *= dims[i];
        if (n > limit)
            return -1;
    }
    return n;
}

static int check_grid(MPI_Comm comm, int ndims, const int *dims,
                      const int *periods, const char *fn)
{
    MPI_COMM_CHECK(comm, fn);
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "topologies need an intracommunicator");
    if (ndims < 0)
        return mpi_error(comm, MPI_ERR_DIMS, fn, "ndims is %d", ndims);
    if (ndims > 0 && (dims == NULL || periods == NULL))
        return mpi_error(comm, MPI_ERR_ARG, fn, "dims or periods is NULL");
    if (grid_size(ndims, dims, comm->size) < 0)
        return mpi_error(comm, MPI_ERR_DIMS, fn,
                         "dims must be positive and their product at most "
                         "the communicator's size %d",
                         comm->size);
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                     const int periods[], int reorder, MPI_Comm *comm_cart)
{
    const char *fn = "MPI_Cart_create";
    struct mpi_topo *t = NULL;
    long n;
    int rc;

    MPI_CHECK_INIT(fn);
    rc = check_grid(comm_old, ndims, dims, periods, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm_cart == NULL)
        return mpi_error(comm_old, MPI_ERR_ARG, fn, "comm_cart is NULL");
    (void)reorder;
    n = grid_size(ndims, dims, comm_old->size);
    rc = mpi_comm_split_core(comm_old, comm_old->rank < n ? 0 : -1,
                             comm_old->rank, comm_cart);
    if (rc == MPI_SUCCESS && *comm_cart != MPI_COMM_NULL)
        rc = cart_new(ndims, dims, periods, &t);
    rc = attach(comm_cart, t, rc);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm_old, rc, fn, "building the grid failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_create)

/* The Cartesian topology of comm, or NULL after reporting. */
static struct mpi_topo *cart_of(MPI_Comm comm, const char *fn, int *rc)
{
    if (!mpi_comm_ok(comm)) {
        *rc = mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, fn,
                        "invalid communicator %p", (void *)comm);
        return NULL;
    }
    if (comm->topo == NULL || comm->topo->kind != MPI_CART) {
        *rc = mpi_error(comm, MPI_ERR_TOPOLOGY, fn,
                        "the communicator has no Cartesian topology");
        return NULL;
    }
    return comm->topo;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Cartdim_get");
    if ((t = cart_of(comm, "MPI_Cartdim_get", &rc)) == NULL)
        return rc;
    if (ndims == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cartdim_get",
                         "ndims is NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                  int coords[])
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Cart_get");
    if ((t = cart_of(comm, "MPI_Cart_get", &rc)) == NULL)
        return rc;
    if (maxdims < t->ndims)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_get",
                         "maxdims %d is less than the %d dimensions",
                         maxdims, t->ndims);
    if (t->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_get",
                         "dims, periods or coords is NULL");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    if (t->ndims > 0)
        mpi_topo_cart_coords(t, comm->rank, coords);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_get)

/* Rank at coords (periodic dimensions wrap); -1 when off the grid. */
static int cart_rank(const struct mpi_topo *t, const int *coords)
{
    int rank = 0;

    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i], d = t->dims[i];
        if (t->periods[i])
            c = ((c % d) + d) % d;
        else if (c < 0 || c >= d)
            return -1;
        rank = rank * d + c;
    }
    return rank;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    struct mpi_topo *t;
    int rc, r;

    MPI_CHECK_INIT("MPI_Cart_rank");
    if ((t = cart_of(comm, "MPI_Cart_rank", &rc)) == NULL)
        return rc;
    if (rank == NULL || (t->ndims > 0 && coords == NULL))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_rank",
                         "coords or rank is NULL");
    r = cart_rank(t, coords);
    if (r < 0)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_rank",
                         "coordinates outside a non-periodic dimension");
    *rank = r;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Cart_coords");
    if ((t = cart_of(comm, "MPI_Cart_coords", &rc)) == NULL)
        return rc;
    if (rank < 0 || rank >= comm->size)
        return mpi_error(comm, MPI_ERR_RANK, "MPI_Cart_coords",
                         "rank %d is not in [0, %d)", rank, comm->size);
    if (maxdims < t->ndims || (t->ndims > 0 && coords == NULL))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_coords",
                         "maxdims %d (need %d) or coords NULL", maxdims,
                         t->ndims);
    mpi_topo_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_coords)

/* The rank disp steps along direction from rank, or MPI_PROC_NULL. */
static int cart_step(const struct mpi_topo *t, int rank, int direction,
                     int disp)
{
    long stride = 1, c, d = t->dims[direction];

    for (int i = t->ndims - 1; i > direction; i--)
        stride *= t->dims[i];
    c = (rank / stride) % d;
    if (t->periods[direction])
        return (int)(rank + ((((c + disp) % d) + d) % d - c) * stride);
    if (c + disp < 0 || c + disp >= d)
        return MPI_PROC_NULL;
    return (int)(rank + disp * stride);
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                    int *rank_dest)
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Cart_shift");
    if ((t = cart_of(comm, "MPI_Cart_shift", &rc)) == NULL)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_shift",
                         "direction %d is not in [0, %d)", direction,
                         t->ndims);
    if (rank_source == NULL || rank_dest == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_shift",
                         "rank_source or rank_dest is NULL");
    *rank_dest = cart_step(t, comm->rank, direction, disp);
    *rank_source = cart_step(t, comm->rank, direction, -disp);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_shift)

/* Color (dropped dimensions) and key (kept ones) of this process. */
static void sub_color_key(const struct mpi_topo *t, const int *coords,
                          const int *remain, int *color, int *key)
{
    *color = 0;
    *key = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain[i])
            *key = *key * t->dims[i] + coords[i];
        else
            *color = *color * t->dims[i] + coords[i];
    }
}

/* The grid left by the kept dimensions. */
static int sub_topo(const struct mpi_topo *t, const int *remain,
                    struct mpi_topo **sub_p)
{
    int *dims = malloc(((size_t)t->ndims + 1) * sizeof(int));
    int *periods = malloc(((size_t)t->ndims + 1) * sizeof(int));
    int n = 0, rc = MPI_ERR_NO_MEM;

    if (dims != NULL && periods != NULL) {
        for (int i = 0; i < t->ndims; i++)
            if (remain[i]) {
                dims[n] = t->dims[i];
                periods[n++] = t->periods[i];
            }
        rc = cart_new(n, dims, periods, sub_p);
    }
    free(dims);
    free(periods);
    return rc;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *fn = "MPI_Cart_sub";
    struct mpi_topo *t, *sub = NULL;
    int *coords, rc, color, key;

    MPI_CHECK_INIT(fn);
    if ((t = cart_of(comm, fn, &rc)) == NULL)
        return rc;
    if ((t->ndims > 0 && remain_dims == NULL) || newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "remain_dims or newcomm is NULL");
    coords = malloc(((size_t)t->ndims + 1) * sizeof(int));
    if (coords == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    mpi_topo_cart_coords(t, comm->rank, coords);
    sub_color_key(t, coords, remain_dims, &color, &key);
    free(coords);
    rc = mpi_comm_split_core(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        rc = sub_topo(t, remain_dims, &sub);
    rc = attach(newcomm, sub, rc);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "building the sub-grid failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_sub)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
                  const int periods[], int *newrank)
{
    long n;
    int rc;

    MPI_CHECK_INIT("MPI_Cart_map");
    rc = check_grid(comm, ndims, dims, periods, "MPI_Cart_map");
    if (rc != MPI_SUCCESS)
        return rc;
    if (newrank == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Cart_map",
                         "newrank is NULL");
    n = grid_size(ndims, dims, comm->size);
    *newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Cart_map)

/* ---- neighbours for neighbourhood collectives --------------------------------------- */

int mpi_topo_neighbors(MPI_Comm comm, int *indegree, int *outdegree,
                       const int **sources, const int **dests, int *cart_src,
                       int *cart_dst)
{
    struct mpi_topo *t = comm->topo;

    if (t == NULL)
        return MPI_ERR_TOPOLOGY;
    mpi_topo_degrees(comm, indegree, outdegree);
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            cart_src[2 * d] = cart_step(t, comm->rank, d, -1);
            cart_src[2 * d + 1] = cart_step(t, comm->rank, d, 1);
        }
        memcpy(cart_dst, cart_src, 2 * (size_t)t->ndims * sizeof(int));
        *sources = cart_src;
        *dests = cart_dst;
    } else if (t->kind == MPI_GRAPH) {
        int first = comm->rank > 0 ? t->index[comm->rank - 1] : 0;
        *sources = *dests = t->edges + first;
    } else {
        *sources = t->sources;
        *dests = t->dests;
    }
    return MPI_SUCCESS;
}

void mpi_topo_degrees(MPI_Comm comm, int *indegree, int *outdegree)
{
    struct mpi_topo *t = comm->topo;

    if (t == NULL) {
        *indegree = *outdegree = 0;
    } else if (t->kind == MPI_CART) {
        *indegree = *outdegree = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        int first = comm->rank > 0 ? t->index[comm->rank - 1] : 0;
        *indegree = *outdegree = t->index[comm->rank] - first;
    } else {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
    }
}
