/*
 * shoal_task_run (shoal/task.h): every rank becomes a worker, rank 0 also
 * the coordinator, and all run one loop: sleep in the active-message wait
 * until a message, a copy's news (the doorbell, task_ring) or a timer;
 * hand messages to the coordinator or the worker; send what they queued.
 * The coordinator ends the run with a handshake (end_run) so that no
 * worker is left behind.
 *
 * Failover.  When the coordinator's rank dies before the run is over,
 * every worker kills its copies and takes the lowest rank still alive for
 * the coordinator (ranks only ever die, so all agree once they have seen
 * the same deaths; the coordinator's rank only grows).  That rank starts a
 * coordinator afresh and runs the program's root job again from its
 * start: the others join it with a hello, as at the start, and hand it
 * the results of finished jobs they kept (TM_KEPT, task_worker.c), which
 * it takes instead of running those jobs again.  Jobs are idempotent and
 * their memory is the parent's snapshot, so running the tree again, or
 * taking a result of an earlier run, gives the same result.  A worker
 * that sees a hello (and its TM_KEPT) before it has seen the
 * coordinator's death keeps it for when it has (early[], early_kept[]).
 *
 * Routines travel as offsets from the program's main function, so the
 * program may be loaded anywhere; the shared heap is at one fixed
 * address.  Addresses of static shared variables differ between workers
 * only under address randomization, which each worker turns off for
 * itself (re-executing once) where the system lets it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "am/am.h"
#include "base/base.h"
#include "boot/boot.h"
#include "shoal.h"
#include "task/task_elf.h"
#include "task/task_msg.h"
#include "task/task_rt.h"

task_rt_t task_rt;

static void no_aslr(char **argv)
{
    int p = personality(0xffffffff);

    if (p < 0 || (p & ADDR_NO_RANDOMIZE))
        return;
    if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) < 0)
        return; /* not allowed here (a container's seccomp, say) */
    execv("/proc/self/exe", argv);
    personality((unsigned long)p); /* went on with randomization */
}

uint64_t task_layout(void)
{
    const shoal_task_program_t *p = task_rt.prog;
    uint64_t v = (uint64_t)task_rt.region.area[0].size * 0x9e3779b97f4a7c15u;

    v ^= (uint64_t)task_rt.nlocks << 48;
    v ^= (uint64_t)task_rt.region.area[1].size >> 12;
    if (task_rt.region.area[0].base != NULL)
        v ^= (uint64_t)((uintptr_t)task_rt.region.area[0].base -
                        (uintptr_t)p->main) << 20;
    return v;
}

/* early[r]: rank r said hello to a coordinator that is not this rank
 * yet (failover); early_kept[r]: the results it kept, which came with
 * the hello (TM_KEPT), for that coordinator. */
static uint8_t *early;
static struct early_kept {
    uint8_t *msg;
    size_t len;
} *early_kept;

/* This worker's hello to the coordinator. */
static int hello(void)
{
    task_buf_t b = {0};

    task_msg_start(&b, TM_HELLO, (uint32_t)task_rt.rank);
    task_buf_u64(&b, task_layout());
    return b.err ? b.err : task_msg_send(task_rt.coord, b.p, b.len);
}

