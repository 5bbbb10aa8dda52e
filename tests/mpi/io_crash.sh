#!/usr/bin/env bash
# usage: io_crash.sh <shoalrun> <io_crash program>
# Runs io_crash write on 2 ranks (rank 1 kills itself after a sync: the
# job must fail), then io_crash check on 1 rank (the synced bytes must be
# there), and no side file of the shared pointer may be left.  The
# directory is made here and removed at the end.
set -u
shoalrun=$1 prog=$2
dir=$(mktemp -d /tmp/shoal-io-crash.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if "$shoalrun" -n 2 --timeout 60 "$prog" write "$dir" >"$dir/out1" 2>&1; then
    echo "FAIL: the job with a killed rank succeeded"
    cat "$dir/out1"
    exit 1
fi
out=$("$shoalrun" -n 1 --timeout 60 "$prog" check "$dir" 2>&1)
status=$?
echo "$out"
if [[ $status -ne 0 ]] || ! grep -q "io_crash: synced bytes intact" <<<"$out"; then
    echo "FAIL: the check after the crash failed (first job's output below)"
    cat "$dir/out1"
    exit 1
fi
# The shared pointer's side file loses its name once every rank has it
# open: the killed job leaves none.
if ls -A "$dir" | grep -q 'shoal-shfp'; then
    echo "FAIL: a shared-pointer side file outlived the killed job: $(ls -A "$dir")"
    exit 1
fi
exit 0
