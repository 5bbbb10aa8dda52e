/*
 * Every collective, blocking and nonblocking, with a rank killed while the
 * others are in it (docs/FT.md, "What each call promises"): under shoalrun
 * --ft no survivor may hang; each returns MPI_SUCCESS (its part did not
 * need the dead rank: a broadcast's leaf fed by the root, the ranks of a
 * scan before it) with the right data, or MPIX_ERR_PROC_FAILED (or
 * MPIX_ERR_REVOKED); a survivor whose result needs the dead rank's data
 * must fail: everyone in the all-to-all kinds, the root of a reduce or a
 * gather, the dead rank's neighbours in a neighbourhood collective.
 * Then every survivor agrees (MPIX_ERR_PROC_FAILED, uniformly) and shrinks,
 * and the survivors compute on the shrunk communicator.
 *
 * usage: mpi_ft_everycoll NAME [COUNT [VICTIM]]
 *   NAME   bcast reduce allreduce gather gatherv scatter scatterv allgather
 *          allgatherv alltoall alltoallv alltoallw reduce_scatter
 *          reduce_scatter_block scan exscan barrier neighbor_allgather
 *          neighbor_alltoall, or the same with an "i" in front (the
 *          nonblocking form, completed by MPI_Wait)
 *   COUNT  ints per block (default 1; 32768 makes every block a
 *          rendezvous)
 *   VICTIM the rank that dies (default the last; never the root, 0)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "ft_test.h"

static int me, np, victim, count;
static MPI_Comm ring; /* periodic 1-D Cartesian MPI_COMM_WORLD */

/* What rank r contributes at element i of block b. */
static int val(int r, int b, int i)
{
    return r * 100003 + b * 1009 + i;
}

/* Which collectives need the dead rank's part at this rank. */
enum { NEED_ALL, NEED_ROOT, NEED_NEIGHBOURS, NEED_NONE };

typedef struct coll {
    const char *name;
    int need;
    /* Blocking when req is NULL; returns the call's code. */
    int (*run)(int *send, int *recv, MPI_Request *req);
    /* The result of a successful call is right here. */
    int (*check)(const int *recv);
} coll_t;

static int *counts, *displs, *bytes_counts, *bytes_displs;
static MPI_Datatype *types;

static int r_bcast(int *s, int *r, MPI_Request *q)
{
    (void)s;
    if (me == 0)
        for (int i = 0; i < count; i++)
            r[i] = val(0, 0, i);
    return q ? MPI_Ibcast(r, count, MPI_INT, 0, MPI_COMM_WORLD, q)
             : MPI_Bcast(r, count, MPI_INT, 0, MPI_COMM_WORLD);
}

static int c_bcast(const int *r)
{
    for (int i = 0; i < count; i++)
        if (r[i] != val(0, 0, i))
            return 0;
    return 1;
}

static int r_reduce(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ireduce(s, r, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD,
                           q)
             : MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
}

static int r_allreduce(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iallreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                              q)
             : MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static int r_gather(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Igather(s, count, MPI_INT, r, count, MPI_INT, 0,
                           MPI_COMM_WORLD, q)
             : MPI_Gather(s, count, MPI_INT, r, count, MPI_INT, 0,
                          MPI_COMM_WORLD);
}

static int r_gatherv(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Igatherv(s, count, MPI_INT, r, counts, displs, MPI_INT, 0,
                            MPI_COMM_WORLD, q)
             : MPI_Gatherv(s, count, MPI_INT, r, counts, displs, MPI_INT, 0,
                           MPI_COMM_WORLD);
}

/* The root scatters block b to rank b: its send buffer holds them all. */
static int r_scatter(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iscatter(s, count, MPI_INT, r, count, MPI_INT, 0,
                            MPI_COMM_WORLD, q)
             : MPI_Scatter(s, count, MPI_INT, r, count, MPI_INT, 0,
                           MPI_COMM_WORLD);
}

static int r_scatterv(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iscatterv(s, counts, displs, MPI_INT, r, count, MPI_INT, 0,
                             MPI_COMM_WORLD, q)
             : MPI_Scatterv(s, counts, displs, MPI_INT, r, count, MPI_INT, 0,
                            MPI_COMM_WORLD);
}

/* Rank 0's block for this rank. */
static int c_scatter(const int *r)
{
    for (int i = 0; i < count; i++)
        if (r[i] != val(0, me, i))
            return 0;
    return 1;
}

static int r_allgather(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iallgather(s, count, MPI_INT, r, count, MPI_INT,
                              MPI_COMM_WORLD, q)
             : MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT,
                             MPI_COMM_WORLD);
}

