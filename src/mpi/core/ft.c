/*
 * Fault tolerance, part one (docs/FT.md): the communicator registry by
 * context id, the frames of the protocol and their outbox, failure lists
 * and acknowledgements, and revocation.  Agreement and shrink are in
 * ft_agree.c.
 *
 * Failures are the active-message layer's: a wire saw its peer die (the
 * process's pidfd on this host, a broken connection or silence past the
 * timeout across hosts) and am_mark_dead recorded it, in the order they
 * were noticed (am.dead_order).  A communicator's failed group is that
 * order filtered to its members; acknowledging is remembering how long a
 * prefix of it the program has seen (ULFM's MPIX_Comm_ack_failed).
 *
 * Revocation is a reliable broadcast: the revoker tells every member, and
 * every member that learns of it first tells every other member, so that
 * the revoker's death part-way leaves nobody out.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "mpi/core/ft.h"
#include "coll/coll_sched.h"
#include "mpi/comm/comm.h"
#include "mpi/core/ft_proto.h"
#include "mpi/p2p/p2p_engine.h"

mpi_ft_state_t mpi_ft;

/* A frame that found no room, sent by mpi_ft_progress. */
typedef struct ft_out {
    struct ft_out *next;
    int world;
    size_t len;
    uint64_t words[]; /* the payload */
} ft_out_t;

static ft_out_t *out_head, **out_tail = &out_head;

/* Frames for a context no communicator here has yet (a faster member
 * already uses a communicator this one is still building). */
typedef struct ft_stash {
    struct ft_stash *next;
    int src;
    size_t len;
    uint64_t words[];
} ft_stash_t;

static ft_stash_t *stash;
static int nstash;
#define FT_STASH_MAX 4096

/* Schedules given up while some of their messages still ran, each
 * holding those requests (s->reqs): freed once every one of them is done
 * (reap_abandoned), never while a message may land in them. */
static struct coll_sched **abandoned;
static int nabandoned, abandoned_cap;
static uint64_t n_abandoned, n_reaped;
static void reap_abandoned(void);

int mpi_ft_init(void)
{
    mpi_ft.on = base_cfg.FT != 0;
    /* The table serves revocations (SHOAL_FT) and checkpoints, which
     * carry the messages in flight on the program's communicators
     * (ckpt.c); untouched pages cost nothing. */
    if (!mpi_ft.on &&
        (base_cfg.CKPT_DIR == NULL || base_cfg.CKPT_DIR[0] == '\0'))
        return SHOAL_OK;
    mpi_ft.by_ctx = calloc(MPI_CTX_MAX, sizeof(MPI_Comm));
    if (mpi_ft.by_ctx == NULL)
        return base_err(SHOAL_ERR_NOMEM, "communicator table");
    return SHOAL_OK;
}

void mpi_ft_fini(void)
{
    while (out_head != NULL) {
        ft_out_t *o = out_head;
        out_head = o->next;
        free(o);
    }
    out_tail = &out_head;
    while (stash != NULL) {
        ft_stash_t *s = stash;
        stash = s->next;
        free(s);
    }
    nstash = 0;
    if (n_abandoned > 0)
        base_info("mpi", "SHOAL_FT: %llu collective schedules given up with "
                  "messages under way, %llu of them freed before "
                  "MPI_Finalize, %d at it",
                  (unsigned long long)n_abandoned,
                  (unsigned long long)n_reaped, nabandoned);
    /* Their requests went to the engine in mpi_ft_abandoned_finalize. */
    for (int i = 0; i < nabandoned; i++)
        coll_sched_free(abandoned[i]);
    n_abandoned = n_reaped = 0;
    free(abandoned);
    abandoned = NULL;
    nabandoned = abandoned_cap = 0;
    free(mpi_ft.by_ctx);
    memset(&mpi_ft, 0, sizeof(mpi_ft));
}

/* ---- membership and failures ---------------------------------------------------- */

int mpi_ft_dead(int world)
{
    return am.peers[world].dead;
}

/* The rank of world in group g, or -1. */
static int rank_in(MPI_Group g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world)
            return i;
    return -1;
}

