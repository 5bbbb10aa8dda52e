/*
 * Kernel bypass for the datagram wire: the same datagrams through an
 * AF_XDP socket (SHOAL_UDP_XDP).  Only the packet I/O changes:
 *
 *   send: the datagram (the wire's header and stream bytes) is copied into
 *         a frame of the socket's memory (UMEM) behind Ethernet, IP and UDP
 *         headers written here (udp_xdp_pkt.c), the frame's descriptor goes
 *         on the TX ring, and one sendto asks the kernel to send what the
 *         ring holds (copy mode: the driver takes the frame from there).
 *   receive: a small XDP program on the bound interface redirects UDP to
 *         the data port and address into the socket and passes everything
 *         else (ARP, TCP, the liveness socket's probes) to the kernel; the
 *         RX ring is read without a system call, each frame's headers are
 *         checked and the datagram goes to the wire's usual checks (tag,
 *         epochs, sender address).
 *
 * The UDP socket stays bound: it keeps the port, takes what the program
 * passes (other queues, traffic from this host) and sends to peers whose
 * link address is not known yet.  A peer's link address is learned from
 * the first datagram of it accepted here (the tag proves it), or read from
 * the kernel's neighbour table, which the socket path fills.  Packets are
 * what the socket would send, so either side may use either path.
 *
 * The program (a few dozen instructions, built here: no compiler or
 * object file needed at run time) is attached through a BPF link, so the
 * kernel detaches it when this process ends, however it ends.  One program
 * per interface: a second rank on the same interface keeps to the socket
 * path.  libxdp (the AF_XDP rings and UMEM) is loaded with dlopen only
 * when the path is selected.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "udp.h"

#ifndef SHOAL_HAVE_XDP

#define NOT_BUILT "not built: libxdp-dev not found at configure time"

int udp_xdp_start(const struct sockaddr_storage *me, char *why, size_t cap)
{
    (void)me;
    snprintf(why, cap, NOT_BUILT);
    return 0;
}
void udp_xdp_stop(void) {}
int udp_xdp_peer(const udp_peer_t *p)
{
    (void)p;
    return 0;
}
uint32_t udp_xdp_room(void)
{
    return 0;
}
int udp_xdp_batch(void)
{
    return 0;
}
int udp_xdp_put(const udp_peer_t *p, const struct iovec *iov, int niov)
{
    (void)p;
    (void)iov;
    (void)niov;
    return ENOTSUP;
}
void udp_xdp_kick(void) {}
int udp_xdp_poll(void)
{
    return 0;
}
int udp_xdp_sock_due(void)
{
    return 1;
}
void udp_xdp_sock_seen(int got)
{
    (void)got;
}
int udp_xdp_fd(void)
{
    return -1;
}
int udp_xdp_probe(const struct sockaddr_storage *me, char *why, size_t cap)
{
    (void)me;
    snprintf(why, cap, NOT_BUILT);
    return 0;
}

#else /* SHOAL_HAVE_XDP */

#include <dlfcn.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if_arp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <xdp/xsk.h>

#define XDP_LIB "libxdp.so.1"
/* Frames of the socket's memory: half receive (on the fill ring), half
 * send; rings as large as the frames they cycle. */
#define NRX 2048u
#define NTX 1024u
#define RX_BATCH 64u
/* How often a peer's link address is looked up in the neighbour table
 * while unknown. */
#define NEIGH_RETRY_NS 20000000ull
/* The UDP socket is read at every poll while it had datagrams this
 * recently, else at one poll in SOCK_SKIP. */
#define SOCK_HOT_NS 2000000ull
#define SOCK_SKIP 16u
/* How long the only rank of a host waits for a busy queue to come free. */
#define XSK_BUSY_WAIT_NS 1500000000ull

typedef struct xdp_api {
    void *lib;
    int (*umem_create)(struct xsk_umem **, void *, __u64,
                       struct xsk_ring_prod *, struct xsk_ring_cons *,
                       const struct xsk_umem_config *);
    int (*socket_create)(struct xsk_socket **, const char *, __u32,
                         struct xsk_umem *, struct xsk_ring_cons *,
                         struct xsk_ring_prod *,
                         const struct xsk_socket_config *);
    int (*socket_fd)(const struct xsk_socket *);
    void (*socket_delete)(struct xsk_socket *);
    int (*umem_delete)(struct xsk_umem *);
} xdp_api_t;

