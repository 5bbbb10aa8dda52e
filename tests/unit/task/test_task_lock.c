/*
 * The lock manager as a pure state machine: FIFO grants, duplicate and
 * late requests, refusals, bad use, the thesis's Fig. 4.6 busy-waiting
 * program run with the scheduler, a rebuild after a worker loss with a
 * missing version; then seeded random runs of the counter program (k jobs
 * x n critical sections, each adding one to a lock's counter) with
 * duplicate copies, kills, lost workers and lost managers rebuilt from
 * the survivors' records, which must end at exactly k*n with every grant
 * of a request showing the same version.  A failure prints the seed
 * (SHOAL_TEST_SEED=<n> repeats it).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/base.h"
#include "task/task_lock.h"
#include "task/task_sched.h"
#include "task_model.h"
#include "test.h"

static task_lock_t *m;

static task_path_t path_of(uint32_t id)
{
    task_path_t p;

    T_OK(task_path_child(&TASK_PATH_ROOT, 0, 0, id, &p));
    return p;
}

static uint64_t value_of(const task_lock_order_t *o)
{
    uint64_t v = 0;

    T_EQ(o->len, sizeof v);
    memcpy(&v, o->data, sizeof v);
    return v;
}

static const task_lock_order_t *order_at(size_t i, task_lock_order_kind_t k,
                                         uint32_t copy)
{
    size_t n;
    const task_lock_order_t *o = task_lock_orders(m, &n);

    if (i >= n)
        T_FAIL("order %zu of %zu", i, n);
    T_EQ(o[i].kind, k);
    T_EQ(o[i].copy, copy);
    return &o[i];
}

static size_t norders(void)
{
    size_t n;

    task_lock_orders(m, &n);
    return n;
}

static void unlock_val(uint32_t copy, const task_path_t *job, uint32_t req,
                       uint32_t lock, uint64_t v, int expect)
{
    T_EQ(task_lock_unlock(m, copy, job, req, lock, &v, sizeof v), expect);
}

static void make(uint32_t nlocks, uint32_t suspect_after)
{
    uint64_t zero = 0;

    T_OK(task_lock_create(nlocks, suspect_after, &m));
    for (uint32_t i = 0; i < nlocks; i++)
        T_OK(task_lock_set_initial(m, i, &zero, sizeof zero));
}

/* Three jobs on one lock: granted in arrival order, each seeing the
 * previous one's value, and each grant shipping the sequence its worker
 * lacks. */
static void test_fifo(void)
{
    task_path_t a = path_of(0), b = path_of(1), c = path_of(2);
    const task_lock_order_t *o;

    make(1, 0);
    T_OK(task_lock_lock(m, 10, 0, &a, 0, 0));
    o = order_at(0, TASK_LOCK_GRANT, 10);
    T_EQ(o->version, 0);
    T_EQ(value_of(o), 0);
    T_EQ(o->replay, 0);
    T_EQ(o->seq_from, 0);
    T_EQ(o->seq_to, 1);
    T_EQ(task_lock_held(m, &a), 1);
    T_OK(task_lock_lock(m, 11, 1, &b, 0, 0));
    T_OK(task_lock_lock(m, 12, 1, &c, 0, 0));
    order_at(1, TASK_LOCK_WAIT, 11);
    order_at(2, TASK_LOCK_WAIT, 12);
    task_lock_orders_clear(m);
    unlock_val(10, &a, 0, 0, 1, 1);
    T_EQ(norders(), 1);
    o = order_at(0, TASK_LOCK_GRANT, 11);
    T_EQ(o->version, 1);
    T_EQ(value_of(o), 1);
    T_EQ(o->seq_from, 0);
    T_EQ(o->seq_to, 2);
    task_lock_orders_clear(m);
    unlock_val(11, &b, 0, 0, 2, 1);
    o = order_at(0, TASK_LOCK_GRANT, 12);
    T_EQ(o->version, 2);
    T_EQ(value_of(o), 2);
    T_EQ(o->seq_from, 2); /* worker 1 saw entries 0 and 1 */
    T_EQ(o->seq_to, 3);
    unlock_val(12, &c, 0, 0, 3, 1);
    T_EQ(task_lock_owner(m, 0), TASK_LOCK_FREE);
    T_EQ(task_lock_current(m, 0), 3);
    T_EQ(task_lock_seq_len(m), 3);
    task_lock_entry_t e;
    T_OK(task_lock_entry(m, 1, &e));
    T_ASSERT(task_path_equal(&e.job, &b));
    T_EQ(e.version, 1);
    task_lock_destroy(m);
    task_path_free(&a);
    task_path_free(&b);
    task_path_free(&c);
}

