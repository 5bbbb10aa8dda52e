#!/bin/sh
# Start a throwaway one-node Slurm cluster for the launcher tests:
#   slurm-up.sh DIR
# Everything lives in DIR (created empty by this script): the munge key,
# our own munged on a private socket, slurm.conf, state, spool, logs, and
# the file "pids" ("name pid" per line) that slurm-down.sh reads to stop
# exactly these daemons.  Nothing outside DIR is written: no /etc/slurm,
# no system munged, no packaged service.  Clients use SLURM_CONF=DIR/slurm.conf
# (DIR/env.sh sets it, with SLURM_OVERCOMMIT=1 so 4 tasks run on 2 CPUs).
#
# Exit 0: up (DIR/up exists); 77: skipped, with the reason (not root, or
# the Debian packages slurmctld slurmd slurm-client munge are missing);
# anything else: failed, with the daemons' logs.  Ports: SHOAL_SLURM_PORT
# and SHOAL_SLURM_PORT+1 (default 26817/26818, away from Slurm's 6817/6818
# so a real cluster on this machine is never disturbed).
set -eu

dir=${1:?usage: slurm-up.sh DIR}
port=${SHOAL_SLURM_PORT:-26817}
dport=$((port + 1))

say() { echo "slurm-up: $*"; }
skip() {
    echo "SKIP: $*"
    exit 77
}

case $dir in
/*) ;;
*) say "DIR must be an absolute path"; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || skip "slurmd must run as root (these tests need root)"
for b in munged munge slurmctld slurmd srun sinfo scancel setpriv; do
    command -v "$b" >/dev/null 2>&1 ||
        skip "$b not found: install the Debian packages slurmctld slurmd slurm-client munge"
done
id munge >/dev/null 2>&1 || skip "no user munge (install the Debian package munge)"

# Refuse to reuse a directory that is not ours; a stale one of ours goes.
if [ -e "$dir" ]; then
    [ -f "$dir/slurm.conf" ] && grep -q "shoal tests/slurm" "$dir/slurm.conf" ||
        { say "$dir exists and is not a cluster of this script"; exit 1; }
    if [ -s "$dir/pids" ]; then
        say "$dir holds a cluster (stale or running): stopping it first"
        sh "$(dirname "$0")/slurm-down.sh" "$dir"
    fi
    rm -rf "$dir"
fi
for p in $port $dport; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null ||
        { command -v ss >/dev/null && ss -ltn "sport = :$p" | grep -q LISTEN; }; then
        say "port $p is taken (set SHOAL_SLURM_PORT)"
        exit 1
    fi
done

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
# munged wants its socket directory traversable by all, its key private.
chmod 755 "$dir" "$dir/munge"
chown munge:munge "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/key"
chown munge:munge "$dir/munge/key"
chmod 400 "$dir/munge/key"
: >"$dir/pids"

cpus=$(nproc)
cat >"$dir/slurm.conf" <<EOF
# One-node cluster of shoal tests/slurm/slurm-up.sh; removed by slurm-down.sh.
ClusterName=shoaltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
InactiveLimit=0
MinJobAge=2
KillWait=2
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$dir/env.sh" <<EOF
export SLURM_CONF=$dir/slurm.conf
export SLURM_OVERCOMMIT=1
EOF
export SLURM_CONF="$dir/slurm.conf"

started=""
fail() {
    say "FAILED: $*"
    for f in "$dir"/log/*; do
        echo "--- $f"
        tail -n 20 "$f" || true
    done
    sh "$(dirname "$0")/slurm-down.sh" "$dir" || true
    exit 1
}

# daemon NAME PIDFILE CMD...: start CMD in its own session, wait for the
# pid file it writes, and record that pid (only if it runs from our DIR).
daemon() {
    name=$1
    pidfile=$2
    shift 2
    setsid "$@" </dev/null >"$dir/log/$name.out" 2>&1 &
    i=0
    while [ $i -lt 100 ]; do
        if [ -s "$pidfile" ]; then
            pid=$(cat "$pidfile")
            if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/"; then
                echo "$name $pid" >>"$dir/pids"
                return 0
            fi
        fi
        sleep 0.1
        i=$((i + 1))
    done
    fail "$name did not start"
}

t0=$(date +%s)
daemon munged "$dir/munge/pid" setpriv --reuid=munge --regid=munge \
    --init-groups munged -F --socket="$dir/munge/socket" \
    --key-file="$dir/munge/key" --pid-file="$dir/munge/pid" \
    --seed-file="$dir/munge/seed" --log-file="$dir/log/munged.log"
i=0
until munge -S "$dir/munge/socket" -n 2>/dev/null |
    unmunge -S "$dir/munge/socket" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 50 ] || fail "munged does not answer"
    sleep 0.1
done
daemon slurmctld "$dir/slurmctld.pid" slurmctld -D -i -f "$dir/slurm.conf"
daemon slurmd "$dir/slurmd.pid" slurmd -D -N localhost -f "$dir/slurm.conf"

i=0
until sinfo -h -n localhost -o %T 2>/dev/null | grep -q '^idle'; do
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the node did not become idle in 30 s"
    sleep 0.1
done
out=$(timeout 30 srun --immediate=20 -n1 echo slurm-ok 2>&1) ||
    fail "smoke test srun -n1: $out"
[ "$out" = slurm-ok ] || fail "smoke test printed '$out'"
touch "$dir/up"
say "one-node Slurm up in $(($(date +%s) - t0)) s in $dir (ports $port/$dport)"
