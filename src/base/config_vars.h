/*
 * The registry of every SHOAL_* environment variable.  One line each:
 *   BASE_CONFIG_VAR(NAME, TYPE, default, extra, scope, one-line doc)
 * NAME is the variable without its SHOAL_ prefix and is also the field of
 * base_cfg.  TYPE is INT, SIZE, BOOL, ENUM, STRING or DURATION; extra is
 * "min:max" for numbers and "a|b|c" for enums (the first choice is index 0).
 * scope is "library" (read by every rank), "shoalrun" (read by the launcher)
 * or "both".  docs/CONFIG.md is generated from this list (shoal-info
 * --config=markdown) and a test keeps the two equal.
 *
 * No include guard: this file is included several times with different
 * definitions of BASE_CONFIG_VAR.
 */

/* base */
BASE_CONFIG_VAR(LOG, ENUM, "warn", "error|warn|info|debug|trace", "both",
                "Messages at this level and more severe are printed to stderr")

/* boot */
BASE_CONFIG_VAR(BOOT, ENUM, "auto", "auto|pmi1|pmi2|pmix|single", "library",
                "Bootstrap backend; auto tries PMIx (PMIX_*), then PMI-2 under Slurm or PMI-1 on PMI_FD or PMI_PORT, else runs as a single rank")
BASE_CONFIG_VAR(BOOT_TIMEOUT, DURATION, "120s", "1ms:1000000s", "library",
                "How long a rank waits for one reply of the launcher before giving up")

/* wire/shm */
BASE_CONFIG_VAR(SHM_CELLS, INT, "128", "2:65536", "library",
                "Cells (320-byte message slots) in each shared-memory channel; a power of two")
BASE_CONFIG_VAR(SHM_BULK, SIZE, "256k", "4k:1g", "library",
                "Bytes of each shared-memory channel's ring for medium payloads; a power of two")
BASE_CONFIG_VAR(SHM_CMA, ENUM, "auto", "auto|on|off", "library",
                "Single-copy long messages with process_vm_writev; auto uses it when the kernel allows")
BASE_CONFIG_VAR(SHM_CMA_MIN, SIZE, "16k", "0:1g", "library",
                "Long payloads of at least this many bytes move by cross-memory attach, smaller ones through the bulk ring")

BASE_CONFIG_VAR(SHM_FENCE, ENUM, "auto", "auto|full", "library",
                "Doorbell ordering: auto moves the fence to sleeping ranks with membarrier when every rank can; full fences every message")

/* wire/tcp */
BASE_CONFIG_VAR(TCP_ADDR, STRING, "", "", "library",
                "IPv4 address this rank listens on for TCP peers; empty picks SHOAL_TCP_IF's or the first non-loopback interface's")
BASE_CONFIG_VAR(TCP_IF, STRING, "", "", "library",
                "Network interface (e.g. eth0) whose IPv4 address TCP listens on, when SHOAL_TCP_ADDR is empty")
BASE_CONFIG_VAR(TCP_QUEUE, SIZE, "512k", "16k:256m", "library",
                "Bytes of each TCP connection's send queue (a power of two); frames and long fragments are at most half of it")
BASE_CONFIG_VAR(TCP_HANDSHAKE_TIMEOUT, DURATION, "10s", "1ms:1000s", "library",
                "A TCP connection that has not proved the job's secret within this time is closed")
BASE_CONFIG_VAR(TCP_DEAD_TIMEOUT, DURATION, "20s", "0:3600s", "library",
                "A TCP peer whose link stays silent this long (data in flight and no ACK, a closed window whose probes go unanswered, or keepalive probes unanswered: then at least 3 s) is reported dead; a peer that only reads nothing (busy) is not; 0 leaves it to the kernel (about 15 minutes)")
BASE_CONFIG_VAR(TCP_POLL_MAX, INT, "64", "1:65536", "library",
                "While a network wire (TCP, udp) is quiet, progress polls it only every N-th call, N doubling up to this (a rank alone on its host polls every call)")

/* udp: the datagram wire (docs/DATAGRAM.md) */
BASE_CONFIG_VAR(UDP_ADDR, STRING, "", "", "library",
                "IPv4 or IPv6 address the datagram wire binds; empty picks SHOAL_UDP_IF's (else SHOAL_TCP_IF's) first address of SHOAL_UDP_FAMILY, SHOAL_TCP_ADDR for IPv4 when set, or the first non-loopback interface's")
