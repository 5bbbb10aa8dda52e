/*
 * Intercommunicator collectives, linear: the transport of an
 * intercommunicator reaches only the remote group, so every algorithm here
 * sends straight across (the root to every remote rank, or every rank to
 * the root).  Tree versions need a communicator over the local group and
 * are a later step; these are correct for any group sizes.
 */
#include "coll_sched.h"

int coll_inter_barrier(coll_comm_t *c)
{
    coll_sched_t s;

    /* Leaving after hearing from every remote rank is what MPI asks: the
     * local group may exit once the whole remote group has entered. */
    coll_sched_init(&s, c);
    for (int j = 0; j < c->remote_size; j++) {
        coll_sched_send(&s, NULL, 0, NULL, j);
        coll_sched_recv(&s, NULL, 0, NULL, j);
    }
    return coll_sched_finish(&s);
}

int coll_inter_bcast(coll_comm_t *c, void *buf, int64_t count, void *dt,
                     int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    if (root == COLL_ROOT) {
        for (int j = 0; j < c->remote_size; j++)
            coll_sched_send(&s, buf, count, dt, j);
    } else if (root != COLL_PROC_NULL) {
        coll_sched_recv(&s, buf, count, dt, root);
    }
    return coll_sched_finish(&s);
}

/* Receive one block from every remote rank and reduce them in rank order
 * into rbuf: x0 op (x1 op (... op x(m-1))).  Only elements [first,
 * first + keep) of the result go to rbuf (reduce_scatter keeps its slice). */
static void gather_reduce_slice(coll_sched_t *s, void *rbuf, int64_t count,
                                void *dt, void *op, int64_t first,
                                int64_t keep)
{
    int m = s->comm->remote_size;
    char *all = coll_sched_tmp(s, count * m, dt);
    void *last;

    if (all == NULL)
        return;
    for (int j = 0; j < m; j++)
        coll_sched_recv(s, coll_elem(s->comm, all, dt, count * j), count, dt,
                        j);
    coll_sched_fence(s);
    last = coll_elem(s->comm, all, dt, count * (m - 1));
    for (int j = m - 2; j >= 0; j--)
        coll_sched_reduce(s, op, coll_elem(s->comm, all, dt, count * j), last,
                          count, dt);
    coll_sched_copy(s, coll_elem(s->comm, last, dt, first), keep, dt, rbuf,
                    keep, dt);
}

static void gather_reduce(coll_sched_t *s, void *rbuf, int64_t count,
                          void *dt, void *op)
{
    gather_reduce_slice(s, rbuf, count, dt, op, 0, count);
}

int coll_inter_reduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                      int64_t count, void *dt, void *op, int root)
{
    coll_sched_t s;

    /* No shortcut for count 0: the root group's idle members pass 0 and
     * must still take their tag, like everyone else. */
    coll_sched_init(&s, c);
    if (root == COLL_ROOT)
        gather_reduce(&s, rbuf, count, dt, op);
    else if (root != COLL_PROC_NULL)
        coll_sched_send(&s, sbuf, count, dt, root);
    return coll_sched_finish(&s);
}

int coll_inter_allreduce(coll_comm_t *c, const void *sbuf, void *rbuf,
                         int64_t count, void *dt, void *op)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    /* count is the same in both groups: nothing to do for 0. */
    if (count > 0) {
        for (int j = 0; j < c->remote_size; j++)
            coll_sched_send(&s, sbuf, count, dt, j);
        gather_reduce(&s, rbuf, count, dt, op);
    }
    return coll_sched_finish(&s);
}

int coll_inter_gatherv(coll_comm_t *c, const void *sbuf, int64_t scount,
                       void *sdt, void *rbuf, int64_t rcount,
                       const int64_t *rcounts, const int64_t *displs, void *rdt,
                       int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    if (root == COLL_ROOT) {
        for (int j = 0; j < c->remote_size; j++)
            coll_sched_recv(&s,
                            coll_elem(c, rbuf, rdt,
                                      coll_vdispl(displs, rcount, j)),
                            coll_vcount(rcounts, rcount, j), rdt, j);
    } else if (root != COLL_PROC_NULL) {
        coll_sched_send(&s, sbuf, scount, sdt, root);
    }
    return coll_sched_finish(&s);
}

int coll_inter_scatterv(coll_comm_t *c, const void *sbuf, int64_t scount,
                        const int64_t *scounts, const int64_t *displs,
                        void *sdt, void *rbuf, int64_t rcount, void *rdt,
                        int root)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    if (root == COLL_ROOT) {
        for (int j = 0; j < c->remote_size; j++)
            coll_sched_send(&s,
                            coll_elem(c, sbuf, sdt,
                                      coll_vdispl(displs, scount, j)),
                            coll_vcount(scounts, scount, j), sdt, j);
    } else if (root != COLL_PROC_NULL) {
        coll_sched_recv(&s, rbuf, rcount, rdt, root);
    }
    return coll_sched_finish(&s);
}

int coll_inter_allgatherv(coll_comm_t *c, const void *sbuf, int64_t scount,
                          void *sdt, void *rbuf, int64_t rcount,
                          const int64_t *rcounts, const int64_t *displs,
                          void *rdt)
{
    coll_sched_t s;

    coll_sched_init(&s, c);
    for (int j = 0; j < c->remote_size; j++) {
        coll_sched_send(&s, sbuf, scount, sdt, j);
        coll_sched_recv(&s,
                        coll_elem(c, rbuf, rdt, coll_vdispl(displs, rcount, j)),
                        coll_vcount(rcounts, rcount, j), rdt, j);
    }
    return coll_sched_finish(&s);
}

/*
 * MPI's intercommunicator reduce-scatter: the vectors of the remote group
 * are reduced and scattered over the local group by the local counts (the
 * two groups' vectors have the same length n).  A rank cannot know the
 * remote group's counts, so each sends its whole vector to every remote
 * rank and keeps its own slice of the reduction: linear, like the rest of
 * this file.
 */
int coll_inter_reduce_scatter(coll_comm_t *c, const void *sbuf, void *rbuf,
                              int64_t rcount, const int64_t *rcounts, void *dt,
                              void *op)
{
    coll_sched_t s;
    int64_t n = 0, first = 0;

    for (int i = 0; i < c->size; i++) {
        if (i == c->rank)
            first = n;
        n += coll_vcount(rcounts, rcount, i);
    }
    coll_sched_init(&s, c);
    if (n > 0) {
        for (int j = 0; j < c->remote_size; j++)
            coll_sched_send(&s, sbuf, n, dt, j);
        gather_reduce_slice(&s, rbuf, n, dt, op, first,
                            coll_vcount(rcounts, rcount, c->rank));
    }
    return coll_sched_finish(&s);
}
