#!/bin/bash
# shoalrun across hosts, one case per run:
#   multihost_test.sh CASE SHOALRUN HELLO HELPER
# Hosts are network namespaces ($P-h0, $P-h1, ...) with veth pairs to a
# bridge in a namespace of their own ($P-sw), addresses 10.77.3.10+i/24;
# the remote-exec command is `ip netns exec` and hosts are given as
# NAME=ADDRESS (namespaces have no DNS).  Nothing touches the root
# namespace's network, and every name carries this run's prefix, so runs
# in parallel do not meet.  HELLO is mh_hello.c, HELPER is the launcher
# tests' launcher_helper.c.  The trap kills whatever still runs in our
# namespaces, deletes them and our /dev/shm objects.
set -u
case_name=$1
SHOALRUN=$2
HELLO=$3
HELPER=$4
P="shl-$$-$RANDOM"
M="shoalmh-$$-$RANDOM-$case_name"
tmp=$(mktemp -d)
prefix=""
rc=0
made=""

# skip, count_out, kill_namespaces, make_bridge, bridge_host
. "$(dirname "$0")/mh_lib.sh" ||
    { echo "FAIL ($case_name): cannot source mh_lib.sh"; exit 1; }

cleanup() {
    kill_namespaces
    [ -n "$prefix" ] && rm -f /dev/shm/"$prefix"*
    rm -rf "$tmp"
}
trap cleanup EXIT
# fail, now_ns, ms_since: without them every bound below would loop forever
# (a failed `[` and a missing `fail` are both just false), so stop here.
. "$(dirname "$0")/../launcher/test_lib.sh" ||
    { echo "FAIL ($case_name): cannot source test_lib.sh"; exit 1; }

# ---- the network wire ----------------------------------------------------------

# MH_WIRE (tcp, the default here, or udp): the wire between hosts of the
# cases that run AM and MPI traffic.  The ranks get SHOAL_WIRES=shm,tcp or
# shm,udp (shoalrun passes its environment to remote ranks), so every byte
# between hosts goes over that wire, with nothing to fall back on.  The
# udp_* cases are the datagram wire's own; default_wires leaves
# SHOAL_WIRES unset (the library's default, shm,udp,tcp).
case $case_name in udp_*) MH_WIRE=udp ;; esac
wire=${MH_WIRE:-tcp}
case $wire in
tcp) export SHOAL_WIRES=shm,tcp ;;
udp) export SHOAL_WIRES=shm,udp ;;
*) echo "FAIL ($case_name): MH_WIRE=$wire: want tcp or udp"; exit 1 ;;
esac
[ "$case_name" = default_wires ] && unset SHOAL_WIRES

# am_traffic random counts for the udp cases that need traffic lasting
# seconds (udp_link_cut: past a 1 s cut; udp_strangers: while they send).
LINK_CUT_COUNT=300000
STRANGER_COUNT=300000

# ---- hosts -------------------------------------------------------------------

# make_hosts N: namespaces $P-h0 .. $P-h(N-1) and $P-l (a login node for
# the launcher, 10.77.3.2) on one bridge.
make_hosts() {
    local n=$1 i
    make_bridge
    for i in $(seq 0 "$((n - 1))"); do
        bridge_host "$i" "$P-h$i" "10.77.3.$((10 + i))"
    done
    bridge_host "$n" "$P-l" 10.77.3.2
}

# host I [SLOTS]: the --host word of host I
host() { echo "$P-h$1=10.77.3.$((10 + $1)):${2:-2}"; }

# in NS CMD...: run CMD in namespace NS
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# hosts_do CMD...: run CMD in every host's namespace ($P-h*: not the
# switch, not the login node); status 1 at the first that fails.
hosts_do() {
    local ns
    for ns in $made; do
        case $ns in "$P-h"*) ;; *) continue ;; esac
        ip netns exec "$ns" "$@" || return 1
    done
}

# drop_at_random PROTO: every host drops 5% of the PROTO packets it
# receives (iptables' statistic match); skips where that cannot work.
drop_at_random() {
    hosts_do iptables -A INPUT -p "$1" -m statistic --mode random \
        --probability 0.05 -j DROP 2>"$tmp/ipt" ||
        skip "iptables statistic match unavailable: $(head -1 "$tmp/ipt")"
}

# run NS ARGS...: shoalrun in namespace NS, output captured; sets rc.
run() {
    local ns=$1
    shift
    SHOAL_RSH="ip netns exec" in_ns "$ns" "$SHOALRUN" "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# run_within MS NS ARGS...: run, which must end within MS ms.
run_within() {
    local limit=$1 t0 took
    shift
    t0=$(now_ns)
    run "$@"
    took=$(ms_since "$t0")
    [ "$took" -lt "$limit" ] || fail "the job took $took ms to end"
}

# fake_rsh BODY: $tmp/rsh, a remote-exec command running the sh code BODY.
fake_rsh() {
    printf '#!/bin/sh\n%s\n' "$1" >"$tmp/rsh"
    chmod +x "$tmp/rsh"
}

# start NS ARGS...: the same in the background; sets pid.
start() {
    local ns=$1
    shift
    # (Emptied first: the background job's redirection runs only when it
    # is scheduled, and a wait right after start must not read the last
    # job's lines.)
    : >"$tmp/out"
    : >"$tmp/err"
    # ip netns exec becomes shoalrun: $! is the launcher's pid.
    SHOAL_RSH="ip netns exec" ip netns exec "$ns" "$SHOALRUN" "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
}

# daemon_in NS: the pid of the daemon the launcher ($pid) started in NS
# (ip netns exec became it; its watchdog is a fork of it, not our child).
daemon_in() {
    local p d=""
    for p in $(ip netns pids "$1"); do
        [ "$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)" = "$pid" ] && d=$p
    done
    [ -n "$d" ] || fail "no daemon found in $1"
    echo "$d"
}

# ends_within MS CMD...: run CMD; the job started by start() must end
# within MS ms; sets rc.
ends_within() {
    local limit=$1 t0 took
    shift
    t0=$(now_ns)
    "$@"
    wait "$pid"
    rc=$?
    took=$(ms_since "$t0")
    [ "$took" -lt "$limit" ] || fail "the job took $took ms to end"
}

# link_up I: host I's bridge port up again after a cut, with every
# namespace's neighbour cache flushed (an address that went unanswered
# during the cut may fail at once for a while: "No route to host").
link_up() {
    local ns
    ip -n "$P-sw" link set "p$1" up
    for ns in $made; do
        ip -n "$ns" neigh flush all 2>/dev/null
    done
}

# ns_exe_count NS PATH: how many processes in namespace NS run PATH (by
# /proc/PID/exe: the task runtime re-executes itself as /proc/self/exe, so
# its name is "exe").
ns_exe_count() {
    local p n=0 want
    want=$(readlink -f "$2")
    for p in $(ip netns pids "$1" 2>/dev/null); do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$want" ] && n=$((n + 1))
    done
    echo "$n"
}

# nothing_left [MS]: within MS ms (default 3000), no process in any of our
# namespaces, none of the job's, no /dev/shm object of the job.
nothing_left() {
    local limit=${1:-3000} t0 left ns
    t0=$(now_ns)
    while :; do
        left=""
        for ns in $made; do
            left="$left$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
        done
        left="$left$(pgrep -f -- "$M" | tr '\n' ' ')"
        if [ -n "$prefix" ] && ls /dev/shm/"$prefix"* >/dev/null 2>&1; then
            left="$left shm"
        fi
        [ -z "$prefix" ] && [ -f "$tmp/shm0" ] && left="$left$(new_shm)"
        [ -z "${left// /}" ] && return 0
        if [ "$(ms_since "$t0")" -gt "$limit" ]; then
            fail "left behind after $limit ms: $left" \
                "$(for p in $left; do ps -o pid=,ppid=,args= -p "$p"; done)"
        fi
        sleep 0.05
    done
}

# ---- the task runtime across hosts ----------------------------------------------

# task_want ARGS...: skip without bench/task's ray tracers (MH_TASK,
# MH_SEQ); else $want, the sequential program's checksum for ARGS.
task_want() {
    [ -x "${MH_TASK:-}" ] && [ -x "${MH_SEQ:-}" ] ||
        skip "no task_raytrace or seq_raytrace (MH_TASK, MH_SEQ)"
    want=$("$MH_SEQ" "$@" | sed -n 's/^checksum \([0-9a-f]*\)$/\1/p')
    [ -n "$want" ] || fail "seq_raytrace printed no checksum"
}

# task_workers_up N WHAT: wait until N task workers run in host 1 (the job
# started by start() must not end first: WHAT is what it must not end
# before).
task_workers_up() {
    local t0
    t0=$(now_ns)
    until [ "$(ns_exe_count "$P-h1" "$MH_TASK")" -ge "$1" ]; do
        [ "$(ms_since "$t0")" -lt 30000 ] ||
            fail "the workers of $P-h1 did not start within 30 s"
        kill -0 "$pid" 2>/dev/null || fail "the job ended before $2"
        sleep 0.1
    done
}

# task_cut PORT SECONDS: SECONDS after the task workers started, cut the
# switch's port PORT while the job started by start() still runs; the job
# must end with status 0 and the sequential checksum ($want).
task_cut() {
    sleep "$2"
    ! grep -q '^checksum' "$tmp/out" ||
        fail "the run ended before the cut: give it more work (MH_TASK_ARGS)"
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the cut"
    t0=$(now_ns)
    ip -n "$P-sw" link set "$1" down
    wait "$pid"
    rc=$?
    echo "  the job ended $(ms_since "$t0") ms after the cut;" \
        "$(grep '^time ' "$tmp/out")"
    expect_rc 0
    expect_out "^checksum $want\$"
}

# ---- real programs across hosts (AM, MPI) ---------------------------------------

# Wait (5 s at most) until no AF_XDP socket is left on host 0 or 1: the
# kernel frees an exited rank's a while after the exit.
xdp_gone() {
    for _ in $(seq 50); do
        [ -z "$(in_ns "$P-h0" ss -a -H --xdp 2>/dev/null)$(in_ns "$P-h1" ss -a -H --xdp 2>/dev/null)" ] && return 0
        sleep 0.1
    done
}

# need_wire: skip unless this build has the network wire $wire (tcp: or
# at least knows SHOAL_TCP_* settings; udp: shoal-info says `udp  yes`).
need_wire() {
    case $wire in
    udp)
        "${MH_SHOAL_INFO:-false}" | grep -E '^ +udp +yes' >/dev/null ||
            skip "shoal-info reports no udp wire in this build"
        ;;
    *)
        { "${MH_SHOAL_INFO:-false}" | grep -E '^ +tcp +yes' ||
            "${MH_SHOAL_INFO:-false}" --config | grep '^SHOAL_TCP_ADDR='; } \
            >/dev/null || skip "shoal-info reports no tcp wire in this build"
        ;;
    esac
}

# layout NAME: build the hosts of a layout; sets lns (where the launcher
# runs) and hosts (the --host list).
#   tcp2   2 hosts x 1 rank, the launcher's host runs rank 0 (TCP only)
#   tcp4   4 hosts x 1 rank, the launcher on a login node (TCP only)
#   mixed  2 hosts x 2 ranks (shared memory within, TCP between)
#   h8x1   8 hosts x 1 rank;  h4x4  4 hosts x 4 ranks;  h4x2  4 x 2
layout() {
    local i n per
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"
    case $1 in
    tcp2) make_hosts 2; lns=$P-h0; hosts="localhost:1,$(host 1 1)"; return ;;
    mixed) make_hosts 2; lns=$P-h0; hosts="localhost:2,$(host 1 2)"; return ;;
    tcp4) n=4; per=1 ;;
    h4x1) n=4; per=1 ;;
    h4x2) n=4; per=2 ;;
    h8x1) n=8; per=1 ;;
    h4x4) n=4; per=4 ;;
    *) fail "unknown layout $1" ;;
    esac
    make_hosts "$n"
    lns=$P-l
    hosts=$(for i in $(seq 0 $((n - 1))); do host "$i" "$per"; done | paste -sd,)
}

# job WHAT PROGRAM ARGS...: run PROGRAM on the layout's hosts; it must exit
# 0 (and print its verdict, for the am programs); prints the time taken.
# The launcher's bound is JOB_TIMEOUT seconds (60).
# am_fault vanish: its last rank exits 0 without shoal_finalize, which
# shoalrun reports, status 1; the survivors' verdict is what counts.
job() {
    local what=$1 t0
    shift
    t0=$(now_ns)
    run "$lns" --timeout "${JOB_TIMEOUT:-60}" --host "$hosts" "$@"
    case "$1 ${2-}" in
    *"/am_fault vanish")
        expect_rc 1
        expect_err "exited with code 0 without calling MPI_Finalize \(or shoal_finalize\) after initializing"
        ! grep -E '\.c:[0-9]+: |still running|job exceeded' "$tmp/err" >/dev/null ||
            fail "a survivor failed, or had to be stopped"
        ;;
    *) expect_rc 0 ;;
    esac
    case "$1 ${2-}" in
    *"/am_fault stop") expect_out "^waited .* for a stopped peer" ;;
    */am_*) expect_out "^ok" ;;
    esac
    echo "  $what: $(ms_since "$t0") ms"
}

# tiny CMD...: CMD with tiny rings and queues (tests/mp/am's TINY,
# TCP_QUEUE_TINY; over udp also UDP_QUEUE_TINY, the wire's smallest ring).
tiny() {
    if [ "$wire" = udp ]; then
        SHOAL_UDP_QUEUE=64k tiny_ "$@"
    else
        tiny_ "$@"
    fi
}
tiny_() {
    SHOAL_SHM_CELLS=2 SHOAL_SHM_BULK=4k SHOAL_AM_MEDIUM_MAX=2k \
        SHOAL_AM_WINDOW=1 SHOAL_TCP_QUEUE=16k "$@"
}

