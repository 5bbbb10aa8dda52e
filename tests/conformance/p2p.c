/* Conformance generator: point-to-point operations. */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message: the sender's type and count, the receiver's (same type
 * signature, possibly another layout, possibly room for more). */
typedef struct {
    tmodel *ts, *tr;
    int shared;
    MPI_Aint cs, cr, nbytes;
    char d[1024];
} spec_t;

#define MAX_SPAN ((MPI_Aint)24 << 20)

static MPI_Aint span_of(const tmodel *t, MPI_Aint n)
{
    MPI_Aint lo, hi;
    tm_span(t, n, &lo, &hi);
    return hi - lo;
}

static void spec_gen(rng_t *r, spec_t *m, MPI_Aint cap, int large)
{
    MPI_Datatype b = random_basic(r);
    m->ts = rng_chance(r, 20) ? tm_basic(b)
                              : tm_generate(r, b, rng_range(r, 1, 2), rng_chance(r, 15));
    MPI_Aint bytes = large ? rng_range(r, 64 * 1024, 4 * 1024 * 1024) : draw_bytes(r, cap);
    if (bytes > cap)
        bytes = cap;
    m->cs = bytes / m->ts->size;
    while (m->cs > 0 && span_of(m->ts, m->cs) > MAX_SPAN)
        m->cs /= 2;
    if (m->cs > 1 && tm_overlaps(m->ts, m->cs))
        m->cs = 1;
    m->nbytes = m->cs * m->ts->size;
    int mixed = m->ts->basic == MPI_DATATYPE_NULL;
    int choice = mixed ? 0 : rng_range(r, 0, 3);
    m->shared = choice <= 1;
    if (m->shared)
        m->tr = m->ts;
    else if (choice == 2)
        m->tr = tm_basic(b);
    else
        m->tr = tm_generate(r, b, rng_range(r, 1, 2), 0);
    MPI_Aint need = m->cs * m->ts->nelem;
    MPI_Aint slack = rng_chance(r, 60) ? 0 : rng_range(r, 1, 3);
    m->cr = (need + m->tr->nelem - 1) / m->tr->nelem + slack;
    if (span_of(m->tr, m->cr) > 2 * MAX_SPAN || tm_overlaps(m->tr, m->cr)) {
        if (mixed) {
            m->cr = m->cs;
        } else {
            if (!m->shared)
                tm_free(m->tr);
            m->shared = 0;
            m->tr = tm_basic(b);
            m->cr = need + slack;
        }
    }
    snprintf(m->d, sizeof m->d, "type %s count %ld (%ld B), recv type %s count %ld",
             m->ts->desc, (long)m->cs, (long)m->nbytes,
             m->shared ? "same" : m->tr->desc, (long)m->cr);
}

static void spec_free(spec_t *m)
{
    if (!m->shared)
        tm_free(m->tr);
    tm_free(m->ts);
}

static uint64_t msg_key(int src_id, int idx)
{
    return ((uint64_t)g_case << 24) ^ ((uint64_t)(src_id + 1) << 8) ^ (uint64_t)idx ^ 0x5151000000000000ULL;
}

static void send_prep(buf_t *b, buf_t *ref, const spec_t *m, uint64_t key)
{
    buf_for(b, m->ts, m->cs);
    put_stream(b->base, m->ts, 0, m->nbytes, key);
    buf_clone(ref, b);
}

static void send_refill(buf_t *b, buf_t *ref, const spec_t *m, uint64_t key)
{
    buf_reset(b);
    put_stream(b->base, m->ts, 0, m->nbytes, key);
    if (b->len > 0)
        memcpy(ref->alloc, b->alloc, b->len);
}

static int recv_check(const buf_t *b, const spec_t *m, MPI_Aint nbytes, uint64_t key, const char *what)
{
    buf_t ref;
    buf_clone(&ref, b);
    buf_reset(&ref);
    put_stream(ref.base, m->tr, 0, nbytes, key);
    int bad = buf_check(b, &ref, what);
    buf_free(&ref);
    return bad;
}

/* ---- sends by mode ------------------------------------------------------- */
enum { M_SEND, M_SSEND, M_BSEND, M_RSEND, M_NMODES };
static const char *mode_name[] = { "send", "ssend", "bsend", "rsend" };

static int draw_mode(rng_t *r, int allow_ready)
{
    int m = rng_range(r, 0, allow_ready ? 3 : 2);
    if (m == M_BSEND && t_no_bsend)
        m = M_SEND;
    return m;
}

static void *g_bsend_buf;

static void bsend_attach(const spec_t *m, int nmsg)
{
    int sz = 0;
    CHK(MPI_Pack_size((int)m->cs, m->ts->dt, MPI_COMM_WORLD, &sz));
    int total = nmsg * (sz + MPI_BSEND_OVERHEAD) + 1024;
    g_bsend_buf = malloc((size_t)total);
    CHK(MPI_Buffer_attach(g_bsend_buf, total));
}

static void bsend_detach(void)
{
    void *addr;
    int size;
    CHK(MPI_Buffer_detach(&addr, &size));
    if (addr != g_bsend_buf)
        fail("MPI_Buffer_detach returned %p, attached %p", addr, g_bsend_buf);
    free(g_bsend_buf);
    g_bsend_buf = NULL;
}

