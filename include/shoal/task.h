/*
 * shoal/task.h: nested parallel jobs on workers that may be slow, stopped
 * or killed (docs/TASK.md; after Huang's NYU dissertation).
 *
 * Write the program for an ideal machine: unlimited processors, one shared
 * memory, no failures.  A *job* runs a routine; inside it a block
 *
 *     SHOAL_PARBEGIN
 *         SHOAL_ROUTINE(2, child, args, sizeof args);
 *         SHOAL_ROUTINE(1, other, NULL, 0);
 *     SHOAL_PAREND;
 *
 * starts width jobs of each routine (ids 0..width-1) and waits until all of
 * them have finished.  The program's main routine (SHOAL_TASK_MAIN) is the
 * root job.  Started by `shoalrun -n N ./prog`, every rank is a worker; a
 * job may run several times at once (redundant copies on idle workers, the
 * first to finish wins) or again after its worker was killed or stopped,
 * and the result is the same as one run: a job reads a snapshot of its
 * parent's shared memory as it was at SHOAL_PARBEGIN, its own writes are
 * kept aside, and the writes of a whole block are merged into the parent's
 * memory at SHOAL_PAREND, in job order.
 *
 * Shared memory: variables declared SHOAL_SHARED and the shared heap
 * (shoal_task_alloc).  Everything else (stack, other globals, malloc) is
 * private to one run of one job.  Siblings may write one byte only with
 * the same value (common CRCW); two siblings writing different values to
 * one byte is reported at SHOAL_PAREND with both jobs' paths.
 *
 * Locks: a lock guards one range of shared variables (entry consistency):
 * inside the critical section the job sees and changes their latest value;
 * outside it their value is undefined.  Locks are held by jobs, not by runs
 * of a job: every run of a job sees the same grants in the same order.
 *
 * What a job must not do: I/O other than printing to stdout (which is
 * collected and printed once, in the sequential program's order, when the
 * root job ends), anything non-deterministic outside its random stream
 * (time, pids, files), exit() (return from the routine instead), threads,
 * or pointers to private memory in shared memory.
 *
 * Errors: calls that can fail return SHOAL_OK or a negative SHOAL_ERR_*
 * code with a detail in shoal_error_detail().  Misuse inside a job that
 * every run of it would repeat (unlocking a lock not held, a block inside
 * a critical section, a write conflict, a crash that repeats) ends the
 * whole run with a message naming the job's path, e.g. "/0.1[3]" (block 0
 * of the root, routine 1, id 3): retrying cannot help.
 *
 * Example, a nested quicksort:
 *
 *     #include <shoal/task.h>
 *
 *     SHOAL_SHARED int a[100000];
 *
 *     static void sort(int lo, int hi);
 *
 *     static void half(int width, int id, const void *arg, size_t len)
 *     {
 *         const int *b = arg;          // by-value bounds: lo0 hi0 lo1 hi1
 *         (void)width; (void)len;
 *         sort(b[2 * id], b[2 * id + 1]);
 *     }
 *
 *     static void sort(int lo, int hi)
 *     {
 *         if (hi - lo < 1000) { insertion_sort(a, lo, hi); return; }
 *         int k = partition(a, lo, hi);
 *         int bounds[4] = {lo, k, k + 1, hi};
 *         SHOAL_PARBEGIN
 *             SHOAL_ROUTINE(2, half, bounds, sizeof bounds);
 *         SHOAL_PAREND;
 *     }
 *
 *     static int task_main(int argc, char **argv)
 *     {
 *         for (int i = 0; i < 100000; i++)
 *             a[i] = (int)shoal_task_rand_below(1000000);
 *         sort(0, 100000);
 *         printf("%d %d\n", a[0], a[99999]);
 *         return 0;
 *     }
 *     SHOAL_TASK_MAIN(task_main)
 */
#ifndef SHOAL_TASK_H
#define SHOAL_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared memory ------------------------------------------------------- */

