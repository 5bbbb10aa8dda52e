#!/bin/bash
# The MPI tools: shoalcc (mpicc), the mpiexec/mpirun names of shoalrun,
# FindMPI, libshoal's MPI exports, the bench/mpi programs, the installed
# names.  One case per run:
#
#   tools_test.sh CASE --bin DIR --lib FILE --src DIR --build DIR
#                      --cmake CMAKE --cc CC [--sanitize LIST]
#
# DIR of --bin is the build tree's bin/ (shoalcc, mpicc, shoalrun, mpiexec,
# mpirun); --lib is libshoal.so; --cc is the compiler Shoal was built with,
# given to shoalcc as SHOAL_CC; --sanitize is the build's SHOAL_SANITIZE
# (shoalcc then adds -fsanitize=LIST).  Cases that need the MPI layer to link
# (libshoal exporting MPI_Init) skip with status 77 until it does, after
# checking what they can without it.
set -u
case_name=$1
shift
bin='' lib='' src='' build='' cmake_cmd='' cc='' sanitize=''
while [[ $# -gt 0 ]]; do
    case $1 in
    --bin) bin=$2 ;;
    --lib) lib=$2 ;;
    --src) src=$2 ;;
    --build) build=$2 ;;
    --cmake) cmake_cmd=$2 ;;
    --cc) cc=$2 ;;
    --sanitize) sanitize=$2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift 2
done
export SHOAL_CC=$cc
unset CC
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() {
    echo "FAIL ($case_name): $*"
    failed=$((failed + 1))
}
ok() { echo "ok: $*"; }

# expect_eq WHAT GOT WANT
expect_eq() {
    if [[ $2 == "$3" ]]; then ok "$1"; else fail "$1: got '$2', expected '$3'"; fi
}

# run_out FILE CMD...: runs CMD with stdout+stderr in FILE; returns its status.
run_out() {
    local out=$1
    shift
    "$@" >"$out" 2>&1
}

show_file() {
    echo "--- $1:"
    head -c 3000 "$1"
    echo
}

# The functions a library exports, one a line, without symbol versions
# (MPI_Init@@SHOAL_0 -> MPI_Init).
exported_functions() {
    nm -D --defined-only "$1" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' | sort -u
}

mpi_linked() { exported_functions "$lib" 2>/dev/null | grep -Eq '^P?MPI_Init$'; }

skip_without_mpi() {
    if ! mpi_linked; then
        echo "SKIP ($case_name): $lib exports no MPI_Init yet (the MPI layer is not built); the checks that need it did not run"
        exit 77
    fi
}

finish() {
    if [[ $failed -gt 0 ]]; then
        echo "$failed check(s) failed"
        exit 1
    fi
    exit 0
}

if [[ ! -f $lib ]]; then
    echo "FAIL ($case_name): $lib does not exist: build first (cmake --build $build)"
    exit 1
fi
libdir=$(dirname "$lib")
incdirs="$src/include $build/include"
san=${sanitize:+ -fsanitize=$sanitize}
link_flags="-L$libdir -Wl,-rpath,$libdir$san -lshoal -lpthread"
compile_flags="-I$src/include -I$build/include$san"

# ---- cases --------------------------------------------------------------------

