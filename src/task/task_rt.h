/*
 * The task runtime (docs/TASK.md): what its parts share.
 *
 *   task_run.c     shoal_task_run: one address space layout in every
 *                  worker, the roles, the loop every rank runs
 *   task_coord.c   the coordinator (rank 0): the scheduler, the lock
 *                  manager, jobs, blocks and results
 *   task_worker.c  a worker: forks copies, stops, resumes and kills them,
 *                  relays their messages, reports the ones that crash
 *   task_copy.c    a copy (one run of one job, in a child of a worker):
 *                  the public job calls of shoal/task.h
 *   task_msg.c     messages between workers; task_chan.c between a worker
 *                  and its copies; task_region.c the shared memory
 *
 * Every message starts with a u32 type and a u32 copy id (or rank).
 */
#ifndef SHOAL_TASK_RT_H
#define SHOAL_TASK_RT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "shoal/task.h"
#include "task/task_buf.h"
#include "task/task_lock.h"
#include "task/task_region.h"

/* Routines travel as offsets from the program's main; the root job is
 * main itself. */
#define TASK_ROOT_FN UINT64_MAX

enum task_msg_type {
    /* worker -> coordinator */
    TM_HELLO = 1, /* rank; u64 layout check */
    TM_BEAT,      /* rank */
    TM_LOST,      /* copy; u32 wait status, u32 rank */
    /* copy -> coordinator (through its worker, unchanged) */
    TM_BLOCK,  /* copy; u32 block, u32 n; n x (u64 fn, u32 width, bytes
                  arg); bytes state (or, TASK_RUN_DIFFS, its diff) */
    TM_DONE,   /* copy; u32 ret, u32 lock requests; bytes diff, output;
                  u32 lock requests of the job's whole subtree (its own
                  and its children's: a result kept across a failover is
                  taken only without) */
    TM_LOCK,   /* copy; u32 request, u32 lock */
    TM_UNLOCK, /* copy; u32 request, u32 lock; bytes data */
    TM_FAIL,   /* copy; u32 status; bytes message */
    /* coordinator -> worker */
    TM_RUN,     /* copy; u32 width, u32 id, u64 fn; bytes path, arg,
                   state (empty with TASK_RUN_ABSENT); u32 flags, u32
                   rank, u32 copy of the pages' source (TASK_NONE: the
                   coordinator), u32 its block */
    TM_SUSPEND, /* copy */
    TM_CONT,    /* copy */
    TM_KILL,    /* copy */
    TM_EXIT,    /* rank; u32 status, u32 finalize (after TM_BYE) */
    /* coordinator -> copy (through its worker) */
    TM_RESULTS, /* copy; u32 n; n x (bytes path, diff, output, u32 lock
                   requests of the child's subtree) */
    TM_GRANT,   /* copy; u32 released; bytes data; to a worker that keeps
                   a lock record (task_lockrec.c), its tail: u32 lock,
                   u32 version, u64 seq_from, u32 n, n x entry (the
                   sequence entries it has not seen) */
    /* pages on demand (task_page.c): a copy asks its worker, the worker
     * the copy that is the page's source, which answers or passes the
     * request up to its own source; a source that is gone or silent is
     * replaced by the coordinator */
    TM_PAGE_REQ,  /* copy; u32 area, u64 page (copy -> its worker), or
                     source copy; u32 block, u32 area, u64 page, u32 rank,
                     u32 copy of the requester (to the source) */
    TM_PAGE_UP,   /* source copy; the request as it came: not here */
    TM_PAGE,      /* requester copy; u32 rank, u32 area, u64 page; the
                     page's bytes (raw) */
    TM_PAGE_COORD, /* requester copy; u32 rank, u32 area, u64 page (to
                      the coordinator) */
    /* the end of the run: the coordinator tells each worker the run is
     * over (TM_END), the worker ends its copies and answers (TM_BYE), and
     * only then does the coordinator order it out (TM_EXIT), so that no
     * worker takes rank 0's exit for its loss and a collective finalize
     * starts only when every worker is there */
    TM_END, /* rank (coordinator -> worker) */
    TM_BYE, /* rank (worker -> coordinator) */
    /* results kept across a failover (task_worker.c, kept): a worker
     * keeps what its copies sent in TM_DONE until the coordinator says
     * their parent is done (TM_FORGET), and hands them to a new
     * coordinator after its hello (TM_KEPT), which takes a kept result
     * instead of running the job again */
    TM_KEPT,  /* rank; u32 n; n x (bytes path, bytes TM_DONE's body: u32
                 ret, u32 lock requests, bytes diff, output, u32 the
                 subtree's lock requests); the worker's lock record
                 (task_lockrec.c) */
    TM_FORGET, /* rank; u32 n; n x bytes path (finished jobs: their
                  descendants' results are not needed any more) */
    TM_KEEP,   /* rank; u32 blocks (the job had children); bytes path,
                  bytes TM_DONE's body: from the coordinator's rank to its
                  heir (the next coordinator), a result of its own copies */
    TM_LOCKREC /* rank; u32 0, bytes data, a grant's tail: a grant to a
                  copy of the coordinator's rank; or u32 1, bytes path,
                  u32 request, u32 lock, bytes data: its unlock; or u32
                  2, a whole record (task_lockrec_put): a new
                  coordinator's rank's own, which only it had, to be
                  merged; to the heir, for its lock record
                  (task_lockrec.c) */
};