BASE_CONFIG_VAR(UDP_IF, STRING, "", "", "library",
                "Network interface whose address the datagram wire binds, when SHOAL_UDP_ADDR is empty (empty: SHOAL_TCP_IF)")
BASE_CONFIG_VAR(UDP_FAMILY, ENUM, "ipv4", "ipv4|ipv6", "library",
                "Address family the datagram wire looks for on an interface (SHOAL_UDP_ADDR may name either)")
BASE_CONFIG_VAR(UDP_MTU, SIZE, "0", "0:65535", "library",
                "Largest IP packet the datagram wire sends (header included); 0 takes the interface's MTU")
BASE_CONFIG_VAR(UDP_QUEUE, SIZE, "1m", "64k:256m", "library",
                "Bytes of each peer's send ring on the datagram wire (a power of two), kept until the peer acknowledges them; frames are at most half of it")
BASE_CONFIG_VAR(UDP_WINDOW, INT, "256", "8:32768", "library",
                "Datagrams a sender may have unacknowledged at one peer on the datagram wire (rounded down to a power of two, and to what the receive buffer holds)")
BASE_CONFIG_VAR(UDP_GSO, ENUM, "on", "off|on", "library",
                "Segmentation offload on the datagram wire: a window of datagrams leaves in one sendmsg (UDP_SEGMENT) and arrives coalesced where the kernel can (UDP_GRO)")
BASE_CONFIG_VAR(UDP_PAIRS, INT, "2", "0:64", "library",
                "A rank with at most this many peers on the datagram wire and none in shared memory gives each a socket of its own, bound to the data port and connected to the peer's, which both sends and receives (the kernel's connected fast path on both sides; each is read at every poll, so for a few peers only); with more, all share the data socket; 0: never")
BASE_CONFIG_VAR(UDP_XDP, ENUM, "off", "off|auto|on", "library",
                "Kernel bypass for the datagram wire: the same datagrams through an AF_XDP socket on the bound interface (needs libxdp at build and run time, root or CAP_NET_ADMIN+CAP_NET_RAW+CAP_BPF, one rank per interface); auto uses it where it works, on also warns where it does not; the UDP socket path runs otherwise")
BASE_CONFIG_VAR(UDP_RTO_MIN, DURATION, "2ms", "100us:10s", "library",
                "Shortest retransmission timeout of the datagram wire (the timeout follows the measured round trip)")
BASE_CONFIG_VAR(UDP_ACK_DELAY, DURATION, "200us", "0:1s", "library",
                "How long an acknowledgement may wait for a datagram back to the same peer to ride on before it goes on its own")
BASE_CONFIG_VAR(UDP_DEAD_TIMEOUT, DURATION, "20s", "0:3600s", "library",
                "A peer of the datagram wire that answers nothing (data, acknowledgements or liveness probes) this long while data to it waits is reported dead; a peer that only computes still answers probes; 0 never")
BASE_CONFIG_VAR(UDP_PROBE_TIMEOUT, DURATION, "2s", "0:600s", "library",
                "Before its first frame to a peer, the datagram wire probes whether datagrams pass both ways; with no answer this long (or an ICMP error) the peer is reached by the next wire in SHOAL_WIRES (TCP in shm,udp,tcp); 0 skips the probe")
BASE_CONFIG_VAR(UDP_FAULTS, STRING, "", "", "library",
                "Testing aid: drop=N,dup=N,reorder=N (per mille) of the datagrams this rank sends are dropped, sent twice or sent after the next one")

/* am */
BASE_CONFIG_VAR(AM_MEDIUM_MAX, SIZE, "64k", "64:256m", "library",
                "Largest medium payload; at most half of SHOAL_SHM_BULK")
BASE_CONFIG_VAR(AM_WINDOW, INT, "64", "1:65536", "library",
                "Requests a rank may have outstanding to one peer before it must wait for credits")
