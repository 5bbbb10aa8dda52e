/*
 * Nonblocking and persistent collectives in flight together: eight
 * different collectives on three communicators completed in another
 * order than started (MPI_Waitall on a shuffled array, MPI_Testany and
 * MPI_Waitsome loops), overlapped with point-to-point traffic on the same
 * communicator, persistent requests started together with MPI_Startall;
 * datatypes, operations and communicators freed right after the call
 * that uses them; MPI_Request_free of persistent collective requests;
 * calls with nothing to move.
 */
#include <sched.h>

#include "nbc_test.h"

static int wrank, wsize;

/* ---- many at once ------------------------------------------------------------------ */

enum { NREQ = 8 };

typedef struct many {
    MPI_Comm comm[3]; /* world, a duplicate, a split */
    int r[3], p[3];
    int sum, bc[2], *ag, *a2a_s, *a2a_r, scan, mx, *ga;
    int sum_in, a2a_n;
} many_t;

static void many_start(many_t *m, MPI_Request *reqs)
{
    int *ag_in = &m->r[2];
    m->sum_in = wrank + 1;
    for (int i = 0; i < wsize; i++)
        m->a2a_s[i] = wrank * 100 + i;
    if (m->r[1] == m->p[1] - 1) {
        m->bc[0] = 42;
        m->bc[1] = 43;
    } else {
        m->bc[0] = m->bc[1] = -1;
    }
    MT_OK(MPI_Iallreduce(&m->sum_in, &m->sum, 1, MPI_INT, MPI_SUM,
                         m->comm[0], &reqs[0]));
    MT_OK(MPI_Ibcast(m->bc, 2, MPI_INT, m->p[1] - 1, m->comm[1], &reqs[1]));
    MT_OK(MPI_Iallgather(ag_in, 1, MPI_INT, m->ag, 1, MPI_INT, m->comm[2],
                         &reqs[2]));
    MT_OK(MPI_Ialltoall(m->a2a_s, 1, MPI_INT, m->a2a_r, 1, MPI_INT,
                        m->comm[0], &reqs[3]));
    MT_OK(MPI_Iscan(&m->r[1], &m->scan, 1, MPI_INT, MPI_SUM, m->comm[1],
                    &reqs[4]));
    MT_OK(MPI_Ibarrier(m->comm[2], &reqs[5]));
    MT_OK(MPI_Ireduce(&wrank, &m->mx, 1, MPI_INT, MPI_MAX, 0, m->comm[0],
                      &reqs[6]));
    MT_OK(MPI_Igather(&m->r[1], 1, MPI_INT, m->ga, 1, MPI_INT, 0,
                      m->comm[1], &reqs[7]));
}

static void many_check(const many_t *m, const char *how)
{
    CT_CHECK(m->sum == wsize * (wsize + 1) / 2, "%s: allreduce %d", how,
             m->sum);
    CT_CHECK(m->bc[0] == 42 && m->bc[1] == 43, "%s: bcast", how);
    for (int q = 0; q < m->p[2]; q++)
        CT_CHECK(m->ag[q] == q, "%s: allgather [%d] = %d", how, q, m->ag[q]);
    for (int q = 0; q < wsize; q++)
        CT_CHECK(m->a2a_r[q] == q * 100 + wrank, "%s: alltoall", how);
    CT_CHECK(m->scan == m->r[1] * (m->r[1] + 1) / 2, "%s: scan", how);
    CT_CHECK(wrank != 0 || m->mx == wsize - 1, "%s: reduce", how);
    for (int q = 0; wrank == 0 && q < m->p[1]; q++)
        CT_CHECK(m->ga[q] == q, "%s: gather", how);
}

/* how 0: MPI_Waitall of a shuffled copy; 1: MPI_Testany loop; 2:
 * MPI_Waitsome loop.  Every rank completes in its own order. */
static void many_complete(MPI_Request *reqs, int how)
{
    MPI_Request shuf[NREQ];
    int left = NREQ, idx[NREQ], n;

    for (int i = 0; i < NREQ; i++)
        shuf[i] = reqs[(i * 3 + wrank) % NREQ];
    if (how == 0) {
        MT_OK(MPI_Waitall(NREQ, shuf, MPI_STATUSES_IGNORE));
    }
    while (how == 1 && left > 0) {
        int flag = 0, i = -1;
        MT_OK(MPI_Testany(NREQ, shuf, &i, &flag, MPI_STATUS_IGNORE));
        CT_CHECK(!flag || i != MPI_UNDEFINED, "Testany: no index");
        if (flag)
            left--;
        else
            sched_yield(); /* ranks may outnumber cores */
    }
    while (how == 2 && left > 0) {
        MT_OK(MPI_Waitsome(NREQ, shuf, &n, idx, MPI_STATUSES_IGNORE));
        CT_CHECK(n >= 1 && n <= left, "Waitsome gave %d of %d", n, left);
        left -= n;
    }
    for (int i = 0; i < NREQ; i++)
        CT_CHECK(shuf[i] == MPI_REQUEST_NULL, "request %d left", i);
}

