/*
 * The large-count (_c) collectives of MPI 4.0: every one in its blocking,
 * nonblocking (MPI_I*_c) and persistent (MPI_*_init_c) form, results
 * checked against the serial computation; the v and w forms with
 * irregular counts (zeros among them) and displacements (blocks in
 * reverse order with a gap after each, gaps checked untouched); the
 * neighbourhood ones on a distributed graph whose in- and out-degrees
 * differ; argument errors under MPI_ERRORS_RETURN, among them counts whose
 * low 32 bits look valid, which only a 64-bit path reports; an int form
 * whose arrays are too long for the stack when widened; int and _c v and
 * w forms across an intercommunicator, whose arrays cover the remote
 * group.
 *
 * Counts over INT_MAX: a derived type of size 0 lets Bcast_c, Allgather_c,
 * Allgatherv_c (whose counts add up past INT_MAX) and Alltoall_c take such
 * counts through every layer without moving a byte.  Real data of more
 * than INT_MAX elements is too heavy for CI in a collective (2 GiB and more
 * per buffer per rank, a v form whose counts add up past INT_MAX even
 * more), so the program run with the argument "large" (one rank) does one
 * MPI_Reduce_local_c of 2^31 + 16 bytes with MPI_BOR, and skips it (with a
 * message) when the memory for it is not available.
 */
#include <limits.h>
#include <stdint.h>

#include "coll_test.h"

enum { BLOCK, NB, PERS };
static const char *const mode_name[] = {"blocking", "nonblocking",
                                        "persistent"};
#define ITERS 2

/* A negative count whose low 32 bits read 5: a path that cut counts to
 * int would take it for a valid one. */
#define BADC (5 - ((MPI_Count)1 << 32))

static int wrank, wsize;

/* One collective call in progress: mode and iteration, the request. */
typedef struct run {
    int mode, it;
    MPI_Request req;
} run_t;

/*
 * Start MPI_<name>_c (blocking: run it), MPI_<iname>_c, or MPI_<name>_init_c
 * and MPI_Start.  done() completes it; a persistent request is started
 * and completed once more (the same arguments, so the same result), then
 * freed.
 */
