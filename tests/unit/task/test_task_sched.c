/*
 * The eager scheduler as a pure state machine: the thesis's examples, a
 * lost worker, a parent that waits for its block, penalties, then seeded
 * random runs of nested programs with workers joining, lost, suspected
 * and crashing, checked against a model built from the orders alone:
 * every order is one a worker can carry out, the running set is the best
 * the candidates allow after every event, no job is lost or finished
 * twice.  A failure prints the seed (SHOAL_TEST_SEED=<n> repeats it).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/base.h"
#include "task/task_sched.h"
#include "task_model.h"
#include "test.h"

static task_sched_t *s;

static void expect(size_t i, task_order_kind_t kind, uint32_t job,
                   uint32_t worker, uint32_t ordinal)
{
    size_t n;
    const task_order_t *o = task_sched_orders(s, &n);

    if (i >= n)
        T_FAIL("order %zu of %zu", i, n);
    T_EQ(o[i].kind, kind);
    T_EQ(o[i].job, job);
    T_EQ(o[i].worker, worker);
    T_EQ(o[i].ordinal, ordinal);
}

static size_t norders(void)
{
    size_t n;

    task_sched_orders(s, &n);
    return n;
}

static uint32_t job_on(uint32_t w)
{
    task_copy_info_t info;
    uint32_t c = task_sched_running(s, w);

    if (c == TASK_NONE)
        return TASK_NONE;
    T_OK(task_sched_copy_info(s, c, &info));
    return info.job;
}

/* 4 workers, one job: copies A1-A4; job B arrives: B1 and B2 pre-empt A4
 * and A3, leaving 2 + 2.  A copy of A finishes: the other copies of A are
 * killed and B gets the freed workers. */
static void test_thesis_example(void)
{
    uint32_t w[4], a, b;

    T_OK(task_sched_create(8, &s));
    for (int i = 0; i < 4; i++)
        T_OK(task_sched_worker_join(s, &w[i]));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &a));
    T_EQ(norders(), 4);
    for (uint32_t i = 0; i < 4; i++)
        expect(i, TASK_ORDER_RUN, a, i, i + 1);
    task_sched_orders_clear(s);
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &b));
    T_EQ(norders(), 4);
    expect(0, TASK_ORDER_SUSPEND, a, 3, 4);
    expect(1, TASK_ORDER_RUN, b, 3, 1);
    expect(2, TASK_ORDER_SUSPEND, a, 2, 3);
    expect(3, TASK_ORDER_RUN, b, 2, 2);
    int na = 0, nb = 0;
    for (uint32_t i = 0; i < 4; i++) {
        na += job_on(i) == a;
        nb += job_on(i) == b;
    }
    T_EQ(na, 2);
    T_EQ(nb, 2);
    /* A2 (on worker 1) finishes first. */
    task_sched_orders_clear(s);
    T_EQ(task_sched_copy_done(s, task_sched_running(s, 1)), 1);
    T_ASSERT(task_sched_job_done(s, a));
    size_t n;
    const task_order_t *o = task_sched_orders(s, &n);
    int kills = 0, runs = 0;
    for (size_t i = 0; i < n; i++) {
        kills += o[i].kind == TASK_ORDER_KILL && o[i].job == a;
        runs += o[i].kind == TASK_ORDER_RUN && o[i].job == b;
    }
    T_EQ(kills, 3); /* A1 running, A3 and A4 suspended */
    T_EQ(runs, 2);  /* B3, B4 */
    for (uint32_t i = 0; i < 4; i++)
        T_EQ(job_on(i), b);
    /* The killed copies' late reports are ignored. */
    T_EQ(task_sched_copy_done(s, 0), 0);
    task_sched_destroy(s);
}

/* Between equally bad victims, the copy started last (it has done the
 * least work) is suspended. */
