/*
 * The point-to-point engine: matching, and the eager and rendezvous
 * protocols over the active-message layer.
 *
 * Matching.  Posted receives with a specific (source, tag) live in one
 * hash table keyed by (context, source, tag); those with a wildcard live in
 * their context's list, in post order.  An arriving message looks at its
 * bucket and at the wildcard list and takes the earlier-posted candidate
 * (post sequence numbers), which keeps MPI's order while the common case
 * costs one bucket probe.  Unexpected messages live in a second table and
 * in their context's arrival list: a specific receive probes the bucket, a
 * wildcard receive walks the arrival list.
 *
 * Eager.  Messages up to SHOAL_MPI_EAGER travel in one medium frame.  Each
 * sender may have at most SHOAL_MPI_EAGER_WINDOW bytes (plus 64 per message)
 * not yet consumed by a given receiver; past that it uses rendezvous, so an
 * unexpected flood costs the receiver bounded memory.  Receivers return
 * consumed bytes in batches (or with the ack of a synchronous send).
 *
 * Rendezvous.  The sender announces (RTS) its buffer's address.  On the
 * same host the receiver reads it in one copy (process_vm_readv) straight
 * into the user buffer, then acks (FIN).  Otherwise, or for non-contiguous
 * senders, the receiver answers CTS and the sender pushes fragments from
 * its progress loop; the receiver unpacks each as it lands (or, into a
 * contiguous buffer over the datagram wire, finds it there: place_data).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "am/am.h"
#include "mpi/core/ckpt_objs.h"
#include "mpi/core/ft.h"
#include "mpi/p2p/p2p_engine.h"
#include "wire/wire.h"

mpi_p2p_cfg_t mpi_p2p_cfg;

#define NBUCKETS 1024u
#define MSG_COST 64u /* eager bytes charged per message on top of its data */

static mpi_matchq_t *mq_table[MPI_CTX_MAX];
static base_list_t posted_hash[NBUCKETS], unexp_hash[NBUCKETS];
static uint64_t post_seq;
static uint64_t *ecred_used; /* by world rank: eager bytes not yet returned */
static uint64_t *ecred_owed; /* by world rank: consumed, not yet returned */
mpi_p2p_queues_t mpi_pq; /* work for mpi_progress_extra (p2p_engine.h) */
static char *pack_buf;        /* eager staging for non-contiguous sends */

/*
 * Unexpected messages of up to UMSG_SMALL payload bytes come from a free
 * list, so a small message that arrives before its receive costs no
 * malloc once the list has warmed up; larger ones use malloc.
 */
#define UMSG_SMALL 256
static mpi_umsg_t *umsg_cache[2]; /* [0] no payload, [1] up to UMSG_SMALL */

/* The link of a cached umsg sits in its first bytes (hlink is unused). */
static inline mpi_umsg_t **umsg_next(mpi_umsg_t *u)
{
    return (mpi_umsg_t **)(void *)&u->hlink.next;
}

static mpi_umsg_t *umsg_alloc(size_t carried)
{
    int c = carried > 0;
    mpi_umsg_t *u;

    if (carried > UMSG_SMALL)
        return malloc(sizeof(*u) + carried);
    u = umsg_cache[c];
    if (u != NULL) {
        umsg_cache[c] = *umsg_next(u);
        return u;
    }
    return malloc(sizeof(*u) + (c ? UMSG_SMALL : 0));
}

void mpi_umsg_free(mpi_umsg_t *u)
{
    size_t carried = u->rdv ? 0 : (size_t)u->bytes;
    int c = carried > 0;

    if (carried > UMSG_SMALL) {
        free(u);
        return;
    }
    *umsg_next(u) = umsg_cache[c];
    umsg_cache[c] = u;
}

static void umsg_cache_fini(void)
{
    for (int c = 0; c < 2; c++)
        while (umsg_cache[c] != NULL) {
            mpi_umsg_t *next = *umsg_next(umsg_cache[c]);
            free(umsg_cache[c]);
            umsg_cache[c] = next;
        }
}

static inline unsigned bucket_of(uint32_t ctx, int src, int tag)
{
    uint64_t h = ((uint64_t)ctx * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)(uint32_t)src * 0xc2b2ae3d27d4eb4full) ^
                 ((uint64_t)(uint32_t)tag * 0x165667b19e3779f9ull);
    return (unsigned)(h >> 54) & (NBUCKETS - 1);
}

static inline uint32_t req_ctx(MPI_Request r)
{
    return r->comm->ctx + (uint32_t)r->ctx_off;
}

/* ---- match queues ---------------------------------------------------------- */

static void drop_revoked(const mpi_in_t *in);

/* A new communicator takes ctx, of epoch ep: what q holds for earlier
 * ones that had it (late messages of a revoked or failed one, whose
 * context id was freed) goes, answered as a revoked communicator's
 * (drop_revoked); what came early for this one stays. */
static void matchq_renew(mpi_matchq_t *q, uint16_t ep)
{
    base_list_t *l = q->unexp.next;

    while (l != &q->unexp) {
        mpi_umsg_t *u = BASE_CONTAINER_OF(l, mpi_umsg_t, qlink);
        l = l->next;
        if (u->ep != ep) {
            mpi_in_t in;
            base_list_remove(&u->hlink);
            base_list_remove(&u->qlink);
            mpi_in_of_umsg(&in, u);
            drop_revoked(&in);
            mpi_umsg_free(u);
        }
    }
    q->revoked = 0;
    q->quiet = 0;
    q->ep = ep;
}

mpi_matchq_t *mpi_matchq_get(uint32_t ctx)
{
    mpi_matchq_t *q;

    if (ctx >= MPI_CTX_MAX)
        return NULL;
    q = mq_table[ctx];
    if (q == NULL) {
        q = calloc(1, sizeof(*q));
        if (q == NULL)
            return NULL;
        q->ctx = ctx;
        q->ep = mpi_ep_of(ctx);
        base_list_init(&q->posted_wild);
        base_list_init(&q->unexp);
        mq_table[ctx] = q;
    } else if (q->refs == 0) {
        matchq_renew(q, mpi_ep_of(ctx)); /* a new communicator has it */
    }
    q->refs++;
    return q;
}

uint16_t mpi_matchq_ep(const mpi_matchq_t *q)
{
    return q->ep;
}

static void umsg_unlink(mpi_umsg_t *u)
{
    base_list_remove(&u->hlink);
    base_list_remove(&u->qlink);
}

void mpi_matchq_put(mpi_matchq_t *q)
{
    if (q == NULL || --q->refs > 0 || q->revoked)
        return;
    /* Messages nobody received on a freed communicator: the program was
     * erroneous; drop them rather than leak. */
    while (!base_list_empty(&q->unexp)) {
        mpi_umsg_t *u = BASE_CONTAINER_OF(q->unexp.next, mpi_umsg_t, qlink);
        if (!q->quiet)
            base_warn("mpi", "dropping an unreceived message from rank %d "
                             "(tag %d) on a freed communicator",
                      u->src, u->tag);
        umsg_unlink(u);
        mpi_umsg_free(u);
    }
    mq_table[q->ctx] = NULL;
    free(q);
}

