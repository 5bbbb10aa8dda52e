#!/bin/bash
# shoalrun across hosts through a real ssh:
#   ssh_test.sh SHOALRUN HELLO HELPER
# Two hosts are network namespaces ($P-h0, $P-h1, addresses 10.77.5.10 and
# .11/24) with veth pairs to a bridge in a namespace of its own ($P-sw), as
# in multihost_test.sh.  Each host runs its own sshd (openssh-server) on its
# address, with a throwaway configuration in a temporary directory: a
# generated host key, a generated client key as the only authorized key,
# root by key only, no PAM, no DNS.  shoalrun runs in $P-h0 with
#   SHOAL_RSH="ssh -F $tmp/ssh_config"
# (the client configuration names the key, maps each host name to its
# address, skips host-key checks, never prompts), so every daemon is
# started by a real sshd session.  Checked, in one run:
#   - hello from every rank, each on the right host (boot layer, PMI);
#   - a daemon tree over ssh (fan-out 1: the first daemon starts the
#     second through ssh itself);
#   - MPI across the hosts over the default wires (datagrams, TCP behind;
#     skipped without a TCP wire);
#   - a remote rank gets the launcher's environment and directory;
#   - ssh refused (a key the host does not know): the host is lost at once;
#   - exit status: a rank exiting 3 makes shoalrun exit 3, naming it;
#   - stdin to a remote rank 0 and its stdout back;
#   - the job's secret is on no command line and in no environment of
#     any process on either host while a job runs;
#   - the ssh client killed during a job: the job goes on (ssh only
#     starts the daemons);
#   - the launcher SIGKILLed: nothing of the job is left on either host;
#   - after each job no process but the two sshd listeners is left in the
#     hosts, and no /dev/shm object of ours; at the end sshd is stopped
#     and the namespaces are gone.
# Skips (77) when not root, without ip netns, or without sshd / ssh /
# ssh-keygen.  The trap kills whatever still runs in our namespaces
# (sshd included), deletes them and our /dev/shm objects, even on failure.
set -u
case_name=ssh
SHOALRUN=$1
HELLO=$2
HELPER=$3
P="shs-$$-$RANDOM"
M="shoalssh-$$-$RANDOM"
NET=10.77.5
tmp=$(mktemp -d)
rc=0
made=""
H0="$P-h0"
H1="$P-h1"
SSHD=""

# skip, count_out, kill_namespaces, make_bridge, bridge_host
. "$(dirname "$0")/mh_lib.sh" ||
    { echo "FAIL ($case_name): cannot source mh_lib.sh"; exit 1; }

