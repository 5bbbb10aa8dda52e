/*
 * Latency: ping-pong between ranks 0 and 1 with MPI_Send and MPI_Recv;
 * the value is half a round trip in microseconds, from the median of
 * the timed batches (mpibench.h).  After the timed loop
 * of each size, one more round trip carries a pattern that both ranks
 * check, so a benchmark of a broken transfer fails instead of reporting.
 */
#include "mpibench.h"

static const mb_bench_t bench = {
    .name = "latency",
    .what = "one-way latency (half a round trip), microseconds; lower is "
            "better",
    .sizes = "0:4M",
    .iters = 10000,
    .floor = 20,
};

static void pingpong(const mb_opts_t *o, long size, long n)
{
    for (long i = 0; i < n; i++) {
        if (o->rank == 0) {
            MPI_Send(o->sbuf, (int)size, MPI_BYTE, 1, MB_TAG_DATA,
                     MPI_COMM_WORLD);
            MPI_Recv(o->rbuf, (int)size, MPI_BYTE, 1, MB_TAG_DATA,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (o->rank == 1) {
            MPI_Recv(o->rbuf, (int)size, MPI_BYTE, 0, MB_TAG_DATA,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(o->sbuf, (int)size, MPI_BYTE, 0, MB_TAG_DATA,
                     MPI_COMM_WORLD);
        }
    }
}

static void round_trip(const mb_opts_t *o, long size, void *arg)
{
    (void)arg;
    pingpong(o, size, 1);
}

static unsigned char pattern(long size, long i, int from)
{
    return (unsigned char)(i * 31 + size * 7 + from * 101);
}

/* One round trip of patterned data, checked on both sides. */
static void verify(const mb_opts_t *o, long size)
{
    int peer = 1 - o->rank, bad = 0;
    MPI_Status st;
    int count = -1;

    if (o->rank > 1)
        return;
    for (long i = 0; i < size; i++)
        o->sbuf[i] = (char)pattern(size, i, o->rank);
    memset(o->rbuf, 0, (size_t)size);
    if (o->rank == 0)
        MPI_Send(o->sbuf, (int)size, MPI_BYTE, peer, MB_TAG_DATA,
                 MPI_COMM_WORLD);
    MPI_Recv(o->rbuf, (int)size, MPI_BYTE, peer, MB_TAG_DATA,
             MPI_COMM_WORLD, &st);
    if (o->rank == 1)
        MPI_Send(o->sbuf, (int)size, MPI_BYTE, peer, MB_TAG_DATA,
                 MPI_COMM_WORLD);
    MPI_Get_count(&st, MPI_BYTE, &count);
    for (long i = 0; i < size && !bad; i++)
        bad = (unsigned char)o->rbuf[i] != pattern(size, i, peer);
    if (bad || count != size || st.MPI_SOURCE != peer ||
        st.MPI_TAG != MB_TAG_DATA) {
        fprintf(stderr, "latency: rank %d received wrong data at size %ld "
                "(count %d, source %d, tag %d)\n", o->rank, size, count,
                st.MPI_SOURCE, st.MPI_TAG);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

int main(int argc, char **argv)
{
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);

    if (rc >= 0)
        return rc;
    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s];
        long n = mb_iters(&o, size);

        pingpong(&o, size, mb_warmup(&o, size));
        double t = mb_time_steps(&o, size, n, round_trip, NULL);
        verify(&o, size);
        mb_report(&o, size, t / 2 * 1e6);
    }
    return mb_finish(&o);
}