static void test_victim_ties(void)
{
    uint32_t w, a, c;

    T_OK(task_sched_create(2, &s));
    for (int i = 0; i < 4; i++)
        T_OK(task_sched_worker_join(s, &w));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 2, TASK_NONE, &a));
    expect(0, TASK_ORDER_RUN, a, 0, 1);
    expect(1, TASK_ORDER_RUN, a + 1, 1, 1);
    expect(2, TASK_ORDER_RUN, a, 2, 2);
    expect(3, TASK_ORDER_RUN, a + 1, 3, 2);
    task_sched_orders_clear(s);
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &c));
    T_EQ(norders(), 2);
    expect(0, TASK_ORDER_SUSPEND, a + 1, 3, 2);
    expect(1, TASK_ORDER_RUN, c, 3, 1);
    task_sched_destroy(s);
}

/* A lost worker's copy is replaced at the ordinal it freed. */
static void test_lost_worker(void)
{
    uint32_t w0, w1, w2, a;
    task_copy_info_t info;

    T_OK(task_sched_create(2, &s));
    T_OK(task_sched_worker_join(s, &w0));
    T_OK(task_sched_worker_join(s, &w1));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &a));
    T_EQ(job_on(w0), a);
    T_EQ(job_on(w1), a); /* max 2 copies */
    task_sched_orders_clear(s);
    T_OK(task_sched_worker_lost(s, w0));
    T_EQ(norders(), 0); /* nothing to say to a dead worker */
    T_OK(task_sched_worker_join(s, &w2));
    T_EQ(norders(), 1);
    expect(0, TASK_ORDER_RUN, a, w2, 1);
    /* Suspected: its copy is killed, in case the worker is only slow. */
    task_sched_orders_clear(s);
    uint32_t c = task_sched_running(s, w1);
    T_OK(task_sched_worker_suspect(s, w1));
    expect(0, TASK_ORDER_KILL, a, w1, 2);
    T_OK(task_sched_copy_info(s, c, &info));
    T_EQ(info.state, TASK_COPY_GONE);
    T_ERR(task_sched_worker_lost(s, w1), SHOAL_ERR_NOT_FOUND);
    /* A crash (the worker says it runs nothing): a new copy at once. */
    task_sched_orders_clear(s);
    T_OK(task_sched_worker_idle(s, w2));
    expect(0, TASK_ORDER_RUN, a, w2, 1);
    task_sched_destroy(s);
}

/* A parent waits in parend: its worker runs the children; once the block
 * is done the parent resumes there.  A second copy reaching the finished
 * block goes on. */
static void test_parent_waits(void)
{
    uint32_t w, root, kid;

    T_OK(task_sched_create(2, &s));
    T_OK(task_sched_worker_join(s, &w));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &root));
    uint32_t rc = task_sched_running(s, w);
    T_EQ(task_sched_copy_waits(s, rc, 0), 1);
    T_EQ(task_sched_running(s, w), TASK_NONE);
    T_OK(task_sched_add_jobs(s, root, 2, w, &kid));
    T_EQ(job_on(w), kid);
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(job_on(w), kid + 1);
    task_sched_orders_clear(s);
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(norders(), 0); /* the parent waits for the merge, not the kids */
    T_ERR(task_sched_block_done(s, root, 1), SHOAL_ERR_INVALID);
    T_OK(task_sched_block_done(s, root, 0));
    expect(0, TASK_ORDER_RESUME, root, w, 1);
    T_EQ(task_sched_copy_waits(s, rc, 0), 0); /* done already: go on */
    T_EQ(task_sched_copy_done(s, rc), 1);
    T_EQ(task_sched_copy_done(s, rc), 0);
    task_sched_destroy(s);
}

/* Depth first: a job's children run before its parent's later siblings,
 * and a block's jobs in id order (a recursive program keeps about its
 * depth of jobs open, not its upper levels whole). */
