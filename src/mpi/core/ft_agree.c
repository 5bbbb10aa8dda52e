/*
 * Fault tolerance, part two (docs/FT.md): agreement, and shrink built on it.
 *
 * MPIX_Comm_agree is a consensus among the members alive: every one
 * returns the same flag (the AND of the contributions) and the same error
 * (MPIX_ERR_PROC_FAILED when some member failed whose failure not every
 * contributor had acknowledged), and they agree on the failed group too.
 *
 * The protocol, a coordinator with take-over:
 *   - the coordinator of agreement s on a communicator is its lowest rank
 *     not known to be dead;
 *   - each member sends the coordinator its contribution (its values, the
 *     members it knows dead, the failures it acknowledged) and waits for
 *     the decision; when the coordinator dies first, it sends it again to
 *     the next one;
 *   - the coordinator waits for the contribution of every member not dead,
 *     decides, keeps the decision and sends it to all;
 *   - a coordinator that takes over (some lower rank died) first asks
 *     everyone (FT_POLL): a member that already holds a decision for s,
 *     from the dead coordinator, answers with it, and the new coordinator
 *     sends that one on instead of deciding anew, so no two members can
 *     return different decisions;
 *   - a member answers contributions and polls for an agreement it has
 *     decided from its handler, so it need not be inside MPI for that.
 * Deaths are learned from the wires (a pidfd on the host, broken
 * connections across hosts), which never take a live process for dead on
 * one host; every survivor notices every death eventually, which is what
 * lets a waiting member move on to the next coordinator.  Once decided,
 * each member takes the decided failed group for dead itself, so failure
 * lists agree after an agreement.
 *
 * On an intercommunicator the members are those of both groups, ranked
 * together (ft_proto.h), so the same protocol runs over their union; only
 * the flag (each group gets the remote group's AND) and shrink's result
 * (an intercommunicator of each side's survivors) differ.
 */
#include <stdlib.h>
#include <string.h>

#include "am/am.h"
#include "base/base_bitmap.h"
#include "mpi/comm/comm.h"
#include "mpi/core/ft_proto.h"
#include "mpi/p2p/p2p_engine.h"

typedef struct ft_op {
    MPI_Comm comm;
    uint32_t seq;
    uint64_t vals[FT_NV];
    /* The coordinator our contribution went to last, or -1.  It only
     * grows (a coordinator is the lowest rank alive, and deaths are for
     * good); a decision is taken only from it, so that a dead
     * coordinator's decision still in flight cannot contradict the one
     * its successor makes with our contribution. */
    int sent_to;
    int polled;  /* taken over: asked the others once */
    int bcast;   /* coordinator: the decision went out */
    ft_dec_t *dec;
} ft_op_t;

/* The world rank of member r (ft_proto.h: both groups of an
 * intercommunicator). */
static int world_of(MPI_Comm comm, int r)
{
    return mpi_ft_member_world(comm, r);
}

static ft_dec_t *decision(mpi_ft_comm_t *f, uint32_t seq)
{
    ft_dec_t *d = &f->dec[seq & 1];

    return d->valid && d->seq == seq ? d : NULL;
}

static ft_slot_t *slot_of(mpi_ft_comm_t *f, uint32_t seq, int r)
{
    return &f->slots[(size_t)(seq & 1) * (size_t)f->size + (size_t)r];
}

static size_t frame_words(const mpi_ft_comm_t *f)
{
    return FT_HDR + FT_NV + 2 * (size_t)f->bmw;
}

/* Bitmaps of comm's members this process knows dead, and of the failures
 * it acknowledged. */
