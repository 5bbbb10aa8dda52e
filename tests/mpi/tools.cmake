# The MPI tools (included by tests/mpi/CMakeLists.txt): shoalcc and its
# queries, an MPI hello world built with shoalcc and run by shoalrun, the
# mpiexec/mpirun names, CMake's FindMPI, libshoal's MPI exports, the
# bench/mpi programs, the installed names, and that ordinary MPI calls
# compile without warnings through shoalcc.  tools_test.sh runs one case
# each; cases that need the MPI layer to link skip (77) until libshoal
# exports MPI_Init.  The build tree's bin/ (tools/shoalcc/CMakeLists.txt)
# holds shoalcc, mpicc, shoalrun, mpiexec and mpirun.

set(tools_bin ${PROJECT_BINARY_DIR}/bin)
set(tools_cases queries warnings hello names findmpi exports bench install)
# The cases that start ranks run alone (see shoal_mp_test).
set(tools_serial hello names findmpi bench install)

foreach(c ${tools_cases})
    add_test(NAME mpi.tools.${c}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools_test.sh ${c}
                     --bin ${tools_bin}
                     --lib $<TARGET_FILE:shoal>
                     --src ${PROJECT_SOURCE_DIR}
                     --build ${PROJECT_BINARY_DIR}
                     --cmake ${CMAKE_COMMAND}
                     --cc ${CMAKE_C_COMPILER}
                     --sanitize "${SHOAL_SANITIZE}")
    set_tests_properties(mpi.tools.${c} PROPERTIES
        LABELS "mpi;tools" TIMEOUT 300 SKIP_RETURN_CODE 77)
    if(c IN_LIST tools_serial)
        set_tests_properties(mpi.tools.${c} PROPERTIES RUN_SERIAL TRUE)
    endif()
endforeach()

# The MPI program the launcher tests run under mpiexec.mpich,
# mpirun.openmpi and srun (tests/mp/boot/CMakeLists.txt), and here under
# shoalrun.
shoal_mpi_test(launch_check SOURCES launch_check.c NP 4 ARGS 4)
