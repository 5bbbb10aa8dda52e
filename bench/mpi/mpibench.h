/*
 * What the MPI benchmarks (latency.c, bw.c, bibw.c, rate.c, coll.c,
 * overlap.c, radix.c, prefix.c) share: options, the list of sizes,
 * iteration counts scaled by size, buffers, timing, a calibrated compute
 * loop and output.  Plain MPI only, so that every program builds with any
 * implementation's wrapper: shoalcc, mpicc.openmpi, mpicc.mpich.
 *
 * Point-to-point programs: ranks 0 and 1 measure; further ranks only take
 * part in the barriers.  Collective programs (coll.c, overlap.c): every rank
 * times its own calls (mb_time_steps, the median of batches) and the value
 * reported is the largest of the ranks' values (mb_max_over_ranks).
 *
 * Output, from rank 0: comment lines starting with '#', then one line per
 * size, "<bytes> <value>".  bench/compare reads it.
 */
#ifndef SHOAL_MPIBENCH_H
#define SHOAL_MPIBENCH_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB_MAX_SIZES 64
#define MB_MAX_BATCHES 101
#define MB_TAG_DATA 1
#define MB_TAG_ACK 2
/* Receives of a window go to separate slots of this area while they fit;
 * beyond it (large messages) slots are reused. */
#define MB_RECV_AREA (16L << 20)

/*
 * MPI_STATUSES_IGNORE through a variable: gcc 12 at -O2 warns
 * (-Wstringop-overflow, on by default) when a constant pointer such as
 * MPICH's (MPI_Status *)1 is passed for an array parameter.
 */
MPI_Status *mb_statuses_ignore = MPI_STATUSES_IGNORE;

typedef struct mb_bench {
    const char *name;     /* "latency" */
    const char *what;     /* the header line: unit and direction */
    const char *sizes;    /* default size range */
    long iters, floor;    /* iterations up to 8 KiB, and the least beyond */
    int windowed;         /* takes --window */
    int min_ranks;        /* the least ranks it runs with; 0 means 2 */
    const char *ranks;    /* usage: how to run it; NULL: "run with 2 ranks" */
    /*
     * A program's own options, each taking a value: returns 0 when it took
     * NAME VALUE, -1 for a bad value, 1 when NAME is not its option.  Every
     * rank calls it with the same arguments.  extra_usage lists them.
     */
    int (*option)(const char *name, const char *value);
    const char *extra_usage;
} mb_bench_t;

typedef struct mb_opts {
    long sizes[MB_MAX_SIZES];
    int nsizes;
    long max_size;
    long iters;  /* iterations (or windows) at sizes up to 8 KiB */
    long floor;  /* the least iterations at any size */
    long warmup; /* warm-up iterations at sizes up to 8 KiB */
    int window;
    int batches; /* timed batches per size; the median batch is reported */
    int rank, nranks;
    char *sbuf, *rbuf; /* max_size and max(max_size, MB_RECV_AREA) */
} mb_opts_t;

static inline void mb_usage(const mb_bench_t *b, FILE *f)
{
    fprintf(f,
            "Usage: %s [options]   (%s)\n"
            "  %s\n"
            "Options:\n"
            "  --sizes MIN:MAX   powers of 2 from MIN to MAX, and 0 when MIN\n"
            "                    is 0; K and M suffixes (default %s)\n"
            "  --sizes A,B,...   exactly these sizes\n"
            "  --iters N         iterations%s at sizes up to 8 KiB (default\n"
            "                    %ld); larger sizes get N*8KiB/size, at least\n"
            "                    --floor\n"
            "  --floor N         least iterations at any size (default %ld)\n"
            "  --warmup N        warm-up iterations at sizes up to 8 KiB,\n"
            "                    scaled the same way (default iters/10)\n"
            "  --batches N       time the iterations in N batches and report\n"
            "                    the median batch (default 5), so one\n"
            "                    preemption does not move the value\n"
            "%s"
            "%s"
            "  --quick           a tenth of the iterations\n"
            "Output: '#' comment lines, then one line per size: bytes value\n",
            b->name, b->ranks != NULL ? b->ranks : "run with 2 ranks",
            b->what, b->sizes, b->windowed ? " (windows)" : "",
            b->iters, b->floor,
            b->windowed ? "  --window N        messages per window "
                          "(default 64)\n"
                        : "",
            b->extra_usage != NULL ? b->extra_usage : "");
}