static void test_many(void)
{
    static const char *const hows[] = {"Waitall", "Testany", "Waitsome"};
    many_t m;
    MPI_Request reqs[NREQ];

    m.comm[0] = MPI_COMM_WORLD;
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &m.comm[1]));
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &m.comm[2]));
    for (int c = 0; c < 3; c++) {
        MT_OK(MPI_Comm_rank(m.comm[c], &m.r[c]));
        MT_OK(MPI_Comm_size(m.comm[c], &m.p[c]));
    }
    m.ag = malloc(sizeof(int) * (size_t)wsize);
    m.ga = malloc(sizeof(int) * (size_t)wsize);
    m.a2a_s = malloc(sizeof(int) * (size_t)wsize);
    m.a2a_r = malloc(sizeof(int) * (size_t)wsize);
    for (int how = 0; how < 3; how++) {
        many_start(&m, reqs);
        many_complete(reqs, how);
        many_check(&m, hows[how]);
    }
    MT_OK(MPI_Comm_free(&m.comm[1]));
    MT_OK(MPI_Comm_free(&m.comm[2]));
    free(m.ag);
    free(m.ga);
    free(m.a2a_s);
    free(m.a2a_r);
}

/* ---- with point-to-point ----------------------------------------------------------- */

/* A ring of messages with user tags on the communicator of pending
 * collectives, and a blocking exchange while they are in flight. */
static void test_overlap(void)
{
    int right = (wrank + 1) % wsize, left = (wrank - 1 + wsize) % wsize;
    int out[3], in[3] = {-1, -1, -1}, x = wrank, sum = 0, y = -1;
    MPI_Request reqs[5];

    for (int i = 0; i < 3; i++)
        out[i] = wrank * 10 + i;
    MT_OK(MPI_Irecv(in, 3, MPI_INT, left, 0, MPI_COMM_WORLD, &reqs[0]));
    MT_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                         &reqs[1]));
    MT_OK(MPI_Isend(out, 3, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[2]));
    MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[3]));
    MT_OK(MPI_Sendrecv(&x, 1, MPI_INT, right, 1, &y, 1, MPI_INT, left, 1,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* any source, any tag: must not match a collective's message */
    MT_OK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, &reqs[4]));
    MT_OK(MPI_Send(&x, 1, MPI_INT, right, 2, MPI_COMM_WORLD));
    MT_OK(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
    CT_CHECK(y == left, "any-source receive got %d, want %d", y, left);
    CT_CHECK(sum == wsize * (wsize - 1) / 2, "allreduce with p2p: %d", sum);
    for (int i = 0; i < 3; i++)
        CT_CHECK(in[i] == left * 10 + i, "ring message [%d] = %d", i, in[i]);
}

/* ---- objects freed while in use ---------------------------------------------------- */

static void pair_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    /* on pairs of int (the type is contiguous(2, MPI_INT)) */
    for (int i = 0; i < 2 * *len; i++)
        b[i] = a[i] > b[i] ? a[i] : b[i];
}

/* A user op and a derived type freed right after a nonblocking and a
 * persistent call that use them; the persistent one is started three
 * times after that, then freed. */
