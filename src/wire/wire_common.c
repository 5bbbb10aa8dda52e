/*
 * State every network wire shares with the layer above.  Here, not in one
 * wire's files, so that it links whichever wires a program brings up.
 */
#include "base/base.h"
#include "wire/wire.h"
#include "wire/wire_frame.h"

volatile int wire_net_kick;

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
