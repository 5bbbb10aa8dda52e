/*
 * Broadcast with NORM (NACK-Oriented Reliable Multicast, RFC 5740; the
 * libnorm of Debian's libnorm-dev), measured the way bench/mpi/bcast.c
 * measures MPI_Bcast, as the reference for Shoal's multicast broadcast.
 *
 *   norm_bcast sender   --receivers R [options]
 *   norm_bcast receiver --id K --sender ADDR [options]    (K = 1..R)
 *
 * One sender (NORM node id 1) and R receivers (node ids K+1) join the
 * multicast group --group:--port on interface --iface.  Each receiver
 * starts its NORM receiver, then connects to the sender's TCP control port
 * (--ctl-port, on ADDR) and says hello; once all R have, the sender sends,
 * for each size, warm-up and timed data objects of that size, one at a
 * time: it writes the object's data (it depends on the size and the
 * iteration; outside the clock), starts the clock, enqueues the object
 * (NormDataEnqueue, its info naming size and iteration), and stops the
 * clock when every receiver has reported NORM_RX_OBJECT_COMPLETED for it
 * over TCP.  That is bench/mpi/bcast.c's MPI_Bcast plus the receivers'
 * empty messages to rank 0.  Receivers check the data after the first and
 * the last iteration of each size (--check all: every one) after their
 * report, and send the verdict; the sender waits for it before the next
 * object, so checks are never timed and objects never overlap.
 *
 * Output, from the sender: '#' comment lines, then per size
 * "bytes us MB/s": the median over the iterations of the time per object
 * and the throughput of that median (10^6 bytes/s).
 *
 * NORM's configuration (options; defaults in brackets), stated in the
 * header line of the output:
 *   --rate BPS     fixed transmit rate, bits/s, NORM headers included
 *                  [1e9]; --rate 0 or --cc: NORM-CC congestion control
 *                  (TCP-friendly, rate bounds --rate-min and --rate-max)
 *   --segment N    payload bytes per packet [1400]
 *   --block N      source segments per FEC block [64]
 *   --parity N     parity segments per block available for repair [8]
 *   --auto-parity N  parity segments sent with every block [0]
 *   --grtt S       initial group round-trip time estimate [0.001 s; NORM's
 *                  own default, 0.5 s, is meant for wide-area paths and
 *                  times the first repairs; NORM then measures it]
 *   --backoff F    NACK back-off factor [0: with 3 receivers there is no
 *                  NACK implosion to avoid]
 *   --group A --port P --iface I --ctl-port C --sizes LIST
 *   --iters N --floor N --warmup N (counted as bench/mpi/mpibench.h does:
 *                  N up to 8 KiB, N*8KiB/size beyond, at least --floor 8;
 *                  warm-up a tenth of that, at least 1)
 *   --check ends|all --sndbuf/--rcvbuf BYTES (socket buffers; the kernel
 *                  caps them at net.core.[rw]mem_max)
 *   --debug N (NORM's debug level) --timeout S (per object) -v (events)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * Debian's normApi.h (1.5.9) declares two functions with C++ syntax
 * (a reference parameter, a default argument); rename them away so the
 * rest of the header compiles as C.  Neither is used here.
 */
#define NormGetRxBindAddress(...) norm_bcast_unused_1(void)
#define NormStreamGetVacancy(...) norm_bcast_unused_2(void)
#include <normApi.h>
#undef NormGetRxBindAddress
#undef NormStreamGetVacancy

#define MAX_SIZES 32
#define MAX_RECEIVERS 64
#define INFO_LEN 64

/* What a receiver sends the sender: the object's sequence number and
 * what happened to it. */
enum { REP_HELLO = 0, REP_DONE = 1, REP_CHECK_OK = 2, REP_CHECK_BAD = 3 };
typedef struct report {
    uint32_t seq, what;
} report_t;

