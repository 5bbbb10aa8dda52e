# src/mpi files of the coll area (paths relative to src/).
list(APPEND SHOAL_SOURCES
    mpi/mpi_op.c
    mpi/mpi_coll.c
    mpi/mpi_coll_rooted.c
    mpi/mpi_coll_all.c
    mpi/mpi_coll_nb.c
    mpi/mpi_neighbor.c)
