#!/usr/bin/env bash
# Runs the conformance generator with the same seeds under Shoal, MPICH and
# Open MPI and compares (docs/TESTING.md):
#   - a case failing under Shoal that passes under a peer points at Shoal;
#   - a case failing under every library is suspect (the generator or the
#     standard's reading): reported apart;
#   - a case taking more than STALL_FACTOR (10) times its time under the
#     faster peer, and over STALL_FLOOR seconds, is a stall;
#   - every library also runs with the generator's own per-case time budget
#     (the peers with their own factor, docs/TESTING.md).
#
#   tests/conformance/run.sh [-n NP] [-c CASES] [-b BUILD_DIR] [-x ARGS] SEED...
#
# -x: more arguments for every run (e.g. -x --no-threads, as make check's
# seed 102 runs).
#
# The peers are built here from the same sources with mpicc.mpich and
# mpicc.openmpi; a missing peer is skipped with the package to install.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
np=3 cases=200 build=${BUILD_DIR:-build} timeout=${CASE_TIMEOUT:-30}
STALL_FACTOR=${STALL_FACTOR:-10} STALL_FLOOR=${STALL_FLOOR:-0.5}
extra=()
while getopts "n:c:b:x:" o; do
    case $o in
    n) np=$OPTARG ;; c) cases=$OPTARG ;; b) build=$OPTARG ;; x) extra+=($OPTARG) ;;
    *) echo "usage: $0 [-n NP] [-c CASES] [-b BUILD_DIR] [-x ARGS] SEED..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
