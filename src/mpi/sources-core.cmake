# src/mpi files of the core area: environment, errors, point-to-point.
list(APPEND SHOAL_SOURCES
    mpi/mpi_bsend.c
    mpi/mpi_comm_core.c
    mpi/mpi_err.c
    mpi/mpi_group_core.c
    mpi/mpi_init.c
    mpi/mpi_p2p.c
    mpi/mpi_progress.c
    mpi/mpi_tolerant.c
    mpi/mpi_pt2pt.c
    mpi/mpi_req.c
    mpi/mpi_status.c)
