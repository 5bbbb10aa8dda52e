/*
 * The shared-memory channel: one producer, one consumer.
 *
 * A channel is a ring of cells of five cache lines (320 bytes) plus a byte
 * ring ("bulk") for payloads that do not fit in a cell.  Each cell starts
 * with a sequence word: the producer of ticket t writes the cell's contents
 * and then stores seq = t + 1 (release); the consumer at head h knows the
 * cell is ready when seq == h + 1.  A small message and its flag share the
 * first line, so it costs one line transfer to the consumer.  A payload of
 * up to 304 bytes less the arguments stays in the cell: while it waits, the
 * consumer loads all five lines of the head cell on every look, so the
 * lines the producer wrote travel together, in parallel, instead of one
 * after the other once the flag is seen (as a payload in the bulk ring
 * does).  Measured (interleaved MPI ping-pong A/B): 64 B one way 0.227 ->
 * 0.202 us; 128-256 B no faster than through the bulk ring, 0-32 B and the
 * message rate unchanged.  Stale cells from earlier laps
 * hold seq values h + 1 - k * ncells, never h + 1, so cells need no reset
 * and 32-bit sequence numbers may wrap.
 *
 * The consumer publishes how far it has consumed (head, bulk_head) in the
 * channel header; the producer keeps private copies and reads the shared
 * ones only when its copies say the ring is full, so a steady stream costs
 * the producer one extra line transfer per lap, not per message.
 *
 * These functions hold no locks, make no system calls and allocate nothing.
 */
#ifndef SHOAL_SHM_RING_H
#define SHOAL_SHM_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

#define SHM_CELL_LINES 5
#define SHM_CELL_SIZE (64 * SHM_CELL_LINES)
#define SHM_CELL_BODY (SHM_CELL_SIZE - 16) /* after the 16-byte cell header */
#define SHM_BULK_ALIGN 64

/* Where a frame's payload is (bits 5-6 of shm_cell_t.kind). */
#define SHM_LOC_NONE 0u
#define SHM_LOC_INLINE 1u   /* in the cell body, after args (and offset) */
#define SHM_LOC_BULK 2u     /* in the bulk ring at position aux */
#define SHM_LOC_DIRECT 3u   /* already written into the segment (CMA) */
#define SHM_LOC_SHIFT 5
#define SHM_LOC_MASK (3u << SHM_LOC_SHIFT)

typedef struct shm_cell {
    _Atomic uint32_t seq; /* ticket + 1 once published */
    uint8_t kind;         /* WIRE kind bits | SHM_LOC_* << SHM_LOC_SHIFT */
    uint8_t ep;
    uint8_t handler;
    uint8_t nargs;
    uint32_t len; /* payload length */
    uint32_t aux; /* bulk position of the payload (SHM_LOC_BULK) */
    uint64_t body[SHM_CELL_BODY / 8]; /* args, [long offset], [inline data] */
} BASE_ALIGNED(64) shm_cell_t;

_Static_assert(sizeof(shm_cell_t) == SHM_CELL_SIZE, "whole lines per cell");

/* The consumer-written and producer-written words of one channel. */
typedef struct shm_chan_hdr {
    /* written by the consumer, read by the producer when it runs short */
    _Atomic uint32_t head;      /* cells consumed */
    _Atomic uint32_t bulk_head; /* bulk bytes released (position) */
    _Atomic uint64_t noreply;   /* requests finished without a reply */
    char pad0[BASE_SHARING_UNIT - 16];
    /* written by the producer, read by the consumer after each release */
    _Atomic uint32_t want_wake; /* producer sleeps until room appears */
    char pad1[BASE_SHARING_UNIT - 4];
} shm_chan_hdr_t;

_Static_assert(sizeof(shm_chan_hdr_t) == 2 * BASE_SHARING_UNIT, "layout");

/* ---- producer -------------------------------------------------------------- */

typedef struct shm_prod {
    shm_cell_t *cells;
    uint32_t mask; /* ncells - 1 */
    uint32_t tail; /* next ticket */
    uint32_t head_cache;
    char *bulk;
    uint32_t bulk_mask; /* bulk size - 1 */
    uint32_t bulk_tail;
    uint32_t bulk_head_cache;
    shm_chan_hdr_t *hdr;
} shm_prod_t;

/* The next free cell, or NULL when the ring is full. */
static inline shm_cell_t *shm_prod_cell(shm_prod_t *p)
{
    if (BASE_UNLIKELY(p->tail - p->head_cache > p->mask)) {
        p->head_cache =
            atomic_load_explicit(&p->hdr->head, memory_order_acquire);
        if (p->tail - p->head_cache > p->mask)
            return NULL;
    }
    return &p->cells[p->tail & p->mask];
}