seeds=("$@")
[[ ${#seeds[@]} -gt 0 ]] || seeds=(1 2 3)
[[ $build = /* ]] || build=$root/$build
work=$(mktemp -d "${TMPDIR:-/tmp}/conform.XXXXXX")
trap 'rm -rf "$work"' EXIT

shoal_prog=$build/tests/conformance/mpi_conform
shoalrun=$build/tools/shoalrun/shoalrun
[[ -x $shoal_prog && -x $shoalrun ]] ||
    { echo "run.sh: build Shoal first (make build BUILD_DIR=${build#$root/}): no $shoal_prog" >&2; exit 2; }

flags=(-O1 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-stringop-overflow -pthread)
peers=()
build_peer() {   # name compiler package
    if ! command -v "$2" >/dev/null; then
        echo "run.sh: $1 skipped: $2 not found (apt-get install $3)"
        return
    fi
    if "$2" "${flags[@]}" "$here"/conform.c "$here"/types.c "$here"/p2p.c "$here"/coll.c "$here"/stress.c \
            -o "$work/conform.$1" 2>"$work/$1.build"; then
        peers+=("$1")
    else
        echo "run.sh: $1 skipped: the build failed:"; sed 's/^/    /' "$work/$1.build"
    fi
}
build_peer mpich mpicc.mpich "mpich libmpich-dev"
build_peer openmpi mpicc.openmpi "openmpi-bin libopenmpi-dev"
if [[ " ${peers[*]} " == *" mpich "* ]] && ! command -v mpiexec.mpich >/dev/null; then
    echo "run.sh: mpich skipped: no mpiexec.mpich (apt-get install mpich)"; peers=("${peers[@]/mpich}")
fi
if [[ " ${peers[*]} " == *" openmpi "* ]] && ! command -v mpirun.openmpi >/dev/null; then
    echo "run.sh: openmpi skipped: no mpirun.openmpi (apt-get install openmpi-bin)"; peers=("${peers[@]/openmpi}")
fi

run() {   # impl seed -> $work/<impl>.<seed>.{out,err}
    local impl=$1 seed=$2 args=(--seed "$2" --cases "$cases" --case-timeout "$timeout" --times ${extra[@]+"${extra[@]}"})
    local limit=$((cases * timeout + 60))
    case $impl in
    shoal) timeout "$limit" "$shoalrun" -n "$np" --timeout "$limit" "$shoal_prog" "${args[@]}" ;;
    mpich) timeout "$limit" mpiexec.mpich -n "$np" "$work/conform.mpich" "${args[@]}" ;;
    openmpi) OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
             timeout "$limit" mpirun.openmpi -n "$np" "$work/conform.openmpi" "${args[@]}" ;;
    esac >"$work/$impl.$seed.out" 2>"$work/$impl.$seed.err"
    echo $? >"$work/$impl.$seed.rc"
}

# <impl> <seed> -> lines "case time status"; a case never reached: "case - HANG"
results() {
    awk -v hang="$(grep -ho 'HANG seed=[0-9]* case=[0-9]*' "$work/$1.$2.err" | head -1 | sed 's/.*case=//')" '
        $1 == "case" { st = ($4 == "FAIL" || $4 == "STALL") ? $4 : "ok"; print $2, $3, st; seen[$2] = 1 }
        END { if (hang != "" && !seen[hang]) print hang, "-", "HANG" }' "$work/$1.$2.out"
}

status=0
for seed in "${seeds[@]}"; do
    echo "== seed $seed: $np ranks, $cases cases"
    for impl in shoal "${peers[@]}"; do
        [[ -n $impl ]] || continue
        run "$impl" "$seed"
        results "$impl" "$seed" >"$work/$impl.$seed.res"
        printf '   %-8s exit %s, %s\n' "$impl" "$(cat "$work/$impl.$seed.rc")" \
            "$(grep -h '^conform: seed' "$work/$impl.$seed.out" | tail -1)"
    done
    # Per case: Shoal's time and status next to each peer's.
    files=("$work/shoal.$seed.res")
    for impl in "${peers[@]}"; do [[ -n $impl ]] && files+=("$work/$impl.$seed.res"); done
    awk -v f="$STALL_FACTOR" -v floor="$STALL_FLOOR" -v seed="$seed" -v names="${peers[*]}" '
        FNR == 1 { k++ }
        { t[k, $1] = $2; st[k, $1] = $3; if (k == 1) cases[++n] = $1 }
        END {
            np = split(names, pn, " ")
            for (j = 1; j <= n; j++) {
                c = cases[j]; s = st[1, c]; best = -1; pass = 0; peers = ""
                for (i = 1; i <= np; i++) {
                    ps = ((i + 1, c) in st) ? st[i + 1, c] : "not-reached"
                    peers = peers " " pn[i] ":" ps
                    if (ps == "ok") { pass = 1; if (best < 0 || t[i + 1, c] + 0 < best) best = t[i + 1, c] + 0 }
                    if (ps == "not-reached" && !(i in told)) {
                        told[i] = 1
                        printf "   peer      seed %s: %s stopped before case %s (a hang or crash above)\n", seed, pn[i], c
                    }
                    if (ps != "ok" && ps != "not-reached" && s == "ok")
                        printf "   peer      seed %s case %s: %s under %s, passes under Shoal\n", seed, c, ps, pn[i]
                }
                if (s != "ok" && pass)
                    printf "   SHOAL BUG? seed %s case %s: %s under Shoal, passes under a peer (%s )\n", seed, c, s, peers
                else if (s != "ok")
                    printf "   SUSPECT   seed %s case %s: %s under Shoal and every peer (%s )\n", seed, c, s, peers
                else if (best >= 0 && t[1, c] > floor && t[1, c] > f * best)
                    printf "   STALL     seed %s case %s: %.3f s under Shoal, %.3f s under the faster peer\n", seed, c, t[1, c], best
            }
        }' "${files[@]}" | tee "$work/report"
    if grep -q "SHOAL BUG\|STALL \|SUSPECT" "$work/report"; then status=1; fi
    for impl in shoal "${peers[@]}"; do
        [[ -n $impl ]] || continue
        if grep -q 'FAIL\|HANG\|STALL\|slow' "$work/$impl.$seed.err"; then
            echo "   -- $impl messages (first 10):"
            grep -h -A1 'FAIL\|HANG\|STALL\|slow' "$work/$impl.$seed.err" | grep -v '^--' | head -20 | cut -c1-400 | sed 's/^/      /'
        fi
    done
done
[[ -n ${KEEP:-} ]] && { cp "$work"/*.out "$work"/*.err "$KEEP"/ 2>/dev/null; echo "outputs kept in $KEEP"; }
echo "rerun a case: $shoalrun -n $np $shoal_prog --seed S --only K"
exit $status