#define CALL(x, name, iname, ...)                                              \
    do {                                                                       \
        if ((x)->mode == BLOCK) {                                              \
            MT_OK(MPI_##name##_c(__VA_ARGS__));                                \
        } else if ((x)->mode == NB) {                                          \
            MT_OK(MPI_##iname##_c(__VA_ARGS__, &(x)->req));                    \
        } else {                                                               \
            MT_OK(MPI_##name##_init_c(__VA_ARGS__, MPI_INFO_NULL, &(x)->req)); \
            MT_OK(MPI_Start(&(x)->req));                                       \
        }                                                                      \
    } while (0)

static void done(run_t *x)
{
    if (x->mode == BLOCK)
        return;
    MT_OK(MPI_Wait(&x->req, MPI_STATUS_IGNORE));
    if (x->mode == PERS) {
        MT_OK(MPI_Start(&x->req));
        MT_OK(MPI_Wait(&x->req, MPI_STATUS_IGNORE));
        MT_OK(MPI_Request_free(&x->req));
    }
    CT_CHECK(x->mode != NB || x->req == MPI_REQUEST_NULL,
             "nonblocking request left after MPI_Wait");
}

/* Element k of what s sends to d (d = 0 where all get the same). */
static int val(int s, int d, int k, int it)
{
    return 1 + s * 1000 + d * 100 + k + it * 50000;
}

/* Per-rank counts with zeros among them, and an irregular per-pair one. */
static MPI_Count cnt(int i)
{
    return (i * 5 + 2) % 4;
}
static MPI_Count pair_cnt(int s, int d)
{
    return (s + 2 * d) % 3;
}

/*
 * Blocks of counts c[0..n-1] laid out in reverse order, one element of gap
 * after each: displs in elements (or bytes, times unit); returns the
 * elements the layout spans.
 */
static MPI_Count layout(int n, const MPI_Count *c, MPI_Aint *displs,
                        MPI_Aint unit)
{
    MPI_Count at = 0;

    for (int i = n - 1; i >= 0; i--) {
        displs[i] = (MPI_Aint)at * unit;
        at += c[i] + 1;
    }
    return at;
}

#define GAP (-7)

static int *ints(MPI_Count n)
{
    int *b = malloc(sizeof(int) * (size_t)(n + 1));

    CT_CHECK(b != NULL, "no memory for %lld ints", (long long)n);
    for (MPI_Count i = 0; i <= n; i++)
        b[i] = GAP;
    return b;
}

/* n blocks of cnt(from[j]) (from NULL: cnt(j)) elements in the layout
 * above: the counts in *c, the displacements in *d (both to be freed), a
 * buffer for it returned. */
static int *vlayout(int n, const int *from, MPI_Count **c, MPI_Aint **d)
{
    *c = malloc(sizeof(MPI_Count) * (size_t)(n + 1));
    *d = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
    for (int j = 0; j < n; j++)
        (*c)[j] = cnt(from != NULL ? from[j] : j);
    return ints(layout(n, *c, *d, 1));
}

/* Block i (count c, at displ) of a received layout holds val(s, d, k). */
static void check_block(const char *what, const run_t *x, const int *buf,
                        MPI_Aint displ, MPI_Count c, int s, int d)
{
    for (MPI_Count k = 0; k < c; k++)
        CT_CHECK(buf[displ + k] == val(s, d, (int)k, x->it),
                 "%s (%s, it %d): block from %d [%lld] = %d, want %d", what,
                 mode_name[x->mode], x->it, s, (long long)k, buf[displ + k],
                 val(s, d, (int)k, x->it));
    CT_CHECK(buf[displ + c] == GAP, "%s (%s): gap after block from %d is %d",
             what, mode_name[x->mode], s, buf[displ + c]);
}

/* ---- rooted ----------------------------------------------------------- */

static void t_bcast(run_t *x, MPI_Comm comm, int p)
{
    int root = p - 1, buf[6];

    for (int k = 0; k < 6; k++)
        buf[k] = wrank == root && k < 5 ? val(root, 0, k, x->it) : GAP;
    CALL(x, Bcast, Ibcast, buf, 5, MPI_INT, root, comm);
    done(x);
    check_block("Bcast_c", x, buf, 0, 5, root, 0);
}

static void t_reduce(run_t *x, MPI_Comm comm, int p)
{
    int in[4], out[5], root = 1 % p;

    for (int k = 0; k < 4; k++)
        in[k] = val(wrank, 0, k, x->it);
    for (int k = 0; k < 5; k++)
        out[k] = GAP;
    CALL(x, Reduce, Ireduce, in, out, 4, MPI_INT, MPI_SUM, root, comm);
    done(x);
    for (int k = 0; wrank == root && k < 4; k++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += val(q, 0, k, x->it);
        CT_CHECK(out[k] == want, "Reduce_c [%d] = %d, want %d", k, out[k],
                 want);
    }
    CT_CHECK(out[4] == GAP, "Reduce_c wrote past its count");
}

static void t_gather(run_t *x, MPI_Comm comm, int p)
{
    int root = 1 % p, in[3], *out = ints(3 * p);

    for (int k = 0; k < 3; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Gather, Igather, in, 3, MPI_INT, out, 3, MPI_INT, root, comm);
    done(x);
    for (int q = 0; wrank == root && q < p; q++)
        for (int k = 0; k < 3; k++)
            CT_CHECK(out[3 * q + k] == val(q, 0, k, x->it),
                     "Gather_c from %d [%d]", q, k);
    free(out);
}

static void t_gatherv(run_t *x, MPI_Comm comm, int p)
{
    MPI_Count *c;
    MPI_Aint *d;
    int root = p / 2, in[4], *out = vlayout(p, NULL, &c, &d);

    for (int k = 0; k < 4; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Gatherv, Igatherv, in, cnt(wrank), MPI_INT, out, c, d, MPI_INT,
         root, comm);
    done(x);
    for (int q = 0; wrank == root && q < p; q++)
        check_block("Gatherv_c", x, out, d[q], c[q], q, 0);
    free(out);
    free(c);
    free(d);
}

static void t_scatter(run_t *x, MPI_Comm comm, int p)
{
    int root = p - 1, *in = ints(2 * p), out[3] = {GAP, GAP, GAP};

    for (int q = 0; q < p; q++)
        for (int k = 0; k < 2; k++)
            in[2 * q + k] = val(root, q, k, x->it);
    CALL(x, Scatter, Iscatter, in, 2, MPI_INT, out, 2, MPI_INT, root, comm);
    done(x);
    check_block("Scatter_c", x, out, 0, 2, root, wrank);
    free(in);
}

static void t_scatterv(run_t *x, MPI_Comm comm, int p)
{
    MPI_Count *c;
    MPI_Aint *d;
    int root = 0, *in = vlayout(p, NULL, &c, &d), out[5];

    for (int q = 0; q < p; q++)
        for (MPI_Count k = 0; k < c[q]; k++)
            in[d[q] + k] = val(root, q, (int)k, x->it);
    for (int k = 0; k < 5; k++)
        out[k] = GAP;
    CALL(x, Scatterv, Iscatterv, in, c, d, MPI_INT, out, cnt(wrank), MPI_INT,
         root, comm);
    done(x);
    check_block("Scatterv_c", x, out, 0, cnt(wrank), root, wrank);
    free(in);
    free(c);
    free(d);
}

/* ---- without a root ----------------------------------------------------- */

/* The reductions' operand: small values, so sums stay exact. */
static int rv(int r, int k, int it)
{
    return 1 + (r + 2 * k + it) % 5;
}

static void t_allreduce(run_t *x, MPI_Comm comm, int p)
{
    int in[3], out[4] = {GAP, GAP, GAP, GAP};

    for (int k = 0; k < 3; k++)
        in[k] = rv(wrank, k, x->it);
    CALL(x, Allreduce, Iallreduce, in, out, 3, MPI_INT, MPI_MAX, comm);
    done(x);
    for (int k = 0; k < 3; k++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want = rv(q, k, x->it) > want ? rv(q, k, x->it) : want;
        CT_CHECK(out[k] == want, "Allreduce_c [%d] = %d, want %d", k, out[k],
                 want);
    }
    CT_CHECK(out[3] == GAP, "Allreduce_c wrote past its count");
}

/* Scan (ex 0) or Exscan (ex 1) with MPI_SUM. */
static void t_scan(run_t *x, MPI_Comm comm, int ex)
{
    int in[3], out[4] = {GAP, GAP, GAP, GAP};

    for (int k = 0; k < 3; k++)
        in[k] = rv(wrank, k, x->it);
    if (ex)
        CALL(x, Exscan, Iexscan, in, out, 3, MPI_INT, MPI_SUM, comm);
    else
        CALL(x, Scan, Iscan, in, out, 3, MPI_INT, MPI_SUM, comm);
    done(x);
    for (int k = 0; k < 3 && !(ex && wrank == 0); k++) {
        int want = 0;
        for (int q = 0; q < wrank + !ex; q++)
            want += rv(q, k, x->it);
        CT_CHECK(out[k] == want, "%s_c [%d] = %d, want %d",
                 ex ? "Exscan" : "Scan", k, out[k], want);
    }
    CT_CHECK(out[3] == GAP, "scan wrote past its count");
}

/* Reduce_scatter_c (irregular counts, zeros too) or, block 1,
 * Reduce_scatter_block_c with 2 each. */
static void t_reduce_scatter(run_t *x, MPI_Comm comm, int p, int block)
{
    MPI_Count *c = malloc(sizeof(MPI_Count) * (size_t)p), total = 0, first;
    int *in, out[5];

    for (int q = 0; q < p; q++)
        total += c[q] = block ? 2 : cnt(q);
    first = 0;
    for (int q = 0; q < wrank; q++)
        first += c[q];
    in = ints(total);
    for (MPI_Count k = 0; k < total; k++)
        in[k] = rv(wrank, (int)k, x->it);
    for (int k = 0; k < 5; k++)
        out[k] = GAP;
    if (block)
        CALL(x, Reduce_scatter_block, Ireduce_scatter_block, in, out, 2,
             MPI_INT, MPI_SUM, comm);
    else
        CALL(x, Reduce_scatter, Ireduce_scatter, in, out, c, MPI_INT, MPI_SUM,
             comm);
    done(x);
    for (MPI_Count k = 0; k < c[wrank]; k++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += rv(q, (int)(first + k), x->it);
        CT_CHECK(out[k] == want, "Reduce_scatter%s_c [%lld] = %d, want %d",
                 block ? "_block" : "", (long long)k, out[k], want);
    }
    CT_CHECK(out[c[wrank]] == GAP, "reduce-scatter wrote past its block");
    free(in);
    free(c);
}

static void t_allgather(run_t *x, MPI_Comm comm, int p)
{
    int in[2], *out = ints(2 * p);

    for (int k = 0; k < 2; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Allgather, Iallgather, in, 2, MPI_INT, out, 2, MPI_INT, comm);
    done(x);
    for (int q = 0; q < p; q++)
        for (int k = 0; k < 2; k++)
            CT_CHECK(out[2 * q + k] == val(q, 0, k, x->it),
                     "Allgather_c from %d [%d]", q, k);
    free(out);
}

static void t_allgatherv(run_t *x, MPI_Comm comm, int p)
{
    MPI_Count *c;
    MPI_Aint *d;
    int in[4], *out = vlayout(p, NULL, &c, &d);

    for (int k = 0; k < 4; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Allgatherv, Iallgatherv, in, cnt(wrank), MPI_INT, out, c, d,
         MPI_INT, comm);
    done(x);
    for (int q = 0; q < p; q++)
        check_block("Allgatherv_c", x, out, d[q], c[q], q, 0);
    free(out);
    free(c);
    free(d);
}

static void t_alltoall(run_t *x, MPI_Comm comm, int p)
{
    int *in = ints(2 * p), *out = ints(2 * p);

    for (int q = 0; q < p; q++)
        for (int k = 0; k < 2; k++)
            in[2 * q + k] = val(wrank, q, k, x->it);
    CALL(x, Alltoall, Ialltoall, in, 2, MPI_INT, out, 2, MPI_INT, comm);
    done(x);
    for (int q = 0; q < p; q++)
        for (int k = 0; k < 2; k++)
            CT_CHECK(out[2 * q + k] == val(q, wrank, k, x->it),
                     "Alltoall_c from %d [%d]", q, k);
    free(in);
    free(out);
}

/* The two sides of an all-to-all v or w form: sc[j] elements to peer
 * to[j] (nout of them), rc[j] from peer from[j] (nin), displacements in
 * elements (unit 1) or bytes. */
typedef struct vside {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
    int *in, *out;
} vside_t;

static void vside_make(vside_t *v, const run_t *x, int nout, const int *to,
                       int nin, const int *from, MPI_Aint unit)
{
    v->sc = malloc(sizeof(MPI_Count) * (size_t)(nout + 1));
    v->rc = malloc(sizeof(MPI_Count) * (size_t)(nin + 1));
    v->sd = malloc(sizeof(MPI_Aint) * (size_t)(nout + 1));
    v->rd = malloc(sizeof(MPI_Aint) * (size_t)(nin + 1));
    for (int j = 0; j < nout; j++)
        v->sc[j] = pair_cnt(wrank, to[j]);
    for (int j = 0; j < nin; j++)
        v->rc[j] = pair_cnt(from[j], wrank);
    v->in = ints(layout(nout, v->sc, v->sd, unit));
    v->out = ints(layout(nin, v->rc, v->rd, unit));
    for (int j = 0; j < nout; j++)
        for (MPI_Count k = 0; k < v->sc[j]; k++)
            v->in[v->sd[j] / unit + k] = val(wrank, to[j], (int)k, x->it);
}

/* Check what arrived from the nin peers, and free the sides. */
static void vside_check(vside_t *v, const run_t *x, int nin, const int *from,
                        MPI_Aint unit, const char *what)
{
    for (int j = 0; j < nin; j++)
        check_block(what, x, v->out, v->rd[j] / unit, v->rc[j], from[j], wrank);
    free(v->sc);
    free(v->rc);
    free(v->sd);
    free(v->rd);
    free(v->in);
    free(v->out);
}

static void t_alltoallv(run_t *x, MPI_Comm comm, int p, const int *all)
{
    vside_t v;

    vside_make(&v, x, p, all, p, all, 1);
    CALL(x, Alltoallv, Ialltoallv, v.in, v.sc, v.sd, MPI_INT, v.out, v.rc, v.rd,
         MPI_INT, comm);
    done(x);
    vside_check(&v, x, p, all, 1, "Alltoallv_c");
}

/*
 * Alltoallw_c: byte displacements; the blocks from even ranks arrive as
 * pairs of ints (a derived type, freed while the call runs: the request
 * keeps it), the others as ints, so the counts of a pair are halved.
 */
static void t_alltoallw(run_t *x, MPI_Comm comm, int p, const int *all)
{
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)p);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)p);
    MPI_Count *rc = malloc(sizeof(MPI_Count) * (size_t)p);
    MPI_Datatype pair;
    vside_t v;

    vside_make(&v, x, p, all, p, all, sizeof(int));
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MT_OK(MPI_Type_commit(&pair));
    for (int j = 0; j < p; j++) {
        st[j] = MPI_INT;
        rt[j] = MPI_INT;
        rc[j] = v.rc[j];
        if (j % 2 == 0 && v.rc[j] % 2 == 0) {
            rt[j] = pair;
            rc[j] = v.rc[j] / 2;
        }
    }
    CALL(x, Alltoallw, Ialltoallw, v.in, v.sc, v.sd, st, v.out, rc, v.rd, rt,
         comm);
    MT_OK(MPI_Type_free(&pair));
    done(x);
    vside_check(&v, x, p, all, sizeof(int), "Alltoallw_c");
    free(st);
    free(rt);
    free(rc);
}

