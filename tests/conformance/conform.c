/* Conformance generator: randomized, seeded MPI programs.
 *
 *   conform --seed S --cases N [--only K] [--first K] [--time-limit SEC]
 *           [--case-timeout SEC] [--budget-floor SEC] [--budget-rate MB/s]
 *           [--budget-factor F] [--skip K,...] [--times] [--verbose]
 *           [--no-threads]
 *
 * Every rank derives the same random sequence from (seed, case index), so
 * case K of seed S is the same program whenever and wherever it runs, and
 * `--seed S --only K` runs it alone.  Each case draws a communicator, an
 * operation (every point-to-point mode, every collective in its blocking,
 * nonblocking and persistent form, idup, several communicators at once,
 * threads) and datatypes from every constructor; every received byte, every
 * gap byte and every status field is checked.  A case that does not finish
 * within --case-timeout is reported (seed, case, description) by a watchdog
 * thread, which then ends the process; one that takes far longer than its
 * data needs is reported as a stall.
 *
 * Written against the standard mpi.h only: it builds with shoalcc,
 * mpicc.mpich and mpicc.openmpi (tests/conformance/run.sh compares them). */
#define _GNU_SOURCE 1  /* clock_gettime, nanosleep */
#include "conform.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int g_rank, g_size;
uint64_t g_seed = 1;
long g_case = -1;
int g_same_host = 1;
int g_thread_level = MPI_THREAD_SINGLE;
int g_quirk_mpich40;
int g_quirk_ompi4;
_Thread_local int t_no_bsend;
_Thread_local int t_thread = -1;

static long opt_types = 0;
static long opt_cases = 100, opt_only = -1, opt_first = 0;
static char opt_skip[1024] = ",";   /* ",K1,K2,": cases not run (past a hang) */
static double opt_time_limit = 0, opt_case_timeout = 30;
/* The per-case time budget (see the case loop); factor 0: by library. */
static double opt_budget_floor = 0.5, opt_budget_rate = 50, opt_budget_factor = 0;
static int opt_times = 0, opt_verbose = 0, opt_threads = 1, opt_max_fail_lines = 20;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_desc[8192];
static size_t g_desc_len;
static int g_case_failed;
static int g_fail_lines;
static double g_bytes, g_sleep, g_local;
static _Thread_local int t_local_depth;
static _Thread_local double t_local_start;

/* Watchdog state: read by the watchdog thread. */
static _Atomic long w_case = -1;
static _Atomic double w_deadline;   /* absolute time, 0: none */
static _Atomic double w_start;

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void add_bytes(double bytes)
{
    pthread_mutex_lock(&g_lock);
    g_bytes += bytes;
    pthread_mutex_unlock(&g_lock);
}

void add_sleep(double seconds)
{
    pthread_mutex_lock(&g_lock);
    g_sleep += seconds;
    pthread_mutex_unlock(&g_lock);
}

/* Seconds this process's main thread spent runnable but not running
 * (Linux /proc/self/schedstat; 0 elsewhere): time the machine's load took,
 * not the library. */
static double run_delay(void)
{
    FILE *f = fopen("/proc/self/schedstat", "r");
    unsigned long long on = 0, wait = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &on, &wait) != 2)
        wait = 0;
    fclose(f);
    return (double)wait * 1e-9;
}

void local_enter(void)
{
    if (t_local_depth++ == 0)
        t_local_start = now();
}

void local_leave(void)
{
    if (--t_local_depth == 0) {
        double d = now() - t_local_start;
        pthread_mutex_lock(&g_lock);
        g_local += d;
        pthread_mutex_unlock(&g_lock);
    }
}

void check_local_call(const char *call, double t0, double slept)
{
    double d = now() - t0;
    if (d > slept / 4)
        fail("%s took %.0f ms while a peer slept %.0f ms outside MPI: it is local (a nonblocking "
             "start, a buffered send or MPI_Start) and must not wait for the peer (limit %.0f ms)",
             call, d * 1e3, slept * 1e3, slept / 4 * 1e3);
}

void desc_add(const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_lock);
    int n = snprintf(g_desc + g_desc_len, sizeof g_desc - g_desc_len, "%s%s%s",
                     g_desc_len ? "; " : "", t_thread >= 0 ? (t_thread ? "[t1] " : "[t0] ") : "", tmp);
    if (n > 0)
        g_desc_len += (size_t)n;
    if (g_desc_len >= sizeof g_desc)
        g_desc_len = sizeof g_desc - 1;
    if (opt_verbose && g_rank == 0) {
        printf("  case %ld: %s\n", g_case, tmp);
        fflush(stdout);
    }
    pthread_mutex_unlock(&g_lock);
}

void fail(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_lock);
    g_case_failed = 1;
    if (g_fail_lines++ < opt_max_fail_lines) {
        fprintf(stderr, "conform: FAIL seed=%llu case=%ld rank=%d%s: %s\n    case: %s\n"
                        "    rerun: --seed %llu --only %ld\n",
                (unsigned long long)g_seed, g_case, g_rank,
                t_thread >= 0 ? (t_thread ? " thread=1" : " thread=0") : "", msg, g_desc,
                (unsigned long long)g_seed, g_case);
        fflush(stderr);
    }
    pthread_mutex_unlock(&g_lock);
}

