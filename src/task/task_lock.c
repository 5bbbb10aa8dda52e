/*
 * The lock manager (task_lock.h).  Jobs are found by path through an
 * open-addressed table; waiting copies and FIFOs are arrays scanned
 * linearly, which is plenty at the lock rates of tens of workers.
 *
 * Each version but the current one is the before-image of exactly one
 * entry (the lock's next grant), so its bytes are dropped when that
 * entry's job finishes: no copy can ask for them any more.  The manager
 * still knows the version existed (a late unlock that made it is
 * ignored, not taken for a regeneration).
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "task/task_grow.h"
#include "task/task_lock.h"
#include "task/task_vers.h"

#define NONE UINT32_MAX

typedef struct ljob {
    task_path_t path;
    uint64_t *entries;   /* entry of request r, r < next */
    uint32_t next;       /* requests in the sequence */
    size_t cap;
    uint32_t held;       /* granted, not released */
    uint32_t queued;     /* lock whose FIFO has request next, or NONE */
    uint8_t done;
} ljob_t;

typedef struct entry {
    uint32_t job, request, lock, version; /* version: before-image */
    uint8_t released;
} entry_t;

typedef struct vers {
    uint8_t present; /* bytes held (in the lock's store) */
    uint8_t dropped; /* existed; bytes freed (its reader finished) */
    uint64_t reader; /* the entry it is the before-image of, or
                        TASK_LOCK_FREE (none yet) */
} vers_t;

#define NO_VERSION ((vers_t){0, 0, TASK_LOCK_FREE})

typedef struct lock {
    uint64_t owner; /* entry, or TASK_LOCK_FREE */
    uint32_t cur;   /* current version */
    vers_t *v;      /* versions 0 .. nv-1 */
    size_t nv, capv;
    task_vers_t store; /* their bytes, mostly as diffs (task_vers.h) */
    uint32_t *fifo; /* jobs waiting, oldest first */
    size_t nfifo, capfifo;
} lock_t;

/* A copy told to wait for (job, request). */
typedef struct wait {
    uint32_t copy, worker, job, request, lock;
} wait_t;

struct task_lock {
    uint32_t nlocks, suspect_after;
    lock_t *locks;
    ljob_t *jobs;
    size_t njobs, cap_jobs;
    uint32_t *table; /* job index + 1 by path hash; 0 empty */
    size_t table_cap;
    entry_t *seq;
    size_t nseq, cap_seq;
    wait_t *waits;
    size_t nwaits, cap_waits;
    uint32_t *counts; /* requests per copy since resumed */
    size_t cap_counts;
    uint64_t *known; /* sequence length each worker has seen */
    size_t cap_known;
    task_lock_order_t *orders;
    size_t norders, cap_orders;
    /* the bytes of the grants among the orders (the store's answers last
     * only until its next call): they stay until the orders_clear after
     * the one that cleared their orders, so a caller that copied the
     * orders and cleared them may still carry them out */
    uint8_t **obufs, **pbufs;
    size_t nobufs, cap_obufs, npbufs, cap_pbufs;
    uint64_t *reruns;
    size_t nreruns, cap_reruns;
};

#define GROW(arr, cap, need)                                                 \
    task_grow((void **)&(arr), &(cap), (need), sizeof *(arr), "lock manager")

/* Grows a zero-filled array indexed by id (counts, known). */
static int grow_zero(void **arr, size_t *cap, size_t need, size_t sz)
{
    size_t old = *cap;
    int st = task_grow(arr, cap, need, sz, "lock manager");

    if (st == SHOAL_OK && *cap > old)
        memset((char *)*arr + old * sz, 0, (*cap - old) * sz);
    return st;
}

