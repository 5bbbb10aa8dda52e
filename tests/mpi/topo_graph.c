/*
 * Graph and distributed-graph topologies: Graph_create over a ring
 * (neighbours, dims, get, map), Dist_graph_create_adjacent with and
 * without weights, Dist_graph_create where one process names every edge,
 * and the topology errors.
 */
#include "mpitest.h"

static int wsize, wrank;

static void graph(void)
{
    int n = wsize, index[64], edges[128], e = 0, cnt, nb[4], nn, ne, st;
    MPI_Comm g;

    /* a ring: node i is linked to i-1 and i+1 */
    for (int i = 0; i < n; i++) {
        edges[e++] = (i + n - 1) % n;
        edges[e++] = (i + 1) % n;
        index[i] = e;
    }
    MT_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    MT_OK(MPI_Topo_test(g, &st));
    MT_CHECK(st == MPI_GRAPH, "topo_test %d", st);
    MT_OK(MPI_Graphdims_get(g, &nn, &ne));
    MT_CHECK(nn == n && ne == 2 * n, "graphdims %d %d", nn, ne);
    MT_OK(MPI_Graph_neighbors_count(g, wrank, &cnt));
    MT_CHECK(cnt == 2, "count %d", cnt);
    MT_OK(MPI_Graph_neighbors(g, wrank, 4, nb));
    MT_CHECK(nb[0] == (wrank + n - 1) % n && nb[1] == (wrank + 1) % n,
             "neighbours %d %d", nb[0], nb[1]);
    {
        int gi[64], ge[128];
        MT_OK(MPI_Graph_get(g, 64, 128, gi, ge));
        MT_CHECK(memcmp(gi, index, (size_t)n * sizeof(int)) == 0 &&
                     memcmp(ge, edges, (size_t)e * sizeof(int)) == 0,
                 "graph_get");
    }
    MT_ERR(MPI_ERR_RANK, MPI_Graph_neighbors_count(g, n, &cnt));
    MT_ERR(MPI_ERR_ARG, MPI_Graph_neighbors(g, wrank, 1, nb));
    MT_ERR(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(g, &cnt, &cnt,
                                                            &cnt));
    MT_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &cnt));
    MT_CHECK(cnt == wrank, "graph_map %d", cnt);
    MT_OK(MPI_Comm_free(&g));
    /* bad edges */
    edges[0] = n;
    MT_ERR(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0,
                                         &g));
    MT_ERR(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0,
                                                       &cnt));
}

/* Each process: in from rank-1 and rank-2, out to rank+1 and rank+2. */
static void adjacent(void)
{
    int n = wsize, src[2], dst[2], sw[2], dw[2], in, out, w;
    int gs[2], gd[2], gsw[2], gdw[2];
    MPI_Comm g;

    src[0] = (wrank + n - 1) % n;
    src[1] = (wrank + n - 2) % n;
    dst[0] = (wrank + 1) % n;
    dst[1] = (wrank + 2) % n;
    sw[0] = 10 + src[0];
    sw[1] = 20 + src[1];
    dw[0] = 10 + wrank;
    dw[1] = 20 + wrank;
    MT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst,
                                         dw, MPI_INFO_NULL, 0, &g));
    MT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_CHECK(in == 2 && out == 2 && w == 1, "counts %d %d %d", in, out, w);
    MT_OK(MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw));
    MT_CHECK(gs[0] == src[0] && gs[1] == src[1] && gsw[1] == sw[1] &&
                 gd[1] == dst[1] && gdw[0] == dw[0],
             "adjacent neighbours");
    MT_OK(MPI_Comm_free(&g));
    MT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src,
                                         MPI_UNWEIGHTED, 2, dst,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                         &g));
    MT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_CHECK(w == 0, "unweighted flag %d", w);
    MT_OK(MPI_Comm_free(&g));
    MT_ERR(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(
                            MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                            dw, MPI_INFO_NULL, 0, &g));
    src[0] = n;
    MT_ERR(MPI_ERR_RANK, MPI_Dist_graph_create_adjacent(
                             MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
                             MPI_INFO_NULL, 0, &g));
    /* no neighbours at all: MPI_WEIGHTS_EMPTY */
    MT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL,
                                         MPI_WEIGHTS_EMPTY, 0, NULL,
                                         MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
                                         &g));
    MT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_CHECK(in == 0 && out == 0, "empty graph %d %d", in, out);
    MT_OK(MPI_Comm_free(&g));
}

/* Rank 0 names every edge i -> (i + 1) % n with weight i; the others
 * name none.  Each process must learn its own in and out edge. */
static void general(void)
{
    int n = wsize, srcs[64], degs[64], dsts[64], ws[64], in, out, w;
    int gs[4], gsw[4], gd[4], gdw[4];
    MPI_Comm g;

    for (int i = 0; i < n; i++) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = (i + 1) % n;
        ws[i] = 100 + i;
    }
    MT_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, wrank == 0 ? n : 0, srcs,
                                degs, dsts,
                                wrank == 0 ? ws : MPI_WEIGHTS_EMPTY,
                                MPI_INFO_NULL, 0, &g));
    MT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_CHECK(in == 1 && out == 1 && w == 1, "counts %d %d %d", in, out, w);
    MT_OK(MPI_Dist_graph_neighbors(g, 4, gs, gsw, 4, gd, gdw));
    MT_CHECK(gs[0] == (wrank + n - 1) % n && gsw[0] == 100 + gs[0],
             "source %d weight %d", gs[0], gsw[0]);
    MT_CHECK(gd[0] == (wrank + 1) % n && gdw[0] == 100 + wrank,
             "dest %d weight %d", gd[0], gdw[0]);
    {
        int got = -1;
        MT_OK(MPI_Sendrecv(&wrank, 1, MPI_INT, gd[0], 1, &got, 1, MPI_INT,
                           gs[0], 1, g, MPI_STATUS_IGNORE));
        MT_CHECK(got == gs[0], "traffic along the graph %d", got);
    }
    MT_OK(MPI_Comm_free(&g));
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    if (wsize > 64) {
        MPI_Finalize();
        return 77;
    }
    graph();
    adjacent();
    general();
    MT_OK(MPI_Finalize());
    if (wrank == 0)
        printf("topo_graph: ok on %d ranks\n", wsize);
    return 0;
}
