/*
 * The coordinator (task_rt.h), on rank 0: drives the scheduler
 * (task_sched.h) and the lock manager (task_lock.h) with what workers and
 * copies report, carries out their orders as messages, and keeps what
 * the run needs to survive losing any other worker: every block's state
 * (what its children start from), every finished job's diff and output
 * until its parent has finished (a late or new copy of the parent takes
 * them instead of running the children again).  A coordinator that takes
 * over after a failover also takes the results the workers kept (TM_KEPT)
 * instead of running those jobs again.
 *
 * Workers report through messages, and a worker that the active-message
 * layer finds dead, or that stays silent for SHOAL_TASK_SUSPECT, loses
 * its copies: their jobs run elsewhere.  A silent worker that speaks
 * again joins anew; the copies it had are killed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/base.h"
#include "task/task_grow.h"
#include "task/task_lock.h"
#include "task/task_msg.h"
#include "task/task_rt.h"
#include "task/task_sched.h"

typedef struct c_block {
    uint8_t *desc, *state; /* state: or the parent's diff (pages mode) */
    size_t desclen, statelen;
    uint32_t first, n, finished;
    uint32_t src; /* a copy of the parent waiting at it: serves pages */
    /* state's skip tables (TASK_AREAS), made at its first page served
     * without its source (page_coord) */
    task_diff_skip_t *skip;
} c_block_t;

typedef struct c_job {
    task_path_t path;
    uint32_t parent, block;
    uint64_t fn;
    uint32_t width, id;
    uint8_t *arg;
    size_t arglen;
    c_block_t *blocks;
    size_t nblocks, capb;
    int done;
    uint8_t *diff, *out;
    size_t difflen, outlen;
    uint32_t subreq; /* lock requests of its subtree (TM_DONE) */
    uint32_t crashes, last_status;
} c_job_t;

typedef struct c_copy {
    uint32_t job;
    int rank, waiting, gone;
    int lock_wait; /* waits for a lock grant (blocked, or suspended) */
    uint32_t block;
    uint8_t *pending; /* a TM_BLOCK that came while it was suspended */
    size_t pendlen;
    uint32_t at_block; /* block + 1 while it waits there (serves pages) */
} c_copy_t;

static struct {
    task_sched_t *s;
    task_lock_t *m;
    c_job_t *jobs;
    size_t njobs, capj;
    c_copy_t *copies;
    size_t ncopies, capc;
    int *rank_of; /* by scheduler worker id */
    size_t capw;
    uint32_t *worker_of; /* by rank */
    uint64_t *last_seen;
    /* by rank: the silence after which it is taken for silent (0: the
     * base, SHOAL_TASK_SUSPECT), doubled each time it speaks again after
     * that, halved after a calm stretch (patience_of, calm) */
    uint64_t *patience, *calm_since, *gap_max;
    uint8_t *lost, *suspected;
    uint8_t *bye; /* by rank: said goodbye after the run (TM_BYE) */
    int done, status, any_lost;
    uint64_t layout;
    /* for the summary at the end (SHOAL_LOG=info) */
    uint64_t n_penalized, n_suspected, n_lost, n_crashed, n_blocked;
    uint64_t last_progress; /* a copy's message last came */
    int stall_told;
    /* pages the coordinator served (a source gone or slow) */
    uint64_t n_pages;
    const uint8_t **chain;
    size_t *chainlen;
    const task_diff_skip_t **chainskip;
    size_t capchain, capchainlen, capchainskip;
    /* Results workers kept from before a failover (TM_KEPT), by path;
     * res NULL once taken. */
    struct c_kept {
        uint8_t *path, *res;
        size_t pathlen, reslen;
        int rank; /* the worker that keeps it */
    } *kept;
    size_t nkept, capkept;
    /* kept's index by path: open addressing, linear probing, entries
     * kept index + 1 (0 empty), at most half full (kept_index) */
    uint32_t *kidx;
    size_t kcap;
    /* Runs that take a kept result instead of running (send_run), done
     * once the orders at hand are carried out (pump); kill: the copy runs
     * on its worker and must be ended. */
    struct c_instant {
        uint32_t copy, kept;
        int kill;
    } *instant;
    size_t ninstant, capinstant;
    /* Copies resumed with a TM_BLOCK that came while they were suspended
     * (c_copy_t.pending): taken once the orders at hand are carried out
     * (pump), never in the middle of them, whose later orders were
     * decided before the block's. */
    uint32_t *resumed;
    size_t nresumed, capresumed;
    uint64_t n_kept, n_kept_used;
    /* After a failover in a program with locks: the run waits until
     * every worker alive sent its kept results and lock record (TM_KEPT)
     * or SHOAL_TASK_SUSPECT passed (gate_open), then the lock manager is
     * rebuilt from the records and the root job starts. */
    int gating;
    uint64_t gate_since;
    uint8_t *got_kept;           /* by rank */
    struct c_rec {
        uint8_t *p;
        size_t len;
    } *recs;                     /* by rank: TM_KEPT's tail */
    uint64_t n_kept_locks, n_kept_locks_dropped;
    /* By scheduler worker id: how much of the lock manager's sequence the
     * worker's lock record has (grants' tails and TM_LOCKREC, counted as
     * they are sent, so that the worker sees them in order). */
    uint64_t *sent;
    size_t capsent;
    /* Paths of finished jobs with blocks, for the workers to forget their
     * children's results (TM_FORGET, sent at the next tick). */
    task_buf_t forget;
    uint32_t nforget;
} co;

static int handle(int src, const uint8_t *msg, size_t len);
static int gate_open(int late);
static int job_done(uint32_t copy, uint32_t ret, const uint8_t *diff,
                    size_t dlen, const uint8_t *out, size_t olen,
                    uint32_t subreq, int holder);

/* ---- orders -------------------------------------------------------------- */

static int send_to(int rank, task_buf_t *b)
{
    if (b->err)
        return b->err;
    int here = rank == task_rt.rank && task_worker_direct(b->p, b->len);
    int s = co.lost[rank] || here ? SHOAL_OK
                                  : task_msg_send(rank, b->p, b->len);
    if (co.lost[rank] || here)
        free(b->p);
    memset(b, 0, sizeof(*b));
    return s;
}

/* ---- results kept from before a failover --------------------------------- */

/* The kept result of the job at path, not taken yet, or TASK_NONE: by
 * the index, since a failover may bring the results of many thousands of
 * jobs, each looked up as its job comes up again.  Two workers may keep
 * the same job's result: the first not taken is found. */
static uint32_t kept_find(const task_path_t *path)
{
    if (co.kcap == 0)
        return TASK_NONE;
    size_t mask = co.kcap - 1;
    for (size_t h = base_hash64(path->bytes, path->len) & mask;;
         h = (h + 1) & mask) {
        uint32_t e = co.kidx[h];
        if (e == 0)
            return TASK_NONE;
        const struct c_kept *k = &co.kept[e - 1];
        if (k->res != NULL && k->pathlen == path->len &&
            (path->len == 0 || memcmp(k->path, path->bytes, path->len) == 0))
            return e - 1;
    }
}

static void kept_put(size_t i)
{
    size_t mask = co.kcap - 1;
    size_t h = base_hash64(co.kept[i].path, co.kept[i].pathlen) & mask;

    while (co.kidx[h] != 0)
        h = (h + 1) & mask;
    co.kidx[h] = (uint32_t)i + 1;
}

/* Enters kept[i] (i == co.nkept, the newest) in the index, doubling it
 * first when it would be more than half full. */
