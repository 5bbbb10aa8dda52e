/*
 * When the segment could not be shared, the shared-memory algorithms were
 * chosen all the same (the choice is made before anyone knows), so their
 * poll steps carry the call out through messages: everything to rank 0,
 * which reduces in rank order, then back (bcast: straight from the root).
 * Linear and slow for many ranks, but it only serves a host where
 * processes cannot share memory with each other.
 *
 * Stages: 1 post, 2 wait, 3 post, 4 wait, 5 done.  Messages use the call's
 * own tag; a rank posts its stage-3 messages only after its stage-1 ones
 * completed, so the messages of a pair match in order.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_shm.h"

static int post(shm_call_t *a, int send, const void *buf, int64_t count,
                int peer)
{
    coll_comm_t *c = a->c;
    void *dt = count > 0 ? a->dt : NULL;
    void *req = NULL;
    int rc;

    if (send)
        rc = c->ops->isend(c->ctx, buf, count, dt, peer, a->tag, &req);
    else
        rc = c->ops->irecv(c->ctx, (void *)buf, count, dt, peer, a->tag, &req);
    if (rc == 0)
        a->reqs[a->nreq++] = req;
    return rc;
}

/* 1 when the posted messages are done, else 0; errors into a->err. */
static int wait_msgs(shm_call_t *a)
{
    coll_comm_t *c = a->c;
    int done = 1, rc;

    if (a->nreq == 0)
        return 1;
    rc = c->ops->testall(c->ctx, a->nreq, a->reqs, &done);
    if (!done)
        return 0;
    if (rc != 0) {
        if (a->err == 0)
            a->err = shm_err(rc);
        a->fbabort = 1;
    }
    a->nreq = 0;
    return 1;
}

/* This rank's data in a reduction. */
static const void *contribution(const shm_call_t *a)
{
    return a->sbuf == COLL_IN_PLACE ? a->rbuf : a->sbuf;
}

/* The buffer of rank q's data at rank 0 (q >= 1), addressed as dt. */
static char *tmp_of(const shm_call_t *a, int q)
{
    return a->tmp + (int64_t)(q - 1) * a->bytes - a->tlb;
}

/* Rank 0: x0 op (x1 op (... op x(p-1))), into rank p-1's buffer. */
static void fold(shm_call_t *a)
{
    coll_comm_t *c = a->c;
    char *acc = tmp_of(a, c->size - 1);

    for (int q = c->size - 2; q >= 0; q--) {
        const void *in = q == 0 ? contribution(a) : tmp_of(a, q);
        int rc = c->ops->reduce_local(c->ctx, a->op, in, acc, a->count, a->dt);
        if (rc != 0 && a->err == 0)
            a->err = shm_err(rc);
    }
}

/* Stage 1 and 3 posts; returns an error of a post. */
static int post_stage(shm_call_t *a, int stage)
{
    coll_comm_t *c = a->c;
    int p = c->size, r = c->rank, rc = 0;

    switch (a->kind) {
    case SHM_BARRIER:
        /* 1: everyone to rank 0; 3: rank 0 to everyone */
        if (r == 0)
            for (int q = 1; q < p && rc == 0; q++)
                rc = post(a, stage == 3, NULL, 0, q);
        else
            rc = post(a, stage == 1, NULL, 0, 0);
        return rc;
    case SHM_BCAST:
        if (stage == 3)
            return 0;
        if (r == a->root)
            for (int q = 0; q < p && rc == 0; q++) {
                if (q != r)
                    rc = post(a, 1, a->rbuf, a->count, q);
            }
        else
            rc = post(a, 0, a->rbuf, a->count, a->root);
        return rc;
    }
    if (stage == 1) {
        if (r != 0)
            return post(a, 1, contribution(a), a->count, 0);
        a->tmp = malloc((size_t)(a->bytes * (p - 1)));
        if (a->tmp == NULL)
            return base_err(SHOAL_ERR_NOMEM,
                            "collective fallback buffer of %lld bytes",
                            (long long)(a->bytes * (p - 1)));
        for (int q = 1; q < p && rc == 0; q++)
            rc = post(a, 0, tmp_of(a, q), a->count, q);
        return rc;
    }
    /* stage 3: the result from rank 0 */
    if (r == 0) {
        fold(a);
        if (a->kind == SHM_ALLREDUCE) {
            for (int q = 1; q < p && rc == 0; q++)
                rc = post(a, 1, tmp_of(a, p - 1), a->count, q);
        } else if (a->root != 0) {
            rc = post(a, 1, tmp_of(a, p - 1), a->count, a->root);
        }
        if (a->kind == SHM_ALLREDUCE || a->root == 0) {
            int e = c->ops->copy(c->ctx, tmp_of(a, p - 1), a->count, a->dt,
                                 a->rbuf, a->count, a->dt);
            if (e != 0 && a->err == 0)
                a->err = shm_err(e);
        }
        return rc;
    }
    if (a->kind == SHM_ALLREDUCE || r == a->root)
        rc = post(a, 0, a->rbuf, a->count, 0);
    return rc;
}

void shm_fallback_reset(shm_call_t *a)
{
    a->fbstage = 1;
    a->fbabort = 0;
    free(a->tmp);
    free(a->reqs);
    a->tmp = NULL;
    a->reqs = NULL;
    a->nreq = 0;
}

int shm_fallback(shm_call_t *a)
{
    int rc;

    for (;;) {
        switch (a->fbstage) {
        case 1:
        case 3:
            rc = 0;
            if (a->reqs == NULL) {
                a->reqs = calloc((size_t)a->c->size, sizeof(void *));
                if (a->reqs == NULL)
                    rc = base_err(SHOAL_ERR_NOMEM, "collective fallback");
            }
            if (rc == 0)
                rc = post_stage(a, a->fbstage);
            if (rc != 0) {
                /* What was posted still points at our buffers: wait for
                 * it, then stop. */
                if (a->err == 0)
                    a->err = shm_err(rc);
                a->fbabort = 1;
            }
            a->fbstage++;
            break;
        case 2:
        case 4:
            if (!wait_msgs(a))
                return 0;
            a->fbstage = a->fbabort ? 5 : a->fbstage + 1;
            break;
        default:
            shm_fallback_reset(a);
            return 1;
        }
    }
}