# am_suite: the foundation's multi-process AM tests (tests/mp/am), with
# their arguments there, shortened.
am_suite() {
    local n=$1
    job n_to_1 "$MH_AM/am_traffic" n_to_1 2000
    job all_to_all "$MH_AM/am_traffic" all_to_all 300
    job random "$MH_AM/am_traffic" random 1000
    job flood "$MH_AM/am_traffic" flood 3000
    tiny job tiny.flood "$MH_AM/am_traffic" flood 1000
    tiny job tiny.random "$MH_AM/am_traffic" random 500
    tiny job tiny.long_offsets "$MH_AM/am_traffic" long_offsets
    # (every size up to 4 KiB, one round trip each: 2 s over veth)
    SHOAL_AM_MEDIUM_MAX=4k SHOAL_SHM_BULK=64k \
        job medium_sizes "$MH_AM/am_traffic" medium_sizes
    job long_offsets "$MH_AM/am_traffic" long_offsets
    job long_offsets_shared "$MH_AM/am_traffic" long_offsets shared
    SHOAL_WAIT=block job block.all_to_all "$MH_AM/am_traffic" all_to_all 300
    # The datagram wire first across hosts; where it is not up, TCP.
    SHOAL_WIRES=shm,udp,tcp job udp_tcp.all_to_all "$MH_AM/am_traffic" all_to_all 300
    job badinput "$MH_AM/am_badinput"
    job vanished_peer_connected "$MH_AM/am_fault" vanish connected
    # Unconnected, and with more than 2 ranks, a survivor that leaves first
    # may break a barrier message of one still in shoal_ep_create over TCP
    # (EPIPE: "barrier cannot complete: rank 1 died"); 2 ranks only.
    if [ "$n" -eq 2 ]; then
        job vanished_peer "$MH_AM/am_fault" vanish
        job stopped_peer "$MH_AM/am_fault" stop
    fi
    nothing_left
}

# mpi_suite: MPI test programs (tests/mpi); p2p_basic covers 0 B to 4 MiB,
# eager and rendezvous, pulled and pushed.
# lost_re PEER: how the am layer names a peer (PEER, a regex) lost over a
# silent link, "rank PEER failed: WHY": over TCP the connection timed out;
# over udp the peer's liveness socket answered no probe for
# SHOAL_UDP_DEAD_TIMEOUT (src/wire/udp/udp_live.c).
lost_re() {
    if [ "$wire" = udp ]; then
        echo "rank $1 failed: no answer to liveness probes for [0-9.]+ s \(SHOAL_UDP_DEAD_TIMEOUT\): dead, stopped or cut off"
    else
        echo "rank $1 failed: connection to rank $1 lost: .*timed out"
    fi
}

# cut_link_expect REGEX MESSAGE: with a job started by start() running,
# set host 1's bridge port down; a line matching REGEX must reach stderr
# within 6 s (else fail MESSAGE), the job must fail, nothing may be left.
cut_link_expect() {
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the link went down"
    ip -n "$P-sw" link set p1 down
    t0=$(now_ns)
    # Bounded by the clock and, should the clock misbehave, by the count
    # of turns (each sleeps 0.1 s): this loop always ends.
    turns=0
    until grep -Eq "$1" "$tmp/err"; do
        turns=$((turns + 1))
        [ "$turns" -le 60 ] && [ "$(ms_since "$t0")" -lt 6000 ] || fail "$2"
        sleep 0.1
    done
    echo "detected after $(ms_since "$t0") ms"
    grep -E "rank [0-9]+ failed: (connection to rank [0-9]+ lost|no answer to liveness probes)" \
        "$tmp/err" | head -n 4
    wait "$pid"
    rc=$?
    [ "$rc" -ne 0 ] || fail "the job succeeded across a dead link"
    nothing_left 5000
}

mpi_suite() {
    job p2p_basic "$MH_MPIBIN/mpi_p2p_basic"
    SHOAL_MPI_RNDV=push job p2p_basic_push "$MH_MPIBIN/mpi_p2p_basic"
    job p2p_nonblocking "$MH_MPIBIN/mpi_p2p_nonblocking"
    job p2p_order "$MH_MPIBIN/mpi_p2p_order"
    job coll_basic "$MH_MPIBIN/mpi_coll_basic"
    job nbc_coll "$MH_MPIBIN/mpi_nbc_coll"
    # (not comm_basic: 8-40 s at 4 ranks over TCP even on one host)
    job comm_idup "$MH_MPIBIN/mpi_comm_idup"
    job comm_inter "$MH_MPIBIN/mpi_comm_inter"
    job coll_comms "$MH_MPIBIN/mpi_coll_comms"
    nothing_left
}

# need_netem: skip unless tc can add a netem qdisc (sch_netem).
need_netem() {
    command -v tc >/dev/null || skip "no tc command (iproute2)"
    ip netns add "$P-q" || fail "ip netns add"
    made="$made $P-q"
    ip -n "$P-q" link add q0 type veth peer name q1
    tc -n "$P-q" qdisc add dev q0 root netem delay 1ms 2>/dev/null ||
        skip "tc netem is not available (kernel without sch_netem)"
}

# shape [-s] QDISC...: the same qdisc on every host's link, both
# directions (-s: on the switch's side only, towards the hosts).
shape() {
    local ns i=0 both=1
    [ "$1" = -s ] && { both=0; shift; }
    for ns in $made; do
        case $ns in "$P-h"*|"$P-l") ;; *) continue ;; esac
        if [ "$both" -eq 1 ]; then
            tc -n "$ns" qdisc add dev eth0 root "$@" || fail "tc on $ns: $*"
        fi
        tc -n "$P-sw" qdisc add dev "p$i" root "$@" || fail "tc on p$i: $*"
        i=$((i + 1))
    done
}

# tbf_stats: packets the switch's qdiscs dropped and held back (over the
# rate), over all ports.
tbf_stats() {
    tc -s -n "$P-sw" qdisc show |
        awk '{ for (i = 1; i < NF; i++) {
                   if ($i == "(dropped") d += $(i + 1)
                   if ($i == "overlimits") o += $(i + 1) } }
             END { printf "dropped %d, held back %d\n", d, o }'
}

# faulty: AM and MPI traffic checked message by message (sequence numbers
# per source, payloads byte by byte: none lost, repeated or reordered).
faulty() {
    job all_to_all "$MH_AM/am_traffic" all_to_all 300
    job random "$MH_AM/am_traffic" random 1000
    job long_offsets "$MH_AM/am_traffic" long_offsets
    job p2p_order "$MH_MPIBIN/mpi_p2p_order"
    nothing_left
}

# ---- cases that need no namespaces ------------------------------------------

if [ "$case_name" = bad_args ]; then
    printf '# hosts\nnodeA slots=2\nnodeB:2 # two more\n\n' >"$tmp/hf"
    "$SHOALRUN" -n 5 --hostfile "$tmp/hf" true >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 2
    expect_err "5 ranks but only 4 slots on 2 hosts"
    "$SHOALRUN" --host a:x true >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 2
    expect_err "slots after ':' must be a number"
    printf 'nodeA slot=2\n' >"$tmp/hf2"
    "$SHOALRUN" --hostfile "$tmp/hf2" true >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 2
    expect_err "hf2:1: unknown word 'slot=2'"
    "$SHOALRUN" --host localhost:2 --noise rank=2,busy true \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 2
    expect_err "rank 2 is out of range: the job has ranks 0 to 1"
    # A host list of this machine only runs here, without any daemon.
    "$SHOALRUN" --host localhost:2 --oversubscribe -n 3 sh -c \
        'echo "r=$PMI_RANK s=$PMI_SIZE l=$MPI_LOCALRANKID/$MPI_LOCALNRANKS"' \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    expect_out "r=2 s=3 l=2/3"
    # Hydra's spelling: -hosts with -ppn, and -f.
    "$SHOALRUN" -hosts localhost -ppn 3 sh -c 'echo "s=$PMI_SIZE"' \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    [ "$(grep -c '^s=3$' "$tmp/out")" -eq 3 ] || fail "-ppn 3: not 3 ranks"
    echo "localhost:2" >"$tmp/hf3"
    "$SHOALRUN" -f "$tmp/hf3" sh -c 'echo "s=$PMI_SIZE"' \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    [ "$(grep -c '^s=2$' "$tmp/out")" -eq 2 ] || fail "-f: not 2 ranks"
    # A daemon started by hand has no secret.
    "$SHOALRUN" --daemon 127.0.0.1 1 1 </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 125
    expect_err "no job secret on stdin"
    echo "PASS ($case_name)"
    exit 0
fi

# ---- namespace hosts ----------------------------------------------------------

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available"

case $case_name in
hello)
    # 2 hosts x 2 ranks: the launcher's host runs 2 itself.
    make_hosts 2
    run "$P-h0" --timeout 30 --host localhost:2,"$(host 1)" "$HELLO" 2,2
    expect_rc 0
    [ "$(count_out '^hello rank')" -eq 4 ] || fail "not 4 hello lines"
    expect_out "hello rank 3 of 4 host 1 local 1 of 2"
    expect_out "hello rank 0 of 4 host 0 local 0 of 2"
    # Fewer ranks than slots fill the hosts in order...
    run "$P-h0" --timeout 30 -n 3 --host localhost:2,"$(host 1)" "$HELLO" 2,1
    expect_rc 0
    expect_out "hello rank 2 of 3 host 1 local 0 of 1"
    # ... more are spread evenly, when allowed.
    run "$P-h0" --timeout 30 -n 6 --oversubscribe \
        --host localhost:1,"$(host 1 1)" "$HELLO" 3,3
    expect_rc 0
    expect_out "hello rank 5 of 6 host 1 local 2 of 3"
    nothing_left
    ;;
tree)
    # 4 hosts x 2 ranks from a login node without ranks, fan-out 2: the
    # launcher starts hosts 0 and 1, host 0's daemon starts 2 and 3.
    make_hosts 4
    for i in 0 1 2 3; do echo "$(host $i 2)" | sed 's/:2$/ slots=2/'; done \
        >"$tmp/hosts"
    run "$P-l" --timeout 30 --hostfile "$tmp/hosts" --fanout 2 \
        --tag-output "$HELLO" 2,2,2,2
    expect_rc 0
    [ "$(count_out '^\[[0-7]\] hello rank')" -eq 8 ] || fail "not 8 hellos"
    expect_out "^\[7\] hello rank 7 of 8 host 3 local 1 of 2"
    # Each host's ranks share one network namespace, others not.
    ns3=$(sed -n 's/^\[6\] .* ns //p' "$tmp/out")
    ns0=$(sed -n 's/^\[0\] .* ns //p' "$tmp/out")
    [ -n "$ns3" ] && [ "$ns3" != "$ns0" ] || fail "namespaces not told apart"
    [ "$(sed -n 's/^\[7\] .* ns //p' "$tmp/out")" = "$ns3" ] ||
        fail "ranks 6 and 7 in different namespaces"
    nothing_left
    ;;
tree3)
    # 7 hosts, fan-out 2: three levels of daemons (1-2, 3-6, 7).
    make_hosts 7
    run "$P-l" --timeout 60 --fanout 2 --host "$(host 0 1)","$(host 1 1)",\
"$(host 2 1)","$(host 3 1)","$(host 4 1)","$(host 5 1)","$(host 6 1)" \
        "$HELLO" 1,1,1,1,1,1,1
    expect_rc 0
    [ "$(count_out '^hello rank')" -eq 7 ] || fail "not 7 hello lines"
    expect_out "hello rank 6 of 7 host 6 local 0 of 1"
    nothing_left
    ;;
subtree_lost)
    # A chain (fan-out 1): the launcher, h0, h1, h2.  Losing h0's daemon
    # loses the two below it too; they kill their ranks by themselves.
    make_hosts 3
    start "$P-l" --timeout 60 --fanout 1 \
        --host "$(host 0)","$(host 1)","$(host 2)" "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 6 "$tmp/out"
    find_prefix
    ends_within 5000 kill -9 "$(daemon_in "$P-h0")"
    expect_rc 125
    expect_err "host $P-h0 lost: its daemon's connection closed \(6 ranks there and on the hosts its daemon served\)"
    nothing_left
    ;;
ssh_like)
    # Like ssh: the remote command starts with an empty environment in
    # another directory; the job's environment and directory still reach
    # the remote ranks.
    make_hosts 2
    remote_env_check "$P-h0" \
        "env -C / -i PATH=/usr/sbin:/usr/bin:/sbin:/bin ip netns exec" \
        localhost:1,"$(host 1)" 2
    ;;
tag_output)
    make_hosts 2
    run "$P-h0" --timeout 30 --tag-output --host localhost:1,"$(host 1)" \
        "$HELPER" "$M" output 300000
    expect_rc 0
    expect_out "^\[2\] "
    grep -E -- "^\[1\] " "$tmp/err" >/dev/null || fail "no tagged stderr"
    # Every line of a remote rank arrives whole and tagged.
    "$HELPER" "$M" gen-output 2 300000 | sed 's/^/[2] /' >"$tmp/want"
    grep -E '^\[2\] ' "$tmp/out" | cmp -s - "$tmp/want" ||
        fail "rank 2's stdout differs from what it wrote"
    nothing_left
    ;;
stdin)
    # The launcher runs no rank: rank 0's stdin comes down the tree, a
    # window at a time (500 kB here); other ranks read /dev/null.
    make_hosts 2
    remote_stdin_check "$P-l" "ip netns exec" "$(host 0 1)","$(host 1 1)"
    # Rank 0 reads a little and exits: the job still ends at once.
    SHOAL_RSH="ip netns exec" ip netns exec "$P-l" "$SHOALRUN" --timeout 30 \
        --host "$(host 0 1)" head -c 6 <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    [ "$(cat "$tmp/out")" = "$(head -c 6 "$tmp/in")" ] || fail "head -c 6"
    nothing_left
    ;;
exit_status)
    make_hosts 2
    run "$P-h0" --timeout 30 --host localhost:2,"$(host 1)" \
        "$HELPER" "$M" exit-rank 3 7
    expect_rc 7
    expect_err "rank 3 \(pid [0-9]+\) on host $P-h1 exited with code 7; stopping the other 3 ranks"
    nothing_left
    ;;
