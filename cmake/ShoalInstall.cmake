# What `make install` (cmake --install) puts under the prefix:
#   lib/libshoal.so*                 the library (soname links included)
#   include/**.h                     every public header, generated ones too
#   lib/pkgconfig/shoal.pc           for pkg-config users
#   lib/cmake/Shoal/                 for find_package(Shoal): Shoal::shoal
#   bin/                             the tools that exist (shoalrun, ...), and
#                                    shoalcc with the names mpicc, mpiexec and
#                                    mpirun (symlinks to shoalcc and shoalrun)
#   share/doc/shoal/                 docs/*.md and examples/*.c
# Everything is relocatable: `cmake --install build --prefix P` works for any
# P, whatever CMAKE_INSTALL_PREFIX was at configure time.

include(CMakePackageConfigHelpers)

set(SHOAL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Shoal)

# ---- library and headers ------------------------------------------------------

install(TARGETS shoal EXPORT ShoalTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ ${PROJECT_BINARY_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# Lets a project that adds Shoal with add_subdirectory() use the same name
# as one that finds the installed package.
if(NOT TARGET Shoal::shoal)
    add_library(Shoal::shoal ALIAS shoal)
endif()

# ---- tools --------------------------------------------------------------------

# Installed tools find libshoal relative to themselves.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(SHOAL_TOOL_RPATH "${CMAKE_INSTALL_LIBDIR}")
else()
    file(RELATIVE_PATH bin_to_lib /prefix/${CMAKE_INSTALL_BINDIR}
         /prefix/${CMAKE_INSTALL_LIBDIR})
    set(SHOAL_TOOL_RPATH "$ORIGIN/${bin_to_lib}")
endif()
# Only tools that link libshoal.so get a run path: CMake pads a build-tree
# run path with empty entries up to the install one's length, and an empty
# entry makes the loader search the current directory (shoalrun, started
# from anywhere, links the static library and must not do that).
foreach(tool shoalrun shoal-info shoal-bench)
    if(TARGET ${tool})
        get_target_property(tool_libs ${tool} LINK_LIBRARIES)
        if("shoal" IN_LIST tool_libs)
            set_target_properties(${tool} PROPERTIES INSTALL_RPATH "${SHOAL_TOOL_RPATH}")
        endif()
        install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
endforeach()

# shoalcc (a script made by tools/shoalcc/CMakeLists.txt) and the MPI names.
option(SHOAL_INSTALL_MPI_NAMES
       "Install mpicc, mpiexec and mpirun (links to shoalcc and shoalrun)" ON)
get_property(shoal_mpi_tools_stage GLOBAL PROPERTY SHOAL_MPI_TOOLS_STAGE)
if(shoal_mpi_tools_stage)
    install(PROGRAMS ${shoal_mpi_tools_stage}/shoalcc
            DESTINATION ${CMAKE_INSTALL_BINDIR})
    # Relative symlinks, installed as links: mpicc -> shoalcc,
    # mpiexec and mpirun -> shoalrun.  Off for a prefix shared with another
    # MPI whose names these would hide.
    if(SHOAL_INSTALL_MPI_NAMES)
        install(FILES ${shoal_mpi_tools_stage}/mpicc
                      ${shoal_mpi_tools_stage}/mpiexec
                      ${shoal_mpi_tools_stage}/mpirun
                DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
endif()

# ---- docs ---------------------------------------------------------------------

install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        FILES_MATCHING PATTERN "*.c")

# ---- pkg-config ---------------------------------------------------------------

# The prefix is known only at install time (cmake --install --prefix), so the
# file is made in two steps: now, everything but the prefix (the placeholder
# @SHOAL_PC_PREFIX@ survives because it is its own value); at install time,
# the prefix.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(SHOAL_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(SHOAL_PC_LIBDIR "\${exec_prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(SHOAL_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(SHOAL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(SHOAL_PC_PREFIX "@SHOAL_PC_PREFIX@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/shoal.pc.in
               ${PROJECT_BINARY_DIR}/pkgconfig/shoal.pc.in @ONLY)
install(CODE "
    set(SHOAL_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${PROJECT_BINARY_DIR}/pkgconfig/shoal.pc.in\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/shoal.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/shoal.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- CMake package --------------------------------------------------------------

install(EXPORT ShoalTargets NAMESPACE Shoal::
        DESTINATION ${SHOAL_CMAKE_DIR} FILE ShoalTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ShoalConfig.cmake.in
    ${PROJECT_BINARY_DIR}/cmake/ShoalConfig.cmake
    INSTALL_DESTINATION ${SHOAL_CMAKE_DIR})
# The soname changes with the major version, so any 0.x satisfies 0.y, y <= x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/ShoalConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/ShoalConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/ShoalConfigVersion.cmake
        DESTINATION ${SHOAL_CMAKE_DIR})
