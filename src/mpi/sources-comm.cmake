# src/mpi files of the comm area (paths relative to src/).
list(APPEND SHOAL_SOURCES
    mpi/mpi_attr.c
    mpi/mpi_comm.c
    mpi/mpi_comm_create.c
    mpi/mpi_comm_dup.c
    mpi/mpi_comm_idup.c
    mpi/mpi_comm_split.c
    mpi/mpi_ctx.c
    mpi/mpi_errh.c
    mpi/mpi_group.c
    mpi/mpi_handle.c
    mpi/mpi_info.c
    mpi/mpi_intercomm.c
    mpi/mpi_members.c
    mpi/mpi_topo.c
    mpi/mpi_topo_graph.c)
