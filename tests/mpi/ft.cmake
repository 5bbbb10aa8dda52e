# Fault tolerance (ULFM, docs/FT.md): jobs run with shoalrun --ft, one or
# two ranks kill themselves with SIGKILL, the survivors check the error
# classes and go on (revoke, agree, shrink).
#
# shoal_ft_test(<name> PROGRAM <target> NP <n> ARGS <a...> [ENV <k=v...>]
#               [FLAG <launcher option...>])
#   registers mp.mpi.<name>.np<n>: shoalrun --ft -n <n> <program> <args>;
#   FLAG replaces --ft (its other names: -disable-auto-cleanup, ...).
function(shoal_ft_test name)
    cmake_parse_arguments(T "" "PROGRAM;NP" "ARGS;ENV;FLAG" ${ARGN})
    set(test_name mp.mpi.${name}.np${T_NP})
    if(NOT T_FLAG)
        set(T_FLAG --ft)
    endif()
    add_test(NAME ${test_name}
             COMMAND $<TARGET_FILE:shoalrun> ${T_FLAG} -n ${T_NP} --timeout 60
                     $<TARGET_FILE:${T_PROGRAM}> ${T_ARGS})
    set_tests_properties(${test_name} PROPERTIES
        LABELS "mp;mpi;ft" TIMEOUT 90 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
        FAIL_REGULAR_EXPRESSION "FAIL|check failed")
    if(T_ENV)
        set_tests_properties(${test_name} PROPERTIES ENVIRONMENT "${T_ENV}")
    endif()
endfunction()

