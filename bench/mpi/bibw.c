/*
 * Bidirectional bandwidth: ranks 0 and 1 each post a window of MPI_Irecvs
 * and a window of MPI_Isends to the other, then MPI_Waitall; the value is
 * the bytes both directions delivered per second, in MB/s (10^6 bytes).
 */
#include "mpibench.h"

static const mb_bench_t bench = {
    .name = "bibw",
    .what = "bidirectional bandwidth (both directions together), MB/s "
            "(10^6 bytes/s); higher is better",
    .sizes = "1:4M",
    .iters = 500,
    .floor = 5,
    .windowed = 1,
};

static void exchange(const mb_opts_t *o, long size, MPI_Request *req)
{
    int peer = 1 - o->rank;

    if (o->rank > 1)
        return;
    for (int w = 0; w < o->window; w++)
        MPI_Irecv(mb_recv_slot(o, size, w), (int)size, MPI_BYTE, peer,
                  MB_TAG_DATA, MPI_COMM_WORLD, &req[w]);
    for (int w = 0; w < o->window; w++)
        MPI_Isend(o->sbuf, (int)size, MPI_BYTE, peer, MB_TAG_DATA,
                  MPI_COMM_WORLD, &req[o->window + w]);
    MPI_Waitall(2 * o->window, req, mb_statuses_ignore);
}

int main(int argc, char **argv)
{
    static MPI_Request req[2048];
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);

    if (rc >= 0)
        return rc;
    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s];
        long n = mb_iters(&o, size);

        for (long i = mb_warmup(&o, size); i > 0; i--)
            exchange(&o, size, req);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++)
            exchange(&o, size, req);
        /* Rank 0's clock stops when its own receives are done, which may
         * be before rank 1's: close the window with rank 1's word. */
        if (o.rank == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, MB_TAG_ACK, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        else if (o.rank == 1)
            MPI_Send(NULL, 0, MPI_BYTE, 0, MB_TAG_ACK, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        mb_report(&o, size,
                  2.0 * (double)size * o.window * (double)n / t / 1e6);
    }
    return mb_finish(&o);
}
