/*
 * Radix sort, bulk-synchronous: the key experiment of Pakin's thesis
 * ("Unresponsiveness-tolerant collective communication", 2001, Alg. 5.6),
 * in plain MPI.  Every rank holds --keys 32-bit keys (pseudo-random from
 * --seed, the rank and the index); together they sort all ranks' keys so
 * that rank r ends up with the keys of global positions [r*N, (r+1)*N).
 *
 * One pass per 8-bit digit (4 passes), each two supersteps, the pattern
 * BARRIER -> SEND -> COMPUTE -> RECEIVE under which a barrier that returns
 * at once (SHOAL_BARRIER=tolerant) lets computation and fan-out sends go on
 * while a rank is unresponsive:
 *
 *   counts:  MPI_Barrier; send this rank's histogram of the digit to every
 *            rank (MPI_Isend; --counts allgather: MPI_Allgather instead);
 *            --work microseconds of computation; receive the histograms;
 *            compute where every key goes
 *   keys:    MPI_Barrier; post the receives (their sizes are known from the
 *            histograms), counting-sort the keys by digit and MPI_Isend each
 *            owner its contiguous range; --work microseconds of computation;
 *            wait for the keys, scatter them into place; histogram of the
 *            next digit
 *
 * --work is a calibrated compute loop (mb_spin: the same CPU work on every
 * rank; a stopped rank takes longer to do it), standing for the per-step
 * computation of a real code.  Each of --iters sorts starts from the same
 * input after an MPI_Allreduce that lines the ranks up (not timed), is
 * timed on every rank, and is checked (not timed): every rank's keys in
 * order, the last key of rank r <= the first of rank r+1, and the keys a
 * permutation of the input (count, sum and a sum of hashes over all ranks).
 * A wrong sort aborts with a message.
 *
 * Output, from rank 0: '#' lines, then "time <s>" (the largest over ranks of
 * each rank's total sort time, seconds: the job's time) and "mean <s>" (the
 * mean over ranks).
 *
 * With RADIX_TRACE=PREFIX every rank also writes PREFIX.<rank>: one line per
 * superstep, "sort superstep t0 t1 t2 t3 t4" (supersteps 0-7, even: counts,
 * odd: keys; MPI_Wtime at barrier entry, barrier return, sends posted,
 * --work done, receives done); bench/radix-waits sums them into wait times.
 */
#include "mpibench.h"

#define DIGIT_BITS 8
#define BUCKETS (1 << DIGIT_BITS)
#define PASSES (32 / DIGIT_BITS)
#define TAG_COUNTS 10
#define TAG_KEYS 20

#define DEF_KEYS (1L << 16)
#define DEF_ITERS 20
#define DEF_WORK 2000.0

static long nkeys = DEF_KEYS;
static long iters = DEF_ITERS;
static double work_us = DEF_WORK;
static uint64_t seed = 1;
static int counts_allgather;

static int rank, nranks;
static double rate; /* mb_spin loops per microsecond */

/*
 * RADIX_TRACE=PREFIX: every rank writes PREFIX.<rank>, one line per
 * superstep of every sort: sort, superstep (0..7), and MPI_Wtime at barrier
 * entry, barrier return, sends posted, computation done, receives done.
 * For finding where the time goes (bench/README.md); off by default.
 */
#define TRACE_MAX (1L << 16)
static double (*trace)[5];
static long ntrace;

