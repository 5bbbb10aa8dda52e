#!/bin/bash
# Runs a task program under shoalrun while faults are injected from
# outside, and checks that it still prints its success line and exits 0.
# Usage: task_faults.sh <shoalrun> <np> <mode> <expect> <program> [args...]
#   mode  none      no fault (the run itself is the test)
#         kill      SIGKILL one worker (not rank 0) at a random moment
#         killall   SIGKILL every worker but rank 0, one after another
#         coord     SIGKILL rank 0, the coordinator, at a random moment
#         coords    SIGKILL rank 0, then rank 1 (its successor) a moment
#                   after it took over
#         coordlate SIGKILL rank 0 late: once the program (task_random or
#                   task_locks, run with TASK_TEST_PROGRESS) has printed
#                   TASK_TEST_LATE (default 40) lines "ran <path>", one a
#                   run of a job that ended; then fewer jobs must run after
#                   the failover than the jobs=N the program prints, less
#                   one (the root, which prints no such line): the
#                   workers kept the others' results
#         coordkeep coordlate, and of the lock-taking jobs (task_locks'
#                   adders, /0.0[i]) fewer must run after the failover than
#                   the lockjobs=K it prints: the results of some that took
#                   locks were kept too (all K run again without that)
#         coordkeep2 coordkeep (TASK_TEST_LATE default 60: the lock jobs
#                   are done), and then rank 1, the new coordinator, killed
#                   too once TASK_TEST_LATE2 (default 20) more runs have
#                   ended after its line; the program runs with
#                   SHOAL_LOG=info.  After the second failover fewer than
#                   TASK_TEST_LOCKRUNS (default 2) lock-taking jobs that
#                   had finished before it may run again, and the lock
#                   manager rebuilt by rank 2 may replay fewer than
#                   TASK_TEST_REPLAYS (default 2) grants for
#                   versions lost: rank 1 handed its heir what only it
#                   held (its kept results, the versions of its lock
#                   record), so only what was in flight at the kill is lost
#         coordsbusy coords with every CPU busy: TASK_TEST_BUSY (default
#                   8) busy loops a CPU for the whole run (they end with
#                   it), and SHOAL_LOG=info; the run's end
#                   must reach every worker after the second failover
#                   (rank 3 never takes over: it would run the program
#                   again, a second result line) and print one result;
#                   a kill after the run's end tries again (3 runs at
#                   most).
#                   The new coordinator's rank copies each of its
#                   copies' grants to its heir; one frame a message let
#                   that grow to 10^5 messages behind a busy heir, and
#                   whatever came after (the end of the run, a page,
#                   a grant) waited behind it
#         stop      SIGSTOP one worker for 2 s, then SIGCONT
#         stoptwice SIGSTOP one worker for TASK_TEST_STOP1 ms (default 1100,
#                   past SHOAL_TASK_SUSPECT=700ms: taken for silent), then,
#                   once the coordinator says it speaks again, for
#                   TASK_TEST_STOP2 ms (default 850: past the base bound,
#                   within the doubled one); SHOAL_LOG=info.  It must be
#                   taken for silent once, not twice: a worker that came
#                   back gets twice the patience (task_coord.c), so a
#                   starved one does not flap.  A run that ended before
#                   the second stop runs again (3 runs at most)
#   (any mode) TASK_TEST_MAX_PAGE_REQS=N: SHOAL_LOG=info, and the page
#                   requests the workers handled in all may be at most N
#   (any mode) TASK_TEST_MIN_SELF_READS=N: SHOAL_LOG=info, and the
#                   workers' summaries must count at least N pages read by
#                   the children themselves from their source's memory
#   (any mode) TASK_TEST_DONE=RE: SHOAL_LOG=info, and the coordinator's
#                   summary line ("task: done: ...") must match RE
#         stopend   SIGSTOP one worker (not rank 0) early and SIGCONT it
#                   only once rank 0 has left (past the run's end and
#                   rank 0's waits, 10 s for its goodbye and 10 s for its
#                   orders to leave with SHOAL_TASK_END_WAIT=0, which this
#                   mode sets): it must
#                   not take over and run the program again, and the
#                   result is printed once
#         stopwait  SIGSTOP one worker (not rank 0) early and SIGCONT it
#                   22 s after the result was printed, past the 20 s rank
#                   0 waits for workers it hears from: rank
#                   0 must still wait for it (silent), the result printed
#                   once, no takeover
#         freeze    one worker (not rank 0) and its copies frozen in a
#                   cgroup (v2 cgroup.freeze, else the v1 freezer) for
#                   2 s and thawed: stopped without a signal, as a host's
#                   owner may do; exit 77 (skipped) without a freezer
#         slow      one worker (and the copies it runs) at 25% of a CPU
#                   for the whole run: a cgroup CPU limit (cgroup v2
#                   cpu.max, or v1 cpu.cfs_quota_us) when the harness is
#                   root, else stopped 75 ms of every 100 ms with SIGSTOP
#         copies    SIGKILL random copies (job runs) now and then
#         error     no fault, and the run must fail (exit status not 0)
#   expect  an extended regular expression the output must match
# The fault schedule's seed is SHOAL_TEST_SEED if set, else random; it is
# printed with every failure and passed on to the program.  A kill that
# landed after its victim had finalized runs the job again (3 runs at
# most), with a new seed.  Nothing of the job may be left running.
set -u
shoalrun=$1 np=$2 mode=$3 expect=$4
shift 4
seed=${SHOAL_TEST_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
# Programs that take their seed from the environment get this one too
# (TASK_TEST_SEED: SHOAL_* names are the library's): every worker sees the
# same, so every run of the root job draws alike.
export TASK_TEST_SEED=$seed
unset SHOAL_TEST_SEED
dir=$(mktemp -d)
out=$dir/out
log=$dir/faults # what the faults did: shoalrun's writes would overwrite it
: >"$log"
# Only this shell removes them.  A child bash killed by a signal between
# fork and exec (or before its first command) runs the EXIT trap it
# inherited (neither `trap - EXIT` nor a $BASHPID guard closes that
# window), which removed the files under a running check; so no child of
# this shell is ever signalled: the hang watcher ends by itself when the
# run does, and random picks are made here rather than by shuf fed from a
# process substitution (SIGPIPE).
cg= # the slow and freeze modes' cgroup
# (A cgroup left frozen is thawed first: SIGKILL waits for a v1 thaw.)
trap 'rm -rf "$dir"; [ -z "$cg" ] || { echo 0 >"$cg/cgroup.freeze";
    echo THAWED >"$cg/freezer.state"; rmdir "$cg"; } 2>/dev/null' EXIT