static struct {
    int sender, id, receivers;
    const char *group, *iface, *peer;
    int port, ctl_port;
    long sizes[MAX_SIZES];
    int nsizes;
    long iters, floor, warmup;
    int check_all;
    double rate, rate_min, rate_max, grtt, backoff;
    int cc, segment, block, parity, auto_parity;
    int sndbuf, rcvbuf;
    double timeout;
    int verbose;
} opt = {
    .group = "239.255.78.1",
    .iface = "eth0",
    .port = 6078,
    .ctl_port = 47078,
    .iters = 2000,
    .floor = 8,
    .warmup = -1,
    .rate = 1e9,
    .rate_min = 1e6,
    .rate_max = 1e10,
    .grtt = 0.001,
    .backoff = 0,
    .segment = 1400,
    .block = 64,
    .parity = 8,
    .sndbuf = 4 << 20,
    .rcvbuf = 8 << 20,
    .timeout = 60,
};

static void die(const char *what)
{
    fprintf(stderr, "norm_bcast %s: %s\n",
            opt.sender ? "sender" : "receiver", what);
    exit(1);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The data: the same words as bench/mpi/bcast.c's. */
static uint64_t word(long size, long it, uint64_t j)
{
    uint64_t x = (j + 1) * 0x9E3779B97F4A7C15ULL ^
                 ((uint64_t)size * 0x100000001B3ULL +
                  (uint64_t)it * 0xC2B2AE3D27D4EB4FULL);

    return x ^ (x >> 29);
}

/* Byte i of that data. */
static unsigned char byte_at(long size, long it, long i)
{
    return (unsigned char)(word(size, it, (uint64_t)(i / 8)) >> (8 * (i % 8)));
}

static void fill(char *buf, long size, long it)
{
    long words = size / 8;

    for (long j = 0; j < words; j++) {
        uint64_t w = word(size, it, (uint64_t)j);
        memcpy(buf + j * 8, &w, 8);
    }
    for (long i = words * 8; i < size; i++)
        buf[i] = (char)byte_at(size, it, i);
}

static int check(const char *buf, long size, long it)
{
    long words = size / 8;

    for (long j = 0; j < words; j++) {
        uint64_t w = word(size, it, (uint64_t)j), got;
        memcpy(&got, buf + j * 8, 8);
        if (got != w)
            return 0;
    }
    for (long i = words * 8; i < size; i++)
        if ((unsigned char)buf[i] != byte_at(size, it, i))
            return 0;
    return 1;
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || v <= 0)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end == '\0' && v <= (1L << 30) ? v : -1;
}

static int parse_sizes(const char *text)
{
    char buf[256], *tok, *save;

    if (strlen(text) >= sizeof(buf))
        return -1;
    strcpy(buf, text);
    opt.nsizes = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        long v = parse_size(tok);
        if (v < 0 || opt.nsizes == MAX_SIZES)
            return -1;
        opt.sizes[opt.nsizes++] = v;
    }
    return opt.nsizes > 0 ? 0 : -1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: norm_bcast sender --receivers R [options]\n"
            "       norm_bcast receiver --id K --sender ADDR [options]\n"
            "Options: --group ADDR (239.255.78.1) --port P (6078) --iface IF"
            " (eth0)\n"
            "  --ctl-port P (47078) --sizes A,B,... (1M,16M) --iters N (2000)"
            " --floor N (8)\n  --warmup N (iters/10; all three scaled by"
            " size as in bench/mpi)\n"
            "  --check ends|all --rate BPS (1e9; 0: congestion control) --cc"
            "\n"
            "  --rate-min BPS --rate-max BPS (with --cc) --segment N (1400)"
            " --block N (64)\n"
            "  --parity N (8) --auto-parity N (0) --grtt S (0.001)"
            " --backoff F (0)\n"
            "  --sndbuf B --rcvbuf B (socket buffers) --timeout S (60, per"
            " object)\n"
            "Output (sender): '#' lines, then per size: bytes us MB/s\n");
}