/* The group of comm's members that comes first, and the other one. */
static MPI_Group first_group(MPI_Comm c)
{
    return !c->is_inter || c->group->world[0] < c->remote_group->world[0]
               ? c->group
               : c->remote_group;
}

static MPI_Group second_group(MPI_Comm c)
{
    return first_group(c) == c->group ? c->remote_group : c->group;
}

int mpi_ft_local_first(MPI_Comm comm)
{
    return first_group(comm) == comm->group;
}

int mpi_ft_nmembers(MPI_Comm comm)
{
    return comm->is_inter ? comm->size + comm->remote_size : comm->size;
}

int mpi_ft_member_world(MPI_Comm comm, int i)
{
    MPI_Group g = first_group(comm);

    return i < g->size ? g->world[i] : second_group(comm)->world[i - g->size];
}

int mpi_ft_member_index(MPI_Comm comm, int world)
{
    MPI_Group g = first_group(comm);
    int r = rank_in(g, world);

    if (r >= 0 || !comm->is_inter)
        return r;
    r = rank_in(second_group(comm), world);
    return r >= 0 ? g->size + r : -1;
}

int mpi_ft_failed_list(MPI_Comm comm, int *ranks)
{
    int n = 0;

    for (int i = 0; i < am.deaths; i++) {
        int r = mpi_ft_member_index(comm, am.dead_order[i]);
        if (r >= 0)
            ranks[n++] = r;
    }
    return n;
}

mpi_ft_comm_t *mpi_ft_comm(MPI_Comm comm)
{
    mpi_ft_comm_t *f = comm->ft;
    int n = mpi_ft_nmembers(comm), bmw = (n + 63) / 64;

    if (f != NULL)
        return f;
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    f->size = n;
    f->bmw = bmw;
    f->me = mpi_ft_local_first(comm) ? comm->rank
                                     : comm->remote_size + comm->rank;
    f->slots = calloc((size_t)(2 * n), sizeof(*f->slots));
    f->bits = calloc((size_t)(2 * n + 2) * (size_t)(2 * bmw),
                     sizeof(uint64_t));
    if (f->slots == NULL || f->bits == NULL) {
        free(f->slots);
        free(f->bits);
        free(f);
        return NULL;
    }
    for (int i = 0; i < 2 * n; i++) {
        f->slots[i].failed = f->bits + (size_t)i * 2 * bmw;
        f->slots[i].acked = f->slots[i].failed + bmw;
    }
    for (int k = 0; k < 2; k++)
        f->dec[k].failed = f->bits + (size_t)(2 * n + k) * 2 * bmw;
    comm->ft = f;
    return f;
}

static void ft_comm_free(MPI_Comm c)
{
    mpi_ft_comm_t *f = c->ft;

    if (f == NULL)
        return;
    free(f->slots);
    free(f->bits);
    free(f);
    c->ft = NULL;
}

int mpi_ft_unacked(MPI_Comm comm)
{
    int n = 0, acked;

    if (am.deaths == 0)
        return 0;
    /* Walks the failure list without making it (waits call this): a
     * failure past the acknowledged prefix of a process that could send
     * here (of the remote group, for an intercommunicator). */
    acked = comm->ft != NULL ? comm->ft->nacked : 0;
    for (int i = 0; i < am.deaths; i++) {
        int world = am.dead_order[i];
        if (mpi_ft_member_index(comm, world) < 0)
            continue;
        if (n++ >= acked &&
            (!comm->is_inter || rank_in(comm->remote_group, world) >= 0))
            return 1;
    }
    return 0;
}

int mpi_ft_comm_broken(MPI_Comm comm)
{
    if (comm->revoked)
        return MPIX_ERR_REVOKED;
    if (am.deaths == 0)
        return MPI_SUCCESS;
    for (int i = 0; i < comm->remote_size; i++)
        if (mpi_ft_dead(comm->peer_world[i]))
            return MPIX_ERR_PROC_FAILED;
    if (comm->is_inter)
        for (int i = 0; i < comm->size; i++)
            if (mpi_ft_dead(comm->group->world[i]))
                return MPIX_ERR_PROC_FAILED;
    return MPI_SUCCESS;
}

