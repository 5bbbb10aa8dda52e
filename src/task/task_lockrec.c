/*
 * A worker's lock record (task_rt.h, §4.5 of digest 002): the lock
 * manager's request sequence as far as this worker's last grant, and the
 * versions of the locks' variables its copies were granted (before-images)
 * or unlocked with (the next version).  Every grant to a worker that is
 * not the coordinator's carries the entries it has not seen (TM_GRANT's
 * tail); after a failover the worker hands its record to the new
 * coordinator with its kept results (TM_KEPT's tail), which rebuilds its
 * lock manager from the records (task_lock_rebuild) and so keeps the
 * results of finished jobs that took locks.
 *
 * Wire formats, little-endian like every task message:
 *   entry:       bytes job path, u32 request, u32 lock, u32 version
 *   grant tail:  u32 lock, u32 version, u64 seq_from, u32 n, n x entry
 *   record:      u32 n, n x entry, u32 nv, nv x (u32 lock, u32 version,
 *                bytes data)
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "task/task_grow.h"
#include "task/task_rt.h"
#include "task/task_vers.h"

typedef struct lr_entry {
    uint8_t *path;
    uint32_t pathlen, request, lock, version;
} lr_entry_t;

static struct {
    lr_entry_t *seq;
    size_t nseq, capseq;
    /* the versions kept, a store a lock (task_vers.h: mostly diffs
     * against the version before), nstores of them; nv in all */
    task_vers_t *st;
    uint32_t nstores;
    size_t nv;
} lr;

void task_lockrec_entry(task_buf_t *b, const uint8_t *path, size_t pathlen,
                        uint32_t request, uint32_t lock, uint32_t version)
{
    task_buf_bytes(b, path, pathlen);
    task_buf_u32(b, request);
    task_buf_u32(b, lock);
    task_buf_u32(b, version);
}

static void drop_entries(size_t from)
{
    for (size_t i = from; i < lr.nseq; i++)
        free(lr.seq[i].path);
    lr.nseq = from;
}

void task_lockrec_clear(void)
{
    drop_entries(0);
    for (uint32_t l = 0; l < lr.nstores; l++)
        task_vers_free(&lr.st[l]);
    lr.nv = 0;
}

void task_lockrec_fini(void)
{
    task_lockrec_clear();
    free(lr.seq);
    free(lr.st);
    memset(&lr, 0, sizeof(lr));
}

/* The store of lock's versions, NULL past the locks. */
static task_vers_t *store_of(uint32_t lock)
{
    if (lr.st == NULL && task_rt.nlocks > 0) {
        lr.st = calloc(task_rt.nlocks, sizeof(*lr.st));
        if (lr.st != NULL)
            lr.nstores = task_rt.nlocks;
    }
    return lock < lr.nstores ? &lr.st[lock] : NULL;
}

/* Keeps version `version` of lock (a copy of data); a version kept a
 * moment ago (a grant of what this worker's copy just unlocked) is not
 * kept twice.  (An older duplicate costs memory only: the rebuild takes
 * equal versions.) */
static int add_version(uint32_t lock, uint32_t version, const uint8_t *data,
                       size_t len)
{
    task_vers_t *st = store_of(lock);

    if (st == NULL)
        return lock < task_rt.nlocks
                   ? base_err(SHOAL_ERR_NOMEM, "task: lock record")
                   : base_err(SHOAL_ERR_PROTOCOL, "task: lock %u unknown",
                              lock);
    if (task_vers_has(st, version))
        return SHOAL_OK; /* versions never change: kept already */
    int s = task_vers_put(st, version, data, len);
    if (s == SHOAL_OK)
        lr.nv++;
    return s;
}

/* The manager's sequence is shorter than this record, or differs from
 * `from` on (a new manager that did not have this worker's record: the
 * worker was late after a failover, or the rebuild failed): what follows
 * `from` is another history now, and so are the versions past the last
 * one the prefix's grants saw. */
