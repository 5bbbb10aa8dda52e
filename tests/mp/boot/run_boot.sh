#!/bin/sh
# Run mp_boot_kvs (and the MPI program launch_check) under another
# launcher, alone, or where boot must refuse.
#   run_boot.sh MODE PROGRAM [MPI_PROGRAM [ARG...]]
# MODE: hydra | hydra-port | hydra-pmi2 | hydra-pmi2-port | hydra-mpi |
#       hydra-ft (MPI_PROGRAM: mpi_ft_jacobi, then mpi_ft_ulfm) |
#       ompi | ompi-mpi | slurm-pmi2 | slurm-pmix | slurm-mpi | slurm-none |
#       slurm-ft-pmi2 | slurm-ft-pmix | ompi-ft (MPI_PROGRAM:
#       mpi_ft_jacobi, then mpi_ft_ulfm) |
#       single | refuse-slurm | refuse-pmix | refuse-nolib | refuse-pmi1 |
#       run-hydra-pmi2 | run-ompi | run-slurm-pmi2 | run-slurm-pmix
# The run-* modes run MPI_PROGRAM (any test program, MPI or active
# messages) with the ARGs at 4 ranks under that launcher; it must exit 0.
# The slurm-* modes use the cluster of tests/slurm/slurm-up.sh in
# $SHOAL_SLURM_DIR and skip when it is not up.
# Exit 0: passed; 77: skipped (with the reason); anything else: failed.
set -u
mode=$1
prog=$2
mpiprog=${3:-}
shift $(($# < 3 ? $# : 3))
progargs="$*" # (test arguments have no spaces)
slurm_dir=${SHOAL_SLURM_DIR:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Start from an environment with no launcher in it, whatever ran the tests.
for v in $(env | sed -n 's/^\(PMIX*_[A-Za-z0-9_]*\)=.*/\1/p;s/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p;s/^\(MPI_LOCAL[A-Z]*\)=.*/\1/p'); do
    unset "$v"
done
unset SHOAL_BOOT
# Under ASan, libpmix's own leaks are not ours (lsan-pmix.supp); every
# launcher passes the environment on to the ranks.
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan-pmix.supp:print_suppressions=0"
export LSAN_OPTIONS
# Open MPI as root, and past 2 ranks on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

fail() {
    echo "FAIL: $*"
    echo "--- output:"
    cat "$out"
    exit 1
}

# expect_refusal TEXT ENV...: the program must fail and say TEXT.
expect_refusal() {
    text=$1
    shift
    if env "$@" timeout 30 "$prog" >"$out" 2>&1; then
        fail "started although $* should be refused"
    fi
    grep -F -- "$text" "$out" >/dev/null || fail "message lacks '$text'"
    echo "refused as expected:"
}

need_mpich() {
    if ! command -v mpiexec.mpich >/dev/null 2>&1; then
        echo "SKIP: mpiexec.mpich not found (install the Debian package mpich)"
        exit 77
    fi
}

need_ompi() {
    if ! command -v mpirun.openmpi >/dev/null 2>&1; then
        echo "SKIP: mpirun.openmpi not found (install the Debian package openmpi-bin)"
        exit 77
    fi
}

need_slurm() {
    if [ -z "$slurm_dir" ] || [ ! -f "$slurm_dir/up" ]; then
        echo "SKIP: no test Slurm cluster is up (tests/slurm/slurm-up.sh" \
            "skipped or failed: see the test slurm.up)"
        exit 77
    fi
    SLURM_CONF=$slurm_dir/slurm.conf
    export SLURM_CONF
}

# run_kvs NP BACKEND LAUNCHER...: mp_boot_kvs must succeed at NP ranks.
run_kvs() {
    np=$1
    backend=$2
    shift 2
    timeout 60 "$@" "$prog" --backend "$backend" --size "$np" >"$out" 2>&1 ||
        fail "$* (mp_boot_kvs) exited with $?"
    grep "boot kvs ok: $np ranks via $backend" "$out" >/dev/null ||
        fail "no success line from $*"
    cat "$out"
}

# run_mpi NP LAUNCHER...: launch_check must succeed at NP ranks.
run_mpi() {
    np=$1
    shift
    [ -n "$mpiprog" ] || fail "mode $mode needs MPI_PROGRAM"
    timeout 60 "$@" "$mpiprog" "$np" >"$out" 2>&1 ||
        fail "$* (launch_check) exited with $?"
    grep "launch_check ok: $np ranks" "$out" >/dev/null ||
        fail "no success line from $*"
    cat "$out"
}

# run_any LAUNCHER...: MPI_PROGRAM must exit 0.
run_any() {
    [ -n "$mpiprog" ] || fail "mode $mode needs MPI_PROGRAM"
    # shellcheck disable=SC2086 # progargs: words on purpose
    timeout 60 "$@" "$mpiprog" $progargs >"$out" 2>&1 ||
        fail "$* $(basename "$mpiprog") $progargs exited with $?"
}

# run_ft VICTIMS TEXT MPIEXEC_ARG...: under SHOAL_FT, mpiexec.mpich
# -disable-auto-cleanup -print-all-exitcodes must say TEXT, and every rank
# must have exited with 0 but the VICTIMS ("2", "0 3", "": none), whose guardians
# exit with 128 + SIGKILL (raw wait status 35072).  Hydra stores 1
# instead when its proxy reaps the guardian before it sees the rank's PMI
# socket close: taken too.  A signal (9) means the proxy killed the rank.
run_ft() {
    victims=" $1 "
    text=$2
    shift 2
    SHOAL_FT=1 timeout 60 mpiexec.mpich -disable-auto-cleanup \
        -print-all-exitcodes "$@" >"$out" 2>&1
    got=$?
    if [ "$victims" = "  " ]; then
        [ "$got" -eq 0 ] || fail "mpiexec $* exited with $got"
    else
        [ "$got" -ne 0 ] || fail "mpiexec $* exited with 0 although ranks died"
    fi
    grep -F -- "$text" "$out" >/dev/null || fail "no '$text' from $*"
    codes=$(sed -n 's/.*Exit codes: \[[^]]*\] //p' "$out")
    [ -n "$codes" ] || fail "no exit codes from mpiexec $*"
    r=0
    for c in $(echo "$codes" | tr ',' ' '); do
        case $victims in
        *" $r "*) [ "$c" = 35072 ] || [ "$c" = 1 ] ||
            fail "victim rank $r: wait status $c (want 35072: exit 137)" ;;
        *) [ "$c" = 0 ] || fail "survivor rank $r: wait status $c" ;;
        esac
        r=$((r + 1))
    done
    cat "$out"
}

# srun, bounded: never pend when the cluster cannot run the tasks.
srun_n() {
    echo "srun --immediate=20 --overcommit -n $1"
}

# expand_tasks "0-2,5": "0 1 2 5" (srun's task lists).
expand_tasks() {
    for part in $(echo "$1" | tr ',' ' '); do
        case $part in
        *-*) seq "${part%-*}" "${part#*-}" ;;
        *) echo "$part" ;;
        esac
    done | sort -n | tr '\n' ' '
}