void mpi_fail(const char *call, int rc, const char *file, int line)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", rc);
    const char *base = strrchr(file, '/');
    fail("%s returned %d (%s) at %s:%d", call, rc, s, base ? base + 1 : file, line);
}

void status_init(MPI_Status *st)
{
    memset(st, 0x5c, sizeof *st);
    st->MPI_SOURCE = -77;
    st->MPI_TAG = -77;
    st->MPI_ERROR = ERR_SENTINEL;
}

void check_status(const MPI_Status *st, int source, int tag, const tmodel *rt, MPI_Aint nbytes,
                  int check_error, const char *what)
{
    if (source != -1 && st->MPI_SOURCE != source)
        fail("%s: status.MPI_SOURCE is %d, expected %d", what, st->MPI_SOURCE, source);
    if (tag != -1 && st->MPI_TAG != tag)
        fail("%s: status.MPI_TAG is %d, expected %d", what, st->MPI_TAG, tag);
    if (check_error && !g_quirk_mpich40 && st->MPI_ERROR != ERR_SENTINEL)
        fail("%s: status.MPI_ERROR was changed from %d to %d (only multiple-completion calls "
             "returning MPI_ERR_IN_STATUS may set it)", what, ERR_SENTINEL, st->MPI_ERROR);
    if (!rt)
        return;
    int count = -5, elems = -5;
    CHK(MPI_Get_count(st, rt->dt, &count));
    /* MPICH 4.0 divides by zero in MPI_Get_elements on a struct whose
     * members have different basic types (struct{int, contiguous(2,float)}):
     * ask only about single-basic-type layouts. */
    if (rt->basic != MPI_DATATYPE_NULL)
        CHK(MPI_Get_elements(st, rt->dt, &elems));
    MPI_Aint want_count = nbytes % rt->size == 0 ? nbytes / rt->size : MPI_UNDEFINED;
    /* Basic elements: whole elements, then the segments of a partial one. */
    MPI_Aint full = nbytes / rt->size, rem = nbytes % rt->size;
    MPI_Aint want_elems = full * rt->nelem;
    for (size_t s = 0; s < rt->nsegs && rem > 0; s++) {
        MPI_Aint n = rt->segs[s].len < rem ? rt->segs[s].len : rem;
        want_elems += n / rt->segs[s].esz;
        rem -= n;
    }
    if (count != want_count)
        fail("%s: MPI_Get_count says %d, expected %ld (%ld bytes of %ld-byte elements)", what,
             count, (long)want_count, (long)nbytes, (long)rt->size);
    if (rt->basic != MPI_DATATYPE_NULL && elems != want_elems)
        fail("%s: MPI_Get_elements says %d, expected %ld", what, elems, (long)want_elems);
}

/* ---- communicators ------------------------------------------------------- */
static void draw_colors(rng_t *r, int *color, int n, int ncolors, int both)
{
    for (;;) {
        int seen[4] = { 0, 0, 0, 0 };
        for (int i = 0; i < n; i++) {
            color[i] = (int)rng_below(r, (uint64_t)ncolors);
            seen[color[i]] = 1;
        }
        if (!both || (seen[0] && seen[1]))
            return;
    }
}

void comm_fill_info(ccomm_t *c)
{
    int flag = 0;
    if (c->comm == MPI_COMM_NULL)
        return;
    CHK(MPI_Comm_test_inter(c->comm, &flag));
    c->inter = flag;
    CHK(MPI_Comm_rank(c->comm, &c->rank));
    CHK(MPI_Comm_size(c->comm, &c->size));
    c->rsize = 0;
    if (flag)
        CHK(MPI_Comm_remote_size(c->comm, &c->rsize));
}

static void make_inter(ccomm_t *c, rng_t *r, char *d, size_t dn)
{
    int color[256], key_rev = rng_chance(r, 30);
    draw_colors(r, color, g_size, 2, 1);
    MPI_Comm local;
    int key = key_rev ? g_size - g_rank : g_rank;
    CHK(MPI_Comm_split(MPI_COMM_WORLD, color[g_rank], key, &local));
    /* Leaders: local rank 0 of each group, i.e. the lowest (or, with
     * reversed keys, highest) world rank of the group. */
    int leader[2] = { -1, -1 };
    for (int i = 0; i < g_size; i++) {
        int g = color[i];
        if (leader[g] < 0 || (key_rev ? i > leader[g] : i < leader[g]))
            leader[g] = i;
    }
    int tag = rng_range(r, 0, 999);
    CHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader[1 - color[g_rank]], tag, &c->comm));
    CHK(MPI_Comm_free(&local));
    c->group = color[g_rank];
    c->owned = 1;
    char g[300];
    size_t u = 0;
    for (int i = 0; i < g_size && u + 4 < sizeof g; i++)
        g[u++] = (char)('0' + color[i]);
    g[u] = 0;
    snprintf(d, dn, "inter(groups %s%s)", g, key_rev ? ",rev" : "");
}