cleanup() {
    kill_namespaces
    [ -f "$tmp/shm0" ] && for o in $(new_shm); do rm -f "$o"; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" INT TERM HUP
. "$(dirname "$0")/../launcher/test_lib.sh" ||
    { echo "FAIL ($case_name): cannot source test_lib.sh"; exit 1; }
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# ---- requirements --------------------------------------------------------------

[ "$(id -u)" -eq 0 ] || skip "network namespaces and sshd need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available"
for d in /usr/sbin /usr/local/sbin /sbin; do
    [ -x "$d/sshd" ] && { SSHD=$d/sshd; break; }
done
[ -n "$SSHD" ] || SSHD=$(command -v sshd)
[ -n "$SSHD" ] || skip "sshd is not installed (Debian: apt-get install openssh-server)"
command -v ssh >/dev/null || skip "ssh is not installed (Debian: openssh-client)"
command -v ssh-keygen >/dev/null || skip "ssh-keygen is not installed (openssh-client)"
ls /dev/shm 2>/dev/null | grep '^shoal-' | sort >"$tmp/shm0"

# ---- hosts ---------------------------------------------------------------------

make_bridge
for i in 0 1; do
    bridge_host "$i" "$P-h$i" "$NET.$((10 + i))"
done

# ---- sshd on each host, and the client's configuration -------------------------

chmod 700 "$tmp"
ssh-keygen -q -t ed25519 -N '' -C "shoal-test-host" -f "$tmp/host_key" ||
    fail "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -C "shoal-test-client" -f "$tmp/id" ||
    fail "ssh-keygen (client key)"
cp "$tmp/id.pub" "$tmp/authorized_keys"
chmod 600 "$tmp/authorized_keys" "$tmp/host_key" "$tmp/id"
# sshd refuses to start without its privilege separation directory, which
# Debian creates only when the service starts.
[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; }

for i in 0 1; do
    cat >"$tmp/sshd_config.h$i" <<EOF
ListenAddress $NET.$((10 + i)):22
HostKey $tmp/host_key
PidFile $tmp/sshd.h$i.pid
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
StrictModes no
PermitUserEnvironment no
AllowAgentForwarding no
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
PrintLastLog no
MaxStartups 50
LogLevel VERBOSE
EOF
    "$SSHD" -t -f "$tmp/sshd_config.h$i" 2>"$tmp/err" ||
        fail "sshd rejects its configuration: $(cat "$tmp/err")"
    # Without -D sshd detaches, and writes its PidFile once it listens.
    in_ns "$P-h$i" "$SSHD" -f "$tmp/sshd_config.h$i" -E "$tmp/sshd.h$i.log" ||
        fail "sshd did not start in $P-h$i: $(cat "$tmp/sshd.h$i.log")"
done

cat >"$tmp/ssh_config" <<EOF
Host $H0
    HostName $NET.10
Host $H1
    HostName $NET.11
Host *
    User root
    IdentityFile $tmp/id
    IdentitiesOnly yes
    BatchMode yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    GlobalKnownHostsFile /dev/null
    LogLevel ERROR
    ConnectTimeout 5
    ControlMaster no
    ControlPath none
    ForwardAgent no
    ForwardX11 no
    RequestTTY no
EOF
RSH="ssh -F $tmp/ssh_config"

# sshd_pid I: the listening sshd of host I
sshd_pid() { cat "$tmp/sshd.h$1.pid" 2>/dev/null; }

# Both sshds answer, from the other host (up to 5 s each).
for i in 0 1; do
    t0=$(now_ns)
    until [ -s "$tmp/sshd.h$i.pid" ] &&
        in_ns "$P-h$(((i + 1) % 2))" $RSH "$P-h$i" true 2>"$tmp/err"; do
        [ "$(ms_since "$t0")" -lt 5000 ] ||
            fail "ssh to $P-h$i fails: $(cat "$tmp/err")" \
                "$(tail -n 20 "$tmp/sshd.h$i.log")"
        sleep 0.1
    done
done
echo "  sshd runs on both hosts (pids $(sshd_pid 0), $(sshd_pid 1))"

# ---- helpers -----------------------------------------------------------------

# run ARGS...: shoalrun in $H0 through ssh, output captured; sets rc.
run() {
    SHOAL_RSH="$RSH" in_ns "$H0" "$SHOALRUN" "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# fresh: empty out and err files before a job in the background (which
# opens them later: wait_for must not read the previous job's lines).
fresh() { : >"$tmp/out"; : >"$tmp/err"; }

# host I [SLOTS]: the --host word of host I
host() { echo "$P-h$1=$NET.$((10 + $1)):${2:-2}"; }

# stray: processes in our hosts other than the two sshd listeners, and in
# the switch; and /dev/shm objects of ours no process maps.
stray() {
    local ns p keep="$(sshd_pid 0) $(sshd_pid 1)"
    for ns in $made; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            case " $keep " in *" $p "*) continue ;; esac
            printf ' %s' "$p"
        done
    done
    for p in $(pgrep -f -- "$M"); do printf ' %s' "$p"; done
    new_shm
}

# nothing_left [MS]: within MS ms (default 5000), no stray process (no
# ssh session, no daemon, no rank) and no /dev/shm object; both sshds live.
nothing_left() {
    local limit=${1:-5000} t0 left p
    t0=$(now_ns)
    while :; do
        left=$(stray)
        [ -z "${left// /}" ] && break
        if [ "$(ms_since "$t0")" -gt "$limit" ]; then
            fail "left behind after $limit ms:$left" \
                "$(for p in $left; do [ -d "/proc/$p" ] &&
                    ps -o pid=,ppid=,args= -p "$p"; done)"
        fi
        sleep 0.05
    done
    for i in 0 1; do
        kill -0 "$(sshd_pid $i)" 2>/dev/null || fail "sshd of $P-h$i died"
    done
}

