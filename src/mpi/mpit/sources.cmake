# src/mpi/mpit: the tool information interface (MPI_T): control variables,
# performance variables, categories.  Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/mpit/mpit_cvar.c
    mpi/mpit/mpit_pvar.c)