static void my_view(MPI_Comm comm, mpi_ft_comm_t *f, uint64_t *failed,
                    uint64_t *acked)
{
    int *ranks = malloc((size_t)(am.deaths > 0 ? am.deaths : 1) *
                        sizeof(int));
    int n;

    memset(failed, 0, (size_t)f->bmw * sizeof(uint64_t));
    memset(acked, 0, (size_t)f->bmw * sizeof(uint64_t));
    if (ranks == NULL)
        base_fatal("mpi: no memory for a failure list");
    n = mpi_ft_failed_list(comm, ranks);
    for (int i = 0; i < n; i++) {
        base_bitmap_set(failed, (size_t)ranks[i]);
        if (i < f->nacked)
            base_bitmap_set(acked, (size_t)ranks[i]);
    }
    free(ranks);
}

static void send_decision(MPI_Comm comm, mpi_ft_comm_t *f, const ft_dec_t *d,
                          int to)
{
    size_t nw = frame_words(f);
    uint64_t *w = calloc(nw, sizeof(uint64_t));

    if (w == NULL)
        base_fatal("mpi: no memory for an agreement frame");
    w[0] = FT_DECIDE | (d->err ? FT_F_ERR : 0);
    w[1] = comm->ctx;
    w[2] = d->seq;
    w[3] = (uint64_t)f->me;
    memcpy(w + FT_HDR, d->vals, sizeof(d->vals));
    memcpy(w + FT_HDR + FT_NV, d->failed, (size_t)f->bmw * sizeof(uint64_t));
    mpi_ft_send(world_of(comm, to), w, nw * sizeof(uint64_t));
    free(w);
}

static void send_contrib(ft_op_t *op, mpi_ft_comm_t *f, int to)
{
    MPI_Comm comm = op->comm;
    size_t nw = frame_words(f);
    uint64_t *w = calloc(nw, sizeof(uint64_t));

    if (w == NULL)
        base_fatal("mpi: no memory for an agreement frame");
    w[0] = FT_CONTRIB;
    w[1] = comm->ctx;
    w[2] = op->seq;
    w[3] = (uint64_t)f->me;
    memcpy(w + FT_HDR, op->vals, sizeof(op->vals));
    my_view(comm, f, w + FT_HDR + FT_NV, w + FT_HDR + FT_NV + f->bmw);
    mpi_ft_send(world_of(comm, to), w, nw * sizeof(uint64_t));
    free(w);
}

/* The agreement in progress on each communicator, for polls (one at a
 * time per communicator: agreements are collective and ordered). */
static ft_op_t *current_of(MPI_Comm comm);
static int lowest_alive(MPI_Comm comm);

/* Take the decided failed members for dead here too. */
static void adopt_failures(MPI_Comm comm, const ft_dec_t *d)
{
    const mpi_ft_comm_t *f = comm->ft;

    for (int r = 0; r < f->size; r++)
        if (r != f->me && base_bitmap_test(d->failed, (size_t)r) &&
            !mpi_ft_dead(world_of(comm, r)))
            am_mark_dead(world_of(comm, r), SHOAL_ERR_PEER_DEAD,
                         "an agreement of the survivors found it failed");
}

void mpi_ft_agree_arrive(MPI_Comm comm, int src, const uint64_t *w,
                         size_t len)
{
    mpi_ft_comm_t *f = mpi_ft_comm(comm);
    unsigned kind = (unsigned)(w[0] & FT_KIND_MASK);
    uint32_t seq = (uint32_t)w[2];
    int from = (int)w[3];
    ft_dec_t *d;

    (void)src;
    if (f == NULL || len < frame_words(f) * sizeof(uint64_t) || from < 0 ||
        from >= f->size)
        return;
    d = decision(f, seq);
    if (kind == FT_CONTRIB) {
        ft_slot_t *s = slot_of(f, seq, from);
        s->seq = seq;
        s->valid = 1;
        memcpy(s->vals, w + FT_HDR, sizeof(s->vals));
        memcpy(s->failed, w + FT_HDR + FT_NV,
               (size_t)f->bmw * sizeof(uint64_t));
        memcpy(s->acked, w + FT_HDR + FT_NV + f->bmw,
               (size_t)f->bmw * sizeof(uint64_t));
        if (d != NULL) /* decided already: the sender missed it */
            send_decision(comm, f, d, from);
    } else if (kind == FT_DECIDE) {
        ft_op_t *op = current_of(comm);
        if (d != NULL)
            return;
        /* A member takes it only from the coordinator it last gave its
         * contribution to; a coordinator from anyone (a poll's answer). */
        if (op != NULL && op->seq == seq && op->sent_to >= 0 &&
            from != op->sent_to && lowest_alive(comm) != f->me)
            return;
        d = &f->dec[seq & 1];
        d->seq = seq;
        d->valid = 1;
        d->err = (w[0] & FT_F_ERR) != 0;
        memcpy(d->vals, w + FT_HDR, sizeof(d->vals));
        memcpy(d->failed, w + FT_HDR + FT_NV,
               (size_t)f->bmw * sizeof(uint64_t));
        adopt_failures(comm, d);
    } else if (kind == FT_POLL) {
        ft_op_t *op = current_of(comm);
        if (d != NULL)
            send_decision(comm, f, d, from);
        else if (op != NULL && op->seq == seq && from > op->sent_to) {
            op->sent_to = from;
            send_contrib(op, f, from);
        }
    }
}