finalize)
    # The launcher learns from the daemons whether a rank finalized: rank 1
    # fails after MPI_Finalize, and rank 0, on another host, still prints
    # its result; then a rank that exits 0 without MPI_Finalize is named.
    need_wire
    make_hosts 2
    run_within 4000 "$P-l" --timeout 30 --host "$(host 0 1)","$(host 1 1)" \
        "$HELPER" "$M" finalize-exit 1 3 mpi
    expect_rc 3
    expect_out "^rank 0 result 42$"
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) on host $P-h1 exited with code 3 after finalizing; waiting up to 5 s for the other rank to exit$"
    SHOAL_EXIT_GRACE=1s run_within 4000 "$P-l" --timeout 30 \
        --host "$(host 0 1)","$(host 1 1)" "$HELPER" "$M" no-finalize 1 mpi
    expect_rc 1
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) on host $P-h1 exited with code 0 without calling MPI_Finalize \(or shoal_finalize\) after initializing; waiting up to 1 s for the other rank to exit$"
    expect_err "^shoalrun: 1 rank is still running 1 s after rank 1 failed; stopping it$"
    nothing_left
    ;;
kill_rank)
    make_hosts 2
    run "$P-h0" --timeout 30 --host localhost:2,"$(host 1)" \
        "$HELPER" "$M" kill-rank 2 9
    expect_rc 137
    expect_err "rank 2 \(pid [0-9]+\) on host $P-h1 was killed by signal 9"
    find_prefix
    nothing_left
    ;;
signals)
    make_hosts 2
    start "$P-h0" --timeout 30 --host localhost:1,"$(host 1)" \
        "$HELPER" "$M" signals
    wait_for "^ready rank" 3 "$tmp/out"
    kill -USR1 "$pid"
    wait_for "got SIGUSR1" 3 "$tmp/out"
    # (A background job of a script ignores SIGINT: TERM it is.)
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    expect_out "rank 2 got SIGTERM"
    expect_out "rank 1 got SIGTERM"
    expect_err "got SIGTERM; passing it to the ranks"
    nothing_left
    ;;
host_lost)
    make_hosts 3
    start "$P-h0" --timeout 60 --host localhost:1,"$(host 1)","$(host 2)" \
        "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 5 "$tmp/out"
    find_prefix
    # Its watchdog stays alive to clean up, as on a real host whose daemon
    # crashed.
    ends_within 5000 kill -9 "$(daemon_in "$P-h1")"
    expect_rc 125
    expect_err "host $P-h1 lost: its daemon's connection closed \(2 ranks\)"
    nothing_left
    ;;
kill_launcher)
    make_hosts 3
    start "$P-l" --timeout 60 --host "$(host 0)","$(host 1)","$(host 2)" \
        --fanout 1 "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 6 "$tmp/out"
    find_prefix
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    nothing_left 5000
    ;;
wrong_secret)
    make_hosts 2
    SHOAL_LOG=debug start "$P-h0" --timeout 30 \
        --host localhost:1,"$(host 1)" "$HELPER" "$M" sleep 3
    wait_for "node 0 listens on port" 1 "$tmp/err"
    port=$(sed -n 's/.*node 0 listens on port \([0-9]*\).*/\1/p' "$tmp/err")
    # A stranger claiming to be node 1's daemon, with a made-up MAC.
    hello='\x2c\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00'
    hello="$hello\\x10\\x00\\x00\\x00$(printf '\\x41%.0s' $(seq 16))"
    hello="$hello\\x10\\x00\\x00\\x00$(printf '\\x42%.0s' $(seq 16))"
    in_ns "$P-h1" bash -c "exec 3<>/dev/tcp/10.77.3.10/$port &&
        head -c 24 <&3 >/dev/null && printf '$hello' >&3 && sleep 0.3" ||
        fail "could not connect to port $port"
    # Garbage, and 20 strangers that connect and say nothing (more than
    # the launcher keeps waiting for proof; the oldest are dropped).
    in_ns "$P-h1" bash -c "exec 3<>/dev/tcp/10.77.3.10/$port &&
        head -c 65536 /dev/urandom >&3; sleep 0.2" 2>/dev/null
    strangers=""
    for i in $(seq 20); do
        ip netns exec "$P-h1" bash -c \
            "exec 3<>/dev/tcp/10.77.3.10/$port; exec sleep 5" 2>/dev/null &
        strangers="$strangers $!"
    done
    wait "$pid"
    rc=$?
    kill $strangers 2>/dev/null
    expect_rc 0
    expect_err "refused a daemon connection from 10.77.3.11: wrong secret"
    expect_err "refused a daemon connection from 10.77.3.11: not a shoalrun daemon"
    expect_err "refused a daemon connection from 10.77.3.11: silent while others wait"
    [ "$(count_out '^ready rank')" -eq 3 ] || fail "the job was disturbed"
    find_prefix
    nothing_left
    ;;
stuck)
    # Rank 1, alone on its host, finalizes; ranks 0 and 2, on two other
    # hosts, wait in a barrier it will never enter.
    make_hosts 3
    run_within 5000 "$P-h0" --timeout 30 \
        --host localhost:1,"$(host 1 1)","$(host 2 1)" \
        "$HELPER" "$M" finalize-early
    expect_rc 1
    expect_err "^shoalrun: rank 1 on host $P-h1 called PMI finalize while other ranks wait in a PMI barrier it can no longer enter; stopping the job's [0-9] ranks$"
    nothing_left
    ;;
link_down)
    # No connection closes: only the heartbeats can tell.
    make_hosts 2
    SHOAL_HOST_TIMEOUT=1500ms start "$P-h0" --timeout 60 \
        --host localhost:1,"$(host 1)" "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 3 "$tmp/out"
    find_prefix
    ends_within 5000 ip -n "$P-sw" link set p1 down
    expect_rc 125
    expect_err "host $P-h1 lost: no word from its daemon for 1.5 s"
    # The daemon, as cut off, gives up on its own and kills its ranks.
    nothing_left 5000
    ;;
expendable_lost)
    # A host whose ranks all declared themselves expendable (the PMI key
    # task-expendable, as the task runtime's workers do; their daemon tells
    # the launcher) may be lost: a line, and the job goes on.  A host with
    # one rank that did not is not, rank 0's included (rank 0's host whose
    # rank put the key goes like any other: task_coord_host_lost).  The
    # launcher runs on a login node; h0 runs rank 0, h1 ranks 1-2, h2
    # ranks 3-4 (4 keeps out).
    # Links are cut (the bridge's port down): only heartbeats can tell.
    make_hosts 3
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"
    SHOAL_HOST_TIMEOUT=3s start "$P-l" --timeout 60 \
        --host "$(host 0 1)","$(host 1 2)","$(host 2 2)" \
        "$HELPER" "$M" expendable 4 60
    wait_for "^ready rank" 5 "$tmp/out"
    ip -n "$P-sw" link set p1 down
    wait_for "host $P-h1 lost" 1 "$tmp/err"
    expect_err "^shoalrun: host $P-h1 lost: no word from its daemon for 3 s \(ranks 1-2, expendable task workers\); the job goes on without them$"
    kill -0 "$pid" 2>/dev/null || fail "the job ended with host $P-h1"
    ends_within 8000 ip -n "$P-sw" link set p2 down
    expect_rc 125
    expect_err "^shoalrun: host $P-h2 lost: no word from its daemon for 3 s \(2 ranks\); stopping the other rank$"
    nothing_left 8000
    # Rank 0 alone on its host, rank 1 on another: only rank 1 puts the
    # key.
    link_up 1
    SHOAL_HOST_TIMEOUT=3s start "$P-l" --timeout 60 \
        --host "$(host 0 1)","$(host 1 1)" "$HELPER" "$M" expendable 0 60
    wait_for "^ready rank" 2 "$tmp/out"
    ends_within 8000 ip -n "$P-sw" link set p0 down
    expect_rc 125
    expect_err "^shoalrun: host $P-h0 lost: no word from its daemon for 3 s \(1 rank\); stopping the other rank$"
    nothing_left 8000
    # A chain (fan-out 1): h1's word reaches the launcher through h0's
    # daemon, which reports h1 lost; the ranks left finish: status 0.
    link_up 0
    SHOAL_HOST_TIMEOUT=3s start "$P-l" --timeout 60 --fanout 1 \
        --host "$(host 0 1)","$(host 1 2)" "$HELPER" "$M" expendable -1 12
    wait_for "^ready rank" 3 "$tmp/out"
    ip -n "$P-sw" link set p1 down
    wait "$pid"
    rc=$?
    expect_rc 0
    expect_err "^shoalrun: host $P-h1 lost: no word from its daemon for 3 s \(ranks 1-2, expendable task workers\); the job goes on without them$"
    nothing_left 8000
    ;;
mpi_host_lost)
    # The negative of task_host_lost: an MPI job that is not a task
    # program (its ranks initialized MPI and wait) loses a host when its
    # link is cut, and the job ends with the lost-host message.
    need_wire
    make_hosts 2
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"
    SHOAL_HOST_TIMEOUT=3s start "$P-h0" --timeout 60 \
        --host localhost:2,"$(host 1 2)" "$HELPER" "$M" no-finalize -1 mpi
    wait_for "^rank [0-9] initialized" 4 "$tmp/out"
    ends_within 8000 ip -n "$P-sw" link set p1 down
    expect_rc 125
    expect_err "^shoalrun: host $P-h1 lost: no word from its daemon for 3 s \(2 ranks\); stopping the other 2 ranks$"
    nothing_left 8000
    ;;
task_noise)
    # --noise across hosts: the launcher sends every rank's plan with the
    # job, and each daemon disturbs its own ranks.  The ray tracer on two
    # hosts x 2 workers, rank 3 (on the second host) stopped 40 ms of every
    # 200 ms and rank 1 (the launcher's host) sharing its CPU with a busy
    # process: the sequential checksum, status 0, and --noise-report's
    # lines for both, rank 3's from the daemon.
    need_wire
    targs=(--width 320 --height 240 --samples 8 --depth 3 --seed 5 --jobs 32)
    task_want "${targs[@]}"
    make_hosts 2
    run "$P-h0" --timeout 60 --host "localhost:2,$(host 1 2)" \
        --noise rank=3,stop=40ms,every=200ms --noise rank=1,busy \
        --noise-report "$MH_TASK" "${targs[@]}"
    expect_rc 0
    expect_out "^checksum $want\$"
    expect_err "noise: rank 3: stopped [1-9][0-9]* times?, "
    expect_err "noise: rank 1: 1 busy process"
    nothing_left
    ;;
task_coord_killed)
    # The task runtime's coordinator (rank 0, on the launcher's host)
    # killed mid-run while workers run on a second host: the wire tells
    # them it is dead, rank 1 coordinates and runs the program again, and
    # the job prints the sequential checksum with status 0.
    need_wire
    targs=(--width 640 --height 480 --samples 16 --depth 3 --seed 5 --jobs 64)
    task_want "${targs[@]}"
    make_hosts 2
    SHOAL_TASK_SUSPECT=700ms start "$P-h0" --timeout 80 \
        --host "localhost:1,$(host 1 2)" "$MH_TASK" "${targs[@]}"
    task_workers_up 2 "the kill"
    sleep 0.5
    victim=
    for p in $(pgrep -f "$MH_TASK"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "PMI_RANK=0"; then
            victim=$p
            break
        fi
    done
    [ -n "$victim" ] || fail "no process of rank 0"
    kill -KILL "$victim"
    wait "$pid"
    rc=$?
    expect_rc 0
    expect_out "^checksum $want\$"
    expect_err "rank 0 .*expendable task worker: the job goes on"
    expect_err "the coordinator \(rank 0\) is gone: rank 1 coordinates now"
    nothing_left
    ;;
task_stopend)
    # A task worker on a second host stopped early in the run and woken
    # only after the coordinator (rank 0, on the launcher's host) left: it
    # never read TM_END (stopped; the root's results owed to its redundant
    # copy held it back), finds rank 0 gone, and must see that the run was
    # over (the other worker of its host left in order: TM_EXIT) instead
    # of taking over and running the program again.  One checksum, status
    # 0, no takeover.
    need_wire
    targs=(--width 640 --height 480 --samples 16 --depth 3 --seed 5 --jobs 64)
    task_want "${targs[@]}"
    make_hosts 2
    # (SHOAL_TASK_END_WAIT=0: rank 0 leaves after its 10 s, as it would
    # after the longer wait for a silent worker.)
    SHOAL_TASK_SUSPECT=700ms SHOAL_TASK_END_WAIT=0 SHOAL_LOG=info \
        start "$P-h0" --timeout 100 \
        --host "localhost:1,$(host 1 2)" "$MH_TASK" "${targs[@]}"
    task_workers_up 2 "the stop"
    # The workers themselves, not their copies (a copy's parent runs the
    # same program); a process found may be gone a moment later (a worker
    # re-executes itself at start): look again.
    stopped=
    for try in 1 2 3 4 5 6 7 8 9 10; do
        victim= coord=
        for p in $(pgrep -f "$MH_TASK"); do
            pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
            [ -n "$pp" ] && [ "$(readlink "/proc/$pp/exe")" = "$(readlink -f "$MH_TASK")" ] &&
                continue
            r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                sed -n 's/^PMI_RANK=//p')
            [ "$r" = 2 ] && victim=$p
            [ "$r" = 0 ] && coord=$p
        done
        sleep 0.3
        if [ -n "$victim" ] && [ -n "$coord" ] && kill -0 "$coord" 2>/dev/null &&
            kill -STOP "$victim" 2>/dev/null; then
            stopped=1
            break
        fi
    done
    ! grep -q '^checksum' "$tmp/out" ||
        fail "the run ended before the stop: give it more work"
    [ -n "$stopped" ] || fail "no process of rank 2 to stop (or of rank 0): $(ps -eo pid,ppid,stat,args --forest | grep -F -- "$MH_TASK" | grep -v grep | cut -c1-90)"
    t0=$(now_ns)
    while kill -0 "$coord" 2>/dev/null; do
        [ "$(ms_since "$t0")" -lt 60000 ] || fail "rank 0 did not leave"
        sleep 0.2
    done
    grep -q '^checksum' "$tmp/out" || fail "rank 0 left without a result"
    kill -CONT "$victim"
    wait "$pid"
    rc=$?
    expect_rc 0
    expect_out "^checksum $want\$"
    [ "$(grep -c '^checksum' "$tmp/out")" = 1 ] ||
        fail "$(grep -c '^checksum' "$tmp/out") results: the program ran again"
    ! grep -q "coordinates now" "$tmp/err" ||
        fail "a stopped worker took over after the run: $(grep 'coordinates now' "$tmp/err")"
    grep -E "rank 2: |coordinator" "$tmp/err" | sed 's/^/  /'
    nothing_left 8000
    ;;
