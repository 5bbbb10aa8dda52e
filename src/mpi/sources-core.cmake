# src/mpi files of the core area (paths relative to src/).
list(APPEND SHOAL_SOURCES)