/* TM_RUN's flags. */
#define TASK_RUN_DIFFS 1u  /* blocks carry the copy's diff, not its state */
#define TASK_RUN_ABSENT 2u /* pages start absent: fetched from the source */
#define TASK_PAGE_HDR 24   /* TM_PAGE before the page's bytes */

typedef struct task_rt {
    const shoal_task_program_t *prog;
    int argc;
    char **argv;
    int rank, size;
    /* The coordinator's rank: 0, then, each time it dies, the lowest
     * rank still alive (task_run.c, failover). */
    int coord;
    task_region_t region;
    /* Every lock: the program's (SHOAL_TASK_LOCK), then the shared heap's
     * (heap_lock), whose variable is the heap's top, kept in heap_top of
     * each process (private: it travels only in grants and unlocks). */
    shoal_task_lock_t *locks;
    uint32_t nlocks, heap_lock;
    uint64_t heap_top;
    uint64_t seed;
    uint32_t max_copies, max_crashes, suspect_locks;
    uint64_t suspect_ns, beat_ns;
    _Atomic uint32_t *bell; /* shared with copies: a copy has news */
    int pages;              /* SHOAL_TASK_PAGES: children fetch pages */
    /* In the page the bell is in: this worker's copies that wait at a
     * block, and how many pages children read from them themselves. */
    struct task_src_slot *srcs;
    /* The same page of other workers of this host, read-only, as a copy
     * mapped it when it first needed it (NULL: not yet, or never: another
     * host's rank, or one whose page could not be taken after
     * host_tries[rank] tries), and a pidfd of each such worker: a child
     * reads a page of a source on another worker of its host itself too
     * (task_page.c), while that worker lives.  NULL arrays: not shared
     * (task_worker.c, share_slots). */
    struct task_src_slot **host_srcs;
    int *host_pidfd;
    uint8_t *host_tries;
    _Atomic uint64_t *self_reads;
    /* In the page after the bell's: a bit per copy (by copy id modulo
     * TASK_NEWS), in TASK_NEWS / 64 words, that it sent its worker a
     * message, so that the worker reads only the channels that have some
     * (not every waiting parent's at every turn), and finds the raised
     * bits by looking at 64 words, not at each of its copies (a deep
     * chain keeps thousands of parents waiting on one worker);
     * my_news: this copy's word, my_news_bit its bit (NULL in a
     * worker). */
    _Atomic uint64_t *news, *my_news;
    uint64_t my_news_bit;
} task_rt_t;
#define TASK_NEWS 4096
#define TASK_NEWS_WORDS (TASK_NEWS / 64)
/* The bell's memfd: the bell, the mark and the source slots, then the
 * page of the news bits. */
#define TASK_BELL_SIZE 8192

/*
 * A copy of this worker that waits at a block (TM_BLOCK passed on,
 * TM_RESULTS not yet), as its worker publishes it in the page it shares
 * with its copies (task_worker.c): a child on the same worker whose pages
 * come from that copy reads them from its memory itself (task_page.c,
 * process_vm_readv) while waits says the child's block; the slot's seq
 * (a seqlock: the worker makes it odd, changes the slot, makes it even)
 * must not have moved over the read, and the worker clears waits before
 * it passes the results on, so a page read that way is the block's
 * start.
 */
typedef struct task_src_slot {
    _Atomic uint32_t seq;   /* odd while the worker changes the slot */
    _Atomic uint32_t copy;  /* UINT32_MAX: a free slot */
    _Atomic uint32_t waits; /* block + 1; 0 while it does not wait */
    _Atomic int32_t pid;
} task_src_slot_t;
#define TASK_SRC_OFFSET 64
/* In the same page, before the slots: whose page it is, checked by a copy
 * of another worker that maps it (the descriptor could be another). */