/* ---- one agreement -------------------------------------------------------------- */

#define MAX_CURRENT 64
static ft_op_t *current[MAX_CURRENT];

static ft_op_t *current_of(MPI_Comm comm)
{
    for (int i = 0; i < MAX_CURRENT; i++)
        if (current[i] != NULL && current[i]->comm == comm)
            return current[i];
    return NULL;
}

static void current_set(ft_op_t *op, int on)
{
    for (int i = 0; i < MAX_CURRENT; i++) {
        if (on && current[i] == NULL) {
            current[i] = op;
            return;
        }
        if (!on && current[i] == op) {
            current[i] = NULL;
            return;
        }
    }
}

static int lowest_alive(MPI_Comm comm)
{
    const mpi_ft_comm_t *f = comm->ft;

    for (int r = 0; r < f->size; r++)
        if (r == f->me || !mpi_ft_dead(world_of(comm, r)))
            return r;
    return f->me;
}

/* The coordinator decides once every member alive has contributed. */
static ft_dec_t *try_decide(ft_op_t *op, mpi_ft_comm_t *f)
{
    MPI_Comm comm = op->comm;
    ft_slot_t *mine = slot_of(f, op->seq, f->me);
    ft_dec_t *d;

    mine->seq = op->seq;
    mine->valid = 1;
    memcpy(mine->vals, op->vals, sizeof(op->vals));
    my_view(comm, f, mine->failed, mine->acked);
    for (int r = 0; r < f->size; r++) {
        ft_slot_t *s = slot_of(f, op->seq, r);
        if (mpi_ft_dead(world_of(comm, r)) && r != f->me)
            continue;
        if (!s->valid || s->seq != op->seq)
            return NULL;
    }
    d = &f->dec[op->seq & 1];
    d->seq = op->seq;
    d->err = 0;
    for (int k = 0; k < FT_NV; k++)
        d->vals[k] = ~(uint64_t)0;
    memset(d->failed, 0, (size_t)f->bmw * sizeof(uint64_t));
    for (int r = 0; r < f->size; r++) {
        ft_slot_t *s = slot_of(f, op->seq, r);
        if (r != f->me && mpi_ft_dead(world_of(comm, r))) {
            base_bitmap_set(d->failed, (size_t)r);
            continue;
        }
        for (int k = 0; k < FT_NV; k++)
            d->vals[k] &= s->vals[k];
        for (int k = 0; k < f->bmw; k++)
            d->failed[k] |= s->failed[k];
    }
    /* A failure some contributor had not acknowledged is an error, the
     * same for all. */
    for (int r = 0; r < f->size && !d->err; r++) {
        if (!base_bitmap_test(d->failed, (size_t)r))
            continue;
        for (int c = 0; c < f->size; c++) {
            ft_slot_t *s = slot_of(f, op->seq, c);
            if (base_bitmap_test(d->failed, (size_t)c) ||
                (c != f->me && mpi_ft_dead(world_of(comm, c))))
                continue;
            if (!base_bitmap_test(s->acked, (size_t)r)) {
                d->err = 1;
                break;
            }
        }
    }
    d->valid = 1;
    return d;
}

