/*
 * Building and running schedules.  One runner serves blocking and
 * nonblocking calls: it posts each round's communication as it meets it,
 * runs local steps where they stand, and stops at a fence (or a poll step)
 * that is not satisfied yet.  A blocking call then waits and calls it
 * again; the progress engine calls it again on its next turn.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "coll_sched.h"
#include "coll/mcast/mcast.h"

/* The arrays a schedule starts with: its own inline ones, empty. */
static void sched_empty(coll_sched_t *s)
{
    s->nsteps = 0;
    s->cap = COLL_SCHED_INLINE;
    s->steps = s->inl_steps;
    s->ntmp = 0;
    s->tmpcap = 0;
    s->tmp = NULL;
    s->nreq = 0;
    s->reqcap = COLL_SCHED_INLINE;
    s->reqs = s->inl_reqs;
}

void coll_sched_init(coll_sched_t *s, coll_comm_t *c)
{
    /* Field by field: the inline arrays need no clearing (a memset of the
     * whole object costs more than the rest of a small call's build). */
    s->comm = c;
    /* Every call takes the next tag, so messages of back-to-back
     * collectives on one communicator can never be confused. */
    s->tag = (int)(c->seq++ & COLL_TAG_MASK);
    s->err = 0;
    s->pc = 0;
    s->rc = 0;
    s->done = 0;
    sched_empty(s);
}

/* Room for cap elements of each bytes in *arr, which holds n and may be
 * the inline array inl (copied out then, never freed).  0, or -1. */
static int grow(void **arr, void *inl, int n, int cap, size_t each)
{
    void *p;

    if (*arr == inl) {
        p = malloc((size_t)cap * each);
        if (p != NULL && n > 0)
            memcpy(p, inl, (size_t)n * each);
    } else {
        p = realloc(*arr, (size_t)cap * each);
    }
    if (p == NULL)
        return -1;
    *arr = p;
    return 0;
}

