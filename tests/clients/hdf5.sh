#!/usr/bin/env bash
# Parallel HDF5, a real MPI-IO client, built from its Debian (bookworm)
# source package against Shoal, and its testpar suite run at 4 ranks
# (docs/IO.md, "Real clients"):
#   1. apt-get source hdf5 (once, into WORK_DIR/src);
#   2. configure with Shoal's mpicc, --enable-parallel, C only and static
#      (no Fortran, C++, Java, high-level library or tools: testpar needs
#      none of them, and they would double the build time), then build the
#      library (src/) and the test library testpar links (test/libh5test);
#   3. testpar, through HDF5's own make rules (<program>.chkexe_, which run
#      each program under RUNEXEC = Shoal's mpiexec -n 4 and keep its log),
#      program by program so that every result is reported.
# Prints a summary; exits nonzero when a test fails.
#
# Which testpar programs run is HDF5_TESTPAR (default below); docs/IO.md
# says why t_cache_image is left out of CI's run.  HDF5_TESTPAR=all runs
# every program of testpar/Makefile.am.  HDF5_QUICK (below) lists those run
# at HDF5's default express level instead of in full.
#
# usage: tests/clients/hdf5.sh SHOAL_BUILD_DIR [WORK_DIR]   (make check-clients)
CLIENT=hdf5
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# testpar/Makefile.am: TEST_PROG_PARA, then the script testpflush.sh (which
# runs t_pflush1, which exits without closing its file on purpose, and
# t_pflush2, which checks what was flushed).
ALL_TESTPAR="t_mpi t_bigio testphdf5 t_cache t_cache_image t_pread t_pshutdown t_prestart
             t_init_term t_shapesame t_filters_parallel testpflush.sh"
DEFAULT_TESTPAR="t_mpi t_bigio testphdf5 t_cache t_pread t_pshutdown t_prestart
                 t_init_term t_shapesame t_filters_parallel testpflush.sh"
# HDF5's tests skip their long parts at its default express level (3).
# Every program here runs in full (HDF5TestExpress=0: t_bigio's large
# transfers, all 1224 of t_shapesame's subtests) except those listed in
# HDF5_QUICK (default t_cache: 232 s in full, 11 s at the default level).
HDF5_QUICK=${HDF5_QUICK-t_cache}
case ${HDF5_TESTPAR:-} in
'') TESTPAR=$DEFAULT_TESTPAR ;;
all) TESTPAR=$ALL_TESTPAR ;;
*) TESTPAR=$HDF5_TESTPAR ;;
esac

fetch_source hdf5
B=$WORK/hdf5
rm -rf "$B"
mkdir -p "$B/build"
LOGS=$B

configure_hdf5() {
    # HDF5's configure takes RUNPARALLEL as a make fragment: $$ is one $.
    (cd "$B/build" && "$SRC/configure" CC="$MPICC" --enable-parallel \
        --disable-fortran --disable-cxx --disable-java --disable-hl --disable-tools \
        --disable-shared --enable-static \
        RUNPARALLEL="$MPIEXEC --timeout $PROG_TIMEOUT -n \$\${NPROCS:=$NP}") \
        >"$LOGS/configure.log" 2>&1 || { tail -n 30 "$LOGS/configure.log"; return 1; }
    grep -q '^ *Parallel HDF5: yes' "$B/build/src/libhdf5.settings" ||
        { echo "configure did not enable parallel HDF5:"; cat "$B/build/src/libhdf5.settings"; return 1; }
}

build_hdf5() {
    { make -C "$B/build/src" -j "$JOBS" &&
        make -C "$B/build/test" -j "$JOBS" libh5test.la &&
        make -C "$B/build/testpar" -j "$JOBS" \
            $(for t in $TESTPAR; do [[ $t == testpflush.sh ]] && echo t_pflush1 t_pflush2 || echo "$t"; done)
    } >"$LOGS/build.log" 2>&1 || { tail -n 40 "$LOGS/build.log"; return 1; }
}

PASSED=() FAILED=()
run_testpar() {
    local t start rc
    for t in $TESTPAR; do
        start=$SECONDS rc=0
        if [[ " $HDF5_QUICK " == *" $t "* ]]; then
            unset HDF5TestExpress
        else
            export HDF5TestExpress=0
        fi
        if [[ $t == *.sh ]]; then
            NPROCS=$NP make -C "$B/build/testpar" "$t.chkexe_" >"$LOGS/testpar-$t.log" 2>&1 || rc=$?
        else
            NPROCS=$NP make -C "$B/build/testpar" "$t.chkexe_" \
                RUNEXEC="$MPIEXEC --timeout $PROG_TIMEOUT -n $NP" >"$LOGS/testpar-$t.log" 2>&1 || rc=$?
        fi
        if [[ $rc -eq 0 ]]; then
            PASSED+=("$t ($((SECONDS - start)) s, $([[ ${HDF5TestExpress:-} == 0 ]] && echo full || echo "HDF5's default express level"))")
            say "testpar $t: passed in $((SECONDS - start)) s"
        else
            FAILED+=("$t")
            say "testpar $t: FAILED (exit $rc) after $((SECONDS - start)) s; the end of its log:"
            tail -n 40 "$LOGS/testpar-$t.log" | sed 's/^/    /'
        fi
    done
    [[ ${#FAILED[@]} -eq 0 ]]
}

status=0
say "building with $MPICC (shoalcc), ranks started by $MPIEXEC (shoalrun) -n $NP"
timed "configure" configure_hdf5 || status=1
[[ $status -eq 0 ]] && { timed "make -j$JOBS (src, test lib, testpar)" build_hdf5 || status=1; }
if [[ $status -eq 0 ]]; then
    check_linked "$B/build/testpar/t_mpi"
    timed "testpar ($NP ranks)" run_testpar || status=1
fi

echo
echo "=== parallel HDF5 $SRC_VERSION on Shoal: summary"
print_phases
echo "    testpar at $NP ranks: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
[[ ${#PASSED[@]} -gt 0 ]] && printf '      passed: %s\n' "${PASSED[@]}"
[[ ${#FAILED[@]} -gt 0 ]] && printf '      FAILED: %s\n' "${FAILED[@]}"
for t in $ALL_TESTPAR; do
    [[ " $(echo $TESTPAR) " == *" $t "* ]] || echo "      not run: $t (HDF5_TESTPAR=all runs it; docs/IO.md says why it is left out)"
done
echo "    logs: $LOGS/*.log"
if [[ $status -eq 0 ]]; then
    echo "PASSED: parallel HDF5 $SRC_VERSION (testpar at $NP ranks)"
else
    echo "FAILED: parallel HDF5 $SRC_VERSION (details above and in $LOGS)"
fi
exit "$status"