BASE_CONFIG_VAR(WIRES, STRING, "shm,udp,tcp", "", "library",
                "Wires in order of preference, a comma-separated list of shm, udp and tcp: each peer goes to the first listed wire that is up and reaches it (shm: ranks of this host); the default takes the datagram wire between hosts and TCP to a host whose UDP is blocked or down; tcp sends to every other rank over TCP (a test of TCP on one host), shm never leaves the host")
BASE_CONFIG_VAR(WIRES_FAKE_HOSTS, INT, "0", "0:65536", "library",
                "Testing aid: ranks of one machine on different pretend hosts (rank r on host r*K/size) talk over the network wires, as across real hosts; 0 uses the real placement")
BASE_CONFIG_VAR(WIRES_FAKE_PLACE, ENUM, "block", "block|cyclic", "library",
                "Testing aid, with SHOAL_WIRES_FAKE_HOSTS=K: block puts rank r on pretend host r*K/size (srun's default distribution), cyclic on host r mod K (srun -m cyclic)")
BASE_CONFIG_VAR(CONNECT, ENUM, "ondemand", "ondemand|all", "library",
                "Open connections to peers on first use, or to every peer during initialization")
BASE_CONFIG_VAR(WAIT, ENUM, "adaptive", "adaptive|poll|block", "library",
                "How a rank waits for messages: spin then yield then sleep, only spin, or sleep at once")
BASE_CONFIG_VAR(WAIT_SPIN, DURATION, "50us", "0:1000s", "library",
                "Adaptive wait: how long to spin before yielding when this rank has a core of its own")
BASE_CONFIG_VAR(WAIT_BLOCK, DURATION, "2ms", "0:1000s", "library",
                "Adaptive wait: how long to spin and yield before sleeping on the doorbell")
BASE_CONFIG_VAR(PEER_CHECK, DURATION, "250ms", "1ms:1000s", "library",
                "How often a sleeping rank checks that the peers it talks to are still alive")
BASE_CONFIG_VAR(WAIT_CHECK, ENUM, "warn", "warn|fatal|off", "library",
                "A sleep that lasted until its peer check although what it waited for was already there (a lost wake-up): warn once, end the rank (tests), or ignore")

/* fault tolerance (docs/FT.md) */
BASE_CONFIG_VAR(FT, BOOL, "0", "", "both",
                "Fault-tolerant run (shoalrun --ft sets it): a rank's death does not end the job; survivors get MPIX_ERR_PROC_FAILED and may go on with the ULFM calls of mpi-ext.h")
BASE_CONFIG_VAR(FT_DETECT, DURATION, "50ms", "1ms:1000s", "library",
                "With SHOAL_FT: how long a waiting rank goes at most without looking for dead peers (the launcher's notices, the host's processes); replaces SHOAL_PEER_CHECK when shorter")
BASE_CONFIG_VAR(FT_TIMEOUT, DURATION, "10s", "0:3000s", "both",
                "With SHOAL_FT: a rank stopped (SIGSTOP, a debugger's stop) without a break longer than this is taken for dead: the launcher of its host (under MPICH's Hydra, srun and PMIx launchers, the rank's guardian process) kills it and every survivor is told, as of any death; one stopped for less goes on; it is also the wires' silence timeout: SHOAL_TCP_DEAD_TIMEOUT and SHOAL_UDP_DEAD_TIMEOUT become it plus 2 s when not set; 0: never (and no guardian under srun or PMIx launchers)")
BASE_CONFIG_VAR(FT_ACCUSE, BOOL, "0", "", "library",
                "Set by shoalrun --ft: a rank whose wire gives up a rank of another host does not take it for dead alone; it accuses it to the launcher, which takes one of the two for dead, kills it and tells every rank, so that a link cut between two hosts ends one side, not both (docs/FT.md, Partitions); 0: each rank decides alone, as under other launchers")
BASE_CONFIG_VAR(FT_NOTICES, BOOL, "1", "", "shoalrun",
                "Testing aid: with --ft, 0 makes shoalrun tell the ranks nothing of a death, as srun and PMIx launchers do; the ranks then learn of it from their wires and from each other (docs/FT.md)")
BASE_CONFIG_VAR(CKPT_DIR, STRING, "", "", "library",
                "Directory MPIX_Checkpoint writes checkpoints to (ckpt.<epoch>/rank.<r>); set by shoalrun --checkpoint-dir or --restart")
