# The collective layer: algorithms as schedules over an abstract transport.
list(APPEND SHOAL_SOURCES
    coll/coll_sched.c
    coll/coll_select.c
    coll/coll_hier.c
    coll/coll_barrier.c
    coll/coll_bcast.c
    coll/coll_reduce.c
    coll/coll_allreduce.c
    coll/coll_scan.c
    coll/coll_shm.c
    coll/coll_shm_fb.c
    coll/coll_shm_seg.c
    coll/coll_gather.c
    coll/coll_alltoall.c
    coll/coll_neighbor.c
    coll/coll_inter.c
    coll/mcast/mcast_frame.c
    coll/mcast/mcast_sock.c
    coll/mcast/mcast_bcast.c)
