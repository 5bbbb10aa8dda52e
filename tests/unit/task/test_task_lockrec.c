/*
 * A worker's lock record (task_lockrec.c): grants' tails and its copies'
 * unlocks kept, the record written for TM_KEPT and read back by a new
 * coordinator, which rebuilds a lock manager from it; a record cut back
 * when a manager's sequence is shorter; a gap that empties it; malformed
 * records refused; the heir's copy of the coordinator's rank's grants and
 * unlocks (TM_LOCKREC); a new coordinator's rank's record merged into
 * its heir's (TM_LOCKREC 2), and grants' tails that overlap it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "task/task_rt.h"
#include "test.h"

static task_path_t path_of(uint32_t id)
{
    task_path_t p;

    T_OK(task_path_child(&TASK_PATH_ROOT, 0, 0, id, &p));
    return p;
}

typedef struct ent {
    const task_path_t *job;
    uint32_t request, lock, version;
} ent_t;

/* A grant of (lock, version, value) to this worker with the entries from
 * seq_from on, as the coordinator's TM_GRANT tail carries them. */
static void grant(uint32_t lock, uint32_t version, uint64_t value,
                  uint64_t from, const ent_t *e, uint32_t n)
{
    task_buf_t b = {0};
    task_rd_t rd;

    task_buf_u32(&b, lock);
    task_buf_u32(&b, version);
    task_buf_u64(&b, from);
    task_buf_u32(&b, n);
    for (uint32_t i = 0; i < n; i++)
        task_lockrec_entry(&b, e[i].job->bytes, e[i].job->len, e[i].request,
                           e[i].lock, e[i].version);
    T_OK(b.err);
    task_rd_init(&rd, b.p, b.len);
    T_OK(task_lockrec_grant(&rd, (const uint8_t *)&value, sizeof value));
    task_buf_free(&b);
}

/* Copy of job unlocks its request with value (its TM_UNLOCK). */
static void unlock(const task_path_t *job, uint32_t request, uint32_t lock,
                   uint64_t value)
{
    task_buf_t b = {0};

    task_msg_start(&b, TM_UNLOCK, 7);
    task_buf_u32(&b, request);
    task_buf_u32(&b, lock);
    task_buf_bytes(&b, &value, sizeof value);
    T_OK(task_lockrec_unlock(job->bytes, job->len, b.p, b.len));
    task_buf_free(&b);
}

/* The record as a new coordinator reads it (rec's versions point into
 * *bufp: free it after rec). */
static void record(task_lock_record_t *rec, task_buf_t *bufp)
{
    memset(bufp, 0, sizeof(*bufp));
    task_lockrec_put(bufp);
    T_OK(bufp->err);
    T_OK(task_lockrec_read(bufp->p, bufp->len, 3, rec));
}

/* Done with a record read back. */
static void forget(task_lock_record_t *rec, task_buf_t *buf)
{
    task_lockrec_free(rec);
    task_buf_free(buf);
}

static uint64_t value_of(const task_lock_version_t *v)
{
    uint64_t x;

    T_EQ(v->len, sizeof x);
    memcpy(&x, v->data, sizeof x);
    return x;
}

/* The version (lock, version) in rec, or NULL. */
static const task_lock_version_t *find(const task_lock_record_t *rec,
                                       uint32_t lock, uint32_t version)
{
    const task_lock_version_t *f = NULL;

    for (size_t i = 0; i < rec->nversions; i++)
        if (rec->versions[i].lock == lock &&
            rec->versions[i].version == version) {
            if (f != NULL)
                T_FAIL("version %u of lock %u kept twice", version, lock);
            f = &rec->versions[i];
        }
    return f;
}

