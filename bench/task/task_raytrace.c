/*
 * The task runtime's ray tracer (bench/task, the thesis's B5): the image of
 * seq_raytrace computed by --jobs jobs of one block, job j tracing the
 * rows rt_job_rows gives it straight into the image in the shared heap.
 * A pixel depends only on the scene and its coordinates, so the image is
 * bit-identical to the sequential program's at every granularity, on any
 * number of workers, whatever copies ran twice or were killed.
 *
 *   shoalrun -n N task_raytrace [--width W] [--height H] [--samples S]
 *                               [--depth D] [--seed N] [--jobs J]
 *                               [--out FILE.ppm]
 *
 * --jobs defaults to 64 (at most --height).  Prints the lines of
 * seq_raytrace (bench/task/workload/cli.h): `time` is the block alone, from
 * SHOAL_PARBEGIN to the merged image after SHOAL_PAREND, measured by the
 * root job (a benchmark may read the clock there: the value stays in
 * private memory and only reaches stdout).  --out is written by the root
 * job after the block, the one file the program writes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <shoal/task.h>

#include "workload/cli.h"
#include "workload/raytrace.h"

/* What every job gets: the scene's parameters (each job builds the scene
 * itself, a few microseconds) and where the image is. */
struct rt_job_arg {
    int width, height, samples, depth, jobs;
    uint64_t seed;
    unsigned char *img; /* in the shared heap */
};

SHOAL_TASK_ROUTINE(trace_band)
{
    const struct rt_job_arg *a = arg;
    struct rt_scene scene;
    (void)len;
    if (rt_scene_default(&scene, a->width, a->height, a->samples, a->depth,
                         a->seed))
        return; /* the root checked the parameters */
    int y0, y1;
    rt_job_rows(a->height, width, id, &y0, &y1);
    rt_trace_rows(&scene, y0, y1, a->img + (size_t)y0 * a->width * 3);
}

static int task_main(int argc, char **argv)
{
    struct wl_rt_opts o;
    int rc = wl_rt_parse(&o, argc, argv, "task_raytrace");
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.jobs == 0)
        o.jobs = o.height < 64 ? o.height : 64;
    struct rt_scene scene;
    if (rt_scene_default(&scene, o.width, o.height, o.samples, o.depth,
                         o.seed)) {
        fprintf(stderr, "task_raytrace: bad scene parameters\n");
        return 2;
    }
    size_t bytes = rt_image_bytes(&scene);
    /* (Zeroed first: its padding travels too, and two runs of the root,
     * a redundant copy say, must send the same bytes.) */
    struct rt_job_arg a;
    memset(&a, 0, sizeof a);
    a.width = o.width;
    a.height = o.height;
    a.samples = o.samples;
    a.depth = o.depth;
    a.jobs = o.jobs;
    a.seed = o.seed;
    if (shoal_task_alloc(bytes, (void **)&a.img) != SHOAL_OK) {
        fprintf(stderr, "task_raytrace: %s (SHOAL_TASK_HEAP sets the "
                "shared heap's size)\n", shoal_error_detail());
        return 1;
    }
    double t0 = wl_now();
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(o.jobs, trace_band, &a, sizeof a);
    SHOAL_PAREND;
    double t = wl_now() - t0;
    printf("# raytrace task runtime %dx%d samples %d depth %d seed %" PRIu64
           " jobs %d\n", o.width, o.height, o.samples, o.depth, o.seed,
           o.jobs);
    printf("time %.6f\n", t);
    printf("checksum %016" PRIx64 "\n", rt_checksum(a.img, bytes));
    if (o.out) {
        FILE *f = fopen(o.out, "wb");
        if (!f || rt_write_ppm(f, &scene, a.img) || fclose(f)) {
            perror(o.out);
            return 1;
        }
    }
    return 0;
}
SHOAL_TASK_MAIN(task_main)
