/*
 * Bandwidth: rank 0 sends windows of messages to rank 1 (MPI_Isend, then
 * MPI_Waitall), rank 1 answers each window with an empty message; the
 * value is bytes delivered per second, in MB/s (10^6 bytes).
 */
#include "mpibench.h"

static const mb_bench_t bench = {
    .name = "bw",
    .what = "unidirectional bandwidth, MB/s (10^6 bytes/s); higher is better",
    .sizes = "1:4M",
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
        mb_report(&o, size, (double)size * o.window / t / 1e6);
    }
    return mb_finish(&o);
}
