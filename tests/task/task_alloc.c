/*
 * Shared-heap allocation inside jobs (tests/task): every job of a random
 * binary tree allocates from the shared heap while its siblings do too,
 * builds a linked list of nodes there for its parent, and fills each
 * allocation with its own pattern.  After the run the root walks the
 * whole tree through the heap pointers the jobs left and checks that
 *
 *  - every node has the value the sequential program computes (so the
 *    siblings' allocations reached the root at PAREND, not conflicts);
 *  - no two allocations overlap (each still holds its owner's pattern);
 *  - every run of a job got the same addresses (what a job stores are
 *    heap pointers, compared by the merge: a redundant copy that got
 *    other addresses would be a write conflict or a warning).
 *
 *     task_alloc [seed] [depth] [allocs per job]
 *
 * Prints "ok: <nodes> nodes, <bytes> bytes" or what was wrong.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/task.h>

typedef struct node {
    struct node *next;
    uint64_t owner; /* a hash of the allocating job's position */
    uint64_t len;   /* bytes of pattern after the header */
    uint64_t value;
    unsigned char pattern[];
} node_t;

typedef struct result {
    node_t *head;     /* this job's nodes */
    struct result *kid[2];
    uint64_t sum;     /* of the subtree's values */
} result_t;

typedef struct arg {
    uint64_t seed, key;
    uint64_t depth, allocs;
    result_t *slot[2]; /* where each child leaves its result */
} arg_t;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* The sizes and values a job uses: functions of its key only. */
static uint64_t size_of(uint64_t key, uint64_t i)
{
    uint64_t r = mix(key * 31 + i) % 100;
    return r < 70 ? 8 + r : r < 95 ? 500 + r * 20 : 70000 + r * 100;
}

static uint64_t value_of(uint64_t key, uint64_t i) { return mix(key + i) % 1000; }

static int has_kids(uint64_t key, uint64_t depth)
{
    return depth > 0 && (depth > 3 || mix(key ^ 0x55) % 4 != 0);
}

static uint64_t seq_sum(uint64_t key, uint64_t depth, uint64_t allocs)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < allocs; i++)
        s += value_of(key, i);
    if (has_kids(key, depth))
        for (uint64_t c = 0; c < 2; c++)
            s += seq_sum(key * 2 + c + 1, depth - 1, allocs);
    return s;
}

static void build(const arg_t *a, result_t *out);

SHOAL_TASK_ROUTINE(child)
{
    const arg_t *a = arg;
    arg_t mine = *a;
    (void)width;
    (void)len;
    mine.key = a->key * 2 + (uint64_t)id + 1;
    mine.depth = a->depth - 1;
    build(&mine, a->slot[id]);
}

/* A job: allocates its nodes (and, before its block, its children's
 * result slots), runs its children, sums up. */
static void build(const arg_t *a, result_t *out)
{
    uint64_t sum = 0;
    node_t *head = NULL;
    for (uint64_t i = 0; i < a->allocs; i++) {
        uint64_t n = size_of(a->key, i);
        node_t *nd;
        if (shoal_task_alloc(sizeof(*nd) + n, (void **)&nd) != SHOAL_OK) {
            printf("alloc failed in job key %" PRIu64 ": %s\n", a->key,
                   shoal_error_detail());
            return;
        }
        nd->next = head;
        nd->owner = mix(a->key);
        nd->len = n;
        nd->value = value_of(a->key, i);
        memset(nd->pattern, (int)(nd->owner & 0xff), n);
        head = nd;
        sum += nd->value;
    }
    out->head = head;
    out->kid[0] = out->kid[1] = NULL;
    if (has_kids(a->key, a->depth)) {
        arg_t ca = *a;
        for (int c = 0; c < 2; c++)
            if (shoal_task_alloc(sizeof(result_t), (void **)&ca.slot[c]) !=
                SHOAL_OK) {
                printf("alloc failed: %s\n", shoal_error_detail());
                return;
            }
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(2, child, &ca, sizeof ca);
        SHOAL_PAREND;
        for (int c = 0; c < 2; c++) {
            out->kid[c] = ca.slot[c];
            sum += ca.slot[c]->sum;
        }
    }
    out->sum = sum;
}