# Every query answers with what it should, and the command shoalcc runs is
# the one -show prints.
case_queries() {
    local cc_word=$cc s
    [[ $cc_word =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]] || cc_word="'$cc'"
    expect_eq "--showme:compile" "$("$bin/shoalcc" --showme:compile)" "$compile_flags"
    expect_eq "-showme:compile" "$("$bin/shoalcc" -showme:compile)" "$compile_flags"
    expect_eq "--showme:link" "$("$bin/shoalcc" --showme:link)" "$link_flags"
    expect_eq "--showme:incdirs" "$("$bin/shoalcc" --showme:incdirs)" "$incdirs"
    expect_eq "--showme:libdirs" "$("$bin/shoalcc" --showme:libdirs)" "$libdir"
    expect_eq "--showme:libs" "$("$bin/shoalcc" --showme:libs)" "shoal pthread"
    expect_eq "--showme:command" "$("$bin/shoalcc" --showme:command)" "$cc_word"
    s=$("$bin/shoalcc" --showme:version)
    [[ $s =~ ^shoalcc:\ Shoal\ [0-9]+\.[0-9]+\.[0-9]+\ \(Language:\ C\)$ ]] &&
        ok "--showme:version: $s" || fail "--showme:version: '$s'"
    s=$("$bin/mpicc" --showme:version)
    [[ $s == mpicc:\ Shoal* ]] && ok "mpicc names itself" || fail "mpicc --showme:version: '$s'"
    expect_eq "-show (link)" "$("$bin/shoalcc" -show)" "$cc_word $compile_flags $link_flags"
    expect_eq "--showme (link)" "$("$bin/shoalcc" --showme)" "$cc_word $compile_flags $link_flags"
    expect_eq "-show x.c -o x" "$("$bin/mpicc" -show x.c -o x)" "$cc_word $compile_flags x.c -o x $link_flags"
    for flag in -c -E -S -M -MM -fsyntax-only; do
        expect_eq "-show $flag x.c (compile only)" "$("$bin/mpicc" -show $flag x.c)" "$cc_word $compile_flags $flag x.c"
    done
    expect_eq "-show quotes" "$("$bin/shoalcc" -show -c 'a b.c' "-DX=\"1\"")" \
        "$cc_word $compile_flags -c 'a b.c' '-DX=\"1\"'"
    expect_eq "-compile_info" "$("$bin/shoalcc" -compile_info)" "$cc_word $compile_flags"
    expect_eq "-compile-info" "$("$bin/shoalcc" -compile-info)" "$cc_word $compile_flags"
    expect_eq "-link_info" "$("$bin/shoalcc" -link_info)" "$cc_word $compile_flags $link_flags"
    expect_eq "-link-info" "$("$bin/shoalcc" -link-info)" "$cc_word $compile_flags $link_flags"
    s=$("$bin/shoalcc" -v 2>/dev/null | head -n 1)
    [[ $s =~ ^shoalcc\ for\ Shoal\ version\ [0-9.]+ ]] && ok "-v: $s" || fail "-v: '$s'"
    s=$("$bin/shoalcc" --version | head -n 1)
    [[ $s =~ ^shoalcc\ for\ Shoal\ version\ [0-9.]+$ ]] && ok "--version: $s" || fail "--version: '$s'"
    "$bin/shoalcc" --help | grep -q -- '--showme:compile' && ok "--help" || fail "--help lacks --showme:compile"
    # The compiler: SHOAL_CC, then CC unless it names the wrapper, then cc.
    expect_eq "SHOAL_CC with flags" "$(SHOAL_CC='ccache gcc' "$bin/shoalcc" -show -c x.c)" "ccache gcc $compile_flags -c x.c"
    expect_eq "CC" "$(env -u SHOAL_CC CC=clang "$bin/shoalcc" -show -c x.c)" "clang $compile_flags -c x.c"
    expect_eq "CC=mpicc ignored" "$(env -u SHOAL_CC CC=mpicc "$bin/shoalcc" -show -c x.c)" "cc $compile_flags -c x.c"
    expect_eq "CC=<path of mpicc> ignored" "$(env -u SHOAL_CC CC="$bin/mpicc" "$bin/shoalcc" -show -c x.c)" "cc $compile_flags -c x.c"
    expect_eq "default cc" "$(env -u SHOAL_CC -u CC "$bin/shoalcc" -show -c x.c)" "cc $compile_flags -c x.c"
    if SHOAL_CC=mpicc "$bin/shoalcc" -c x.c >"$tmp/err" 2>&1; then
        fail "SHOAL_CC=mpicc was accepted"
    else
        grep -q 'names shoalcc itself' "$tmp/err" && ok "SHOAL_CC=mpicc refused" ||
            { fail "SHOAL_CC=mpicc: unexpected message"; show_file "$tmp/err"; }
    fi
    # A compiler that runs the wrapper again is stopped, not looped.
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$bin/shoalcc" >"$tmp/loopcc"
    chmod +x "$tmp/loopcc"
    if SHOAL_CC=$tmp/loopcc timeout 10 "$bin/shoalcc" -c x.c >"$tmp/err" 2>&1; then
        fail "a compiler running shoalcc again was accepted"
    else
        grep -q 'ran shoalcc again' "$tmp/err" && ok "recursion stopped" ||
            { fail "recursion: unexpected message"; show_file "$tmp/err"; }
    fi
    if "$bin/shoalcc" --showme:nonsense >"$tmp/err" 2>&1; then
        fail "--showme:nonsense accepted"
    else
        ok "--showme:nonsense refused: $(head -n 1 "$tmp/err")"
    fi
    # What -show prints is what runs: a fake compiler records its arguments.
    printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done >"%s"\n' "$tmp/args" >"$tmp/fakecc"
    chmod +x "$tmp/fakecc"
    SHOAL_CC=$tmp/fakecc "$bin/shoalcc" -O2 'a b.c' -o prog
    expect_eq "the command run" "$(tr '\n' '|' <"$tmp/args")" \
        "-I$src/include|-I$build/include|${san:+${san# }|}-O2|a b.c|-o|prog|-L$libdir|-Wl,-rpath,$libdir|${san:+${san# }|}-lshoal|-lpthread|"
}