void comm_make(ccomm_t *c, rng_t *r, int kind)
{
    memset(c, 0, sizeof *c);
    c->comm = MPI_COMM_NULL;
    if (kind == CK_INTER && g_size < 2)
        kind = CK_DUP;
    switch (kind) {
    case CK_WORLD:
        c->comm = MPI_COMM_WORLD;
        snprintf(c->desc, sizeof c->desc, "world");
        break;
    case CK_DUP:
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm));
        c->owned = 1;
        snprintf(c->desc, sizeof c->desc, "dup(world)");
        break;
    case CK_SPLIT: {
        int color[256], nc = rng_range(r, 1, 3), keymode = rng_range(r, 0, 2);
        draw_colors(r, color, g_size, nc, 0);
        int undef = g_size >= 3 && rng_chance(r, 10) ? rng_range(r, 0, g_size - 1) : -1;
        /* keymode 2: a key per rank from one shared draw (ties go by rank). */
        uint64_t kd = rng_next(r);
        int key = keymode == 0 ? 0 : keymode == 1 ? g_size - g_rank : (int)((kd >> (g_rank % 60)) & 3);
        CHK(MPI_Comm_split(MPI_COMM_WORLD, g_rank == undef ? MPI_UNDEFINED : color[g_rank], key,
                           &c->comm));
        c->owned = 1;
        char g[300];
        size_t u = 0;
        for (int i = 0; i < g_size && u + 4 < sizeof g; i++)
            g[u++] = i == undef ? 'u' : (char)('0' + color[i]);
        g[u] = 0;
        snprintf(c->desc, sizeof c->desc, "split(colors %s,%s)", g,
                 keymode == 0 ? "key 0" : keymode == 1 ? "key rev" : "key same");
        break;
    }
    case CK_INTER:
        make_inter(c, r, c->desc, sizeof c->desc);
        break;
    default: {            /* CK_IDUP: of world, a split or an intercommunicator */
        ccomm_t base;
        int bk = rng_range(r, 0, 2);
        comm_make(&base, r, bk == 0 ? CK_WORLD : bk == 1 ? CK_SPLIT : CK_INTER);
        rng_t lr = rng_derive(rng_next(r), 0x30000u + (uint64_t)g_rank);
        if (base.comm != MPI_COMM_NULL) {
            MPI_Request req;
            CHK(MPI_Comm_idup(base.comm, &c->comm, &req));
            complete_one(&lr, &req);
        }
        c->owned = 1;
        c->group = base.group;
        snprintf(c->desc, sizeof c->desc, "idup(%.300s)", base.desc);
        comm_release(&base);
        break;
    }
    }
    if (c->comm != MPI_COMM_NULL)
        CHK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    comm_fill_info(c);
}

void comm_release(ccomm_t *c)
{
    if (c->owned && c->comm != MPI_COMM_NULL)
        CHK(MPI_Comm_free(&c->comm));
    c->comm = MPI_COMM_NULL;
}

/* Completes one request in a randomly chosen way. */
void complete_one(rng_t *r, MPI_Request *req)
{
    int how = rng_range(r, 0, 3), flag = 0, idx;
    switch (how) {
    case 0:
        CHK(MPI_Wait(req, MPI_STATUS_IGNORE));
        break;
    case 1:
        while (!flag)
            CHK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        break;
    case 2:
        CHK(MPI_Waitall(1, req, MPI_STATUSES_IGNORE));
        break;
    default:
        CHK(MPI_Waitany(1, req, &idx, MPI_STATUS_IGNORE));
        break;
    }
}

/* ---- scenarios ----------------------------------------------------------- */
int random_comm_kind(rng_t *r)
{
    int x = rng_range(r, 0, 99);
    return x < 30 ? CK_WORLD : x < 45 ? CK_DUP : x < 70 ? CK_SPLIT : x < 90 ? CK_INTER : CK_IDUP;
}

void run_cop_whole(rng_t *r, ccomm_t *c, int small)
{
    int form = rng_range(r, 0, 2);
    cop_t *o = cop_new(r, c, form, small);
    rng_t lr = rng_derive(rng_next(r), 0x40000u + (uint64_t)g_rank);
    if (!o)
        return;
    for (int it = 0; it < cop_iters(o); it++) {
        cop_fill(o, it);
        cop_start(o, it);
        if (cop_form(o) != FORM_BLOCKING)
            complete_one(&lr, cop_request(o));
        cop_verify(o, it);
    }
    cop_free(o);
}

/* Several communicators, a nonblocking or persistent collective on each
 * (sometimes followed by a nonblocking one on the same communicator),
 * started in a different order on each rank and completed in another; on
 * the first iteration one rank may sleep before starting, while the others'
 * starts are timed (they are local). */
