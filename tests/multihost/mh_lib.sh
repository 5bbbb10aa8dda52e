# Shared by multihost_test.sh and ssh_test.sh: hosts made of network
# namespaces joined by veth pairs to a bridge.  The caller sets P (the
# prefix of its namespace names), M (a marker on its processes' command
# lines), case_name and made="" (the namespaces made so far), and sources
# ../launcher/test_lib.sh for fail.

skip() {
    echo "SKIP ($case_name): $*"
    exit 77
}

count_out() { grep -c -E -- "$1" "$tmp/out"; }

# new_shm: shoal-* objects in /dev/shm made since the caller listed them in
# $tmp/shm0 (jobs that do not print their prefix) that no process maps:
# this run's leftovers, not those of other tests running meanwhile.
new_shm() {
    local o
    ls /dev/shm 2>/dev/null | grep '^shoal-' | sort | comm -13 "$tmp/shm0" - |
        while read -r o; do
            cat /proc/[0-9]*/maps 2>/dev/null | grep -qF "/dev/shm/$o" ||
                printf ' /dev/shm/%s' "$o"
        done
}

# kill_namespaces: kill whatever runs in our namespaces or carries our
# marker, then delete the namespaces (for cleanup traps).
kill_namespaces() {
    local ns p
    for ns in $made; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            kill -9 "$p" 2>/dev/null
        done
    done
    for p in $(pgrep -f -- "$M"); do
        kill -9 "$p" 2>/dev/null
    done
    for ns in $made; do
        ip netns del "$ns" 2>/dev/null
    done
}

# make_bridge: the switch, namespace $P-sw with bridge br0.
make_bridge() {
    ip netns add "$P-sw" || fail "ip netns add"
    made="$P-sw"
    ip -n "$P-sw" link add br0 type bridge
    ip -n "$P-sw" link set br0 up
}

# bridge_host I NS ADDR: namespace NS at ADDR/24 on the bridge, port p$I.
bridge_host() {
    local i=$1 ns=$2 addr=$3
    ip netns add "$ns" || fail "ip netns add $ns"
    made="$made $ns"
    ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$P-sw" ||
        fail "veth for $ns"
    ip -n "$P-sw" link set "p$i" master br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
}

# remote_env_check NS RSH HOSTS RANK: a job started from namespace NS with
# SHOAL_RSH=RSH on --host HOSTS; rank RANK, on a remote host, must get the
# launcher's environment and directory, whatever its login's are.
remote_env_check() {
    local ns=$1 rsh=$2 hosts=$3 rank=$4
    cd "$tmp" || fail "cd"
    MH_VAR="a b" SHOAL_RSH="$rsh" ip netns exec "$ns" "$SHOALRUN" \
        --timeout 30 --host "$hosts" sh -c \
        'echo "rank $PMI_RANK var=$MH_VAR cwd=$(pwd)"' \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    cd / || fail "cd"
    expect_rc 0
    expect_out "^rank $rank var=a b cwd=$tmp\$"
    nothing_left
}

# remote_stdin_check NS RSH HOSTS: a job started from namespace NS with
# SHOAL_RSH=RSH on --host HOSTS, rank 0 on a remote host: 80000 lines of
# the launcher's stdin reach rank 0 whole (md5sum) and no other rank.
remote_stdin_check() {
    local ns=$1 rsh=$2 hosts=$3 want
    seq 1 80000 >"$tmp/in"
    want=$(md5sum <"$tmp/in")
    SHOAL_RSH="$rsh" ip netns exec "$ns" "$SHOALRUN" --timeout 30 \
        --host "$hosts" sh -c \
        'if [ "$PMI_RANK" = 0 ]; then md5sum; else cat; echo "r1 eof"; fi' \
        <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    expect_out "^$want\$"
    expect_out "^r1 eof\$"
}
