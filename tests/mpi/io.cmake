# MPI-IO (src/io, docs/IO.md): files in a fresh directory under /tmp,
# removed at the end.  Every access family through every kind of view,
# each byte of the file checked against the test's own image; opening,
# sizes, hints, error handlers and error classes; the shared file pointer
# and ordered access; atomic mode with overlapping writers; at 1 to 8
# ranks.
shoal_mpi_test(io_rw SOURCES io_rw.c NP 1 2 4 8)
shoal_mpi_test(io_basic SOURCES io_basic.c NP 1 2 4 8)
shoal_mpi_test(io_shared SOURCES io_shared.c NP 1 2 4 8)
shoal_mpi_test(io_atomic SOURCES io_atomic.c NP 2 4 8)
# set_view's typemap rules for etypes and filetypes, by basic element:
# negative, decreasing, overlapping (refused only for writing); reads
# through an overlapping filetype by every path, each byte checked.
shoal_mpi_test(io_viewtype SOURCES io_viewtype.c NP 1 2 4)
# Nonblocking independent access in the background (io_async.c): requests
# held up by another process's lock stay incomplete while the caller goes
# on; many at once, pointers moved at the call, free, cancel, errors.
# At 2 ranks also under ThreadSanitizer (make check-thread: label thread),
# with the progress thread as a second waker, and with waits that sleep at
# once, where a lost wake-up by the IO thread ends the rank.
shoal_mpi_test(io_async SOURCES io_async.c NP 1 4)
shoal_mp_test(mpi.io_async PROGRAM mpi_io_async NP 2 LABELS mpi thread)
shoal_mp_test(mpi.io_async_pt PROGRAM mpi_io_async NP 2
              ENV SHOAL_PROGRESS=thread LABELS mpi)
shoal_mp_test(mpi.io_async_block PROGRAM mpi_io_async NP 2
              ENV SHOAL_WAIT=block SHOAL_WAIT_CHECK=fatal LABELS mpi)
# Nonblocking collectives through collective buffering (io_nbcb.c): 2
# aggregators, rounds of 100 bytes; contiguous, vector and subarray views,
# three outstanding at once on each of two files, every byte checked;
# not done before a peer has called, nor while the IO thread is held by
# another process's lock; errors through the request and the handler.
# At 2 ranks also under ThreadSanitizer (label thread), with the progress
# thread, and with waits that sleep at once.
shoal_mpi_test(io_nbcb SOURCES io_nbcb.c NP 1 4)
shoal_mp_test(mpi.io_nbcb PROGRAM mpi_io_nbcb NP 2 LABELS mpi thread)
shoal_mp_test(mpi.io_nbcb_pt PROGRAM mpi_io_nbcb NP 2
              ENV SHOAL_PROGRESS=thread LABELS mpi)
shoal_mp_test(mpi.io_nbcb_block PROGRAM mpi_io_nbcb NP 2
              ENV SHOAL_WAIT=block SHOAL_WAIT_CHECK=fatal LABELS mpi)
# The same double-buffered (shoal_cb_double_buffer=enable), at 1, 2, 4;
# at 2 also under ThreadSanitizer (label thread).
foreach(np 1 2 4)
    set(labels mpi)
    if(np EQUAL 2)
        list(APPEND labels thread)
    endif()
    shoal_mp_test(mpi.io_nbcb_double PROGRAM mpi_io_nbcb NP ${np}
                  ARGS double LABELS ${labels})
endforeach()
# The same through two-phase collective buffering (hints from rank 0 win):
# one aggregator per host, then cb_nodes aggregators (more than hosts),
# file domains aligned to a small striping_unit; rounds bounded by
# cb_buffer_size.
shoal_mp_test(mpi.io_rw_cb PROGRAM mpi_io_rw NP 1 ARGS cb LABELS mpi)
shoal_mp_test(mpi.io_rw_cb PROGRAM mpi_io_rw NP 4 ARGS cb LABELS mpi)
shoal_mp_test(mpi.io_rw_cb2 PROGRAM mpi_io_rw NP 2 ARGS cb 2 64 LABELS mpi)
shoal_mp_test(mpi.io_rw_cb3 PROGRAM mpi_io_rw NP 4 ARGS cb 3 64 LABELS mpi)
shoal_mp_test(mpi.io_rw_cb3 PROGRAM mpi_io_rw NP 8 ARGS cb 3 64 LABELS mpi)
# ...and in rounds of 100 bytes of file per aggregator (cb_buffer_size).
shoal_mp_test(mpi.io_rw_cbr PROGRAM mpi_io_rw NP 4 ARGS cb 3 64 100 LABELS mpi)
shoal_mp_test(mpi.io_rw_cbr PROGRAM mpi_io_rw NP 2 ARGS cb 0 0 100 LABELS mpi)
# Double buffering of collective buffering (shoal_cb_double_buffer, on by
# default for the blocking calls, asked for by enable for the nonblocking
# ones): one aggregator, 100-byte rounds, every byte checked, blocking and
# nonblocking (three patterns); with it the blocking rounds' IO waits
# behind another handle's access holding the IO thread, without it the
# call does the IO itself; a nonblocking aggregator takes round 1's data
# during round 0's IO only with it.
shoal_mpi_test(io_cbdouble SOURCES io_cbdouble.c NP 1 2 4)
foreach(np 1 2 4)
    shoal_mp_test(mpi.io_cbdouble_on PROGRAM mpi_io_cbdouble NP ${np}
                  ARGS enable LABELS mpi)
endforeach()
shoal_mp_test(mpi.io_cbdouble_off PROGRAM mpi_io_cbdouble NP 2 ARGS disable
              LABELS mpi)
