#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char RT_USAGE[] =
    "[--width W] [--height H] [--samples S] [--depth D] [--seed N] "
    "[--jobs J] [--out FILE.ppm]";
static const char QS_USAGE[] =
    "[--n N] [--seed N] [--thresh T] [--leaf insertion|bubble] "
    "[--mode nested|rounds] [--par-thresh P] [--out FILE]";

/* The value of option argv[*i] as an unsigned number in [min, max]. */
static int number(int argc, char **argv, int *i, unsigned long long min,
                  unsigned long long max, unsigned long long *v,
                  const char *prog)
{
    const char *name = argv[*i];
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", prog, name);
        return -1;
    }
    const char *s = argv[++*i];
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-' || x < min || x > max) {
        fprintf(stderr, "%s: %s %s: want a number from %llu to %llu\n",
                prog, name, s, min, max);
        return -1;
    }
    *v = x;
    return 0;
}

static int text(int argc, char **argv, int *i, const char **v,
                const char *prog)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", prog, argv[*i]);
        return -1;
    }
    *v = argv[++*i];
    return 0;
}

/* Common ending of both parsers: --help, or an unknown option. */
static int other(const char *arg, const char *usage, const char *prog)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
        printf("usage: %s %s\n", prog, usage);
        return 1;
    }
    fprintf(stderr, "%s: unknown option %s\n", prog, arg);
    fprintf(stderr, "usage: %s %s\n", prog, usage);
    return -1;
}

int wl_rt_parse(struct wl_rt_opts *o, int argc, char **argv,
                const char *prog)
{
    o->width = 512;
    o->height = 512;
    o->samples = 4;
    o->depth = 4;
    o->jobs = 0;
    o->seed = 1;
    o->out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long v;
        int *field = NULL;
        unsigned long long max = 16384;
        if (!strcmp(a, "--width"))
            field = &o->width;
        else if (!strcmp(a, "--height"))
            field = &o->height;
        else if (!strcmp(a, "--samples"))
            field = &o->samples, max = 64;
        else if (!strcmp(a, "--depth"))
            field = &o->depth, max = 16;
        else if (!strcmp(a, "--jobs"))
            field = &o->jobs;
        if (field) {
            if (number(argc, argv, &i, field == &o->depth ? 0 : 1, max, &v,
                       prog))
                return -1;
            *field = (int)v;
        } else if (!strcmp(a, "--seed")) {
            if (number(argc, argv, &i, 0, UINT64_MAX, &v, prog))
                return -1;
            o->seed = v;
        } else if (!strcmp(a, "--out")) {
            if (text(argc, argv, &i, &o->out, prog))
                return -1;
        } else {
            return other(a, RT_USAGE, prog);
        }
    }
    if (o->jobs > o->height) {
        fprintf(stderr, "%s: --jobs %d: at most --height (%d) jobs\n", prog,
                o->jobs, o->height);
        return -1;
    }
    return 0;
}

int wl_qs_parse(struct wl_qs_opts *o, int argc, char **argv,
                const char *prog)
{
    o->n = 4000000;
    o->thresh = 32;
    o->par_thresh = 0;
    o->seed = 1;
    o->leaf = QS_LEAF_INSERTION;
    o->rounds = 0;
    o->out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long v;
        const char *s;
        if (!strcmp(a, "--n")) {
            if (number(argc, argv, &i, 0, 1ULL << 31, &v, prog))
                return -1;
            o->n = (size_t)v;
        } else if (!strcmp(a, "--thresh") || !strcmp(a, "--par-thresh")) {
            if (number(argc, argv, &i, 0, 1ULL << 31, &v, prog))
                return -1;
            *(a[2] == 't' ? &o->thresh : &o->par_thresh) = (size_t)v;
        } else if (!strcmp(a, "--seed")) {
            if (number(argc, argv, &i, 0, UINT64_MAX, &v, prog))
                return -1;
            o->seed = v;
        } else if (!strcmp(a, "--leaf")) {
            if (text(argc, argv, &i, &s, prog))
                return -1;
            if (!strcmp(s, "insertion")) {
                o->leaf = QS_LEAF_INSERTION;
            } else if (!strcmp(s, "bubble")) {
                o->leaf = QS_LEAF_BUBBLE;
            } else {
                fprintf(stderr, "%s: --leaf %s: insertion or bubble\n", prog,
                        s);
                return -1;
            }
        } else if (!strcmp(a, "--mode")) {
            if (text(argc, argv, &i, &s, prog))
                return -1;
            if (strcmp(s, "nested") && strcmp(s, "rounds")) {
                fprintf(stderr, "%s: --mode %s: nested or rounds\n", prog,
                        s);
                return -1;
            }
            o->rounds = !strcmp(s, "rounds");
        } else if (!strcmp(a, "--out")) {
            if (text(argc, argv, &i, &o->out, prog))
                return -1;
        } else {
            return other(a, QS_USAGE, prog);
        }
    }
    return 0;
}