/* A second copy of a request gets the first copy's before-image while
 * the lock is held; the slower copy's unlock is ignored; a copy of a
 * waiting request waits with it and both are granted together. */
static void test_duplicates(void)
{
    task_path_t a = path_of(0), b = path_of(1);
    const task_lock_order_t *o;

    make(1, 0);
    T_OK(task_lock_lock(m, 1, 0, &a, 0, 0));
    unlock_val(1, &a, 0, 0, 1, 1);
    T_OK(task_lock_lock(m, 1, 0, &a, 1, 0)); /* A's second section */
    T_OK(task_lock_lock(m, 2, 1, &a, 0, 0)); /* a slow copy's first */
    o = order_at(2, TASK_LOCK_GRANT, 2);
    T_EQ(o->replay, 1);
    T_EQ(o->version, 0);
    T_EQ(value_of(o), 0); /* the before-image, not the current 1 */
    T_EQ(o->released, 1);
    T_EQ(o->seq_from, 0);
    T_EQ(o->seq_to, 2);
    unlock_val(2, &a, 0, 0, 1, 0); /* late: ignored */
    T_OK(task_lock_lock(m, 2, 1, &a, 1, 0));
    o = order_at(3, TASK_LOCK_GRANT, 2);
    T_EQ(o->replay, 1);
    T_EQ(o->version, 1);
    T_EQ(o->released, 0); /* the first copy is still inside */
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, 3, 2, &b, 0, 0));
    T_OK(task_lock_lock(m, 4, 3, &b, 0, 0));
    order_at(0, TASK_LOCK_WAIT, 3);
    order_at(1, TASK_LOCK_WAIT, 4);
    task_lock_orders_clear(m);
    unlock_val(2, &a, 1, 0, 2, 1); /* the slow copy releases first */
    unlock_val(1, &a, 1, 0, 2, 0);
    T_EQ(norders(), 2);
    T_EQ(order_at(0, TASK_LOCK_GRANT, 3)->entry, 2);
    T_EQ(order_at(1, TASK_LOCK_GRANT, 4)->entry, 2);
    T_EQ(value_of(order_at(1, TASK_LOCK_GRANT, 4)), 2);
    /* A copy gone while waiting is not granted. */
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, 1, 0, &a, 2, 0));
    T_OK(task_lock_copy_gone(m, 1));
    unlock_val(4, &b, 0, 0, 3, 1);
    T_EQ(norders(), 1); /* the WAIT only */
    T_EQ(task_lock_held(m, &a), 1); /* the request stays, dated */
    T_OK(task_lock_lock(m, 5, 0, &a, 2, 0));
    T_EQ(order_at(1, TASK_LOCK_GRANT, 5)->replay, 1);
    T_EQ(value_of(order_at(1, TASK_LOCK_GRANT, 5)), 3);
    task_lock_destroy(m);
    task_path_free(&a);
    task_path_free(&b);
}

/* A finished job's requests are refused and its unlocks ignored; its
 * waiting copies are refused and its queued request dropped. */
static void test_done_refused(void)
{
    task_path_t a = path_of(0), b = path_of(1), c = path_of(2);

    make(1, 0);
    T_OK(task_lock_lock(m, 1, 0, &a, 0, 0));
    T_OK(task_lock_lock(m, 2, 1, &b, 0, 0));
    T_OK(task_lock_lock(m, 3, 1, &c, 0, 0));
    task_lock_orders_clear(m);
    T_OK(task_lock_job_done(m, &b)); /* another copy of B finished */
    T_EQ(norders(), 1);
    order_at(0, TASK_LOCK_REFUSE, 2);
    unlock_val(1, &a, 0, 0, 1, 1);
    T_EQ(order_at(1, TASK_LOCK_GRANT, 3)->version, 1); /* C, not B */
    unlock_val(3, &c, 0, 0, 2, 1);
    const void *d;
    size_t len;
    T_OK(task_lock_version(m, 0, 0, &d, &len)); /* A's before-image */
    T_OK(task_lock_job_done(m, &a));
    T_ERR(task_lock_version(m, 0, 0, &d, &len), SHOAL_ERR_NOT_FOUND);
    T_ASSERT(strstr(shoal_error_detail(), "dropped") != NULL);
    T_OK(task_lock_version(m, 0, 2, &d, &len)); /* the current one */
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, 7, 0, &a, 1, 0));
    order_at(0, TASK_LOCK_REFUSE, 7);
    unlock_val(7, &a, 0, 0, 9, 0);
    T_EQ(task_lock_current(m, 0), 2);
    task_lock_destroy(m);
    task_path_free(&a);
    task_path_free(&b);
    task_path_free(&c);
}

