# Collectives and reduction operations.

# The op x type matrix, without MPI_Init (links the internal library).
shoal_unit_test(coll_ops SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/coll_op_unit.c
                LABELS mpi coll)

set(coll_np 1 2 3 4 5 8)
foreach(t coll_basic coll_reduce coll_ops coll_vector)
    shoal_mpi_test(${t} SOURCES ${t}.c NP ${coll_np})
endforeach()
shoal_mpi_test(coll_errors SOURCES coll_errors.c NP 1 2 3 8)
# Split, dup and intercommunicators (needs two ranks for the latter).
shoal_mpi_test(coll_comms SOURCES coll_comms.c NP 1 2 3 4 5 8)
