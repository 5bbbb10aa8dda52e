# src/mpi files of the dt area (paths relative to src/).
list(APPEND SHOAL_SOURCES
    mpi/mpi_dt_predef.c
    mpi/mpi_dt_obj.c
    mpi/mpi_dt_build.c
    mpi/mpi_dt_create.c
    mpi/mpi_dt_array.c
    mpi/mpi_dt_engine.c
    mpi/mpi_dt_pack.c
    mpi/mpi_dt_external.c
    mpi/mpi_dt_query.c)
