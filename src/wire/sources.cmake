list(APPEND SHOAL_SOURCES
    wire/shm/shm_cma.c
    wire/shm/shm_doorbell.c
    wire/shm/shm_mem.c
    wire/shm/shm_seg.c
    wire/shm/shm_setup.c
    wire/shm/shm_xfer.c
    wire/tcp/tcp_auth.c
    wire/tcp/tcp_conn.c
    wire/tcp/tcp_frame.c
    wire/tcp/tcp_live.c
    wire/tcp/tcp_setup.c
    wire/tcp/tcp_xfer.c
    wire/udp/udp_setup.c
    wire/wire_common.c)
