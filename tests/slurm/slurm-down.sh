#!/bin/sh
# Stop the cluster of slurm-up.sh and remove its directory:
#   slurm-down.sh DIR
# Cancels its jobs, then stops exactly the daemons listed in DIR/pids
# (slurmd, slurmctld, munged, in that order; each only while its command
# line still names DIR), SIGKILL after 10 s, and waits until they are gone.
# A DIR that slurm-up.sh did not make is left alone.  Always exits 0 when
# nothing of ours is left running, 1 otherwise.
set -u

dir=${1:?usage: slurm-down.sh DIR}
say() { echo "slurm-down: $*"; }

[ -d "$dir" ] || exit 0
if ! grep -qs "shoal tests/slurm" "$dir/slurm.conf"; then
    say "$dir is not a cluster of slurm-up.sh; not touching it"
    exit 0
fi

# ours PID: alive, not a zombie, and started from our directory.
ours() {
    [ -r "/proc/$1/cmdline" ] &&
        tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$dir/"
}

if [ -f "$dir/up" ] && command -v scancel >/dev/null 2>&1; then
    export SLURM_CONF="$dir/slurm.conf"
    timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
    # Let slurmstepd finish its tasks before slurmd goes.
    i=0
    while [ $i -lt 50 ] &&
        [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]; do
        sleep 0.1
        i=$((i + 1))
    done
fi

left=""
for name in slurmd slurmctld munged; do
    pid=$(sed -n "s/^$name \([0-9][0-9]*\)\$/\1/p" "$dir/pids" 2>/dev/null)
    [ -n "$pid" ] || continue
    ours "$pid" || continue
    kill -TERM "$pid" 2>/dev/null
    i=0
    while ours "$pid" && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if ours "$pid"; then
        say "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null
        sleep 0.2
    fi
    ours "$pid" && left="$left $name:$pid"
done
if [ -n "$left" ]; then
    say "still running:$left; keeping $dir"
    exit 1
fi
rm -rf "$dir"
exit 0