/* Checkpoint (core/ckpt.c): posted receives and unexpected messages on
 * every context but skip and skip + 1 (engine lock held). */
void mpi_p2p_pending(uint32_t skip, long *posted,
                     void (*fn)(void *arg, const mpi_umsg_t *u), void *arg)
{
    for (uint32_t c = 0; c < MPI_CTX_MAX; c++) {
        const mpi_matchq_t *q = mq_table[c];
        if (q == NULL || c == skip || c == skip + 1)
            continue;
        *posted += (long)q->nposted;
        for (const base_list_t *l = q->unexp.next; l != &q->unexp;
             l = l->next)
            fn(arg, BASE_CONTAINER_OF(l, mpi_umsg_t, qlink));
    }
}

/* A queue for a context whose communicator does not exist here yet. */
static mpi_matchq_t *matchq_for_arrival(uint32_t ctx)
{
    mpi_matchq_t *q = ctx < MPI_CTX_MAX ? mq_table[ctx] : NULL;

    if (BASE_LIKELY(q != NULL))
        return q;
    q = mpi_matchq_get(ctx);
    if (q != NULL)
        q->refs = 0; /* the communicator's build takes the first ref */
    return q;
}

/* ---- control messages ---------------------------------------------------------- */

/* A frame of a peer taken for dead that names one of our requests: that
 * request has failed, or fails at its next look (request.c,
 * check_inflight), and may be gone; the frame is ignored (am_place does
 * not place its data either). */
static inline int from_dead(const shoal_token_t *t)
{
    return BASE_UNLIKELY(am.deaths != 0) && am.peers[t->src].dead;
}

static void h_ack(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                  size_t len);
static void h_part(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                   size_t len);

/* A control frame that could not go at once (no room, or we were in a
 * handler that had already replied); sent from the progress loop. */
typedef struct ctl_msg {
    base_list_t link;
    int world;
    unsigned handler;
    uint64_t args[4];
} ctl_msg_t;


static void ctl_run_local(unsigned handler, const uint64_t *args)
{
    struct shoal_token self = {NULL, mpi.world_rank, 1, 0};

    if (handler == MPI_H_ACK)
        h_ack(&self, args, 4, NULL, 0);
    else if (handler == MPI_H_PART)
        h_part(&self, args, 4, NULL, 0);
    else if (handler == MPI_H_TBAR)
        mpi_tol_handler(&self, args, 4, NULL, 0);
}

static void ctl_enqueue(int world, unsigned handler, const uint64_t *args)
{
    ctl_msg_t *m = malloc(sizeof(*m));

    if (m == NULL)
        base_fatal("mpi: no memory for a control message");
    m->world = world;
    m->handler = handler;
    memcpy(m->args, args, sizeof(m->args));
    base_list_push_back(&mpi_pq.ctl, &m->link);
}

/* Send queued control frames while there is room. */
static void ctl_flush(void)
{
    while (!base_list_empty(&mpi_pq.ctl)) {
        ctl_msg_t *m = BASE_CONTAINER_OF(mpi_pq.ctl.next, ctl_msg_t, link);
        int status = am_request_try(mpi.ep->index, m->world, m->handler,
                                    NULL, 0, m->args, 4);
        if (status == SHOAL_ERR_AGAIN)
            return;
        if (status != SHOAL_OK && !SHOAL_ERR_IS_LINK_FAILURE(status))
            base_error("mpi", "control message to rank %d failed: %s",
                       m->world, shoal_error_detail());
        base_list_remove(&m->link);
        free(m);
    }
}

/* Send a short control frame to world: as the reply through token when
 * given (inside its handler), a direct call for ourselves, else a request
 * (queued when it cannot go now). */
static void send_ctl_to(int world, shoal_token_t *token, unsigned handler,
                        uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
    uint64_t args[4] = {a0, a1, a2, a3};
    int status;

    if (world == mpi.world_rank) {
        ctl_run_local(handler, args);
        return;
    }
    if (token != NULL)
        status = shoal_am_reply_short(token, handler, args, 4);
    else if (!am.in_handler && mpi.in_wait == 0 && base_list_empty(&mpi_pq.ctl))
        status = shoal_am_request_short(mpi.ep, world, handler, args, 4);
    else if (base_list_empty(&mpi_pq.ctl))
        status = am_request_try(mpi.ep->index, world, handler, NULL, 0,
                                args, 4);
    else
        status = SHOAL_ERR_AGAIN;
    if (status == SHOAL_ERR_AGAIN) {
        ctl_enqueue(world, handler, args);
        return;
    }
    if (status != SHOAL_OK && !SHOAL_ERR_IS_LINK_FAILURE(status))
        base_error("mpi", "control message to rank %d failed: %s", world,
                   shoal_error_detail());
}

void mpi_send_ctl(int world, unsigned handler, uint64_t a0, uint64_t a1,
                  uint64_t a2, uint64_t a3)
{
    send_ctl_to(world, NULL, handler, a0, a1, a2, a3);
}

int mpi_p2p_hold_sync_acks;

static void send_ctl(const mpi_in_t *in, unsigned handler, uint64_t a0,
                     uint64_t a1, uint64_t a2)
{
    send_ctl_to(in->src_world, in->token, handler, a0, a1, a2, 0);
}

/* The ack of a message in: its sender's request sreq (0: none), credits,
 * kind.  A message a restart brought back names a request of the job
 * before: MPI_ACK_RESTORED tells the sender to look it up among those
 * that came back (h_ack), never to take the id for a pointer. */
static void send_ack(const mpi_in_t *in, uint64_t sreq, uint64_t give,
                     uint64_t kind)
{
    send_ctl_to(in->src_world, in->token, MPI_H_ACK, sreq, give, kind,
                (in->flags & MPI_MF_RESTORED) ? MPI_ACK_RESTORED : 0);
}

/* An eager message was consumed: return credits (batched) and ack a
 * synchronous send. */
static void consumed(const mpi_in_t *in)
{
    uint64_t give = 0;

    if (in->src_world != mpi.world_rank &&
        !(in->flags & (MPI_MF_RESTORED | MPI_MF_PULLED))) {
        uint64_t owed = ecred_owed[in->src_world] +
                        (uint64_t)in->bytes + MSG_COST;
        if (owed >= mpi_p2p_cfg.eager_window / 2 ||
            (in->flags & MPI_MF_SYNC)) {
            give = owed;
            owed = 0;
        }
        ecred_owed[in->src_world] = owed;
    }
    int sync = (in->flags & MPI_MF_SYNC) && !mpi_p2p_hold_sync_acks;
    if (give > 0 || sync)
        send_ack(in, sync ? in->sreq : 0, give, MPI_ACK_SYNC);
}