static struct xdp_path {
    xdp_api_t api;
    struct xsk_umem *umem;
    struct xsk_socket *xsk;
    struct xsk_ring_prod fill, tx;
    struct xsk_ring_cons comp, rx;
    uint8_t *area;
    size_t area_len;
    uint32_t frame; /* bytes per frame, a power of two */
    uint64_t tx_free[NTX];
    uint32_t ntx_free;
    int fd, prog_fd, map_fd, link_fd;
    unsigned ifindex;
    char ifname[IF_NAMESIZE];
    uint8_t mac[6];
    struct sockaddr_storage me; /* the data socket's address and port */
    size_t hdr;                 /* Ethernet + IP + UDP header bytes */
    uint8_t (*peer_mac)[6];     /* by rank */
    uint8_t *peer_known;
    uint64_t *peer_retry;
    int npeers;
    uint32_t kick_due;  /* frames on the TX ring the kernel has not taken */
    uint64_t sock_until; /* read the socket every poll until then */
    uint32_t sock_skip;
    uint64_t sent, received, refused, kicks;
    const char *mode;
    int zerocopy; /* the driver reads frames in place */
} X = {.fd = -1, .prog_fd = -1, .map_fd = -1, .link_fd = -1};

/* ---- libxdp, loaded when selected ---------------------------------------------- */

static int sym(void *lib, const char *name, void *fn_p)
{
    void *p = dlsym(lib, name);

    if (p == NULL)
        return -1;
    memcpy(fn_p, &p, sizeof(p));
    return 0;
}

static int api_load(xdp_api_t *a, char *why, size_t cap)
{
    if (a->lib != NULL)
        return 0;
    a->lib = dlopen(XDP_LIB, RTLD_NOW | RTLD_LOCAL);
    if (a->lib == NULL) {
        const char *e = dlerror();
        snprintf(why, cap, "cannot load " XDP_LIB " (Debian: apt-get install "
                 "libxdp1): %s", e != NULL ? e : "not found");
        return -1;
    }
    if (sym(a->lib, "xsk_umem__create", &a->umem_create) ||
        sym(a->lib, "xsk_socket__create", &a->socket_create) ||
        sym(a->lib, "xsk_socket__fd", &a->socket_fd) ||
        sym(a->lib, "xsk_socket__delete", &a->socket_delete) ||
        sym(a->lib, "xsk_umem__delete", &a->umem_delete)) {
        snprintf(why, cap, XDP_LIB " lacks the xsk_* functions");
        dlclose(a->lib);
        a->lib = NULL;
        return -1;
    }
    return 0;
}

/* ---- the XDP program ----------------------------------------------------------- */

static int sys_bpf(int cmd, union bpf_attr *a)
{
    return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src,
                            int16_t off, int32_t imm)
{
    struct bpf_insn i;

    memset(&i, 0, sizeof(i));
    i.code = code;
    i.dst_reg = dst & 15;
    i.src_reg = src & 15;
    i.off = off;
    i.imm = imm;
    return i;
}

/* Loads from the packet (r2) into r5. */
#define LDX(size, dst, src, off) insn(BPF_LDX | BPF_MEM | (size), dst, src, (int16_t)(off), 0)
#define JNE32(reg, imm) insn(BPF_JMP32 | BPF_JNE | BPF_K, reg, 0, 0, (int32_t)(imm))

static int32_t word(const void *p)
{
    int32_t w;

    memcpy(&w, p, 4);
    return w;
}

static int16_t half(const void *p)
{
    int16_t h;

    memcpy(&h, p, 2);
    return h;
}

/*
 * XDP: a UDP packet to our address and data port (IPv4 without options,
 * not a fragment; IPv6 without extension headers) goes to the AF_XDP
 * socket of its queue in the map, everything else on to the kernel (also
 * when the queue has no socket: bpf_redirect_map's default action).
 * Values are compared as the packet's bytes read in host order.
 */