/* Bad use: each error names what is wrong and changes nothing. */
static void test_bad_use(void)
{
    task_path_t a = path_of(0), b = path_of(1);
    uint64_t v = 5;
    const void *d;
    size_t len;

    make(2, 0);
    T_ERR(task_lock_lock(m, 1, 0, &a, 0, 2), SHOAL_ERR_INVALID);
    T_ERR(task_lock_unlock(m, 1, &a, 0, 7, &v, sizeof v), SHOAL_ERR_INVALID);
    T_ERR(task_lock_unlock(m, 1, &a, 0, 0, &v, sizeof v), SHOAL_ERR_INVALID);
    T_OK(task_lock_lock(m, 1, 0, &a, 0, 0));
    T_EQ(task_lock_held(m, &a), 1); /* parbegin here is refused */
    T_ERR(task_lock_lock(m, 1, 0, &a, 1, 0), SHOAL_ERR_BUSY); /* recursion */
    T_ASSERT(strstr(shoal_error_detail(), "not recursive") != NULL);
    T_ERR(task_lock_lock(m, 1, 0, &a, 3, 1), SHOAL_ERR_PROTOCOL); /* skip */
    T_ERR(task_lock_lock(m, 2, 0, &a, 0, 1), SHOAL_ERR_PROTOCOL);
    T_ASSERT(strstr(shoal_error_detail(), "not deterministic") != NULL);
    T_ERR(task_lock_unlock(m, 1, &a, 0, 1, &v, sizeof v), SHOAL_ERR_INVALID);
    T_ERR(task_lock_unlock(m, 1, &a, 1, 0, &v, sizeof v), SHOAL_ERR_INVALID);
    T_OK(task_lock_lock(m, 3, 1, &b, 0, 0));
    T_ERR(task_lock_unlock(m, 3, &b, 0, 0, &v, sizeof v), SHOAL_ERR_INVALID);
    T_ASSERT(strstr(shoal_error_detail(), "still waits") != NULL);
    T_ERR(task_lock_lock(m, 3, 1, &b, 0, 1), SHOAL_ERR_PROTOCOL);
    T_OK(task_lock_lock(m, 1, 0, &a, 1, 1)); /* nesting other locks is ok */
    T_EQ(task_lock_held(m, &a), 2);
    /* Ends inside its critical sections: an error, the locks released
     * with their variables unchanged, B granted. */
    task_lock_orders_clear(m);
    T_ERR(task_lock_job_done(m, &a), SHOAL_ERR_BUSY);
    T_EQ(task_lock_held(m, &a), 0);
    T_EQ(order_at(0, TASK_LOCK_GRANT, 3)->version, 1);
    T_EQ(value_of(order_at(0, TASK_LOCK_GRANT, 3)), 0);
    T_OK(task_lock_version(m, 1, 1, &d, &len));
    T_ERR(task_lock_version(m, 1, 2, &d, &len), SHOAL_ERR_NOT_FOUND);
    T_ERR(task_lock_set_initial(m, 0, &v, sizeof v), SHOAL_ERR_BUSY);
    T_ERR(task_lock_create(0, 0, &m), SHOAL_ERR_INVALID);
    task_lock_destroy(m);
    task_path_free(&a);
    task_path_free(&b);
}

/*
 * Fig. 4.6 on one worker: J1 busy-waits (lock; n = m; unlock) until J2
 * sets m to 0.  Without the starvation detector J2 never runs; with it,
 * J1 is penalized, suspended, J2 runs, and J1 ends.  Returns J1's
 * requests, or 0 when J2 never ran within `budget` of them.
 */
