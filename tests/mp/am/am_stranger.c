/*
 * Strangers at rank 0's TCP port (run with SHOAL_WIRES=tcp and a short
 * SHOAL_TCP_HANDSHAKE_TIMEOUT).  The last rank, posing as an outsider,
 * connects to rank 0's listening socket three times:
 *   garbage  bytes that are no Shoal handshake;
 *   secret   a well-formed HELLO, then a PROOF made without the secret;
 *   silent   connects and says nothing.
 * Each connection must be closed by rank 0 (seen here as end of stream or
 * a reset) and counted in rank 0's dropped frames; meanwhile and after,
 * the ranks exchange messages in a ring, which must all arrive.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "shoal.h"
#include "test.h"
#include "wire/tcp/tcp.h"

enum { H_SEQ = 1 };

static shoal_ep_t *ep;
static int me, n;
static volatile uint64_t received;

static void on_seq(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                   void *data, size_t len)
{
    (void)t;
    (void)data;
    (void)len;
    T_ASSERT(nargs == 1 && args[0] == received);
    received++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial_rank0(void)
{
    char text[64], *colon;
    size_t len = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct timeval tv = {20, 0};
    int fd;

    T_OK(boot_get(0, "tcp", text, sizeof(text) - 1, &len));
    text[len] = '\0';
    colon = strrchr(text, ':');
    T_ASSERT(colon != NULL);
    *colon = '\0';
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    T_ASSERT(inet_pton(AF_INET, text, &sa.sin_addr) == 1);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    T_ASSERT(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    T_ASSERT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    return fd;
}

/* Read until rank 0 closes; fails the test if it never does. */
static void expect_closed(int fd, const char *what)
{
    char buf[256];
    double t0 = now_s();

    for (;;) {
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        if (got == 0 || (got < 0 && errno == ECONNRESET))
            break;
        if (got < 0)
            T_FAIL("%s: rank 0 did not close the connection (%s)", what,
                   strerror(errno));
    }
    printf("%s: closed by rank 0 after %.2f s\n", what, now_s() - t0);
    close(fd);
}

static void garbage(void)
{
    static const char junk[] = "GET / HTTP/1.0\r\n\r\n";
    int fd = dial_rank0();

    T_ASSERT(send(fd, junk, sizeof(junk) - 1, 0) == (ssize_t)sizeof(junk) - 1);
    expect_closed(fd, "garbage");
}

static void wrong_secret(void)
{
    uint8_t buf[TCP_HS_SIZE];
    tcp_hs_t h = {.type = TCP_HS_HELLO, .from = (uint32_t)me, .to = 0};
    size_t got = 0;
    int fd = dial_rank0();

    memset(h.nonce, 0x5a, sizeof(h.nonce));
    tcp_hs_encode(&h, buf);
    T_ASSERT(send(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
    while (got < sizeof(buf)) { /* the CHALLENGE */
        ssize_t r = recv(fd, buf + got, sizeof(buf) - got, 0);
        T_ASSERT(r > 0);
        got += (size_t)r;
    }
    memset(&h, 0, sizeof(h));
    h.type = TCP_HS_PROOF;
    h.from = (uint32_t)me;
    memset(h.mac, 0xa5, sizeof(h.mac)); /* not made with the secret */
    tcp_hs_encode(&h, buf);
    T_ASSERT(send(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
    expect_closed(fd, "wrong secret");
}

static void silent(void)
{
    expect_closed(dial_rank0(), "silent");
}

static void ring(int first, int count)
{
    for (int i = first; i < first + count; i++) {
        uint64_t a = (uint64_t)i;
        T_OK(shoal_am_request_short(ep, (me + 1) % n, H_SEQ, &a, 1));
    }
}

int main(void)
{
    shoal_handler_entry_t h = {H_SEQ, on_seq, "seq", SHOAL_HANDLER_REQUEST};
    shoal_ep_params_t p = {.field_mask = SHOAL_EP_PARAM_HANDLERS,
                           .handlers = &h, .nhandlers = 1};
    shoal_stats_t st;

    T_OK(shoal_init(NULL));
    me = shoal_rank();
    n = shoal_size();
    T_ASSERT(n >= 2);
    T_OK(shoal_ep_create(&p, &ep));
    ring(0, 50);
    if (me == n - 1) {
        garbage();
        wrong_secret();
        silent();
    } else if (me == 0) {
        /* Keep the progress going while the stranger knocks. */
        double t0 = now_s();
        do {
            T_ASSERT(shoal_poll(ep) >= 0);
            T_OK(shoal_stats_get(&st));
            usleep(200);
        } while (st.dropped < 3 && now_s() - t0 < 30);
    }
    ring(50, 50);
    T_OK(SHOAL_WAIT_UNTIL(ep, received == 100));
    T_OK(shoal_barrier(ep));
    T_OK(shoal_stats_get(&st));
    if (me == 0)
        T_EQ(st.dropped, 3);
    else
        T_EQ(st.dropped, 0);
    T_OK(shoal_finalize());
    if (me == 0)
        printf("ok: three strangers refused, %d ranks went on\n", n);
    return 0;
}