fail() {
    echo "FAIL ($mode, np $np, fault seed $seed): $*"
    echo "--- faults:"
    cat "$log"
    echo "--- output:"
    cat "$out"
    exit 1
}

# The rank processes of the job (children of shoalrun), as "rank pid".
ranks() {
    for p in $(pgrep -P "$run" 2>/dev/null); do
        r=$( (tr '\0' '\n' <"/proc/$p/environ") 2>/dev/null |
            sed -n 's/^PMI_RANK=//p')
        [ -n "$r" ] && echo "$r $p"
    done
}

# One line of $1 (newline-separated), chosen with this shell's RANDOM so a
# fault seed replays the same choices.
pick() {
    local -a l
    [ -n "$1" ] || return 0
    mapfile -t l <<<"$1"
    echo "${l[RANDOM % ${#l[@]}]}"
}

nap() { sleep "$(awk -v ms="$1" 'BEGIN {printf "%.3f", ms / 1000}')"; }

# stop_for VICTIM MS [NOTE]: SIGSTOP the rank of VICTIM ("rank pid") for
# MS ms, noted in the log; fails (nothing noted) when it is gone.
stop_for() {
    kill -STOP "${1#* }" 2>/dev/null || return 1
    echo "fault: stopped rank ${1% *}${3:-}" >>"$log"
    nap "$2"
    kill -CONT "${1#* }"
}