task_coord_host_lost)
    # Rank 0, the task runtime's coordinator, on a host of its own (the
    # launcher on a login node), two workers on a second host; the first
    # host's link is cut while the ray tracer runs.  Rank 0 put the key
    # task-expendable, so the launcher lets its host go with a line and
    # tells the ranks left, which take rank 0 for dead: rank 1 coordinates
    # and runs the program again (taking the results kept), and the job
    # prints the sequential checksum with status 0.
    need_wire
    targs=(--width 640 --height 480 --samples 32 --depth 3 --seed 5 --jobs 64)
    task_want "${targs[@]}"
    make_hosts 2
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"
    SHOAL_TASK_SUSPECT=700ms SHOAL_HOST_TIMEOUT=3s start "$P-l" \
        --timeout 80 --host "$(host 0 1),$(host 1 2)" "$MH_TASK" "${targs[@]}"
    task_workers_up 2 "the cut"
    task_cut p0 1
    expect_err "^shoalrun: host $P-h0 lost: no word from its daemon for 3 s \(rank 0, expendable task workers\); the job goes on without it$"
    expect_err "the coordinator \(rank 0\) is gone: rank 1 coordinates now"
    nothing_left 8000
    ;;
task_host_lost)
    # The task runtime across two hosts, MH_TASK_PER workers each (2): the
    # link to the second is cut while the ray tracer runs.  The root's jobs
    # there move to the local workers after SHOAL_TASK_SUSPECT, the second
    # host's workers are expendable (their daemon said so), so the
    # launcher lets that host go with a line, and the job prints the
    # sequential program's checksum with status 0.  MH_TASK_ARGS: the
    # image (enough work that the cut comes mid-run); MH_CUT_AFTER: seconds
    # from the workers' start to the cut (1), or "never": the same run
    # whole, to compare.
    need_wire
    per=${MH_TASK_PER:-2}
    read -r -a targs <<<"${MH_TASK_ARGS:---width 640 --height 480 --samples 32 --depth 3 --seed 5 --jobs 64}"
    task_want "${targs[@]}"
    make_hosts 2
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"
    SHOAL_TASK_SUSPECT=700ms SHOAL_HOST_TIMEOUT=3s start "$P-h0" \
        --timeout 80 --host "localhost:$per,$(host 1 "$per")" \
        "$MH_TASK" "${targs[@]}"
    # The second host's workers run (and, a moment later, trace rows).
    task_workers_up "$per" "the cut"
    cut=${MH_CUT_AFTER:-1}
    if [ "$cut" = never ]; then
        wait "$pid"
        rc=$?
        expect_rc 0
        expect_out "^checksum $want\$"
        ! grep -q "lost" "$tmp/err" || fail "a host was lost without a cut"
        echo "  uncut: $(grep '^time ' "$tmp/out")"
        nothing_left
        echo "PASS ($case_name)"
        exit 0
    fi
    task_cut p1 "$cut"
    expect_err "^shoalrun: host $P-h1 lost: no word from its daemon for 3 s \(ranks $per-$((2 * per - 1)), expendable task workers\); the job goes on without them$"
    nothing_left 8000
    ;;
mpi)
    # A real MPI program across 2 hosts x 2 ranks: needs a network wire
    # (need_wire).
    need_wire
    make_hosts 2
    run "$P-h0" --timeout 60 --host localhost:2,"$(host 1)" "$MH_MPI"
    expect_rc 0
    [ "$(count_out '^mpi rank [0-3] of 4 ok')" -eq 4 ] || fail "not 4 ranks ok"
    nothing_left
    ;;
mpi_ft | mpi_ft_coord)
    # shoalrun --ft across 2 hosts x 3 ranks (docs/FT.md): a rank dies
    # during MPIX_Comm_agree (mpi_ft_coord: rank 0, the coordinator, on the
    # launcher's host; mpi_ft: rank 4, on the other host); the survivors
    # of both hosts learn of it (the launcher tells every rank alive, down
    # the daemon tree, next to the wires), agree, shrink and compute
    # together, and the job ends with status 0.
    need_wire
    make_hosts 2
    victim=4
    [ "$case_name" = mpi_ft_coord ] && victim=0
    run "$P-h0" --ft --timeout 60 --host localhost:3,"$(host 1 3)" \
        "$MH_MPIBIN/mpi_ft_ulfm" agree "$victim"
    expect_rc 0
    expect_out "^OK ft agree: survivors agree"
    expect_err "^shoalrun: rank $victim \(pid [0-9]+\)( on host [^ ]+)? was killed by signal 9 \(Killed\); --ft: the job goes on without it$"
    nothing_left
    ;;
mpi_ft_notices)
    # The ranks' own detection across hosts, as under srun and PMIx
    # launchers (docs/FT.md): shoalrun --ft with SHOAL_FT_NOTICES=0 tells
    # nobody of a death.  2 hosts x 4 ranks; rank 5 (second host) dies
    # while the others wait in MPI_Recv from it: its host's ranks see it
    # through their pidfds, rank 1 through the ring's connection (it
    # watches rank 5), ranks 3 and 7 through the connections of MPI_Init's
    # dissemination barrier (r sends to r+1, r+2, r+4), and ranks 0 and 2,
    # which have no connection to it, must be told by another rank.
    need_wire
    make_hosts 2
    SHOAL_FT_NOTICES=0 run "$P-h0" --ft --timeout 30 \
        --host localhost:4,"$(host 1 4)" "$MH_MPIBIN/mpi_ft_ulfm" recvdead 5
    expect_rc 0
    expect_out "^OK ft recvdead: survivors agree"
    for r in 0 2; do
        expect_err "^shoal\[$r\] WARN am: rank 5 failed: rank [0-46-7] says so"
    done
    [ "$(grep -c "^recvdead: rank [0-46-7] knew" "$tmp/out")" -eq 7 ] ||
        fail "not every survivor knew of rank 5's death"
    expect_err "^shoalrun: rank 5 \(pid [0-9]+\)( on host [^ ]+)? was killed by signal 9 \(Killed\); --ft: the job goes on without it$"
    nothing_left
    ;;
mpi_ft_tcp_verdict)
    # Fail-stop over the TCP wire (docs/FT.md, "Failure model"): rank 3,
    # alone on the second host, is cut off (its link down) past the
    # survivors' wire timeout (SHOAL_FT_TIMEOUT=1s: 3 s) while it computes
    # outside MPI; its own wire's timeout is 60 s, so it gives nobody up.
    # The survivors (ranks 0-2, the first host) take it for dead, shrink
    # and wait for its process to be gone.  The link comes back and rank 3
    # sends to rank 0 again (mpi_ft_ulfm cutoff): its old connections were
    # closed by the survivors' wires, so it must ask again, and the TCP
    # wire's handshake verdict must end it: it says it was taken for dead
    # and exits with 75, which shoalrun reports; the survivors finish well.
    # This is the wires' own fail-stop, as under launchers that decide
    # nothing (srun, Hydra): SHOAL_FT_ACCUSE=0, so the survivors do not
    # accuse rank 3 to shoalrun (mpi_ft_partition tests that way).
    need_wire
    [ "$wire" = tcp ] || skip "the TCP wire's own case"
    make_hosts 2
    flag=$tmp/link_back
    # (the launcher's host timeout outlasts the cut: the daemon stays)
    SHOAL_FT_ACCUSE=0 SHOAL_FT_TIMEOUT=1s SHOAL_HOST_TIMEOUT=30s start "$P-h0" --ft \
        --timeout 50 --host localhost:3,"$(host 1 1)" sh -c \
        '[ "$PMI_RANK" = 3 ] && export SHOAL_TCP_DEAD_TIMEOUT=60s; exec "$@"' \
        sh "$MH_MPIBIN/mpi_ft_ulfm" cutoff 3 0 "$flag"
    wait_for "^cutoff: ready" 1 "$tmp/out"
    sleep 0.2
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the cut"
    ip -n "$P-sw" link set p1 down
    t0=$(now_ns)
    for r in 0 1 2; do
        until grep -Eq "^shoal\[$r\] WARN am: rank 3 failed" "$tmp/err"; do
            [ "$(ms_since "$t0")" -lt 10000 ] ||
                fail "rank $r did not give rank 3 up within 10 s of the cut"
            sleep 0.1
        done
    done
    echo "  the survivors gave rank 3 up $(ms_since "$t0") ms after the cut"
    grep -E "^shoal\[[0-2]\] WARN am: rank 3 failed" "$tmp/err"
    link_up 1
    touch "$flag"
    t0=$(now_ns)
    wait "$pid"
    rc=$?
    echo "  the job ended $(ms_since "$t0") ms after the link came back"
    grep -E "^shoal\[3\]" "$tmp/err"
    expect_rc 0
    # Told by the TCP wire's handshake, or (when a survivor's wire still
    # took a frame of rank 3 first, as under a sanitizer's slower timing)
    # by that survivor's answer: either way it must not have given the
    # survivors up itself (what the reset of its old connections made it
    # do before).
    ! grep -Eq "^shoal\[3\] WARN am: rank [0-2] failed" "$tmp/err" ||
        fail "rank 3 took a survivor for dead"
    expect_err "^shoal\[3\] ERROR am: rank 3 was taken for dead by rank [0-2] \((its TCP wire had given up on this rank.*|it heard from this rank after that)\) and still lives: .*this process exits now$"
    expect_err "^shoalrun: rank 3 \(pid [0-9]+\)( on host [^ ]+)? exited with code 75 before MPI_Finalize; --ft: the job goes on without it$"
    expect_out "^zombie: rank 3 ended"
    expect_out "^OK ft cutoff"
    nothing_left
    ;;
mpi_ft_partition)
    # A link cut between two hosts that both still reach the launcher
    # (docs/FT.md, "Partitions"): 3 hosts x 2 ranks, the launcher on the
    # first; every pair of ranks exchanges a word every 20 ms (mpi_ft_ulfm
    # partition) and h1 drops all traffic to and from h2.  Each side's
    # wires give the other side up (SHOAL_FT_TIMEOUT=1s: after 3 s) and
    # accuse it to the launcher, which takes one side for dead: by its
    # rule (docs/FT.md) h2's ranks 4 and 5, the host of the higher node
    # when the two are in as many accusations.  It kills them and tells
    # everyone, so the survivors, h0's ranks too, which reach both sides,
    # agree: they shrink to ranks 0-3 and finish, status 0.  Without the
    # launcher deciding, each side takes the other for dead and the third
    # host hears both.
    need_wire
    make_hosts 3
    SHOAL_FT_TIMEOUT=1s start "$P-h0" --ft --timeout 60 \
        --host localhost:2,"$(host 1 2)","$(host 2 2)" \
        "$MH_MPIBIN/mpi_ft_ulfm" partition
    wait_for "^ready" 1 "$tmp/out"
    sleep 0.3
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the cut"
    for d in INPUT OUTPUT; do
        f=-s
        [ $d = OUTPUT ] && f=-d
        in_ns "$P-h1" iptables -A $d $f 10.77.3.12 -j DROP 2>"$tmp/ipt" ||
            skip "iptables unavailable: $(head -1 "$tmp/ipt")"
    done
    t0=$(now_ns)
    wait "$pid"
    rc=$?
    echo "  the job ended $(ms_since "$t0") ms after the cut"
    grep -E "lost each other|unreachable|failed|taken for dead" "$tmp/err"
    expect_rc 0
    expect_out "^partition: survivors 0,1,2,3$"
    expect_out "^OK ft partition"
    for r in 4 5; do
        expect_err "^shoalrun: rank $r( on host [^ ]+)? and ranks? [0-9, ]+ lost each other \(a link between their hosts cut\?\); --ft: rank $r is taken for dead, killing it$"
    done
    # (A condemned rank may also learn it was given up from a survivor's
    # answer and end itself before the launcher's SIGKILL lands.)
    ! grep -Eq "rank [0-3] is taken for dead|^shoal\[[0-9]\] WARN am: rank [0-3] failed|^shoal\[[0-3]\] ERROR am: rank [0-3] was taken for dead by" "$tmp/err" ||
        fail "a rank of the side that stays was given up"
    # (Which side's wires give up first is timing: the launcher may
    # decide on the first accusations, of either side, before the other
    # side's come.)
    grep -Eq "^shoal\[[23]\] WARN am: rank [45] unreachable: .*accused to the launcher|^shoal\[[45]\] WARN am: rank [23] unreachable: .*accused to the launcher" "$tmp/err" ||
        fail "no rank accused a rank across the cut"
    nothing_left 8000
    ;;
hydra_ft)
    # ULFM under MPICH's Hydra across 2 hosts x 2 ranks (docs/FT.md):
    # SHOAL_FT=1 mpiexec.mpich -disable-auto-cleanup, Hydra's proxies
    # started in the namespaces through an ssh stand-in (each host its own
    # host name); a rank dies during MPIX_Comm_agree (rank 3 on the other
    # host, then rank 0 on mpiexec's): the survivors of both hosts agree
    # and shrink.  Hydra's own status is the killed rank's (137), whatever
    # the survivors did.
    command -v mpiexec.mpich >/dev/null ||
        skip "mpiexec.mpich not found (Debian: apt-get install mpich)"
    need_wire
    make_hosts 2
    cat >"$tmp/rsh" <<EOT
