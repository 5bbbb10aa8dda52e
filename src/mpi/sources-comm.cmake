# src/mpi files of the comm area (paths relative to src/).
list(APPEND SHOAL_SOURCES)
