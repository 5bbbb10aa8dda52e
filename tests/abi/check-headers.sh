#!/usr/bin/env bash
# Checks that every public header compiles on its own, in C and in C++.
#
# usage: check-headers.sh --cc CC [--cxx CXX] <include-dir>...
#
# For each *.h under the given include directories (the source include/ and
# the build tree's include/ holding the generated shoal/version.h), a
# translation unit that includes only that header, twice (which also checks
# the include guard), must compile with
#     CC  -std=c11   -Wall -Wextra -Werror -pedantic
#     CXX -std=c++11 -Wall -Wextra -Werror            (when CXX is given)
# Users write `#include <shoal.h>` or `#include <shoal/errors.h>`, so that is
# what the test writes too: the header's path relative to its include dir.
set -euo pipefail

cc=
cxx=
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
    --cc) cc=$2; shift 2 ;;
    --cxx) cxx=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cc || $# -eq 0 ]]; then
    echo "usage: $0 --cc CC [--cxx CXX] <include-dir>..." >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-headers.XXXXXX")
trap 'rm -rf "$work"' EXIT

include_flags=()
for dir in "$@"; do
    include_flags+=("-I$dir")
done

failed=0
checked=0
# compile <what> <source> <compiler and flags...>: 0 when it compiles.
compile() {
    local what=$1 src=$2
    shift 2
    if "$@" -fsyntax-only "${include_flags[@]}" "$src" >"$work/log" 2>&1; then
        return 0
    fi
    echo "FAIL ($what): $header"
    sed 's/^/    /' "$work/log"
    return 1
}

for dir in "$@"; do
    [[ -d $dir ]] || continue
    while IFS= read -r header; do
        # The typedef keeps a macro-only header from being an empty unit.
        printf '#include <%s>\n#include <%s>\ntypedef int header_check_t;\n' \
            "$header" "$header" >"$work/tu.c"
        cp "$work/tu.c" "$work/tu.cpp"
        ok=1
        compile C "$work/tu.c" "$cc" -std=c11 -Wall -Wextra -Werror -pedantic || ok=0
        if [[ -n $cxx ]]; then
            compile C++ "$work/tu.cpp" "$cxx" -std=c++11 -Wall -Wextra -Werror || ok=0
        fi
        checked=$((checked + 1))
        if [[ $ok -eq 1 ]]; then
            echo "ok: $header"
        else
            failed=$((failed + 1))
        fi
    done < <(cd "$dir" && find . -name '*.h' -type f | sed 's|^\./||' | sort)
done

if [[ $checked -eq 0 ]]; then
    echo "FAIL: no headers found under: $*"
    exit 1
fi
if [[ -z $cxx ]]; then
    echo "note: C++ half skipped: no C++ compiler found (apt-get install g++)"
fi
if [[ $failed -ne 0 ]]; then
    echo "FAIL: $failed of $checked headers do not compile alone"
    exit 1
fi
echo "OK: $checked headers compile alone as C11${cxx:+ and as C++11}"