# shoalcc compiles (mpi.h) and links (libshoal) a hello world that runs.
case_hello() {
    if ! run_out "$tmp/cc.log" "$bin/shoalcc" -Wall -Wextra -Werror -c "$src/tests/mpi/tools_hello.c" -o "$tmp/hello.o"; then
        fail "shoalcc -c tools_hello.c"
        show_file "$tmp/cc.log"
        finish
    fi
    ok "compiled against mpi.h"
    skip_without_mpi
    if ! run_out "$tmp/cc.log" "$bin/shoalcc" "$tmp/hello.o" -o "$tmp/hello"; then
        fail "shoalcc hello.o -o hello"
        show_file "$tmp/cc.log"
        finish
    fi
    ok "linked with libshoal"
    if run_out "$tmp/out" "$bin/shoalrun" -n 2 --timeout 60 "$tmp/hello"; then
        for r in 0 1; do
            grep -qx "hello from rank $r of 2" "$tmp/out" && ok "rank $r" || fail "no hello from rank $r"
        done
    else
        fail "shoalrun -n 2 hello failed"
    fi
    [[ $failed -eq 0 ]] || show_file "$tmp/out"
}

# Ordinary MPI calls compile without warnings (-O2 -Wall -Wextra -Werror),
# MPI_STATUS(ES)_IGNORE included.
case_warnings() {
    if run_out "$tmp/cc.log" "$bin/shoalcc" -O2 -Wall -Wextra -Werror -c "$src/tests/mpi/tools_warnings.c" -o "$tmp/w.o"; then
        ok "tools_warnings.c compiles without warnings at -O2"
    else
        fail "mpi.h makes ordinary calls warn at -O2"
        show_file "$tmp/cc.log"
    fi
}

