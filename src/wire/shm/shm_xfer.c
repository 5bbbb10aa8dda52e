/*
 * The shared-memory wire: the data path.  Sending writes one cell (and the
 * payload into the bulk ring, or straight into the receiver's segment) and
 * rings the receiver's doorbell only if it sleeps; polling reads cells in
 * order from every channel that has been opened to this rank.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "shm.h"

/* ---- send ------------------------------------------------------------------ */

/*
 * A long payload written straight into the receiver's segment: by memcpy
 * when the segment is shared memory we can map (or our own), else by
 * cross-memory attach.
 */
static int send_direct(shm_conn_t *c, const wire_msg_t *m)
{
    shm_seg_view_t v;
    char *local;
    int status;

    shm_seg_read(&c->ctrl->segs[m->ep], &v);
    if (m->offset > v.size || m->len > v.size - m->offset)
        return base_err(SHOAL_ERR_SEGMENT,
                        "long message of %u bytes at offset %llu outside rank "
                        "%d's segment of %llu bytes",
                        m->len, (unsigned long long)m->offset, c->base.rank,
                        (unsigned long long)v.size);
    if (c->ctrl == shm_state.me)
        local = (char *)(uintptr_t)v.base;
    else
        local = shm_peer_segment_local(c, m->ep, &v);
    if (local != NULL) {
        memcpy(local + m->offset, m->payload, m->len);
        wire_stats.single_copy++;
        return SHOAL_OK;
    }
    status = shm_cma_write(c->pid, v.base + m->offset, m->payload, m->len);
    if (status == SHOAL_ERR_UNSUPPORTED) {
        base_info("shm", "single copy to rank %d stopped working (%s); using "
                  "the bulk ring",
                  c->base.rank, shoal_error_detail());
        c->cma = 0;
        return SHOAL_ERR_AGAIN; /* the caller re-reads max_payload */
    }
    if (status == SHOAL_OK)
        wire_stats.single_copy++;
    return status;
}

int shm_send(wire_conn_t *conn, const wire_msg_t *m)
{
    shm_conn_t *c = (shm_conn_t *)conn;
    shm_prod_t *p = &c->prod;
    unsigned cat = m->kind & WIRE_CAT_MASK;
    unsigned words = m->nargs + (cat == WIRE_CAT_LONG);
    uint32_t inline_cap = SHM_CELL_BODY - 8 * words;
    uint32_t half_bulk = (p->bulk_mask + 1) / 2;
    uint32_t loc, bulk_tail = 0;
    int64_t pos = 0;
    shm_cell_t *cell;

    /* Ask for the next cell's line now: the ownership transfer then runs
     * while we decide how to pack the frame. */
    base_prefetch_write(&p->cells[p->tail & p->mask]);
    if (BASE_UNLIKELY(c->dead))
        return base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", c->base.rank);
    cell = shm_prod_cell(p);
    if (cell == NULL)
        return SHOAL_ERR_AGAIN;
    if (m->kind & WIRE_F_LANDED) {
        loc = SHM_LOC_DIRECT;
    } else if (m->len == 0) {
        loc = SHM_LOC_NONE;
    } else if (m->len <= inline_cap) {
        loc = SHM_LOC_INLINE;
    } else if (cat == WIRE_CAT_LONG && c->cma &&
               (m->len >= shm_state.cma_min || m->len > half_bulk)) {
        int status = send_direct(c, m);
        if (status != SHOAL_OK)
            return status;
        loc = SHM_LOC_DIRECT;
    } else {
        pos = shm_prod_bulk(p, m->len, &bulk_tail);
        if (pos < 0)
            return SHOAL_ERR_AGAIN;
        loc = SHM_LOC_BULK;
        base_copy(shm_bulk_at(p->bulk, p->bulk_mask, (uint32_t)pos), m->payload,
               m->len);
    }
    cell->kind = (uint8_t)((m->kind & WIRE_KIND_MASK) | loc << SHM_LOC_SHIFT);
    cell->ep = m->ep;
    cell->handler = m->handler;
    cell->nargs = m->nargs;
    cell->len = m->len;
    cell->aux = (uint32_t)pos;
    for (unsigned i = 0; i < m->nargs; i++)
        cell->body[i] = m->args[i];
    if (cat == WIRE_CAT_LONG)
        cell->body[m->nargs] = m->offset;
    if (loc == SHM_LOC_INLINE)
        base_copy(&cell->body[words], m->payload, m->len);
    else if (loc == SHM_LOC_NONE && cat == WIRE_CAT_LONG)
        cell->len = 0;
    shm_prod_publish(p, cell, shm_state.light);
    if (loc == SHM_LOC_BULK)
        p->bulk_tail = bulk_tail;
    if (shm_doorbell_ring(c->ctrl))
        wire_stats.doorbells++;
    return SHOAL_OK;
}

