/*
 * Every nonblocking (MPI_Ixxx) and persistent (MPI_Xxx_init + MPI_Start)
 * collective on MPI_COMM_WORLD, a duplicate of it and a split (reversed
 * rank order), with several operations, MPI_INT and a vector type with
 * gaps, MPI_IN_PLACE where allowed; results checked against the serial
 * computation.  Persistent requests run several times with new buffer
 * contents each time and are freed with MPI_Request_free.
 */
#include "nbc_test.h"

#define ITERS 3

typedef struct t {
    MPI_Comm comm;
    int r, p, mode, ci;
    const char *name;
    const lay_t *lay; /* the layout of this round */
} t_t;

static lay_t lay_int = {0, 1, 1, "MPI_INT"}, lay_vec = {0, 3, 2, "vector"};

/* Distinct values for data movement; small ones for reductions (PROD
 * of 9 stays small). */
static int u(int r, int i, int it)
{
    return r * 1000 + i + 100000 * it + 1;
}
static int v(int r, int i, int it)
{
    return 1 + (r + 2 * i + it) % 3;
}

typedef struct op {
    MPI_Op op;
    const char *name;
} op_t;
static op_t ops[5];

static int combine(int o, int a, int b)
{
    switch (o) {
    case 0:
        return a + b;
    case 1:
        return a * b;
    case 2:
        return a > b ? a : b;
    case 3:
        return a < b ? a : b;
    default:
        return a ^ b;
    }
}

/* v of ranks lo..hi-1 combined in rank order, index i. */
static int fold(int o, int lo, int hi, int i, int it)
{
    int x = v(lo, i, it);
    for (int q = lo + 1; q < hi; q++)
        x = combine(o, x, v(q, i, it));
    return x;
}

/* n elements of f(r, first.., it) as values of the layout. */
static int *vals(const t_t *t, int (*f)(int, int, int), int r, int first,
                 int n, int it)
{
    int m = n * t->lay->k;
    int *w = malloc(sizeof(int) * (size_t)(m + 1));
    for (int i = 0; i < m; i++)
        w[i] = f(r, first * t->lay->k + i, it);
    return w;
}

static void fill(const t_t *t, int *buf, int first, int n,
                 int (*f)(int, int, int), int r, int at, int it)
{
    int *w = vals(t, f, r, at, n, it);
    nbc_fill(t->lay, buf, first, n, w);
    free(w);
}

static void check(const t_t *t, const char *what, const int *buf, int first,
                  int n, int (*f)(int, int, int), int r, int at, int it)
{
    int *w = vals(t, f, r, at, n, it);
    char msg[160];
    snprintf(msg, sizeof(msg), "%s %s on %s, iteration %d", what,
             nbc_mode_name[t->mode], t->name, it);
    nbc_check(msg, t->lay, buf, first, n, w);
    free(w);
}

/* ---- rooted ------------------------------------------------------------------------ */

static void t_bcast(const t_t *t)
{
    int n = 4, root = (t->ci + 1) % t->p;
    int *b = nbc_buf(t->lay, n);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, b, 0, n, t->r == root ? u : v, root, 0, it);
        NBC_START(t->mode, it, req, Ibcast, Bcast_init, b, n, t->lay->dt,
                  root, t->comm);
        nbc_complete(t->mode, &req, it);
        check(t, "bcast", b, 0, n, u, root, 0, it);
    }
    nbc_release(t->mode, &req);
    free(b);
}

static void t_reduce(const t_t *t, int o)
{
    int n = 3, root = (t->ci + 2) % t->p;
    int *s = nbc_buf(t->lay, n), *d = nbc_buf(t->lay, n);
    int *w = malloc(sizeof(int) * 8);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, s, 0, n, v, t->r, 0, it);
        NBC_START(t->mode, it, req, Ireduce, Reduce_init, s, d, n,
                  t->lay->dt, ops[o].op, root, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int i = 0; i < n * t->lay->k; i++)
            w[i] = fold(o, 0, t->p, i, it);
        if (t->r == root)
            nbc_check(ops[o].name, t->lay, d, 0, n, w);
    }
    nbc_release(t->mode, &req);
    free(s);
    free(d);
    free(w);
}

/*
 * The blocks of a gather, scatter or allgather: 2 elements per rank in
 * the plain form; in the v forms 1 to 3, one unused element between
 * blocks, blocks in reverse rank order.  many holds every rank's block,
 * one this rank's.
 */
typedef struct blocks {
    int *counts, *displs; /* elements */
    int n, mine;
    int *many, *one;
} blocks_t;