# run_srun_ft VICTIMS TEXT SRUN_ARG...: under SHOAL_FT, srun must print
# TEXT, and report exactly the VICTIMS ("3", "0 3", "": none) as failed
# tasks, each "Killed" (the guardian leaves by the rank's signal); every
# other task exited with 0.  srun's status is the worst task's: 137 with
# a victim, else 0.
run_srun_ft() {
    victims=$1
    text=$2
    shift 2
    SHOAL_FT=1 timeout 90 "$@" >"$out" 2>&1
    got=$?
    if [ -z "$victims" ]; then
        [ "$got" -eq 0 ] || fail "$* exited with $got"
    else
        [ "$got" -eq 137 ] || fail "$* exited with $got, want 137 (a task killed)"
    fi
    grep -F -- "$text" "$out" >/dev/null || fail "no '$text' from $*"
    lines=$(grep -E '^srun: error: [^:]+: tasks? [0-9,-]+: ' "$out")
    if [ -n "$lines" ]; then
        echo "$lines" | grep -v ': Killed$' >/dev/null &&
            fail "a task failed otherwise than killed"
        failed=$(expand_tasks "$(echo "$lines" |
            sed -E 's/^srun: error: [^:]+: tasks? ([0-9,-]+): .*/\1/' |
            tr '\n' ',' | sed 's/,$//')")
    else
        failed=""
    fi
    want=$(expand_tasks "$(echo "$victims" | tr ' ' ',')")
    [ "$failed" = "$want" ] ||
        fail "srun reports tasks '$failed' failed, want '$want'"
    cat "$out"
}