size_t shm_max_payload(wire_conn_t *conn, unsigned cat)
{
    shm_conn_t *c = (shm_conn_t *)conn;
    size_t half_bulk = ((size_t)c->prod.bulk_mask + 1) / 2;

    switch (cat) {
    case WIRE_CAT_MEDIUM:
        return half_bulk;
    case WIRE_CAT_LONG:
        return c->cma ? (size_t)1 << 30 : half_bulk;
    default:
        return 0;
    }
}

uint64_t shm_credits(wire_conn_t *conn)
{
    shm_conn_t *c = (shm_conn_t *)conn;

    c->credits_cache =
        atomic_load_explicit(&c->prod.hdr->noreply, memory_order_acquire);
    return c->credits_cache;
}

/* ---- receive --------------------------------------------------------------- */

static void drop(int src, const shm_cell_t *cell, const char *why)
{
    wire_stats.dropped++;
    base_error("shm", "dropped a frame from rank %d (kind 0x%x, ep %u, "
               "handler %u, %u bytes): %s",
               src, cell->kind, cell->ep, cell->handler, cell->len, why);
}

/*
 * Decode a cell into m.  Returns 0 when the frame can be delivered, -1 when
 * it must be dropped (already reported).
 */
static int decode(const shm_inchan_t *in, const shm_cell_t *cell,
                  wire_msg_t *m)
{
    unsigned cat = cell->kind & WIRE_CAT_MASK;
    unsigned loc = (cell->kind & SHM_LOC_MASK) >> SHM_LOC_SHIFT;
    unsigned words = cell->nargs + (cat == WIRE_CAT_LONG);
    const void *data = NULL;

    if (cell->nargs > WIRE_MAX_ARGS || cat > WIRE_CAT_LONG) {
        drop(in->src_rank, cell, "malformed header");
        return -1;
    }
    m->kind = cell->kind & WIRE_KIND_MASK;
    m->ep = cell->ep;
    m->handler = cell->handler;
    m->nargs = cell->nargs;
    m->len = cell->len;
    m->args = cell->body;
    m->offset = cat == WIRE_CAT_LONG ? cell->body[cell->nargs] : 0;
    switch (loc) {
    case SHM_LOC_INLINE:
        if (cell->len > SHM_CELL_BODY - 8 * words) {
            drop(in->src_rank, cell, "inline payload too long");
            return -1;
        }
        data = &cell->body[words];
        break;
    case SHM_LOC_BULK:
        if (cell->len > (in->cons.bulk_mask + 1) / 2) {
            drop(in->src_rank, cell, "bulk payload too long");
            return -1;
        }
        data = shm_bulk_at(in->cons.bulk, in->cons.bulk_mask, cell->aux);
        break;
    default:
        break;
    }
    m->payload = data;
    if (cat != WIRE_CAT_LONG)
        return 0;

    /* Long: land the payload in this endpoint's segment. */
    void *base = NULL;
    size_t size = 0;
    shm_state.up.segment(shm_state.up.arg, cell->ep, &base, &size);
    if (base == NULL || m->offset > size || cell->len > size - m->offset) {
        drop(in->src_rank, cell, "long payload outside the segment");
        return -1;
    }
    if (data != NULL && cell->len > 0)
        memcpy((char *)base + m->offset, data, cell->len);
    m->payload = (char *)base + m->offset;
    return 0;
}

