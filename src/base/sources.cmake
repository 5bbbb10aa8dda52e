list(APPEND SHOAL_SOURCES
    base/clock.c
    base/config.c
    base/containers.c
    base/err.c
    base/log.c
    base/siphash.c
    base/sum64.c
    base/util.c)
