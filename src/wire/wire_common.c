/*
 * State every network wire shares with the layer above.  Here, not in one
 * wire's files, so that it links whichever wires a program brings up.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "base/base.h"
#include "wire/wire.h"
#include "wire/wire_frame.h"

volatile int wire_net_kick;

int wire_fake_host(int rank, int size)
{
    int64_t k = base_cfg.WIRES_FAKE_HOSTS;

    if (k <= 1)
        return 0;
    if (base_cfg.WIRES_FAKE_PLACE == 1) /* cyclic */
        return (int)(rank % k);
    return (int)((int64_t)rank * k / size);
}

int wire_secret_share(const boot_info_t *job, const char *key,
                      uint8_t *secret, size_t len)
{
    size_t got = 0;
    int status;

    if (job->rank == 0) {
        if (getrandom(secret, len, 0) != (ssize_t)len)
            return base_err(SHOAL_ERR_SYSTEM, "getrandom: %s",
                            strerror(errno));
        status = boot_put(key, secret, len);
        if (status != SHOAL_OK)
            return status;
    }
    status = boot_fence();
    if (status == SHOAL_OK && job->rank != 0)
        status = boot_get(0, key, secret, len, &got);
    if (status == SHOAL_OK && job->rank != 0 && got != len)
        status = base_err(SHOAL_ERR_BOOT, "rank 0's %s has %zu bytes, not "
                          "%zu", key, got, len);
    return status;
}

void wire_side_key(const uint8_t *secret, size_t len, const char *label,
                   uint8_t key[16])
{
    uint8_t in[64] = {0};
    size_t n = strlen(label);
    uint64_t h;

    if (n > sizeof(in) - 2)
        n = sizeof(in) - 2;
    memcpy(in, label, n);
    /* Keyed by the secret's first 16 bytes, its rest mixed in. */
    for (size_t i = 16; i < len && i - 16 < sizeof(in) - n - 1; i++)
        in[n + 1 + (i - 16)] = secret[i];
    for (int half = 0; half < 2; half++) {
        in[n] = (uint8_t)(half + 1);
        h = base_siphash(secret, in, sizeof(in));
        memcpy(key + 8 * half, &h, 8);
    }
}

/* Here, not in wire_frame.c, because it counts and logs: the codec stays
 * free of state so the fuzz targets link it alone. */
char *wire_frame_long_dest(const wire_upcalls_t *up, int src,
                           const wire_frame_t *f, const char *name)
{
    void *base = NULL;
    size_t size = 0;

    up->segment(up->arg, f->ep, &base, &size);
    if (base != NULL && f->offset <= size && f->len <= size - f->offset)
        return (char *)base + f->offset;
    wire_stats.dropped++;
    base_error(name, "dropped a long frame from rank %d (ep %u, %u bytes at "
               "offset %llu): outside the segment",
               src, f->ep, f->len, (unsigned long long)f->offset);
    return NULL;
}

int wire_segment_of(const wire_segment_t *segs, const uint8_t *known,
                    unsigned ep, int rank, int dead, wire_segment_t *seg)
{
    if (ep >= WIRE_MAX_EPS)
        return base_err(SHOAL_ERR_INVALID, "endpoint index %u", ep);
    /* The peer tells its segments first thing on a new connection. */
    if (!known[ep])
        return dead ? base_err(SHOAL_ERR_PEER_DEAD, "rank %d died", rank)
                    : SHOAL_ERR_AGAIN;
    seg->base = 0;
    seg->size = segs[ep].size;
    return SHOAL_OK;
}

int wire_segment_set(wire_segment_t *mine, unsigned ep, const void *base,
                     size_t size)
{
    if (ep >= WIRE_MAX_EPS)
        return base_err(SHOAL_ERR_INVALID, "endpoint index %u", ep);
    mine[ep].base = (uint64_t)(uintptr_t)base;
    mine[ep].size = base != NULL ? size : 0;
    return SHOAL_OK;
}

void wire_ring_put(uint8_t *ring, uint32_t cap, uint64_t *tail,
                   const void *data, size_t len)
{
    const uint8_t *d = data;

    while (len > 0) {
        uint32_t at = (uint32_t)(*tail & (cap - 1));
        size_t n = cap - at;
        if (n > len)
            n = len;
        memcpy(ring + at, d, n);
        *tail += n;
        d += n;
        len -= n;
    }
}

void wire_frame_control(const wire_frame_t *f, wire_segment_t *segs,
                        uint8_t *known, int *bye)
{
    if (f->type == WIRE_FRAME_SEG) {
        segs[f->ep].size = f->args[0];
        known[f->ep] = 1;
    } else if (f->type == WIRE_FRAME_BYE) {
        *bye = 1;
    }
}