static void send_blocking(int mode, const buf_t *b, const spec_t *m, int dest, int tag, MPI_Comm comm)
{
    switch (mode) {
    case M_SEND: CHK(MPI_Send(b->base, (int)m->cs, m->ts->dt, dest, tag, comm)); break;
    case M_SSEND: CHK(MPI_Ssend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm)); break;
    case M_BSEND: CHK(MPI_Bsend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm)); break;
    default: CHK(MPI_Rsend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm)); break;
    }
}

static void send_start(int mode, const buf_t *b, const spec_t *m, int dest, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    switch (mode) {
    case M_SEND: CHK(MPI_Isend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    case M_SSEND: CHK(MPI_Issend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    case M_BSEND: CHK(MPI_Ibsend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    default: CHK(MPI_Irsend(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    }
}

static void send_init(int mode, const buf_t *b, const spec_t *m, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    switch (mode) {
    case M_SEND: CHK(MPI_Send_init(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    case M_SSEND: CHK(MPI_Ssend_init(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    case M_BSEND: CHK(MPI_Bsend_init(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    default: CHK(MPI_Rsend_init(b->base, (int)m->cs, m->ts->dt, dest, tag, comm, req)); break;
    }
}

/* ---- completing many requests -------------------------------------------- */
enum { CM_WAITALL, CM_WAIT_EACH, CM_WAITANY, CM_WAITSOME, CM_TESTALL, CM_TESTANY, CM_TESTSOME,
       CM_TEST_EACH, CM_N };
static const char *cm_name[] = { "waitall", "wait each", "waitany", "waitsome", "testall",
                                 "testany", "testsome", "test each" };

/* Completes n requests; sts[i] gets request i's status (initialised to
 * sentinels first, so untouched fields show). */
/* Multiple-completion calls may set status.MPI_ERROR (when they return
 * MPI_ERR_IN_STATUS); the others never do. */
static int multi_completion(int how)
{
    return how == CM_WAITALL || how == CM_WAITSOME || how == CM_TESTALL || how == CM_TESTSOME;
}

static void complete_many(rng_t *r, int how, int n, MPI_Request *reqs, MPI_Status *sts)
{
    MPI_Status tmp[64];
    int idx[64], done = 0, flag = 0, out = 0, order[64];
    for (int i = 0; i < n; i++) {
        status_init(&sts[i]);
        order[i] = i;
    }
    switch (how) {
    case CM_WAITALL:
        CHK(MPI_Waitall(n, reqs, sts));
        break;
    case CM_WAIT_EACH:
    case CM_TEST_EACH:
        rng_shuffle(r, order, n);
        for (int k = 0; k < n; k++) {
            if (how == CM_WAIT_EACH) {
                CHK(MPI_Wait(&reqs[order[k]], &sts[order[k]]));
            } else {
                flag = 0;
                while (!flag)
                    CHK(MPI_Test(&reqs[order[k]], &flag, &sts[order[k]]));
            }
        }
        break;
    case CM_WAITANY:
    case CM_TESTANY:
        while (done < n) {
            int i = -1;
            status_init(&tmp[0]);
            if (how == CM_WAITANY) {
                CHK(MPI_Waitany(n, reqs, &i, &tmp[0]));
            } else {
                flag = 0;
                CHK(MPI_Testany(n, reqs, &i, &flag, &tmp[0]));
                if (!flag)
                    continue;
            }
            if (i == MPI_UNDEFINED || i < 0 || i >= n) {
                fail("MPI_%s returned index %d with %d of %d requests still active",
                     how == CM_WAITANY ? "Waitany" : "Testany", i, n - done, n);
                return;
            }
            sts[i] = tmp[0];
            done++;
        }
        break;
    case CM_TESTALL:
        while (!flag)
            CHK(MPI_Testall(n, reqs, &flag, sts));
        break;
    default: /* waitsome, testsome */
        while (done < n) {
            for (int i = 0; i < n; i++)
                status_init(&tmp[i]);
            out = -1;
            if (how == CM_WAITSOME)
                CHK(MPI_Waitsome(n, reqs, &out, idx, tmp));
            else
                CHK(MPI_Testsome(n, reqs, &out, idx, tmp));
            if (out == MPI_UNDEFINED || out < 0) {
                fail("MPI_%s returned outcount %d with %d of %d requests still active",
                     how == CM_WAITSOME ? "Waitsome" : "Testsome", out, n - done, n);
                return;
            }
            for (int k = 0; k < out; k++)
                sts[idx[k]] = tmp[k];
            done += out;
        }
        break;
    }
}

/* ---- pairs --------------------------------------------------------------- */
typedef struct {
    int sender, receiver;     /* my role */
    int dest, source;         /* ranks to name (remote ranks across an intercommunicator) */
    int src_id;
} pair_t;

static int pick_pair(rng_t *r, const ccomm_t *c, pair_t *p, char *d, size_t dn)
{
    memset(p, 0, sizeof *p);
    if (!c->inter) {
        if (c->size < 2)
            return 0;
        int src = (int)rng_below(r, (uint64_t)c->size);
        int dst = (src + 1 + (int)rng_below(r, (uint64_t)c->size - 1)) % c->size;
        p->sender = c->rank == src;
        p->receiver = c->rank == dst;
        p->dest = dst;
        p->source = src;
        p->src_id = src;
        snprintf(d, dn, "%d->%d", src, dst);
        return 1;
    }
    int sg = rng_range(r, 0, 1);
    int n0 = c->group == 0 ? c->size : c->rsize, n1 = c->group == 0 ? c->rsize : c->size;
    int src = (int)rng_below(r, (uint64_t)(sg == 0 ? n0 : n1));
    int dst = (int)rng_below(r, (uint64_t)(sg == 0 ? n1 : n0));
    p->sender = c->group == sg && c->rank == src;
    p->receiver = c->group != sg && c->rank == dst;
    p->dest = dst;
    p->source = src;
    p->src_id = src + 1000 * sg;
    snprintf(d, dn, "group %d rank %d -> group %d rank %d", sg, src, 1 - sg, dst);
    return 1;
}

static int draw_tag(rng_t *r)
{
    return rng_range(r, 0, 32767);
}

/* Blocking send modes; the receiver blocks or not, with wildcards or not. */
static void op_blocking(rng_t *r, const ccomm_t *c)
{
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 4 << 20, 0);
    int mode = draw_mode(r, 1), tag = draw_tag(r), rtag = tag + 1;
    int any_src = rng_chance(r, 25), any_tag = rng_chance(r, 20), nb = rng_chance(r, 40);
    int how = rng_range(r, 0, 1);
    desc_add("%s %s tag %d, recv%s%s%s: %s", mode_name[mode], pd, tag, nb ? " (irecv)" : "",
             any_src ? " any source" : "", any_tag ? " any tag" : "", m.d);
    uint64_t key = msg_key(p.src_id, 0);
    if (p.sender) {
        buf_t b, ref;
        send_prep(&b, &ref, &m, key);
        if (mode == M_BSEND)
            bsend_attach(&m, 1);
        if (mode == M_RSEND)
            CHK(MPI_Recv(NULL, 0, MPI_BYTE, p.dest, rtag, c->comm, MPI_STATUS_IGNORE));
        send_blocking(mode, &b, &m, p.dest, tag, c->comm);
        if (mode == M_BSEND)
            bsend_detach();
        buf_check(&b, &ref, "send buffer after the send");
        buf_free(&b);
        buf_free(&ref);
    }
    if (p.receiver) {
        buf_t b;
        MPI_Status st;
        status_init(&st);
        buf_for(&b, m.tr, m.cr);
        int src = any_src ? MPI_ANY_SOURCE : p.source, tg = any_tag ? MPI_ANY_TAG : tag;
        if (mode == M_RSEND || nb) {
            MPI_Request req;
            CHK(MPI_Irecv(b.base, (int)m.cr, m.tr->dt, src, tg, c->comm, &req));
            if (mode == M_RSEND)
                CHK(MPI_Send(NULL, 0, MPI_BYTE, p.source, rtag, c->comm));
            if (how == 0) {
                CHK(MPI_Wait(&req, &st));
            } else {
                int flag = 0;
                while (!flag)
                    CHK(MPI_Test(&req, &flag, &st));
            }
        } else {
            CHK(MPI_Recv(b.base, (int)m.cr, m.tr->dt, src, tg, c->comm, &st));
        }
        check_status(&st, p.source, tag, m.tr, m.nbytes, 1,
                     mode == M_RSEND || nb ? (how ? "MPI_Test of an irecv" : "MPI_Wait of an irecv")
                                           : "MPI_Recv");
        recv_check(&b, &m, m.nbytes, key, "receive buffer");
        buf_free(&b);
    }
    add_bytes((double)m.nbytes);
    spec_free(&m);
}

/* A nonblocking start must return without waiting for the other side. */
static void op_late(rng_t *r, const ccomm_t *c)
{
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 4 << 20, rng_chance(r, 60));
    int mode = draw_mode(r, 0), tag = draw_tag(r), late_recv = rng_chance(r, 70);
    const int sleep = 150;
    desc_add("i%s %s tag %d while the %s sleeps %d ms: %s", mode_name[mode], pd, tag,
             late_recv ? "receiver" : "sender", sleep, m.d);
    uint64_t key = msg_key(p.src_id, 0);
    if (p.sender) {
        buf_t b, ref;
        MPI_Request req;
        MPI_Status st;
        status_init(&st);
        send_prep(&b, &ref, &m, key);
        if (mode == M_BSEND)
            bsend_attach(&m, 1);
        if (!late_recv)
            sleep_ms(sleep);
        double t0 = now();
        send_start(mode, &b, &m, p.dest, tag, c->comm, &req);
        double dt = now() - t0;
        /* Local, but it may copy (buffered mode packs the data): allow for
         * that at a slow copy rate. */
        double allowed = sleep / 2 * 1e-3 + (double)m.nbytes / 20e6;
        if (late_recv && dt > allowed)
            fail("MPI_I%s of %ld bytes took %.0f ms while the receiver was not receiving "
                 "(a nonblocking send start is local: it must not wait for the receiver)",
                 mode_name[mode], (long)m.nbytes, dt * 1e3);
        CHK(MPI_Wait(&req, &st));
        if (st.MPI_ERROR != ERR_SENTINEL)
            fail("MPI_Wait of an isend: status.MPI_ERROR changed to %d", st.MPI_ERROR);
        if (mode == M_BSEND)
            bsend_detach();
        buf_check(&b, &ref, "send buffer after the send");
        buf_free(&b);
        buf_free(&ref);
    }
    if (p.receiver) {
        buf_t b;
        MPI_Status st;
        status_init(&st);
        buf_for(&b, m.tr, m.cr);
        if (late_recv) {
            sleep_ms(sleep);
            CHK(MPI_Recv(b.base, (int)m.cr, m.tr->dt, p.source, tag, c->comm, &st));
        } else {
            MPI_Request req;
            double t0 = now();
            CHK(MPI_Irecv(b.base, (int)m.cr, m.tr->dt, p.source, tag, c->comm, &req));
            double dt = now() - t0;
            if (dt > sleep / 2 * 1e-3)
                fail("MPI_Irecv took %.0f ms while the sender was not sending", dt * 1e3);
            CHK(MPI_Wait(&req, &st));
        }
        check_status(&st, p.source, tag, m.tr, m.nbytes, 1, late_recv ? "MPI_Recv" : "MPI_Wait of an irecv");
        recv_check(&b, &m, m.nbytes, key, "receive buffer");
        buf_free(&b);
    }
    add_bytes((double)m.nbytes);
    add_sleep(sleep * 1e-3);
    spec_free(&m);
}

/* Probe, Iprobe, Mprobe, Improbe, then the receive of what they found. */
static void op_probe(rng_t *r, const ccomm_t *c)
{
    static const char *pname[] = { "probe+recv", "iprobe+recv", "mprobe+mrecv", "improbe+mrecv",
                                   "mprobe+imrecv" };
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 4 << 20, 0);
    int pv = rng_range(r, 0, 4), tag = draw_tag(r), nbsend = rng_chance(r, 40);
    int any_src = rng_chance(r, 30), any_tag = rng_chance(r, 30);
    desc_add("%s %s tag %d%s%s, %s: %s", pname[pv], pd, tag, any_src ? " any source" : "",
             any_tag ? " any tag" : "", nbsend ? "isend" : "send", m.d);
    uint64_t key = msg_key(p.src_id, 0);
    if (p.sender) {
        buf_t b, ref;
        send_prep(&b, &ref, &m, key);
        if (nbsend) {
            MPI_Request req;
            CHK(MPI_Isend(b.base, (int)m.cs, m.ts->dt, p.dest, tag, c->comm, &req));
            CHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CHK(MPI_Send(b.base, (int)m.cs, m.ts->dt, p.dest, tag, c->comm));
        }
        buf_check(&b, &ref, "send buffer after the send");
        buf_free(&b);
        buf_free(&ref);
    }
    if (p.receiver) {
        int src = any_src ? MPI_ANY_SOURCE : p.source, tg = any_tag ? MPI_ANY_TAG : tag, flag = 0;
        MPI_Status ps, st;
        MPI_Message msg = MPI_MESSAGE_NULL;
        status_init(&ps);
        status_init(&st);
        switch (pv) {
        case 0: CHK(MPI_Probe(src, tg, c->comm, &ps)); break;
        case 1: while (!flag) CHK(MPI_Iprobe(src, tg, c->comm, &flag, &ps)); break;
        case 2: case 4: CHK(MPI_Mprobe(src, tg, c->comm, &msg, &ps)); break;
        default: while (!flag) CHK(MPI_Improbe(src, tg, c->comm, &flag, &msg, &ps)); break;
        }
        check_status(&ps, p.source, tag, m.tr, m.nbytes, 1, pname[pv]);
        buf_t b;
        buf_for(&b, m.tr, m.cr);
        if (pv <= 1) {
            CHK(MPI_Recv(b.base, (int)m.cr, m.tr->dt, ps.MPI_SOURCE, ps.MPI_TAG, c->comm, &st));
        } else if (pv == 4) {
            MPI_Request req;
            CHK(MPI_Imrecv(b.base, (int)m.cr, m.tr->dt, &msg, &req));
            CHK(MPI_Wait(&req, &st));
        } else {
            CHK(MPI_Mrecv(b.base, (int)m.cr, m.tr->dt, &msg, &st));
        }
        if (pv >= 2 && msg != MPI_MESSAGE_NULL)
            fail("the message handle is not MPI_MESSAGE_NULL after the matched receive");
        check_status(&st, p.source, tag, m.tr, m.nbytes, 1, "the receive after the probe");
        recv_check(&b, &m, m.nbytes, key, "receive buffer");
        buf_free(&b);
    }
    add_bytes((double)m.nbytes);
    spec_free(&m);
}

/* Several messages between one pair, tags from a small set; the receives
 * are posted in a shuffled order and must match in send order per tag. */
static void op_multi(rng_t *r, const ccomm_t *c)
{
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 1 << 20, 0);
    int k = rng_range(r, 2, 6), tag0 = draw_tag(r), tags[8], order[8];
    int nbsend = rng_chance(r, 50), how = rng_range(r, 0, CM_N - 1);
    char ts[64];
    size_t u = 0;
    for (int i = 0; i < k; i++) {
        tags[i] = tag0 + rng_range(r, 0, 1);
        order[i] = i;
        u += (size_t)snprintf(ts + u, sizeof ts - u, "%s%d", i ? "," : "", tags[i] - tag0);
    }
    rng_shuffle(r, order, k);
    desc_add("%d messages %s (%s), tags %d+[%s], receives posted shuffled, %s: %s", k, pd,
             nbsend ? "isend" : "send", tag0, ts, cm_name[how], m.d);
    /* Draws that only some ranks make come from a rank's own sequence,
     * so the shared one stays the same on every rank. */
    rng_t lr = rng_derive(rng_next(r), 0x10000u + (uint64_t)g_rank);
    if (p.sender) {
        buf_t b[8], ref[8];
        MPI_Request reqs[8];
        for (int i = 0; i < k; i++) {
            send_prep(&b[i], &ref[i], &m, msg_key(p.src_id, i));
            if (nbsend)
                CHK(MPI_Isend(b[i].base, (int)m.cs, m.ts->dt, p.dest, tags[i], c->comm, &reqs[i]));
            else
                CHK(MPI_Send(b[i].base, (int)m.cs, m.ts->dt, p.dest, tags[i], c->comm));
        }
        if (nbsend)
            CHK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < k; i++) {
            buf_check(&b[i], &ref[i], "send buffer after the send");
            buf_free(&b[i]);
            buf_free(&ref[i]);
        }
    }
    if (p.receiver) {
        buf_t b[8];
        MPI_Request reqs[8];
        MPI_Status sts[8];
        int expect[8], used[8] = { 0 };
        /* Posting order: receive j takes tag tags[order[j]]; it matches the
         * first message of that tag not matched by an earlier receive. */
        for (int j = 0; j < k; j++) {
            int t = tags[order[j]];
            for (int i = 0; i < k; i++)
                if (!used[i] && tags[i] == t) {
                    used[i] = 1;
                    expect[j] = i;
                    break;
                }
            buf_for(&b[j], m.tr, m.cr);
            CHK(MPI_Irecv(b[j].base, (int)m.cr, m.tr->dt, p.source, t, c->comm, &reqs[j]));
        }
        complete_many(&lr, how, k, reqs, sts);
        for (int j = 0; j < k; j++) {
            char w[96];
            snprintf(w, sizeof w, "receive %d (posted %d%s, %s)", expect[j], j,
                     j ? " of the shuffled order" : "", cm_name[how]);
            check_status(&sts[j], p.source, tags[order[j]], m.tr, m.nbytes, !multi_completion(how), w);
            recv_check(&b[j], &m, m.nbytes, msg_key(p.src_id, expect[j]), w);
            buf_free(&b[j]);
        }
    }
    add_bytes((double)m.nbytes * k);
    spec_free(&m);
}

/* Cancel of a receive nothing can match; then the same envelope again. */
static void op_cancel(rng_t *r, const ccomm_t *c)
{
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 1 << 20, 0);
    int tag = draw_tag(r), go = tag + 1, persistent = rng_chance(r, 30), any_src = rng_chance(r, 30);
    desc_add("cancel of an unmatched %sreceive %s tag %d%s, then the message: %s",
             persistent ? "persistent " : "", pd, tag, any_src ? " any source" : "", m.d);
    uint64_t key = msg_key(p.src_id, 0);
    if (p.receiver) {
        buf_t b;
        MPI_Request req;
        MPI_Status st;
        int flag = 0;
        buf_for(&b, m.tr, m.cr);
        status_init(&st);
        int src = any_src ? MPI_ANY_SOURCE : p.source;
        if (persistent) {
            CHK(MPI_Recv_init(b.base, (int)m.cr, m.tr->dt, src, tag, c->comm, &req));
            CHK(MPI_Start(&req));
        } else {
            CHK(MPI_Irecv(b.base, (int)m.cr, m.tr->dt, src, tag, c->comm, &req));
        }
        CHK(MPI_Cancel(&req));
        CHK(MPI_Wait(&req, &st));
        CHK(MPI_Test_cancelled(&st, &flag));
        if (!flag)
            fail("MPI_Test_cancelled says false after cancelling a receive that nothing could match");
        if (st.MPI_ERROR != ERR_SENTINEL)
            fail("MPI_Wait of a cancelled receive: status.MPI_ERROR changed to %d", st.MPI_ERROR);
        recv_check(&b, &m, 0, key, "buffer of the cancelled receive");
        if (persistent)
            CHK(MPI_Request_free(&req));
        CHK(MPI_Send(NULL, 0, MPI_BYTE, p.source, go, c->comm));
        status_init(&st);
        CHK(MPI_Recv(b.base, (int)m.cr, m.tr->dt, p.source, tag, c->comm, &st));
        check_status(&st, p.source, tag, m.tr, m.nbytes, 1, "MPI_Recv after the cancel");
        recv_check(&b, &m, m.nbytes, key, "receive buffer after the cancel");
        buf_free(&b);
    }
    if (p.sender) {
        buf_t b, ref;
        send_prep(&b, &ref, &m, key);
        CHK(MPI_Recv(NULL, 0, MPI_BYTE, p.dest, go, c->comm, MPI_STATUS_IGNORE));
        CHK(MPI_Send(b.base, (int)m.cs, m.ts->dt, p.dest, tag, c->comm));
        buf_free(&b);
        buf_free(&ref);
    }
    add_bytes((double)m.nbytes);
    spec_free(&m);
}

/* Persistent send and receive between a pair, started several times. */
static void op_persist_pair(rng_t *r, const ccomm_t *c)
{
    pair_t p;
    char pd[96];
    if (!pick_pair(r, c, &p, pd, sizeof pd))
        return;
    spec_t m;
    spec_gen(r, &m, 4 << 20, 0);
    int mode = draw_mode(r, 0), tag = draw_tag(r), iters = rng_range(r, 1, 3);
    desc_add("persistent %s_init/recv_init %s tag %d, %d starts: %s", mode_name[mode], pd, tag, iters, m.d);
    /* Draws that only some ranks make come from a rank's own sequence,
     * so the shared one stays the same on every rank. */
    rng_t lr = rng_derive(rng_next(r), 0x10000u + (uint64_t)g_rank);
    if (p.sender) {
        buf_t b, ref;
        MPI_Request req;
        send_prep(&b, &ref, &m, msg_key(p.src_id, 0));
        if (mode == M_BSEND)       /* each start's message may still be buffered */
            bsend_attach(&m, iters);
        send_init(mode, &b, &m, p.dest, tag, c->comm, &req);
        for (int it = 0; it < iters; it++) {
            send_refill(&b, &ref, &m, msg_key(p.src_id, it));
            CHK(MPI_Start(&req));
            complete_one(&lr, &req);
            buf_check(&b, &ref, "send buffer after the persistent send");
        }
        CHK(MPI_Request_free(&req));
        if (mode == M_BSEND)
            bsend_detach();
        buf_free(&b);
        buf_free(&ref);
    }
    if (p.receiver) {
        buf_t b;
        MPI_Request req;
        buf_for(&b, m.tr, m.cr);
        CHK(MPI_Recv_init(b.base, (int)m.cr, m.tr->dt, p.source, tag, c->comm, &req));
        for (int it = 0; it < iters; it++) {
            MPI_Status st;
            buf_reset(&b);
            status_init(&st);
            if (rng_chance(&lr, 50))
                CHK(MPI_Start(&req));
            else
                CHK(MPI_Startall(1, &req));
            CHK(MPI_Wait(&req, &st));
            check_status(&st, p.source, tag, m.tr, m.nbytes, 1, "MPI_Wait of a persistent receive");
            recv_check(&b, &m, m.nbytes, msg_key(p.src_id, it), "receive buffer (persistent)");
        }
        CHK(MPI_Request_free(&req));
        buf_free(&b);
    }
    add_bytes((double)m.nbytes * iters);
    spec_free(&m);
}

/* ---- rings (intracommunicators, any size, self included) ----------------- */
typedef struct {
    int left, right, shift, periodic;
} ring_t;

static void pick_ring(rng_t *r, const ccomm_t *c, ring_t *g, char *d, size_t dn)
{
    g->shift = c->size > 1 ? rng_range(r, 1, c->size - 1) : 0;
    g->periodic = c->size < 2 || rng_chance(r, 85);
    if (g->periodic) {
        g->right = (c->rank + g->shift) % c->size;
        g->left = (c->rank - g->shift + c->size) % c->size;
    } else {
        g->right = c->rank + g->shift < c->size ? c->rank + g->shift : MPI_PROC_NULL;
        g->left = c->rank - g->shift >= 0 ? c->rank - g->shift : MPI_PROC_NULL;
    }
    snprintf(d, dn, "ring shift %d%s", g->shift, g->periodic ? "" : " (open ends: MPI_PROC_NULL)");
}

/* The checks of a receive from `left` (MPI_PROC_NULL: nothing arrives). */
static void ring_recv_check(const ring_t *g, const MPI_Status *st, const buf_t *b, const spec_t *m,
                            int tag, int idx, const char *what, int check_error)
{
    if (g->left == MPI_PROC_NULL && check_error < 0) {
        recv_check(b, m, 0, 0, what);
        return;
    }
    if (g->left == MPI_PROC_NULL) {
        /* MPICH 4.0 gives persistent and any/some completions other values */
        if (!g_quirk_mpich40 && (st->MPI_SOURCE != MPI_PROC_NULL || st->MPI_TAG != MPI_ANY_TAG))
            fail("%s from MPI_PROC_NULL: status source %d tag %d, expected MPI_PROC_NULL, "
                 "MPI_ANY_TAG", what, st->MPI_SOURCE, st->MPI_TAG);
        check_status(st, -1, -1, m->tr, 0, 0, what);
        recv_check(b, m, 0, 0, what);
        return;
    }
    if (check_error >= 0)
        check_status(st, g->left, tag, m->tr, m->nbytes, check_error, what);
    recv_check(b, m, m->nbytes, msg_key(g->left, idx), what);
}

static void op_ring_nb(rng_t *r, const ccomm_t *c)
{
    ring_t g;
    char gd[96];
    pick_ring(r, c, &g, gd, sizeof gd);
    spec_t m;
    spec_gen(r, &m, c->size > 4 ? 1 << 20 : 2 << 20, 0);
    int k = rng_range(r, 1, 3), same_tag = rng_chance(r, 50), tag0 = draw_tag(r);
    int any_src = rng_chance(r, 20), how = rng_range(r, 0, CM_N - 1), modes[4], ready = 0, bsend = 0;
    char md[64];
    size_t u = 0;
    for (int i = 0; i < k; i++) {
        modes[i] = draw_mode(r, 1);
        ready |= modes[i] == M_RSEND;
        bsend += modes[i] == M_BSEND;
        u += (size_t)snprintf(md + u, sizeof md - u, "%si%s", i ? "," : "", mode_name[modes[i]]);
    }
    desc_add("%s, %d message(s) each way (%s)%s%s, %s: %s", gd, k, md, same_tag ? " same tag" : "",
             any_src ? " any source" : "", cm_name[how], m.d);
    /* Draws that only some ranks make come from a rank's own sequence,
     * so the shared one stays the same on every rank. */
    rng_t lr = rng_derive(rng_next(r), 0x10000u + (uint64_t)g_rank);
    buf_t sb[4], sref[4], rb[4];
    MPI_Request reqs[8];
    MPI_Status sts[8];
    int order[4] = { 0, 1, 2, 3 };
    if (!same_tag)
        rng_shuffle(r, order, k);
    if (bsend)
        bsend_attach(&m, bsend);
    for (int j = 0; j < k; j++) {
        int i = order[j];
        buf_for(&rb[i], m.tr, m.cr);
        int src = any_src && g.left != MPI_PROC_NULL ? MPI_ANY_SOURCE : g.left;
        CHK(MPI_Irecv(rb[i].base, (int)m.cr, m.tr->dt, src, same_tag ? tag0 : tag0 + i, c->comm, &reqs[i]));
    }
    if (ready)                 /* every receive is posted before any ready send */
        CHK(MPI_Barrier(c->comm));
    for (int i = 0; i < k; i++) {
        send_prep(&sb[i], &sref[i], &m, msg_key(c->rank, i));
        send_start(modes[i], &sb[i], &m, g.right, same_tag ? tag0 : tag0 + i, c->comm, &reqs[k + i]);
    }
    complete_many(&lr, how, 2 * k, reqs, sts);
    for (int i = 0; i < k; i++) {
        char w[80];
        snprintf(w, sizeof w, "receive %d (%s)", i, cm_name[how]);
        ring_recv_check(&g, &sts[i], &rb[i], &m, same_tag ? tag0 : tag0 + i, i, w, !multi_completion(how));
        buf_check(&sb[i], &sref[i], "send buffer after the send");
        buf_free(&rb[i]);
        buf_free(&sb[i]);
        buf_free(&sref[i]);
    }
    if (bsend)
        bsend_detach();
    add_bytes((double)m.nbytes * k);
    spec_free(&m);
}

static void op_sendrecv(rng_t *r, const ccomm_t *c, int replace)
{
    ring_t g;
    char gd[96];
    pick_ring(r, c, &g, gd, sizeof gd);
    spec_t m;
    spec_gen(r, &m, c->size > 4 ? 1 << 20 : 2 << 20, 0);
    int tag = draw_tag(r), any_src = rng_chance(r, 20), any_tag = rng_chance(r, 20);
    int nb = rng_chance(r, 30);
    /* MPI 3 libraries (and MPICH 4.0, whose MPI_Isendrecv drops its datatype
     * reference and statuses): the blocking form, same draws. */
    nb = nb && HAVE_MPI4 && !g_quirk_mpich40;
    desc_add("%s%s %s tag %d%s%s: %s", nb ? "i" : "", replace ? "sendrecv_replace" : "sendrecv", gd,
             tag, any_src ? " any source" : "", any_tag ? " any tag" : "", m.d);
    int src = any_src && g.left != MPI_PROC_NULL ? MPI_ANY_SOURCE : g.left;
    int rt = any_tag ? MPI_ANY_TAG : tag;
    MPI_Status st;
#if HAVE_MPI4
    MPI_Request req = MPI_REQUEST_NULL;
#endif
    status_init(&st);
    if (!replace) {
        buf_t sb, sref, rb;
        send_prep(&sb, &sref, &m, msg_key(c->rank, 0));
        buf_for(&rb, m.tr, m.cr);
        if (nb) {
#if HAVE_MPI4
            CHK(MPI_Isendrecv(sb.base, (int)m.cs, m.ts->dt, g.right, tag, rb.base, (int)m.cr,
                              m.tr->dt, src, rt, c->comm, &req));
            CHK(MPI_Wait(&req, &st));
#endif
        } else {
            CHK(MPI_Sendrecv(sb.base, (int)m.cs, m.ts->dt, g.right, tag, rb.base, (int)m.cr,
                             m.tr->dt, src, rt, c->comm, &st));
        }
        ring_recv_check(&g, &st, &rb, &m, tag, 0, nb ? "MPI_Isendrecv" : "MPI_Sendrecv",
                        nb && g_quirk_mpich40 ? -1 : 1);
        buf_check(&sb, &sref, "send buffer of MPI_Sendrecv");
        buf_free(&sb);
        buf_free(&sref);
        buf_free(&rb);
    } else {
        /* One buffer, one type and count both ways. */
        buf_t b, ref;
        send_prep(&b, &ref, &m, msg_key(c->rank, 0));
        if (nb) {
#if HAVE_MPI4
            CHK(MPI_Isendrecv_replace(b.base, (int)m.cs, m.ts->dt, g.right, tag, src, rt, c->comm, &req));
            CHK(MPI_Wait(&req, &st));
#endif
        } else {
            CHK(MPI_Sendrecv_replace(b.base, (int)m.cs, m.ts->dt, g.right, tag, src, rt, c->comm, &st));
        }
        if (g.left == MPI_PROC_NULL) {
            if (st.MPI_SOURCE != MPI_PROC_NULL)
                fail("sendrecv_replace from MPI_PROC_NULL: status source %d", st.MPI_SOURCE);
            buf_check(&b, &ref, "sendrecv_replace buffer (nothing received: unchanged)");
        } else {
            if (!(nb && g_quirk_mpich40))
                check_status(&st, g.left, tag, m.ts, m.nbytes, 1, "MPI_Sendrecv_replace");
            buf_reset(&ref);
            put_stream(ref.base, m.ts, 0, m.nbytes, msg_key(g.left, 0));
            buf_check(&b, &ref, "sendrecv_replace buffer");
        }
        buf_free(&b);
        buf_free(&ref);
    }
    add_bytes((double)m.nbytes);
    spec_free(&m);
}

static void op_ring_persist(rng_t *r, const ccomm_t *c)
{
    ring_t g;
    char gd[96];
    pick_ring(r, c, &g, gd, sizeof gd);
    spec_t m;
    spec_gen(r, &m, 2 << 20, 0);
    int mode = draw_mode(r, 0), tag = draw_tag(r), iters = rng_range(r, 1, 3);
    int how = rng_range(r, 0, CM_N - 1);
    desc_add("persistent %s_init/recv_init %s tag %d, %d startalls, %s: %s", mode_name[mode], gd,
             tag, iters, cm_name[how], m.d);
    /* Draws that only some ranks make come from a rank's own sequence,
     * so the shared one stays the same on every rank. */
    rng_t lr = rng_derive(rng_next(r), 0x10000u + (uint64_t)g_rank);
    buf_t sb, sref, rb;
    MPI_Request reqs[2], live[2];
    MPI_Status sts[2];
    send_prep(&sb, &sref, &m, msg_key(c->rank, 0));
    buf_for(&rb, m.tr, m.cr);
    if (mode == M_BSEND)
        bsend_attach(&m, iters);
    CHK(MPI_Recv_init(rb.base, (int)m.cr, m.tr->dt, g.left, tag, c->comm, &reqs[0]));
    send_init(mode, &sb, &m, g.right, tag, c->comm, &reqs[1]);
    for (int it = 0; it < iters; it++) {
        send_refill(&sb, &sref, &m, msg_key(c->rank, it));
        buf_reset(&rb);
        int swap = rng_chance(&lr, 50);
        live[0] = reqs[swap];
        live[1] = reqs[1 - swap];
        CHK(MPI_Startall(2, live));
        complete_many(&lr, how, 2, live, sts);
        ring_recv_check(&g, &sts[swap], &rb, &m, tag, it, "persistent receive", !multi_completion(how));
        buf_check(&sb, &sref, "send buffer after the persistent send");
    }
    CHK(MPI_Request_free(&reqs[0]));
    CHK(MPI_Request_free(&reqs[1]));
    if (mode == M_BSEND)
        bsend_detach();
    buf_free(&sb);
    buf_free(&sref);
    buf_free(&rb);
    add_bytes((double)m.nbytes * iters);
    spec_free(&m);
}

void p2p_case(rng_t *r, ccomm_t *c, int allow_sleep)
{
    int pair_ok = c->inter || c->size >= 2;
    int ring_ok = !c->inter;
    for (;;) {
        int x = rng_range(r, 0, 99);
        if (x < 20 && pair_ok) { op_blocking(r, c); return; }
        if (x < 26 && pair_ok && allow_sleep) { op_late(r, c); return; }
        if (x < 36 && pair_ok) { op_probe(r, c); return; }
        if (x < 44 && pair_ok) { op_multi(r, c); return; }
        if (x < 49 && pair_ok) { op_cancel(r, c); return; }
        if (x < 56 && pair_ok) { op_persist_pair(r, c); return; }
        if (x >= 56 && x < 76 && ring_ok) { op_ring_nb(r, c); return; }
        if (x >= 76 && x < 84 && ring_ok) { op_sendrecv(r, c, 0); return; }
        if (x >= 84 && x < 91 && ring_ok) { op_sendrecv(r, c, 1); return; }
        if (x >= 91 && ring_ok) { op_ring_persist(r, c); return; }
    }
}
