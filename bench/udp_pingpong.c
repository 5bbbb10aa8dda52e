/*
 * The floor for small-message latency between two hosts over datagrams: a
 * raw UDP ping-pong, one connected nonblocking socket per side, both sides
 * busy-polling recv (no epoll, no sleeping).  bench/multihost runs it next
 * to the MPI latency of Shoal's datagram wire (SHOAL_WIRES=shm,udp) as
 * tcp_pingpong.c is run next to the TCP wire.
 *
 *   udp_pingpong server PORT                 (serves one client)
 *   udp_pingpong client ADDR PORT [--sizes A,B,...] [--iters N]
 *                                            [--batches N]
 *
 * The client prints "SIZE USEC" lines: half a round trip in microseconds,
 * the median of --batches (default 11) timed batches of --iters (default
 * 10000) round trips, after 1000 untimed ones, as tcp_pingpong.c and
 * bench/mpi/latency.c report.  The server echoes each datagram back.
 *
 * A message is one datagram, so sizes go up to 65507 bytes (64 KiB less
 * the IPv4 and UDP headers); a larger size is skipped with a "#" comment
 * line.  Size 0 is a real empty datagram.  Sizes above the link's MTU less
 * 28 bytes are fragmented by IP, as the kernel does for any datagram.
 *
 * --shared (both sides) gives each side the shape of a wire whose one
 * socket serves every peer, as Shoal's datagram wire has it: datagrams are
 * received on an unconnected socket with recvmsg, which returns the
 * sender's address with each (the wire checks it), and sent through a
 * second socket connected to the peer.  bench/multihost runs it as
 * udp-shared, the floor for such a wire.
 *
 * Nothing is retransmitted: this measures a lossless link.  Control
 * datagrams (hello, the next size and its count of round trips, bye) carry
 * a magic number; the client repeats its hello until the server answers
 * (the server may not be bound yet), and a client that waits 2 s for an
 * answer gives up with an error instead of hanging (a datagram was lost).
 * The server exits on bye, or after 30 s without a datagram.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE 65507
#define MAX_BATCHES 101
#define MAGIC 0x55445050u /* "UDPP" */
#define CLIENT_WAIT_US 2e6
#define SERVER_WAIT_US 30e6

enum { HELLO = 1, SIZE = 2, BYE = 3 };

/* A control datagram; data datagrams are never this size with this magic
 * while the server expects control (it knows how many data ones come). */
struct ctl {
    uint32_t magic, type, size, count;
};

static char buf[MAX_SIZE + 1];
/* --shared: datagrams go out through out_fd (connected to the peer) and
 * come in, with their sender's address, on the unconnected socket. */
static int shared, out_fd = -1;

static void die(const char *what)
{
    perror(what);
    exit(1);
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

static int udp_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        die("socket");
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die("O_NONBLOCK");
    return fd;
}

/*
 * Busy-polls for one datagram; its length, or -1 when none came within
 * wait_us (the clock is read only every 4096 empty polls).  With
 * refused_ok, ECONNREFUSED (an ICMP port unreachable for an earlier send,
 * the server not bound yet) counts as nothing received.
 */
static ssize_t recv_one(int fd, char *p, size_t n, double wait_us,
                        int refused_ok)
{
    double t0 = 0;
    for (unsigned spins = 1;; spins++) {
        struct sockaddr_in from;
        struct iovec iov = {p, n};
        struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from,
                            .msg_iov = &iov, .msg_iovlen = 1};
        ssize_t k = shared ? recvmsg(fd, &mh, 0) : recv(fd, p, n, 0);
        if (k >= 0)
            return k;
        if (errno == ECONNREFUSED && refused_ok)
            return -1;
        if (errno != EAGAIN && errno != EINTR)
            die("recv");
        if (spins % 4096 == 0) {
            if (t0 == 0)
                t0 = now_us();
            else if (now_us() - t0 > wait_us)
                return -1;
        }
    }
}

static void send_one(int fd, const char *p, size_t n)
{
    if (shared)
        fd = out_fd;
    for (;;) {
        ssize_t k = send(fd, p, n, 0);
        if (k == (ssize_t)n)
            return;
        if (k >= 0) {
            fprintf(stderr, "send: short datagram\n");
            exit(1);
        }
        if (errno == ECONNREFUSED && shared)
            return; /* the peer's port is not bound yet: hellos repeat */
        if (errno != EAGAIN && errno != EINTR && errno != ENOBUFS)
            die("send");
    }
}

/* --shared: out_fd, a socket connected to the peer's receiving socket. */
static void connect_out(struct sockaddr_in to)
{
    out_fd = udp_socket();
    if (connect(out_fd, (struct sockaddr *)&to, sizeof to) < 0)
        die("connect");
}

