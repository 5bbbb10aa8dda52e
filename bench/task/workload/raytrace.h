/*
 * The ray-trace workload of bench/task (issue 17, the thesis's B5): a
 * deterministic 36-sphere scene and a pure function that computes any band
 * of image rows.  The sequential program, the MPI static split and the
 * task runtime's version all call rt_trace_rows on the same scene, so their
 * images are bit-identical whatever the split: a pixel depends only on the
 * scene and its own coordinates (its antialiasing jitter comes from a hash
 * of (seed, x, y, sample), not from a stream shared between pixels).
 *
 * Floating point: only +, -, *, /, sqrt and floor, all exact or correctly
 * rounded in IEEE double, so the same binary gives the same bytes on every
 * x86-64 host.
 * Compile without -ffast-math and without FMA contraction
 * (-ffp-contract=off) for images equal across compilers and flags.
 */
#ifndef SHOAL_BENCH_TASK_RAYTRACE_H
#define SHOAL_BENCH_TASK_RAYTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_MAX_SPHERES 64
#define RT_MAX_LIGHTS 4
#define RT_MAX_WIDTH 16384
#define RT_MAX_HEIGHT 16384
#define RT_MAX_SAMPLES 64
#define RT_MAX_DEPTH 16

struct rt_vec {
    double x, y, z;
};

struct rt_sphere {
    struct rt_vec center;
    double radius;
    struct rt_vec color;  /* diffuse colour, 0..1 per channel */
    double reflect;       /* fraction of reflected light, 0..1 */
    int shininess;        /* Phong exponent (an integer: no pow()) */
};

struct rt_light {
    struct rt_vec pos;
    double intensity;
};

struct rt_scene {
    int width, height;     /* pixels */
    int samples;           /* jittered samples per pixel (antialiasing) */
    int depth;             /* reflection bounces */
    uint64_t seed;         /* keys the per-pixel jitter */
    struct rt_vec eye, look, up;
    double fov_scale;      /* tan(field of view / 2) */
    int nspheres;
    struct rt_sphere spheres[RT_MAX_SPHERES];
    int nlights;
    struct rt_light lights[RT_MAX_LIGHTS];
    double ambient;
};

/* The scene: 36 spheres on a 6 x 6 grid over a checkered floor, two
 * lights, sizes, colours and reflectivity drawn from a fixed generator
 * keyed by seed.  Returns 0, or -1 (nothing set) when a parameter is out of
 * range: width 1..RT_MAX_WIDTH, height 1..RT_MAX_HEIGHT, samples
 * 1..RT_MAX_SAMPLES, depth 0..RT_MAX_DEPTH. */
int rt_scene_default(struct rt_scene *s, int width, int height, int samples,
                     int depth, uint64_t seed);

/* Rows y0 (inclusive) to y1 (exclusive) of the image, top row 0, as RGB
 * bytes, (y1 - y0) * width * 3 of them at out.  Pure: reads only the scene,
 * writes only out.  0 <= y0 <= y1 <= height. */
void rt_trace_rows(const struct rt_scene *s, int y0, int y1,
                   unsigned char *out);

/* The rows of job j of `jobs` (the granularity): [j*H/jobs, (j+1)*H/jobs).
 * Every implementation splits the image this way.  1 <= jobs <= height. */
void rt_job_rows(int height, int jobs, int j, int *y0, int *y1);

/* Bytes of a full image: width * height * 3. */
size_t rt_image_bytes(const struct rt_scene *s);

/* Writes the image as a binary PPM (P6).  0, or -1 on a write error. */
int rt_write_ppm(FILE *f, const struct rt_scene *s, const unsigned char *img);

/* FNV-1a 64 over the image bytes: the checksum every program prints. */
uint64_t rt_checksum(const unsigned char *img, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