static int prog_build(struct bpf_insn *p, int map_fd,
                      const struct sockaddr_storage *me)
{
    int v6 = me->ss_family == AF_INET6, n = 0, nj = 0, jumps[16], port_at;
    uint8_t et[2] = {v6 ? 0x86 : 0x08, v6 ? 0xdd : 0x00};
    const uint8_t *port;

#define EMIT(i) (p[n++] = (i))
#define TO_PASS(i) (jumps[nj++] = n, EMIT(i))
    EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0)); /* r6 = ctx */
    EMIT(LDX(BPF_W, 2, 6, offsetof(struct xdp_md, data)));
    EMIT(LDX(BPF_W, 3, 6, offsetof(struct xdp_md, data_end)));
    EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0));
    EMIT(insn(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0,
              (int32_t)udp_pkt_hdr_len(me->ss_family)));
    TO_PASS(insn(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 0, 0));
    EMIT(LDX(BPF_H, 5, 2, 12));
    TO_PASS(JNE32(5, (uint16_t)half(et)));
    if (v6) {
        const struct sockaddr_in6 *a = (const void *)me;
        EMIT(LDX(BPF_B, 5, 2, 14));
        EMIT(insn(BPF_ALU | BPF_AND | BPF_K, 5, 0, 0, 0xf0));
        TO_PASS(JNE32(5, 0x60));
        EMIT(LDX(BPF_B, 5, 2, 20)); /* next header */
        TO_PASS(JNE32(5, 17));
        for (int k = 0; k < 4; k++) {
            EMIT(LDX(BPF_W, 5, 2, 38 + 4 * k));
            TO_PASS(JNE32(5, word(a->sin6_addr.s6_addr + 4 * k)));
        }
        port = (const uint8_t *)&a->sin6_port;
        port_at = 14 + 40 + 2;
    } else {
        const struct sockaddr_in *a = (const void *)me;
        uint8_t frag[2] = {0x3f, 0xff};
        EMIT(LDX(BPF_B, 5, 2, 14));
        TO_PASS(JNE32(5, 0x45));
        EMIT(LDX(BPF_B, 5, 2, 23)); /* protocol */
        TO_PASS(JNE32(5, 17));
        EMIT(LDX(BPF_H, 5, 2, 20)); /* flags and fragment offset */
        EMIT(insn(BPF_ALU | BPF_AND | BPF_K, 5, 0, 0, (uint16_t)half(frag)));
        TO_PASS(JNE32(5, 0));
        EMIT(LDX(BPF_W, 5, 2, 30));
        TO_PASS(JNE32(5, word(&a->sin_addr)));
        port = (const uint8_t *)&a->sin_port;
        port_at = 14 + 20 + 2;
    }
    EMIT(LDX(BPF_H, 5, 2, port_at));
    TO_PASS(JNE32(5, (uint16_t)half(port)));
    EMIT(LDX(BPF_W, 2, 6, offsetof(struct xdp_md, rx_queue_index)));
    EMIT(insn(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd));
    EMIT(insn(0, 0, 0, 0, 0));
    EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS));
    EMIT(insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map));
    EMIT(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    for (int j = 0; j < nj; j++)
        p[jumps[j]].off = (int16_t)(n - jumps[j] - 1);
    EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS));
    EMIT(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
#undef EMIT
#undef TO_PASS
    return n;
}

/* Why a bpf() call failed, in words for shoal-info and the log. */
static void bpf_why(const char *what, int e, char *why, size_t cap)
{
    if (e == EPERM || e == EACCES)
        snprintf(why, cap, "%s: no permission (run as root, or with "
                 "CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW)", what);
    else if (e == ENOSYS)
        snprintf(why, cap, "%s: the kernel has no BPF system call", what);
    else
        snprintf(why, cap, "%s: %s", what, strerror(e));
}