shoal_mp_program(mpi_ft_ulfm SOURCES ft_ulfm.c)
target_include_directories(mpi_ft_ulfm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
shoal_ft_test(ft_p2p PROGRAM mpi_ft_ulfm NP 4 ARGS p2p)
shoal_ft_test(ft_p2p PROGRAM mpi_ft_ulfm NP 8 ARGS p2p 3)
shoal_ft_test(ft_allreduce PROGRAM mpi_ft_ulfm NP 4 ARGS allreduce)
shoal_ft_test(ft_allreduce PROGRAM mpi_ft_ulfm NP 8 ARGS allreduce 5)
shoal_ft_test(ft_barrier PROGRAM mpi_ft_ulfm NP 4 ARGS barrier)
shoal_ft_test(ft_barrier PROGRAM mpi_ft_ulfm NP 8 ARGS barrier 2)
shoal_ft_test(ft_iallreduce PROGRAM mpi_ft_ulfm NP 8 ARGS iallreduce 6)
shoal_ft_test(ft_ibarrier PROGRAM mpi_ft_ulfm NP 8 ARGS ibarrier 1)
shoal_ft_test(ft_persistent PROGRAM mpi_ft_ulfm NP 8 ARGS persistent 3)
shoal_ft_test(ft_persistent PROGRAM mpi_ft_ulfm NP 4 ARGS persistent 0)
shoal_ft_test(ft_shrink PROGRAM mpi_ft_ulfm NP 8 ARGS shrink 4)
# MPIX_Comm_ishrink pending while the victim dies, with an iagree after it
# and a ring of messages meanwhile; also with the coordinator (rank 0)
# as the victim, and over the TCP wire alone.
shoal_ft_test(ft_ishrink PROGRAM mpi_ft_ulfm NP 8 ARGS ishrink 5)
shoal_ft_test(ft_ishrink_coord PROGRAM mpi_ft_ulfm NP 5 ARGS ishrink 0)
shoal_ft_test(ft_ishrink_tcp PROGRAM mpi_ft_ulfm NP 4 ARGS ishrink 2
              ENV SHOAL_WIRES=tcp)
shoal_ft_test(ft_ishrink_thread PROGRAM mpi_ft_ulfm NP 4 ARGS ishrink 1
              ENV SHOAL_PROGRESS=thread)
# A rendezvous the dead rank started (its data never taken), pull and
# push; and point-to-point over the TCP wire alone (connections refused).
shoal_ft_test(ft_rendezvous PROGRAM mpi_ft_ulfm NP 4 ARGS rendezvous 1)
shoal_ft_test(ft_rendezvous PROGRAM mpi_ft_ulfm NP 8 ARGS rendezvous 0)
shoal_ft_test(ft_rendezvous_push PROGRAM mpi_ft_ulfm NP 4 ARGS rendezvous 2
              ENV SHOAL_MPI_RNDV=push)
# A revocation while a rendezvous moves (pull with the cooperative copy,
# and push), and while sends wait unreceived at the revoker.
shoal_ft_test(ft_revoke_inflight PROGRAM mpi_ft_ulfm NP 4 ARGS revoke_inflight)
shoal_ft_test(ft_revoke_inflight_push PROGRAM mpi_ft_ulfm NP 4
              ARGS revoke_inflight ENV SHOAL_MPI_RNDV=push)
shoal_ft_test(ft_p2p_tcp PROGRAM mpi_ft_ulfm NP 4 ARGS p2p ENV SHOAL_WIRES=tcp)
# With the progress thread (its waits are not am_block's).
shoal_ft_test(ft_p2p_thread PROGRAM mpi_ft_ulfm NP 4 ARGS p2p
              ENV SHOAL_PROGRESS=thread)
shoal_ft_test(ft_allreduce_thread PROGRAM mpi_ft_ulfm NP 4 ARGS allreduce
              ENV SHOAL_PROGRESS=thread)
shoal_ft_test(ft_agree PROGRAM mpi_ft_ulfm NP 4 ARGS agree)
# At most two agreements or shrinks pending on one communicator: a third
# is refused on every rank (docs/FT.md).
shoal_ft_test(ft_pending PROGRAM mpi_ft_ulfm NP 4 ARGS pending)
# A stopped rank (SIGSTOP) and SHOAL_FT_TIMEOUT: stopped for less (once,
# or three times with runs between, longer than the timeout in all) it
# goes on and nobody is taken for dead; stopped for longer, shoalrun kills
# it past the timeout, and the survivors get MPIX_ERR_PROC_FAILED no
# sooner, then shrink; also over the TCP wire alone.
shoal_ft_test(ft_stop_short PROGRAM mpi_ft_ulfm NP 4 ARGS stop 2 700 1 1000
              ENV SHOAL_FT_TIMEOUT=1000ms)
shoal_ft_test(ft_stop_repeat PROGRAM mpi_ft_ulfm NP 4 ARGS stop 1 400 3 600
              ENV SHOAL_FT_TIMEOUT=600ms)
shoal_ft_test(ft_stop_dead PROGRAM mpi_ft_ulfm NP 4 ARGS stop 3 2000 1 600
              ENV SHOAL_FT_TIMEOUT=600ms)
shoal_ft_test(ft_stop_dead_tcp PROGRAM mpi_ft_ulfm NP 4 ARGS stop 0 2000 1 600
              ENV SHOAL_FT_TIMEOUT=600ms SHOAL_WIRES=tcp)
# The coordinator of the agreement (rank 0) dies: rank 1 takes over.
shoal_ft_test(ft_agree_coord PROGRAM mpi_ft_ulfm NP 5 ARGS agree 0)
# ... and then its successor (rank 1) too.
shoal_ft_test(ft_agree_coord2 PROGRAM mpi_ft_ulfm NP 8 ARGS agree 0 1)

# An intercommunicator between the two halves of 8 ranks, one rank of
# each half killed: during MPIX_Comm_agree (each group gets the other's
# AND, the error until acknowledged, get_failed and ack_failed over both
# groups, a wildcard receive pending until then), also with the
# agreement's coordinator (world 0) among the victims, and during
# MPIX_Comm_shrink; the shrunk intercommunicator carries point-to-point
# messages, MPI_Allreduce and an agreement between its groups.
# (tests/mpi/ft_inter.c says what each mode checks.)
shoal_mp_program(mpi_ft_inter SOURCES ft_inter.c)
target_include_directories(mpi_ft_inter PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
shoal_ft_test(ft_inter_agree PROGRAM mpi_ft_inter NP 8 ARGS agree 2 5)
shoal_ft_test(ft_inter_agree_coord PROGRAM mpi_ft_inter NP 8 ARGS agree 0 7)
shoal_ft_test(ft_inter_shrink PROGRAM mpi_ft_inter NP 8 ARGS shrink 1 5)
shoal_ft_test(ft_inter_shrink_tcp PROGRAM mpi_ft_inter NP 6 ARGS shrink 2 4
              ENV SHOAL_WIRES=tcp)
# Failures on one side only; and a whole side lost (shrink cannot make an
# intercommunicator without a remote group: MPIX_ERR_PROC_FAILED).
shoal_ft_test(ft_inter_agree_low PROGRAM mpi_ft_inter NP 8 ARGS agree 3 -1)
shoal_ft_test(ft_inter_shrink_high PROGRAM mpi_ft_inter NP 8
              ARGS shrink -1 6)
shoal_ft_test(ft_inter_wipe PROGRAM mpi_ft_inter NP 6 ARGS wipe)
# The same with MPIX_Comm_ishrink, tested while the survivors compute.
shoal_ft_test(ft_inter_ishrink PROGRAM mpi_ft_inter NP 8 ARGS ishrink 1 5)
shoal_ft_test(ft_inter_ishrink_high PROGRAM mpi_ft_inter NP 8
              ARGS ishrink -1 6)
shoal_ft_test(ft_inter_iwipe PROGRAM mpi_ft_inter NP 6 ARGS iwipe)
# Revoked by a survivor while the victims die: agree and shrink still work.
shoal_ft_test(ft_inter_revoke PROGRAM mpi_ft_inter NP 8 ARGS revoke 0 4)

# A rank that exits with an error before MPI_Finalize has failed as a
# killed one has; the launcher's other names for --ft (Hydra's, Open MPI's).
shoal_ft_test(ft_p2p_exit PROGRAM mpi_ft_ulfm NP 4 ARGS p2p
              ENV FT_DIE=exit FLAG -disable-auto-cleanup)
shoal_ft_test(ft_allreduce_exit PROGRAM mpi_ft_ulfm NP 4 ARGS allreduce 1
              ENV FT_DIE=exit FLAG --with-ft ulfm)

# A Jacobi stencil in the ULFM style at 8 ranks: no failure, one, two
# (the second on the shrunk communicator), and N-2; the result must be
# bit-identical to a sequential run.
shoal_mp_program(mpi_ft_jacobi SOURCES ft_jacobi.c)
target_include_directories(mpi_ft_jacobi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
shoal_ft_test(ft_jacobi_0 PROGRAM mpi_ft_jacobi NP 8 ARGS 96)
shoal_ft_test(ft_jacobi_1 PROGRAM mpi_ft_jacobi NP 8 ARGS 96 5@21)
shoal_ft_test(ft_jacobi_2 PROGRAM mpi_ft_jacobi NP 8 ARGS 96 2@13 6@50)
shoal_ft_test(ft_jacobi_n2 PROGRAM mpi_ft_jacobi NP 8
              ARGS 96 0@5 1@20 3@21 4@40 7@60 6@70)
shoal_ft_test(ft_jacobi_2_thread PROGRAM mpi_ft_jacobi NP 8
              ARGS 96 2@13 0@50 ENV SHOAL_PROGRESS=thread)

# The ICL's ULFM tests (ulfm-testing, docs/FT.md) found these: the MPIX_FT
# attribute of MPI_COMM_WORLD (1 under --ft, 0 under --with-ft no, also with
# SHOAL_FT=1 set); a revocation that reaches a member before it has the
# communicator built, and late ones of a freed communicator whose context
# id comes back; a collective retried in a loop while it fails at once
# must still take in the revocation.
shoal_ft_test(ft_attr PROGRAM mpi_ft_ulfm NP 4 ARGS attr 1
              FLAG --with-ft mpi)
shoal_ft_test(ft_attr_off PROGRAM mpi_ft_ulfm NP 4 ARGS attr 0
              ENV SHOAL_FT=1 FLAG --with-ft no)
shoal_ft_test(ft_revoke_early PROGRAM mpi_ft_ulfm NP 4 ARGS revoke_early)
shoal_ft_test(ft_revoke_early PROGRAM mpi_ft_ulfm NP 8 ARGS revoke_early)
shoal_ft_test(ft_revoke_loop PROGRAM mpi_ft_ulfm NP 4 ARGS revoke_loop 2)
# More revoked communicators than context ids (ulfm-testing's
# benchrevoke makes 14 014): their ids come back, and what was left
# unreceived on one never shows on the next made with its id.
shoal_ft_test(ft_revoke_many PROGRAM mpi_ft_ulfm NP 4 ARGS revoke_many 5000)
# Ranks that finalize while rank 0 still works wait for it, and are not
# taken for failed there (ulfm-testing's tutorial/08.2.err_iany_src.c).
shoal_ft_test(ft_finalize PROGRAM mpi_ft_ulfm NP 4 ARGS finalize 2)

# Fail-stop (docs/FT.md): a rank taken for dead while it lives (stopped
# past the datagram wire's timeout with no launcher watching stops, then
# continued) must learn it and exit saying so, whether it then talks to a
# rank of its own pretend host (peer 2: shared memory, told by that
# rank's am layer unless a datagram wire that gave up on it tells it
# first) or of the other (peer 0: told by the datagram wire).
# (also with the progress thread, from which the rank exits)
foreach(variant 2 0 2_thread)
    string(REGEX REPLACE "_.*" "" peer ${variant})
    set(progress SHOAL_PROGRESS=none)
    if(variant MATCHES "_thread")
        set(progress SHOAL_PROGRESS=thread)
    endif()
    add_test(NAME mp.mpi.ft_zombie_${variant}.np4
             COMMAND ${CMAKE_COMMAND} -E env SHOAL_FT_TIMEOUT=0
                     SHOAL_UDP_DEAD_TIMEOUT=1s SHOAL_WIRES_FAKE_HOSTS=2
                     SHOAL_WIRES=shm,udp ${progress}
                     bash ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_log.sh
                     "rank 3 was taken for dead by rank [0-2] \\(.*\\) and still lives.*this process exits now"
                     $<TARGET_FILE:shoalrun> --ft -n 4 --timeout 60
                     $<TARGET_FILE:mpi_ft_ulfm> zombie 3 ${peer})
    set_tests_properties(mp.mpi.ft_zombie_${variant}.np4 PROPERTIES
        LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)
endforeach()

# The ring of watches covers every rank whatever the placement: the
# watchers' log lines must name every rank (tests/mpi/ft_ring_check.sh),
# and a pretend host's ranks that die at once, nobody having talked to
# them, with shoalrun telling nobody (as srun), must be known dead by
# every survivor: 6 ranks cyclic on 3 hosts (srun -m cyclic; the first
# ring left rank 4 unwatched), and 5 ranks in blocks on hosts of 3 and 2
# (it left rank 2 unwatched).
foreach(entry "cyclic|6|3|cyclic|1,4" "unequal|5|2|block|0,1,2")
    string(REPLACE "|" ";" f "${entry}")
    list(GET f 0 what)
    list(GET f 1 np)
    list(GET f 2 hosts)
    list(GET f 3 place)
    list(GET f 4 lost)
    add_test(NAME mp.mpi.ft_ring_${what}.np${np}
             COMMAND ${CMAKE_COMMAND} -E env SHOAL_FT_NOTICES=0
                     SHOAL_WIRES_FAKE_HOSTS=${hosts}
                     SHOAL_WIRES_FAKE_PLACE=${place} SHOAL_WIRES=shm,tcp
                     bash ${CMAKE_CURRENT_SOURCE_DIR}/ft_ring_check.sh ${np}
                     $<TARGET_FILE:shoalrun> --ft -n ${np} --timeout 60
                     $<TARGET_FILE:mpi_ft_ulfm> hostdie ${lost})
    set_tests_properties(mp.mpi.ft_ring_${what}.np${np} PROPERTIES
        LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)
endforeach()

# In-band notices in a dissemination pattern (docs/FT.md): rank 5 of 2
# pretend hosts x 4 dies while every other rank waits for it, nobody
# having talked to it and shoalrun telling nobody; every survivor must
# learn of it (ranks 0, 2 and 3 only from notices) and send at most 3
# notices (the 1st, 2nd and 4th of the 6 others), not one to each.
add_test(NAME mp.mpi.ft_notices_log.np8
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_FT_NOTICES=0
                 SHOAL_WIRES_FAKE_HOSTS=2 SHOAL_WIRES=shm,tcp
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/ft_ring_check.sh
                 --notices 3 8
                 $<TARGET_FILE:shoalrun> --ft -n 8 --timeout 60
                 $<TARGET_FILE:mpi_ft_ulfm> recvdead 5)
set_tests_properties(mp.mpi.ft_notices_log.np8 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)

# A host lost whole costs one round of notices, not one per rank
# (docs/FT.md): ranks 4-7 of 2 pretend hosts x 4 die at once while the
# others compute; each survivor then learns of all four at its first look
# (from shoalrun, or a notice) and tells them in one round naming all
# four, to the 1st and 2nd of the other 3 survivors: 8 frames in all (32
# when each death was a round of its own). (Survivors whose last waits
# were short may finalize before their round goes out: they say nothing.)
add_test(NAME mp.mpi.ft_notices_host.np8
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_WIRES_FAKE_HOSTS=2
                 SHOAL_WIRES=shm,tcp
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/ft_ring_check.sh
                 --frames 8 "4 5 6 7" 8
                 $<TARGET_FILE:shoalrun> --ft -n 8 --timeout 60
                 $<TARGET_FILE:mpi_ft_ulfm> hostquiet 4)
set_tests_properties(mp.mpi.ft_notices_host.np8 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)

# Deaths a rank learns at different looks join one round of notices
# (docs/FT.md): ranks 6-11 of 2 pretend hosts x 6 die 5 ms apart while
# the others wait in MPI_Recv from each in turn, so each survivor learns
# of them at several looks.  The first round goes out at once; the deaths
# learned after it, coming less than 10 ms apart, wait and go out
# together when they stop: the survivors send 49-67 frames in all (with
# a CPU hog beside), at most 96 here (room for a slow sanitizer build);
# with a round at each look, 114-126 on a quiet machine.
add_test(NAME mp.mpi.ft_notices_spread.np12
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_WIRES_FAKE_HOSTS=2
                 SHOAL_WIRES=shm,tcp
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/ft_ring_check.sh
                 --frames 96 - 12
                 $<TARGET_FILE:shoalrun> --ft -n 12 --timeout 60
                 $<TARGET_FILE:mpi_ft_ulfm> hostspread 6 5)
set_tests_properties(mp.mpi.ft_notices_spread.np12 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)

# A rank whose MPI calls all complete at once passes on what it learns
# (docs/FT.md): 8 ranks each alone on a pretend host, nobody told by the
# launcher; rank 7 dies, ranks 6 (its watcher) and 0 (the rank it
# watched) see it and wait in MPI_Recv from it; rank 5, which neither
# tells (they tell their 1st, 2nd and 4th ranks alive after them: 0, 1,
# 3 and 1, 2, 4), must learn of it within 3 s from ranks 1, 3 or 4,
# which only compute and call MPI_Test.
shoal_ft_test(ft_busy PROGRAM mpi_ft_ulfm NP 8 ARGS busy 7 5 0,6
              ENV SHOAL_FT_NOTICES=0 SHOAL_WIRES_FAKE_HOSTS=8
                  SHOAL_WIRES=shm,tcp)

# Without --ft a rank's death still ends the job, naming the rank.
add_test(NAME mp.mpi.ft_off.np4
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 4
                 "^shoalrun: rank 3 \\(pid [0-9]+\\) was killed by signal 9 \\(Killed\\); stopping the other 3 ranks$"
                 $<TARGET_FILE:mpi_ft_ulfm> p2p)
set_tests_properties(mp.mpi.ft_off.np4 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)
# --with-ft no (Open MPI's, docs/LAUNCHING.md) is a run without fault
# tolerance, also with SHOAL_FT=1 in the environment.
add_test(NAME mp.mpi.ft_with_ft_no.np4
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_fail.sh
                 $<TARGET_FILE:shoalrun> 4
                 "^shoalrun: rank 3 \\(pid [0-9]+\\) was killed by signal 9 \\(Killed\\); stopping the other 3 ranks$"
                 --with-ft no $<TARGET_FILE:mpi_ft_ulfm> p2p)
set_tests_properties(mp.mpi.ft_with_ft_no.np4 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE ENVIRONMENT SHOAL_FT=1)

# bench/ft/ft_bench.c (docs/PERFORMANCE.md): agree and shrink medians,
# detection time; built here, run by bench/ft/run.
shoal_mp_program(bench_ft SOURCES ${PROJECT_SOURCE_DIR}/bench/ft/ft_bench.c)
# bench/ft/ckpt_bench.c: checkpoint and restart costs, run by
# bench/ft/ckpt_run.
shoal_mp_program(bench_ckpt SOURCES ${PROJECT_SOURCE_DIR}/bench/ft/ckpt_bench.c)

# Checkpoint/restart (docs/FT.md): tests/mpi/ckpt_test.sh runs the heat
# program of tests/mpi/ckpt_heat.c uninterrupted, killed and restarted,
# and against broken checkpoints; its exit status says (the programs it
# runs print FAIL on purpose when they refuse a checkpoint).
shoal_mp_program(mpi_ckpt_heat SOURCES ckpt_heat.c)
foreach(what restart b2b inflight handles kill pending refuse onfail trigger)
    add_test(NAME mp.mpi.ckpt_${what}.np4
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/ckpt_test.sh
                     $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_ckpt_heat> ${what})
    set_tests_properties(mp.mpi.ckpt_${what}.np4 PROPERTIES
        LABELS "mp;mpi;ft;ckpt" TIMEOUT 300 RUN_SERIAL TRUE)
endforeach()
# The cut's markers rely on each channel being FIFO: the TCP wire alone,
# the datagram wire alone, and the progress thread (whose waits are not
# am_block's).
function(shoal_ckpt_variant suffix env)
    foreach(what ${ARGN})
        add_test(NAME mp.mpi.ckpt_${what}_${suffix}.np4
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/ckpt_test.sh
                         $<TARGET_FILE:shoalrun> $<TARGET_FILE:mpi_ckpt_heat>
                         ${what})
        set_tests_properties(mp.mpi.ckpt_${what}_${suffix}.np4 PROPERTIES
            LABELS "mp;mpi;ft;ckpt" TIMEOUT 300 RUN_SERIAL TRUE
            ENVIRONMENT "${env}")
    endforeach()
endfunction()
shoal_ckpt_variant(tcp SHOAL_WIRES=tcp restart inflight handles pending onfail trigger)
shoal_ckpt_variant(udp SHOAL_WIRES=udp inflight)
shoal_ckpt_variant(thread SHOAL_PROGRESS=thread restart inflight trigger)

# A blocking collective that gave up with sends under way keeps its
# schedule only until they end (docs/FT.md): 20 broadcasts given up (most
# with sends under way: the children may drop theirs first), none held at
# MPI_Finalize (rank 0's log line says how many it held).
add_test(NAME mp.mpi.ft_coll_reap.np4
         COMMAND ${CMAKE_COMMAND} -E env SHOAL_COLL_BCAST=binomial SHOAL_LOG=info
                 bash ${CMAKE_CURRENT_SOURCE_DIR}/run_expect_log.sh
                 "SHOAL_FT: ([1-9][0-9]*) collective schedules given up with messages under way, \\1 of them freed before MPI_Finalize, 0 at it"
                 $<TARGET_FILE:shoalrun> --ft -n 4 --timeout 60
                 $<TARGET_FILE:mpi_ft_ulfm> coll_reap 20)
set_tests_properties(mp.mpi.ft_coll_reap.np4 PROPERTIES
    LABELS "mp;mpi;ft" TIMEOUT 90 RUN_SERIAL TRUE)

# Every collective, blocking and nonblocking, with rank 3 of 4 killed while
# the others are in it: nobody hangs, those whose result needs it fail,
# the rest succeed with the right data or fail; then all agree and shrink.
# Small blocks (eager), and large ones (rendezvous) for some.
shoal_mp_program(mpi_ft_everycoll SOURCES ft_everycoll.c)
target_include_directories(mpi_ft_everycoll PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(c bcast reduce allreduce gather gatherv scatter scatterv allgather
          allgatherv alltoall alltoallv alltoallw reduce_scatter
          reduce_scatter_block scan exscan barrier neighbor_allgather
          neighbor_alltoall)
    shoal_ft_test(ft_coll_${c} PROGRAM mpi_ft_everycoll NP 4 ARGS ${c})
    shoal_ft_test(ft_coll_i${c} PROGRAM mpi_ft_everycoll NP 4 ARGS i${c})
endforeach()
foreach(c bcast allreduce alltoall gather ibcast iallreduce ialltoall igather)
    shoal_ft_test(ft_coll_${c}_big PROGRAM mpi_ft_everycoll NP 4
                  ARGS ${c} 32768)
endforeach()
# Some over the TCP wire alone (all of them pass there too, by hand).
foreach(c allreduce ibcast ialltoall gather iscan ineighbor_alltoall)
    shoal_ft_test(ft_coll_${c}_tcp PROGRAM mpi_ft_everycoll NP 4 ARGS ${c}
                  ENV SHOAL_WIRES=tcp)
endforeach()