# slurm_ft MPI: docs/FT.md, "Under Slurm and PMIx launchers": with
# srun --mpi=MPI under SHOAL_FT, a rank killed with SIGKILL (the others
# are told by their pidfds), one that nobody talked to on another pretend
# host (in-band notices), one alone on its pretend host (the ring), a
# pretend host's ranks all at once (the ring at each rank's offset), a rank
# stopped past SHOAL_FT_TIMEOUT (its guardian kills it) and one stopped
# for less (nobody killed): every survivor gets MPIX_ERR_PROC_FAILED,
# shrinks and finishes with 0.
slurm_ft() {
    mpi=$1
    [ -x "$mpiprog" ] || fail "mode $mode needs MPI_PROGRAM (mpi_ft_jacobi)"
    ftprog=$progargs # mpi_ft_ulfm
    [ -x "$ftprog" ] || fail "mode $mode needs mpi_ft_ulfm after MPI_PROGRAM"
    run_srun_ft 3 "OK ft allreduce: survivors agree" \
        $(srun_n 4) --mpi="$mpi" "$ftprog" allreduce
    # A rank that exits with 3 before MPI_Finalize fails as a killed one
    # does; its guardian leaves with the same code, which srun reports.
    FT_DIE=exit SHOAL_FT=1 timeout 90 $(srun_n 4) --mpi="$mpi" "$ftprog" \
        allreduce >"$out" 2>&1
    got=$?
    [ "$got" -eq 3 ] || fail "FT_DIE=exit: srun exited with $got, want 3"
    grep -F "OK ft allreduce: survivors agree" "$out" >/dev/null ||
        fail "FT_DIE=exit: the survivors did not finish"
    [ "$(grep -cE '^srun: error: [^:]+: tasks? [0-9,-]+: ' "$out")" -eq 1 ] &&
        grep -E '^srun: error: [^:]+: task 3: Exited with exit code 3$' \
            "$out" >/dev/null ||
        fail "FT_DIE=exit: srun does not report task 3's exit code 3 alone"
    # The step goes on after the death (under --mpi=pmix Slurm's plugin
    # ends it when a PMIx client is lost: the guardian holds the
    # connection and finalizes it).
    run_srun_ft 3 "OK ft outlive: survivors agree" \
        $(srun_n 4) --mpi="$mpi" "$ftprog" outlive 3 3000
    # 2 pretend hosts x 4: ranks 0-3 watch no process of 4-7; rank 1
    # watches rank 5 through the ring, ranks 0, 2 and 3 have no connection
    # to it and learn of its death from a notice.
    run_srun_ft 5 "OK ft recvdead: survivors agree" \
        env SHOAL_WIRES_FAKE_HOSTS=2 SHOAL_WIRES=shm,tcp \
        $(srun_n 8) --mpi="$mpi" "$ftprog" recvdead 5
    [ "$(grep -c "recvdead: rank [0-46-7] knew" "$out")" -eq 7 ] ||
        fail "not every survivor knew of rank 5's death"
    [ "$(grep -cE "shoal\[[023]\] WARN am: rank 5 failed: rank [0-46-7] says so" \
        "$out")" -eq 3 ] ||
        fail "ranks 0, 2 and 3 were not told of rank 5's death by another rank"
    # Each rank alone on its pretend host: rank 1 watches rank 2 by the
    # ring's connection, over TCP and over the datagram wire.
    for w in shm,tcp shm,udp; do
        run_srun_ft 2 "OK ft recvdead: survivors agree" \
            env SHOAL_WIRES_FAKE_HOSTS=4 SHOAL_WIRES=$w \
            $(srun_n 4) --mpi="$mpi" "$ftprog" recvdead 2
        [ "$(grep -c "recvdead: rank [013] knew" "$out")" -eq 3 ] ||
            fail "$w: not every survivor knew of rank 2's death"
    done
    # A pretend host's 4 ranks die at once, nobody having talked to them:
    # rank k of the first host watches rank 4 + k through the ring.
    run_srun_ft "4 5 6 7" "OK ft hostdie: survivors agree" \
        env SHOAL_WIRES_FAKE_HOSTS=2 SHOAL_WIRES=shm,udp \
        $(srun_n 8) --mpi="$mpi" "$ftprog" hostdie 4
    [ "$(grep -c "hostdie: rank [0-3] knew of ranks 4-7" "$out")" -eq 4 ] ||
        fail "not every survivor knew of the deaths of ranks 4-7"
    # SHOAL_FT_TIMEOUT, kept by the rank's guardian.
    run_srun_ft 3 "stop: taken for dead after" env SHOAL_FT_TIMEOUT=600ms \
        $(srun_n 4) --mpi="$mpi" "$ftprog" stop 3 2000 1 600
    grep -F "rank 3 (pid" "$out" | grep -F "past SHOAL_FT_TIMEOUT" \
        >/dev/null || fail "the guardian did not say why it killed rank 3"
    run_srun_ft "" "nobody taken for dead" env SHOAL_FT_TIMEOUT=1000ms \
        $(srun_n 4) --mpi="$mpi" "$ftprog" stop 2 700 1 1000
    if [ "$mpi" = pmix ]; then
        # The boot layer through the guardian's PMIx connection: puts,
        # chunked values, fences, gets, local peers.
        run_kvs 4 pmix env SHOAL_FT=1 SHOAL_LOG=debug $(srun_n 4) --mpi=pmix
        [ "$(grep -c "guardian [0-9]*, which holds the PMIx connection" \
            "$out")" -eq 4 ] || fail "not every rank's guardian holds its PMIx connection"
    fi
    ok="bit-identical to the sequential run"
    if [ "$mpi" = pmi2 ]; then
        run_srun_ft 5 "OK jacobi 96 sweeps on 8 ranks, 7 left, 1 recoveries, $ok" \
            $(srun_n 8) --mpi="$mpi" "$mpiprog" 96 5@21
    else
        # The agreement's coordinator (rank 0) first, then rank 3.
        run_srun_ft "0 3" "OK jacobi 96 sweeps on 8 ranks, 6 left, 2 recoveries, $ok" \
            $(srun_n 8) --mpi="$mpi" "$mpiprog" 96 0@13 3@30
    fi
}