/* ---- frames --------------------------------------------------------------------- */

static void enqueue(int world, const uint64_t *words, size_t len)
{
    ft_out_t *o = malloc(sizeof(*o) + len);

    if (o == NULL)
        base_fatal("mpi: no memory for a fault-tolerance frame");
    o->next = NULL;
    o->world = world;
    o->len = len;
    memcpy(o->words, words, len);
    *out_tail = o;
    out_tail = &o->next;
    mpi_ft.outbox++;
}

static void deliver(int src, const uint64_t *w, size_t len);

void mpi_ft_send(int world, const uint64_t *words, size_t len)
{
    int status;

    if (world == mpi.world_rank) {
        deliver(world, words, len);
        return;
    }
    if (mpi_ft_dead(world))
        return;
    if (out_head != NULL) {
        enqueue(world, words, len);
        return;
    }
    status = am_request_try(mpi.ep->index, world, MPI_H_FT, words, len,
                            NULL, 0);
    if (status == SHOAL_ERR_AGAIN)
        enqueue(world, words, len);
    else if (status != SHOAL_OK && !SHOAL_ERR_IS_LINK_FAILURE(status))
        base_error("mpi", "fault-tolerance frame to rank %d failed: %s",
                   world, shoal_error_detail());
}

void mpi_ft_progress(void)
{
    while (out_head != NULL) {
        ft_out_t *o = out_head;
        int status = SHOAL_OK;
        if (!mpi_ft_dead(o->world)) {
            status = am_request_try(mpi.ep->index, o->world, MPI_H_FT,
                                    o->words, o->len, NULL, 0);
            if (status == SHOAL_ERR_AGAIN)
                return;
        }
        if (status != SHOAL_OK && !SHOAL_ERR_IS_LINK_FAILURE(status))
            base_error("mpi", "fault-tolerance frame to rank %d failed: %s",
                       o->world, shoal_error_detail());
        out_head = o->next;
        if (out_head == NULL)
            out_tail = &out_head;
        free(o);
        mpi_ft.outbox--;
    }
}

/* ---- revocation ------------------------------------------------------------------ */

/* Tell every member of comm (both groups of an intercommunicator) but
 * this process. */
static void revoke_tell_all(MPI_Comm comm)
{
    uint64_t w[FT_HDR] = {FT_REVOKE, comm->ctx, mpi_ctx_epoch(comm->ctx),
                          (uint64_t)comm->rank};

    for (int i = 0; i < comm->remote_size; i++)
        if (comm->peer_world[i] != mpi.world_rank)
            mpi_ft_send(comm->peer_world[i], w, sizeof(w));
    if (comm->is_inter)
        for (int i = 0; i < comm->size; i++)
            if (comm->group->world[i] != mpi.world_rank)
                mpi_ft_send(comm->group->world[i], w, sizeof(w));
}

static void revoke_here(MPI_Comm comm)
{
    if (comm->revoked)
        return;
    comm->revoked = 1;
    mpi_ft.revokes++;
    mpi_p2p_revoke(comm);
    base_info("mpi", "communicator of context %u revoked", comm->ctx);
    revoke_tell_all(comm);
}

/* ---- arrivals ------------------------------------------------------------------- */

static void stash_add(int src, const uint64_t *w, size_t len)
{
    ft_stash_t *s;

    if (nstash >= FT_STASH_MAX)
        return;
    s = malloc(sizeof(*s) + len);
    if (s == NULL)
        return;
    s->src = src;
    s->len = len;
    memcpy(s->words, w, len);
    s->next = stash;
    stash = s;
    nstash++;
}

static int stash_is_revoke(const ft_stash_t *s, uint32_t ctx)
{
    return (uint32_t)s->words[1] == ctx &&
           (s->words[0] & FT_KIND_MASK) == FT_REVOKE;
}

/* A revocation for context ctx while no communicator has it here: kept
 * for the one being built (mpi_ft_comm_register delivers it, and
 * deliver() drops it then unless its epoch is that communicator's).  One
 * per context, the newest epoch's: older ones are for freed
 * communicators. */