static void test_depth_first(void)
{
    uint32_t w, kids, grand;

    T_OK(task_sched_create(1, &s));
    T_OK(task_sched_worker_join(s, &w));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 3, TASK_NONE, &kids));
    T_EQ(job_on(w), kids); /* in id order within the block */
    /* The parent waits at a new block: one event (as the coordinator
     * does it), else the free worker takes kids + 1 at once. */
    T_OK(task_sched_hold(s, 1));
    T_EQ(task_sched_copy_waits(s, task_sched_running(s, w), 0), 1);
    T_EQ(task_sched_running(s, w), TASK_NONE);
    T_OK(task_sched_add_jobs(s, kids, 2, w, &grand));
    T_EQ(task_sched_running(s, w), TASK_NONE);
    T_OK(task_sched_hold(s, 0));
    T_EQ(job_on(w), grand); /* before kids + 1 and kids + 2 */
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(job_on(w), grand + 1);
    T_OK(task_sched_hold(s, 1)); /* the last child's end and its block's */
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_OK(task_sched_block_done(s, kids, 0));
    T_OK(task_sched_hold(s, 0));
    T_EQ(job_on(w), kids); /* the parent resumes, then its siblings */
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(job_on(w), kids + 1);
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(job_on(w), kids + 2);
    task_sched_destroy(s);
}

/* Equal keys do not pre-empt; a penalized copy is pre-empted. */
static void test_penalty(void)
{
    uint32_t w, a, b;

    T_OK(task_sched_create(1, &s));
    T_OK(task_sched_worker_join(s, &w));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &a));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 1, TASK_NONE, &b));
    T_EQ(job_on(w), a);
    task_sched_orders_clear(s);
    T_OK(task_sched_copy_penalize(s, task_sched_running(s, w)));
    expect(0, TASK_ORDER_SUSPEND, a, w, 1);
    expect(1, TASK_ORDER_RUN, b, w, 1);
    T_EQ(task_sched_copy_done(s, task_sched_running(s, w)), 1);
    T_EQ(job_on(w), a); /* resumed */
    task_sched_destroy(s);
}

/* ---- random runs against a model ----------------------------------------- */

#define MJOBS 1024
#define MCOPIES 16384
#define MWORKERS 64

typedef struct mjob {
    int done, completions;
    int plan;      /* children it will spawn in its one block (0: none) */
    int created;   /* the block exists */
    int waiting;   /* its block is pending */
    int reported;  /* block_done sent */
    uint32_t kids; /* first child */
    uint32_t parent;
} mjob_t;

typedef struct mcopy {
    uint32_t job, worker, ordinal;
    task_copy_state_t state;
} mcopy_t;

static mjob_t mj[MJOBS];
static mcopy_t mc[MCOPIES];
static uint32_t mw_running[MWORKERS];
static int mw_live[MWORKERS];
static uint32_t nj, ncp, nw, max_copies;

static uint32_t model_nlive(uint32_t j)
{
    uint32_t n = 0;

    for (uint32_t c = 0; c < ncp; c++)
        n += mc[c].job == j && mc[c].state != TASK_COPY_GONE;
    return n;
}

static uint32_t model_next_ordinal(uint32_t j)
{
    for (uint32_t k = 1;; k++) {
        int used = 0;
        for (uint32_t c = 0; c < ncp && !used; c++)
            used = mc[c].job == j && mc[c].state != TASK_COPY_GONE &&
                   mc[c].ordinal == k;
        if (!used)
            return k;
    }
}

static int model_holds(uint32_t w, uint32_t j)
{
    for (uint32_t c = 0; c < ncp; c++)
        if (mc[c].job == j && mc[c].worker == w &&
            mc[c].state != TASK_COPY_GONE)
            return 1;
    return 0;
}

static uint64_t key(uint32_t c)
{
    task_copy_info_t info;

    T_OK(task_sched_copy_info(s, c, &info));
    CHECK(info.ordinal == mc[c].ordinal);
    return (uint64_t)info.ordinal + info.penalty;
}