static int setup(int argc, char **argv, const shoal_task_program_t *prog)
{
    memset(&task_rt, 0, sizeof(task_rt));
    task_rt.prog = prog;
    task_rt.argc = argc;
    task_rt.argv = argv;
    task_rt.rank = shoal_rank();
    task_rt.size = shoal_size();
    task_rt.seed = (uint64_t)base_cfg.TASK_SEED;
    task_rt.max_copies = (uint32_t)base_cfg.TASK_COPIES;
    task_rt.max_crashes = (uint32_t)base_cfg.TASK_CRASHES;
    task_rt.suspect_locks = (uint32_t)base_cfg.TASK_SUSPECT_LOCKS;
    task_rt.suspect_ns = (uint64_t)base_cfg.TASK_SUSPECT;
    task_rt.beat_ns = (uint64_t)base_cfg.TASK_HEARTBEAT;
    /* Children fetch their pages from their parents (off: each gets its
     * parent's whole state with it, the first runtime's way; coord: every
     * page from the coordinator, as when every source is gone). */
    task_rt.pages = base_cfg.TASK_PAGES; /* 0 off, 1 on, 2 coord */
    char *begin, *end;
    int s = task_elf_shared(&begin, &end);
    if (s == SHOAL_OK)
        s = task_region_init(&task_rt.region, begin, end,
                             (size_t)base_cfg.TASK_HEAP);
    uint32_t nuser = 0;
    if (prog->locks_begin != NULL && prog->locks_end > prog->locks_begin)
        nuser = (uint32_t)(prog->locks_end - prog->locks_begin);
    for (uint32_t i = 0; s == SHOAL_OK && i < nuser; i++) {
        const shoal_task_lock_t *l = &prog->locks_begin[i];
        s = task_region_exclude(&task_rt.region, l->addr, l->len);
        if (s != SHOAL_OK)
            s = base_err(s, "lock %s: %s", l->name, shoal_error_detail());
    }
    /* The shared heap's top is a lock's variable: shoal_task_alloc takes
     * it, so sibling jobs allocate disjoint ranges and every run of a job
     * gets the same addresses (task_copy.c). */
    if (s == SHOAL_OK &&
        (task_rt.locks = calloc(nuser + 1, sizeof(*task_rt.locks))) == NULL)
        s = base_err(SHOAL_ERR_NOMEM, "task: locks");
    if (s == SHOAL_OK) {
        if (nuser > 0)
            memcpy(task_rt.locks, prog->locks_begin,
                   nuser * sizeof(*task_rt.locks));
        task_rt.heap_lock = nuser;
        task_rt.heap_top = 0;
        task_rt.locks[nuser] = (shoal_task_lock_t){
            &task_rt.heap_top, sizeof(task_rt.heap_top), "the shared heap"};
        task_rt.nlocks = nuser + 1;
    }
    /* A worker shares its CPU with its copies, which are what it mostly
     * waits for: a wait must give the CPU away at once, never spin
     * (am_wait.c's plan for more ranks than CPUs). */
    am.oversubscribed = 1;
    /* shoalrun lets the job go on when this rank dies. */
    if (s == SHOAL_OK)
        s = boot_put("task-expendable", "1", 1);
    if (s == SHOAL_OK)
        s = task_msg_init();
    if (s == SHOAL_OK)
        s = task_worker_init();
    if (s == SHOAL_OK && task_rt.rank == task_rt.coord)
        s = task_coord_init();
    if (s == SHOAL_OK && task_rt.rank != task_rt.coord)
        s = hello();
    return s;
}

static int coord_msg(uint32_t type)
{
    return (type >= TM_HELLO && type <= TM_FAIL) || type == TM_PAGE_COORD ||
           type == TM_BYE || type == TM_KEPT;
}

/* The coordinator died before the run was over: the lowest rank alive
 * coordinates now, from the start of the program (see the top). */
static int failover(void)
{
    int old = task_rt.coord, next = old + 1, s = SHOAL_OK;

    while (next < task_rt.rank && task_msg_dead(next))
        next++;
    task_worker_kill_all();
    task_rt.coord = next;
    if (next != task_rt.rank) {
        base_info("task", "rank %d: the coordinator (rank %d) is gone; "
                  "joining rank %d, the next", task_rt.rank, old, next);
        s = hello();
        return s == SHOAL_OK && task_keeps_results() ? task_worker_send_kept()
                                                     : s;
    }
    base_warn("task", "the coordinator (rank %d) is gone: rank %d "
              "coordinates now and runs the program again from its start%s",
              old, next,
              task_keeps_results() ? ", taking the results the workers kept"
                                   : "");
    s = task_coord_init();
    if (s == SHOAL_OK && task_keeps_results())
        s = task_worker_send_kept();
    for (int r = 0; s == SHOAL_OK && r < task_rt.size; r++) {
        if (!early[r] || task_msg_dead(r))
            continue;
        task_buf_t b = {0};
        task_msg_start(&b, TM_HELLO, (uint32_t)r);
        task_buf_u64(&b, task_layout());
        s = b.err ? b.err : task_coord_handle(r, b.p, b.len);
        free(b.p);
    }
    memset(early, 0, (size_t)task_rt.size);
    for (int r = 0; r < task_rt.size; r++) {
        struct early_kept *e = &early_kept[r];
        if (s == SHOAL_OK && e->msg != NULL && !task_msg_dead(r))
            s = task_coord_handle(r, e->msg, e->len);
        free(e->msg);
        *e = (struct early_kept){NULL, 0};
    }
    return s;
}

