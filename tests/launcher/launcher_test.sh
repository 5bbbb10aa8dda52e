#!/bin/bash
# shoalrun's behaviour, one case per run:
#   launcher_test.sh CASE SHOALRUN HELPER
# Each case starts jobs of HELPER (launcher_helper.c) with a marker unique
# to this run, checks exit status, messages and timing, and checks that no
# process of the job and no /dev/shm object of the job is left.  Whatever
# happens, the trap removes what this run started (by pid, found by the
# marker) before exiting.
set -u
case_name=$1
SHOALRUN=$2
HELPER=$3
M="shoaltest-$$-$RANDOM-$case_name"
tmp=$(mktemp -d)
prefix=""
rc=0

cleanup() {
    for p in $(pgrep -f -- "$M"); do
        kill -9 "$p" 2>/dev/null
    done
    if [ -n "$prefix" ]; then
        rm -f /dev/shm/"$prefix"*
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/test_lib.sh" ||
    { echo "FAIL ($case_name): cannot source test_lib.sh"; exit 1; }

# run ARGS...: shoalrun with stdout/stderr captured; sets rc.
run() {
    "$SHOALRUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# nothing_left [MS]: within MS ms (default 500), no process of the job and
# no /dev/shm object of the job exist.
nothing_left() {
    local limit=${1:-500} t0
    t0=$(now_ns)
    while pgrep -f -- "$M" >/dev/null ||
        { [ -n "$prefix" ] && ls /dev/shm/"$prefix"* >/dev/null 2>&1; }; do
        if [ "$(ms_since "$t0")" -gt "$limit" ]; then
            fail "left behind after ${limit} ms: $(pgrep -a -f -- "$M")" \
                "$(ls /dev/shm/"$prefix"* 2>/dev/null)"
        fi
        sleep 0.02
    done
}

# start ARGS...: shoalrun in the background (own process group, signals
# not ignored); sets pid.
start() {
    # Emptied here, not only by the background job's redirection, which
    # runs when that job is scheduled: a wait_for right after start could
    # otherwise count the last job's lines and signal a shell that has
    # not yet become shoalrun (launcher.signals failed so, 130, under load).
    : >"$tmp/out"
    : >"$tmp/err"
    set -m
    "$SHOALRUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    set +m
}

finish() {
    wait "$pid" 2>/dev/null
    rc=$?
}

case_exit_status() {
    run -n 3 "$HELPER" "$M" exit 0
    expect_rc 0
    [ -s "$tmp/err" ] && fail "unexpected messages"
    run -n 3 "$HELPER" "$M" exit 5
    expect_rc 5
    expect_err "^shoalrun: rank [0-2] \(pid [0-9]+\) exited with code 5"
    run -n 2 sh -c 'kill -TERM $$'
    expect_rc 143
    expect_err "rank [01] \(pid [0-9]+\) was killed by signal 15 \(Terminated\)"
}

case_exit_rank() {
    local t0
    t0=$(now_ns)
    run -n 4 "$HELPER" "$M" exit-rank 1 3
    expect_rc 3
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) exited with code 3; stopping the other 3 ranks$"
    [ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "more than one message"
    # 0.2 s until the exit, then at most 2 s.
    [ "$(ms_since "$t0")" -lt 2200 ] || fail "took $(ms_since "$t0") ms"
    nothing_left
}

case_kill_rank() {
    run -n 4 "$HELPER" "$M" kill-rank 1 9
    local end died
    end=$(now_ns)
    expect_rc 137
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); stopping the other 3 ranks$"
    find_prefix
    [ "$(grep -c '^ready rank' "$tmp/out")" -eq 4 ] || fail "not every rank set up"
    died=$(sed -n 's/^dying at //p' "$tmp/out")
    [ -n "$died" ] || fail "no time of death"
    echo "death to exit: $(((end - died) / 1000000)) ms"
    [ $((end - died)) -lt 2000000000 ] || fail "job ended $(((end - died) / 1000000)) ms after the death"
    nothing_left
}

# rank_pid R: the pid of the job's rank R (by its PMI_RANK).
rank_pid() {
    local p
    for p in $(pgrep -f -- "$M"); do
        [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$HELPER")" ] &&
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "PMI_RANK=$1" && { echo "$p"; return 0; }
    done
    fail "no process of rank $1"
}

case_expendable() {
    # The task runtime's rule (job.c): a rank that put task-expendable and
    # is killed is let go with a line, and the job goes on, rank 0 (the
    # coordinator, which the next rank replaces) too; the last rank's
    # death ends the job.
    start -n 3 "$HELPER" "$M" expendable -1 30
    wait_for "^ready rank" 3 "$tmp/out"
    kill -9 "$(rank_pid 2)"
    wait_for "rank 2 .* expendable" 1 "$tmp/err"
    expect_err "^shoalrun: rank 2 \(pid [0-9]+\) was killed by signal 9 \(Killed\); it is an expendable task worker: the job goes on$"
    sleep 0.3
    kill -0 "$pid" 2>/dev/null || fail "the job ended with rank 2"
    kill -9 "$(rank_pid 0)"
    wait_for "rank 0 .* expendable" 1 "$tmp/err"
    expect_err "^shoalrun: rank 0 \(pid [0-9]+\) was killed by signal 9 \(Killed\); it is an expendable task worker: the job goes on$"
    sleep 0.3
    kill -0 "$pid" 2>/dev/null || fail "the job ended with rank 0"
    kill -9 "$(rank_pid 1)"
    finish
    expect_rc 137
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\)$"
    nothing_left
    # A rank that did not put it (here rank 0) ends the job as always.
    start -n 2 "$HELPER" "$M" expendable 0 30
    wait_for "^ready rank" 2 "$tmp/out"
    kill -9 "$(rank_pid 0)"
    finish
    expect_rc 137
    expect_err "^shoalrun: rank 0 \(pid [0-9]+\) was killed by signal 9 \(Killed\); stopping the other rank$"
    nothing_left
}