static uint32_t run_fig46(uint32_t suspect_after, uint32_t budget)
{
    task_sched_t *s;
    uint32_t w, j1, copy1, req1 = 0, running;
    task_path_t p1 = path_of(1), p2 = path_of(2);
    uint64_t one = 1, zero = 0;
    size_t n;

    T_OK(task_sched_create(1, &s));
    T_OK(task_sched_worker_join(s, &w));
    T_OK(task_lock_create(1, suspect_after, &m));
    T_OK(task_lock_set_initial(m, 0, &one, sizeof one));
    T_OK(task_sched_add_jobs(s, TASK_NONE, 2, TASK_NONE, &j1));
    copy1 = task_sched_running(s, w);
    task_copy_info_t info;
    T_OK(task_sched_copy_info(s, copy1, &info));
    T_EQ(info.job, j1); /* J1 started first */
    for (;;) {
        running = task_sched_running(s, w);
        if (running != copy1)
            break;
        if (req1 == budget) {
            req1 = 0;
            goto out;
        }
        task_lock_orders_clear(m);
        T_OK(task_lock_lock(m, copy1, w, &p1, req1, 0));
        const task_lock_order_t *o = task_lock_orders(m, &n);
        T_EQ(o[0].kind, TASK_LOCK_GRANT);
        T_EQ(value_of(&o[0]), 1);
        T_EQ(task_lock_unlock(m, copy1, &p1, req1++, 0, &one, sizeof one), 1);
        if (n > 1) {
            T_EQ(o[1].kind, TASK_LOCK_PENALIZE);
            T_OK(task_sched_copy_penalize(s, copy1));
        }
    }
    /* J2 runs: m = 0; J2 ends, J1 resumes and sees 0. */
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, running, w, &p2, 0, 0));
    T_EQ(order_at(0, TASK_LOCK_GRANT, running)->kind, TASK_LOCK_GRANT);
    T_EQ(task_lock_unlock(m, running, &p2, 0, 0, &zero, sizeof zero), 1);
    T_EQ(task_sched_copy_done(s, running), 1);
    T_OK(task_lock_job_done(m, &p2));
    T_EQ(task_sched_running(s, w), copy1);
    T_OK(task_lock_copy_resumed(m, copy1));
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, copy1, w, &p1, req1, 0));
    T_EQ(value_of(order_at(0, TASK_LOCK_GRANT, copy1)), 0);
    T_EQ(task_lock_unlock(m, copy1, &p1, req1++, 0, &zero, sizeof zero), 1);
    T_EQ(task_sched_copy_done(s, copy1), 1);
out:
    task_lock_destroy(m);
    task_sched_destroy(s);
    task_path_free(&p1);
    task_path_free(&p2);
    return req1;
}

static void test_fig46(void)
{
    T_EQ(run_fig46(0, 2000), 0); /* starves */
    T_EQ(run_fig46(50, 2000), 51);
    T_EQ(run_fig46(1, 2000), 2);
}

/*
 * Worker 1 dies with the manager.  Lock 0: A (worker 0) took version 0
 * and made 1; B (worker 1) took 1 and made 2; D (worker 1) took 2.  E
 * (worker 2) then got lock 1, so worker 2 has the whole sequence, but
 * version 2 lived only on worker 1: B must run again, D's replay waits
 * for it, and D holds lock 0 until it unlocks.
 */