# A directory where a new cgroup gets a CPU limit ("v2 DIR" or "v1 DIR"),
# or nothing when this shell cannot make one (not root, no cpu controller).
cpu_cgroup() {
    [ "$(id -u)" = 0 ] || return 0
    local mnt fs opts rest
    while read -r _ mnt fs opts rest; do
        if [ "$fs" = cgroup2 ] &&
            grep -qw cpu "$mnt/cgroup.controllers" 2>/dev/null &&
            grep -qw cpu "$mnt/cgroup.subtree_control" 2>/dev/null; then
            echo "v2 $mnt"
            return 0
        fi
        if [ "$fs" = cgroup ] && [[ ",$opts," == *,cpu,* ]] &&
            [ -w "$mnt" ]; then
            echo "v1 $mnt"
            return 0
        fi
    done </proc/mounts
}

# A directory where a new cgroup can be frozen ("v2 DIR" or "v1 DIR"), or
# nothing when this shell cannot make one.
freezer_cgroup() {
    [ "$(id -u)" = 0 ] || return 0
    local mnt fs opts rest
    while read -r _ mnt fs opts rest; do
        if [ "$fs" = cgroup2 ] && [ -w "$mnt" ] &&
            [ -e "$mnt/cgroup.procs" ]; then
            echo "v2 $mnt"
            return 0
        fi
    done </proc/mounts
    while read -r _ mnt fs opts rest; do
        if [ "$fs" = cgroup ] && [[ ",$opts," == *,freezer,* ]] &&
            [ -w "$mnt" ]; then
            echo "v1 $mnt"
            return 0
        fi
    done </proc/mounts
}

# Every descendant of pid $1 (the worker's copies and their template).
descendants() {
    local c
    for c in $(pgrep -P "$1"); do
        echo "$c"
        descendants "$c"
    done
}

# Moves pid $1 and its children (the copies it runs now; later ones are
# forked inside) into cgroup $cg.
into_cgroup() {
    # A move was seen refused (EINVAL, ESRCH) while a rank was starting:
    # tried again for up to 2 s.
    local tries=0
    until echo "$1" >"$cg/cgroup.procs" 2>/dev/null; do
        tries=$((tries + 1))
        [ $tries -lt 20 ] || return 1
        kill -0 "$1" 2>/dev/null || return 1
        nap 100
    done
    for c in $(pgrep -P "$1"); do
        echo "$c" >"$cg/cgroup.procs" 2>/dev/null
    done
    return 0
}

if [ "$mode" = freeze ]; then
    read -r kind root <<<"$(freezer_cgroup)"
    if [ -z "${kind:-}" ]; then
        echo "SKIP: no cgroup freezer this shell may use (root, cgroup2" \
            "or the v1 freezer)"
        exit 77
    fi
fi
case $mode in coordlate | coordkeep | coordkeep2) export TASK_TEST_PROGRESS=1 ;; esac
[ "$mode" = stopend ] && export SHOAL_TASK_END_WAIT=0
case $mode in coordkeep2 | coordsbusy | stoptwice) export SHOAL_LOG=info ;; esac
[ -n "${TASK_TEST_MAX_PAGE_REQS:-}${TASK_TEST_DONE:-}${TASK_TEST_MIN_SELF_READS:-}" ] &&
    export SHOAL_LOG=info
"$shoalrun" -n "$np" --timeout 100 "$@" >"$out" 2>&1 &
run=$!
# Wait until every rank is up.
for _ in $(seq 100); do
    kill -0 "$run" 2>/dev/null || break
    [ "$(ranks | wc -l)" -ge "$np" ] && break
    nap 20
