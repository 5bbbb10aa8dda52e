/*
 * The floor for small-message latency between two hosts: a raw TCP
 * ping-pong, TCP_NODELAY, nonblocking sockets, both sides busy-polling
 * recv (no epoll, no sleeping).  bench/multihost runs it next to the MPI
 * latency of Shoal, Open MPI and MPICH.
 *
 *   tcp_pingpong server PORT                 (waits for one client)
 *   tcp_pingpong client ADDR PORT [--sizes A,B,...] [--iters N]
 *                                            [--batches N]
 *
 * The client prints "SIZE USEC" lines: half a round trip in microseconds,
 * the median of --batches (default 11) timed batches of --iters (default
 * 10000) round trips, after 1000 untimed ones, as bench/mpi/latency.c
 * reports.  The server echoes each message back; the client closes when
 * done and the server exits.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE (1 << 20)
#define MAX_BATCHES 101

static char buf[MAX_SIZE];

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void tune(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        die("TCP_NODELAY");
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die("O_NONBLOCK");
}

/* Busy-polls until all n bytes are in; 0 at end of stream. */
static int recv_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        } else if (k == 0) {
            return 0;
        } else if (errno != EAGAIN && errno != EINTR) {
            die("recv");
        }
    }
    return 1;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
            die("send");
        }
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void server(int port)
{
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0), fd;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)port),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    uint32_t head[2]; /* size, round trips */
    if (ls < 0)
        die("socket");
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0)
        die("bind/listen");
    if ((fd = accept(ls, NULL, NULL)) < 0)
        die("accept");
    close(ls);
    tune(fd);
    /* Each size starts with its size and count of round trips; then echo. */
    while (recv_all(fd, (char *)head, sizeof head)) {
        size_t n = head[0] ? head[0] : 1;
        if (head[0] > MAX_SIZE)
            exit(2);
        for (uint32_t i = 0; i < head[1]; i++) {
            if (!recv_all(fd, buf, n))
                exit(0);
            send_all(fd, buf, n);
        }
    }
    close(fd);
}

static void client(const char *addr, int port, const char *sizes, long iters,
                   int batches)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)port)};
    double t[MAX_BATCHES];
    if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        die("address");
    for (int tries = 0; connect(fd, (struct sockaddr *)&a, sizeof a) < 0;
         tries++) {
        if (tries > 200)
            die("connect");
        usleep(10000);
        close(fd);
        fd = socket(AF_INET, SOCK_STREAM, 0);
    }
    tune(fd);
    char *list = strdup(sizes), *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w != NULL;
         w = strtok_r(NULL, ",", &save)) {
        uint32_t size = (uint32_t)strtoul(w, NULL, 10);
        /* A message of size 0 is sent as one byte (TCP cannot send 0). */
        size_t n = size ? size : 1;
        if (size > MAX_SIZE) {
            fprintf(stderr, "size %u too large\n", size);
            exit(2);
        }
        uint32_t head[2] = {size, (uint32_t)(1000 + iters * batches)};
        send_all(fd, (char *)head, sizeof head);
        memset(buf, 'x', n);
        for (long i = 0; i < 1000; i++) {
            send_all(fd, buf, n);
            recv_all(fd, buf, n);
        }
        for (int b = 0; b < batches; b++) {
            double t0 = now_us();
            for (long i = 0; i < iters; i++) {
                send_all(fd, buf, n);
                recv_all(fd, buf, n);
            }
            t[b] = (now_us() - t0) / (double)iters / 2;
        }
        qsort(t, (size_t)batches, sizeof t[0], cmp_double);
        printf("%u %.3f\n", size, t[batches / 2]);
        fflush(stdout);
    }
    free(list);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0) {
        server(atoi(argv[2]));
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "client") == 0) {
        const char *sizes = "0,1,8,64,512";
        long iters = 10000;
        int batches = 11;
        for (int i = 4; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--sizes") == 0)
                sizes = argv[i + 1];
            else if (strcmp(argv[i], "--iters") == 0)
                iters = atol(argv[i + 1]);
            else if (strcmp(argv[i], "--batches") == 0)
                batches = atoi(argv[i + 1]);
        }
        if (iters < 1 || batches < 1 || batches > MAX_BATCHES) {
            fprintf(stderr, "bad --iters or --batches\n");
            return 2;
        }
        client(argv[2], atoi(argv[3]), sizes, iters / batches + 1, batches);
        return 0;
    }
    fprintf(stderr, "usage: %s server PORT | client ADDR PORT [--sizes "
                    "A,B,...] [--iters N] [--batches N]\n", argv[0]);
    return 2;
}
