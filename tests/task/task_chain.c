/*
 * A deep chain of nested blocks, as a recursion on a list would make it:
 * each level writes its value, starts a block of one child for the rest,
 * and after the child's block adds the child's partial sum to its own.
 * The sums live on pages no level touches before its block, so each
 * level's merge and write must find them along the chain of waiting
 * parents (task_page.c: a waiting parent takes a page its children ask
 * for, so the next level finds it a step away instead of at the top).
 *
 *   task_chain DEPTH   prints "ok: depth D sum S" (the sequential sum)
 */
#include <stdio.h>
#include <stdlib.h>

#include <shoal/task.h>

#define CHAIN_MAX 20000

SHOAL_SHARED struct {
    long val[CHAIN_MAX];
    long sum[CHAIN_MAX];
} g;

SHOAL_TASK_ROUTINE(level)
{
    (void)width;
    (void)id;
    (void)len;
    int d = *(const int *)arg;
    g.val[d] = 3L * d + 1;
    if (d == 0) {
        g.sum[0] = g.val[0];
        return;
    }
    int next = d - 1;
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(1, level, &next, sizeof next);
    SHOAL_PAREND;
    g.sum[d] = g.sum[d - 1] + g.val[d];
}

static int task_main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 100;
    if (depth < 0 || depth >= CHAIN_MAX) {
        fprintf(stderr, "task_chain: depth from 0 to %d\n", CHAIN_MAX - 1);
        return 2;
    }
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(1, level, &depth, sizeof depth);
    SHOAL_PAREND;
    long want = 0;
    for (int i = 0; i <= depth; i++)
        want += 3L * i + 1;
    if (g.sum[depth] != want) {
        printf("FAIL: depth %d sum %ld, want %ld\n", depth, g.sum[depth],
               want);
        return 1;
    }
    printf("ok: depth %d sum %ld\n", depth, want);
    return 0;
}

SHOAL_TASK_MAIN(task_main)