static inline void trace_at(int point)
{
    if (trace != NULL && ntrace < TRACE_MAX)
        trace[ntrace][point] = MPI_Wtime();
    if (trace != NULL && point == 4 && ntrace < TRACE_MAX)
        ntrace++;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static uint32_t key_at(long i)
{
    return (uint32_t)mix64(seed * 0x9e3779b97f4a7c15ULL +
                           ((uint64_t)rank << 40) + (uint64_t)i);
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: radix [options]   (any number of ranks; Pakin's radix "
            "sort)\n"
            "  --keys N          32-bit keys per rank (default %ld; K and M "
            "suffixes;\n"
            "                    --size is the same)\n"
            "  --iters N         sorts, each timed and checked (default %ld)\n"
            "  --work US         microseconds of computation per superstep, "
            "between\n"
            "                    the sends and the receives (default %g; 0: "
            "none)\n"
            "  --counts p2p|allgather\n"
            "                    how histograms travel: MPI_Isend/MPI_Irecv "
            "after the\n"
            "                    barrier (default), or MPI_Allgather\n"
            "  --seed N          input keys (default 1)\n"
            "Output: '#' lines, then 'time <s>' (largest over ranks) and "
            "'mean <s>'\n",
            DEF_KEYS, (long)DEF_ITERS, DEF_WORK);
}

/* 0: go on; otherwise the exit status (1 stands for --help: 0). */
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
        if ((strcmp(a, "--keys") == 0 || strcmp(a, "--size") == 0) &&
            mb_parse_size(v) > 0 &&
            mb_parse_size(v) <= (1L << 28))
            nkeys = mb_parse_size(v);
        else if (strcmp(a, "--iters") == 0 && mb_parse_count(v) > 0)
            iters = mb_parse_count(v);
        else if (strcmp(a, "--work") == 0 &&
                 (work_us = strtod(v, &end), end != v && *end == '\0' &&
                  work_us >= 0))
            ;
        else if (strcmp(a, "--counts") == 0 && strcmp(v, "p2p") == 0)
            counts_allgather = 0;
        else if (strcmp(a, "--counts") == 0 && strcmp(v, "allgather") == 0)
            counts_allgather = 1;
        else if (strcmp(a, "--seed") == 0 && mb_parse_count(v) >= 0)
            seed = (uint64_t)mb_parse_count(v);
        else
            goto bad;
        continue;
    bad:
        if (rank == 0) {
            fprintf(stderr, "radix: bad option or value: %s%s%s\n", a,
                    v != NULL ? " " : "", v != NULL ? v : "");
            usage(stderr);
        }
        return 2;
    }
    return 0;
}

