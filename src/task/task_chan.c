/*
 * The worker-copy channel (task_chan.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "task/task_chan.h"

int task_chan_pair(int fds[2])
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "task: socketpair: %s",
                        strerror(errno));
    int fl = fcntl(fds[0], F_GETFL);
    if (fl < 0 || fcntl(fds[0], F_SETFL, fl | O_NONBLOCK) != 0) {
        close(fds[0]);
        close(fds[1]);
        return base_err(SHOAL_ERR_SYSTEM, "task: fcntl: %s", strerror(errno));
    }
    return SHOAL_OK;
}

static int send_error(void)
{
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return SHOAL_ERR_AGAIN;
    if (errno == EPIPE || errno == ECONNRESET)
        return SHOAL_ERR_PEER_DEAD;
    return base_err(SHOAL_ERR_SYSTEM, "task: channel send: %s",
                    strerror(errno));
}

/* Writes (out) or reads len bytes of a memfd from its start. */
static int memfd_io(int fd, uint8_t *p, size_t len, int out)
{
    size_t off = 0;

    while (off < len) {
        ssize_t n = out ? pwrite(fd, p + off, len - off, (off_t)off)
                        : pread(fd, p + off, len - off, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return base_err(out ? SHOAL_ERR_SYSTEM : SHOAL_ERR_PROTOCOL,
                            "task: a channel message's memfd: %s",
                            n < 0 ? strerror(errno) : "short");
        off += (size_t)n;
    }
    return SHOAL_OK;
}

int task_chan_send(int fd, const void *msg, size_t len)
{
    uint64_t hdr[2] = {len, len > TASK_CHAN_INLINE};
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)msg, len}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    int mfd = -1;

    if (hdr[1]) {
        mfd = memfd_create("shoal-task", MFD_CLOEXEC);
        if (mfd < 0)
            return base_err(SHOAL_ERR_SYSTEM, "task: memfd_create: %s",
                            strerror(errno));
        int s = memfd_io(mfd, (uint8_t *)msg, len, 1);
        if (s != SHOAL_OK) {
            close(mfd);
            return s;
        }
        mh.msg_iovlen = 1;
        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof(ctl.buf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &mfd, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    int s = n < 0 ? send_error() : SHOAL_OK;
    if (mfd >= 0)
        close(mfd);
    return s;
}

int task_chan_recv(int fd, uint8_t **msg_p, size_t *len_p)
{
    uint8_t *buf = malloc(TASK_CHAN_INLINE + 16);
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {buf, TASK_CHAN_INLINE + 16};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf)};
    ssize_t n;
    uint64_t hdr[2];
    int mfd = -1, s = SHOAL_OK;

    if (buf == NULL)
        return base_err(SHOAL_ERR_NOMEM, "task: channel buffer");
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        free(buf);
        return 0;
    }
    if (n <= 0) {
        free(buf);
        return n == 0 || errno == ECONNRESET
                   ? SHOAL_ERR_PEER_DEAD
                   : base_err(SHOAL_ERR_SYSTEM, "task: channel recv: %s",
                              strerror(errno));
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
         c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&mfd, CMSG_DATA(c), sizeof(int));
    memcpy(hdr, buf, sizeof(hdr));
    if ((size_t)n < sizeof(hdr) || (hdr[1] && mfd < 0) ||
        (!hdr[1] && hdr[0] != (uint64_t)n - sizeof(hdr)))
        s = base_err(SHOAL_ERR_PROTOCOL, "task: a malformed channel message");
    else if (hdr[1]) {
        uint8_t *big = malloc(hdr[0] ? hdr[0] : 1);
        s = big == NULL ? base_err(SHOAL_ERR_NOMEM, "task: %llu bytes",
                                   (unsigned long long)hdr[0])
                        : memfd_io(mfd, big, hdr[0], 0);
        free(buf);
        buf = big;
    } else
        memmove(buf, buf + sizeof(hdr), hdr[0]);
    if (mfd >= 0)
        close(mfd);
    if (s != SHOAL_OK) {
        free(buf);
        return s;
    }
    *msg_p = buf;
    *len_p = hdr[0];
    return 1;
}

int task_chan_recv_into(int fd, void *buf, size_t cap, size_t *len_p)
{
    uint64_t hdr[2];
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {buf, cap}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2,
                        .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf)};
    ssize_t n;

    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return SHOAL_ERR_PEER_DEAD;
    if (n < 0)
        return SHOAL_ERR_SYSTEM;
    int mfd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
         c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&mfd, CMSG_DATA(c), sizeof(int));
    if (mfd >= 0)
        close(mfd);
    if (mfd >= 0 || (mh.msg_flags & MSG_TRUNC) || (size_t)n < sizeof(hdr) ||
        hdr[1] || hdr[0] != (uint64_t)n - sizeof(hdr))
        return SHOAL_ERR_PROTOCOL;
    *len_p = (size_t)hdr[0];
    return 1;
}