/* ---- neighbourhood ------------------------------------------------------- */

/*
 * A distributed graph whose degrees differ: rank r sends to every higher
 * rank and receives from every lower one, in increasing order.
 */
typedef struct tri {
    MPI_Comm comm;
    int nin, nout, *in, *out;
} tri_t;

static void tri_make(tri_t *g)
{
    g->nin = wrank;
    g->nout = wsize - 1 - wrank;
    g->in = malloc(sizeof(int) * (size_t)(g->nin + 1));
    g->out = malloc(sizeof(int) * (size_t)(g->nout + 1));
    for (int q = 0; q < wrank; q++)
        g->in[q] = q;
    for (int q = wrank + 1; q < wsize; q++)
        g->out[q - wrank - 1] = q;
    MT_OK(MPI_Dist_graph_create_adjacent(
        MPI_COMM_WORLD, g->nin, g->in, MPI_UNWEIGHTED, g->nout, g->out,
        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g->comm));
}

static void t_neighbor_allgather(run_t *x, const tri_t *g)
{
    int in[2], *out = ints(2 * g->nin);

    for (int k = 0; k < 2; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Neighbor_allgather, Ineighbor_allgather, in, 2, MPI_INT, out, 2,
         MPI_INT, g->comm);
    done(x);
    for (int j = 0; j < g->nin; j++)
        for (int k = 0; k < 2; k++)
            CT_CHECK(out[2 * j + k] == val(g->in[j], 0, k, x->it),
                     "Neighbor_allgather_c from %d [%d]", g->in[j], k);
    free(out);
}

