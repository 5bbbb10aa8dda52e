/*
 * The OpenMP ray tracer of bench/task: the --jobs bands of
 * seq_raytrace handed to OMP_NUM_THREADS threads one at a time
 * (schedule(dynamic, 1)), in one shared image.  Shared memory, no
 * failures, no copies: the upper bound on one host for the model the task
 * runtime serves (digest 002, section 7.4).
 *
 *   OMP_NUM_THREADS=N omp_raytrace [ray trace options of seq_raytrace]
 *
 * --jobs defaults to 16 per thread.
 */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload/cli.h"
#include "workload/raytrace.h"

int main(int argc, char **argv)
{
    struct wl_rt_opts o;
    int rc = wl_rt_parse(&o, argc, argv, "omp_raytrace");
    if (rc)
        return rc > 0 ? 0 : 2;
    int threads = omp_get_max_threads();
    if (o.jobs == 0)
        o.jobs = 16 * threads < o.height ? 16 * threads : o.height;
    struct rt_scene scene;
    if (rt_scene_default(&scene, o.width, o.height, o.samples, o.depth,
                         o.seed)) {
        fprintf(stderr, "omp_raytrace: bad scene parameters\n");
        return 2;
    }
    size_t bytes = rt_image_bytes(&scene), row = (size_t)scene.width * 3;
    unsigned char *img = malloc(bytes);
    if (!img) {
        fprintf(stderr, "omp_raytrace: no memory for %zu bytes\n", bytes);
        return 1;
    }
    double t0 = wl_now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int j = 0; j < o.jobs; j++) {
        int y0, y1;
        rt_job_rows(scene.height, o.jobs, j, &y0, &y1);
        rt_trace_rows(&scene, y0, y1, img + (size_t)y0 * row);
    }
    double t = wl_now() - t0;
    printf("# raytrace openmp %dx%d samples %d depth %d seed %" PRIu64
           " jobs %d threads %d\n", o.width, o.height, o.samples, o.depth,
           o.seed, o.jobs, threads);
    printf("time %.6f\n", t);
    printf("checksum %016" PRIx64 "\n", rt_checksum(img, bytes));
    if (o.out) {
        FILE *f = fopen(o.out, "wb");
        if (!f || rt_write_ppm(f, &scene, img) || fclose(f)) {
            perror(o.out);
            free(img);
            return 1;
        }
    }
    free(img);
    return 0;
}
