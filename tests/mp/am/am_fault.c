/*
 * Faults during active-message traffic.
 *
 *   am_fault kill [marker]  every rank exchanges requests and replies with
 *                           the others; after 300 ms the last rank kills
 *                           itself with SIGKILL (printing the time first).
 *                           The launcher must end the job and say so; the
 *                           survivors must not hang.
 *   am_fault vanish         the last rank exits (status 0, so the launcher
 *                           lets the others run) without finalizing: the
 *                           others' wait, barrier and finalize must report
 *                           SHOAL_ERR_PEER_DEAD instead of waiting for it.
 *   am_fault vanish connected   the same after every rank talked to the
 *                           last one (over TCP, the end of stream reports).
 *   am_fault stop           rank 1 stops itself with SIGSTOP for 1 s (a
 *                           child sends SIGCONT).  Rank 0 waits for it and
 *                           must use under 10% of a core meanwhile; it
 *                           reports how long the next message took.
 *
 * The marker argument is ignored; scripts use it to find leftover processes.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "shoal.h"
#include "test.h"

enum { H_PING = 1, H_PONG, H_NOTE };

static shoal_ep_t *ep;
static int me, n;
static volatile uint64_t pings, pongs, notes, note_stamp;
static volatile uint64_t note_arrival;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void on_ping(shoal_token_t *t, const uint64_t *a, unsigned na, void *p,
                    size_t len)
{
    pings++;
    shoal_am_reply_short(t, H_PONG, a, na);
}

static void on_pong(shoal_token_t *t, const uint64_t *a, unsigned na, void *p,
                    size_t len)
{
    pongs++;
}

static void on_note(shoal_token_t *t, const uint64_t *a, unsigned na, void *p,
                    size_t len)
{
    note_arrival = now_ns();
    note_stamp = a[0];
    notes++;
}

static void setup(void)
{
    static const shoal_handler_entry_t hs[] = {
        {H_PING, on_ping, "ping", SHOAL_HANDLER_REQUEST},
        {H_PONG, on_pong, "pong", SHOAL_HANDLER_REPLY},
        {H_NOTE, on_note, "note", SHOAL_HANDLER_REQUEST},
    };
    shoal_ep_params_t p = {.field_mask = SHOAL_EP_PARAM_HANDLERS,
                           .handlers = hs,
                           .nhandlers = 3};

    T_OK(shoal_init(NULL));
    me = shoal_rank();
    n = shoal_size();
    T_RANK(me);
    T_OK(shoal_ep_create(&p, &ep));
}

static void kill_mid_traffic(void)
{
    uint64_t start = now_ns(), sent = 0;
    unsigned seed = (unsigned)me;

    setup();
    for (;;) {
        int dest = (int)(rand_r(&seed) % (unsigned)n);
        uint64_t a = sent;
        int status;

        if (me == n - 1 && now_ns() - start > 300000000u) {
            struct timespec rt;
            clock_gettime(CLOCK_REALTIME, &rt);
            fprintf(stderr, "rank %d: SIGKILL at %lld.%09ld\n", me,
                    (long long)rt.tv_sec, rt.tv_nsec);
            raise(SIGKILL);
        }
        status = shoal_am_request_short(ep, dest, H_PING, &a, 1);
        if (status == SHOAL_OK)
            sent++;
        else if (status == SHOAL_ERR_PEER_DEAD)
            break;
        else
            T_FAIL("request: %s (%s)", shoal_err_name(status),
                   shoal_error_detail());
        status = shoal_poll(ep);
        if (status < 0)
            T_FAIL("poll: %s", shoal_err_name(status));
        if (now_ns() - start > 20000000000u)
            T_FAIL("still running after 20 s: the launcher did not stop us");
    }
    /* A survivor that notices first: report, and let the launcher act. */
    fprintf(stderr, "rank %d: peer death reported (%s)\n", me,
            shoal_error_detail());
    exit(3);
}

