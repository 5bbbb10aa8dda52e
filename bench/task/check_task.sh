#!/bin/sh
# bench.task.task_outputs: the task runtime's programs (the task arms of
# bench/task/run) print the sequential programs' checksums.
#   check_task.sh SEQ_RAYTRACE SEQ_QSORT SHOALRUN TASK_RAYTRACE TASK_QSORT
# TASK_RAYTRACE or TASK_QSORT may be "-" (left out).  At 1, 2, 4 and 8
# workers (shoalrun -n N): task_raytrace at a coarse and a fine
# granularity, task_qsort nested and rounds with a parallel threshold low
# enough to make many jobs.  Faults (a worker killed, every worker but
# rank 0 killed one after another, one stopped for 2 s, one at 25% CPU) on
# larger images and arrays are tests/task's task.raytrace.* and
# task.bench_qsort.* (task_outputs.sh).
set -u
seq=$1 qs=$2 run=$3 task_rt=$4 task_qs=$5
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
checksum() { sed -n 's/^checksum //p' "$1" | tail -1; }

# same NAME WANT CMD...: CMD's checksum is WANT.
same() {
    name=$1 want=$2
    shift 2
    if ! "$@" >"$tmp/out" 2>"$tmp/err"; then
        bad "$name failed: $(tail -3 "$tmp/err")"
    elif [ "$(checksum "$tmp/out")" != "$want" ]; then
        bad "$name: checksum '$(checksum "$tmp/out")', want '$want'"
    else
        echo "ok: $name"
    fi
}

rt="--width 96 --height 64 --samples 2 --depth 3 --seed 9"
qsargs="--n 60013 --seed 9 --thresh 16"
# shellcheck disable=SC2086
"$seq" $rt >"$tmp/ref" || bad "seq_raytrace failed"
want_rt=$(checksum "$tmp/ref")
# shellcheck disable=SC2086
"$qs" $qsargs >"$tmp/ref" || bad "seq_qsort failed"
want_qs=$(checksum "$tmp/ref")

for np in 1 2 4 8; do
    if [ "$task_rt" != - ]; then
        for jobs in 4 64; do
            # shellcheck disable=SC2086
            same "task_raytrace -n $np --jobs $jobs" "$want_rt" \
                "$run" -n $np --timeout 100 "$task_rt" $rt --jobs $jobs
        done
    fi
    if [ "$task_qs" != - ]; then
        for mode in nested rounds; do
            # shellcheck disable=SC2086
            same "task_qsort -n $np --mode $mode" "$want_qs" \
                "$run" -n $np --timeout 100 "$task_qs" $qsargs \
                --mode $mode --par-thresh 6000
        done
    fi
done

if [ $fail -ne 0 ]; then
    echo "bench.task.task_outputs: FAILED"
    exit 1
fi
echo "bench.task.task_outputs: the outputs are the sequential programs'"