int task_lock_create(uint32_t nlocks, uint32_t suspect_after,
                     task_lock_t **out)
{
    if (nlocks == 0)
        return base_err(SHOAL_ERR_INVALID, "lock manager: no locks");
    task_lock_t *m = calloc(1, sizeof *m);
    if (m == NULL || (m->locks = calloc(nlocks, sizeof *m->locks)) == NULL)
        goto err_nomem;
    m->nlocks = nlocks;
    m->suspect_after = suspect_after;
    for (uint32_t i = 0; i < nlocks; i++) {
        lock_t *l = &m->locks[i];
        l->owner = TASK_LOCK_FREE;
        if (GROW(l->v, l->capv, 1) != SHOAL_OK)
            goto err_nomem;
        l->v[0] = NO_VERSION;
        l->v[0].present = 1;
        l->nv = 1;
        if (task_vers_put(&l->store, 0, NULL, 0) != SHOAL_OK)
            goto err_nomem;
    }
    *out = m;
    return SHOAL_OK;
err_nomem:
    task_lock_destroy(m);
    return base_err(SHOAL_ERR_NOMEM, "lock manager: %u locks", nlocks);
}

void task_lock_destroy(task_lock_t *m)
{
    if (m == NULL)
        return;
    for (uint32_t i = 0; m->locks != NULL && i < m->nlocks; i++) {
        task_vers_free(&m->locks[i].store);
        free(m->locks[i].v);
        free(m->locks[i].fifo);
    }
    for (size_t j = 0; j < m->njobs; j++) {
        task_path_free(&m->jobs[j].path);
        free(m->jobs[j].entries);
    }
    free(m->locks);
    free(m->jobs);
    free(m->table);
    free(m->seq);
    free(m->waits);
    free(m->counts);
    free(m->known);
    task_lock_orders_clear(m);
    task_lock_orders_clear(m);
    free(m->obufs);
    free(m->pbufs);
    free(m->orders);
    free(m->reruns);
    free(m);
}

