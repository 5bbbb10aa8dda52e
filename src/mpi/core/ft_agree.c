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
    uint64_t seq; /* the agreement id (ft_proto.h) */
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

static ft_dec_t *decision(mpi_ft_comm_t *f, uint64_t seq)
{
    ft_dec_t *d = &f->dec[seq & 1];

    return d->valid && d->seq == seq ? d : NULL;
}

static ft_slot_t *slot_of(mpi_ft_comm_t *f, uint64_t seq, int r)
{
    return &f->slots[(size_t)(seq & 1) * (size_t)f->size + (size_t)r];
}

/* Is agreement id a later than b (a later number, or the same number's
 * later round)?  Numbers wrap: compared as a window of 2^31. */
static int later(uint64_t a, uint64_t b)
{
    uint32_t na = (uint32_t)a, nb = (uint32_t)b;

    if (na != nb)
        return (uint32_t)(na - nb) < UINT32_C(0x80000000);
    return a >> 32 > b >> 32;
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

/* The agreement of id seq in progress on comm, for polls and decisions
 * (nonblocking ones may overlap: at most two per communicator, as
 * decisions are kept for the last two). */
static ft_op_t *current_of(MPI_Comm comm, uint64_t seq);
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
    uint64_t seq = w[2];
    int from = (int)w[3];
    ft_dec_t *d;

    (void)src;
    if (f == NULL || len < frame_words(f) * sizeof(uint64_t) || from < 0 ||
        from >= f->size)
        return;
    d = decision(f, seq);
    if (kind == FT_CONTRIB) {
        ft_slot_t *s = slot_of(f, seq, from);
        if (s->valid && later(s->seq, seq))
            return; /* stale: that member is past it */
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
        ft_op_t *op = current_of(comm, seq);
        if (d != NULL)
            return;
        /* A member takes it only from the coordinator it last gave its
         * contribution to; a coordinator from anyone (a poll's answer). */
        if (op != NULL && op->seq == seq && op->sent_to >= 0 &&
            from != op->sent_to && lowest_alive(comm) != f->me)
            return;
        d = &f->dec[seq & 1];
        if (d->valid && later(d->seq, seq))
            return; /* stale: a later decision others may still ask for */
        d->seq = seq;
        d->valid = 1;
        d->err = (w[0] & FT_F_ERR) != 0;
        memcpy(d->vals, w + FT_HDR, sizeof(d->vals));
        memcpy(d->failed, w + FT_HDR + FT_NV,
               (size_t)f->bmw * sizeof(uint64_t));
        adopt_failures(comm, d);
    } else if (kind == FT_POLL) {
        ft_op_t *op = current_of(comm, seq);
        if (d != NULL)
            send_decision(comm, f, d, from);
        else if (op != NULL && op->seq == seq && from > op->sent_to) {
            op->sent_to = from;
            send_contrib(op, f, from);
        }
    }
}

/* ---- one agreement -------------------------------------------------------------- */

/* The agreements in progress in this process, on every communicator
 * (grown as needed: each communicator has at most FT_PENDING_MAX). */
static ft_op_t **current;
static int ncurrent;

static ft_op_t *current_of(MPI_Comm comm, uint64_t seq)
{
    for (int i = 0; i < ncurrent; i++)
        if (current[i] != NULL && current[i]->comm == comm &&
            current[i]->seq == seq)
            return current[i];
    return NULL;
}

static void current_set(ft_op_t *op, int on)
{
    for (int i = 0; i < ncurrent; i++) {
        if (on && current[i] == NULL) {
            current[i] = op;
            return;
        }
        if (!on && current[i] == op) {
            current[i] = NULL;
            return;
        }
    }
    if (!on)
        return;
    int n = ncurrent ? 2 * ncurrent : 16;
    ft_op_t **grown = realloc(current, (size_t)n * sizeof(*grown));
    if (grown == NULL)
        base_fatal("mpi: no memory for the agreements in progress");
    memset(grown + ncurrent, 0, (size_t)(n - ncurrent) * sizeof(*grown));
    grown[ncurrent] = op;
    current = grown;
    ncurrent = n;
}

