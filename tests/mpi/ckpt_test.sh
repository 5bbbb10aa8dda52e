#!/usr/bin/env bash
# Checkpoint/restart tests (docs/FT.md), driving tests/mpi/ckpt_heat.c.
# usage: ckpt_test.sh <shoalrun> <mpi_ckpt_heat> restart|b2b|inflight|handles|kill|pending|refuse|onfail|trigger
#   restart: a run killed (SIGKILL) after its checkpoint of iteration 12,
#            restarted with --restart, equals an uninterrupted run bit for bit
#   b2b:     the same with two checkpoints back to back each time
#   inflight: the same with messages in flight at every checkpoint (the
#            next iteration's halos and more, sent before it, received
#            after it, also on the program's own communicators): a
#            restart finds them, in order, in the images; one whose
#            program makes its communicators too late is refused
#   handles: inflight with CKPT_HANDLES=1: the program makes its
#            communicators, a Cartesian one, a datatype and a group only
#            on its first start and keeps their handles in registered
#            memory; the restarts bring them back (and the run without
#            the objects in the image must fail: SHOAL_CKPT_NORANDOM=0
#            is refused with a clear message)
#   kill:    a rank killed at each phase boundary of a checkpoint: the
#            previous one (or the new one once committed) restarts exactly
#   pending: a checkpoint with a message in flight on an intercommunicator,
#            a synchronous send or a receive posted is
#            refused on every rank; one with a message in flight on a
#            duplicate, or an ordinary one, is taken; then the run goes on
#            and is exact
#   refuse:  torn, truncated, corrupt, missing, other-size and other-program
#            checkpoints are refused with a clear message; the newest valid
#            complete one is used
#   trigger: shoalrun --checkpoint-every and SIGUSR1: the checkpoints are
#            taken at the call the launcher names, on every rank at the
#            same iteration, the images are there with the right epoch, and
#            a restart from the last one is exact
#   onfail:  shoalrun --restart-on-failure: a rank killed once is restarted
#            from the last complete checkpoint (or from the beginning before
#            the first), exactly; the bound on restarts is kept; a failure
#            of the program's own is not restarted; nothing is left running
set -u
shoalrun=$1 prog=$2 what=$3
np=4 iters=30 k=6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-ckpt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*"
    exit 1
}

# run <expect: ok|fail> <shoalrun options...> -- <program args...>
run() {
    local expect=$1
    shift
    local opts=()
    while [[ $1 != -- ]]; do
        opts+=("$1")
        shift
    done
    shift
    out=$("$shoalrun" "${opts[@]}" --timeout 60 "$prog" "$@" 2>&1)
    status=$?
    if [[ $expect == ok && $status -ne 0 ]]; then
        echo "$out"
        fail "shoalrun ${opts[*]} $prog $* exited with $status"
    fi
    if [[ $expect == fail && $status -eq 0 ]]; then
        echo "$out"
        fail "shoalrun ${opts[*]} $prog $* succeeded; expected a failure"
    fi
    return 0
}

expect_out() {
    if ! grep -Eq -- "$1" <<<"$out"; then
        echo "$out"
        fail "output does not match '$1'"
    fi
    echo "ok: $(grep -E -- "$1" <<<"$out" | head -1)"
}

# No rank of any run of this test is still running (their arguments hold
# $tmp).
no_leftovers() {
    local left
    left=$(pgrep -a -f -- "$tmp/" || true)
    [[ -z $left ]] || fail "processes outlived the job: $left"
}

# how many lines of $out match
count_out() {
    grep -Ec -- "$1" <<<"$out" || true
}

# the uninterrupted run
run ok -n $np --checkpoint-dir "$tmp/ref" -- $iters $k - "$tmp/ref.out"
[[ -s $tmp/ref.out ]] || fail "no reference result"
n=$(ls -d "$tmp/ref"/ckpt.* | wc -l)
[[ $n -eq 1 ]] || fail "$n checkpoints kept, expected the newest only"