static void scenario_multi(rng_t *r)
{
    int m = rng_range(r, 2, 4), persistent = rng_chance(r, 60);
    /* Drawn the same everywhere; carried out only where the library has
     * working persistent collectives (else nonblocking). */
    persistent = persistent && HAVE_MPI4 && !g_quirk_mpich40;
    int sleeper = rng_chance(r, 35) ? rng_range(r, 0, g_size - 1) : -1;
    ccomm_t cs[4];
    cop_t *ops[4], *ops2[4];
    desc_add("multi: %d communicators, %s collectives started in a per-rank order%s", m,
             persistent ? "persistent" : "nonblocking", sleeper >= 0 ? ", one rank sleeping first" : "");
    if (sleeper >= 0)
        desc_add("world rank %d sleeps %.0f ms before its starts", sleeper, PEER_SLEEP * 1e3);
    for (int i = 0; i < m; i++)
        comm_make(&cs[i], r, rng_chance(r, 45) ? CK_INTER : rng_chance(r, 50) ? CK_SPLIT : CK_DUP);
    for (int i = 0; i < m; i++) {
        rng_t sub = rng_derive(rng_next(r), (uint64_t)i);
        int second = rng_chance(r, 35), second_p = rng_chance(r, 50) && persistent;
        desc_add("comm %d: %s", i, cs[i].desc);
        ops[i] = cs[i].comm == MPI_COMM_NULL
                     ? NULL
                     : cop_new(&sub, &cs[i], persistent ? FORM_PERSISTENT : FORM_NONBLOCKING, 1);
        ops2[i] = NULL;
        if (second) {
            rng_t sub2 = rng_derive(rng_next(r), 50u + (uint64_t)i);
            if (cs[i].comm != MPI_COMM_NULL) {
                desc_add(second_p ? "and on comm %d, started in any order with the first:" : "then on comm %d:", i);
                ops2[i] = cop_new(&sub2, &cs[i], second_p ? FORM_PERSISTENT : FORM_NONBLOCKING, 1);
            }
        }
    }
    int iters = rng_range(r, 1, 3);
    rng_t mine = rng_derive(rng_next(r), 1000u + (uint64_t)g_rank);
    for (int it = 0; it < iters; it++) {
        /* seq: this rank's start order; comm i appears once per op on it,
         * its first op first (the same order on every rank per comm). */
        int seq[8], ns = 0, seen[4] = { 0, 0, 0, 0 }, n = 0, slot[8];
        cop_t *started[8];
        MPI_Request reqs[8];
        /* A second persistent op may start before the first (MPI 4.0
         * orders the initializations of persistent collectives, not their
         * starts): its entry is 4 + i. */
        for (int i = 0; i < m; i++) {
            seq[ns++] = i;
            if (ops2[i])
                seq[ns++] = cop_form(ops2[i]) == FORM_PERSISTENT ? 4 + i : i;
        }
        rng_shuffle(&mine, seq, ns);
        for (int i = 0; i < m; i++) {
            if (ops[i])
                cop_fill(ops[i], it);
            if (ops2[i])
                cop_fill(ops2[i], it);
        }
        /* Persistent: initialize on the first iteration in slot order (the
         * *_init calls are collective), then start in this rank's order. */
        if (persistent && it == 0)
            for (int i = 0; i < m; i++) {
                if (ops[i])
                    cop_start(ops[i], -1);
                if (ops2[i] && cop_form(ops2[i]) == FORM_PERSISTENT)
                    cop_start(ops2[i], -1);
            }
        int asleep = it == 0 && sleeper >= 0;
        if (asleep && g_rank == sleeper) {
            sleep_ms((int)(PEER_SLEEP * 1e3));
        }
        if (asleep)
            add_sleep(PEER_SLEEP);
        double slept = asleep && g_rank != sleeper ? PEER_SLEEP : 0;
        int startall = persistent && rng_chance(&mine, 50);
        if (startall) {
            /* Every persistent op at once, in this rank's order; the
             * nonblocking second ops follow. */
            MPI_Request pr[8];
            int np = 0, seen2[4] = { 0, 0, 0, 0 };
            for (int k = 0; k < ns; k++) {
                int i = seq[k] & 3;
                cop_t *o = seq[k] >= 4 ? ops2[i] : seen2[i]++ ? ops2[i] : ops[i];
                if (!o || cop_form(o) != FORM_PERSISTENT)
                    continue;
                pr[np] = *cop_request(o);
                reqs[n] = pr[np++];
                started[n] = o;
                slot[n++] = i;
            }
            double t0 = now();
            CHK(MPI_Startall(np, pr));
            if (slept > 0)
                check_local_call("MPI_Startall of persistent collectives", t0, slept);
        }
        for (int k = 0; k < ns; k++) {
            int i = seq[k] & 3;
            cop_t *o = seq[k] >= 4 ? ops2[i] : seen[i]++ ? ops2[i] : ops[i];
            if (!o || (startall && cop_form(o) == FORM_PERSISTENT))
                continue;     /* absent here, or already started by the Startall */
            cop_start(o, it);
            if (slept > 0)
                check_local_call(cop_name(o), cop_call_time(o), slept);
            reqs[n] = *cop_request(o);
            started[n] = o;
            slot[n++] = i;
        }
        (void)slot;
        /* Completion in this rank's own way and order. */
        int how = rng_range(&mine, 0, 3);
        if (how == 0) {
            CHK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        } else if (how == 1) {
            int ord[8];
            for (int k = 0; k < n; k++)
                ord[k] = k;
            rng_shuffle(&mine, ord, n);
            for (int k = 0; k < n; k++)
                CHK(MPI_Wait(&reqs[ord[k]], MPI_STATUS_IGNORE));
        } else if (how == 2) {
            for (int k = 0; k < n; k++) {
                int idx = -1;
                CHK(MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE));
            }
        } else {
            int flag = 0;
            while (!flag)
                CHK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
        }
        for (int k = 0; k < n; k++)
            if (cop_form(started[k]) != FORM_PERSISTENT)
                *cop_request(started[k]) = MPI_REQUEST_NULL;
        for (int i = 0; i < m; i++) {
            if (ops[i])
                cop_verify(ops[i], it);
            if (ops2[i])
                cop_verify(ops2[i], it);
        }
    }
    for (int i = 0; i < m; i++) {
        if (ops[i])
            cop_free(ops[i]);
        if (ops2[i])
            cop_free(ops2[i]);
        comm_release(&cs[i]);
    }
}