case_timeout() {
    local t0
    t0=$(now_ns)
    run -n 2 --timeout 0.5 "$HELPER" "$M" sleep 30
    expect_rc 124
    expect_err "^shoalrun: job exceeded the 0.5 s timeout; stopping 2 ranks$"
    [ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "more than one message"
    [ "$(ms_since "$t0")" -lt 2500 ] || fail "took $(ms_since "$t0") ms"
    find_prefix
    nothing_left
}

# MPIEXEC_TIMEOUT stands for --timeout (MPICH's test suite sets it), and
# --timeout wins over it.
case_timeout_env() {
    local t0
    t0=$(now_ns)
    export MPIEXEC_TIMEOUT=0.5
    run -n 2 "$HELPER" "$M" sleep 30
    expect_rc 124
    expect_err "^shoalrun: job exceeded the 0.5 s timeout; stopping 2 ranks$"
    [ "$(ms_since "$t0")" -lt 2500 ] || fail "took $(ms_since "$t0") ms"
    find_prefix
    nothing_left
    MPIEXEC_TIMEOUT=junk run -n 1 "$HELPER" "$M" sleep 30
    expect_rc 2
    expect_err "MPIEXEC_TIMEOUT 'junk' is not a number of seconds"
    MPIEXEC_TIMEOUT=100 run -n 2 --timeout 0.5 "$HELPER" "$M" sleep 30
    expect_rc 124
    expect_err "^shoalrun: job exceeded the 0.5 s timeout; stopping 2 ranks$"
    unset MPIEXEC_TIMEOUT
}

case_signals() {
    start -n 2 "$HELPER" "$M" signals
    wait_for "^ready rank" 2 "$tmp/out"
    for sig in USR1 USR2 HUP; do
        kill -"$sig" "$pid"
        wait_for "got SIG$sig" 2 "$tmp/out"
    done
    kill -TERM "$pid"
    finish
    expect_rc 0 # the ranks exit 0 on SIGTERM
    wait_for "got SIGTERM" 2 "$tmp/out"
    expect_err "got SIGTERM; passing it to the ranks"
    start -n 2 "$HELPER" "$M" signals
    wait_for "^ready rank" 2 "$tmp/out"
    kill -INT "$pid"
    finish
    expect_rc 0
    wait_for "got SIGINT" 2 "$tmp/out"
    nothing_left
}

case_sigint_twice() {
    local t1
    start -n 2 "$HELPER" "$M" ignore-int
    wait_for "^ready rank" 2 "$tmp/out"
    kill -INT "$pid"
    wait_for "got SIGINT \(ignored\)" 2 "$tmp/out"
    t1=$(now_ns)
    kill -INT "$pid"
    finish
    expect_rc 137
    # Well before the 1 s grace that a single SIGINT gets.
    [ "$(ms_since "$t1")" -lt 600 ] || fail "second SIGINT took $(ms_since "$t1") ms"
    expect_err "got SIGINT again; killing the ranks"
    nothing_left
}

case_sigterm_grace() {
    local t0 ms
    start -n 2 "$HELPER" "$M" ignore-term
    wait_for "^ready rank" 2 "$tmp/out"
    t0=$(now_ns)
    kill -TERM "$pid"
    finish
    ms=$(ms_since "$t0")
    expect_rc 137
    [ "$ms" -ge 800 ] && [ "$ms" -lt 2500 ] || fail "SIGKILL after $ms ms, expected about 1000"
    nothing_left
}

case_kill_shoalrun() {
    local t0 ms
    start -n 4 "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 4 "$tmp/out"
    find_prefix
    [ "$(ls /dev/shm/"$prefix"* | wc -l)" -eq 4 ] || fail "no shm objects to clean"
    t0=$(now_ns)
    kill -KILL "$pid"
    finish
    nothing_left 2000
    ms=$(ms_since "$t0")
    echo "shoalrun SIGKILLed: job gone and /dev/shm swept after $ms ms"
}

case_tag_output() {
    run -n 2 --tag-output "$HELPER" "$M" partial
    expect_rc 0
    for r in 0 1; do
        [ "$(grep "^\[$r\]" "$tmp/out")" = "[$r] ab
[$r] c" ] || fail "rank $r's tagged lines are wrong"
    done
    [ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "extra output"
    run -n 1 "$HELPER" "$M" partial
    printf 'ab\nc' | cmp - "$tmp/out" || fail "untagged output changed"
    run -n 2 --tag-output sh -c 'echo e >&2'
    expect_err '^\[0\] e$'
    expect_err '^\[1\] e$'
}

case_big_output() {
    local bytes=1048576 total=0
    run -n 4 "$HELPER" "$M" output $bytes
    expect_rc 0
    for r in 0 1 2 3; do
        "$HELPER" "$M" gen-output $r $bytes >"$tmp/ref"
        grep "^r$r out " "$tmp/out" | cmp - "$tmp/ref" || fail "rank $r stdout differs"
        sed "s/^r$r out /r$r err /" "$tmp/ref" >"$tmp/referr"
        grep "^r$r err " "$tmp/err" | cmp - "$tmp/referr" || fail "rank $r stderr differs"
        total=$((total + $(wc -c <"$tmp/ref")))
    done
    [ "$(wc -c <"$tmp/out")" -eq $total ] || fail "stdout has $(wc -c <"$tmp/out") bytes, expected $total"
    [ "$(wc -c <"$tmp/err")" -eq $total ] || fail "stderr has $(wc -c <"$tmp/err") bytes, expected $total"
}

case_abort() {
    local t0
    t0=$(now_ns)
    run -n 3 "$HELPER" "$M" abort 7
    expect_rc 7
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) called PMI abort with exit code 7: helper abort test; stopping the other 2 ranks$"
    [ "$(ms_since "$t0")" -lt 2500 ] || fail "took $(ms_since "$t0") ms"
    nothing_left
}

case_garbage() {
    run -n 2 "$HELPER" "$M" garbage
    expect_rc 0
    expect_out "^garbage reply: cmd=put_result rc=-1 msg=wrong_kvsname"
    expect_out "^rank 0 exchanged"
    expect_out "^rank 1 exchanged"
    expect_err "^shoalrun: rank 1 sent a bad PMI request: 'put' names kvsname 'wrong'"
    expect_err "^shoalrun: rank 1 sent a bad PMI request: PMI token 'this' is not key=value"
    expect_err "^shoalrun: rank 1 sent a bad PMI request: unknown command 'frobnicate'"
    # Accusations (docs/FT.md, "Partitions") without a rank, of a rank
    # not in the job, of itself: refused; a valid one without --ft is
    # ignored (nobody is killed: both ranks exchanged above).
    [ "$(grep -c "rank 1 sent a bad PMI request: 'shoal-ft-accuse' without a valid rank" "$tmp/err")" = 3 ] ||
        fail "not three bad accusations refused"
    expect_err "rank 1 sent a bad PMI request: .*control byte"
    expect_err "rank 1 sent a bad PMI request: .*(exceeds the limit|longer than)"
}

case_stuck() {
    local t0
    t0=$(now_ns)
    run -n 2 "$HELPER" "$M" finalize-early
    expect_rc 1
    expect_err "^shoalrun: rank 1 called PMI finalize while other ranks wait in a PMI barrier it can no longer enter; stopping the job's 2 ranks$"
    [ "$(ms_since "$t0")" -lt 2500 ] || fail "took $(ms_since "$t0") ms"
    nothing_left
}

# ---- finalize, exits after it, exits without it ---------------------------

# A rank that fails after MPI_Finalize (or shoal_finalize) does not cost
# the others their last output: they get SHOAL_EXIT_GRACE (5 s) to exit.
case_finalize_exit() {
    local t0 ms api
    for api in mpi mpi mpi am; do
        t0=$(now_ns)
        run -n 3 --timeout 20 "$HELPER" "$M" finalize-exit 1 3 $api
        ms=$(ms_since "$t0")
        expect_rc 3
        expect_out "^rank 0 result 42$"
        expect_out "^rank 2 result 42$"
        expect_err "^shoalrun: rank 1 \(pid [0-9]+\) exited with code 3 after finalizing; waiting up to 5 s for the other 2 ranks to exit$"
        [ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "more than one message"
        echo "$api: over after $ms ms"
        # The others exit 0.3 s after finalizing: no need to wait 5 s.
        [ "$ms" -lt 3000 ] || fail "took $ms ms"
        nothing_left
    done
    # Every rank finalizes and exits 0: nothing to say.
    run -n 3 --timeout 20 "$HELPER" "$M" finalize-exit 1 0 mpi
    expect_rc 0
    [ -s "$tmp/err" ] && fail "unexpected messages"
    [ "$(grep -c "result 42" "$tmp/out")" -eq 2 ] || fail "result lines missing"
    nothing_left
}

# A rank that initialized and exits, even with 0, without finalizing is a
# failure: reported, status 1.  It did not crash, and whoever waits for it
# hears of a dead peer from the library, so the others get the grace too.
case_no_finalize() {
    local api t0 ms
    for api in mpi am; do
        t0=$(now_ns)
        SHOAL_EXIT_GRACE=1s run -n 3 --timeout 20 "$HELPER" "$M" no-finalize 2 $api
        ms=$(ms_since "$t0")
        expect_rc 1
        expect_err "^shoalrun: rank 2 \(pid [0-9]+\) exited with code 0 without calling MPI_Finalize \(or shoal_finalize\) after initializing; waiting up to 1 s for the other 2 ranks to exit$"
        expect_err "^shoalrun: 2 ranks are still running 1 s after rank 2 failed; stopping them$"
        [ "$(grep -c . "$tmp/err")" -eq 2 ] || fail "more than two messages"
        [ "$ms" -ge 900 ] && [ "$ms" -lt 3000 ] || fail "took $ms ms, expected about 1000"
        nothing_left
    done
}

# Programs that never initialize are not MPI programs: exit 0, no report.
case_no_init() {
    local prog
    for prog in /bin/true hostname "$HELPER $M exit 0"; do
        # shellcheck disable=SC2086
        run -n 2 $prog
        expect_rc 0
        [ -s "$tmp/err" ] && fail "$prog: unexpected messages"
    done
    # Nor is a rank that exits 0 while another goes on.
    run -n 2 sh -c '[ "$PMI_RANK" = 0 ] || sleep 0.3; echo done $PMI_RANK'
    expect_rc 0
    [ -s "$tmp/err" ] && fail "unexpected messages"
    [ "$(grep -c '^done' "$tmp/out")" -eq 2 ] || fail "output missing"
    nothing_left
}

# The grace is a bound: a rank that goes on computing after another failed
# is stopped when it ends (SIGTERM, then SIGKILL a second later).
case_exit_grace() {
    local t0 ms
    t0=$(now_ns)
    SHOAL_EXIT_GRACE=0.5s run -n 2 --timeout 20 "$HELPER" "$M" finalize-linger 1 3
    ms=$(ms_since "$t0")
    echo "grace 0.5 s: over after $ms ms"
    expect_rc 3
    expect_out "^rank 0 computing$"
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) exited with code 3 after finalizing; waiting up to 0.5 s for the other rank to exit$"
    expect_err "^shoalrun: 1 rank is still running 0.5 s after rank 1 failed; stopping it$"
    [ "$(grep -c . "$tmp/err")" -eq 2 ] || fail "more than two messages"
    [ "$ms" -ge 450 ] && [ "$ms" -lt 2000 ] || fail "stopped after $ms ms, expected about 500"
    nothing_left
    t0=$(now_ns)
    SHOAL_EXIT_GRACE=0.5s run -n 3 --timeout 20 "$HELPER" "$M" finalize-linger 1 3 ignore-term
    ms=$(ms_since "$t0")
    echo "grace 0.5 s, SIGTERM ignored: over after $ms ms"
    expect_rc 3
    expect_err "^shoalrun: 2 ranks are still running 0.5 s after rank 1 failed; stopping them$"
    expect_err "^shoalrun: 2 ranks are still running 1 s after SIGTERM; killing them$"
    [ "$ms" -ge 1400 ] && [ "$ms" -lt 3000 ] || fail "killed after $ms ms, expected about 1500"
    nothing_left
    # The default: 5 s.
    t0=$(now_ns)
    run -n 2 --timeout 20 "$HELPER" "$M" finalize-linger 1 3
    ms=$(ms_since "$t0")
    echo "default grace: over after $ms ms"
    expect_rc 3
    expect_err "still running 5 s after rank 1 failed; stopping it$"
    [ "$ms" -ge 4900 ] && [ "$ms" -lt 7000 ] || fail "stopped after $ms ms, expected about 5000"
    # 0: stopped at once, as a failure before finalizing is.
    SHOAL_EXIT_GRACE=0 run -n 2 --timeout 20 "$HELPER" "$M" finalize-linger 1 3
    expect_rc 3
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) exited with code 3 after finalizing; stopping the other rank$"
    SHOAL_EXIT_GRACE=soon bad_args 2 "SHOAL_EXIT_GRACE=soon is not valid" -n 1 true
    nothing_left
}

case_bind() {
    local ncpu
    ncpu=$(nproc)
    run -n 2 --bind-to none "$HELPER" "$M" affinity
    [ "$(grep -c "cpus $ncpu\$" "$tmp/out")" -eq 2 ] || fail "--bind-to none changed the mask"
    run -n 2 --bind-to core "$HELPER" "$M" affinity
    [ "$(grep -c 'cpus 1$' "$tmp/out")" -eq 2 ] || fail "--bind-to core did not pin"
    # auto is core even when ranks outnumber CPUs (bench/binding.sh).
    run -n $((ncpu + 1)) "$HELPER" "$M" affinity
    [ "$(grep -c 'cpus 1$' "$tmp/out")" -eq $((ncpu + 1)) ] ||
        fail "auto did not pin an oversubscribed job"
    run -n 1 "$HELPER" "$M" affinity
    expect_out "cpus 1$"
    SHOAL_BIND_TO=none run -n 1 "$HELPER" "$M" affinity
    expect_out "cpus $ncpu$"
}

case_stdin() {
    echo hello | "$SHOALRUN" -n 2 "$HELPER" "$M" stdin >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect_rc 0
    expect_out "^rank 0 read: 'hello'$"
    expect_out "^rank 1 read: ''$"
}

# bad_args RC REGEX ARGS...: shoalrun ARGS must exit RC saying REGEX.
bad_args() {
    local want=$1 re=$2
    shift 2
    run "$@"
    [ "$rc" -eq "$want" ] || fail "shoalrun $* exited $rc, expected $want"
    grep -E -- "$re" "$tmp/err" "$tmp/out" >/dev/null || fail "shoalrun $*: no /$re/"
}

case_bad_args() {
    local hint="Try 'shoalrun --help'"
    bad_args 2 "missing -n N" true
    bad_args 2 "$hint" true
    bad_args 2 "-n needs a value" -n
    bad_args 2 "a job needs at least 1 rank" -n 0 true
    bad_args 2 "a job needs at least 1 rank" -n -3 true
    bad_args 2 "'abc' is not a number of ranks" -n abc true
    bad_args 2 "'4x' is not a number of ranks" -np 4x true
    bad_args 2 "too many ranks \(at most 4096\)" -n 99999 true
    bad_args 2 "too many ranks" -n 99999999999999999999 true
    bad_args 2 "unknown option '--frob'" -n 2 --frob true
    bad_args 2 "no program to run" -n 2
    bad_args 2 "--timeout 'soon' is not a number of seconds" -n 1 --timeout soon true
    bad_args 2 "--timeout '0'" -n 1 --timeout 0 true
    bad_args 2 "--bind-to 'socket': expected core, none or auto" -n 1 --bind-to socket true
    bad_args 127 "^shoalrun: cannot execute '/nonexistent/x': No such file or directory$" -n 2 /nonexistent/x
    bad_args 127 "cannot execute 'no-such-program-$M': No such file or directory" -n 2 "no-such-program-$M"
    bad_args 126 "cannot execute '/etc/passwd': Permission denied" -n 2 /etc/passwd
    bad_args 126 "cannot execute '/tmp': Is a directory" -n 2 /tmp
    SHOAL_BIND_TO=sockets bad_args 2 "SHOAL_BIND_TO=sockets is not valid" -n 1 true
    bad_args 2 "--checkpoint-dir needs a value" -n 1 --checkpoint-dir
    bad_args 2 "--restart: the directory is empty" -n 1 --restart= true
    # Open MPI's --with-ft values; MPI 4.0's --initial-errhandler.
    bad_args 2 "--with-ft maybe: known are ulfm, mpi" -n 1 --with-ft maybe true
    bad_args 2 "--initial-errhandler mpi_errors_ignore: known are" -n 1 --initial-errhandler mpi_errors_ignore true
    SHOAL_FT=1 run -n 1 --with-ft no sh -c 'echo "ft=$SHOAL_FT"'
    expect_rc 0
    expect_out "^ft=0$"
    run -n 1 --with-ft true sh -c 'echo "ft=$SHOAL_FT"'
    expect_out "^ft=1$"
    run -n 1 -initial-errhandler MPI_Errors_Return sh -c 'echo "eh=$SHOAL_MPI_INITIAL_ERRHANDLER"'
    expect_rc 0
    expect_out "^eh=mpi_errors_return$"
    # The checkpoint options reach the ranks as SHOAL_CKPT_*.
    run -n 1 --restart "$tmp/ck" sh -c 'echo "$SHOAL_CKPT_DIR $SHOAL_CKPT_RESTART"'
    expect_rc 0
    expect_out "^$tmp/ck 1$"
    bad_args 0 "Exit status:" --help
    bad_args 0 "^shoalrun \(Shoal\) [0-9]" --version
    # Options end at the program: its own options are its own.
    run -n 1 -- sh -c 'echo "$0 $1"' -n --frob
    expect_rc 0
    expect_out "^-n --frob$"
    run --timeout=5 --np=2 --bind-to=none sh -c 'echo ok'
    expect_rc 0
    [ "$(grep -c '^ok$' "$tmp/out")" -eq 2 ] || fail "--opt=value forms"
}

# ---- --noise ---------------------------------------------------------------

# count_in KIND RANK LO HI: lines "rank RANK KIND-us US" of the output with
# LO <= US/1000 <= HI.
count_in() {
    awk -v k="$1-us" -v r="$2" -v lo="$3" -v hi="$4" \
        '$1 == "rank" && $2 == r && $3 == k && $4 >= lo * 1000 && $4 <= hi * 1000 { n++ }
         END { print n + 0 }' "$tmp/out"
}

# expect_stops RANK MIN: rank RANK was stopped at least MIN times for
# about 20 ms (seen by the rank: the gaps a SIGCONT came in), and no other
# rank was stopped at all.
expect_stops() {
    local n others
    n=$(count_in stopped "$1" 15 60)
    others=$(grep -c "^rank [0-9]* stopped-us" "$tmp/out")
    echo "rank $1 stopped: $(awk -v r="$1" '$2 == r && $3 == "stopped-us" { printf "%.1f ", $4 / 1000 }' "$tmp/out")ms"
    [ "$n" -ge "$2" ] || fail "rank $1 saw $n stops of 15 to 60 ms, expected at least $2"
    [ "$others" -eq "$(grep -c "^rank $1 stopped-us" "$tmp/out")" ] ||
        fail "a rank other than $1 was stopped"
}

case_noise_stop() {
    # 600 ms with a 20 ms stop every 100 ms: about 6 stops of rank 1.
    run -n 2 --noise rank=1,stop=20ms,every=100ms --noise-report "$HELPER" "$M" gaps 600
    expect_rc 0
    expect_stops 1 3
    expect_err "^shoalrun: noise: rank 1: stopped [0-9]+ times, [0-9.]+ ms in total( \(and one cut short after [0-9.]+ ms by the end\))?$"
    [ "$(grep -c noise: "$tmp/err")" -eq 1 ] || fail "a report line for a rank without noise"
    # The stop lengths shoalrun measured: 20 ms each, never less (a late
    # wake-up of shoalrun on a loaded machine lengthens a stop).
    awk '/noise: rank 1: stopped/ { per = $8 / $6; print "shoalrun: " per " ms per stop";
         exit !(per >= 19.9 && per <= 60) }' "$tmp/err" || fail "stops of the wrong length"
    # Random: as many stops on average, at unpredictable times.
    run -n 2 --noise rank=0-1,stop=10ms,every=40ms,random "$HELPER" "$M" gaps 600
    expect_rc 0
    [ "$(count_in stopped 0 7 60)" -ge 2 ] || fail "rank 0 was not stopped at random"
    [ "$(count_in stopped 1 7 60)" -ge 2 ] || fail "rank 1 was not stopped at random"
    [ -s "$tmp/err" ] && fail "a report without --noise-report or SHOAL_LOG=info"
    return 0
}

