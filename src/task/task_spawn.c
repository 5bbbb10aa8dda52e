/*
 * Copies forked from a template (task_rt.h).  A worker that forks its
 * copies itself pays for it afterwards: every page it writes (message
 * buffers, its heap) is shared copy-on-write with the copies still
 * running, so each first write after a fork faults and copies the page,
 * and on a virtual machine each such fault flushes the TLB.  Instead the
 * worker forks once, at start, a template process that keeps the pristine
 * memory and writes almost nothing; for each TM_RUN the worker hands the
 * message to the template, which creates the copy with clone(CLONE_PARENT)
 * so that the copy is the worker's child (the worker stops, continues,
 * kills and reaps it as before), and sends back its pid and the worker's
 * end of the copy's channel.  The template dies with the worker.
 *
 * SHOAL_TASK_TEMPLATE=0 forks copies from the worker, as the first
 * runtime did; so does a worker whose template is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"
#include "task/task_rt.h"

static struct {
    pid_t pid; /* the template, or 0 */
    int fd;    /* the worker's end of its channel */
} sp = {0, -1};

/* The pid and, as SCM_RIGHTS, one descriptor. */
static int send_pid_fd(int sock, pid_t pid, int fd)
{
    int32_t v = (int32_t)pid;
    struct iovec iov = {&v, sizeof v};
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof v ? 0 : -1;
}

static int recv_pid_fd(int sock, pid_t *pid, int *fd)
{
    int32_t v = -1;
    struct iovec iov = {&v, sizeof v};
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    ssize_t n;

    *fd = -1;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c != NULL;
         c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof(int));
    *pid = (pid_t)v;
    return n == (ssize_t)sizeof v ? 0 : -1;
}

/* In the template: one TM_RUN (without its type and copy: they are in
 * copy) into a copy. */
static void template_run(int sock, uint32_t copy, task_rd_t *rd)
{
    task_run_msg_t m;
    task_path_t path;
    int fds[2];

    if (task_run_read(rd, &m) != SHOAL_OK ||
        task_path_decode(m.path, m.pathlen, &path) != SHOAL_OK) {
        send_pid_fd(sock, -1, -1);
        return;
    }
    if (task_chan_pair(fds) != SHOAL_OK) {
        task_path_free(&path);
        send_pid_fd(sock, -1, -1);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    /* Like fork, but the copy's parent is the worker. */
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL,
                               NULL, NULL, NULL);
    if (pid == 0) {
        close(fds[0]);
        close(sock);
        task_page_source(m.src_rank, m.src_copy, m.src_block);
        task_copy_main(fds[1], copy, &path, m.fn, m.width, m.id, m.arg,
                       m.arglen, m.state, m.statelen, m.flags);
    }
    close(fds[1]);
    task_path_free(&path);
    send_pid_fd(sock, pid, pid > 0 ? fds[0] : -1);
    close(fds[0]);
}

static void template_main(int sock, pid_t worker) BASE_NORETURN;

static void template_main(int sock, pid_t worker)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != worker)
        _exit(0);
    for (;;) {
        uint8_t *msg;
        size_t len;
        task_rd_t rd;
        if (task_chan_recv(sock, &msg, &len) != 1)
            _exit(0);
        task_rd_init(&rd, msg, len);
        uint32_t type = task_rd_u32(&rd), copy = task_rd_u32(&rd);
        if (type == TM_RUN)
            template_run(sock, copy, &rd);
        else
            send_pid_fd(sock, -1, -1);
        free(msg);
    }
}

int task_spawn_init(void)
{
    int fds[2];

    if (base_cfg.TASK_TEMPLATE == 0)
        return SHOAL_OK;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task: socketpair: %s",
                        strerror(errno));
    pid_t worker = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        template_main(fds[1], worker);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return base_err(SHOAL_ERR_SYSTEM, "task: fork: %s", strerror(errno));
    }
    sp.pid = pid;
    sp.fd = fds[0];
    return SHOAL_OK;
}

int task_spawn_pid(void)
{
    return (int)sp.pid;
}

void task_spawn_gone(void)
{
    if (sp.fd >= 0)
        close(sp.fd);
    sp.fd = -1;
    sp.pid = 0;
}

void task_spawn_fini(void)
{
    if (sp.pid > 0) {
        kill(sp.pid, SIGKILL);
        waitpid(sp.pid, NULL, 0);
    }
    task_spawn_gone();
}

int task_spawn(const uint8_t *run, size_t len, pid_t *pid_p, int *fd_p)
{
    if (sp.pid <= 0)
        return SHOAL_ERR_AGAIN;
    int s = task_chan_send(sp.fd, run, len);
    if (s == SHOAL_OK && recv_pid_fd(sp.fd, pid_p, fd_p) != 0)
        s = SHOAL_ERR_PEER_DEAD;
    if (s != SHOAL_OK) {
        base_warn("task", "the template of copies is gone; copies are "
                          "forked from the worker now");
        kill(sp.pid, SIGKILL);
        task_spawn_gone(); /* reaped with the copies */
        return SHOAL_ERR_AGAIN;
    }
    if (*pid_p <= 0 || *fd_p < 0) {
        if (*fd_p >= 0)
            close(*fd_p);
        return base_err(SHOAL_ERR_SYSTEM, "task: the template could not "
                                          "create a copy");
    }
    return SHOAL_OK;
}
