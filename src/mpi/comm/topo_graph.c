/*
 * Graph topologies: the MPI-1 graph (every process knows the whole graph)
 * and the distributed graph (each process knows its own neighbours).
 * MPI_Dist_graph_create lets any process name any edge, so the edges are
 * first routed to the processes at both of their ends.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"
#include "mpi/comm/topo.h"

/* The markers of unweighted graphs and of empty weight arrays. */
__attribute__((visibility("default"))) int shoal_mpi_unweighted_,
    shoal_mpi_weights_empty_;

static int *copy_ints(const int *a, int n)
{
    int *b = malloc(((size_t)n + 1) * sizeof(int));

    if (b != NULL && n > 0)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* Attach t to *comm (consumed); on failure release both. */
static int attach(MPI_Comm *comm, struct mpi_topo *t, int rc)
{
    if (*comm == MPI_COMM_NULL) {
        mpi_topo_free(t);
        return rc;
    }
    if (rc == MPI_SUCCESS && t == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        mpi_topo_free(t);
        mpi_comm_release(*comm);
        *comm = MPI_COMM_NULL;
        return rc;
    }
    (*comm)->topo = t;
    return MPI_SUCCESS;
}

static int check_intra(MPI_Comm comm, const char *fn)
{
    MPI_COMM_CHECK(comm, fn);
    if (comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, fn,
                         "topologies need an intracommunicator");
    return MPI_SUCCESS;
}

/* ---- graphs ------------------------------------------------------------------- */

static int check_graph(MPI_Comm comm, int nnodes, const int *index,
                       const int *edges, const char *fn)
{
    int rc = check_intra(comm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (nnodes < 0 || nnodes > comm->size)
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "nnodes %d is not in [0, %d]", nnodes, comm->size);
    if (nnodes > 0 && (index == NULL || edges == NULL))
        return mpi_error(comm, MPI_ERR_ARG, fn, "index or edges is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return mpi_error(comm, MPI_ERR_ARG, fn,
                             "index[%d] = %d decreases", i, index[i]);
    for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return mpi_error(comm, MPI_ERR_ARG, fn,
                             "edges[%d] = %d is not a node in [0, %d)", e,
                             edges[e], nnodes);
    return MPI_SUCCESS;
}

static struct mpi_topo *graph_new(int nnodes, const int *index,
                                  const int *edges)
{
    struct mpi_topo *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = index[nnodes - 1];
    t->index = copy_ints(index, nnodes);
    t->edges = copy_ints(edges, t->nedges);
    if (t->index == NULL || t->edges == NULL) {
        mpi_topo_free(t);
        return NULL;
    }
    return t;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                      const int edges[], int reorder, MPI_Comm *comm_graph)
{
    const char *fn = "MPI_Graph_create";
    struct mpi_topo *t = NULL;
    int rc;

    MPI_CHECK_INIT(fn);
    rc = check_graph(comm_old, nnodes, index, edges, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm_graph == NULL)
        return mpi_error(comm_old, MPI_ERR_ARG, fn, "comm_graph is NULL");
    (void)reorder;
    *comm_graph = MPI_COMM_NULL;
    if (nnodes == 0)
        return MPI_SUCCESS; /* every process gets MPI_COMM_NULL */
    rc = mpi_comm_split_core(comm_old, comm_old->rank < nnodes ? 0 : -1,
                             comm_old->rank, comm_graph);
    if (rc == MPI_SUCCESS && *comm_graph != MPI_COMM_NULL)
        t = graph_new(nnodes, index, edges);
    rc = attach(comm_graph, t, rc);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm_old, rc, fn, "building the graph failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Graph_create)

static struct mpi_topo *topo_of(MPI_Comm comm, int kind, const char *fn,
                                int *rc)
{
    if (!mpi_comm_ok(comm)) {
        *rc = mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, fn,
                        "invalid communicator %p", (void *)comm);
        return NULL;
    }
    if (comm->topo == NULL || comm->topo->kind != kind) {
        *rc = mpi_error(comm, MPI_ERR_TOPOLOGY, fn,
                        "the communicator has no %s topology",
                        kind == MPI_GRAPH ? "graph" : "distributed graph");
        return NULL;
    }
    return comm->topo;
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Graphdims_get");
    if ((t = topo_of(comm, MPI_GRAPH, "MPI_Graphdims_get", &rc)) == NULL)
        return rc;
    if (nnodes == NULL || nedges == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graphdims_get",
                         "nnodes or nedges is NULL");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                   int edges[])
{
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT("MPI_Graph_get");
    if ((t = topo_of(comm, MPI_GRAPH, "MPI_Graph_get", &rc)) == NULL)
        return rc;
    if (maxindex < t->nnodes || maxedges < t->nedges || index == NULL ||
        (t->nedges > 0 && edges == NULL))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graph_get",
                         "room for %d index and %d edges entries needed "
                         "(got %d, %d)",
                         t->nnodes, t->nedges, maxindex, maxedges);
    memcpy(index, t->index, (size_t)t->nnodes * sizeof(int));
    if (t->nedges > 0)
        memcpy(edges, t->edges, (size_t)t->nedges * sizeof(int));
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Graph_get)