static int ready(void *arg, int handled)
{
    (void)arg;
    return handled > 0 || task_msg_waiting() ||
           atomic_load_explicit(task_rt.bell, memory_order_acquire);
}

static int wait_a_while(uint64_t ns)
{
    int s = am_block(ready, NULL, NULL, 0, (int64_t)ns);
    /* A rank with news at every turn never waits long enough for the
     * wait to look at its peers (am_wait.c): the coordinator, busy, never
     * learned that a worker's process had died, took it for silent only,
     * and at the run's end waited twice end_run's 10 s for its goodbye
     * and for its backlog to leave. */
    am_check_peers_due();
    return s == SHOAL_ERR_TIMEOUT ? SHOAL_OK : s;
}

/* The slots pages of the coordinator and of the other workers of this
 * host, mapped while they live (task_page_host_mark: at most a few tries
 * each), where each marks the run over when it ends it or is told so. */
static void map_host_marks(void)
{
    for (int r = 0; r < task_rt.size; r++)
        if (r != task_rt.rank && wire_shm_local_pid(r) > 0)
            (void)task_page_host_mark(r);
}

/* Whether a rank of this host marked the run over: a worker stopped
 * across the end, whose TM_END never left the coordinator (its window to
 * this rank full), learns it from a worker of its host that was told. */
static int host_says_over(void)
{
    for (int r = 0; r < task_rt.size; r++) {
        const struct task_slots_mark *m =
            r != task_rt.rank && wire_shm_local_pid(r) > 0
                ? task_page_host_mark(r)
                : NULL;
        if (m != NULL && atomic_load(&m->over))
            return 1;
    }
    return 0;
}

/* One turn of the loop: *exit_p as task_worker_handle sets it. */
static int turn(int *exit_p, int *status_p)
{
    static uint64_t next_poll;
    int src, s = wait_a_while(task_rt.beat_ns / 2);
    uint8_t *msg;
    size_t len;
    uint64_t now = base_time_ns();

    /* Ranks the launcher let go (a host lost): once a heartbeat.  And
     * the coordinator's slots page, where it marks the run over (a
     * worker of its host maps it while it lives). */
    if (now >= next_poll) {
        next_poll = now + task_rt.beat_ns;
        task_msg_poll_gone();
        if (task_rt.rank != task_rt.coord)
            map_host_marks();
    }

    while (s == SHOAL_OK && !*exit_p && task_msg_next(&src, &msg, &len)) {
        uint32_t type = len >= 4 ? msg[0] : 0;
        if (coord_msg(type) && task_rt.rank == task_rt.coord)
            s = task_coord_handle(src, msg, len);
        else if (coord_msg(type) && type == TM_KEPT) {
            free(early_kept[src].msg); /* for a coordinator to come */
            early_kept[src] = (struct early_kept){msg, len};
            msg = NULL;
        } else if (coord_msg(type))
            early[src] |= type == TM_HELLO; /* for a coordinator to come */
        else
            s = task_worker_handle(msg, len, exit_p, status_p);
        free(msg);
    }
    if (s == SHOAL_OK && !*exit_p)
        s = task_worker_tick();
    if (s == SHOAL_OK && task_rt.rank == task_rt.coord && !*exit_p) {
        int done;
        s = task_coord_tick(&done, status_p);
        if (s == SHOAL_OK && done)
            *exit_p = 2; /* end_run says whether to finalize */
    } else if (s == SHOAL_OK && !*exit_p && task_msg_dead(task_rt.coord) &&
               !task_msg_waiting()) {
        /* (A message that came meanwhile, the coordinator's last, is read
         * first.)  Told the run is over, the worker only missed its exit
         * order: the coordinator left without waiting for it any longer. */
        if (task_worker_over() || host_says_over()) {
            /* (A worker of its host stopped across the end never read
             * TM_END: the coordinator marked the run over in its page
             * before it waited for the goodbyes, and so did every worker
             * that read TM_END, in its own.) */
            base_info("task", "rank %d: the coordinator (rank %d) left "
                      "after the run", task_rt.rank, task_rt.coord);
            *exit_p = 2;
        } else if (base_cfg.TASK_FAILOVER) {
            s = failover();
        } else {
            fprintf(stderr, "shoal task: rank %d: the coordinator (rank %d) "
                            "is gone; the run cannot go on "
                            "(SHOAL_TASK_FAILOVER=0)\n",
                    task_rt.rank, task_rt.coord);
            *exit_p = 2;
            *status_p = 1;
        }
    }
    if (s == SHOAL_OK)
        s = task_msg_flush();
    return s;
}

