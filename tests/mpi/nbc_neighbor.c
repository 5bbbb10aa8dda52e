/*
 * Neighbourhood collectives, blocking, nonblocking and persistent, on a
 * periodic and a non-periodic 2-D Cartesian grid, a graph (a ring with a
 * chord) and a distributed graph with self edges; at small sizes
 * neighbours repeat (a periodic dimension of 1 or 2, a ring of 2), which
 * is where the pairing of blocks shows: on a grid the block sent towards
 * -1 lands in the neighbour's +1 block and the other way round, on graphs
 * the k-th edge to a process meets the k-th edge from it.  Expected
 * results come from the neighbour lists computed here from the topology's
 * definition (and compared with the topology queries); blocks of
 * MPI_PROC_NULL neighbours must stay untouched.
 */
#include "nbc_test.h"

enum { CART_PER, CART, GRAPH, DIST, NTOPO };
static const char *const topo_name[] = {"periodic grid", "grid", "graph",
                                        "distributed graph"};
enum { AG, AGV, A2A, A2AV, A2AW };
static const char *const fn_name[] = {"allgather", "allgatherv", "alltoall",
                                      "alltoallv", "alltoallw"};

static int wrank, wsize, dims[2];

#define MAXDEG 8
#define UNTOUCHED (-5)

/* The lists of rank s by the topology's definition; returns the count. */
static int sources_of(int kind, int s, int *l)
{
    int p = wsize, n = 0;
    if (kind == CART_PER || kind == CART) {
        int c[2] = {s / dims[1], s % dims[1]};
        for (int d = 0; d < 2; d++)
            for (int dir = -1; dir <= 1; dir += 2) {
                int x[2] = {c[0], c[1]};
                x[d] += dir;
                if (x[d] < 0 || x[d] >= dims[d]) {
                    if (kind == CART) {
                        l[n++] = MPI_PROC_NULL;
                        continue;
                    }
                    x[d] = (x[d] + dims[d]) % dims[d];
                }
                l[n++] = x[0] * dims[1] + x[1];
            }
    } else if (kind == GRAPH) {
        l[n++] = (s + 1) % p;
        l[n++] = (s - 1 + p) % p;
        if (p >= 4 && (s == 0 || s == p / 2))
            l[n++] = s == 0 ? p / 2 : 0;
    } else {
        l[n++] = (s - 1 + p) % p;
        l[n++] = s;
        l[n++] = ((s - 2) % p + p) % p;
    }
    return n;
}

static int dests_of(int kind, int s, int *l)
{
    int p = wsize;
    if (kind != DIST)
        return sources_of(kind, s, l);
    l[0] = (s + 1) % p;
    l[1] = s;
    l[2] = (s + 2) % p;
    return 3;
}

/* Which block of its sender lands in my receive block i (-1: none). */
static int sender_block(int kind, const int *in, int i)
{
    int s = in[i], k = 0, out[MAXDEG], n;
    if (s == MPI_PROC_NULL)
        return -1;
    if (kind == CART_PER || kind == CART)
        return i ^ 1;
    for (int a = 0; a < i; a++)
        k += in[a] == s;
    n = dests_of(kind, s, out);
    for (int j = 0; j < n; j++)
        if (out[j] == wrank && k-- == 0)
            return j;
    MT_FAIL("no edge from %d to %d", s, wrank);
}

static MPI_Comm make_topo(int kind)
{
    MPI_Comm c;
    int in[MAXDEG], out[MAXDEG], nin = sources_of(kind, wrank, in);
    int nout = dests_of(kind, wrank, out);

    if (kind == CART_PER || kind == CART) {
        int per[2] = {kind == CART_PER, kind == CART_PER};
        MT_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c));
        for (int d = 0; d < 2; d++) {
            int src, dst;
            MT_OK(MPI_Cart_shift(c, d, 1, &src, &dst));
            CT_CHECK(src == in[2 * d] && dst == in[2 * d + 1],
                     "Cart_shift %d: %d %d", d, src, dst);
        }
    } else if (kind == GRAPH) {
        int *index = malloc(sizeof(int) * (size_t)wsize);
        int *edges = malloc(sizeof(int) * MAXDEG * (size_t)wsize), ne = 0;
        int got[MAXDEG];
        for (int s = 0; s < wsize; s++) {
            ne += sources_of(kind, s, edges + ne);
            index[s] = ne;
        }
        MT_OK(MPI_Graph_create(MPI_COMM_WORLD, wsize, index, edges, 0, &c));
        MT_OK(MPI_Graph_neighbors(c, wrank, MAXDEG, got));
        for (int i = 0; i < nin; i++)
            CT_CHECK(got[i] == in[i], "Graph_neighbors [%d]", i);
        free(index);
        free(edges);
    } else {
        MT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in,
                                             MPI_UNWEIGHTED, nout, out,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                             &c));
    }
    return c;
}

/* Elements in the blocks of the v and w forms: by the sender's block. */
static int vcount(int j)
{
    return 1 + j % 2;
}

static int val(int s, int j, int e, int it)
{
    return s * 10000 + j * 100 + e + 1000000 * it;
}