/* Stores version v of lock l (a copy of data). */
static int put_version(lock_t *l, uint32_t v, const void *data, size_t len)
{
    if (GROW(l->v, l->capv, (size_t)v + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    while (l->nv <= v)
        l->v[l->nv++] = NO_VERSION;
    if (task_vers_put(&l->store, v, data, len) != SHOAL_OK)
        return base_err(SHOAL_ERR_NOMEM, "lock manager: version of %zu bytes",
                        len);
    l->v[v] = (vers_t){1, 0, l->v[v].reader};
    return SHOAL_OK;
}

/* Version v's bytes (kept), valid until the store's next call. */
static int get_version(lock_t *l, uint32_t v, const void **data, size_t *len)
{
    return task_vers_get(&l->store, v, data, len);
}

static int has_version(const lock_t *l, uint32_t v)
{
    return v < l->nv && l->v[v].present;
}

/* The version was made (its bytes may be dropped since). */
static int made_version(const lock_t *l, uint32_t v)
{
    return v < l->nv && (l->v[v].present || l->v[v].dropped);
}

static int bad_lock(const task_lock_t *m, uint32_t lock)
{
    return base_err(SHOAL_ERR_INVALID, "lock %u unknown (%u locks)", lock,
                    m->nlocks);
}

int task_lock_set_initial(task_lock_t *m, uint32_t lock, const void *data,
                          size_t len)
{
    if (lock >= m->nlocks)
        return bad_lock(m, lock);
    if (m->locks[lock].cur != 0 || m->locks[lock].owner != TASK_LOCK_FREE)
        return base_err(SHOAL_ERR_BUSY, "lock %u already used", lock);
    return put_version(&m->locks[lock], 0, data, len);
}

/* ---- jobs by path -------------------------------------------------------- */

static uint32_t find_job(const task_lock_t *m, const task_path_t *p)
{
    if (m->table_cap == 0)
        return NONE;
    size_t mask = m->table_cap - 1;
    for (size_t i = task_path_hash(p) & mask;; i = (i + 1) & mask) {
        uint32_t j = m->table[i];
        if (j == 0)
            return NONE;
        if (task_path_equal(&m->jobs[j - 1].path, p))
            return j - 1;
    }
}

static void table_put(task_lock_t *m, uint32_t j)
{
    size_t mask = m->table_cap - 1;
    size_t i = task_path_hash(&m->jobs[j].path) & mask;

    while (m->table[i] != 0)
        i = (i + 1) & mask;
    m->table[i] = j + 1;
}

static int rehash(task_lock_t *m)
{
    size_t cap = m->table_cap ? m->table_cap * 2 : 64;
    uint32_t *t = calloc(cap, sizeof *t);

    if (t == NULL)
        return base_err(SHOAL_ERR_NOMEM, "lock manager: job table");
    free(m->table);
    m->table = t;
    m->table_cap = cap;
    for (uint32_t j = 0; j < m->njobs; j++)
        table_put(m, j);
    return SHOAL_OK;
}

/* The job's index, added if new. */
static int get_job(task_lock_t *m, const task_path_t *p, uint32_t *j)
{
    *j = find_job(m, p);
    if (*j != NONE)
        return SHOAL_OK;
    if ((m->njobs + 1) * 2 > m->table_cap && rehash(m) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    if (GROW(m->jobs, m->cap_jobs, m->njobs + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    ljob_t *jb = &m->jobs[m->njobs];
    memset(jb, 0, sizeof *jb);
    jb->queued = NONE;
    if (task_path_copy(p, &jb->path) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    *j = (uint32_t)m->njobs++;
    table_put(m, *j);
    return SHOAL_OK;
}

static const char *job_text(const task_lock_t *m, uint32_t j, char *buf,
                            size_t cap)
{
    task_path_format(&m->jobs[j].path, buf, cap);
    return buf;
}

/* ---- sequence and orders ------------------------------------------------- */

/* Appends request r of job j on lock (before-image: the current version). */
static int append(task_lock_t *m, uint32_t j, uint32_t lock, uint32_t version)
{
    ljob_t *jb = &m->jobs[j];
    lock_t *l = &m->locks[lock];

    if (GROW(m->seq, m->cap_seq, m->nseq + 1) != SHOAL_OK ||
        GROW(jb->entries, jb->cap, (size_t)jb->next + 1) != SHOAL_OK ||
        GROW(l->v, l->capv, (size_t)version + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    while (l->nv <= version)
        l->v[l->nv++] = NO_VERSION;
    l->v[version].reader = m->nseq;
    m->seq[m->nseq] = (entry_t){j, jb->next, lock, version, 0};
    jb->entries[jb->next++] = m->nseq++;
    return SHOAL_OK;
}

static int add_order(task_lock_t *m, task_lock_order_t o)
{
    if (GROW(m->orders, m->cap_orders, m->norders + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    m->orders[m->norders++] = o;
    return SHOAL_OK;
}

static int grant(task_lock_t *m, uint32_t copy, uint32_t worker, uint64_t k,
                 int replay)
{
    const entry_t *e = &m->seq[k];
    lock_t *l = &m->locks[e->lock];
    const void *data;
    size_t len;
    uint8_t *own;
    int st = get_version(l, e->version, &data, &len);

    if (st != SHOAL_OK)
        return st;
    if (grow_zero((void **)&m->known, &m->cap_known, (size_t)worker + 1,
                  sizeof *m->known) != SHOAL_OK ||
        GROW(m->obufs, m->cap_obufs, m->nobufs + 1) != SHOAL_OK ||
        (own = malloc(len ? len : 1)) == NULL)
        return SHOAL_ERR_NOMEM;
    if (len > 0)
        memcpy(own, data, len);
    m->obufs[m->nobufs++] = own;
    task_lock_order_t o = {TASK_LOCK_GRANT, copy, worker, e->lock,
                           e->request, e->version, own, len, k,
                           m->known[worker], m->nseq, (uint8_t)replay, 0};
    o.released = e->released && made_version(l, e->version + 1);
    if (o.seq_from > o.seq_to)
        o.seq_from = o.seq_to; /* a worker that saw a longer, lost tail */
    m->known[worker] = m->nseq;
    return add_order(m, o);
}

static int simple_order(task_lock_t *m, task_lock_order_kind_t kind,
                        uint32_t copy, uint32_t worker, uint32_t lock,
                        uint32_t request)
{
    task_lock_order_t o = {0};

    o.kind = kind;
    o.copy = copy;
    o.worker = worker;
    o.lock = lock;
    o.request = request;
    return add_order(m, o);
}

static void drop_wait(task_lock_t *m, size_t i)
{
    memmove(&m->waits[i], &m->waits[i + 1],
            (m->nwaits - i - 1) * sizeof *m->waits);
    m->nwaits--;
}

static int add_wait(task_lock_t *m, uint32_t copy, uint32_t worker,
                    uint32_t j, uint32_t request, uint32_t lock)
{
    for (size_t i = 0; i < m->nwaits; i++)
        if (m->waits[i].copy == copy) {
            drop_wait(m, i); /* it asks again */
            break;
        }
    if (GROW(m->waits, m->cap_waits, m->nwaits + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    m->waits[m->nwaits++] = (wait_t){copy, worker, j, request, lock};
    return simple_order(m, TASK_LOCK_WAIT, copy, worker, lock, request);
}

/* Grants entry k to every copy waiting for it, oldest wait first. */
static int wake(task_lock_t *m, uint64_t k, int replay)
{
    const entry_t *e = &m->seq[k];
    size_t i = 0;

    while (i < m->nwaits) {
        wait_t w = m->waits[i];
        if (w.job != e->job || w.request != e->request) {
            i++;
            continue;
        }
        drop_wait(m, i);
        if (grant(m, w.copy, w.worker, k, replay) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
    }
    return SHOAL_OK;
}

/* The lock is free: its oldest waiting request gets it. */
static int hand_off(task_lock_t *m, uint32_t lock)
{
    lock_t *l = &m->locks[lock];

    if (l->nfifo == 0 || l->owner != TASK_LOCK_FREE)
        return SHOAL_OK;
    uint32_t j = l->fifo[0];
    memmove(l->fifo, l->fifo + 1, --l->nfifo * sizeof *l->fifo);
    if (append(m, j, lock, l->cur) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    m->jobs[j].queued = NONE;
    m->jobs[j].held++;
    l->owner = m->nseq - 1;
    return wake(m, m->nseq - 1, 0);
}

/* Request counting (§3.7). */
static int count_request(task_lock_t *m, uint32_t copy, uint32_t worker)
{
    if (m->suspect_after == 0)
        return SHOAL_OK;
    if (grow_zero((void **)&m->counts, &m->cap_counts, (size_t)copy + 1,
                  sizeof *m->counts) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    if (++m->counts[copy] < m->suspect_after)
        return SHOAL_OK;
    m->counts[copy] = 0;
    return simple_order(m, TASK_LOCK_PENALIZE, copy, worker, NONE, NONE);
}

/* ---- events -------------------------------------------------------------- */

/* Request `request` < next of job j: granted again, or it waits for a
 * missing before-image (a version being regenerated after a rebuild). */
static int replay(task_lock_t *m, uint32_t copy, uint32_t worker, uint32_t j,
                  uint32_t request, uint32_t lock)
{
    uint64_t k = m->jobs[j].entries[request];
    const entry_t *e = &m->seq[k];
    char buf[128];

    if (e->lock != lock)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "job %s request %u: lock %u, but lock %u the first "
                        "time (the program is not deterministic)",
                        job_text(m, j, buf, sizeof buf), request, lock,
                        e->lock);
    if (!has_version(&m->locks[lock], e->version))
        return add_wait(m, copy, worker, j, request, lock);
    return grant(m, copy, worker, k, 1);
}

/* A new request: granted if the lock is free, else queued. */
static int fresh(task_lock_t *m, uint32_t copy, uint32_t worker, uint32_t j,
                 uint32_t lock)
{
    ljob_t *jb = &m->jobs[j];
    lock_t *l = &m->locks[lock];
    char buf[128];

    if (l->owner != TASK_LOCK_FREE && m->seq[l->owner].job == j)
        return base_err(SHOAL_ERR_BUSY,
                        "job %s locks lock %u, which it holds since its "
                        "request %u: locks are not recursive",
                        job_text(m, j, buf, sizeof buf), lock,
                        m->seq[l->owner].request);
    if (l->owner == TASK_LOCK_FREE && l->nfifo == 0) {
        if (append(m, j, lock, l->cur) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        jb->held++;
        l->owner = m->nseq - 1;
        return grant(m, copy, worker, l->owner, 0);
    }
    if (GROW(l->fifo, l->capfifo, l->nfifo + 1) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    l->fifo[l->nfifo++] = j;
    jb->queued = lock;
    return add_wait(m, copy, worker, j, jb->next, lock);
}

int task_lock_lock(task_lock_t *m, uint32_t copy, uint32_t worker,
                   const task_path_t *job, uint32_t request, uint32_t lock)
{
    uint32_t j;
    char buf[128];

    if (lock >= m->nlocks)
        return bad_lock(m, lock);
    if (get_job(m, job, &j) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    ljob_t *jb = &m->jobs[j];
    if (jb->done)
        return simple_order(m, TASK_LOCK_REFUSE, copy, worker, lock,
                            request);
    if (request > jb->next)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "job %s: lock request %u, but only %u made before",
                        job_text(m, j, buf, sizeof buf), request, jb->next);
    if (request == jb->next && jb->queued != NONE && jb->queued != lock)
        return base_err(SHOAL_ERR_PROTOCOL,
                        "job %s request %u: lock %u, but lock %u the first "
                        "time (the program is not deterministic)",
                        job_text(m, j, buf, sizeof buf), request, lock,
                        jb->queued);
    int st;
    if (request < jb->next)
        st = replay(m, copy, worker, j, request, lock);
    else if (jb->queued == NONE)
        st = fresh(m, copy, worker, j, lock);
    else
        st = add_wait(m, copy, worker, j, request, lock);
    if (st != SHOAL_OK)
        return st;
    /* Counted once answered: a refused or bad request is not counted. */
    return count_request(m, copy, worker);
}

/* Entry k's unlock: the lock's next version, and the next waiter. */
static int release(task_lock_t *m, uint64_t k, const void *data, size_t len)
{
    entry_t *e = &m->seq[k];
    lock_t *l = &m->locks[e->lock];

    if (put_version(l, e->version + 1, data, len) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    e->released = 1;
    m->jobs[e->job].held--;
    l->owner = TASK_LOCK_FREE;
    l->cur = e->version + 1;
    return hand_off(m, e->lock);
}

/* A version regenerated by a re-run (after a rebuild): replays waiting for
 * it go on. */
static int regenerate(task_lock_t *m, uint64_t k, const void *data,
                      size_t len)
{
    const entry_t *e = &m->seq[k];
    lock_t *l = &m->locks[e->lock];

    if (put_version(l, e->version + 1, data, len) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    /* Its one reader (the lock's next grant), whose replays waited. */
    uint64_t r = l->v[e->version + 1].reader;
    return r == TASK_LOCK_FREE ? SHOAL_OK : wake(m, r, 1);
}

int task_lock_unlock(task_lock_t *m, uint32_t copy, const task_path_t *job,
                     uint32_t request, uint32_t lock, const void *data,
                     size_t len)
{
    char buf[128];
    uint32_t j;

    (void)copy;
    if (lock >= m->nlocks)
        return bad_lock(m, lock);
    j = find_job(m, job);
    if (j != NONE && m->jobs[j].done)
        return 0;
    if (j == NONE || request >= m->jobs[j].next) {
        int waiting = j != NONE && m->jobs[j].queued != NONE &&
                      request == m->jobs[j].next;
        if (j == NONE)
            task_path_format(job, buf, sizeof buf);
        return base_err(SHOAL_ERR_INVALID,
                        "job %s unlocks lock %u (request %u), which it %s",
                        j == NONE ? buf : job_text(m, j, buf, sizeof buf),
                        lock, request,
                        waiting ? "still waits for" : "does not hold");
    }
    uint64_t k = m->jobs[j].entries[request];
    entry_t *e = &m->seq[k];
    if (e->lock != lock)
        return base_err(SHOAL_ERR_INVALID,
                        "job %s unlocks lock %u, but its request %u locked "
                        "lock %u", job_text(m, j, buf, sizeof buf), lock,
                        request, e->lock);
    if (!e->released) {
        int st = release(m, k, data, len);
        return st == SHOAL_OK ? 1 : st;
    }
    if (made_version(&m->locks[lock], e->version + 1))
        return 0; /* a slower copy's unlock */
    int st = regenerate(m, k, data, len);
    return st == SHOAL_OK ? 1 : st;
}

int task_lock_copy_resumed(task_lock_t *m, uint32_t copy)
{
    if (copy < m->cap_counts)
        m->counts[copy] = 0;
    return SHOAL_OK;
}

int task_lock_copy_gone(task_lock_t *m, uint32_t copy)
{
    for (size_t i = 0; i < m->nwaits; i++)
        if (m->waits[i].copy == copy) {
            drop_wait(m, i);
            break;
        }
    return task_lock_copy_resumed(m, copy);
}

/* Drops job j's queued request and its waiting copies (refused). */
static int unqueue(task_lock_t *m, uint32_t j)
{
    ljob_t *jb = &m->jobs[j];

    if (jb->queued != NONE) {
        lock_t *l = &m->locks[jb->queued];
        size_t i = 0;
        while (l->fifo[i] != j)
            i++;
        memmove(&l->fifo[i], &l->fifo[i + 1],
                (--l->nfifo - i) * sizeof *l->fifo);
        jb->queued = NONE;
    }
    size_t i = 0;
    while (i < m->nwaits) {
        wait_t w = m->waits[i];
        if (w.job != j) {
            i++;
            continue;
        }
        drop_wait(m, i);
        if (simple_order(m, TASK_LOCK_REFUSE, w.copy, w.worker, w.lock,
                         w.request) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
    }
    return SHOAL_OK;
}

int task_lock_job_done(task_lock_t *m, const task_path_t *job)
{
    uint32_t j, held;
    char buf[128];

    if (get_job(m, job, &j) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    ljob_t *jb = &m->jobs[j];
    if (jb->done)
        return SHOAL_OK;
    for (uint32_t r = 0; r < jb->next; r++) {
        const entry_t *e = &m->seq[jb->entries[r]];
        if (!e->released && !has_version(&m->locks[e->lock], e->version))
            return base_err(SHOAL_ERR_BUSY,
                            "job %s holds lock %u, whose version %u was "
                            "lost with a worker: it must run again",
                            job_text(m, j, buf, sizeof buf), e->lock,
                            e->version);
    }
    jb->done = 1;
    if (unqueue(m, j) != SHOAL_OK)
        return SHOAL_ERR_NOMEM;
    held = jb->held;
    for (uint32_t r = 0; r < jb->next && jb->held > 0; r++) {
        uint64_t k = jb->entries[r];
        const entry_t *e = &m->seq[k];
        if (e->released)
            continue;
        const void *data;
        size_t len;
        if (get_version(&m->locks[e->lock], e->version, &data, &len) !=
                SHOAL_OK ||
            release(m, k, data, len) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
    }
    for (uint32_t r = 0; r < jb->next; r++) { /* before-images: unread */
        const entry_t *e = &m->seq[jb->entries[r]];
        lock_t *l = &m->locks[e->lock];
        vers_t *v = &l->v[e->version];
        if (task_vers_drop(&l->store, e->version) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        *v = (vers_t){0, 1, v->reader};
    }
    if (held > 0)
        return base_err(SHOAL_ERR_BUSY,
                        "job %s finished holding %u lock(s); released with "
                        "their variables unchanged",
                        job_text(m, j, buf, sizeof buf), held);
    return SHOAL_OK;
}

/* ---- orders and state ---------------------------------------------------- */

const task_lock_order_t *task_lock_orders(const task_lock_t *m, size_t *n)
{
    *n = m->norders;
    return m->orders;
}

void task_lock_orders_clear(task_lock_t *m)
{
    uint8_t **t = m->pbufs;
    size_t cap = m->cap_pbufs;

    for (size_t i = 0; i < m->npbufs; i++)
        free(m->pbufs[i]);
    m->pbufs = m->obufs;
    m->npbufs = m->nobufs;
    m->cap_pbufs = m->cap_obufs;
    m->obufs = t;
    m->cap_obufs = cap;
    m->nobufs = 0;
    m->norders = 0;
}

uint32_t task_lock_held(const task_lock_t *m, const task_path_t *job)
{
    uint32_t j = find_job(m, job);

    return j == NONE ? 0 : m->jobs[j].held;
}

uint64_t task_lock_seq_len(const task_lock_t *m)
{
    return m->nseq;
}

int task_lock_entry(const task_lock_t *m, uint64_t k, task_lock_entry_t *e)
{
    if (k >= m->nseq)
        return base_err(SHOAL_ERR_INVALID, "lock sequence: entry %llu of %zu",
                        (unsigned long long)k, m->nseq);
    const entry_t *s = &m->seq[k];
    *e = (task_lock_entry_t){m->jobs[s->job].path, s->request, s->lock,
                             s->version};
    return SHOAL_OK;
}

uint64_t task_lock_owner(const task_lock_t *m, uint32_t lock)
{
    return lock < m->nlocks ? m->locks[lock].owner : TASK_LOCK_FREE;
}

uint32_t task_lock_current(const task_lock_t *m, uint32_t lock)
{
    return lock < m->nlocks ? m->locks[lock].cur : 0;
}

int task_lock_version(task_lock_t *m, uint32_t lock, uint32_t version,
                      const void **data, size_t *len)
{
    if (lock >= m->nlocks)
        return bad_lock(m, lock);
    if (!has_version(&m->locks[lock], version))
        return base_err(SHOAL_ERR_NOT_FOUND, "lock %u: version %u %s", lock,
                        version,
                        made_version(&m->locks[lock], version)
                            ? "dropped (the job that read it has finished)"
                            : "missing");
    return get_version(&m->locks[lock], version, data, len);
}

/* ---- recovery ------------------------------------------------------------ */

static int same_entry(const task_lock_entry_t *a, const task_lock_entry_t *b)
{
    return a->request == b->request && a->lock == b->lock &&
           a->version == b->version && task_path_equal(&a->job, &b->job);
}

/* The record with the longest sequence; the others must be its prefixes. */
static int longest(const task_lock_record_t *recs, size_t nrecs, size_t *best)
{
    *best = 0;
    for (size_t r = 1; r < nrecs; r++)
        if (recs[r].nseq > recs[*best].nseq)
            *best = r;
    for (size_t r = 0; r < nrecs; r++)
        for (size_t k = 0; k < recs[r].nseq; k++)
            if (!same_entry(&recs[r].seq[k], &recs[*best].seq[k]))
                return base_err(SHOAL_ERR_PROTOCOL,
                                "lock rebuild: workers %u and %u disagree "
                                "on sequence entry %zu", recs[r].worker,
                                recs[*best].worker, k);
    return SHOAL_OK;
}

/* Versions past the sequence's length cannot exist (a bound on what a
 * corrupt record could make us allocate). */
static int collect_versions(task_lock_t *m, const task_lock_record_t *recs,
                            size_t nrecs, size_t nseq)
{
    for (uint32_t i = 0; i < m->nlocks; i++)
        m->locks[i].v[0].present = 0;
    for (size_t r = 0; r < nrecs; r++)
        for (size_t i = 0; i < recs[r].nversions; i++) {
            const task_lock_version_t *v = &recs[r].versions[i];
            if (v->lock >= m->nlocks)
                return bad_lock(m, v->lock);
            if (v->version > nseq)
                return base_err(SHOAL_ERR_PROTOCOL,
                                "lock rebuild: lock %u version %u, past "
                                "the sequence's %zu entries", v->lock,
                                v->version, nseq);
            lock_t *l = &m->locks[v->lock];
            if (!has_version(l, v->version)) {
                if (put_version(l, v->version, v->data, v->len) != SHOAL_OK)
                    return SHOAL_ERR_NOMEM;
                continue;
            }
            const void *have;
            size_t hlen;
            if (get_version(l, v->version, &have, &hlen) != SHOAL_OK)
                return SHOAL_ERR_NOMEM;
            if (hlen != v->len ||
                (v->len && memcmp(have, v->data, v->len) != 0))
                return base_err(SHOAL_ERR_PROTOCOL,
                                "lock rebuild: two values of lock %u "
                                "version %u (worker %u's differs)",
                                v->lock, v->version, recs[r].worker);
        }
    for (uint32_t i = 0; i < m->nlocks; i++)
        if (!has_version(&m->locks[i], 0))
            return base_err(SHOAL_ERR_INVALID,
                            "lock rebuild: no record has lock %u's "
                            "initial value (version 0)", i);
    return SHOAL_OK;
}

/* Appends the entries, checking each job's requests and each lock's
 * versions follow on; the lock's last grant holds it unless its unlock's
 * version is known. */
static int replay_sequence(task_lock_t *m, const task_lock_entry_t *seq,
                           size_t n)
{
    uint32_t j;
    char buf[128];

    for (size_t k = 0; k < n; k++) {
        const task_lock_entry_t *e = &seq[k];
        if (e->lock >= m->nlocks)
            return bad_lock(m, e->lock);
        if (get_job(m, &e->job, &j) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        lock_t *l = &m->locks[e->lock];
        if (e->request != m->jobs[j].next || e->version != l->cur)
            return base_err(SHOAL_ERR_PROTOCOL,
                            "lock rebuild: entry %zu (job %s request %u, "
                            "lock %u version %u) does not follow on", k,
                            job_text(m, j, buf, sizeof buf), e->request,
                            e->lock, e->version);
        if (append(m, j, e->lock, e->version) != SHOAL_OK ||
            GROW(l->v, l->capv, (size_t)e->version + 2) != SHOAL_OK)
            return SHOAL_ERR_NOMEM;
        while (l->nv < (size_t)e->version + 2)
            l->v[l->nv++] = NO_VERSION;
        m->seq[k].released = 1;
        l->owner = k;
        l->cur = e->version + 1;
    }
    for (uint32_t i = 0; i < m->nlocks; i++) {
        lock_t *l = &m->locks[i];
        if (l->owner == TASK_LOCK_FREE)
            continue;
        entry_t *last = &m->seq[l->owner];
        if (has_version(l, l->cur)) {
            l->owner = TASK_LOCK_FREE;
            continue;
        }
        last->released = 0;
        m->jobs[last->job].held++;
        l->cur = last->version;
    }
    return SHOAL_OK;
}

int task_lock_rebuild(uint32_t nlocks, uint32_t suspect_after,
                      const task_lock_record_t *recs, size_t nrecs,
                      task_lock_t **out)
{
    task_lock_t *m;
    size_t best;
    int st;

    if (nrecs == 0)
        return base_err(SHOAL_ERR_INVALID, "lock rebuild: no records");
    if ((st = longest(recs, nrecs, &best)) != SHOAL_OK)
        return st;
    if ((st = task_lock_create(nlocks, suspect_after, &m)) != SHOAL_OK)
        return st;
    if ((st = collect_versions(m, recs, nrecs, recs[best].nseq)) !=
            SHOAL_OK ||
        (st = replay_sequence(m, recs[best].seq, recs[best].nseq)) != SHOAL_OK)
        goto err;
    for (size_t k = 0; k < m->nseq; k++) {
        const entry_t *e = &m->seq[k];
        if (!e->released || has_version(&m->locks[e->lock], e->version + 1))
            continue;
        if (GROW(m->reruns, m->cap_reruns, m->nreruns + 1) != SHOAL_OK) {
            st = SHOAL_ERR_NOMEM;
            goto err;
        }
        m->reruns[m->nreruns++] = k;
    }
    for (size_t r = 0; r < nrecs; r++) {
        uint32_t w = recs[r].worker;
        if (grow_zero((void **)&m->known, &m->cap_known, (size_t)w + 1,
                      sizeof *m->known) != SHOAL_OK) {
            st = SHOAL_ERR_NOMEM;
            goto err;
        }
        m->known[w] = recs[r].nseq;
    }
    *out = m;
    return SHOAL_OK;
err:
    task_lock_destroy(m);
    return st;
}

const uint64_t *task_lock_reruns(const task_lock_t *m, size_t *n)
{
    *n = m->nreruns;
    return m->reruns;
}

int task_lock_must_rerun(const task_lock_t *m, const task_path_t *job,
                         uint32_t requests)
{
    uint32_t j = find_job(m, job);

    if (j == NONE)
        return requests > 0;
    return m->jobs[j].next < requests || m->jobs[j].held > 0;
}

/* Job j is job or one of its descendants. */
static int in_subtree(const task_lock_t *m, uint32_t j, const task_path_t *job)
{
    return task_path_equal(&m->jobs[j].path, job) ||
           task_path_is_ancestor(job, &m->jobs[j].path);
}

int task_lock_subtree_kept(const task_lock_t *m, const task_path_t *job,
                           uint64_t requests)
{
    uint64_t found = 0;

    for (uint32_t j = 0; j < m->njobs; j++) {
        const ljob_t *jb = &m->jobs[j];
        if (!in_subtree(m, j, job))
            continue;
        if (jb->held > 0 || jb->queued != NONE)
            return 0;
        found += jb->next;
    }
    for (size_t i = 0; i < m->nreruns && found == requests; i++)
        if (in_subtree(m, m->seq[m->reruns[i]].job, job))
            return 0;
    return found == requests;
}