static void parse(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        exit(2);
    }
    if (strcmp(argv[1], "sender") == 0)
        opt.sender = 1;
    else if (strcmp(argv[1], "receiver") != 0) {
        usage(strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        exit(strcmp(argv[1], "--help") == 0 ? 0 : 2);
    }
    if (parse_sizes("1M,16M") != 0)
        exit(2);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--cc") == 0) {
            opt.cc = 1;
            continue;
        }
        if (strcmp(a, "-v") == 0) {
            opt.verbose = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "norm_bcast: %s needs a value\n", a);
            exit(2);
        }
        i++;
        int ok = 1;
        if (strcmp(a, "--receivers") == 0)
            opt.receivers = atoi(v), ok = opt.receivers > 0 &&
                                          opt.receivers <= MAX_RECEIVERS;
        else if (strcmp(a, "--id") == 0)
            opt.id = atoi(v), ok = opt.id > 0;
        else if (strcmp(a, "--sender") == 0)
            opt.peer = v;
        else if (strcmp(a, "--group") == 0)
            opt.group = v;
        else if (strcmp(a, "--iface") == 0)
            opt.iface = v;
        else if (strcmp(a, "--port") == 0)
            opt.port = atoi(v), ok = opt.port > 0 && opt.port < 65536;
        else if (strcmp(a, "--ctl-port") == 0)
            opt.ctl_port = atoi(v), ok = opt.ctl_port > 0 &&
                                         opt.ctl_port < 65536;
        else if (strcmp(a, "--sizes") == 0)
            ok = parse_sizes(v) == 0;
        else if (strcmp(a, "--iters") == 0)
            opt.iters = atol(v), ok = opt.iters > 0;
        else if (strcmp(a, "--warmup") == 0)
            opt.warmup = atol(v), ok = opt.warmup >= 0;
        else if (strcmp(a, "--floor") == 0)
            opt.floor = atol(v), ok = opt.floor > 0;
        else if (strcmp(a, "--check") == 0)
            opt.check_all = strcmp(v, "all") == 0,
            ok = opt.check_all || strcmp(v, "ends") == 0;
        else if (strcmp(a, "--rate") == 0)
            opt.rate = atof(v), ok = opt.rate >= 0;
        else if (strcmp(a, "--rate-min") == 0)
            opt.rate_min = atof(v), ok = opt.rate_min > 0;
        else if (strcmp(a, "--rate-max") == 0)
            opt.rate_max = atof(v), ok = opt.rate_max > 0;
        else if (strcmp(a, "--segment") == 0)
            opt.segment = atoi(v), ok = opt.segment >= 64 &&
                                        opt.segment <= 8900;
        else if (strcmp(a, "--block") == 0)
            opt.block = atoi(v), ok = opt.block > 0 && opt.block <= 255;
        else if (strcmp(a, "--parity") == 0)
            opt.parity = atoi(v), ok = opt.parity >= 0 &&
                                       opt.parity + opt.block <= 255;
        else if (strcmp(a, "--auto-parity") == 0)
            opt.auto_parity = atoi(v), ok = opt.auto_parity >= 0;
        else if (strcmp(a, "--grtt") == 0)
            opt.grtt = atof(v), ok = opt.grtt > 0;
        else if (strcmp(a, "--backoff") == 0)
            opt.backoff = atof(v), ok = opt.backoff >= 0;
        else if (strcmp(a, "--sndbuf") == 0)
            opt.sndbuf = atoi(v), ok = opt.sndbuf > 0;
        else if (strcmp(a, "--rcvbuf") == 0)
            opt.rcvbuf = atoi(v), ok = opt.rcvbuf > 0;
        else if (strcmp(a, "--debug") == 0)
            NormSetDebugLevel((unsigned)atoi(v));
        else if (strcmp(a, "--timeout") == 0)
            opt.timeout = atof(v), ok = opt.timeout > 0;
        else
            ok = 0;
        if (!ok) {
            fprintf(stderr, "norm_bcast: bad option: %s %s\n", a, v);
            exit(2);
        }
    }
    if (opt.rate == 0)
        opt.cc = 1;
    if (opt.auto_parity > opt.parity) {
        fprintf(stderr, "norm_bcast: --auto-parity exceeds --parity\n");
        exit(2);
    }
    if (opt.sender ? opt.receivers == 0 : opt.id == 0 || opt.peer == NULL) {
        usage(stderr);
        exit(2);
    }
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("control connection: write failed");
        c += k;
        n -= (size_t)k;
    }
}