# cpu_permille ARGS...: sets permille to rank 0's share of CPU time (in
# thousandths) while it spins 300 ms.
cpu_permille() {
    run -n 1 "$@" "$HELPER" "$M" cputime 300
    expect_rc 0
    permille=$(sed -n 's/^rank 0 cpu-permille //p' "$tmp/out")
    [ -n "$permille" ] || fail "the helper printed no CPU share"
}

case_noise_busy() {
    local try base busy permille
    # One rank on the first CPU of our mask, its busy process on the same
    # CPU: they share it, about half each.  Alone the rank gets all of it,
    # unless other programs run there too (a 2-CPU machine is easily
    # loaded): then it gets a share, and with its busy process clearly less
    # than that.  So each try measures both, one right after the other, and
    # passes on the absolute numbers or, on a loaded machine, on the ratio.
    for try in 1 2 3 4; do
        cpu_permille --noise rank=0,busy
        busy=$permille
        cpu_permille
        base=$permille
        echo "try $try: rank 0 got $busy/1000 of a CPU with a busy process, $base/1000 alone"
        [ "$busy" -lt 750 ] || fail "with a busy process rank 0 still got $busy/1000 of its CPU"
        [ "$base" -gt 900 ] && break
        [ $((busy * 4)) -lt $((base * 3)) ] && { echo "(loaded machine: compared)"; break; }
    done
    [ "$base" -gt 900 ] || [ $((busy * 4)) -lt $((base * 3)) ] ||
        fail "alone rank 0 got $base/1000 of its CPU, with a busy process $busy/1000"
    # Two busy processes leave it about a third; the report says what they
    # used (SHOAL_LOG=info prints it too).
    SHOAL_LOG=info run -n 1 --noise rank=0,busy=2,duty=100 "$HELPER" "$M" cputime 300
    expect_rc 0
    expect_err "^shoalrun INFO noise: rank 0: 2 busy processes \(duty 100%\) used [0-9.]+ CPU s in [0-9.]+ s$"
    nothing_left
    # A duty cycle leaves the rank more; --bind-to none is warned about.
    run -n 1 --bind-to none --noise rank=0,busy,duty=20 --noise-report "$HELPER" "$M" cputime 200
    expect_rc 0
    expect_err "busy processes are not pinned"
    expect_err "^shoalrun: noise: rank 0: 1 busy process \(duty 20%\)"
    nothing_left
}