/* Rank 0 after the run (the coordinator told every worker not lost that
 * it is over, TM_END): waits until each has said goodbye (TM_BYE) or is
 * gone, then orders them out (TM_EXIT) and waits until the orders have
 * left.  The wait is at least 10 s, so that a worker stopped or starved
 * for a few seconds (a loaded machine) still ends well; and as long as
 * every worker that still owes its goodbye is silent (stopped: alive, or
 * the wires or the launcher would have said so), up to
 * SHOAL_TASK_END_WAIT: the job cannot end before such a worker anyway,
 * and one that wakes to find rank 0 gone has only the marks of its
 * host's ranks to tell it that the run was over (turn), not its TM_END,
 * which a window full of what went to its copies may have held back.
 * Returns 1 for a collective finalize. */
static int end_run(void)
{
    uint64_t wait = 2 * task_rt.suspect_ns;
    uint64_t silent = base_cfg.TASK_END_WAIT;
    int finalize = 0, src;
    uint8_t *msg;
    size_t len;

    if (wait < 10000000000ull)
        wait = 10000000000ull;
    if (silent < wait)
        silent = wait;
    /* The run is over, for a worker of this host that finds this rank
     * gone without having read TM_END (turn). */
    task_worker_mark_over();
    for (int phase = 0; phase < 2; phase++) {
        uint64_t start = base_time_ns(), deadline = start + wait;
        for (;;) {
            task_msg_flush();
            while (task_msg_next(&src, &msg, &len)) {
                /* Only goodbyes matter now: the copies are gone. */
                task_coord_heard(src);
                if (len >= 4 && msg[0] == TM_BYE)
                    task_coord_handle(src, msg, len);
                free(msg);
            }
            if (phase == 0 ? task_coord_all_bye() : !task_msg_queued())
                break;
            uint64_t now = base_time_ns();
            if (now >= deadline &&
                (phase == 1 || now - start >= silent ||
                 !task_coord_missing_silent(task_rt.suspect_ns)))
                break;
            wait_a_while(10000000);
        }
        if (phase == 0)
            finalize = task_coord_exit();
    }
    return finalize;
}

int shoal_task_run(int argc, char **argv, const shoal_task_program_t *prog)
{
    int exit = 0, status = 0;

    if (prog == NULL || prog->main == NULL) {
        fprintf(stderr, "shoal task: no program to run\n");
        return 1;
    }
    no_aslr(argv);
    int s = shoal_init(NULL);
    if (s != SHOAL_OK) {
        fprintf(stderr, "shoal task: %s\n", shoal_error_detail());
        return 1;
    }
    early = calloc((size_t)shoal_size(), 1);
    early_kept = calloc((size_t)shoal_size(), sizeof(*early_kept));
    s = early != NULL && early_kept != NULL
            ? setup(argc, argv, prog)
            : base_err(SHOAL_ERR_NOMEM, "task: set-up");
    while (s == SHOAL_OK && !exit)
        s = turn(&exit, &status);
    if (s != SHOAL_OK) {
        fprintf(stderr, "shoal task: rank %d: %s (%s)\n", task_rt.rank,
                shoal_error_detail(), shoal_err_name(s));
        status = 1;
        exit = 2;
    }
    task_worker_fini();
    if (task_rt.rank == task_rt.coord && s == SHOAL_OK)
        exit = end_run() ? 1 : 2;
    if (task_rt.rank == task_rt.coord)
        task_coord_fini();
    free(early);
    early = NULL;
    for (int r = 0; early_kept != NULL && r < task_rt.size; r++)
        free(early_kept[r].msg);
    free(early_kept);
    early_kept = NULL;
    task_msg_fini();
    task_region_fini(&task_rt.region);
    free(task_rt.locks);
    task_rt.locks = NULL;
    fflush(stdout);
    if (exit == 1)
        shoal_finalize();
    return status;
}
