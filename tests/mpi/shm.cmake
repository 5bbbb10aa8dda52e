# Shared-memory collectives (src/coll/coll_shm*.c): the same program at
# 1-9 ranks (8 and 9 share 2 CPUs: waiting must give the core away), with
# every rank sleeping on its doorbell at once, and with the segment refused
# by the kernel (every rank must fall back to messages inside the algorithm
# it already chose).  Sleepers wake up on their own every SHOAL_PEER_CHECK,
# which would hide a lost wake-up: the sleeping runs set it to 1000 s, so
# that one hangs the test instead.
set(coll_shm_tests)
shoal_mpi_test(coll_shm SOURCES coll_shm.c NP 1 2 3 4 5 8 9 TIMEOUT 300)
foreach(np 1 2 3 4 5 8 9)
    list(APPEND coll_shm_tests mp.mpi.coll_shm.np${np})
endforeach()

set(coll_shm_sleep SHOAL_WAIT=block SHOAL_PEER_CHECK=1000s)
shoal_mp_test(mpi.coll_shm_block PROGRAM mpi_coll_shm NP 3 ARGS 500
              ENV ${coll_shm_sleep} TIMEOUT 300 LABELS mpi)
shoal_mp_test(mpi.coll_shm_block PROGRAM mpi_coll_shm NP 8 ARGS 300
              ENV ${coll_shm_sleep} TIMEOUT 300 LABELS mpi)
# without membarrier: the flag/doorbell ordering rests on our fences alone
shoal_mp_test(mpi.coll_shm_block_fenced PROGRAM mpi_coll_shm NP 5 ARGS 500
              ENV ${coll_shm_sleep} SHOAL_SHM_FENCE=full TIMEOUT 300
              LABELS mpi)
shoal_mp_test(mpi.coll_shm_nomap PROGRAM mpi_coll_shm NP 4 ARGS 300
              ENV SHOALTEST_COLL_SHM_FAIL=map TIMEOUT 300 LABELS mpi)
shoal_mp_test(mpi.coll_shm_nocreate PROGRAM mpi_coll_shm NP 3 ARGS 300
              ENV SHOALTEST_COLL_SHM_FAIL=create TIMEOUT 300 LABELS mpi)
list(APPEND coll_shm_tests mp.mpi.coll_shm_block.np3
     mp.mpi.coll_shm_block.np8 mp.mpi.coll_shm_block_fenced.np5
     mp.mpi.coll_shm_nomap.np4
     mp.mpi.coll_shm_nocreate.np3)

# 8 ranks on 2 CPUs wherever the tests run (this machine has 2 anyway).
find_program(TASKSET taskset)
if(TASKSET)
    add_test(NAME mp.mpi.coll_shm_2cpus.np8
             COMMAND ${TASKSET} -c 0-1 $<TARGET_FILE:shoalrun> -n 8
                     --timeout 300 $<TARGET_FILE:mpi_coll_shm> 1000)
    set_tests_properties(mp.mpi.coll_shm_2cpus.np8 PROPERTIES
        LABELS "mp;mpi" TIMEOUT 330 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
    list(APPEND coll_shm_tests mp.mpi.coll_shm_2cpus.np8)
endif()

# Nonblocking and persistent calls (several in flight on one communicator),
# once the MPI layer declares them.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/mpi.h coll_shm_has_nbc
     REGEX "Iallreduce")
if(coll_shm_has_nbc)
    shoal_mpi_test(coll_shm_nb SOURCES coll_shm_nb.c NP 1 2 3 4 8 TIMEOUT 300)
    shoal_mp_test(mpi.coll_shm_nb_block PROGRAM mpi_coll_shm_nb NP 4
                  ENV ${coll_shm_sleep} TIMEOUT 300 LABELS mpi)
    foreach(np 1 2 3 4 8)
        list(APPEND coll_shm_tests mp.mpi.coll_shm_nb.np${np})
    endforeach()
    list(APPEND coll_shm_tests mp.mpi.coll_shm_nb_block.np4)
endif()

foreach(t ${coll_shm_tests})
    set_property(TEST ${t} APPEND PROPERTY LABELS coll shm)
endforeach()