done
pids=$(ranks | awk '{print $2}')
busy=
if [ "$mode" = coordsbusy ]; then
    # Never signalled (see the trap): each ends once the run has.
    for _ in $(seq $((${TASK_TEST_BUSY:-8} * $(nproc)))); do
        run=$run sh -c 'while kill -0 "$run" 2>/dev/null; do
            i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done' &
        busy="$busy $!"
    done
fi
case $mode in
none | error) ;;
kill)
    nap $((200 + RANDOM % 800))
    victim=$(pick "$(ranks | awk '$1 != 0')")
    [ -n "$victim" ] && kill -KILL "${victim#* }" &&
        echo "fault: killed rank ${victim% *}" >>"$log"
    ;;
coord | coords | coordsbusy)
    nap $((200 + RANDOM % 600))
    victim=$(ranks | awk '$1 == 0')
    [ -n "$victim" ] && kill -KILL "${victim#* }" &&
        echo "fault: killed rank 0, the coordinator" >>"$log"
    if [ "$mode" != coord ]; then
        nap $((300 + RANDOM % 300))
        victim=$(ranks | awk '$1 == 1')
        [ -n "$victim" ] && kill -KILL "${victim#* }" &&
            echo "fault: killed rank 1, the second coordinator" >>"$log"
    fi
    ;;
coordlate | coordkeep | coordkeep2)
    late=${TASK_TEST_LATE:-40}
    [ "$mode" = coordkeep2 ] && late=${TASK_TEST_LATE:-60}
    for _ in $(seq 3000); do # 60 s
        kill -0 "$run" 2>/dev/null || break
        [ "$(grep -c '^ran /' "$out")" -ge "$late" ] && break
        nap 20
    done
    victim=$(ranks | awk '$1 == 0')
    [ -n "$victim" ] && kill -KILL "${victim#* }" &&
        echo "fault: killed rank 0, the coordinator, after" \
            "$(grep -c '^ran /' "$out") runs of jobs" >>"$log"
    if [ "$mode" = coordkeep2 ]; then
        late=${TASK_TEST_LATE2:-20}
        for _ in $(seq 3000); do # 60 s
            kill -0 "$run" 2>/dev/null || break
            [ "$(sed -n '/coordinates now/,$p' "$out" | grep -c '^ran /')" \
                -ge "$late" ] && break
            nap 20
        done
        victim=$(ranks | awk '$1 == 1')
        [ -n "$victim" ] && kill -KILL "${victim#* }" &&
            echo "fault: killed rank 1, the second coordinator, after" \
                "$(sed -n '/coordinates now/,$p' "$out" | grep -c '^ran /')" \
                "runs of jobs after its line" >>"$log"
    fi
    ;;
killall)
    for v in $(ranks | awk '$1 != 0 {print $2}'); do
        nap $((150 + RANDOM % 300))
        kill -KILL "$v" && echo "fault: killed pid $v" >>"$log"
    done
    ;;
stop)
    nap $((200 + RANDOM % 600))
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    [ -n "$victim" ] && stop_for "$victim" 2000
    ;;
stoptwice)
    nap $((200 + RANDOM % 300))
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    if [ -n "$victim" ] && stop_for "$victim" "${TASK_TEST_STOP1:-1100}"; then
        for _ in $(seq 250); do # 5 s
            kill -0 "$run" 2>/dev/null || break
            grep -q "worker ${victim% *} speaks again" "$out" && break
            nap 20
        done
        grep -q "worker ${victim% *} speaks again" "$out" &&
            stop_for "$victim" "${TASK_TEST_STOP2:-850}" " again"
    fi
    ;;