static void stash_revoke(int src, const uint64_t *w, size_t len)
{
    uint32_t ctx = (uint32_t)w[1];

    for (ft_stash_t **pp = &stash; *pp != NULL; pp = &(*pp)->next)
        if (stash_is_revoke(*pp, ctx)) {
            ft_stash_t *s = *pp;
            if (s->words[2] >= w[2])
                return;
            *pp = s->next;
            nstash--;
            free(s);
            break;
        }
    stash_add(src, w, len);
}

static void deliver(int src, const uint64_t *w, size_t len)
{
    MPI_Comm comm;
    uint32_t ctx;

    if (len < FT_HDR * sizeof(uint64_t) || mpi_ft.by_ctx == NULL)
        return;
    ctx = (uint32_t)w[1];
    if (ctx >= MPI_CTX_MAX)
        return;
    comm = mpi_ft.by_ctx[ctx];
    if ((w[0] & FT_KIND_MASK) == FT_REVOKE) {
        /* A revocation names the communicator by its context id and
         * epoch (mpi_ctx_epoch): one of an older epoch is for a
         * communicator freed here (a member revoked it late); one that
         * comes while no communicator has the id may be early, another
         * member having built the communicator, and revoked it, before
         * this one has it: kept until it is registered. */
        if (comm == NULL)
            stash_revoke(src, w, len);
        else if (w[2] == mpi_ctx_epoch(ctx))
            revoke_here(comm);
        return;
    }
    if (comm == NULL) {
        /* Agreement frames may be early too: kept for the communicator
         * being built. */
        stash_add(src, w, len);
        return;
    }
    mpi_ft_agree_arrive(comm, src, w, len);
}

void mpi_ft_handler(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                    void *payload, size_t len)
{
    shoal_token_info_t info;
    uint64_t *w;

    (void)args;
    (void)nargs;
    if (shoal_token_info(t, &info) != SHOAL_OK)
        return;
    /* Medium payloads need not be aligned for 64-bit words. */
    w = malloc(len > 0 ? len : 1);
    if (w == NULL)
        return;
    memcpy(w, payload, len);
    deliver(info.source, w, len);
    free(w);
}

/* ---- the registry --------------------------------------------------------------- */

void mpi_ft_comm_register(MPI_Comm c)
{
    ft_stash_t **pp;

    if (mpi_ft.by_ctx == NULL || c->ctx >= MPI_CTX_MAX)
        return;
    mpi_ft.by_ctx[c->ctx] = c;
    /* Early frames for it, oldest first (the stash is newest first). */
    for (;;) {
        ft_stash_t **oldest = NULL;
        for (pp = &stash; *pp != NULL; pp = &(*pp)->next)
            if ((uint32_t)(*pp)->words[1] == c->ctx)
                oldest = pp;
        if (oldest == NULL)
            break;
        ft_stash_t *s = *oldest;
        *oldest = s->next;
        nstash--;
        /* deliver() drops a revocation of an older epoch. */
        deliver(s->src, s->words, s->len);
        free(s);
    }
}

void mpi_ft_comm_unregister(MPI_Comm c)
{
    if (mpi_ft.by_ctx != NULL && c->ctx < MPI_CTX_MAX &&
        mpi_ft.by_ctx[c->ctx] == c)
        mpi_ft.by_ctx[c->ctx] = NULL;
    ft_comm_free(c);
    reap_abandoned();
}

/* ---- collectives that gave up ----------------------------------------------------- */

/* Frees the given-up schedules whose messages have all ended (each
 * request done: the library will not touch the schedule's buffers again).
 * Called when another is given up, when a communicator is freed (a
 * program recovering frees the broken one) and at MPI_Finalize. */
static void reap_abandoned(void)
{
    static int reaping; /* a request freed here may free its communicator,
                           whose teardown calls this again */
    int kept = 0;

    if (reaping)
        return;
    reaping = 1;
    for (int i = 0; i < nabandoned; i++) {
        struct coll_sched *s = abandoned[i];
        int done = 1;
        for (int j = 0; j < s->nreq && done; j++)
            done = mpi_req_is_done(s->reqs[j]);
        if (!done) {
            abandoned[kept++] = s;
            continue;
        }
        for (int j = 0; j < s->nreq; j++)
            mpi_req_free(s->reqs[j]);
        s->nreq = 0;
        coll_sched_free(s);
        n_reaped++;
    }
    nabandoned = kept;
    reaping = 0;
}

