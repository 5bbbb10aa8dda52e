/*
 * Collectives through memory shared by the ranks of one host.  Nothing is
 * shared yet: every algorithm declines, and c->shm stays NULL.
 */
#include "coll_sched.h"

void coll_shm_fini(coll_comm_t *c)
{
    c->shm = NULL;
}

int coll_shm_barrier(coll_sched_t *s)
{
    (void)s;
    return 0;
}

int coll_shm_bcast(coll_sched_t *s, void *buf, int64_t count, void *dt,
                   int root)
{
    (void)s, (void)buf, (void)count, (void)dt, (void)root;
    return 0;
}

int coll_shm_reduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                    int64_t count, void *dt, void *op, int root)
{
    (void)s, (void)sbuf, (void)rbuf, (void)count, (void)dt, (void)op;
    (void)root;
    return 0;
}

int coll_shm_allreduce(coll_sched_t *s, const void *sbuf, void *rbuf,
                       int64_t count, void *dt, void *op)
{
    (void)s, (void)sbuf, (void)rbuf, (void)count, (void)dt, (void)op;
    return 0;
}