# ancestors PID: the command names of PID's ancestors, one line.
ancestors() {
    local p=$1 out=""
    while [ -n "$p" ] && [ "$p" -gt 1 ] 2>/dev/null; do
        out="$out $(cat "/proc/$p/comm" 2>/dev/null)"
        p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)
    done
    echo "$out"
}

# daemons_in NS: pids of the shoalrun daemons running in NS (shoalrun
# --daemon whose parent is not one: not their watchdogs)
daemons_in() {
    local p pp exe
    exe=$(readlink -f "$SHOALRUN")
    for p in $(ip netns pids "$1" 2>/dev/null); do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$exe" ] || continue
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- ' --daemon ' ||
            continue
        pp=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)
        [ "$(readlink "/proc/$pp/exe" 2>/dev/null)" = "$exe" ] || echo "$p"
    done
}

# ---- hello, and each rank on the right host --------------------------------------

t0=$(now_ns)
run --timeout 30 --host localhost:2,"$(host 1)" "$HELLO" 2,2
took=$(ms_since "$t0")
expect_rc 0
[ "$(count_out '^hello rank')" -eq 4 ] || fail "not 4 hello lines"
expect_out "hello rank 0 of 4 host 0 local 0 of 2"
expect_out "hello rank 3 of 4 host 1 local 1 of 2"
# ssh itself says nothing (no host-key warning, no banner).
[ ! -s "$tmp/err" ] || fail "stderr is not empty"
nothing_left
# Host names: each rank names the namespace it runs in.
run --timeout 30 --host localhost:2,"$(host 1)" sh -c \
    'echo "rank $PMI_RANK on $(ip netns identify)"'
expect_rc 0
for r in 0 1; do expect_out "^rank $r on $H0\$"; done
for r in 2 3; do expect_out "^rank $r on $H1\$"; done
nothing_left
echo "  hello: 4 ranks on $H0 and $H1 ok (the first job: $took ms)"

# The remote login's environment and directory do not matter: a remote
# rank gets the launcher's.
remote_env_check "$H0" "$RSH" localhost:1,"$(host 1 1)" 1

# ---- a tree of daemons over ssh ---------------------------------------------------

# Both hosts named (no rank in the launcher), fan-out 1: the launcher
# ssh-es to h0, whose daemon ssh-es to h1 with the same command.
run --timeout 30 --fanout 1 --host "$(host 0 1)","$(host 1 2)" \
    --tag-output "$HELLO" 1,2
expect_rc 0
[ "$(count_out '^\[[0-2]\] hello rank')" -eq 3 ] || fail "not 3 hellos (tree)"
expect_out "^\[2\] hello rank 2 of 3 host 1 local 1 of 2"
nothing_left
echo "  tree: launcher -> ssh $H0 -> ssh $H1 ok"

# ---- ssh refused ----------------------------------------------------------------------

# A key h1 does not know: ssh exits 255, and the host is lost at once.
ssh-keygen -q -t ed25519 -N '' -f "$tmp/id_other" || fail "ssh-keygen"
sed "s|IdentityFile $tmp/id\$|IdentityFile $tmp/id_other|" "$tmp/ssh_config" \
    >"$tmp/ssh_config_other"