/* MPI_Comm_idup, several at once, of intra- and intercommunicators, mixed
 * with a nonblocking collective on the same communicator. */
static void scenario_idup(rng_t *r)
{
    ccomm_t base;
    int bk = rng_range(r, 0, 3);
    comm_make(&base, r, bk == 0 ? CK_DUP : bk == 1 ? CK_SPLIT : CK_INTER);
    int k = rng_range(r, 1, 3), with_coll = rng_chance(r, 50);
    desc_add("idup: %d idups of %s%s", k, base.desc, with_coll ? " with a nonblocking collective between" : "");
    if (base.comm == MPI_COMM_NULL) {
        comm_release(&base);
        return;
    }
    MPI_Comm nc[3];
    MPI_Request reqs[4];
    int n = 0, collpos = with_coll ? rng_range(r, 0, k) : -1;
    cop_t *o = NULL;
    if (with_coll) {
        rng_t sub = rng_derive(rng_next(r), 7);
        o = cop_new(&sub, &base, FORM_NONBLOCKING, 1);
        cop_fill(o, 0);
    }
    for (int i = 0; i <= k; i++) {
        if (i == collpos && o) {
            cop_start(o, 0);
            reqs[n++] = *cop_request(o);
        }
        if (i < k) {
            CHK(MPI_Comm_idup(base.comm, &nc[i], &reqs[n]));
            if (g_quirk_ompi4 && base.inter)   /* Open MPI 4 hangs with several pending */
                CHK(MPI_Wait(&reqs[n], MPI_STATUS_IGNORE));
            n++;
        }
    }
    rng_t mine = rng_derive(rng_next(r), 2000u + (uint64_t)g_rank);
    int order[4] = { 0, 1, 2, 3 };
    rng_shuffle(&mine, order, n);
    if (g_quirk_ompi4)
        for (int i = 0; i < n; i++)
            order[i] = i;
    for (int i = 0; i < n; i++)
        CHK(MPI_Wait(&reqs[order[i]], MPI_STATUS_IGNORE));
    if (o) {
        *cop_request(o) = MPI_REQUEST_NULL;
        cop_verify(o, 0);
        cop_free(o);
    }
    for (int i = 0; i < k; i++) {
        int res = -1;
        CHK(MPI_Comm_compare(base.comm, nc[i], &res));
        if (res != MPI_CONGRUENT)
            fail("MPI_Comm_compare(comm, idup %d of it) is %d, expected MPI_CONGRUENT", i, res);
        ccomm_t d = base;
        d.comm = nc[i];
        d.owned = 1;
        CHK(MPI_Comm_set_errhandler(d.comm, MPI_ERRORS_RETURN));
        comm_fill_info(&d);
        rng_t sub = rng_derive(rng_next(r), 100u + (uint64_t)i);
        run_cop_whole(&sub, &d, 1);
        comm_release(&d);
    }
    comm_release(&base);
}

/* Two threads per rank, each with its own communicator and traffic. */
struct thr_arg {
    ccomm_t *c;
    uint64_t seed;
    int id;
};

static void *thread_main(void *p)
{
    struct thr_arg *a = p;
    t_thread = a->id;
    t_no_bsend = 1;
    rng_t r = rng_derive(a->seed, (uint64_t)a->id);
    int nops = rng_range(&r, 1, 3);
    for (int i = 0; i < nops; i++) {
        if (a->c->comm == MPI_COMM_NULL)
            break;
        if (rng_chance(&r, 50))
            p2p_case(&r, a->c, 0);
        else
            run_cop_whole(&r, a->c, 1);
    }
    return NULL;
}