BASE_CONFIG_VAR(CKPT_RESTART, BOOL, "0", "", "library",
                "MPIX_Checkpoint_restarted loads the newest complete checkpoint of SHOAL_CKPT_DIR; set by shoalrun --restart")
BASE_CONFIG_VAR(CKPT_NORANDOM, BOOL, "1", "", "library",
                "With SHOAL_CKPT_DIR: the rank turns address-space randomization off and executes itself again before main, so that the library's predefined handles, the program's functions and the objects a restart brings back keep their addresses (docs/FT.md); 0 keeps randomization, and a restart then brings back no communicators, groups or datatypes")
BASE_CONFIG_VAR(CKPT_TRIGGER, BOOL, "0", "", "library",
                "Set by shoalrun with a checkpoint directory on one host: the launcher may ask for checkpoints (--checkpoint-every, SIGUSR1), taken in MPIX_Checkpoint_if_requested")
BASE_CONFIG_VAR(CKPT_KILL, STRING, "", "", "library",
                "For tests: RANK@EPOCH:PHASE makes that rank kill itself (SIGKILL) inside checkpoint EPOCH at PHASE: made (directory made, nothing written), written (its image renamed, not confirmed), complete (rank 0: COMPLETE on disk, older checkpoints not removed)")

/* mpi */
BASE_CONFIG_VAR(MPI_EAGER, SIZE, "16k", "0:256m", "library",
                "MPI messages up to this size go eagerly in one frame (capped by SHOAL_AM_MEDIUM_MAX); larger ones by rendezvous")
BASE_CONFIG_VAR(MPI_EAGER_WINDOW, SIZE, "1m", "1k:1g", "library",
                "Eager bytes (plus 64 per message) a sender may have unconsumed at one receiver before it switches to rendezvous")
BASE_CONFIG_VAR(MPI_RNDV, ENUM, "pull", "pull|push", "library",
                "Rendezvous on one host: the receiver reads the sender's buffer in one copy (pull), or the sender pushes fragments (push)")
BASE_CONFIG_VAR(MPI_COOP, SIZE, "32k", "0:1t", "library",
                "Rendezvous messages on one host from this size are copied by both processes at once, half each (0: the receiver copies alone)")
BASE_CONFIG_VAR(MPI_STDOUT, ENUM, "line", "line|keep", "library",
                "MPI_Init makes stdout line-buffered when it is not a terminal (a pipe to the launcher, as under shoalrun), so each line leaves as it is printed, also just before a crash or a kill, as under Open MPI's pseudo-terminal (line); or leaves the C library's buffering as it is (keep)")
BASE_CONFIG_VAR(MPI_THREAD, ENUM, "auto", "auto|single|multiple", "library",
                "Thread level MPI_Init_thread provides: what was asked (auto), at most MPI_THREAD_SERIALIZED (single), or always MPI_THREAD_MULTIPLE")
BASE_CONFIG_VAR(MPI_INITIAL_ERRHANDLER, ENUM, "mpi_errors_are_fatal", "mpi_errors_are_fatal|mpi_errors_abort|mpi_errors_return", "library",
                "The initial error handler (MPI 4.0's mpi_initial_errhandler; shoalrun --initial-errhandler sets it): MPI_Init installs it on MPI_COMM_WORLD and MPI_COMM_SELF, so errors of those and of calls tied to no communicator go to it; MPI_INFO_ENV reports it")

/* coll: collective algorithms (auto picks by communicator and message size;
 * docs/COLLECTIVES.md has the measurements behind the defaults) */
BASE_CONFIG_VAR(COLL_BARRIER, ENUM, "auto", "auto|dissemination|recursive_doubling|shm", "library",
                "MPI_Barrier algorithm: shared-memory flags within a host, dissemination or recursive doubling rounds of messages")
BASE_CONFIG_VAR(COLL_BCAST, ENUM, "auto", "auto|binomial|scatter_allgather|shm", "library",
                "MPI_Bcast algorithm: binomial tree, scatter then ring allgather (long messages), or a shared buffer within a host")
BASE_CONFIG_VAR(COLL_ALLREDUCE, ENUM, "auto", "auto|recursive_doubling|rabenseifner|ring|shm", "library",
                "MPI_Allreduce algorithm: recursive doubling (short), Rabenseifner's reduce-scatter plus allgather, ring, or in place in a shared buffer within a host")