case_noise_sched_rr() {
    local late0 late1
    # sched=rr: rank 1 and its busy process take turns in SCHED_RR time
    # slices, so a rank 1 that sleeps 1 ms wakes only when the busy
    # process's slice is over (tens of ms; kernel.sched_rr_timeslice_ms,
    # 100 by default), while rank 0, on a CPU of its own, wakes on time.
    # The default scheduler (sched=fair) lets the woken rank in at once.
    run -n 2 --noise rank=1,busy,sched=rr --noise-report "$HELPER" "$M" sched 15
    expect_rc 0
    expect_out "^rank 1 policy rr busy rr$"
    expect_out "^rank 0 policy other busy rr$"
    expect_err "^shoalrun: noise: rank 1: 1 busy process \(duty 100%\) used [0-9.]+ CPU s in [0-9.]+ s; SCHED_RR, time slice [0-9.]+ ms$"
    late0=$(sed -n 's/^rank 0 wake-late-us //p' "$tmp/out")
    late1=$(sed -n 's/^rank 1 wake-late-us //p' "$tmp/out")
    echo "median lateness of a 1 ms sleep: rank 0 ${late0} us, rank 1 ${late1} us"
    [ "${late1:-0}" -gt 3000 ] ||
        fail "rank 1 woke ${late1} us late: its busy process did not hold the CPU for a slice"
    nothing_left
    # Both ranks, and two busy processes each (a rank may look before
    # shoalrun has started them all).
    run -n 2 --noise rank=all,busy=2,sched=rr "$HELPER" "$M" sched 3
    expect_rc 0
    expect_out "^rank 0 policy rr busy rr(,rr){0,3}$"
    expect_out "^rank 1 policy rr busy rr(,rr){0,3}$"
    nothing_left
    # A rank of the default scheduler on that CPU is warned about.
    local n=$(($(nproc) + 2))
    run -n "$n" --noise rank=1,busy,sched=rr true
    expect_rc 0
    expect_err "^shoalrun: --noise sched=rr: rank $(($(nproc) + 1)) shares its CPU with rank 1, which runs under SCHED_RR"
    nothing_left
    # Without the privilege the job does not start, and says why.
    local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups
        --inh-caps=-all prlimit --rtprio=0)
    if "${nobody[@]}" test -x "$HELPER" 2>/dev/null; then
        "${nobody[@]}" "$SHOALRUN" -n 2 --noise rank=1,busy,sched=rr \
            "$HELPER" "$M" sched 3 >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        [ "$rc" -ne 0 ] || fail "an unprivileged sched=rr job ran"
        expect_err "cannot run rank 1 under SCHED_RR: Operation not permitted \(it needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1\)"
        nothing_left
    else
        echo "(no unprivileged check: setpriv/prlimit missing or the helper is not reachable as uid 65534)"
    fi
}