stopend)
    nap $((200 + RANDOM % 300))
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    r0=$(ranks | awk '$1 == 0 {print $2}')
    if [ -n "$victim" ] && [ -n "$r0" ] &&
        kill -STOP "${victim#* }" 2>/dev/null; then
        echo "fault: stopped rank ${victim% *} until rank 0 left" >>"$log"
        for _ in $(seq 1200); do # 60 s
            kill -0 "$r0" 2>/dev/null || break
            nap 50
        done
        kill -0 "$r0" 2>/dev/null && fail "rank 0 did not leave in 60 s"
        grep -Eq "$expect" "$out" ||
            echo "fault: the stop came before the run's end" >>"$log"
        kill -CONT "${victim#* }" 2>/dev/null
    fi
    ;;
stopwait)
    nap $((200 + RANDOM % 300))
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    r0=$(ranks | awk '$1 == 0 {print $2}')
    if [ -n "$victim" ] && [ -n "$r0" ] &&
        kill -STOP "${victim#* }" 2>/dev/null; then
        echo "fault: stopped rank ${victim% *} until 22 s after the result" >>"$log"
        for _ in $(seq 1200); do # 60 s
            grep -Eq "$expect" "$out" && break
            nap 50
        done
        grep -Eq "$expect" "$out" || fail "no result in 60 s"
        nap 22000
        kill -0 "$r0" 2>/dev/null ||
            fail "rank 0 left while a silent worker still owed its goodbye"
        kill -CONT "${victim#* }" 2>/dev/null
    fi
    ;;
freeze)
    nap $((200 + RANDOM % 600))
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    vpid=${victim#* }
    if [ -z "$victim" ]; then
        echo "fault: none, the run ended first" >>"$log"
    else
        cg=$root/shoal-task-faults-$$
        mkdir "$cg" || fail "cannot make cgroup $cg"
        [ "$kind" = v2 ] || [ -e "$cg/freezer.state" ] ||
            fail "no freezer.state in $cg"
        if into_cgroup "$vpid"; then
            for c in $(descendants "$vpid"); do
                echo "$c" >"$cg/cgroup.procs" 2>/dev/null
            done
            if [ "$kind" = v2 ]; then
                echo 1 >"$cg/cgroup.freeze"
            else
                echo FROZEN >"$cg/freezer.state"
            fi || fail "cannot freeze $cg"
            echo "fault: rank ${victim% *} frozen (cgroup $kind, $cg)" \
                >>"$log"
            nap 2000
            if [ "$kind" = v2 ]; then
                echo 0 >"$cg/cgroup.freeze"
            else
                echo THAWED >"$cg/freezer.state"
            fi || fail "cannot thaw $cg"
            echo "fault: rank ${victim% *} thawed" >>"$log"
        elif kill -0 "$vpid" 2>/dev/null; then
            fail "cannot move rank ${victim% *} into $cg"
        else
            echo "fault: none, rank ${victim% *} ended first" >>"$log"
        fi
    fi
    ;;
slow)
    victim=$(ranks | awk '$1 != 0' | head -n 1)
    vpid=${victim#* }
    read -r kind root <<<"$(cpu_cgroup)"
    if [ -z "$victim" ]; then
        echo "fault: none, the run ended first" >>"$log"
    elif [ -n "${kind:-}" ]; then
        cg=$root/shoal-task-faults-$$
        mkdir "$cg" || fail "cannot make cgroup $cg"
        if [ "$kind" = v2 ]; then
            echo "25000 100000" >"$cg/cpu.max"
        else
            echo 100000 >"$cg/cpu.cfs_period_us" &&
                echo 25000 >"$cg/cpu.cfs_quota_us"
        fi || fail "cannot set the CPU limit of $cg"
        if into_cgroup "$vpid"; then
            echo "fault: rank ${victim% *} at 25% CPU (cgroup $kind," \
                "$cg)" >>"$log"
        elif kill -0 "$vpid" 2>/dev/null; then
            fail "cannot move rank ${victim% *} into $cg"
        else
            echo "fault: none, rank ${victim% *} ended first" >>"$log"
        fi
    else
        # Not root: this shell stops the worker and its copies 75 ms of
        # every 100 ms until the run ends (its own loop: no child bash).
        echo "fault: rank ${victim% *} stopped 75 ms of every 100 ms" >>"$log"
        while kill -0 "$run" 2>/dev/null && kill -0 "$vpid" 2>/dev/null; do
            stopped="$vpid $(pgrep -P "$vpid" | tr '\n' ' ')"
            # shellcheck disable=SC2086
            kill -STOP $stopped 2>/dev/null
            sleep 0.075
            # shellcheck disable=SC2086
            kill -CONT $stopped 2>/dev/null
            sleep 0.025
        done
    fi
    ;;
copies)
    for _ in 1 2 3 4 5 6; do
        nap $((100 + RANDOM % 300))
        c=$(pick "$(for r in $(ranks | awk '{print $2}'); do pgrep -P "$r"; done)")
        [ -n "$c" ] && kill -KILL "$c" 2>/dev/null &&
            echo "fault: killed a copy" >>"$log"
    done
    ;;