/* MPI_Finalize, before the engine goes down: what is done is freed, the
 * requests still under way go to the engine to free when done, and their
 * schedules' memory stays until mpi_ft_fini, after the engine. */
void mpi_ft_abandoned_finalize(void)
{
    reap_abandoned();
    for (int i = 0; i < nabandoned; i++) {
        struct coll_sched *s = abandoned[i];
        for (int j = 0; j < s->nreq; j++) {
            MPI_Request r = s->reqs[j];
            r->user_freed = 1;
            mpi_req_free_later(r);
        }
        s->nreq = 0;
    }
}

/*
 * A blocking collective found a member dead or the communicator revoked
 * while it waited.  Its receives that have not matched are taken back
 * (their buffers are the caller's or the schedule's); whatever matched
 * finishes on its own, and the schedule keeps those requests and its
 * memory until they have (reap_abandoned).
 */
void mpi_ft_abandon_sched(struct coll_sched *s)
{
    int running = 0;

    reap_abandoned();
    for (int i = 0; i < s->nreq; i++) {
        MPI_Request r = s->reqs[i];
        if (r == NULL)
            continue;
        s->reqs[i] = NULL;
        if (mpi_req_is_done(r)) {
            mpi_req_free(r);
            continue;
        }
        if (r->kind == MPI_REQ_RECV && mpi_posted_cancel(r)) {
            r->status.shoal_cancelled = 1;
            mpi_req_complete(r);
            mpi_req_free(r);
            continue;
        }
        s->reqs[running++] = r; /* kept, in order, until done */
    }
    s->nreq = running;
    if (running && nabandoned == abandoned_cap) {
        int cap = abandoned_cap ? 2 * abandoned_cap : 8;
        struct coll_sched **grown =
            realloc(abandoned, (size_t)cap * sizeof(*grown));
        if (grown == NULL) {
            /* Kept for good, never freed under a message: its requests
             * are freed by the engine when done. */
            for (int i = 0; i < running; i++) {
                MPI_Request r = s->reqs[i];
                r->user_freed = 1;
                mpi_req_free_later(r);
            }
            s->nreq = 0;
            return;
        }
        abandoned = grown;
        abandoned_cap = cap;
    }
    if (running) {
        abandoned[nabandoned++] = s;
        n_abandoned++;
    } else {
        coll_sched_free(s);
    }
}

void mpi_ft_abandon_req(MPI_Request r)
{
    mpi_lock();
    if (r->kind == MPI_REQ_RECV && !mpi_req_is_done(r) &&
        mpi_posted_cancel(r)) {
        r->status.shoal_cancelled = 1;
        mpi_req_complete(r);
    }
    if (mpi_req_is_done(r)) {
        mpi_req_free(r);
    } else {
        r->user_freed = 1;
        mpi_req_free_later(r);
    }
    mpi_unlock();
}

/* ---- the calls ------------------------------------------------------------------ */

static int check_comm(MPI_Comm comm, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (!mpi_comm_ok(comm))
        return mpi_error(NULL, MPI_ERR_COMM, fn, "comm is %s",
                         comm == MPI_COMM_NULL ? "MPI_COMM_NULL"
                                               : "not a valid communicator");
    return MPI_SUCCESS;
}

int PMPIX_Comm_revoke(MPI_Comm comm)
{
    int rc = check_comm(comm, "MPIX_Comm_revoke");

    if (rc != MPI_SUCCESS)
        return rc;
    if (!mpi_ft.on)
        return mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION,
                         "MPIX_Comm_revoke",
                         "fault tolerance is off: run with shoalrun --ft "
                         "(SHOAL_FT=1)");
    if (comm == MPI_COMM_SELF)
        return MPI_SUCCESS;
    mpi_lock();
    revoke_here(comm);
    mpi_unlock();
    mpi_progress();
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_revoke)