case_noise_env() {
    # The same spec from SHOAL_NOISE; several specs separated by ';'.
    SHOAL_NOISE='rank=1,stop=20ms,every=100ms; rank=0,busy;' \
        run -n 2 --noise-report "$HELPER" "$M" gaps 600
    expect_rc 0
    expect_stops 1 3
    expect_err "^shoalrun: noise: rank 0: 1 busy process"
    expect_err "^shoalrun: noise: rank 1: stopped [0-9]+ times"
    # --noise replaces SHOAL_NOISE, like --bind-to replaces SHOAL_BIND_TO.
    SHOAL_NOISE='rank=0,busy' run -n 2 --noise rank=0,stop=20ms,every=100ms \
        --noise-report "$HELPER" "$M" gaps 400
    expect_rc 0
    expect_stops 0 2
    grep -q "busy process" "$tmp/err" && fail "SHOAL_NOISE was used along with --noise"
    SHOAL_NOISE='rank=0,busy;rank=5,busy' bad_args 2 \
        "^shoalrun: SHOAL_NOISE: 'rank=5,busy': rank 5 is out of range: the job has ranks 0 to 1$" \
        -n 2 true
    return 0
}

# bad_noise REGEX SPEC: --noise SPEC exits 2 saying REGEX, starting no rank.
bad_noise() {
    bad_args 2 "^shoalrun: --noise '$(printf '%s' "$2" | sed 's/[][\.*^$+?(){}|]/\\&/g')': $1" \
        -n 2 --noise "$2" sh -c 'echo started'
    grep -q started "$tmp/out" && fail "--noise '$2' started ranks"
    return 0
}

