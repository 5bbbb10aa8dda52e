list(APPEND SHOAL_SOURCES
    am/am_accuse.c
    am/am_barrier.c
    am/am_ep.c
    am/am_init.c
    am/am_notice.c
    am/am_progress.c
    am/am_send.c
    am/am_ring.c
    am/am_tell.c
    am/am_wait.c
    am/am_wires.c)
