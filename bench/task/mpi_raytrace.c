/*
 * The MPI baselines of bench/task's ray trace: the --jobs bands of rows
 * split among the ranks, each band traced with rt_trace_rows, the image
 * put together on rank 0, which prints the time and checksum and writes
 * the PPM.
 *
 *   mpi_raytrace [--cyclic | --dynamic] [ray trace options of seq_raytrace]
 *
 * Static split (the default): the bands are dealt out before anything
 * runs, rank r the bands from r*J/P to (r+1)*J/P (contiguous blocks), or
 * with --cyclic band j to rank j mod P (with --jobs equal to --height, rows
 * dealt round-robin: the best balanced static split); then MPI_Gatherv.
 * Nothing is rebalanced, so when a rank is slowed the job waits for it: the
 * split the task runtime's eager scheduling is measured against.
 *
 * --dynamic: master-worker self-scheduling, the PVM-style ray tracer of the
 * thesis's comparison: every rank but 0 asks rank 0 for bands (two ahead),
 * traces each, sends it back as its next request; rank 0 answers requests
 * between bands of its own.  A slow rank simply takes fewer bands.
 *
 * --jobs J defaults to the number of ranks (static) or 4 per rank
 * (dynamic).  Any MPI: shoalcc, mpicc.openmpi, mpicc.mpich.  `time` is
 * rank 0's time from a barrier to the whole image; the "# seconds per
 * rank" line has each rank's time spent tracing.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/cli.h"
#include "workload/raytrace.h"

#define TAG_ASK 1       /* a worker's first request, empty */
#define TAG_BAND 2      /* a band's rows, band index first; also a request */
#define TAG_GIVE 3      /* rank 0's answer: a band index, or -1 to stop */
/* Requests a worker keeps outstanding: its next band is already assigned
 * when it finishes one, so it does not wait while rank 0 traces. */
#define AHEAD 2

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

static void *must_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "mpi_raytrace: no memory for %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* The static split; img (rank 0) receives the image.  Returns this rank's
 * tracing time. */
static double trace_static(const struct rt_scene *scene, int jobs,
                           int cyclic, int rank, int ranks,
                           unsigned char *img)
{
    size_t row = (size_t)scene->width * 3, mine = 0;
    for (int j = 0; j < jobs; j++) {
        int y0, y1;
        rt_job_rows(scene->height, jobs, j, &y0, &y1);
        if (owner(j, jobs, ranks, cyclic) == rank)
            mine += (size_t)(y1 - y0) * row;
    }
    unsigned char *part = must_alloc(mine);
    double t0 = MPI_Wtime();
    size_t at = 0;
    for (int j = 0; j < jobs; j++) {
        int y0, y1;
        rt_job_rows(scene->height, jobs, j, &y0, &y1);
        if (owner(j, jobs, ranks, cyclic) != rank)
            continue;
        rt_trace_rows(scene, y0, y1, part + at);
        at += (size_t)(y1 - y0) * row;
    }
    double traced = MPI_Wtime() - t0;

    int count = (int)mine, *counts = NULL, *displs = NULL;
    unsigned char *packed = NULL;
    if (rank == 0) {
        counts = must_alloc((size_t)ranks * sizeof *counts);
        displs = must_alloc((size_t)ranks * sizeof *displs);
        packed = must_alloc(rt_image_bytes(scene));
    }
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        displs[0] = 0;
        for (int r = 1; r < ranks; r++)
            displs[r] = displs[r - 1] + counts[r - 1];
    }
    MPI_Gatherv(part, count, MPI_UNSIGNED_CHAR, packed, counts, displs,
                MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        /* Unpack: each rank's bands in band order. */
        for (int j = 0; j < jobs; j++) {
            int y0, y1;
            rt_job_rows(scene->height, jobs, j, &y0, &y1);
            int r = owner(j, jobs, ranks, cyclic);
            size_t len = (size_t)(y1 - y0) * row;
            memcpy(img + (size_t)y0 * row, packed + displs[r], len);
            displs[r] += (int)len;
        }
    }
    free(part);
    free(packed);
    free(counts);
    free(displs);
    return traced;
}

/* Rank 0 of --dynamic: a message from a worker (a first request or a band
 * with the next request) is taken in and answered with the next band, or
 * -1 when none is left.  Returns 1 when that worker was told to stop. */