/* ---- delivery into a receive ------------------------------------------------------ */

static inline MPI_Count recv_capacity(MPI_Request req)
{
    return req->count * req->dt->size;
}

/* Copy n stream bytes at stream offset off into the receive buffer. */
static void recv_put(MPI_Request req, MPI_Count off, const void *data,
                     MPI_Count n)
{
    if (n <= 0)
        return;
    if (BASE_LIKELY(mpi_dt_contig(req->dt))) {
        char *dst = (char *)req->buf + req->dt->true_lb + off;
        if (dst != data) /* else a wire received it there (place_data) */
            base_copy(dst, data, (size_t)n);
    } else {
        mpi_dt_cursor_t c;
        mpi_dt_cursor_init(&c, req->dt, req->count, req->buf, off);
        mpi_dt_cursor_unpack(&c, data, n);
    }
}

/* Set the status of a receive for a message of `bytes`; returns how many
 * bytes fit. */
static MPI_Count recv_status(MPI_Request req, const mpi_in_t *in)
{
    MPI_Count cap = recv_capacity(req);
    MPI_Count n = in->bytes <= cap ? in->bytes : cap;

    req->status.MPI_SOURCE = in->src;
    req->status.MPI_TAG = in->tag;
    req->status.shoal_count = n;
    req->status.MPI_ERROR = in->bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    return n;
}

static int cma_read(int pid, const struct iovec *local, int nlocal,
                    uint64_t addr, MPI_Count n)
{
    struct iovec remote = {(void *)(uintptr_t)addr, (size_t)n};
    ssize_t got = process_vm_readv(pid, local, (unsigned long)nlocal, &remote,
                                   1, 0);

    return got == (ssize_t)n ? 0 : -1;
}

/* Pull a rendezvous payload from the sender's memory; 0 done, -1 refused. */
static int rdv_pull(MPI_Request req, const mpi_in_t *in, MPI_Count n)
{
    int pid;

    if (in->src_world == mpi.world_rank) {
        recv_put(req, 0, (const void *)(uintptr_t)in->saddr, n);
        return 0;
    }
    if (!mpi_p2p_cfg.cma || (pid = wire_shm_peer_pid(in->src_world)) == 0)
        return -1;
    if (mpi_dt_contig(req->dt)) {
        struct iovec l = {(char *)req->buf + req->dt->true_lb, (size_t)n};
        return n == 0 ? 0 : cma_read(pid, &l, 1, in->saddr, n);
    }
    mpi_dt_cursor_t c;
    struct iovec iov[64];
    MPI_Count done = 0;
    mpi_dt_cursor_init(&c, req->dt, req->count, req->buf, 0);
    while (done < n) {
        int niov = 0;
        MPI_Count got = mpi_dt_cursor_iov(&c, iov, 64, n - done, &niov);
        if (got <= 0 || cma_read(pid, iov, niov, in->saddr + (uint64_t)done,
                                 got) != 0) {
            if (done > 0)
                base_error("mpi", "single-copy read from rank %d failed "
                                  "midway: %s", in->src_world,
                           strerror(errno));
            return -1;
        }
        done += got;
    }
    return 0;
}

/*
 * Large contiguous rendezvous on one host: both processes copy.  The
 * receiver asks the sender (COOP) to write the tail of the message into
 * the receive buffer with process_vm_writev while it reads the head with
 * process_vm_readv; two cores move the data.  The receiver is done when
 * its half is read and the sender's PART says the tail landed; the sender
 * when its tail is written and the receiver's FIN says the head was read.
 * Returns 1 when it took the message.
 *
 * Not once this process has run a tolerant barrier (SHOAL_BARRIER=tolerant):
 * the receive would then end only at the sender's next MPI call, and the
 * sender may be computing or descheduled far ahead of us, which is what the
 * tolerant barrier lets it do; a receive that waits for it puts back the
 * synchronization the barrier took out (measured in docs/PERFORMANCE.md,
 * Pakin's experiment).  The receiver then reads the whole message alone.
 *
 * Nor when the sender may not answer soon: an MPI_Isend whose sender went
 * on computing would leave the receive waiting for its next MPI call.  A
 * blocking send says in its RTS that it waits (MPI_MF_HELP); otherwise
 * the sender helps only if it is waiting inside the library when its RTS
 * is matched (wire_shm_peer_waiting: a window of Isends whose sender has
 * reached its MPI_Waitall).
 */
static int coop_pull(MPI_Request req, const mpi_in_t *in, MPI_Count n)
{
    MPI_Count split;
    int pid;

    if (mpi_p2p_cfg.coop_min == 0 || n < (MPI_Count)mpi_p2p_cfg.coop_min ||
        mpi_tol_started != NULL ||
        !mpi_dt_contig(req->dt) || in->src_world == mpi.world_rank ||
        (!(in->flags & MPI_MF_HELP) && !wire_shm_peer_waiting(in->src_world)) ||
        (pid = wire_shm_peer_pid(in->src_world)) == 0)
        return 0;
    split = (n / 2) & ~(MPI_Count)4095;
    char *dst = (char *)req->buf + req->dt->true_lb;
    req->bytes = 0; /* bit 0: our head read; bit 1: their tail written */
    send_ctl_to(in->src_world, in->token, MPI_H_COOP, in->sreq,
                (uint64_t)(uintptr_t)dst, (uint64_t)split,
                (uint64_t)(uintptr_t)req);
    struct iovec l = {dst, (size_t)split};
    if (cma_read(pid, &l, 1, in->saddr, split) != 0) {
        base_error("mpi", "single-copy read from rank %d failed: %s",
                   in->src_world, strerror(errno));
        req->status.MPI_ERROR = MPI_ERR_OTHER;
    }
    send_ctl_to(in->src_world, NULL, MPI_H_ACK, in->sreq, 0, MPI_ACK_FIN,
                0);
    req->bytes |= 1;
    if (req->bytes == 3)
        mpi_req_complete(req);
    return 1;
}

/* Deliver an arrival (from the wire or the unexpected queue) into req. */
static void deliver(MPI_Request req, const mpi_in_t *in)
{
    MPI_Count n = recv_status(req, in);

    if (!in->rdv) {
        recv_put(req, 0, in->data, n);
        consumed(in);
        mpi_req_complete(req);
        return;
    }
    req->inflight = 1; /* until the data has moved (request.c) */
    if (in->saddr != 0 && coop_pull(req, in, n))
        return;
    if (in->saddr != 0 && rdv_pull(req, in, n) == 0) {
        send_ctl(in, MPI_H_ACK, in->sreq, 0, MPI_ACK_FIN);
        mpi_req_complete(req);
        return;
    }
    /* Ask the sender to push n bytes. */
    req->bytes = 0;
    send_ctl(in, MPI_H_CTS, in->sreq, (uint64_t)(uintptr_t)req, (uint64_t)n);
    if (n == 0) /* nothing will come */
        mpi_req_complete(req);
}