static int kept_index(size_t i)
{
    if (2 * (i + 1) > co.kcap) {
        size_t cap = co.kcap ? 2 * co.kcap : 64;
        uint32_t *t = calloc(cap, sizeof(*t));
        if (t == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: kept results' index");
        free(co.kidx);
        co.kidx = t;
        co.kcap = cap;
        for (size_t k = 0; k < i; k++)
            kept_put(k);
    }
    kept_put(i);
    return SHOAL_OK;
}

static int instant_add(uint32_t copy, uint32_t kept, int kill)
{
    int s = task_grow((void **)&co.instant, &co.capinstant, co.ninstant + 1,
                      sizeof(*co.instant), "task: kept results");
    if (s == SHOAL_OK)
        co.instant[co.ninstant++] = (struct c_instant){copy, kept, kill};
    return s;
}

/* Copy finishes with kept result k instead of running: as if it had sent
 * it (TM_DONE).  A copy that runs (kill) is ended: its job is done. */
static int kept_done(uint32_t copy, uint32_t k, int kill)
{
    struct c_kept *e = &co.kept[k];
    c_copy_t *c = &co.copies[copy];
    task_rd_t rd;
    size_t dlen, olen;

    if (e->res == NULL || c->gone || co.jobs[c->job].done)
        return SHOAL_OK; /* taken meanwhile, or the copy is gone */
    task_rd_init(&rd, e->res, e->reslen);
    uint32_t ret = task_rd_u32(&rd);
    (void)task_rd_u32(&rd); /* its own lock requests */
    const uint8_t *diff = task_rd_bytes(&rd, &dlen);
    const uint8_t *out = task_rd_bytes(&rd, &olen);
    uint32_t subreq = task_rd_u32(&rd); /* the rebuilt manager holds them */
    if (rd.err)
        return base_err(SHOAL_ERR_PROTOCOL, "task: a kept result from a "
                        "worker is malformed");
    co.n_kept_used++;
    int s = job_done(copy, ret, diff, dlen, out, olen, subreq, e->rank);
    free(e->res); /* job_done copied it */
    e->res = NULL;
    if (s == SHOAL_OK && kill && !co.done) {
        task_buf_t b = {0};
        task_msg_start(&b, TM_KILL, copy);
        s = send_to(c->rank, &b);
    }
    return s;
}

/* ---- ending the run ------------------------------------------------------ */

/* The run is over: every worker not lost is told so (TM_END), suspected
 * ones too (one that is only slow says goodbye when it wakes).  They are
 * ordered out only once they have answered (task_coord_exit): an exit
 * order sent at once could wait behind a stopped worker's full window
 * until rank 0 left, and the worker would then wait for it forever, or
 * take rank 0's exit for its loss. */
static void broadcast_end(void)
{
    for (int r = 0; r < task_rt.size; r++) {
        task_buf_t b = {0};
        if (r == task_rt.rank || co.lost[r])
            continue;
        task_msg_start(&b, TM_END, (uint32_t)r);
        if (!b.err)
            task_msg_send(r, b.p, b.len);
    }
}

int task_coord_all_bye(void)
{
    for (int r = 0; r < task_rt.size; r++)
        if (r != task_rt.rank && !co.bye[r] && !co.lost[r] &&
            !task_msg_dead(r))
            return 0;
    return 1;
}

void task_coord_heard(int src)
{
    if (src >= 0 && src < task_rt.size && co.last_seen != NULL)
        co.last_seen[src] = base_time_ns();
}

int task_coord_missing_silent(uint64_t quiet_ns)
{
    uint64_t now = base_time_ns();
    int any = 0;

    for (int r = 0; r < task_rt.size; r++) {
        if (r == task_rt.rank || co.bye[r] || co.lost[r] || task_msg_dead(r))
            continue;
        if (now - co.last_seen[r] < quiet_ns)
            return 0;
        any = 1;
    }
    return any;
}

int task_coord_exit(void)
{
    int finalize = !co.any_lost;

    /* (A rank that died, a coordinator before this one say, cannot take
     * part in a collective finalize.) */
    for (int r = 0; r < task_rt.size; r++)
        finalize &= r == task_rt.rank ||
                    (co.bye[r] && !co.lost[r] && !task_msg_dead(r));
    for (int r = 0; r < task_rt.size; r++) {
        task_buf_t b = {0};
        if (r == task_rt.rank || co.lost[r] || task_msg_dead(r))
            continue;
        task_msg_start(&b, TM_EXIT, (uint32_t)r);
        task_buf_u32(&b, 0);
        task_buf_u32(&b, (uint32_t)finalize);
        if (!b.err)
            task_msg_send(r, b.p, b.len);
    }
    return finalize;
}

static int fatal(const char *fmt, ...) BASE_PRINTF(1, 2);

static int fatal(const char *fmt, ...)
{
    va_list ap;

    if (co.done)
        return SHOAL_OK;
    fflush(stdout);
    fprintf(stderr, "shoal task: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    co.done = 1;
    co.status = 1;
    co.any_lost = 1; /* copies may be anywhere: no collective finalize */
    broadcast_end();
    return SHOAL_OK;
}

static const char *path_text(const task_path_t *p, char *buf, size_t cap)
{
    task_path_format(p, buf, cap);
    return buf;
}

static void finish(uint32_t ret, const c_job_t *root)
{
    base_info("task", "done: %zu jobs, %zu runs of them; %llu lock waits, "
              "%llu penalties, %llu workers suspected, %llu lost, %llu "
              "crashed runs, %llu pages from the coordinator, %llu of "
              "%llu kept results taken (%llu of them took locks, %llu "
              "such dropped)",
              co.njobs, co.ncopies, (unsigned long long)co.n_blocked,
              (unsigned long long)co.n_penalized,
              (unsigned long long)co.n_suspected,
              (unsigned long long)co.n_lost,
              (unsigned long long)co.n_crashed,
              (unsigned long long)co.n_pages,
              (unsigned long long)co.n_kept_used,
              (unsigned long long)co.n_kept,
              (unsigned long long)co.n_kept_locks,
              (unsigned long long)co.n_kept_locks_dropped);
    fflush(stdout);
    if (root->outlen > 0)
        fwrite(root->out, 1, root->outlen, stdout);
    fflush(stdout);
    co.done = 1;
    co.status = (int)ret;
    broadcast_end();
}

/* A copy of job waiting at its block b, to serve its children's pages,
 * or TASK_NONE (they ask the coordinator). */
static uint32_t block_source(uint32_t job, uint32_t b)
{
    uint32_t k = co.jobs[job].blocks[b].src;

    if (k < co.ncopies && !co.copies[k].gone && co.copies[k].job == job &&
        co.copies[k].at_block == b + 1)
        return k;
    return TASK_NONE;
}

static int send_run(const task_order_t *o)
{
    c_job_t *j = &co.jobs[o->job];
    task_buf_t b = {0};
    int s = task_grow((void **)&co.copies, &co.capc, (size_t)o->copy + 1,
                      sizeof(*co.copies), "task: copies");

    if (s != SHOAL_OK)
        return s;
    while (co.ncopies <= o->copy)
        memset(&co.copies[co.ncopies++], 0, sizeof(*co.copies));
    co.copies[o->copy] = (c_copy_t){.job = o->job,
                                    .rank = co.rank_of[o->worker]};
    uint32_t k = kept_find(&j->path);
    if (k != TASK_NONE) /* finished before a failover: not run again */
        return instant_add(o->copy, k, 0);
    task_msg_start(&b, TM_RUN, o->copy);
    task_buf_u32(&b, j->width);
    task_buf_u32(&b, j->id);
    task_buf_u64(&b, j->fn);
    task_buf_bytes(&b, j->path.bytes, j->path.len);
    task_buf_bytes(&b, j->arg, j->arglen);
    if (j->parent == TASK_NONE) {
        task_buf_u64(&b, 16); /* an empty state: no byte of either area */
        task_buf_u64(&b, 0);
        task_buf_u64(&b, 0);
    } else if (!task_rt.pages) {
        const c_block_t *blk = &co.jobs[j->parent].blocks[j->block];
        task_buf_bytes(&b, blk->state, blk->statelen);
    } else
        task_buf_u64(&b, 0); /* its pages come from its source */
    uint32_t flags = task_rt.pages ? TASK_RUN_DIFFS : 0, src = TASK_NONE;
    if (task_rt.pages && j->parent != TASK_NONE) {
        flags |= TASK_RUN_ABSENT;
        if (task_rt.pages == 1)
            src = block_source(j->parent, j->block);
    }
    task_buf_u32(&b, flags);
    task_buf_u32(&b, src == TASK_NONE ? 0 : (uint32_t)co.copies[src].rank);
    task_buf_u32(&b, src);
    task_buf_u32(&b, j->block);
    return send_to(co.rank_of[o->worker], &b);
}

static int send_results(uint32_t copy)
{
    c_copy_t *c = &co.copies[copy];
    const c_block_t *blk = &co.jobs[c->job].blocks[c->block];
    task_buf_t b = {0};

    c->at_block = 0; /* it goes on: its memory changes */
    task_msg_start(&b, TM_RESULTS, copy);
    task_buf_u32(&b, blk->n);
    for (uint32_t k = blk->first; k < blk->first + blk->n; k++) {
        const c_job_t *ch = &co.jobs[k];
        task_buf_bytes(&b, ch->path.bytes, ch->path.len);
        task_buf_bytes(&b, ch->diff, ch->difflen);
        task_buf_bytes(&b, ch->out, ch->outlen);
        task_buf_u32(&b, ch->subreq);
    }
    return send_to(c->rank, &b);
}

static int send_simple(uint32_t type, uint32_t copy)
{
    task_buf_t b = {0};

    task_msg_start(&b, type, copy);
    return send_to(co.copies[copy].rank, &b);
}

static void copy_gone(uint32_t copy)
{
    if (copy < co.ncopies && !co.copies[copy].gone) {
        co.copies[copy].gone = 1;
        task_lock_copy_gone(co.m, copy);
    }
}

static int sched_order(const task_order_t *o)
{
    c_copy_t *c;

    switch (o->kind) {
    case TASK_ORDER_RUN:
        return send_run(o);
    case TASK_ORDER_SUSPEND:
        return send_simple(TM_SUSPEND, o->copy);
    case TASK_ORDER_KILL:
        copy_gone(o->copy);
        return send_simple(TM_KILL, o->copy);
    case TASK_ORDER_RESUME:
        c = &co.copies[o->copy];
        if (c->waiting) {
            c->waiting = 0;
            return send_results(o->copy);
        }
        task_lock_copy_resumed(co.m, o->copy);
        int s = send_simple(TM_CONT, o->copy);
        task_copy_info_t info;
        /* Still waiting for a lock (the wait came while it was
         * suspended): its worker is free again at once. */
        if (s == SHOAL_OK && c->lock_wait &&
            task_sched_copy_info(co.s, o->copy, &info) == SHOAL_OK &&
            info.state == TASK_COPY_RUNNING)
            s = task_sched_copy_blocks(co.s, o->copy);
        if (s == SHOAL_OK && c->pending != NULL) {
            s = task_grow((void **)&co.resumed, &co.capresumed,
                          co.nresumed + 1, sizeof(*co.resumed),
                          "task: resumed runs");
            if (s == SHOAL_OK)
                co.resumed[co.nresumed++] = o->copy;
        }
        return s;
    }
    return SHOAL_ERR_INTERNAL;
}

/* co.sent up to worker w (new entries 0). */
static int sent_grow(uint32_t w)
{
    size_t old = co.capsent;
    int s = task_grow((void **)&co.sent, &co.capsent, (size_t)w + 1,
                      sizeof(*co.sent), "task: lock records");

    if (s == SHOAL_OK && co.capsent > old)
        memset(co.sent + old, 0, (co.capsent - old) * sizeof(*co.sent));
    return s;
}

/* What a worker keeps of a grant to its copy (its lock record,
 * task_lockrec.c): the before-image's lock and version, and the sequence
 * entries it has not seen. */
static void grant_tail(task_buf_t *b, const task_lock_order_t *o, uint32_t w)
{
    if (sent_grow(w) != SHOAL_OK) {
        b->err = SHOAL_ERR_NOMEM;
        return;
    }
    uint64_t from = co.sent[w], to = task_lock_seq_len(co.m);
    if (from > to)
        from = to;
    co.sent[w] = to;
    task_buf_u32(b, o->lock);
    task_buf_u32(b, o->version);
    task_buf_u64(b, from);
    task_buf_u32(b, (uint32_t)(to - from));
    for (uint64_t k = from; k < to; k++) {
        task_lock_entry_t e;
        if (task_lock_entry(co.m, k, &e) != SHOAL_OK) {
            b->err = SHOAL_ERR_INTERNAL;
            return;
        }
        task_lockrec_entry(b, e.job.bytes, e.job.len, e.request, e.lock,
                           e.version);
    }
}

/* The heir of the coordinator's rank (the next coordinator) keeps the
 * lock record of this rank's copies too, which would die with it: a copy
 * of each grant to them (TM_LOCKREC 0) and of each of their unlocks
 * (TM_LOCKREC 1).  -1: no heir (or nothing is kept). */
static int heir_worker(int *rank_p)
{
    int heir = task_worker_heir();

    *rank_p = heir;
    if (heir < 0 || co.lost[heir] || co.worker_of[heir] == TASK_NONE)
        return -1;
    return (int)co.worker_of[heir];
}

static int heir_grant(const task_lock_order_t *o)
{
    int rank, w = heir_worker(&rank);
    task_buf_t b = {0};

    if (w < 0)
        return SHOAL_OK;
    task_msg_start(&b, TM_LOCKREC, (uint32_t)task_rt.rank);
    task_buf_u32(&b, 0);
    task_buf_bytes(&b, o->data, o->len);
    grant_tail(&b, o, (uint32_t)w);
    if (b.err) {
        task_buf_free(&b);
        return b.err;
    }
    return task_msg_send(rank, b.p, b.len);
}

static int heir_unlock(const c_job_t *j, uint32_t req, uint32_t lock,
                       const uint8_t *data, size_t n)
{
    int rank, w = heir_worker(&rank);
    task_buf_t b = {0};

    if (w < 0)
        return SHOAL_OK;
    task_msg_start(&b, TM_LOCKREC, (uint32_t)task_rt.rank);
    task_buf_u32(&b, 1);
    task_buf_bytes(&b, j->path.bytes, j->path.len);
    task_buf_u32(&b, req);
    task_buf_u32(&b, lock);
    task_buf_bytes(&b, data, n);
    if (b.err) {
        task_buf_free(&b);
        return b.err;
    }
    return task_msg_send(rank, b.p, b.len);
}

static int lock_order(const task_lock_order_t *o)
{
    task_buf_t b = {0};
    task_copy_info_t info;
    int s;

    switch (o->kind) {
    case TASK_LOCK_GRANT:
        task_msg_start(&b, TM_GRANT, o->copy);
        task_buf_u32(&b, o->released);
        task_buf_bytes(&b, o->data, o->len);
        if (task_keeps_results() && co.copies[o->copy].rank != task_rt.rank)
            grant_tail(&b, o, co.worker_of[co.copies[o->copy].rank]);
        else if ((s = heir_grant(o)) != SHOAL_OK) {
            task_buf_free(&b);
            return s;
        }
        co.copies[o->copy].lock_wait = 0;
        s = send_to(co.copies[o->copy].rank, &b);
        /* A copy that waited goes on at once (a holder must not wait for
         * a worker: every other job waits for it), though the scheduler
         * counts it as suspended until its worker is free for it. */
        return s == SHOAL_OK ? task_sched_copy_unblocks(co.s, o->copy) : s;
    case TASK_LOCK_WAIT:
        /* It waits in a read, using no processor: its worker runs other
         * copies meanwhile (the holder of the lock, maybe).  A suspended
         * copy is blocked when it resumes. */
        co.copies[o->copy].lock_wait = 1;
        if (task_sched_copy_info(co.s, o->copy, &info) != SHOAL_OK ||
            info.state != TASK_COPY_RUNNING)
            return SHOAL_OK;
        co.n_blocked++;
        return task_sched_copy_blocks(co.s, o->copy);
    case TASK_LOCK_REFUSE:
        return send_simple(TM_KILL, o->copy);
    case TASK_LOCK_PENALIZE:
        co.n_penalized++;
        return task_sched_copy_penalize(co.s, o->copy) < 0
                   ? SHOAL_ERR_INTERNAL
                   : SHOAL_OK;
    }
    return SHOAL_ERR_INTERNAL;
}

/* Carries out the orders of both state machines until neither has any
 * (each may cause orders of the other). */
static int pump(void)
{
    for (;;) {
        size_t n;
        const task_lock_order_t *lo = task_lock_orders(co.m, &n);
        if (n > 0) {
            task_lock_order_t *copy = malloc(n * sizeof(*copy));
            if (copy == NULL)
                return base_err(SHOAL_ERR_NOMEM, "task: lock orders");
            memcpy(copy, lo, n * sizeof(*copy));
            task_lock_orders_clear(co.m);
            int s = SHOAL_OK;
            for (size_t i = 0; i < n && s == SHOAL_OK; i++)
                s = lock_order(&copy[i]);
            free(copy);
            if (s != SHOAL_OK)
                return s;
            continue;
        }
        const task_order_t *so = task_sched_orders(co.s, &n);
        if (n == 0 && co.nresumed > 0 && !co.done) {
            c_copy_t *c = &co.copies[co.resumed[--co.nresumed]];
            uint8_t *p = c->pending;
            c->pending = NULL;
            int s = p != NULL && !c->gone ? handle(c->rank, p, c->pendlen)
                                          : SHOAL_OK;
            free(p);
            if (s != SHOAL_OK)
                return s;
            continue;
        }
        if (n == 0 && co.ninstant > 0 && !co.done) {
            struct c_instant in = co.instant[--co.ninstant];
            int s = kept_done(in.copy, in.kept, in.kill);
            if (s != SHOAL_OK)
                return s;
            continue;
        }
        if (n == 0)
            return SHOAL_OK;
        task_order_t *copy = malloc(n * sizeof(*copy));
        if (copy == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: orders");
        memcpy(copy, so, n * sizeof(*copy));
        task_sched_orders_clear(co.s);
        int s = SHOAL_OK;
        for (size_t i = 0; i < n && s == SHOAL_OK && !co.done; i++)
            s = sched_order(&copy[i]);
        free(copy);
        if (s != SHOAL_OK)
            return s;
    }
}

/* ---- workers ------------------------------------------------------------- */

static int join(int rank)
{
    uint32_t w;
    int s = task_sched_worker_join(co.s, &w);

    if (s == SHOAL_OK)
        s = task_grow((void **)&co.rank_of, &co.capw, (size_t)w + 1,
                      sizeof(*co.rank_of), "task: workers");
    if (s != SHOAL_OK)
        return s;
    co.rank_of[w] = rank;
    co.worker_of[rank] = w;
    co.last_seen[rank] = base_time_ns();
    return pump();
}

static void forget_copies(int rank)
{
    for (size_t k = 0; k < co.ncopies; k++)
        if (co.copies[k].rank == rank)
            copy_gone((uint32_t)k);
}

/* Nothing from any copy for a while: what the jobs wait for (SHOAL_LOG=
 * info; a program that waits for itself, or a bug of ours). */
static void tell_stall(void)
{
    static const char *const state[] = {"running", "suspended", "waiting",
                                        "gone", "blocked"};
    char pb[256];

    base_warn("task", "no job has made progress for 10 s; SHOAL_LOG=info "
                      "shows what each waits for");
    for (size_t k = 0; k < co.njobs; k++) {
        if (co.jobs[k].done)
            continue;
        path_text(&co.jobs[k].path, pb, sizeof(pb));
        base_info("task", "job %zu %s: %u locks held", k, pb,
                  task_lock_held(co.m, &co.jobs[k].path));
    }
    for (size_t c = 0; c < co.ncopies; c++) {
        task_copy_info_t info;
        if (task_sched_copy_info(co.s, (uint32_t)c, &info) != SHOAL_OK ||
            info.state == TASK_COPY_GONE)
            continue;
        base_info("task", "run %zu of job %u: %s on worker %u (rank %d), "
                  "ordinal %u, penalty %u",
                  c, info.job, state[info.state], info.worker,
                  co.rank_of[info.worker], info.ordinal, info.penalty);
    }
    for (uint32_t l = 0; l < task_rt.nlocks; l++)
        base_info("task", "lock %u: owner entry %lld", l,
                  (long long)(int64_t)task_lock_owner(co.m, l));
}

/* The finished jobs of the last turn, to every worker (TM_FORGET): their
 * children's results need not be kept any more. */
static int send_forget(void)
{
    int s = co.forget.err;

    for (int r = 0; r < task_rt.size && s == SHOAL_OK; r++) {
        /* (A silent worker would only pile them up: what it keeps too
         * long costs it memory, nothing else.) */
        if (r == task_rt.rank || co.lost[r] || co.suspected[r] ||
            co.worker_of[r] == TASK_NONE)
            continue;
        task_buf_t b = {0};
        task_msg_start(&b, TM_FORGET, (uint32_t)r);
        task_buf_u32(&b, co.nforget);
        task_buf_raw(&b, co.forget.p, co.forget.len);
        s = b.err ? b.err : task_msg_send(r, b.p, b.len);
    }
    co.forget.len = 0;
    co.nforget = 0;
    return s;
}

/* A worker that was taken for silent and then spoke again was alive,
 * only starved of a CPU (stopped, or on a host overloaded by others):
 * taken for silent again at the same bound it would flap, losing its jobs
 * and rejoining over and over while it still runs them.  So each time it
 * comes back its bound doubles, up to TASK_PATIENCE_MAX times the base,
 * and halves again after a stretch of TASK_PATIENCE_CALM times the bound
 * in which it never kept silent for half the base (gap_max): a worker
 * still starved keeps its patience.  A dead worker is found by the
 * wires, not by this. */
#define TASK_PATIENCE_MAX 16
#define TASK_PATIENCE_CALM 8

static uint64_t patience_of(int r)
{
    return co.patience[r] != 0 ? co.patience[r] : task_rt.suspect_ns;
}

static void calm(int r, uint64_t now)
{
    uint64_t p = co.patience[r];

    if (p <= task_rt.suspect_ns ||
        now - co.calm_since[r] < TASK_PATIENCE_CALM * p)
        return;
    if (2 * co.gap_max[r] <= task_rt.suspect_ns)
        co.patience[r] = p / 2 > task_rt.suspect_ns ? p / 2 : 0;
    co.calm_since[r] = now;
    co.gap_max[r] = 0;
}

static void lapsed(int r, uint64_t now)
{
    uint64_t p = 2 * patience_of(r);
    uint64_t max = TASK_PATIENCE_MAX * task_rt.suspect_ns;

    co.patience[r] = p < max ? p : max;
    co.calm_since[r] = now;
    co.gap_max[r] = 0;
}

int task_coord_tick(int *done_p, int *status_p)
{
    uint64_t now = base_time_ns();
    int s = SHOAL_OK;

    if (now - co.last_progress > 10000000000ull && !co.stall_told &&
        !co.done) {
        co.stall_told = 1;
        tell_stall();
    }

    for (int r = 0; r < task_rt.size && s == SHOAL_OK && !co.done; r++) {
        uint32_t w = co.worker_of[r];
        if (r == task_rt.rank || w == TASK_NONE || co.lost[r])
            continue;
        if (task_msg_dead(r)) {
            co.lost[r] = 1;
            co.any_lost = 1;
            co.n_lost++;
            base_info("task", "worker %d is gone: its jobs run elsewhere", r);
            forget_copies(r);
            /* A suspected worker is out of the scheduler already. */
            if (!co.suspected[r])
                s = task_sched_worker_lost(co.s, w);
        } else if (!co.suspected[r] &&
                   now - co.last_seen[r] > patience_of(r)) {
            co.suspected[r] = 1;
            co.any_lost = 1;
            co.n_suspected++;
            base_info("task", "worker %d is silent (%llu ms): its jobs run "
                      "elsewhere", r,
                      (unsigned long long)(patience_of(r) / 1000000));
            forget_copies(r);
            s = task_sched_worker_suspect(co.s, w);
        } else {
            if (!co.suspected[r])
                calm(r, now);
            continue;
        }
        if (s == SHOAL_OK)
            s = pump();
    }
    if (s == SHOAL_OK && co.nforget > 0 && !co.done)
        s = send_forget();
    if (s == SHOAL_OK && co.gating)
        s = gate_open(now - co.gate_since > task_rt.suspect_ns);
    *done_p = co.done;
    *status_p = co.status;
    return s;
}

/* ---- jobs and blocks ----------------------------------------------------- */

static int new_jobs(uint32_t parent, uint32_t block, const uint8_t *desc,
                    size_t desclen, uint32_t nroutines, uint32_t first)
{
    task_rd_t rd;
    uint32_t k = first;

    task_rd_init(&rd, desc, desclen);
    for (uint32_t r = 0; r < nroutines; r++) {
        uint64_t fn = task_rd_u64(&rd);
        uint32_t width = task_rd_u32(&rd);
        size_t alen;
        const uint8_t *arg = task_rd_bytes(&rd, &alen);
        for (uint32_t id = 0; id < width && !rd.err; id++, k++) {
            int s = task_grow((void **)&co.jobs, &co.capj, (size_t)k + 1,
                              sizeof(*co.jobs), "task: jobs");
            if (s != SHOAL_OK)
                return s;
            c_job_t *j = &co.jobs[k];
            memset(j, 0, sizeof(*j));
            j->parent = parent;
            j->block = block;
            j->fn = fn;
            j->width = width;
            j->id = id;
            j->arg = malloc(alen ? alen : 1);
            if (j->arg == NULL)
                return base_err(SHOAL_ERR_NOMEM, "task: arguments");
            memcpy(j->arg, arg, alen);
            j->arglen = alen;
            s = task_path_child(&co.jobs[parent].path, block, r, id,
                                &j->path);
            if (s != SHOAL_OK)
                return s;
            co.njobs = (size_t)k + 1;
        }
    }
    return rd.err;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (d != NULL && n > 0)
        memcpy(d, p, n);
    return d;
}

/* Walks the routine list of a TM_BLOCK: its length and job count. */
static int scan_desc(task_rd_t *rd, uint32_t nroutines, uint64_t *njobs)
{
    *njobs = 0;
    for (uint32_t r = 0; r < nroutines; r++) {
        size_t alen;
        (void)task_rd_u64(rd);
        *njobs += task_rd_u32(rd);
        (void)task_rd_bytes(rd, &alen);
    }
    return rd->err;
}

/* Another run of job j reached its block b: the routines and widths must
 * be the same (else the children would not be the same jobs); argument
 * bytes or memory that differ (uninitialized padding, most often) are
 * worth a warning: the first run's are used. */
static int same_block(c_job_t *j, uint32_t b, const uint8_t *desc,
                      size_t dlen, uint32_t nr, const uint8_t *state,
                      size_t slen)
{
    const c_block_t *blk = &j->blocks[b];
    task_rd_t x, y;
    char pb[256];
    int args_differ = 0;
    static int warned;

    task_rd_init(&x, blk->desc, blk->desclen);
    task_rd_init(&y, desc, dlen);
    for (uint32_t r = 0; r < nr; r++) {
        size_t xn, yn;
        uint64_t xf = task_rd_u64(&x), yf = task_rd_u64(&y);
        uint32_t xw = task_rd_u32(&x), yw = task_rd_u32(&y);
        const uint8_t *xa = task_rd_bytes(&x, &xn);
        const uint8_t *ya = task_rd_bytes(&y, &yn);
        if (x.err || y.err || xf != yf || xw != yw || xn != yn)
            return fatal("two runs of job %s reached its block %u with "
                         "different routines or widths: the program is "
                         "not deterministic (use shoal_task_rand for "
                         "random numbers)",
                         path_text(&j->path, pb, sizeof(pb)), b);
        args_differ |= xn > 0 && memcmp(xa, ya, xn) != 0;
    }
    if (x.pos != x.len || y.pos != y.len)
        return fatal("two runs of job %s reached its block %u with "
                     "different routines",
                     path_text(&j->path, pb, sizeof(pb)), b);
    int mem_differs = blk->state != NULL &&
                      (blk->statelen != slen ||
                       memcmp(blk->state, state, slen) != 0);
    if ((args_differ || mem_differs) && !warned) {
        warned = 1;
        base_warn("task", "two runs of job %s reached its block %u with "
                  "different %s (uninitialized padding? something not "
                  "deterministic?); the first run's are used",
                  path_text(&j->path, pb, sizeof(pb)), b,
                  args_differ ? "argument bytes" : "shared memory");
    }
    return SHOAL_OK;
}

static int on_block(uint32_t copy, task_rd_t *rd, const uint8_t *msg,
                    size_t len)
{
    c_copy_t *c = &co.copies[copy];
    task_copy_info_t info;
    char pb[256];

    if (task_sched_copy_info(co.s, copy, &info) != SHOAL_OK)
        return SHOAL_OK;
    if (info.state == TASK_COPY_SUSPENDED) {
        /* It sent the block as it was being stopped: take it when it
         * resumes. */
        free(c->pending);
        c->pending = dup_bytes(msg, len);
        c->pendlen = len;
        return c->pending != NULL ? SHOAL_OK
                                  : base_err(SHOAL_ERR_NOMEM, "task: block");
    }
    uint32_t b = task_rd_u32(rd), nr = task_rd_u32(rd);
    size_t dstart = rd->pos;
    uint64_t njobs;
    int s = scan_desc(rd, nr, &njobs);
    size_t dlen = rd->pos - dstart, slen;
    const uint8_t *state = task_rd_bytes(rd, &slen);
    c_job_t *j = &co.jobs[c->job];

    if (s != SHOAL_OK || rd->err)
        return rd->err ? rd->err : s;
    if (b > j->nblocks || njobs == 0 || njobs > UINT32_MAX / 2)
        return fatal("job %s sent block %u (%llu jobs) after %zu blocks",
                     path_text(&j->path, pb, sizeof(pb)), b,
                     (unsigned long long)njobs, j->nblocks);
    /* The copy waits first: new jobs added while it runs could pre-empt
     * it, and a stopped copy cannot wait.  With a new block the two are
     * placed as one event (task_sched_hold), so the block's jobs, the
     * newest, go first: depth first. */
    c->block = b;
    int fresh = b == j->nblocks;
    if (fresh)
        task_sched_hold(co.s, 1);
    int w = task_sched_copy_waits(co.s, copy, b);
    if (w < 0) {
        if (fresh)
            task_sched_hold(co.s, 0);
        return w;
    }
    if (w == 1)
        c->waiting = 1;
    if (fresh) {
        uint32_t first;
        s = task_grow((void **)&j->blocks, &j->capb, j->nblocks + 1,
                      sizeof(*j->blocks), "task: blocks");
        c_block_t *blk = s == SHOAL_OK ? &j->blocks[j->nblocks++] : NULL;
        if (blk != NULL) {
            *blk = (c_block_t){dup_bytes(rd->p + dstart, dlen),
                               dup_bytes(state, slen), dlen, slen, 0,
                               (uint32_t)njobs, 0, TASK_NONE, NULL};
            if (blk->desc == NULL || blk->state == NULL)
                s = base_err(SHOAL_ERR_NOMEM, "task: a block's state");
        }
        if (s == SHOAL_OK)
            s = task_sched_add_jobs(co.s, c->job, (uint32_t)njobs,
                                    co.worker_of[c->rank], &first);
        int h = task_sched_hold(co.s, 0);
        if (s == SHOAL_OK)
            s = h;
        if (s == SHOAL_OK) {
            blk->first = first;
            s = new_jobs(c->job, b, blk->desc, dlen, nr, first);
        }
        if (s != SHOAL_OK)
            return s;
    } else {
        s = same_block(j, b, rd->p + dstart, dlen, nr, state, slen);
        if (s != SHOAL_OK)
            return s;
    }
    if (w == 0)
        s = send_results(copy);
    else {
        c->at_block = b + 1;
        if (block_source(c->job, b) == TASK_NONE)
            co.jobs[c->job].blocks[b].src = copy;
    }
    return s == SHOAL_OK ? pump() : s;
}

/* A job finished: its children's results are not needed any more. */
static void block_state_free(c_block_t *blk)
{
    free(blk->state);
    blk->state = NULL;
    for (int i = 0; blk->skip != NULL && i < TASK_AREAS; i++)
        task_diff_skip_free(&blk->skip[i]);
    free(blk->skip);
    blk->skip = NULL;
}

/* The skip tables of blk's state, made once (NULL: none, read it all). */
static const task_diff_skip_t *block_skips(c_block_t *blk)
{
    if (blk->skip == NULL && blk->state != NULL &&
        blk->statelen > 64 * TASK_DIFF_SKIP_RUNS) {
        task_diff_skip_t *sk = calloc(TASK_AREAS, sizeof(*sk));
        if (sk != NULL && task_region_blob_skips(&task_rt.region, blk->state,
                                                 blk->statelen,
                                                 sk) != SHOAL_OK) {
            free(sk);
            sk = NULL;
        }
        blk->skip = sk;
    }
    return blk->skip;
}

static void drop_children(c_job_t *j)
{
    for (size_t b = 0; b < j->nblocks; b++) {
        c_block_t *blk = &j->blocks[b];
        for (uint32_t k = blk->first; k < blk->first + blk->n; k++) {
            free(co.jobs[k].diff);
            free(co.jobs[k].out);
            co.jobs[k].diff = co.jobs[k].out = NULL;
        }
        block_state_free(blk);
    }
}

/* Copy finished its job with this result (its TM_DONE, or a result kept
 * from before a failover), which the worker of rank holder keeps (-1:
 * none; this rank's: none but the coordinator); the orders are not
 * carried out yet. */
static int job_done_held(uint32_t copy, uint32_t ret, const uint8_t *diff,
                         size_t dlen, const uint8_t *out, size_t olen,
                         uint32_t subreq, int holder);

/* (The copy's end and its block's, when it was the last, are placed as
 * one event: task_sched_hold.) */
static int job_done(uint32_t copy, uint32_t ret, const uint8_t *diff,
                    size_t dlen, const uint8_t *out, size_t olen,
                    uint32_t subreq, int holder)
{
    task_sched_hold(co.s, 1);
    int r = job_done_held(copy, ret, diff, dlen, out, olen, subreq, holder);
    int h = task_sched_hold(co.s, 0);
    return r != SHOAL_OK ? r : h;
}

static int job_done_held(uint32_t copy, uint32_t ret, const uint8_t *diff,
                         size_t dlen, const uint8_t *out, size_t olen,
                         uint32_t subreq, int holder)
{
    c_copy_t *c = &co.copies[copy];
    c_job_t *j = &co.jobs[c->job];
    char pb[256];

    int r = task_sched_copy_done(co.s, copy);
    copy_gone(copy);
    if (r <= 0)
        return r; /* (0: a slower copy) */
    j->done = 1;
    j->subreq = subreq;
    j->diff = dup_bytes(diff, dlen);
    j->out = dup_bytes(out, olen);
    j->difflen = dlen;
    j->outlen = olen;
    if (j->diff == NULL || j->out == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: a result");
    if (task_lock_job_done(co.m, &j->path) != SHOAL_OK)
        return fatal("job %s: %s", path_text(&j->path, pb, sizeof(pb)),
                     shoal_error_detail());
    drop_children(j);
    if (j->parent == TASK_NONE) {
        finish(ret, j);
        return SHOAL_OK;
    }
    if (j->nblocks > 0 && task_keeps_results() && holder >= 0 &&
        holder != task_rt.rank) {
        /* The workers may forget its children's results: its own, kept
         * by its worker, holds their writes. */
        task_buf_bytes(&co.forget, j->path.bytes, j->path.len);
        co.nforget++;
    }
    c_block_t *blk = &co.jobs[j->parent].blocks[j->block];
    if (++blk->finished == blk->n) {
        block_state_free(blk);
        int s = task_sched_block_done(co.s, j->parent, j->block);
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

static int on_done(uint32_t copy, task_rd_t *rd)
{
    uint32_t ret = task_rd_u32(rd);
    (void)task_rd_u32(rd); /* lock requests: for a lock manager rebuild */
    size_t dlen, olen;
    const uint8_t *diff = task_rd_bytes(rd, &dlen);
    const uint8_t *out = task_rd_bytes(rd, &olen);
    uint32_t subreq = task_rd_u32(rd);

    if (rd->err)
        return rd->err;
    /* (Its worker keeps it, or, on this rank, the heir: TM_KEEP.) */
    int holder = co.copies[copy].rank;
    if (holder == task_rt.rank)
        holder = task_worker_heir();
    int s = job_done(copy, ret, diff, dlen, out, olen, subreq, holder);
    return s == SHOAL_OK ? pump() : s;
}

/* The lock manager after a failover, from the workers' lock records
 * (TM_KEPT's tails) and version 0 of every lock (the program's image:
 * this worker's memory is pristine).  When the records cannot be put
 * together (a late worker's, say, from another history), the manager
 * stays the fresh one and every result whose subtree took locks is
 * dropped: those jobs run again, as they would without records. */
static int rebuild_locks(void)
{
    size_t n = 0, nl = task_rt.nlocks;
    task_lock_record_t *recs = calloc((size_t)task_rt.size + 1,
                                      sizeof(*recs));
    task_lock_version_t *v0 = calloc(nl, sizeof(*v0));
    task_lock_t *m = NULL;
    int s = SHOAL_OK;

    if (recs == NULL || v0 == NULL) {
        free(recs);
        free(v0);
        return base_err(SHOAL_ERR_NOMEM, "task: lock records");
    }
    for (size_t i = 0; i < nl; i++) {
        const shoal_task_lock_t *l = &task_rt.locks[i];
        v0[i] = (task_lock_version_t){(uint32_t)i, 0, l->addr, l->len};
    }
    recs[n++] = (task_lock_record_t){co.worker_of[task_rt.rank], NULL, 0,
                                     v0, nl};
    for (int r = 0; r < task_rt.size; r++) {
        if (co.recs[r].p == NULL || co.worker_of[r] == TASK_NONE)
            continue;
        if (task_lockrec_read(co.recs[r].p, co.recs[r].len,
                              co.worker_of[r], &recs[n]) == SHOAL_OK)
            n++;
        else
            base_warn("task", "rank %d's lock record: %s", r,
                      shoal_error_detail());
    }
    int ok = task_lock_rebuild((uint32_t)nl, task_rt.suspect_locks, recs, n,
                               &m) == SHOAL_OK;
    if (ok) {
        size_t nre;
        task_lock_reruns(m, &nre);
        base_info("task", "the lock manager rebuilt from %zu lock records: "
                  "%llu grants, %zu of them to be replayed for versions "
                  "lost", n - 1, (unsigned long long)task_lock_seq_len(m),
                  nre);
        task_lock_destroy(co.m);
        co.m = m;
    } else
        base_warn("task", "the lock manager could not be rebuilt from the "
                  "workers' records (%s): the jobs that took locks run "
                  "again", shoal_error_detail());
    /* What each worker's record holds now (none: every grant's tail
     * starts its record again from the first entry). */
    for (size_t i = 0; i < co.capsent; i++)
        co.sent[i] = 0;
    for (size_t i = 1; i < n && ok && s == SHOAL_OK; i++)
        if ((s = sent_grow(recs[i].worker)) == SHOAL_OK)
            co.sent[recs[i].worker] = recs[i].nseq;
    for (size_t i = 1; i < n; i++)
        task_lockrec_free(&recs[i]);
    free(recs);
    free(v0);
    /* Results of subtrees that took locks: kept only when the manager
     * holds every request of theirs, none still held, and no version of
     * theirs has to be made again. */
    for (size_t k = 0; k < co.nkept && s == SHOAL_OK; k++) {
        struct c_kept *e = &co.kept[k];
        task_path_t p;
        if (e->res == NULL)
            continue;
        const uint8_t *t = e->res + e->reslen - 4; /* (on_kept: >= 4) */
        uint32_t subreq = (uint32_t)t[0] | (uint32_t)t[1] << 8 |
                          (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
        if (subreq == 0)
            continue;
        int keep = ok &&
                   task_path_decode(e->path, e->pathlen, &p) == SHOAL_OK;
        if (keep) {
            keep = task_lock_subtree_kept(co.m, &p, subreq);
            task_path_free(&p);
        }
        if (keep) {
            co.n_kept_locks++;
            continue;
        }
        co.n_kept_locks_dropped++;
        free(e->res);
        e->res = NULL;
    }
    return s;
}

/* After a failover with locks: once every worker alive has sent what it
 * kept (or, late, SHOAL_TASK_SUSPECT after the start, without the
 * silent ones), the lock manager is rebuilt and the root job starts. */
static int gate_open(int late)
{
    uint32_t root;

    if (!co.gating)
        return SHOAL_OK;
    for (int r = 0; r < task_rt.size && !late; r++)
        if (r != task_rt.rank && !co.got_kept[r] && !co.lost[r] &&
            !task_msg_dead(r))
            return SHOAL_OK;
    co.gating = 0;
    int s = rebuild_locks();
    for (int r = 0; r < task_rt.size; r++) {
        free(co.recs[r].p);
        co.recs[r] = (struct c_rec){NULL, 0};
    }
    if (s == SHOAL_OK)
        s = task_sched_add_jobs(co.s, TASK_NONE, 1, TASK_NONE, &root);
    return s == SHOAL_OK ? pump() : s;
}

/* TM_KEPT: a worker's results from before a failover.  Jobs not made yet
 * take them when the scheduler would run them (send_run); a job that runs
 * now, and whose blocks are all done (it did not make children that wait
 * for it), takes its result at once, and its copy is ended. */
static int on_kept(int src, task_rd_t *rd)
{
    uint32_t n = task_rd_u32(rd);
    size_t first = co.nkept;

    for (uint32_t i = 0; i < n && !rd->err; i++) {
        size_t plen, rlen;
        const uint8_t *path = task_rd_bytes(rd, &plen);
        const uint8_t *res = task_rd_bytes(rd, &rlen);
        if (rd->err)
            break;
        if (rlen < 4)
            continue;
        /* A result whose subtree took locks is taken only when the lock
         * manager rebuilt from the records holds its grants (gate_open);
         * one that comes later, from a worker late after the failover,
         * is not (the manager has gone on without its record). */
        if ((res[rlen - 4] | res[rlen - 3] | res[rlen - 2] |
             res[rlen - 1]) != 0 && !co.gating)
            continue;
        int s = task_grow((void **)&co.kept, &co.capkept, co.nkept + 1,
                          sizeof(*co.kept), "task: kept results");
        if (s != SHOAL_OK)
            return s;
        struct c_kept e = {dup_bytes(path, plen), dup_bytes(res, rlen), plen,
                           rlen, src};
        if (e.path == NULL || e.res == NULL) {
            free(e.path);
            free(e.res);
            return base_err(SHOAL_ERR_NOMEM, "task: kept results");
        }
        co.kept[co.nkept] = e;
        if ((s = kept_index(co.nkept)) != SHOAL_OK)
            return s;
        co.nkept++;
        co.n_kept++;
    }
    if (rd->err)
        return rd->err;
    if (co.gating) {
        /* Its lock record, for the rebuild. */
        struct c_rec *r = &co.recs[src];
        free(r->p);
        r->len = rd->len - rd->pos;
        r->p = dup_bytes(rd->p + rd->pos, r->len);
        co.got_kept[src] = 1;
        if (r->p == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: a lock record");
        return gate_open(0);
    }
    for (size_t c = 0; c < co.ncopies && co.nkept > first; c++) {
        task_copy_info_t info;
        c_job_t *j = &co.jobs[co.copies[c].job];
        int open = 0;
        if (co.copies[c].gone || co.copies[c].waiting || j->done ||
            task_sched_copy_info(co.s, (uint32_t)c, &info) != SHOAL_OK ||
            (info.state != TASK_COPY_RUNNING &&
             info.state != TASK_COPY_SUSPENDED))
            continue;
        for (size_t b = 0; b < j->nblocks; b++)
            open |= j->blocks[b].finished < j->blocks[b].n;
        uint32_t k = open ? TASK_NONE : kept_find(&j->path);
        if (k != TASK_NONE) {
            int s = instant_add((uint32_t)c, k, 1);
            if (s != SHOAL_OK)
                return s;
        }
    }
    return pump();
}

static void describe(uint32_t st, char *buf, size_t cap)
{
    int status = (int)st;

    if (WIFSIGNALED(status))
        snprintf(buf, cap, "killed by signal %d, %s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "exited with code %d before finishing",
                 WEXITSTATUS(status));
}

static int on_lost(uint32_t copy, task_rd_t *rd)
{
    c_copy_t *c = &co.copies[copy];
    c_job_t *j = &co.jobs[c->job];
    uint32_t st = task_rd_u32(rd);
    char why[128], pb[256];

    if (rd->err || c->gone || j->done)
        return rd->err;
    /* SIGKILL comes from outside (an operator, the OOM killer), never from
     * a job's own bug: it does not count as a crash. */
    int own = !WIFSIGNALED((int)st) || WTERMSIG((int)st) != SIGKILL;
    if (!own)
        ;
    else if (j->crashes > 0 && st == j->last_status)
        j->crashes++;
    else
        j->crashes = 1;
    if (own)
        j->last_status = st;
    describe(st, why, sizeof(why));
    if (own && j->crashes >= (uint32_t)task_rt.max_crashes)
        return fatal("job %s crashed %u times in a row (%s); giving up: a "
                     "job that crashes by itself crashes in every run",
                     path_text(&j->path, pb, sizeof(pb)), j->crashes, why);
    co.n_crashed++;
    base_info("task", "a run of job %s %s; running it again",
              path_text(&j->path, pb, sizeof(pb)), why);
    copy_gone(copy);
    int s = task_sched_copy_lost(co.s, copy);
    return s == SHOAL_OK ? pump() : s;
}

static int on_lock(uint32_t copy, task_rd_t *rd, int lock)
{
    c_copy_t *c = &co.copies[copy];
    c_job_t *j = &co.jobs[c->job];
    uint32_t req = task_rd_u32(rd), id = task_rd_u32(rd);
    char pb[256];
    int s;

    if (c->gone)
        return SHOAL_OK;
    if (lock) {
        s = rd->err ? rd->err
                    : task_lock_lock(co.m, copy, co.worker_of[c->rank],
                                     &j->path, req, id);
    } else {
        size_t n;
        const uint8_t *data = task_rd_bytes(rd, &n);
        s = rd->err ? rd->err
                    : task_lock_unlock(co.m, copy, &j->path, req, id, data,
                                       n);
        if (s >= 0 && c->rank == task_rt.rank && task_keeps_results()) {
            int h = heir_unlock(j, req, id, data, n);
            if (h != SHOAL_OK)
                return h;
        }
    }
    if (s < 0)
        return fatal("job %s: %s", path_text(&j->path, pb, sizeof(pb)),
                     shoal_error_detail());
    return pump();
}

/* A page for a copy whose source is gone or slow: pristine, with the
 * blobs of every block from the root down to the copy's applied. */
static int page_coord(uint32_t copy, task_rd_t *rd)
{
    uint32_t rank = task_rd_u32(rd), area = task_rd_u32(rd);
    uint64_t page = task_rd_u64(rd);
    size_t n = 0, psize = task_rt.region.page;

    if (rd->err || copy >= co.ncopies || rank >= (uint32_t)task_rt.size ||
        area >= TASK_AREAS)
        return rd->err;
    for (uint32_t k = co.copies[copy].job; co.jobs[k].parent != TASK_NONE;
         k = co.jobs[k].parent) {
        c_block_t *blk = &co.jobs[co.jobs[k].parent].blocks[
            co.jobs[k].block];
        if (blk->state == NULL)
            return SHOAL_OK; /* the block is done: the copy is killed */
        int s = task_grow((void **)&co.chain, &co.capchain, n + 1,
                          sizeof(*co.chain), "task: pages");
        if (s == SHOAL_OK)
            s = task_grow((void **)&co.chainlen, &co.capchainlen, n + 1,
                          sizeof(*co.chainlen), "task: pages");
        if (s == SHOAL_OK)
            s = task_grow((void **)&co.chainskip, &co.capchainskip, n + 1,
                          sizeof(*co.chainskip), "task: pages");
        if (s != SHOAL_OK)
            return s;
        co.chain[n] = blk->state;
        co.chainskip[n] = block_skips(blk);
        co.chainlen[n++] = blk->statelen;
    }
    for (size_t i = 0; i < n / 2; i++) { /* the root's first */
        const uint8_t *p = co.chain[i];
        size_t l = co.chainlen[i];
        const task_diff_skip_t *sk = co.chainskip[i];
        co.chain[i] = co.chain[n - 1 - i];
        co.chainlen[i] = co.chainlen[n - 1 - i];
        co.chainskip[i] = co.chainskip[n - 1 - i];
        co.chain[n - 1 - i] = p;
        co.chainlen[n - 1 - i] = l;
        co.chainskip[n - 1 - i] = sk;
    }
    uint8_t *msg = malloc(TASK_PAGE_HDR + psize);
    if (msg == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: a page");
    task_buf_t b = {msg, 0, TASK_PAGE_HDR + psize, 0};
    task_msg_start(&b, TM_PAGE, copy);
    task_buf_u32(&b, rank);
    task_buf_u32(&b, area);
    task_buf_u64(&b, page);
    int s = task_region_page_from(&task_rt.region, (int)area, (size_t)page,
                                  co.chain, co.chainlen, co.chainskip, n,
                                  msg + TASK_PAGE_HDR);
    if (s != SHOAL_OK) {
        free(msg);
        return fatal("a page for run %u: %s", copy, shoal_error_detail());
    }
    co.n_pages++;
    return task_msg_send((int)rank, msg, TASK_PAGE_HDR + psize);
}

static int copy_msg(int src, uint32_t type, uint32_t copy, task_rd_t *rd,
                    const uint8_t *msg, size_t len)
{
    co.last_progress = base_time_ns();
    co.stall_told = 0;
    if (copy >= co.ncopies || co.copies[copy].rank != src)
        return SHOAL_OK; /* not a copy this worker runs: stale */
    switch (type) {
    case TM_BLOCK:
        return co.copies[copy].gone ? SHOAL_OK : on_block(copy, rd, msg, len);
    case TM_DONE:
        return on_done(copy, rd);
    case TM_LOCK:
        return on_lock(copy, rd, 1);
    case TM_UNLOCK:
        return on_lock(copy, rd, 0);
    case TM_LOST:
        return on_lost(copy, rd);
    case TM_FAIL: {
        (void)task_rd_u32(rd);
        size_t n;
        const uint8_t *text = task_rd_bytes(rd, &n);
        if (rd->err)
            return rd->err;
        return fatal("%.*s", (int)n, (const char *)text);
    }
    }
    return base_err(SHOAL_ERR_PROTOCOL, "task: message type %u", type);
}

static int handle(int src, const uint8_t *msg, size_t len)
{
    task_rd_t rd;

    task_rd_init(&rd, msg, len);
    uint32_t type = task_rd_u32(&rd), id = task_rd_u32(&rd);
    if (rd.err)
        return rd.err;
    if (type == TM_BYE) {
        co.bye[src] = 1;
        return SHOAL_OK;
    }
    if (co.done)
        return SHOAL_OK;
    uint64_t now = base_time_ns();
    if (co.last_seen[src] != 0 && now - co.last_seen[src] > co.gap_max[src])
        co.gap_max[src] = now - co.last_seen[src];
    co.last_seen[src] = now;
    if (co.suspected[src] && !co.lost[src]) {
        co.suspected[src] = 0;
        lapsed(src, co.last_seen[src]);
        base_info("task", "worker %d speaks again: it joins anew, taken "
                  "for silent next after %llu ms", src,
                  (unsigned long long)(patience_of(src) / 1000000));
        int s = join(src);
        if (s != SHOAL_OK)
            return s;
    }
    if (type == TM_HELLO) {
        uint64_t layout = task_rd_u64(&rd);
        if (layout != co.layout)
            return fatal("rank %d has another address layout than rank %d "
                         "(%#llx, not %#llx): every worker must run the "
                         "same program without address randomization",
                         src, task_rt.rank, (unsigned long long)layout,
                         (unsigned long long)co.layout);
        return co.worker_of[src] == TASK_NONE ? join(src) : SHOAL_OK;
    }
    /* A worker speaks to this coordinator only after its hello: what
     * came before it was meant for a coordinator that died (failover). */
    if (co.worker_of[src] == TASK_NONE)
        return SHOAL_OK;
    if (type == TM_BEAT)
        return SHOAL_OK;
    if (type == TM_PAGE_COORD)
        return page_coord(id, &rd);
    if (type == TM_KEPT)
        return on_kept(src, &rd);
    return copy_msg(src, type, id, &rd, msg, len);
}

int task_coord_handle(int src, const uint8_t *msg, size_t len)
{
    return handle(src, msg, len);
}

/* ---- set-up -------------------------------------------------------------- */

int task_coord_init(void)
{
    size_t n = (size_t)task_rt.size;
    uint32_t root;
    int s;

    memset(&co, 0, sizeof(co));
    co.worker_of = malloc(n * sizeof(*co.worker_of));
    co.last_seen = calloc(n, sizeof(*co.last_seen));
    co.patience = calloc(n, sizeof(*co.patience));
    co.calm_since = calloc(n, sizeof(*co.calm_since));
    co.gap_max = calloc(n, sizeof(*co.gap_max));
    co.lost = calloc(n, 1);
    co.suspected = calloc(n, 1);
    co.bye = calloc(n, 1);
    if (co.worker_of == NULL || co.last_seen == NULL ||
        co.patience == NULL || co.calm_since == NULL ||
        co.gap_max == NULL || co.lost == NULL ||
        co.suspected == NULL || co.bye == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: coordinator");
    for (size_t r = 0; r < n; r++)
        co.worker_of[r] = TASK_NONE;
    co.layout = task_layout();
    co.last_progress = base_time_ns();
    s = task_sched_create(task_rt.max_copies, &co.s);
    if (s == SHOAL_OK)
        s = task_lock_create(task_rt.nlocks ? task_rt.nlocks : 1,
                             task_rt.suspect_locks, &co.m);
    for (uint32_t i = 0; s == SHOAL_OK && i < task_rt.nlocks; i++) {
        const shoal_task_lock_t *l = &task_rt.locks[i];
        /* The worker's memory is pristine: version 0 of the variables. */
        s = task_lock_set_initial(co.m, i, l->addr, l->len);
    }
    if (s == SHOAL_OK)
        s = task_grow((void **)&co.jobs, &co.capj, 1, sizeof(*co.jobs),
                      "task: jobs");
    if (s != SHOAL_OK)
        return s;
    memset(&co.jobs[0], 0, sizeof(co.jobs[0]));
    co.jobs[0].parent = TASK_NONE;
    co.jobs[0].fn = TASK_ROOT_FN;
    co.njobs = 1;
    /* A failover (the coordinator's rank is 0 only at the start) in a
     * program with locks waits for the workers' lock records first. */
    co.gating = task_rt.coord != 0 && task_keeps_results() &&
                task_rt.nlocks > 0;
    if (co.gating) {
        co.gate_since = base_time_ns();
        co.got_kept = calloc(n, 1);
        co.recs = calloc(n, sizeof(*co.recs));
        if (co.got_kept == NULL || co.recs == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: coordinator");
    } else
        s = task_sched_add_jobs(co.s, TASK_NONE, 1, TASK_NONE, &root);
    return s == SHOAL_OK ? join(task_rt.rank) : s;
}

void task_coord_fini(void)
{
    for (size_t k = 0; k < co.njobs; k++) {
        c_job_t *j = &co.jobs[k];
        for (size_t b = 0; b < j->nblocks; b++) {
            free(j->blocks[b].desc);
            block_state_free(&j->blocks[b]);
        }
        free(j->blocks);
        free(j->arg);
        free(j->diff);
        free(j->out);
        task_path_free(&j->path);
    }
    for (size_t k = 0; k < co.ncopies; k++)
        free(co.copies[k].pending);
    for (size_t k = 0; k < co.nkept; k++) {
        free(co.kept[k].path);
        free(co.kept[k].res);
    }
    free(co.kept);
    free(co.kidx);
    free(co.instant);
    free(co.resumed);
    for (size_t r = 0; co.recs != NULL && r < (size_t)task_rt.size; r++)
        free(co.recs[r].p);
    free(co.recs);
    free(co.got_kept);
    free(co.sent);
    task_buf_free(&co.forget);
    free(co.jobs);
    free(co.copies);
    free(co.chain);
    free(co.chainlen);
    free(co.chainskip);
    free(co.rank_of);
    free(co.worker_of);
    free(co.last_seen);
    free(co.patience);
    free(co.calm_since);
    free(co.gap_max);
    free(co.lost);
    free(co.suspected);
    free(co.bye);
    if (co.s != NULL)
        task_sched_destroy(co.s);
    if (co.m != NULL)
        task_lock_destroy(co.m);
    memset(&co, 0, sizeof(co));
}