case_noise_bad_args() {
    bad_noise "unknown key 'stp' \(expected rank, stop" rank=1,stp=5ms,every=50ms
    bad_noise "stop=50ms must be shorter than every=50ms" rank=1,stop=50ms,every=50ms
    bad_noise "stop=80ms must be shorter than every=50ms" rank=1,stop=80ms,every=50ms
    bad_noise "rank 2 is out of range: the job has ranks 0 to 1" rank=2,busy
    bad_noise "rank 0-7 is out of range" rank=0-7,stop=1ms,every=5ms
    bad_noise "rank range 1-0 is empty" rank=1-0,busy
    bad_noise "rank 'x' is neither a rank number nor a range" rank=0+x,busy
    bad_noise "'rank=' has an empty value" rank=,busy
    bad_noise "missing rank=LIST" busy
    bad_noise "missing every=DURATION" rank=1,stop=5ms
    bad_noise "missing stop=DURATION" rank=1,every=5ms,random
    bad_noise "nothing to do" rank=1
    bad_noise "'stop' needs a value" rank=1,stop,every=5ms
    bad_noise "'random' takes no value" rank=1,stop=1ms,every=5ms,random=yes
    bad_noise "stop=5xs is not valid: expected a time such as 500us" rank=1,stop=5xs,every=1s
    bad_noise "every=-1s is not valid" rank=1,stop=5ms,every=-1s
    bad_noise "start=soon is not valid" rank=1,stop=5ms,every=1s,start=soon
    bad_noise "stop=5 is too short: at least 100us" rank=1,stop=5,every=1s
    bad_noise "stop=100000s is out of range" rank=1,stop=100000s,every=200000s
    bad_noise "a spec either stops ranks .* not both: give two specs" rank=1,busy,stop=1ms,every=5ms
    bad_noise "busy=0: expected a whole number from 1 to 16" rank=1,busy=0
    bad_noise "busy=two: expected a whole number" rank=1,busy=two
    bad_noise "duty=0: expected a whole number from 1 to 100" rank=1,busy,duty=0
    bad_noise "duty= needs busy" rank=1,duty=50
    bad_noise "sched= needs busy" rank=1,sched=rr
    bad_noise "sched=fifo: expected rr .* or fair" rank=1,busy,sched=fifo
    bad_noise "a spec either stops ranks" rank=1,stop=1ms,every=5ms,sched=rr
    bad_noise "'busy' given twice" rank=1,busy,busy=2
    bad_noise "empty item between commas" rank=1,,busy
    bad_noise "empty spec" ""
    # Each rank gets at most one schedule and one set of busy processes.
    bad_args 2 "^shoalrun: --noise 'rank=1-2,busy': rank 1 already has busy processes$" \
        -n 3 --noise rank=0+1,busy --noise rank=1-2,busy true
    bad_args 2 "rank 1 already has a stop schedule" \
        -n 3 --noise rank=all,stop=1ms,every=5ms --noise rank=1,stop=2ms,every=9ms true
    bad_args 2 "--noise needs a value" -n 1 --noise
    # Both kinds on one rank are fine.
    run -n 1 --noise rank=0,busy --noise rank=all,stop=1ms,every=20ms true
    expect_rc 0
    bad_args 0 "--noise SPEC" --help
    bad_args 0 "rank=R,busy\[=N\]\[,duty=PCT\]\[,sched=rr\]" --help
}