# shoalrun answers to mpiexec and mpirun, with -n and -np, and takes the
# environment options of Hydra and Open MPI.
case_names() {
    local prog=(sh -c 'echo "rank=$PMI_RANK size=$PMI_SIZE a=${A-} b=${B-} c=${C-}"')
    for name in mpiexec mpirun; do
        for n in -n -np; do
            if run_out "$tmp/out" "$bin/$name" $n 2 "${prog[@]}"; then
                [[ $(grep -c '^rank=[01] size=2 ' "$tmp/out") -eq 2 ]] &&
                    ok "$name $n 2" || { fail "$name $n 2: output"; show_file "$tmp/out"; }
            else
                fail "$name $n 2: status $?"
                show_file "$tmp/out"
            fi
        done
    done
    run_out "$tmp/out" "$bin/mpirun" -np 2 --oversubscribe --allow-run-as-root \
        -x A=1 -x HOME -genv B 'two words' -env C 3 -genvall -ppn 1 -bind-to core "${prog[@]}"
    [[ $(grep -c "^rank=[01] size=2 a=1 b=two words c=3$" "$tmp/out") -eq 2 ]] &&
        ok "-x, -genv, -env and the ignored options" || { fail "environment options"; show_file "$tmp/out"; }
    run_out "$tmp/out" "$bin/mpiexec" --version
    grep -Eq '^mpiexec \(Shoal\) [0-9]' "$tmp/out" && ok "mpiexec --version" || { fail "mpiexec --version"; show_file "$tmp/out"; }
    run_out "$tmp/out" "$bin/mpirun" --help
    grep -q '^Usage: mpirun -n N' "$tmp/out" && ok "mpirun --help names mpirun" || { fail "mpirun --help"; show_file "$tmp/out"; }
    run_out "$tmp/out" "$bin/mpirun" -np 2 --no-such-option true
    grep -q "^mpirun: unknown option '--no-such-option'" "$tmp/out" && grep -q "Try 'mpirun --help'" "$tmp/out" &&
        ok "mpirun's messages name mpirun" || { fail "mpirun's messages"; show_file "$tmp/out"; }
    run_out "$tmp/out" "$bin/mpiexec" -n 1 "$tmp/no-such-program"
    grep -q "^mpiexec: cannot execute" "$tmp/out" && ok "mpiexec's launch errors name mpiexec" || { fail "mpiexec errors"; show_file "$tmp/out"; }
    run_out "$tmp/out" "$bin/mpiexec" -n 1 -genv A
    grep -q "^mpiexec: -genv needs a variable and a value" "$tmp/out" && ok "-genv without a value refused" || { fail "-genv A"; show_file "$tmp/out"; }
    # An MPI program under both names, once the MPI layer links.
    run_out "$tmp/cc.log" "$bin/mpicc" "$src/tests/mpi/tools_hello.c" -o "$tmp/hello" || {
        mpi_linked && { fail "mpicc tools_hello.c"; show_file "$tmp/cc.log"; }
    }
    skip_without_mpi
    for name in mpiexec mpirun; do
        run_out "$tmp/out" "$bin/$name" -np 2 "$tmp/hello"
        [[ $(grep -c '^hello from rank [01] of 2$' "$tmp/out") -eq 2 ]] &&
            ok "$name -np 2 hello" || { fail "$name -np 2 hello"; show_file "$tmp/out"; }
    done
}

# CMake's FindMPI finds Shoal: given shoalcc as MPI_C_COMPILER (include
# folders, libshoal; the project builds and runs), and given the build tree
# as MPI_HOME (mpicc and mpiexec found in its bin/).
findmpi_configure() { # findmpi_configure NAME CMAKE-ARGS...: configures and builds
    local name=$1
    shift
    # FindMPI keeps -L, -l and -Wl, of the wrapper's link line, not
    # -fsanitize: a project linking a sanitized libshoal adds it itself (as
    # tests/install does).
    local san_args=()
    [[ -z $sanitize ]] || san_args=(-DCMAKE_C_FLAGS="-fsanitize=$sanitize")
    if ! run_out "$tmp/$name.log" "$cmake_cmd" -S "$src/tests/mpi/tools_findmpi" -B "$tmp/$name" \
        -DCMAKE_C_COMPILER="$cc" "${san_args[@]}" "$@"; then
        fail "$name: configure with find_package(MPI REQUIRED C)"
        show_file "$tmp/$name.log"
        return 1
    fi
    ok "$name: find_package(MPI) found an MPI"
    sed "s/^/    /" "$tmp/$name/found.txt"
    if ! run_out "$tmp/$name.build.log" "$cmake_cmd" --build "$tmp/$name"; then
        fail "$name: build"
        show_file "$tmp/$name.build.log"
        return 1
    fi
    ok "$name: built"
}