#!/bin/sh
# Hydra's ssh: [options] HOST COMMAND -> COMMAND in HOST's namespace.
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
h=\$1; shift
case "\$h" in 10.77.3.10) ns=$P-h0 ;; 10.77.3.11) ns=$P-h1 ;; *) exit 255 ;; esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns; \$*"
EOT
    chmod +x "$tmp/rsh"
    for victim in 3 0; do
        SHOAL_FT=1 in_ns "$P-h0" unshare --uts sh -c 'hostname "$1"; shift;
            exec "$@"' sh "$P-h0" timeout 90 mpiexec.mpich \
            -disable-auto-cleanup -n 4 -hosts 10.77.3.10:2,10.77.3.11:2 \
            -launcher ssh -launcher-exec "$tmp/rsh" -iface eth0 \
            "$MH_MPIBIN/mpi_ft_ulfm" agree "$victim" \
            >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        expect_rc 137
        expect_out "^OK ft agree: survivors agree"
        [ "$(grep -c "rank $victim failed" "$tmp/err")" -ge 1 ] ||
            fail "no survivor reported rank $victim failed"
        nothing_left
    done
    ;;
mpi_ft_stop | mpi_ft_stop_short)
    # SHOAL_FT_TIMEOUT across 2 hosts x 2 ranks (docs/FT.md): rank 2, on
    # the second host, stops itself (SIGSTOP) while the others wait in
    # MPI_Allreduce.  mpi_ft_stop: for good; its host's daemon kills it
    # past the timeout (1 s), not before, the launcher tells everyone, the
    # survivors of both hosts get MPIX_ERR_PROC_FAILED and shrink.
    # mpi_ft_stop_short: for 0.7 s (rank 3, on its host, continues it):
    # nobody is taken for dead and the allreduce succeeds.
    need_wire
    make_hosts 2
    export SHOAL_FT_TIMEOUT=1000ms
    ms=2000
    [ "$case_name" = mpi_ft_stop_short ] && ms=700
    run "$P-h0" --ft --timeout 60 --host localhost:2,"$(host 1 2)" \
        "$MH_MPIBIN/mpi_ft_ulfm" stop 2 "$ms" 1 1000
    expect_rc 0
    expect_out "^OK ft stop: survivors agree"
    if [ "$case_name" = mpi_ft_stop ]; then
        expect_err "^shoalrun(@[^:]+)?: rank 2 \(pid [0-9]+\)( on host [^ ]+)? has been stopped for [0-9.]+ s, past SHOAL_FT_TIMEOUT \(1 s\); --ft: taken for dead, killing it$"
        expect_err "^shoalrun: rank 2 \(pid [0-9]+\)( on host [^ ]+)? was killed by signal 9 \(Killed\); --ft: the job goes on without it$"
    else
        expect_out "^stop: 1 x 700 ms, timeout 1000 ms: nobody taken for dead"
        ! grep -q "taken for dead, killing" "$tmp/err" ||
            fail "a rank stopped for less than the timeout was killed"
    fi
    nothing_left
    ;;
mpi_ft_inter)
    # ULFM on an intercommunicator across hosts (tests/mpi/ft_inter.c):
    # 2 hosts x 4 ranks, the halves (one per host) joined by
    # MPI_Intercomm_create; rank 2 (the launcher's host) and rank 5 (the
    # other) die during MPIX_Comm_agree: the survivors of both groups get
    # the error and the other group's AND, acknowledge, agree again,
    # shrink to an intercommunicator and exchange across it; status 0.
    need_wire
    make_hosts 2
    run "$P-h0" --ft --timeout 60 --host localhost:4,"$(host 1 4)" \
        "$MH_MPIBIN/mpi_ft_inter" agree 2 5
    expect_rc 0
    expect_out "^OK ft inter agree: survivors of both groups agree"
    expect_err "^shoalrun: rank 5 \(pid [0-9]+\)( on host [^ ]+)? was killed by signal 9 \(Killed\); --ft: the job goes on without it$"
    nothing_left
    ;;
mpi_ft_jacobi)
    # The ULFM-style Jacobi stencil (tests/mpi/ft_jacobi.c) on 2 hosts x 4
    # ranks under --ft, rank 5 (second host) killed at sweep 21 and rank 2
    # (the launcher's host) at sweep 50: the survivors of both hosts shrink
    # twice and the grid is bit-identical to the sequential sweeps.
    need_wire
    make_hosts 2
    run "$P-h0" --ft --timeout 60 --host localhost:4,"$(host 1 4)" \
        "$MH_MPIBIN/mpi_ft_jacobi" 96 5@21 2@50
    expect_rc 0
    expect_out "^OK jacobi 96 sweeps on 8 ranks, 6 left, 2 recoveries, bit-identical"
    nothing_left
    ;;
mpi_ft_host_lost | mpi_ft_host_lost_notices)
    # shoalrun --ft and a whole host cut off (its link down) while every
    # rank waits: the launcher gives the host up after SHOAL_HOST_TIMEOUT
    # and tells the ranks of the other host, which were waiting in
    # MPIX_Comm_agree: they get MPIX_ERR_PROC_FAILED, shrink and finish;
    # status 0.  mpi_ft_host_lost_notices: the launcher tells the ranks
    # nothing (SHOAL_FT_NOTICES=0, as srun): rank 0 watches rank 2 and
    # rank 1 rank 3 through the ring, whose wires give them up after
    # SHOAL_FT_TIMEOUT + 2 s (3 s), and they tell each other.
    need_wire
    make_hosts 2
    notices=1 ft_timeout=10s
    [ "$case_name" = mpi_ft_host_lost_notices ] && notices=0 ft_timeout=1s
    SHOAL_FT_NOTICES=$notices SHOAL_FT_TIMEOUT=$ft_timeout \
        SHOAL_HOST_TIMEOUT=2s start "$P-h0" --ft --timeout 60 \
        --host localhost:2,"$(host 1 2)" "$MH_MPIBIN/mpi_ft_ulfm" hostcut 2
    wait_for "^ready" 1 "$tmp/out"
    ends_within 15000 ip -n "$P-sw" link set p1 down
    expect_rc 0
    expect_out "^OK ft hostcut: survivors agree"
    expect_err "^shoalrun: host $P-h1 lost: .*ranks 2-3\); --ft: the job goes on without them$"
    if [ $notices = 0 ]; then
        ! grep -q "the launcher saw" "$tmp/err" ||
            fail "a rank was told by the launcher under SHOAL_FT_NOTICES=0"
        for r in 0 1; do
            for d in 2 3; do
                grep -qE "^shoal\[$r\] WARN am: rank $d failed: " \
                    "$tmp/err" || fail "rank $r never took rank $d for dead"
            done
        done
    fi
    nothing_left 8000
    ;;
ckpt_hosts)
    # Coordinated checkpoint/restart across hosts (docs/FT.md): the heat
    # program of tests/mpi/ckpt_heat.c on 2 hosts x 2 ranks, checkpoints
    # every 6 iterations into a directory both hosts see (the namespaces
    # share /tmp), messages in flight at each (mode inflight: they travel
    # in the images).  Rank 2 (the second host) kills itself at iteration 15;
    # the job restarted with --restart on other hosts (a third host and
    # the second, neither the launcher's, so rank 0 moves too) resumes at
    # iteration 12 and its result is the uninterrupted run's, bit for bit.
    # Then --restart-on-failure across hosts: rank 3 dies once, the
    # launcher starts its daemon tree again and the job resumes from the
    # last complete checkpoint, exactly; nothing is left on any host.
    need_wire
    make_hosts 3
    heat=$MH_MPIBIN/mpi_ckpt_heat
    run "$P-h0" --timeout 60 --host localhost:2,"$(host 1 2)" \
        --checkpoint-dir "$tmp/ref" "$heat" 30 6 - "$tmp/ref.out"
    expect_rc 0
    [ -s "$tmp/ref.out" ] || fail "no reference result"
    run "$P-h0" --timeout 60 --host localhost:2,"$(host 1 2)" \
        --checkpoint-dir "$tmp/ck" "$heat" 30 6 2@15 "$tmp/x.out" inflight
    [ "$rc" -ne 0 ] || fail "the run with rank 2 killed succeeded"
    expect_err "rank 2 (\(pid [0-9]+\)( on host [^ ]+)? was killed by signal 9|died|failed)"
    [ ! -e "$tmp/x.out" ] || fail "the killed run wrote a result"
    [ -e "$tmp/ck/ckpt.2/COMPLETE" ] ||
        fail "no complete checkpoint: $(ls -R "$tmp/ck")"
    run "$P-h0" --timeout 60 --host "$(host 2 2)","$(host 1 2)" \
        --restart "$tmp/ck" "$heat" 30 6 - "$tmp/r.out" inflight
    expect_rc 0
    expect_out "^restarted at iteration 12$"
    cmp "$tmp/ref.out" "$tmp/r.out" || fail "the restarted result differs"
    run "$P-h0" --ft --restart-on-failure --timeout 90 \
        --host localhost:2,"$(host 1 2)" --checkpoint-dir "$tmp/of" \
        "$heat" 30 6 "3@15:$tmp/m1" "$tmp/of.out"
    expect_rc 0
    [ -e "$tmp/m1" ] || fail "rank 3 did not kill itself"
    expect_err "restart-on-failure: restart 1 of 3, from the checkpoint $tmp/of/ckpt.2$"
    expect_out "^restarted at iteration 12$"
    cmp "$tmp/ref.out" "$tmp/of.out" || fail "the result after restart-on-failure differs"
    nothing_left
    ;;
ckpt_trigger_hosts)
    # Checkpoints the launcher asks for, across hosts (docs/FT.md): the
    # heat program on 2 hosts x 2 ranks calling
    # MPIX_Checkpoint_if_requested each iteration (rank 0 sleeps 1 ms in
    # each).  The requests and the ranks' answers travel the daemon tree;
    # every request asked for every 0.25 s is taken at the call the
    # launcher names, by every rank (the program checks), the directory
    # holds the last one, and a restart from it is exact.  Then SIGUSR1 to
    # shoalrun asks for one more.  Two remote hosts of one rank each: a
    # rank's lines go down its own branch of the daemon tree only (a
    # daemon that gets another's says so), with the daemons side by side
    # under the launcher and, with --fanout 1, one below the other.
    need_wire
    make_hosts 3
    heat=$MH_MPIBIN/mpi_ckpt_heat
    hosts=localhost:2,$(host 1 1),$(host 2 1)
    run "$P-h0" --timeout 60 --host "$hosts" --checkpoint-dir "$tmp/ref" \
        "$heat" 1500 0 - "$tmp/ref.out"
    expect_rc 0
    for fan in 1 32; do
        run "$P-h0" --timeout 60 --host "$hosts" --fanout $fan \
            --checkpoint-every 0.25 --checkpoint-dir "$tmp/f$fan" "$heat" \
            1500 0 - "$tmp/f$fan.out" poll:1000
        expect_rc 0
        ! grep -E "not of this branch" "$tmp/err" ||
            fail "a checkpoint line went down the wrong branch (--fanout $fan)"
        cmp "$tmp/ref.out" "$tmp/f$fan.out" || fail "the result differs"
    done
    rm -rf "$tmp/f1" "$tmp/f32"
    run "$P-h0" --timeout 60 --host "$hosts" --checkpoint-every 0.25 \
        --checkpoint-dir "$tmp/ck" "$heat" 1500 0 - "$tmp/p.out" poll:1000
    expect_rc 0
    asked=$(grep -Ec "checkpoint request [0-9]+ \(--checkpoint-every\): the ranks take it at their call [0-9]+ of" "$tmp/err")
    taken=$(count_out "^checkpoint taken at iteration [0-9]+$")
    # (a request answered while a rank finishes names a call past the end)
    [ "$taken" -ge 2 ] && { [ "$taken" -eq "$asked" ] ||
        [ "$taken" -eq $((asked - 1)) ]; } ||
        fail "$asked checkpoints asked for, $taken taken"
    [ "$(ls "$tmp/ck")" = "ckpt.$taken" ] && [ -e "$tmp/ck/ckpt.$taken/COMPLETE" ] ||
        fail "left $(ls "$tmp/ck"), expected ckpt.$taken"
    for r in 0 1 2 3; do
        [ -s "$tmp/ck/ckpt.$taken/rank.$r" ] || fail "no image of rank $r"
    done
    cmp "$tmp/ref.out" "$tmp/p.out" || fail "the result differs"
    last=$(grep -E "^checkpoint taken at iteration" "$tmp/out" | tail -1 | awk '{print $5}')
    run "$P-h0" --timeout 60 --host "$hosts" --restart "$tmp/ck" \
        "$heat" 1500 0 - "$tmp/r.out" poll
    expect_rc 0
    expect_out "^restarted at iteration $last$"
    cmp "$tmp/ref.out" "$tmp/r.out" || fail "the restarted result differs"
    start "$P-h0" --timeout 60 --host "$hosts" --checkpoint-dir "$tmp/s" \
        "$heat" 1500 0 - "$tmp/s.out" poll:1000
    sleep 1
    kill -USR1 "$pid" || fail "no shoalrun to signal"
    wait "$pid"
    rc=$?
    expect_rc 0
    expect_err "checkpoint request 1 \(SIGUSR1\): the ranks take it at their call [0-9]+ of"
    expect_out "^checkpoint taken at iteration [0-9]+$"
    [ -e "$tmp/s/ckpt.1/COMPLETE" ] || fail "no checkpoint after SIGUSR1"
    cmp "$tmp/ref.out" "$tmp/s.out" || fail "the result after SIGUSR1 differs"
    nothing_left
    ;;
