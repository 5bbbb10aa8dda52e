# MPI over each network wire between ranks of one host (SHOAL_WIRES=tcp,
# SHOAL_WIRES=udp: every other rank over that wire): point to point (eager
# and rendezvous up to 4 MiB), ordering, a flood, collectives and
# nonblocking collectives.  With SHOAL_SHM_CMA=off the rendezvous data
# cannot be read across processes and travels in frames over the wire, as
# it does between hosts.
foreach(w tcp udp)
    set(net_env SHOAL_WIRES=${w})
    set(net_nocma SHOAL_WIRES=${w} SHOAL_SHM_CMA=off)
    foreach(np 2 4)
        shoal_mp_test(mpi.${w}.p2p_basic PROGRAM mpi_p2p_basic NP ${np} ENV ${net_env} LABELS mpi)
        shoal_mp_test(mpi.${w}.nocma.p2p_basic PROGRAM mpi_p2p_basic NP ${np}
                      ENV ${net_nocma} LABELS mpi)
        shoal_mp_test(mpi.${w}.p2p_order PROGRAM mpi_p2p_order NP ${np} ENV ${net_env} LABELS mpi)
        shoal_mp_test(mpi.${w}.coll_basic PROGRAM mpi_coll_basic NP ${np} ENV ${net_env} LABELS mpi)
        shoal_mp_test(mpi.${w}.nbc_coll PROGRAM mpi_nbc_coll NP ${np} ENV ${net_env} LABELS mpi)
    endforeach()
    shoal_mp_test(mpi.${w}.p2p_flood PROGRAM mpi_p2p_flood NP 2 ENV ${net_env} LABELS mpi)
    shoal_mp_test(mpi.${w}.nocma.p2p_basic_push PROGRAM mpi_p2p_basic NP 2
                  ENV ${net_nocma} SHOAL_MPI_RNDV=push LABELS mpi)
    shoal_mp_test(mpi.${w}.coll_reduce PROGRAM mpi_coll_reduce NP 5 ENV ${net_env} LABELS mpi)
    # The progress thread sleeps on every wire (am_sleep), sockets included.
    shoal_mp_test(mpi.${w}.nocma.progress_thread PROGRAM mpi_progress_thread NP 2
                  ENV ${net_nocma} SHOAL_PROGRESS=thread LABELS mpi thread)
    # Four threads per rank sending over the wire (make check-thread: label thread).
    shoal_mp_test(mpi.${w}.p2p_threads PROGRAM mpi_p2p_threads NP 2 ENV ${net_env} LABELS mpi thread)
endforeach()
# The datagram wire dropping 5%, duplicating 3% and reordering 5% of what
# each rank sends (SHOAL_UDP_FAULTS): exactly-once, in-order delivery and
# the contents are what the programs check.
set(udp_faults SHOAL_WIRES=udp SHOAL_UDP_FAULTS=drop=50,dup=30,reorder=50)
foreach(p p2p_basic p2p_order coll_basic)
    shoal_mp_test(mpi.udp.faults.${p} PROGRAM mpi_${p} NP 4 ENV ${udp_faults} LABELS mpi)
endforeach()
shoal_mp_test(mpi.udp.faults.nocma.p2p_basic PROGRAM mpi_p2p_basic NP 2
              ENV ${udp_faults} SHOAL_SHM_CMA=off LABELS mpi)
# An Ethernet MTU (datagrams of 1472 bytes): a rendezvous fragment spans
# many datagrams, which the wire receives straight into the receive buffer
# (am_set_place), in order, with faults, and alongside other traffic.
set(udp_eth SHOAL_WIRES=udp SHOAL_UDP_MTU=1500 SHOAL_SHM_CMA=off SHOAL_LOG=info)
foreach(np 2 4)
    shoal_mp_test(mpi.udp.mtu1500.p2p_basic PROGRAM mpi_p2p_basic NP ${np}
                  ENV ${udp_eth} LABELS mpi)
    shoal_mp_test(mpi.udp.mtu1500.p2p_order PROGRAM mpi_p2p_order NP ${np}
                  ENV ${udp_eth} LABELS mpi)
    shoal_mp_test(mpi.udp.mtu1500.faults.p2p_basic PROGRAM mpi_p2p_basic NP ${np}
                  ENV ${udp_eth} SHOAL_UDP_FAULTS=drop=20,dup=10,reorder=20 LABELS mpi)
endforeach()
shoal_mp_test(mpi.udp.mtu1500.p2p_basic_push PROGRAM mpi_p2p_basic NP 2
              ENV ${udp_eth} SHOAL_MPI_RNDV=push LABELS mpi)
shoal_mp_test(mpi.udp.mtu1500.coll_basic PROGRAM mpi_coll_basic NP 4
              ENV ${udp_eth} LABELS mpi)
# Two pretend hosts: shm within, TCP between, hierarchical collectives.
set(mixed_env SHOAL_WIRES_FAKE_HOSTS=2 SHOAL_COLL_FAKE_HOSTS=2)
foreach(p p2p_basic coll_basic coll_reduce nbc_coll)
    shoal_mp_test(mpi.mixed.${p} PROGRAM mpi_${p} NP 5
                  ENV SHOAL_WIRES=shm,tcp ${mixed_env} LABELS mpi)
endforeach()
# The default wires (shm,udp,tcp): the datagram wire across pretend hosts.
foreach(p p2p_basic coll_basic)
    shoal_mp_test(mpi.mixed_udp.${p} PROGRAM mpi_${p} NP 5
                  ENV ${mixed_env} LABELS mpi)
endforeach()