# run_ompi_ft TEXT MPIRUN_ARG...: under SHOAL_FT, Open MPI's mpirun with
# --enable-recovery must exit 0 (it then reports no death) and print TEXT.
run_ompi_ft() {
    text=$1
    shift
    timeout 90 mpirun.openmpi --enable-recovery -x SHOAL_FT=1 "$@" \
        >"$out" 2>&1 || fail "mpirun --enable-recovery $* exited with $?"
    grep -F -- "$text" "$out" >/dev/null || fail "no '$text' from $*"
    cat "$out"
}

# ompi_ft: docs/FT.md, "Under Slurm and PMIx launchers", with Open MPI
# 4.1's mpirun: the same cases as slurm_ft but the in-band notices across
# 2 pretend hosts (the ring's case covers them).
ompi_ft() {
    [ -x "$mpiprog" ] || fail "mode $mode needs MPI_PROGRAM (mpi_ft_jacobi)"
    ftprog=$progargs
    [ -x "$ftprog" ] || fail "mode $mode needs mpi_ft_ulfm after MPI_PROGRAM"
    run_ompi_ft "OK ft allreduce: survivors agree" -n 4 "$ftprog" allreduce
    run_ompi_ft "OK ft recvdead: survivors agree" -x SHOAL_WIRES_FAKE_HOSTS=4 \
        -x SHOAL_WIRES=shm,tcp -n 4 "$ftprog" recvdead 2
    [ "$(grep -c "recvdead: rank [013] knew" "$out")" -eq 3 ] ||
        fail "not every survivor knew of rank 2's death"
    run_ompi_ft "stop: taken for dead after" -x SHOAL_FT_TIMEOUT=600ms \
        -n 4 "$ftprog" stop 3 2000 1 600
    grep -F "rank 3 (pid" "$out" | grep -F "past SHOAL_FT_TIMEOUT" \
        >/dev/null || fail "the guardian did not say why it killed rank 3"
    run_ompi_ft "nobody taken for dead" -x SHOAL_FT_TIMEOUT=1000ms \
        -n 4 "$ftprog" stop 2 700 1 1000
    run_ompi_ft "OK jacobi 96 sweeps on 8 ranks, 6 left, 2 recoveries, bit-identical" \
        -n 8 "$mpiprog" 96 0@13 3@30
}