/* ---- matching --------------------------------------------------------------------- */

static MPI_Request match_posted(mpi_matchq_t *q, const mpi_in_t *in)
{
    MPI_Request best = NULL;

    if (q->nposted > q->nwild) {
        base_list_t *b = &posted_hash[bucket_of(in->ctx, in->src, in->tag)];
        for (base_list_t *e = b->next; e != b; e = e->next) {
            MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request,
                                              link);
            if (r->peer == in->src && r->tag == in->tag &&
                req_ctx(r) == in->ctx) {
                best = r;
                break;
            }
        }
    }
    if (q->nwild > 0) {
        for (base_list_t *e = q->posted_wild.next; e != &q->posted_wild;
             e = e->next) {
            MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request,
                                              link2);
            if ((r->peer == MPI_ANY_SOURCE || r->peer == in->src) &&
                (r->tag == MPI_ANY_TAG || r->tag == in->tag)) {
                if (best == NULL || r->seq < best->seq)
                    best = r;
                break;
            }
        }
    }
    if (best != NULL) {
        if (best->peer == MPI_ANY_SOURCE || best->tag == MPI_ANY_TAG) {
            base_list_remove(&best->link2);
            q->nwild--;
        } else {
            base_list_remove(&best->link);
        }
        q->nposted--;
    }
    return best;
}

mpi_umsg_t *mpi_umsg_from_in(const mpi_in_t *in)
{
    size_t carried = in->rdv ? 0 : (size_t)in->bytes;
    mpi_umsg_t *u = umsg_alloc(carried);

    if (u == NULL) {
        base_fatal("mpi: no memory for an unexpected message of %zu bytes "
                   "from rank %d",
                   carried, in->src_world);
    }
    u->ctx = in->ctx;
    u->ep = in->ep;
    u->src = in->src;
    u->tag = in->tag;
    u->flags = in->flags;
    u->rdv = in->rdv;
    u->src_world = in->src_world;
    u->sreq = in->sreq;
    u->saddr = in->saddr;
    u->bytes = in->bytes;
    u->stamp = 0;
    if (carried > 0)
        base_copy(u->data, in->data, carried);
    return u;
}

void mpi_in_of_umsg(mpi_in_t *in, const mpi_umsg_t *u)
{
    *in = (mpi_in_t){
        .ctx = u->ctx, .ep = u->ep, .src = u->src, .tag = u->tag,
        .flags = u->flags,
        .rdv = u->rdv, .src_world = u->src_world, .sreq = u->sreq,
        .saddr = u->saddr, .bytes = u->bytes, .data = u->data, .token = NULL,
    };
}

/*
 * SHOAL_FT: a message for a communicator revoked here is nobody's.  Its
 * eager credits go back, and a sender that waits on it (a rendezvous, a
 * synchronous send) is told it was dropped: that sender's request is in
 * flight (request.c) and would otherwise wait forever.
 */
static void drop_revoked(const mpi_in_t *in)
{
    int waits = in->rdv || (in->flags & MPI_MF_SYNC);
    uint64_t give = 0;

    if (!in->rdv && in->src_world != mpi.world_rank &&
        !(in->flags & (MPI_MF_RESTORED | MPI_MF_PULLED))) {
        give = ecred_owed[in->src_world] + (uint64_t)in->bytes + MSG_COST;
        ecred_owed[in->src_world] = 0;
    }
    if (give > 0 || waits)
        send_ack(in, waits ? in->sreq : 0, give, MPI_ACK_DROP);
}

void mpi_p2p_revoke(MPI_Comm comm)
{
    mpi_matchq_t *qs[2] = {comm->mq, comm->cq};

    for (int i = 0; i < 2; i++) {
        mpi_matchq_t *q = qs[i];
        if (q == NULL || q->revoked)
            continue;
        q->revoked = 1;
        while (!base_list_empty(&q->unexp)) {
            mpi_umsg_t *u = BASE_CONTAINER_OF(q->unexp.next, mpi_umsg_t,
                                              qlink);
            mpi_in_t in;
            umsg_unlink(u);
            mpi_in_of_umsg(&in, u);
            drop_revoked(&in);
            mpi_umsg_free(u);
        }
    }
}

void mpi_arrive(const mpi_in_t *in)
{
    mpi_matchq_t *q = matchq_for_arrival(in->ctx);
    MPI_Request req;
    mpi_umsg_t *u;

    if (BASE_UNLIKELY(q == NULL)) {
        base_error("mpi", "dropping a message from rank %d: context %u "
                          "out of range or no memory",
                   in->src_world, in->ctx);
        return;
    }
    if (BASE_UNLIKELY(in->ep != q->ep)) {
        /* While a communicator has ctx here, one of another epoch is for
         * an earlier one that had it (a late message of one revoked or
         * failed, then freed): nobody's.  With none, it may be for the
         * next one, not built here yet: kept (mpi_matchq_get sorts). */
        if (q->refs > 0) {
            drop_revoked(in);
            return;
        }
        goto unexpected;
    }
    if (BASE_UNLIKELY(q->revoked)) {
        drop_revoked(in);
        return;
    }
    if (q->nposted > 0 && (req = match_posted(q, in)) != NULL) {
        deliver(req, in);
        return;
    }
unexpected:
    u = mpi_umsg_from_in(in);
    base_list_push_back(&unexp_hash[bucket_of(in->ctx, in->src, in->tag)],
                        &u->hlink);
    base_list_push_back(&q->unexp, &u->qlink);
}

mpi_umsg_t *mpi_unexp_find(mpi_matchq_t *q, int src, int tag, int take)
{
    mpi_umsg_t *found = NULL;

    if (base_list_empty(&q->unexp))
        return NULL;
    if (src != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
        base_list_t *b = &unexp_hash[bucket_of(q->ctx, src, tag)];
        for (base_list_t *e = b->next; e != b; e = e->next) {
            mpi_umsg_t *u = BASE_CONTAINER_OF(e, mpi_umsg_t, hlink);
            if (u->src == src && u->tag == tag && u->ctx == q->ctx) {
                found = u;
                break;
            }
        }
    } else {
        for (base_list_t *e = q->unexp.next; e != &q->unexp; e = e->next) {
            mpi_umsg_t *u = BASE_CONTAINER_OF(e, mpi_umsg_t, qlink);
            if ((src == MPI_ANY_SOURCE || u->src == src) &&
                (tag == MPI_ANY_TAG || u->tag == tag)) {
                found = u;
                break;
            }
        }
    }
    if (found != NULL && take)
        umsg_unlink(found);
    return found;
}

int mpi_recv_from_umsg(MPI_Request req, mpi_umsg_t *u)
{
    mpi_in_t in;

    mpi_in_of_umsg(&in, u);
    deliver(req, &in);
    mpi_umsg_free(u);
    return MPI_SUCCESS;
}