static int r_allgatherv(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iallgatherv(s, count, MPI_INT, r, counts, displs, MPI_INT,
                               MPI_COMM_WORLD, q)
             : MPI_Allgatherv(s, count, MPI_INT, r, counts, displs, MPI_INT,
                              MPI_COMM_WORLD);
}

static int r_alltoall(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ialltoall(s, count, MPI_INT, r, count, MPI_INT,
                             MPI_COMM_WORLD, q)
             : MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT,
                            MPI_COMM_WORLD);
}

static int r_alltoallv(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ialltoallv(s, counts, displs, MPI_INT, r, counts, displs,
                              MPI_INT, MPI_COMM_WORLD, q)
             : MPI_Alltoallv(s, counts, displs, MPI_INT, r, counts, displs,
                             MPI_INT, MPI_COMM_WORLD);
}

static int r_alltoallw(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ialltoallw(s, bytes_counts, bytes_displs, types, r,
                              bytes_counts, bytes_displs, types,
                              MPI_COMM_WORLD, q)
             : MPI_Alltoallw(s, bytes_counts, bytes_displs, types, r,
                             bytes_counts, bytes_displs, types,
                             MPI_COMM_WORLD);
}

static int r_reduce_scatter(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ireduce_scatter(s, r, counts, MPI_INT, MPI_SUM,
                                   MPI_COMM_WORLD, q)
             : MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM,
                                  MPI_COMM_WORLD);
}

static int r_reduce_scatter_block(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ireduce_scatter_block(s, r, count, MPI_INT, MPI_SUM,
                                         MPI_COMM_WORLD, q)
             : MPI_Reduce_scatter_block(s, r, count, MPI_INT, MPI_SUM,
                                        MPI_COMM_WORLD);
}

static int r_scan(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iscan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q)
             : MPI_Scan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* The sum of block 0 of ranks 0..me (scan) or 0..me-1 (exscan). */
static int c_prefix(const int *r, int upto)
{
    for (int i = 0; i < count; i++) {
        long want = 0;
        for (int k = 0; k <= upto; k++)
            want += val(k, 0, i);
        if (r[i] != (int)want)
            return 0;
    }
    return 1;
}

static int c_scan(const int *r)
{
    return c_prefix(r, me);
}

static int r_exscan(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Iexscan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q)
             : MPI_Exscan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static int c_exscan(const int *r)
{
    return me == 0 || c_prefix(r, me - 1);
}

static int r_barrier(int *s, int *r, MPI_Request *q)
{
    (void)s;
    (void)r;
    return q ? MPI_Ibarrier(MPI_COMM_WORLD, q) : MPI_Barrier(MPI_COMM_WORLD);
}

static int r_neighbor_allgather(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ineighbor_allgather(s, count, MPI_INT, r, count, MPI_INT,
                                       ring, q)
             : MPI_Neighbor_allgather(s, count, MPI_INT, r, count, MPI_INT,
                                      ring);
}

static int r_neighbor_alltoall(int *s, int *r, MPI_Request *q)
{
    return q ? MPI_Ineighbor_alltoall(s, count, MPI_INT, r, count, MPI_INT,
                                      ring, q)
             : MPI_Neighbor_alltoall(s, count, MPI_INT, r, count, MPI_INT,
                                     ring);
}

static const coll_t colls[] = {
    {"bcast", NEED_NONE, r_bcast, c_bcast},
    {"reduce", NEED_ROOT, r_reduce, NULL},
    {"allreduce", NEED_ALL, r_allreduce, NULL},
    {"gather", NEED_ROOT, r_gather, NULL},
    {"gatherv", NEED_ROOT, r_gatherv, NULL},
    {"scatter", NEED_NONE, r_scatter, c_scatter},
    {"scatterv", NEED_NONE, r_scatterv, c_scatter},
    {"allgather", NEED_ALL, r_allgather, NULL},
    {"allgatherv", NEED_ALL, r_allgatherv, NULL},
    {"alltoall", NEED_ALL, r_alltoall, NULL},
    {"alltoallv", NEED_ALL, r_alltoallv, NULL},
    {"alltoallw", NEED_ALL, r_alltoallw, NULL},
    {"reduce_scatter", NEED_ALL, r_reduce_scatter, NULL},
    {"reduce_scatter_block", NEED_ALL, r_reduce_scatter_block, NULL},
    {"scan", NEED_NONE, r_scan, c_scan},
    {"exscan", NEED_NONE, r_exscan, c_exscan},
    {"barrier", NEED_ALL, r_barrier, NULL},
    {"neighbor_allgather", NEED_NEIGHBOURS, r_neighbor_allgather, NULL},
    {"neighbor_alltoall", NEED_NEIGHBOURS, r_neighbor_alltoall, NULL},
};

