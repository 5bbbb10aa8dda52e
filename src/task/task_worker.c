/*
 * A worker (task_rt.h): forks a copy for each TM_RUN from the pristine
 * memory it keeps, stops (SIGSTOP), continues and kills copies as the
 * coordinator orders, relays their messages both ways unchanged, and
 * reports a copy that ended without finishing (TM_LOST: it crashed).
 * Copies ring the worker's doorbell after each message (task_ring), and
 * so does SIGCHLD, so the worker sleeps in the active-message wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"
#include "task/task_grow.h"
#include "task/task_msg.h"
#include "task/task_rt.h"
#include "wire/wire.h"

typedef struct w_copy {
    uint32_t copy;
    pid_t pid;
    int fd;
    int done, killed;
} w_copy_t;

static struct {
    w_copy_t *c;
    size_t n, cap;
    struct sigaction old_chld;
    uint64_t next_beat;
} wk;

void task_ring(void)
{
    if (task_rt.bell != NULL)
        atomic_store_explicit(task_rt.bell, 1, memory_order_release);
    wire_shm_wake_self();
}

static void on_chld(int sig)
{
    int e = errno;
    (void)sig;
    task_ring();
    errno = e;
}

int task_worker_init(void)
{
    struct sigaction sa;
    void *bell = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (bell == MAP_FAILED)
        return base_err(SHOAL_ERR_NOMEM, "task: doorbell page");
    task_rt.bell = bell;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, &wk.old_chld) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task: sigaction: %s",
                        strerror(errno));
    return SHOAL_OK;
}

void task_worker_fini(void)
{
    task_worker_kill_all();
    sigaction(SIGCHLD, &wk.old_chld, NULL);
    free(wk.c);
    memset(&wk, 0, sizeof(wk));
}

static w_copy_t *find(uint32_t copy)
{
    for (size_t i = 0; i < wk.n; i++)
        if (wk.c[i].copy == copy)
            return &wk.c[i];
    return NULL;
}

static int fork_copy(uint32_t copy, task_rd_t *rd)
{
    uint32_t width = task_rd_u32(rd), id = task_rd_u32(rd);
    uint64_t fn = task_rd_u64(rd);
    size_t plen, alen, slen;
    const uint8_t *p = task_rd_bytes(rd, &plen);
    const uint8_t *arg = task_rd_bytes(rd, &alen);
    const uint8_t *state = task_rd_bytes(rd, &slen);
    task_path_t path;
    int fds[2];

    if (rd->err)
        return rd->err;
    int s = task_path_decode(p, plen, &path);
    if (s == SHOAL_OK)
        s = task_grow((void **)&wk.c, &wk.cap, wk.n + 1, sizeof(*wk.c),
                      "task: copies");
    if (s == SHOAL_OK)
        s = task_chan_pair(fds);
    if (s != SHOAL_OK) {
        task_path_free(&path);
        return s;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        for (size_t i = 0; i < wk.n; i++)
            close(wk.c[i].fd);
        sigaction(SIGCHLD, &wk.old_chld, NULL);
        task_copy_main(fds[1], copy, &path, fn, width, id, arg, alen, state,
                       slen);
    }
    close(fds[1]);
    task_path_free(&path);
    if (pid < 0) {
        close(fds[0]);
        return base_err(SHOAL_ERR_SYSTEM, "task: fork: %s", strerror(errno));
    }
    wk.c[wk.n++] = (w_copy_t){copy, pid, fds[0], 0, 0};
    return SHOAL_OK;
}

static void signal_copy(uint32_t copy, int sig)
{
    w_copy_t *c = find(copy);

    if (c == NULL)
        return;
    if (sig == SIGKILL)
        c->killed = 1;
    kill(c->pid, sig);
    if (sig == SIGKILL)
        kill(c->pid, SIGCONT);
}

/* A message for one of this worker's copies. */
static void to_copy(uint32_t copy, const uint8_t *msg, size_t len)
{
    w_copy_t *c = find(copy);

    if (c == NULL || c->killed)
        return; /* gone meanwhile */
    int s = task_chan_send(c->fd, msg, len);
    if (s != SHOAL_OK && s != SHOAL_ERR_PEER_DEAD) {
        base_warn("task", "copy %u: %s; killing it", copy,
                  shoal_error_detail());
        signal_copy(copy, SIGKILL);
    }
}