static void blocks_init(const t_t *t, int v_form, blocks_t *b)
{
    int p = t->p, at = 0;

    b->n = 2;
    b->counts = malloc(sizeof(int) * 2 * (size_t)p);
    b->displs = b->counts + p;
    for (int q = v_form ? p - 1 : 0; q >= 0 && q < p; q += v_form ? -1 : 1) {
        b->counts[q] = v_form ? 1 + q % 3 : b->n;
        b->displs[q] = at;
        at += b->counts[q] + v_form;
    }
    b->mine = b->counts[t->r];
    b->many = nbc_buf(t->lay, at);
    b->one = nbc_buf(t->lay, b->mine);
}

static void blocks_free(blocks_t *b)
{
    free(b->counts);
    free(b->many);
    free(b->one);
}

static void t_gather(const t_t *t, int v_form)
{
    int p = t->p, r = t->r, root = t->ci % p;
    blocks_t b;
    blocks_init(t, v_form, &b);
    /* In place at the root of a plain gather on the split. */
    int in_place = !v_form && t->ci == 2 && r == root;
    const void *sb = in_place ? MPI_IN_PLACE : b.one;
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, in_place ? b.many : b.one, in_place ? b.displs[r] : 0, b.mine,
             u, r, 0, it);
        if (v_form)
            NBC_START(t->mode, it, req, Igatherv, Gatherv_init, sb, b.mine,
                      t->lay->dt, b.many, b.counts, b.displs, t->lay->dt,
                      root, t->comm);
        else
            NBC_START(t->mode, it, req, Igather, Gather_init, sb, b.n,
                      t->lay->dt, b.many, b.n, t->lay->dt, root, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int q = 0; r == root && q < p; q++)
            check(t, v_form ? "gatherv" : "gather", b.many, b.displs[q],
                  b.counts[q], u, q, 0, it);
    }
    nbc_release(t->mode, &req);
    blocks_free(&b);
}

static void t_scatter(const t_t *t, int v_form)
{
    int p = t->p, r = t->r, root = (t->ci + 1) % p;
    blocks_t b;
    blocks_init(t, v_form, &b);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        /* block q holds u(q, ...) of the root's iteration */
        for (int q = 0; r == root && q < p; q++)
            fill(t, b.many, b.displs[q], b.counts[q], u, q, 0, it);
        if (v_form)
            NBC_START(t->mode, it, req, Iscatterv, Scatterv_init, b.many,
                      b.counts, b.displs, t->lay->dt, b.one, b.mine,
                      t->lay->dt, root, t->comm);
        else
            NBC_START(t->mode, it, req, Iscatter, Scatter_init, b.many, b.n,
                      t->lay->dt, b.one, b.n, t->lay->dt, root, t->comm);
        nbc_complete(t->mode, &req, it);
        check(t, v_form ? "scatterv" : "scatter", b.one, 0, b.mine, u, r, 0,
              it);
    }
    nbc_release(t->mode, &req);
    blocks_free(&b);
}

/* ---- without a root ---------------------------------------------------------------- */

static void t_barrier(const t_t *t)
{
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < ITERS; it++) {
        NBC_START(t->mode, it, req, Ibarrier, Barrier_init, t->comm);
        nbc_complete(t->mode, &req, it);
    }
    nbc_release(t->mode, &req);
}

static void t_allreduce(const t_t *t, int o, int in_place)
{
    int n = 3;
    int *s = nbc_buf(t->lay, n), *d = nbc_buf(t->lay, n);
    int *w = malloc(sizeof(int) * 8);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, in_place ? d : s, 0, n, v, t->r, 0, it);
        NBC_START(t->mode, it, req, Iallreduce, Allreduce_init,
                  in_place ? MPI_IN_PLACE : s, d, n, t->lay->dt, ops[o].op,
                  t->comm);
        nbc_complete(t->mode, &req, it);
        for (int i = 0; i < n * t->lay->k; i++)
            w[i] = fold(o, 0, t->p, i, it);
        nbc_check(ops[o].name, t->lay, d, 0, n, w);
    }
    nbc_release(t->mode, &req);
    free(s);
    free(d);
    free(w);
}

