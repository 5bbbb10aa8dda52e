/*
 * Neighbourhood collectives on Cartesian, graph and distributed graph
 * communicators: Neighbor_allgather(v) and Neighbor_alltoall(v,w), each
 * blocking, nonblocking (MPI_Ineighbor_*) and persistent (*_init).  The
 * topology lists the neighbours (mpi_topo_neighbors); a call turns its
 * buffers into one block per neighbour and the collective layer exchanges
 * them (coll_neighbor).
 *
 * Blocks are in the standard's order: on a Cartesian grid, per dimension,
 * the -1 then the +1 neighbour (MPI_PROC_NULL ones move nothing and their
 * blocks are left alone); on a graph, MPI_Graph_neighbors; on a
 * distributed graph, sources and destinations as given.  Between two
 * processes blocks pair in list order, except on a Cartesian grid, where
 * the block sent towards -1 lands in the neighbour's +1 block and the
 * other way round (MPI 4.1, 8.6).  That matters where both neighbours of
 * a dimension are one process (periodic, 1 or 2 processes long), so the
 * two receive blocks of each dimension go to the layer swapped.
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "mpi_coll_nb.h"
#include "mpi_topo.h"

/* Argument names of a side, for messages: buffer, count, counts,
 * displacements, types. */
static const char *const send_names[] = {"sendbuf", "sendcount",
                                         "sendcounts", "sdispls",
                                         "sendtypes"};
static const char *const recv_names[] = {"recvbuf", "recvcount",
                                         "recvcounts", "rdispls",
                                         "recvtypes"};
static const char *const allgatherv_names[] = {"recvbuf", "recvcount",
                                               "recvcounts", "displs",
                                               "recvtypes"};

/* How a side's blocks are laid out. */
enum { PLAIN, VFORM, WFORM };

/*
 * One side of a call, n blocks.  Block k is count elements of dt at
 * k * count elements from buf, or at buf itself for every block when
 * stride is 0 (PLAIN); counts[k] elements of dt at displs[k] elements
 * (VFORM); counts[k] elements of dts[k] at bdispls[k] bytes (WFORM).
 */
typedef struct side {
    int form;
    const void *buf;
    int count, stride;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    MPI_Datatype dt;
    const MPI_Datatype *dts;
    const char *const *names;
} side_t;

static int check_side_args(MPI_Comm comm, const side_t *s, int n,
                           const char *fn)
{
    if (s->buf == MPI_IN_PLACE)
        return mpi_coll_bad_in_place(comm, fn, s->names[0],
                                     "in a neighbourhood collective");
    if (s->form == PLAIN)
        return mpi_coll_check_data(comm, s->buf, s->count, s->dt, fn,
                                   s->names[1]);
    TRY(mpi_coll_check_side(comm, n, s->counts,
                            s->form == WFORM ? (const void *)s->bdispls
                                             : s->displs,
                            fn, s->names[2], s->names[3]));
    if (s->form == VFORM)
        return mpi_dt_check(comm, s->dt, fn);
    return mpi_coll_check_types(comm, n, s->counts, s->dts, fn, s->names[4]);
}

static void blocks(const side_t *s, int n, const int *peers, coll_block_t *b)
{
    for (int k = 0; k < n; k++) {
        int64_t count = s->form == PLAIN ? s->count : s->counts[k];
        MPI_Datatype dt = s->form == WFORM ? s->dts[k] : s->dt;
        MPI_Aint off;

        if (s->form == WFORM)
            off = s->bdispls[k];
        else if (s->form == VFORM)
            off = (MPI_Aint)s->displs[k] * dt->extent;
        else
            off = (MPI_Aint)k * s->stride * s->count * dt->extent;
        /* Integer arithmetic: buf may be MPI_BOTTOM (NULL). */
        b[k] = (coll_block_t){peers[k], (void *)((uintptr_t)s->buf + off),
                              count, count > 0 ? dt : NULL};
    }
}

