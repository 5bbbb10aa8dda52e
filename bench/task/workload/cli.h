/*
 * Command lines and clocks shared by the bench/task programs, so that the
 * sequential programs, the MPI baseline and the task runtime's versions
 * take the same options and print the same lines:
 *
 *   # <what ran, its parameters>
 *   time <seconds>        the computation only (no start-up, no file I/O)
 *   checksum <16 hex>     of the image or the sorted array
 *
 * bench/task/run reads `time` and compares `checksum` with the sequential
 * program's.
 */
#ifndef SHOAL_BENCH_TASK_CLI_H
#define SHOAL_BENCH_TASK_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "qsort.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on CLOCK_MONOTONIC. */
double wl_now(void);

/* Ray trace options: --width W --height H --samples S --depth D --seed N
 * --jobs J --out FILE.ppm (jobs 0: the program's default). */
struct wl_rt_opts {
    int width, height, samples, depth, jobs;
    uint64_t seed;
    const char *out;
};

/* Quicksort options: --n N --seed N --thresh T (leaf threshold)
 * --leaf insertion|bubble --mode nested|rounds --par-thresh P (parallel
 * versions: ranges below P are sorted by one job) --out FILE (the sorted
 * array, raw little-endian int32). */
struct wl_qs_opts {
    size_t n, thresh, par_thresh;
    uint64_t seed;
    enum qs_leaf leaf;
    int rounds;   /* --mode rounds */
    const char *out;
};

/* Parse argv[1..argc); on a bad or unknown option print why (prefixed by
 * prog) and a usage line to stderr and return -1, for --help print the
 * usage to stdout and return 1, else 0. */
int wl_rt_parse(struct wl_rt_opts *o, int argc, char **argv,
                const char *prog);
int wl_qs_parse(struct wl_qs_opts *o, int argc, char **argv,
                const char *prog);

#ifdef __cplusplus
}
#endif

#endif
