/*
 * Prioritized eager scheduling (task_sched.h).  Simple arrays and scans:
 * a placement looks at every candidate and every worker, which is plenty
 * for the coordinator's event rate at tens of workers; a heap of
 * candidates is the next step if profiles say so.
 */
#include <stdlib.h>

#include "base/base.h"
#include "task/task_grow.h"
#include "task/task_sched.h"

typedef struct job {
    uint32_t parent, hint;
    uint32_t block_first; /* the id of its block's first job */
    uint32_t first_copy;  /* live copies, linked through next_in_job */
    uint32_t nlive;
    uint32_t blocks_done; /* blocks 0 .. blocks_done-1 are done */
    uint8_t done;
    uint8_t waiting; /* block blocks_done is pending */
    uint8_t in_open, in_idle; /* in open_jobs, in the idle heap */
} job_t;

typedef struct copy {
    uint32_t job, worker, ordinal, penalty, next_in_job;
    uint64_t placed; /* when it last started running: ties of victims */
    task_copy_state_t state;
} copy_t;

typedef struct worker {
    uint32_t running;
    uint8_t live;
} worker_t;

typedef struct cand {
    uint64_t key;
    int fresh; /* a new copy, else a bound (suspended or waiting) one */
    uint64_t order; /* among equal keys and kinds, smaller first */
    uint32_t job, copy;
} cand_t;

struct task_sched {
    uint32_t max_copies;
    job_t *jobs;
    copy_t *copies;
    worker_t *workers;
    task_order_t *orders;
    size_t njobs, ncopies, nworkers, norders;
    size_t cap_jobs, cap_copies, cap_workers, cap_orders;
    uint64_t clock;  /* placements so far */
    int held;        /* task_sched_hold: placements wait while > 0 */
    uint64_t maxkey; /* worst key handed out, for penalties */
    cand_t *cands;
    size_t cap_cands;
    /* Jobs with live copies and copies not known gone, in no order:
     * gather scans these alone and drops what it finds done or gone, so
     * an event costs what runs, not the whole run (thousands of jobs, and
     * the root never done).  Jobs with no live copy are all candidates of
     * key 1 and differ only in fresh_order, so they wait in a heap by it
     * (idle) and only its top is a candidate: a block of 100 000
     * jobs costs an event a heap operation, not a scan of the block.
     * Both are cleaned lazily: an entry is dropped when found stale. */
    uint32_t *open_jobs, *open_copies, *idle;
    size_t nopen_jobs, nopen_copies, nidle;
    size_t cap_open_jobs, cap_open_copies, cap_idle;
};

#define GROW(s, arr, cap, need)                                              \
    task_grow((void **)&(s)->arr, &(s)->cap, (need), sizeof *(s)->arr,       \
              "task scheduler")

int task_sched_create(uint32_t max_copies, task_sched_t **out)
{
    if (max_copies == 0)
        return base_err(SHOAL_ERR_INVALID, "task scheduler: max_copies 0");
    task_sched_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task scheduler");
    s->max_copies = max_copies;
    *out = s;
    return SHOAL_OK;
}

void task_sched_destroy(task_sched_t *s)
{
    if (s == NULL)
        return;
    free(s->jobs);
    free(s->copies);
    free(s->workers);
    free(s->orders);
    free(s->cands);
    free(s->open_jobs);
    free(s->open_copies);
    free(s->idle);
    free(s);
}

static void order(task_sched_t *s, task_order_kind_t kind, uint32_t c)
{
    const copy_t *cp = &s->copies[c];

    /* Room was made before the event changed anything (reserve). */
    s->orders[s->norders++] = (task_order_t){kind, c, cp->job, cp->worker,
                                             cp->ordinal};
}

/* Room for the orders one event can give: every copy may be killed or
 * suspended and every worker get a new one. */