found() { sed -n "s/^$2=//p" "$tmp/$1/found.txt"; }

case_findmpi() {
    skip_without_mpi
    if findmpi_configure compiler -DMPI_C_COMPILER="$bin/shoalcc"; then
        [[ ";$(found compiler MPI_C_INCLUDE_DIRS);" == *";$src/include;"* ]] && ok "include folder" ||
            fail "MPI_C_INCLUDE_DIRS lacks $src/include"
        [[ $(found compiler MPI_C_LIBRARIES) == *"$libdir/libshoal.so"* ]] && ok "libshoal" ||
            fail "MPI_C_LIBRARIES lacks $libdir/libshoal.so"
        expect_eq "MPI_C_VERSION" "$(found compiler MPI_C_VERSION)" "4.0"
        run_out "$tmp/out" "$bin/mpiexec" -n 2 "$tmp/compiler/hello"
        [[ $(grep -c '^hello from rank [01] of 2$' "$tmp/out") -eq 2 ]] &&
            ok "the program runs with mpiexec -n 2" || { fail "run"; show_file "$tmp/out"; }
    fi
    if findmpi_configure home -DMPI_HOME="$build"; then
        expect_eq "MPI_HOME: the compiler" "$(found home MPI_C_COMPILER)" "$bin/mpicc"
        expect_eq "MPI_HOME: mpiexec" "$(found home MPIEXEC_EXECUTABLE)" "$bin/mpiexec"
        run_out "$tmp/out" "$(found home MPIEXEC_EXECUTABLE)" "$(found home MPIEXEC_NUMPROC_FLAG)" 2 "$tmp/home/hello"
        [[ $(grep -c '^hello from rank [01] of 2$' "$tmp/out") -eq 2 ]] &&
            ok "the program runs with MPIEXEC_EXECUTABLE MPIEXEC_NUMPROC_FLAG 2" || { fail "run"; show_file "$tmp/out"; }
    fi
}