static void scenario_threads(rng_t *r)
{
    ccomm_t cs[2];
    desc_add("threads: 2 per rank, MPI_THREAD_MULTIPLE");
    for (int i = 0; i < 2; i++) {
        int kinds[3] = { CK_DUP, CK_SPLIT, CK_INTER };
        comm_make(&cs[i], r, kinds[rng_range(r, 0, 2)]);
        desc_add("thread %d comm: %s", i, cs[i].desc);
    }
    uint64_t seed = rng_next(r);
    pthread_t th[2];
    struct thr_arg a[2];
    for (int i = 0; i < 2; i++) {
        a[i] = (struct thr_arg){ &cs[i], seed, i };
        if (pthread_create(&th[i], NULL, thread_main, &a[i]) != 0) {
            fail("pthread_create failed");
            thread_main(&a[i]);
            th[i] = 0;
        }
    }
    for (int i = 0; i < 2; i++)
        if (th[i])
            pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++)
        comm_release(&cs[i]);
}

static void run_case(long idx)
{
    rng_t r = rng_derive(g_seed, (uint64_t)idx);
    int x = rng_range(&r, 0, 99);
    if (x < 35) {
        ccomm_t c;
        comm_make(&c, &r, random_comm_kind(&r));
        desc_add("p2p on %s", c.desc);
        if (c.comm != MPI_COMM_NULL)
            p2p_case(&r, &c, 1);
        comm_release(&c);
    } else if (x < 70) {
        ccomm_t c;
        comm_make(&c, &r, random_comm_kind(&r));
        desc_add("coll on %s", c.desc);
        if (c.comm != MPI_COMM_NULL)
            run_cop_whole(&r, &c, 0);
        comm_release(&c);
    } else if (x < 78) {
        scenario_multi(&r);
    } else if (x < 81) {
        scenario_idup(&r);
    } else if (x < 86) {
        scenario_bigtype(&r);
    } else if (x < 91) {
        scenario_sleeper(&r);
    } else if (x < 96) {
        scenario_idup_traffic(&r);
    } else if (g_thread_level == MPI_THREAD_MULTIPLE) {
        scenario_threads(&r);
    } else {
        desc_add("threads: skipped (no MPI_THREAD_MULTIPLE)");
    }
}

/* ---- datatype self-check ------------------------------------------------
 * --types N: N random datatypes (no communication); for each, the library's
 * size, extent, true extent and MPI_Pack output against the model.  Tells a
 * datatype engine disagreeing with the model apart from a transfer bug. */
static int type_selfcheck(long n)
{
    int bad = 0;
    for (long i = 0; i < n; i++) {
        g_case = i;
        g_desc_len = 0;
        g_desc[0] = 0;
        rng_t r = rng_derive(g_seed ^ 0x7777, (uint64_t)i);
        tmodel *t = tm_generate(&r, random_basic(&r), rng_range(&r, 1, 3), rng_chance(&r, 20));
        desc_add("type %s", t->desc);
        MPI_Aint lb, ext, tlb, text;
        int size;
        MPI_Type_get_extent(t->dt, &lb, &ext);
        MPI_Type_get_true_extent(t->dt, &tlb, &text);
        MPI_Type_size(t->dt, &size);
        /* A darray's true bounds: MPICH and Open MPI both count its markers'
         * span; not compared. */
        int tb_ok = t->has_darray || (tlb == t->tlb && text == t->tub - t->tlb);
        if (lb != t->lb || ext != tm_extent(t) || !tb_ok || size != t->size) {
            fail("lb/extent/true lb/true extent/size: MPI %ld/%ld/%ld/%ld/%d, model %ld/%ld/%ld/%ld/%ld",
                 (long)lb, (long)ext, (long)tlb, (long)text, size, (long)t->lb, (long)tm_extent(t),
                 (long)t->tlb, (long)(t->tub - t->tlb), (long)t->size);
            bad++;
        } else {
            MPI_Aint count = 3;
            if (tm_overlaps(t, count))
                count = 1;
            buf_t b, ref;
            buf_for(&b, t, count);
            for (size_t k = 0; k < b.len; k++)
                b.alloc[k] = (unsigned char)(k * 7 + k / 251);
            int psize = 0, pos = 0;
            MPI_Pack_size((int)count, t->dt, MPI_COMM_WORLD, &psize);
            unsigned char *packed = malloc((size_t)psize + 1);
            MPI_Pack(b.base, (int)count, t->dt, packed, psize, &pos, MPI_COMM_WORLD);
            /* Unpack through the model into a clone: equal iff same order. */
            buf_clone(&ref, &b);
            MPI_Aint j = 0, e2 = tm_extent(t);
            for (MPI_Aint e = 0; e < count; e++)
                for (size_t sg = 0; sg < t->nsegs; sg++)
                    for (MPI_Aint k = 0; k < t->segs[sg].len; k++)
                        ref.base[e * e2 + t->segs[sg].off + k] = j < pos ? packed[j++] : 0;
            if (pos != count * t->size) {
                fail("MPI_Pack wrote %d bytes, model %ld", pos, (long)(count * t->size));
                bad++;
            } else if (buf_check(&b, &ref, "MPI_Pack order vs model")) {
                bad++;
            }
            free(packed);
            buf_free(&b);
            buf_free(&ref);
        }
        tm_free(t);
    }
    return bad;
}

