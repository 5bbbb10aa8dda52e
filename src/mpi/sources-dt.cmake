# src/mpi files of the dt area (paths relative to src/).
list(APPEND SHOAL_SOURCES)
