/*
 * Building and running schedules.  The runner posts each round's
 * communication as it meets it and waits at fences; local steps run where
 * they stand.  A later nonblocking runner only has to replace the waits
 * by tests and remember which step it stopped at.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "coll_sched.h"

void coll_sched_init(coll_sched_t *s, coll_comm_t *c)
{
    memset(s, 0, sizeof(*s));
    s->comm = c;
    /* Every call takes the next tag, so messages of back-to-back
     * collectives on one communicator can never be confused. */
    s->tag = (int)(c->seq++ & COLL_TAG_MASK);
}

static coll_step_t *append(coll_sched_t *s, int kind)
{
    if (s->err)
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        coll_step_t *n = realloc(s->steps, (size_t)cap * sizeof(*n));
        if (n == NULL) {
            s->err = base_err(SHOAL_ERR_NOMEM,
                              "collective schedule of %d steps", cap);
            return NULL;
        }
        s->steps = n;
        s->cap = cap;
    }
    coll_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    return st;
}

void coll_sched_send(coll_sched_t *s, const void *buf, int64_t count,
                     void *dt, int peer)
{
    coll_step_t *st = append(s, COLL_STEP_SEND);
    if (st) {
        st->src = buf;
        st->count = count;
        st->dt = dt;
        st->peer = peer;
    }
}

void coll_sched_recv(coll_sched_t *s, void *buf, int64_t count, void *dt,
                     int peer)
{
    coll_step_t *st = append(s, COLL_STEP_RECV);
    if (st) {
        st->dst = buf;
        st->count = count;
        st->dt = dt;
        st->peer = peer;
    }
}

void coll_sched_reduce(coll_sched_t *s, void *op, const void *in,
                       void *inout, int64_t count, void *dt)
{
    coll_step_t *st;
    if (count == 0)
        return;
    st = append(s, COLL_STEP_REDUCE);
    if (st) {
        st->op = op;
        st->src = in;
        st->dst = inout;
        st->count = count;
        st->dt = dt;
    }
}

void coll_sched_copy(coll_sched_t *s, const void *src, int64_t count,
                     void *dt, void *dst, int64_t dcount, void *ddt)
{
    coll_step_t *st;
    if ((count == 0 && dcount == 0) || src == dst)
        return;
    st = append(s, COLL_STEP_COPY);
    if (st) {
        st->src = src;
        st->count = count;
        st->dt = dt;
        st->dst = dst;
        st->dcount = dcount;
        st->ddt = ddt;
    }
}

void coll_sched_fence(coll_sched_t *s)
{
    /* Two fences in a row are one. */
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].kind == COLL_STEP_FENCE)
        return;
    append(s, COLL_STEP_FENCE);
}

void *coll_sched_alloc(coll_sched_t *s, int64_t bytes)
{
    void *p;

    if (s->err)
        return NULL;
    if (s->ntmp == s->tmpcap) {
        int cap = s->tmpcap ? 2 * s->tmpcap : 4;
        void **n = realloc(s->tmp, (size_t)cap * sizeof(*n));
        if (n == NULL) {
            s->err = base_err(SHOAL_ERR_NOMEM, "collective buffer list");
            return NULL;
        }
        s->tmp = n;
        s->tmpcap = cap;
    }
    p = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (p == NULL) {
        s->err = base_err(SHOAL_ERR_NOMEM,
                          "collective temporary buffer of %lld bytes",
                          (long long)bytes);
        return NULL;
    }
    s->tmp[s->ntmp++] = p;
    return p;
}

void *coll_sched_tmp(coll_sched_t *s, int64_t count, void *dt)
{
    int64_t ext = 0, tlb = 0, text = 0, bytes = 0;
    char *p;

    if (count > 0 && dt != NULL) {
        s->comm->ops->extent(dt, &ext, &tlb, &text);
        bytes = text + (count - 1) * (ext < 0 ? -ext : ext);
    }
    p = coll_sched_alloc(s, bytes);
    if (p == NULL)
        return NULL;
    /* Negative extents lay elements out downwards from the first one. */
    if (ext < 0)
        p += (count - 1) * -ext;
    return p - tlb;
}

/* ---- running ------------------------------------------------------------------ */

typedef struct runner {
    void **reqs;
    int n, cap;
} runner_t;

static int post(coll_sched_t *s, runner_t *r, const coll_step_t *st)
{
    coll_comm_t *c = s->comm;
    void *req = NULL;
    int rc;

    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        void **n = realloc(r->reqs, (size_t)cap * sizeof(*n));
        if (n == NULL)
            return base_err(SHOAL_ERR_NOMEM, "collective request list");
        r->reqs = n;
        r->cap = cap;
    }
    if (st->kind == COLL_STEP_SEND)
        rc = c->ops->isend(c->ctx, st->src, st->count, st->dt, st->peer,
                           s->tag, &req);
    else
        rc = c->ops->irecv(c->ctx, st->dst, st->count, st->dt, st->peer,
                           s->tag, &req);
    if (rc == 0)
        r->reqs[r->n++] = req;
    return rc;
}

static int fence(coll_sched_t *s, runner_t *r)
{
    int rc = 0;
    if (r->n > 0)
        rc = s->comm->ops->waitall(s->comm->ctx, r->n, r->reqs);
    r->n = 0;
    return rc;
}

static int run_step(coll_sched_t *s, runner_t *r, const coll_step_t *st)
{
    coll_comm_t *c = s->comm;

    switch (st->kind) {
    case COLL_STEP_SEND:
    case COLL_STEP_RECV:
        return post(s, r, st);
    case COLL_STEP_REDUCE:
        return c->ops->reduce_local(c->ctx, st->op, st->src, st->dst,
                                    st->count, st->dt);
    case COLL_STEP_COPY:
        return c->ops->copy(c->ctx, st->src, st->count, st->dt, st->dst,
                            st->dcount, st->ddt);
    case COLL_STEP_FENCE:
        return fence(s, r);
    }
    return base_err(SHOAL_ERR_INTERNAL, "collective step of kind %d",
                    st->kind);
}

static void sched_free(coll_sched_t *s)
{
    for (int i = 0; i < s->ntmp; i++)
        free(s->tmp[i]);
    free(s->tmp);
    free(s->steps);
    s->tmp = NULL;
    s->steps = NULL;
}

int coll_sched_finish(coll_sched_t *s)
{
    runner_t r = {NULL, 0, 0};
    int rc = s->err;

    for (int i = 0; rc == 0 && i < s->nsteps; i++)
        rc = run_step(s, &r, &s->steps[i]);
    /* Even after an error, wait for what was posted: those requests point
     * into buffers that are about to be freed. */
    {
        int rc2 = fence(s, &r);
        if (rc == 0)
            rc = rc2;
    }
    free(r.reqs);
    sched_free(s);
    return rc;
}