*) fail "unknown mode $mode" ;;
esac
# A run that hangs: before shoalrun's timeout ends it, note where each
# rank waits (stacks with gdb when it is installed).
export -f ranks
run=$run bash -c '
    for _ in $(seq 350); do # 70 s, ending with the run
        sleep 0.2
        kill -0 "$run" 2>/dev/null || exit 0
    done
    echo "hang: after 70 s these ranks still run:"
    ranks | while read -r r p; do
        echo "rank $r pid $p $(grep State "/proc/$p/status" 2>/dev/null)" \
            "copies: $(pgrep -P "$p" | tr "\n" " ")"
        command -v gdb >/dev/null &&
            gdb -q -batch -p "$p" -ex bt 2>/dev/null | grep "^#" | head -12
    done
' >>"$log" 2>&1 &
watch=$!
wait "$run"
rc=$?
wait "$watch" # it ends by itself within 0.2 s: no signal, no stray trap
# shellcheck disable=SC2086
[ -z "$busy" ] || wait $busy # (they end by themselves too)
if [ "$mode" = error ]; then
    [ "$rc" -ne 0 ] || fail "exit status 0, expected a failure"
else
    # A kill that came after its victim had finalized (the run was
    # already over: shoalrun says so and fails the job, as it must) tested
    # nothing: the job runs again with a new schedule, 3 runs at most.
    tries=${TASK_FAULT_TRIES:-1}
    case $mode in kill | killall | coord | coords)
        if [ "$rc" -ne 0 ] && [ "$tries" -lt 3 ] &&
            grep -q "was killed by signal 9 (Killed) after finalizing" "$out" &&
            grep -Eq "$expect" "$out"; then
            echo "fault seed $seed: the kill came after its victim had" \
                "finalized; again with another schedule"
            cat "$log"
            rm -rf "$dir"
            TASK_FAULT_TRIES=$((tries + 1)) exec bash "$0" "$shoalrun" \
                "$np" "$mode" "$expect" "$@"
        fi
        ;;
    coordsbusy)
        # A kill after its victim finalized, or a result printed before
        # rank 2 took over (rank 2 then ran the program again), tested
        # nothing.
        if [ "$tries" -lt 3 ] &&
            { grep -q "was killed by signal 9 (Killed) after finalizing" \
                "$out" || [ -n "$(sed -n '/rank 2 coordinates now/q
                    /^ok: counter/p' "$out")" ]; }; then
            echo "fault seed $seed: a kill came after the run's end;" \
                "again with another schedule"
            cat "$log"
            rm -rf "$dir"
            TASK_FAULT_TRIES=$((tries + 1)) exec bash "$0" "$shoalrun" \
                "$np" "$mode" "$expect" "$@"
        fi
        ;;
    stoptwice)
        # The run ended before the second stop: it tested nothing.
        if [ "$tries" -lt 3 ] && ! grep -q "stopped rank [0-9]* again" "$log"; then
            echo "fault seed $seed: the run ended before the second stop;" \
                "again with another schedule"
            cat "$log"
            rm -rf "$dir"
            TASK_FAULT_TRIES=$((tries + 1)) exec bash "$0" "$shoalrun" \
                "$np" "$mode" "$expect" "$@"
        fi
        ;;
    coordkeep2)
        # Rank 1 killed once its run had printed the result (the second
        # kill came too late: rank 2 ran the program again after its end)
        # tested nothing either.
        if [ "$tries" -lt 3 ] && [ -n "$(sed -n '/coordinates now/,$p' "$out" |
            sed -n '/rank 2 coordinates now/q; /^ok: counter/p')" ]; then
            echo "fault seed $seed: rank 1 was killed after the run's" \
                "end; again with another schedule"
            cat "$log"
            rm -rf "$dir"
            TASK_FAULT_TRIES=$((tries + 1)) exec bash "$0" "$shoalrun" \
                "$np" "$mode" "$expect" "$@"
        fi
        ;;
    esac
    [ "$rc" -eq 0 ] || fail "exit status $rc"