static void complete_proc_null_recv(MPI_Request req)
{
    req->status.MPI_SOURCE = MPI_PROC_NULL;
    req->status.MPI_TAG = MPI_ANY_TAG;
    req->status.MPI_ERROR = MPI_SUCCESS;
    req->status.shoal_count = 0;
    mpi_req_complete(req);
}

int mpi_recv_start(MPI_Request req)
{
    mpi_matchq_t *q = req->ctx_off ? req->comm->cq : req->comm->mq;
    mpi_umsg_t *u;

    __atomic_store_n(&req->done, 0, __ATOMIC_RELAXED);
    req->status.shoal_cancelled = 0;
    req->inflight = 0;
    if (req->peer == MPI_PROC_NULL) {
        complete_proc_null_recv(req);
        return MPI_SUCCESS;
    }
    u = mpi_unexp_find(q, req->peer, req->tag, 1);
    if (u != NULL)
        return mpi_recv_from_umsg(req, u);
    req->seq = ++post_seq;
    if (req->peer == MPI_ANY_SOURCE || req->tag == MPI_ANY_TAG) {
        base_list_push_back(&q->posted_wild, &req->link2);
        q->nwild++;
    } else {
        base_list_push_back(
            &posted_hash[bucket_of(req_ctx(req), req->peer, req->tag)],
            &req->link);
    }
    q->nposted++;
    return MPI_SUCCESS;
}

int mpi_posted_cancel(MPI_Request req)
{
    mpi_matchq_t *q = req->ctx_off ? req->comm->cq : req->comm->mq;

    if (mpi_req_is_done(req) || req->kind != MPI_REQ_RECV)
        return 0;
    /* A matched rendezvous waiting for data is no longer posted. */
    if (req->peer == MPI_ANY_SOURCE || req->tag == MPI_ANY_TAG) {
        for (base_list_t *e = q->posted_wild.next; e != &q->posted_wild;
             e = e->next)
            if (e == &req->link2) {
                base_list_remove(e);
                q->nwild--;
                q->nposted--;
                return 1;
            }
        return 0;
    }
    base_list_t *b = &posted_hash[bucket_of(req_ctx(req), req->peer,
                                            req->tag)];
    for (base_list_t *e = b->next; e != b; e = e->next)
        if (e == &req->link) {
            base_list_remove(e);
            q->nposted--;
            return 1;
        }
    return 0;
}

/* ---- handlers ---------------------------------------------------------------------- */

static inline void header_in(mpi_in_t *in, shoal_token_t *t,
                             const uint64_t *a)
{
    in->ctx = (uint32_t)(a[0] >> 32) & (MPI_CTX_MAX - 1);
    in->ep = (uint16_t)(a[0] >> (32 + MPI_CTX_BITS));
    in->tag = (int)(uint32_t)a[0];
    in->src = (int)(a[1] & 0xffffff);
    in->flags = (unsigned)(a[1] >> 24) & 0xffu;
    in->src_world = t->src;
    in->token = t;
}

/* An arrival goes to matching unless a tolerant barrier holds it back. */
static inline void arrive_stamped(const mpi_in_t *in, uint64_t a1)
{
    uint32_t stamp = (uint32_t)(a1 >> 32);

    if (BASE_UNLIKELY(stamp != 0 || mpi_tol_started != NULL))
        mpi_tol_arrive(in, stamp);
    else
        mpi_arrive(in);
}

/* a1 of a frame's header. */
static inline uint64_t header_a1(int world, unsigned flags, int rank)
{
    return (uint64_t)mpi_tol_stamp(world) << 32 | (uint64_t)flags << 24 |
           ((uint32_t)rank & 0xffffff);
}

static void h_eager(shoal_token_t *t, const uint64_t *a, unsigned n,
                    void *payload, size_t len)
{
    mpi_in_t in;

    header_in(&in, t, a);
    in.rdv = 0;
    in.sreq = n > 2 ? a[2] : 0;
    in.saddr = 0;
    in.bytes = (MPI_Count)len;
    in.data = payload;
    arrive_stamped(&in, a[1]);
}

static void h_rts(shoal_token_t *t, const uint64_t *a, unsigned n,
                  void *payload, size_t len)
{
    mpi_in_t in;

    (void)payload;
    (void)len;
    if (n < 5)
        return;
    header_in(&in, t, a);
    in.rdv = 1;
    in.sreq = a[2];
    in.bytes = (MPI_Count)a[3];
    in.saddr = a[4];
    in.data = NULL;
    arrive_stamped(&in, a[1]);
}

static void h_ack(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                  size_t len)
{
    (void)p;
    (void)len;
    if (n < 3)
        return;
    if (a[1] > 0 && t->src != mpi.world_rank) {
        uint64_t *used = &ecred_used[t->src];
        *used = a[1] >= *used ? 0 : *used - a[1];
    }
    if (a[0] != 0 && !from_dead(t)) {
        MPI_Request req = (MPI_Request)(uintptr_t)a[0];
        if (BASE_UNLIKELY(n > 3 && a[3] == MPI_ACK_RESTORED) &&
            (req = ckpt_objs_sync_claim(a[0], t->src)) == NULL)
            return; /* its request did not come back: nobody waits */
        if (BASE_UNLIKELY(a[2] == MPI_ACK_DROP) &&
            req->status.MPI_ERROR == MPI_SUCCESS)
            req->status.MPI_ERROR = MPIX_ERR_REVOKED;
        mpi_send_done(req);
    }
}

static void h_cts(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                  size_t len)
{
    MPI_Request req;

    (void)p;
    (void)len;
    if (n < 3 || from_dead(t))
        return;
    req = (MPI_Request)(uintptr_t)a[0];
    req->remote = a[1];
    req->bytes = 0;
    req->status.shoal_count = (MPI_Count)a[2]; /* bytes to push */
    if (a[2] == 0) {
        mpi_send_done(req);
        return;
    }
    base_list_push_back(&mpi_pq.push, &req->link);
}