/*
 * Room for len bytes of bulk: returns the position (and leaves the tail
 * for shm_prod_publish to advance), or -1 when there is no room.  A payload
 * never wraps: when it would cross the end it starts at the beginning and
 * the bytes skipped count as used.
 */
static inline int64_t shm_prod_bulk(shm_prod_t *p, uint32_t len,
                                    uint32_t *new_tail_p)
{
    uint32_t size = p->bulk_mask + 1;
    uint32_t need = (uint32_t)base_align_up(len, SHM_BULK_ALIGN);
    uint32_t pos = p->bulk_tail;
    uint32_t room_to_end = size - (pos & p->bulk_mask);

    if (need > size / 2)
        return -1;
    if (need > room_to_end)
        pos += room_to_end; /* skip to the start of the ring */
    if (pos + need - p->bulk_head_cache > size) {
        p->bulk_head_cache =
            atomic_load_explicit(&p->hdr->bulk_head, memory_order_acquire);
        if (pos + need - p->bulk_head_cache > size)
            return -1;
    }
    *new_tail_p = pos + need;
    return pos;
}

static inline void *shm_bulk_at(char *bulk, uint32_t mask, uint32_t pos)
{
    return bulk + (pos & mask);
}

/*
 * The store that publishes a cell (or releases one) must be ordered before
 * the load that follows it (the consumer's sleeping flag, the producer's
 * want_wake).  With light set, every process of the host has registered
 * for membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) and the rare side (the
 * one about to sleep) issues that barrier after raising its flag, so the
 * hot side needs only a compiler barrier; otherwise the store itself is
 * sequentially consistent (a locked instruction that waits for the line).
 * See shm_doorbell.c.
 */
static inline void shm_store_ordered(_Atomic uint32_t *word, uint32_t value,
                                     int light)
{
    if (BASE_LIKELY(light)) {
        atomic_store_explicit(word, value, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_store_explicit(word, value, memory_order_seq_cst);
    }
}

/* Make the cell filled for ticket tail visible to the consumer. */
static inline void shm_prod_publish(shm_prod_t *p, shm_cell_t *cell, int light)
{
    shm_store_ordered(&cell->seq, p->tail + 1, light);
    p->tail++;
}

/* ---- consumer -------------------------------------------------------------- */

typedef struct shm_cons {
    shm_cell_t *cells;
    uint32_t mask;
    uint32_t head;
    char *bulk;
    uint32_t bulk_mask;
    uint64_t noreply;
    shm_chan_hdr_t *hdr;
} shm_cons_t;

/* The cell at the head if it holds a published frame, else NULL. */
static inline shm_cell_t *shm_cons_peek(const shm_cons_t *c)
{
    shm_cell_t *cell = &c->cells[c->head & c->mask];

    /* Every line of the cell, each look (see the top of this file): cache
     * hits while the cell is empty, one parallel fetch once it is written. */
    for (unsigned l = 1; l < SHM_CELL_LINES; l++)
        (void)*(volatile const uint64_t *)((const char *)cell + 64 * l);
    if (atomic_load_explicit(&cell->seq, memory_order_acquire) != c->head + 1)
        return NULL;
    return cell;
}

/*
 * Release the head cell (and its bulk payload, if any).  Returns 1 when
 * the producer asked to be woken (the caller rings its doorbell).  Only
 * the producer clears want_wake, when it stops waiting, so a request to be
 * woken is never lost to a concurrent clear.
 */
static inline int shm_cons_release(shm_cons_t *c, const shm_cell_t *cell,
                                   int noreply, int light)
{
    if (((cell->kind & SHM_LOC_MASK) >> SHM_LOC_SHIFT) == SHM_LOC_BULK)
        atomic_store_explicit(
            &c->hdr->bulk_head,
            cell->aux + (uint32_t)base_align_up(cell->len, SHM_BULK_ALIGN),
            memory_order_release);
    if (noreply)
        atomic_store_explicit(&c->hdr->noreply, ++c->noreply,
                              memory_order_release);
    c->head++;
    /* Ordered before the load of want_wake (Dekker with the producer). */
    shm_store_ordered(&c->hdr->head, c->head, light);
    return atomic_load_explicit(&c->hdr->want_wake, memory_order_seq_cst) != 0;
}

#endif /* SHOAL_SHM_RING_H */
