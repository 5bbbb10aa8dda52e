# Datatype tests: constructor layouts byte by byte, subarray and darray
# against brute force, envelope/contents and lifetimes, external32, error
# classes, and the engine underneath (cursor, elements, copy).
shoal_mpi_test(dt_layout SOURCES dt_layout.c NP 1 2)
shoal_mpi_test(dt_array SOURCES dt_array.c NP 1 2)
shoal_mpi_test(dt_contents SOURCES dt_contents.c NP 1 2)
# The MPI-1 calls MPI 3.0 removed, kept for old programs (and
# MPI_Message_c2f/f2c).
shoal_mpi_test(mpi1_removed SOURCES mpi1_removed.c NP 1 2 3)
shoal_mpi_test(dt_external SOURCES dt_external.c NP 1 2)
# The standard's external32 sizes; C long is 4 bytes there.
shoal_mpi_test(dt_ext32 SOURCES dt_ext32.c NP 1)
shoal_mpi_test(dt_errors SOURCES dt_errors.c NP 1 2)
# The large-count (_c) constructors, queries and external32 calls.
shoal_mpi_test(dt_large SOURCES dt_large.c NP 1)
# Derived types through point-to-point (layouts differ on both sides).
shoal_mpi_test(dt_send SOURCES dt_send.c NP 2)

# The engine's internals: linked with the internal library.
shoal_mp_program(mpi_dt_engine SOURCES dt_engine.c INTERNAL)
target_include_directories(mpi_dt_engine PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
shoal_mp_test(mpi.dt_engine PROGRAM mpi_dt_engine NP 1 LABELS mpi)
