/*
 * Prefix scan optimized for clusters: Pakin's thesis ("Unresponsiveness-
 * tolerant collective communication", 2001), Alg. 5.4 as corrected in the
 * digest's errata (x[i-2^j]; one MPI_Barrier per round on every rank), in
 * plain MPI point-to-point and MPI_Barrier.  Every rank holds --size
 * 64-bit integers (pseudo-random from --seed and the global index, below
 * 2^16); together they compute the inclusive prefix sum of all of them.
 *
 *   local prefix sum of the rank's elements            (T_local)
 *   s = the rank's total; MPI_Isend s to rank p+1
 *   MPI_Barrier
 *   for round j = 1 .. ceil(lg P)-1:
 *     if p >= 2^(j-1): receive m from p-2^(j-1); s += m
 *     if p+2^j < P: MPI_Isend s to p+2^j
 *     MPI_Barrier
 *     if a message came: add m to every element          (T_local)
 *   if p >= 2^(ceil(lg P)-1): receive m from p-2^(ceil(lg P)-1),
 *     add m to every element                             (T_local)
 *
 * Every T_local block also does --work microseconds of computation (the
 * calibrated mb_spin loop).  Rank p receives ceil(lg(p+1)) messages, so the
 * load is imbalanced: with barriers that wait for everyone every rank takes
 * about (1+ceil(lg P)) T_local, with barriers that return at once
 * (SHOAL_BARRIER=tolerant) rank p about (1+ceil(lg(p+1))) T_local (Pakin's
 * Eq. 5.2 and 5.3; he reports the mean over ranks of each rank's time).
 *
 * Each of --iters scans starts from the same input after an MPI_Allreduce
 * that lines the ranks up (not timed), is timed on every rank from its start
 * to that rank's last step, and is checked against a serial prefix sum of
 * the same numbers (not timed); a wrong element aborts with a message.
 *
 * Output, from rank 0: '#' lines (with each rank's seconds), then
 * "time <s>" (the largest over ranks of each rank's total, the job's time)
 * and "mean <s>" (the mean over ranks, Pakin's per-process figure).
 */
#include "mpibench.h"

#define TAG_ROUND 40

#define DEF_SIZE (1L << 16)
#define DEF_ITERS 80
#define DEF_WORK 2000.0

static long n = DEF_SIZE;
static long iters = DEF_ITERS;
static double work_us = DEF_WORK;
static uint64_t seed = 1;

static int rank, nranks;
static double rate;

static uint64_t value_at(uint64_t g)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + g;

    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x & 0xffff;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: prefix [options]   (any number of ranks; Pakin's "
            "cluster prefix scan)\n"
            "  --size N          64-bit elements per rank (default %ld; K and "
            "M suffixes;\n"
            "                    --keys is the same)\n"
            "  --iters N         scans, each timed and checked (default %ld)\n"
            "  --work US         microseconds of computation added to each "
            "local step\n"
            "                    (default %g; 0: none)\n"
            "  --seed N          input values (default 1)\n"
            "Output: '#' lines, then 'time <s>' (largest over ranks) and "
            "'mean <s>'\n",
            DEF_SIZE, (long)DEF_ITERS, DEF_WORK);
}

static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0)
                usage(stdout);
            return 1;
        }
        if (v == NULL)
            goto bad;
        i++;
        if ((strcmp(a, "--size") == 0 || strcmp(a, "--keys") == 0) &&
            mb_parse_size(v) > 0 && mb_parse_size(v) <= (1L << 27))
            n = mb_parse_size(v);
        else if (strcmp(a, "--iters") == 0 && mb_parse_count(v) > 0)
            iters = mb_parse_count(v);
        else if (strcmp(a, "--work") == 0 &&
                 (work_us = strtod(v, &end), end != v && *end == '\0' &&
                  work_us >= 0))
            ;
        else if (strcmp(a, "--seed") == 0 && mb_parse_count(v) >= 0)
            seed = (uint64_t)mb_parse_count(v);
        else
            goto bad;
        continue;
    bad:
        if (rank == 0) {
            fprintf(stderr, "prefix: bad option or value: %s%s%s\n", a,
                    v != NULL ? " " : "", v != NULL ? v : "");
            usage(stderr);
        }
        return 2;
    }
    return 0;
}

static void add_all(uint64_t *x, uint64_t m)
{
    for (long i = 0; i < n; i++)
        x[i] += m;
    mb_work(work_us, rate);
}

