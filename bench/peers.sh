#!/bin/bash
# Shoal's active messages next to Open MPI and MPICH on this machine, in one
# run, alternating, with medians and ratios Shoal/peer:
#   - 8-byte one-way latency, 2 ranks (shoal-bench short request/reply vs MPI
#     Send/Recv ping-pong);
#   - barrier, 8 ranks on this machine's CPUs (shoal_barrier vs MPI_Barrier).
# This compares Shoal's native layer with complete MPIs (their numbers
# include MPI matching); the MPI-to-MPI comparison comes with Shoal's MPI.
# Peers that are not installed are skipped with a note.
#   bench/peers.sh [build-dir] [runs]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
shoalrun=$build/tools/shoalrun/shoalrun
bench=$build/tools/shoal-bench/shoal-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

[ -x "$bench" ] || { echo "build first: make (looked for $bench)"; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

peers=()
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpicc.openmpi -O2 -o "$tmp/ompi" "$here/mpi_peers.c" && peers+=(ompi)
else
    echo "note: Open MPI not installed (Debian: openmpi-bin libopenmpi-dev); skipped"
fi
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
    mpicc.mpich -O2 -o "$tmp/mpich" "$here/mpi_peers.c" && peers+=(mpich)
else
    echo "note: MPICH not installed (Debian: mpich libmpich-dev); skipped"
fi

run_peer() { # run_peer <peer> <ranks> <test>
    case $1 in
    ompi) timeout 300 mpirun.openmpi --oversubscribe -n "$2" "$tmp/ompi" "$3" ;;
    mpich) timeout 300 mpiexec.mpich -n "$2" "$tmp/mpich" "$3" ;;
    esac
}
shoal_value() { # shoal_value <ranks> <test> <line pattern>
    "$shoalrun" -n "$1" "$bench" --tests "$2" --reps 5 |
        grep -m1 -- "$3" | sed -E "s/^.*$3[^0-9]*([0-9.]+).*$/\1/"
}

for r in $(seq "$runs"); do
    # shoal-bench prints latency in ns and the barrier in us
    shoal_value 2 latency 'short, 8 B of arguments' | awk '{print $1 / 1000}' >>"$tmp/shoal.latency"
    shoal_value 8 barrier 'per barrier' >>"$tmp/shoal.barrier"
    for p in "${peers[@]}"; do
        run_peer "$p" 2 latency >>"$tmp/$p.latency"
        run_peer "$p" 8 barrier >>"$tmp/$p.barrier"
    done
done

echo "Shoal active messages vs MPI peers, medians of $runs runs on $(nproc) CPUs (microseconds)"
printf '  %-34s %10s' "" shoal
for p in "${peers[@]}"; do printf ' %10s %12s' "$p" "shoal/$p"; done
echo
for t in latency barrier; do
    label=$([ $t = latency ] && echo "8-byte one-way latency, 2 ranks" || echo "barrier, 8 ranks")
    s=$(median <"$tmp/shoal.$t")
    printf '  %-34s %10.3f' "$label" "$s"
    for p in "${peers[@]}"; do
        v=$(median <"$tmp/$p.$t")
        printf ' %10.3f %12.3g' "$v" "$(awk -v a="$s" -v b="$v" 'BEGIN {print a / b}')"
    done
    echo
done
