/*
 * The lock manager (the thesis's synchronization manager, §3.6, §3.7 and
 * §4.5 of digest 002) as a pure state machine: the runtime feeds it lock
 * and unlock requests and carries out the orders it returns (grant, wait,
 * refuse, penalize); it does no I/O.
 *
 * Locks are owned by jobs, not by copies.  A job's i-th lock request
 * (request numbers count from 0 in program order, locks and unlocks of
 * every lock together counting only the locks) happens once, whichever
 * copy makes it first; every copy of the job sees the same history:
 *
 *  - The manager keeps the *request sequence*: one entry per granted
 *    request (job path, request number, lock, version before), in grant
 *    order.  A lock's *versions* are the bytes of its associated shared
 *    variables: version 0 is the initial value, version v+1 what the
 *    unlock of the lock's v-th grant sent.  A grant ships the version
 *    the request saw (its before-image) and the sequence entries the
 *    requester's worker has not seen yet, which is what a new manager is
 *    rebuilt from (task_lock_rebuild).
 *  - A request already in the sequence (a duplicate from another copy, a
 *    late copy, a re-run after a crash) is granted at once with the
 *    recorded before-image, whatever the lock's state (a replay).
 *  - The first unlock of a request releases the lock and makes the next
 *    version; later unlocks of it (slower copies) are ignored.
 *  - Grants go in order of first arrival among distinct requests (FIFO);
 *    a copy of a request already waiting waits with it.
 *  - Requests from a job that has finished are refused (kill the copy).
 *
 * Starvation (§3.7): requests are counted per copy since it was last
 * resumed; every suspect_after of them the copy is reported (PENALIZE)
 * so the scheduler lowers its priority (task_sched_copy_penalize).
 *
 * Bad use is an error with a detail (shoal_error_detail): unknown lock;
 * locking a lock the job holds (no recursion); unlocking a lock not held
 * or still waited for; a request number out of order or one naming
 * another lock than the first copy's (the program is not deterministic).
 * A parbegin inside a critical section is refused by the runtime when
 * task_lock_held says the job holds a lock.
 */
#ifndef SHOAL_TASK_LOCK_H
#define SHOAL_TASK_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "task/task_path.h"

#define TASK_LOCK_FREE UINT64_MAX

typedef struct task_lock task_lock_t;

typedef enum task_lock_order_kind {
    TASK_LOCK_GRANT,   /* the copy enters: data is the lock's variables */
    TASK_LOCK_WAIT,    /* the copy waits (suspend it); a GRANT follows */
    TASK_LOCK_REFUSE,  /* the copy's job has finished: kill the copy */
    TASK_LOCK_PENALIZE /* the copy starves others (§3.7) */
} task_lock_order_kind_t;

typedef struct task_lock_order {
    task_lock_order_kind_t kind;
    uint32_t copy, worker, lock, request;
    /* GRANT only: */
    uint32_t version;          /* the before-image's version */
    const void *data; /* its bytes, valid until the second orders_clear */
    size_t len;
    uint64_t entry;            /* the request's index in the sequence */
    uint64_t seq_from, seq_to; /* entries the worker had not seen */
    uint8_t replay;   /* another copy (or an earlier run) got it first */
    uint8_t released; /* its unlock is recorded: this copy's is ignored */
} task_lock_order_t;

/* One entry of the request sequence. */
typedef struct task_lock_entry {
    task_path_t job; /* borrowed (from the manager or the caller) */
    uint32_t request, lock, version;
} task_lock_entry_t;

/* One version of a lock's variables. */
typedef struct task_lock_version {
    uint32_t lock, version;
    const void *data;
    size_t len;
} task_lock_version_t;

/* What one surviving worker kept (§4.5): the sequence as far as its last
 * grant, and the versions its copies were granted or unlocked with. */
typedef struct task_lock_record {
    uint32_t worker;
    const task_lock_entry_t *seq;
    size_t nseq;
    const task_lock_version_t *versions;
    size_t nversions;
} task_lock_record_t;

/* nlocks locks (ids 0..nlocks-1), each at version 0 with no bytes until
 * task_lock_set_initial; suspect_after: requests per copy before it is
 * reported as starving others (0: never). */
int task_lock_create(uint32_t nlocks, uint32_t suspect_after,
                     task_lock_t **out);
void task_lock_destroy(task_lock_t *m);
/* Version 0 of a lock (before its first grant). */
int task_lock_set_initial(task_lock_t *m, uint32_t lock, const void *data,
                          size_t len);