/* Neighbours of node rank: edges[*first .. *first + *n). */
static int graph_node(MPI_Comm comm, const struct mpi_topo *t, int rank,
                      int *first, int *n, const char *fn)
{
    if (rank < 0 || rank >= t->nnodes)
        return mpi_error(comm, MPI_ERR_RANK, fn,
                         "rank %d is not a node in [0, %d)", rank, t->nnodes);
    *first = rank > 0 ? t->index[rank - 1] : 0;
    *n = t->index[rank] - *first;
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    const char *fn = "MPI_Graph_neighbors_count";
    struct mpi_topo *t;
    int rc, first;

    MPI_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, fn, &rc)) == NULL)
        return rc;
    if (nneighbors == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "nneighbors is NULL");
    return graph_node(comm, t, rank, &first, nneighbors, fn);
}
SHOAL_MPI_WEAK(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                         int neighbors[])
{
    const char *fn = "MPI_Graph_neighbors";
    struct mpi_topo *t;
    int rc, first, n;

    MPI_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, fn, &rc)) == NULL)
        return rc;
    rc = graph_node(comm, t, rank, &first, &n, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (maxneighbors < n || (n > 0 && neighbors == NULL))
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "room for %d neighbours needed (got %d)", n,
                         maxneighbors);
    if (n > 0)
        memcpy(neighbors, t->edges + first, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Graph_neighbors)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
                   const int edges[], int *newrank)
{
    int rc;

    MPI_CHECK_INIT("MPI_Graph_map");
    rc = check_graph(comm, nnodes, index, edges, "MPI_Graph_map");
    if (rc != MPI_SUCCESS)
        return rc;
    if (newrank == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Graph_map",
                         "newrank is NULL");
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Graph_map)

/* ---- distributed graphs: building ----------------------------------------------- */

/* Weight arrays: 1 weighted, 0 unweighted, -1 invalid for degree. */
static int weights_kind(const int *w, int degree)
{
    if (w == MPI_UNWEIGHTED)
        return 0;
    if (w == MPI_WEIGHTS_EMPTY)
        return degree == 0 ? 1 : -1;
    return w != NULL || degree == 0 ? 1 : -1;
}

static int check_ranks(MPI_Comm comm, const int *r, int n, const char *what,
                       const char *fn)
{
    if (n > 0 && r == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= comm->size)
            return mpi_error(comm, MPI_ERR_RANK, fn,
                             "%s[%d] = %d is not in [0, %d)", what, i, r[i],
                             comm->size);
    return MPI_SUCCESS;
}

