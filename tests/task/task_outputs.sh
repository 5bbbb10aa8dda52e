#!/bin/sh
# A bench/task program of the task runtime prints the sequential program's
# checksum (its image or sorted array, bit for bit) while task_faults.sh
# injects a fault.
# Usage: task_outputs.sh <shoalrun> <np> <mode> <seq program> <task program>
#                        [args...]
# The sequential program runs first with the same arguments (seq_raytrace
# and seq_qsort take every option of task_raytrace and task_qsort); its
# checksum line becomes the expected line of task_faults.sh, which runs the
# task program under shoalrun -n <np> with fault <mode>.
set -u
shoalrun=$1 np=$2 mode=$3 seq=$4 prog=$5
shift 5
want=$("$seq" "$@" | sed -n 's/^checksum \([0-9a-f]*\)$/\1/p')
if [ -z "$want" ]; then
    echo "FAIL: $seq $* printed no checksum"
    exit 1
fi
echo "sequential checksum $want"
exec bash "$(dirname "$0")/task_faults.sh" "$shoalrun" "$np" "$mode" \
    "^checksum $want\$" "$prog" "$@"
