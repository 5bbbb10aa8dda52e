#!/usr/bin/env bash
# usage: ft_ring_check.sh [--notices MAX] [--frames MAX RANKS] NP SHOALRUN ARGS...
# Runs the job with SHOAL_LOG=debug; passes when it succeeds (exit 0, no
# FAIL line) and the ranks the ring's watchers say they watch (their
# first "watching ranks [...]" line each, docs/FT.md) cover every rank
# 0..NP-1 whose host has another host beside it.  With --notices MAX
# (a job with one death), the survivors must also say how many ranks
# they told of it, each at most MAX (the dissemination pattern:
# ceil(log2 of the other survivors)).  With --frames MAX RANKS (a job
# losing the ranks RANKS, e.g. "4 5 6 7", whose deaths each survivor
# learns at once), every round of notices a survivor says it sent must
# name them all, and the frames all survivors sent (the sum of their
# "told N rank(s)" lines) must be at most MAX; with RANKS "-" (deaths
# learned at different looks) only the frames are counted.
set -u
max=""
frames=""
names=""
while [[ ${1:-} == --notices || ${1:-} == --frames ]]; do
    if [[ $1 == --notices ]]; then
        max=$2
        shift 2
    else
        frames=$2
        names=$3
        shift 3
    fi
done
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
    lines=$(grep -E "SHOAL_FT: told [0-9]+ rank\(s\) of the death of ranks \[[0-9 ]+\]" <<<"$out")
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
if [[ -n $frames ]]; then
    lines=$(grep -E "SHOAL_FT: told [0-9]+ rank\(s\) of the death of ranks \[[0-9 ]+\]" <<<"$out")
    sum=$(awk '{for (i = 1; i <= NF; i++) if ($i == "told") s += $(i + 1)} END {print s + 0}' <<<"$lines")
    if [[ -z $lines || $sum -gt $frames ]] || { [[ $names != - ]] &&
        grep -v -F "of the death of ranks [$names]" <<<"$lines" >/dev/null; }; then
        echo "FAIL: the survivors sent $sum death notices' frames, want at most $frames$([[ $names == - ]] || echo ", each round naming ranks [$names]"):"
        echo "$lines"
        exit 1
    fi
    echo "OK: the survivors sent $sum death notices' frames (at most $frames):"
    echo "$lines"
fi