/* Count an agreement or shrink the program starts on comm, or refuse it
 * when FT_PENDING_MAX are pending (engine lock held); MPI_SUCCESS,
 * MPI_ERR_NO_MEM or MPI_ERR_UNSUPPORTED_OPERATION. */
static int pending_take(MPI_Comm comm, mpi_ft_comm_t **f_p)
{
    mpi_ft_comm_t *f = mpi_ft_comm(comm);

    *f_p = f;
    if (f == NULL)
        return MPI_ERR_NO_MEM;
    if (f->pending >= FT_PENDING_MAX)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    f->pending++;
    return MPI_SUCCESS;
}

static void pending_drop(MPI_Comm comm)
{
    mpi_lock();
    if (comm->ft != NULL && comm->ft->pending > 0)
        comm->ft->pending--;
    mpi_unlock();
}

/* The message of a refused or failed start. */
static int begin_error(MPI_Comm comm, int rc, const char *fn)
{
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return mpi_error(comm, rc, fn,
                         "%d agreements or shrinks (MPIX_Comm_iagree, "
                         "MPIX_Comm_ishrink) are pending on this "
                         "communicator already, the most there may be: "
                         "complete one (MPI_Wait, MPI_Test) first",
                         FT_PENDING_MAX);
    return mpi_error(comm, rc, fn, "no memory");
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

/* Start agreement seq on comm with op (engine lock held). */
static void op_init(ft_op_t *op, MPI_Comm comm, const uint64_t *vals,
                    uint64_t seq)
{
    memset(op, 0, sizeof(*op));
    op->comm = comm;
    op->sent_to = -1;
    op->seq = seq;
    memcpy(op->vals, vals, sizeof(op->vals));
    current_set(op, 1);
}

/* Start comm's next agreement (its number taken here, in call order),
 * counted among comm's pending ones (pending_drop when it is over). */
static int op_begin(ft_op_t *op, MPI_Comm comm, const uint64_t *vals)
{
    mpi_ft_comm_t *f;

    mpi_lock();
    int rc = pending_take(comm, &f);
    if (rc == MPI_SUCCESS)
        op_init(op, comm, vals, f->seq++);
    mpi_unlock();
    return rc;
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
    } else {
        op_end(&op);
        *dec_p = op.dec;
    }
    pending_drop(comm);
    return rc;
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
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION || rc == MPI_ERR_NO_MEM)
        return begin_error(comm, rc, fn);
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
        pending_drop(a->op.comm);
        mpi_comm_release(a->op.comm);
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
    int rc;

    /* No request when it fails (a following MPI_Wait is harmless). */
    if (request != NULL)
        *request = MPI_REQUEST_NULL;
    rc = check_agree(comm, fn);
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
        return begin_error(comm, rc, fn);
    }
    mpi_ref_inc(&comm->refs); /* a comm freed meanwhile lives till then */
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

/*
 * Shrink, blocking or not, as one state machine (engine lock held in
 * shrink_poll).  Each round is one agreement that decides both the
 * survivors and a context id free in all of them (the AND of their free
 * slots); when some member was busy allocating another id, all of them
 * see it in the same decision and run another round.  The rounds share
 * the agreement number taken at the call, in call order with the
 * communicator's other agreements, and differ in the round above bit 32
 * of the agreement id: a later agreement on the same communicator,
 * started while a nonblocking shrink is still in its rounds, keeps the
 * number it took at its own call on every member.
 */
_Static_assert(FT_NV == MPI_CTX_WORDS + 2, "a context mask per agreement");

typedef struct shrink {
    ft_op_t op;          /* the agreement of this round */
    mpi_ctx_try_t t;     /* this round's claim on the context-id bitmap */
    MPI_Comm comm;
    MPI_Comm *newcomm;   /* the user's, written at the end */
    uint64_t key;        /* mpi_ctx_key of this shrink */
    uint32_t num;        /* the agreement number */
    uint32_t round;
    int done, err;       /* finished; its error class */
    const char *why;     /* what failed, for the message */
} shrink_t;