BASE_CONFIG_VAR(COLL_ALLGATHER, ENUM, "auto", "auto|bruck|recursive_doubling|ring", "library",
                "MPI_Allgather(v) algorithm: Bruck (short, any size), recursive doubling (powers of two), or ring (long)")
BASE_CONFIG_VAR(COLL_ALLTOALL, ENUM, "auto", "auto|pairwise|bruck", "library",
                "MPI_Alltoall algorithm: pairwise exchange, or Bruck's log p rounds for short blocks")
BASE_CONFIG_VAR(MCAST, ENUM, "auto", "auto|on|off", "library",
                "MPI_Bcast between hosts over IP multicast, made reliable with NACKs (docs/DATAGRAM.md): on from SHOAL_MCAST_MIN bytes, auto when the communicator spans at least SHOAL_MCAST_HOSTS hosts, off never")
BASE_CONFIG_VAR(MCAST_MIN, SIZE, "256k", "0:1g", "library",
                "Smallest MPI_Bcast message that goes over multicast; smaller ones take the point-to-point algorithms")
BASE_CONFIG_VAR(MCAST_HOSTS, INT, "3", "2:65536", "library",
                "SHOAL_MCAST=auto: fewest hosts a communicator must span for multicast broadcast")
BASE_CONFIG_VAR(MCAST_GROUP, STRING, "239.193.0.0", "", "library",
                "IPv4 multicast base address; each communicator gets a group in the /16 from it (a hash of the job and the communicator)")
BASE_CONFIG_VAR(MCAST_GROUP6, STRING, "ff18::5348:0:0", "", "library",
                "IPv6 multicast base address, for a network wire on IPv6; each communicator gets a group in the /96 from it (a hash of the job and the communicator)")
BASE_CONFIG_VAR(MCAST_PORT, INT, "0", "0:65535", "library",
                "UDP port of the multicast groups; 0 derives one from the job id (30000..59999)")
BASE_CONFIG_VAR(MCAST_WINDOW, INT, "2048", "16:65536", "library",
                "Most multicast fragments the root sends beyond what every receiver confirmed (the window grows to this, halving at loss)")
BASE_CONFIG_VAR(MCAST_RTO, DURATION, "2ms", "100us:10s", "library",
                "Least time before the root sends a fragment again (the measured round trip raises it); receivers report at this interval while data is missing")
BASE_CONFIG_VAR(MCAST_FALLBACK, INT, "5", "1:1000", "library",
                "Retransmission timeouts without progress at a receiver before the root sends it the data point-to-point (and stops multicasting to it on this communicator)")
BASE_CONFIG_VAR(COLL_HIER, ENUM, "auto", "auto|on|off", "library",
                "Hierarchical collectives (within each host, then between hosts) when a communicator spans hosts with several ranks each")
BASE_CONFIG_VAR(COLL_FAKE_HOSTS, INT, "0", "0:65536", "library",
                "Testing aid: treat a job on one machine as spread over this many hosts (rank r on host r*K/size), so hierarchical collectives run; 0 uses the real placement")
BASE_CONFIG_VAR(BARRIER, ENUM, "blocking", "blocking|tolerant", "library",
                "MPI_Barrier semantics: wait for every rank (blocking), or return at once and hold back later messages until the barrier completes (tolerant, Pakin)")
BASE_CONFIG_VAR(PROGRESS, ENUM, "none", "none|thread", "library",
                "Who advances messages and nonblocking collectives: the application's MPI calls (none), or also a progress thread per process")

/* task */
BASE_CONFIG_VAR(TASK_COPIES, INT, "2", "1:64", "library",
                "Task runtime: copies of one job that may run at once (the extra ones on idle workers, the first to finish wins); 1 turns redundancy off")
BASE_CONFIG_VAR(TASK_SUSPECT, DURATION, "2s", "10ms:1000000s", "library",
                "Task runtime: how long a worker may stay silent (stopped, cut off) before its jobs run elsewhere; doubled for a worker each time it speaks again (up to 16 times), halved after a stretch without a long silence")
