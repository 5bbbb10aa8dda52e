# Test helpers.
#
# shoal_unit_test(<name> SOURCES <files...> [LABELS <labels...>])
#   A single-process test linked with the internal static library (so it can
#   call layer-internal functions).  Registered as unit.<name>.
#
# shoal_mp_program(<target> SOURCES <files...> [INTERNAL])
#   A program run by several ranks; linked with libshoal (or with the internal
#   library when INTERNAL is given).
#
# shoal_mp_test(<name> PROGRAM <target> NP <n> [ARGS <args...>] [ENV <k=v...>]
#               [TIMEOUT <s>] [LABELS <labels...>])
#   Runs `shoalrun -n <n> --timeout <s> <program> <args>` as mp.<name>.np<n>,
#   never alongside another test (RUN_SERIAL).
#
# Every test exits 0 on success, 77 to skip (with a message saying why).

function(shoal_unit_test name)
    cmake_parse_arguments(T "" "" "SOURCES;LABELS" ${ARGN})
    add_executable(test_${name} ${T_SOURCES})
    target_link_libraries(test_${name} PRIVATE shoal_internal shoal_test_harness)
    add_test(NAME unit.${name} COMMAND test_${name})
    set_tests_properties(unit.${name} PROPERTIES
        LABELS "unit;${T_LABELS}" TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

function(shoal_mp_program target)
    cmake_parse_arguments(T "INTERNAL" "" "SOURCES" ${ARGN})
    add_executable(${target} ${T_SOURCES})
    if(T_INTERNAL)
        target_link_libraries(${target} PRIVATE shoal_internal shoal_test_harness)
    else()
        target_link_libraries(${target} PRIVATE shoal shoal_test_harness)
    endif()
endfunction()

function(shoal_mp_test name)
    cmake_parse_arguments(T "" "PROGRAM;NP;TIMEOUT" "ARGS;ENV;LABELS" ${ARGN})
    if(NOT T_TIMEOUT)
        set(T_TIMEOUT 120)
    endif()
    set(test_name mp.${name}.np${T_NP})
    add_test(NAME ${test_name}
             COMMAND $<TARGET_FILE:shoalrun> -n ${T_NP} --timeout ${T_TIMEOUT}
                     $<TARGET_FILE:${T_PROGRAM}> ${T_ARGS})
    math(EXPR ctest_timeout "${T_TIMEOUT} + 30")
    # RUN_SERIAL: ranks of two jobs sharing 2 cores starve each other into
    # timeouts, so even `ctest -j` runs multi-process tests one at a time.
    set_tests_properties(${test_name} PROPERTIES
        LABELS "mp;${T_LABELS}" TIMEOUT ${ctest_timeout} SKIP_RETURN_CODE 77
        RUN_SERIAL TRUE)
    if(T_ENV)
        set_tests_properties(${test_name} PROPERTIES ENVIRONMENT "${T_ENV}")
    endif()
endfunction()