case $what in
restart | b2b | inflight | handles)
    mode=
    [[ $what != restart ]] && mode=$what
    if [[ $what == handles ]]; then
        mode=inflight
        export CKPT_HANDLES=1
    fi
    run fail -n $np --checkpoint-dir "$tmp/d" -- $iters $k 2@15 "$tmp/x.out" $mode
    # the launcher reaps rank 2 first, or (over TCP) a peer saw it die
    # ("rank 2 failed: connection to rank 2 lost") and ended the job
    expect_out "rank 2 (\(pid [0-9]+\) was killed by signal 9|died|failed)"
    [[ ! -e $tmp/x.out ]] || fail "the killed run wrote a result"
    [[ -e $tmp/d/ckpt.$([[ $what == b2b ]] && echo 4 || echo 2)/COMPLETE ]] ||
        fail "no complete checkpoint: $(ls -R "$tmp/d")"
    if [[ $what == inflight ]]; then
        # The program's communicators made only after
        # MPIX_Checkpoint_restarted: the messages on them in the images
        # have nowhere to go, and the restart is refused saying so.
        CKPT_COMMS_LATE=1 run fail -n $np --restart "$tmp/d" -- $iters $k - "$tmp/r3.out" $mode
        expect_out "a message was in flight at the checkpoint on a communicator of [24] ranks \(context id [0-9]+\) that this process has not made again"
        expect_out "no complete and valid checkpoint in"
        [[ ! -e $tmp/r3.out ]] || fail "a refused restart wrote a result"
    fi
    if [[ $what == handles ]]; then
        # Randomized, the handles in the image would name nothing.
        SHOAL_CKPT_NORANDOM=0 run fail -n $np --restart "$tmp/d" -- $iters $k - "$tmp/r4.out" $mode
        expect_out "the registered regions hold handles of communicators, groups or datatypes, which would name nothing here: the program or the Shoal library is loaded at another address"
        [[ ! -e $tmp/r4.out ]] || fail "a refused restart wrote a result"
    fi
    run ok -n $np --restart "$tmp/d" -- $iters $k - "$tmp/r.out" $mode
    expect_out "^restarted at iteration 12$"
    cmp "$tmp/ref.out" "$tmp/r.out" || fail "the restarted result differs"
    # and once more from the restarted run's own last checkpoint
    run ok -n $np --restart "$tmp/d" -- $iters $k - "$tmp/r2.out" $mode
    expect_out "^restarted at iteration 30$"
    cmp "$tmp/ref.out" "$tmp/r2.out" || fail "the second restart differs"
    ;;
kill)
    # A rank killed inside the checkpoint of iteration 18 (epoch 3), at
    # each phase boundary: before COMPLETE the previous checkpoint (12)
    # is used, after it the new one (18); exact either way.
    for spec in 1@3:made 1@3:written 0@3:written 3@3:written 0@3:complete; do
        rm -rf "$tmp/d"
        SHOAL_CKPT_KILL=$spec run fail -n $np --checkpoint-dir "$tmp/d" -- $iters $k - "$tmp/x.out"
        expect_out "rank ${spec%%@*} (\(pid [0-9]+\) was killed by signal 9|died|failed)"
        at=12
        [[ $spec == *complete ]] && at=18
        run ok -n $np --restart "$tmp/d" -- $iters $k - "$tmp/r.out"
        expect_out "^restarted at iteration $at$"
        cmp "$tmp/ref.out" "$tmp/r.out" || fail "$spec: the restarted result differs"
        # The restarted run's checkpoints went past the torn one's number
        # (4, 5, 6; or 4, 5 after the complete one) and the older ones
        # were removed.
        last=6
        [[ $spec == *complete ]] && last=5
        [[ $(ls "$tmp/d") == ckpt.$last && -e $tmp/d/ckpt.$last/COMPLETE ]] ||
            fail "$spec: left $(ls "$tmp/d"), expected ckpt.$last"
    done
    ;;
pending)
    run ok -n $np --checkpoint-dir "$tmp/d" -- $iters $k - "$tmp/p.out" pending
    expect_out "^pending checkpoints refused$"
    cmp "$tmp/ref.out" "$tmp/p.out" || fail "the result differs"
    ;;
