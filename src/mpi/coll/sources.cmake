# src/mpi/coll: the collective calls, reduction ops and the tolerant barrier, over src/coll.
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/coll/coll_api_all.c
    mpi/coll/coll_api_neighbor.c
    mpi/coll/coll_api_rooted.c
    mpi/coll/coll_forms.c
    mpi/coll/coll_tolerant.c
    mpi/coll/coll_transport.c
    mpi/coll/op.c)
