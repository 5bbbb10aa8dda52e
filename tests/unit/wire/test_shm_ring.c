/*
 * The shared-memory channel (shm_ring.h) in one process: ring wrap-around,
 * full ring, tiny rings, sequence numbers across the 32-bit wrap, the bulk
 * ring's skip at its end, and a two-thread stream checked for order.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "test.h"
#include "wire/shm/shm_ring.h"

/* Both orderings of the hot-path stores (see shm_store_ordered). */
static int light;

typedef struct chan {
    shm_chan_hdr_t hdr;
    shm_cell_t *cells;
    char *bulk;
    shm_prod_t prod;
    shm_cons_t cons;
} chan_t;

/*
 * A channel of ncells cells whose tickets start at start, with every cell
 * holding the sequence number its last use (before start) left, as after a
 * long run.
 */
static chan_t *chan_new(uint32_t ncells, uint32_t bulk_size, uint32_t start)
{
    chan_t *c = calloc(1, sizeof(*c));

    T_ASSERT(c != NULL);
    T_ASSERT(posix_memalign((void **)&c->cells, 64,
                            ncells * sizeof(shm_cell_t)) == 0);
    memset(c->cells, 0, ncells * sizeof(shm_cell_t));
    c->bulk = bulk_size ? aligned_alloc(64, bulk_size) : NULL;
    for (uint32_t i = 0; i < ncells; i++) {
        uint32_t last = start - ncells + ((i - start) & (ncells - 1));
        atomic_store(&c->cells[i].seq, last + 1);
    }
    atomic_store(&c->hdr.head, start);
    atomic_store(&c->hdr.bulk_head, start);
    c->prod = (shm_prod_t){c->cells, ncells - 1, start, start, c->bulk,
                           bulk_size ? bulk_size - 1 : 0, start, start, &c->hdr};
    c->cons = (shm_cons_t){c->cells, ncells - 1, start, c->bulk,
                           bulk_size ? bulk_size - 1 : 0, 0, &c->hdr};
    return c;
}

static void chan_free(chan_t *c)
{
    free(c->cells);
    free(c->bulk);
    free(c);
}

static int send_value(chan_t *c, uint64_t v)
{
    shm_cell_t *cell = shm_prod_cell(&c->prod);

    if (cell == NULL)
        return 0;
    cell->kind = 0;
    cell->nargs = 1;
    cell->len = 0;
    cell->body[0] = v;
    shm_prod_publish(&c->prod, cell, light);
    return 1;
}

static int recv_value(chan_t *c, uint64_t *v)
{
    shm_cell_t *cell = shm_cons_peek(&c->cons);

    if (cell == NULL)
        return 0;
    *v = cell->body[0];
    shm_cons_release(&c->cons, cell, 0, light);
    return 1;
}

static void stream(uint32_t ncells, uint32_t start, uint64_t count)
{
    chan_t *c = chan_new(ncells, 0, start);
    uint64_t sent = 0, got = 0, v;

    T_ASSERT(!recv_value(c, &v)); /* stale cells must not look ready */
    while (got < count) {
        /* Send a burst of varying length, then drain some. */
        uint64_t burst = 1 + (sent * 7 % (ncells + 3));
        for (uint64_t i = 0; i < burst && sent < count; i++)
            if (send_value(c, sent))
                sent++;
        uint64_t take = 1 + (got * 5 % (ncells + 1));
        for (uint64_t i = 0; i < take && recv_value(c, &v); i++) {
            T_EQ(v, got);
            got++;
        }
    }
    T_ASSERT(!recv_value(c, &v));
    chan_free(c);
}

static void test_wrap_around(void)
{
    stream(8, 0, 100000);
}

static void test_tiny_ring(void)
{
    stream(2, 0, 100000);
}

static void test_one_cell_laps(void)
{
    /* Smallest legal ring stays correct lap after lap. */
    chan_t *c = chan_new(2, 0, 0);
    uint64_t v;

    for (uint64_t i = 0; i < 1000; i++) {
        T_ASSERT(send_value(c, i));
        T_ASSERT(recv_value(c, &v));
        T_EQ(v, i);
        T_ASSERT(!recv_value(c, &v));
    }
    chan_free(c);
}

static void test_full_ring(void)
{
    chan_t *c = chan_new(16, 0, 0);
    uint64_t v;
    int n = 0;

    while (send_value(c, (uint64_t)n))
        n++;
    T_EQ(n, 16); /* exactly the cells, no more */
    T_ASSERT(!send_value(c, 99));
    T_ASSERT(recv_value(c, &v));
    T_EQ(v, 0);
    T_ASSERT(send_value(c, 16)); /* one freed, one more fits */
    T_ASSERT(!send_value(c, 17));
    for (int i = 1; i <= 16; i++) {
        T_ASSERT(recv_value(c, &v));
        T_EQ(v, i);
    }
    T_ASSERT(!recv_value(c, &v));
    chan_free(c);
}