static int map_create(char *why, size_t cap)
{
    union bpf_attr a;

    memset(&a, 0, sizeof(a));
    a.map_type = BPF_MAP_TYPE_XSKMAP;
    a.key_size = 4;
    a.value_size = 4;
    a.max_entries = 64; /* queues; those without a socket pass */
    snprintf(a.map_name, sizeof(a.map_name), "shoal_xsks");
    int fd = sys_bpf(BPF_MAP_CREATE, &a);
    if (fd < 0)
        bpf_why("BPF map", errno, why, cap);
    return fd;
}

static int prog_load(int map_fd, const struct sockaddr_storage *me,
                     char *why, size_t cap)
{
    struct bpf_insn prog[64];
    static char log[4096];
    union bpf_attr a;
    int n = prog_build(prog, map_fd, me), fd;

    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_XDP;
    a.expected_attach_type = BPF_XDP;
    a.insns = (uint64_t)(uintptr_t)prog;
    a.insn_cnt = (uint32_t)n;
    a.license = (uint64_t)(uintptr_t)"Dual BSD/GPL";
    snprintf(a.prog_name, sizeof(a.prog_name), "shoal_udp");
    fd = sys_bpf(BPF_PROG_LOAD, &a);
    if (fd >= 0)
        return fd;
    int e = errno;
    if (e == EPERM || e == EACCES) {
        bpf_why("XDP program", e, why, cap);
        return -1;
    }
    /* Again with the verifier's log, to say why. */
    a.log_buf = (uint64_t)(uintptr_t)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    log[0] = '\0';
    fd = sys_bpf(BPF_PROG_LOAD, &a);
    if (fd >= 0)
        return fd;
    char *last = strrchr(log, '\n');
    while (last != NULL && last > log && last[1] == '\0') {
        *last = '\0';
        last = strrchr(log, '\n');
    }
    snprintf(why, cap, "XDP program refused: %s%s%s", strerror(e),
             log[0] ? ": " : "", last != NULL ? last + 1 : log);
    return -1;
}

/* Attach through a link (the kernel detaches it when we end): native
 * mode, else generic.  The mode in *mode. */
static int prog_attach(int prog_fd, unsigned ifindex, const char **mode,
                       char *why, size_t cap)
{
    static const struct {
        uint32_t flags;
        const char *name;
    } modes[] = {{XDP_FLAGS_DRV_MODE, "native"},
                 {XDP_FLAGS_SKB_MODE, "generic"}};
    int first = 0;

    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        union bpf_attr a;
        memset(&a, 0, sizeof(a));
        a.link_create.prog_fd = (uint32_t)prog_fd;
        a.link_create.target_ifindex = ifindex;
        a.link_create.attach_type = BPF_XDP;
        a.link_create.flags = modes[m].flags;
        int fd = sys_bpf(BPF_LINK_CREATE, &a);
        if (fd >= 0) {
            *mode = modes[m].name;
            return fd;
        }
        int e = errno;
        if (m == 0)
            first = e;
        if (e == EBUSY || e == EEXIST) {
            snprintf(why, cap, "%s already has an XDP program (another "
                     "rank or program of this host uses it)", X.ifname);
            return -1;
        }
        if (e == EPERM || e == EACCES) {
            bpf_why("attaching the XDP program", e, why, cap);
            return -1;
        }
    }
    snprintf(why, cap, "%s takes no XDP program: %s", X.ifname,
             strerror(first));
    return -1;
}

/* ---- the interface ---------------------------------------------------------------- */

static int same_ip(const struct sockaddr *s, const struct sockaddr_storage *me)
{
    if (s->sa_family != me->ss_family)
        return 0;
    if (s->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)(const void *)s)->sin6_addr,
                      &((const struct sockaddr_in6 *)(const void *)me)->sin6_addr,
                      16) == 0;
    return ((const struct sockaddr_in *)(const void *)s)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)(const void *)me)->sin_addr.s_addr;
}