/* Whether this rank's result needs the victim's part. */
static int needs_victim(int need)
{
    switch (need) {
    case NEED_ALL:
        return 1;
    case NEED_ROOT:
        return me == 0;
    case NEED_NEIGHBOURS:
        return me == (victim + 1) % np || me == (victim + np - 1) % np;
    default:
        return 0;
    }
}

static void setup(void)
{
    int dims = np, periods = 1;

    counts = malloc((size_t)np * sizeof(int));
    displs = malloc((size_t)np * sizeof(int));
    bytes_counts = malloc((size_t)np * sizeof(int));
    bytes_displs = malloc((size_t)np * sizeof(int));
    types = malloc((size_t)np * sizeof(MPI_Datatype));
    MT_CHECK(counts && displs && bytes_counts && bytes_displs && types,
             "no memory");
    for (int i = 0; i < np; i++) {
        counts[i] = count;
        displs[i] = i * count;
        bytes_counts[i] = count;
        bytes_displs[i] = i * count * (int)sizeof(int);
        types[i] = MPI_INT;
    }
    MT_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring));
    MT_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    const coll_t *c = NULL;
    const char *name = argc > 1 ? argv[1] : "";
    int nonblocking = name[0] == 'i' && strcmp(name, "i") != 0;
    int *send, *recv, rc, cls, flag = 1, n, sum = 0, want = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm nc;

    ft_init(&argc, &argv, &me, &np);
    count = argc > 2 ? atoi(argv[2]) : 1;
    victim = argc > 3 ? atoi(argv[3]) : np - 1;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (strcmp(colls[i].name, name + nonblocking) == 0)
            c = &colls[i];
    MT_CHECK(c != NULL, "unknown collective '%s'", name);
    MT_CHECK(np >= 3 && count > 0 && victim > 0 && victim < np,
             "want 3 ranks or more, COUNT > 0, 0 < VICTIM < %d", np);
    setup();
    send = malloc((size_t)np * (size_t)count * sizeof(int));
    recv = malloc((size_t)np * (size_t)count * sizeof(int));
    MT_CHECK(send != NULL && recv != NULL, "no memory");
    for (int b = 0; b < np; b++)
        for (int i = 0; i < count; i++)
            send[b * count + i] = val(me, b, i);
    /* The collective with every rank alive first: it works. */
    MT_OK(c->run(send, recv, NULL));
    MT_CHECK(c->check == NULL || c->check(recv), "%s: wrong result", name);

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(100000); /* the others are in the collective by now */
        ft_die();
    }
    memset(recv, 0, (size_t)np * (size_t)count * sizeof(int));
    rc = c->run(send, recv, nonblocking ? &req : NULL);
    if (nonblocking && rc == MPI_SUCCESS) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MT_CHECK(req == MPI_REQUEST_NULL, "%s: the request is not freed",
                 name);
    }
    cls = ft_cls(rc);
    MT_CHECK(cls == MPI_SUCCESS || cls == MPIX_ERR_PROC_FAILED ||
                 cls == MPIX_ERR_REVOKED,
             "%s: class %d", name, cls);
    MT_CHECK(cls != MPI_SUCCESS || !needs_victim(c->need),
             "%s succeeded at rank %d, which needs the dead rank's part",
             name, me);
    MT_CHECK(cls != MPI_SUCCESS || c->check == NULL || c->check(recv),
             "%s succeeded with a wrong result", name);
    /* Uniform from here: every survivor learns of the failure. */
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    MT_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    MT_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &nc));
    MT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(nc, &n));
    MT_CHECK(n == np - 1, "shrunk to %d ranks, want %d", n, np - 1);
    MT_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, nc));
    for (int i = 0; i < np; i++)
        want += i == victim ? 0 : i;
    MT_CHECK(sum == want, "sum of survivors' ranks %d, want %d", sum, want);
    MT_OK(MPI_Comm_free(&nc));
    MT_OK(MPI_Comm_free(&ring));
    free(send);
    free(recv);
    free(counts);
    free(displs);
    free(bytes_counts);
    free(bytes_displs);
    free(types);
    MT_OK(MPI_Finalize());
    if (me == 0)
        printf("OK ft everycoll %s count %d: rank %d killed, survivors "
               "agree\n", name, count, victim);
    return 0;
}
