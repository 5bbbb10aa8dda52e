/*
 * shoal-bench: active-message latency, message rate, bandwidth, barrier and
 * long-wait behaviour, each next to the machine limit it should approach,
 * measured in the same run with the tests interleaved so that noise hits
 * both sides of every ratio alike.  Medians of --reps repetitions.
 *
 *   shoalrun -n 2 shoal-bench [--quick] [--reps N] [--tests list]
 *   shoalrun -n 8 shoal-bench --tests barrier
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "test.h"

bench_opts_t bench_opts = {11, 0, 4u << 20, 1.0, ~BENCH_T_BSP, 0};
shoal_ep_t *bench_ep;
int bench_rank, bench_size;
void *bench_seg, *bench_seg_priv;

/* ---- small helpers ----------------------------------------------------------- */

uint64_t bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double bench_cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

void bench_barrier(void)
{
    T_OK(shoal_barrier(bench_ep));
}

void series_add(bench_series_t *s, double v)
{
    if (s->n < (int)(sizeof(s->v) / sizeof(s->v[0])))
        s->v[s->n++] = v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double series_median(const bench_series_t *s)
{
    double v[64];

    if (s->n == 0)
        return 0;
    memcpy(v, s->v, (size_t)s->n * sizeof(double));
    qsort(v, (size_t)s->n, sizeof(double), cmp_double);
    return s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

double series_min(const bench_series_t *s)
{
    double m = s->n ? s->v[0] : 0;
    for (int i = 1; i < s->n; i++)
        m = s->v[i] < m ? s->v[i] : m;
    return m;
}

double series_max(const bench_series_t *s)
{
    double m = s->n ? s->v[0] : 0;
    for (int i = 1; i < s->n; i++)
        m = s->v[i] > m ? s->v[i] : m;
    return m;
}

static const char *size_text(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, cap, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, cap, "%zu KiB", n >> 10);
    else
        snprintf(buf, cap, "%zu B", n);
    return buf;
}

/* ---- the summary of targets -------------------------------------------------- */

typedef struct target {
    const char *what;
    double value, limit;
    int lower_is_better;
    const char *unit;
} target_t;

static target_t targets[16];
static int ntargets;

static void target(const char *what, double value, double limit, int lower,
                   const char *unit)
{
    if (ntargets < 16)
        targets[ntargets++] = (target_t){what, value, limit, lower, unit};
}

static void print_targets(void)
{
    if (bench_rank != 0 || ntargets == 0)
        return;
    printf("\nTargets\n");
    for (int i = 0; i < ntargets; i++) {
        target_t *t = &targets[i];
        int ok = t->lower_is_better ? t->value <= t->limit
                                    : t->value >= t->limit;
        printf("  [%s] %-52s %8.2f %s (%s %.2f)\n", ok ? "meets" : "MISSES",
               t->what, t->value, t->unit, t->lower_is_better ? "<=" : ">=",
               t->limit);
    }
}

/* ---- test families ------------------------------------------------------------ */

static int iters(int n)
{
    return bench_opts.quick ? n / 10 + 1 : n;
}

static void run_latency(void)
{
    static const size_t medium[] = {0, 8, 64, 256, 1024, 4096, 16384, 65536};
    static const size_t lng[] = {8, 1024, 16384, 65536, 262144, 1u << 20,
                                 4u << 20};
    enum { NM = 8, NL = 7 };
    bench_series_t cl, sh, ratio, med[NM], lo[NL];
    size_t max_medium;
    char b[32];

    memset(&cl, 0, sizeof(cl));
    memset(&sh, 0, sizeof(sh));
    memset(&ratio, 0, sizeof(ratio));
    memset(med, 0, sizeof(med));
    memset(lo, 0, sizeof(lo));
    T_OK(shoal_am_max_medium(bench_ep, &max_medium));
    for (int r = 0; r < bench_opts.reps; r++) {
        double c = bench_cacheline_oneway(iters(20000));
        double s = bench_am_latency(BENCH_SHORT, 0, iters(20000));
        series_add(&cl, c);
        series_add(&sh, s);
        series_add(&ratio, c > 0 ? s / c : 0);
        for (int i = 0; i < NM; i++)
            if (medium[i] <= max_medium)
                series_add(&med[i],
                           bench_am_latency(BENCH_MEDIUM, medium[i], iters(5000)));
        for (int i = 0; i < NL; i++)
            if (lng[i] <= bench_opts.max_size)
                series_add(&lo[i], bench_am_latency(BENCH_LONG, lng[i],
                                                    iters(lng[i] > 65536 ? 300 : 3000)));
    }
    if (bench_rank != 0)
        return;
    printf("\nLatency, one way (half a round trip: request, then a reply of "
           "the same kind and size)\n");
    printf("  %-28s %10s %10s %10s\n", "", "median", "min", "max");
    printf("  %-28s %7.0f ns %7.0f ns %7.0f ns\n",
           "cache line (machine limit)", series_median(&cl), series_min(&cl),
           series_max(&cl));
    printf("  %-28s %7.0f ns %7.0f ns %7.0f ns   %.2fx the cache line\n",
           "short, 8 B of arguments", series_median(&sh), series_min(&sh),
           series_max(&sh), series_median(&ratio));
    for (int i = 0; i < NM; i++)
        if (med[i].n)
            printf("  medium %-21s %7.0f ns %7.0f ns %7.0f ns\n",
                   size_text(medium[i], b, sizeof(b)), series_median(&med[i]),
                   series_min(&med[i]), series_max(&med[i]));
    for (int i = 0; i < NL; i++)
        if (lo[i].n)
            printf("  long %-23s %7.0f ns %7.0f ns %7.0f ns\n",
                   size_text(lng[i], b, sizeof(b)), series_median(&lo[i]),
                   series_min(&lo[i]), series_max(&lo[i]));
    target("short latency / cache-line transfer", series_median(&ratio), 1.5,
           1, "x");
}

static void run_rate(void)
{
    bench_series_t rate;

    memset(&rate, 0, sizeof(rate));

    for (int r = 0; r < bench_opts.reps; r++)
        series_add(&rate, bench_am_rate(iters(1000000)) / 1e6);
    if (bench_rank != 0)
        return;
    printf("\nMessage rate, short requests with 8 B of arguments, one "
           "sender\n");
    printf("  %-28s %7.2f M/s (min %.2f, max %.2f)\n", "rate",
           series_median(&rate), series_min(&rate), series_max(&rate));
    target("message rate, 8-byte messages", series_median(&rate), 5, 0,
           "M/s");
}

static int count_for(size_t size)
{
    double total = bench_opts.quick ? 16e6 : 256e6;
    int n = (int)(total / (double)size);
    return n < 16 ? 16 : n;
}

static void run_bandwidth(void)
{
    static const size_t sizes[] = {4096, 16384, 65536, 262144, 1u << 20,
                                   4u << 20};
    enum { N = 6 };
    bench_series_t mc[N], med[N], sh[N], pv[N], ratio[N];
    size_t max_medium;
    char b[32];
    double worst = 1e9;

    memset(mc, 0, sizeof(mc));
    memset(med, 0, sizeof(med));
    memset(sh, 0, sizeof(sh));
    memset(pv, 0, sizeof(pv));
    memset(ratio, 0, sizeof(ratio));
    T_OK(shoal_am_max_medium(bench_ep, &max_medium));
    for (int r = 0; r < bench_opts.reps; r++) {
        for (int i = 0; i < N; i++) {
            size_t s = sizes[i];
            if (s > bench_opts.max_size)
                continue;
            double m = bench_rank == 0 ? bench_memcpy_gbs(s) : 0;
            double l = bench_am_bandwidth(BENCH_LONG, s, 1, count_for(s));
            series_add(&mc[i], m);
            series_add(&sh[i], l);
            series_add(&ratio[i], m > 0 ? l / m : 0);
            series_add(&pv[i], bench_am_bandwidth(BENCH_LONG, s, 0,
                                                  count_for(s)));
            if (s <= max_medium)
                series_add(&med[i], bench_am_bandwidth(BENCH_MEDIUM, s, 1,
                                                       count_for(s)));
        }
    }
    if (bench_rank != 0)
        return;
    printf("\nBandwidth, one sender streaming (GB/s, medians)\n");
    printf("  %-9s %8s %8s %10s %10s %8s\n", "size", "memcpy", "medium",
           "long", "long", "long");
    printf("  %-9s %8s %8s %10s %10s %8s\n", "", "(limit)", "", "shared seg",
           "other mem", "/memcpy");
    for (int i = 0; i < N; i++) {
        if (!sh[i].n)
            continue;
        char medtxt[16] = "-";
        if (med[i].n)
            snprintf(medtxt, sizeof(medtxt), "%.2f", series_median(&med[i]));
        printf("  %-9s %8.2f %8s %10.2f %10.2f %8.2f\n",
               size_text(sizes[i], b, sizeof(b)), series_median(&mc[i]),
               medtxt, series_median(&sh[i]), series_median(&pv[i]),
               series_median(&ratio[i]));
        if (sizes[i] >= (1u << 20) && series_median(&ratio[i]) < worst)
            worst = series_median(&ratio[i]);
    }
    printf("  (\"shared seg\": segment from shoal_segment_alloc, one memcpy; "
           "\"other mem\": malloc'd segment, process_vm_writev)\n");
    if (worst < 1e9)
        target("long bandwidth >= 1 MiB / memcpy (worst size)", worst, 0.8, 0,
               "");
}

static void run_barrier(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int shared = bench_size > ncpu; /* ranks share CPUs */
    bench_series_t bar, hand;

    memset(&bar, 0, sizeof(bar));
    memset(&hand, 0, sizeof(hand));
    for (int r = 0; r < bench_opts.reps; r++) {
        series_add(&bar, bench_am_barrier(iters(20000)) / 1e3);
        if (shared)
            series_add(&hand, bench_yield_handoff_us(iters(20000)));
    }
    if (bench_rank != 0)
        return;
    printf("\nNative barrier, %d ranks on %ld CPUs\n", bench_size, ncpu);
    printf("  %-28s %7.2f us (min %.2f, max %.2f)\n", "per barrier",
           series_median(&bar), series_min(&bar), series_max(&bar));
    if (shared) {
        double per_cpu = (double)((bench_size + ncpu - 1) / ncpu);
        printf("  %-28s %7.2f us (min %.2f, max %.2f)\n",
               "yield handoff (limit)", series_median(&hand),
               series_min(&hand), series_max(&hand));
        printf("  every rank runs at least once per barrier: %.0f ranks per "
               "CPU make %.2f us;\n  the barrier takes %.2fx that\n",
               per_cpu, per_cpu * series_median(&hand),
               series_median(&bar) / (per_cpu * series_median(&hand)));
    }
    if (bench_size == 8)
        target("barrier, 8 ranks", series_median(&bar), 10, 1, "us");
}

static void run_ring(void)
{
    bench_series_t hop;

    memset(&hop, 0, sizeof(hop));
    for (int r = 0; r < bench_opts.reps; r++)
        series_add(&hop, bench_am_ring(iters(2000)) / 1e3);
    if (bench_rank != 0)
        return;
    printf("\nToken ring, %d ranks on %ld CPUs, one short request per hop\n",
           bench_size, sysconf(_SC_NPROCESSORS_ONLN));
    printf("  %-28s %7.2f us (min %.2f, max %.2f)\n", "per hop",
           series_median(&hop), series_min(&hop), series_max(&hop));
}

static void run_bsp(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bench_series_t step, alone;

    memset(&step, 0, sizeof(step));
    memset(&alone, 0, sizeof(alone));
    for (int r = 0; r < bench_opts.reps; r++) {
        double a = 0;
        series_add(&step, bench_am_bsp(bench_opts.quick ? 10 : 50, &a));
        series_add(&alone, a);
    }
    if (bench_rank != 0)
        return;
    long turns = (bench_size + ncpu - 1) / ncpu;
    printf("\nFixed compute then barrier, %d ranks on %ld CPUs\n", bench_size,
           ncpu);
    printf("  %-28s %7.2f ms\n", "the compute, alone", series_median(&alone));
    printf("  %-28s %7.2f ms (min %.2f, max %.2f); %ld ranks per CPU make "
           "%.2f ms\n",
           "per step", series_median(&step), series_min(&step),
           series_max(&step), turns, turns * series_median(&alone));
}

static void run_wake(void)
{
    bench_series_t cpu, lat, fx;
    int reps = bench_opts.reps < 5 ? bench_opts.reps : 5;

    memset(&cpu, 0, sizeof(cpu));
    memset(&lat, 0, sizeof(lat));
    memset(&fx, 0, sizeof(fx));

    for (int r = 0; r < reps; r++) {
        double c = 0, l = 0;
        series_add(&fx, bench_futex_wake_us(bench_opts.quick ? 0.05 : 0.2));
        bench_am_wake(bench_opts.wait_s, &c, &l);
        series_add(&cpu, c);
        series_add(&lat, l);
    }
    if (bench_rank != 0)
        return;
    printf("\nA rank waiting %.1f s for a silent peer\n", bench_opts.wait_s);
    printf("  %-40s %7.2f %% (max %.2f)\n", "CPU used while waiting",
           series_median(&cpu), series_max(&cpu));
    printf("  %-40s %7.1f us (min %.1f, max %.1f)\n",
           "next message, send to handler", series_median(&lat),
           series_min(&lat), series_max(&lat));
    printf("  %-40s %7.1f us (min %.1f, max %.1f)\n",
           "raw futex wake of an idle process (limit)", series_median(&fx),
           series_min(&fx), series_max(&fx));
    target("CPU while waiting for a silent peer", series_max(&cpu), 10, 1,
           "%");
    target("next message after a long wait", series_median(&lat), 50, 1,
           "us");
}

/* ---- main ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: shoalrun -n 2 shoal-bench [options]\n"
            "  --tests LIST   comma list of limits,latency,rate,bandwidth,\n"
            "                 barrier,wake,ring,bsp (default: all but bsp;\n"
            "                 with more than 2 ranks only barrier and ring)\n"
            "  --reps N       repetitions, medians reported (default 11)\n"
            "  --max-size S   largest message in bytes (default 4194304)\n"
            "  --wait S       seconds of the long-wait test (default 1)\n"
            "  --quick        a tenth of the iterations (smoke test)\n");
}

static unsigned parse_tests(const char *list)
{
    static const char *const names[] = {"limits",  "latency", "rate",
                                        "bandwidth", "barrier", "wake",
                                        "ring",    "bsp"};
    unsigned bits = 0;
    char *copy = strdup(list), *save = NULL;

    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned found = 0;
        for (unsigned i = 0; i < 8; i++)
            if (strcmp(t, names[i]) == 0)
                found = 1u << i;
        if (!found) {
            fprintf(stderr, "shoal-bench: unknown test '%s'\n", t);
            usage(stderr);
            exit(2);
        }
        bits |= found;
    }
    free(copy);
    return bits;
}

static void parse(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tests", required_argument, 0, 't'}, {"reps", required_argument, 0, 'r'},
        {"max-size", required_argument, 0, 'm'}, {"wait", required_argument, 0, 'w'},
        {"quick", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': bench_opts.tests = parse_tests(optarg); break;
        case 'r': bench_opts.reps = atoi(optarg); break;
        case 'm': bench_opts.max_size = strtoull(optarg, NULL, 0); break;
        case 'w': bench_opts.wait_s = atof(optarg); break;
        case 'q': bench_opts.quick = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (bench_opts.reps < 1 || bench_opts.reps > 64 || bench_opts.max_size < 4096 ||
        bench_opts.wait_s < 0) {
        fprintf(stderr, "shoal-bench: --reps 1..64, --max-size >= 4096, --wait >= 0\n");
        exit(2);
    }
    if (bench_opts.quick && bench_opts.reps > 3)
        bench_opts.reps = 3;
    if (bench_opts.quick && bench_opts.wait_s > 0.2)
        bench_opts.wait_s = 0.2;
}

static void header(void)
{
    char model[128] = "unknown CPU", line[256];
    struct utsname u;
    FILE *f = fopen("/proc/cpuinfo", "r");
    shoal_job_info_t job;

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            p = p ? p + 2 : line;
            p[strcspn(p, "\n")] = '\0';
            snprintf(model, sizeof(model), "%.100s", p);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f)
        fclose(f);
    uname(&u);
    T_OK(shoal_job_info(&job));
    printf("shoal-bench %s: %d ranks (%d on this host), %ld CPUs (%s), "
           "Linux %s\n",
           SHOAL_VERSION_STRING, job.size, job.local_size,
           sysconf(_SC_NPROCESSORS_ONLN), model, u.release);
    printf("medians of %d repetitions%s; tests interleaved with the limits "
           "they are compared to\n",
           bench_opts.reps, bench_opts.quick ? " (quick)" : "");
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    T_OK(shoal_init(NULL));
    bench_rank = shoal_rank();
    bench_size = shoal_size();
    T_RANK(bench_rank);
    T_OK(shoal_segment_alloc(bench_opts.max_size, &bench_seg));
    bench_seg_priv = calloc(1, bench_opts.max_size);
    bench_am_init();
    if (bench_rank == 0)
        header();
    if (bench_size < 2) {
        if (bench_rank == 0)
            printf("\nrun with 2 ranks (shoalrun -n 2 shoal-bench) for the "
                   "pairwise tests\n");
        bench_opts.tests &= BENCH_T_BARRIER;
    } else if (bench_size > 2) {
        bench_opts.tests &= BENCH_T_BARRIER | BENCH_T_RING | BENCH_T_BSP;
    }
    if (bench_opts.tests & ~(BENCH_T_BARRIER | BENCH_T_RING | BENCH_T_BSP))
        bench_limits_setup();
    if (bench_opts.tests & BENCH_T_LATENCY)
        run_latency();
    if (bench_opts.tests & BENCH_T_RATE)
        run_rate();
    if (bench_opts.tests & BENCH_T_BANDWIDTH)
        run_bandwidth();
    if (bench_opts.tests & BENCH_T_BARRIER)
        run_barrier();
    if (bench_opts.tests & BENCH_T_RING)
        run_ring();
    if (bench_opts.tests & BENCH_T_BSP)
        run_bsp();
    if (bench_opts.tests & BENCH_T_WAKE)
        run_wake();
    print_targets();
    bench_barrier();
    T_OK(shoal_finalize());
    return 0;
}
