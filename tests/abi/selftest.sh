#!/usr/bin/env bash
# Shows that each ABI checker can fail: runs it on small inputs made to break
# its rule (and on one that keeps it) and expects the matching verdict.
#
# usage: selftest.sh --cc CC [--cxx CXX] [--nm NM] <tests/abi directory>
set -euo pipefail

cc=
cxx=
nm_cmd='nm'
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
    --cc) cc=$2; shift 2 ;;
    --cxx) cxx=$2; shift 2 ;;
    --nm) nm_cmd=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cc || $# -ne 1 ]]; then
    echo "usage: $0 --cc CC [--cxx CXX] [--nm NM] <tests/abi directory>" >&2
    exit 2
fi
here=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-abi-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT

failures=0
# expect <pass|fail> <description> <command...>
expect() {
    local want=$1 what=$2 got=pass
    shift 2
    "$@" >"$work/out" 2>&1 || got=fail
    if [[ $got == "$want" ]]; then
        echo "ok: $what ($got as expected)"
    else
        echo "NOT OK: $what: expected $want, got $got; its output:"
        sed 's/^/    /' "$work/out"
        failures=$((failures + 1))
    fi
}

# Exports: a library leaking an internal name, one exporting nothing public.
mkdir -p "$work/lib"
printf 'int shoal_fine(void) { return 0; }\nint am_helper(void) { return 1; }\n' \
    >"$work/lib/leak.c"
printf 'static int hidden(void) { return 0; }\nint MPI_Fine(void) { return hidden(); }\n' \
    >"$work/lib/nopublic.c"
for name in leak nopublic; do
    "$cc" -shared -fPIC -o "$work/lib/lib$name.so" "$work/lib/$name.c"
done
expect fail "exports: internal name am_helper" \
    "$here/check-exports.sh" --nm "$nm_cmd" "$work/lib/libleak.so"
grep -q am_helper "$work/out" || { echo "NOT OK: am_helper not named"; failures=$((failures + 1)); }
expect fail "exports: no shoal_ symbol" \
    "$here/check-exports.sh" --nm "$nm_cmd" "$work/lib/libnopublic.so"

# Headers: one needing an include it lacks, one without an include guard.
mkdir -p "$work/inc/good" "$work/inc/noinc" "$work/inc/noguard"
printf '#ifndef G_H\n#define G_H\n#include <stddef.h>\nsize_t g(void);\n#endif\n' \
    >"$work/inc/good/g.h"
printf '#ifndef N_H\n#define N_H\nsize_t n(void);\n#endif\n' >"$work/inc/noinc/n.h"
printf 'struct s { int x; };\n' >"$work/inc/noguard/s.h"
expect pass "headers: a self-contained header" \
    "$here/check-headers.sh" --cc "$cc" "$work/inc/good"
expect fail "headers: missing <stddef.h>" \
    "$here/check-headers.sh" --cc "$cc" "$work/inc/noinc"
expect fail "headers: missing include guard" \
    "$here/check-headers.sh" --cc "$cc" "$work/inc/noguard"
if [[ -n $cxx ]]; then
    # Valid C, invalid C++: void * does not convert implicitly there.
    mkdir -p "$work/inc/conly"
    printf '#ifndef C_H\n#define C_H\nstatic inline int *c_int(void *p) { return p; }\n#endif\n' \
        >"$work/inc/conly/c.h"
    expect pass "headers: C-only header, C checked alone" \
        "$here/check-headers.sh" --cc "$cc" "$work/inc/conly"
    expect fail "headers: C-only header, C++ checked too" \
        "$here/check-headers.sh" --cc "$cc" --cxx "$cxx" "$work/inc/conly"
fi

# Layering: an upward include and a cross-transport include.
make_tree() {
    rm -rf "$work/tree"
    mkdir -p "$work/tree/src/base" "$work/tree/src/am" \
        "$work/tree/src/wire/shm" "$work/tree/src/wire/tcp"
    touch "$work/tree/src/base/base.h" "$work/tree/src/am/am.h" \
        "$work/tree/src/wire/wire.h" "$work/tree/src/wire/tcp/tcp.h"
    printf '#include "base/base.h"\n#include "../wire.h"\n' >"$work/tree/src/wire/shm/ring.c"
    printf '#include "wire/wire.h"\n#include "base/base.h"\n' >"$work/tree/src/am/am.c"
}
make_tree
expect pass "layering: downward includes only" "$here/check-layering.sh" "$work/tree"
printf '#include "am/am.h"\n' >>"$work/tree/src/base/base.h"
expect fail "layering: base includes am" "$here/check-layering.sh" "$work/tree"
make_tree
printf '#include "../tcp/tcp.h"\n' >>"$work/tree/src/wire/shm/ring.c"
expect fail "layering: shm includes tcp" "$here/check-layering.sh" "$work/tree"

if [[ $failures -ne 0 ]]; then
    echo "FAIL: $failures checker self-test(s) did not give the expected verdict"
    exit 1
fi
echo "OK: every ABI checker rejects what it should"