static void t_neighbor_allgatherv(run_t *x, const tri_t *g)
{
    MPI_Count *c;
    MPI_Aint *d;
    int in[4], *out = vlayout(g->nin, g->in, &c, &d);

    for (int k = 0; k < 4; k++)
        in[k] = val(wrank, 0, k, x->it);
    CALL(x, Neighbor_allgatherv, Ineighbor_allgatherv, in, cnt(wrank), MPI_INT,
         out, c, d, MPI_INT, g->comm);
    done(x);
    for (int j = 0; j < g->nin; j++)
        check_block("Neighbor_allgatherv_c", x, out, d[j], c[j], g->in[j], 0);
    free(out);
    free(c);
    free(d);
}

static void t_neighbor_alltoall(run_t *x, const tri_t *g)
{
    int *in = ints(3 * g->nout), *out = ints(3 * g->nin);

    for (int j = 0; j < g->nout; j++)
        for (int k = 0; k < 3; k++)
            in[3 * j + k] = val(wrank, g->out[j], k, x->it);
    CALL(x, Neighbor_alltoall, Ineighbor_alltoall, in, 3, MPI_INT, out, 3,
         MPI_INT, g->comm);
    done(x);
    for (int j = 0; j < g->nin; j++)
        for (int k = 0; k < 3; k++)
            CT_CHECK(out[3 * j + k] == val(g->in[j], wrank, k, x->it),
                     "Neighbor_alltoall_c from %d [%d]", g->in[j], k);
    free(in);
    free(out);
}