/* Reads one report; 0 at EOF. */
static int read_report(int fd, report_t *r)
{
    size_t got = 0;

    while (got < sizeof(*r)) {
        ssize_t k = read(fd, (char *)r + got, sizeof(*r) - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            die("control connection: read failed");
        if (k == 0) {
            if (got == 0)
                return 0;
            die("control connection: cut inside a report");
        }
        got += (size_t)k;
    }
    return 1;
}

static NormSessionHandle open_session(NormInstanceHandle inst, int node)
{
    NormSessionHandle s = NormCreateSession(inst, opt.group,
                                            (UINT16)opt.port,
                                            (NormNodeId)node);

    if (s == NORM_SESSION_INVALID)
        die("NormCreateSession failed");
    if (!NormSetMulticastInterface(s, opt.iface))
        die("NormSetMulticastInterface failed");
    NormSetDefaultSyncPolicy(s, NORM_SYNC_ALL);
    return s;
}

/* Takes every pending NORM event without blocking; the sender has no use
 * for them, but they must not pile up. */
static void drain(NormInstanceHandle inst)
{
    NormEvent ev;

    while (NormGetNextEvent(inst, &ev, false))
        if (opt.verbose)
            fprintf(stderr, "%.6f sender: event %d\n", now(), (int)ev.type);
        else if (ev.type == NORM_SEND_ERROR)
            fprintf(stderr, "norm_bcast sender: NORM_SEND_ERROR\n");
}

/* Iterations and warm-up at a size, as bench/mpi/mpibench.h counts them:
 * --iters up to 8 KiB, iters*8KiB/size beyond, at least --floor; warm-up
 * a tenth of that (--warmup: given), at least 1. */
static long iters_at(long size)
{
    long n = opt.iters;

    if (size > 8192)
        n = (long)((double)n * 8192.0 / (double)size);
    return n > opt.floor ? n : opt.floor;
}

static long warmup_at(long size)
{
    long n = opt.warmup >= 0 ? opt.warmup : opt.iters / 10;

    if (n == 0)
        return 0;
    if (size > 8192)
        n = (long)((double)n * 8192.0 / (double)size);
    return n > 1 ? n : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int run_sender(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    int fds[MAX_RECEIVERS];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)opt.ctl_port),
                             .sin_addr.s_addr = htonl(INADDR_ANY)};

    if (lfd < 0)
        die("socket failed");
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(lfd, MAX_RECEIVERS) != 0)
        die("cannot listen on the control port");

    NormInstanceHandle inst = NormCreateInstance(false);
    if (inst == NORM_INSTANCE_INVALID)
        die("NormCreateInstance failed");
    NormSessionHandle s = open_session(inst, 1);
    long max = 0;
    for (int k = 0; k < opt.nsizes; k++)
        if (opt.sizes[k] > max)
            max = opt.sizes[k];
    NormSetGrttEstimate(s, opt.grtt);
    NormSetBackoffFactor(s, opt.backoff);
    NormSetGroupSize(s, (unsigned)opt.receivers + 1);
    /* Room for every object of the run: NORM keeps sent objects for
     * repairs until they are purged, and refuses an enqueue while the
     * cache is full of objects it may still have to repair. */
    NormSetTxCacheBounds(s, (NormSize)1 << 40, 2, 4096);
    if (opt.cc) {
        NormSetCongestionControl(s, true, true);
        NormSetTxRateBounds(s, opt.rate_min, opt.rate_max);
    } else {
        NormSetTxRate(s, opt.rate);
    }
    if (!NormStartSender(s, NormGetRandomSessionId(), 32u << 20,
                         (UINT16)opt.segment, (UINT16)opt.block,
                         (UINT16)opt.parity, 0))
        die("NormStartSender failed");
    NormSetAutoParity(s, (unsigned char)opt.auto_parity);
    if (!NormSetTxSocketBuffer(s, (unsigned)opt.sndbuf))
        fprintf(stderr, "norm_bcast sender: NormSetTxSocketBuffer(%d) "
                "failed\n", opt.sndbuf);

    for (int r = 0; r < opt.receivers; r++) {
        report_t rep;
        fds[r] = accept(lfd, NULL, NULL);
        if (fds[r] < 0)
            die("accept failed");
        setsockopt(fds[r], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (!read_report(fds[r], &rep) || rep.what != REP_HELLO)
            die("a receiver did not say hello");
    }
    close(lfd);

    printf("# norm_bcast: time per object from NormDataEnqueue until every "
           "receiver reported NORM_RX_OBJECT_COMPLETED over TCP, "
           "microseconds, the median of the iterations, and its throughput "
           "in MB/s\n");
    int maj = 0, min = 0, pat = 0;
    NormGetVersion(&maj, &min, &pat);
    printf("# library: NORM %d.%d.%d; %d receivers, group %s:%d on %s\n",
           maj, min, pat, opt.receivers, opt.group, opt.port, opt.iface);
    if (opt.cc)
        printf("# rate: NORM-CC congestion control (bounds %g..%g bit/s)",
               opt.rate_min, opt.rate_max);
    else
        printf("# rate: fixed %g bit/s", opt.rate);
    printf("; segment %d B, block %d, parity %d (%d sent proactively), "
           "initial GRTT %g s, backoff %g; iterations %ld up to 8 KiB, "
           "then scaled by 8 KiB/size, at least %ld; "
           "data checked after %s\n# bytes us MB/s\n", opt.segment,
           opt.block, opt.parity, opt.auto_parity, opt.grtt, opt.backoff,
           opt.iters, opt.floor,
           opt.check_all ? "every iteration" : "the first and the last");
    fflush(stdout);

    /* Two buffers in turn: NORM keeps a sent object in its cache (for
     * repairs) while the next one is being written. */
    char *buf[2] = {malloc((size_t)max), malloc((size_t)max)};
    long most = 1;
    for (int k = 0; k < opt.nsizes; k++)
        if (iters_at(opt.sizes[k]) > most)
            most = iters_at(opt.sizes[k]);
    double *t = malloc(sizeof(double) * (size_t)most);
    if (buf[0] == NULL || buf[1] == NULL || t == NULL)
        die("out of memory");
    memset(buf[0], 0, (size_t)max);
    memset(buf[1], 0, (size_t)max);
    uint32_t seq = 0;
    int failed = 0;
    for (int k = 0; k < opt.nsizes && !failed; k++) {
        long size = opt.sizes[k], n = iters_at(size);
        long warm = warmup_at(size);
        long total = warm + n;
        for (long it = 0; it < total; it++) {
            int checked = opt.check_all || it == 0 || it == total - 1;
            char info[INFO_LEN];
            char *data = buf[seq % 2];
            seq++;
            fill(data, size, it);
            snprintf(info, sizeof(info), "%u %ld %ld %d", seq, size, it,
                     checked);
            drain(inst);
            double t0 = now();
            /* A full cache frees up as NORM purges objects: wait. */
            while (NormDataEnqueue(s, data, (UINT32)size, info,
                                   (unsigned)strlen(info) + 1) ==
                   NORM_OBJECT_INVALID) {
                struct pollfd q = {.fd = NormGetDescriptor(inst),
                                   .events = POLLIN};
                if (now() - t0 > opt.timeout)
                    die("NormDataEnqueue failed (transmit cache full)");
                poll(&q, 1, 10);
                drain(inst);
            }
            int done = 0, verdicts = 0;
            double t1 = 0;
            while (done < opt.receivers || (checked && verdicts <
                                            opt.receivers)) {
                struct pollfd p[MAX_RECEIVERS + 1];
                for (int r = 0; r < opt.receivers; r++)
                    p[r] = (struct pollfd){.fd = fds[r], .events = POLLIN};
                p[opt.receivers] = (struct pollfd){
                    .fd = NormGetDescriptor(inst), .events = POLLIN};
                if (poll(p, (nfds_t)opt.receivers + 1, 1000) < 0 &&
                    errno != EINTR)
                    die("poll failed");
                if (now() - t0 > opt.timeout) {
                    fprintf(stderr, "norm_bcast sender: size %ld iteration "
                            "%ld: %d of %d receivers done after %g s\n",
                            size, it, done, opt.receivers, opt.timeout);
                    return 1;
                }
                if (p[opt.receivers].revents)
                    drain(inst);
                for (int r = 0; r < opt.receivers; r++) {
                    report_t rep;
                    if (!(p[r].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                    if (!read_report(fds[r], &rep))
                        die("a receiver hung up");
                    if (rep.seq != seq)
                        continue; /* an older object, completed again */
                    if (rep.what == REP_DONE && ++done == opt.receivers)
                        t1 = now();
                    if (rep.what == REP_CHECK_OK)
                        verdicts++;
                    if (rep.what == REP_CHECK_BAD) {
                        fprintf(stderr, "norm_bcast: receiver %d got wrong "
                                "data at size %ld, iteration %ld\n", r + 1,
                                size, it);
                        failed = 1;
                        verdicts++;
                    }
                }
            }
            if (it >= warm)
                t[it - warm] = t1 - t0;
        }
        if (failed)
            break;
        qsort(t, (size_t)n, sizeof(double), cmp_double);
        double med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
        printf("%ld %.6g %.6g\n", size, med * 1e6,
               med > 0 ? (double)size / med / 1e6 : 0.0);
        fflush(stdout);
    }
    for (int r = 0; r < opt.receivers; r++)
        close(fds[r]);
    NormStopSender(s);
    NormDestroySession(s);
    NormDestroyInstance(inst);
    free(buf[0]);
    free(buf[1]);
    free(t);
    return failed ? 3 : 0;
}

static int run_receiver(void)
{
    NormInstanceHandle inst = NormCreateInstance(false);
    if (inst == NORM_INSTANCE_INVALID)
        die("NormCreateInstance failed");
    NormSessionHandle s = open_session(inst, opt.id + 1);
    NormSetDefaultUnicastNack(s, false);
    if (!NormStartReceiver(s, 64u << 20))
        die("NormStartReceiver failed");
    /* After the start: the socket exists only then. */
    if (!NormSetRxSocketBuffer(s, (unsigned)opt.rcvbuf))
        fprintf(stderr, "norm_bcast receiver: NormSetRxSocketBuffer(%d) "
                "failed\n", opt.rcvbuf);

    /* The sender may not listen yet: try for up to 30 s. */
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)opt.ctl_port)};
    if (inet_pton(AF_INET, opt.peer, &sa.sin_addr) != 1)
        die("--sender takes an IPv4 address");
    int fd = -1, one = 1;
    for (int tries = 0; fd < 0 && tries < 300; tries++) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            die("socket failed");
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            close(fd);
            fd = -1;
            usleep(100000);
        }
    }
    if (fd < 0)
        die("cannot connect to the sender's control port");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    report_t hello = {0, REP_HELLO};
    write_all(fd, &hello, sizeof(hello));

    int status = 0;
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                              {.fd = NormGetDescriptor(inst),
                               .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll failed");
        }
        if (p[0].revents) {
            char c;
            if (read(fd, &c, 1) <= 0)
                break; /* the sender is done */
        }
        NormEvent ev;
        while (NormGetNextEvent(inst, &ev, false)) {
            if (opt.verbose && ev.type != NORM_RX_OBJECT_UPDATED)
                fprintf(stderr, "%.6f receiver %d: event %d\n", now(),
                        opt.id, (int)ev.type);
            if (ev.type != NORM_RX_OBJECT_COMPLETED)
                continue;
            char info[INFO_LEN + 1] = {0};
            unsigned seq = 0;
            long size = 0, it = 0;
            int checked = 0;
            NormObjectGetInfo(ev.object, info, INFO_LEN);
            if (sscanf(info, "%u %ld %ld %d", &seq, &size, &it,
                       &checked) != 4)
                die("an object without our info");
            report_t rep = {seq, REP_DONE};
            write_all(fd, &rep, sizeof(rep));
            if (checked) {
                const char *data = NormDataAccessData(ev.object);
                int ok = data != NULL &&
                         NormObjectGetSize(ev.object) == (NormSize)size &&
                         check(data, size, it);
                if (!ok) {
                    fprintf(stderr, "norm_bcast receiver %d: wrong data at "
                            "size %ld, iteration %ld\n", opt.id, size, it);
                    status = 3;
                }
                rep.what = ok ? REP_CHECK_OK : REP_CHECK_BAD;
                write_all(fd, &rep, sizeof(rep));
            }
        }
    }
    close(fd);
    NormStopReceiver(s);
    NormDestroySession(s);
    NormDestroyInstance(inst);
    return status;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    return opt.sender ? run_sender() : run_receiver();
}
