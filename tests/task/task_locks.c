/*
 * The lock counter (tests/task): k jobs each enter a critical section n
 * times and add one to a shared counter; whatever runs twice, is stopped
 * or killed, the counter must end at exactly k * n.  A second lock guards
 * a second counter that every other section also adds to, so that two
 * locks interleave.  With r rounds the block runs r times in a row (each
 * round's jobs may run in the processes of the round before: warm copies).
 *
 *     task_locks [k [n [r]]]    (default 4 jobs x 1000 sections, 1 round)
 */
#include <stdio.h>
#include <stdlib.h>

#include <shoal/task.h>

SHOAL_SHARED long counter;
SHOAL_SHARED long evens;
SHOAL_TASK_LOCK(counter_lock, &counter, sizeof counter);
SHOAL_TASK_LOCK(evens_lock, &evens, sizeof evens);

SHOAL_TASK_ROUTINE(adder)
{
    int n = *(const int *)arg;
    (void)width;
    (void)id;
    (void)len;
    for (int i = 0; i < n; i++) {
        SHOAL_CRITICAL(&counter_lock) { counter++; }
        if (i % 2 == 0) {
            shoal_task_lock(&evens_lock);
            evens += 1;
            shoal_task_unlock(&evens_lock);
        }
    }
}

static int task_main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 4;
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    int r = argc > 3 ? atoi(argv[3]) : 1;
    long c, e;

    for (int round = 0; round < r; round++) {
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(k, adder, &n, sizeof n);
        SHOAL_PAREND;
    }
    SHOAL_CRITICAL(&counter_lock) { c = counter; }
    SHOAL_CRITICAL(&evens_lock) { e = evens; }
    long want = (long)k * n * r, want_e = (long)k * ((n + 1) / 2) * r;
    printf("%s: counter %ld (expected %ld), evens %ld (expected %ld)\n",
           c == want && e == want_e ? "ok" : "FAIL", c, want, e, want_e);
    return c == want && e == want_e ? 0 : 1;
}
SHOAL_TASK_MAIN(task_main)
