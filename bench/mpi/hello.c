/*
 * Hello world for startup and memory measurements (bench/startup).
 *
 *   hello            MPI_Init, rank and size, rank 0 prints one line,
 *                    MPI_Finalize: what `launcher -n N hello` times.
 *   hello --mem      also, right after MPI_Init and before any
 *                    communication, each rank reads its own Rss and Pss
 *                    from /proc/self/smaps_rollup; then rank 0 gathers them
 *                    and prints "# mem rss_kib pss_kib" lines (median, mean
 *                    and largest over ranks) and "rss_median KIB" and
 *                    "pss_median KIB" value lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rss and Pss of this process in KiB, from smaps_rollup; -1 when absent. */
static void own_memory(double *rss, double *pss)
{
    char line[256];
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    *rss = *pss = -1;
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        double v;
        if (sscanf(line, "Rss: %lf", &v) == 1)
            *rss = v;
        else if (sscanf(line, "Pss: %lf", &v) == 1)
            *pss = v;
    }
    fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summary(const char *name, double *v, int n)
{
    double sum = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int i = 0; i < n; i++)
        sum += v[i];
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("# %s_kib median %.0f mean %.0f max %.0f min %.0f\n", name, med,
           sum / n, v[n - 1], v[0]);
    printf("%s_median %.0f\n", name, med);
}

int main(int argc, char **argv)
{
    int rank, size, mem = argc > 1 && strcmp(argv[1], "--mem") == 0;
    double own[2];
    MPI_Init(&argc, &argv);
    if (mem)
        own_memory(&own[0], &own[1]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (mem) {
        double *all = rank == 0 ? malloc(sizeof(double) * 2 * (size_t)size)
                                : NULL;
        MPI_Gather(own, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
        if (rank == 0) {
            double *rss = malloc(sizeof(double) * (size_t)size);
            double *pss = malloc(sizeof(double) * (size_t)size);
            for (int i = 0; i < size; i++) {
                rss[i] = all[2 * i];
                pss[i] = all[2 * i + 1];
            }
            summary("rss", rss, size);
            summary("pss", pss, size);
            free(rss);
            free(pss);
            free(all);
        }
    } else if (rank == 0) {
        printf("hello from rank 0 of %d\n", size);
    }
    MPI_Finalize();
    return 0;
}
