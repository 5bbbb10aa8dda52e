# src/mpi files of the coll area (paths relative to src/).
list(APPEND SHOAL_SOURCES)