/* Advance op; 1 once it has its decision (engine lock held). */
static int step(ft_op_t *op)
{
    MPI_Comm comm = op->comm;
    mpi_ft_comm_t *f = comm->ft;
    ft_dec_t *d = decision(f, op->seq);
    int c = lowest_alive(comm);

    if (c != f->me) {
        if (d != NULL) {
            op->dec = d;
            return 1;
        }
        if (c > op->sent_to) {
            op->sent_to = c;
            send_contrib(op, f, c);
        }
        return 0;
    }
    if (d == NULL) {
        /* Taken over: someone may hold the dead coordinator's decision. */
        if (c != 0 && !op->polled) {
            uint64_t *w = calloc(frame_words(f), sizeof(uint64_t));
            if (w == NULL)
                base_fatal("mpi: no memory for an agreement frame");
            w[0] = FT_POLL;
            w[1] = comm->ctx;
            w[2] = op->seq;
            w[3] = (uint64_t)f->me;
            op->polled = 1;
            for (int r = 0; r < f->size; r++)
                if (r != f->me && !mpi_ft_dead(world_of(comm, r)))
                    mpi_ft_send(world_of(comm, r), w,
                                frame_words(f) * sizeof(uint64_t));
            free(w);
            return 0; /* answers come back through the handler */
        }
        d = decision(f, op->seq); /* a poll answer may have brought it */
        if (d == NULL)
            d = try_decide(op, f);
        if (d == NULL)
            return 0;
    }
    if (!op->bcast) {
        op->bcast = 1;
        for (int r = 0; r < f->size; r++)
            if (r != f->me && !mpi_ft_dead(world_of(comm, r)))
                send_decision(comm, f, d, r);
    }
    op->dec = d;
    return 1;
}

static int op_begin(ft_op_t *op, MPI_Comm comm, const uint64_t *vals)
{
    mpi_ft_comm_t *f;

    memset(op, 0, sizeof(*op));
    op->comm = comm;
    op->sent_to = -1;
    memcpy(op->vals, vals, sizeof(op->vals));
    mpi_lock();
    f = mpi_ft_comm(comm);
    if (f != NULL) {
        op->seq = f->seq++;
        current_set(op, 1);
    }
    mpi_unlock();
    return f != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void op_end(ft_op_t *op)
{
    mpi_lock();
    current_set(op, 0);
    adopt_failures(op->comm, op->dec);
    mpi_unlock();
}

static int op_done(void *arg)
{
    return step(arg);
}

/* A blocking agreement over comm's members alive: the values ANDed, and
 * the decision (*dec_p, valid until the communicator's next agreement
 * but one). */
static int agree_blocking(MPI_Comm comm, const uint64_t *vals,
                          ft_dec_t **dec_p)
{
    ft_op_t op;
    int rc = op_begin(&op, comm, vals);

    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpi_wait_until(op_done, &op);
    if (rc != MPI_SUCCESS) {
        mpi_lock();
        current_set(&op, 0);
        mpi_unlock();
        return rc;
    }
    op_end(&op);
    *dec_p = op.dec;
    return MPI_SUCCESS;
}

static int check_agree(MPI_Comm comm, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (!mpi_comm_ok(comm))
        return mpi_error(NULL, MPI_ERR_COMM, fn, "comm is %s",
                         comm == MPI_COMM_NULL ? "MPI_COMM_NULL"
                                               : "not a valid communicator");
    if (!mpi_ft.on)
        return mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "fault tolerance is off: run with shoalrun --ft "
                         "(SHOAL_FT=1)");
    return MPI_SUCCESS;
}