static void test_sequence_wrap(void)
{
    /* Tickets cross 2^32: sequence numbers wrap and are reused. */
    stream(4, UINT32_MAX - 50, 1000);
    stream(2, UINT32_MAX - 1, 100);
    stream(64, UINT32_MAX - 63, 10000);
}

static void test_want_wake(void)
{
    chan_t *c = chan_new(4, 0, 0);
    uint64_t v;

    T_ASSERT(send_value(c, 1));
    shm_cell_t *cell = shm_cons_peek(&c->cons);
    T_ASSERT(cell != NULL);
    T_EQ(shm_cons_release(&c->cons, cell, 0, 0), 0); /* nobody asked */
    atomic_store(&c->hdr.want_wake, 1);
    T_ASSERT(send_value(c, 2));
    cell = shm_cons_peek(&c->cons);
    T_EQ(shm_cons_release(&c->cons, cell, 1, 1), 1); /* producer asked */
    T_EQ(atomic_load(&c->hdr.noreply), 1);
    T_EQ(atomic_load(&c->hdr.want_wake), 1); /* only the producer clears it */
    T_ASSERT(!recv_value(c, &v));
    chan_free(c);
}

static void test_bulk(void)
{
    chan_t *c = chan_new(64, 1024, 0);
    uint32_t tail;
    int64_t pos;

    /* Too large for half the ring: never fits. */
    T_EQ(shm_prod_bulk(&c->prod, 513, &tail), -1);
    /* 300 -> 320 bytes at 0; then 320 at 320; then 320 at 640 */
    for (int i = 0; i < 3; i++) {
        pos = shm_prod_bulk(&c->prod, 300, &tail);
        T_EQ(pos, 320 * i);
        c->prod.bulk_tail = tail;
    }
    /* 64 bytes left at the end, 320 needed: skip to the start, but the
     * start is still in use. */
    T_EQ(shm_prod_bulk(&c->prod, 300, &tail), -1);
    /* Consumer releases the first payload. */
    atomic_store(&c->hdr.bulk_head, 320);
    pos = shm_prod_bulk(&c->prod, 300, &tail);
    T_EQ(pos, 1024); /* position 1024 = offset 0 of the next lap */
    T_EQ(tail, 1024 + 320);
    T_ASSERT(shm_bulk_at(c->bulk, c->prod.bulk_mask, (uint32_t)pos) == c->bulk);
    chan_free(c);
}

static void test_bulk_wrap32(void)
{
    /* Bulk positions are 32-bit and wrap too. */
    uint32_t start = UINT32_MAX - 1023; /* 1024 below 2^32: lap-aligned */
    chan_t *c = chan_new(8, 1024, start);
    uint32_t expect = start;

    for (int i = 0; i < 100; i++) {
        uint32_t tail;
        int64_t pos = shm_prod_bulk(&c->prod, 200, &tail);
        T_ASSERT(pos >= 0);
        if ((expect & 1023) + 256 > 1024)
            expect += 1024 - (expect & 1023);
        T_EQ((uint32_t)pos, expect);
        expect += 256;
        c->prod.bulk_tail = tail;
        atomic_store(&c->hdr.bulk_head, tail); /* consumed at once */
    }
    chan_free(c);
}

/* Two threads: a producer streaming numbers, a consumer checking them. */
#define THREAD_COUNT 2000000u

static void *producer(void *arg)
{
    chan_t *c = arg;

    for (uint64_t i = 0; i < THREAD_COUNT;)
        if (send_value(c, i))
            i++;
    return NULL;
}

static void test_threads(void)
{
    chan_t *c = chan_new(8, 0, 0);
    pthread_t t;
    uint64_t v, got = 0;

    T_EQ(pthread_create(&t, NULL, producer, c), 0);
    while (got < THREAD_COUNT)
        if (recv_value(c, &v)) {
            if (v != got)
                T_FAIL("value %llu at position %llu", (unsigned long long)v,
                       (unsigned long long)got);
            got++;
        }
    pthread_join(t, NULL);
    chan_free(c);
}

static const t_case_t cases[] = {
    {"wrap_around", test_wrap_around},   {"tiny_ring", test_tiny_ring},
    {"one_cell_laps", test_one_cell_laps}, {"full_ring", test_full_ring},
    {"sequence_wrap", test_sequence_wrap}, {"want_wake", test_want_wake},
    {"bulk", test_bulk},                 {"bulk_wrap32", test_bulk_wrap32},
    {"threads", test_threads},
};

int main(int argc, char **argv)
{
    for (light = 0; light <= 1; light++) {
        fprintf(stderr, "== %s stores\n", light ? "light" : "fenced");
        T_RUN(cases, argc, argv);
    }
    return 0;
}
