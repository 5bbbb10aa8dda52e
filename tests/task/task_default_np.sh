#!/bin/sh
# shoalrun without -n starts one worker per CPU for a task program and
# still refuses any other program.
# Usage: task_default_np.sh <shoalrun> <task program> <other program>
set -u
shoalrun=$1 task=$2 other=$3
cpus=$(nproc)
out=$(SHOAL_LOG=info "$shoalrun" --timeout 100 "$task" --width 32 \
    --height 16 --samples 1 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: $task without -n: exit status $rc"
    echo "$out"
    exit 1
fi
if ! echo "$out" | grep -q "rank 0 of $cpus "; then
    echo "FAIL: $task without -n did not get $cpus workers (nproc):"
    echo "$out"
    exit 1
fi
out=$("$shoalrun" "$other" 2>&1)
rc=$?
if [ $rc -ne 2 ] || ! echo "$out" | grep -q "missing -n N"; then
    echo "FAIL: $other without -n: exit status $rc, want 2 and 'missing -n N':"
    echo "$out"
    exit 1
fi
echo "ok: a task program gets $cpus workers without -n, others need -n"
