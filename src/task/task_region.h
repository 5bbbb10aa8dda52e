/*
 * The shared memory of a task program (docs/TASK.md): two areas at the
 * same address in every worker, the program's static shared section
 * (SHOAL_SHARED) and the shared heap (a fixed mapping of SHOAL_TASK_HEAP
 * bytes).  A worker keeps its areas pristine (as loaded: the section's
 * initial bytes, a zero heap) and forks each run of a job (a copy) from
 * them; the copy applies its parent's *state* (everything that differs
 * from pristine), then tracks its own writes (task_track.h).
 *
 * Blobs, as the runtime's messages carry them: a state or a diff is, per
 * area in order, a u64 length and a diff (task_diff.h) of that area.  A
 * state is against the pristine bytes, a diff against the copy's start.
 * Ranges excluded (the variables of locks, which travel with the lock
 * grants) are never in either.
 */
#ifndef SHOAL_TASK_REGION_H
#define SHOAL_TASK_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "task/task_buf.h"
#include "task/task_diff.h"
#include "task/task_path.h"
#include "task/task_track.h"

#define TASK_AREAS 2 /* 0: the static section, 1: the heap */
/* Where the shared heap is mapped: above every sanitizer's shadow and
 * below the mmap area, far from a PIE binary loaded without ASLR. */
#define TASK_HEAP_ADDR ((uintptr_t)0x5e0000000000ull)

typedef struct task_area {
    char *base;
    size_t size;              /* whole pages */
    const uint8_t *pristine;  /* NULL: zeros */
    uint8_t *touched;         /* per page: may differ from pristine */
    task_track_t *track;      /* while a copy tracks its writes */
} task_area_t;

typedef struct task_excl {
    uint64_t off, len; /* in area 0 */
} task_excl_t;

typedef struct task_region {
    task_area_t area[TASK_AREAS];
    task_excl_t *excl;
    size_t nexcl;
    size_t page;
} task_region_t;

/* The areas of this worker: the section's whole pages [begin, end) (see
 * task_elf.h), and heap_size bytes of heap (0: none).
 * SHOAL_ERR_UNSUPPORTED with a detail when the heap's address is taken. */
int task_region_init(task_region_t *r, char *begin, char *end,
                     size_t heap_size);
void task_region_fini(task_region_t *r);
/* Keeps [addr, addr+len) of the static section out of states and diffs. */
int task_region_exclude(task_region_t *r, const void *addr, size_t len);
/* 1 when [addr, addr+len) lies in the static section. */
int task_region_in_static(const task_region_t *r, const void *addr,
                          size_t len);

/* In a copy, before tracking: applies a state to the pristine areas. */
int task_region_apply(task_region_t *r, const uint8_t *state, size_t len);
/* Starts tracking the copy's writes. */
int task_region_track(task_region_t *r);
/* Pages on demand: every page starts absent and is filled by fetch when
 * first touched (task_track_absent; ctx is the area's index). */
int task_region_absent(task_region_t *r, task_track_fetch_fn fetch);
/* Every page absent again, for the next run in the same process
 * (task_track_rearm). */
int task_region_rearm(task_region_t *r);
/* After task_region_rearm: task_track_prefetch in each tracked area, peek
 * given the area (as its fetch's ctx) and the page. */
int task_region_prefetch(task_region_t *r, task_track_peek_fn peek);
/* Every written page back as it was before the first write
 * (task_track_rewind): for a sibling of the last run. */
int task_region_rewind(task_region_t *r);
/* task_region_page from another process's memory (a copy of this
 * worker, with the same layout), read with process_vm_readv: 0 when the
 * page is absent there (PROT_NONE reads fail) or cannot be read. */
int task_region_page_of(const task_region_t *r, pid_t pid, int area,
                        size_t page, void *out);
/* In a copy that serves its children: 1 and the page's bytes in out (the
 * excluded ranges as pristine, as states and diffs leave them), or 0 when
 * the page is absent here. */
int task_region_page(const task_region_t *r, int area, size_t page,
                     void *out);
/* task_track_fill of page of area (a page served by the source, its
 * excluded ranges pristine, as a fetch gets it). */
int task_region_fill(task_region_t *r, int area, size_t page,
                     const void *data);
/* Without the copy: page of area as pristine with blobs[0..n) (states or
 * diffs, task_region.h's blobs) applied in order.  skips: NULL, or for
 * each blob NULL or its areas' skip tables (task_region_blob_skips), so
 * that the page costs a few runs of each blob, not every run before it. */
int task_region_page_from(const task_region_t *r, int area, size_t page,
                          const uint8_t *const *blobs, const size_t *lens,
                          const task_diff_skip_t *const *skips, size_t n,
                          void *out);
/* The skip tables of a blob's areas (sk[TASK_AREAS]; free each with
 * task_diff_skip_free). */
int task_region_blob_skips(const task_region_t *r, const uint8_t *blob,
                           size_t len, task_diff_skip_t *sk);

/* Appends the copy's whole state (against pristine) to out. */
int task_region_state(task_region_t *r, task_buf_t *out);
/* Appends the copy's writes since tracking started to out. */
int task_region_diff(task_region_t *r, task_buf_t *out);

/* One finished child's writes, for task_region_merge. */
typedef struct task_region_part {
    const task_path_t *path;
    const uint8_t *diff;
    size_t len;
} task_region_part_t;

/* Merges the diffs of a whole block into the (tracked) areas, in path
 * order: all or nothing; a common-CRCW conflict is SHOAL_ERR_INVALID with
 * a detail naming both jobs and the byte. */
int task_region_merge(task_region_t *r, const task_region_part_t *parts,
                      size_t n);

#endif /* SHOAL_TASK_REGION_H */