/* The exchange itself, once the neighbours are known. */
static int exchange(MPI_Comm comm, int outdeg, const int *dsts, int indeg,
                    const int *srcs, const side_t *out, const side_t *in,
                    mpi_nb_t *nb, const char *fn)
{
    coll_block_t *b, *rb;
    int rc;

    TRY(check_side_args(comm, out, outdeg, fn));
    TRY(check_side_args(comm, in, indeg, fn));
    b = malloc(((size_t)outdeg + (size_t)indeg + 1) * sizeof(*b));
    if (b == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                         "no memory for %d neighbour blocks",
                         outdeg + indeg);
    rb = b + outdeg;
    blocks(out, outdeg, dsts, b);
    blocks(in, indeg, srcs, rb);
    if (comm->topo->kind == MPI_CART)
        for (int k = 0; k + 1 < indeg; k += 2) {
            coll_block_t t = rb[k];
            rb[k] = rb[k + 1];
            rb[k + 1] = t;
        }
    if (out->form == WFORM)
        mpi_nb_keep_w(nb, 0, outdeg, out->counts, out->dts);
    if (in->form == WFORM)
        mpi_nb_keep_w(nb, 1, indeg, in->counts, in->dts);
    rc = mpi_nb_begin(comm, nb, out->dt, in->dt, NULL, fn);
    /* The layer copies the blocks while it builds: b may go. */
    if (rc == MPI_SUCCESS)
        rc = mpi_nb_end(comm,
                        coll_neighbor(mpi_coll_of(comm), outdeg, b, indeg,
                                      rb),
                        nb, fn);
    free(b);
    return rc;
}

static int neighbor(MPI_Comm comm, const side_t *out, const side_t *in,
                    mpi_nb_t *nb, const char *fn)
{
    const int *srcs, *dsts;
    int indeg, outdeg, nd, rc, *cart;

    TRY(mpi_nb_check(comm, nb, fn));
    if (comm->topo == NULL)
        return mpi_error(comm, MPI_ERR_TOPOLOGY, fn,
                         "the communicator has no Cartesian, graph or "
                         "distributed graph topology");
    /* A Cartesian grid's lists are computed into 2 * 2 * ndims ints. */
    nd = comm->topo->kind == MPI_CART ? comm->topo->ndims : 0;
    cart = malloc((4 * (size_t)nd + 1) * sizeof(int));
    if (cart == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                         "no memory for the neighbour lists");
    rc = mpi_topo_neighbors(comm, &indeg, &outdeg, &srcs, &dsts, cart,
                            cart + 2 * nd);
    if (rc == MPI_SUCCESS)
        rc = exchange(comm, outdeg, dsts, indeg, srcs, out, in, nb, fn);
    else
        rc = mpi_error(comm, rc, fn, "reading the neighbour lists failed");
    free(cart);
    return rc;
}

/* ---- allgather ------------------------------------------------------------------ */

/* vform 0: the plain form with recvcount (rcounts and displs unused). */
static int allgather(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *rcounts, const int *displs,
                     MPI_Datatype recvtype, MPI_Comm comm, int vform,
                     mpi_nb_t *nb, const char *fn)
{
    side_t out = {.form = PLAIN, .buf = sendbuf, .count = sendcount,
                  .dt = sendtype, .names = send_names};
    side_t in = {.form = vform ? VFORM : PLAIN, .buf = recvbuf,
                 .count = recvcount, .stride = 1, .counts = rcounts,
                 .displs = displs, .dt = recvtype,
                 .names = vform ? allgatherv_names : recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Neighbor_allgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, NULL, "MPI_Neighbor_allgather");
}
SHOAL_MPI_WEAK(Neighbor_allgather)

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ineighbor_allgather");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0,
                     MPI_NB(request, 0, MPI_INFO_NULL),
                     "MPI_Ineighbor_allgather");
}
SHOAL_MPI_WEAK(Ineighbor_allgather)

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Neighbor_allgather_init");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, MPI_NB(request, 1, info),
                     "MPI_Neighbor_allgather_init");
}
SHOAL_MPI_WEAK(Neighbor_allgather_init)

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Neighbor_allgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1, NULL,
                     "MPI_Neighbor_allgatherv");
}
SHOAL_MPI_WEAK(Neighbor_allgatherv)

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ineighbor_allgatherv");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1,
                     MPI_NB(request, 0, MPI_INFO_NULL),
                     "MPI_Ineighbor_allgatherv");
}
SHOAL_MPI_WEAK(Ineighbor_allgatherv)

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Neighbor_allgatherv_init");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm, 1, MPI_NB(request, 1, info),
                     "MPI_Neighbor_allgatherv_init");
}
SHOAL_MPI_WEAK(Neighbor_allgatherv_init)

