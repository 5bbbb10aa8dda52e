# Collectives and reduction operations.

# The op x type matrix, without MPI_Init (links the internal library).
shoal_unit_test(coll_ops SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/coll_op_unit.c
                LABELS mpi coll)

set(coll_np 1 2 3 4 5 8)
foreach(t coll_basic coll_reduce coll_ops coll_vector)
    shoal_mpi_test(${t} SOURCES ${t}.c NP ${coll_np})
endforeach()
shoal_mpi_test(coll_errors SOURCES coll_errors.c NP 1 2 3 8)
# Aliased send and receive buffers: MPI_ERR_BUFFER, no rank left behind.
shoal_mpi_test(coll_alias SOURCES coll_alias.c NP 1 2 4)
# Split, dup and intercommunicators (needs two ranks for the latter).
shoal_mpi_test(coll_comms SOURCES coll_comms.c NP 1 2 3 4 5 8)
# The large-count (_c) collectives, all three forms, and their errors;
# then (one rank, argument "large") one reduction of 2^31 + 16 bytes,
# skipped without the memory for it.
shoal_mpi_test(coll_count_c SOURCES coll_count_c.c NP 1 2 3 4 5)
shoal_mp_test(mpi.coll_count_c_large PROGRAM mpi_coll_count_c NP 1
              ARGS large LABELS mpi coll)
# `ctest -L coll` runs all of these too.
foreach(t coll_basic coll_reduce coll_ops coll_vector coll_errors coll_alias
          coll_comms coll_count_c)
    foreach(np ${coll_np})
        if(TEST mp.mpi.${t}.np${np})
            set_property(TEST mp.mpi.${t}.np${np} APPEND PROPERTY LABELS coll)
        endif()
    endforeach()
endforeach()

# Every algorithm, forced through the SHOAL_COLL_* variables, checked by
# one program (docs/COLLECTIVES.md): a few algorithms per run, then the
# hierarchical forms on hosts faked by SHOAL_COLL_FAKE_HOSTS (SHOAL_LOG
# quiets the warning that the testing aid is no registered variable).
shoal_mp_program(mpi_coll_algo SOURCES coll_algo.c)
target_include_directories(mpi_coll_algo PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
set(coll_algo_a SHOAL_COLL_BARRIER=dissemination SHOAL_COLL_BCAST=binomial
    SHOAL_COLL_ALLREDUCE=recursive_doubling SHOAL_COLL_ALLGATHER=bruck
    SHOAL_COLL_ALLTOALL=pairwise)
set(coll_algo_b SHOAL_COLL_BARRIER=recursive_doubling
    SHOAL_COLL_BCAST=scatter_allgather SHOAL_COLL_ALLREDUCE=rabenseifner
    SHOAL_COLL_ALLGATHER=recursive_doubling SHOAL_COLL_ALLTOALL=bruck)
set(coll_algo_c SHOAL_COLL_BARRIER=shm SHOAL_COLL_BCAST=shm
    SHOAL_COLL_ALLREDUCE=ring SHOAL_COLL_ALLGATHER=ring)
set(coll_algo_hier2 SHOAL_COLL_FAKE_HOSTS=2)
set(coll_algo_hier3 SHOAL_COLL_FAKE_HOSTS=3 SHOAL_COLL_HIER=on
    ${coll_algo_b})
set(coll_algo_hier3r SHOAL_COLL_FAKE_HOSTS=3 SHOAL_COLL_HIER=on
    SHOAL_COLL_ALLREDUCE=ring SHOAL_COLL_BCAST=shm)
foreach(v a b c)
    foreach(np 1 2 3 4 5 6 7 8 9)
        shoal_mp_test(mpi.coll_algo_${v} PROGRAM mpi_coll_algo NP ${np}
                      ENV ${coll_algo_${v}} LABELS mpi coll)
    endforeach()
endforeach()
foreach(v hier2 hier3 hier3r)
    foreach(np 4 5 6 7 8 9)
        shoal_mp_test(mpi.coll_algo_${v} PROGRAM mpi_coll_algo NP ${np}
                      ENV ${coll_algo_${v}} LABELS mpi coll)
    endforeach()
endforeach()
# The measurements behind the automatic choice; built, never run as a test
# (it switches algorithms through base_cfg, hence the internal library).
shoal_mp_program(mpi_coll_algo_bench SOURCES coll_algo_bench.c INTERNAL)
target_include_directories(mpi_coll_algo_bench PRIVATE
                           ${CMAKE_CURRENT_SOURCE_DIR})
