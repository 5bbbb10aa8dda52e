#!/bin/sh
# Processes kept for later jobs (SHOAL_TASK_IDLE, docs/TASK.md): a nested
# chain holds a process per waiting parent; run 4 times on one worker, it
# forks its processes the first time only when the worker keeps them all
# (the default, 128), every time beyond the ones kept when it keeps fewer
# (8), and one process per run when it keeps none (0).  task_b1 checks
# each run's results itself (a job merged twice or never fails it).
# Usage: task_idle.sh <shoalrun> <task_b1>
set -u
shoalrun=$1 prog=$2

# Prints "runs procs" from the summary of chain:30 run 4 times (4 x 31
# jobs, and the 4 of the 1x1 shape).
count() {
    out=$(env SHOAL_LOG=info SHOAL_TASK_COPIES=1 "$@" "$shoalrun" -n 1 \
        --timeout 100 "$prog" --shapes 1x1 --nested chain:30 --reps 4 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^b1 chain:30 "; then
        echo "FAIL: $* task_b1: exit status $rc" >&2
        echo "$out" >&2
        exit 1
    fi
    echo "$out" | sed -n 's/.*rank 0: \([0-9]*\) runs of jobs in \([0-9]*\) processes;.*/\1 \2/p'
}

set -- $(count)
runs=${1:-0} procs=${2:-0}
# 4 x 31 chain jobs, 4 x 1 flat and the root: the chain's 31 processes
# made once, a few more for the root and the first flat job.
if [ "$runs" -lt 128 ] || [ "$procs" -gt 40 ]; then
    echo "FAIL: $runs runs of jobs in $procs processes: the chain's are not kept"
    exit 1
fi
set -- $(count SHOAL_TASK_IDLE=8)
if [ "${1:-0}" -lt 128 ] || [ "${2:-0}" -lt 90 ] || [ "${2:-0}" -ge "${1:-0}" ]; then
    echo "FAIL: SHOAL_TASK_IDLE=8: ${1:-?} runs in ${2:-?} processes, want 90 or more, fewer than runs"
    exit 1
fi
set -- $(count SHOAL_TASK_IDLE=0)
if [ "${1:-0}" -lt 128 ] || [ "${2:-0}" -ne "${1:-0}" ]; then
    echo "FAIL: SHOAL_TASK_IDLE=0: ${1:-?} runs in ${2:-?} processes, want one each"
    exit 1
fi
echo "ok: $runs runs in $procs processes; SHOAL_TASK_IDLE=0: $1 in $2"
