#!/bin/sh
# Warm copies (SHOAL_TASK_REUSE, docs/TASK.md): a finished copy's process
# runs its worker's next job, so a run of many short jobs on one worker
# needs few processes; with SHOAL_TASK_REUSE=1 every run has its own.
# And pages a child needs are read from the waiting parent's memory
# (process_vm_readv), not asked of the parent: on one worker by the child
# itself (the parent is a copy of its worker).
# Both runs must print the program's own check (the random nested
# program against its sequential run).
# Usage: task_reuse.sh <shoalrun> <task_random>
set -u
shoalrun=$1 prog=$2

# One worker: no redundant copies, so no copy is killed and every
# finished one may be reused.  Prints "runs procs direct own" from the
# summary.
count() {
    out=$(env SHOAL_LOG=info SHOAL_TASK_COPIES=1 "$@" "$shoalrun" -n 1 \
        --timeout 100 "$prog" 11 0 3 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^ok seed=11 "; then
        echo "FAIL: $* task_random: exit status $rc" >&2
        echo "$out" >&2
        exit 1
    fi
    echo "$out" | sed -n 's/.*rank 0: \([0-9]*\) runs of jobs in \([0-9]*\) processes; \([0-9]*\) pages read from waiting parents (\([0-9]*\) by the children.*/\1 \2 \3 \4/p'
}

set -- $(count)
runs=${1:-0} procs=${2:-0} direct=${3:-0} own=${4:-0}
if [ "$runs" -lt 20 ] || [ $((procs * 2)) -gt "$runs" ]; then
    echo "FAIL: $runs runs of jobs in $procs processes: copies are not reused"
    exit 1
fi
if [ "$direct" -lt 1 ] || [ "$own" -lt 1 ]; then
    echo "FAIL: $direct pages read from a waiting parent's memory, $own by the children themselves"
    exit 1
fi
set -- $(count SHOAL_TASK_REUSE=1)
if [ "${1:-0}" -lt 20 ] || [ "${2:-0}" -ne "${1:-0}" ]; then
    echo "FAIL: SHOAL_TASK_REUSE=1: ${1:-?} runs in ${2:-?} processes, want one each"
    exit 1
fi
echo "ok: $runs runs in $procs processes, $direct pages read from parents ($own by the children); with SHOAL_TASK_REUSE=1, $1 in $2"