shoal_mp_test(mpi.io_cbdouble_off PROGRAM mpi_io_cbdouble NP 4 ARGS disable
              LABELS mpi)
# striping_factor: the number of aggregators without cb_nodes (a rank
# that may not grow files fails the write only when it aggregates).
shoal_mpi_test(io_stripes SOURCES io_stripes.c NP 2 4)
# File-noncontiguous list IO with shoal_io_uring enable, disable and
# automatic: batches of runs, strided memory, the IO thread's ring, reads
# cut short by the end of the file.
shoal_mpi_test(io_uring SOURCES io_uring.c NP 1 2 4)
# Data sieving of writes: all ranks write interleaved views at once, with
# romio_ds_write automatic, enable and disable; every byte checked.
shoal_mpi_test(io_dswrite SOURCES io_dswrite.c NP 2 4 8)
# external32 files: big-endian bytes checked, read back; longs shrink to 4 bytes,
# also through filetypes made by the large-count constructors with arguments
# beyond int (sparse files reaching 36 GB).
shoal_mpi_test(io_ext32 SOURCES io_ext32.c NP 1 2 4 8)
# MPI_Register_datarep: a big-endian, biased representation in which shorts
# grow to 4 bytes; file bytes checked with POSIX reads; bad input; filetypes
# made with large counts beyond int.
shoal_mpi_test(io_datarep SOURCES io_datarep.c NP 1 2 4)
# bench/io/btio.c, the BT-IO-like checkpoint of bench/io/run, as a test:
# subarray views over a 5-double etype, a halo'd memory subarray, dumps
# appended with write_all and every value read back and checked, without
# and with collective buffering.
shoal_mp_program(mpi_io_btio SOURCES ${PROJECT_SOURCE_DIR}/bench/io/btio.c)
foreach(np 2 4)
    shoal_mp_test(mpi.io_btio PROGRAM mpi_io_btio NP ${np}
                  ARGS --grid 16 --dumps 4 --every 2 LABELS mpi)
    shoal_mp_test(mpi.io_btio_cb PROGRAM mpi_io_btio NP ${np}
                  ARGS --grid 16 --dumps 4 --every 2 ENV IOBENCH_CB=enable
                  LABELS mpi)
endforeach()
# A rank killed during a collective write: the bytes an earlier
# MPI_File_sync covered stay (two jobs: the crash, then the check).
shoal_mp_program(mpi_io_crash SOURCES io_crash.c)
target_include_directories(mpi_io_crash PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME mp.mpi.io_crash.np2
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_crash.sh
                 $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_io_crash>)
set_tests_properties(mp.mpi.io_crash.np2 PROPERTIES LABELS "mp;mpi"
                     RUN_SERIAL TRUE TIMEOUT 150)
# The same through collective buffering on 3 ranks, the aggregator or
# another rank killed mid-call, one or two aggregators, blocking and
# nonblocking, with and without --ft (io_crash.sh cb).
add_test(NAME mp.mpi.io_crash_cb.np3
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_crash.sh
                 $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_io_crash> cb)
set_tests_properties(mp.mpi.io_crash_cb.np3 PROPERTIES LABELS "mp;mpi"
                     RUN_SERIAL TRUE TIMEOUT 300)
# The same programs on a tmpfs and on ext4 (a loop device), mounted for
# the run (io_fs.sh; needs root, skips with the reason otherwise).
foreach(p io_rw io_basic io_shared io_atomic io_dswrite)
    add_test(NAME mp.mpi.${p}.fs.np4
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_fs.sh
                     $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_${p}>)
    set_tests_properties(mp.mpi.${p}.fs.np4 PROPERTIES LABELS "mp;mpi"
                         SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
add_test(NAME mp.mpi.io_rw_cb.fs.np4
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_fs.sh
                 $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_io_rw> cb 3 64)
set_tests_properties(mp.mpi.io_rw_cb.fs.np4 PROPERTIES LABELS "mp;mpi"
                     SKIP_RETURN_CODE 77 TIMEOUT 300)
# Collective buffering's automatic choice by file system (io_cbauto.c):
# off on /tmp at 2 and 4 ranks; at 4 ranks on a tmpfs (off) and on a FUSE
# file system, sshfs served by sftp-server (on for views of blocks under
# 8 KiB, reads only where not sieved; off for contiguous and larger ones),
# mounted for the run (io_netfs.sh; needs root, sshfs and /dev/fuse,
# skips with the reason otherwise); the hints override it, every byte is
# checked.
shoal_mpi_test(io_cbauto SOURCES io_cbauto.c NP 2 4 ARGS local)
add_test(NAME mp.mpi.io_cbauto.netfs.np4
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_netfs.sh
                 $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_io_cbauto> 4)
set_tests_properties(mp.mpi.io_cbauto.netfs.np4 PROPERTIES LABELS "mp;mpi"
                     SKIP_RETURN_CODE 77 TIMEOUT 120)
# The same across two namespace hosts that see the directory differently
# (io_netfs_hosts.sh, bench/io/netfs.sh: a file server with sshd whose
# ranks see a local file system, a client that mounts it with sshfs): the
# ranks must agree on collective buffering.  Needs root, ip netns, sshd,
# sshfs and /dev/fuse; skips with the reason otherwise.
add_test(NAME multihost.mpi_io_netfs
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/io_netfs_hosts.sh
                 $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_io_cbauto>)
set_tests_properties(multihost.mpi_io_netfs PROPERTIES
                     LABELS "launcher;multihost" SKIP_RETURN_CODE 77
                     TIMEOUT 120 RUN_SERIAL TRUE)
