/*
 * Plumbing shared by the scripted launchers of the PMI-1 and PMI-2 client
 * tests: the two ways a client reaches its launcher.
 */
#ifndef SHOAL_TEST_FAKE_LAUNCHER_H
#define SHOAL_TEST_FAKE_LAUNCHER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "test.h"

/* PMI_FD mode: a connected pair; returns the client's end. */
static inline int fake_socketpair(int *server_fd)
{
    int sv[2];

    T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    *server_fd = sv[1];
    return sv[0];
}

/* PMI_PORT mode: listen on a free loopback port, named "127.0.0.1:port". */
static inline int fake_listen(char *hostport, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    T_ASSERT(fd >= 0);
    T_ASSERT(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    T_ASSERT(listen(fd, 1) == 0);
    T_ASSERT(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    snprintf(hostport, cap, "127.0.0.1:%d", ntohs(sa.sin_port));
    return fd;
}

#endif /* SHOAL_TEST_FAKE_LAUNCHER_H */