/* The interface holding me: its name and link address; 0 with *why. */
static int find_if(const struct sockaddr_storage *me, char *name,
                   uint8_t mac[6], char *why, size_t cap)
{
    struct ifaddrs *ifs, *i;
    int found = 0, lo = 0;

    if (getifaddrs(&ifs) != 0) {
        snprintf(why, cap, "getifaddrs: %s", strerror(errno));
        return 0;
    }
    for (i = ifs; i != NULL; i = i->ifa_next)
        if (i->ifa_addr != NULL && same_ip(i->ifa_addr, me)) {
            snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
            lo = (i->ifa_flags & IFF_LOOPBACK) != 0;
            found = 1;
            break;
        }
    freeifaddrs(ifs);
    if (!found) {
        snprintf(why, cap, "no interface holds the bound address");
        return 0;
    }
    if (lo) {
        snprintf(why, cap, "the bound address is on loopback (%s)", name);
        return 0;
    }
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok = 0;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0) {
        if (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER) {
            memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
            ok = 1;
        } else {
            snprintf(why, cap, "%s is not an Ethernet interface", name);
        }
    } else {
        snprintf(why, cap, "link address of %s: %s", name, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Permission for AF_XDP sockets and BPF, without touching the interface. */
static int can_xdp(char *why, size_t cap)
{
    int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        int e = errno;
        if (e == EPERM || e == EACCES)
            snprintf(why, cap, "AF_XDP socket: no permission (needs root "
                     "or CAP_NET_RAW)");
        else if (e == EAFNOSUPPORT)
            snprintf(why, cap, "the kernel has no AF_XDP sockets "
                     "(CONFIG_XDP_SOCKETS)");
        else
            snprintf(why, cap, "AF_XDP socket: %s", strerror(e));
        return 0;
    }
    close(fd);
    fd = map_create(why, cap);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* ---- link addresses of peers -------------------------------------------------------- */

/* The peer's link address from the kernel's neighbour table (IPv4, on our
 * interface, resolved); 1 when found. */
static int neigh_lookup(const struct sockaddr_storage *to, uint8_t mac[6])
{
    char want[INET_ADDRSTRLEN], line[256];
    FILE *f;
    int found = 0;

    if (to->ss_family != AF_INET ||
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)to)->sin_addr,
                  want, sizeof(want)) == NULL)
        return 0; /* IPv6: learned from the peer's datagrams only */
    f = fopen("/proc/net/arp", "re");
    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        char ip[64], hw[64], dev[64];
        unsigned type, flags, m[6];
        if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", ip, &type, &flags,
                   hw, dev) != 5 ||
            strcmp(ip, want) != 0 || strcmp(dev, X.ifname) != 0 ||
            !(flags & 0x2) /* ATF_COM: resolved */ ||
            sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
                   &m[4], &m[5]) != 6)
            continue;
        for (int k = 0; k < 6; k++)
            mac[k] = (uint8_t)m[k];
        found = 1;
    }
    fclose(f);
    return found;
}

int udp_xdp_peer(const udp_peer_t *p)
{
    int r = p->base.rank;
    uint64_t now;

    if (BASE_LIKELY(X.peer_known[r]))
        return 1;
    now = base_time_ns();
    if (now < X.peer_retry[r])
        return 0;
    X.peer_retry[r] = now + NEIGH_RETRY_NS;
    if (!neigh_lookup(&p->addr, X.peer_mac[r]))
        return 0;
    X.peer_known[r] = 1;
    base_debug("udp", "rank %d at %02x:%02x:%02x:%02x:%02x:%02x (neighbour "
               "table): AF_XDP from now on", r, X.peer_mac[r][0],
               X.peer_mac[r][1], X.peer_mac[r][2], X.peer_mac[r][3],
               X.peer_mac[r][4], X.peer_mac[r][5]);
    return 1;
}

/* ---- sending ------------------------------------------------------------------------- */

static void reap(void)
{
    uint32_t idx, n = xsk_ring_cons__peek(&X.comp, NTX, &idx);

    for (uint32_t i = 0; i < n; i++)
        X.tx_free[X.ntx_free++] = *xsk_ring_cons__comp_addr(&X.comp, idx + i);
    if (n > 0)
        xsk_ring_cons__release(&X.comp, n);
}

int udp_xdp_batch(void)
{
    return X.zerocopy;
}

uint32_t udp_xdp_room(void)
{
    if (X.ntx_free < NTX / 2)
        reap();
    return X.ntx_free;
}