struct task_slots_mark {
    uint64_t magic;
    int32_t rank, pid;
    /* Set by a coordinator once its run is over (end_run), and by a
     * worker told so (TM_END): a worker of the host stopped across the
     * end, which finds the coordinator gone, reads here (in the
     * coordinator's page or another worker's) that it left after the run
     * rather than died. */
    _Atomic uint32_t over;
};
#define TASK_SLOTS_MARK 16
#define TASK_SLOTS_MAGIC 0x73746f6c736b7374ull /* "tsklots" */
#define TASK_SLOTS_FD 1000 /* the page's descriptor in every worker */
#define TASK_SRC_SLOTS ((4096 - TASK_SRC_OFFSET) / sizeof(task_src_slot_t))

extern task_rt_t task_rt;

/* A message's start: type and copy (or rank). */
static inline void task_msg_start(task_buf_t *b, uint32_t type, uint32_t id)
{
    task_buf_u32(b, type);
    task_buf_u32(b, id);
}

/* A TM_RUN read after its type and copy (the worker and the template
 * both make copies from it); the byte strings point into the message. */
typedef struct task_run_msg {
    uint32_t width, id;
    uint64_t fn;
    const uint8_t *path, *arg, *state;
    size_t pathlen, arglen, statelen;
    uint32_t flags;
    uint32_t src_rank, src_copy, src_block; /* the pages' source */
} task_run_msg_t;

/* rd->err (truncated) or SHOAL_OK. */
static inline int task_run_read(task_rd_t *rd, task_run_msg_t *m)
{
    m->width = task_rd_u32(rd);
    m->id = task_rd_u32(rd);
    m->fn = task_rd_u64(rd);
    m->path = task_rd_bytes(rd, &m->pathlen);
    m->arg = task_rd_bytes(rd, &m->arglen);
    m->state = task_rd_bytes(rd, &m->statelen);
    m->flags = task_rd_u32(rd);
    m->src_rank = task_rd_u32(rd);
    m->src_copy = task_rd_u32(rd);
    m->src_block = task_rd_u32(rd);
    return rd->err;
}

/* Ring this worker's loop (from a copy or a signal handler). */
void task_ring(void);
/* What every worker's address layout must agree on (task_run.c). */
uint64_t task_layout(void);

/* ---- the coordinator (task_coord.c) -------------------------------------- */

int task_coord_init(void);
void task_coord_fini(void);
/* A message for the coordinator. */
int task_coord_handle(int src, const uint8_t *msg, size_t len);
/* Time passed: dead and silent workers.  *done_p set once the run ended
 * (every worker has been sent TM_END); *status_p is the run's status then. */
int task_coord_tick(int *done_p, int *status_p);
/* After the run: 1 when every worker said goodbye (TM_BYE) or is gone. */
int task_coord_all_bye(void);
/* After the run: src was heard from (any message). */
void task_coord_heard(int src);
/* After the run: 1 when some worker still owes its goodbye and every such
 * worker has been silent for quiet_ns (stopped or starved: alive, since
 * the wires and the launcher report deaths). */
int task_coord_missing_silent(uint64_t quiet_ns);
/* Orders the workers out (TM_EXIT); 1 when the exit is a collective
 * finalize: no worker was lost or suspected and every one said goodbye. */
int task_coord_exit(void);

/* ---- a worker (task_worker.c) -------------------------------------------- */

int task_worker_init(void);
void task_worker_fini(void);
/* A message for this worker; on TM_EXIT *exit_p is 1 (finalize: every
 * worker is there) or 2 (do not: some may be gone), with *status_p.  On
 * TM_END it ends its copies and says goodbye. */
int task_worker_handle(const uint8_t *msg, size_t len, int *exit_p,
                       int *status_p);
/* A message from the coordinator on this rank for one of its copies,
 * passed on at once when it answers the copy's own message (TM_GRANT,
 * TM_RESULTS: nothing meant for the copy can be queued before it);
 * 0 when it must go through the inbox. */
int task_worker_direct(const uint8_t *msg, size_t len);
/* 1 once the coordinator said the run is over (TM_END): rank 0 gone then
 * is no failure. */
int task_worker_over(void);
/* Marks the run over in this worker's slots page (task_slots_mark). */
void task_worker_mark_over(void);
/* Messages from copies, copies that ended, heartbeats. */
int task_worker_tick(void);
/* Ends every copy (the run is over). */
void task_worker_kill_all(void);
/* 1 when workers keep their copies' results for a new coordinator: the
 * failover is on and there is more than one rank.  Only results of jobs
 * whose subtree made no lock request are kept (lock variables live in
 * the lock manager, which a failover starts anew: such a result would
 * lack their changes). */
