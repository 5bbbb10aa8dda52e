/*
 * The ray-trace workload (raytrace.h): Whitted-style tracing of spheres
 * over a checkered floor, with shadows, Phong highlights, mirror
 * reflections and jittered antialiasing.
 */
#include "raytrace.h"

#include <math.h>
#include <string.h>

#define RT_EPS 1e-9
#define RT_FAR 1e30

static struct rt_vec v3(double x, double y, double z)
{
    struct rt_vec v = { x, y, z };
    return v;
}

static struct rt_vec vadd(struct rt_vec a, struct rt_vec b)
{
    return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}

static struct rt_vec vsub(struct rt_vec a, struct rt_vec b)
{
    return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}

static struct rt_vec vscale(struct rt_vec a, double k)
{
    return v3(a.x * k, a.y * k, a.z * k);
}

static double vdot(struct rt_vec a, struct rt_vec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static struct rt_vec vcross(struct rt_vec a, struct rt_vec b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z,
              a.x * b.y - a.y * b.x);
}

static struct rt_vec vnorm(struct rt_vec a)
{
    double len = sqrt(vdot(a, a));
    return len > 0 ? vscale(a, 1.0 / len) : a;
}

/* splitmix64: the scene generator's stream and the per-pixel hash. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit_of(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

struct gen {
    uint64_t state;
};

static double gen_unit(struct gen *g)
{
    g->state += 0x9e3779b97f4a7c15ULL;
    return unit_of(mix64(g->state));
}

int rt_scene_default(struct rt_scene *s, int width, int height, int samples,
                     int depth, uint64_t seed)
{
    if (width < 1 || width > RT_MAX_WIDTH || height < 1 ||
        height > RT_MAX_HEIGHT || samples < 1 || samples > RT_MAX_SAMPLES ||
        depth < 0 || depth > RT_MAX_DEPTH)
        return -1;
    memset(s, 0, sizeof *s);
    s->width = width;
    s->height = height;
    s->samples = samples;
    s->depth = depth;
    s->seed = seed;
    s->eye = v3(0.0, 4.0, -12.0);
    s->look = v3(0.0, 0.6, 0.5);
    s->up = v3(0.0, 1.0, 0.0);
    s->fov_scale = 0.55;
    s->ambient = 0.08;

    struct gen g = { seed ^ 0x5ca1ab1e0ddba11ULL };
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            struct rt_sphere *sp = &s->spheres[s->nspheres++];
            double r = 0.35 + 0.45 * gen_unit(&g);
            sp->radius = r;
            sp->center = v3(-5.0 + 2.0 * i + 0.6 * (gen_unit(&g) - 0.5),
                            r + 0.8 * gen_unit(&g) * gen_unit(&g),
                            -3.0 + 2.0 * j + 0.6 * (gen_unit(&g) - 0.5));
            sp->color = v3(0.15 + 0.85 * gen_unit(&g),
                           0.15 + 0.85 * gen_unit(&g),
                           0.15 + 0.85 * gen_unit(&g));
            sp->reflect = gen_unit(&g) < 0.4 ? 0.3 + 0.5 * gen_unit(&g)
                                             : 0.05;
            sp->shininess = 8 + (int)(56.0 * gen_unit(&g));
        }
    }
    s->lights[0].pos = v3(-8.0, 12.0, -6.0);
    s->lights[0].intensity = 0.75;
    s->lights[1].pos = v3(9.0, 7.0, -2.0);
    s->lights[1].intensity = 0.45;
    s->nlights = 2;
    return 0;
}

struct hit {
    double t;
    int what;   /* -1 nothing, -2 floor, else sphere index */
};

/* Distance along the unit ray o + t d to the sphere's nearer surface ahead,
 * or RT_FAR when the ray misses it.  Inlined by force: a call here made
 * the whole trace 4 times slower (gcc 12 -O2 kept it out of line). */
static inline __attribute__((always_inline)) double
hit_sphere(const struct rt_sphere *sp, struct rt_vec o, struct rt_vec d)
{
    struct rt_vec oc = vsub(o, sp->center);
    double b = vdot(oc, d);
    double c = vdot(oc, oc) - sp->radius * sp->radius;
    double disc = b * b - c;
    if (disc < 0)
        return RT_FAR;
    double q = sqrt(disc);
    double t = -b - q;
    if (t <= 1e-6)
        t = -b + q;
    return t > 1e-6 ? t : RT_FAR;
}

static struct hit intersect(const struct rt_scene *s, struct rt_vec o,
                            struct rt_vec d)
{
    struct hit h = { RT_FAR, -1 };
    for (int i = 0; i < s->nspheres; i++) {
        double t = hit_sphere(&s->spheres[i], o, d);
        if (t < h.t) {
            h.t = t;
            h.what = i;
        }
    }
    if (d.y < -RT_EPS) {   /* the floor, y = 0 */
        double t = -o.y / d.y;
        if (t > 1e-6 && t < h.t) {
            h.t = t;
            h.what = -2;
        }
    }
    return h;
}

static int shadowed(const struct rt_scene *s, struct rt_vec p,
                    struct rt_vec to_light, double dist)
{
    for (int i = 0; i < s->nspheres; i++)
        if (hit_sphere(&s->spheres[i], p, to_light) < dist)
            return 1;
    return 0;
}

