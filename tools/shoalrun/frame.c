/*
 * Frames between shoalrun and its daemons: an 8-byte header (payload
 * length, little-endian 32 bits; type; 3 bytes zero) and the payload.
 * Sockets are nonblocking; what cannot be written at once waits in the
 * connection's buffer and goes out when poll says so.  A peer that lets
 * more than OUT_HIGH bytes pile up makes the sender wait, as a terminal
 * that stops reading stalls a local job.  Payloads are built and read with
 * bounds-checked helpers: a short or malformed payload reads as "bad",
 * never past its end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shoalrun.h"

#define OUT_HIGH (16u << 20)

void shoalrun_conn_init(shoalrun_conn_t *c, int fd, uint32_t max_frame)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->max_frame = max_frame;
    c->last_rx = c->last_tx = base_time_ns();
}

void shoalrun_conn_fini(shoalrun_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->in);
    free(c->out);
    c->in = c->out = NULL;
    c->in_len = c->in_off = c->out_len = c->in_cap = c->out_cap = 0;
}

int shoalrun_conn_flush(shoalrun_conn_t *c)
{
    size_t done = 0;

    while (!c->broken && done < c->out_len) {
        ssize_t w = send(c->fd, c->out + done, c->out_len - done, MSG_NOSIGNAL);
        if (w > 0)
            done += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        else
            c->broken = 1;
    }
    if (c->broken) {
        c->out_len = 0;
        return -1;
    }
    memmove(c->out, c->out + done, c->out_len - done);
    c->out_len -= done;
    if (done > 0)
        c->last_tx = base_time_ns();
    return 0;
}

static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *b = realloc(*buf, n);
    if (b == NULL)
        return -1;
    *buf = b;
    *cap = n;
    return 0;
}

static void frame_header(unsigned char hdr[8], int type, size_t len)
{
    memset(hdr, 0, 8);
    for (int i = 0; i < 4; i++)
        hdr[i] = (unsigned char)(len >> (8 * i));
    hdr[4] = (unsigned char)type;
}

int shoalrun_conn_send_raw(shoalrun_conn_t *c, const void *p, size_t len)
{
    if (c->fd < 0 || c->broken)
        return -1;
    if (reserve(&c->out, &c->out_cap, c->out_len + len) != 0) {
        c->broken = 1;
        return -1;
    }
    if (len > 0)
        memcpy(c->out + c->out_len, p, len);
    c->out_len += len;
    int rc = shoalrun_conn_flush(c);
    /* A peer far behind: wait for it rather than hold unbounded memory. */
    while (rc == 0 && c->out_len > OUT_HIGH) {
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
            c->broken = 1;
        rc = shoalrun_conn_flush(c);
    }
    return rc;
}

int shoalrun_conn_send(shoalrun_conn_t *c, int type, const void *p, size_t len)
{
    unsigned char hdr[8];

    if (c->fd < 0 || c->broken)
        return -1;
    if (len > UINT32_MAX ||
        reserve(&c->out, &c->out_cap, c->out_len + sizeof(hdr) + len) != 0) {
        c->broken = 1;
        return -1;
    }
    frame_header(hdr, type, len);
    memcpy(c->out + c->out_len, hdr, sizeof(hdr));
    c->out_len += sizeof(hdr);
    return shoalrun_conn_send_raw(c, p, len);
}

void shoalrun_msg_frame(shoalrun_msg_t *m, int type, const void *p, size_t len)
{
    unsigned char hdr[8];

    frame_header(hdr, type, len);
    shoalrun_msg_raw(m, hdr, sizeof(hdr));
    shoalrun_msg_raw(m, p, len);
}

