# The MPI layer, one room per chapter group: core (environment, errors,
# requests), p2p, dt (datatypes), comm (groups, communicators, attributes,
# topologies), coll (collectives) and mpit (the tool interface).  Each
# room lists its own files.
# mpi_impl.h, the contract between the rooms, stays here.
foreach(room core p2p dt comm coll mpit)
    include(${CMAKE_CURRENT_LIST_DIR}/${room}/sources.cmake)
endforeach()