static void test_freed_objects(void)
{
    MPI_Datatype pair, ints3;
    MPI_Op op;
    int s[4], d[4];
    MPI_Request req;

    for (int k = 0; k < 2; k++) {
        MT_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MT_OK(MPI_Type_commit(&pair));
        MT_OK(MPI_Op_create(pair_max, 1, &op));
        for (int i = 0; i < 4; i++) {
            s[i] = wrank * 4 + i;
            d[i] = -1;
        }
        if (k == 0)
            MT_OK(MPI_Iallreduce(s, d, 2, pair, op, MPI_COMM_WORLD, &req));
        else
            MT_OK(MPI_Allreduce_init(s, d, 2, pair, op, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &req));
        MT_OK(MPI_Type_free(&pair));
        MT_OK(MPI_Op_free(&op));
        for (int it = 0; it < (k == 0 ? 1 : 3); it++) {
            for (int i = 0; i < 4; i++)
                s[i] = wrank * 4 + i + 1000 * it;
            if (k == 1)
                MT_OK(MPI_Start(&req));
            MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (int i = 0; i < 4; i++)
                CT_CHECK(d[i] == (wsize - 1) * 4 + i + 1000 * it,
                         "freed op/type, form %d run %d: d[%d] = %d", k, it,
                         i, d[i]);
        }
        if (k == 1)
            MT_OK(MPI_Request_free(&req));
    }

    /* w form: per-peer derived types freed at once */
    int n = wsize;
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    int *sb = malloc(sizeof(int) * 3 * (size_t)n), *rb = malloc(sizeof(int) * 3 * (size_t)n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MT_OK(MPI_Type_contiguous(3, MPI_INT, &ints3));
    MT_OK(MPI_Type_commit(&ints3));
    for (int q = 0; q < n; q++) {
        sc[q] = rc[q] = 1;
        sd[q] = rd[q] = (int)sizeof(int) * 3 * q;
        st[q] = rt[q] = ints3;
        for (int i = 0; i < 3; i++) {
            sb[3 * q + i] = wrank * 100 + 3 * q + i;
            rb[3 * q + i] = -1;
        }
    }
    MT_OK(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD,
                         &req));
    MT_OK(MPI_Type_free(&ints3));
    MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 3; i++)
            CT_CHECK(rb[3 * q + i] == q * 100 + 3 * wrank + i,
                     "alltoallw with freed types: from %d", q);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
    free(st);
    free(rt);
}

/* Persistent requests on a communicator the user has freed, started
 * together with MPI_Startall, and one freed without ever starting. */
static void test_persistent_lifetimes(void)
{
    MPI_Comm dup;
    MPI_Request reqs[3], never;
    int b = 0, s = 0, g = 0;

    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_OK(MPI_Bcast_init(&b, 1, MPI_INT, 0, dup, MPI_INFO_NULL, &reqs[0]));
    MT_OK(MPI_Allreduce_init(&wrank, &s, 1, MPI_INT, MPI_SUM, dup,
                             MPI_INFO_NULL, &reqs[1]));
    MT_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[2]));
    MT_OK(MPI_Reduce_init(&wrank, &g, 1, MPI_INT, MPI_SUM, 0, dup,
                          MPI_INFO_NULL, &never));
    MT_OK(MPI_Comm_free(&dup));
    MT_OK(MPI_Request_free(&never));
    for (int it = 0; it < 4; it++) {
        b = wrank == 0 ? 7 * it + 1 : -1;
        s = -1;
        MT_OK(MPI_Startall(3, reqs));
        MT_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
        CT_CHECK(b == 7 * it + 1, "bcast on a freed comm, run %d: %d", it, b);
        CT_CHECK(s == wsize * (wsize - 1) / 2, "allreduce run %d: %d", it, s);
        for (int i = 0; i < 3; i++)
            CT_CHECK(reqs[i] != MPI_REQUEST_NULL, "persistent request gone");
    }
    for (int i = 0; i < 3; i++)
        MT_OK(MPI_Request_free(&reqs[i]));
}

/* Calls with nothing to move (count 0) still give requests that
 * complete, persistent ones at every start. */
static void test_empty(void)
{
    int x = 0, y = 0;
    MPI_Request reqs[6];

    MT_OK(MPI_Iallreduce(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                         &reqs[0]));
    MT_OK(MPI_Iscan(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]));
    MT_OK(MPI_Iexscan(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                      &reqs[2]));
    MT_OK(MPI_Ireduce(&x, &y, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD,
                      &reqs[3]));
    MT_OK(MPI_Ireduce_scatter_block(&x, &y, 0, MPI_INT, MPI_SUM,
                                    MPI_COMM_WORLD, &reqs[4]));
    MT_OK(MPI_Ibcast(&x, 0, MPI_INT, 0, MPI_COMM_WORLD, &reqs[5]));
    MT_OK(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));
    MT_OK(MPI_Allreduce_init(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &reqs[0]));
    MT_OK(MPI_Scan_init(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &reqs[1]));
    for (int it = 0; it < 3; it++) {
        MT_OK(MPI_Startall(2, reqs));
        MT_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    }
    MT_OK(MPI_Request_free(&reqs[0]));
    MT_OK(MPI_Request_free(&reqs[1]));
    /* the communicator's collectives still match */
    x = 1;
    MT_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CT_CHECK(y == wsize, "allreduce after empty ones: %d", y);
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    test_many();
    test_overlap();
    test_freed_objects();
    test_persistent_lifetimes();
    test_empty();
    MT_OK(MPI_Finalize());
    return 0;
}