static void shrink_vals(shrink_t *s, uint64_t *vals)
{
    for (int k = 0; k < FT_NV; k++)
        vals[k] = ~(uint64_t)0;
    /* The epoch clock, inverted: the AND of the inverses is the inverse
     * of the OR, at least the largest, which is what the epoch needs
     * (mpi_ctx_epoch; other agreements take the largest itself). */
    vals[0] = ~s->t.mask.epoch;
    memcpy(vals + 1, s->t.mask.free, sizeof(s->t.mask.free));
    vals[FT_NV - 1] = s->t.mask.busy ? 0 : ~(uint64_t)0;
}

/* Claim the bitmap (or say busy) and start this round's agreement. */
static void shrink_round(shrink_t *s)
{
    uint64_t vals[FT_NV];

    mpi_ctx_begin(&s->t, s->key);
    shrink_vals(s, vals);
    op_init(&s->op, s->comm, vals, (uint64_t)s->round << 32 | s->num);
}

/* Begin a shrink of comm: its agreement number is taken now. */
static int shrink_begin(shrink_t *s, MPI_Comm comm, MPI_Comm *newcomm,
                        uint64_t key)
{
    mpi_ft_comm_t *f;

    memset(s, 0, sizeof(*s));
    s->comm = comm;
    s->newcomm = newcomm;
    s->key = key;
    s->t.nonblocking = 1; /* rounds run inside progress: no yield there */
    s->why = "";
    mpi_lock();
    int rc = pending_take(comm, &f);
    if (rc == MPI_SUCCESS) {
        s->num = f->seq++;
        shrink_round(s);
    }
    mpi_unlock();
    return rc;
}

/* Give up a shrink that has not finished (its wait failed, or the
 * request was freed): drop the agreement and the bitmap claim. */
static void shrink_abandon(shrink_t *s)
{
    uint32_t ctx;

    if (s->done)
        return;
    current_set(&s->op, 0);
    mpi_ctx_end(&s->t, &(mpi_ctx_mask_t){{0}, 0, 0, 0}, 0, &ctx);
    s->done = 1;
}

/* Advance the shrink; 1 once it has finished, with s->err (and the new
 * communicator in *s->newcomm on success). */
static int shrink_poll(shrink_t *s)
{
    MPI_Group group = MPI_GROUP_NULL, remote = MPI_GROUP_NULL;
    mpi_ctx_mask_t agreed;
    ft_dec_t *d;
    uint32_t ctx = 0;
    int rc;

    if (s->done)
        return 1;
    if (!step(&s->op))
        return 0;
    d = s->op.dec;
    current_set(&s->op, 0);
    adopt_failures(s->comm, d);
    memcpy(agreed.free, d->vals + 1, sizeof(agreed.free));
    agreed.busy = d->vals[FT_NV - 1] != ~(uint64_t)0;
    agreed.wide = 0;
    agreed.epoch = ~d->vals[0];
    rc = mpi_ctx_end(&s->t, &agreed, 1, &ctx);
    if (rc == -1) { /* a member was busy: every member runs another round */
        s->round++;
        base_debug("mpi", "shrink: a member was busy allocating a context "
                   "id: round %u", s->round);
        shrink_round(s);
        return 0;
    }
    s->done = 1;
    if (rc != MPI_SUCCESS) {
        s->err = rc;
        s->why = "every context id is in use";
        return 1;
    }
    rc = survivors(s->comm, d, &group, &remote, &s->why);
    if (rc == MPI_SUCCESS)
        rc = mpi_comm_make(s->comm, group, remote, ctx, s->newcomm);
    else
        mpi_ctx_free(ctx);
    if (group != MPI_GROUP_NULL)
        mpi_group_release(group);
    if (remote != MPI_GROUP_NULL)
        mpi_group_release(remote);
    s->err = rc;
    return 1;
}

static int shrink_done(void *arg)
{
    return shrink_poll(arg);
}

