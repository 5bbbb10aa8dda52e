/*
 * Frames of the stream wires (TCP and the datagram wire's streams):
 * encoding and decoding only, no state, so the decoder can be fuzzed on
 * its own (tests/fuzz/fuzz_tcp_frame.c).
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

#include "wire/wire_frame.h"

static int is_long(const wire_frame_t *f)
{
    return f->type == WIRE_FRAME_AM &&
           (f->kind & WIRE_CAT_MASK) == WIRE_CAT_LONG;
}

size_t wire_frame_hdr_len(const wire_frame_t *f)
{
    return WIRE_FRAME_HDR + 8u * f->nargs + (is_long(f) ? 8u : 0u);
}

uint32_t wire_frame_data_len(const wire_frame_t *f)
{
    return (f->kind & WIRE_F_LANDED) ? 0 : f->len;
}

size_t wire_frame_encode(const wire_frame_t *f, uint8_t *out)
{
    uint8_t *p = out + WIRE_FRAME_HDR;

    memset(out, 0, WIRE_FRAME_HDR);
    out[0] = f->type;
    out[1] = f->kind;
    out[2] = f->ep;
    out[3] = f->handler;
    out[4] = f->nargs;
    wire_put32(out + 8, f->len);
    wire_put64(out + 16, f->credits);
    for (unsigned i = 0; i < f->nargs; i++, p += 8)
        wire_put64(p, f->args[i]);
    if (is_long(f)) {
        wire_put64(p, f->offset);
        p += 8;
    }
    return (size_t)(p - out);
}

/* Checks of a decoded header that need no further bytes. */
static const char *frame_check(const wire_frame_t *f, const uint8_t *buf,
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
    case WIRE_FRAME_AM:
        if (f->kind & ~WIRE_FRAME_KIND_MASK)
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
    case WIRE_FRAME_SEG:
        if (f->nargs != 1 || f->len != 0 || f->kind != 0 || f->handler != 0)
            return "malformed segment frame";
        return NULL;
    case WIRE_FRAME_CREDIT:
    case WIRE_FRAME_BYE:
        if (f->nargs != 0 || f->len != 0 || f->kind != 0 || f->ep != 0 ||
            f->handler != 0)
            return "malformed control frame";
        return NULL;
    default:
        return "unknown frame type";
    }
}

int wire_frame_decode(const uint8_t *buf, size_t avail, uint32_t max_inline,
                     wire_frame_t *f, const char **why)
{
    size_t need;
    const uint8_t *p;

    if (avail < WIRE_FRAME_HDR)
        return 0;
    memset(f, 0, sizeof(*f));
    f->type = buf[0];
    f->kind = buf[1];
    f->ep = buf[2];
    f->handler = buf[3];
    f->nargs = buf[4];
    f->len = wire_get32(buf + 8);
    f->credits = wire_get64(buf + 16);
    *why = frame_check(f, buf, max_inline);
    if (*why != NULL)
        return SHOAL_ERR_PROTOCOL;
    need = wire_frame_hdr_len(f);
    if (avail < need)
        return 0;
    p = buf + WIRE_FRAME_HDR;
    for (unsigned i = 0; i < f->nargs; i++, p += 8)
        f->args[i] = wire_get64(p);
    if (is_long(f))
        f->offset = wire_get64(p);
    return (int)need;
}


void wire_frame_of_msg(const wire_msg_t *m, uint64_t credits,
                       wire_frame_t *f)
{
    f->type = WIRE_FRAME_AM;
    f->kind = m->kind & WIRE_FRAME_KIND_MASK;
    f->ep = m->ep;
    f->handler = m->handler;
    f->nargs = m->nargs;
    f->len = m->len;
    f->credits = credits;
    f->offset = m->offset;
    for (unsigned i = 0; i < m->nargs; i++)
        f->args[i] = m->args[i];
}

void wire_msg_of_frame(const wire_frame_t *f, const void *payload,
                       wire_msg_t *m)
{
    *m = (wire_msg_t){
        .kind = f->kind & WIRE_KIND_MASK,
        .ep = f->ep,
        .handler = f->handler,
        .nargs = f->nargs,
        .len = f->len,
        .offset = f->offset,
        .args = f->args,
        .payload = payload,
    };
}

int wire_frame_deliver(const wire_upcalls_t *up, int src,
                       const wire_frame_t *f, const void *payload, int ok)
{
    wire_msg_t m;

    wire_msg_of_frame(f, payload, &m);
    if (ok)
        return up->deliver(up->arg, src, &m);
    return (f->kind & (WIRE_F_REPLY | WIRE_F_FRAGMENT))
               ? WIRE_DELIVERED
               : WIRE_DELIVERED_NOREPLY;
}