/* The receiver asks us to write the tail of a rendezvous ourselves. */
static void h_coop(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                   size_t len)
{
    MPI_Request req;
    MPI_Count total, split;
    int pid;

    (void)p;
    (void)len;
    if (n < 4 || from_dead(t))
        return;
    req = (MPI_Request)(uintptr_t)a[0];
    total = req->count * req->dt->size;
    split = (MPI_Count)a[2];
    pid = wire_shm_peer_pid(t->src);
    if (split < total) {
        struct iovec l = {(char *)req->buf + req->dt->true_lb + split,
                          (size_t)(total - split)};
        struct iovec r = {(char *)(uintptr_t)a[1] + split,
                          (size_t)(total - split)};
        if (pid == 0 ||
            process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
            base_error("mpi", "single-copy write to rank %d failed: %s",
                       t->src, strerror(errno));
    }
    /* A reply can answer a request only; COOP may itself be a reply. */
    send_ctl_to(t->src, t->is_request ? t : NULL, MPI_H_PART, a[3], 0, 0, 0);
}

static void h_part(shoal_token_t *t, const uint64_t *a, unsigned n, void *p,
                   size_t len)
{
    MPI_Request req;

    (void)p;
    (void)len;
    if (n < 1 || from_dead(t))
        return;
    req = (MPI_Request)(uintptr_t)a[0];
    req->bytes |= 2;
    if (req->bytes == 3)
        mpi_req_complete(req);
}

/* Where a wire may receive a pushed fragment itself: straight into a
 * contiguous receive buffer (h_data then finds it in place). */
static void *place_data(const uint64_t *a, unsigned n, size_t len)
{
    MPI_Request req;

    if (n < 2)
        return NULL;
    req = (MPI_Request)(uintptr_t)a[0];
    if (!mpi_dt_contig(req->dt) ||
        a[1] + (uint64_t)len > (uint64_t)recv_capacity(req))
        return NULL;
    return (char *)req->buf + req->dt->true_lb + a[1];
}

static void h_data(shoal_token_t *t, const uint64_t *a, unsigned n,
                   void *payload, size_t len)
{
    MPI_Request req;

    if (n < 2 || from_dead(t))
        return;
    req = (MPI_Request)(uintptr_t)a[0];
    recv_put(req, (MPI_Count)a[1], payload, (MPI_Count)len);
    req->bytes += (MPI_Count)len;
    if (req->bytes >= req->status.shoal_count)
        mpi_req_complete(req);
}

/* ---- sending ------------------------------------------------------------------------ */

static inline uint64_t header_a0(uint32_t ctx, uint16_t ep, int tag)
{
    return ((uint64_t)ep << MPI_CTX_BITS | ctx) << 32 | (uint32_t)tag;
}

/* The bytes of an eager send, packed if needed (into staging, or a
 * malloc'd block returned in *tofree for messages to ourselves). */
static const void *send_data(MPI_Request req, MPI_Count bytes, void **tofree)
{
    *tofree = NULL;
    if (mpi_dt_contig(req->dt) || bytes == 0)
        return bytes == 0 ? NULL : (const char *)req->buf + req->dt->true_lb;
    char *out = pack_buf;
    if ((size_t)bytes > mpi_p2p_cfg.eager_max) {
        out = malloc((size_t)bytes);
        if (out == NULL)
            return NULL;
        *tofree = out;
    }
    mpi_dt_cursor_t c;
    mpi_dt_cursor_init(&c, req->dt, req->count, req->buf, 0);
    mpi_dt_cursor_pack(&c, out, bytes);
    return out;
}

/* A send to ourselves: straight into the match code. */
static int send_self(MPI_Request req, MPI_Count bytes, uint32_t ctx, int rank)
{
    void *tofree;
    mpi_in_t in = {
        .ctx = ctx, .ep = req->comm->ep, .src = rank, .tag = req->tag,
        .flags = req->mode == MPI_P2P_SYNC ? MPI_MF_SYNC : 0u,
        .rdv = 0, .src_world = mpi.world_rank,
        .sreq = (uint64_t)(uintptr_t)req, .saddr = 0, .bytes = bytes,
        .token = NULL,
    };

    in.data = send_data(req, bytes, &tofree);
    if (in.data == NULL && bytes > 0)
        return MPI_ERR_NO_MEM;
    if (req->mode == MPI_P2P_SYNC)
        req->inflight = 1; /* its ack names it */
    arrive_stamped(&in, header_a1(mpi.world_rank, 0, rank));
    free(tofree);
    if (req->mode != MPI_P2P_SYNC)
        mpi_send_done(req);
    return MPI_SUCCESS;
}

/*
 * Only a blocking send called outside a wait (MPI_Send, MPI_Ssend) may
 * wait for room in the channel.  Every other send (MPI_Isend, MPI_Start,
 * the copy of a buffered send, sends from poll functions inside a wait)
 * returns at once: when the channel or its credits are short it queues
 * here, and progress sends it when room appears (a sleeping waiter is
 * woken for that room: am_request_try remembers the peer).  Sends to one
 * peer leave in the order they were started: while some wait here, later
 * ones to that peer queue behind them (deferred_to counts them).
 */
static uint32_t *deferred_to; /* by world rank: sends in mpi_pq.deferred */
static uint32_t *retry_stamp; /* by world rank: retry round it stayed full */
static uint32_t retry_round;

#define SEND_QUEUED (-1) /* send_first: no room, req waits its turn */

static int defer_send(MPI_Request req, int world)
{
    req->deferred = 1;
    deferred_to[world]++;
    base_list_push_back(&mpi_pq.deferred, &req->link);
    return SEND_QUEUED;
}

static void undefer(MPI_Request req, int world)
{
    base_list_remove(&req->link);
    req->link.next = NULL;
    req->deferred = 0;
    deferred_to[world]--;
}

/* Send the first frame (eager data or RTS) of req to world, or queue it
 * (SEND_QUEUED); wait for room only when may_wait. */
static int send_first(MPI_Request req, int world, int may_wait);

static void retry_deferred_sends(void)
{
    base_list_t *e, *next;

    retry_round++;
    for (e = mpi_pq.deferred.next; e != &mpi_pq.deferred; e = next) {
        MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request, link);
        int world = r->comm->peer_world[r->peer];
        int rc;
        next = e->next;
        if (retry_stamp[world] == retry_round)
            continue; /* an earlier send to world found no room */
        /* Off the queue before it may complete (another thread may then
         * free it); back in its place if it found no room again. */
        base_list_t *prev = e->prev;
        undefer(r, world);
        rc = send_first(r, world, 0);
        if (rc == SEND_QUEUED) {
            base_list_remove(&r->link); /* defer_send put it last */
            base_list_insert_after(prev, &r->link);
            retry_stamp[world] = retry_round;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            r->status.MPI_ERROR = rc;
            mpi_send_done(r);
        }
    }
}

void mpi_send_unqueue(MPI_Request req)
{
    if (req->link.next == NULL)
        return;
    if (req->deferred) {
        undefer(req, req->comm->peer_world[req->peer]);
        return;
    }
    base_list_remove(&req->link); /* the push list */
    req->link.next = NULL;
}

int mpi_send_start(MPI_Request req)
{
    MPI_Comm comm = req->comm;
    int world, rc;

    __atomic_store_n(&req->done, 0, __ATOMIC_RELAXED);
    req->status.shoal_cancelled = 0;
    req->status.MPI_ERROR = MPI_SUCCESS;
    req->inflight = 0;
    if (req->peer == MPI_PROC_NULL) {
        mpi_send_done(req);
        return MPI_SUCCESS;
    }
    world = comm->peer_world[req->peer];
    if (world == mpi.world_rank)
        return send_self(req, req->count * req->dt->size,
                         comm->ctx + (uint32_t)req->ctx_off,
                         comm->is_inter ? comm->group->rank : comm->rank);
    if (BASE_UNLIKELY(deferred_to[world] > 0))
        rc = defer_send(req, world); /* behind the earlier ones */
    else
        rc = send_first(req, world, req->blocking && !mpi.in_wait);
    return rc == SEND_QUEUED ? MPI_SUCCESS : rc;
}

