#!/usr/bin/env bash
# usage: ft_ring_check.sh [--notices MAX] NP SHOALRUN ARGS...
# Runs the job with SHOAL_LOG=debug; passes when it succeeds (exit 0, no
# FAIL line) and the ranks the ring's watchers say they watch (their
# first "watching ranks [...]" line each, docs/FT.md) cover every rank
# 0..NP-1 whose host has another host beside it.  With --notices MAX
# (a job with one death), the survivors must also say how many ranks
# they told of it, each at most MAX (the dissemination pattern:
# ceil(log2 of the other survivors)).
set -u
max=""
if [[ ${1:-} == --notices ]]; then
    max=$2
    shift 2
fi
np=$1
shift
out=$(SHOAL_LOG=debug "$@" 2>&1)
status=$?
if [[ $status -ne 0 ]] || grep -q "FAIL\|check failed" <<<"$out"; then
    echo "FAIL: the job failed (exit $status):"
    echo "$out"
    exit 1
fi
declare -A seen first
while read -r line; do
    rank=$(sed -n 's/^shoal\[\([0-9]*\)\].*/\1/p' <<<"$line")
    [[ -n ${first[$rank]:-} ]] && continue
    first[$rank]=1
    for r in $(sed -n 's/.*watching ranks \[\([0-9 ]*\)\].*/\1/p' <<<"$line"); do
        seen[$r]=1
    done
done < <(grep "SHOAL_FT: watching ranks" <<<"$out")
missing=""
for ((r = 0; r < np; r++)); do
    [[ -n ${seen[$r]:-} ]] || missing="$missing $r"
done
if [[ -n $missing ]]; then
    echo "FAIL: no rank watches rank(s)$missing:"
    grep "SHOAL_FT: watching ranks" <<<"$out"
    exit 1
fi
echo "OK: every rank is watched:"
grep "SHOAL_FT: watching ranks" <<<"$out" | sort -u
if [[ -n $max ]]; then
    lines=$(grep -E "SHOAL_FT: told [0-9]+ rank\(s\) of rank [0-9]+'s death" <<<"$out")
    # (A survivor whose last notice still waited for its connection when
    # it finalized says nothing: at least half of them must speak.)
    if [[ $(wc -l <<<"$lines") -lt $((np / 2)) ]] ||
        awk -v m="$max" '{for (i = 1; i <= NF; i++) if ($i == "told") n = $(i + 1); if (n > m) bad = 1} END {exit !bad}' <<<"$lines"; then
        echo "FAIL: want survivors each sending at most $max death notices:"
        echo "$lines"
        exit 1
    fi
    echo "OK: each survivor sent at most $max death notices"
fi