static void test_rebuild(void)
{
    task_path_t a = path_of(0), b = path_of(1), d = path_of(3),
                e = path_of(4);
    uint64_t val[4] = {0, 1, 2, 3};
    task_lock_entry_t seq[4] = {{a, 0, 0, 0}, {b, 0, 0, 1}, {d, 0, 0, 2},
                                {e, 0, 1, 0}};
    task_lock_version_t v0[] = {{0, 0, &val[0], 8}, {1, 0, &val[0], 8},
                                {0, 1, &val[1], 8}};
    task_lock_version_t v2[] = {{0, 0, &val[0], 8}, {1, 0, &val[0], 8}};
    task_lock_record_t recs[2] = {{0, seq, 1, v0, 3}, {2, seq, 4, v2, 2}};
    const uint64_t *rr;
    size_t n;

    T_OK(task_lock_rebuild(2, 0, recs, 2, &m));
    rr = task_lock_reruns(m, &n);
    T_EQ(n, 1);
    T_EQ(rr[0], 1); /* B */
    T_EQ(task_lock_owner(m, 0), 2); /* D */
    T_EQ(task_lock_owner(m, 1), 3); /* E */
    T_EQ(task_lock_held(m, &d), 1);
    T_EQ(task_lock_held(m, &b), 0);
    T_EQ(task_lock_current(m, 0), 2);
    /* Kept across the rebuild only when every request of the subtree is
     * in the sequence, released, and no version of it must be remade. */
    task_path_t a1;
    T_OK(task_path_child(&a, 0, 0, 0, &a1));
    T_EQ(task_lock_subtree_kept(m, &a, 1), 1);
    T_EQ(task_lock_subtree_kept(m, &a1, 0), 1);
    T_EQ(task_lock_subtree_kept(m, &a, 2), 0); /* one request lost */
    T_EQ(task_lock_subtree_kept(m, &a1, 1), 0);
    T_EQ(task_lock_subtree_kept(m, &b, 1), 0); /* version 2 lost */
    T_EQ(task_lock_subtree_kept(m, &d, 1), 0); /* holds lock 0 */
    T_EQ(task_lock_subtree_kept(m, &TASK_PATH_ROOT, 4), 0);
    task_path_free(&a1);
    T_ERR(task_lock_job_done(m, &d), SHOAL_ERR_BUSY); /* must re-run */
    T_EQ(task_lock_held(m, &d), 1);
    /* D's new copy replays: version 2 is missing, it waits. */
    T_OK(task_lock_lock(m, 30, 2, &d, 0, 0));
    order_at(0, TASK_LOCK_WAIT, 30);
    /* B's new copy replays with version 1, and regenerates 2. */
    T_OK(task_lock_lock(m, 31, 0, &b, 0, 0));
    T_EQ(order_at(1, TASK_LOCK_GRANT, 31)->released, 0);
    T_EQ(order_at(1, TASK_LOCK_GRANT, 31)->seq_from, 1); /* worker 0 had 1 */
    unlock_val(31, &b, 0, 0, 2, 1);
    T_EQ(value_of(order_at(2, TASK_LOCK_GRANT, 30)), 2);
    T_EQ(order_at(2, TASK_LOCK_GRANT, 30)->seq_from, 4);
    unlock_val(31, &b, 0, 0, 2, 0); /* now known: ignored */
    unlock_val(30, &d, 0, 0, 3, 1);
    T_EQ(task_lock_owner(m, 0), TASK_LOCK_FREE);
    T_EQ(task_lock_current(m, 0), 3);
    /* A new request goes after the rebuilt sequence. */
    task_lock_orders_clear(m);
    T_OK(task_lock_lock(m, 32, 0, &a, 1, 0));
    T_EQ(order_at(0, TASK_LOCK_GRANT, 32)->entry, 4);
    T_EQ(value_of(order_at(0, TASK_LOCK_GRANT, 32)), 3);
    task_lock_destroy(m);

    /* Bad records. */
    task_lock_entry_t other[2] = {{b, 0, 0, 0}, {a, 0, 0, 1}};
    task_lock_record_t bad[2] = {{0, other, 2, v2, 2}, {2, seq, 4, v2, 2}};
    T_ERR(task_lock_rebuild(2, 0, bad, 2, &m), SHOAL_ERR_PROTOCOL);
    task_lock_version_t clash[] = {{0, 0, &val[1], 8}};
    task_lock_record_t bad2[2] = {recs[1], {0, seq, 1, clash, 1}};
    T_ERR(task_lock_rebuild(2, 0, bad2, 2, &m), SHOAL_ERR_PROTOCOL);
    task_lock_record_t bad3[1] = {{0, seq, 4, v0 + 2, 1}};
    T_ERR(task_lock_rebuild(2, 0, bad3, 1, &m), SHOAL_ERR_INVALID);
    task_lock_entry_t gap[2] = {{a, 0, 0, 0}, {a, 2, 0, 1}};
    task_lock_record_t bad4[1] = {{0, gap, 2, v2, 2}};
    T_ERR(task_lock_rebuild(2, 0, bad4, 1, &m), SHOAL_ERR_PROTOCOL);
    T_ERR(task_lock_rebuild(2, 0, recs, 0, &m), SHOAL_ERR_INVALID);
    task_lock_version_t far[] = {{0, 0, &val[0], 8}, {1, 0, &val[0], 8},
                                 {0, 5, &val[0], 8}};
    task_lock_record_t bad5[1] = {{0, seq, 4, far, 3}};
    T_ERR(task_lock_rebuild(2, 0, bad5, 1, &m), SHOAL_ERR_PROTOCOL);
    task_path_free(&a);
    task_path_free(&b);
    task_path_free(&d);
    task_path_free(&e);
}

/* ---- the counter program, at random ------------------------------------- */

#define MJOBS 8
#define MSECT 24
#define MCOPIES 2048
#define MSLOTS 4
#define MSEQ (MJOBS * MSECT)
#define MLOCKS 2

enum { C_NEED, C_WAIT, C_IN, C_GONE };

typedef struct mcopy {
    uint32_t job, slot, pc, state, count, version;
    uint32_t epoch; /* managers lost before its grant */
    uint64_t val;
    uint8_t released;
} mcopy_t;

typedef struct mjob {
    task_path_t path;
    int done;
    uint32_t seen_version[MSECT]; /* first grant's version + 1 */
} mjob_t;