fi
grep -Eq "$expect" "$out" || fail "no line matching '$expect'"
if [ "$mode" = coordlate ] || [ "$mode" = coordkeep ] ||
    [ "$mode" = coordkeep2 ]; then
    # Runs of jobs after the new coordinator's line, against the jobs of
    # the run (its root, which prints nothing, included in jobs=).
    grep -q "coordinates now" "$out" || fail "no failover"
    jobs=$(sed -n 's/^ok.* jobs=\([0-9]*\).*/\1/p' "$out" | head -n 1)
    [ -n "$jobs" ] || fail "no jobs=N in the program's line"
    after=$(sed -n '/coordinates now/,$p' "$out" | grep -c '^ran /')
    echo "after the failover: $after runs of the $((jobs - 1)) jobs" \
        "below the root" >>"$log"
    [ "$after" -lt $((jobs - 1)) ] ||
        fail "$after runs after the failover: the work done before it was" \
            "not kept"
fi
if [ "$mode" = stopend ] || [ "$mode" = stopwait ]; then
    # Woken after rank 0 left, it must see that the run was over (rank
    # 0's mark), not take over and start the program again.
    ! grep -q "coordinates now" "$out" ||
        fail "the worker stopped across the end took over after it"
    n=$(grep -Ec "$expect" "$out")
    [ "$n" -eq 1 ] || fail "$n result lines"
fi
if [ "$mode" = coordsbusy ]; then
    # Rank 2 lives to the end: rank 3 coordinates only when it took rank
    # 2's exit for its death, never told the run was over.
    ! grep -q "rank 3 coordinates now" "$out" ||
        fail "rank 3 took over after the run's end: the end did not" \
            "reach it"
    n=$(grep -Ec "$expect" "$out")
    [ "$n" -eq 1 ] || fail "$n result lines: the program ran again"
fi
if [ "$mode" = stoptwice ]; then
    v=$(sed -n 's/^fault: stopped rank \([0-9]*\) again$/\1/p' "$log")
    [ -n "$v" ] || fail "the run ended before the second stop, 3 times"
    n=$(grep -c "worker $v is silent" "$out")
    [ "$n" -eq 1 ] || fail "worker $v taken for silent $n times, not once:" \
        "a worker that came back was not given more patience"
    grep -q "worker $v speaks again: it joins anew, taken for silent next after 1400 ms" "$out" ||
        fail "no doubled bound for worker $v"
fi
if [ -n "${TASK_TEST_DONE:-}" ]; then
    grep -Eq "task: done: .*$TASK_TEST_DONE" "$out" ||
        fail "the coordinator's summary does not match '$TASK_TEST_DONE':" \
            "$(grep -o 'task: done: .*' "$out")"