static void server(int port)
{
    int fd = udp_socket(), connected = 0;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)port),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("bind");
    for (;;) {
        struct ctl c;
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        ssize_t k;
        if (!connected) {
            /* The first datagram names the client; talk to it only. */
            double t0 = now_us();
            while ((k = recvfrom(fd, &c, sizeof c, 0,
                                 (struct sockaddr *)&from, &len)) < 0) {
                if (errno != EAGAIN && errno != EINTR)
                    die("recvfrom");
                if (now_us() - t0 > SERVER_WAIT_US)
                    exit(1);
                len = sizeof from;
            }
            if (shared) {
                /* The hello came from the client's sending socket; its
                 * receiving socket's port is in count. */
                if (k != (ssize_t)sizeof c || c.magic != MAGIC ||
                    c.type != HELLO)
                    continue;
                from.sin_port = htons((unsigned short)c.count);
                connect_out(from);
            } else if (connect(fd, (struct sockaddr *)&from, len) < 0) {
                die("connect");
            }
            connected = 1;
        } else if ((k = recv_one(fd, (char *)&c, sizeof c, SERVER_WAIT_US,
                                 0)) < 0) {
            exit(1);
        }
        if (k != (ssize_t)sizeof c || c.magic != MAGIC)
            continue; /* a stray data datagram: not control */
        if (c.type == BYE)
            break;
        send_one(fd, (const char *)&c, sizeof c);
        if (c.type != SIZE)
            continue;
        if (c.size > MAX_SIZE)
            exit(2);
        /* Echo c.count datagrams of c.size bytes. */
        for (uint32_t i = 0; i < c.count; i++) {
            k = recv_one(fd, buf, sizeof buf, SERVER_WAIT_US, 0);
            if (k < 0)
                exit(1);
            send_one(fd, buf, (size_t)k);
        }
    }
    close(fd);
}

/* Sends c and waits for its echo, skipping older control answers (echoes
 * of repeated hellos).  Returns 0 when none came within wait_us. */
static int control(int fd, struct ctl c, double wait_us, int refused_ok)
{
    struct ctl r;
    double t0 = now_us();
    send_one(fd, (const char *)&c, sizeof c);
    while (now_us() - t0 < wait_us) {
        ssize_t k = recv_one(fd, (char *)&r, sizeof r, wait_us, refused_ok);
        if (k == (ssize_t)sizeof r && r.magic == MAGIC && r.type == c.type &&
            r.size == c.size && r.count == c.count)
            return 1;
        if (k < 0)
            return 0;
    }
    return 0;
}

static void round_trip(int fd, size_t n)
{
    send_one(fd, buf, n);
    ssize_t k = recv_one(fd, buf, sizeof buf, CLIENT_WAIT_US, 0);
    if (k < 0) {
        fprintf(stderr, "udp_pingpong: no answer in %.0f s: a datagram was "
                "lost (nothing is retransmitted)\n", CLIENT_WAIT_US / 1e6);
        exit(1);
    }
    if ((size_t)k != n) {
        fprintf(stderr, "udp_pingpong: answer of %zd bytes to %zu\n", k, n);
        exit(1);
    }
}

static void client(const char *addr, int port, const char *sizes, long iters,
                   int batches)
{
    int fd = udp_socket();
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)port)};
    double t[MAX_BATCHES];
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        die("address");
    struct ctl hello = {MAGIC, HELLO, 0, 0};
    if (shared) {
        struct sockaddr_in me = {.sin_family = AF_INET};
        socklen_t len = sizeof me;
        if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0 ||
            getsockname(fd, (struct sockaddr *)&me, &len) < 0)
            die("bind");
        hello.count = ntohs(me.sin_port);
        connect_out(a);
    } else if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        die("connect");
    }
    /* The server may not be bound yet: say hello until it answers. */
    for (int tries = 0; !control(fd, hello, 10000, 1); tries++) {
        if (tries > 500) {
            fprintf(stderr, "udp_pingpong: no server at %s:%d\n", addr,
                    port);
            exit(1);
        }
        usleep(10000);
    }
    char *list = strdup(sizes), *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w != NULL;
         w = strtok_r(NULL, ",", &save)) {
        uint32_t size = (uint32_t)strtoul(w, NULL, 10);
        if (size > MAX_SIZE) {
            printf("# size %u skipped: more than one datagram (%d)\n", size,
                   MAX_SIZE);
            continue;
        }
        struct ctl c = {MAGIC, SIZE, size,
                        (uint32_t)(1000 + iters * batches)};
        if (!control(fd, c, CLIENT_WAIT_US, 0)) {
            fprintf(stderr, "udp_pingpong: the server did not answer\n");
            exit(1);
        }
        memset(buf, 'x', size);
        for (long i = 0; i < 1000; i++)
            round_trip(fd, size);
        for (int b = 0; b < batches; b++) {
            double t0 = now_us();
            for (long i = 0; i < iters; i++)
                round_trip(fd, size);
            t[b] = (now_us() - t0) / (double)iters / 2;
        }
        qsort(t, (size_t)batches, sizeof t[0], cmp_double);
        printf("%u %.3f\n", size, t[batches / 2]);
        fflush(stdout);
    }
    free(list);
    struct ctl bye = {MAGIC, BYE, 0, 0};
    send_one(fd, (const char *)&bye, sizeof bye);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[argc - 1], "--shared") == 0) {
        shared = 1;
        argc--;
    }
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
    fprintf(stderr, "usage: %s server PORT [--shared] | client ADDR PORT "
                    "[--sizes A,B,...] [--iters N] [--batches N] "
                    "[--shared]\n", argv[0]);
    return 2;
}
