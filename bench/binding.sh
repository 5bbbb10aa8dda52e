#!/bin/bash
# Measures what `shoalrun --bind-to` should default to: runs shoal-bench with
# --bind-to core and --bind-to none, alternating, for one rank per CPU (2
# ranks: latency, message rate, bandwidth) and for more ranks than CPUs (8
# ranks: barrier, token ring, compute then barrier; and one rank more than
# CPUs), and prints the medians side by side.
#   bench/binding.sh [build-dir] [runs]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
shoalrun=$build/tools/shoalrun/shoalrun
bench=$build/tools/shoal-bench/shoal-bench
ncpu=$(nproc)
over=$((ncpu * 4))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$bench" ] || { echo "build first: make (looked for $bench)"; exit 1; }

# value <file> <pattern>: the first number after the label.
value() { grep -m1 -- "$2" "$1" | sed -E "s/^.*$2[^0-9]*([0-9.]+).*$/\1/"; }
# column <file> <line regex> <field>: one field of the first matching line.
column() { grep -m1 -E -- "$2" "$1" | awk -v f="$3" '{print $f}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for r in $(seq "$runs"); do
    for mode in core none; do
        "$shoalrun" -n "$ncpu" --bind-to $mode "$bench" --tests latency,rate,bandwidth \
            --reps 5 >"$tmp/pair.$mode.$r"
        "$shoalrun" -n "$over" --bind-to $mode "$bench" --tests barrier,ring,bsp \
            --reps 5 >"$tmp/over.$mode.$r"
        "$shoalrun" -n $((ncpu + 1)) --bind-to $mode "$bench" --tests ring,bsp \
            --reps 5 >"$tmp/odd.$mode.$r"
    done
done

row() { # row <label> <kind> <unit> <extractor and its arguments...>
    local label=$1 kind=$2 unit=$3 core none
    shift 3
    core=$(for r in $(seq "$runs"); do "$1" "$tmp/$kind.core.$r" "${@:2}"; done | median)
    none=$(for r in $(seq "$runs"); do "$1" "$tmp/$kind.none.$r" "${@:2}"; done | median)
    printf '  %-36s %10s %10s %s\n' "$label" "$core" "$none" "$unit"
}
echo "shoalrun --bind-to: medians of $runs runs ($ncpu CPUs)"
printf '  %-36s %10s %10s\n' "" "core" "none"
echo "$ncpu ranks (one per CPU)"
row "short latency, one way" pair ns value "short, 8 B of arguments"
row "message rate" pair M/s value "rate "
row "long 1 MiB bandwidth, shared segment" pair GB/s column '^  1 MiB ' 5
echo "$over ranks on $ncpu CPUs"
row "barrier" over us value "per barrier"
row "token ring, per hop" over us column '^  per hop ' 3
row "compute then barrier, per step" over ms column '^  per step ' 3
echo "$((ncpu + 1)) ranks on $ncpu CPUs"
row "token ring, per hop" odd us column '^  per hop ' 3
row "compute then barrier, per step" odd ms column '^  per step ' 3
