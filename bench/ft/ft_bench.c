/*
 * Fault tolerance measurements (docs/FT.md, docs/PERFORMANCE.md), under
 * shoalrun --ft:
 *   agree   median time of MPIX_Comm_agree without failures (each rank
 *           times its own calls; the slowest rank's median is reported)
 *   shrink  median time of MPIX_Comm_shrink + MPI_Comm_free, no failures
 *   detect  the last rank kills itself after writing the time (monotonic
 *           clock, shared by the host's processes) to a file; each
 *           survivor waits in MPI_Recv from it and notes when the
 *           MPIX_ERR_PROC_FAILED came; reported: the slowest survivor's
 *           delay, the time until every survivor has also agreed
 *           (MPIX_Comm_agree) and shrunk, and the first survivor's delay
 *           (the slowest's minus the first's: how long the news took to
 *           spread, bench/ft/notice_run)
 *   detect_cold
 *           the same without the barrier first, which opens connections
 *           (to the victim too): across pretend hosts the survivors the
 *           ring does not tie to the victim learn of it from notices only
 * usage: ft_bench agree|shrink|detect|detect_cold [ITERS] [FILE]
 */
#define _GNU_SOURCE
#include <mpi-ext.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "agree";
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    const char *file = argc > 3 ? argv[3] : "/dev/shm/shoal-ft-bench-t0";
    int me, np;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (strcmp(what, "agree") == 0 || strcmp(what, "shrink") == 0) {
        double *t = malloc((size_t)iters * sizeof(double)), m, worst;
        int shrink = what[0] == 's';
        for (int i = -iters / 10; i < iters; i++) {
            int flag = 1;
            MPI_Comm nc;
            double t0 = now_us();
            if (shrink) {
                MPIX_Comm_shrink(MPI_COMM_WORLD, &nc);
                MPI_Comm_free(&nc);
            } else {
                MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
            }
            if (i >= 0)
                t[i] = now_us() - t0;
        }
        m = median(t, iters);
        MPI_Reduce(&m, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (me == 0)
            printf("%s np=%d median %.2f us (slowest rank's median, %d "
                   "calls)\n", what, np, worst, iters);
        free(t);
    } else if (strcmp(what, "detect") == 0 ||
               strcmp(what, "detect_cold") == 0) {
        int victim = np - 1, buf, flag = 1;
        double t0 = 0, t1, t2, d[2], worst[2], first;
        MPI_Comm nc;
        if (strcmp(what, "detect") == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        if (me == victim) {
            usleep(100000); /* the others are asleep in MPI_Recv by now */
            FILE *f = fopen(file, "w");
            fprintf(f, "%.3f\n", now_us());
            fclose(f);
            raise(SIGKILL);
        }
        int rc = MPI_Recv(&buf, 1, MPI_INT, victim, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        t1 = now_us();
        MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        MPIX_Comm_shrink(MPI_COMM_WORLD, &nc);
        t2 = now_us();
        FILE *f = fopen(file, "r");
        if (f == NULL || fscanf(f, "%lf", &t0) != 1) {
            fprintf(stderr, "no time from the victim\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
        d[0] = t1 - t0;
        d[1] = t2 - t0;
        MPI_Reduce(d, worst, 2, MPI_DOUBLE, MPI_MAX, 0, nc);
        MPI_Reduce(d, &first, 1, MPI_DOUBLE, MPI_MIN, 0, nc);
        if (me == 0) {
            int cls;
            MPI_Error_class(rc, &cls);
            printf("detect np=%d: every survivor knew after %.1f ms "
                   "(class %d), agreed and shrunk after %.1f ms; the first "
                   "knew after %.2f ms\n",
                   np, worst[0] / 1e3, cls, worst[1] / 1e3, first / 1e3);
            unlink(file);
        }
        MPI_Comm_free(&nc);
    }
    MPI_Finalize();
    return 0;
}