static void t_neighbor_alltoallv(run_t *x, const tri_t *g)
{
    vside_t v;

    vside_make(&v, x, g->nout, g->out, g->nin, g->in, 1);
    CALL(x, Neighbor_alltoallv, Ineighbor_alltoallv, v.in, v.sc, v.sd, MPI_INT,
         v.out, v.rc, v.rd, MPI_INT, g->comm);
    done(x);
    vside_check(&v, x, g->nin, g->in, 1, "Neighbor_alltoallv_c");
}

static void t_neighbor_alltoallw(run_t *x, const tri_t *g)
{
    int n = (g->nout > g->nin ? g->nout : g->nin) + 1;
    MPI_Datatype *t = malloc(sizeof(MPI_Datatype) * (size_t)n);
    vside_t v;

    for (int j = 0; j < n; j++)
        t[j] = MPI_INT;
    vside_make(&v, x, g->nout, g->out, g->nin, g->in, sizeof(int));
    CALL(x, Neighbor_alltoallw, Ineighbor_alltoallw, v.in, v.sc, v.sd, t, v.out,
         v.rc, v.rd, t, g->comm);
    done(x);
    vside_check(&v, x, g->nin, g->in, sizeof(int), "Neighbor_alltoallw_c");
    free(t);
}

/*
 * The int forms widen their arrays for the shared path: on the stack up
 * to 128 elements, else in memory freed once the schedule is built.  A
 * graph of 40 edges from each rank to itself takes the int form of
 * Ineighbor_alltoallv past that (4 arrays of 40): the request completes
 * after the widened arrays are gone.
 */
static void t_int_wide(void)
{
    enum { DEG = 40 };
    int self[DEG], sc[DEG], sd[DEG], rc[DEG], rd[DEG], in[4 * DEG];
    int out[4 * DEG], at = 0;
    MPI_Request req;
    MPI_Comm g;

    for (int j = 0; j < DEG; j++) {
        self[j] = wrank;
        sc[j] = rc[j] = j % 3;
    }
    for (int j = DEG - 1; j >= 0; j--) {
        sd[j] = rd[j] = at;
        at += sc[j] + 1;
    }
    for (int k = 0; k < 4 * DEG; k++)
        in[k] = out[k] = GAP;
    for (int j = 0; j < DEG; j++)
        for (int k = 0; k < sc[j]; k++)
            in[sd[j] + k] = val(wrank, j, k, 0);
    MT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, DEG, self,
                                         MPI_UNWEIGHTED, DEG, self,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    MT_OK(MPI_Ineighbor_alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, g,
                                  &req));
    MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < DEG; j++) {
        for (int k = 0; k < rc[j]; k++)
            CT_CHECK(out[rd[j] + k] == val(wrank, j, k, 0),
                     "Ineighbor_alltoallv block %d [%d] = %d", j, k,
                     out[rd[j] + k]);
        CT_CHECK(out[rd[j] + rc[j]] == GAP, "gap after block %d", j);
    }
    MT_OK(MPI_Comm_free(&g));
}

/* ---- across an intercommunicator ------------------------------------------
 */

/* dst[i] = (int)src[i], for the int forms. */
#define NARROW(dst, src, n)                                                    \
    do {                                                                       \
        for (int i_ = 0; i_ < (n); i_++)                                       \
            (dst)[i_] = (int)(src)[i_];                                        \
    } while (0)

/*
 * The v and w forms between the lower and upper half of the world
 * (groups of different sizes at odd sizes), where the arrays cover the
 * remote group: Allgatherv in both forms, Alltoallv (int), Alltoallw_c
 * and Scatterv (int) from the lower group's rank 0.
 */
