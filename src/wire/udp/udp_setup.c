/*
 * PLACEHOLDER while the datagram wire is written on its own branch: the
 * ops table exists so the am layer's wire table can name it; init says the
 * wire is not available.  Replaced by the real wire (same file name).
 */
#include <stdio.h>

#include "wire/wire.h"

static int udp_init(const boot_info_t *job, const wire_upcalls_t *up)
{
    (void)job;
    (void)up;
    return base_err(SHOAL_ERR_UNSUPPORTED, "the datagram wire is not built");
}

static int udp_probe(char *why, size_t cap)
{
    snprintf(why, cap, "not built");
    return 0;
}

const wire_ops_t wire_udp_ops = {
    .name = "udp",
    .init = udp_init,
    .probe = udp_probe,
};