int main(void)
{
    task_path_t a = path_of(0), b = path_of(1), c = path_of(2);
    task_lock_record_t rec;
    task_buf_t buf;

    task_rt.nlocks = 2;
    /* A granted lock 0 at version 0 (entry 0), its unlock makes 1; B is
     * granted version 1 (entry 1) and holds it. */
    ent_t e0[] = {{&a, 0, 0, 0}};
    grant(0, 0, 0, 0, e0, 1);
    unlock(&a, 0, 0, 1);
    ent_t e1[] = {{&b, 0, 0, 1}};
    grant(0, 1, 1, 1, e1, 1);
    record(&rec, &buf);
    T_EQ(rec.worker, 3);
    T_EQ(rec.nseq, 2);
    T_EQ(task_path_equal(&rec.seq[0].job, &a), 1);
    T_EQ(rec.seq[0].request, 0);
    T_EQ(rec.seq[1].version, 1);
    T_EQ(task_path_equal(&rec.seq[1].job, &b), 1);
    T_EQ(rec.nversions, 2); /* version 1 once, from the unlock */
    T_EQ(value_of(find(&rec, 0, 0)), 0);
    T_EQ(value_of(find(&rec, 0, 1)), 1);

    /* A manager rebuilt from it (with lock 1's version 0): A is done and
     * kept, B still holds lock 0. */
    uint64_t zero = 0;
    task_lock_version_t v1 = {1, 0, &zero, sizeof zero};
    task_lock_record_t recs[2] = {{0, NULL, 0, &v1, 1}, rec};
    task_lock_t *m;
    T_OK(task_lock_rebuild(2, 0, recs, 2, &m));
    T_EQ(task_lock_seq_len(m), 2);
    T_EQ(task_lock_owner(m, 0), 1);
    T_EQ(task_lock_subtree_kept(m, &a, 1), 1);
    T_EQ(task_lock_subtree_kept(m, &b, 1), 0);
    task_lock_destroy(m);
    task_lockrec_free(&rec);
    task_buf_free(&buf);

    /* A manager whose sequence is one entry long (this worker's record
     * was not in its rebuild): the record is cut back to it, and the
     * versions past what its grants saw go. */
    ent_t e2[] = {{&c, 0, 0, 1}};
    grant(0, 1, 1, 1, e2, 1);
    unlock(&c, 0, 0, 2);
    record(&rec, &buf);
    T_EQ(rec.nseq, 2);
    T_EQ(task_path_equal(&rec.seq[1].job, &c), 1);
    T_EQ(value_of(find(&rec, 0, 2)), 2);
    task_lockrec_free(&rec);
    task_buf_free(&buf);
    grant(1, 0, 0, 0, NULL, 0); /* a fresh manager */
    record(&rec, &buf);
    T_EQ(rec.nseq, 0);
    T_EQ(find(&rec, 0, 1) == NULL, 1);
    T_EQ(find(&rec, 0, 2) == NULL, 1);
    T_EQ(value_of(find(&rec, 1, 0)), 0);
    task_lockrec_free(&rec);
    task_buf_free(&buf);

    /* Entries it never got: the record empties (a prefix of anything). */
    grant(0, 0, 0, 0, e0, 1);
    grant(0, 1, 1, 5, e1, 1);
    record(&rec, &buf);
    T_EQ(rec.nseq, 0);
    T_EQ(rec.nversions, 0);
    task_lockrec_free(&rec);
    task_buf_free(&buf);

    /* Malformed records are refused, every proper prefix too. */
    grant(0, 0, 0, 0, e0, 1);
    unlock(&a, 0, 0, 1);
    memset(&buf, 0, sizeof(buf));
    task_lockrec_put(&buf);
    for (size_t cut = 0; cut < buf.len; cut++)
        T_ERR(task_lockrec_read(buf.p, cut, 3, &rec), SHOAL_ERR_PROTOCOL);
    T_OK(task_lockrec_read(buf.p, buf.len, 3, &rec));
    task_lockrec_free(&rec);
    uint8_t huge[8] = {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
    T_ERR(task_lockrec_read(huge, sizeof huge, 3, &rec), SHOAL_ERR_PROTOCOL);
    task_buf_free(&buf);

    /* The heir's copy of the coordinator's rank's grants and unlocks
     * (TM_LOCKREC after its rank): the same record. */
    task_lockrec_clear();
    task_buf_t h = {0};
    task_rd_t rd;
    uint64_t val = 0;
    task_buf_u32(&h, 0);
    task_buf_bytes(&h, &val, sizeof val);
    task_buf_u32(&h, 0); /* lock */
    task_buf_u32(&h, 0); /* version */
    task_buf_u64(&h, 0); /* from */
    task_buf_u32(&h, 1);
    task_lockrec_entry(&h, a.bytes, a.len, 0, 0, 0);
    task_rd_init(&rd, h.p, h.len);
    T_OK(task_lockrec_heir(&rd));
    task_buf_free(&h);
    val = 1;
    task_buf_u32(&h, 1);
    task_buf_bytes(&h, a.bytes, a.len);
    task_buf_u32(&h, 0);
    task_buf_u32(&h, 0);
    task_buf_bytes(&h, &val, sizeof val);
    task_rd_init(&rd, h.p, h.len);
    T_OK(task_lockrec_heir(&rd));
    for (size_t cut = 0; cut < h.len; cut++) {
        task_rd_init(&rd, h.p, cut);
        T_ERR(task_lockrec_heir(&rd), SHOAL_ERR_PROTOCOL);
    }
    h.p[0] = 3; /* no such kind */
    task_rd_init(&rd, h.p, h.len);
    T_ERR(task_lockrec_heir(&rd), SHOAL_ERR_PROTOCOL);
    task_buf_free(&h);
    record(&rec, &buf);
    T_EQ(rec.nseq, 1);
    T_EQ(value_of(find(&rec, 0, 0)), 0);
    T_EQ(value_of(find(&rec, 0, 1)), 1);
    task_lockrec_free(&rec);
    task_buf_free(&buf);

    /* A new coordinator's rank's whole record, merged into its heir's
     * (TM_LOCKREC 2): the heir has entry 0 and version 0 of lock 0; the
     * merged record has entries 0 and 1, versions 0 and 1 of lock 0 and
     * version 0 of lock 1. */
    task_lockrec_clear();
    grant(0, 0, 0, 0, e0, 1);
    unlock(&a, 0, 0, 1);
    grant(1, 0, 0, 1, e1, 1);
    unlock(&b, 0, 0, 2);
    memset(&h, 0, sizeof(h));
    task_buf_u32(&h, 2);
    task_lockrec_put(&h);
    T_OK(h.err);
    for (size_t cut = 4; cut < h.len; cut++) {
        task_lockrec_clear();
        grant(0, 0, 0, 0, e0, 1);
        task_rd_init(&rd, h.p, cut);
        T_ERR(task_lockrec_heir(&rd), SHOAL_ERR_PROTOCOL);
    }
    task_lockrec_clear();
    grant(0, 0, 0, 0, e0, 1); /* the heir's own */
    task_rd_init(&rd, h.p, h.len);
    T_OK(task_lockrec_heir(&rd));
    T_EQ(rd.pos, rd.len);
    record(&rec, &buf);
    T_EQ(rec.nseq, 2);
    T_EQ(task_path_equal(&rec.seq[1].job, &b), 1);
    T_EQ(rec.nversions, 4); /* version 0 of lock 0 once */
    T_EQ(value_of(find(&rec, 0, 1)), 1);
    T_EQ(value_of(find(&rec, 0, 2)), 2);
    T_EQ(value_of(find(&rec, 1, 0)), 0);
    forget(&rec, &buf);
    /* A grant's tail from entry 1 (the manager counted the heir's record
     * before the merge): the entry it has agrees, nothing is cut. */
    ent_t e3[] = {{&b, 0, 0, 1}, {&c, 0, 0, 2}};
    grant(0, 2, 2, 1, e3, 2);
    record(&rec, &buf);
    T_EQ(rec.nseq, 3);
    T_EQ(value_of(find(&rec, 0, 1)), 1);
    T_EQ(value_of(find(&rec, 1, 0)), 0);
    forget(&rec, &buf);
    /* One that disagrees from entry 1 on cuts the record back there. */
    ent_t e4[] = {{&c, 0, 0, 1}};
    grant(0, 1, 1, 1, e4, 1);
    record(&rec, &buf);
    T_EQ(rec.nseq, 2);
    T_EQ(task_path_equal(&rec.seq[1].job, &c), 1);
    T_EQ(find(&rec, 0, 2) == NULL, 1);
    forget(&rec, &buf);
    /* A merged record that disagrees with the heir's is not taken. */
    task_lockrec_clear();
    grant(0, 0, 0, 0, e0, 1);
    grant(0, 1, 1, 1, e4, 1);
    task_rd_init(&rd, h.p, h.len);
    T_OK(task_lockrec_heir(&rd));
    record(&rec, &buf);
    T_EQ(rec.nseq, 2);
    T_EQ(task_path_equal(&rec.seq[1].job, &c), 1);
    T_EQ(find(&rec, 0, 2) == NULL, 1);
    T_EQ(find(&rec, 1, 0) == NULL, 1);
    forget(&rec, &buf);
    task_buf_free(&h);

    task_lockrec_fini();
    task_path_free(&a);
    task_path_free(&b);
    task_path_free(&c);
    printf("task lock record ok\n");
    return 0;
}