/* "4K" -> 4096; -1 when it is not a size. */
static inline long mb_parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || v < 0)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end == '\0' ? v : -1;
}

static inline int mb_add_size(mb_opts_t *o, long v)
{
    if (o->nsizes == MB_MAX_SIZES || v < 0 || v > (1L << 30))
        return -1;
    o->sizes[o->nsizes++] = v;
    if (v > o->max_size)
        o->max_size = v;
    return 0;
}

static inline int mb_parse_sizes(mb_opts_t *o, const char *text)
{
    char buf[256], *colon, *tok, *save;

    o->nsizes = 0;
    o->max_size = 0;
    if (strlen(text) >= sizeof(buf))
        return -1;
    strcpy(buf, text);
    colon = strchr(buf, ':');
    if (colon != NULL) {
        *colon = '\0';
        long lo = mb_parse_size(buf), hi = mb_parse_size(colon + 1);
        if (lo < 0 || hi < lo)
            return -1;
        if (lo == 0 && mb_add_size(o, 0) != 0)
            return -1;
        for (long s = 1; s <= hi; s *= 2)
            if (s >= lo && mb_add_size(o, s) != 0)
                return -1;
        return o->nsizes > 0 ? 0 : -1;
    }
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save))
        if (mb_add_size(o, mb_parse_size(tok)) != 0)
            return -1;
    return o->nsizes > 0 ? 0 : -1;
}

static inline long mb_parse_count(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    return end != s && *end == '\0' && v >= 0 ? v : -1;
}

/* Every rank parses the same arguments, so every rank agrees. */
static inline int mb_parse(const mb_bench_t *b, mb_opts_t *o, int argc, char **argv)
{
    int quick = 0;
    const char *sizes = b->sizes;

    int rank = o->rank;

    memset(o, 0, sizeof(*o));
    o->rank = rank;
    o->iters = -1;
    o->floor = -1;
    o->warmup = -1;
    o->window = 64;
    o->batches = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n = v != NULL ? mb_parse_count(v) : -1;

        if (strcmp(a, "--quick") == 0) {
            quick = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (o->rank == 0)
                mb_usage(b, stdout);
            return 1;
        }
        if (v == NULL) {
            if (o->rank == 0)
                fprintf(stderr, "%s: unknown option or missing value: %s\n",
                        b->name, a);
            return 2;
        }
        i++;
        if (strcmp(a, "--sizes") == 0)
            sizes = v;
        else if (strcmp(a, "--iters") == 0 && n > 0)
            o->iters = n;
        else if (strcmp(a, "--floor") == 0 && n > 0)
            o->floor = n;
        else if (strcmp(a, "--warmup") == 0 && n >= 0)
            o->warmup = n;
        else if (strcmp(a, "--batches") == 0 && n > 0 && n <= MB_MAX_BATCHES)
            o->batches = (int)n;
        else if (strcmp(a, "--window") == 0 && b->windowed && n > 0 &&
                 n <= 1024)
            o->window = (int)n;
        else if (b->option != NULL && b->option(a, v) == 0)
            ;
        else {
            if (o->rank == 0)
                fprintf(stderr, "%s: bad option: %s %s\n", b->name, a, v);
            return 2;
        }
    }
    if (mb_parse_sizes(o, sizes) != 0) {
        if (o->rank == 0)
            fprintf(stderr, "%s: bad --sizes '%s' (MIN:MAX or A,B,..., at "
                    "most %d sizes of at most 1G)\n", b->name, sizes,
                    MB_MAX_SIZES);
        return 2;
    }
    if (o->iters < 0)
        o->iters = quick ? (b->iters + 9) / 10 : b->iters;
    if (o->floor < 0)
        o->floor = quick ? (b->floor + 1) / 2 : b->floor;
    if (o->floor > o->iters)
        o->floor = o->iters;
    if (o->warmup < 0)
        o->warmup = o->iters / 10 > 1 ? o->iters / 10 : 1;
    return 0;
}

/* Iterations at a size: --iters up to 8 KiB, then iters*8KiB/size, at
 * least --floor. */
static inline long mb_iters(const mb_opts_t *o, long size)
{
    long n = o->iters;

    if (size > 8192)
        n = (long)((double)n * 8192.0 / (double)size);
    return n > o->floor ? n : o->floor;
}