late_daemon)
    # The job times out while a daemon is still on its way: when it
    # connects it is told to stop at once, and nothing is left.
    make_hosts 2
    fake_rsh 'sleep 1; exec ip netns exec "$@"'
    run_within 4000 "$P-h0" --timeout 0.3 --rsh "$tmp/rsh" \
        --host localhost:1,"$(host 1)" "$HELPER" "$M" sleep 20
    expect_rc 124
    expect_err "job exceeded the 0.3 s timeout"
    nothing_left
    ;;
no_connect)
    # The remote-exec command runs but no daemon ever connects back (a
    # firewall, a wrong address): lost after SHOAL_HOST_TIMEOUT, and the
    # command is killed.
    make_hosts 1
    fake_rsh 'exec sleep 30'
    SHOAL_HOST_TIMEOUT=1s run_within 5000 "$P-h0" --timeout 30 \
        --rsh "$tmp/rsh" --host localhost:1,"$P-far=10.77.3.50:1" \
        "$HELPER" "$M" sleep 20
    expect_rc 125
    expect_err "host $P-far lost: no daemon connected back within 1 s"
    nothing_left
    ;;
unreachable)
    make_hosts 1
    run_within 5000 "$P-h0" --timeout 30 \
        --host localhost:1,"$P-nosuch=10.77.3.99:1" "$HELPER" "$M" sleep 20
    expect_rc 125
    expect_err "host $P-nosuch lost: the remote-exec command exited with code [0-9]+ before a daemon connected back"
    nothing_left
    ;;
am_tcp2|am_tcp4|am_mixed)
    need_wire
    layout "${case_name#am_}"
    case $case_name in am_tcp2) am_suite 2 ;; *) am_suite 4 ;; esac
    ;;
mpi_io)
    # MPI-IO across two hosts sharing a directory (the namespaces share
    # /tmp): byte-checked access families, two-phase collective buffering
    # with one aggregator per host, the shared pointer's locked side file
    # under contention, atomic mode's byte-range locks, external32.
    need_wire
    layout mixed
    job io_rw "$MH_MPIBIN/mpi_io_rw"
    job io_rw_cb "$MH_MPIBIN/mpi_io_rw" cb
    job io_shared "$MH_MPIBIN/mpi_io_shared"
    job io_atomic "$MH_MPIBIN/mpi_io_atomic"
    job io_ext32 "$MH_MPIBIN/mpi_io_ext32"
    nothing_left
    ;;
mpi_io_crash)
    # A rank killed in the middle of a collective write through collective
    # buffering across two hosts sharing a directory (2 + 2 ranks, one
    # aggregator per host: ranks 0 and 2; tests/mpi/io_crash.c cbwrite,
    # hundreds of rounds): the second host's aggregator, then a rank of it
    # that is not one, blocking and nonblocking.  The job must end at once
    # (not by its 30 s bound) naming the rank and its host, the victim must
    # have died inside the call, and every byte of the collective write an
    # MPI_File_sync covered before must be there (cbcheck: each byte of
    # the crashed write 0 or its new value).
    need_wire
    layout mixed
    for c in "2 blocking" "3 blocking" "2 nonblocking" "3 nonblocking"; do
        set -- $c
        d=$(mktemp -d "$tmp/io-crash.XXXXXX") # $tmp: /tmp, shared
        run_within 20000 "$lns" --timeout 30 --host "$hosts" \
            "$MH_MPIBIN/mpi_io_crash" cbwrite "$d" "$1" 0 "$2"
        [ "$rc" -ne 0 ] || fail "rank $1 killed ($2): the job succeeded"
        expect_err "rank $1 \(pid [0-9]+\) on host $P-h1 was killed by signal 9"
        [ "$(cat "$d/victim.txt" 2>/dev/null)" = mid ] ||
            fail "rank $1 ($2) was not killed inside the write"
        run "$lns" --timeout 30 --host localhost:1 "$MH_MPIBIN/mpi_io_crash" \
            cbcheck "$d" 4
        expect_rc 0
        expect_out "synced bytes intact"
        echo "  rank $1 killed, $2: $(sed -n 's/^io_crash: //p' "$tmp/out")"
        rm -rf "$d"
    done
    nothing_left
    ;;
mpi_2x2|mpi_4x1)
    need_wire
    case $case_name in mpi_2x2) layout mixed ;; *) layout h4x1 ;; esac
    mpi_suite
    ;;
netem_delay)
    # 2 ms +- 1 ms on every link, each way (reordering packets, which TCP
    # must put back in order).
    need_wire
    need_netem
    layout mixed
    shape netem delay 2ms 1ms
    faulty
    ;;
netem_loss)
    need_wire
    need_netem
    layout mixed
    shape netem loss 7%
    faulty
    ;;
slow_link)
    # Without netem: the switch sends to each host through a token bucket
    # of 200 Mbit/s holding 1 ms of data, so bursts wait (a delay varying
    # with the load) and what overflows is dropped (loss, retransmission).
    need_wire
    command -v tc >/dev/null || skip "no tc command (iproute2)"
    layout mixed
    shape -s tbf rate 200mbit burst 16kb latency 1ms
    faulty
    n=$(tbf_stats)
    echo "  packets at the switch: $n"
    case $n in
    "dropped 0,"*) fail "no packet was dropped: the loss went untested" ;;
    *"held back 0") fail "the links were not slowed" ;;
    esac
    ;;
random_loss)
    # Without netem: every host drops 5% of the packets it receives, at
    # random (iptables' statistic match), so TCP retransmits under the
    # traffic (the udp variant: the datagram wire does, only datagrams
    # dropped); nothing may be lost, repeated or reordered.
    need_wire
    command -v iptables >/dev/null || skip "no iptables command"
    layout mixed
    drop_at_random "$wire"
    faulty
    n=0
    for ns in $made; do
        case $ns in "$P-h"*) ;; *) continue ;; esac
        d=$(ip netns exec "$ns" iptables -n -v -x -L INPUT |
            awk '$3 == "DROP" { print $1 }')
        n=$((n + ${d:-0}))
    done
    echo "  packets dropped at random: $n"
    [ "$n" -gt 0 ] || fail "no packet was dropped: the loss went untested"
    ;;
link_down_traffic)
    # A host's link goes silent (no RST, no FIN) while its ranks exchange
    # AM traffic with the others: the job ends with a message naming it.
    need_wire
    layout mixed
    SHOAL_HOST_TIMEOUT=1500ms start "$lns" --timeout 60 --host "$hosts" \
        "$MH_AM/am_traffic" random 100000000
    sleep 0.5
    # the ranks must be talking by now: the job has not ended
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the link went down"
    ends_within 6000 ip -n "$P-sw" link set p1 down
    expect_rc 125
    expect_err "host $P-h1 lost: no word from its daemon for 1.5 s \(2 ranks\)"
    nothing_left 5000
    ;;
link_down_wire)
    # The same silent link, with the launcher's host timeout later (12 s,
    # twice the 6 s the test gives the ranks):
    # the TCP wire's bound on a silent link (SHOAL_TCP_DEAD_TIMEOUT, 2 s
    # here) makes a rank on the launcher's host name a lost peer of the
    # other host first, within 6 s of the cut; the job then ends at the
    # launcher's host timeout.  The link goes down only once every rank
    # is sending: before that they only count what they will receive, and
    # a rank that does not call Shoal cannot notice anything (cutting 0.5 s
    # after the start, as this case first did with a count of 10^8,
    # measured how long that counting took, 1.7 s to over 25 s, not the
    # wire).  The count is small enough that the ranks start within a
    # fraction of the bound of each other: a rank still counting reads
    # nothing, and a connection whose window stays closed for the bound is
    # ended by the kernel too (docs/TCP.md, "A silent link").
    need_wire
    layout mixed
    SHOAL_HOST_TIMEOUT=12s SHOAL_TCP_DEAD_TIMEOUT=2s SHOAL_UDP_DEAD_TIMEOUT=2s \
        start "$lns" --timeout 60 \
        --host "$hosts" "$MH_AM/am_traffic" random 2000000
    wait_for "^rank [0-9]+ sending" 4 "$tmp/out"
    sleep 0.3
    cut_link_expect "$(lost_re "[0-9]+")" \
        "no rank reported the silent link within 6 s"
    ;;
link_down_idle)
    # A silent link while a rank waits with nothing outstanding: rank 0
    # waits for rank 3 (the other host), every connection idle, when the
    # other host's link goes down.  Keepalive (SHOAL_TCP_DEAD_TIMEOUT=2s:
    # probes after 1 s, then every 1 s, 2 unanswered: 3 s) ends rank 0's
    # idle connections and wakes it from its sleep; it must name a lost
    # peer within 6 s of the cut.
    need_wire
    layout mixed
    SHOAL_HOST_TIMEOUT=12s SHOAL_TCP_DEAD_TIMEOUT=2s SHOAL_UDP_DEAD_TIMEOUT=2s \
        start "$lns" --timeout 60 \
        --host "$hosts" "$MH_MPI" idle_wait 40
    wait_for "^rank 0 waiting" 1 "$tmp/out"
    sleep 1.5 # every rank is asleep: nothing in flight
    cut_link_expect "^shoal\[0\] .*$(lost_re "[23]")" \
        "rank 0 did not report the silent link within 6 s"
    ;;
busy_receiver)
    # A rank that computes is not a dead one.  Rank 0 stops calling MPI
    # for 8 s (mh_mpi busy_receiver: it sleeps, reading nothing) while
    # ranks 2 and 3, on the other host, send it 4 MiB each in eager
    # messages, with SHOAL_TCP_DEAD_TIMEOUT=2s: rank 0's receive buffers
    # fill and the senders' kernels probe a zero window, which rank 0's
    # kernel answers.  The job must succeed with no peer reported lost.
    # With TCP_USER_TIMEOUT set to the bound (as before the liveness
    # check of tcp_live.c), Linux ended those connections 2 s into the
    # zero window: "connection to rank 0 lost: timed out".
    # Over udp no kernel answers for rank 0: its liveness thread answers
    # the senders' probes (the data waits unacknowledged), so the ss proof
    # below is TCP's only; a death there reads "rank 0 failed: no answer to
    # liveness probes", hence the wider pattern.
    need_wire
    lost="lost"
    [ "$wire" = udp ] && lost="lost|rank [0-9]+ failed"
    layout mixed
    SHOAL_HOST_TIMEOUT=12s SHOAL_TCP_DEAD_TIMEOUT=2s SHOAL_UDP_DEAD_TIMEOUT=2s \
        start "$lns" --timeout 60 \
        --host "$hosts" "$MH_MPI" busy_receiver 8 4
    wait_for "^rank 0 busy" 1 "$tmp/out"
    # The proof that the window is closed: the senders' sockets to rank 0
    # (10.77.3.10), as their kernel sees them, 4 s into rank 0's sleep
    # (the senders wait in MPI_Isend for eager credits by then).
    sleep 4
    [ "$wire" = tcp ] && in_ns "$P-h1" ss -tnmi dst 10.77.3.10 >"$tmp/ss" 2>&1
    grep -q "rank 0 receiving" "$tmp/out" && fail "rank 0 woke before the look"
    if [ "$wire" = tcp ]; then
        # A closed window: bytes not sent, none in flight (no unacked:),
        # and a peer window of 0 (ss omits snd_wnd when it is 0).  lastack
        # shows the probes answered, backoff their interval growing.
        awk '/notsent:[1-9]/ && !/unacked:/ && (/snd_wnd:0( |$)/ || !/snd_wnd:/)' \
            "$tmp/ss" >"$tmp/zero"
        zero=$(wc -l <"$tmp/zero")
        grep -o -E "(backoff|lastack|notsent|rwnd_limited):[^ ]*" "$tmp/zero" |
            paste -sd' ' | sed 's/^/  /'
    fi
    grep -E "$lost" "$tmp/err" && fail "a busy peer was reported lost"
    if [ "$wire" = tcp ]; then
        [ "$zero" -ge 1 ] || { cat "$tmp/ss"; fail "no sender saw a zero window"; }
    fi
    wait "$pid"
    rc=$?
    grep -E "$lost" "$tmp/err" && fail "a busy peer was reported lost"
    expect_rc 0
    [ "$(count_out '^busy rank [0-3] of 4 ok')" -eq 4 ] || fail "not 4 ranks ok"
    [ "$wire" = tcp ] && echo "  zero windows seen: $zero"
    nothing_left
    ;;
conn_ring)
    # A ring on demand: each rank opens one connection and, when its left
    # neighbour is on another host, accepts one (two per rank over TCP).
    need_wire
    layout h8x1
    job ring.8x1 "$MH_AM/am_traffic" connections
    SHOAL_WIRES=$wire job ring.8x1.$wire "$MH_AM/am_traffic" connections
    nothing_left
    ;;
conn_ring16)
    need_wire
    layout h4x4
    job ring.4x4 "$MH_AM/am_traffic" connections
    SHOAL_WIRES=$wire job ring.4x4.$wire "$MH_AM/am_traffic" connections
    SHOAL_CONNECT=all job ring.4x4.all "$MH_AM/am_traffic" connections
    nothing_left
    ;;
conn_a2a)
    # All-to-all on demand: a connection to each of the N-1 peers (plus
    # the rank's own ring to itself: N).
    need_wire
    layout h4x4
    job a2a.4x4 "$MH_AM/am_traffic" connections_a2a
    SHOAL_WIRES=$wire job a2a.4x4.$wire "$MH_AM/am_traffic" connections_a2a
    nothing_left
    ;;
udp_faults)
    # The datagram wire between hosts with its own faults: every rank
    # drops 5%, duplicates 3% and reorders 5% of the datagrams it sends
    # (data, acknowledgements, probes; SHOAL_UDP_FAULTS, per mille).  The
    # programs check every message arrives exactly once, in order, intact.
    need_wire
    layout mixed
    export SHOAL_UDP_FAULTS=drop=50,dup=30,reorder=50
    job random "$MH_AM/am_traffic" random 1000
    # every rank, the remote ones too, injects them
    [ "$(grep -c "SHOAL_UDP_FAULTS=$SHOAL_UDP_FAULTS: dropping" "$tmp/err")" -eq 4 ] ||
        fail "not every rank says it injects faults"
    job all_to_all "$MH_AM/am_traffic" all_to_all 300
    job flood "$MH_AM/am_traffic" flood 3000
    job long_offsets "$MH_AM/am_traffic" long_offsets
    job p2p_basic "$MH_MPIBIN/mpi_p2p_basic"
    job p2p_order "$MH_MPIBIN/mpi_p2p_order"
    job coll_basic "$MH_MPIBIN/mpi_coll_basic"
    nothing_left
    ;;
