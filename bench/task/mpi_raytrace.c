/*
 * The MPI static-split baseline of bench/task: the ray trace's --jobs bands
 * of rows dealt out to the ranks before anything runs, each rank tracing
 * its own with rt_trace_rows, then gathered to rank 0, which prints the
 * time and checksum and writes the PPM.  Nothing is rebalanced, so when a
 * rank is slowed the job waits for it: the split the task runtime's eager
 * scheduling is measured against.
 *
 *   mpi_raytrace [--cyclic] [ray trace options of seq_raytrace]
 *
 * --jobs J (default: the number of ranks) bands, rank r the bands from
 * r*J/P to (r+1)*J/P (contiguous blocks), or with --cyclic band j to rank
 * j mod P (with --jobs equal to --height, rows dealt round-robin: the best
 * balanced static split).  Any MPI: shoalcc, mpicc.openmpi, mpicc.mpich.
 * `time` is rank 0's time from a barrier to the last row gathered; the
 * "# seconds per rank" line has each rank's tracing time.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/cli.h"
#include "workload/raytrace.h"

static int owner(int j, int jobs, int ranks, int cyclic)
{
    if (cyclic)
        return j % ranks;
    /* Rank r holds bands [r*J/P, (r+1)*J/P): the last r whose start is at
     * or before j. */
    int r = (int)((long long)j * ranks / jobs);
    while (r + 1 < ranks && (long long)(r + 1) * jobs / ranks <= j)
        r++;
    while (r > 0 && (long long)r * jobs / ranks > j)
        r--;
    return r;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    /* --cyclic is ours; the rest are the ray tracer's. */
    int cyclic = 0, n = 1;
    char **args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args)
        MPI_Abort(MPI_COMM_WORLD, 1);
    args[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cyclic"))
            cyclic = 1;
        else
            args[n++] = argv[i];
    }
    args[n] = NULL;
    struct wl_rt_opts o;
    int rc = wl_rt_parse(&o, n, args, "mpi_raytrace");
    free(args);
    if (rc) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (o.jobs == 0)
        o.jobs = ranks < o.height ? ranks : o.height;
    struct rt_scene scene;
    if (rt_scene_default(&scene, o.width, o.height, o.samples, o.depth,
                         o.seed)) {
        if (rank == 0)
            fprintf(stderr, "mpi_raytrace: bad scene parameters\n");
        MPI_Finalize();
        return 2;
    }
    size_t row = (size_t)scene.width * 3;

    /* My bands, packed one after another. */
    size_t mine = 0;
    for (int j = 0; j < o.jobs; j++) {
        int y0, y1;
        rt_job_rows(scene.height, o.jobs, j, &y0, &y1);
        if (owner(j, o.jobs, ranks, cyclic) == rank)
            mine += (size_t)(y1 - y0) * row;
    }
    unsigned char *part = malloc(mine ? mine : 1);
    unsigned char *img = NULL, *packed = NULL;
    int *counts = NULL, *displs = NULL;
    if (rank == 0) {
        img = malloc(rt_image_bytes(&scene));
        packed = malloc(rt_image_bytes(&scene));
        counts = calloc((size_t)ranks, sizeof *counts);
        displs = calloc((size_t)ranks, sizeof *displs);
        if (!img || !packed || !counts || !displs)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!part)
        MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    size_t at = 0;
    for (int j = 0; j < o.jobs; j++) {
        int y0, y1;
        rt_job_rows(scene.height, o.jobs, j, &y0, &y1);
        if (owner(j, o.jobs, ranks, cyclic) != rank)
            continue;
        rt_trace_rows(&scene, y0, y1, part + at);
        at += (size_t)(y1 - y0) * row;
    }
    double traced = MPI_Wtime() - t0;
    int count = (int)mine;
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 1; r < ranks; r++)
            displs[r] = displs[r - 1] + counts[r - 1];
    MPI_Gatherv(part, count, MPI_UNSIGNED_CHAR, packed, counts, displs,
                MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    double *per_rank = rank == 0 ? malloc((size_t)ranks * sizeof *per_rank)
                                 : NULL;
    if (rank == 0 && !per_rank)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&traced, 1, MPI_DOUBLE, per_rank, 1, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);

    int bad = 0;
    if (rank == 0) {
        /* Unpack: each rank's bands in job order. */
        size_t *next = calloc((size_t)ranks, sizeof *next);
        if (!next)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int j = 0; j < o.jobs; j++) {
            int y0, y1;
            rt_job_rows(scene.height, o.jobs, j, &y0, &y1);
            int r = owner(j, o.jobs, ranks, cyclic);
            size_t len = (size_t)(y1 - y0) * row;
            memcpy(img + (size_t)y0 * row, packed + displs[r] + next[r], len);
            next[r] += len;
        }
        free(next);
        printf("# raytrace mpi static %s %dx%d samples %d depth %d seed %"
               PRIu64 " jobs %d ranks %d\n", cyclic ? "cyclic" : "block",
               o.width, o.height, o.samples, o.depth, o.seed, o.jobs, ranks);
        printf("# seconds per rank:");
        for (int r = 0; r < ranks; r++)
            printf(" %.6f", per_rank[r]);
        printf("\ntime %.6f\n", t);
        printf("checksum %016" PRIx64 "\n",
               rt_checksum(img, rt_image_bytes(&scene)));
        fflush(stdout);
        if (o.out) {
            FILE *f = fopen(o.out, "wb");
            if (!f || rt_write_ppm(f, &scene, img) || fclose(f)) {
                perror(o.out);
                bad = 1;
            }
        }
    }
    free(part);
    free(img);
    free(packed);
    free(counts);
    free(displs);
    free(per_rank);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad;
}
