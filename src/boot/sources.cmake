list(APPEND SHOAL_SOURCES
    boot/boot.c
    boot/boot_hydra.c
    boot/boot_kvs.c
    boot/boot_locality.c
    boot/boot_pmi1.c
    boot/boot_pmi1_backend.c
    boot/boot_pmi2.c
    boot/boot_pmix.c
    boot/boot_proxy.c
    boot/boot_single.c
    boot/pmi_wire.c
    boot/pmi2_wire.c)

# boot_pmix.c needs no PMIx header: it declares the ABI it uses itself
# (boot_pmix_abi.h) and loads libpmix.so.2 at run time.  When pmix.h is
# installed (libpmix-dev; Debian keeps it in a private prefix), check at
# configure time that those declarations match it.
find_path(SHOAL_PMIX_INCLUDE_DIR pmix.h
    PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/pmix2/include
          /usr/lib/x86_64-linux-gnu/pmix2/include /usr/include/pmix
    DOC "Directory of pmix.h, only to check boot_pmix_abi.h against it")
if(SHOAL_PMIX_INCLUDE_DIR)
    # Re-checked at every configure, and editing the header reconfigures.
    unset(SHOAL_PMIX_ABI_OK CACHE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
        ${CMAKE_CURRENT_LIST_DIR}/boot_pmix_abi.h
        ${CMAKE_CURRENT_LIST_DIR}/boot_pmix_abi_check.c)
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
    try_compile(SHOAL_PMIX_ABI_OK ${CMAKE_BINARY_DIR}/pmix_abi_check
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/boot_pmix_abi_check.c
        CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${SHOAL_PMIX_INCLUDE_DIR};${CMAKE_CURRENT_LIST_DIR}/.."
        C_STANDARD 11
        OUTPUT_VARIABLE pmix_abi_out)
    unset(CMAKE_TRY_COMPILE_TARGET_TYPE)
    if(NOT SHOAL_PMIX_ABI_OK)
        message(FATAL_ERROR "src/boot/boot_pmix_abi.h does not match "
            "${SHOAL_PMIX_INCLUDE_DIR}/pmix.h:\n${pmix_abi_out}")
    endif()
    message(STATUS "PMIx ABI declarations match ${SHOAL_PMIX_INCLUDE_DIR}/pmix.h")
else()
    message(STATUS "pmix.h not found: PMIx ABI check skipped (the pmix "
                   "backend still builds; it loads libpmix.so.2 at run time)")
endif()
