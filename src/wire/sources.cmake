list(APPEND SHOAL_SOURCES
    wire/shm/shm_cma.c
    wire/shm/shm_doorbell.c
    wire/shm/shm_mem.c
    wire/shm/shm_seg.c
    wire/shm/shm_setup.c
    wire/shm/shm_xfer.c)
