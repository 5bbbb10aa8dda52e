#!/usr/bin/env bash
# Checks that a shared library exports only public names.
#
# usage: check-exports.sh [--nm NM] <libshoal.so>
#
# Every dynamic symbol the library defines must match ^(shoal_|MPI_|PMPI_);
# the version node itself (an absolute symbol such as SHOAL_0, from
# cmake/libshoal.map) is not a symbol anyone can call and is ignored.  Fails
# too when no shoal_ symbol is exported: that means the version script or the
# SHOAL_API visibility markers stopped working.
set -euo pipefail

nm_cmd='nm'
if [[ ${1:-} == --nm ]]; then
    nm_cmd=$2
    shift 2
fi
if [[ $# -ne 1 ]]; then
    echo "usage: $0 [--nm NM] <shared-library>" >&2
    exit 2
fi
lib=$1
[[ -f $lib ]] || { echo "FAIL: no such library: $lib" >&2; exit 1; }
command -v "$nm_cmd" >/dev/null ||
    { echo "FAIL: '$nm_cmd' not found (apt-get install binutils)" >&2; exit 1; }

# "<value> <type> <name>[@@VERSION]" for each defined dynamic symbol.
symbols=$("$nm_cmd" -D --defined-only "$lib" |
    awk 'NF >= 3 { sub(/@.*/, "", $3)
                   if (!($2 == "A" && $3 ~ /^SHOAL_[0-9][0-9._]*$/)) print $3 }' |
    sort -u)

offenders=$(grep -Ev '^(shoal_|MPI_|PMPI_|MPIX_Shoal_|MPIX_Comm_|PMPIX_Comm_|MPIX_Checkpoint|PMPIX_Checkpoint)' <<<"$symbols" || true)
public_count=$(grep -c '^shoal_' <<<"$symbols" || true)

status=0
if [[ -n $offenders ]]; then
    echo "FAIL: $lib exports symbols outside shoal_*, MPI_*, PMPI_*, MPIX_Shoal_*, (P)MPIX_Comm_*, (P)MPIX_Checkpoint*:"
    sed 's/^/    /' <<<"$offenders"
    echo "Internal names must stay inside the library: it builds with"
    echo "-fvisibility=hidden and links with cmake/libshoal.map, so look for a"
    echo "pattern in the map and a SHOAL_API or visibility(\"default\") marker"
    echo "that let these through."
    status=1
fi
if [[ $public_count -eq 0 ]]; then
    echo "FAIL: $lib exports no shoal_* symbol at all"
    echo "(is SHOAL_API missing, or does cmake/libshoal.map hide everything?)"
    status=1
fi
# Objects programs take the address of are copied into each program at its
# link (copy relocations): their exported sizes are part of the ABI and
# must stay those of mpi.h's SHOAL_MPI_*_STORAGE (and the predefined
# arrays' strides), or a program built against an earlier libshoal.so.0
# overruns its copy.
sizes=$("$nm_cmd" -D --defined-only -S "$lib" |
    awk 'NF >= 4 { sub(/@.*/, "", $4); print $4, $2 }')
for want in shoal_mpi_comm_world:1024 shoal_mpi_comm_self:1024 \
            shoal_mpi_group_empty:128 shoal_mpi_info_env:128 \
            shoal_mpi_message_no_proc:512 shoal_mpi_dt_predef:65536 \
            shoal_mpi_op_predef:2048 shoal_mpi_errh_predef:512; do
    name=${want%%:*}
    hex=$(awk -v n="$name" '$1 == n { print $2; exit }' <<<"$sizes")
    if [[ -z $hex ]] || (( 16#$hex != ${want#*:} )); then
        echo "FAIL: $name is exported with size ${hex:+0x$hex}${hex:-none}," \
             "not ${want#*:} bytes (SHOAL_MPI_*_STORAGE, _SLOTS in mpi.h)"
        status=1
    fi
done
if [[ $status -eq 0 ]]; then
    echo "OK: $lib exports $(wc -l <<<"$symbols") symbols, all public:"
    sed 's/^/    /' <<<"$symbols"
fi
exit "$status"