# job_procs FIELD: that /proc/PID/stat field (2: name, 3: state) of every
# process of the job, one a line.
job_procs() {
    local p
    for p in $(pgrep -f -- "$M"); do
        awk -v f="$1" '{ gsub(/[()]/, ""); print $f }' /proc/"$p"/stat 2>/dev/null
    done
}

# wait_stopped: until a process of the job is stopped (5 s).
wait_stopped() {
    local i
    for i in $(seq 250); do
        job_procs 3 | grep -q '^T$' && return 0
        sleep 0.02
    done
    fail "no rank was stopped"
}

# wait_busy N: until the job has N busy processes (5 s).  A busy process
# names itself when it first runs, which on a loaded CPU may come late.
wait_busy() {
    local i
    for i in $(seq 250); do
        [ "$(job_procs 2 | grep -c '^shoalrun-busy$')" -eq "$1" ] && return 0
        sleep 0.02
    done
    fail "expected $1 busy processes, found: $(job_procs 2)"
}

case_noise_cleanup() {
    local t0 ms
    # shoalrun SIGKILLed: the busy processes go too (parent-death signal,
    # and the watchdog kills their groups).
    start -n 2 --noise rank=0,busy --noise rank=1,busy=2 "$HELPER" "$M" sleep 60
    wait_for "^ready rank" 2 "$tmp/out"
    find_prefix
    wait_busy 3
    kill -KILL "$pid"
    finish
    nothing_left 2000
    wait_for "watchdog killed 2 ranks' process groups and the busy processes of --noise" 1 "$tmp/err"
    # --timeout while rank 1 is stopped (from 0.1 s to 1 s): it is continued
    # first, so it dies of SIGTERM at once instead of SIGKILL a second later.
    t0=$(now_ns)
    run -n 2 --timeout 0.5 --noise rank=1,stop=900ms,every=1s --noise rank=0,busy \
        "$HELPER" "$M" sleep 30
    ms=$(ms_since "$t0")
    echo "--timeout 0.5 with a stopped rank: over after $ms ms"
    expect_rc 124
    expect_err "^shoalrun: job exceeded the 0.5 s timeout; stopping 2 ranks$"
    [ "$ms" -lt 1300 ] || fail "the job took $ms ms: was the stopped rank continued?"
    find_prefix
    nothing_left
    # SIGTERM to shoalrun while a rank is stopped: the same.
    start -n 2 --noise rank=1,stop=900ms,every=1s "$HELPER" "$M" sleep 30
    wait_stopped
    t0=$(now_ns)
    kill -TERM "$pid"
    finish
    ms=$(ms_since "$t0")
    echo "SIGTERM with a stopped rank: over after $ms ms"
    [ "$ms" -lt 800 ] || fail "SIGTERM took $ms ms: was the stopped rank continued?"
    nothing_left
    # A rank that fails while another is stopped ends the job as usual.
    run -n 3 --noise rank=0+2,stop=500ms,every=600ms "$HELPER" "$M" exit-rank 1 3
    expect_rc 3
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) exited with code 3; stopping the other 2 ranks$"
    nothing_left
}

