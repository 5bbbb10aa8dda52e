/*
 * TCP frames and handshake messages: encoding and decoding only, no state,
 * so the decoder can be fuzzed on its own (tests/fuzz/fuzz_tcp_frame.c).
 *
 * Frame header (24 bytes, little-endian):
 *   0  type      TCP_FRAME_*
 *   1  kind      WIRE_CAT_* | WIRE_F_* (AM frames), else 0
 *   2  ep        endpoint index (< WIRE_MAX_EPS)
 *   3  handler
 *   4  nargs     <= WIRE_MAX_ARGS
 *   5  3 bytes   zero
 *   8  len       payload bytes (u32)
 *   12 4 bytes   zero
 *   16 credits   the sender's count of our requests it finished (u64)
 * then nargs u64 arguments, then (long frames) the u64 offset, then len
 * payload bytes (none for a landed long frame).
 */
#include <string.h>

#include "tcp.h"

#define HS_MAGIC 0x31504354414f4853ull /* "SHOATCP1" */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int is_long(const tcp_frame_t *f)
{
    return f->type == TCP_FRAME_AM &&
           (f->kind & WIRE_CAT_MASK) == WIRE_CAT_LONG;
}

size_t tcp_frame_hdr_len(const tcp_frame_t *f)
{
    return TCP_HDR_SIZE + 8u * f->nargs + (is_long(f) ? 8u : 0u);
}

uint32_t tcp_frame_data_len(const tcp_frame_t *f)
{
    return (f->kind & WIRE_F_LANDED) ? 0 : f->len;
}

size_t tcp_frame_encode(const tcp_frame_t *f, uint8_t *out)
{
    uint8_t *p = out + TCP_HDR_SIZE;

    memset(out, 0, TCP_HDR_SIZE);
    out[0] = f->type;
    out[1] = f->kind;
    out[2] = f->ep;
    out[3] = f->handler;
    out[4] = f->nargs;
    put32(out + 8, f->len);
    put64(out + 16, f->credits);
    for (unsigned i = 0; i < f->nargs; i++, p += 8)
        put64(p, f->args[i]);
    if (is_long(f)) {
        put64(p, f->offset);
        p += 8;
    }
    return (size_t)(p - out);
}

/* Checks of a decoded header that need no further bytes. */
static const char *frame_check(const tcp_frame_t *f, const uint8_t *buf,
                               uint32_t max_inline)
{
    unsigned cat = f->kind & WIRE_CAT_MASK;

    if (buf[5] | buf[6] | buf[7] | buf[12] | buf[13] | buf[14] | buf[15])
        return "reserved header bytes are not zero";
    if (f->nargs > WIRE_MAX_ARGS)
        return "too many arguments";
    if (f->ep >= WIRE_MAX_EPS)
        return "endpoint index out of range";
    switch (f->type) {
    case TCP_FRAME_AM:
        if (f->kind & ~TCP_KIND_MASK)
            return "unknown kind bits";
        if (cat > WIRE_CAT_LONG)
            return "unknown frame category";
        if ((f->kind & (WIRE_F_FRAGMENT | WIRE_F_LANDED)) &&
            cat != WIRE_CAT_LONG)
            return "fragment or landed flag on a frame that is not long";
        if (cat == WIRE_CAT_SHORT && f->len != 0)
            return "short frame with a payload";
        if (cat == WIRE_CAT_MEDIUM && f->len > max_inline)
            return "medium payload too long";
        return NULL;
    case TCP_FRAME_SEG:
        if (f->nargs != 1 || f->len != 0 || f->kind != 0 || f->handler != 0)
            return "malformed segment frame";
        return NULL;
    case TCP_FRAME_CREDIT:
    case TCP_FRAME_BYE:
        if (f->nargs != 0 || f->len != 0 || f->kind != 0 || f->ep != 0 ||
            f->handler != 0)
            return "malformed control frame";
        return NULL;
    default:
        return "unknown frame type";
    }
}

int tcp_frame_decode(const uint8_t *buf, size_t avail, uint32_t max_inline,
                     tcp_frame_t *f, const char **why)
{
    size_t need;
    const uint8_t *p;

    if (avail < TCP_HDR_SIZE)
        return 0;
    memset(f, 0, sizeof(*f));
    f->type = buf[0];
    f->kind = buf[1];
    f->ep = buf[2];
    f->handler = buf[3];
    f->nargs = buf[4];
    f->len = get32(buf + 8);
    f->credits = get64(buf + 16);
    *why = frame_check(f, buf, max_inline);
    if (*why != NULL)
        return SHOAL_ERR_PROTOCOL;
    need = tcp_frame_hdr_len(f);
    if (avail < need)
        return 0;
    p = buf + TCP_HDR_SIZE;
    for (unsigned i = 0; i < f->nargs; i++, p += 8)
        f->args[i] = get64(p);
    if (is_long(f))
        f->offset = get64(p);
    return (int)need;
}

/*
 * Handshake message (64 bytes, little-endian): magic u64, type u8, 3 zero
 * bytes, from u32, to u32, verdict u32, 4 zero bytes, nonce[16], mac[16],
 * 4 zero bytes.
 */
void tcp_hs_encode(const tcp_hs_t *h, uint8_t out[TCP_HS_SIZE])
{
    memset(out, 0, TCP_HS_SIZE);
    put64(out, HS_MAGIC);
    out[8] = h->type;
    put32(out + 12, h->from);
    put32(out + 16, h->to);
    put32(out + 20, h->verdict);
    memcpy(out + 28, h->nonce, TCP_NONCE);
    memcpy(out + 44, h->mac, TCP_MAC);
}

int tcp_hs_decode(const uint8_t *buf, size_t avail, tcp_hs_t *h,
                  const char **why)
{
    uint8_t zero = 0;

    /* A stranger is recognised on its first bytes, not after 64. */
    for (size_t i = 0; i < avail && i < 8; i++)
        if (buf[i] != (uint8_t)(HS_MAGIC >> (8 * i))) {
            *why = "not a Shoal handshake (bad magic)";
            return SHOAL_ERR_PROTOCOL;
        }
    if (avail < TCP_HS_SIZE)
        return 0;
    for (size_t i = 9; i < 12; i++)
        zero |= buf[i];
    for (size_t i = 24; i < 28; i++)
        zero |= buf[i];
    for (size_t i = 60; i < 64; i++)
        zero |= buf[i];
    if (zero != 0) {
        *why = "reserved handshake bytes are not zero";
        return SHOAL_ERR_PROTOCOL;
    }
    h->type = buf[8];
    h->from = get32(buf + 12);
    h->to = get32(buf + 16);
    h->verdict = get32(buf + 20);
    memcpy(h->nonce, buf + 28, TCP_NONCE);
    memcpy(h->mac, buf + 44, TCP_MAC);
    if (h->type < TCP_HS_HELLO || h->type > TCP_HS_VERDICT) {
        *why = "unknown handshake message";
        return SHOAL_ERR_PROTOCOL;
    }
    return TCP_HS_SIZE;
}
