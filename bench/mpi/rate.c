/*
 * Message rate: the windows of bw.c (rank 0 MPI_Isends a window of
 * messages, rank 1 MPI_Irecvs them and answers with an empty message);
 * the value is messages delivered per second.
 */
#include "mpibench.h"

static const mb_bench_t bench = {
    .name = "rate",
    .what = "message rate, messages/s; higher is better",
    .sizes = "0:4M",
    .iters = 500,
    .floor = 5,
    .windowed = 1,
};

int main(int argc, char **argv)
{
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);

    if (rc >= 0)
        return rc;
    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s];
        long n = mb_iters(&o, size);
        double t = mb_time_windows(&o, size, n, mb_warmup(&o, size));
        mb_report(&o, size, (double)o.window / t);
    }
    return mb_finish(&o);
}