static int send_first(MPI_Request req, int world, int may_wait)
{
    MPI_Comm comm = req->comm;
    MPI_Count bytes = req->count * req->dt->size;
    uint32_t ctx = comm->ctx + (uint32_t)req->ctx_off;
    int sync = req->mode == MPI_P2P_SYNC;
    int rank = comm->is_inter ? comm->group->rank : comm->rank;
    int status;

    uint64_t args[5] = {header_a0(ctx, comm->ep, req->tag),
                        header_a1(world, (sync ? MPI_MF_SYNC : 0u) |
                                             (req->blocking ? MPI_MF_HELP : 0u),
                                  rank),
                        (uint64_t)(uintptr_t)req, (uint64_t)bytes, 0};
    uint64_t cost = (uint64_t)bytes + MSG_COST;
    if ((size_t)bytes <= mpi_p2p_cfg.eager_max &&
        ecred_used[world] + cost <= mpi_p2p_cfg.eager_window) {
        void *tofree;
        const void *data = send_data(req, bytes, &tofree);
        if (may_wait)
            status = am_request_medium_unchecked(mpi.ep->index, world,
                                                 MPI_H_EAGER, data,
                                                 (size_t)bytes, args,
                                                 sync ? 3 : 2);
        else
            status = am_request_try(mpi.ep->index, world, MPI_H_EAGER, data,
                                    (size_t)bytes, args, sync ? 3 : 2);
        free(tofree); /* NULL: eager data fits the staging buffer */
        if (status == SHOAL_ERR_AGAIN)
            return defer_send(req, world);
        if (status != SHOAL_OK)
            return mpi_class_of_status(status);
        ecred_used[world] += cost;
        if (!sync)
            mpi_send_done(req);
        else
            req->inflight = 1; /* until the receiver's ack (request.c) */
        return MPI_SUCCESS;
    }
    if (mpi_dt_contig(req->dt) && mpi_p2p_cfg.cma)
        args[4] = (uint64_t)(uintptr_t)((const char *)req->buf +
                                        req->dt->true_lb);
    if (may_wait)
        status = shoal_am_request_short(mpi.ep, world, MPI_H_RTS, args, 5);
    else
        status = am_request_try(mpi.ep->index, world, MPI_H_RTS, NULL, 0,
                                args, 5);
    if (status == SHOAL_ERR_AGAIN)
        return defer_send(req, world);
    if (status != SHOAL_OK)
        return mpi_class_of_status(status);
    req->inflight = 1; /* until FIN, CTS, COOP or DROP (request.c) */
    return MPI_SUCCESS;
}

/* Staging of a non-contiguous rendezvous push. */
typedef struct push_state {
    mpi_dt_cursor_t cursor;
    MPI_Count staged; /* bytes in stage not yet sent */
    char stage[];
} push_state_t;

/* Send what the channel takes of one pushed send; 1 when all is sent. */
static int push_some(MPI_Request req)
{
    MPI_Count total = req->status.shoal_count;
    int world = req->comm->peer_world[req->peer];
    push_state_t *ps = req->extra;

    while (req->bytes < total) {
        MPI_Count n = total - req->bytes;
        const void *data;
        if (n > (MPI_Count)mpi_p2p_cfg.frag)
            n = (MPI_Count)mpi_p2p_cfg.frag;
        if (mpi_dt_contig(req->dt)) {
            data = (const char *)req->buf + req->dt->true_lb + req->bytes;
        } else {
            if (ps == NULL) {
                ps = malloc(sizeof(*ps) + mpi_p2p_cfg.frag);
                if (ps == NULL)
                    return 0; /* try again later */
                mpi_dt_cursor_init(&ps->cursor, req->dt, req->count,
                                   req->buf, 0);
                ps->staged = 0;
                req->extra = ps;
            }
            if (ps->staged == 0)
                ps->staged = mpi_dt_cursor_pack(&ps->cursor, ps->stage, n);
            n = ps->staged;
            data = ps->stage;
        }
        uint64_t args[2] = {req->remote, (uint64_t)req->bytes};
        int status = am_request_try(mpi.ep->index, world, MPI_H_DATA, data,
                                    (size_t)n, args, 2);
        if (status == SHOAL_ERR_AGAIN)
            return 0;
        if (status != SHOAL_OK) {
            req->status.MPI_ERROR = mpi_class_of_status(status);
            req->bytes = total;
            break;
        }
        req->bytes += n;
        if (ps != NULL)
            ps->staged = 0;
    }
    free(ps);
    req->extra = NULL;
    return 1;
}

void mpi_send_done(MPI_Request req)
{
    if (req->bsend_block != NULL) {
        mpi_bsend_release(req->bsend_block);
        req->bsend_block = NULL;
        mpi_req_free(req);
        return;
    }
    mpi_req_complete(req);
}

/* ---- progress ----------------------------------------------------------------------- */

void mpi_req_add_poll(MPI_Request req)
{
    mpi_lock();
    base_list_push_back(&mpi_pq.poll, &req->poll_link);
    mpi_unlock();
}

int mpi_progress_idle(void)
{
    return base_list_empty(&mpi_pq.ctl) && base_list_empty(&mpi_pq.deferred) &&
           base_list_empty(&mpi_pq.push);
}

void mpi_progress_extra_run(void)
{
    base_list_t *e, *next;

    if (!base_list_empty(&mpi_pq.ctl))
        ctl_flush();
    if (!base_list_empty(&mpi_pq.deferred))
        retry_deferred_sends();
    if (mpi_ft.outbox > 0)
        mpi_ft_progress();

    for (e = mpi_pq.push.next; e != &mpi_pq.push; e = next) {
        MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request, link);
        next = e->next;
        if (push_some(r)) {
            base_list_remove(e);
            e->next = NULL;
            mpi_send_done(r);
        }
    }
    for (e = mpi_pq.freed.next; e != &mpi_pq.freed; e = next) {
        MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request,
                                          free_link);
        next = e->next;
        if (mpi_req_is_done(r)) {
            base_list_remove(e);
            mpi_req_retire(&r);
        }
    }
    for (e = mpi_pq.poll.next; e != &mpi_pq.poll; e = next) {
        MPI_Request r = BASE_CONTAINER_OF(e, struct shoal_mpi_request,
                                          poll_link);
        next = e->next;
        if (r->poll_fn(r)) {
            base_list_remove(e);
            mpi_req_complete(r);
        }
    }
}