/*
 * Declares a shared variable of the static shared section, e.g.
 *
 *     SHOAL_SHARED int a[1000];
 *     SHOAL_SHARED struct { long sum; int n; } totals = {0, 10};
 *
 * Each one starts on a page of its own (4 KiB): group small variables in
 * a struct.  The section is the program's large-data section (.ldata),
 * which the linker puts after every other variable, so no private
 * variable shares its pages; its bytes are in the executable file, so
 * keep big arrays in the shared heap.  Shared variables have the same
 * address in every worker when address randomization can be turned off
 * (the runtime does it for each worker where the system allows it);
 * pointers into the shared heap stay valid everywhere.
 */
#define SHOAL_SHARED                                                         \
    __attribute__((section(".ldata.shoal"), aligned(4096), used))

/*
 * Allocates size bytes (rounded up to 16) of the shared heap into *ptr_p,
 * zeroed.  The heap is SHOAL_TASK_HEAP bytes at one fixed address in every
 * worker; memory is never freed.  Any job may allocate, siblings too: each
 * gets a range of its own, and every run of a job gets the same addresses,
 * so a job may build a structure in the heap and leave its pointers in
 * shared memory for its parent.  The heap's top is kept like a lock's
 * variable: a job takes a chunk of the heap (a round trip to the
 * coordinator, like an uncontended lock) and serves its next allocations
 * from it; the chunks grow with what the job allocated, so at most half
 * of a job's last chunk stays unused.  SHOAL_ERR_NOMEM with the heap's use
 * in the detail when it is exhausted; SHOAL_ERR_NOT_INIT outside a job.
 *
 *     double *v;
 *     if (shoal_task_alloc(n * sizeof *v, (void **)&v) != SHOAL_OK)
 *         return 1;
 */
SHOAL_API int shoal_task_alloc(size_t size, void **ptr_p);

/* ---- jobs ---------------------------------------------------------------- */

/*
 * A routine: width jobs run it, with ids 0..width-1 and a copy of the
 * argument bytes given to SHOAL_ROUTINE (aligned for any type; NULL when
 * len is 0).  The
 * routine must be a function of the program (not of a shared library
 * loaded later): it is named to other workers by its address.
 */
typedef void (*shoal_task_fn_t)(int width, int id, const void *arg,
                                size_t len);

/* Declares (or defines, followed by a body) a routine:
 *     SHOAL_TASK_ROUTINE(child) { use(width, id, arg, len); } */
#define SHOAL_TASK_ROUTINE(name)                                             \
    static void name(int width, int id, const void *arg, size_t len)

/*
 * The block calls behind SHOAL_PARBEGIN, SHOAL_ROUTINE and SHOAL_PAREND
 * (use the macros).  shoal_task_parbegin opens the job's next block;
 * shoal_task_routine adds width jobs of fn with len bytes of arguments
 * (copied; at most SHOAL_TASK_MAX_ARG); shoal_task_parend starts them all,
 * waits until every one has finished and merges their writes into this
 * job's memory.  Errors end the run (see above): a block inside a
 * critical section, a routine outside a block, width < 0, too many
 * argument bytes, a write conflict between siblings.
 */
#define SHOAL_TASK_MAX_ARG 65536
SHOAL_API int shoal_task_parbegin(void);
SHOAL_API int shoal_task_routine(int width, shoal_task_fn_t fn,
                                 const void *arg, size_t len);
SHOAL_API int shoal_task_parend(void);

#define SHOAL_PARBEGIN do { (void)shoal_task_parbegin();
#define SHOAL_ROUTINE(width, fn, arg, len)                                   \
    (void)shoal_task_routine((width), (fn), (arg), (len))
#define SHOAL_PAREND (void)shoal_task_parend(); } while (0)

/*
 * The job's path, as text ("/" for the root, "/0.1[3]" for id 3 of the
 * second routine of the root's first block): the same in every run of the
 * job.  Writes at most cap bytes with the NUL and returns the whole
 * length (like snprintf); 0 outside a job.
 */
SHOAL_API size_t shoal_task_path(char *buf, size_t cap);

/* ---- the job's random stream --------------------------------------------- */

/*
 * Random numbers that depend only on SHOAL_TASK_SEED, the job's path and
 * how many the job drew before: every run of a job draws the same ones, so
 * randomized programs may nest and lock, and their output is the same on
 * every run with the same seed.  Not for cryptography.
 *
 *     int pivot = lo + (int)shoal_task_rand_below((uint64_t)(hi - lo));
 */