static double ipow(double x, int n)
{
    double r = 1.0;
    while (n > 0) {
        if (n & 1)
            r *= x;
        x *= x;
        n >>= 1;
    }
    return r;
}

static struct rt_vec shade(const struct rt_scene *s, struct rt_vec o,
                           struct rt_vec d, int depth)
{
    struct hit h = intersect(s, o, d);
    if (h.what == -1) {   /* sky */
        double k = 0.5 * (d.y + 1.0);
        return vadd(vscale(v3(0.9, 0.9, 0.95), 1.0 - k),
                    vscale(v3(0.35, 0.55, 0.95), k));
    }
    struct rt_vec p = vadd(o, vscale(d, h.t));
    struct rt_vec n, color;
    double reflect;
    int shininess;
    if (h.what == -2) {
        n = v3(0.0, 1.0, 0.0);
        long cx = (long)floor(p.x), cz = (long)floor(p.z);
        color = ((cx + cz) & 1) ? v3(0.85, 0.85, 0.8) : v3(0.2, 0.2, 0.25);
        reflect = 0.2;
        shininess = 16;
    } else {
        const struct rt_sphere *sp = &s->spheres[h.what];
        n = vnorm(vsub(p, sp->center));
        color = sp->color;
        reflect = sp->reflect;
        shininess = sp->shininess;
    }
    struct rt_vec local = vscale(color, s->ambient);
    for (int l = 0; l < s->nlights; l++) {
        struct rt_vec to = vsub(s->lights[l].pos, p);
        double dist = sqrt(vdot(to, to));
        to = vscale(to, 1.0 / dist);
        double lambert = vdot(n, to);
        if (lambert <= 0 || shadowed(s, p, to, dist))
            continue;
        local = vadd(local, vscale(color, lambert * s->lights[l].intensity));
        struct rt_vec r = vsub(vscale(n, 2.0 * lambert), to);
        double spec = -vdot(r, d);
        if (spec > 0)
            local = vadd(local, vscale(v3(1, 1, 1),
                                       ipow(spec, shininess) *
                                           s->lights[l].intensity));
    }
    if (depth > 0 && reflect > 0.01) {
        struct rt_vec rd = vnorm(vsub(d, vscale(n, 2.0 * vdot(d, n))));
        struct rt_vec rc = shade(s, p, rd, depth - 1);
        local = vadd(vscale(local, 1.0 - reflect), vscale(rc, reflect));
    }
    return local;
}

static unsigned char to_byte(double c)
{
    if (!(c > 0))
        return 0;
    c = sqrt(c);              /* gamma 2 */
    if (c >= 1.0)
        return 255;
    return (unsigned char)(c * 255.0 + 0.5);
}

void rt_trace_rows(const struct rt_scene *s, int y0, int y1,
                   unsigned char *out)
{
    struct rt_vec fwd = vnorm(vsub(s->look, s->eye));
    struct rt_vec right = vnorm(vcross(s->up, fwd));
    struct rt_vec up = vcross(fwd, right);
    double aspect = (double)s->width / (double)s->height;
    double inv = 1.0 / (double)s->samples;
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < s->width; x++) {
            struct rt_vec acc = v3(0, 0, 0);
            uint64_t key = mix64(s->seed ^ mix64(((uint64_t)(unsigned)y
                                                  << 32) | (unsigned)x));
            for (int k = 0; k < s->samples; k++) {
                double jx = 0.5, jy = 0.5;
                if (s->samples > 1) {
                    jx = unit_of(mix64(key + 2 * (uint64_t)k));
                    jy = unit_of(mix64(key + 2 * (uint64_t)k + 1));
                }
                double u = (2.0 * ((x + jx) / s->width) - 1.0) * aspect *
                           s->fov_scale;
                double v = (1.0 - 2.0 * ((y + jy) / s->height)) *
                           s->fov_scale;
                struct rt_vec d = vnorm(vadd(fwd, vadd(vscale(right, u),
                                                       vscale(up, v))));
                acc = vadd(acc, shade(s, s->eye, d, s->depth));
            }
            acc = vscale(acc, inv);
            unsigned char *px = out + ((size_t)(y - y0) * s->width + x) * 3;
            px[0] = to_byte(acc.x);
            px[1] = to_byte(acc.y);
            px[2] = to_byte(acc.z);
        }
    }
}

void rt_job_rows(int height, int jobs, int j, int *y0, int *y1)
{
    *y0 = (int)((long long)j * height / jobs);
    *y1 = (int)((long long)(j + 1) * height / jobs);
}

size_t rt_image_bytes(const struct rt_scene *s)
{
    return (size_t)s->width * (size_t)s->height * 3;
}

int rt_write_ppm(FILE *f, const struct rt_scene *s, const unsigned char *img)
{
    if (fprintf(f, "P6\n%d %d\n255\n", s->width, s->height) < 0)
        return -1;
    size_t n = rt_image_bytes(s);
    if (fwrite(img, 1, n, f) != n)
        return -1;
    return fflush(f) == 0 ? 0 : -1;
}

uint64_t rt_checksum(const unsigned char *img, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; i++) {
        h ^= img[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