BASE_CONFIG_VAR(TASK_HEARTBEAT, DURATION, "200ms", "1ms:1000s", "library",
                "Task runtime: how often a worker tells the coordinator it is alive")
BASE_CONFIG_VAR(TASK_END_WAIT, DURATION, "120s", "0:1000000s", "library",
                "Task runtime: how long the coordinator, at the end of the run, waits for the goodbye of workers that stay silent (stopped, starved) before it leaves; workers it still hears from get the larger of 10 s and twice SHOAL_TASK_SUSPECT")
BASE_CONFIG_VAR(TASK_CRASHES, INT, "3", "1:1000", "library",
                "Task runtime: runs of one job that may crash the same way in a row before the run ends with the job's path")
BASE_CONFIG_VAR(TASK_SUSPECT_LOCKS, INT, "1000", "0:1000000000", "library",
                "Task runtime: lock requests of one run of a job (since it last resumed) after which it is taken for busy waiting and given a lower priority; 0 never")
BASE_CONFIG_VAR(TASK_HEAP, SIZE, "64m", "0:64g", "library",
                "Task runtime: bytes of the shared heap (shoal_task_alloc), mapped at one fixed address in every worker")
BASE_CONFIG_VAR(TASK_SEED, INT, "0", "0:2147483647", "library",
                "Task runtime: the seed of every job's random stream (shoal_task_rand)")
BASE_CONFIG_VAR(TASK_PAGES, ENUM, "on", "off|on|coord", "library",
                "Task runtime: a child job fetches its parent's shared pages when it first touches them (on); off ships it the parent's whole state with the job; coord takes every page from the coordinator (a test of the fallback used when a page's source is gone)")
BASE_CONFIG_VAR(TASK_TEMPLATE, ENUM, "on", "off|on", "library",
                "Task runtime: copies of jobs are cloned from a template process that barely writes (on), not forked from the worker (off)")
BASE_CONFIG_VAR(TASK_REUSE, INT, "256", "1:1000000", "library",
                "Task runtime: runs of jobs one copy process may make one after another (a finished copy waits for its worker's next job instead of exiting); 1 makes a process per run")
BASE_CONFIG_VAR(TASK_IDLE, INT, "128", "0:1024", "library",
                "Task runtime: finished copies' processes a worker keeps waiting for later jobs (warm copies, SHOAL_TASK_REUSE); a nested block's parent keeps its process while it waits, so a shape with more parents waiting at once than this forks processes each time it runs; 0 keeps none")
BASE_CONFIG_VAR(TASK_FAILOVER, ENUM, "on", "off|on", "library",
                "Task runtime: when the coordinator's rank dies, the lowest rank alive coordinates and runs the program again from its start (off: the run ends)")

/* shoalrun */
BASE_CONFIG_VAR(BIND_TO, ENUM, "auto", "auto|core|none", "shoalrun",
                "shoalrun --bind-to default: pin rank i to the i-th CPU (core), leave placement to the kernel (none), or the measured default, core (auto)")
BASE_CONFIG_VAR(NOISE, STRING, "", "", "shoalrun",
                "Make ranks unresponsive on purpose (same syntax as shoalrun --noise): e.g. rank=1,stop=5ms,every=50ms or rank=0,busy")
BASE_CONFIG_VAR(RSH, STRING, "ssh", "", "shoalrun",
                "shoalrun --rsh default: the remote-exec command that starts a daemon on each remote host (split into words; the host name and the daemon command are appended)")
BASE_CONFIG_VAR(FANOUT, INT, "32", "1:4096", "shoalrun",
                "shoalrun --fanout default: how many daemons the launcher and each daemon start and serve (the width of the daemon tree)")
BASE_CONFIG_VAR(HOST_TIMEOUT, DURATION, "10s", "100ms:1000000s", "shoalrun",
                "How long shoalrun waits for a daemon to connect back, and how long a daemon or its parent may stay silent before the host counts as lost")
BASE_CONFIG_VAR(EXIT_GRACE, DURATION, "5s", "0:1000000s", "shoalrun",
                "When a rank fails after it finalized, or exits 0 without finalizing, how long shoalrun lets the other ranks run on to exit and flush their output before it stops them (SIGTERM, then SIGKILL 1 s later); 0 stops them at once")