grep -q "id_other" "$tmp/ssh_config_other" || fail "no other ssh config"
t0=$(now_ns)
SHOAL_RSH="ssh -F $tmp/ssh_config_other" ip netns exec "$H0" "$SHOALRUN" \
    --timeout 30 --host localhost:1,"$(host 1 1)" "$HELPER" "$M" sleep 20 \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
took=$(ms_since "$t0")
expect_rc 125
expect_err "host $H1 lost: the remote-exec command exited with code 255 before a daemon connected back"
expect_err "Permission denied"
[ "$took" -lt 8000 ] || fail "a refused ssh took $took ms to end the job"
nothing_left
echo "  ssh refused: host $H1 lost after $took ms, ok"

# ---- exit status ------------------------------------------------------------------

# (--rsh rather than SHOAL_RSH)
SHOAL_RSH=false in_ns "$H0" "$SHOALRUN" --rsh "$RSH" --timeout 30 \
    --host localhost:2,"$(host 1)" "$HELPER" "$M" exit-rank 3 3 \
    >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
expect_rc 3
expect_err "rank 3 \(pid [0-9]+\) on host $H1 exited with code 3"
nothing_left
echo "  exit status: rank 3 on $H1 exited 3, shoalrun exited $rc ok"

# ---- stdin and stdout of a remote rank 0 ----------------------------------------------

remote_stdin_check "$H0" "$RSH" "$(host 1 2)"
nothing_left
echo "  stdin/stdout: 80000 lines to rank 0 on $H1 ok"

# ---- the job's secret ------------------------------------------------------------------

# The remote-exec command, a real ssh behind a tap that keeps a copy of the
# secret line shoalrun writes on its stdin (the daemons started by a
# daemon go through it too).
cat >"$tmp/rsh-tap" <<EOF
#!/bin/bash
IFS= read -r s
printf '%s\n' "\$s" >>"$tmp/secrets"
exec "\$@" <<<"\$s"
EOF
chmod +x "$tmp/rsh-tap"
fresh
SHOAL_RSH="$tmp/rsh-tap $RSH" ip netns exec "$H0" "$SHOALRUN" --timeout 30 \
    --fanout 1 --host "$(host 0 1)","$(host 1 2)" "$HELPER" "$M" sleep 8 \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "^ready rank" 3 "$tmp/out"
secret=$(sort -u "$tmp/secrets" 2>/dev/null)
[ "$(printf '%s\n' "$secret" | grep -c -E '^[0-9a-fA-F]{32}$')" -eq 1 ] ||
    fail "the tap saw no single secret line: '$secret'"
# Every daemon is an sshd session's (a shell's) child.  (The ranks sleep
# 8 s: under load these looks took over 4 s, and the daemon was gone.)
for ns in "$H0" "$H1"; do
    d=$(daemons_in "$ns")
    [ "$(echo "$d" | wc -w)" -eq 1 ] || fail "not one daemon in $ns: '$d'"
    case "$(ancestors "$d")" in
    *sshd*) ;;
    *) fail "the daemon in $ns was not started by sshd: $(ancestors "$d")" ;;
    esac