/* What a worker kept: the sequence and the versions it saw. */
typedef struct mslot {
    uint32_t id;
    task_lock_entry_t seq[MSEQ];
    size_t nseq;
    task_lock_version_t vers[MLOCKS * (MSEQ + 1)];
    uint64_t vals[MLOCKS * (MSEQ + 1)];
    uint8_t have[MLOCKS][MSEQ + 2];
    size_t nvers;
} mslot_t;

static mjob_t mj[MJOBS];
static mcopy_t mc[MCOPIES];
static mslot_t ms[MSLOTS];
static uint32_t nj, nsect, nlocks, ncp, next_worker, suspect, epoch;
/* What the runs went through, printed at the end: a change that stops
 * the model from reaching a case shows here. */
static struct {
    unsigned long grants, replays, waits, refusals, penalties, ignored,
        lost_workers, rebuilds, reruns, regenerated;
} st;

static uint32_t lock_of(uint32_t job, uint32_t pc)
{
    return (job + pc) % nlocks;
}

static void slot_version(mslot_t *w, uint32_t lock, uint32_t v, uint64_t x)
{
    CHECK(v <= MSEQ);
    if (w->have[lock][v])
        return;
    w->have[lock][v] = 1;
    w->vals[w->nvers] = x;
    w->vers[w->nvers] = (task_lock_version_t){lock, v, NULL, 8};
    w->nvers++;
}

static void slot_reset(uint32_t s)
{
    memset(&ms[s], 0, sizeof ms[s]);
    ms[s].id = next_worker++;
    for (uint32_t l = 0; l < nlocks; l++)
        slot_version(&ms[s], l, 0, 0); /* initial values: in the binary */
}

static uint32_t job_by_path(const task_path_t *p)
{
    for (uint32_t j = 0; j < nj; j++)
        if (task_path_equal(&mj[j].path, p))
            return j;
    T_FAIL("seed %llu: unknown job in the sequence", (unsigned long long)seed);
}

static void kill_copy(uint32_t c)
{
    mc[c].state = C_GONE;
    CHECK_OK(task_lock_copy_gone(m, c));
}

static void on_grant(const task_lock_order_t *o)
{
    mcopy_t *c = &mc[o->copy];
    mslot_t *w = &ms[c->slot];
    mjob_t *j = &mj[c->job];

    CHECK(c->state == C_NEED || c->state == C_WAIT);
    st.grants++;
    st.replays += o->replay;
    CHECK(o->worker == w->id && o->request == c->pc);
    CHECK(o->lock == lock_of(c->job, c->pc));
    /* Every grant of a request shows the same version, whose value is
     * the number of increments before it. */
    CHECK(value_of(o) == o->version);
    if (j->seen_version[c->pc] == 0)
        j->seen_version[c->pc] = o->version + 1;
    CHECK(j->seen_version[c->pc] == o->version + 1);
    CHECK(o->seq_from == w->nseq && o->seq_to <= MSEQ);
    for (uint64_t k = o->seq_from; k < o->seq_to; k++) {
        task_lock_entry_t e;
        CHECK_OK(task_lock_entry(m, k, &e));
        e.job = mj[job_by_path(&e.job)].path; /* outlives the manager */
        w->seq[w->nseq++] = e;
    }
    slot_version(w, o->lock, o->version, value_of(o));
    c->state = C_IN;
    c->val = value_of(o);
    c->version = o->version;
    c->epoch = epoch;
    c->released = o->released;
}

static void apply_orders(void)
{
    size_t n;
    const task_lock_order_t *o = task_lock_orders(m, &n);

    for (size_t i = 0; i < n; i++) {
        mcopy_t *c = &mc[o[i].copy];
        switch (o[i].kind) {
        case TASK_LOCK_GRANT:
            on_grant(&o[i]);
            break;
        case TASK_LOCK_WAIT:
            CHECK(c->state == C_NEED);
            c->state = C_WAIT;
            st.waits++;
            break;
        case TASK_LOCK_REFUSE:
            CHECK(mj[c->job].done);
            st.refusals++;
            kill_copy(o[i].copy);
            break;
        case TASK_LOCK_PENALIZE:
            CHECK(c->count == suspect);
            c->count = 0;
            st.penalties++;
            break;
        }
    }
    task_lock_orders_clear(m);
}

static void spawn(void)
{
    uint32_t j = (uint32_t)(rnd() % nj), s = (uint32_t)(rnd() % MSLOTS);

    if (mj[j].done || ncp == MCOPIES)
        return;
    for (uint32_t c = 0, n = 0; c < ncp; c++)
        if (mc[c].job == j && mc[c].state != C_GONE &&
            (mc[c].slot == s || ++n == 3))
            return; /* one copy of a job per worker, 3 at most */
    mc[ncp++] = (mcopy_t){j, s, 0, C_NEED, 0, 0, 0, 0, 0};
}