static void vanish(int connected)
{
    uint64_t t0;
    int status;

    setup();
    T_ASSERT(n >= 2);
    if (connected) {
        /* Talk to the last rank first, so a connection to it is open
         * (over TCP its end of stream then reports the death). */
        uint64_t a = 0;
        if (me != n - 1)
            T_OK(shoal_am_request_short(ep, n - 1, H_PING, &a, 1));
        T_OK(SHOAL_WAIT_UNTIL(ep, me == n - 1 || pongs == 1));
        T_OK(shoal_barrier(ep));
        /* Leaving a barrier does not mean the others have left it: they
         * may still wait for a message of a round we are done with, and
         * a death seen then fails their barrier.  So each says it left,
         * and the last rank vanishes only after hearing from all. */
        if (me != n - 1)
            T_OK(shoal_am_request_short(ep, n - 1, H_PING, &a, 1));
        else
            T_OK(SHOAL_WAIT_UNTIL(ep, pings == 2 * (uint64_t)(n - 1)));
    }
    if (me == n - 1)
        _exit(0); /* no shoal_finalize: the peers must notice */
    t0 = now_ns();
    /* Nothing will ever come; the wait must end with the death. */
    status = SHOAL_WAIT_UNTIL(ep, notes == 1);
    T_ERR(status, SHOAL_ERR_PEER_DEAD);
    T_ERR(shoal_barrier(ep), SHOAL_ERR_PEER_DEAD);
    T_ASSERT(strstr(shoal_error_detail(), "died") != NULL);
    T_ERR(shoal_am_request_short(ep, n - 1, H_NOTE, &t0, 1),
          SHOAL_ERR_PEER_DEAD);
    T_ERR(shoal_finalize(), SHOAL_ERR_PEER_DEAD);
    if (me == 0)
        printf("ok: a vanished peer was reported after %.2f s\n",
               (double)(now_ns() - t0) / 1e9);
}

static void stop_and_continue(void)
{
    uint64_t a;

    setup();
    T_ASSERT(n >= 2);
    if (me == 1) {
        pid_t parent = getpid();
        pid_t child = fork();
        T_ASSERT(child >= 0);
        if (child == 0) {
            usleep(1000000);
            kill(parent, SIGCONT);
            _exit(0);
        }
        a = now_ns();
        T_OK(shoal_am_request_short(ep, 0, H_NOTE, &a, 1)); /* stopping now */
        raise(SIGSTOP);
        a = now_ns();
        T_OK(shoal_am_request_short(ep, 0, H_NOTE, &a, 1)); /* back */
    } else if (me == 0) {
        T_OK(SHOAL_WAIT_UNTIL(ep, notes == 1));
        double cpu0 = cpu_seconds();
        uint64_t t0 = now_ns();
        T_OK(SHOAL_WAIT_UNTIL(ep, notes == 2));
        double wall = (double)(now_ns() - t0) / 1e9;
        double cpu = cpu_seconds() - cpu0;
        double latency_us = (double)(note_arrival - note_stamp) / 1e3;
        printf("waited %.3f s for a stopped peer using %.1f%% of a core; the "
               "next message took %.1f us\n",
               wall, 100 * cpu / wall, latency_us);
        T_ASSERT(wall > 0.5);
        if (cpu > 0.10 * wall)
            T_FAIL("used %.1f%% of a core while waiting (limit 10%%)",
                   100 * cpu / wall);
    }
    T_OK(shoal_barrier(ep));
    T_OK(shoal_finalize());
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    if (strcmp(mode, "kill") == 0)
        kill_mid_traffic();
    else if (strcmp(mode, "stop") == 0)
        stop_and_continue();
    else if (strcmp(mode, "vanish") == 0)
        vanish(argc > 2 && strcmp(argv[2], "connected") == 0);
    else
        T_FAIL("usage: am_fault kill|stop|vanish [connected|marker]");
    return 0;
}