/* Carries out the orders on the model, checking each can be done. */
static void apply_orders(void)
{
    size_t n;
    const task_order_t *o = task_sched_orders(s, &n);

    for (size_t i = 0; i < n; i++) {
        uint32_t c = o[i].copy, w = o[i].worker;
        switch (o[i].kind) {
        case TASK_ORDER_RUN:
            CHECK(c == ncp && ncp < MCOPIES);
            CHECK(w < nw && mw_live[w] && mw_running[w] == TASK_NONE);
            CHECK(!mj[o[i].job].done && !model_holds(w, o[i].job));
            CHECK(o[i].ordinal == model_next_ordinal(o[i].job));
            CHECK(model_nlive(o[i].job) < max_copies);
            mc[ncp++] = (mcopy_t){o[i].job, w, o[i].ordinal,
                                  TASK_COPY_RUNNING};
            mw_running[w] = c;
            break;
        case TASK_ORDER_RESUME:
            CHECK(c < ncp && mc[c].worker == w);
            CHECK(mc[c].state == TASK_COPY_SUSPENDED ||
                  (mc[c].state == TASK_COPY_WAITING && !mj[mc[c].job].waiting));
            CHECK(mw_live[w] && mw_running[w] == TASK_NONE);
            mc[c].state = TASK_COPY_RUNNING;
            mw_running[w] = c;
            break;
        case TASK_ORDER_SUSPEND:
            CHECK(c < ncp && mc[c].state == TASK_COPY_RUNNING &&
                  mw_running[w] == c);
            mc[c].state = TASK_COPY_SUSPENDED;
            mw_running[w] = TASK_NONE;
            break;
        case TASK_ORDER_KILL:
            CHECK(c < ncp && mc[c].state != TASK_COPY_GONE);
            CHECK(mj[mc[c].job].done || !mw_live[w]);
            if (mc[c].state == TASK_COPY_RUNNING && mw_running[w] == c)
                mw_running[w] = TASK_NONE;
            mc[c].state = TASK_COPY_GONE;
            break;
        }
    }
    task_sched_orders_clear(s);
}

/* After an event: the scheduler's view equals the model's, and no
 * candidate could be placed: every worker it may go to is busy with a
 * key at least as good. */
static void check_best(void)
{
    for (uint32_t w = 0; w < nw; w++)
        CHECK(task_sched_running(s, w) == (mw_live[w] ? mw_running[w]
                                                      : TASK_NONE));
    for (uint32_t c = 0; c < ncp; c++)
        CHECK(mw_live[mc[c].worker] || mc[c].state == TASK_COPY_GONE);
    for (uint32_t c = 0; c < ncp; c++) {
        int bound = mc[c].state == TASK_COPY_SUSPENDED ||
                    (mc[c].state == TASK_COPY_WAITING &&
                     !mj[mc[c].job].waiting);
        if (!bound)
            continue;
        uint32_t r = mw_running[mc[c].worker];
        CHECK(r != TASK_NONE && key(r) <= key(c));
    }
    for (uint32_t j = 0; j < nj; j++) {
        uint32_t live = model_nlive(j);
        if (mj[j].done || live >= max_copies || (mj[j].waiting && live))
            continue;
        uint64_t k = model_next_ordinal(j);
        for (uint32_t w = 0; w < nw; w++) {
            if (!mw_live[w] || model_holds(w, j))
                continue;
            CHECK(mw_running[w] != TASK_NONE && key(mw_running[w]) <= k);
        }
    }
}

static void add_jobs(uint32_t parent, int n, uint32_t hint)
{
    uint32_t first;

    T_OK(task_sched_add_jobs(s, parent, (uint32_t)n, hint, &first));
    CHECK(first == nj);
    for (int i = 0; i < n; i++) {
        uint32_t depth = 0;
        for (uint32_t p = parent; p != TASK_NONE; p = mj[p].parent)
            depth++;
        mj[nj] = (mjob_t){.parent = parent};
        if (depth < 4 && rnd() % 2 == 0)
            mj[nj].plan = 1 + (int)(rnd() % 5);
        nj++;
    }
}

static void job_finished(uint32_t j)
{
    mj[j].done = 1;
    mj[j].completions++;
    uint32_t p = mj[j].parent;
    if (p == TASK_NONE)
        return;
    for (int i = 0; i < mj[p].plan; i++)
        if (!mj[mj[p].kids + (uint32_t)i].done)
            return;
    T_OK(task_sched_block_done(s, p, 0));
    mj[p].waiting = 0;
    mj[p].reported = 1;
}