/* ---- watchdog ------------------------------------------------------------ */
static void *watchdog(void *unused)
{
    (void)unused;
    for (;;) {
        sleep_ms(50);
        double d = atomic_load(&w_deadline);
        if (d > 0 && now() > d) {
            /* Not under g_lock: a stuck thread may hold it. */
            fprintf(stderr,
                    "conform: HANG seed=%llu case=%ld rank=%d: still running after %.1f s "
                    "(--case-timeout %.0f s)\n    case: %s\n    rerun: --seed %llu --only %ld "
                    "(the cases after it: add --skip %ld)\n",
                    (unsigned long long)g_seed, atomic_load(&w_case), g_rank,
                    now() - atomic_load(&w_start), opt_case_timeout, g_desc,
                    (unsigned long long)g_seed, atomic_load(&w_case), atomic_load(&w_case));
            fflush(stderr);
            _exit(124);
        }
    }
    return NULL;
}

/* ---- main ---------------------------------------------------------------- */
static void usage(void)
{
    fprintf(stderr,
            "usage: conform [--seed S] [--cases N] [--first K] [--only K] [--time-limit SEC]\n"
            "               [--case-timeout SEC] [--budget-floor SEC] [--budget-rate MB/s]\n"
            "               [--budget-factor F] [--skip K1,K2,...] [--times] [--verbose]\n"
            "               [--no-threads]\n");
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && (++i, 1))
        if (OPT("--seed"))
            g_seed = strtoull(v, NULL, 0);
        else if (OPT("--cases"))
            opt_cases = strtol(v, NULL, 0);
        else if (OPT("--only"))
            opt_only = strtol(v, NULL, 0);
        else if (OPT("--first"))
            opt_first = strtol(v, NULL, 0);
        else if (OPT("--time-limit"))
            opt_time_limit = strtod(v, NULL);
        else if (OPT("--case-timeout"))
            opt_case_timeout = strtod(v, NULL);
        else if (OPT("--stall-min") || OPT("--budget-floor"))
            opt_budget_floor = strtod(v, NULL);
        else if (OPT("--budget-rate"))
            opt_budget_rate = strtod(v, NULL);
        else if (OPT("--budget-factor"))
            opt_budget_factor = strtod(v, NULL);
        else if (OPT("--skip"))
            snprintf(opt_skip, sizeof opt_skip, ",%s,", v);
        else if (OPT("--types"))
            opt_types = strtol(v, NULL, 0);
        else if (strcmp(a, "--times") == 0)
            opt_times = 1;
        else if (strcmp(a, "--verbose") == 0)
            opt_verbose = 1;
        else if (strcmp(a, "--no-threads") == 0)
            opt_threads = 0;
        else {
            usage();
            return -1;
        }
