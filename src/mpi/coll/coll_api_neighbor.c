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
 *
 * The int and large-count (_c) forms share the functions: counts are
 * MPI_Count and arrays 64-bit (coll_mpi.h); the int forms' arrays are
 * widened to the degrees of the topology.
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "mpi/coll/coll_forms.h"
#include "mpi/comm/topo.h"

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
    MPI_Count count;
    int stride;
    const int64_t *counts, *displs;
    const int64_t *bdispls;
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
                            s->form == WFORM ? s->bdispls : s->displs, fn,
                            s->names[2], s->names[3]));
    if (s->form == VFORM)
        return mpi_dt_check(comm, s->dt, fn);
    return mpi_coll_check_types(comm, n, s->counts, s->dts, fn, s->names[4]);
}

static void blocks(const side_t *s, int n, const int *peers, coll_block_t *b)
{
    for (int k = 0; k < n; k++) {
        int64_t count = s->form == PLAIN ? s->count : s->counts[k];
        MPI_Datatype dt = s->form == WFORM ? s->dts[k] : s->dt;
        int64_t off;

        if (s->form == WFORM)
            off = s->bdispls[k];
        else if (s->form == VFORM)
            off = s->displs[k] * dt->extent;
        else
            off = (int64_t)k * s->stride * s->count * dt->extent;
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
    if (outdeg > 0 && indeg > 0)
        TRY(mpi_coll_check_alias(comm, out->buf, in->buf, NULL, fn));
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

/*
 * The int forms' arrays, widened: in[0] and in[1] (sendcounts and sdispls,
 * NULL for the allgathers) of the out-degree, in[2] and in[3] of the
 * in-degree.  No topology (or no valid communicator): empty arrays, the
 * call reports that.
 */
static int widen_sides(MPI_Comm comm, mpi_wide_t *w, const int *const in[4],
                       const int64_t *out[4], const char *fn)
{
    int indeg = 0, outdeg = 0;

    if (mpi_comm_ok(comm))
        mpi_topo_degrees(comm, &indeg, &outdeg);
    return mpi_widen(comm, w, 4, in,
                     (const int[]){outdeg, outdeg, indeg, indeg}, out, fn);
}

/* ---- allgather ------------------------------------------------------------------ */

/* rcounts NULL: the plain form with recvcount (displs unused). */
static int allgather(const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     const int64_t *rcounts, const int64_t *displs,
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

static int allgather_plain(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm, 0, nb, fn);
}

static int allgatherv_int(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          const int *recvcounts, const int *displs,
                          MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                          const char *fn)
{
    const int *in[4] = {NULL, NULL, recvcounts, displs};
    const int64_t *v[4];
    mpi_wide_t w;
    int rc = widen_sides(comm, &w, in, v, fn);

    if (rc == MPI_SUCCESS)
        rc = allgather(sendbuf, sendcount, sendtype, recvbuf, 0, v[2], v[3],
                       recvtype, comm, 1, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count *recvcounts, const MPI_Aint *displs,
                        MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                        const char *fn)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0,
                     mpi_count64(recvcounts), mpi_aint64(displs), recvtype,
                     comm, 1, nb, fn);
}

MPI_COLL_PAIR(Neighbor_allgather, Ineighbor_allgather, MPI_PLAIN_PARAMS,
              allgather_plain, allgather_plain, MPI_PLAIN_ARGS)
MPI_COLL_PAIR(Neighbor_allgatherv, Ineighbor_allgatherv, MPI_ALLGATHERV_PARAMS,
              allgatherv_int, allgatherv_c, MPI_ALLGATHERV_ARGS)

/* ---- all-to-all ----------------------------------------------------------------- */

static int alltoall(const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, mpi_nb_t *nb,
                    const char *fn)
{
    side_t out = {.form = PLAIN, .buf = sendbuf, .count = sendcount,
                  .stride = 1, .dt = sendtype, .names = send_names};
    side_t in = {.form = PLAIN, .buf = recvbuf, .count = recvcount,
                 .stride = 1, .dt = recvtype, .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

MPI_COLL_PAIR(Neighbor_alltoall, Ineighbor_alltoall, MPI_PLAIN_PARAMS, alltoall,
              alltoall, MPI_PLAIN_ARGS)

static int alltoallv(const void *sendbuf, const int64_t *sendcounts,
                     const int64_t *sdispls, MPI_Datatype sendtype,
                     void *recvbuf, const int64_t *recvcounts,
                     const int64_t *rdispls, MPI_Datatype recvtype,
                     MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    side_t out = {.form = VFORM, .buf = sendbuf, .counts = sendcounts,
                  .displs = sdispls, .dt = sendtype, .names = send_names};
    side_t in = {.form = VFORM, .buf = recvbuf, .counts = recvcounts,
                 .displs = rdispls, .dt = recvtype, .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

static int alltoallv_int(const void *sendbuf, const int *sendcounts,
                         const int *sdispls, MPI_Datatype sendtype,
                         void *recvbuf, const int *recvcounts,
                         const int *rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    const int *in[4] = {sendcounts, sdispls, recvcounts, rdispls};
    const int64_t *v[4];
    mpi_wide_t w;
    int rc = widen_sides(comm, &w, in, v, fn);

    if (rc == MPI_SUCCESS)
        rc = alltoallv(sendbuf, v[0], v[1], sendtype, recvbuf, v[2], v[3],
                       recvtype, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int alltoallv_c(const void *sendbuf, const MPI_Count *sendcounts,
                       const MPI_Aint *sdispls, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count *recvcounts,
                       const MPI_Aint *rdispls, MPI_Datatype recvtype,
                       MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return alltoallv(sendbuf, mpi_count64(sendcounts), mpi_aint64(sdispls),
                     sendtype, recvbuf, mpi_count64(recvcounts),
                     mpi_aint64(rdispls), recvtype, comm, nb, fn);
}

MPI_COLL_PAIR(Neighbor_alltoallv, Ineighbor_alltoallv, MPI_ALLTOALLV_PARAMS,
              alltoallv_int, alltoallv_c, MPI_ALLTOALLV_ARGS)

/* Displacements in bytes, MPI_Aint in both forms. */
static int alltoallw(const void *sendbuf, const int64_t *sendcounts,
                     const MPI_Aint *sdispls, const MPI_Datatype *sendtypes,
                     void *recvbuf, const int64_t *recvcounts,
                     const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                     MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    side_t out = {.form = WFORM,
                  .buf = sendbuf,
                  .counts = sendcounts,
                  .bdispls = mpi_aint64(sdispls),
                  .dts = sendtypes,
                  .names = send_names};
    side_t in = {.form = WFORM,
                 .buf = recvbuf,
                 .counts = recvcounts,
                 .bdispls = mpi_aint64(rdispls),
                 .dts = recvtypes,
                 .names = recv_names};

    return neighbor(comm, &out, &in, nb, fn);
}

static int alltoallw_int(const void *sendbuf, const int *sendcounts,
                         const MPI_Aint *sdispls, const MPI_Datatype *sendtypes,
                         void *recvbuf, const int *recvcounts,
                         const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                         MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    const int *in[4] = {sendcounts, NULL, recvcounts, NULL};
    const int64_t *v[4];
    mpi_wide_t w;
    int rc = widen_sides(comm, &w, in, v, fn);

    if (rc == MPI_SUCCESS)
        rc = alltoallw(sendbuf, v[0], sdispls, sendtypes, recvbuf, v[2],
                       rdispls, recvtypes, comm, nb, fn);
    mpi_wide_free(&w);
    return rc;
}

static int alltoallw_c(const void *sendbuf, const MPI_Count *sendcounts,
                       const MPI_Aint *sdispls, const MPI_Datatype *sendtypes,
                       void *recvbuf, const MPI_Count *recvcounts,
                       const MPI_Aint *rdispls, const MPI_Datatype *recvtypes,
                       MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    return alltoallw(sendbuf, mpi_count64(sendcounts), sdispls, sendtypes,
                     recvbuf, mpi_count64(recvcounts), rdispls, recvtypes, comm,
                     nb, fn);
}

#define ALLTOALLW_PARAMS(C, CV, DV)                                            \
    (const void *sendbuf, const CV sendcounts[], const MPI_Aint sdispls[],     \
     const MPI_Datatype sendtypes[], void *recvbuf, const CV recvcounts[],     \
     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)

MPI_COLL_PAIR(Neighbor_alltoallw, Ineighbor_alltoallw, ALLTOALLW_PARAMS,
              alltoallw_int, alltoallw_c,
              (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
               rdispls, recvtypes, comm))