static void finish(uint32_t c)
{
    mjob_t *j = &mj[mc[c].job];

    mc[c].state = C_GONE;
    CHECK_OK(task_lock_copy_gone(m, c));
    if (j->done)
        return;
    j->done = 1;
    CHECK_OK(task_lock_job_done(m, &j->path));
    apply_orders(); /* its waiting copies are refused */
    for (uint32_t o = 0; o < ncp; o++)
        if (mc[o].job == mc[c].job && mc[o].state != C_GONE &&
            rnd() % 4 != 0)
            kill_copy(o); /* the rest are late: refused or ignored */
}

static void step_copy(uint32_t c)
{
    mcopy_t *cp = &mc[c];
    const mjob_t *j = &mj[cp->job];
    uint32_t lock = lock_of(cp->job, cp->pc);

    if (cp->state == C_NEED) {
        if (!j->done && suspect)
            cp->count++;
        CHECK_OK(task_lock_lock(m, c, ms[cp->slot].id, &j->path, cp->pc,
                                lock));
        apply_orders();
        return;
    }
    if (cp->state != C_IN)
        return;
    if (!cp->released || rnd() % 2) { /* skipping it is allowed */
        uint64_t v = cp->val + 1;
        int r = task_lock_unlock(m, c, &j->path, cp->pc, lock, &v, sizeof v);
        CHECK(r == 0 || r == 1);
        /* Released: ignored, unless a new manager lost the version. */
        CHECK(!cp->released || r == 0 || cp->epoch != epoch);
        st.ignored += r == 0;
        st.regenerated += r == 1 && cp->released == 0 &&
                          task_lock_current(m, lock) > cp->version + 1;
        if (r == 1)
            slot_version(&ms[cp->slot], lock, cp->version + 1, v);
        apply_orders();
    }
    cp->state = C_NEED;
    if (++cp->pc == nsect)
        finish(c);
}

/* A worker is lost: its copies and its records with it. */
static void lose_worker(uint32_t s)
{
    st.lost_workers++;
    for (uint32_t c = 0; c < ncp; c++)
        if (mc[c].slot == s && mc[c].state != C_GONE)
            kill_copy(c);
    apply_orders();
    slot_reset(s);
}

/* The manager is lost (with worker s, or alone when s == MSLOTS): a new
 * one from the other workers' records. */
static void lose_manager(uint32_t s)
{
    task_lock_record_t recs[MSLOTS];
    size_t nrecs = 0, n;

    for (uint32_t i = 0; i < MSLOTS; i++) {
        if (i == s)
            continue;
        for (size_t v = 0; v < ms[i].nvers; v++)
            ms[i].vers[v].data = &ms[i].vals[v];
        recs[nrecs++] = (task_lock_record_t){ms[i].id, ms[i].seq, ms[i].nseq,
                                             ms[i].vers, ms[i].nvers};
    }
    st.rebuilds++;
    epoch++;
    task_lock_destroy(m);
    CHECK_OK(task_lock_rebuild(nlocks, suspect, recs, nrecs, &m));
    if (s < MSLOTS) {
        for (uint32_t c = 0; c < ncp; c++)
            if (mc[c].slot == s)
                mc[c].state = C_GONE;
        slot_reset(s);
    }
    /* Grants the new manager does not know were seen only by copies on
     * lost workers: the request may get another version now. */
    uint32_t kept[MJOBS] = {0};
    for (uint64_t k = 0; k < task_lock_seq_len(m); k++) {
        task_lock_entry_t e;
        CHECK_OK(task_lock_entry(m, k, &e));
        kept[job_by_path(&e.job)]++;
    }
    for (uint32_t j = 0; j < nj; j++)
        for (uint32_t pc = kept[j]; pc < MSECT; pc++)
            mj[j].seen_version[pc] = 0;
    const uint64_t *rr = task_lock_reruns(m, &n);
    st.reruns += n;
    /* What the runtime asks of a kept result agrees (the jobs are flat:
     * a subtree is its job). */
    for (uint32_t j = 0; j < nj; j++) {
        int again = task_lock_must_rerun(m, &mj[j].path, nsect);
        for (size_t i = 0; i < n && !again; i++) {
            task_lock_entry_t e;
            CHECK_OK(task_lock_entry(m, rr[i], &e));
            again = job_by_path(&e.job) == j;
        }
        if (mj[j].done &&
            task_lock_subtree_kept(m, &mj[j].path, nsect) == again)
            T_FAIL("seed %llu: job %u: kept %d, must run again %d",
                   (unsigned long long)seed, j,
                   task_lock_subtree_kept(m, &mj[j].path, nsect), again);
    }
    for (size_t i = 0; i < n; i++) {
        task_lock_entry_t e;
        CHECK_OK(task_lock_entry(m, rr[i], &e));
        mj[job_by_path(&e.job)].done = 0;
    }
    for (uint32_t j = 0; j < nj; j++)
        if (mj[j].done && task_lock_must_rerun(m, &mj[j].path, nsect))
            mj[j].done = 0; /* grants or an unlock lost with a worker */
        else if (mj[j].done)
            CHECK_OK(task_lock_job_done(m, &mj[j].path));
    for (uint32_t c = 0; c < ncp; c++) {
        mc[c].count = 0;
        if (mc[c].state == C_WAIT)
            mc[c].state = C_NEED; /* asks the new manager */
    }
}