typedef struct span {
    uintptr_t lo, hi;
} span_t;

static span_t *spans;
static size_t nspans, capspans;

static int add_span(const void *p, size_t n)
{
    if (nspans == capspans) {
        capspans = capspans ? 2 * capspans : 1024;
        spans = realloc(spans, capspans * sizeof(*spans));
        if (spans == NULL)
            return -1;
    }
    spans[nspans++] = (span_t){(uintptr_t)p, (uintptr_t)p + n};
    return 0;
}

/* Walks the tree from r: values against the sequential sums, patterns. */
static int walk(const result_t *r, uint64_t key, uint64_t depth,
                uint64_t allocs, uint64_t *nodes, uint64_t *bytes)
{
    if (r == NULL) {
        printf("BAD: job key %" PRIu64 " left no result\n", key);
        return 1;
    }
    if (r->sum != seq_sum(key, depth, allocs)) {
        printf("BAD: job key %" PRIu64 " sum %" PRIu64 ", sequential %" PRIu64
               "\n", key, r->sum, seq_sum(key, depth, allocs));
        return 1;
    }
    add_span(r, sizeof(*r));
    uint64_t i = allocs;
    for (const node_t *nd = r->head; nd != NULL; nd = nd->next) {
        i--;
        if (nd->owner != mix(key) || nd->len != size_of(key, i) ||
            nd->value != value_of(key, i)) {
            printf("BAD: job key %" PRIu64 " node %" PRIu64 " overwritten\n",
                   key, i);
            return 1;
        }
        for (uint64_t b = 0; b < nd->len; b++)
            if (nd->pattern[b] != (unsigned char)(nd->owner & 0xff)) {
                printf("BAD: job key %" PRIu64 " node %" PRIu64 " byte %" PRIu64
                       " overwritten\n", key, i, b);
                return 1;
            }
        add_span(nd, sizeof(*nd) + nd->len);
        (*nodes)++;
        *bytes += sizeof(*nd) + nd->len;
    }
    if (i != 0) {
        printf("BAD: job key %" PRIu64 " has %" PRIu64 " nodes missing\n", key,
               i);
        return 1;
    }
    if (has_kids(key, depth))
        for (uint64_t c = 0; c < 2; c++)
            if (walk(r->kid[c], key * 2 + c + 1, depth - 1, allocs, nodes,
                     bytes))
                return 1;
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int task_main(int argc, char **argv)
{
    arg_t a = {0};
    a.seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    a.depth = argc > 2 ? strtoull(argv[2], NULL, 10) : 7;
    a.allocs = argc > 3 ? strtoull(argv[3], NULL, 10) : 6;
    a.key = a.seed;
    result_t *root;
    if (shoal_task_alloc(sizeof(*root), (void **)&root) != SHOAL_OK) {
        printf("alloc failed: %s\n", shoal_error_detail());
        return 1;
    }
    build(&a, root);
    uint64_t nodes = 0, bytes = 0;
    if (walk(root, a.key, a.depth, a.allocs, &nodes, &bytes))
        return 1;
    qsort(spans, nspans, sizeof(*spans), by_lo);
    for (size_t k = 1; k < nspans; k++)
        if (spans[k].lo < spans[k - 1].hi) {
            printf("BAD: allocations overlap at %#" PRIxPTR "\n", spans[k].lo);
            return 1;
        }
    printf("ok: %" PRIu64 " nodes, %" PRIu64 " bytes\n", nodes, bytes);
    free(spans);
    return 0;
}
SHOAL_TASK_MAIN(task_main)