/* The running copy on w takes its next step: reach its block, or end. */
static void progress(uint32_t w)
{
    uint32_t c = mw_running[w], j = mc[c].job;

    if (mj[j].plan && !mj[j].reported) {
        CHECK(task_sched_copy_waits(s, c, 0) == 1);
        mc[c].state = TASK_COPY_WAITING;
        mw_running[w] = TASK_NONE;
        mj[j].waiting = 1;
        if (!mj[j].created) { /* the first copy here spawns the block */
            mj[j].created = 1;
            mj[j].kids = nj;
            apply_orders();
            add_jobs(j, mj[j].plan, w);
        }
        return;
    }
    if (mj[j].plan) /* a copy that had not reached the finished block */
        CHECK(task_sched_copy_waits(s, c, 0) == 0);
    int won = task_sched_copy_done(s, c);
    CHECK(won == 1 && !mj[j].done);
    mc[c].state = TASK_COPY_GONE; /* no order: it ended by itself */
    mw_running[w] = TASK_NONE;
    job_finished(j);
}

static uint32_t live_workers(void)
{
    uint32_t n = 0;

    for (uint32_t w = 0; w < nw; w++)
        n += (uint32_t)mw_live[w];
    return n;
}

static void join(void)
{
    uint32_t w;

    T_OK(task_sched_worker_join(s, &w));
    CHECK(w == nw && nw < MWORKERS);
    mw_live[nw] = 1;
    mw_running[nw++] = TASK_NONE;
}

/* One random event. */
static void step(void)
{
    uint32_t w = nw ? (uint32_t)(rnd() % nw) : 0;
    uint64_t r = rnd() % 100;

    if (r < 70 && nw && mw_live[w] && mw_running[w] != TASK_NONE)
        progress(w);
    else if (r < 74 && nw < MWORKERS - 1)
        join();
    else if (r < 77 && nw && mw_live[w] && live_workers() > 1) {
        int suspect = rnd() % 2;
        mw_live[w] = 0;
        mw_running[w] = TASK_NONE;
        /* Lost: its copies are gone without a word; suspected: the
         * scheduler sends KILL for each (apply_orders takes them). */
        for (uint32_t c = 0; c < ncp && !suspect; c++)
            if (mc[c].worker == w)
                mc[c].state = TASK_COPY_GONE;
        T_OK(suspect ? task_sched_worker_suspect(s, w)
                     : task_sched_worker_lost(s, w));
    } else if (r < 80 && nw && mw_live[w] && mw_running[w] != TASK_NONE) {
        mc[mw_running[w]].state = TASK_COPY_GONE; /* it crashed */
        mw_running[w] = TASK_NONE;
        T_OK(task_sched_worker_idle(s, w));
    } else if (r < 82 && nw && mw_live[w] && mw_running[w] != TASK_NONE) {
        T_OK(task_sched_copy_penalize(s, mw_running[w]));
    } else if (r < 85 && ncp) {
        /* A late report from a copy that is gone changes nothing. */
        uint32_t c = (uint32_t)(rnd() % ncp);
        if (mc[c].state == TASK_COPY_GONE)
            CHECK(task_sched_copy_done(s, c) == 0);
    }
    apply_orders();
    check_best();
}

static void random_run(void)
{
    nj = ncp = nw = 0;
    max_copies = 1 + (uint32_t)(rnd() % 4);
    T_OK(task_sched_create(max_copies, &s));
    for (uint32_t i = 1 + (uint32_t)(rnd() % 6); i > 0; i--) {
        join();
        apply_orders();
    }
    add_jobs(TASK_NONE, 1, TASK_NONE);
    mj[0].plan = 2 + (int)(rnd() % 5); /* a program, not one job */
    apply_orders();
    check_best();
    for (int i = 0; i < 20000 && !mj[0].done; i++)
        step();
    CHECK(mj[0].done); /* the program ended */
    for (uint32_t j = 0; j < nj; j++)
        CHECK(mj[j].done && mj[j].completions == 1);
    for (uint32_t c = 0; c < ncp; c++)
        CHECK(mc[c].state == TASK_COPY_GONE);
    task_sched_destroy(s);
}