static void t_inter(void)
{
    int lo = wsize / 2, low = wrank < lo, r, rsize, first, *rw;
    int ci[8], di[8], sci[8], sdi[8], rci[8], rdi[8], in[4], *out;
    run_t x = {BLOCK, 0, MPI_REQUEST_NULL};
    MPI_Datatype t[8];
    MPI_Comm half, inter;
    MPI_Count *c;
    MPI_Aint *d;
    vside_t v;

    if (wsize < 2 || wsize > 16)
        return;
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &half));
    MT_OK(
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? lo : 0, 9, &inter));
    MT_OK(MPI_Comm_rank(inter, &r));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    first = low ? lo : 0;
    rw = malloc(sizeof(int) * (size_t)rsize);
    for (int j = 0; j < rsize; j++) {
        rw[j] = first + j; /* world rank of remote rank j */
        t[j] = MPI_INT;
    }
    for (int k = 0; k < 4; k++)
        in[k] = val(wrank, 0, k, 0);

    out = vlayout(rsize, rw, &c, &d);
    MT_OK(MPI_Allgatherv_c(in, cnt(wrank), MPI_INT, out, c, d, MPI_INT, inter));
    for (int j = 0; j < rsize; j++)
        check_block("inter Allgatherv_c", &x, out, d[j], c[j], rw[j], 0);
    free(out);
    free(c);
    free(d);
    out = vlayout(rsize, rw, &c, &d);
    NARROW(ci, c, rsize);
    NARROW(di, d, rsize);
    MT_OK(MPI_Allgatherv(in, (int)cnt(wrank), MPI_INT, out, ci, di, MPI_INT,
                         inter));
    for (int j = 0; j < rsize; j++)
        check_block("inter Allgatherv", &x, out, d[j], c[j], rw[j], 0);
    free(out);
    free(c);
    free(d);

    vside_make(&v, &x, rsize, rw, rsize, rw, 1);
    NARROW(sci, v.sc, rsize);
    NARROW(sdi, v.sd, rsize);
    NARROW(rci, v.rc, rsize);
    NARROW(rdi, v.rd, rsize);
    MT_OK(MPI_Alltoallv(v.in, sci, sdi, MPI_INT, v.out, rci, rdi, MPI_INT,
                        inter));
    vside_check(&v, &x, rsize, rw, 1, "inter Alltoallv");
    vside_make(&v, &x, rsize, rw, rsize, rw, sizeof(int));
    MT_OK(MPI_Alltoallw_c(v.in, v.sc, v.sd, t, v.out, v.rc, v.rd, t, inter));
    vside_check(&v, &x, rsize, rw, sizeof(int), "inter Alltoallw_c");

    /* Scatterv from world rank 0 (the lower group's rank 0). */
    if (low) {
        int *sb = vlayout(rsize, rw, &c, &d);
        for (int j = 0; r == 0 && j < rsize; j++)
            for (MPI_Count k = 0; k < c[j]; k++)
                sb[d[j] + k] = val(0, rw[j], (int)k, 0);
        NARROW(ci, c, rsize);
        NARROW(di, d, rsize);
        MT_OK(MPI_Scatterv(sb, ci, di, MPI_INT, NULL, 0, MPI_INT,
                           r == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
        free(sb);
        free(c);
        free(d);
    } else {
        int rb[5] = {GAP, GAP, GAP, GAP, GAP};
        MT_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, rb, (int)cnt(wrank),
                           MPI_INT, 0, inter));
        check_block("inter Scatterv", &x, rb, 0, cnt(wrank), 0, wrank);
    }
    free(rw);
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Comm_free(&half));
}

/* ---- counts over INT_MAX of a type of size 0 --------------------------------
 */

static void t_huge_counts(MPI_Comm comm, int p)
{
    const MPI_Count big = (MPI_Count)INT_MAX + 5;
    MPI_Count *c = malloc(sizeof(MPI_Count) * (size_t)p);
    MPI_Aint *d = calloc((size_t)p, sizeof(MPI_Aint));
    MPI_Datatype none;
    MPI_Count size = -1;
    char sbuf[8] = {0}, rbuf[8] = {0};

    MT_OK(MPI_Type_contiguous(0, MPI_INT, &none));
    MT_OK(MPI_Type_commit(&none));
    MT_OK(MPI_Type_size_c(none, &size));
    CT_CHECK(size == 0, "a type of 0 ints has size %lld", (long long)size);
    for (int q = 0; q < p; q++)
        c[q] = big + q;
    MT_OK(MPI_Bcast_c(rbuf, big, none, 0, comm));
    MT_OK(MPI_Allgather_c(sbuf, big, none, rbuf, big, none, comm));
    /* The counts add up past INT_MAX even at one rank. */
    MT_OK(MPI_Allgatherv_c(sbuf, big + wrank, none, rbuf, c, d, none, comm));
    MT_OK(MPI_Alltoall_c(sbuf, big, none, rbuf, big, none, comm));
    MT_OK(MPI_Type_free(&none));
    free(c);
    free(d);
}

/* ---- errors
 * ------------------------------------------------------------------ */