fi
if [ -n "${TASK_TEST_MIN_SELF_READS:-}" ]; then
    own=$(sed -n 's/.* pages read from waiting parents (\([0-9]*\) by the children themselves).*/\1/p' \
        "$out" | awk '{n += $1} END {print n + 0}')
    echo "pages the children read themselves: $own (at least $TASK_TEST_MIN_SELF_READS)" >>"$log"
    [ "$own" -ge "$TASK_TEST_MIN_SELF_READS" ] ||
        fail "$own pages read by the children themselves, fewer than" \
            "$TASK_TEST_MIN_SELF_READS: the pages went through the workers"
fi
if [ -n "${TASK_TEST_MAX_PAGE_REQS:-}" ]; then
    # Page requests the workers handled (a copy's own, and misses passed
    # up by a waiting parent): a miss that climbed the whole tree for
    # every level of a chain made them grow with the depth squared.
    read -r nsum reqs < <(sed -n 's/.* \([0-9]*\) page requests of copies, \([0-9]*\) passed up;.*/\1 \2/p' \
        "$out" | awk '{n += $1 + $2; r++} END {print r + 0, n + 0}')
    [ "$nsum" -eq "$np" ] || fail "$nsum worker summaries, want $np"
    echo "page requests handled: $reqs (at most $TASK_TEST_MAX_PAGE_REQS)" >>"$log"
    [ "$reqs" -le "$TASK_TEST_MAX_PAGE_REQS" ] ||
        fail "$reqs page requests handled, more than $TASK_TEST_MAX_PAGE_REQS:" \
            "misses climb the tree again and again"
fi
if [ "$mode" = coordkeep ]; then
    lockjobs=$(sed -n 's/^ok.* lockjobs=\([0-9]*\).*/\1/p' "$out" | head -n 1)
    [ -n "$lockjobs" ] || fail "no lockjobs=K in the program's line"
    lafter=$(sed -n '/coordinates now/,$p' "$out" | grep -c '^ran /0\.0\[')
    echo "after the failover: $lafter runs of the $lockjobs jobs that take" \
        "locks" >>"$log"
    [ "$lafter" -lt "$lockjobs" ] ||
        fail "$lafter runs of lock-taking jobs after the failover: none" \
            "of their results was kept"
fi
if [ "$mode" = coordkeep2 ]; then
    # After the second failover (rank 2's line): lock-taking jobs that
    # had finished before it and run again, and grants replayed to make
    # versions no survivor had.
    grep -q "rank 2 coordinates now" "$out" || fail "no second failover"
    again=$(awk '/rank 2 coordinates now/ {after = 1; next}
        /^ran \/0\.0\[/ { if (!after) done[$2] = 1; else if ($2 in done) n++ }
        END {print n + 0}' "$out")
    replays=$(sed -n '/rank 2 coordinates now/,$p' "$out" |
        sed -n 's/.*lock manager rebuilt from .* grants, \([0-9]*\) of them.*/\1/p' |
        head -n 1)
    [ -n "$replays" ] || fail "no lock manager rebuilt after the second failover"
    echo "after the second failover: $again runs of lock-taking jobs that" \
        "had finished before it, $replays grants to replay" >>"$log"
    [ "$again" -lt "${TASK_TEST_LOCKRUNS:-2}" ] ||
        fail "$again lock-taking jobs that had finished ran again after" \
            "the second failover: the results rank 1 held were lost"
    [ "$replays" -lt "${TASK_TEST_REPLAYS:-2}" ] ||
        fail "$replays grants to replay after the second failover: the" \
            "versions only rank 1 held were lost"
fi
sleep 0.2
for p in $pids; do
    kill -0 "$p" 2>/dev/null && fail "rank process $p is left"
    [ -z "$(pgrep -P "$p")" ] || fail "copies of process $p are left"
done
grep -E "$expect" "$out"
cat "$log"
echo "ok ($mode, np $np, fault seed $seed)"