/* ---- events -------------------------------------------------------------- */

/* Copy `copy` of job, on worker, makes the job's request-th lock request,
 * for lock.  Orders: GRANT or WAIT or REFUSE, maybe PENALIZE. */
int task_lock_lock(task_lock_t *m, uint32_t copy, uint32_t worker,
                   const task_path_t *job, uint32_t request, uint32_t lock);
/* The copy leaves the critical section of its request-th request, with
 * the lock's variables' new bytes.  Returns 1 when this unlock released
 * the request (the next waiter may be granted), 0 when it was ignored (a
 * slower copy's, or the job has finished), or an error. */
int task_lock_unlock(task_lock_t *m, uint32_t copy, const task_path_t *job,
                     uint32_t request, uint32_t lock, const void *data,
                     size_t len);
/* The copy is running again: its request count starts over. */
int task_lock_copy_resumed(task_lock_t *m, uint32_t copy);
/* The copy is gone (killed, lost): it waits for nothing any more.  Its
 * job's requests stay: another copy will make them again. */
int task_lock_copy_gone(task_lock_t *m, uint32_t copy);
/* The job has finished: its later requests are refused.  A job that
 * ends inside a critical section is an error (SHOAL_ERR_BUSY); its locks
 * are released with their variables unchanged. */
int task_lock_job_done(task_lock_t *m, const task_path_t *job);

/* ---- orders and state ---------------------------------------------------- */

const task_lock_order_t *task_lock_orders(const task_lock_t *m, size_t *n);
void task_lock_orders_clear(task_lock_t *m);

/* Locks the job holds now (granted, not released).  The runtime refuses
 * a parbegin while it is not 0. */
uint32_t task_lock_held(const task_lock_t *m, const task_path_t *job);
uint64_t task_lock_seq_len(const task_lock_t *m);
int task_lock_entry(const task_lock_t *m, uint64_t k, task_lock_entry_t *e);
/* The entry holding lock, or TASK_LOCK_FREE; its current version. */
uint64_t task_lock_owner(const task_lock_t *m, uint32_t lock);
uint32_t task_lock_current(const task_lock_t *m, uint32_t lock);
/* A version's bytes, valid until the manager's next call; SHOAL_ERR_NOT_FOUND
 * while it is missing, and once the job whose grant read it has finished
 * (its bytes are dropped then: every version but the current one is one
 * grant's before-image).  Versions are kept as diffs against the one
 * before where that is smaller (task_vers.h). */
int task_lock_version(task_lock_t *m, uint32_t lock, uint32_t version,
                      const void **data, size_t *len);

/* ---- recovery (§4.5) ---------------------------------------------------- */

/*
 * A new manager from the survivors' records: the longest sequence (the
 * others must be its prefixes) and every version collected (version 0 of
 * every lock among them; two records may not disagree on a version).  A
 * lock whose last grant's unlock is known is free at the next version;
 * otherwise that grant still holds it.  Waiting requests are not
 * recovered: waiting copies send them again.
 *
 * A version that no survivor has but a later grant saw is missing: the
 * job whose unlock made it must run again (task_lock_reruns).  Its copy
 * replays its requests and its unlock of that request stores the version;
 * meanwhile replays that need it wait.  A finished job must run again
 * too when its grants or its last unlock were seen only by lost workers
 * (task_lock_must_rerun); the runtime asks before telling the new manager
 * task_lock_job_done.
 */
int task_lock_rebuild(uint32_t nlocks, uint32_t suspect_after,
                      const task_lock_record_t *recs, size_t nrecs,
                      task_lock_t **out);
/* Entries (sequence indexes) whose jobs must run again, oldest first. */
const uint64_t *task_lock_reruns(const task_lock_t *m, size_t *n);
/* 1 when a job that finished after making `requests` lock requests must
 * run again: the sequence lacks some of them or it still holds a lock. */
int task_lock_must_rerun(const task_lock_t *m, const task_path_t *job,
                         uint32_t requests);
/* 1 when a finished job's result may be kept instead of running its
 * subtree again after a rebuild: its subtree (the job and its
 * descendants) made `requests` lock requests (what its finishing copy
 * reported), and the sequence holds exactly that many of theirs, none of
 * those jobs holds a lock or waits for one, and none must run again to
 * regenerate a version (task_lock_reruns).  0 otherwise. */
int task_lock_subtree_kept(const task_lock_t *m, const task_path_t *job,
                           uint64_t requests);

#endif /* SHOAL_TASK_LOCK_H */