# Every MPI_X that libshoal exports has its PMPI_X and the other way round,
# and every function mpi.h declares with SHOAL_MPI_FN is exported (both).
case_exports() {
    local declared missing=0 n_mpi
    exported_functions "$lib" >"$tmp/funcs" || { fail "nm -D $lib"; finish; }
    n_mpi=$(grep -c '^MPI_' "$tmp/funcs")
    if [[ $n_mpi -eq 0 ]]; then
        echo "SKIP ($case_name): $lib exports no MPI_ function yet (the MPI layer is not built)"
        exit 77
    fi
    ok "$n_mpi MPI_ functions exported"
    # Set differences with comm (one process each, not one per name).
    grep '^MPI_' "$tmp/funcs" | sort >"$tmp/mpi"
    grep '^PMPI_' "$tmp/funcs" | sed 's/^P//' | sort >"$tmp/pmpi"
    while read -r f; do
        fail "$f exported without P$f"; missing=1
    done < <(comm -23 "$tmp/mpi" "$tmp/pmpi")
    while read -r f; do
        fail "P$f exported without $f"; missing=1
    done < <(comm -13 "$tmp/mpi" "$tmp/pmpi")
    [[ $missing -eq 0 ]] && ok "every MPI_X has its PMPI_X and every PMPI_X its MPI_X"
    # SHOAL_MPI_FN(ret, Name, (params)): the name is the second argument
    # (the macro's own #define has "name", in lower case, and is left out).
    tr '\n' ' ' <"$src/include/mpi.h" |
        grep -oE 'SHOAL_MPI_FN\([^,()]+,[[:space:]]*[A-Z][A-Za-z0-9_]*[[:space:]]*,' |
        sed -E 's/.*,[[:space:]]*([A-Za-z0-9_]+)[[:space:]]*,$/\1/' | sort -u >"$tmp/declared"
    declared=$(wc -l <"$tmp/declared")
    [[ $declared -gt 0 ]] || { fail "found no SHOAL_MPI_FN declarations in mpi.h"; finish; }
    missing=0
    sed 's/^/MPI_/' "$tmp/declared" >"$tmp/want"
    sed 's/^/PMPI_/' "$tmp/declared" >>"$tmp/want"
    sort -u "$tmp/want" -o "$tmp/want"
    sort -u "$tmp/funcs" -o "$tmp/funcs"
    while read -r sym; do
        echo "missing: $sym"; missing=$((missing + 1))
    done < <(comm -23 "$tmp/want" "$tmp/funcs")
    if [[ $missing -eq 0 ]]; then
        ok "all $declared functions declared in mpi.h are exported as MPI_ and PMPI_"
    else
        fail "$missing of $((2 * declared)) symbols declared in mpi.h are not exported"
    fi
    # mpi.h promises MPI_X is a weak alias (so a tool may replace it).
    local strong
    strong=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^MPI_/ {sub(/@.*/, "", $3); print $3}' | head -n 5)
    [[ -z $strong ]] || echo "note: some MPI_ functions are not weak, as mpi.h says they are: $(echo $strong) ..."
}