static coll_step_t *append(coll_sched_t *s, int kind)
{
    if (s->err)
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = 2 * s->cap;
        void *arr = s->steps;
        if (grow(&arr, s->inl_steps, s->nsteps, cap, sizeof(coll_step_t))) {
            s->err = base_err(SHOAL_ERR_NOMEM,
                              "collective schedule of %d steps", cap);
            return NULL;
        }
        s->steps = arr;
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

void coll_sched_poll(coll_sched_t *s, coll_poll_fn fn, void *arg)
{
    coll_sched_poll_abort(s, fn, NULL, arg);
}

void coll_sched_poll_abort(coll_sched_t *s, coll_poll_fn fn,
                           void (*abort)(void *arg), void *arg)
{
    coll_step_t *st = append(s, COLL_STEP_POLL);
    if (st) {
        st->poll = fn;
        st->abort = abort;
        st->arg = arg;
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

static int post(coll_sched_t *s, const coll_step_t *st)
{
    coll_comm_t *c = s->comm;
    void *req = NULL;
    int rc;

    if (s->nreq == s->reqcap) {
        int cap = 2 * s->reqcap;
        void *arr = s->reqs;
        if (grow(&arr, s->inl_reqs, s->nreq, cap, sizeof(void *)))
            return base_err(SHOAL_ERR_NOMEM, "collective request list");
        s->reqs = arr;
        s->reqcap = cap;
    }
    if (st->kind == COLL_STEP_SEND)
        rc = c->ops->isend(c->ctx, st->src, st->count, st->dt, st->peer,
                           s->tag, &req);
    else
        rc = c->ops->irecv(c->ctx, st->dst, st->count, st->dt, st->peer,
                           s->tag, &req);
    if (rc == 0)
        s->reqs[s->nreq++] = req;
    return rc;
}

/* 1 when every posted request is done (and freed), 0 when not yet. */
static int reqs_done(coll_sched_t *s, int block)
{
    coll_comm_t *c = s->comm;
    int done = 1, rc;

    if (s->nreq == 0)
        return 1;
    if (block)
        rc = c->ops->waitall(c->ctx, s->nreq, s->reqs);
    else
        rc = c->ops->testall(c->ctx, s->nreq, s->reqs, &done);
    if (!done)
        return 0;
    if (rc != 0 && s->rc == 0)
        s->rc = rc;
    s->nreq = 0;
    return 1;
}

/*
 * Run steps from s->pc until one cannot finish now.  Returns 1 when the
 * schedule is done, 0 when it stopped at an unsatisfied fence or poll step
 * After an error no more steps
 * run; what was posted is still completed before the schedule is done,
 * because those requests point into buffers that are about to be freed.
 */
static int run(coll_sched_t *s, int block)
{
    coll_comm_t *c = s->comm;

    while (s->rc == 0 && s->pc < s->nsteps) {
        const coll_step_t *st = &s->steps[s->pc];
        int rc = 0;

        switch (st->kind) {
        case COLL_STEP_SEND:
        case COLL_STEP_RECV:
            rc = post(s, st);
            break;
        case COLL_STEP_REDUCE:
            rc = c->ops->reduce_local(c->ctx, st->op, st->src, st->dst,
                                      st->count, st->dt);
            break;
        case COLL_STEP_COPY:
            rc = c->ops->copy(c->ctx, st->src, st->count, st->dt, st->dst,
                              st->dcount, st->ddt);
            break;
        case COLL_STEP_FENCE:
            if (!reqs_done(s, block))
                return 0;
            break;
        case COLL_STEP_POLL:
            rc = st->poll(st->arg);
            if (rc == 0)
                return 0;
            rc = rc == 1 ? 0 : rc;
            break;
        default:
            rc = base_err(SHOAL_ERR_INTERNAL, "collective step of kind %d",
                          st->kind);
        }
        if (rc != 0 && s->rc == 0)
            s->rc = rc;
        s->pc++;
    }
    if (!reqs_done(s, block))
        return 0;
    s->done = 1;
    return 1;
}

typedef struct poll_wait {
    const coll_step_t *st;
    int rc;
} poll_wait_t;

static int poll_ready(void *arg)
{
    poll_wait_t *pw = arg;

    pw->rc = pw->st->poll(pw->st->arg);
    return pw->rc != 0;
}

/* Blocking: wait until the poll step at s->pc is done (it runs again in
 * run(), which then sees it done at once). */
static int wait_poll_step(coll_sched_t *s)
{
    coll_comm_t *c = s->comm;
    poll_wait_t pw = {&s->steps[s->pc], 0};

    return c->ops->wait(c->ctx, poll_ready, &pw);
}

static void sched_release(coll_sched_t *s)
{
    for (int i = 0; i < s->ntmp; i++)
        free(s->tmp[i]);
    free(s->tmp);
    if (s->steps != s->inl_steps)
        free(s->steps);
    if (s->reqs != s->inl_reqs)
        free(s->reqs);
    sched_empty(s);
}

/* Move what s built into h (another object: the arrays that are inline in
 * s are copied, as far as they are used; heap ones change owner). */
static void hand_over(coll_sched_t *h, coll_sched_t *s)
{
    h->comm = s->comm;
    h->tag = s->tag;
    h->err = s->err;
    h->nsteps = s->nsteps;
    if (s->steps == s->inl_steps) {
        memcpy(h->inl_steps, s->inl_steps,
               (size_t)s->nsteps * sizeof(coll_step_t));
        h->steps = h->inl_steps;
        h->cap = COLL_SCHED_INLINE;
    } else {
        h->steps = s->steps;
        h->cap = s->cap;
    }
    h->ntmp = s->ntmp;
    h->tmpcap = s->tmpcap;
    h->tmp = s->tmp;
    /* Building posts nothing: s's request list is its empty inline one. */
    h->nreq = 0;
    h->reqcap = COLL_SCHED_INLINE;
    h->reqs = h->inl_reqs;
}

static void rewind_sched(coll_sched_t *s)
{
    s->pc = 0;
    s->rc = 0;
    s->done = 0;
    s->nreq = 0;
}

int coll_sched_finish(coll_sched_t *s)
{
    coll_comm_t *c = s->comm;
    int rc;

    if (c->start_out != NULL) {
        coll_sched_t *h;
        if (s->err != 0) {
            rc = s->err;
            sched_release(s);
            return rc;
        }
        /* The one kept from an earlier blocking call, or a new one. */
        h = c->spare;
        if (h != NULL)
            c->spare = NULL;
        else
            h = malloc(sizeof(*h));
        if (h == NULL) {
            sched_release(s);
            return base_err(SHOAL_ERR_NOMEM, "collective schedule");
        }
        hand_over(h, s);
        rewind_sched(h);
        *c->start_out = h;
        if (c->persistent) {
            /* Persistent: the tag building took stays the request's for
             * every start.  Ranks initialize a communicator's persistent
             * collectives in one order but may start them in any order,
             * so a tag taken at each start would differ between ranks.
             * Starts of one request follow each other (a start waits for
             * the last to complete), and messages between two ranks with
             * one tag match in order, so reuse is safe. */
            h->done = 1;
            return 0;
        }
        run(h, 0);
        return 0;
    }
    rewind_sched(s);
    s->rc = s->err;
    while (!run(s, 1)) {
        /* Only a poll step stops a blocking run. */
        rc = wait_poll_step(s);
        if (rc != 0) {
            /* The wait failed (a peer died): give the step up. */
            if (s->rc == 0)
                s->rc = rc;
            if (s->steps[s->pc].abort != NULL)
                s->steps[s->pc].abort(s->steps[s->pc].arg);
            s->pc++;
        }
    }
    rc = s->rc;
    sched_release(s);
    return rc;
}

int coll_sched_start(coll_sched_t *s)
{
    rewind_sched(s);
    run(s, 0);
    return 0;
}

int coll_sched_progress(coll_sched_t *s)
{
    if (s->done)
        return 1;
    return run(s, 0);
}

int coll_sched_result(const coll_sched_t *s)
{
    return s->rc;
}

void coll_comm_fini(coll_comm_t *c)
{
    coll_shm_fini(c);
    coll_mcast_fini(c);
    coll_sched_free(c->spare);
    c->spare = NULL;
}

void coll_sched_recycle(coll_comm_t *c, coll_sched_t *s)
{
    if (s == NULL)
        return;
    sched_release(s);
    if (c->spare == NULL)
        c->spare = s;
    else
        free(s);
}

void coll_sched_free(coll_sched_t *s)
{
    if (s == NULL)
        return;
    sched_release(s);
    free(s);
}