/* ---- all-to-all ----------------------------------------------------------------- */

static int alltoall(const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                    const char *fn)
{
    side_t out = {.form = PLAIN, .buf = sendbuf, .count = sendcount,
                  .stride = 1, .dt = sendtype, .names = send_names};
    side_t in = {.form = PLAIN, .buf = recvbuf, .count = recvcount,
                 .stride = 1, .dt = recvtype, .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoall");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, NULL, "MPI_Neighbor_alltoall");
}
SHOAL_MPI_WEAK(Neighbor_alltoall)

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ineighbor_alltoall");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, MPI_NB(request, 0, MPI_INFO_NULL),
                    "MPI_Ineighbor_alltoall");
}
SHOAL_MPI_WEAK(Ineighbor_alltoall)

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoall_init");
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm, MPI_NB(request, 1, info),
                    "MPI_Neighbor_alltoall_init");
}
SHOAL_MPI_WEAK(Neighbor_alltoall_init)

static int alltoallv(const void *sendbuf, const int *sendcounts,
                     const int *sdispls, MPI_Datatype sendtype, void *recvbuf,
                     const int *recvcounts, const int *rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                     const char *fn)
{
    side_t out = {.form = VFORM, .buf = sendbuf, .counts = sendcounts,
                  .displs = sdispls, .dt = sendtype, .names = send_names};
    side_t in = {.form = VFORM, .buf = recvbuf, .counts = recvcounts,
                 .displs = rdispls, .dt = recvtype, .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoallv");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm, NULL,
                     "MPI_Neighbor_alltoallv");
}
SHOAL_MPI_WEAK(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ineighbor_alltoallv");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm,
                     MPI_NB(request, 0, MPI_INFO_NULL),
                     "MPI_Ineighbor_alltoallv");
}
SHOAL_MPI_WEAK(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoallv_init");
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm,
                     MPI_NB(request, 1, info), "MPI_Neighbor_alltoallv_init");
}
SHOAL_MPI_WEAK(Neighbor_alltoallv_init)

static int alltoallw(const void *sendbuf, const int *sendcounts,
                     const MPI_Aint *sdispls, const MPI_Datatype *sendtypes,
                     void *recvbuf, const int *recvcounts,
                     const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                     MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    side_t out = {.form = WFORM, .buf = sendbuf, .counts = sendcounts,
                  .bdispls = sdispls, .dts = sendtypes, .names = send_names};
    side_t in = {.form = WFORM, .buf = recvbuf, .counts = recvcounts,
                 .bdispls = rdispls, .dts = recvtypes, .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoallw");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm, NULL,
                     "MPI_Neighbor_alltoallw");
}
SHOAL_MPI_WEAK(Neighbor_alltoallw)

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf,
                             const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Ineighbor_alltoallw");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm,
                     MPI_NB(request, 0, MPI_INFO_NULL),
                     "MPI_Ineighbor_alltoallw");
}
SHOAL_MPI_WEAK(Ineighbor_alltoallw)

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[],
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Neighbor_alltoallw_init");
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm,
                     MPI_NB(request, 1, info), "MPI_Neighbor_alltoallw_init");
}
SHOAL_MPI_WEAK(Neighbor_alltoallw_init)
