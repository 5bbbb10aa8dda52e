/*
 * Checkpoints the launcher asks for (docs/FT.md, "Checkpoints the
 * launcher asks for"): --checkpoint-every SECONDS and SIGUSR1, with a
 * checkpoint directory.  shoalrun coordinates the call number
 * at which every rank takes the checkpoint in
 * MPIX_Checkpoint_if_requested (the ranks' side and the protocol:
 * src/mpi/core/ckpt_trigger.c): it sends "shoal-ckpt-request id=K" once
 * every rank said it is ready (end of MPI_Init), collects each rank's
 * count ("shoal-ckpt-at", or the last one of a rank finishing,
 * "shoal-ckpt-final"), and sends "shoal-ckpt-target id=K count=T" with T
 * past every count.  One request at a time; another asked for meanwhile
 * waits (a second SIGUSR1 while one is pending is said and dropped).
 * Across hosts the lines of the ranks elsewhere travel the daemon tree
 * (SHOALRUN_F_CKPT_UP and _DOWN): their daemons pass them on.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "shoalrun.h"

int shoalrun_ckpt_init(shoalrun_ckpt_t *k, const shoalrun_args_t *a,
                       shoalrun_pmi_t *pmi)
{
    memset(k, 0, sizeof(*k));
    if (a->ckpt_dir == NULL)
        return SHOAL_OK;
    k->r = calloc((size_t)a->nranks, sizeof(*k->r));
    if (k->r == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    if (setenv("SHOAL_CKPT_TRIGGER", "1", 1) != 0) {
        free(k->r);
        k->r = NULL;
        return base_err(SHOAL_ERR_SYSTEM, "cannot set SHOAL_CKPT_TRIGGER");
    }
    k->on = 1;
    k->nranks = a->nranks;
    k->pmi = pmi;
    if (a->ckpt_every_s > 0) {
        k->every_ns = (uint64_t)(a->ckpt_every_s * 1e9);
        k->next_ns = base_time_ns() + k->every_ns;
    }
    return SHOAL_OK;
}

void shoalrun_ckpt_fini(shoalrun_ckpt_t *k)
{
    free(k->r);
    memset(k, 0, sizeof(*k));
}

static void try_start(shoalrun_ckpt_t *k);

void shoalrun_ckpt_tell(shoalrun_pmi_t *pmi, int rank, int what, long id,
                        long value)
{
    if (what == SHOALRUN_CKPT_REQUEST)
        shoalrun_pmi_tell(pmi, rank, "shoal-ckpt-request", id, -1);
    else
        shoalrun_pmi_tell(pmi, rank, "shoal-ckpt-target", id, value);
}

/* The line for rank i: here, or down the tree to its host's daemon. */
static void tell(shoalrun_ckpt_t *k, int i, int what, long id, long value)
{
    if (i >= k->pmi->first && i < k->pmi->first + k->pmi->nlocal)
        shoalrun_ckpt_tell(k->pmi, i, what, id, value);
    else if (k->down != NULL)
        k->down(k->down_ctx, i, what, id, value);
}

/* Every rank alive answered (or finished): send the target. */
static void try_finish(shoalrun_ckpt_t *k)
{
    long max = 0, id = k->id;
    int live = 0;

    if (id == 0)
        return;
    for (int i = 0; i < k->nranks; i++) {
        const shoalrun_ckpt_rank_t *r = &k->r[i];
        if (r->gone)
            continue;
        if (!r->final && !r->answered)
            return;
        live += !r->final;
        if (r->count > max)
            max = r->count;
    }
    k->id = 0;
    if (live == 0) {
        shoalrun_say("checkpoint request %ld (%s) dropped: the ranks are "
                     "finishing", id, k->why);
    } else {
        for (int i = 0; i < k->nranks; i++)
            if (!k->r[i].gone && !k->r[i].final)
                tell(k, i, SHOALRUN_CKPT_TARGET, id, max + 1);
        shoalrun_say("checkpoint request %ld (%s): the ranks take it at "
                     "their call %ld of MPIX_Checkpoint_if_requested", id,
                     k->why, max + 1);
    }
    try_start(k);
}

/* A request is wanted and every rank is ready: send it. */
static void try_start(shoalrun_ckpt_t *k)
{
    if (!k->wanted || k->id != 0)
        return;
    for (int i = 0; i < k->nranks; i++)
        if (!k->r[i].gone && !k->r[i].final && !k->r[i].ready)
            return;
    k->wanted = 0;
    k->id = ++k->last_id;
    for (int i = 0; i < k->nranks; i++) {
        k->r[i].answered = 0;
        if (!k->r[i].gone && !k->r[i].final)
            tell(k, i, SHOALRUN_CKPT_REQUEST, k->id, -1);
    }
    try_finish(k);
}

void shoalrun_ckpt_ask(shoalrun_ckpt_t *k, const char *why)
{
    if (!k->on)
        return;
    if (k->wanted || k->id != 0) {
        shoalrun_say("%s: a checkpoint request is pending already; not "
                     "asking for another", why);
        return;
    }
    k->wanted = 1;
    k->why = why;
    try_start(k);
    if (k->wanted)
        shoalrun_say("%s: the checkpoint is asked for once every rank has "
                     "finished MPI_Init", why);
}

void shoalrun_ckpt_event(shoalrun_ckpt_t *k, int rank, int what, long id,
                         long count)
{
    shoalrun_ckpt_rank_t *r;

    if (!k->on || rank < 0 || rank >= k->nranks)
        return;
    r = &k->r[rank];
    switch (what) {
    case SHOALRUN_CKPT_READY:
        r->ready = 1;
        try_start(k);
        break;
    case SHOALRUN_CKPT_AT:
        if (id == k->id) {
            r->answered = 1;
            r->count = count;
            try_finish(k);
        }
        break;
    default: /* SHOALRUN_CKPT_FINAL */
        r->final = 1;
        r->count = count;
        try_finish(k);
        try_start(k);
        break;
    }
}

void shoalrun_ckpt_rank_gone(shoalrun_ckpt_t *k, int rank)
{
    if (!k->on || rank < 0 || rank >= k->nranks)
        return;
    k->r[rank].gone = 1;
    try_finish(k);
    try_start(k);
}

uint64_t shoalrun_ckpt_timer(shoalrun_ckpt_t *k, uint64_t now)
{
    if (!k->on || k->every_ns == 0)
        return UINT64_MAX;
    if (now >= k->next_ns) {
        k->next_ns = now + k->every_ns;
        if (!k->wanted && k->id == 0)
            shoalrun_ckpt_ask(k, "--checkpoint-every");
    }
    return k->next_ns;
}