int PMPIX_Comm_is_revoked(MPI_Comm comm, int *flag)
{
    int rc = check_comm(comm, "MPIX_Comm_is_revoked");

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPIX_Comm_is_revoked",
                         "flag is NULL");
    mpi_progress(); /* a revocation may be waiting to be read */
    *flag = comm->revoked;
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_is_revoked)

/* A group of the world ranks of comm's members listed by member index. */
static int group_of(MPI_Comm comm, const int *ranks, int n, MPI_Group *g,
                    const char *fn)
{
    int *world;
    int rc;

    if (n == 0) {
        *g = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    world = malloc((size_t)n * sizeof(int));
    if (world == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    for (int i = 0; i < n; i++)
        world[i] = mpi_ft_member_world(comm, ranks[i]);
    rc = mpi_group_new(n, world, g);
    free(world);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "no memory for a group of %d", n);
    return MPI_SUCCESS;
}

/* The failure list of comm (member indices, in the order noticed; both
 * groups of an intercommunicator, as ULFM has it): *n_p of them in
 * *ranks_p (free it). */
static int failed_now(MPI_Comm comm, int **ranks_p, int *n_p, const char *fn)
{
    int *ranks = malloc((size_t)(am.deaths > 0 ? am.deaths : 1) *
                        sizeof(int));

    if (ranks == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    mpi_progress(); /* deaths noticed by the wires */
    *n_p = mpi_ft_failed_list(comm, ranks);
    *ranks_p = ranks;
    return MPI_SUCCESS;
}

/* Acknowledge the first n failures of comm's list (never fewer than
 * already acknowledged). */
static int ack_upto(MPI_Comm comm, int n, const char *fn)
{
    mpi_ft_comm_t *f;

    mpi_lock();
    f = mpi_ft_comm(comm);
    if (f != NULL && n > f->nacked)
        f->nacked = n;
    mpi_unlock();
    if (f == NULL)
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    return MPI_SUCCESS;
}

int PMPIX_Comm_failure_ack(MPI_Comm comm)
{
    const char *fn = "MPIX_Comm_failure_ack";
    int rc = check_comm(comm, fn), *ranks = NULL, n = 0;

    if (rc == MPI_SUCCESS)
        rc = failed_now(comm, &ranks, &n, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    free(ranks);
    return ack_upto(comm, n, fn);
}
SHOAL_MPIX_WEAK(Comm_failure_ack)

int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked)
{
    const char *fn = "MPIX_Comm_ack_failed";
    int rc = check_comm(comm, fn), *ranks = NULL, n = 0;

    if (rc != MPI_SUCCESS)
        return rc;
    if (num_acked == NULL || num_to_ack < 0)
        return mpi_error(comm, MPI_ERR_ARG, fn,
                         num_acked == NULL ? "num_acked is NULL"
                                           : "num_to_ack is negative");
    rc = failed_now(comm, &ranks, &n, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    free(ranks);
    rc = ack_upto(comm, num_to_ack < n ? num_to_ack : n, fn);
    if (rc == MPI_SUCCESS)
        *num_acked = comm->ft->nacked;
    return rc;
}
SHOAL_MPIX_WEAK(Comm_ack_failed)

static int failed_group(MPI_Comm comm, MPI_Group *g, int acked_only,
                        const char *fn)
{
    int rc = check_comm(comm, fn), *ranks = NULL, n = 0;

    if (rc != MPI_SUCCESS)
        return rc;
    if (g == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "group pointer is NULL");
    rc = failed_now(comm, &ranks, &n, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (acked_only) {
        int a = comm->ft != NULL ? comm->ft->nacked : 0;
        n = a < n ? a : n;
    }
    rc = group_of(comm, ranks, n, g, fn);
    free(ranks);
    return rc;
}

int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp)
{
    return failed_group(comm, failedgrp, 0, "MPIX_Comm_get_failed");
}
SHOAL_MPIX_WEAK(Comm_get_failed)

int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
    return failed_group(comm, failedgrp, 1, "MPIX_Comm_failure_get_acked");
}
SHOAL_MPIX_WEAK(Comm_failure_get_acked)