/*
 * The flag goes in the low half of vals[0], the high half all zeros.  On
 * an intercommunicator ULFM wants each group to get the AND of the other
 * group's flags: the first group's members put theirs in the low half,
 * the second group's in the high half, each with the other half all
 * ones, and each reads the other group's half of the decision.
 */
static void flag_vals(MPI_Comm comm, uint64_t *vals, int flag)
{
    uint64_t mine = (uint32_t)flag;

    for (int k = 0; k < FT_NV; k++)
        vals[k] = ~(uint64_t)0;
    if (!comm->is_inter)
        vals[0] = mine;
    else if (mpi_ft_local_first(comm))
        vals[0] = mine | (uint64_t)UINT32_MAX << 32;
    else
        vals[0] = mine << 32 | UINT32_MAX;
}

static int flag_of(MPI_Comm comm, const ft_dec_t *d)
{
    int high = comm->is_inter && mpi_ft_local_first(comm);

    return (int)(uint32_t)(d->vals[0] >> (high ? 32 : 0));
}

int PMPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    const char *fn = "MPIX_Comm_agree";
    uint64_t vals[FT_NV];
    ft_dec_t *d;
    int rc = check_agree(comm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "flag is NULL");
    flag_vals(comm, vals, *flag);
    rc = agree_blocking(comm, vals, &d);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "waiting failed: %s",
                         shoal_error_detail());
    *flag = flag_of(comm, d);
    if (d->err)
        return mpi_error(comm, MPIX_ERR_PROC_FAILED, fn,
                         "a member failed whose failure not every survivor "
                         "had acknowledged (MPIX_Comm_ack_failed)");
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_agree)

/* ---- nonblocking ---------------------------------------------------------------- */

typedef struct iagree {
    ft_op_t op;
    int *flag;
} iagree_t;

static int iagree_poll(MPI_Request r)
{
    iagree_t *a = r->extra;

    if (!step(&a->op))
        return 0;
    current_set(&a->op, 0);
    adopt_failures(a->op.comm, a->op.dec);
    *a->flag = flag_of(a->op.comm, a->op.dec);
    r->status.MPI_ERROR = a->op.dec->err ? MPIX_ERR_PROC_FAILED
                                         : MPI_SUCCESS;
    return 1;
}

static int iagree_free(MPI_Request r)
{
    iagree_t *a = r->extra;

    if (a != NULL) {
        current_set(&a->op, 0);
        free(a);
    }
    r->extra = NULL;
    return MPI_SUCCESS;
}

int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    const char *fn = "MPIX_Comm_iagree";
    uint64_t vals[FT_NV];
    iagree_t *a;
    MPI_Request r;
    int rc = check_agree(comm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL || request == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL",
                         flag == NULL ? "flag" : "request");
    a = calloc(1, sizeof(*a));
    r = a != NULL ? mpi_req_alloc(MPI_REQ_COLL, comm) : NULL;
    if (r == NULL) {
        free(a);
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    }
    flag_vals(comm, vals, *flag);
    a->flag = flag;
    rc = op_begin(&a->op, comm, vals);
    if (rc != MPI_SUCCESS) {
        free(a);
        mpi_req_free(r);
        return mpi_error(comm, rc, fn, "no memory");
    }
    r->extra = a;
    r->poll_fn = iagree_poll;
    r->free_fn = iagree_free;
    r->status.MPI_ERROR = MPI_SUCCESS;
    mpi_lock();
    int done = iagree_poll(r);
    if (done)
        mpi_req_complete(r);
    mpi_unlock();
    if (!done)
        mpi_req_add_poll(r);
    *request = r;
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_iagree)

/* ---- shrink --------------------------------------------------------------------- */

/* The members of group g of comm (its first member is member off) that
 * decision d did not find failed, in g's order. */
static int group_alive(const ft_dec_t *d, MPI_Group g, int off,
                       MPI_Group *alive)
{
    int *world = malloc((size_t)g->size * sizeof(int)), n = 0, rc;

    if (world == NULL)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < g->size; r++)
        if (!base_bitmap_test(d->failed, (size_t)(off + r)))
            world[n++] = g->world[r];
    rc = mpi_group_new(n, world, alive);
    free(world);
    return rc;
}