/* Warm-up iterations at a size: --warmup scaled the same way, at least 1
 * (none with --warmup 0). */
static inline long mb_warmup(const mb_opts_t *o, long size)
{
    long n = o->warmup;

    if (n == 0)
        return 0;
    if (size > 8192)
        n = (long)((double)n * 8192.0 / (double)size);
    return n > 1 ? n : 1;
}

/* Where the i-th receive of a window lands. */
static inline char *mb_recv_slot(const mb_opts_t *o, long size, int i)
{
    long stride = (size + 63) / 64 * 64;
    long slots = stride == 0 ? 1 : MB_RECV_AREA / stride;

    if (slots < 1)
        slots = 1;
    return o->rbuf + (i % slots) * stride;
}

static inline void mb_library_line(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;

    MPI_Get_library_version(version, &len);
    version[len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING ? len : 0] = '\0';
    version[strcspn(version, "\r\n")] = '\0';
    printf("# library: %s\n", version);
}

/*
 * MPI_Init, options, buffers and the header.  Returns -1 to go on and run
 * the sizes, or the exit status (after MPI_Finalize) when there is nothing
 * to run (--help, a bad option, fewer than 2 ranks).
 */
static inline int mb_start(const mb_bench_t *b, mb_opts_t *o, int *argc,
                    char ***argv)
{
    int rank, nranks;

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    o->rank = rank;
    int status = mb_parse(b, o, *argc, *argv);
    int least = b->min_ranks > 0 ? b->min_ranks : 2;
    o->nranks = nranks;
    if (status == 0 && nranks < least) {
        if (rank == 0)
            fprintf(stderr, "%s: needs %d ranks (got %d)\n", b->name, least,
                    nranks);
        status = 2;
    }
    if (status != 0) {
        MPI_Finalize();
        return status == 1 ? 0 : status;
    }
    long rsize = o->max_size > MB_RECV_AREA ? o->max_size : MB_RECV_AREA;
    o->sbuf = malloc((size_t)o->max_size + 1);
    o->rbuf = malloc((size_t)rsize + 64);
    if (o->sbuf == NULL || o->rbuf == NULL) {
        fprintf(stderr, "%s: out of memory\n", b->name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Fault the pages in before anything is timed. */
    memset(o->sbuf, 'a' + rank, (size_t)o->max_size + 1);
    memset(o->rbuf, 0, (size_t)rsize + 64);
    if (rank == 0) {
        printf("# %s: %s\n", b->name, b->what);
        mb_library_line();
        printf("# ranks %d, iterations %ld up to 8 KiB (at least %ld), "
               "warm-up %ld, median of %d batches", nranks, o->iters,
               o->floor, o->warmup, o->batches);
        if (b->windowed)
            printf(", window %d", o->window);
        printf("\n# size value\n");
        fflush(stdout);
    }
    return -1;
}

static inline void mb_report(const mb_opts_t *o, long size, double value)
{
    if (o->rank == 0) {
        printf("%ld %.6g\n", size, value);
        fflush(stdout);
    }
}

static inline int mb_finish(mb_opts_t *o)
{
    free(o->sbuf);
    free(o->rbuf);
    MPI_Finalize();
    return 0;
}

/*
 * One window of the bandwidth and message-rate tests: rank 0 sends
 * o->window messages of size bytes with MPI_Isend, rank 1 receives them
 * with MPI_Irecv into separate slots, both wait for all, and rank 1 answers
 * with an empty message so rank 0 knows they arrived.
 */
static inline void mb_window(const mb_opts_t *o, long size, MPI_Request *req)
{
    if (o->rank == 0) {
        for (int w = 0; w < o->window; w++)
            MPI_Isend(o->sbuf, (int)size, MPI_BYTE, 1, MB_TAG_DATA,
                      MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(o->window, req, mb_statuses_ignore);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, MB_TAG_ACK, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    } else if (o->rank == 1) {
        for (int w = 0; w < o->window; w++)
            MPI_Irecv(mb_recv_slot(o, size, w), (int)size, MPI_BYTE, 0,
                      MB_TAG_DATA, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(o->window, req, mb_statuses_ignore);
        MPI_Send(NULL, 0, MPI_BYTE, 0, MB_TAG_ACK, MPI_COMM_WORLD);
    }
}

/* One timed step of a benchmark: a round trip, a window. */
typedef void (*mb_step_fn)(const mb_opts_t *o, long size, void *arg);

/*
 * Seconds per step: n steps run in o->batches timed batches (fewer when n
 * is small) and the median batch counts, so a preemption or a migration
 * in one batch does not move the value.  The batches start together after
 * a barrier; a step must leave ranks 0 and 1 in step (a round trip, or a
 * window closed by an answer).
 */
static inline double mb_time_steps(const mb_opts_t *o, long size, long n,
                                   mb_step_fn step, void *arg)
{
    double per[MB_MAX_BATCHES];
    int nb = o->batches < n ? o->batches : (int)n;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int b = 0; b < nb; b++) {
        long k = n / nb + (b < n % nb);
        double t0 = MPI_Wtime();
        for (long i = 0; i < k; i++)
            step(o, size, arg);
        per[b] = (MPI_Wtime() - t0) / (double)k;
    }
    /* Insertion sort: at most MB_MAX_BATCHES values. */
    for (int i = 1; i < nb; i++)
        for (int j = i; j > 0 && per[j - 1] > per[j]; j--) {
            double t = per[j];
            per[j] = per[j - 1];
            per[j - 1] = t;
        }
    return nb % 2 ? per[nb / 2] : (per[nb / 2 - 1] + per[nb / 2]) / 2;
}

/* The largest of the ranks' values, on every rank. */
static inline double mb_max_over_ranks(double v)
{
    double max = v;

    MPI_Allreduce(&v, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

/* The mean of the ranks' values, on every rank. */
static inline double mb_mean_over_ranks(double v)
{
    double sum = v;
    int n = 1;

    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return sum / n;
}

/*
 * Collective timing: every rank runs mb_time_steps (its median batch, in
 * seconds per step) and the largest of the ranks' medians is returned on
 * every rank: a collective is as slow as its slowest participant.
 */
static inline double mb_time_steps_max(const mb_opts_t *o, long size, long n,
                                       mb_step_fn step, void *arg)
{
    return mb_max_over_ranks(mb_time_steps(o, size, n, step, arg));
}

/*
 * A compute loop that does not touch memory or call MPI: loops of
 * dependent integer operations, kept by a volatile sink.  Its speed is
 * calibrated once (mb_spin_calibrate): the number of loops per microsecond
 * on an unloaded core, so "W microseconds of work" is the same amount of
 * CPU work on every rank and in every run, and a rank that is descheduled
 * or stopped takes longer to do it (unlike a loop that watches the clock).
 */
static volatile uint64_t mb_spin_sink;

static inline void mb_spin(long loops)
{
    uint64_t x = mb_spin_sink | 1;

    for (long i = 0; i < loops; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    mb_spin_sink = x;
}

/* Loops of mb_spin per microsecond: the fastest of several short trials on
 * this rank (trials that lost the CPU to another process are slower, so
 * the fastest is the unloaded speed), then the fastest over all ranks, so
 * that every rank uses the same value.  Collective. */
static inline double mb_spin_calibrate(void)
{
    double best = 0, t = 0;
    long loops = 1L << 12;

    /* Long enough to time well: about a millisecond. */
    while (loops < (1L << 30)) {
        double t0 = MPI_Wtime();
        mb_spin(loops);
        t = MPI_Wtime() - t0;
        if (t >= 1e-3)
            break;
        loops *= 2;
    }
    for (int trial = 0; trial < 30; trial++) {
        double t0 = MPI_Wtime();
        mb_spin(loops);
        t = MPI_Wtime() - t0;
        if (t > 0 && loops / (t * 1e6) > best)
            best = loops / (t * 1e6);
    }
    return mb_max_over_ranks(best);
}

/* About us microseconds of computation, at rate loops per microsecond. */
static inline void mb_work(double us, double rate)
{
    if (us > 0)
        mb_spin((long)(us * rate + 0.5));
}

static inline void mb_window_step(const mb_opts_t *o, long size, void *req)
{
    mb_window(o, size, req);
}

/* Seconds per window, the median of the batches (after warm-up windows). */
static inline double mb_time_windows(const mb_opts_t *o, long size, long n,
                                     long warm)
{
    MPI_Request req[1024];

    for (long i = 0; i < warm; i++)
        mb_window(o, size, req);
    return mb_time_steps(o, size, n, mb_window_step, req);
}

#endif /* SHOAL_MPIBENCH_H */
