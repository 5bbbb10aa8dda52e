/*
 * Page diffs: what a job wrote to shared memory, as runs of changed bytes
 * against the twins (snapshots) taken before its first write to each page
 * (docs/TASK.md).  A job's diff travels to its parent's memory managers
 * and is merged with its siblings' when the whole block has finished.
 *
 * Format (all integers little-endian; "varint" is canonical LEB128,
 * task_varint.h):
 *
 *     header  'T' 'D' version(1) flags(0)  nruns: u32           8 bytes
 *     run     gap: varint  len: varint  len bytes               nruns times
 *
 * A run's offset (from the start of the tracked region) is the end of the
 * run before it (0 before the first) plus its gap.  Runs are in increasing
 * order and never touch: every gap after the first is at least 1 and every
 * len at least 1, so one set of changed bytes has exactly one encoding and
 * two copies of a job that wrote the same bytes produce equal diffs.  Only
 * bytes that differ from the twin are in a run (never unchanged bytes
 * between two changes), because a merge must not write a sibling's old
 * value over another sibling's new one.  Nothing may follow the last run.
 */
#ifndef SHOAL_TASK_DIFF_H
#define SHOAL_TASK_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "task/task_path.h"

#define TASK_DIFF_HDR 8u
#define TASK_DIFF_VERSION 1u
/* Offsets and lengths stay below 2^48 (bytes of a region). */
#define TASK_DIFF_MAX_SPAN (1ull << 48)

/* ---- encoding ------------------------------------------------------------ */

typedef struct task_diff_writer {
    uint8_t *buf;
    size_t len, cap;
    int grow;          /* buf is malloc'd by the writer and may grow */
    int status;        /* first error, sticky */
    uint32_t nruns;    /* runs closed so far */
    uint64_t end;      /* end offset of the last closed run */
    int open;          /* a run is being written */
    uint64_t open_off; /* its offset */
    uint64_t open_len; /* its bytes so far */
    size_t open_pos;   /* where its header goes */
    size_t open_hdr;   /* bytes kept for its header */
    uint64_t floor;    /* the next add may not start below this offset */
} task_diff_writer_t;

/* Writes into buf[0..cap), or, with buf NULL, into memory of its own that
 * grows (freed by task_diff_writer_fini). */
void task_diff_writer_init(task_diff_writer_t *w, void *buf, size_t cap);
void task_diff_writer_fini(task_diff_writer_t *w);

/*
 * Adds the bytes of cur[0..len) that differ from twin[0..len), which
 * stand at offset off of the region.  Calls must come in increasing,
 * non-overlapping order of offset (SHOAL_ERR_INVALID otherwise).  A fixed
 * buffer that is too small gives SHOAL_ERR_TOO_LARGE; errors stick, and
 * task_diff_finish returns them.
 */
int task_diff_add(task_diff_writer_t *w, uint64_t off, const void *twin,
                  const void *cur, size_t len);
/* Adds bytes[0..len) at off as changed bytes (the same order rule). */
int task_diff_add_bytes(task_diff_writer_t *w, uint64_t off,
                        const void *bytes, size_t len);
/* Completes the diff; *out points into the writer's buffer. */
int task_diff_finish(task_diff_writer_t *w, const uint8_t **out,
                     size_t *len);

/* ---- decoding (pure: bad input is an error, never a crash) --------------- */

typedef struct task_diff_run {
    uint64_t off;
    uint64_t len;
    const uint8_t *bytes; /* inside the diff */
} task_diff_run_t;

typedef struct task_diff_iter {
    const uint8_t *diff;
    size_t len, pos;
    uint32_t left; /* runs still to read */
    uint64_t end;  /* end of the previous run */
    uint64_t limit;
    int first;
} task_diff_iter_t;

/* Checks the header; runs must end at or below limit (the region size).
 * SHOAL_ERR_PROTOCOL with a detail when the diff is malformed. */
int task_diff_iter_init(task_diff_iter_t *it, const uint8_t *diff,
                        size_t len, uint64_t limit);
/* 1 and the next run, 0 at a well-formed end, SHOAL_ERR_PROTOCOL. */
int task_diff_iter_next(task_diff_iter_t *it, task_diff_run_t *run);

/*
 * Where to start reading a diff for one offset: the iterator's state
 * after every TASK_DIFF_SKIP_RUNS runs, so that a reader of one page of a
 * diff with many runs (a matrix of doubles against zeros is a run every 8
 * bytes) reads at most that many runs before the page instead of every
 * run of the region before it.  Built once (a checked pass), read by
 * binary search.
 */
#define TASK_DIFF_SKIP_RUNS 64
typedef struct task_diff_skip {
    task_diff_iter_t *at; /* at[k]: before run (k+1) * SKIP_RUNS */
    size_t n;
} task_diff_skip_t;

/* Builds the skip table of a diff (an empty one for a short diff);
 * SHOAL_ERR_PROTOCOL when the diff is malformed. */
int task_diff_skip_build(const uint8_t *diff, size_t len, uint64_t limit,
                         task_diff_skip_t *sk);
void task_diff_skip_free(task_diff_skip_t *sk);
/* Moves it (initialized on the same diff) to the last point where the
 * runs read so far end at or before off: its next runs are the first
 * that may reach off.  Never backwards. */
void task_diff_skip_seek(const task_diff_skip_t *sk, uint64_t off,
                         task_diff_iter_t *it);

/* Checks a whole diff; counts its runs and changed bytes (either may be
 * NULL). */
int task_diff_check(const uint8_t *diff, size_t len, uint64_t limit,
                    uint32_t *nruns, uint64_t *nbytes);
/* Writes a diff's runs into base[0..size); checks it first, so a bad diff
 * changes nothing. */
int task_diff_apply(const uint8_t *diff, size_t len, void *base,
                    size_t size);

/* ---- merging a sibling set ----------------------------------------------- */

typedef struct task_diff_part {
    const task_path_t *path; /* the job that wrote it */
    const uint8_t *diff;
    size_t len;
} task_diff_part_t;

/* Two siblings wrote different values to one byte (common CRCW allows
 * equal values only).  a comes before b in job-path order. */
typedef struct task_diff_conflict {
    const task_path_t *a, *b;
    uint64_t off; /* from the start of the region */
    uint8_t va, vb;
} task_diff_conflict_t;

/*
 * Applies the diffs of a sibling set to base[0..size), in job-path order.
 * All or nothing: every diff is checked first (SHOAL_ERR_PROTOCOL), two
 * parts of one job are refused (SHOAL_ERR_INVALID), and a common-CRCW
 * conflict is refused with SHOAL_ERR_INVALID, the conflict at the lowest
 * offset in *conflict (when not NULL) and a detail naming both jobs and
 * the offset.  The same parts in any order give the same outcome.
 */
int task_diff_merge(const task_diff_part_t *parts, size_t n, void *base,
                    size_t size, task_diff_conflict_t *conflict);

#endif /* SHOAL_TASK_DIFF_H */
