# MPI over the TCP wire between ranks of one host (SHOAL_WIRES=tcp): point
# to point (eager and rendezvous up to 4 MiB), ordering, a flood, collectives
# and nonblocking collectives.  With SHOAL_SHM_CMA=off the rendezvous data
# cannot be read across processes and travels in frames over TCP, as it
# does between hosts.
set(tcp_env SHOAL_WIRES=tcp)
set(tcp_nocma SHOAL_WIRES=tcp SHOAL_SHM_CMA=off)
foreach(np 2 4)
    shoal_mp_test(mpi.tcp.p2p_basic PROGRAM mpi_p2p_basic NP ${np} ENV ${tcp_env} LABELS mpi)
    shoal_mp_test(mpi.tcp.nocma.p2p_basic PROGRAM mpi_p2p_basic NP ${np}
                  ENV ${tcp_nocma} LABELS mpi)
    shoal_mp_test(mpi.tcp.p2p_order PROGRAM mpi_p2p_order NP ${np} ENV ${tcp_env} LABELS mpi)
    shoal_mp_test(mpi.tcp.coll_basic PROGRAM mpi_coll_basic NP ${np} ENV ${tcp_env} LABELS mpi)
    shoal_mp_test(mpi.tcp.nbc_coll PROGRAM mpi_nbc_coll NP ${np} ENV ${tcp_env} LABELS mpi)
endforeach()
shoal_mp_test(mpi.tcp.p2p_flood PROGRAM mpi_p2p_flood NP 2 ENV ${tcp_env} LABELS mpi)
shoal_mp_test(mpi.tcp.nocma.p2p_basic_push PROGRAM mpi_p2p_basic NP 2
              ENV ${tcp_nocma} SHOAL_MPI_RNDV=push LABELS mpi)
shoal_mp_test(mpi.tcp.coll_reduce PROGRAM mpi_coll_reduce NP 5 ENV ${tcp_env} LABELS mpi)
# The progress thread sleeps on every wire (am_sleep), sockets included.
shoal_mp_test(mpi.tcp.nocma.progress_thread PROGRAM mpi_progress_thread NP 2
              ENV ${tcp_nocma} SHOAL_PROGRESS=thread LABELS mpi thread)
# Two pretend hosts: shm within, TCP between, hierarchical collectives.
set(mixed_env SHOAL_WIRES_FAKE_HOSTS=2 SHOAL_COLL_FAKE_HOSTS=2)
foreach(p p2p_basic coll_basic coll_reduce nbc_coll)
    shoal_mp_test(mpi.mixed.${p} PROGRAM mpi_${p} NP 5 ENV ${mixed_env} LABELS mpi)
endforeach()
# The same with the datagram wire first across pretend hosts: where it is
# not up, TCP takes its peers.
foreach(p p2p_basic coll_basic)
    shoal_mp_test(mpi.mixed_udp.${p} PROGRAM mpi_${p} NP 5
                  ENV SHOAL_WIRES=shm,udp,tcp ${mixed_env} LABELS mpi)
endforeach()
# Four threads per rank sending over TCP (make check-thread: label thread).
shoal_mp_test(mpi.tcp.p2p_threads PROGRAM mpi_p2p_threads NP 2 ENV ${tcp_env} LABELS mpi thread)
