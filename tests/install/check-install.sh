#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and uses it as a user would.
#
# usage: check-install.sh --source-dir DIR --build-dir DIR --cc CC --cmake CMAKE
#                         --version X.Y.Z [--cflags "FLAGS"] <tests/install dir>
#
# 1. cmake --install DIR --prefix TMP; the expected files are there, internal
#    ones are not (the installed headers are exactly the public ones), and
#    installed programs find their libraries.
# 2. consumer.c built with `pkg-config --cflags --libs shoal` and run
#    (skipped, with a message, when pkg-config is not installed).
# 3. consumer.c built by a CMake project using find_package(Shoal) and
#    Shoal::shoal, and run.
# --cflags passes extra flags to both builds (the sanitizer flags, which a
# program linking a sanitized libshoal needs too).
set -euo pipefail

source_dir='' build_dir='' cc='' cmake_cmd='' version='' extra_cflags=''
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
    --source-dir) source_dir=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --cmake) cmake_cmd=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --cflags) extra_cflags=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
if [[ -z $source_dir || -z $build_dir || -z $cc || -z $cmake_cmd || -z $version || $# -ne 1 ]]; then
    echo "usage: $0 --source-dir DIR --build-dir DIR --cc CC --cmake CMAKE --version V [--cflags F] <dir>" >&2
    exit 2
fi
here=$1
read -r -a cflags <<<"$extra_cflags"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-install.XXXXXX")
# cmake --install rewrites the build tree's install_manifest.txt, which a
# real `make install` left there for uninstalling: keep it as it was.
manifest=$build_dir/install_manifest.txt
[[ -f $manifest ]] && cp -p "$manifest" "$tmp/manifest.saved"
cleanup() {
    if [[ -f $tmp/manifest.saved ]]; then
        cp -p "$tmp/manifest.saved" "$manifest"
    else
        rm -f "$manifest"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
prefix=$tmp/prefix
failed=0
fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
}

echo "== cmake --install $build_dir --prefix $prefix"
"$cmake_cmd" --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log"
    echo "FAIL: cmake --install failed"
    exit 1
}

# The library directory is wherever GNUInstallDirs put it (lib or lib64 or a
# multiarch folder): find it by the pkg-config file.
pc=$(find "$prefix" -name shoal.pc -path '*/pkgconfig/*' | head -n 1)
[[ -n $pc ]] || { echo "FAIL: no shoal.pc installed"; find "$prefix" | sed "s|$prefix|    PREFIX|"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")

echo "== installed files"
for f in "$libdir/libshoal.so" "$libdir/libshoal.so.${version%%.*}" "$libdir/libshoal.so.$version" \
    "$prefix/include/shoal.h" "$prefix/include/shoal/errors.h" \
    "$prefix/include/shoal/version.h" "$libdir/cmake/Shoal/ShoalConfig.cmake" \
    "$libdir/cmake/Shoal/ShoalConfigVersion.cmake" "$libdir/cmake/Shoal/ShoalTargets.cmake"; do
    if [[ -e $f ]]; then echo "ok: ${f#"$prefix"/}"; else fail "missing ${f#"$prefix"/}"; fi
done
grep -q "SHOAL_VERSION_STRING \"$version\"" "$prefix/include/shoal/version.h" 2>/dev/null ||
    fail "include/shoal/version.h does not say version $version"
# The installed headers are exactly the public ones: include/ of the source
# tree and the generated ones in include/ of the build tree.
public_headers() {
    local dir
    for dir in "$source_dir/include" "$build_dir/include"; do
        (cd "$dir" && find . -name '*.h' -type f | sed 's|^\./||')
    done | sort -u
}
installed_headers=$(cd "$prefix/include" && find . -type f | sed 's|^\./||' | sort)
while IFS= read -r h; do
    [[ -n $h ]] && fail "public header include/$h not installed"
done < <(comm -23 <(public_headers) <(echo "$installed_headers"))
while IFS= read -r h; do
    [[ -n $h ]] && fail "installed include/$h is not a public header"
done < <(comm -13 <(public_headers) <(echo "$installed_headers"))
# Things that must stay in the build tree.
while IFS= read -r f; do
    fail "installed an internal file: ${f#"$prefix"/}"
done < <(find "$prefix" \( -name '*.in' -o -name 'libshoal_internal*' -o -name 'test_*' \))
# Installed programs must find their shared libraries without help.
if [[ -d $prefix/bin ]]; then
    for prog in "$prefix"/bin/*; do
        [[ -f $prog && -x $prog ]] || continue
        head -c 4 "$prog" | grep -q ELF || continue
        if ldd "$prog" 2>&1 | grep -q 'not found'; then
            fail "${prog#"$prefix"/}: libraries not found:"
            ldd "$prog" | grep 'not found' | sed 's/^/    /'
        else
            echo "ok: ${prog#"$prefix"/} finds its libraries"
        fi
    done
fi

echo "== consumer via pkg-config"
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_PATH=$libdir/pkgconfig
    pc_version=$(pkg-config --modversion shoal)
    [[ $pc_version == "$version" ]] || fail "pkg-config --modversion shoal says $pc_version, expected $version"
    read -r -a pc_flags <<<"$(pkg-config --cflags --libs shoal)"
    pc_libdir=$(pkg-config --variable=libdir shoal)
    echo "pkg-config --cflags --libs shoal: ${pc_flags[*]}"
    if "$cc" -std=c11 -Wall -Wextra -Werror "${cflags[@]}" "$here/consumer.c" \
        "${pc_flags[@]}" "-Wl,-rpath,$pc_libdir" -o "$tmp/consumer-pc"; then
        "$tmp/consumer-pc" || fail "the pkg-config consumer failed (exit $?)"
    else
        fail "could not build the consumer with pkg-config flags"
    fi
else
    echo "SKIP this half: pkg-config is not installed (apt-get install pkg-config)"
fi

echo "== consumer via find_package(Shoal)"
if "$cmake_cmd" -S "$here/consumer-cmake" -B "$tmp/consumer-build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="${cflags[*]}" -DSHOAL_EXPECTED_VERSION="$version" \
    -DCONSUMER_SOURCE="$here/consumer.c" >"$tmp/consumer-cmake.log" 2>&1 &&
    "$cmake_cmd" --build "$tmp/consumer-build" >>"$tmp/consumer-cmake.log" 2>&1; then
    grep 'Shoal .* from' "$tmp/consumer-cmake.log" || true
    "$tmp/consumer-build/consumer" || fail "the CMake consumer failed (exit $?)"
else
    cat "$tmp/consumer-cmake.log"
    fail "could not build the consumer with find_package(Shoal)"
fi

if [[ $failed -ne 0 ]]; then
    echo "FAIL: $failed install check(s) failed"
    exit 1
fi
echo "OK: the installed library works through pkg-config and find_package"