static uint64_t recv_from(int from, int round)
{
    uint64_t m = 0;

    MPI_Recv(&m, 1, MPI_UNSIGNED_LONG_LONG, from, TAG_ROUND + round,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return m;
}

/* Alg. 5.4, corrected. */
static void scan(uint64_t *x, MPI_Request *req)
{
    int nreq = 0, rounds = 0;
    uint64_t sent[64];

    while ((1L << rounds) < nranks)
        rounds++;
    for (long i = 1; i < n; i++)
        x[i] += x[i - 1];
    mb_work(work_us, rate);
    uint64_t s = x[n - 1];
    if (rank + 1 < nranks) {
        sent[nreq] = s;
        MPI_Isend(&sent[nreq], 1, MPI_UNSIGNED_LONG_LONG, rank + 1,
                  TAG_ROUND + 0, MPI_COMM_WORLD, &req[nreq]);
        nreq++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int j = 1; j < rounds; j++) {
        int got = 0;
        uint64_t m = 0;
        if (rank >= (1 << (j - 1))) {
            m = recv_from(rank - (1 << (j - 1)), j - 1);
            s += m;
            got = 1;
        }
        if (rank + (1 << j) < nranks) {
            sent[nreq] = s;
            MPI_Isend(&sent[nreq], 1, MPI_UNSIGNED_LONG_LONG, rank + (1 << j),
                      TAG_ROUND + j, MPI_COMM_WORLD, &req[nreq]);
            nreq++;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (got)
            add_all(x, m);
    }
    if (rounds > 0 && rank >= (1 << (rounds - 1)))
        add_all(x, recv_from(rank - (1 << (rounds - 1)), rounds - 1));
    MPI_Waitall(nreq, req, mb_statuses_ignore);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int status = parse(argc, argv);
    if (status != 0) {
        MPI_Finalize();
        return status == 1 ? 0 : status;
    }

    size_t bytes = (size_t)n * sizeof(uint64_t);
    uint64_t *input = malloc(bytes), *x = malloc(bytes), *want = malloc(bytes);
    MPI_Request req[64];
    if (input == NULL || x == NULL || want == NULL) {
        fprintf(stderr, "prefix: out of memory (3 x %zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The input, and the answer computed serially: the sum of every element
     * before this rank's first, then this rank's own running sum. */
    uint64_t before = 0, g0 = (uint64_t)rank * (uint64_t)n;
    for (uint64_t g = 0; g < g0; g++)
        before += value_at(g);
    for (long i = 0; i < n; i++) {
        input[i] = value_at(g0 + (uint64_t)i);
        before += input[i];
        want[i] = before;
    }
    memset(x, 0, bytes);
    rate = mb_spin_calibrate();
    int rounds = 0;
    while ((1L << rounds) < nranks)
        rounds++;
    if (rank == 0) {
        printf("# prefix: prefix scan optimized for clusters (Pakin, "
               "Alg. 5.4), seconds; lower is better\n");
        mb_library_line();
        printf("# ranks %d, %ld elements per rank (%ld in all), %d rounds, "
               "%ld scans, --work %g us per local step, seed %llu\n", nranks,
               n, n * nranks, rounds, iters, work_us,
               (unsigned long long)seed);
        printf("# compute loop: %.1f loops per microsecond\n", rate);
        fflush(stdout);
    }

    double mytime = 0;
    for (long it = 0; it < iters; it++) {
        int token = 0, sum = 0, bad = 0, any = 0;
        memcpy(x, input, bytes);
        MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        scan(x, req);
        mytime += MPI_Wtime() - t0;
        for (long i = 0; i < n && !bad; i++)
            if (x[i] != want[i]) {
                fprintf(stderr, "prefix: scan %ld: rank %d element %ld (global "
                        "%llu) is %llu, the serial sum is %llu\n", it, rank, i,
                        (unsigned long long)(g0 + (uint64_t)i),
                        (unsigned long long)x[i],
                        (unsigned long long)want[i]);
                bad = 1;
            }
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) {
            if (rank == 0)
                fprintf(stderr, "prefix: FAILED: the scan's result is wrong\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }

    double *all = rank == 0 ? malloc((size_t)nranks * sizeof(double)) : NULL;
    MPI_Gather(&mytime, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double tmax = mb_max_over_ranks(mytime), tmean = mb_mean_over_ranks(mytime);
    if (rank == 0 && all != NULL) {
        printf("# checked: %ld scans, each equal to the serial prefix sum\n"
               "# seconds per rank:", iters);
        for (int r = 0; r < nranks; r++)
            printf(" %.4f", all[r]);
        printf("\ntime %.6f\nmean %.6f\n", tmax, tmean);
        fflush(stdout);
    }
    free(all);
    free(input);
    free(x);
    free(want);
    MPI_Finalize();
    return 0;
}
