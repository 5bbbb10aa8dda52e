/*
 * Bad use of the task runtime (tests/task): each mode makes one mistake
 * that every run of a job repeats; the run must end with a message naming
 * the mistake and the job's path (task_faults.sh mode error checks it).
 *
 *     task_bad unlock|nested|crash|conflict|exit|heap|heapfill|ok
 *
 * heapfill (run with SHOAL_TASK_HEAP=1M): eight siblings each allocate
 * 200 KiB; five fit, three get SHOAL_ERR_NOMEM with the heap's use, and
 * the run goes on (the root prints the counts and one refusal's detail).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/task.h>

SHOAL_SHARED int cell[4];
SHOAL_SHARED struct { int got[8]; char why[8][160]; } fill;
SHOAL_SHARED int guarded;
SHOAL_TASK_LOCK(l, &guarded, sizeof guarded);

/* Children see shared memory and their arguments, not the root's private
 * globals: the mode travels as the argument. */
SHOAL_TASK_ROUTINE(worker)
{
    const char *mode = arg;
    (void)width;
    (void)len;
    if (strcmp(mode, "unlock") == 0 && id == 1)
        shoal_task_unlock(&l);
    if (strcmp(mode, "nested") == 0 && id == 0) {
        shoal_task_lock(&l);
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(1, worker, "ok", 3);
        SHOAL_PAREND;
    }
    if (strcmp(mode, "crash") == 0 && id == 1)
        abort(); /* not SIGSEGV: sanitizers catch that and exit 1 */
    if (strcmp(mode, "conflict") == 0)
        cell[2] = 10 + id;
    if (strcmp(mode, "exit") == 0 && id == 0)
        exit(3);
    if (strcmp(mode, "heap") == 0 && id == 1) {
        void *p;
        if (shoal_task_alloc((size_t)1 << 40, &p) != SHOAL_ERR_NOMEM)
            cell[id] = -1;
        printf("heap: %s\n", shoal_error_detail());
    }
    cell[id] = id + 1;
}

SHOAL_TASK_ROUTINE(filler)
{
    void *p;
    (void)width;
    (void)arg;
    (void)len;
    if (shoal_task_alloc(200 * 1024, &p) == SHOAL_OK) {
        memset(p, id + 1, 200 * 1024);
        fill.got[id] = 1;
    } else {
        fill.got[id] = 2;
        snprintf(fill.why[id], sizeof fill.why[id], "%s",
                 shoal_error_detail());
    }
}

static int task_main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (strcmp(mode, "heapfill") == 0) {
        int ok = 0, refused = 0;
        const char *why = "";
        SHOAL_PARBEGIN
            SHOAL_ROUTINE(8, filler, NULL, 0);
        SHOAL_PAREND;
        for (int i = 0; i < 8; i++) {
            ok += fill.got[i] == 1;
            if (fill.got[i] == 2) {
                refused++;
                why = fill.why[i];
            }
        }
        printf("heapfill: %d allocated, %d refused: %s\n", ok, refused, why);
        return ok == 5 && refused == 3 ? 0 : 1;
    }
    SHOAL_PARBEGIN
        SHOAL_ROUTINE(2, worker, mode, strlen(mode) + 1);
    SHOAL_PAREND;
    printf("ok: %d %d\n", cell[0], cell[1]);
    return cell[0] == 1 && cell[1] == 2 ? 0 : 1;
}
SHOAL_TASK_MAIN(task_main)