case $mode in
hydra)
    need_mpich
    run_kvs 2 pmi1 mpiexec.mpich -n 2
    run_kvs 4 pmi1 mpiexec.mpich -n 4
    ;;
hydra-port)
    need_mpich
    run_kvs 4 pmi1 mpiexec.mpich -pmi-port -n 4
    ;;
hydra-pmi2)
    need_mpich
    # Hydra serves PMI-2 on the same PMI_FD when the client asks for it.
    run_kvs 2 pmi2 env SHOAL_BOOT=pmi2 mpiexec.mpich -n 2
    run_kvs 4 pmi2 env SHOAL_BOOT=pmi2 mpiexec.mpich -n 4
    ;;
hydra-pmi2-port)
    need_mpich
    run_kvs 2 pmi2 env SHOAL_BOOT=pmi2 mpiexec.mpich -pmi-port -n 2
    ;;
hydra-mpi)
    need_mpich
    run_mpi 2 mpiexec.mpich -n 2
    run_mpi 4 mpiexec.mpich -n 4
    run_mpi 4 mpiexec.mpich -pmi-port -n 4
    ;;
hydra-ft)
    # docs/FT.md, "Under MPICH's Hydra": a rank killed with SIGKILL; the
    # others are told (SIGUSR1, PMI_dead_processes), are not killed, and
    # finish.
    need_mpich
    [ -n "$mpiprog" ] || fail "mode $mode needs MPI_PROGRAM (mpi_ft_jacobi)"
    ftprog=$progargs # mpi_ft_ulfm, for the stop watch
    [ -x "$ftprog" ] || fail "mode $mode needs mpi_ft_ulfm after MPI_PROGRAM"
    run_ft 2 "" -n 4 "$prog" --backend pmi1 --size 4 --ft-victim 2
    [ "$(grep -c "boot ft ok: rank [013] told of rank 2's death" "$out")" \
        -eq 3 ] || fail "not every survivor was told of rank 2's death"
    # PMI-2 (PMI_dead_processes is a job attribute there), rank 0 dying.
    export SHOAL_BOOT=pmi2
    run_ft 0 "" -n 4 "$prog" --backend pmi2 --size 4 --ft-victim 0
    unset SHOAL_BOOT
    [ "$(grep -c "boot ft ok: rank [123] told of rank 0's death" "$out")" \
        -eq 3 ] || fail "PMI-2: not every survivor was told of rank 0's death"
    # A thread before MPI_Init: no guardian, said; the job still runs.
    SHOAL_FT=1 timeout 60 mpiexec.mpich -n 2 "$prog" --backend pmi1 \
        --size 2 --ft-thread 1 >"$out" 2>&1 ||
        fail "--ft-thread: mpiexec exited with $?"
    [ "$(grep -c "threads run already, so no guardian process" "$out")" \
        -eq 2 ] || fail "--ft-thread: no warning from each rank"
    [ "$(grep -c "boot ft ok: rank [01] has no guardian" "$out")" -eq 2 ] ||
        fail "--ft-thread: not every rank went on"
    cat "$out"
    # SHOAL_FT_TIMEOUT, kept by the guardian: a rank stopped for good is
    # killed past it (and not before: the program checks), one stopped
    # for less is not.
    export SHOAL_FT_TIMEOUT=600ms
    run_ft 3 "stop: taken for dead after" -n 4 "$ftprog" stop 3 2000 1 600
    grep -F "rank 3 (pid" "$out" | grep -F "past SHOAL_FT_TIMEOUT" \
        >/dev/null || fail "the guardian did not say why it killed rank 3"
    export SHOAL_FT_TIMEOUT=1000ms
    run_ft "" "nobody taken for dead" -n 4 "$ftprog" stop 2 700 1 1000
    unset SHOAL_FT_TIMEOUT
    ok="bit-identical to the sequential run"
    run_ft 5 "OK jacobi 96 sweeps on 8 ranks, 7 left, 1 recoveries, $ok" \
        -n 8 "$mpiprog" 96 5@21
    # Port mode, two deaths, the agreement's coordinator (rank 0) first.
    run_ft "0 3" "OK jacobi 96 sweeps on 8 ranks, 6 left, 2 recoveries, $ok" \
        -pmi-port -n 8 "$mpiprog" 96 0@13 3@30
    ;;
ompi)
    need_ompi
    run_kvs 2 pmix mpirun.openmpi -n 2
    run_kvs 4 pmix mpirun.openmpi -n 4
    ;;
ompi-ft)
    need_ompi
    ompi_ft
    ;;