int shoalrun_conn_read(shoalrun_conn_t *c)
{
    if (c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    for (int rounds = 0; rounds < 16; rounds++) {
        if (reserve(&c->in, &c->in_cap, c->in_len + 65536) != 0)
            return 0;
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            c->last_rx = base_time_ns();
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        return 0;
    }
    return 1;
}

int shoalrun_conn_next(shoalrun_conn_t *c, int *type, const char **p,
                       uint32_t *len)
{
    size_t have = c->in_len - c->in_off;
    const unsigned char *h = (const unsigned char *)c->in + c->in_off;

    if (have < 8)
        return 0;
    uint32_t n = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                 (uint32_t)h[3] << 24;
    if (n > c->max_frame || h[4] == 0 || h[5] || h[6] || h[7])
        return -1;
    if (have < 8 + (size_t)n)
        return 0;
    *type = h[4];
    *p = c->in + c->in_off + 8;
    *len = n;
    c->in_off += 8 + (size_t)n;
    return 1;
}

/* ---- payloads ------------------------------------------------------------ */

static void msg_put(shoalrun_msg_t *m, const void *p, size_t n)
{
    if (m->nomem || reserve(&m->buf, &m->cap, m->len + n) != 0) {
        m->nomem = 1;
        return;
    }
    if (n > 0)
        memcpy(m->buf + m->len, p, n);
    m->len += n;
}

void shoalrun_msg_u32(shoalrun_msg_t *m, uint32_t v)
{
    unsigned char b[4];

    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    msg_put(m, b, 4);
}

void shoalrun_msg_u64(shoalrun_msg_t *m, uint64_t v)
{
    shoalrun_msg_u32(m, (uint32_t)v);
    shoalrun_msg_u32(m, (uint32_t)(v >> 32));
}

void shoalrun_msg_bytes(shoalrun_msg_t *m, const void *p, size_t n)
{
    shoalrun_msg_u32(m, (uint32_t)n);
    msg_put(m, p, n);
}

void shoalrun_msg_str(shoalrun_msg_t *m, const char *s)
{
    size_t n = strlen(s);

    shoalrun_msg_u32(m, (uint32_t)n);
    msg_put(m, s, n + 1);
}

void shoalrun_msg_raw(shoalrun_msg_t *m, const void *p, size_t n)
{
    msg_put(m, p, n);
}

void shoalrun_msg_fini(shoalrun_msg_t *m)
{
    free(m->buf);
    memset(m, 0, sizeof(*m));
}

uint32_t shoalrun_rd_u32(shoalrun_rd_t *r)
{
    if (r->bad || r->left < 4) {
        r->bad = 1;
        return 0;
    }
    const unsigned char *b = (const unsigned char *)r->p;
    uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                 (uint32_t)b[3] << 24;
    r->p += 4;
    r->left -= 4;
    return v;
}

uint64_t shoalrun_rd_u64(shoalrun_rd_t *r)
{
    uint64_t lo = shoalrun_rd_u32(r);

    return lo | (uint64_t)shoalrun_rd_u32(r) << 32;
}

const char *shoalrun_rd_bytes(shoalrun_rd_t *r, size_t *n_p)
{
    size_t n = shoalrun_rd_u32(r);

    if (r->bad || r->left < n) {
        r->bad = 1;
        *n_p = 0;
        return "";
    }
    const char *p = r->p;
    r->p += n;
    r->left -= n;
    *n_p = n;
    return p;
}

const char *shoalrun_rd_str(shoalrun_rd_t *r)
{
    size_t n = shoalrun_rd_u32(r);

    if (r->bad || n >= r->left || r->p[n] != '\0' ||
        memchr(r->p, '\0', n) != NULL) {
        r->bad = 1;
        return "";
    }
    const char *p = r->p;
    r->p += n + 1;
    r->left -= n + 1;
    return p;
}

int shoalrun_rd_expendable(const char *p, size_t len, int nranks)
{
    shoalrun_rd_t r = {p, len, 0};
    uint32_t rank = shoalrun_rd_u32(&r);

    /* A flag that lets the job lose ranks: anything but the exact form is
     * refused, so that no stray byte makes a rank expendable. */
    if (r.bad || r.left != 0 || nranks <= 0 || rank >= (uint32_t)nranks)
        return -1;
    return (int)rank;
}
