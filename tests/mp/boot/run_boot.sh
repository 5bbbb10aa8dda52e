#!/bin/sh
# Run mp_boot_kvs under another launcher, alone, or where boot must refuse.
#   run_boot.sh MODE PROGRAM
# MODE: hydra | hydra-port | hydra-pmi2 | hydra-pmi2-port | ompi |
#       single | refuse-slurm | refuse-pmix | refuse-pmi1
# Exit 0: passed; 77: skipped (with the reason); anything else: failed.
set -u
mode=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Start from an environment with no launcher in it, whatever ran the tests.
for v in $(env | sed -n 's/^\(PMIX*_[A-Za-z0-9_]*\)=.*/\1/p;s/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p;s/^\(MPI_LOCAL[A-Z]*\)=.*/\1/p'); do
    unset "$v"
done
unset SHOAL_BOOT

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

case $mode in
hydra)
    need_mpich
    timeout 60 mpiexec.mpich -n 4 "$prog" --backend pmi1 --size 4 >"$out" 2>&1 ||
        fail "mpiexec.mpich -n 4 exited with $?"
    grep "boot kvs ok: 4 ranks via pmi1" "$out" >/dev/null || fail "no success line"
    ;;
hydra-port)
    need_mpich
    timeout 60 mpiexec.mpich -pmi-port -n 4 "$prog" --backend pmi1 --size 4 \
        >"$out" 2>&1 || fail "mpiexec.mpich -pmi-port -n 4 exited with $?"
    grep "boot kvs ok: 4 ranks via pmi1" "$out" >/dev/null || fail "no success line"
    ;;
hydra-pmi2)
    need_mpich
    # Hydra serves PMI-2 on the same PMI_FD when the client asks for it.
    SHOAL_BOOT=pmi2 timeout 60 mpiexec.mpich -n 4 "$prog" --backend pmi2 \
        --size 4 >"$out" 2>&1 || fail "SHOAL_BOOT=pmi2 mpiexec.mpich -n 4 exited with $?"
    grep "boot kvs ok: 4 ranks via pmi2" "$out" >/dev/null || fail "no success line"
    ;;
hydra-pmi2-port)
    need_mpich
    SHOAL_BOOT=pmi2 timeout 60 mpiexec.mpich -pmi-port -n 2 "$prog" \
        --backend pmi2 --size 2 >"$out" 2>&1 ||
        fail "SHOAL_BOOT=pmi2 mpiexec.mpich -pmi-port -n 2 exited with $?"
    grep "boot kvs ok: 2 ranks via pmi2" "$out" >/dev/null || fail "no success line"
    ;;
ompi)
    if ! command -v mpirun.openmpi >/dev/null 2>&1; then
        echo "SKIP: mpirun.openmpi not found (install the Debian package openmpi-bin)"
        exit 77
    fi
    # Root needs these; past 2 ranks on 2 cores --oversubscribe.
    for np in 2 4; do
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMPI_MCA_rmaps_base_oversubscribe=1 \
            timeout 60 mpirun.openmpi -n $np "$prog" --backend pmix \
            --size $np >"$out" 2>&1 || fail "mpirun.openmpi -n $np exited with $?"
        grep "boot kvs ok: $np ranks via pmix" "$out" >/dev/null ||
            fail "no success line at $np ranks"
    done
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