int udp_xdp_put(const udp_peer_t *p, const struct iovec *iov, int niov)
{
    uint32_t idx;
    size_t len = 0;
    uint64_t addr;
    uint8_t *f;

    if (BASE_UNLIKELY(X.ntx_free == 0)) {
        reap();
        if (X.ntx_free == 0)
            return EAGAIN;
    }
    for (int i = 0; i < niov; i++)
        len += iov[i].iov_len;
    if (BASE_UNLIKELY(X.hdr + len > X.frame))
        return EMSGSIZE;
    if (BASE_UNLIKELY(xsk_ring_prod__reserve(&X.tx, 1, &idx) != 1))
        return EAGAIN;
    addr = X.tx_free[--X.ntx_free];
    f = xsk_umem__get_data(X.area, addr);
    len = X.hdr;
    for (int i = 0; i < niov; i++) {
        memcpy(f + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    udp_pkt_build(f, X.peer_mac[p->base.rank], X.mac, &X.me, &p->addr,
                  len - X.hdr);
    struct xdp_desc *d = xsk_ring_prod__tx_desc(&X.tx, idx);
    d->addr = addr;
    d->len = (uint32_t)len;
    d->options = 0;
    xsk_ring_prod__submit(&X.tx, 1);
    X.kick_due = 1;
    X.sent++;
    return 0;
}

void udp_xdp_kick(void)
{
    /* Copy mode sends in the sendto, a batch at a time (EAGAIN: more
     * left); what stays goes at the next poll. */
    for (int tries = 0; tries < 4 && X.kick_due; tries++) {
        if (xsk_ring_prod__needs_wakeup(&X.tx)) {
            X.kicks++;
            if (sendto(X.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
                errno != EAGAIN && errno != EBUSY && errno != ENOBUFS &&
                errno != EINTR)
                base_debug("udp", "AF_XDP send: %s", strerror(errno));
        }
        X.kick_due = __atomic_load_n(X.tx.consumer, __ATOMIC_ACQUIRE) !=
                     *X.tx.producer;
    }
    reap();
}

/* ---- receiving ------------------------------------------------------------------------ */

int udp_xdp_poll(void)
{
    uint32_t idx, fidx, n;
    uint64_t addrs[RX_BATCH], now;

    if (X.kick_due)
        udp_xdp_kick();
    n = xsk_ring_cons__peek(&X.rx, RX_BATCH, &idx);
    if (n == 0)
        return 0;
    now = base_time_ns();
    for (uint32_t i = 0; i < n; i++) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&X.rx, idx + i);
        const uint8_t *f = xsk_umem__get_data(X.area, d->addr), *payload;
        struct sockaddr_storage from;
        const char *why;
        size_t len;
        int rank;

        addrs[i] = d->addr & ~(uint64_t)(X.frame - 1);
        if (udp_pkt_parse(f, d->len, &X.me, &from, &payload, &len, &why) !=
            0) {
            wire_stats.rejected++;
            if (X.refused++ < 4)
                base_info("udp", "AF_XDP: dropped a packet: %s", why);
            continue;
        }
        rank = udp_on_datagram(payload, len, &from, now);
        if (rank >= 0 && (!X.peer_known[rank] ||
                          memcmp(X.peer_mac[rank], f + 6, 6) != 0)) {
            /* Accepted (tag, epochs, address): its link address is the
             * way back. */
            memcpy(X.peer_mac[rank], f + 6, 6);
            X.peer_known[rank] = 1;
        }
    }
    xsk_ring_cons__release(&X.rx, n);
    if (xsk_ring_prod__reserve(&X.fill, n, &fidx) == n) {
        for (uint32_t i = 0; i < n; i++)
            *xsk_ring_prod__fill_addr(&X.fill, fidx + i) = addrs[i];
        xsk_ring_prod__submit(&X.fill, n);
    }
    X.received += n;
    return (int)n;
}

int udp_xdp_sock_due(void)
{
    return ++X.sock_skip % SOCK_SKIP == 0 || base_time_ns() < X.sock_until;
}

void udp_xdp_sock_seen(int got)
{
    if (got > 0)
        X.sock_until = base_time_ns() + SOCK_HOT_NS;
}

int udp_xdp_fd(void)
{
    return X.fd;
}

/* ---- start and stop ---------------------------------------------------------------------- */

static int xsk_open(char *why, size_t cap)
{
    struct xsk_umem_config uc = {
        .fill_size = NRX,
        .comp_size = NTX,
        .frame_size = X.frame,
        .frame_headroom = 0,
        .flags = 0,
    };
    struct xsk_socket_config sc = {
        .rx_size = NRX,
        .tx_size = NTX,
        .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
        .xdp_flags = 0,
        .bind_flags = XDP_USE_NEED_WAKEUP,
    };
    uint32_t idx;
    int err;

    X.area_len = (size_t)(NRX + NTX) * X.frame;
    X.area = mmap(NULL, X.area_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (X.area == MAP_FAILED) {
        X.area = NULL;
        snprintf(why, cap, "AF_XDP memory: %s", strerror(errno));
        return 0;
    }
    err = X.api.umem_create(&X.umem, X.area, X.area_len, &X.fill, &X.comp,
                            &uc);
    if (err != 0) {
        X.umem = NULL;
        snprintf(why, cap, "AF_XDP memory registration: %s", strerror(-err));
        return 0;
    }
    /* The kernel frees an exited process's AF_XDP socket some time after
     * the exit, so a job started right after another finds the queue
     * still taken.  When this rank is its job's only one on the host, a
     * busy queue is such a leftover (or another job): wait for it a
     * while before taking the socket path. */
    uint64_t give_up = base_time_ns() + XSK_BUSY_WAIT_NS;
    for (;;) {
        err = X.api.socket_create(&X.xsk, X.ifname, 0, X.umem, &X.rx, &X.tx,
                                  &sc);
        if (err != -EBUSY || udp_state.job->local_size > 1 ||
            base_time_ns() >= give_up)
            break;
        X.xsk = NULL;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (err != 0) {
        X.xsk = NULL;
        if (-err == EPERM || -err == EACCES)
            snprintf(why, cap, "AF_XDP socket: no permission (needs root or "
                     "CAP_NET_RAW)");
        else if (-err == EBUSY)
            snprintf(why, cap, "AF_XDP socket on %s queue 0: in use (%s)",
                     X.ifname, udp_state.job->local_size > 1
                         ? "another rank of this host"
                         : "another job of this host");
        else
            snprintf(why, cap, "AF_XDP socket on %s queue 0: %s", X.ifname,
                     strerror(-err));
        return 0;
    }
    X.fd = X.api.socket_fd(X.xsk);
    if (xsk_ring_prod__reserve(&X.fill, NRX, &idx) != NRX) {
        snprintf(why, cap, "AF_XDP fill ring refused %u frames", NRX);
        return 0;
    }
    for (uint32_t i = 0; i < NRX; i++)
        *xsk_ring_prod__fill_addr(&X.fill, idx + i) = (uint64_t)i * X.frame;
    xsk_ring_prod__submit(&X.fill, NRX);
    for (uint32_t i = 0; i < NTX; i++)
        X.tx_free[i] = (uint64_t)(NRX + i) * X.frame;
    X.ntx_free = NTX;
    return 1;
}

static const char *copy_mode(void)
{
    struct xdp_options o;
    socklen_t l = sizeof(o);

    if (getsockopt(X.fd, SOL_XDP, XDP_OPTIONS, &o, &l) == 0 &&
        (o.flags & XDP_OPTIONS_ZEROCOPY))
        return "zero copy";
    return "copy mode";
}

int udp_xdp_start(const struct sockaddr_storage *me, char *why, size_t cap)
{
    udp_state_t *u = &udp_state;
    union bpf_attr a;
    uint32_t key = 0, val;
    int ok = 0;

    X.fd = X.prog_fd = X.map_fd = X.link_fd = -1;
    X.me = *me;
    X.hdr = udp_pkt_hdr_len(me->ss_family);
    X.frame = X.hdr + u->dgram_max <= 2048 ? 2048 : 4096;
    if (X.hdr + u->dgram_max > X.frame) {
        snprintf(why, cap, "datagrams of %zu bytes do not fit an AF_XDP "
                 "frame (%u bytes): lower SHOAL_UDP_MTU", u->dgram_max,
                 X.frame);
        return 0;
    }
    if (!find_if(me, X.ifname, X.mac, why, cap))
        return 0;
    X.ifindex = if_nametoindex(X.ifname);
    if (api_load(&X.api, why, cap) != 0 || !can_xdp(why, cap))
        return 0;
    X.npeers = u->job->size;
    X.peer_mac = calloc((size_t)X.npeers, sizeof(*X.peer_mac));
    X.peer_known = calloc((size_t)X.npeers, 1);
    X.peer_retry = calloc((size_t)X.npeers, sizeof(*X.peer_retry));
    if (X.peer_mac == NULL || X.peer_known == NULL || X.peer_retry == NULL) {
        snprintf(why, cap, "no memory");
        goto out;
    }
    X.map_fd = map_create(why, cap);
    if (X.map_fd < 0)
        goto out;
    X.prog_fd = prog_load(X.map_fd, me, why, cap);
    if (X.prog_fd < 0)
        goto out;
    if (!xsk_open(why, cap))
        goto out;
    val = (uint32_t)X.fd;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)X.map_fd;
    a.key = (uint64_t)(uintptr_t)&key;
    a.value = (uint64_t)(uintptr_t)&val;
    if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) != 0) {
        bpf_why("AF_XDP socket into the map", errno, why, cap);
        goto out;
    }
    X.link_fd = prog_attach(X.prog_fd, X.ifindex, &X.mode, why, cap);
    if (X.link_fd < 0)
        goto out;
    ok = 1;
    X.sent = X.received = X.refused = X.kicks = 0;
    X.zerocopy = strcmp(copy_mode(), "zero copy") == 0;
    base_info("udp", "AF_XDP on %s queue 0: %s XDP, %s", X.ifname, X.mode,
              copy_mode());
out:
    if (!ok)
        udp_xdp_stop();
    return ok;
}

