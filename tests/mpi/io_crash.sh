#!/usr/bin/env bash
# usage: io_crash.sh <shoalrun> <io_crash program> [plain|cb]
#
# plain (the default): io_crash write on 2 ranks (rank 1 kills itself
# after a sync: the job must fail), then io_crash check on 1 rank (the
# synced bytes must be there), and no side file of the shared pointer may
# be left.
#
# cb: the same through collective buffering on 3 ranks (io_crash
# cbwrite): a synced collective write, then one that a rank does not live
# through, killed in the middle of it (the program says so in
# victim.txt), for each of: one aggregator and the aggregator killed, one
# aggregator and another rank killed, two aggregators and the second
# killed, two and a non-aggregator killed; blocking and nonblocking.
# Without --ft the job must end at once (not by the timeout), failing,
# with shoalrun naming the killed rank; under --ft each survivor's write
# must come back (with an error, or, if the victim's part had all gone
# before it died, with success: then every byte of it must be there).  After each, io_crash cbcheck: every
# synced byte must be there.  The directories are made here and removed.
set -u
shoalrun=$1 prog=$2 what=${3:-plain}
dir=$(mktemp -d /tmp/shoal-io-crash.XXXXXX)
trap 'rm -rf "$dir"' EXIT

no_side_file() {
    # The shared pointer's side file loses its name once every rank has it
    # open: the killed job leaves none.
    if ls -A "$1" | grep -q 'shoal-shfp'; then
        echo "FAIL: a shared-pointer side file outlived the killed job: $(ls -A "$1")"
        exit 1
    fi
}

check_synced() { # dir mode first-job-output [args...]
    local out status d=$1 mode=$2 first=$3
    shift 3
    out=$("$shoalrun" -n 1 --timeout 60 "$prog" "$mode" "$d" "$@" 2>&1)
    status=$?
    echo "$out"
    if [[ $status -ne 0 ]] || ! grep -q "io_crash: synced bytes intact" <<<"$out"; then
        echo "FAIL: the check after the crash failed (the crashed job's output below)"
        cat "$first"
        exit 1
    fi
}

if [[ $what == plain ]]; then
    if "$shoalrun" -n 2 --timeout 60 "$prog" write "$dir" >"$dir/out1" 2>&1; then
        echo "FAIL: the job with a killed rank succeeded"
        cat "$dir/out1"
        exit 1
    fi
    check_synced "$dir" check "$dir/out1"
    no_side_file "$dir"
    exit 0
fi

limit=30 # shoalrun's --timeout; a job that hangs ends there
run_cb() { # ft|noft victim cb_nodes blocking|nonblocking
    local ft=$1 victim=$2 nodes=$3 how=$4 d out status t0 t1 flags=() complete=
    d=$(mktemp -d "$dir/run.XXXXXX")
    out=$d/out
    [[ $ft == ft ]] && flags=(--ft)
    echo "--- ${flags[*]:-no --ft}: rank $victim killed, cb_nodes $nodes, $how"
    t0=$(date +%s)
    "$shoalrun" "${flags[@]}" -n 3 --timeout $limit "$prog" cbwrite "$d" \
        "$victim" "$nodes" "$how" >"$out" 2>&1
    status=$?
    t1=$(date +%s)
    cat "$out"
    if grep -q "timeout" "$out" || ((t1 - t0 >= limit)); then
        echo "FAIL: the survivors hung (the job ran into the $limit s timeout)"
        exit 1
    fi
    if [[ $(cat "$d/victim.txt" 2>/dev/null) != mid ]]; then
        echo "FAIL: rank $victim was not killed in the middle of the write" \
             "(victim.txt: $(cat "$d/victim.txt" 2>/dev/null))"
        exit 1
    fi
    if [[ $ft == ft ]]; then
        for r in 0 1 2; do
            [[ $r == "$victim" ]] && continue
            if ! grep -q "io_crash: survivor $r: write returned" "$out"; then
                echo "FAIL: under --ft survivor $r's write did not return"
                exit 1
            fi
        done
    else
        if [[ $status -eq 0 ]]; then
            echo "FAIL: the job with a killed rank succeeded"
            exit 1
        fi
        if ! grep -q "rank $victim (pid [0-9]*) was killed by signal 9" "$out"; then
            echo "FAIL: shoalrun did not name rank $victim as the one killed"
            exit 1
        fi
    fi
    # A survivor's write that succeeded (the victim's part had all gone
    # before it died) must have written everything.
    grep -q "write returned, class 0\b" "$out" && complete=complete
    check_synced "$d" cbcheck "$out" 3 $complete
    no_side_file "$d"
}

for how in blocking nonblocking; do
    run_cb noft 0 1 $how # the only aggregator
    run_cb noft 1 1 $how # a rank that is not one
    run_cb noft 1 2 $how # the second of two aggregators
    run_cb noft 2 2 $how # the rank that is not one of two
    run_cb ft 0 1 $how
    run_cb ft 2 2 $how
done
echo "io_crash.sh: every synced byte stayed; no survivor hung"
exit 0