typedef struct sorter {
    uint32_t *keys, *sorted, *stage, *out;
    long *hist;     /* BUCKETS, this rank's */
    long *allhist;  /* nranks x BUCKETS */
    long *base;     /* BUCKETS: first global position of each digit */
    long *sendcnt, *sendoff, *recvcnt, *recvoff; /* nranks each */
    MPI_Request *req;                            /* 2 x nranks */
    MPI_Status *st;                              /* 2 x nranks */
} sorter_t;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes != 0 ? bytes : 1);

    if (p == NULL) {
        fprintf(stderr, "radix: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static unsigned digit(uint32_t k, int pass)
{
    return (k >> (pass * DIGIT_BITS)) & (BUCKETS - 1);
}

static void histogram(sorter_t *s, int pass)
{
    memset(s->hist, 0, BUCKETS * sizeof(long));
    for (long i = 0; i < nkeys; i++)
        s->hist[digit(s->keys[i], pass)]++;
}

/* Where a range [lo, hi) of global positions meets owner o's range. */
static long overlap_len(long lo, long hi, int o)
{
    long a = (long)o * nkeys, b = a + nkeys;

    lo = lo > a ? lo : a;
    hi = hi < b ? hi : b;
    return hi > lo ? hi - lo : 0;
}

/* First global position of rank r's keys of digit b. */
static long position(const sorter_t *s, int r, int b)
{
    long p = s->base[b];

    for (int q = 0; q < r; q++)
        p += s->allhist[(long)q * BUCKETS + b];
    return p;
}

static void check_count(MPI_Status *st, long want, int from, int pass)
{
    int got = -1;

    MPI_Get_count(st, MPI_UNSIGNED, &got);
    if (got != want) {
        fprintf(stderr, "radix: rank %d pass %d: %d keys came from rank %d, "
                "%ld expected\n", rank, pass, got, from, want);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Superstep 1: histograms to every rank; where every key goes. */
static void exchange_counts(sorter_t *s)
{
    int nreq = 0;

    trace_at(0);
    MPI_Barrier(MPI_COMM_WORLD);
    trace_at(1);
    memcpy(s->allhist + (long)rank * BUCKETS, s->hist, BUCKETS * sizeof(long));
    if (counts_allgather) {
        MPI_Allgather(s->hist, BUCKETS, MPI_LONG, s->allhist, BUCKETS,
                      MPI_LONG, MPI_COMM_WORLD);
        trace_at(2);
        mb_work(work_us, rate);
        trace_at(3);
    } else {
        for (int r = 0; r < nranks; r++)
            if (r != rank)
                MPI_Irecv(s->allhist + (long)r * BUCKETS, BUCKETS, MPI_LONG,
                          r, TAG_COUNTS, MPI_COMM_WORLD, &s->req[nreq++]);
        for (int r = 0; r < nranks; r++)
            if (r != rank)
                MPI_Isend(s->hist, BUCKETS, MPI_LONG, r, TAG_COUNTS,
                          MPI_COMM_WORLD, &s->req[nreq++]);
        trace_at(2);
        mb_work(work_us, rate);
        trace_at(3);
        MPI_Waitall(nreq, s->req, mb_statuses_ignore);
    }
    trace_at(4);
    long p = 0;
    for (int b = 0; b < BUCKETS; b++) {
        s->base[b] = p;
        for (int r = 0; r < nranks; r++)
            p += s->allhist[(long)r * BUCKETS + b];
    }
    if (p != nkeys * nranks) {
        fprintf(stderr, "radix: rank %d: the histograms count %ld keys, not "
                "%ld\n", rank, p, nkeys * nranks);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* What goes to and comes from each rank, in global position order. */
    for (int o = 0; o < nranks; o++)
        s->sendcnt[o] = s->recvcnt[o] = 0;
    for (int b = 0; b < BUCKETS; b++) {
        long mine = position(s, rank, b), n = s->hist[b];
        for (int o = 0; o < nranks; o++)
            s->sendcnt[o] += overlap_len(mine, mine + n, o);
        for (int r = 0; r < nranks; r++) {
            long from = position(s, r, b);
            s->recvcnt[r] +=
                overlap_len(from, from + s->allhist[(long)r * BUCKETS + b],
                            rank);
        }
    }
    s->sendoff[0] = s->recvoff[0] = 0;
    for (int o = 1; o < nranks; o++) {
        s->sendoff[o] = s->sendoff[o - 1] + s->sendcnt[o - 1];
        s->recvoff[o] = s->recvoff[o - 1] + s->recvcnt[o - 1];
    }
}

/* Superstep 2: keys to their owners, then into place. */
static void exchange_keys(sorter_t *s, int pass)
{
    int nreq = 0, nrecv = 0;
    long next[BUCKETS];

    trace_at(0);
    MPI_Barrier(MPI_COMM_WORLD);
    trace_at(1);
    for (int r = 0; r < nranks; r++)
        if (r != rank && s->recvcnt[r] > 0)
            MPI_Irecv(s->stage + s->recvoff[r], (int)s->recvcnt[r],
                      MPI_UNSIGNED, r, TAG_KEYS + pass, MPI_COMM_WORLD,
                      &s->req[nreq++]);
    nrecv = nreq;
    /* Counting sort by digit: sorted[] is in global position order, so
     * each owner's keys are one contiguous range of it. */
    long p = 0;
    for (int b = 0; b < BUCKETS; b++) {
        next[b] = p;
        p += s->hist[b];
    }
    for (long i = 0; i < nkeys; i++)
        s->sorted[next[digit(s->keys[i], pass)]++] = s->keys[i];
    for (int o = 0; o < nranks; o++)
        if (o != rank && s->sendcnt[o] > 0)
            MPI_Isend(s->sorted + s->sendoff[o], (int)s->sendcnt[o],
                      MPI_UNSIGNED, o, TAG_KEYS + pass, MPI_COMM_WORLD,
                      &s->req[nreq++]);
    if (s->sendcnt[rank] != s->recvcnt[rank]) {
        fprintf(stderr, "radix: rank %d pass %d: keeps %ld keys but expects "
                "%ld from itself\n", rank, pass, s->sendcnt[rank],
                s->recvcnt[rank]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memcpy(s->stage + s->recvoff[rank], s->sorted + s->sendoff[rank],
           (size_t)s->sendcnt[rank] * sizeof(uint32_t));
    trace_at(2);
    mb_work(work_us, rate);
    trace_at(3);
    MPI_Waitall(nreq, s->req, s->st);
    trace_at(4);
    for (int r = 0, k = 0; r < nranks && k < nrecv; r++)
        if (r != rank && s->recvcnt[r] > 0)
            check_count(&s->st[k++], s->recvcnt[r], r, pass);
    /* Scatter: rank r's keys of digit b are at global positions
     * [position(r,b), +count); the part owned here lands in out[]. */
    long lo = (long)rank * nkeys;
    for (int r = 0; r < nranks; r++) {
        long at = s->recvoff[r];
        for (int b = 0; b < BUCKETS; b++) {
            long from = position(s, r, b);
            long to = from + s->allhist[(long)r * BUCKETS + b];
            long a = from > lo ? from : lo, z = to < lo + nkeys ? to : lo + nkeys;
            if (z > a) {
                memcpy(s->out + (a - lo), s->stage + at,
                       (size_t)(z - a) * sizeof(uint32_t));
                at += z - a;
            }
        }
    }
    uint32_t *t = s->keys;
    s->keys = s->out;
    s->out = t;
}

static void sort(sorter_t *s)
{
    histogram(s, 0);
    for (int pass = 0; pass < PASSES; pass++) {
        exchange_counts(s);
        exchange_keys(s, pass);
        if (pass + 1 < PASSES)
            histogram(s, pass + 1);
    }
}

/* Count, sum and sum of hashes of this rank's keys. */
static void sums(const uint32_t *k, unsigned long long out[3])
{
    out[0] = (unsigned long long)nkeys;
    out[1] = out[2] = 0;
    for (long i = 0; i < nkeys; i++) {
        out[1] += k[i];
        out[2] += mix64(k[i] + 0x1234567ULL);
    }
}

static void check(const sorter_t *s, const unsigned long long want[3],
                  long iter)
{
    unsigned long long mine[3], all[3];
    unsigned int last = nkeys > 0 ? s->keys[nkeys - 1] : 0, before = 0;
    int bad = 0;
    long at = -1;

    for (long i = 1; i < nkeys && at < 0; i++)
        if (s->keys[i - 1] > s->keys[i])
            at = i;
    MPI_Sendrecv(&last, 1, MPI_UNSIGNED, rank + 1 < nranks ? rank + 1 :
                 MPI_PROC_NULL, 30, &before, 1, MPI_UNSIGNED,
                 rank > 0 ? rank - 1 : MPI_PROC_NULL, 30, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sums(s->keys, mine);
    MPI_Allreduce(mine, all, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    if (at >= 0) {
        fprintf(stderr, "radix: sort %ld: rank %d's keys out of order at "
                "%ld (%u > %u)\n", iter, rank, at, s->keys[at - 1],
                s->keys[at]);
        bad = 1;
    }
    if (rank > 0 && nkeys > 0 && before > s->keys[0]) {
        fprintf(stderr, "radix: sort %ld: rank %d's last key %u > rank %d's "
                "first %u\n", iter, rank - 1, before, rank, s->keys[0]);
        bad = 1;
    }
    if (memcmp(all, want, sizeof(all)) != 0 && rank == 0) {
        fprintf(stderr, "radix: sort %ld: the output is not a permutation "
                "of the input (count %llu/%llu, sum %llx/%llx, hash sum "
                "%llx/%llx)\n", iter, all[0], want[0], all[1], want[1],
                all[2], want[2]);
        bad = 1;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        if (rank == 0)
            fprintf(stderr, "radix: FAILED: the sort's output is wrong\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
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

    sorter_t s;
    size_t kb = (size_t)nkeys * sizeof(uint32_t);
    uint32_t *input = xmalloc(kb);
    s.keys = xmalloc(kb);
    s.sorted = xmalloc(kb);
    s.stage = xmalloc(kb);
    s.out = xmalloc(kb);
    s.hist = xmalloc(BUCKETS * sizeof(long));
    s.allhist = xmalloc((size_t)nranks * BUCKETS * sizeof(long));
    s.base = xmalloc(BUCKETS * sizeof(long));
    s.sendcnt = xmalloc((size_t)nranks * sizeof(long));
    s.sendoff = xmalloc((size_t)nranks * sizeof(long));
    s.recvcnt = xmalloc((size_t)nranks * sizeof(long));
    s.recvoff = xmalloc((size_t)nranks * sizeof(long));
    s.req = xmalloc(2 * (size_t)nranks * sizeof(MPI_Request));
    s.st = xmalloc(2 * (size_t)nranks * sizeof(MPI_Status));
    for (long i = 0; i < nkeys; i++)
        input[i] = key_at(i);
    /* Fault every page in before anything is timed. */
    memset(s.sorted, 0, kb);
    memset(s.stage, 0, kb);
    memset(s.out, 0, kb);

    unsigned long long mine[3], want[3];
    sums(input, mine);
    MPI_Allreduce(mine, want, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    rate = mb_spin_calibrate();
    if (rank == 0) {
        printf("# radix: bulk-synchronous radix sort (Pakin, Alg. 5.6), "
               "seconds; lower is better\n");
        mb_library_line();
        printf("# ranks %d, %ld keys per rank (%ld in all), %d passes of "
               "%d-bit digits, %ld sorts, --work %g us per superstep, "
               "counts by %s, seed %llu\n", nranks, nkeys, nkeys * nranks,
               PASSES, DIGIT_BITS, iters, work_us,
               counts_allgather ? "MPI_Allgather" : "MPI_Isend/MPI_Irecv",
               (unsigned long long)seed);
        printf("# compute loop: %.1f loops per microsecond\n", rate);
        fflush(stdout);
    }

    const char *tp = getenv("RADIX_TRACE");
    if (tp != NULL && *tp != '\0')
        trace = xmalloc(TRACE_MAX * sizeof(*trace));

    double mytime = 0;
    for (long it = 0; it < iters; it++) {
        int token = 0, sum = 0;
        memcpy(s.keys, input, kb);
        /* Line the ranks up (a reduction: it waits for every rank whatever
         * MPI_Barrier does), then time this rank's sort. */
        MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        sort(&s);
        mytime += MPI_Wtime() - t0;
        check(&s, want, it);
    }

    if (trace != NULL) {
        char name[4096];
        snprintf(name, sizeof(name), "%s.%d", tp, rank);
        FILE *f = fopen(name, "w");
        if (f == NULL) {
            fprintf(stderr, "radix: cannot write %s\n", name);
        } else {
            for (long i = 0; i < ntrace; i++)
                fprintf(f, "%ld %ld %.6f %.6f %.6f %.6f %.6f\n",
                        i / (2 * PASSES), i % (2 * PASSES), trace[i][0],
                        trace[i][1], trace[i][2], trace[i][3], trace[i][4]);
            fclose(f);
        }
        free(trace);
    }

    double *all = rank == 0 ? xmalloc((size_t)nranks * sizeof(double)) : NULL;
    MPI_Gather(&mytime, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double tmax = mb_max_over_ranks(mytime), tmean = mb_mean_over_ranks(mytime);
    if (rank == 0) {
        printf("# checked: %ld sorts, each sorted and a permutation of its "
               "%ld keys\n# seconds per rank:", iters, nkeys * nranks);
        for (int r = 0; r < nranks; r++)
            printf(" %.4f", all[r]);
        printf("\ntime %.6f\nmean %.6f\n", tmax, tmean);
        fflush(stdout);
        free(all);
    }
    free(input);
    free(s.keys);
    free(s.sorted);
    free(s.stage);
    free(s.out);
    free(s.hist);
    free(s.allhist);
    free(s.base);
    free(s.sendcnt);
    free(s.sendoff);
    free(s.recvcnt);
    free(s.recvoff);
    free(s.req);
    free(s.st);
    MPI_Finalize();
    return 0;
}
