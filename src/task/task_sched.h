/*
 * Prioritized eager scheduling (the thesis's §3.3, digest 002), as a pure
 * state machine: the runtime's coordinator feeds it events and carries out
 * the orders it returns; it does no I/O and keeps no clock, so it can be
 * tested event by event.
 *
 * A job runs as copies; copy k of a job (k the smallest ordinal no live
 * copy of the job holds) has key k plus a penalty (0 unless the copy was
 * found starving others, task_sched_copy_penalize), smaller being better.
 * After every event the scheduler places the best candidate while it can:
 * on an idle worker, or on the worker running the worst key if that key is
 * strictly worse (ties keep the running copy), which is suspended.  So a
 * job's first copy pre-empts redundant copies, idle workers run extra
 * copies of unfinished jobs (fewest copies first), and a worker that is
 * lost takes only its copies with it: their jobs become candidates again
 * with their ordinals freed.  The first copy to finish wins and the others
 * are killed.  No worker runs two copies of one job.
 *
 * Candidates are: a suspended copy (on its own worker: a process cannot
 * move), a copy waiting in parend whose block is done (likewise), and a
 * new copy of an unfinished job that has fewer than max_copies live copies
 * and is not waiting for a block (a job whose copies all died while it
 * waited gets a new copy, which re-runs to the block as a late parent).
 * Ties are broken by kind (resuming before starting), then job and copy
 * creation order.
 */
#ifndef SHOAL_TASK_SCHED_H
#define SHOAL_TASK_SCHED_H

#include <stddef.h>
#include <stdint.h>

#define TASK_NONE UINT32_MAX

typedef struct task_sched task_sched_t;

typedef enum task_order_kind {
    TASK_ORDER_RUN,     /* start copy `copy` (ordinal) of job on worker */
    TASK_ORDER_RESUME,  /* let suspended or waiting copy go on */
    TASK_ORDER_SUSPEND, /* stop copy, keep its process (SIGSTOP) */
    TASK_ORDER_KILL     /* end copy: its job is done or its worker suspect */
} task_order_kind_t;

typedef struct task_order {
    task_order_kind_t kind;
    uint32_t copy, job, worker, ordinal;
} task_order_t;

typedef enum task_copy_state {
    TASK_COPY_RUNNING,
    TASK_COPY_SUSPENDED,
    TASK_COPY_WAITING, /* in parend, serving its children's memory */
    TASK_COPY_GONE,    /* finished, killed or lost */
    TASK_COPY_BLOCKED  /* waits for a lock; its worker is free meanwhile */
} task_copy_state_t;

typedef struct task_copy_info {
    uint32_t job, worker, ordinal, penalty;
    task_copy_state_t state;
} task_copy_info_t;

/* max_copies: live copies a job may have at once (at least 1). */
int task_sched_create(uint32_t max_copies, task_sched_t **out);
void task_sched_destroy(task_sched_t *s);

/* ---- events (each one runs the placement loop) --------------------------- */

/* A worker joins (or comes back: it gets a new id); *worker is its id. */
int task_sched_worker_join(task_sched_t *s, uint32_t *worker);
/* A worker is gone: its copies are gone, no order is sent to it. */
int task_sched_worker_lost(task_sched_t *s, uint32_t worker);
/* A worker is silent: as lost, and KILL orders for its copies in case it
 * is only slow (it rejoins with a new id). */
int task_sched_worker_suspect(task_sched_t *s, uint32_t worker);
/* A worker says it runs nothing: the copy the scheduler placed there
 * ended without a report (it crashed), so it is gone. */
int task_sched_worker_idle(task_sched_t *s, uint32_t worker);

/* Events in a row taken as one: after task_sched_hold(s, 1) no
 * placement is made until as many task_sched_hold(s, 0), the last of
 * which makes them (its result).  A copy that waits at a new block is
 * held with the block's jobs (copy_waits then add_jobs), and the last
 * child's end with its block's (copy_done then block_done): placed as
 * they came, the free worker went to a sibling of the parent before the
 * block's jobs, or the parent's resumption, could be placed, and a
 * recursive program ran breadth first. */
int task_sched_hold(task_sched_t *s, int hold);

/* n jobs are ready (a block of parent, TASK_NONE for the root); ids
 * *first .. *first+n-1 in creation order.  hint: a worker to prefer for
 * one of them (the parent's, where it serves memory) or TASK_NONE. */
int task_sched_add_jobs(task_sched_t *s, uint32_t parent, uint32_t n,
                        uint32_t hint, uint32_t *first);
/* A running copy reached parend of its job's block `block` (0, 1, ...):
 * returns 1 when it must wait (its worker is free meanwhile), 0 when that
 * block is done already and it goes on (a late parent), or an error. */
int task_sched_copy_waits(task_sched_t *s, uint32_t copy, uint32_t block);
/* Every child of the job's block `block` has finished and been merged. */
int task_sched_block_done(task_sched_t *s, uint32_t job, uint32_t block);
/* A copy finished its job: 1 when it is the first (the job is done, the
 * other copies are killed), 0 when the report is late or stale. */
int task_sched_copy_done(task_sched_t *s, uint32_t copy);
/* A copy ended without finishing (it crashed, its process is gone). */
int task_sched_copy_lost(task_sched_t *s, uint32_t copy);
/* A running copy waits for a lock (the thesis's §3.6: it is suspended and
 * its worker does other work): its worker is free, and the copy is no
 * candidate until task_sched_copy_unblocks.  SHOAL_ERR_NOT_FOUND for a
 * copy that is not running. */
int task_sched_copy_blocks(task_sched_t *s, uint32_t copy);
/* The lock it waited for is granted: it becomes a candidate to resume on
 * its worker, like a suspended copy.  Nothing for a copy not blocked. */
int task_sched_copy_unblocks(task_sched_t *s, uint32_t copy);
/* A copy starves others (too many lock requests, §3.7): its key becomes
 * worse than every key in the system, again at each call. */
int task_sched_copy_penalize(task_sched_t *s, uint32_t copy);

/* ---- orders and state ---------------------------------------------------- */

/* The orders of the events since the last task_sched_orders_clear, oldest
 * first. */
const task_order_t *task_sched_orders(const task_sched_t *s, size_t *n);
void task_sched_orders_clear(task_sched_t *s);

uint32_t task_sched_jobs(const task_sched_t *s);
uint32_t task_sched_workers(const task_sched_t *s);
int task_sched_job_done(const task_sched_t *s, uint32_t job);
/* The copy running on a worker, or TASK_NONE. */
uint32_t task_sched_running(const task_sched_t *s, uint32_t worker);
int task_sched_copy_info(const task_sched_t *s, uint32_t copy,
                         task_copy_info_t *info);

#endif /* SHOAL_TASK_SCHED_H */
