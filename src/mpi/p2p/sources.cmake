# src/mpi/p2p: point-to-point: the engine (matching, eager and rendezvous) and the calls.
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/p2p/p2p_api.c
    mpi/p2p/p2p_bsend.c
    mpi/p2p/p2p_engine.c)
