#!/bin/sh
# bench.task.run: bench/task/run works end to end on a tiny problem.
#   check_run.sh RUN BUILD_DIR
# 1. The sequential programs, OpenMP, the MPI static and dynamic splits
#    under shoalrun and the fork floor run at 1 and 2 ranks and are
#    reported; the task runtime's slots are skipped with a note when its
#    programs are missing.
# 2. The slots: a stand-in task_raytrace (rank 0 runs the sequential
#    program with the arguments it was given) is run, reported and meets
#    the checksum; a stand-in that prints a wrong checksum makes the run
#    fail with WRONG OUTPUT.
# Skips (77) without python3.
set -u
run=$1 build=$2
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
small="--reps 1 --np 1,2 --width 48 --height 32 --samples 1 --depth 2
       --qs-n 20000 --b1-shapes 4x1,1x4 --b1-nested chain:2,tree:2
       --b1-inner 1 --jobs 4,16 --build-dir $build"

# shellcheck disable=SC2086
python3 "$run" $small --bench raytrace,qsort,b1 \
    --impls seq,omp,mpi-shoal,task,fork --mpi-split cyclic,dynamic \
    --task-dir "$tmp/none" \
    >"$tmp/out" 2>"$tmp/err" || bad "the run failed: $(tail -5 "$tmp/out")"
grep -Eq '^ +mpi-shoal \(cyclic\) +[0-9.]+ \([0-9.]+\) +[0-9.]+ \([0-9.]+\)$' \
    "$tmp/out" || bad "no mpi-shoal row with two numbers"
grep -Eq '^ +mpi-shoal \(dynamic\) +[0-9.]+ \([0-9.]+\) +[0-9.]+ ' \
    "$tmp/out" || bad "no mpi-shoal (dynamic) row with two numbers"
grep -Eq '^ +seq rounds +[0-9.]+ ' "$tmp/out" || bad "no seq rounds row"
if [ -x "$build/bench/task/omp_qsort" ]; then
    grep -Eq '^ +omp rounds +[0-9.]+ \([0-9.]+\) +[0-9.]+ ' "$tmp/out" ||
        bad "no omp rounds row with two numbers"
fi
grep -Eq '^ +tree:2 +[0-9.]+$' "$tmp/out" || bad "no fork row for tree:2"
grep -q 'task runtime arms of raytrace skipped' "$tmp/out" ||
    bad "no note on the missing task runtime"

# A stand-in task runtime: rank 0 traces, the others do nothing.
mkdir "$tmp/task"
cat >"$tmp/task/task_raytrace" <<EOS
#!/bin/sh
[ "\${PMI_RANK:-0}" = 0 ] || exit 0
exec "$build/bench/task/seq_raytrace" "\$@"
EOS
chmod +x "$tmp/task/task_raytrace"
# shellcheck disable=SC2086
python3 "$run" $small --bench raytrace --impls seq,task \
    --task-dir "$tmp/task" >"$tmp/out2" 2>&1 ||
    bad "the run with a stand-in task runtime failed: $(tail -5 "$tmp/out2")"
grep -Eq '^ +task jobs=16 +[0-9.]+ \([0-9.]+\) +[0-9.]+ \([0-9.]+\)$' \
    "$tmp/out2" || bad "no row for the stand-in task runtime at 16 jobs"
grep -q 'speedup [0-9.]*: \(met\|NOT met\)' "$tmp/out2" ||
    bad "no raytrace verdict"

cat >"$tmp/task/task_raytrace" <<'EOS'
#!/bin/sh
echo "time 0.001"
echo "checksum 0123456789abcdef"
EOS
# shellcheck disable=SC2086
if python3 "$run" $small --bench raytrace --impls seq,task --jobs 4 \
        --task-dir "$tmp/task" >"$tmp/out3" 2>&1; then
    bad "a wrong checksum did not fail the run"
fi
grep -q 'WRONG OUTPUT' "$tmp/out3" || bad "a wrong checksum is not named"

if [ $fail -ne 0 ]; then
    echo "--- first run:"; cat "$tmp/out" "$tmp/err"
    echo "--- stand-in run:"; cat "$tmp/out2"
    echo "bench.task.run: FAILED"
    exit 1
fi
echo "bench.task.run: the runner works"