static int poll_chan(shm_inchan_t *in, int budget)
{
    shm_state_t *s = &shm_state;
    shm_cell_t *cell;
    int n = 0;

    while (n < budget && (cell = shm_cons_peek(&in->cons)) != NULL) {
        wire_msg_t m;
        int r;

        if (decode(in, cell, &m) == 0)
            r = s->up.deliver(s->up.arg, in->src_rank, &m);
        else
            r = (cell->kind & WIRE_F_REPLY) ? WIRE_DELIVERED
                                            : WIRE_DELIVERED_NOREPLY;
        if (shm_cons_release(&in->cons, cell, r == WIRE_DELIVERED_NOREPLY,
                             s->light) &&
            shm_doorbell_ring(s->peers[in->slot].ctrl))
            wire_stats.doorbells++;
        n++;
    }
    return n;
}

int shm_poll(int budget)
{
    shm_state_t *s = &shm_state;
    uint64_t gen =
        atomic_load_explicit(&s->me->connect_gen, memory_order_acquire);
    int n = 0;

    if (BASE_UNLIKELY(gen != s->seen_gen))
        shm_refresh_inchans(gen);
    for (int i = 0; i < s->nactive; i++)
        n += poll_chan(s->active[i], budget);
    return n;
}

/* Is a frame waiting on any channel (or a new channel)?  A few loads, no
 * delivery: for spinning waits, between full polls. */
int wire_shm_pending(void)
{
    shm_state_t *s = &shm_state;

    if (atomic_load_explicit(&s->me->connect_gen, memory_order_acquire) !=
        s->seen_gen)
        return 1;
    for (int i = 0; i < s->nactive; i++)
        if (shm_cons_peek(&s->active[i]->cons) != NULL)
            return 1;
    return 0;
}

/* ---- sleeping ---------------------------------------------------------------- */

int shm_arm(void)
{
    shm_state_t *s = &shm_state;

    atomic_store_explicit(&s->me->sleeping, shm_sleep_value,
                          memory_order_seq_cst);
    /* The looks at the channels must follow the store above: membarrier
     * when light, else the fence (on x86 the seq_cst store already is). */
    shm_fence_heavy();
    base_fence_full();
    return wire_shm_pending();
}

int shm_want_space(wire_conn_t *conn)
{
    shm_state_t *s = &shm_state;
    shm_conn_t *c = (shm_conn_t *)conn;
    shm_prod_t *p = &c->prod;
    uint32_t head, bulk_head;
    uint64_t credits;

    if (!c->waiting) {
        atomic_store_explicit(&p->hdr->want_wake, 1, memory_order_seq_cst);
        shm_fence_heavy();
        c->waiting = 1;
        s->waiting[s->nwaiting++] = c;
    }
    /* Anything released since the producer last looked?  Then retry now. */
    head = atomic_load_explicit(&p->hdr->head, memory_order_seq_cst);
    bulk_head = atomic_load_explicit(&p->hdr->bulk_head, memory_order_seq_cst);
    credits = atomic_load_explicit(&p->hdr->noreply, memory_order_seq_cst);
    if (head == p->head_cache && bulk_head == p->bulk_head_cache &&
        credits == c->credits_cache && !c->dead)
        return 0;
    p->head_cache = head;
    p->bulk_head_cache = bulk_head;
    return 1;
}

int shm_sleep(uint64_t timeout_ns)
{
    wire_stats.sleeps++;
    return shm_doorbell_wait(shm_state.me, timeout_ns);
}

void shm_disarm(void)
{
    shm_state_t *s = &shm_state;

    atomic_store_explicit(&s->me->sleeping, 0, memory_order_relaxed);
    for (int i = 0; i < s->nwaiting; i++) {
        atomic_store_explicit(&s->waiting[i]->prod.hdr->want_wake, 0,
                              memory_order_relaxed);
        s->waiting[i]->waiting = 0;
    }
    s->nwaiting = 0;
}