/* A live copy at random (only one that can move if `moving`), or
 * MCOPIES when there is none. */
static uint32_t some_copy(int moving)
{
    uint32_t start = ncp ? (uint32_t)(rnd() % ncp) : 0;

    for (uint32_t i = 0; i < ncp; i++) {
        uint32_t c = (start + i) % ncp;
        if (mc[c].state != C_GONE && (!moving || mc[c].state != C_WAIT))
            return c;
    }
    return MCOPIES;
}

static void step(void)
{
    uint64_t r = rnd() % 1000;
    uint32_t c;

    if (r < 40) {
        spawn();
    } else if (r < 990) {
        if ((c = some_copy(1)) != MCOPIES)
            step_copy(c);
    } else if (r < 997) {
        if ((c = some_copy(0)) != MCOPIES)
            kill_copy(c);
    } else if (r < 999) {
        lose_worker((uint32_t)(rnd() % MSLOTS));
    } else if (seed % 2 == 0) { /* half the seeds lose managers */
        lose_manager((uint32_t)(rnd() % (MSLOTS + 1)));
    }
}

static int all_done(void)
{
    for (uint32_t j = 0; j < nj; j++)
        if (!mj[j].done)
            return 0;
    return 1;
}

static void random_run(void)
{
    nj = 1 + (uint32_t)(rnd() % MJOBS);
    nsect = 1 + (uint32_t)(rnd() % MSECT);
    nlocks = 1 + (uint32_t)(rnd() % MLOCKS);
    suspect = (uint32_t)(rnd() % 3) * (3 + (uint32_t)(rnd() % 10));
    ncp = next_worker = 0;
    make(nlocks, suspect);
    for (uint32_t j = 0; j < nj; j++)
        mj[j] = (mjob_t){path_of(j), 0, {0}};
    for (uint32_t s = 0; s < MSLOTS; s++)
        slot_reset(s);
    for (int i = 0; i < 200000 && !all_done(); i++)
        step();
    CHECK(all_done());
    /* Exactly k*n increments (each grant checked version == value);
     * every version but the current one dropped: all jobs finished. */
    uint64_t total = 0;
    for (uint32_t l = 0; l < nlocks; l++) {
        const void *d;
        size_t len;
        uint64_t x;
        uint32_t cur = task_lock_current(m, l);
        CHECK(task_lock_owner(m, l) == TASK_LOCK_FREE);
        total += cur;
        CHECK_OK(task_lock_version(m, l, cur, &d, &len));
        memcpy(&x, d, sizeof x);
        CHECK(x == cur);
        for (uint32_t v = 0; v < cur; v++)
            CHECK(task_lock_version(m, l, v, &d, &len) ==
                  SHOAL_ERR_NOT_FOUND);
    }
    CHECK(total == (uint64_t)nj * nsect);
    CHECK(task_lock_seq_len(m) == (uint64_t)nj * nsect);
    task_lock_destroy(m);
    for (uint32_t j = 0; j < nj; j++)
        task_path_free(&mj[j].path);
}

int main(void)
{
    test_fifo();
    test_duplicates();
    test_done_refused();
    test_bad_use();
    test_fig46();
    test_rebuild();
    unsigned n = model_runs(random_run, 500);
    fprintf(stderr,
            "%u runs: %lu grants (%lu replays), %lu waits, %lu refusals, "
            "%lu penalties, %lu unlocks ignored, %lu workers lost, "
            "%lu rebuilds, %lu re-runs, %lu versions regenerated\n",
            n, st.grants, st.replays, st.waits, st.refusals, st.penalties,
            st.ignored, st.lost_workers, st.rebuilds, st.reruns,
            st.regenerated);
    return 0;
}
