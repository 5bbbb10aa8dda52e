#!/usr/bin/env bash
# usage: io_netfs.sh <shoalrun> <mpi_io_cbauto> [NP]
# Collective buffering's automatic choice by file system (io_cbauto.c) at
# NP (4) ranks on three file systems: a tmpfs and the test's default
# directory (/tmp), both local (collective buffering stays off), and a
# FUSE file system, sshfs, served by sftp-server from a directory on the
# tmpfs (sshfs's ssh_command runs sftp-server itself: no sshd and no
# network needed), on which collective calls through views with holes go
# through the aggregators.  Every mount is made here and unmounted at the
# end (trap).  Needs root; skips (77) with the reason where sshfs, its
# sftp-server or /dev/fuse are missing (Debian: apt-get install sshfs
# openssh-sftp-server).
set -u
shoalrun=$1
prog=$2
np=${3:-4}
base=$(mktemp -d /tmp/shoal-io-netfs.XXXXXX)
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        fusermount3 -u -z "${mounted[i]}" 2>/dev/null ||
            umount -l "${mounted[i]}" 2>/dev/null
    done
    rm -rf "$base"
}
trap cleanup EXIT
skip() { echo "SKIP: $*"; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "mounting a tmpfs and FUSE needs root"
command -v sshfs >/dev/null || skip "no sshfs (Debian: apt-get install sshfs)"
sftp=""
for s in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server \
    /usr/lib/ssh/sftp-server /usr/libexec/sftp-server; do
    [[ -x $s ]] && { sftp=$s; break; }
done
[[ -n $sftp ]] || skip "no sftp-server (Debian: apt-get install openssh-sftp-server)"
[[ -c /dev/fuse ]] || skip "no /dev/fuse: FUSE is not available here"
command -v fusermount3 >/dev/null || command -v fusermount >/dev/null ||
    skip "no fusermount (Debian: apt-get install fuse3)"

mkdir -p "$base/tmpfs" "$base/fuse"
mount -t tmpfs -o size=64m shoal-io-netfs "$base/tmpfs" 2>"$base/err" ||
    skip "cannot mount a tmpfs: $(head -1 "$base/err")"
mounted+=("$base/tmpfs")
mkdir -p "$base/tmpfs/export" "$base/tmpfs/local"
printf '#!/bin/sh\nexec %s\n' "$sftp" >"$base/ssh"
chmod +x "$base/ssh"
sshfs -o "ssh_command=$base/ssh,direct_io,dir_cache=no" \
    "localhost:$base/tmpfs/export" "$base/fuse" 2>"$base/err" ||
    skip "sshfs mount failed (FUSE unusable here?): $(head -1 "$base/err")"
mounted+=("$base/fuse")

status=0
run() { # DIR KIND [FSNAME]
    local dir=$1
    shift
    echo "== io_cbauto $* in $dir"
    if ! IO_TEST_DIR=$dir "$shoalrun" -n "$np" --timeout 60 "$prog" "$@"; then
        echo "FAIL: io_cbauto $* in $dir"
        status=1
    fi
}
got=$(stat -f -c %T "$base/fuse")
[[ $got == fuseblk || $got == fuse ]] ||
    { echo "FAIL: $base/fuse is $got, not FUSE"; exit 1; }
run "$base/tmpfs/local" local tmpfs
run "$base/fuse" net fuse
run /tmp local
left=$(find "$base/tmpfs/export" "$base/tmpfs/local" -mindepth 1)
if [[ -n $left ]]; then
    echo "FAIL: left behind: $left"
    status=1
fi
exit $status