/* A distributed-graph topology owning the given arrays (NULL ok). */
static struct mpi_topo *dgraph_new(int indeg, int *src, int *srcw, int outdeg,
                                   int *dst, int *dstw, int weighted)
{
    struct mpi_topo *t = calloc(1, sizeof(*t));

    if (t == NULL || src == NULL || dst == NULL ||
        (weighted && (srcw == NULL || dstw == NULL))) {
        free(t);
        free(src);
        free(srcw);
        free(dst);
        free(dstw);
        return NULL;
    }
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indeg;
    t->outdegree = outdeg;
    t->weighted = weighted;
    t->sources = src;
    t->dests = dst;
    t->sourceweights = weighted ? srcw : NULL;
    t->destweights = weighted ? dstw : NULL;
    if (!weighted) {
        free(srcw);
        free(dstw);
    }
    return t;
}

/* Same members and ranks as comm, fresh context, then the topology. */
static int dgraph_comm(MPI_Comm comm, MPI_Info info, struct mpi_topo *t,
                       MPI_Comm *newcomm)
{
    int rc = mpi_comm_split_core(comm, 0, comm->rank, newcomm);

    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(info, &(*newcomm)->info);
    return attach(newcomm, t, rc);
}

static int check_info_arg(MPI_Comm comm, MPI_Info info, const char *fn)
{
    if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO)
        return mpi_error(comm, MPI_ERR_INFO, fn, "invalid info %p",
                         (void *)info);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                    const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[],
                                    const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create_adjacent";
    int rc, ws, wd, weighted;
    struct mpi_topo *t;

    MPI_CHECK_INIT(fn);
    rc = check_intra(comm_old, fn);
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(comm_old, info, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (indegree < 0 || outdegree < 0 || comm_dist_graph == NULL)
        return mpi_error(comm_old, MPI_ERR_ARG, fn,
                         "indegree %d, outdegree %d or comm_dist_graph NULL",
                         indegree, outdegree);
    rc = check_ranks(comm_old, sources, indegree, "sources", fn);
    if (rc == MPI_SUCCESS)
        rc = check_ranks(comm_old, destinations, outdegree, "destinations",
                         fn);
    if (rc != MPI_SUCCESS)
        return rc;
    ws = weights_kind(sourceweights, indegree);
    wd = weights_kind(destweights, outdegree);
    if (ws < 0 || wd < 0 || ws != wd)
        return mpi_error(comm_old, MPI_ERR_ARG, fn,
                         "sourceweights and destweights must both be "
                         "weights or both MPI_UNWEIGHTED");
    (void)reorder;
    weighted = ws;
    t = dgraph_new(indegree, copy_ints(sources, indegree),
                   weighted ? copy_ints(sourceweights, indegree) : NULL,
                   outdegree, copy_ints(destinations, outdegree),
                   weighted ? copy_ints(destweights, outdegree) : NULL,
                   weighted);
    rc = dgraph_comm(comm_old, info, t, comm_dist_graph);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm_old, rc, fn, "building the graph failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Dist_graph_create_adjacent)

/* One end of an edge, as routed to the process at the other end. */
typedef struct edge_msg {
    int out;    /* 1: the receiver is the source, peer the destination */
    int peer;
    int weight;
} edge_msg_t;

typedef struct edge_route {
    int *nsend, *nrecv;      /* edge_msg_t counts per process */
    edge_msg_t **to;         /* per process */
} edge_route_t;

static void route_free(edge_route_t *r, int n)
{
    for (int p = 0; r->to != NULL && p < n; p++)
        free(r->to[p]);
    free(r->to);
    free(r->nsend);
    free(r->nrecv);
}

/* Sort this process's edges by the process that must learn them. */
static int route_build(MPI_Comm comm, int n, const int *sources,
                       const int *degrees, const int *dests,
                       const int *weights, int weighted, edge_route_t *r)
{
    int size = comm->size, k = 0, *fill;

    r->nsend = calloc((size_t)size, sizeof(int));
    r->nrecv = calloc((size_t)size, sizeof(int));
    r->to = calloc((size_t)size, sizeof(*r->to));
    fill = calloc((size_t)size, sizeof(int));
    if (r->nsend == NULL || r->nrecv == NULL || r->to == NULL || fill == NULL)
        goto err_nomem;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            r->nsend[sources[i]]++;
            r->nsend[dests[k]]++;
        }
    for (int p = 0; p < size; p++)
        if (r->nsend[p] > 0 &&
            (r->to[p] = malloc((size_t)r->nsend[p] * sizeof(edge_msg_t))) ==
                NULL)
            goto err_nomem;
    k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int s = sources[i], d = dests[k], w = weighted ? weights[k] : 1;
            r->to[s][fill[s]++] = (edge_msg_t){1, d, w};
            r->to[d][fill[d]++] = (edge_msg_t){0, s, w};
        }
    free(fill);
    return MPI_SUCCESS;
