/*
 * A job's random stream: the numbers a job draws depend only on the
 * program's seed, the job's path and how many it drew before, never on
 * which copy draws them, on which machine or when.  So copies of a job
 * stay identical (their diffs and children agree) and a randomized
 * program's output is the same on every run with the same seed; the
 * thesis had to forbid random numbers in nested or locking programs for
 * want of this.
 *
 * Counter-based: draw i is a mixing function of (stream key, i), the key
 * two SipHash values of the path under the seed.  Statistically good, fast
 * and random-access, and not for cryptography.
 */
#ifndef SHOAL_TASK_RAND_H
#define SHOAL_TASK_RAND_H

#include <stdint.h>

#include "task/task_path.h"

typedef struct task_rand {
    uint64_t k0, k1; /* stream key */
    uint64_t next;   /* index of the next draw */
} task_rand_t;

void task_rand_init(task_rand_t *r, uint64_t seed, const task_path_t *path);
/* Draw i of the stream, whatever has been drawn. */
uint64_t task_rand_at(const task_rand_t *r, uint64_t i);
uint64_t task_rand_next(task_rand_t *r);
/* Uniform in [0, bound) without bias (bound > 0). */
uint64_t task_rand_below(task_rand_t *r, uint64_t bound);
/* Uniform in [0, 1) with 53 random bits. */
double task_rand_unit(task_rand_t *r);

#endif /* SHOAL_TASK_RAND_H */