static void t_errors(MPI_Comm comm, int p, const tri_t *g)
{
    MPI_Count *c = calloc((size_t)p, sizeof(MPI_Count));
    MPI_Aint *d = calloc((size_t)p, sizeof(MPI_Aint));
    MPI_Datatype *t = malloc(sizeof(MPI_Datatype) * (size_t)p);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm ring;
    int buf[8] = {0}, dims[1] = {p}, per[1] = {1};
    MPI_Count rc2[2] = {1, -1};
    MPI_Aint rd2[2] = {0, 1};

    for (int q = 0; q < p; q++)
        t[q] = MPI_INT;
    MT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_COUNT, MPI_Bcast_c(buf, -1, MPI_INT, 0, comm));
    MT_ERR(MPI_ERR_COUNT, MPI_Bcast_c(buf, BADC, MPI_INT, 0, comm));
    MT_ERR(MPI_ERR_COUNT, MPI_Ibcast_c(buf, BADC, MPI_INT, 0, comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Bcast_init_c(buf, BADC, MPI_INT, 0, comm, MPI_INFO_NULL, &req));
    /* count * extent past 2^63 bytes */
    MT_ERR(MPI_ERR_COUNT, MPI_Bcast_c(buf, INT64_MAX / 2, MPI_INT, 0, comm));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Reduce_c(buf, buf + 4, BADC, MPI_INT, MPI_SUM, 0, comm));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Allreduce_init_c(buf, buf + 4, BADC, MPI_INT, MPI_SUM, comm,
                                MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Gather_c(buf, BADC, MPI_INT, buf, 1, MPI_INT, 0, comm));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Igatherv_c(buf, -1, MPI_INT, buf, c, d, MPI_INT, 0, comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Scatter_c(buf, 1, MPI_INT, buf, BADC, MPI_INT, 0, comm));
    MT_ERR(MPI_ERR_COUNT, MPI_Iscatterv_c(buf, c, d, MPI_INT, buf, BADC,
                                          MPI_INT, 0, comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Iallgather_c(buf, -1, MPI_INT, buf, 1, MPI_INT, comm, &req));
    c[p - 1] = BADC;
    MT_ERR(MPI_ERR_COUNT,
           MPI_Allgatherv_c(buf, 0, MPI_INT, buf, c, d, MPI_INT, comm));
    MT_ERR(MPI_ERR_COUNT, MPI_Ialltoallv_c(buf, c, d, MPI_INT, buf, c, d,
                                           MPI_INT, comm, &req));
    MT_ERR(MPI_ERR_COUNT, MPI_Alltoallw_init_c(buf, c, d, t, buf, c, d, t, comm,
                                               MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Reduce_scatter_c(buf, buf, c, MPI_INT, MPI_SUM, comm));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Ireduce_scatter_block_c(buf, buf + 4, BADC, MPI_INT, MPI_SUM,
                                       comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Scan_c(buf, buf + 4, BADC, MPI_INT, MPI_SUM, comm));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Iexscan_c(buf, buf + 4, -1, MPI_INT, MPI_SUM, comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Alltoall_c(buf, 1, MPI_INT, buf, BADC, MPI_INT, comm));
    /* NULL arrays */
    c[p - 1] = 0;
    MT_ERR(MPI_ERR_ARG,
           MPI_Alltoallv_c(buf, NULL, d, MPI_INT, buf, c, d, MPI_INT, comm));
    MT_ERR(MPI_ERR_ARG,
           MPI_Allgatherv_init_c(buf, 1, MPI_INT, buf, NULL, d, MPI_INT, comm,
                                 MPI_INFO_NULL, &req));
    CT_CHECK(req == MPI_REQUEST_NULL, "a failed call set its request");
    /* neighbourhood: the plain forms check at every rank, the v forms on
     * a ring, where every rank has two neighbours */
    MT_OK(MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_COUNT, MPI_Neighbor_alltoall_c(buf, BADC, MPI_INT, buf, 1,
                                                  MPI_INT, g->comm));
    MT_ERR(MPI_ERR_COUNT, MPI_Ineighbor_allgather_c(buf, 1, MPI_INT, buf, BADC,
                                                    MPI_INT, g->comm, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Neighbor_alltoall_init_c(buf, -1, MPI_INT, buf, 1, MPI_INT,
                                        g->comm, MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_TOPOLOGY,
           MPI_Neighbor_allgather_c(buf, 1, MPI_INT, buf, 1, MPI_INT, comm));
    MT_OK(MPI_Cart_create(comm, 1, dims, per, 0, &ring));
    MT_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_COUNT, MPI_Neighbor_allgatherv_c(buf, 1, MPI_INT, buf, rc2,
                                                    rd2, MPI_INT, ring));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Ineighbor_alltoallv_c(buf, rc2, rd2, MPI_INT, buf, rc2, rd2,
                                     MPI_INT, ring, &req));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Neighbor_alltoallw_init_c(buf, rc2, rd2, t, buf, rc2, rd2, t,
                                         ring, MPI_INFO_NULL, &req));
    rc2[1] = BADC;
    MT_ERR(MPI_ERR_COUNT, MPI_Neighbor_alltoallv_c(buf, rc2, rd2, MPI_INT, buf,
                                                   rc2, rd2, MPI_INT, ring));
    MT_OK(MPI_Comm_free(&ring));
    /* local */
    MT_ERR(MPI_ERR_COUNT,
           MPI_Reduce_local_c(buf, buf + 4, BADC, MPI_INT, MPI_SUM));
    MT_ERR(MPI_ERR_COUNT,
           MPI_Reduce_local_c(buf, buf + 4, -1, MPI_INT, MPI_SUM));
    MT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
    free(c);
    free(d);
    free(t);
}

