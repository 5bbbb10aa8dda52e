# Groups, communicators, intercommunicators, attributes, info, error
# handlers, topologies and handle conversion.
shoal_mpi_test(group_ops SOURCES group_ops.c NP 1 2 4 8)
shoal_mpi_test(comm_basic SOURCES comm_basic.c NP 1 2 3 4 8)
shoal_mpi_test(comm_inter SOURCES comm_inter.c NP 1 2 3 4 8)
shoal_mpi_test(attr_callbacks SOURCES attr_callbacks.c NP 1 2)
shoal_mpi_test(info_ops SOURCES info_ops.c NP 1 2)
shoal_mpi_test(errh_ops SOURCES errh_ops.c NP 1 2)
shoal_mpi_test(topo_cart SOURCES topo_cart.c NP 1 2 3 4 5 8)
shoal_mpi_test(topo_graph SOURCES topo_graph.c NP 1 2 3 4 8)

# MPI_Comm_idup runs its agreement from the progress engine.
shoal_mpi_test(comm_idup SOURCES comm_idup.c NP 1 2 3 4 8)
# ...also of intercommunicators (one over a create_group communicator),
# several outstanding on several parents, started in different orders.
shoal_mpi_test(comm_idup_inter SOURCES comm_idup_inter.c NP 2 3 4 9)
# ...started before a blocking MPI_Comm_create_group on some ranks and
# after it on the others.
shoal_mpi_test(comm_idup_order SOURCES comm_idup_order.c NP 2 4 5
               ENV SHOAL_WAIT_CHECK=fatal TIMEOUT 120)
# Dups in two threads, in different orders on different ranks, one of
# them of MPI_COMM_SELF (a hang before: TIMEOUT).
shoal_mpi_test(comm_dup_threads SOURCES comm_dup_threads.c NP 2 4 TIMEOUT 60)
target_link_libraries(mpi_comm_dup_threads PRIVATE Threads::Threads)
# Attributes whose keyval was freed while attached: delete, copy, free.
shoal_mpi_test(attr_freed SOURCES attr_freed.c NP 1)
# MPI_INFO_NULL given to Comm_dup_with_info and Comm_idup_with_info.
shoal_mpi_test(comm_info_null SOURCES comm_info_null.c NP 1 2 4)
# MPI_LASTUSEDCODE against MPI_ERR_LASTCODE and user-added codes.
shoal_mpi_test(errh_lastused SOURCES errh_lastused.c NP 1)

# Errors outside MPI_Init..MPI_Finalize end the process with a message
# (the initial error handler): a failed MPI_Init whose return value the
# program ignores (a bad SHOAL_* value, the program run alone), a call
# before MPI_Init, one after MPI_Finalize.  A second MPI_Init goes to
# MPI_COMM_WORLD's handler instead.
shoal_mpi_test(init_fatal SOURCES init_fatal.c NP 1 ARGS twice)
# The initial error handler the launcher names (--initial-errhandler, also
# in MPI 4.0's single-dash form and upper case), and the default.
shoal_mp_program(mpi_init_errh SOURCES init_errh.c)
target_include_directories(mpi_init_errh PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(h return abort fatal)
    if(h STREQUAL "return")
        set(opt --initial-errhandler mpi_errors_return)
        set(name mpi_errors_return)
    elseif(h STREQUAL "abort")
        set(opt -initial-errhandler MPI_ERRORS_ABORT)
        set(name mpi_errors_abort)
    else()
        set(opt)
        set(name mpi_errors_are_fatal)
    endif()
    add_test(NAME mp.mpi.init_errh.${h}.np2
             COMMAND $<TARGET_FILE:shoalrun> ${opt} -n 2 --timeout 60
                     $<TARGET_FILE:mpi_init_errh> ${name})
    set_tests_properties(mp.mpi.init_errh.${h}.np2 PROPERTIES
        LABELS "mp;mpi" TIMEOUT 90
        PASS_REGULAR_EXPRESSION "OK init_errh ${name}"
        FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()
add_test(NAME mp.mpi.init_fatal.init
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_AM_WINDOW=0 EXPECT_FAIL_NOT=went
                 ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh - 1
                 "MPI_Init: SHOAL_AM_WINDOW=0 is out of range.*MPI_ERRORS_ARE_FATAL"
                 $<TARGET_FILE:mpi_init_fatal> init)
add_test(NAME mp.mpi.init_fatal.before
         COMMAND ${CMAKE_COMMAND} -E env EXPECT_FAIL_NOT=went
                 ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 2
                 "MPI_Comm_rank: called before MPI_Init.*MPI_ERRORS_ARE_FATAL"
                 $<TARGET_FILE:mpi_init_fatal> before)
add_test(NAME mp.mpi.init_fatal.after
         COMMAND ${CMAKE_COMMAND} -E env EXPECT_FAIL_NOT=went
                 ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 2
                 "MPI_Barrier: called after MPI_Finalize.*MPI_ERRORS_ARE_FATAL"
                 $<TARGET_FILE:mpi_init_fatal> after)
# A rank's line printed just before a SIGKILL reaches shoalrun's output:
# MPI_Init made its stdout (a pipe) line-buffered; with SHOAL_MPI_STDOUT=keep
# the C library's full buffering keeps it, and it dies with the rank.
add_test(NAME mp.mpi.init_fatal.killed_line
         COMMAND ${CMAKE_COMMAND} -E env EXPECT_FAIL_NOT=went
                 ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 2
                 "rank 1 printed this line before its SIGKILL"
                 $<TARGET_FILE:mpi_init_fatal> killed)
add_test(NAME mp.mpi.init_fatal.killed_keep
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_MPI_STDOUT=keep
                 "EXPECT_FAIL_NOT=went|printed this line"
                 ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 2 "killed by signal 9"
                 $<TARGET_FILE:mpi_init_fatal> killed)
set_tests_properties(mp.mpi.init_fatal.init mp.mpi.init_fatal.before
                     mp.mpi.init_fatal.after mp.mpi.init_fatal.killed_line
                     mp.mpi.init_fatal.killed_keep
                     PROPERTIES LABELS "mp;mpi" TIMEOUT 90)
# Sessions: MPI without MPI_Init (two sessions in turn, communicators from
# process sets, an intercommunicator from two groups, error handlers), and
# beside it (a session that outlives MPI_Finalize).
shoal_mpi_test(session SOURCES session.c NP 1 2 4 ARGS only)
shoal_mpi_test(session_mixed SOURCES session.c NP 1 3 ARGS mixed)
# The tool information interface (MPI_T): control variables read before
# MPI_Init and after MPI_Finalize, enumerations, categories, performance
# variables counting this rank's sends.
shoal_mpi_test(mpit SOURCES mpit.c NP 1 2
               ENV SHOAL_SHM_CELLS=256 SHOAL_LOG=warn)
