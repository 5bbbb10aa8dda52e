list(APPEND SHOAL_SOURCES
    boot/boot.c
    boot/boot_kvs.c
    boot/boot_locality.c
    boot/boot_pmi1.c
    boot/boot_pmi1_backend.c
    boot/boot_pmi2.c
    boot/boot_pmix.c
    boot/boot_single.c
    boot/pmi_wire.c
    boot/pmi2_wire.c)