#undef OPT
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0)
        return 2;
    if (opt_threads)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &g_thread_level);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (g_size > 250) {
        if (g_rank == 0)
            fprintf(stderr, "conform: at most 250 ranks\n");
        MPI_Finalize();
        return 2;
    }
    {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(v, &len);
        g_quirk_mpich40 = strstr(v, "MPICH Version:") && strstr(v, "4.0");
        g_quirk_ompi4 = strstr(v, "Open MPI v4.") != NULL;
        /* Peers run oversubscribed with busy-polling progress: more room
         * (docs/TESTING.md); Shoal's own budget stays tight. */
        if (opt_budget_factor <= 0)
            opt_budget_factor = strstr(v, "MPICH") ? 3 : strstr(v, "Open MPI") ? 3 : 1;
        if (g_quirk_ompi4 && g_rank == 0)
            printf("conform: Open MPI 4: working around its bugs (in-place nonblocking alltoall(v,w) "
                   "run out of place; idups completed in the order started)\n");
        if (g_quirk_mpich40 && g_rank == 0)
            printf("conform: MPICH 4.0: working around its bugs (status.MPI_ERROR set by probe, "
                   "sendrecv_replace and waitall; MPI_Isendrecv statuses; persistent collectives "
                   "run as nonblocking; allgatherv/gatherv on one rank ignore displacements)\n");
    }
    {   /* Same host?  (The barrier check compares clocks.) */
        char name[MPI_MAX_PROCESSOR_NAME], n0[MPI_MAX_PROCESSOR_NAME];
        int len = 0, same;
        memset(name, 0, sizeof name);
        MPI_Get_processor_name(name, &len);
        memcpy(n0, name, sizeof n0);
        MPI_Bcast(n0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
        same = strcmp(n0, name) == 0;
        MPI_Allreduce(&same, &g_same_host, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    }
    coll_global_init();
    if (opt_types > 0) {
        int bad = type_selfcheck(opt_types);
        if (g_rank == 0)
            printf("conform: --types %ld: %d disagree with the model\n", opt_types, bad);
        coll_global_fini();
        MPI_Finalize();
        return bad ? 1 : 0;
    }
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    pthread_detach(wd);

    long first = opt_only >= 0 ? opt_only : opt_first;
    long last = opt_only >= 0 ? opt_only + 1 : opt_first + opt_cases;
    long ran = 0, failed = 0, stalls = 0;
    long failed_list[32];
    int nlisted = 0;
    double t_begin = now(), t_total_cases = 0;
    if (g_rank == 0)
        printf("conform: seed %llu, cases %ld..%ld, %d ranks, thread level %s\n",
               (unsigned long long)g_seed, first, last - 1, g_size,
               g_thread_level == MPI_THREAD_MULTIPLE ? "multiple" : "below multiple (no thread cases)");
    for (long idx = first; idx < last; idx++) {
        double took = 0, budget = 0, bytes = 0, local = 0, waited = 0;
        char key[32];
        snprintf(key, sizeof key, ",%ld,", idx);
        if (strstr(opt_skip, key))
            continue;
        int case_failed = 0, stalled = 0, stop = 0;
        /* A case over its budget runs once more: a stall counts only when
         * it repeats (a loaded machine's hiccup does not). */
        for (int attempt = 0; attempt < 2; attempt++) {
            g_case = idx;
            g_desc_len = 0;
            g_desc[0] = 0;
            g_case_failed = 0;
            g_bytes = g_sleep = g_local = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now(), d0 = run_delay();
            atomic_store(&w_case, idx);
            atomic_store(&w_start, t0);
            atomic_store(&w_deadline, t0 + opt_case_timeout);
            run_case(idx);
            double t1 = now();
            atomic_store(&w_deadline, 0.0);
            long long v[5] = { g_case_failed, 0, (long long)((t1 - t0) * 1e6), (long long)g_bytes,
                               (long long)(g_sleep * 1e6) };
            if (g_rank == 0 && opt_time_limit > 0 && now() - t_begin > opt_time_limit)
                v[1] = 1;
            long long out[5], lsum[2] = { 0, 0 };
            long long lmine[2] = { (long long)(g_local * 1e6), (long long)((run_delay() - d0) * 1e6) };
            MPI_Allreduce(v, out, 5, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(lmine, lsum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            took = (double)out[2] / 1e6;
            bytes = (double)out[3];
            local = (double)lsum[0] / 1e6;
            waited = (double)lsum[1] / 1e6;
            /* The budget: the data at opt_budget_rate (a floor for
             * latency), times the library's factor, plus deliberate sleeps,
             * the generator's own work on every rank and the time ranks
             * were runnable but had no CPU (a loaded machine).  A rank that
             * sleeps through a lost wake-up is not runnable: not excused. */
            double comm_t = bytes / (opt_budget_rate * 1e6);
            if (comm_t < opt_budget_floor)
                comm_t = opt_budget_floor;
            budget = opt_budget_factor * comm_t + (double)out[4] / 1e6 + local + waited;
            case_failed = (int)out[0];
            stop = (int)out[1];
            stalled = opt_budget_floor > 0 && took > budget;
            t_total_cases += took;
            ran += attempt == 0;
            if (!stalled || attempt == 1 || case_failed)
                break;       /* a failed case is not run again: its stall counts too */
            if (g_rank == 0) {
                fprintf(stderr, "conform: slow seed=%llu case=%ld: %.3f s over its budget %.3f s; "
                                "running it again\n", (unsigned long long)g_seed, idx, took, budget);
                fflush(stderr);
            }
        }
        if (stalled && g_rank == 0) {
            fprintf(stderr,
                    "conform: STALL seed=%llu case=%ld: took %.3f s%s, budget %.3f s "
                    "(%.0f bytes on the busiest rank at %.0f MB/s, floor %.2f s, factor %.1f; "
                    "sleeps; %.3f s of the generator's own work, %.3f s runnable without a CPU)\n"
                    "    case: %s\n    rerun: --seed %llu --only %ld\n",
                    (unsigned long long)g_seed, idx, took, case_failed ? "" : " twice over", budget, bytes, opt_budget_rate,
                    opt_budget_floor, opt_budget_factor, local, waited, g_desc, (unsigned long long)g_seed, idx);
            fflush(stderr);
        }
        if (case_failed || stalled) {
            failed++;
            stalls += stalled;
            if (nlisted < 32)
                failed_list[nlisted++] = idx;
        }
        if (g_rank == 0 && (opt_times || opt_verbose))
            printf("case %ld %.6f %s%s [budget %.3f s, own work %.3f s, no CPU %.3f s]\n", idx, took,
                   case_failed ? "FAIL " : stalled ? "STALL " : "", g_desc, budget, local, waited);
        fflush(stdout);
        if (stop) {
            if (g_rank == 0)
                printf("conform: --time-limit %.0f s reached after %ld cases\n", opt_time_limit, ran);
            break;
        }
    }
    if (g_rank == 0) {
        printf("conform: seed %llu: %ld cases in %.1f s (cases %.1f s), %ld failed", (unsigned long long)g_seed, ran,
               now() - t_begin, t_total_cases, failed);
        if (stalls)
            printf(" (%ld stalled)", stalls);
        if (failed) {
            printf(":");
            for (int i = 0; i < nlisted; i++)
                printf(" %ld", failed_list[i]);
        }
        printf("\n");
        fflush(stdout);
    }
    coll_global_fini();
    MPI_Finalize();
    return failed ? 1 : 0;
}