static int truncate_to(size_t from)
{
    uint32_t n = task_rt.nlocks ? task_rt.nlocks : 1;
    int64_t *maxv = malloc(n * sizeof(*maxv));

    if (maxv == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: lock record");
    drop_entries(from);
    for (uint32_t l = 0; l < n; l++)
        maxv[l] = 0;
    for (size_t i = 0; i < lr.nseq; i++)
        if (lr.seq[i].lock < n && lr.seq[i].version > maxv[lr.seq[i].lock])
            maxv[lr.seq[i].lock] = lr.seq[i].version;
    int s = SHOAL_OK;
    for (uint32_t l = 0; l < lr.nstores && s == SHOAL_OK; l++)
        for (size_t v = (size_t)maxv[l] + 1; v < lr.st[l].n && s == SHOAL_OK;
             v++)
            if (task_vers_has(&lr.st[l], (uint32_t)v)) {
                s = task_vers_drop(&lr.st[l], (uint32_t)v);
                lr.nv--;
            }
    free(maxv);
    return s;
}

static int add_entry(const lr_entry_t *e)
{
    int s = task_grow((void **)&lr.seq, &lr.capseq, lr.nseq + 1,
                      sizeof(*lr.seq), "task: lock record");
    if (s != SHOAL_OK)
        return s;
    uint8_t *p = malloc(e->pathlen ? e->pathlen : 1);
    if (p == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: lock record");
    if (e->pathlen > 0)
        memcpy(p, e->path, e->pathlen);
    lr.seq[lr.nseq] = *e;
    lr.seq[lr.nseq++].path = p;
    return SHOAL_OK;
}

/*
 * n sequence entries from entry `from` on (rd at the first): a grant's
 * tail, or (merge) a record the heir takes over from a new coordinator's
 * rank.  Entries the record has already are kept while they agree: a
 * grant's tail may start before the record's end when the record took a
 * longer one over (its heir's), and a merged record may be shorter.  A
 * tail that disagrees, or ends before the record does, cuts the record
 * back (truncate_to); a merged record that disagrees is not taken.
 * Returns 1 when nothing more of the message is to be kept.
 */
static int take_entries(task_rd_t *rd, uint64_t from, uint32_t n, int merge)
{
    size_t k = (size_t)from;
    int s = SHOAL_OK;

    if (from > lr.nseq) {
        /* Entries this worker never got (cannot happen while messages
         * arrive in order): its record is no prefix any more.  An empty
         * one is, and the next manager ships it the whole sequence. */
        task_lockrec_clear();
        return 1;
    }
    for (uint32_t i = 0; i < n && s == SHOAL_OK; i++, k++) {
        size_t plen;
        lr_entry_t e;
        e.path = (uint8_t *)task_rd_bytes(rd, &plen);
        e.pathlen = (uint32_t)plen;
        e.request = task_rd_u32(rd);
        e.lock = task_rd_u32(rd);
        e.version = task_rd_u32(rd);
        if (rd->err)
            return rd->err;
        if (k < lr.nseq) {
            const lr_entry_t *h = &lr.seq[k];
            if (h->pathlen == e.pathlen && h->request == e.request &&
                h->lock == e.lock && h->version == e.version &&
                (plen == 0 || memcmp(h->path, e.path, plen) == 0))
                continue;
            if (merge)
                return 1;
            s = truncate_to(k);
        }
        if (s == SHOAL_OK)
            s = add_entry(&e);
    }
    if (s == SHOAL_OK && !merge && k < lr.nseq)
        s = truncate_to(k);
    return s;
}

int task_lockrec_grant(task_rd_t *rd, const uint8_t *data, size_t len)
{
    uint32_t lock = task_rd_u32(rd), version = task_rd_u32(rd);
    uint64_t from = task_rd_u64(rd);
    uint32_t n = task_rd_u32(rd);
    int s = rd->err ? rd->err : take_entries(rd, from, n, 0);

    if (s == 1)
        return SHOAL_OK;
    return s == SHOAL_OK ? add_version(lock, version, data, len) : s;
}

/* The job at path unlocked its request-th request (of lock) with data. */
static int unlocked(const uint8_t *path, size_t pathlen, uint32_t request,
                    uint32_t lock, const uint8_t *data, size_t n)
{
    /* The grant it leaves is among the last this worker got. */
    for (size_t i = lr.nseq; i > 0; i--) {
        const lr_entry_t *e = &lr.seq[i - 1];
        if (e->request == request && e->lock == lock &&
            e->pathlen == pathlen &&
            (pathlen == 0 || memcmp(e->path, path, pathlen) == 0))
            return add_version(lock, e->version + 1, data, n);
    }
    return SHOAL_OK; /* granted by a manager whose history is gone */
}

int task_lockrec_unlock(const uint8_t *path, size_t pathlen,
                        const uint8_t *msg, size_t len)
{
    task_rd_t rd;
    size_t n;

    task_rd_init(&rd, msg, len);
    (void)task_rd_u32(&rd); /* TM_UNLOCK */
    (void)task_rd_u32(&rd); /* copy */
    uint32_t request = task_rd_u32(&rd), lock = task_rd_u32(&rd);
    const uint8_t *data = task_rd_bytes(&rd, &n);
    if (rd.err)
        return SHOAL_OK; /* the coordinator reports it */
    return unlocked(path, pathlen, request, lock, data, n);
}

/* A merged record's versions (u32 nv, nv x (u32 lock, u32 version, bytes
 * data)): those this record lacks. */
static int take_versions(task_rd_t *rd)
{
    uint32_t nv = task_rd_u32(rd);
    int s = rd->err;

    if (s == SHOAL_OK && nv > (rd->len - rd->pos) / 16)
        return base_err(SHOAL_ERR_PROTOCOL, "task: %u versions in a lock "
                        "record message of %zu bytes", nv, rd->len);
    for (uint32_t i = 0; i < nv && s == SHOAL_OK; i++) {
        size_t n;
        uint32_t lock = task_rd_u32(rd), version = task_rd_u32(rd);
        const uint8_t *data = task_rd_bytes(rd, &n);
        s = rd->err ? rd->err : add_version(lock, version, data, n);
    }
    return s;
}

int task_lockrec_heir(task_rd_t *rd)
{
    uint32_t kind = task_rd_u32(rd);
    size_t n, plen;

    if (kind == 0) {
        const uint8_t *data = task_rd_bytes(rd, &n);
        return rd->err ? rd->err : task_lockrec_grant(rd, data, n);
    }
    if (kind == 2) {
        uint32_t nseq = task_rd_u32(rd);
        int s = rd->err ? rd->err : take_entries(rd, 0, nseq, 1);
        return s == 1 ? SHOAL_OK : s == SHOAL_OK ? take_versions(rd) : s;
    }
    const uint8_t *path = task_rd_bytes(rd, &plen);
    uint32_t request = task_rd_u32(rd), lock = task_rd_u32(rd);
    const uint8_t *data = task_rd_bytes(rd, &n);
    if (rd->err || kind != 1)
        return rd->err ? rd->err
                       : base_err(SHOAL_ERR_PROTOCOL, "task: lock record "
                                  "message of kind %u", kind);
    return unlocked(path, plen, request, lock, data, n);
}

void task_lockrec_put(task_buf_t *b)
{
    task_buf_u32(b, (uint32_t)lr.nseq);
    for (size_t i = 0; i < lr.nseq; i++)
        task_lockrec_entry(b, lr.seq[i].path, lr.seq[i].pathlen,
                           lr.seq[i].request, lr.seq[i].lock,
                           lr.seq[i].version);
    task_buf_u32(b, (uint32_t)lr.nv);
    for (uint32_t l = 0; l < lr.nstores; l++)
        for (size_t v = 0; v < lr.st[l].n; v++) {
            const void *data;
            size_t len;
            if (!task_vers_has(&lr.st[l], (uint32_t)v))
                continue;
            int e = task_vers_get(&lr.st[l], (uint32_t)v, &data, &len);
            if (e != SHOAL_OK) {
                b->err = e; /* (NOMEM, or a bug) */
                return;
            }
            task_buf_u32(b, l);
            task_buf_u32(b, (uint32_t)v);
            task_buf_bytes(b, data, len);
        }
}

/* ---- the coordinator's side --------------------------------------------- */

void task_lockrec_free(task_lock_record_t *rec)
{
    for (size_t i = 0; i < rec->nseq; i++) {
        task_path_t p = rec->seq[i].job;
        task_path_free(&p);
    }
    free((void *)rec->seq);
    free((void *)rec->versions);
    memset(rec, 0, sizeof(*rec));
}

int task_lockrec_read(const uint8_t *p, size_t len, uint32_t worker,
                      task_lock_record_t *rec)
{
    task_rd_t rd;
    task_lock_entry_t *seq = NULL;
    task_lock_version_t *v = NULL;
    int s = SHOAL_OK;

    memset(rec, 0, sizeof(*rec));
    rec->worker = worker;
    task_rd_init(&rd, p, len);
    uint32_t n = task_rd_u32(&rd);
    /* An entry takes at least 20 bytes, a version 16: no count past what
     * the message could hold is believed. */
    if (rd.err || n > len / 20)
        return base_err(SHOAL_ERR_PROTOCOL, "task: a lock record of %u "
                        "entries in %zu bytes", n, len);
    if (n > 0 && (seq = calloc(n, sizeof(*seq))) == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: a lock record");
    rec->seq = seq;
    for (uint32_t i = 0; i < n && s == SHOAL_OK; i++) {
        size_t plen;
        const uint8_t *path = task_rd_bytes(&rd, &plen);
        seq[i].request = task_rd_u32(&rd);
        seq[i].lock = task_rd_u32(&rd);
        seq[i].version = task_rd_u32(&rd);
        s = rd.err ? rd.err : task_path_decode(path, plen, &seq[i].job);
        rec->nseq = s == SHOAL_OK ? i + 1 : i;
    }
    uint32_t nv = s == SHOAL_OK ? task_rd_u32(&rd) : 0;
    if (s == SHOAL_OK && (rd.err || nv > len / 16))
        s = base_err(SHOAL_ERR_PROTOCOL, "task: a lock record of %u "
                     "versions in %zu bytes", nv, len);
    if (s == SHOAL_OK && nv > 0 && (v = calloc(nv, sizeof(*v))) == NULL)
        s = base_err(SHOAL_ERR_NOMEM, "task: a lock record");
    rec->versions = v;
    for (uint32_t i = 0; i < nv && s == SHOAL_OK; i++) {
        v[i].lock = task_rd_u32(&rd);
        v[i].version = task_rd_u32(&rd);
        v[i].data = task_rd_bytes(&rd, &v[i].len);
        s = rd.err;
        rec->nversions = i + 1;
    }
    if (s != SHOAL_OK)
        task_lockrec_free(rec);
    return s;
}

void task_lockrec_size(size_t *nseq, size_t *nv)
{
    *nseq = lr.nseq;
    *nv = lr.nv;
}
