/*
 * The system calls of the wires' message paths, made directly.
 *
 * glibc makes recv, send, recvmsg, sendmsg and recvmmsg cancellation points:
 * in a process with more than one thread (the datagram wire's liveness
 * thread, a progress thread, the application's) each call switches
 * asynchronous cancellation on and off around the system call, two atomic
 * read-modify-writes.  On a ping-pong over the datagram wire that was 6% of
 * all CPU time (perf, 2026-11-27), on every empty poll as on every message.
 * The library never cancels its threads, and MPI calls are not
 * cancellation points, so the message paths call the kernel through
 * syscall(), which has no such wrapper.  Return values and errno are the
 * libc calls'.
 */
#ifndef SHOAL_WIRE_SYS_H
#define SHOAL_WIRE_SYS_H

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline ssize_t wire_sendmsg(int fd, const struct msghdr *mh, int flags)
{
    return (ssize_t)syscall(SYS_sendmsg, fd, mh, flags);
}

static inline ssize_t wire_recvmsg(int fd, struct msghdr *mh, int flags)
{
    return (ssize_t)syscall(SYS_recvmsg, fd, mh, flags);
}

static inline int wire_recvmmsg(int fd, struct mmsghdr *v, unsigned n,
                                int flags)
{
    return (int)syscall(SYS_recvmmsg, fd, v, n, flags, NULL);
}

static inline ssize_t wire_recv(int fd, void *buf, size_t len, int flags)
{
    return (ssize_t)syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

/* One datagram: no message header for the kernel to copy in and check
 * (recvmsg's and sendmsg's cost on every call, empty polls too). */
static inline ssize_t wire_recvfrom(int fd, void *buf, size_t len, int flags,
                                    struct sockaddr *from, socklen_t *from_len)
{
    return (ssize_t)syscall(SYS_recvfrom, fd, buf, len, flags, from,
                            from_len);
}

static inline ssize_t wire_sendto(int fd, const void *buf, size_t len,
                                  int flags, const struct sockaddr *to,
                                  socklen_t to_len)
{
    return (ssize_t)syscall(SYS_sendto, fd, buf, len, flags, to, to_len);
}

#endif
