#!/bin/bash
# The active-message traffic test started by MPICH's Hydra instead of
# shoalrun: the ranks find each other through Hydra's PMI-1 server.
# Usage: run_hydra.sh <am_traffic> <ranks> <mode> [count]
set -u
prog=$1 np=$2
shift 2
if ! command -v mpiexec.mpich >/dev/null 2>&1; then
    echo "SKIP: mpiexec.mpich not found (Debian package: mpich)"
    exit 77
fi
before=$(ls /dev/shm | grep '^shoal-' | sort)
out=$(timeout 120 mpiexec.mpich -n "$np" "$prog" "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc under mpiexec.mpich"; exit 1; }
echo "$out" | grep -q "^ok: $np ranks" || { echo "FAIL: no success line"; exit 1; }
for try in 1 2 3; do
    left=$(comm -13 <(echo "$before") <(ls /dev/shm | grep '^shoal-' | sort))
    [ -z "$left" ] && break
    sleep 0.5
done
[ -z "$left" ] || { echo "FAIL: left in /dev/shm: $left"; exit 1; }