int task_worker_handle(const uint8_t *msg, size_t len, int *exit_p,
                       int *status_p)
{
    task_rd_t rd;

    task_rd_init(&rd, msg, len);
    uint32_t type = task_rd_u32(&rd), copy = task_rd_u32(&rd);
    switch (type) {
    case TM_RUN:
        return fork_copy(copy, &rd);
    case TM_SUSPEND:
        signal_copy(copy, SIGSTOP);
        return SHOAL_OK;
    case TM_CONT:
        signal_copy(copy, SIGCONT);
        return SHOAL_OK;
    case TM_KILL:
        signal_copy(copy, SIGKILL);
        return SHOAL_OK;
    case TM_RESULTS:
    case TM_GRANT:
        to_copy(copy, msg, len);
        return SHOAL_OK;
    case TM_EXIT:
        *status_p = (int)task_rd_u32(&rd);
        *exit_p = task_rd_u32(&rd) ? 1 : 2;
        return rd.err;
    default:
        return base_err(SHOAL_ERR_PROTOCOL, "task: worker message type %u",
                        type);
    }
}

static int send_rank0(task_buf_t *b)
{
    if (b->err)
        return b->err;
    int s = task_msg_send(0, b->p, b->len);
    memset(b, 0, sizeof(*b));
    return s;
}

/* Relays what a copy sent to the coordinator. */
static int drain(w_copy_t *c)
{
    for (;;) {
        uint8_t *msg;
        size_t len;
        int r = task_chan_recv(c->fd, &msg, &len);
        if (r <= 0)
            return r == SHOAL_ERR_PEER_DEAD ? SHOAL_OK : r;
        if (len >= 4 && msg[0] == TM_DONE)
            c->done = 1;
        if (c->killed) {
            free(msg);
            continue;
        }
        int s = task_msg_send(0, msg, len);
        if (s != SHOAL_OK)
            return s;
    }
}

static int reap(void)
{
    int st;
    pid_t pid;

    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        size_t i = 0;
        while (i < wk.n && wk.c[i].pid != pid)
            i++;
        if (i == wk.n)
            continue;
        w_copy_t c = wk.c[i];
        int s = drain(&c);
        close(c.fd);
        wk.c[i] = wk.c[--wk.n];
        if (s == SHOAL_OK && !c.done && !c.killed) {
            task_buf_t b = {0};
            task_msg_start(&b, TM_LOST, c.copy);
            task_buf_u32(&b, (uint32_t)st);
            task_buf_u32(&b, (uint32_t)task_rt.rank);
            s = send_rank0(&b);
        }
        if (s != SHOAL_OK)
            return s;
    }
    return SHOAL_OK;
}

int task_worker_tick(void)
{
    atomic_store_explicit(task_rt.bell, 0, memory_order_relaxed);
    for (size_t i = 0; i < wk.n; i++) {
        int s = drain(&wk.c[i]);
        if (s != SHOAL_OK)
            return s;
    }
    int s = reap();
    uint64_t now = base_time_ns();
    if (s == SHOAL_OK && task_rt.rank != 0 && now >= wk.next_beat) {
        task_buf_t b = {0};
        task_msg_start(&b, TM_BEAT, (uint32_t)task_rt.rank);
        s = send_rank0(&b);
        wk.next_beat = now + task_rt.beat_ns;
    }
    return s;
}

void task_worker_kill_all(void)
{
    for (size_t i = 0; i < wk.n; i++) {
        kill(wk.c[i].pid, SIGKILL);
        kill(wk.c[i].pid, SIGCONT);
    }
    for (size_t i = 0; i < wk.n; i++) {
        waitpid(wk.c[i].pid, NULL, 0);
        close(wk.c[i].fd);
    }
    wk.n = 0;
}