# The bench/mpi programs build with shoalcc (warnings are errors) and with
# the peers' wrappers that are installed; each runs once with tiny sizes
# (not timed): the point-to-point ones at 2 ranks, coll at 3, radix and
# prefix at 4, overlap at 2 when Shoal has MPI_Iallreduce (a program calling
# it must compile and link; the peers always build overlap.c).  The runners' --help must work,
# and bench/yield_floor.c builds with cc and runs.
case_bench() {
    local b w lines
    local progs="latency bw bibw rate coll radix prefix hello" shoal_progs
    printf '%s\n' '#include <mpi.h>' 'int main(void)' '{' \
        '    double a = 1, b = 0;' '    MPI_Request r;' \
        '    MPI_Iallreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);' \
        '    return MPI_Wait(&r, MPI_STATUS_IGNORE);' '}' >"$tmp/iallreduce.c"
    shoal_progs=$progs
    if run_out "$tmp/cc.log" "$bin/shoalcc" -Wall -Werror "$tmp/iallreduce.c" -o "$tmp/iallreduce"; then
        shoal_progs="$progs overlap"
    else
        echo "note: a call of MPI_Iallreduce does not compile and link with shoalcc yet; overlap.c is built with the peers only"
    fi
    for b in $progs overlap; do
        if [[ " $shoal_progs " == *" $b "* ]]; then
            if run_out "$tmp/cc.log" "$bin/shoalcc" -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes \
                -Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Werror -c "$src/bench/mpi/$b.c" -o "$tmp/$b.o"; then
                ok "shoalcc -c bench/mpi/$b.c"
            else
                fail "shoalcc -c bench/mpi/$b.c"
                show_file "$tmp/cc.log"
            fi
        fi
        for w in mpicc.openmpi mpicc.mpich; do
            command -v "$w" >/dev/null || { [[ $b == latency ]] && echo "note: $w not installed; not tried"; continue; }
            run_out "$tmp/cc.log" env -u SHOAL_CC "$w" -O2 -Wall -Wextra -Werror -c "$src/bench/mpi/$b.c" -o "$tmp/$b.$w.o" &&
                ok "$w -c bench/mpi/$b.c" || { fail "$w -c bench/mpi/$b.c"; show_file "$tmp/cc.log"; }
        done
    done
    if command -v python3 >/dev/null; then
        for w in compare pakin startup multihost; do
            run_out "$tmp/out" python3 "$src/bench/$w" --help &&
                ok "bench/$w --help" || { fail "bench/$w --help"; show_file "$tmp/out"; }
        done
    else
        echo "note: no python3; bench/compare and bench/pakin not tried"
    fi
    # bench/yield_floor.c (bench/compare --floor): plain C, no MPI.
    if run_out "$tmp/cc.log" cc -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Wvla -Werror \
        "$src/bench/yield_floor.c" -o "$tmp/yield_floor"; then
        if run_out "$tmp/out" "$tmp/yield_floor" --procs 3 --iters 200 --batches 3 &&
            grep -qE '^us_per_barrier [0-9.]+$' "$tmp/out" &&
            grep -qE '^yields_per_barrier [0-9.]+$' "$tmp/out"; then
            ok "yield_floor ran: $(grep '^us_per_barrier' "$tmp/out")"
        else
            fail "yield_floor --procs 3"
            show_file "$tmp/out"
        fi
        run_out "$tmp/out" "$tmp/yield_floor" --procs 0
        [[ $? -eq 2 ]] && grep -q "must be an integer from 1 to 1024, not '0'" "$tmp/out" &&
            ok "yield_floor --procs 0 refused" || { fail "yield_floor --procs 0"; show_file "$tmp/out"; }
    else
        fail "cc bench/yield_floor.c"
        show_file "$tmp/cc.log"
    fi
    [[ $failed -eq 0 ]] || finish
    skip_without_mpi
    for b in $shoal_progs; do
        run_out "$tmp/cc.log" "$bin/shoalcc" "$tmp/$b.o" -o "$tmp/$b" || { fail "link $b"; show_file "$tmp/cc.log"; }
    done
    [[ $failed -eq 0 ]] || finish
    for b in latency bw bibw rate; do
        if run_out "$tmp/out" "$bin/shoalrun" -n 2 --timeout 60 "$tmp/$b" --sizes 0,1,4K,64K --iters 20 --floor 2; then
            lines=$(grep -cE '^[0-9]+ [0-9.e+-]+$' "$tmp/out")
            [[ $lines -eq 4 ]] && ok "$b ran: $(grep -vc '^#' "$tmp/out") sizes" || { fail "$b: $lines result lines, expected 4"; show_file "$tmp/out"; }
        else
            fail "$b did not run"
            show_file "$tmp/out"
        fi
    done
    # coll: barrier (one line) and five operations at two sizes, each
    # checked by the program.
    if run_out "$tmp/out" "$bin/shoalrun" -n 3 --timeout 60 "$tmp/coll" --sizes 8,4K --iters 20 --floor 2; then
        lines=$(grep -cE '^[0-9]+ [0-9.e+-]+$' "$tmp/out")
        [[ $lines -eq 11 ]] && ok "coll ran at 3 ranks: $lines results" || { fail "coll: $lines result lines, expected 11"; show_file "$tmp/out"; }
    else
        fail "coll did not run at 3 ranks"
        show_file "$tmp/out"
    fi
    if [[ " $shoal_progs " == *" overlap "* ]]; then
        if run_out "$tmp/out" "$bin/shoalrun" -n 2 --timeout 60 "$tmp/overlap" --sizes 8,4K --iters 20 --floor 2; then
            lines=$(grep -cE '^[0-9]+ [0-9.e+-]+$' "$tmp/out")
            [[ $lines -eq 2 ]] && ok "overlap ran: $lines sizes" || { fail "overlap: $lines result lines, expected 2"; show_file "$tmp/out"; }
        else
            fail "overlap did not run"
            show_file "$tmp/out"
        fi
    fi
    # radix and prefix check their own results and exit non-zero when wrong.
    for b in radix prefix; do
        if run_out "$tmp/out" "$bin/shoalrun" -n 4 --timeout 60 "$tmp/$b" --keys 3000 --iters 2 --work 10; then
            grep -qE '^time [0-9.e+-]+$' "$tmp/out" && grep -q '^# checked:' "$tmp/out" &&
                ok "$b ran at 4 ranks and checked its result" || { fail "$b: no time or check line"; show_file "$tmp/out"; }
        else
            fail "$b did not run at 4 ranks"
            show_file "$tmp/out"
        fi
    done
}