int task_keeps_results(void);
/* After a failover's hello: the results this worker kept, to the new
 * coordinator (its own rank's: handed over, and forgotten here). */
int task_worker_send_kept(void);
/* The worker that keeps the results of the coordinator's rank's copies:
 * the lowest rank alive above the coordinator's, which a failover makes
 * the next coordinator; -1 when there is none (or nothing is kept). */
int task_worker_heir(void);

/* ---- a worker's lock record (task_lockrec.c) ---------------------------- */

/* One sequence entry as TM_GRANT's tail and a record carry it. */
void task_lockrec_entry(task_buf_t *b, const uint8_t *path, size_t pathlen,
                        uint32_t request, uint32_t lock, uint32_t version);
/* A grant to one of this worker's copies, of data: rd is at its tail. */
int task_lockrec_grant(task_rd_t *rd, const uint8_t *data, size_t len);
/* A copy of the job at path sent msg (TM_UNLOCK): the version it made. */
int task_lockrec_unlock(const uint8_t *path, size_t pathlen,
                        const uint8_t *msg, size_t len);
/* TM_LOCKREC (this worker is the heir): rd after its rank. */
int task_lockrec_heir(task_rd_t *rd);
/* The record, for TM_KEPT. */
void task_lockrec_put(task_buf_t *b);
void task_lockrec_clear(void);
/* Its entries and versions (for the log). */
void task_lockrec_size(size_t *nseq, size_t *nv);
void task_lockrec_fini(void);
/* The coordinator: a worker's record (p: TM_KEPT's tail, which must
 * outlive rec: the versions point into it); task_lockrec_free after. */
int task_lockrec_read(const uint8_t *p, size_t len, uint32_t worker,
                      task_lock_record_t *rec);
void task_lockrec_free(task_lock_record_t *rec);

/* ---- a copy (task_copy.c) ------------------------------------------------ */

/* In the child process: runs the job, and then, when its worker sends
 * them, later jobs' runs (a warm copy, SHOAL_TASK_REUSE); exits at the
 * channel's end. */
void task_copy_main(int fd, uint32_t copy, const task_path_t *path,
                    uint64_t fn, uint32_t width, uint32_t id,
                    const uint8_t *arg, size_t arglen, const uint8_t *state,
                    size_t statelen, uint32_t flags) BASE_NORETURN;

/* ---- the template copies are forked from (task_spawn.c) ---------------- */

int task_spawn_init(void);
void task_spawn_fini(void);
/* A copy for a TM_RUN message: its pid (a child of this worker) and the
 * worker's end of its channel.  SHOAL_ERR_AGAIN: no template (fork). */
int task_spawn(const uint8_t *run, size_t len, pid_t *pid_p, int *fd_p);
/* The template's pid (0: none); forgets a template that was reaped. */
int task_spawn_pid(void);
void task_spawn_gone(void);

/* ---- pages on demand in a copy (task_page.c) ---------------------------- */

/* Makes the copy's (tracked) areas absent: pages come from the source. */
int task_page_absent(int fd, uint32_t copy);
/* The run's source of pages (TM_RUN's rank, copy and block). */
void task_page_source(uint32_t rank, uint32_t copy, uint32_t block);
/* The next run in this process (a warm copy): every page absent again,
 * or, for a sibling of the last run (same parent, same block: it starts
 * from the same memory), the pages it read kept and those it wrote
 * restored. */
int task_page_rearm(uint32_t copy, int sibling);
/* A TM_PAGE_REQ came while the copy waits at block waiting - 1 (0: it
 * does not wait): answers it, passes it up, or, for a page absent here,
 * asks for the page for this copy and answers when it comes
 * (task_page_take). */
void task_page_serve(int fd, const uint8_t *msg, size_t len,
                     uint32_t waiting);
/* The mark of the source slots of rank, a worker of this host, mapped on
 * first use (NULL: another host's, or not shared). */
const struct task_slots_mark *task_page_host_mark(int rank);
/* A TM_PAGE for this copy outside a fault: the page task_page_serve asked
 * for, filled in and served to the requests that wait for it (or one
 * meant for a wait that is over: ignored). */
void task_page_take(int fd, const uint8_t *msg, size_t len,
                    uint32_t waiting);

#endif /* SHOAL_TASK_RT_H */
