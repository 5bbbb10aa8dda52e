/*
 * Write tracking over a page-aligned region of shared memory, the first
 * half of two-phase idempotent execution (docs/TASK.md): a job's writes
 * must be collected as a diff against the memory it started from, never
 * published in place.
 *
 * The region is made read-only.  The first write to a page faults; the
 * SIGSEGV handler copies the page into a twin taken from a pool allocated
 * up front (no allocation or lock in the handler: only a copy, atomics and
 * mprotect), makes the page writable and returns, and the write runs
 * again.  task_track_collect then encodes every written page against its
 * twin (task_diff.h), and task_track_reset makes the pages read-only again
 * for the next round.
 *
 * Faults that are not first writes to a tracked page (outside every
 * region, a pool used up) go to the handler that was installed before
 * ours, or, if that was the default action, kill the process with SIGSEGV
 * as they would have without us: a real crash stays a crash.
 *
 * Limits: the program must not change the protection of tracked pages
 * or unmap them while they are tracked (a write to a written page that
 * faults is taken for a race between two threads and run again); a
 * system call that writes into a read-only tracked page fails
 * with EFAULT instead of faulting (the runtime must write such data
 * through memory of its own); collect and reset must not run while other
 * threads write to the region (a job is one thread); regions must not be
 * created or destroyed from a signal handler.
 */
#ifndef SHOAL_TASK_TRACK_H
#define SHOAL_TASK_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "task/task_diff.h"

#define TASK_TRACK_MAX 16 /* regions tracked at once in a process */

typedef struct task_track task_track_t;

/*
 * Tracks base[0..size) (page-aligned, a whole number of pages, mapped
 * readable and writable).  pool_pages bounds the pages that may be written
 * between two resets (0: every page of the region); a write past it is
 * reported on stderr and handled as a crash.  SHOAL_ERR_INVALID for a bad
 * range or one that overlaps a tracked region, SHOAL_ERR_AGAIN with
 * TASK_TRACK_MAX regions tracked, SHOAL_ERR_UNSUPPORTED when the SIGSEGV
 * handler cannot be installed (e.g. a sanitizer that keeps SIGSEGV).
 */
int task_track_create(void *base, size_t size, size_t pool_pages,
                      task_track_t **out);
/* Stops tracking: the region is writable again, its twins are freed, and
 * the previous SIGSEGV handler is back when this was the last region. */
void task_track_destroy(task_track_t *t);

/*
 * Pages on demand: every page of t becomes absent (PROT_NONE) until it is
 * touched; the first read or write of an absent page calls fetch from the
 * SIGSEGV handler with the page writable, to fill it (so fetch must be
 * async-signal-safe), and then the page is read-only like any other (a
 * write faults again and is twinned).  fetch returns 0, or nonzero to
 * leave the page absent and handle the fault as a crash.  Only before
 * the first write (SHOAL_ERR_INVALID after).
 */
typedef int (*task_track_fetch_fn)(void *ctx, task_track_t *t, size_t page,
                                   void *dst);
int task_track_absent(task_track_t *t, task_track_fetch_fn fetch, void *ctx);
/* Pages on demand again (after task_track_absent): every page absent,
 * the twins back in the pool, for the next run in this process. */
int task_track_rearm(task_track_t *t);
/* After a rearm: the pages the last run fetched (at most TASK_TRACK_HOT,
 * in the order of their first touch; the next run in the process likely
 * touches them too) are filled by peek without a fault when it can (1),
 * those the last run wrote twinned and writable at once; the first page
 * peek cannot fill ends it (the rest stay absent).  Returns the pages
 * filled, or an error. */
#define TASK_TRACK_HOT 8
typedef int (*task_track_peek_fn)(void *ctx, size_t page, void *dst);
int task_track_prefetch(task_track_t *t, task_track_peek_fn peek);
/* For a run that starts from the same memory as the last one: every
 * written page gets its twin back (what it held before the first write)
 * and is read-only and clean again; pages read stay, absent ones stay
 * absent.  Work in proportion to the pages written. */
int task_track_rewind(task_track_t *t);
/* An absent page filled with data[0..page size) from outside the fault
 * handler (a waiting parent that takes a page its children ask for):
 * clean and read-only afterwards, as if the job had read it.  1 filled,
 * 0 when the page was not absent (nothing changed), or an error. */
int task_track_fill(task_track_t *t, size_t page, const void *data);
/* 1 when the page holds its data (it was never absent, or was fetched). */
int task_track_is_present(const task_track_t *t, size_t page);

size_t task_track_page_size(const task_track_t *t);
/* Pages written since the last reset. */
size_t task_track_dirty_count(const task_track_t *t);
int task_track_is_dirty(const task_track_t *t, size_t page);
/* The snapshot of a written page (NULL for a page not written). */
const void *task_track_twin(const task_track_t *t, size_t page);

/* The pages written since the last reset, in address order, into a
 * malloc'd array (*pages_p; free it) of *n_p entries: work in proportion
 * to what was written, not to the region's size. */
int task_track_dirty_pages(const task_track_t *t, uint32_t **pages_p,
                           size_t *n_p);
/* Adds the changes of every written page, in address order, to w (offsets
 * from the start of the region). */
int task_track_collect(task_track_t *t, task_diff_writer_t *w);
/* Forgets the writes: written pages become read-only again and their twins
 * go back to the pool.  The memory keeps what was written. */
int task_track_reset(task_track_t *t);

#endif /* SHOAL_TASK_TRACK_H */