/* The groups of the communicator shrink makes from comm after decision
 * d: the survivors of comm's group, and for an intercommunicator those of
 * its remote group (else *remote stays MPI_GROUP_NULL).  On an error,
 * *why says it. */
static int survivors(MPI_Comm comm, const ft_dec_t *d, MPI_Group *group,
                     MPI_Group *remote, const char **why)
{
    int first = mpi_ft_local_first(comm), rc;

    *why = "no memory for the survivors' groups";
    rc = group_alive(d, comm->group, first ? 0 : comm->remote_size, group);
    if (rc == MPI_SUCCESS && comm->is_inter)
        rc = group_alive(d, comm->remote_group, first ? comm->size : 0,
                         remote);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((*group)->rank == MPI_UNDEFINED) {
        *why = "the survivors agreed that this process failed";
        return MPIX_ERR_PROC_FAILED;
    }
    if (comm->is_inter && (*remote)->size == 0) {
        *why = "every member of the remote group failed: an "
               "intercommunicator needs one on each side";
        return MPIX_ERR_PROC_FAILED;
    }
    *why = "building the communicator failed";
    return MPI_SUCCESS;
}

int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    const char *fn = "MPIX_Comm_shrink";
    mpi_ctx_try_t t;
    mpi_ctx_mask_t agreed;
    uint64_t vals[FT_NV];
    ft_dec_t *d = NULL;
    uint32_t ctx = 0;
    int rc = check_agree(comm, fn);
    MPI_Group group = MPI_GROUP_NULL, remote = MPI_GROUP_NULL;
    const char *why = "";

    if (rc != MPI_SUCCESS)
        return rc;
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    _Static_assert(FT_NV == MPI_CTX_WORDS + 2, "a context mask per agreement");
    t.waiting = 0;
    t.nonblocking = 0;
    /* One agreement decides both the survivors and a context id free in
     * all of them; another round when some member was busy allocating. */
    do {
        mpi_ctx_begin(&t, mpi_ctx_key(comm->ctx, MPI_CTX_NTH_BLOCKING));
        vals[0] = 1;
        memcpy(vals + 1, t.mask.free, sizeof(t.mask.free));
        vals[FT_NV - 1] = t.mask.busy ? 0 : ~(uint64_t)0;
        rc = agree_blocking(comm, vals, &d);
        if (rc != MPI_SUCCESS) {
            mpi_ctx_end(&t, &(mpi_ctx_mask_t){{0}, 0}, 0, &ctx);
            return mpi_error(comm, rc, fn, "agreement failed: %s",
                             shoal_error_detail());
        }
        memcpy(agreed.free, d->vals + 1, sizeof(agreed.free));
        agreed.busy = d->vals[FT_NV - 1] != ~(uint64_t)0;
        rc = mpi_ctx_end(&t, &agreed, 1, &ctx);
    } while (rc == -1);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "every context id is in use");
    rc = survivors(comm, d, &group, &remote, &why);
    if (rc == MPI_SUCCESS)
        rc = mpi_comm_make(comm, group, remote, ctx, newcomm);
    else
        mpi_ctx_free(ctx);
    if (group != MPI_GROUP_NULL)
        mpi_group_release(group);
    if (remote != MPI_GROUP_NULL)
        mpi_group_release(remote);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "%s", why);
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_shrink)

/* ---- finalize ------------------------------------------------------------------- */

void mpi_ft_finalize(void)
{
    uint64_t vals[FT_NV];
    ft_dec_t *d;

    if (!mpi_ft.on || am.deaths == 0)
        return;
    flag_vals(MPI_COMM_WORLD, vals, 1);
    if (agree_blocking(MPI_COMM_WORLD, vals, &d) != MPI_SUCCESS)
        base_warn("mpi", "MPI_Finalize: the survivors' agreement failed: %s",
                  shoal_error_detail());
}
