# src/mpi/comm: groups, communicators (construction and context ids), attributes, topologies.
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/comm/attr.c
    mpi/comm/comm_api.c
    mpi/comm/comm_create.c
    mpi/comm/comm_ctx.c
    mpi/comm/comm_dup.c
    mpi/comm/comm_from_group.c
    mpi/comm/comm_idup.c
    mpi/comm/comm_intercomm.c
    mpi/comm/comm_members.c
    mpi/comm/comm_obj.c
    mpi/comm/comm_split.c
    mpi/comm/group_api.c
    mpi/comm/group_obj.c
    mpi/comm/topo_cart.c
    mpi/comm/topo_graph.c)