err_nomem:
    free(fill);
    return MPI_ERR_NO_MEM;
}

/* Every process tells every other how many edge ends it will send. */
static int route_counts(MPI_Comm comm, edge_route_t *r)
{
    MPI_Request *reqs = calloc(2 * (size_t)comm->size, sizeof(*reqs));
    int rc = MPI_SUCCESS, size = comm->size;

    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++)
        if (p != comm->rank)
            rc = mpi_irecv_internal(&r->nrecv[p], 1, MPI_INT, p,
                                    MPI_COMM_TAG_DGRAPH, comm, 1, &reqs[p]);
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++)
        if (p != comm->rank)
            rc = mpi_isend_internal(&r->nsend[p], 1, MPI_INT, p,
                                    MPI_COMM_TAG_DGRAPH, comm, 1,
                                    &reqs[size + p]);
    r->nrecv[comm->rank] = r->nsend[comm->rank];
    if (rc == MPI_SUCCESS)
        rc = mpi_waitall_internal(2 * size, reqs);
    else
        mpi_waitall_internal(2 * size, reqs);
    free(reqs);
    return rc;
}

/* Exchange the edge ends; in[] gets them in order of sending process. */
static int route_edges(MPI_Comm comm, edge_route_t *r, edge_msg_t *in)
{
    int size = comm->size, at = 0, rc = MPI_SUCCESS;
    MPI_Request *reqs = calloc(2 * (size_t)size, sizeof(*reqs));

    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++) {
        if (p == comm->rank && r->nrecv[p] > 0)
            memcpy(in + at, r->to[p], (size_t)r->nrecv[p] * sizeof(*in));
        else if (r->nrecv[p] > 0)
            rc = mpi_irecv_internal(in + at, r->nrecv[p] * 3, MPI_INT, p,
                                    MPI_COMM_TAG_DGRAPH - 1, comm, 1,
                                    &reqs[p]);
        at += r->nrecv[p];
    }
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++)
        if (p != comm->rank && r->nsend[p] > 0)
            rc = mpi_isend_internal(r->to[p], r->nsend[p] * 3, MPI_INT, p,
                                    MPI_COMM_TAG_DGRAPH - 1, comm, 1,
                                    &reqs[size + p]);
    if (rc == MPI_SUCCESS)
        rc = mpi_waitall_internal(2 * size, reqs);
    else
        mpi_waitall_internal(2 * size, reqs);
    free(reqs);
    return rc;
}

/* This process's neighbour lists from the edge ends it received. */
static struct mpi_topo *dgraph_from_edges(const edge_msg_t *in, int n,
                                          int weighted)
{
    int indeg = 0, outdeg = 0, i_at = 0, o_at = 0;
    int *src, *srcw, *dst, *dstw;

    for (int i = 0; i < n; i++) {
        outdeg += in[i].out;
        indeg += !in[i].out;
    }
    src = malloc(((size_t)indeg + 1) * sizeof(int));
    srcw = malloc(((size_t)indeg + 1) * sizeof(int));
    dst = malloc(((size_t)outdeg + 1) * sizeof(int));
    dstw = malloc(((size_t)outdeg + 1) * sizeof(int));
    for (int i = 0; i < n && src && srcw && dst && dstw; i++) {
        if (in[i].out) {
            dst[o_at] = in[i].peer;
            dstw[o_at++] = in[i].weight;
        } else {
            src[i_at] = in[i].peer;
            srcw[i_at++] = in[i].weight;
        }
    }
    return dgraph_new(indeg, src, srcw, outdeg, dst, dstw, weighted);
}