# cmake --install puts shoalcc, mpicc, mpiexec and mpirun in bin/; the
# installed shoalcc points into its own prefix, even after the prefix moves.
case_install() {
    local manifest=$build/install_manifest.txt prefix=$tmp/prefix moved=$tmp/moved s
    [[ -f $manifest ]] && cp -p "$manifest" "$tmp/manifest.saved"
    run_out "$tmp/install.log" "$cmake_cmd" --install "$build" --prefix "$prefix"
    local rc=$?
    if [[ -f $tmp/manifest.saved ]]; then cp -p "$tmp/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
    [[ $rc -eq 0 ]] || { fail "cmake --install"; show_file "$tmp/install.log"; finish; }
    [[ -x $prefix/bin/shoalcc && ! -L $prefix/bin/shoalcc ]] && ok "bin/shoalcc" || fail "no bin/shoalcc program"
    expect_eq "bin/mpicc" "$(readlink "$prefix/bin/mpicc")" shoalcc
    expect_eq "bin/mpiexec" "$(readlink "$prefix/bin/mpiexec")" shoalrun
    expect_eq "bin/mpirun" "$(readlink "$prefix/bin/mpirun")" shoalrun
    mv "$prefix" "$moved"
    s=$("$moved/bin/mpicc" --showme:incdirs)
    expect_eq "moved prefix: --showme:incdirs" "$s" "$moved/include"
    s=$("$moved/bin/mpicc" --showme:libdirs)
    [[ -f $s/libshoal.so ]] && [[ $s == "$moved"/* ]] && ok "moved prefix: libdir $s" || fail "moved prefix: libdir '$s'"
    ln -s "$moved/bin/mpicc" "$tmp/elsewhere-mpicc"
    expect_eq "through a symlink elsewhere" "$("$tmp/elsewhere-mpicc" --showme:incdirs)" "$moved/include"
    if run_out "$tmp/cc.log" "$moved/bin/mpicc" -Wall -Werror -c "$src/tests/mpi/tools_hello.c" -o "$tmp/hello.o"; then
        ok "installed mpicc compiles against the installed mpi.h"
    else
        fail "installed mpicc -c"
        show_file "$tmp/cc.log"
        finish
    fi
    run_out "$tmp/out" "$moved/bin/mpiexec" --version
    grep -q '^mpiexec (Shoal)' "$tmp/out" && ok "installed mpiexec runs" || { fail "installed mpiexec --version"; show_file "$tmp/out"; }
    skip_without_mpi
    run_out "$tmp/cc.log" "$moved/bin/mpicc" "$tmp/hello.o" -o "$tmp/hello" || { fail "installed mpicc link"; show_file "$tmp/cc.log"; finish; }
    ldd "$tmp/hello" | grep -q "$moved/lib.*/libshoal" && ok "linked with the installed libshoal" || fail "hello does not use $moved's libshoal"
    run_out "$tmp/out" "$moved/bin/mpirun" -np 2 "$tmp/hello"
    [[ $(grep -c '^hello from rank [01] of 2$' "$tmp/out") -eq 2 ]] && ok "installed mpirun -np 2 hello" || { fail "installed mpirun"; show_file "$tmp/out"; }
}

case $case_name in
queries | warnings | hello | names | findmpi | exports | bench | install) "case_$case_name" ;;
*) echo "unknown case: $case_name" >&2; exit 2 ;;
esac
finish
