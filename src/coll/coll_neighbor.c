/*
 * Neighbourhood exchanges: every block goes out at once and the schedule
 * has a single round.  Messages between two ranks match in the order they
 * are posted (one tag per call), which is the pairing coll_neighbor
 * promises; blocks a rank sends to itself are paired with its receives
 * from itself in the same order and copied.
 */
#include "coll_sched.h"

/* Index of the next block from position i of list b that is for peer. */
static int next_for(const coll_block_t *b, int n, int i, int peer)
{
    while (i < n && b[i].peer != peer)
        i++;
    return i;
}

int coll_neighbor(coll_comm_t *c, int nsend, const coll_block_t *send,
                  int nrecv, const coll_block_t *recv)
{
    coll_sched_t s;
    int me = c->rank;

    coll_sched_init(&s, c);
    /* Unpaired blocks to or from oneself (an erroneous program) move
     * nothing. */
    for (int j = next_for(send, nsend, 0, me),
             i = next_for(recv, nrecv, 0, me);
         j < nsend && i < nrecv; j = next_for(send, nsend, j + 1, me),
             i = next_for(recv, nrecv, i + 1, me))
        coll_sched_copy(&s, send[j].buf, send[j].count, send[j].dt,
                        recv[i].buf, recv[i].count, recv[i].dt);
    for (int i = 0; i < nrecv; i++)
        if (recv[i].peer != COLL_PROC_NULL && recv[i].peer != me)
            coll_sched_recv(&s, recv[i].buf, recv[i].count, recv[i].dt,
                            recv[i].peer);
    for (int j = 0; j < nsend; j++)
        if (send[j].peer != COLL_PROC_NULL && send[j].peer != me)
            coll_sched_send(&s, send[j].buf, send[j].count, send[j].dt,
                            send[j].peer);
    return coll_sched_finish(&s);
}
