/*
 * Process topologies attached to communicators: Cartesian grids, graphs
 * and distributed graphs (topo_*.c).  The collective engineer's
 * neighbourhood collectives read the neighbour lists from here.
 */
#ifndef SHOAL_MPI_TOPO_H
#define SHOAL_MPI_TOPO_H

#include "mpi/mpi_impl.h"

struct mpi_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART: dims and periods of ndims dimensions; ranks row-major */
    int ndims;
    int *dims, *periods;
    /* MPI_GRAPH: index[nnodes] and edges[nedges], as given */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: this process's neighbours */
    int indegree, outdegree, weighted;
    int *sources, *sourceweights, *dests, *destweights;
};

int mpi_topo_dup(const struct mpi_topo *from, struct mpi_topo **to_p);
void mpi_topo_free(struct mpi_topo *t);

/* Coordinates of rank in a Cartesian topology (t->ndims entries). */
void mpi_topo_cart_coords(const struct mpi_topo *t, int rank, int *coords);

/*
 * Neighbours for neighbourhood collectives, in the standard's order:
 * sources receive, destinations send (MPI_PROC_NULL entries possible for
 * Cartesian grids).  Arrays stay owned by the topology, except for
 * Cartesian ones which are computed into the caller's arrays of 2 * ndims.
 */
int mpi_topo_neighbors(MPI_Comm comm, int *indegree, int *outdegree,
                       const int **sources, const int **dests, int *cart_src,
                       int *cart_dst);

/* The two degrees alone (0 and 0 when comm has no topology). */
void mpi_topo_degrees(MPI_Comm comm, int *indegree, int *outdegree);

#endif /* SHOAL_MPI_TOPO_H */
