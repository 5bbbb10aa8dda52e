#!/usr/bin/env bash
# usage: run_expect_fail.sh <shoalrun> <np> <pattern> <program> [args...]
# Passes when the job fails (non-zero exit) and stderr matches pattern.
# <shoalrun> "-" runs the program alone, without a launcher (np ignored).
# EXPECT_FAIL_NOT: a pattern the output must not match.
set -u
shoalrun=$1 np=$2 pattern=$3
shift 3
if [[ $shoalrun == - ]]; then
    out=$(timeout 60 "$@" 2>&1)
else
    out=$("$shoalrun" -n "$np" --timeout 60 "$@" 2>&1)
fi
status=$?
if [[ -n ${EXPECT_FAIL_NOT:-} ]] && grep -Eq -- "$EXPECT_FAIL_NOT" <<<"$out"; then
    echo "FAIL: output matches '$EXPECT_FAIL_NOT':"
    echo "$out"
    exit 1
fi
if [[ $status -eq 0 ]]; then
    echo "FAIL: the job succeeded; expected a failure"
    echo "$out"
    exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: output does not match '$pattern':"
    echo "$out"
    exit 1
fi
echo "OK: exit $status, message matched:"
grep -E -- "$pattern" <<<"$out" | head -3