case_ft_env() {
    # Under --ft, SHOAL_FT_TIMEOUT + 2 s becomes the wires' silence
    # timeouts when they were not set (docs/FT.md): one timeout for a
    # stopped rank and a silent link.
    SHOAL_FT_TIMEOUT=3s run --ft -n 2 sh -c \
        'echo "tcp=$SHOAL_TCP_DEAD_TIMEOUT udp=$SHOAL_UDP_DEAD_TIMEOUT"'
    expect_rc 0
    [ "$(grep -c '^tcp=5000ms udp=5000ms$' "$tmp/out")" -eq 2 ] ||
        fail "want tcp=5000ms udp=5000ms on both ranks: $(cat "$tmp/out")"
    # A value the user set stays; without --ft nothing is set.
    SHOAL_TCP_DEAD_TIMEOUT=7s run --ft -n 1 sh -c \
        'echo "tcp=$SHOAL_TCP_DEAD_TIMEOUT udp=$SHOAL_UDP_DEAD_TIMEOUT"'
    expect_out '^tcp=7s udp=12000ms$'
    run -n 1 sh -c 'echo "tcp=$SHOAL_TCP_DEAD_TIMEOUT udp=$SHOAL_UDP_DEAD_TIMEOUT"'
    expect_out '^tcp= udp=$'
    SHOAL_FT_TIMEOUT=0 run --ft -n 1 sh -c \
        'echo "tcp=$SHOAL_TCP_DEAD_TIMEOUT udp=$SHOAL_UDP_DEAD_TIMEOUT"'
    expect_out '^tcp= udp=$'
    # --ft makes the ranks accuse instead of deciding alone
    # (SHOAL_FT_ACCUSE, docs/FT.md "Partitions"), unless it is set or the
    # launcher tells them nothing.
    run --ft -n 1 sh -c 'echo "accuse=$SHOAL_FT_ACCUSE"'
    expect_out '^accuse=1$'
    SHOAL_FT_ACCUSE=0 run --ft -n 1 sh -c 'echo "accuse=$SHOAL_FT_ACCUSE"'
    expect_out '^accuse=0$'
    SHOAL_FT_NOTICES=0 run --ft -n 1 sh -c 'echo "accuse=$SHOAL_FT_ACCUSE"'
    expect_out '^accuse=$'
    run -n 1 sh -c 'echo "accuse=$SHOAL_FT_ACCUSE"'
    expect_out '^accuse=$'
}

case_accuse() {
    # The launcher decides an accusation (docs/FT.md, "Partitions"):
    # rank 1 accuses rank 0; the two are in as many accusations, on one
    # host, so the higher rank, the accuser, is taken for dead and killed,
    # after the window (SHOAL_FT_TIMEOUT / 2); rank 0 goes on and ends
    # well.  Without --ft nothing happens (case_garbage).
    local t0
    t0=$(now_ns)
    SHOAL_FT_TIMEOUT=1s run --ft -n 2 "$HELPER" "$M" accuse 1 0 2
    expect_rc 0
    expect_err "^shoalrun: rank 1 and rank 0 lost each other \(a link between their hosts cut\?\); --ft: rank 1 is taken for dead, killing it$"
    expect_err "^shoalrun: rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); --ft: the job goes on without it$"
    expect_out "^rank 0 done$"
    ! grep -q "^rank 1 done" "$tmp/out" || fail "rank 1 was not killed"
    ! grep -q "rank 0 is taken for dead" "$tmp/err" || fail "rank 0 taken"
    [ "$(ms_since "$t0")" -lt 4000 ] || fail "took $(ms_since "$t0") ms"
    nothing_left
}

"case_$case_name" || exit 1
echo "PASS ($case_name)"
