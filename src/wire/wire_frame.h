/*
 * Frames of the stream wires (TCP, and the datagram wire's per-peer
 * streams): encoding and decoding only, no state, so the decoder can be
 * fuzzed on its own (tests/fuzz/fuzz_tcp_frame.c).  wire_frame.c has the
 * layout.
 */
#ifndef SHOAL_WIRE_FRAME_H
#define SHOAL_WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/wire.h"

/* Little-endian fields of the wires' headers: one load or store each on
 * a little-endian host (a byte loop is what gcc -O2 leaves it as, and the
 * headers are written and read for every message). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define WIRE_LE16(v) __builtin_bswap16(v)
#define WIRE_LE32(v) __builtin_bswap32(v)
#define WIRE_LE64(v) __builtin_bswap64(v)
#else
#define WIRE_LE16(v) (v)
#define WIRE_LE32(v) (v)
#define WIRE_LE64(v) (v)
#endif

static inline void wire_put16(uint8_t *p, uint16_t v)
{
    v = WIRE_LE16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void wire_put32(uint8_t *p, uint32_t v)
{
    v = WIRE_LE32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void wire_put64(uint8_t *p, uint64_t v)
{
    v = WIRE_LE64(v);
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t wire_get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return WIRE_LE16(v);
}

static inline uint32_t wire_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return WIRE_LE32(v);
}

static inline uint64_t wire_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return WIRE_LE64(v);
}

#define WIRE_FRAME_AM 1u     /* an active-message frame */
#define WIRE_FRAME_CREDIT 2u /* carries only the credit count */
#define WIRE_FRAME_SEG 3u    /* a segment of the sender: ep, args[0] = size */
#define WIRE_FRAME_BYE 4u    /* the sender closes on purpose: EOF follows */

#define WIRE_FRAME_HDR 24u
/* Header, arguments and a long frame's offset, at most. */
#define WIRE_FRAME_HDR_MAX (WIRE_FRAME_HDR + 8u * (WIRE_MAX_ARGS + 1u))
/* Frame kinds on the wire: the wire kind plus WIRE_F_LANDED. */
#define WIRE_FRAME_KIND_MASK (WIRE_KIND_MASK | WIRE_F_LANDED)

typedef struct wire_frame {
    uint8_t type;    /* TCP_FRAME_* */
    uint8_t kind;    /* WIRE_FRAME_KIND_MASK bits (AM frames) */
    uint8_t ep;
    uint8_t handler;
    uint8_t nargs;
    uint32_t len;     /* payload bytes (a landed frame carries none) */
    uint64_t credits; /* the sender's count of our requests it finished */
    uint64_t offset;  /* long frames */
    uint64_t args[WIRE_MAX_ARGS];
} wire_frame_t;

/* Bytes of the frame's header region (header, args, offset). */
size_t wire_frame_hdr_len(const wire_frame_t *f);
/* Payload bytes that follow the header region on the wire. */
uint32_t wire_frame_data_len(const wire_frame_t *f);
/* Write the header region into out (WIRE_FRAME_HDR_MAX bytes); returns its size. */
size_t wire_frame_encode(const wire_frame_t *f, uint8_t *out);
/*
 * Decode the header region at buf (avail bytes).  Returns its size (> 0)
 * when complete and well formed, 0 when more bytes are needed, or
 * SHOAL_ERR_PROTOCOL with *why set.  Non-long payloads longer than
 * max_inline are malformed (the receiver must hold them whole).
 */
int wire_frame_decode(const uint8_t *buf, size_t avail, uint32_t max_inline,
                     wire_frame_t *f, const char **why);

/* ---- between frames and the am layer (both stream wires) ----------------- */

/* The message an AM frame carries, as the layer above sees it. */
void wire_msg_of_frame(const wire_frame_t *f, const void *payload,
                       wire_msg_t *m);
/* The AM frame that carries m, with the sender's credit count. */
void wire_frame_of_msg(const wire_msg_t *m, uint64_t credits,
                       wire_frame_t *f);
/*
 * Hand the AM frame f from rank src to the layer above (ok) or account
 * for it as dropped (!ok); returns WIRE_DELIVERED[_NOREPLY] (a request
 * that finished without a reply lends a credit back).
 */
int wire_frame_deliver(const wire_upcalls_t *up, int src,
                       const wire_frame_t *f, const void *payload, int ok);
/* Where the long frame f from src lands, or NULL (counted and reported,
 * in the log of wire name) when it falls outside the segment. */
/* A control frame (any type but AM) from a peer: SEG records its segment
 * in segs/known, BYE sets *bye (wire_common.c). */
void wire_frame_control(const wire_frame_t *f, wire_segment_t *segs,
                        uint8_t *known, int *bye);
char *wire_frame_long_dest(const wire_upcalls_t *up, int src,
                           const wire_frame_t *f, const char *name);

#endif /* SHOAL_WIRE_FRAME_H */