#define CALL(mode, it, req, bname, iname, pname, ...)                        \
    do {                                                                     \
        if ((mode) == BLOCK)                                                 \
            MT_OK(MPI_##bname(__VA_ARGS__));                                 \
        else                                                                 \
            NBC_START(mode, it, req, iname, pname, __VA_ARGS__);             \
    } while (0)

typedef struct sides {
    int nin, nout, in[MAXDEG], out[MAXDEG];
    int sc[MAXDEG], sd[MAXDEG], rc[MAXDEG], rd[MAXDEG];
    MPI_Aint sdb[MAXDEG], rdb[MAXDEG];
    MPI_Datatype st[MAXDEG], rt[MAXDEG];
    int sbuf[MAXDEG * 4], rbuf[MAXDEG * 4];
} sides_t;

static void run(int kind, MPI_Comm c, int f, int mode, MPI_Datatype *contig)
{
    sides_t x;
    int n = 2, iters = mode == PERS ? 3 : 1;
    MPI_Request req = MPI_REQUEST_NULL;

    x.nin = sources_of(kind, wrank, x.in);
    x.nout = dests_of(kind, wrank, x.out);
    /* Blocks: 3 ints of room each; received ones in reverse order. */
    for (int j = 0; j < x.nout; j++) {
        x.sc[j] = f == AG || f == AGV || f == A2A ? n : vcount(j);
        x.sd[j] = f == AG || f == AGV ? 0 : 3 * j;
        x.sdb[j] = (MPI_Aint)sizeof(int) * x.sd[j];
        x.st[j] = MPI_INT;
    }
    for (int i = 0; i < x.nin; i++) {
        int j = sender_block(kind, x.in, i);
        x.rc[i] = f == AG || f == AGV || f == A2A ? n : j < 0 ? 0 : vcount(j);
        x.rd[i] = 3 * (x.nin - 1 - i);
        x.rdb[i] = (MPI_Aint)sizeof(int) * x.rd[i];
        /* w form: one contiguous(count) element */
        x.rt[i] = x.rc[i] > 0 ? contig[x.rc[i]] : MPI_DATATYPE_NULL;
    }
    for (int it = 0; it < iters; it++) {
        for (int j = 0; j < x.nout; j++)
            for (int e = 0; e < 3; e++)
                x.sbuf[3 * j + e] = val(wrank, f == AG || f == AGV ? 0 : j,
                                        e, it);
        for (int i = 0; i < MAXDEG * 4; i++)
            x.rbuf[i] = UNTOUCHED;
        switch (f) {
        case AG:
            CALL(mode, it, req, Neighbor_allgather, Ineighbor_allgather,
                 Neighbor_allgather_init, x.sbuf, n, MPI_INT, x.rbuf, n,
                 MPI_INT, c);
            break;
        case AGV:
            CALL(mode, it, req, Neighbor_allgatherv, Ineighbor_allgatherv,
                 Neighbor_allgatherv_init, x.sbuf, n, MPI_INT, x.rbuf, x.rc,
                 x.rd, MPI_INT, c);
            break;
        case A2A:
            CALL(mode, it, req, Neighbor_alltoall, Ineighbor_alltoall,
                 Neighbor_alltoall_init, x.sbuf, 3, MPI_INT, x.rbuf, 3,
                 MPI_INT, c);
            break;
        case A2AV:
            CALL(mode, it, req, Neighbor_alltoallv, Ineighbor_alltoallv,
                 Neighbor_alltoallv_init, x.sbuf, x.sc, x.sd, MPI_INT,
                 x.rbuf, x.rc, x.rd, MPI_INT, c);
            break;
        default: /* one contiguous element per received block */
            for (int i = 0; i < x.nin; i++)
                x.rc[i] = x.rc[i] > 0;
            CALL(mode, it, req, Neighbor_alltoallw, Ineighbor_alltoallw,
                 Neighbor_alltoallw_init, x.sbuf, x.sc, x.sdb, x.st, x.rbuf,
                 x.rc, x.rdb, x.rt, c);
        }
        if (mode != BLOCK)
            nbc_complete(mode, &req, it);
        for (int i = 0; i < x.nin; i++) {
            int j = sender_block(kind, x.in, i), ag = f == AG || f == AGV;
            /* room of the block; where it is; what arrives there */
            int room = f == AG ? n : 3;
            int at = f == AG ? n * i : f == A2A ? 3 * i : x.rd[i];
            int cnt = j < 0 ? 0 : ag ? n : f == A2A ? 3 : vcount(j);
            for (int e = 0; e < room; e++) {
                int want = e < cnt ? val(x.in[i], ag ? 0 : j, e, it)
                                   : UNTOUCHED;
                CT_CHECK(x.rbuf[at + e] == want,
                         "%s %s on a %s: block %d (from %d, its block %d) "
                         "int %d is %d, want %d",
                         nbc_mode_name[mode], fn_name[f], topo_name[kind], i,
                         x.in[i], j, e, x.rbuf[at + e], want);
            }
        }
    }
    nbc_release(mode, &req);
}

int main(int argc, char **argv)
{
    MPI_Datatype contig[3];

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MT_OK(MPI_Dims_create(wsize, 2, dims));
    for (int k = 1; k < 3; k++) {
        MT_OK(MPI_Type_contiguous(k, MPI_INT, &contig[k]));
        MT_OK(MPI_Type_commit(&contig[k]));
    }
    for (int kind = 0; kind < NTOPO; kind++) {
        MPI_Comm c = make_topo(kind);
        for (int f = AG; f <= A2AW; f++)
            for (int mode = NB; mode <= BLOCK; mode++)
                run(kind, c, f, mode, contig);
        MT_OK(MPI_Comm_free(&c));
    }
    for (int k = 1; k < 3; k++)
        MT_OK(MPI_Type_free(&contig[k]));
    MT_OK(MPI_Finalize());
    return 0;
}
