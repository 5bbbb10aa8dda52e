# Point-to-point tests (the engine, the calls, requests, threads).
shoal_mpi_test(p2p_basic SOURCES p2p_basic.c NP 1 2 4 8)
shoal_mpi_test(p2p_order SOURCES p2p_order.c NP 2 4 8)
shoal_mpi_test(p2p_nonblocking SOURCES p2p_nonblocking.c NP 1 2 4 8)
shoal_mpi_test(p2p_badargs SOURCES p2p_badargs.c NP 1 2)
shoal_mpi_test(p2p_flood SOURCES p2p_flood.c NP 2)
shoal_mpi_test(p2p_largecount SOURCES p2p_largecount.c NP 2 TIMEOUT 300)
# A large receive does not wait for a sender that computes.
shoal_mpi_test(p2p_busy_sender SOURCES p2p_busy_sender.c NP 2)

# The other protocols: rendezvous pushed by the sender, everything eager
# up to the medium limit, tiny eager window (rendezvous almost always).
add_test(NAME mp.mpi.p2p_basic_push.np2
         COMMAND $<TARGET_FILE:shoalrun> -n 2 --timeout 120 $<TARGET_FILE:mpi_p2p_basic>)
add_test(NAME mp.mpi.p2p_order_smallwindow.np4
         COMMAND $<TARGET_FILE:shoalrun> -n 4 --timeout 120 $<TARGET_FILE:mpi_p2p_order>)
set_tests_properties(mp.mpi.p2p_basic_push.np2 PROPERTIES
    ENVIRONMENT "SHOAL_MPI_RNDV=push" LABELS "mp;mpi" RUN_SERIAL TRUE TIMEOUT 150)
set_tests_properties(mp.mpi.p2p_order_smallwindow.np4 PROPERTIES
    ENVIRONMENT "SHOAL_MPI_EAGER_WINDOW=1k;SHOAL_MPI_EAGER=512" LABELS "mp;mpi"
    RUN_SERIAL TRUE TIMEOUT 150)

# Threads: 4 per rank, MPI_THREAD_MULTIPLE.
find_package(Threads REQUIRED)
shoal_mpi_test(p2p_threads SOURCES p2p_threads.c NP 2 4)
target_link_libraries(mpi_p2p_threads PRIVATE Threads::Threads)
# ThreadSanitizer runs these too (make check-thread: label thread).
set_tests_properties(mp.mpi.p2p_threads.np2 mp.mpi.p2p_threads.np4
    PROPERTIES LABELS "mp;mpi;thread")

# The default error handler ends the job with a message naming the call.
add_test(NAME mp.mpi.p2p_fatal.np2
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 2 "MPI_Send: destination rank 5 out of range"
                 $<TARGET_FILE:mpi_p2p_badargs> fatal)
set_tests_properties(mp.mpi.p2p_fatal.np2 PROPERTIES LABELS "mp;mpi" RUN_SERIAL TRUE TIMEOUT 90)

# Local and nonblocking calls return while the peer sleeps (no waiting for
# room in the channel, for credits or for the receiver).
shoal_mpi_test(p2p_local_calls SOURCES p2p_local_calls.c NP 2 3)

# Large noncontiguous messages: no wait may sleep past what it waits for
# (SHOAL_WAIT_CHECK=fatal), with adaptive waits and with waits that sleep
# at once, over shared memory and over TCP.
shoal_mpi_test(p2p_noncontig_large SOURCES p2p_noncontig_large.c NP 2 3
               ENV SHOAL_WAIT_CHECK=fatal TIMEOUT 180)
shoal_mpi_test(p2p_noncontig_large_block SOURCES p2p_noncontig_large.c NP 2
               ENV SHOAL_WAIT_CHECK=fatal SHOAL_WAIT=block TIMEOUT 180)
shoal_mpi_test(p2p_noncontig_large_tcp SOURCES p2p_noncontig_large.c NP 2
               ENV SHOAL_WAIT_CHECK=fatal SHOAL_WIRES=tcp TIMEOUT 180)

# status.MPI_ERROR is the caller's except after MPI_ERR_IN_STATUS.
shoal_mpi_test(p2p_status_error SOURCES p2p_status_error.c NP 2)