ompi-mpi)
    need_ompi
    run_mpi 2 mpirun.openmpi -n 2
    run_mpi 4 mpirun.openmpi -n 4
    ;;
slurm-pmi2)
    need_slurm
    run_kvs 2 pmi2 $(srun_n 2) --mpi=pmi2
    run_kvs 4 pmi2 $(srun_n 4) --mpi=pmi2
    # The same fd also serves PMI-1.
    run_kvs 4 pmi1 env SHOAL_BOOT=pmi1 $(srun_n 4) --mpi=pmi2
    ;;
slurm-pmix)
    need_slurm
    run_kvs 2 pmix $(srun_n 2) --mpi=pmix
    run_kvs 4 pmix $(srun_n 4) --mpi=pmix
    ;;
slurm-mpi)
    need_slurm
    run_mpi 2 $(srun_n 2) --mpi=pmi2
    run_mpi 4 $(srun_n 4) --mpi=pmi2
    run_mpi 2 $(srun_n 2) --mpi=pmix
    run_mpi 4 $(srun_n 4) --mpi=pmix
    ;;
slurm-ft-pmi2)
    need_slurm
    slurm_ft pmi2
    ;;
slurm-ft-pmix)
    need_slurm
    slurm_ft pmix
    ;;
slurm-none)
    need_slurm
    # srun's default, --mpi=none, gives no key-value store: refused.
    if timeout 60 $(srun_n 2) --mpi=none "$prog" >"$out" 2>&1; then
        fail "srun --mpi=none started although it should be refused"
    fi
    grep -F -- "use srun --mpi=pmi2 or srun --mpi=pmix" "$out" >/dev/null ||
        fail "message lacks the advice"
    echo "refused as expected:"
    ;;
single)
    timeout 30 "$prog" --backend single --size 1 >"$out" 2>&1 ||
        fail "singleton run exited with $?"
    grep "boot kvs ok: 1 ranks via single" "$out" >/dev/null || fail "no success line"
    ;;
refuse-slurm)
    expect_refusal "srun --mpi=pmi2" SLURM_PROCID=0
    ;;
refuse-pmix)
    # PMIX_* without a server: PMIx_Init cannot reach it (or, without
    # libpmix, the library is missing); never a silent singleton.
    expect_refusal "PMIx" PMIX_NAMESPACE=job PMIX_RANK=0
    ;;
refuse-nolib)
    # A libpmix.so.2 that does not load stands for a missing one: the
    # message says so and how to install it.
    lib=$(mktemp -d)
    echo "not a library" >"$lib/libpmix.so.2"
    expect_refusal "apt-get install libpmix2" LD_LIBRARY_PATH="$lib" \
        PMIX_NAMESPACE=job PMIX_RANK=0
    grep -F "PMIx client library cannot be loaded" "$out" >/dev/null ||
        fail "message does not say the library is missing"
    rm -rf "$lib"
    ;;
run-hydra-pmi2)
    need_mpich
    run_any env SHOAL_BOOT=pmi2 mpiexec.mpich -n 4
    ;;
run-ompi)
    need_ompi
    run_any mpirun.openmpi -n 4
    ;;
run-slurm-pmi2)
    need_slurm
    run_any $(srun_n 4) --mpi=pmi2
    ;;
run-slurm-pmix)
    need_slurm
    run_any $(srun_n 4) --mpi=pmix
    ;;
refuse-pmi1)
    expect_refusal "SHOAL_BOOT=pmi1" SHOAL_BOOT=pmi1
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
cat "$out"
exit 0
