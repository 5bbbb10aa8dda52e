#!/usr/bin/env bash
# PnetCDF, a real MPI-IO client, built from its Debian (bookworm) source
# package against Shoal, and its own test suite run (docs/IO.md, "Real
# clients"):
#   1. apt-get source pnetcdf (once, into WORK_DIR/src);
#   2. autoreconf (the package ships no configure), configure with Shoal's
#      mpicc, C only (--disable-fortran --disable-cxx: Shoal has no Fortran
#      or C++ bindings), make;
#   3. make check: the sequential tests (one rank each);
#   4. make ptest: the parallel tests, each program at 4 ranks under Shoal's
#      mpiexec (shoalrun), every output file checked by ncvalidator.
# Prints a summary; exits nonzero when a test fails.
#
# usage: tests/clients/pnetcdf.sh SHOAL_BUILD_DIR [WORK_DIR]   (make check-clients)
CLIENT=pnetcdf
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fetch_source pnetcdf
B=$WORK/pnetcdf
rm -rf "$B"
mkdir -p "$B/build" "$B/out"
LOGS=$B

configure_pnetcdf() {
    if [[ ! -f $SRC/configure ]]; then
        (cd "$SRC" && autoreconf -fi) >"$LOGS/autoreconf.log" 2>&1 ||
            { tail -n 20 "$LOGS/autoreconf.log"; return 1; }
    fi
    (cd "$B/build" && "$SRC/configure" MPICC="$MPICC" --disable-fortran --disable-cxx \
        TESTMPIRUN="$MPIEXEC --timeout $PROG_TIMEOUT -n NP" TESTOUTDIR="$B/out") \
        >"$LOGS/configure.log" 2>&1 || { tail -n 30 "$LOGS/configure.log"; return 1; }
}

build_pnetcdf() {
    make -C "$B/build" -j "$JOBS" >"$LOGS/build.log" 2>&1 || { tail -n 40 "$LOGS/build.log"; return 1; }
}

# automake's test driver prints PASS:/FAIL:/XFAIL:/... per test script.
run_check() {
    local rc=0
    make -C "$B/build" -k -j "$JOBS" check >"$LOGS/check.log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        grep -E '^(FAIL|ERROR|XPASS):' "$LOGS/check.log" || true
        find "$B/build" -name test-suite.log -exec grep -l '^# FAIL: *[1-9]\|^# ERROR: *[1-9]' {} + |
            while read -r f; do echo "--- $f"; tail -n 40 "$f"; done
    fi
    return "$rc"
}

# ptest: each directory's parallel_run.sh stops at its first failing program.
run_ptest() {
    local rc=0
    make -C "$B/build" ptest >"$LOGS/ptest.log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        grep -inE 'fail|error|abort|signal|timed out' "$LOGS/ptest.log" | head -n 40 || true
        tail -n 30 "$LOGS/ptest.log"
    fi
    return "$rc"
}

count() { grep -Ec -e "$1" "$2" || true; }

status=0
say "building with $MPICC (shoalcc), ranks started by $MPIEXEC (shoalrun) -n $NP"
timed "autoreconf + configure" configure_pnetcdf || status=1
[[ $status -eq 0 ]] && { timed "make -j$JOBS" build_pnetcdf || status=1; }
check_rc=skipped ptest_rc=skipped
if [[ $status -eq 0 ]]; then
    check_linked "$B/build/src/utils/ncmpidump/ncmpidump"
    say "make check (sequential tests)"
    check_rc=0; timed "make check" run_check || { check_rc=$?; status=1; }
    say "make ptest (parallel tests, $NP ranks)"
    ptest_rc=0; timed "make ptest ($NP ranks)" run_ptest || { ptest_rc=$?; status=1; }
fi

echo
echo "=== PnetCDF $SRC_VERSION on Shoal: summary"
print_phases
if [[ $check_rc != skipped ]]; then
    printf '    make check: %s PASS, %s XFAIL (expected failures of the suite itself), %s FAIL, %s ERROR, %s SKIP\n' \
        "$(count '^PASS:' "$LOGS/check.log")" "$(count '^XFAIL:' "$LOGS/check.log")" \
        "$(count '^FAIL:' "$LOGS/check.log")" "$(count '^ERROR:' "$LOGS/check.log")" \
        "$(count '^SKIP:' "$LOGS/check.log")"
    printf '    make ptest: %s programs passed, %s skipped by the suite, %s failed\n' \
        "$(count '------ pass|^PASS: ' "$LOGS/ptest.log")" \
        "$(count '------ skip' "$LOGS/ptest.log")" \
        "$(count '------ fail|^FAIL: ' "$LOGS/ptest.log")"
fi
echo "    logs: $LOGS/*.log"
if [[ $status -eq 0 ]]; then
    echo "PASSED: PnetCDF $SRC_VERSION (make check, make ptest at $NP ranks)"
else
    echo "FAILED: PnetCDF $SRC_VERSION (details above and in $LOGS)"
fi
exit "$status"
