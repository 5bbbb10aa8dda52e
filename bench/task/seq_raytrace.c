/*
 * The sequential ray tracer of bench/task: the optimized sequential C
 * program speedups are measured against (as the thesis did).  The image is
 * computed as --jobs bands of rows, one rt_trace_rows call each, so the
 * cost of a granularity can be seen without any parallel machinery (the
 * bytes are the same at every granularity).
 *
 *   seq_raytrace [--width W] [--height H] [--samples S] [--depth D]
 *                [--seed N] [--jobs J] [--out FILE.ppm]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload/cli.h"
#include "workload/raytrace.h"

int main(int argc, char **argv)
{
    struct wl_rt_opts o;
    int rc = wl_rt_parse(&o, argc, argv, "seq_raytrace");
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.jobs == 0)
        o.jobs = 1;
    struct rt_scene scene;
    if (rt_scene_default(&scene, o.width, o.height, o.samples, o.depth,
                         o.seed)) {
        fprintf(stderr, "seq_raytrace: bad scene parameters\n");
        return 2;
    }
    size_t bytes = rt_image_bytes(&scene);
    unsigned char *img = malloc(bytes);
    if (!img) {
        fprintf(stderr, "seq_raytrace: no memory for %zu bytes\n", bytes);
        return 1;
    }
    size_t row = (size_t)scene.width * 3;
    double t0 = wl_now();
    for (int j = 0; j < o.jobs; j++) {
        int y0, y1;
        rt_job_rows(scene.height, o.jobs, j, &y0, &y1);
        rt_trace_rows(&scene, y0, y1, img + (size_t)y0 * row);
    }
    double t = wl_now() - t0;
    printf("# raytrace sequential %dx%d samples %d depth %d seed %" PRIu64
           " jobs %d\n", o.width, o.height, o.samples, o.depth, o.seed,
           o.jobs);
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
