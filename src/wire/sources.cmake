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
    wire/udp/udp_frame.c
    wire/udp/udp_live.c
    wire/udp/udp_path.c
    wire/udp/udp_recv.c
    wire/udp/udp_send.c
    wire/udp/udp_setup.c
    wire/udp/udp_xdp.c
    wire/udp/udp_xdp_pkt.c
    wire/wire_common.c
    wire/wire_frame.c)

# The datagram wire's kernel bypass (AF_XDP, udp_xdp.c) needs libxdp's and
# libbpf's headers (Debian: libxdp-dev, libbpf-dev) at build time; it loads
# libxdp.so.1 with dlopen only when SHOAL_UDP_XDP selects it, so libshoal
# does not depend on it.  Without them the file builds a stub and
# shoal-info says "not built".
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
    pkg_check_modules(SHOAL_LIBXDP QUIET libxdp libbpf)
endif()
if(SHOAL_LIBXDP_FOUND)
    message(STATUS "AF_XDP: libxdp ${SHOAL_LIBXDP_libxdp_VERSION} found; "
        "the datagram wire's kernel bypass is built")
    set_source_files_properties(wire/udp/udp_xdp.c PROPERTIES
        COMPILE_DEFINITIONS SHOAL_HAVE_XDP=1
        INCLUDE_DIRECTORIES "${SHOAL_LIBXDP_INCLUDE_DIRS}")
else()
    message(STATUS "AF_XDP: libxdp-dev/libbpf-dev not found; the datagram "
        "wire's kernel bypass is not built")
endif()