udp_link_cut)
    # A host's link goes down for 1 s under steady traffic and comes back:
    # the datagram wire retransmits what was lost (its timer backs off to
    # at most 1 s) and, well within SHOAL_UDP_DEAD_TIMEOUT (20 s), nobody
    # is reported lost; the job completes, every message checked.  The
    # launcher's own bound is 25 s, so it does not give up on the host.
    need_wire
    layout mixed
    SHOAL_HOST_TIMEOUT=25s start "$lns" --timeout 60 --host "$hosts" \
        "$MH_AM/am_traffic" random "$LINK_CUT_COUNT"
    wait_for "^rank [0-9]+ sending" 4 "$tmp/out"
    sleep 0.3
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the link went down"
    ip -n "$P-sw" link set p1 down
    sleep 1
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        rc=$?
        fail "the job ended (status $rc) while the link was down"
    fi
    ip -n "$P-sw" link set p1 up
    t0=$(now_ns)
    wait "$pid"
    rc=$?
    echo "  the job ended $(ms_since "$t0") ms after the link came back"
    grep -E "lost|rank [0-9]+ failed" "$tmp/err" &&
        fail "a peer was reported lost over a link down for 1 s"
    expect_rc 0
    expect_out "^ok"
    nothing_left
    ;;
udp_pairs)
    # Pair sockets (SHOAL_UDP_PAIRS): a rank with at most that many peers
    # on the datagram wire gives each a socket of its own.  4 hosts x 1
    # rank, 3 peers each: with 3 every rank has 3, with 2 none.  Then 2
    # ranks on one host and 1 on the other under shm,udp with 2: the one
    # alone has two peers on the wire and a pair socket for each, the two
    # have one each but a shared-memory peer too, so none (their poll
    # stays one system call), and the shapes mix (one side receiving on a
    # pair socket, the other sending from its shared port and receiving
    # on the data socket).  Every byte is checked each time, and each
    # rank's log says how many it had.
    need_wire
    layout h4x1
    for n in 3 2; do
        want=$n
        [ "$n" -lt 3 ] && want=0
        SHOAL_UDP_PAIRS=$n SHOAL_LOG=info job "all_to_all (pairs $n)" \
            "$MH_AM/am_traffic" all_to_all 300
        [ "$(grep -c -E "udp: pair sockets: $want of the 3 peers talked to" "$tmp/err")" -eq 4 ] ||
            fail "SHOAL_UDP_PAIRS=$n: not $want pair sockets on every rank: $(grep -E 'pair sockets' "$tmp/err" | head -4 | tr '\n' ' ')"
        SHOAL_UDP_PAIRS=$n job "long_offsets (pairs $n)" "$MH_AM/am_traffic" long_offsets
        SHOAL_UDP_PAIRS=$n job "p2p_basic (pairs $n)" "$MH_MPIBIN/mpi_p2p_basic"
    done
    hosts="$(host 0 2),$(host 1 1)"
    SHOAL_UDP_PAIRS=2 SHOAL_LOG=info job "all_to_all (mixed)" \
        "$MH_AM/am_traffic" all_to_all 300
    [ "$(grep -c -E "udp: pair sockets: 0 of the 1 peers talked to" "$tmp/err")" -eq 2 ] &&
        [ "$(grep -c -E "udp: pair sockets: 2 of the 2 peers talked to" "$tmp/err")" -eq 1 ] ||
        fail "not 2 pair sockets on host 1's rank and none on host 0's: $(grep -E 'pair sockets' "$tmp/err" | tr '\n' ' ')"
    SHOAL_UDP_PAIRS=2 job "long_offsets (mixed)" "$MH_AM/am_traffic" long_offsets
    SHOAL_UDP_PAIRS=2 job "p2p_basic (mixed)" "$MH_MPIBIN/mpi_p2p_basic"
    SHOAL_UDP_PAIRS=2 job "coll_basic (mixed)" "$MH_MPIBIN/mpi_coll_basic"
    ;;
default_wires)
    # SHOAL_WIRES unset: the library's default (shm,udp,tcp) takes the
    # datagram wire between hosts, with TCP brought up behind it; each
    # rank's log says which wires came up and how many peers it talked
    # to over datagrams (the 2 ranks of the other host).  Then UDP
    # dropped by a firewall on one host: the default still runs the job,
    # over TCP for the pairs across it, and says why.
    need_wire
    layout mixed
    SHOAL_LOG=info job default.am "$MH_AM/am_traffic" all_to_all 300
    [ "$(grep -c -E "wires shm\+udp\+tcp\b" "$tmp/err")" -eq 4 ] ||
        fail "not every rank brought up shm+udp+tcp by default: $(grep -E ' wires ' "$tmp/err" | tr '\n' ' ')"
    [ "$(grep -c -E "udp: pair sockets: [0-9]+ of the 2 peers talked to" "$tmp/err")" -eq 4 ] ||
        fail "not every rank talked to its 2 peers across over datagrams: $(grep -E 'pair sockets' "$tmp/err" | tr '\n' ' ')"
    job default.mpi "$MH_MPIBIN/mpi_p2p_basic"
    job default.coll "$MH_MPIBIN/mpi_coll_basic"
    if command -v iptables >/dev/null; then
        in_ns "$P-h1" iptables -A INPUT -p udp -j DROP
        SHOAL_UDP_PROBE_TIMEOUT=1s JOB_TIMEOUT=60 job default.blocked \
            "$MH_AM/am_traffic" random 1000
        expect_err "UDP may be blocked between the hosts \(a firewall\); its ranks are reached by the next wire in SHOAL_WIRES=shm,udp,tcp"
        in_ns "$P-h1" iptables -F INPUT
    else
        echo "  default.blocked: skipped (no iptables command)"
    fi
    nothing_left
    ;;
udp_blocked)
    # A host drops every UDP datagram while TCP passes (a firewall), and
    # SHOAL_WIRES=shm,udp lists no other wire: the first-contact probe
    # gets no answer, and the job must end within the probe's timeout
    # (not the dead timeout's 20 s) with a message that says UDP may be
    # blocked and how to fall back to TCP, not hang, and leave nothing
    # behind.
    need_wire
    command -v iptables >/dev/null || skip "no iptables command"
    layout mixed
    in_ns "$P-h1" iptables -A INPUT -p udp -j DROP
    SHOAL_UDP_PROBE_TIMEOUT=1s run_within 20000 "$lns" --timeout 60 \
        --host "$hosts" "$MH_AM/am_traffic" random 1000
    [ "$rc" -ne 0 ] || fail "the job succeeded with UDP blocked"
    expect_err "no answer from rank [0-9]+'s host 10\.77\.[0-9.]+ to datagrams in 1\.0 s \(SHOAL_UDP_PROBE_TIMEOUT\): UDP may be blocked between the hosts \(a firewall\); SHOAL_WIRES=shm,udp \(list tcp after it to fall back to TCP\)"
    nothing_left
    ;;
udp_fallback)
    # SHOAL_WIRES=shm,udp,tcp across a firewall that passes TCP but not
    # UDP: each pair across it finds by the first-contact probe that
    # datagrams do not pass and talks over TCP; the job succeeds (every
    # message checked), each rank warns once per host.  A firewall that
    # drops UDP coming in, one that drops it going out (one direction
    # only), and one that rejects it (ICMP port unreachable: known at
    # once, no timeout); then AM traffic and MPI point-to-point and
    # collectives.  With the probe off (SHOAL_UDP_PROBE_TIMEOUT=0) the
    # same pairs stay on datagrams and the job fails.
    need_wire
    command -v iptables >/dev/null || skip "no iptables command"
    layout mixed
    export SHOAL_WIRES=shm,udp,tcp SHOAL_UDP_PROBE_TIMEOUT=1s
    fell_back="to datagrams in 1\.0 s \(SHOAL_UDP_PROBE_TIMEOUT\): UDP may be blocked between the hosts \(a firewall\); its ranks are reached by the next wire in SHOAL_WIRES=shm,udp,tcp"
    in_ns "$P-h1" iptables -A INPUT -p udp -j DROP
    JOB_TIMEOUT=60 job fallback.in.am "$MH_AM/am_traffic" random 1000
    expect_err "$fell_back"
    JOB_TIMEOUT=60 job fallback.in.mpi "$MH_MPIBIN/mpi_p2p_basic"
    expect_err "$fell_back"
    JOB_TIMEOUT=60 job fallback.in.coll "$MH_MPIBIN/mpi_coll_basic"
    in_ns "$P-h1" iptables -F INPUT
    in_ns "$P-h1" iptables -A OUTPUT -p udp -j DROP
    JOB_TIMEOUT=60 job fallback.out.am "$MH_AM/am_traffic" random 1000
    expect_err "$fell_back"
    in_ns "$P-h1" iptables -F OUTPUT
    in_ns "$P-h1" iptables -A INPUT -p udp -j REJECT
    t0=$(now_ns)
    JOB_TIMEOUT=60 job fallback.reject.am "$MH_AM/am_traffic" random 1000
    expect_err "datagrams to rank [0-9]+'s host 10\.77\.[0-9.]+ were refused \(Connection refused\): a firewall rejects UDP between the hosts"
    took=$(ms_since "$t0")
    [ "$took" -lt 5000 ] || fail "a rejecting firewall took $took ms to find"
    in_ns "$P-h1" iptables -F INPUT
    in_ns "$P-h1" iptables -A INPUT -p udp -j DROP
    SHOAL_UDP_PROBE_TIMEOUT=0 SHOAL_UDP_DEAD_TIMEOUT=2s run_within 40000 \
        "$lns" --timeout 60 --host "$hosts" "$MH_AM/am_traffic" random 1000
    [ "$rc" -ne 0 ] || fail "the job succeeded over blocked datagrams without the probe"
    nothing_left
    ;;
udp_strangers)
    # While the job runs, a stranger on the same bridge (10.77.3.99) sends
    # to every UDP port of the job's ranks (data and liveness sockets):
    # random bytes, a short datagram, a header with the right magic and
    # version but a made-up tag, and a plausible DATA datagram (the
    # socket's rank as dst, another rank as src, payload) with a made-up
    # tag.  Nothing of it may be delivered (am_traffic checks every
    # message), no socket may answer the stranger, the job must succeed,
    # and each rank logs the first datagrams it dropped (SHOAL_LOG=info).
    need_wire
    command -v python3 >/dev/null || skip "no python3 for the stranger"
    layout mixed
    bridge_host 9 "$P-x" 10.77.3.99
    SHOAL_LOG=info start "$lns" --timeout 60 --host "$hosts" \
        "$MH_AM/am_traffic" random "$STRANGER_COUNT"
    wait_for "^rank [0-9]+ sending" 4 "$tmp/out"
    # The job's sockets: ADDRESS:PORT RANK, the rank from the process's
    # environment (PMI_RANK): each rank's data and liveness sockets, and its
    # send port (held by one socket, shared by those connected to peers).
    : >"$tmp/ports"
    for ns in "$P-h0" "$P-h1"; do
        in_ns "$ns" ss -uanpH | grep '"am_traffic"' |
            while read -r _ _ _ local _ users; do
                p=$(echo "$users" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
                r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                    sed -n 's/^PMI_RANK=//p')
                echo "$local ${r:-0}"
            done >>"$tmp/ports"
    done
    sort -u -o "$tmp/ports" "$tmp/ports"
    sed 's/^/  socket /' "$tmp/ports"
    [ "$(wc -l <"$tmp/ports")" -eq 12 ] ||
        fail "not 12 UDP ports (3 per rank): $(cat "$tmp/ports")"
    kill -0 "$pid" 2>/dev/null || fail "the job ended before the strangers came"
    in_ns "$P-x" python3 - "$tmp/ports" >"$tmp/stranger" 2>&1 <<'PY'
import os, random, select, socket, struct, sys, time
targets = []
for line in open(sys.argv[1]):
    addr, rank = line.split()
    host, port = addr.rsplit(":", 1)
    targets.append((host.strip("[]"), int(port), int(rank)))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.3.99", 0))
def hdr(typ, src, dst, seq, length):
    # magic, version, type, flags, src, dst, seq, ack, window, len, sack,
    # src_epoch, dst_epoch, tag (made up)
    return struct.pack("<BBBBIIIIHHQIIQ", 0xd5, 1, typ, 0, src, dst, seq, 0,
                       256, length, 0, random.getrandbits(32) | 1,
                       random.getrandbits(32) | 1, random.getrandbits(64))
sent = 0
for rnd in range(40):
    for host, port, rank in targets:
        junk = bytes([0x17]) + os.urandom(199)
        payload = os.urandom(32)
        for d in (junk, os.urandom(20), hdr(3, (rank + 2) % 4, rank, rnd, 0),
                  hdr(1, (rank + 2) % 4, rank, rnd, len(payload)) + payload):
            s.sendto(d, (host, port))
            sent += 1
    time.sleep(0.02)
answers = 0
end = time.time() + 0.5
while time.time() < end:
    r, _, _ = select.select([s], [], [], max(0, end - time.time()))
    if r:
        data, frm = s.recvfrom(65536)
        answers += 1
        print("answer from %s: %d bytes" % (frm, len(data)))