done
# No process anywhere shows it: command lines and environments, in hex
# either case (the pattern read from the tap's file, so that it is not on
# grep's own command line).
hits=""
for f in $(grep -l -i -F -f "$tmp/secrets" /proc/[0-9]*/cmdline \
    /proc/[0-9]*/environ 2>/dev/null); do
    hits="$hits $f: $(tr '\0' ' ' <"${f%/*}/cmdline" 2>/dev/null | head -c 200)"
done
n=$(for ns in "$H0" "$H1"; do ip netns pids "$ns"; done | wc -l)
kill -0 "$pid" 2>/dev/null || fail "the job ended before its processes were looked at"
wait "$pid"
rc=$?
[ -z "$hits" ] || fail "the job's secret is visible:$hits"
expect_rc 0
[ "$(count_out '^ready rank')" -eq 3 ] || fail "not 3 ranks ready"
nothing_left
echo "  secret: on no command line or environment ($n processes in the hosts looked at)"

# ---- the ssh connection lost, the daemon's connection not ---------------------------

# ssh is only the way in: once the daemon has connected back, losing the
# ssh session (its client killed; sshd ends the session, the daemon's
# stdout and stderr now lead nowhere) does not end the job.
fresh
SHOAL_RSH="$RSH" ip netns exec "$H0" "$SHOALRUN" --timeout 30 \
    --host localhost:1,"$(host 1 2)" "$HELPER" "$M" sleep 3 \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "^ready rank" 3 "$tmp/out"
c=$(pgrep -P "$pid" -x ssh)
[ "$(echo "$c" | wc -w)" -eq 1 ] || fail "not one ssh client under the launcher: '$c'"
kill -9 "$c"
wait "$pid"
rc=$?
expect_rc 0
nothing_left
echo "  ssh client killed during the job: the job still ended well"

# ---- the launcher killed ------------------------------------------------------------------

# Its watchdog kills the ssh clients; the daemons see their connections
# close and kill their ranks; the sshd sessions end with them.
fresh
SHOAL_RSH="$RSH" ip netns exec "$H0" "$SHOALRUN" --timeout 60 --fanout 1 \
    --host "$(host 0 1)","$(host 1 2)" "$HELPER" "$M" sleep 60 \
    >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
wait_for "^ready rank" 3 "$tmp/out"
kill -9 "$pid"
wait "$pid" 2>/dev/null
nothing_left
echo "  launcher killed: no daemon, rank or ssh session left on $H0 or $H1"

# ---- MPI across the hosts -------------------------------------------------------------

if { "${MH_SHOAL_INFO:-false}" | grep -E '^ +tcp +yes' ||
    "${MH_SHOAL_INFO:-false}" --config | grep '^SHOAL_TCP_ADDR='; } \
    >/dev/null 2>&1 && [ -n "${MH_MPI:-}" ]; then
    run --timeout 60 --host localhost:2,"$(host 1)" "$MH_MPI"
    expect_rc 0
    [ "$(count_out '^mpi rank [0-3] of 4 ok')" -eq 4 ] || fail "not 4 ranks ok"
    nothing_left
    if [ -n "${MH_MPIBIN:-}" ]; then
        # 0 B to 4 MiB, eager and rendezvous, between the hosts.
        run --timeout 60 --host localhost:1,"$(host 1 1)" \
            "$MH_MPIBIN/mpi_p2p_basic"
        expect_rc 0
        nothing_left
    fi
    echo "  mpi: ring, allreduce and p2p_basic across $H0 and $H1 ok"
else
    echo "  mpi: skipped (shoal-info reports no tcp wire in this build)"
fi

# ---- teardown, checked -------------------------------------------------------------------

for i in 0 1; do
    kill "$(sshd_pid $i)" 2>/dev/null || fail "sshd of $P-h$i already gone"
done
t0=$(now_ns)
for ns in $made; do
    while [ -n "$(ip netns pids "$ns" 2>/dev/null)" ]; do
        [ "$(ms_since "$t0")" -lt 3000 ] ||
            fail "still running in $ns after sshd stopped: $(ip netns pids "$ns" | tr '\n' ' ')"
        sleep 0.05
    done
done
for i in 0 1; do
    kill -0 "$(sshd_pid $i)" 2>/dev/null && fail "sshd of $P-h$i still runs"
done
for ns in $made; do
    ip netns del "$ns" || fail "ip netns del $ns"
done
left=$(ip netns list | grep -F -- "$P-")
[ -z "$left" ] || fail "namespaces left: $left"
left=$(new_shm)
[ -z "$left" ] || fail "/dev/shm left:$left"
made=""
echo "PASS ($case_name)"
