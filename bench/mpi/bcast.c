/*
 * Broadcast: the time of one MPI_Bcast of SIZE bytes from rank 0 to every
 * rank of MPI_COMM_WORLD, until rank 0 knows that every rank has the data.
 *
 * Each iteration: MPI_Barrier, then rank 0 starts the clock and calls
 * MPI_Bcast; every other rank, once its MPI_Bcast returns, sends rank 0 an
 * empty message, and rank 0 stops the clock when it has them all.  So one
 * iteration is the broadcast plus one small message's latency, and the
 * barrier keeps broadcasts from overlapping (no pipelining across calls).
 * bench/norm_bcast.c measures NORM the same way (receivers report over
 * TCP).  The value is the median over the iterations, in microseconds, and
 * the throughput of that median, SIZE / time in MB/s (10^6 bytes/s).
 *
 * The data depends on the size and the iteration; rank 0 writes it before
 * each iteration (outside the clock) and every rank checks it after the
 * first and the last iteration (--check all: after every one), also after
 * the clock; a wrong byte aborts the run.
 *
 * Output, from rank 0: '#' comment lines, then per size "bytes us MB/s".
 */
#include "mpibench.h"

#include <stdint.h>

static int check_all;

static int bcast_option(const char *name, const char *value)
{
    if (strcmp(name, "--check") == 0) {
        if (strcmp(value, "all") == 0)
            check_all = 1;
        else if (strcmp(value, "ends") == 0)
            check_all = 0;
        else
            return -1;
        return 0;
    }
    return 1;
}

static const mb_bench_t bench = {
    .name = "bcast",
    .what = "time per MPI_Bcast from rank 0 until rank 0 hears from every "
            "rank, microseconds, the median of the iterations (lower is "
            "better), and its throughput in MB/s",
    .sizes = "1M,16M",
    .iters = 2000,
    .floor = 8,
    .min_ranks = 2,
    .ranks = "any number of ranks from 2; rank 0 is the root",
    .option = bcast_option,
    .extra_usage =
        "  --check ends|all  check the data after the first and the last\n"
        "                    iteration (ends, the default) or every one\n"
        "  (--batches is not used: the median is over the iterations)\n",
};

/* The 64-bit word at index j of the data of iteration it at this size. */
static uint64_t word(long size, long it, uint64_t j)
{
    uint64_t x = (j + 1) * 0x9E3779B97F4A7C15ULL ^
                 ((uint64_t)size * 0x100000001B3ULL +
                  (uint64_t)it * 0xC2B2AE3D27D4EB4FULL);

    return x ^ (x >> 29);
}

/* Byte i of that data. */
static unsigned char byte_at(long size, long it, long i)
{
    return (unsigned char)(word(size, it, (uint64_t)(i / 8)) >> (8 * (i % 8)));
}

static void fill(char *buf, long size, long it)
{
    long words = size / 8;

    for (long j = 0; j < words; j++) {
        uint64_t w = word(size, it, (uint64_t)j);
        memcpy(buf + j * 8, &w, 8);
    }
    for (long i = words * 8; i < size; i++)
        buf[i] = (char)byte_at(size, it, i);
}

/* The offset of the first wrong byte, or -1. */
static long check(const char *buf, long size, long it)
{
    long words = size / 8;

    for (long j = 0; j < words; j++) {
        uint64_t w = word(size, it, (uint64_t)j), got;
        memcpy(&got, buf + j * 8, 8);
        if (got != w)
            for (long i = j * 8;; i++)
                if ((unsigned char)buf[i] != byte_at(size, it, i))
                    return i;
    }
    for (long i = words * 8; i < size; i++)
        if ((unsigned char)buf[i] != byte_at(size, it, i))
            return i;
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);

    if (rc >= 0)
        return rc;
    if (o.rank == 0) {
        printf("# root rank 0, %d ranks; data checked on every rank after "
               "%s; columns: bytes us MB/s\n", o.nranks,
               check_all ? "every iteration" : "the first and the last "
               "iteration");
        fflush(stdout);
    }
    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s], n = mb_iters(&o, size);
        long warm = mb_warmup(&o, size), total = warm + n;
        double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));

        if (t == NULL) {
            fprintf(stderr, "bcast: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (long it = 0; it < total; it++) {
            if (o.rank == 0)
                fill(o.sbuf, size, it);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Bcast(o.sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (o.rank == 0) {
                for (int r = 1; r < o.nranks; r++)
                    MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MB_TAG_ACK,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (it >= warm)
                    t[it - warm] = MPI_Wtime() - t0;
            } else {
                MPI_Send(NULL, 0, MPI_BYTE, 0, MB_TAG_ACK, MPI_COMM_WORLD);
            }
            if (check_all || it == 0 || it == total - 1) {
                long bad = check(o.sbuf, size, it);
                if (bad >= 0) {
                    fprintf(stderr, "bcast: wrong data on rank %d at size "
                            "%ld, iteration %ld, offset %ld\n", o.rank, size,
                            it, bad);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
            }
        }
        if (o.rank == 0) {
            qsort(t, (size_t)n, sizeof(double), cmp_double);
            double med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
            printf("%ld %.6g %.6g\n", size, med * 1e6,
                   med > 0 ? (double)size / med / 1e6 : 0.0);
            fflush(stdout);
        }
        free(t);
    }
    return mb_finish(&o);
}