void mpi_req_free_later(MPI_Request req)
{
    base_list_push_back(&mpi_pq.freed, &req->free_link);
}

void mpi_progress(void)
{
    mpi_lock();
    am_progress();
    mpi_progress_extra();
    mpi_unlock();
}

/* ---- set-up ---------------------------------------------------------------------------- */

static const shoal_handler_entry_t handlers[] = {
    {MPI_H_EAGER, h_eager, "mpi-eager", SHOAL_HANDLER_REQUEST},
    {MPI_H_RTS, h_rts, "mpi-rts", SHOAL_HANDLER_REQUEST},
    {MPI_H_ACK, h_ack, "mpi-ack", 0},
    {MPI_H_CTS, h_cts, "mpi-cts", 0},
    {MPI_H_DATA, h_data, "mpi-data", SHOAL_HANDLER_REQUEST},
    {MPI_H_COOP, h_coop, "mpi-coop", 0},
    {MPI_H_PART, h_part, "mpi-part", 0},
    {MPI_H_TBAR, mpi_tol_handler, "mpi-tolerant-barrier", 0},
    {MPI_H_FT, mpi_ft_handler, "mpi-fault-tolerance", SHOAL_HANDLER_REQUEST},
};

int mpi_p2p_init(void)
{
    shoal_ep_params_t params = {
        .field_mask = SHOAL_EP_PARAM_HANDLERS,
        .handlers = handlers,
        .nhandlers = sizeof(handlers) / sizeof(handlers[0]),
    };
    size_t max_medium = 0;
    int status;

    /* Everything a handler touches is ready before the endpoint exists:
     * creating it is collective, and faster peers send at once. */
    for (unsigned i = 0; i < NBUCKETS; i++) {
        base_list_init(&posted_hash[i]);
        base_list_init(&unexp_hash[i]);
    }
    base_list_init(&mpi_pq.push);
    base_list_init(&mpi_pq.poll);
    base_list_init(&mpi_pq.freed);
    base_list_init(&mpi_pq.ctl);
    base_list_init(&mpi_pq.deferred);
    ecred_used = calloc((size_t)mpi.world_size, sizeof(uint64_t));
    ecred_owed = calloc((size_t)mpi.world_size, sizeof(uint64_t));
    deferred_to = calloc((size_t)mpi.world_size, sizeof(uint32_t));
    retry_stamp = calloc((size_t)mpi.world_size, sizeof(uint32_t));
    mpi_p2p_cfg.eager_max = (size_t)base_cfg.MPI_EAGER;
    mpi_p2p_cfg.cma = base_cfg.MPI_RNDV == 0; /* pull */
    mpi_p2p_cfg.coop_min = mpi_p2p_cfg.cma ? (size_t)base_cfg.MPI_COOP : 0;
    pack_buf = malloc(mpi_p2p_cfg.eager_max > 0 ? mpi_p2p_cfg.eager_max : 1);
    if (ecred_used == NULL || ecred_owed == NULL || deferred_to == NULL ||
        retry_stamp == NULL || pack_buf == NULL)
        return base_err(SHOAL_ERR_NOMEM, "MPI engine tables");
    status = shoal_ep_create(&params, &mpi.ep);
    if (status != SHOAL_OK)
        return status;
    am_set_place(mpi.ep, MPI_H_DATA, place_data);
    shoal_am_max_medium(mpi.ep, &max_medium);
    /* Every rank computes the same limits from the same settings. */
    if (mpi_p2p_cfg.eager_max > max_medium)
        mpi_p2p_cfg.eager_max = max_medium;
    mpi_p2p_cfg.eager_window = (uint64_t)base_cfg.MPI_EAGER_WINDOW;
    if (mpi_p2p_cfg.eager_window < mpi_p2p_cfg.eager_max + MSG_COST)
        mpi_p2p_cfg.eager_window = mpi_p2p_cfg.eager_max + MSG_COST;
    mpi_p2p_cfg.frag = max_medium;
    return SHOAL_OK;
}

static int sends_drained(void *arg)
{
    (void)arg;
    return mpi_progress_idle();
}

void mpi_p2p_fini(void)
{
    /* Frames still queued (acks peers wait for, sends that found no room,
     * a freed request's message) go first. */
    mpi_wait_until(sends_drained, NULL);
    /* The endpoint goes first: destroying it quiesces, and the last
     * frames (credit returns) still run handlers that use the tables. */
    if (mpi.ep != NULL)
        shoal_ep_destroy(mpi.ep);
    mpi.ep = NULL;
    for (uint32_t c = 0; c < MPI_CTX_MAX; c++) {
        mpi_matchq_t *q = mq_table[c];
        if (q != NULL) {
            /* Under SHOAL_FT, messages for a context no communicator has
             * are late ones of a broken communicator (its context id was
             * retired, comm_obj.c): no news. */
            if (BASE_UNLIKELY(mpi_ft.on) && q->refs == 0)
                q->quiet = 1;
            q->refs = 1;
            q->revoked = 0;
            mpi_matchq_put(q);
        }
    }
    while (!base_list_empty(&mpi_pq.ctl)) {
        ctl_msg_t *m = BASE_CONTAINER_OF(mpi_pq.ctl.next, ctl_msg_t, link);
        base_list_remove(&m->link);
        free(m);
    }
    umsg_cache_fini();
    free(ecred_used);
    free(ecred_owed);
    free(deferred_to);
    free(retry_stamp);
    free(pack_buf);
    ecred_used = ecred_owed = NULL;
    deferred_to = retry_stamp = NULL;
    pack_buf = NULL;
}

/* ---- the blocking fast path ------------------------------------------------------------ */

int mpi_send_eager_fast(const void *buf, MPI_Count count, MPI_Datatype dt,
                        int dest, int tag, MPI_Comm comm)
{
    MPI_Count bytes = count * dt->size;
    int world = comm->peer_world[dest];
    uint64_t cost = (uint64_t)bytes + MSG_COST;
    int rank = comm->is_inter ? comm->group->rank : comm->rank;

    if (!(mpi_dt_contig(dt) && (size_t)bytes <= mpi_p2p_cfg.eager_max &&
          world != mpi.world_rank && deferred_to[world] == 0 &&
          ecred_used[world] + cost <= mpi_p2p_cfg.eager_window))
        return 0;
    uint64_t args[2] = {header_a0(comm->ctx, comm->ep, tag),
                        header_a1(world, 0, rank)};
    /* Arguments were checked by the caller and bytes <= eager_max, which
     * never exceeds the medium limit: skip the active-message checks. */
    int status = am_request_medium_unchecked(
        mpi.ep->index, world, MPI_H_EAGER,
        bytes ? (const char *)buf + dt->true_lb : NULL, (size_t)bytes, args,
        2);
    if (BASE_UNLIKELY(status != SHOAL_OK))
        return -mpi_class_of_status(status);
    ecred_used[world] += cost;
    return 1;
}
