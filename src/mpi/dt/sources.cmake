# src/mpi/dt: datatypes: constructors, the layout builder, the pack engine, external32.
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/dt/dt_array.c
    mpi/dt/dt_build.c
    mpi/dt/dt_create.c
    mpi/dt/dt_engine.c
    mpi/dt/dt_external.c
    mpi/dt/dt_obj.c
    mpi/dt/dt_pack.c
    mpi/dt/dt_predef.c
    mpi/dt/dt_query.c)