int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    const char *fn = "MPIX_Comm_shrink";
    shrink_t s;
    int rc = check_agree(comm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    rc = shrink_begin(&s, comm, newcomm,
                      mpi_ctx_key(comm->ctx, MPI_CTX_NTH_BLOCKING));
    if (rc != MPI_SUCCESS)
        return begin_error(comm, rc, fn);
    rc = mpi_wait_until(shrink_done, &s);
    pending_drop(comm);
    if (rc != MPI_SUCCESS) {
        mpi_lock();
        shrink_abandon(&s);
        mpi_unlock();
        return mpi_error(comm, rc, fn, "agreement failed: %s",
                         shoal_error_detail());
    }
    if (s.err != MPI_SUCCESS)
        return mpi_error(comm, s.err, fn, "%s", s.why);
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_shrink)

/* ---- nonblocking shrink --------------------------------------------------------- */

static int ishrink_poll(MPI_Request r)
{
    shrink_t *s = r->extra;

    if (!shrink_poll(s))
        return 0;
    r->status.MPI_ERROR = s->err;
    if (s->err != MPI_SUCCESS) /* MPI_Wait says only the class */
        base_debug("mpi", "MPIX_Comm_ishrink: %s", s->why);
    return 1;
}

static int ishrink_free(MPI_Request r)
{
    shrink_t *s = r->extra;

    if (s != NULL) {
        shrink_abandon(s);
        pending_drop(s->comm);
        mpi_comm_release(s->comm);
        free(s);
    }
    r->extra = NULL;
    return MPI_SUCCESS;
}

int PMPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm,
                       MPI_Request *request)
{
    const char *fn = "MPIX_Comm_ishrink";
    shrink_t *s;
    MPI_Request r;
    uint32_t nth;
    int rc, done;

    /* No request when it fails (a following MPI_Wait is harmless). */
    if (request != NULL)
        *request = MPI_REQUEST_NULL;
    rc = check_agree(comm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newcomm == NULL || request == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "%s is NULL",
                         newcomm == NULL ? "newcomm" : "request");
    s = calloc(1, sizeof(*s));
    r = s != NULL ? mpi_req_alloc(MPI_REQ_COLL, comm) : NULL;
    if (r == NULL) {
        free(s);
        return mpi_error(comm, MPI_ERR_NO_MEM, fn, "no memory");
    }
    *newcomm = MPI_COMM_NULL; /* until the request completes */
    /* Its own key among the context agreements in flight, after those of
     * the nonblocking constructions started on comm before it (as idup's). */
    nth = comm->next_child++;
    if (nth == MPI_CTX_NTH_BLOCKING)
        nth = comm->next_child++;
    rc = shrink_begin(s, comm, newcomm, mpi_ctx_key(comm->ctx, nth));
    if (rc != MPI_SUCCESS) {
        free(s);
        mpi_req_free(r);
        return begin_error(comm, rc, fn);
    }
    mpi_ref_inc(&comm->refs);
    r->extra = s;
    r->poll_fn = ishrink_poll;
    r->free_fn = ishrink_free;
    r->status.MPI_ERROR = MPI_SUCCESS;
    mpi_lock();
    done = ishrink_poll(r);
    if (done)
        mpi_req_complete(r);
    mpi_unlock();
    if (!done)
        mpi_req_add_poll(r);
    *request = r;
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Comm_ishrink)

/* ---- finalize ------------------------------------------------------------------- */

void mpi_ft_finalize(void)
{
    uint64_t vals[FT_NV];
    ft_dec_t *d;

    /* Also when no death is known here yet: a rank that has not seen one
     * would otherwise leave through the final barrier as soon as a death
     * ends it, while a survivor is still working, and its exit would be
     * taken for a failure there. */
    if (!mpi_ft.on)
        return;
    flag_vals(MPI_COMM_WORLD, vals, 1);
    if (agree_blocking(MPI_COMM_WORLD, vals, &d) != MPI_SUCCESS)
        base_warn("mpi", "MPI_Finalize: the survivors' agreement failed: %s",
                  shoal_error_detail());
    mpi_ft_abandoned_finalize();
}