refuse)
    good=$(ls -d "$tmp/ref"/ckpt.*)
    e=${good##*.}
    fresh() { # a checkpoint directory holding a copy of the good one
        rm -rf "$tmp/c"
        mkdir -p "$tmp/c"
        cp -r "$good" "$tmp/c/"
        c=$tmp/c/ckpt.$e
    }
    fresh
    truncate -s -8 "$c/rank.1"
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "rank.1: truncated or padded"
    expect_out "no complete and valid checkpoint in .* cannot restart"

    fresh
    printf '\x55' | dd of="$c/rank.2" bs=1 seek=300 conv=notrunc status=none
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "rank.2: checksum mismatch \(the image is corrupt\)"

    fresh
    rm "$c/rank.3"
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "rank.3: No such file or directory \(the rank's file is missing\)"

    fresh
    rm "$c/COMPLETE"
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "not complete \(no COMPLETE"

    fresh
    run fail -n 2 --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "a checkpoint of 4 ranks, this job has 2"

    fresh
    ln -s "$(readlink -f "$prog")" "$tmp/other_program"
    out=$("$shoalrun" -n $np --restart "$tmp/c" --timeout 60 \
          "$tmp/other_program" $iters $k - "$tmp/o" 2>&1) &&
        fail "another program restarted from the checkpoint"
    expect_out "a checkpoint of another program \(this is 'other_program'\)"

    fresh
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o" smaller
    expect_out "ckpt.$e: region 1 is 520 bytes here, 528 in the image"

    rm -rf "$tmp/c"
    mkdir -p "$tmp/c"
    run fail -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "no complete and valid checkpoint in"

    # A newer torn checkpoint (no COMPLETE) and a newer corrupt complete
    # one: the good one is used, and the result is exact.
    fresh
    cp -r "$c" "$tmp/c/ckpt.$((e + 1))"
    rm "$tmp/c/ckpt.$((e + 1))/COMPLETE"
    cp -r "$c" "$tmp/c/ckpt.$((e + 2))"
    sed -i "s/epoch=$e /epoch=$((e + 2)) /" "$tmp/c/ckpt.$((e + 2))/COMPLETE"
    run ok -n $np --restart "$tmp/c" -- $iters $k - "$tmp/o"
    expect_out "ckpt.$((e + 2))/rank.0: holds rank 0 of epoch $e, expected rank 0 of epoch $((e + 2))"
    expect_out "^restarted at iteration 30$"
    cmp "$tmp/ref.out" "$tmp/o" || fail "the result differs"
    ;;
trigger)
    # Rank 0 sleeps 1 ms each iteration (the others wait for it in the
    # halo exchange): 1500 iterations, a few seconds.
    long=1500
    run ok -n $np --checkpoint-dir "$tmp/ref2" -- $long 0 - "$tmp/ref2.out"
    [[ -z $(ls "$tmp/ref2") ]] || fail "checkpoints without a request"

    # Every 0.25 s: each request is answered with a call number, taken at
    # that iteration (the program checks every rank took it at the same
    # one), and the directory holds the last, of epoch = how many.
    run ok -n $np --checkpoint-every 0.25 --checkpoint-dir "$tmp/d" -- $long 0 - "$tmp/p.out" poll:1000
    asked=$(count_out "checkpoint request [0-9]+ \(--checkpoint-every\): the ranks take it at their call [0-9]+ of")
    taken=$(count_out "^checkpoint taken at iteration [0-9]+$")
    # (a request answered while a rank finishes names a call past the end)
    [[ $taken -ge 2 && ( $taken -eq $asked || $taken -eq $((asked - 1)) ) ]] || {
        echo "$out"
        fail "$asked checkpoints asked for, $taken taken"
    }
    for call in $(sed -n 's/.*the ranks take it at their call \([0-9]*\) of.*/\1/p' <<<"$out"); do
        [[ $call -gt $long ]] || expect_out "^checkpoint taken at iteration $call$"
    done
    last=$(grep -E "^checkpoint taken at iteration" <<<"$out" | tail -1 | awk '{print $5}')
    [[ $(ls "$tmp/d") == ckpt.$taken && -e $tmp/d/ckpt.$taken/COMPLETE ]] ||
        fail "left $(ls "$tmp/d"), expected ckpt.$taken"
    grep -q "^shoal-checkpoint 1 epoch=$taken ranks=$np " "$tmp/d/ckpt.$taken/COMPLETE" ||
        fail "COMPLETE: $(cat "$tmp/d/ckpt.$taken/COMPLETE")"
    cmp "$tmp/ref2.out" "$tmp/p.out" || fail "the result differs"
    run ok -n $np --restart "$tmp/d" -- $long 0 - "$tmp/r.out" poll
    expect_out "^restarted at iteration $last$"
    cmp "$tmp/ref2.out" "$tmp/r.out" || fail "the restarted result differs"

    # SIGUSR1 to shoalrun, twice in a row: one checkpoint at the call it
    # names (the second is refused while the first is pending, or is a
    # second request), and the restart from it is exact.
    "$shoalrun" -n $np --checkpoint-dir "$tmp/s" --timeout 60 "$prog" $long 0 - "$tmp/s.out" poll:1000 >"$tmp/log" 2>&1 &
    pid=$!
    sleep 1
    kill -USR1 $pid
    sleep 0.05 # (two pending signals would be one)
    kill -USR1 $pid
    wait $pid
    status=$?
    out=$(cat "$tmp/log")
    [[ $status -eq 0 ]] || {
        echo "$out"
        fail "shoalrun exited with $status after SIGUSR1"
    }
    expect_out "got SIGUSR1: asking the ranks for a checkpoint"
    expect_out "checkpoint request 1 \(SIGUSR1\): the ranks take it at their call [0-9]+ of"
    call=$(sed -n 's/.*request 1 (SIGUSR1): the ranks take it at their call \([0-9]*\) of.*/\1/p' <<<"$out")
    expect_out "^checkpoint taken at iteration $call$"
    expect_out "(SIGUSR1: a checkpoint request is pending already|checkpoint request 2 \(SIGUSR1\))"
    taken=$(count_out "^checkpoint taken at iteration [0-9]+$")
    [[ -e $tmp/s/ckpt.$taken/COMPLETE ]] || fail "no ckpt.$taken: $(ls "$tmp/s")"
    cmp "$tmp/ref2.out" "$tmp/s.out" || fail "the result differs"
    last=$(grep -E "^checkpoint taken at iteration" <<<"$out" | tail -1 | awk '{print $5}')
    run ok -n $np --restart "$tmp/s" -- $long 0 - "$tmp/r2.out" poll
    expect_out "^restarted at iteration $last$"
    cmp "$tmp/ref2.out" "$tmp/r2.out" || fail "the restarted result differs"
    no_leftovers

    # Without a checkpoint directory SIGUSR1 still goes to the ranks
    # (sleep dies of it); with one it does not, and a program that never
    # initializes MPI is never asked.
    "$shoalrun" -n 2 --timeout 60 sleep 3 >"$tmp/log" 2>&1 &
    pid=$!
    sleep 0.5
    kill -USR1 $pid
    wait $pid
    status=$?
    [[ $status -eq 138 ]] || fail "SIGUSR1 without a directory: status $status, expected 138: $(cat "$tmp/log")"
    "$shoalrun" -n 2 --checkpoint-dir "$tmp/h" --timeout 60 sleep 1 >"$tmp/log" 2>&1 &
    pid=$!
    sleep 0.5
    kill -USR1 $pid
    wait $pid
    status=$?
    out=$(cat "$tmp/log")
    [[ $status -eq 0 ]] || fail "SIGUSR1 with a directory: status $status: $out"
    expect_out "SIGUSR1: the checkpoint is asked for once every rank has finished MPI_Init"

    # The usage errors.
    out=$("$shoalrun" -n 2 --checkpoint-every 1 "$prog" 1 0 - "$tmp/o" 2>&1)
    [[ $? -eq 2 ]] || fail "--checkpoint-every without a directory accepted"
    expect_out "checkpoint-every needs a checkpoint directory"
    out=$("$shoalrun" -n 2 --checkpoint-every 0 --checkpoint-dir "$tmp/g" "$prog" 1 0 - "$tmp/o" 2>&1)
    [[ $? -eq 2 ]] || fail "--checkpoint-every 0 accepted"
    expect_out "checkpoint-every '0' is not a number of seconds above 0"
    ;;
