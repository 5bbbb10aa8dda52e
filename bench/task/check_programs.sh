#!/bin/sh
# bench.task.programs: the bench/task programs agree byte for byte.
#   check_programs.sh SEQ_RAYTRACE SEQ_QSORT MPI_RAYTRACE SHOALRUN
#                     [OMP_RAYTRACE OMP_QSORT]
# The sequential ray trace in 1 and in 5 bands, the MPI baselines under
# shoalrun at 1, 2 and 3 ranks (static: one block of bands per rank, 5
# bands in blocks, rows dealt round-robin; dynamic: 4 bands per rank, 23
# bands) and the OpenMP one at 1 and 3 threads must write the same PPM and
# print the same checksum; another seed must give another image.  The
# nested and the rounds quicksort, sequential (either leaf sort) and OpenMP
# (1 and 3 threads), must give the same sorted array.  An OpenMP program
# given as "-" (no OpenMP) is left out.  Exit 0 when all agree, 1
# otherwise.
set -u
seq=$1 qs=$2 mpi=$3 run=$4 omp_rt=${5:--} omp_qs=${6:--}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

checksum() { sed -n 's/^checksum //p' "$1"; }

rt="--width 61 --height 23 --samples 2 --depth 3 --seed 3"
# shellcheck disable=SC2086
"$seq" $rt --jobs 1 --out "$tmp/ref.ppm" >"$tmp/ref.txt" ||
    bad "seq_raytrace failed"
want=$(checksum "$tmp/ref.txt")
[ -n "$want" ] || bad "seq_raytrace printed no checksum"
size=$(wc -c <"$tmp/ref.ppm")
[ "$size" -eq $((13 + 61 * 23 * 3)) ] || bad "ref.ppm has $size bytes"
[ "$(head -c 13 "$tmp/ref.ppm" | tr '\n' ' ')" = "P6 61 23 255 " ] ||
    bad "ref.ppm has a bad PPM header"

# compare NAME OUTPUT PPM: the output's checksum and the PPM equal the
# reference's.
compare() {
    if ! cmp -s "$tmp/ref.ppm" "$3"; then
        bad "$1: the image differs from the sequential one"
    elif [ "$(checksum "$2")" != "$want" ]; then
        bad "$1: checksum '$(checksum "$2")', want '$want'"
    else
        echo "ok: $1"
    fi
}

# shellcheck disable=SC2086
"$seq" $rt --jobs 5 --out "$tmp/j5.ppm" >"$tmp/j5.txt" ||
    bad "seq_raytrace --jobs 5 failed"
compare "sequential in 5 bands" "$tmp/j5.txt" "$tmp/j5.ppm"

for np in 1 2 3; do
    for split in "" "--jobs 5" "--cyclic --jobs 23" "--dynamic" \
            "--dynamic --jobs 23"; do
        out="$tmp/mpi$np$(echo "$split" | tr -d ' -')"
        # shellcheck disable=SC2086
        if "$run" -n $np --timeout 60 "$mpi" $rt $split --out "$out.ppm" \
                >"$out.txt" 2>"$out.err"; then
            compare "mpi_raytrace -n $np ${split:-(a block per rank)}" \
                "$out.txt" "$out.ppm"
        else
            bad "mpi_raytrace -n $np $split failed: $(tail -3 "$out.err")"
        fi
    done
done

if [ "$omp_rt" != - ]; then
    for t in 1 3; do
        # shellcheck disable=SC2086
        if OMP_NUM_THREADS=$t "$omp_rt" $rt --out "$tmp/omp$t.ppm" \
                >"$tmp/omp$t.txt"; then
            compare "omp_raytrace, $t threads" "$tmp/omp$t.txt" \
                "$tmp/omp$t.ppm"
        else
            bad "omp_raytrace with $t threads failed"
        fi
    done
fi

# The comparison can fail: another scene gives another image.
# shellcheck disable=SC2086
"$seq" $rt --seed 4 --out "$tmp/other.ppm" >/dev/null ||
    bad "seq_raytrace --seed 4 failed"
if cmp -s "$tmp/ref.ppm" "$tmp/other.ppm"; then
    bad "seeds 3 and 4 give the same image"
fi

# Quicksort: nested and rounds, insertion and bubble leaves.
"$qs" --n 200003 --seed 5 --mode nested --out "$tmp/nested.bin" \
    >"$tmp/nested.txt" || bad "seq_qsort nested failed"
qwant=$(checksum "$tmp/nested.txt")
[ -n "$qwant" ] || bad "seq_qsort printed no checksum"
[ "$(wc -c <"$tmp/nested.bin")" -eq $((200003 * 4)) ] ||
    bad "nested.bin has the wrong size"
for args in "--mode rounds" "--mode rounds --leaf bubble --thresh 300" \
        "--mode nested --leaf bubble --thresh 300" "--thresh 3"; do
    # shellcheck disable=SC2086
    if "$qs" --n 200003 --seed 5 $args --out "$tmp/q.bin" >"$tmp/q.txt"; then
        if ! cmp -s "$tmp/nested.bin" "$tmp/q.bin" ||
                [ "$(checksum "$tmp/q.txt")" != "$qwant" ]; then
            bad "seq_qsort $args: another array than nested's"
        else
            echo "ok: seq_qsort $args"
        fi
    else
        bad "seq_qsort $args failed"
    fi
done
if [ "$omp_qs" != - ]; then
    for t in 1 3; do
        for mode in nested rounds; do
            if OMP_NUM_THREADS=$t "$omp_qs" --n 200003 --seed 5 --mode $mode \
                    --par-thresh 5000 >"$tmp/q.txt" &&
                    [ "$(checksum "$tmp/q.txt")" = "$qwant" ]; then
                echo "ok: omp_qsort --mode $mode, $t threads"
            else
                bad "omp_qsort --mode $mode, $t threads: failed or another" \
                    "array than nested's"
            fi
        done
    done
fi
if ! "$qs" --n 1000 --mode rounds >"$tmp/r.txt" ||
        ! grep -q '^rounds [1-9]' "$tmp/r.txt"; then
    bad "seq_qsort --mode rounds printed no round count"
fi

if [ $fail -ne 0 ]; then
    echo "bench.task.programs: FAILED"
    exit 1
fi
echo "bench.task.programs: all agree"
