# Shared by the real-client drivers (pnetcdf.sh, hdf5.sh); sourced, not run.
#
# A driver is run as `<driver> BUILD_DIR [WORK_DIR]`: BUILD_DIR is Shoal's
# build tree (bin/mpicc and bin/mpiexec, which are shoalcc and shoalrun),
# WORK_DIR (default BUILD_DIR/clients) receives the fetched Debian source
# package, the client's build and its logs.  Nothing is written elsewhere.
#
# Environment: CLIENT_JOBS (make -j, default 2), CLIENT_NP (ranks, default 4),
# CLIENT_TIMEOUT (seconds per parallel test program, default 600).

set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 SHOAL_BUILD_DIR [WORK_DIR]" >&2
    exit 2
fi
SHOAL_BUILD=$(cd "$1" && pwd)
WORK=${2:-$SHOAL_BUILD/clients}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
JOBS=${CLIENT_JOBS:-2}
NP=${CLIENT_NP:-4}
PROG_TIMEOUT=${CLIENT_TIMEOUT:-600}
MPICC=$SHOAL_BUILD/bin/mpicc
MPIEXEC=$SHOAL_BUILD/bin/mpiexec
for tool in "$MPICC" "$MPIEXEC"; do
    [[ -x $tool ]] || { echo "error: $tool is missing; build Shoal first (make)"; exit 1; }
done
# Shoal's names first, so that a client's configure that looks for mpicc or
# mpiexec on PATH finds ours and never Open MPI's or MPICH's.
export PATH=$SHOAL_BUILD/bin:$PATH
# The clients build with their own flags; keep shoalcc on the system cc.
unset SHOAL_CC

# say <text>: a progress line that stands out in CI's log.
say() { echo "== [$CLIENT] $*"; }

# fetch_source <package>: unpacks `apt-get source <package>` under
# $WORK/src once and sets SRC to the unpacked tree and SRC_VERSION to its
# Debian version.  When the source cannot be fetched (no deb-src line, no
# network, no apt) the driver stops here, reporting SKIPPED, exit 0.
fetch_source() {
    local pkg=$1 dsc
    mkdir -p "$WORK/src"
    if [[ ! -f $WORK/src/$pkg.fetched ]]; then
        if ! command -v apt-get >/dev/null || ! command -v dpkg-source >/dev/null; then
            echo "SKIPPED: $CLIENT: apt-get or dpkg-source (package dpkg-dev) is not installed," \
                "so the Debian source package '$pkg' cannot be fetched"
            exit 0
        fi
        say "fetching the Debian source package: apt-get source $pkg"
        rm -rf "$WORK/src/$pkg"-* "$WORK/src/$pkg"_*
        if ! (cd "$WORK/src" && apt-get source -q "$pkg") >"$WORK/src/$pkg.fetch.log" 2>&1; then
            tail -n 5 "$WORK/src/$pkg.fetch.log" | sed 's/^/    /'
            echo "SKIPPED: $CLIENT: 'apt-get source $pkg' failed (see above; it needs a deb-src" \
                "line for Debian bookworm in /etc/apt/sources.list.d and apt-get update," \
                "as .ci/run sets up)"
            exit 0
        fi
        touch "$WORK/src/$pkg.fetched"
    fi
    dsc=$(ls "$WORK/src/$pkg"_*.dsc | head -n 1)
    SRC_VERSION=$(sed -n 's/^Version: //p' "$dsc")
    SRC=$(find "$WORK/src" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n 1)
    [[ -d $SRC ]] || { echo "error: no unpacked $pkg-* tree in $WORK/src"; exit 1; }
    say "source: Debian $pkg $SRC_VERSION in $SRC"
}

# check_linked <program>: the client's programs must run on Shoal: linked
# with libshoal, with no other MPI library.
check_linked() {
    local libs
    libs=$(ldd "$1")
    if ! grep -q 'libshoal\.so' <<<"$libs"; then
        echo "FAIL: $CLIENT: $1 is not linked with libshoal:"; echo "$libs"; exit 1
    fi
    if grep -Eq 'libmpi(ch)?\.so|libmpi_|libopen-' <<<"$libs"; then
        echo "FAIL: $CLIENT: $1 links another MPI library:"; echo "$libs"; exit 1
    fi
    say "$(basename "$1") is linked with $(awk '/libshoal/ {print $1; exit}' <<<"$libs") and no other MPI"
}

# timed <name> <command...>: runs a phase, with its time recorded for the
# summary; returns the command's status.
PHASES=()
timed() {
    local name=$1 start=$SECONDS rc=0
    shift
    "$@" || rc=$?
    PHASES+=("$(printf '%-28s %5ss%s' "$name" $((SECONDS - start)) "$([[ $rc -eq 0 ]] || echo "  FAILED (exit $rc)")")")
    return "$rc"
}

print_phases() {
    local p
    for p in "${PHASES[@]}"; do echo "    $p"; done
}