onfail)
    # Rank 2 kills itself once, at iteration 15: the launcher restarts the
    # job from the checkpoint of iteration 12 (epoch 2), and the result is
    # the uninterrupted run's.
    run ok -n $np --ft --restart-on-failure --checkpoint-dir "$tmp/d" -- $iters $k "2@15:$tmp/m1" "$tmp/r.out"
    [[ -e $tmp/m1 ]] || fail "rank 2 did not kill itself"
    expect_out "rank 2 (\(pid [0-9]+\) was killed by signal 9|died|failed)"
    expect_out "restart-on-failure: restart 1 of 3, from the checkpoint $tmp/d/ckpt.2$"
    expect_out "^restarted at iteration 12$"
    [[ $(count_out "restart-on-failure: restart") -eq 1 ]] || {
        echo "$out"
        fail "restarted other than once"
    }
    cmp "$tmp/ref.out" "$tmp/r.out" || fail "the restarted result differs"
    no_leftovers

    # Without --ft too, and a death before the first checkpoint: the job
    # starts again from the beginning.
    run ok -n $np --restart-on-failure=2 --checkpoint-dir "$tmp/e" -- $iters $k "1@3:$tmp/m2" "$tmp/b.out"
    expect_out "restart 1 of 2, from the beginning: the job has no complete checkpoint in $tmp/e yet"
    [[ $(count_out "^restarted at") -eq 0 ]] || fail "restarted from a checkpoint"
    cmp "$tmp/ref.out" "$tmp/b.out" || fail "the result differs"
    no_leftovers

    # A complete checkpoint of an earlier run (iteration 30, in $tmp/ref)
    # is not this job's: killed before its first checkpoint, a fresh run
    # starts from the beginning, not from it.
    run ok -n $np --restart-on-failure --checkpoint-dir "$tmp/ref" -- $iters $k "3@4:$tmp/m3" "$tmp/c.out"
    expect_out "restart 1 of 3, from the beginning"
    cmp "$tmp/ref.out" "$tmp/c.out" || fail "the result differs"
    no_leftovers

    # The bound: rank 2 dies at iteration 15 every time; two restarts from
    # the checkpoint of iteration 12, then shoalrun gives up with the last
    # attempt's status (128+9, or over TCP that of a peer that saw it die).
    run fail -n $np --ft --restart-on-failure=2 --checkpoint-dir "$tmp/f" -- $iters $k 2@15 "$tmp/x.out"
    expect_out "a rank died again after 2 restarts; giving up \(the job's status is $status\)"
    # (the restarted rank 0's "restarted at" line dies in its stdio buffer)
    [[ $(count_out "restart [12] of 2, from the checkpoint $tmp/f/ckpt.2$") -eq 2 ]] || {
        echo "$out"
        fail "not restarted exactly twice"
    }
    [[ ! -e $tmp/x.out ]] || fail "a killed run wrote a result"
    no_leftovers

    # shoalrun killed with SIGKILL during its second attempt: no rank of
    # it is left (each attempt has its own watchdog; the ranks die with
    # their parent).
    "$shoalrun" -n $np --restart-on-failure --checkpoint-dir "$tmp/k" --timeout 60 "$prog" 1500 500 "1@15:$tmp/m4" "$tmp/k.out" poll:1000 >"$tmp/log" 2>&1 &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        grep -q "restart 1 of 3" "$tmp/log" && break
        sleep 0.05
    done
    sleep 0.3
    kill -9 $pid
    wait $pid 2>/dev/null
    out=$(cat "$tmp/log")
    expect_out "restart-on-failure: restart 1 of 3, from the beginning"
    sleep 1
    no_leftovers

    # A failure of the program's own (here: nothing to restart from) is
    # not restarted.
    mkdir -p "$tmp/empty"
    run fail -n $np --restart-on-failure --restart "$tmp/empty" -- $iters $k - "$tmp/o"
    expect_out "no complete and valid checkpoint in"
    expect_out "restart-on-failure: not restarting: no rank died"
    [[ $(count_out "restart-on-failure: restart ") -eq 0 ]] || fail "restarted"

    # Usage: a directory is needed, N is checked.
    out=$("$shoalrun" -n 2 --restart-on-failure "$prog" 1 1 - "$tmp/o" 2>&1)
    [[ $? -eq 2 ]] || fail "--restart-on-failure without a directory accepted"
    expect_out "restart-on-failure needs a checkpoint directory"
    out=$("$shoalrun" -n 2 --restart-on-failure=0 --checkpoint-dir "$tmp/g" "$prog" 1 1 - "$tmp/o" 2>&1)
    [[ $? -eq 2 ]] || fail "--restart-on-failure=0 accepted"
    expect_out "expected a number of restarts, 1 to 1000"
    ;;
*)
    fail "unknown test $what"
    ;;
esac
echo "OK: $what"