/* A copy waiting for a lock frees its worker for another job; granted, it
 * resumes on its own worker once that is free, and never moves. */
static void test_lock_blocked(void)
{
    uint32_t w0, a, b;
    task_copy_info_t info;

    T_OK(task_sched_create(1, &s));
    T_OK(task_sched_worker_join(s, &w0));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 2, TASK_NONE, &a));
    b = a + 1;
    T_EQ(job_on(w0), a);
    uint32_t ca = task_sched_running(s, w0);
    task_sched_orders_clear(s);
    T_ERR(task_sched_copy_unblocks(s, ca), SHOAL_OK); /* not blocked */
    T_EQ(norders(), 0);
    T_OK(task_sched_copy_blocks(s, ca));
    expect(0, TASK_ORDER_RUN, b, w0, 1); /* b gets the worker */
    T_OK(task_sched_copy_info(s, ca, &info));
    T_EQ(info.state, TASK_COPY_BLOCKED);
    T_ERR(task_sched_copy_blocks(s, ca), SHOAL_ERR_NOT_FOUND);
    task_sched_orders_clear(s);
    uint32_t cb = task_sched_running(s, w0);
    T_OK(task_sched_copy_blocks(s, cb)); /* both wait: the worker idles */
    T_EQ(norders(), 0);
    T_EQ(task_sched_running(s, w0), TASK_NONE);
    T_OK(task_sched_copy_unblocks(s, ca));
    expect(0, TASK_ORDER_RESUME, a, w0, 1);
    T_EQ(task_sched_running(s, w0), ca);
    task_sched_orders_clear(s);
    T_OK(task_sched_copy_unblocks(s, cb)); /* equal keys: a keeps running */
    T_EQ(norders(), 0);
    T_OK(task_sched_copy_info(s, cb, &info));
    T_EQ(info.state, TASK_COPY_SUSPENDED);
    T_EQ(task_sched_copy_done(s, ca), 1);
    T_EQ(job_on(w0), b); /* b resumes where it was */
    task_sched_destroy(s);
}

/* One block of 300 000 jobs on 2 workers, run to the end in id order: an
 * event must cost what runs, not the block (a scan of every open job at
 * each placement made this about 10^11 steps: the test's timeout). */
static void test_wide_block(void)
{
    enum { N = 300000 };
    uint32_t w[2], first;

    T_OK(task_sched_create(2, &s));
    T_OK(task_sched_worker_join(s, &w[0]));
    T_OK(task_sched_worker_join(s, &w[1]));
    T_OK(task_sched_add_jobs(s, TASK_NONE, N, w[0], &first));
    T_EQ(first, 0u);
    /* Jobs 0 and 1 run; each one done gives its worker the next id. */
    for (uint32_t done = 0; done < N; done++) {
        task_sched_orders_clear(s);
        uint32_t c = task_sched_running(s, w[done % 2]);
        task_copy_info_t info;
        T_ASSERT(c != TASK_NONE);
        T_OK(task_sched_copy_info(s, c, &info));
        T_EQ(info.job, done);
        T_EQ(task_sched_copy_done(s, c), 1);
    }
    task_sched_orders_clear(s);
    T_EQ(task_sched_running(s, w[0]), TASK_NONE);
    T_EQ(task_sched_running(s, w[1]), TASK_NONE);
    task_sched_destroy(s);
    s = NULL;
}

int main(void)
{
    test_wide_block();
    test_thesis_example();
    test_victim_ties();
    test_lost_worker();
    test_parent_waits();
    test_depth_first();
    test_penalty();
    test_lock_blocked();
    model_runs(random_run, 200);
    return 0;
}
