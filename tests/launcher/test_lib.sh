# Helpers shared by the launcher's test scripts (launcher_test.sh and
# ../multihost/multihost_test.sh), sourced after they set case_name and
# tmp (holding the out and err files of the last shoalrun).

fail() {
    echo "FAIL ($case_name): $*"
    for f in "$tmp"/out "$tmp"/err; do
        [ -f "$f" ] && { echo "--- $f:"; head -c 3000 "$f"; echo; }
    done
    exit 1
}

# Wall-clock nanoseconds (the helper programs print CLOCK_REALTIME stamps
# that some cases compare with it).  These run in $(...), where fail would
# end only the subshell: on a clock that is not a number they say so on
# stderr and print nothing, so the caller's `[ "" -lt N ] || fail` fails.
now_ns() {
    local t
    t=$(date +%s%N)
    case $t in '' | *[!0-9]*)
        echo "now_ns: no usable clock (date +%s%N said '$t')" >&2; return 1 ;;
    esac
    echo "$t"
}
ms_since() {
    local now
    now=$(now_ns) || return 1
    case $1 in '' | *[!0-9]*)
        echo "ms_since: '$1' is not a time" >&2; return 1 ;;
    esac
    echo $(((now - $1) / 1000000))
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
expect_err() { grep -E -- "$1" "$tmp/err" >/dev/null || fail "stderr lacks /$1/"; }
expect_out() { grep -E -- "$1" "$tmp/out" >/dev/null || fail "stdout lacks /$1/"; }

find_prefix() {
    prefix=$(sed -n 's/^prefix=//p' "$tmp/out" | head -n 1)
    [ -n "$prefix" ] || fail "the helper printed no shm prefix"
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