static int check_dgraph_args(MPI_Comm comm, int n, const int *sources,
                             const int *degrees, const int *dests,
                             const int *weights, const char *fn)
{
    long total = 0;
    int rc;

    if (n < 0 || (n > 0 && (sources == NULL || degrees == NULL)))
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "n = %d, or sources or degrees is NULL", n);
    rc = check_ranks(comm, sources, n, "sources", fn);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (degrees[i] < 0)
            return mpi_error(comm, MPI_ERR_ARG, fn, "degrees[%d] = %d", i,
                             degrees[i]);
        total += degrees[i];
    }
    if (rc == MPI_SUCCESS && total > 0x7fffffff / 3)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%ld edges is too many",
                         total);
    if (rc == MPI_SUCCESS)
        rc = check_ranks(comm, dests, (int)total, "destinations", fn);
    if (rc == MPI_SUCCESS && weights_kind(weights, (int)total) < 0)
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "weights is NULL or MPI_WEIGHTS_EMPTY with %ld "
                         "edges",
                         total);
    return rc;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                           const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create";
    edge_route_t r = {NULL, NULL, NULL};
    edge_msg_t *in = NULL;
    struct mpi_topo *t = NULL;
    int rc, weighted = weights != MPI_UNWEIGHTED, nin = 0;

    MPI_CHECK_INIT(fn);
    rc = check_intra(comm_old, fn);
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(comm_old, info, fn);
    if (rc == MPI_SUCCESS)
        rc = check_dgraph_args(comm_old, n, sources, degrees, destinations,
                               weights, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm_dist_graph == NULL)
        return mpi_error(comm_old, MPI_ERR_ARG, fn,
                         "comm_dist_graph is NULL");
    (void)reorder;
    rc = route_build(comm_old, n, sources, degrees, destinations, weights,
                     weighted, &r);
    if (rc == MPI_SUCCESS)
        rc = route_counts(comm_old, &r);
    if (rc == MPI_SUCCESS) {
        for (int p = 0; p < comm_old->size; p++)
            nin += r.nrecv[p];
        in = malloc(((size_t)nin + 1) * sizeof(*in));
        rc = in != NULL ? route_edges(comm_old, &r, in) : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        t = dgraph_from_edges(in, nin, weighted);
    route_free(&r, comm_old->size);
    free(in);
    if (rc == MPI_SUCCESS)
        rc = dgraph_comm(comm_old, info, t, comm_dist_graph);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm_old, rc, fn, "building the graph failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Dist_graph_create)

/* ---- distributed graphs: queries ------------------------------------------------ */

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
                                    int *outdegree, int *weighted)
{
    const char *fn = "MPI_Dist_graph_neighbors_count";
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_DIST_GRAPH, fn, &rc)) == NULL)
        return rc;
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "indegree, outdegree or weighted is NULL");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Dist_graph_neighbors_count)

/* Copy n entries of a (and weights w when wanted). */
static void copy_side(int *out, int *outw, const int *a, const int *w, int n,
                      int weighted)
{
    if (n > 0)
        memcpy(out, a, (size_t)n * sizeof(int));
    if (weighted && n > 0 && outw != MPI_UNWEIGHTED &&
        outw != MPI_WEIGHTS_EMPTY && outw != NULL)
        memcpy(outw, w, (size_t)n * sizeof(int));
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
    const char *fn = "MPI_Dist_graph_neighbors";
    struct mpi_topo *t;
    int rc;

    MPI_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_DIST_GRAPH, fn, &rc)) == NULL)
        return rc;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree ||
        (t->indegree > 0 && sources == NULL) ||
        (t->outdegree > 0 && destinations == NULL))
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         "room for %d sources and %d destinations needed "
                         "(got %d, %d)",
                         t->indegree, t->outdegree, maxindegree,
                         maxoutdegree);
    copy_side(sources, sourceweights, t->sources, t->sourceweights,
              t->indegree, t->weighted);
    copy_side(destinations, destweights, t->dests, t->destweights,
              t->outdegree, t->weighted);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Dist_graph_neighbors)