static void t_scan(const t_t *t, int o, int ex)
{
    int n = 2;
    int *s = nbc_buf(t->lay, n), *d = nbc_buf(t->lay, n);
    int *w = malloc(sizeof(int) * 8);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, s, 0, n, v, t->r, 0, it);
        if (ex)
            NBC_START(t->mode, it, req, Iexscan, Exscan_init, s, d, n,
                      t->lay->dt, ops[o].op, t->comm);
        else
            NBC_START(t->mode, it, req, Iscan, Scan_init, s, d, n,
                      t->lay->dt, ops[o].op, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int i = 0; i < n * t->lay->k; i++)
            w[i] = fold(o, 0, ex ? t->r : t->r + 1, i, it);
        if (!ex || t->r > 0)
            nbc_check(ex ? "exscan" : "scan", t->lay, d, 0, n, w);
    }
    nbc_release(t->mode, &req);
    free(s);
    free(d);
    free(w);
}

static void t_reduce_scatter(const t_t *t, int o, int block)
{
    int p = t->p, r = t->r, total = 0, first = 0;
    int *counts = malloc(sizeof(int) * (size_t)p);
    for (int q = 0; q < p; q++) {
        counts[q] = block ? 2 : 1 + q % 2;
        first += q < r ? counts[q] : 0;
        total += counts[q];
    }
    int *s = nbc_buf(t->lay, total), *d = nbc_buf(t->lay, counts[r]);
    int *w = malloc(sizeof(int) * 8);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, s, 0, total, v, r, 0, it);
        if (block)
            NBC_START(t->mode, it, req, Ireduce_scatter_block,
                      Reduce_scatter_block_init, s, d, 2, t->lay->dt,
                      ops[o].op, t->comm);
        else
            NBC_START(t->mode, it, req, Ireduce_scatter, Reduce_scatter_init,
                      s, d, counts, t->lay->dt, ops[o].op, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int i = 0; i < counts[r] * t->lay->k; i++)
            w[i] = fold(o, 0, p, first * t->lay->k + i, it);
        nbc_check(block ? "reduce_scatter_block" : "reduce_scatter", t->lay,
                  d, 0, counts[r], w);
    }
    nbc_release(t->mode, &req);
    free(s);
    free(d);
    free(w);
    free(counts);
}

static void t_allgather(const t_t *t, int v_form)
{
    int p = t->p, r = t->r;
    blocks_t b;
    blocks_init(t, v_form, &b);
    int in_place = !v_form && t->ci == 1;
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        fill(t, in_place ? b.many : b.one, in_place ? b.displs[r] : 0, b.mine,
             u, r, 0, it);
        if (v_form)
            NBC_START(t->mode, it, req, Iallgatherv, Allgatherv_init, b.one,
                      b.mine, t->lay->dt, b.many, b.counts, b.displs,
                      t->lay->dt, t->comm);
        else
            NBC_START(t->mode, it, req, Iallgather, Allgather_init,
                      in_place ? MPI_IN_PLACE : b.one, b.n, t->lay->dt,
                      b.many, b.n, t->lay->dt, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int q = 0; q < p; q++)
            check(t, v_form ? "allgatherv" : "allgather", b.many,
                  b.displs[q], b.counts[q], u, q, 0, it);
    }
    nbc_release(t->mode, &req);
    blocks_free(&b);
}

/* Block of rank a for rank b in the all-to-all tests: 1 to 3 elements. */
static int pair_count(int a, int b)
{
    return 1 + (a + b) % 3;
}

static void t_alltoall(const t_t *t, int v_form)
{
    int p = t->p, r = t->r, n = 2, sat = 0, rat = 0;
    int *ar = malloc(sizeof(int) * 4 * (size_t)p);
    int *sc = ar, *sd = ar + p, *rc = ar + 2 * p, *rd = ar + 3 * p;
    for (int q = 0; q < p; q++) {
        sc[q] = v_form ? pair_count(r, q) : n;
        rc[q] = v_form ? pair_count(q, r) : n;
        sd[q] = sat;
        rd[q] = rat;
        sat += sc[q];
        rat += rc[q] + v_form; /* a gap element between v blocks */
    }
    int *s = nbc_buf(t->lay, sat), *d = nbc_buf(t->lay, rat);
    MPI_Request req = MPI_REQUEST_NULL;

    for (int it = 0; it < ITERS; it++) {
        /* block for q starts at index 10 * q of u(r, ...) */
        for (int q = 0; q < p; q++)
            fill(t, s, sd[q], sc[q], u, r, 10 * q, it);
        if (v_form)
            NBC_START(t->mode, it, req, Ialltoallv, Alltoallv_init, s, sc, sd,
                      t->lay->dt, d, rc, rd, t->lay->dt, t->comm);
        else
            NBC_START(t->mode, it, req, Ialltoall, Alltoall_init, s, n,
                      t->lay->dt, d, n, t->lay->dt, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int q = 0; q < p; q++)
            check(t, v_form ? "alltoallv" : "alltoall", d, rd[q], rc[q], u,
                  q, 10 * r, it);
    }
    nbc_release(t->mode, &req);
    free(s);
    free(d);
    free(ar);
}