void udp_xdp_stop(void)
{
    if (X.link_fd >= 0) {
        base_info("udp", "AF_XDP on %s: %llu datagrams sent, %llu received, "
                  "%llu kicks", X.ifname, (unsigned long long)X.sent,
                  (unsigned long long)X.received,
                  (unsigned long long)X.kicks);
        close(X.link_fd); /* detaches the program */
    }
    if (X.xsk != NULL)
        X.api.socket_delete(X.xsk);
    if (X.umem != NULL)
        X.api.umem_delete(X.umem);
    if (X.area != NULL)
        munmap(X.area, X.area_len);
    if (X.prog_fd >= 0)
        close(X.prog_fd);
    if (X.map_fd >= 0)
        close(X.map_fd);
    free(X.peer_mac);
    free(X.peer_known);
    free(X.peer_retry);
    void *lib = X.api.lib;
    xdp_api_t api = X.api;
    memset(&X, 0, sizeof(X));
    X.api = api; /* stays loaded: libbpf keeps state in it */
    (void)lib;
    X.fd = X.prog_fd = X.map_fd = X.link_fd = -1;
}

int udp_xdp_probe(const struct sockaddr_storage *me, char *why, size_t cap)
{
    char name[IF_NAMESIZE], more[160];
    uint8_t mac[6];
    const char *sel[] = {"off: SHOAL_UDP_XDP=auto or on uses it",
                         "SHOAL_UDP_XDP=auto", "SHOAL_UDP_XDP=on"};

    if (!find_if(me, name, mac, why, cap))
        return 0;
    snprintf(X.ifname, sizeof(X.ifname), "%s", name);
    if (api_load(&X.api, why, cap) != 0 || !can_xdp(why, cap))
        return 0;
    snprintf(more, sizeof(more), "%s", sel[base_cfg.UDP_XDP % 3]);
    snprintf(why, cap, "AF_XDP on %s, one rank per interface (native XDP "
             "tried first, generic else); %s", name, more);
    return 1;
}

#endif /* SHOAL_HAVE_XDP */