SHOAL_API uint64_t shoal_task_rand(void);
/* Uniform in [0, bound) (bound > 0; 0 for bound 0). */
SHOAL_API uint64_t shoal_task_rand_below(uint64_t bound);
/* Uniform in [0, 1). */
SHOAL_API double shoal_task_rand_unit(void);

/* ---- locks --------------------------------------------------------------- */

typedef struct shoal_task_lock {
    void *addr;       /* the associated shared variables */
    size_t len;
    const char *name; /* for messages */
} shoal_task_lock_t;

/*
 * Defines a lock guarding len bytes of static shared variables at addr
 * (the thesis's sync_t with assoc):
 *
 *     SHOAL_SHARED long counter;
 *     SHOAL_TASK_LOCK(counter_lock, &counter, sizeof counter);
 *
 * Locks are defined at file scope, in the program (never in a library).
 * A range must lie in the static shared section and belong to one lock.
 */
#define SHOAL_TASK_LOCK(name, addr, len)                                     \
    shoal_task_lock_t name                                                   \
        __attribute__((section("shoal_task_locks"), used, aligned(8))) =    \
            {(addr), (len), #name}

/*
 * Enters the lock's critical section: waits until no other job holds it,
 * then the associated variables hold their latest value.  Locks are not
 * recursive; holding several is allowed (and may deadlock, as anywhere).
 * A job that asks too often (busy waiting on a lock, SHOAL_TASK_SUSPECT)
 * is given a lower priority so that other jobs run.  Ending the critical
 * section publishes the variables to the next holder.  Locking a lock the
 * job holds, or unlocking one it does not, ends the run.
 *
 *     shoal_task_lock(&counter_lock);
 *     counter++;
 *     shoal_task_unlock(&counter_lock);
 *     // or: SHOAL_CRITICAL(&counter_lock) { counter++; }
 */
SHOAL_API int shoal_task_lock(shoal_task_lock_t *lock);
SHOAL_API int shoal_task_unlock(shoal_task_lock_t *lock);

/* Runs the statement that follows inside the lock's critical section
 * (do not leave it with break, return or goto). */
#define SHOAL_CRITICAL(lock)                                                 \
    for (int shoal_crit_ = (shoal_task_lock(lock), 1); shoal_crit_;          \
         shoal_crit_ = (shoal_task_unlock(lock), 0))

/* ---- the program --------------------------------------------------------- */

typedef int (*shoal_task_main_fn_t)(int argc, char **argv);

/* What SHOAL_TASK_MAIN passes to shoal_task_run: the program's sections. */
typedef struct shoal_task_program {
    shoal_task_main_fn_t main;
    shoal_task_lock_t *locks_begin, *locks_end;
} shoal_task_program_t;

/*
 * Runs the program: every rank becomes a worker, rank 0 also the
 * coordinator, which runs prog->main(argc, argv) as the root job.  Rank
 * 0 returns the root job's return value, after the root's output has been
 * printed; the other ranks return 0 when the run ends.  An error that
 * ends the run (see above) is printed and the return value is non-zero.
 * Use SHOAL_TASK_MAIN rather than calling this.
 */
SHOAL_API int shoal_task_run(int argc, char **argv,
                             const shoal_task_program_t *prog);

/*
 * Defines main() for a task program whose root job is fn:
 *
 *     static int task_main(int argc, char **argv) { ... return 0; }
 *     SHOAL_TASK_MAIN(task_main)
 */
#ifdef __cplusplus
#define SHOAL_TASK_EXTERN_ extern "C"
#else
#define SHOAL_TASK_EXTERN_ extern
#endif
#define SHOAL_TASK_MAIN(fn)                                                  \
    SHOAL_TASK_EXTERN_ shoal_task_lock_t __start_shoal_task_locks[]          \
        __attribute__((weak, visibility("hidden")));                         \
    SHOAL_TASK_EXTERN_ shoal_task_lock_t __stop_shoal_task_locks[]           \
        __attribute__((weak, visibility("hidden")));                         \
    int main(int argc, char **argv)                                          \
    {                                                                        \
        shoal_task_program_t prog_ = {(fn), __start_shoal_task_locks,       \
                                      __stop_shoal_task_locks};             \
        return shoal_task_run(argc, argv, &prog_);                           \
    }

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_TASK_H */
