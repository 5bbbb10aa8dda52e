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

fail() {
    echo "FAIL ($case_name): $*"
    for f in "$tmp"/out "$tmp"/err; do
        [ -f "$f" ] && { echo "--- $f:"; head -c 3000 "$f"; echo; }
    done
    exit 1
}

now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# run ARGS...: shoalrun with stdout/stderr captured; sets rc.
run() {
    "$SHOALRUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
expect_err() { grep -E -- "$1" "$tmp/err" >/dev/null || fail "stderr lacks /$1/"; }
expect_out() { grep -E -- "$1" "$tmp/out" >/dev/null || fail "stdout lacks /$1/"; }

find_prefix() {
    prefix=$(sed -n 's/^prefix=//p' "$tmp/out" | head -n 1)
    [ -n "$prefix" ] || fail "the helper printed no shm prefix"
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

# wait_for REGEX COUNT FILE: until FILE has COUNT matching lines (10 s).
wait_for() {
    local i=0 n
    while :; do
        # The file may not exist yet: the background job opens it.
        n=$(grep -c -E -- "$1" "$3" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        i=$((i + 1))
        [ $i -gt 500 ] && fail "timed out waiting for $2 lines /$1/ in $3"
        sleep 0.02
    done
}

# start ARGS...: shoalrun in the background (own process group, signals
# not ignored); sets pid.
start() {
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

"case_$case_name" || exit 1
echo "PASS ($case_name)"