/* alltoallw: n ints to every peer as n MPI_INT, received as one
 * contiguous(n) at byte displacements in reverse rank order. */
static void t_alltoallw(const t_t *t, MPI_Datatype contig, int n)
{
    int p = t->p, r = t->r;
    int *ar = malloc(sizeof(int) * (size_t)(4 + 2 * n) * (size_t)p);
    int *sc = ar, *sd = ar + p, *rc = ar + 2 * p, *rd = ar + 3 * p;
    int *s = ar + 4 * p, *d = s + n * p;
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * (size_t)p);
    MPI_Datatype *rt = st + p;
    MPI_Request req = MPI_REQUEST_NULL;

    for (int q = 0; q < p; q++) {
        sc[q] = n;
        sd[q] = (int)sizeof(int) * n * q;
        st[q] = MPI_INT;
        rc[q] = 1;
        rd[q] = (int)sizeof(int) * n * (p - 1 - q);
        rt[q] = contig;
    }
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < n * p; i++) {
            s[i] = u(r, i, it);
            d[i] = -1;
        }
        NBC_START(t->mode, it, req, Ialltoallw, Alltoallw_init, s, sc, sd, st,
                  d, rc, rd, rt, t->comm);
        nbc_complete(t->mode, &req, it);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                CT_CHECK(d[n * (p - 1 - q) + i] == u(q, n * r + i, it),
                         "alltoallw %s on %s: from %d int %d",
                         nbc_mode_name[t->mode], t->name, q, i);
    }
    nbc_release(t->mode, &req);
    free(ar);
    free(st);
}

/* ---- driver ------------------------------------------------------------------------ */

static void run_all(t_t *t, MPI_Datatype contig3)
{
    /* Two layouts and two operations per communicator, so the three
     * communicators cover all five operations. */
    for (int round = 0; round < 2; round++) {
        int o = (t->ci + 2 * round) % 5;
        t->lay = round == 0 ? &lay_int : &lay_vec;
        t_barrier(t);
        t_bcast(t);
        t_reduce(t, o);
        t_allreduce(t, o, round == 1 && t->ci == 0);
        t_gather(t, round);
        t_scatter(t, round);
        t_allgather(t, round);
        t_alltoall(t, round);
        t_scan(t, o, 0);
        t_scan(t, (o + 1) % 5, 1);
        t_reduce_scatter(t, o, round);
    }
    t_alltoallw(t, contig3, 3);
}

int main(int argc, char **argv)
{
    MPI_Comm comms[3];
    const char *names[3] = {"MPI_COMM_WORLD", "a duplicate", "a split"};
    MPI_Datatype contig3;
    int wrank;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    ops[0] = (op_t){MPI_SUM, "MPI_SUM"};
    ops[1] = (op_t){MPI_PROD, "MPI_PROD"};
    ops[2] = (op_t){MPI_MAX, "MPI_MAX"};
    ops[3] = (op_t){MPI_MIN, "MPI_MIN"};
    ops[4] = (op_t){MPI_BXOR, "MPI_BXOR"};
    lay_int.dt = MPI_INT;
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &lay_vec.dt));
    MT_OK(MPI_Type_commit(&lay_vec.dt));
    MT_OK(MPI_Type_contiguous(3, MPI_INT, &contig3));
    MT_OK(MPI_Type_commit(&contig3));
    comms[0] = MPI_COMM_WORLD;
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comms[2]));
    for (int mode = NB; mode <= PERS; mode++)
        for (int ci = 0; ci < 3; ci++) {
            t_t t = {comms[ci], 0, 0, mode, ci, names[ci], NULL};
            MT_OK(MPI_Comm_rank(comms[ci], &t.r));
            MT_OK(MPI_Comm_size(comms[ci], &t.p));
            run_all(&t, contig3);
        }
    MT_OK(MPI_Comm_free(&comms[1]));
    MT_OK(MPI_Comm_free(&comms[2]));
    MT_OK(MPI_Type_free(&lay_vec.dt));
    MT_OK(MPI_Type_free(&contig3));
    MT_OK(MPI_Finalize());
    return 0;
}