static int serve(const struct rt_scene *scene, int jobs, int *next,
                 unsigned char *img, unsigned char *buf, MPI_Status *st)
{
    size_t row = (size_t)scene->width * 3;
    if (st->MPI_TAG == TAG_BAND) {
        int count;
        MPI_Get_count(st, MPI_UNSIGNED_CHAR, &count);
        MPI_Recv(buf, count, MPI_UNSIGNED_CHAR, st->MPI_SOURCE, TAG_BAND,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int j, y0, y1;
        memcpy(&j, buf, sizeof j);
        rt_job_rows(scene->height, jobs, j, &y0, &y1);
        memcpy(img + (size_t)y0 * row, buf + sizeof j,
               (size_t)(y1 - y0) * row);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, st->MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    int give = *next < jobs ? (*next)++ : -1;
    MPI_Send(&give, 1, MPI_INT, st->MPI_SOURCE, TAG_GIVE, MPI_COMM_WORLD);
    return give < 0;
}

/* Master-worker self-scheduling; img (rank 0) receives the image. */
static double trace_dynamic(const struct rt_scene *scene, int jobs,
                            int rank, int ranks, unsigned char *img)
{
    size_t row = (size_t)scene->width * 3, most = 0;
    for (int j = 0; j < jobs; j++) {
        int y0, y1;
        rt_job_rows(scene->height, jobs, j, &y0, &y1);
        if ((size_t)(y1 - y0) * row > most)
            most = (size_t)(y1 - y0) * row;
    }
    unsigned char *buf = must_alloc(sizeof(int) + most);
    double traced = 0;
    if (rank == 0) {
        /* Requests still to be answered with -1. */
        int next = 0, working = AHEAD * (ranks - 1);
        while (working > 0 || next < jobs) {
            int flag = 0;
            MPI_Status st;
            if (working > 0)
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                           &flag, &st);
            if (flag) {
                working -= serve(scene, jobs, &next, img, buf, &st);
            } else if (next < jobs) {
                int j = next++, y0, y1;
                rt_job_rows(scene->height, jobs, j, &y0, &y1);
                double t0 = MPI_Wtime();
                rt_trace_rows(scene, y0, y1, img + (size_t)y0 * row);
                traced += MPI_Wtime() - t0;
            } else {
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                working -= serve(scene, jobs, &next, img, buf, &st);
            }
        }
    } else {
        for (int k = 0; k < AHEAD; k++)
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ASK, MPI_COMM_WORLD);
        for (int asked = AHEAD; asked > 0;) {
            int j, y0, y1;
            MPI_Recv(&j, 1, MPI_INT, 0, TAG_GIVE, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            asked--;
            if (j < 0)
                continue;
            asked++;   /* the band sent back asks for the next one */
            rt_job_rows(scene->height, jobs, j, &y0, &y1);
            double t0 = MPI_Wtime();
            rt_trace_rows(scene, y0, y1, buf + sizeof j);
            traced += MPI_Wtime() - t0;
            memcpy(buf, &j, sizeof j);
            MPI_Send(buf, (int)(sizeof j + (size_t)(y1 - y0) * row),
                     MPI_UNSIGNED_CHAR, 0, TAG_BAND, MPI_COMM_WORLD);
        }
    }
    free(buf);
    return traced;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    /* --cyclic and --dynamic are ours; the rest are the ray tracer's. */
    int cyclic = 0, dynamic = 0, n = 1;
    char **args = must_alloc(((size_t)argc + 1) * sizeof *args);
    args[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cyclic"))
            cyclic = 1;
        else if (!strcmp(argv[i], "--dynamic"))
            dynamic = 1;
        else
            args[n++] = argv[i];
    }
    args[n] = NULL;
    struct wl_rt_opts o;
    int rc = wl_rt_parse(&o, n, args, "mpi_raytrace");
    free(args);
    if (rc == 0 && cyclic && dynamic) {
        fprintf(stderr, "mpi_raytrace: --cyclic or --dynamic, not both\n");
        rc = -1;
    }
    if (rc) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (o.jobs == 0)
        o.jobs = dynamic ? 4 * ranks : ranks;
    if (o.jobs > o.height)
        o.jobs = o.height;
    struct rt_scene scene;
    if (rt_scene_default(&scene, o.width, o.height, o.samples, o.depth,
                         o.seed)) {
        if (rank == 0)
            fprintf(stderr, "mpi_raytrace: bad scene parameters\n");
        MPI_Finalize();
        return 2;
    }
    unsigned char *img = rank == 0 ? must_alloc(rt_image_bytes(&scene))
                                   : NULL;
    double *per_rank = rank == 0 ? must_alloc((size_t)ranks *
                                              sizeof *per_rank) : NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double traced = dynamic ? trace_dynamic(&scene, o.jobs, rank, ranks, img)
                            : trace_static(&scene, o.jobs, cyclic, rank,
                                           ranks, img);
    double t = MPI_Wtime() - t0;
    MPI_Gather(&traced, 1, MPI_DOUBLE, per_rank, 1, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);

    int bad = 0;
    if (rank == 0) {
        printf("# raytrace mpi %s %dx%d samples %d depth %d seed %" PRIu64
               " jobs %d ranks %d\n", dynamic ? "dynamic" : cyclic ?
               "static cyclic" : "static block", o.width, o.height,
               o.samples, o.depth, o.seed, o.jobs, ranks);
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
    free(img);
    free(per_rank);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad;
}