static int reserve(task_sched_t *s)
{
    size_t need = s->norders + 2 * (s->ncopies + s->nworkers) + 4;

    /* and for the jobs whose live copies may all end */
    if (GROW(s, idle, cap_idle, s->nidle + s->nopen_copies + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    return GROW(s, orders, cap_orders, need);
}

static uint64_t key_of(const copy_t *c)
{
    return (uint64_t)c->ordinal + c->penalty;
}

/* ---- jobs with no live copy (a heap, the next to run on top) ----------- */

/*
 * Which new job runs first among equals: the newest block's first, and in
 * a block the smallest id.  So a nested program runs depth first: a job's
 * children go before its parent's later siblings, and the jobs open at
 * once stay about the nesting depth times the workers.  In creation
 * order (breadth first, until 2026-11-28) a recursive program opened
 * every job of its upper levels at once, each a waiting process on its
 * worker: a nested quicksort of 100 000 ints with 16-element leaves
 * made 4 800 processes for 23 500 jobs and took 7.0 s on two workers,
 * depth first 160 processes and 1.7 s.
 */
static uint64_t fresh_order(const task_sched_t *s, uint32_t j)
{
    return (uint64_t)(UINT32_MAX - s->jobs[j].block_first) << 32 | j;
}

static int idle_before(const task_sched_t *s, uint32_t a, uint32_t b)
{
    return fresh_order(s, a) < fresh_order(s, b);
}

static void idle_sift_down(task_sched_t *s, size_t i)
{
    uint32_t *h = s->idle;

    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nidle && idle_before(s, h[l], h[m]))
            m = l;
        if (l + 1 < s->nidle && idle_before(s, h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Job j has no live copy now (room was made: idle_room). */
static void idle_push(task_sched_t *s, uint32_t j)
{
    if (s->jobs[j].in_idle)
        return; /* still in the heap, stale until now */
    s->jobs[j].in_idle = 1;
    size_t i = s->nidle++;
    while (i > 0 && idle_before(s, j, s->idle[(i - 1) / 2])) {
        s->idle[i] = s->idle[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->idle[i] = j;
}

static int idle_room(task_sched_t *s, size_t more)
{
    return GROW(s, idle, cap_idle, s->nidle + more);
}

/* The first job (fresh_order) with no live copy that is not done, or
 * TASK_NONE. */
static uint32_t idle_top(task_sched_t *s)
{
    while (s->nidle > 0) {
        job_t *j = &s->jobs[s->idle[0]];
        if (!j->done && j->nlive == 0)
            return s->idle[0];
        j->in_idle = 0;
        s->idle[0] = s->idle[--s->nidle];
        idle_sift_down(s, 0);
    }
    return TASK_NONE;
}

/* ---- copies -------------------------------------------------------------- */

static void unlink_copy(task_sched_t *s, uint32_t c)
{
    job_t *j = &s->jobs[s->copies[c].job];
    uint32_t *p = &j->first_copy;

    while (*p != c)
        p = &s->copies[*p].next_in_job;
    *p = s->copies[c].next_in_job;
    if (--j->nlive == 0 && !j->done)
        idle_push(s, s->copies[c].job);
}

/* The copy ends; its worker, if it ran there, is free. */
static void end_copy(task_sched_t *s, uint32_t c, int kill)
{
    copy_t *cp = &s->copies[c];

    if (cp->state == TASK_COPY_GONE)
        return;
    if (kill)
        order(s, TASK_ORDER_KILL, c);
    if (cp->state == TASK_COPY_RUNNING)
        s->workers[cp->worker].running = TASK_NONE;
    unlink_copy(s, c);
    cp->state = TASK_COPY_GONE;
}

static int live_copy(const task_sched_t *s, uint32_t c)
{
    return c < s->ncopies && s->copies[c].state != TASK_COPY_GONE;
}

/* Smallest ordinal no live copy of j holds. */
static uint32_t next_ordinal(const task_sched_t *s, const job_t *j)
{
    for (uint32_t k = 1;; k++) {
        uint32_t c = j->first_copy;
        while (c != TASK_NONE && s->copies[c].ordinal != k)
            c = s->copies[c].next_in_job;
        if (c == TASK_NONE)
            return k;
    }
}

static int holds_copy_of(const task_sched_t *s, uint32_t w, const job_t *j)
{
    for (uint32_t c = j->first_copy; c != TASK_NONE;
         c = s->copies[c].next_in_job)
        if (s->copies[c].worker == w)
            return 1;
    return 0;
}

/* ---- placement ----------------------------------------------------------- */

static int needs_copy(const task_sched_t *s, const job_t *j)
{
    return !j->done && j->nlive < s->max_copies &&
           (!j->waiting || j->nlive == 0);
}

static int by_rank(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->fresh != y->fresh)
        return x->fresh - y->fresh;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->copy < y->copy ? -1 : x->copy > y->copy;
}

/* The candidates, in no order, into s->cands; the best first. */
static int gather(task_sched_t *s, size_t *n)
{
    size_t k = 0, best = 0;

    if (GROW(s, cands, cap_cands, s->nopen_jobs + s->nopen_copies + 1) !=
        SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    for (size_t i = 0; i < s->nopen_copies;) {
        uint32_t c = s->open_copies[i];
        const copy_t *cp = &s->copies[c];
        if (cp->state == TASK_COPY_GONE) {
            s->open_copies[i] = s->open_copies[--s->nopen_copies];
            continue;
        }
        if (cp->state == TASK_COPY_SUSPENDED ||
            (cp->state == TASK_COPY_WAITING && !s->jobs[cp->job].waiting))
            s->cands[k++] = (cand_t){key_of(cp), 0, cp->job, cp->job, c};
        i++;
    }
    for (size_t i = 0; i < s->nopen_jobs;) {
        uint32_t j = s->open_jobs[i];
        if (s->jobs[j].done || s->jobs[j].nlive == 0) {
            s->jobs[j].in_open = 0; /* done, or in the idle heap */
            s->open_jobs[i] = s->open_jobs[--s->nopen_jobs];
            continue;
        }
        if (needs_copy(s, &s->jobs[j]))
            s->cands[k++] = (cand_t){next_ordinal(s, &s->jobs[j]), 1,
                                     fresh_order(s, j), j, TASK_NONE};
        i++;
    }
    /* Every job with no live copy is a fresh candidate of key 1 that any
     * worker may take: the first in fresh_order stands for them all. */
    uint32_t top = idle_top(s);
    if (top != TASK_NONE)
        s->cands[k++] = (cand_t){1, 1, fresh_order(s, top), top, TASK_NONE};
    for (size_t i = 1; i < k; i++)
        if (by_rank(&s->cands[i], &s->cands[best]) < 0)
            best = i;
    if (best != 0) {
        cand_t t = s->cands[0];
        s->cands[0] = s->cands[best];
        s->cands[best] = t;
    }
    *n = k;
    return SHOAL_OK;
}

/* Makes worker w free for key: 1 when it is idle or its copy is worse
 * (suspended now), 0 when it keeps running. */
static int make_room(task_sched_t *s, uint32_t w, uint64_t key)
{
    uint32_t r = s->workers[w].running;

    if (r == TASK_NONE)
        return 1;
    if (key_of(&s->copies[r]) <= key)
        return 0;
    order(s, TASK_ORDER_SUSPEND, r);
    s->copies[r].state = TASK_COPY_SUSPENDED;
    s->workers[w].running = TASK_NONE;
    return 1;
}

static void start_on(task_sched_t *s, uint32_t c, uint32_t w, int resume)
{
    copy_t *cp = &s->copies[c];

    cp->state = TASK_COPY_RUNNING;
    cp->worker = w;
    cp->placed = ++s->clock;
    s->workers[w].running = c;
    order(s, resume ? TASK_ORDER_RESUME : TASK_ORDER_RUN, c);
}

/* The worker for a new copy of j: the hint if idle, else any idle one,
 * else the one running the worst key (the latest placed among equals);
 * only workers that hold no copy of j. */
static uint32_t pick_worker(const task_sched_t *s, const job_t *j)
{
    uint32_t best = TASK_NONE;
    uint32_t h = j->hint;

    if (h < s->nworkers && s->workers[h].live &&
        s->workers[h].running == TASK_NONE && !holds_copy_of(s, h, j))
        return h;
    for (uint32_t w = 0; w < s->nworkers; w++) {
        const worker_t *wk = &s->workers[w];
        if (!wk->live || holds_copy_of(s, w, j))
            continue;
        if (wk->running == TASK_NONE)
            return w;
        if (best == TASK_NONE)
            best = w;
        else {
            const copy_t *a = &s->copies[wk->running];
            const copy_t *b = &s->copies[s->workers[best].running];
            if (key_of(a) > key_of(b) ||
                (key_of(a) == key_of(b) && a->placed > b->placed))
                best = w;
        }
    }
    return best;
}

static int new_copy(task_sched_t *s, uint32_t j, uint32_t w, uint64_t key)
{
    if (GROW(s, copies, cap_copies, s->ncopies + 1) != SHOAL_OK ||
        GROW(s, open_copies, cap_open_copies, s->nopen_copies + 1) !=
            SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    uint32_t c = (uint32_t)s->ncopies++;
    s->open_copies[s->nopen_copies++] = c;
    job_t *jb = &s->jobs[j];
    if (!jb->in_open) {
        if (GROW(s, open_jobs, cap_open_jobs, s->nopen_jobs + 1) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        jb->in_open = 1;
        s->open_jobs[s->nopen_jobs++] = j;
    }
    s->copies[c] = (copy_t){.job = j, .worker = w, .ordinal = (uint32_t)key,
                            .next_in_job = jb->first_copy,
                            .state = TASK_COPY_SUSPENDED};
    jb->first_copy = c;
    jb->nlive++;
    if (key > s->maxkey)
        s->maxkey = key;
    start_on(s, c, w, 0);
    return SHOAL_OK;
}

/* Places one candidate if any can be placed: 1 placed, 0 none, <0. */
static int place_one(task_sched_t *s)
{
    size_t n;

    if (gather(s, &n) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    /* A candidate takes a worker only from a worse key (make_room): with
     * no worker idle, keys from the worst one running on can go nowhere.
     * A block of many jobs on busy workers is all such candidates. */
    uint64_t lim = 0;
    for (uint32_t w = 0; w < s->nworkers; w++) {
        const worker_t *wk = &s->workers[w];
        if (!wk->live)
            continue;
        if (wk->running == TASK_NONE) {
            lim = UINT64_MAX;
            break;
        }
        if (key_of(&s->copies[wk->running]) > lim)
            lim = key_of(&s->copies[wk->running]);
    }
    for (size_t i = 0; i < n; i++) {
        /* Mostly the best candidate is placed: order the rest, those that
         * could be, only when it is not. */
        if (i == 1) {
            size_t m = 1;
            for (size_t k = 1; k < n; k++)
                if (s->cands[k].key < lim) {
                    cand_t t = s->cands[m];
                    s->cands[m++] = s->cands[k];
                    s->cands[k] = t;
                }
            n = m;
            qsort(s->cands + 1, n - 1, sizeof *s->cands, by_rank);
        }
        const cand_t c = s->cands[i];
        if (c.key >= lim)
            break;
        if (!c.fresh) {
            uint32_t w = s->copies[c.copy].worker;
            if (!make_room(s, w, c.key))
                continue;
            start_on(s, c.copy, w, 1);
            return 1;
        }
        uint32_t w = pick_worker(s, &s->jobs[c.job]);
        if (w == TASK_NONE || !make_room(s, w, c.key))
            continue;
        if (new_copy(s, c.job, w, c.key) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        return 1;
    }
    return 0;
}

/* Each placement puts a strictly better key on a worker or fills an idle
 * one, so the loop ends; the bound guards against a bug turning it into
 * a hang. */
static int schedule(task_sched_t *s)
{
    if (s->held)
        return 0;
    size_t bound = 4 * (s->njobs + 1) * (s->max_copies + 1) +
                   4 * s->nworkers + 16;
    int r;

    while ((r = place_one(s)) == 1) {
        if (bound-- == 0)
            return base_err(SHOAL_ERR_INTERNAL, "task scheduler: "
                            "placement does not converge");
        if (reserve(s) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
    }
    return r;
}

/* ---- events -------------------------------------------------------------- */

int task_sched_hold(task_sched_t *s, int hold)
{
    if (hold) {
        s->held++;
        return SHOAL_OK;
    }
    if (s->held > 0)
        s->held--;
    return schedule(s);
}

int task_sched_worker_join(task_sched_t *s, uint32_t *worker)
{
    if (GROW(s, workers, cap_workers, s->nworkers + 1) != SHOAL_OK ||
        reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    *worker = (uint32_t)s->nworkers;
    s->workers[s->nworkers++] = (worker_t){TASK_NONE, 1};
    return schedule(s);
}

static int drop_worker(task_sched_t *s, uint32_t w, int kill)
{
    if (w >= s->nworkers || !s->workers[w].live)
        return base_err(SHOAL_ERR_NOT_FOUND, "task scheduler: no live "
                        "worker %u", w);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    for (uint32_t c = 0; c < s->ncopies; c++)
        if (s->copies[c].worker == w)
            end_copy(s, c, kill);
    s->workers[w].live = 0;
    return schedule(s);
}

int task_sched_worker_lost(task_sched_t *s, uint32_t worker)
{
    return drop_worker(s, worker, 0);
}

int task_sched_worker_suspect(task_sched_t *s, uint32_t worker)
{
    return drop_worker(s, worker, 1);
}

int task_sched_worker_idle(task_sched_t *s, uint32_t worker)
{
    if (worker >= s->nworkers || !s->workers[worker].live)
        return base_err(SHOAL_ERR_NOT_FOUND, "task scheduler: no live "
                        "worker %u", worker);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    if (s->workers[worker].running != TASK_NONE)
        end_copy(s, s->workers[worker].running, 0);
    return schedule(s);
}

int task_sched_add_jobs(task_sched_t *s, uint32_t parent, uint32_t n,
                        uint32_t hint, uint32_t *first)
{
    if (parent != TASK_NONE && parent >= s->njobs)
        return base_err(SHOAL_ERR_NOT_FOUND, "task scheduler: no job %u",
                        parent);
    if (GROW(s, jobs, cap_jobs, s->njobs + n) != SHOAL_OK ||
        idle_room(s, n) != SHOAL_OK || reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    *first = (uint32_t)s->njobs;
    for (uint32_t i = 0; i < n; i++) {
        s->jobs[s->njobs] = (job_t){.parent = parent,
                                    .hint = i == 0 ? hint : TASK_NONE,
                                    .block_first = *first,
                                    .first_copy = TASK_NONE};
        idle_push(s, (uint32_t)s->njobs++);
    }
    return schedule(s);
}

static int bad_copy(uint32_t c)
{
    return base_err(SHOAL_ERR_NOT_FOUND, "task scheduler: copy %u is not "
                    "live", c);
}

int task_sched_copy_waits(task_sched_t *s, uint32_t copy, uint32_t block)
{
    if (!live_copy(s, copy) || s->copies[copy].state != TASK_COPY_RUNNING)
        return bad_copy(copy);
    job_t *j = &s->jobs[s->copies[copy].job];
    if (block < j->blocks_done)
        return 0;
    if (block != j->blocks_done)
        return base_err(SHOAL_ERR_INVALID, "task scheduler: job %u waits "
                        "for block %u before block %u is done",
                        s->copies[copy].job, block, j->blocks_done);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    j->waiting = 1;
    s->copies[copy].state = TASK_COPY_WAITING;
    s->workers[s->copies[copy].worker].running = TASK_NONE;
    int r = schedule(s);
    return r < 0 ? r : 1;
}

int task_sched_block_done(task_sched_t *s, uint32_t job, uint32_t block)
{
    if (job >= s->njobs || s->jobs[job].done)
        return base_err(SHOAL_ERR_NOT_FOUND, "task scheduler: job %u is "
                        "not open", job);
    job_t *j = &s->jobs[job];
    if (block < j->blocks_done)
        return SHOAL_OK; /* reported twice */
    if (block != j->blocks_done)
        return base_err(SHOAL_ERR_INVALID, "task scheduler: block %u of "
                        "job %u done before block %u", block, job,
                        j->blocks_done);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    j->blocks_done++;
    j->waiting = 0;
    return schedule(s);
}

int task_sched_copy_done(task_sched_t *s, uint32_t copy)
{
    if (!live_copy(s, copy))
        return 0; /* killed or lost before its report came */
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    job_t *j = &s->jobs[s->copies[copy].job];
    j->done = 1;
    end_copy(s, copy, 0);
    while (j->first_copy != TASK_NONE)
        end_copy(s, j->first_copy, 1);
    int r = schedule(s);
    return r < 0 ? r : 1;
}

int task_sched_copy_lost(task_sched_t *s, uint32_t copy)
{
    if (!live_copy(s, copy))
        return SHOAL_OK;
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    end_copy(s, copy, 0);
    return schedule(s);
}

int task_sched_copy_blocks(task_sched_t *s, uint32_t copy)
{
    if (!live_copy(s, copy) || s->copies[copy].state != TASK_COPY_RUNNING)
        return bad_copy(copy);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    s->copies[copy].state = TASK_COPY_BLOCKED;
    s->workers[s->copies[copy].worker].running = TASK_NONE;
    return schedule(s);
}

int task_sched_copy_unblocks(task_sched_t *s, uint32_t copy)
{
    if (!live_copy(s, copy) || s->copies[copy].state != TASK_COPY_BLOCKED)
        return SHOAL_OK;
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    s->copies[copy].state = TASK_COPY_SUSPENDED;
    return schedule(s);
}

int task_sched_copy_penalize(task_sched_t *s, uint32_t copy)
{
    if (!live_copy(s, copy))
        return bad_copy(copy);
    if (reserve(s) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    copy_t *c = &s->copies[copy];
    c->penalty = (uint32_t)(s->maxkey + 1 - c->ordinal);
    s->maxkey = key_of(c);
    return schedule(s);
}

/* ---- orders and state ---------------------------------------------------- */

const task_order_t *task_sched_orders(const task_sched_t *s, size_t *n)
{
    *n = s->norders;
    return s->orders;
}

void task_sched_orders_clear(task_sched_t *s)
{
    s->norders = 0;
}

uint32_t task_sched_jobs(const task_sched_t *s)
{
    return (uint32_t)s->njobs;
}

uint32_t task_sched_workers(const task_sched_t *s)
{
    return (uint32_t)s->nworkers;
}

int task_sched_job_done(const task_sched_t *s, uint32_t job)
{
    return job < s->njobs && s->jobs[job].done;
}

uint32_t task_sched_running(const task_sched_t *s, uint32_t worker)
{
    if (worker >= s->nworkers || !s->workers[worker].live)
        return TASK_NONE;
    return s->workers[worker].running;
}

int task_sched_copy_info(const task_sched_t *s, uint32_t copy,
                         task_copy_info_t *info)
{
    if (copy >= s->ncopies)
        return bad_copy(copy);
    const copy_t *c = &s->copies[copy];
    *info = (task_copy_info_t){c->job, c->worker, c->ordinal, c->penalty,
                               c->state};
    return SHOAL_OK;
}
