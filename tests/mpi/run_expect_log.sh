#!/usr/bin/env bash
# usage: run_expect_log.sh <pattern> <shoalrun> [shoalrun args...]
# Passes when the job succeeds (exit 0), prints no FAIL line, and its
# output (stdout and stderr: the library's log lines) matches pattern.
set -u
pattern=$1
shift
out=$("$@" 2>&1)
status=$?
if [[ $status -ne 0 ]] || grep -q "FAIL\|check failed" <<<"$out"; then
    echo "FAIL: the job failed (exit $status):"
    echo "$out"
    exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: output does not match '$pattern':"
    echo "$out"
    exit 1
fi
echo "OK: exit 0, the output matched:"
grep -E -- "$pattern" <<<"$out" | head -3