static void t_reduce_local(void)
{
    int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};

    MT_OK(MPI_Reduce_local_c(a, b, 3, MPI_INT, MPI_SUM));
    for (int k = 0; k < 3; k++)
        CT_CHECK(b[k] == 11 * (k + 1), "Reduce_local_c [%d] = %d", k, b[k]);
}

/* ---- one real large count ---------------------------------------------------
 */

/* MemAvailable in bytes, 0 when unknown. */
static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    long long kb = 0;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb * 1024;
}

/*
 * MPI_Reduce_local_c of 2^31 + 16 bytes with MPI_BOR.  inbuf stays the
 * zero page except where marked; inoutbuf is all written (2 GiB), so the
 * check wants 4 GiB available and skips otherwise.
 */
static int t_large(void)
{
    const MPI_Count n = ((MPI_Count)1 << 31) + 16;
    unsigned char *in, *io;

    if (mem_available() < (4LL << 30)) {
        printf("SKIP: MemAvailable %lld MiB, under the 4 GiB a reduction of "
               "2^31 + 16 bytes wants\n",
               mem_available() >> 20);
        return 77;
    }
    in = calloc((size_t)n, 1);
    io = calloc((size_t)n, 1);
    if (in == NULL || io == NULL) {
        printf("SKIP: no memory for two buffers of 2^31 + 16 bytes\n");
        free(in);
        free(io);
        return 77;
    }
    in[0] = 0x01;
    in[n / 2] = 0x10;
    in[n - 1] = 0x80;
    io[0] = 0x02;
    io[n - 1] = 0x01;
    io[(MPI_Count)INT_MAX + 1] = 0x40;
    MT_OK(MPI_Reduce_local_c(in, io, n, MPI_BYTE, MPI_BOR));
    CT_CHECK(io[0] == 0x03 && io[n / 2] == 0x10 && io[n - 1] == 0x81 &&
                 io[(MPI_Count)INT_MAX + 1] == 0x40 && io[1] == 0 &&
                 io[n - 2] == 0,
             "MPI_Reduce_local_c of 2^31 + 16 bytes: %x %x %x %x", io[0],
             io[n / 2], io[n - 1], io[(MPI_Count)INT_MAX + 1]);
    free(in);
    free(io);
    printf("ok: MPI_Reduce_local_c over 2^31 + 16 bytes\n");
    return 0;
}

int main(int argc, char **argv)
{
    int *all, rc = 0;
    tri_t g;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (argc > 1 && strcmp(argv[1], "large") == 0) {
        if (wrank == 0)
            rc = t_large();
        MT_OK(MPI_Finalize());
        return rc;
    }
    all = malloc(sizeof(int) * (size_t)wsize);
    for (int q = 0; q < wsize; q++)
        all[q] = q;
    tri_make(&g);
    for (int mode = BLOCK; mode <= PERS; mode++) {
        for (int it = 0; it < ITERS; it++) {
            run_t x = {mode, it, MPI_REQUEST_NULL};
            MPI_Comm w = MPI_COMM_WORLD;
            int p = wsize;

            t_bcast(&x, w, p);
            t_reduce(&x, w, p);
            t_gather(&x, w, p);
            t_gatherv(&x, w, p);
            t_scatter(&x, w, p);
            t_scatterv(&x, w, p);
            t_allreduce(&x, w, p);
            t_scan(&x, w, 0);
            t_scan(&x, w, 1);
            t_reduce_scatter(&x, w, p, 0);
            t_reduce_scatter(&x, w, p, 1);
            t_allgather(&x, w, p);
            t_allgatherv(&x, w, p);
            t_alltoall(&x, w, p);
            t_alltoallv(&x, w, p, all);
            t_alltoallw(&x, w, p, all);
            t_neighbor_allgather(&x, &g);
            t_neighbor_allgatherv(&x, &g);
            t_neighbor_alltoall(&x, &g);
            t_neighbor_alltoallv(&x, &g);
            t_neighbor_alltoallw(&x, &g);
        }
    }
    t_reduce_local();
    t_int_wide();
    t_inter();
    t_huge_counts(MPI_COMM_WORLD, wsize);
    t_errors(MPI_COMM_WORLD, wsize, &g);
    MT_OK(MPI_Comm_free(&g.comm));
    free(g.in);
    free(g.out);
    free(all);
    MT_OK(MPI_Finalize());
    return 0;
}
