/*
 * Overlap: how much of a nonblocking allreduce hides behind computation.
 * For each size (bytes of MPI_DOUBLEs summed with MPI_SUM):
 *
 *   t_comm  MPI_Iallreduce then MPI_Wait, nothing between;
 *   t_comp  a compute loop (mb_spin: no memory traffic, no MPI calls)
 *           sized to take about t_comm;
 *   t_both  MPI_Iallreduce, the compute loop, MPI_Wait.
 *
 * overlap = 100 * (t_comm + t_comp - t_both) / t_comm, clamped to [0, 100]:
 * 100 when the allreduce completed entirely while the rank computed (the
 * library progressed it on its own: a progress thread, an offload), 0 when
 * it only moved inside MPI_Wait.
 *
 * The compute loop's speed is calibrated once (mb_spin_calibrate, the same
 * loops on every rank); its length per size starts at t_comm and is
 * corrected by a measured t_comp (ranks may share cores), and again, at
 * most twice, when the final t_comp is below 0.9 or above 1.5 t_comm (a
 * loop shorter than the allreduce could not show full overlap, a much
 * longer one buries it in the loop's own noise).  The
 * three are timed in interleaved batches (comm, comp, both, comm, ...), each
 * rank keeps the median batch of each, and the largest over ranks counts.
 * The three times are printed as a '#' line before each size's value.  After
 * each size one more allreduce of known values is checked.
 */
#include "mpibench.h"

static const mb_bench_t bench = {
    .name = "overlap",
    .what = "percent of MPI_Iallreduce's time hidden behind computation "
            "between it and MPI_Wait; higher is better",
    .sizes = "8,128,1K,16K,64K,256K,1M",
    .iters = 1000,
    .floor = 10,
    .min_ranks = 2,
    .ranks = "run with 2 or more ranks",
};

typedef struct ov_ctx {
    long count;
    long loops; /* of mb_spin */
    double *sbuf, *rbuf;
} ov_ctx_t;

static void comm_step(const mb_opts_t *o, long size, void *arg)
{
    ov_ctx_t *c = arg;
    MPI_Request req;

    (void)o, (void)size;
    MPI_Iallreduce(c->sbuf, c->rbuf, (int)c->count, MPI_DOUBLE, MPI_SUM,
                   MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void comp_step(const mb_opts_t *o, long size, void *arg)
{
    ov_ctx_t *c = arg;

    (void)o, (void)size;
    mb_spin(c->loops);
}

static void both_step(const mb_opts_t *o, long size, void *arg)
{
    ov_ctx_t *c = arg;
    MPI_Request req;

    (void)o, (void)size;
    MPI_Iallreduce(c->sbuf, c->rbuf, (int)c->count, MPI_DOUBLE, MPI_SUM,
                   MPI_COMM_WORLD, &req);
    mb_spin(c->loops);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds per step of k steps, started together after a barrier. */
static double batch(const mb_opts_t *o, long size, long k, mb_step_fn step,
                    void *arg)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < k; i++)
        step(o, size, arg);
    return (MPI_Wtime() - t0) / (double)k;
}

/* Each rank's median over interleaved batches, then the largest over
 * ranks: t[0] comm, t[1] comp, t[2] both. */
static void measure(const mb_opts_t *o, long size, long n, ov_ctx_t *c,
                    double t[3])
{
    static const mb_step_fn steps[3] = {comm_step, comp_step, both_step};
    double per[3][MB_MAX_BATCHES];
    int nb = o->batches < n ? o->batches : (int)n;

    for (int b = 0; b < nb; b++) {
        long k = n / nb + (b < n % nb);
        for (int s = 0; s < 3; s++)
            per[s][b] = batch(o, size, k, steps[s], c);
    }
    for (int s = 0; s < 3; s++)
        t[s] = mb_max_over_ranks(median(per[s], nb));
}

static void verify(const mb_opts_t *o, ov_ctx_t *c, long size)
{
    int n = o->nranks;
    MPI_Request req;

    for (long i = 0; i < c->count; i++) {
        c->sbuf[i] = o->rank + 1 + (double)(i % 13);
        c->rbuf[i] = -1;
    }
    MPI_Iallreduce(c->sbuf, c->rbuf, (int)c->count, MPI_DOUBLE, MPI_SUM,
                   MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (long i = 0; i < c->count; i++)
        if (c->rbuf[i] != (double)n * (n + 1) / 2 + (double)n * (i % 13)) {
            fprintf(stderr, "overlap: MPI_Iallreduce gave a wrong sum at "
                    "size %ld on rank %d (element %ld: %g)\n", size, o->rank,
                    i, c->rbuf[i]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    for (long i = 0; i < c->count; i++)
        c->sbuf[i] = 1.0;
}

int main(int argc, char **argv)
{
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);

    if (rc >= 0)
        return rc;
    ov_ctx_t c = {0};
    long most = o.max_size / 8 + 1;
    c.sbuf = malloc((size_t)most * sizeof(double));
    c.rbuf = malloc((size_t)most * sizeof(double));
    if (c.sbuf == NULL || c.rbuf == NULL) {
        fprintf(stderr, "overlap: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < most; i++)
        c.sbuf[i] = 1.0, c.rbuf[i] = 0;
    double rate = mb_spin_calibrate();
    if (o.rank == 0) {
        printf("# compute loop: %.1f loops per microsecond (fastest rank, "
               "unloaded)\n# size t_comm_us t_comp_us t_both_us, then: size "
               "overlap_percent\n", rate);
        fflush(stdout);
    }

    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s];
        long n = mb_iters(&o, size);
        double t[3];

        if (size % 8 != 0) {
            if (o.rank == 0)
                printf("# size %ld skipped (not a multiple of 8 bytes of "
                       "MPI_DOUBLE)\n", size);
            continue;
        }
        c.count = size / 8;
        for (long i = mb_warmup(&o, size); i > 0; i--)
            comm_step(&o, size, &c);
        /* The compute loop: as long as t_comm at the unloaded speed, then
         * corrected once by how long it really took (short calibration
         * runs: a quarter of the iterations, at least 10). */
        long quarter = n / 4 > 10 ? n / 4 : n < 10 ? n : 10;
        double t_comm = mb_time_steps_max(&o, size, quarter, comm_step, &c);
        c.loops = (long)(t_comm * 1e6 * rate) + 1;
        double t_comp = mb_time_steps_max(&o, size, quarter, comp_step, &c);
        if (t_comp > 0)
            c.loops = (long)((double)c.loops * t_comm / t_comp) + 1;
        measure(&o, size, n, &c, t);
        /* A loop shorter than the allreduce caps the overlap below 100,
         * a much longer one drowns it in the loop's own noise: resize it
         * and measure again (twice at most). */
        for (int again = 0;
             again < 2 && t[1] > 0 && (t[1] < 0.9 * t[0] || t[1] > 1.5 * t[0]);
             again++) {
            c.loops = (long)((double)c.loops * t[0] / t[1]) + 1;
            measure(&o, size, n, &c, t);
        }
        verify(&o, &c, size);
        double pct = t[0] > 0 ? 100 * (t[0] + t[1] - t[2]) / t[0] : 0;
        pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
        if (o.rank == 0)
            printf("# %ld %.4g %.4g %.4g\n", size, t[0] * 1e6, t[1] * 1e6,
                   t[2] * 1e6);
        mb_report(&o, size, pct);
    }
    free(c.sbuf);
    free(c.rbuf);
    return mb_finish(&o);
}