print("sent %d datagrams, %d answers" % (sent, answers))
sys.exit(1 if answers else 0)
PY
    src=$?
    sed 's/^/  stranger: /' "$tmp/stranger"
    [ "$src" -eq 0 ] || fail "the job's sockets answered a stranger"
    kill -0 "$pid" 2>/dev/null ||
        echo "  (the job ended while the strangers sent; the count may be raised)"
    wait "$pid"
    rc=$?
    grep -E "lost|rank [0-9]+ failed" "$tmp/err" && fail "a peer was reported lost"
    expect_rc 0
    expect_out "^ok"
    grep -E "udp: dropped a datagram:" "$tmp/err" | sort | uniq -c | sed 's/^/  /'
    for r in 0 1 2 3; do
        grep -E "^shoal\[$r\].*udp: dropped a datagram: wrong tag" "$tmp/err" >/dev/null ||
            fail "rank $r did not log a datagram dropped for a wrong tag"
        grep -E "^shoal\[$r\].*udp: dropped a datagram: (not a Shoal datagram|shorter than a header)" \
            "$tmp/err" >/dev/null ||
            fail "rank $r did not log a datagram dropped as not a Shoal one"
    done
    nothing_left
    ;;
udp_ipv6)
    # The datagram wire over IPv6: ULA addresses on every host's eth0
    # (no duplicate detection, so usable at once), SHOAL_UDP_FAMILY=ipv6;
    # the launcher still reaches the hosts over IPv4.  Then the multicast
    # broadcast over IPv6 groups.
    need_wire
    [ -d /proc/sys/net/ipv6 ] || skip "the kernel has no IPv6"
    layout mixed
    for i in 0 1; do
        [ "$(in_ns "$P-h$i" cat /proc/sys/net/ipv6/conf/eth0/disable_ipv6 2>/dev/null)" = 0 ] ||
            skip "IPv6 is disabled in the namespaces"
        ip -n "$P-h$i" addr add "fd77::$((10 + i))/64" dev eth0 nodad 2>"$tmp/ip6" ||
            skip "cannot add an IPv6 address: $(head -1 "$tmp/ip6")"
    done
    in_ns "$P-h0" ping -6 -c 1 -W 2 fd77::11 >/dev/null 2>&1 ||
        in_ns "$P-h0" ping -c 1 -W 2 fd77::11 >/dev/null 2>&1 ||
        echo "  (no ping6 answer, or no ping; going on)"
    export SHOAL_UDP_FAMILY=ipv6
    SHOAL_LOG=debug job all_to_all "$MH_AM/am_traffic" all_to_all 300
    # every rank bound its host's ULA address
    grep -E "udp: bound \[?fd77::" "$tmp/err" | sed 's/^/  /' | head -n 4
    [ "$(grep -c -E "udp: bound \[?fd77::1[01]" "$tmp/err")" -eq 4 ] ||
        fail "not every rank bound an IPv6 address"
    job p2p_basic "$MH_MPIBIN/mpi_p2p_basic"
    # The multicast broadcast over IPv6 too: groups from SHOAL_MCAST_GROUP6
    # joined on eth0, the largest message carried by multicast, no fallback.
    SHOAL_MCAST=on SHOAL_MCAST_MIN=0 SHOAL_LOG=debug job mcast "$MH_BCAST" \
        --roots 0,3 --sizes 1,1425,1m,4m
    expect_out "^ok bcast"
    [ "$(grep -c -E "multicast broadcast: interface fd77::1[01], port" "$tmp/err")" -ge 2 ] ||
        fail "the leaders did not set up IPv6 multicast"
    expect_err "multicast broadcast of 4194304 bytes: [0-9]+ us, [1-9][0-9]* datagrams"
    ! grep -E "point-to-point from now on|multicast broadcast unusable" "$tmp/err" ||
        fail "the IPv6 broadcast fell back to point-to-point"
    nothing_left
    ;;
udp_xdp)
    # Kernel bypass: SHOAL_UDP_XDP=on, so the datagrams between hosts go
    # through an AF_XDP socket on each host's veth (one rank per host: one
    # XDP program per interface).  Skips where shoal-info says AF_XDP cannot
    # run (not built, no permission, no AF_XDP in the kernel).  The log
    # must show every rank on it, in native or generic mode, and that
    # datagrams both went and came through it, not through the socket;
    # AM and MPI programs check every byte.  Then 2 ranks per host: the
    # second rank of each host finds the interface taken and keeps to the
    # socket path, while its peers use AF_XDP: the two paths interwork.
    need_wire
    xdp=$("${MH_SHOAL_INFO:-false}" | grep -E '^ +kernel bypass \(XDP\)')
    echo "  shoal-info:$xdp"
    case $xdp in
    *" yes "*) ;;
    *) skip "AF_XDP cannot run here:${xdp#*)}" ;;
    esac
    make_hosts 2
    lns=$P-h0
    hosts="localhost:1,$(host 1 1)"
    export SHOAL_UDP_XDP=on
    SHOAL_LOG=info job random "$MH_AM/am_traffic" random 2000
    grep -E "udp: AF_XDP|AF_XDP" "$tmp/err" | sed 's/^/  /' | head -n 8
    [ "$(grep -c -E "udp: AF_XDP on eth0 queue 0: (native|generic) XDP" "$tmp/err")" -eq 2 ] ||
        fail "not every rank runs AF_XDP"
    ! grep -E "AF_XDP cannot run|AF_XDP not used" "$tmp/err" >/dev/null ||
        fail "a rank fell back to the socket path"
    # at the end each rank counts what went through it: both ways, many
    grep -E "udp: AF_XDP on eth0: [0-9]+ datagrams sent, [0-9]+ received" "$tmp/err" |
        sed -E 's/.*: ([0-9]+) datagrams sent, ([0-9]+) received.*/\1 \2/' >"$tmp/xdpn"
    [ "$(wc -l <"$tmp/xdpn")" -eq 2 ] || fail "no AF_XDP counts from every rank"
    while read -r sent got; do
        [ "$sent" -ge 100 ] && [ "$got" -ge 100 ] ||
            fail "AF_XDP carried too little: $sent sent, $got received"
    done <"$tmp/xdpn"
    job all_to_all "$MH_AM/am_traffic" all_to_all 300
    job long_offsets "$MH_AM/am_traffic" long_offsets
    job p2p_basic "$MH_MPIBIN/mpi_p2p_basic"
    job coll_basic "$MH_MPIBIN/mpi_coll_basic"
    # two ranks per host: one of them on AF_XDP, the other on the socket.
    # The kernel frees an exited rank's AF_XDP socket after a while: wait
    # (5 s at most) until the last job's are gone, or the queue is taken.
    # (A host's only rank waits for that itself; of two, neither knows
    # whether the other or a leftover holds the queue.)
    xdp_gone
    hosts="localhost:2,$(host 1 2)"
    SHOAL_LOG=info job mixed_paths "$MH_AM/am_traffic" all_to_all 300
    [ "$(grep -c -E "udp: AF_XDP on eth0 queue 0:" "$tmp/err")" -eq 2 ] ||
        fail "not one rank per host on AF_XDP"
    [ "$(grep -c -E "AF_XDP cannot run: .*(in use|already has an XDP program)" "$tmp/err")" -eq 2 ] ||
        fail "the second rank of a host does not say why it has no AF_XDP"
    job p2p_basic "$MH_MPIBIN/mpi_p2p_basic"
    # IPv6 (ULA addresses, as udp_ipv6), one rank per host, when there is
    # IPv6: the program matches IPv6 headers, peers' link addresses come
    # from their datagrams
    hosts="localhost:1,$(host 1 1)"
    xdp_gone
    if [ "$(in_ns "$P-h0" cat /proc/sys/net/ipv6/conf/eth0/disable_ipv6 2>/dev/null)" = 0 ] &&
        ip -n "$P-h0" addr add fd77::10/64 dev eth0 nodad 2>/dev/null &&
        ip -n "$P-h1" addr add fd77::11/64 dev eth0 nodad 2>/dev/null; then
        SHOAL_UDP_FAMILY=ipv6 SHOAL_LOG=info job ipv6 "$MH_AM/am_traffic" random 2000
        [ "$(grep -c -E "udp: AF_XDP on eth0 queue 0:" "$tmp/err")" -eq 2 ] ||
            fail "not every rank runs AF_XDP over IPv6"
        grep -E "udp: AF_XDP on eth0: [0-9]+ datagrams sent, [0-9]+ received" "$tmp/err" |
            sed -E 's/.*: ([0-9]+) datagrams sent, ([0-9]+) received.*/\1 \2/' >"$tmp/xdpn"
        while read -r sent got; do
            [ "$sent" -ge 100 ] && [ "$got" -ge 100 ] ||
                fail "AF_XDP over IPv6 carried too little: $sent sent, $got received"
        done <"$tmp/xdpn"
        # and to ranks on the socket path, whose kernel checks the UDP
        # checksums AF_XDP computed
        hosts="localhost:2,$(host 1 2)"
        SHOAL_UDP_FAMILY=ipv6 job ipv6_mixed "$MH_AM/am_traffic" all_to_all 300
    else
        echo "  (no IPv6 in the namespaces: its part skipped)"
    fi
    nothing_left
    ;;
mcast_bcast)
    # The multicast broadcast (docs/DATAGRAM.md): every size from 1 B to
    # 64 MiB (SHOAL_MCAST_MIN=0), from two roots, as MPI_Bcast, MPI_Ibcast,
    # a strided vector and MPI_Bcast_init (and, on 4 ranks, 6 overlapping
    # MPI_Ibcasts per size), the data checked on every rank: 8 ranks over 4
    # hosts (a leader per host shares it through shared memory), 4 ranks
    # over 4 hosts, 2 over 2.  The roots' debug lines must show multicast
    # carried the largest message, with no fallback to point-to-point.
    need_wire
    mcast_job() {
        # Every size to 64 MiB, twice, four ways, on 8 ranks: some 40 s
        # under the sanitizers, more on a loaded machine.
        JOB_TIMEOUT=150 SHOAL_MCAST=on SHOAL_MCAST_MIN=0 SHOAL_LOG=debug \
            job "$@"
        expect_out "^ok bcast"
        ! grep -E "point-to-point from now on" "$tmp/err" ||
            fail "the broadcast fell back to point-to-point"
    }
    layout h4x2
    mcast_job 8_ranks "$MH_BCAST" --roots 0,5
    expect_err "multicast broadcast of 67108864 bytes: [0-9]+ us, [0-9]+ datagrams"
    kill_namespaces; made=""
    layout h4x1
    mcast_job 4_ranks "$MH_BCAST" --roots 3 --sizes 1,1425,1m,16m --overlap 6
    expect_err "multicast broadcast of 16777216 bytes: [0-9]+ us, [0-9]+ datagrams"
    kill_namespaces; made=""
    layout tcp2
    mcast_job 2_ranks "$MH_BCAST" --roots 1 --sizes 1,100000,4m
    expect_err "multicast broadcast of 4194304 bytes: [0-9]+ us, [0-9]+ datagrams"
    # auto (the default) takes multicast from 3 hosts and 256 KiB: not here
    SHOAL_LOG=debug job auto_2_hosts "$MH_BCAST" --sizes 4m
    ! grep -E "multicast broadcast of" "$tmp/err" ||
        fail "SHOAL_MCAST=auto used multicast between 2 hosts"
    nothing_left
    ;;
mcast_loss)
    # 5% of the datagrams every host receives dropped at random: receivers
    # ask again, the root sends again, every byte arrives.
    need_wire
    command -v iptables >/dev/null || skip "no iptables command"
    layout h4x1
    drop_at_random udp
    SHOAL_MCAST=on SHOAL_MCAST_MIN=0 SHOAL_LOG=debug \
        job lossy "$MH_BCAST" --roots 0,2 --sizes 1,1425,100000,1m,16m
    expect_out "^ok bcast"
    grep -E "multicast broadcast of 16777216 bytes: .* \([1-9][0-9]* again\)" \
        "$tmp/err" >/dev/null || fail "no fragment was sent again"
    nothing_left
    ;;
mcast_blocked)
    # Multicast dropped on every host (iptables): each root finds its
    # receivers get nothing, says so once and sends point-to-point; the
    # result is still right.
    need_wire
    command -v iptables >/dev/null || skip "no iptables command"
    layout h4x1
    hosts_do iptables -A INPUT -d 224.0.0.0/4 -j DROP ||
        fail "iptables cannot drop multicast"
    SHOAL_MCAST=on SHOAL_MCAST_MIN=0 job blocked "$MH_BCAST" --roots 0,2 \
        --sizes 1,1m,16m --reps 2
    expect_out "^ok bcast 12 calls"
    expect_err "rank [123] of the communicator receives no multicast datagrams; it gets broadcasts from rank 0 point-to-point from now on \(logged once\)"
    # Root 2 comes second: ranks 1 and 3 tell it at once that an earlier
    # root could not reach them (flag 4), so it logs that reason first.
    expect_err "rank [13] of the communicator got no multicast datagrams from an earlier root; it gets broadcasts from rank 2 point-to-point"
    nothing_left
    ;;
mcast_receiver_lost)
    # A receiver exits (status 0, so the launcher leaves the others to
    # notice) 30 ms into a 64 MiB broadcast: the root and the other
    # receivers return an error by themselves, within the launcher's grace.
    need_wire
    layout h4x1
    SHOAL_MCAST=on run_within 20000 "$lns" --timeout 60 --host "$hosts" \
        "$MH_BCAST" --sizes 64m --exit-rank 2
    expect_rc 1
    for r in 0 1 3; do
        expect_out "^error rank $r: MPI_ERR_PROC_ABORTED"
    done
    ! grep -E "still running|stopping it" "$tmp/err" ||
        fail "a survivor had to be stopped"
    nothing_left
    ;;
mcast_receiver_killed)
    # SIGKILL in the middle of a 64 MiB broadcast: the job ends at once,
    # nothing left behind.
    need_wire
    layout h4x1
    SHOAL_MCAST=on run_within 20000 "$lns" --timeout 60 --host "$hosts" \
        "$MH_BCAST" --sizes 64m --die-rank 1
    expect_rc 137
    expect_err "rank 1 .* was killed by signal 9"
    nothing_left
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS ($case_name)"
