#!/bin/bash
# A rank killed with SIGKILL in the middle of active-message traffic: the
# job must end within 2 s of the kill, the launcher must name the rank and
# the signal, and nothing of the job may remain (processes, /dev/shm).
# Usage: am_kill.sh <shoalrun> <am_fault> <ranks>
set -u
shoalrun=$1 prog=$2 np=$3
marker="am-kill-marker-$$-$RANDOM"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }

before=$(ls /dev/shm | grep '^shoal-' | sort)
"$shoalrun" -n "$np" --timeout 60 "$prog" kill "$marker" >"$out" 2>&1
rc=$?
end=$(date +%s.%N)
killed=$((np - 1))

[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137 (128 + SIGKILL)"
grep -q "rank $killed .*signal 9" "$out" ||
    fail "the launcher did not say that rank $killed died of signal 9"
stamp=$(sed -n "s/^.*rank $killed: SIGKILL at \([0-9.]*\).*$/\1/p" "$out" | head -n 1)
[ -n "$stamp" ] || fail "rank $killed did not print the time of its kill"
elapsed=$(awk -v a="$end" -v b="$stamp" 'BEGIN {printf "%.3f", a - b}')
awk "BEGIN{exit !($elapsed < 2.0)}" ||
    fail "the job ended $elapsed s after the kill (limit 2 s)"
sleep 0.2
if pgrep -f "$marker" >/dev/null; then
    pgrep -af "$marker"
    fail "processes of the job survived"
fi
# A job running at the same time may own names that appear and go while we
# look: only names that stay are ours.
for try in 1 2 3; do
    left=$(comm -13 <(echo "$before") <(ls /dev/shm | grep '^shoal-' | sort))
    [ -z "$left" ] && break
    sleep 0.5
done
[ -z "$left" ] || fail "left in /dev/shm: $left"
echo "ok: job ended ${elapsed} s after the kill, nothing left"
