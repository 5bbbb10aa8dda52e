#!/usr/bin/env bash
# usage: io_fs.sh <shoalrun> <program args...>
# Runs one MPI-IO test program at 4 ranks on two more file systems than
# /tmp: a tmpfs and an ext4 file system on a loop device, each mounted
# here for the run (IO_TEST_DIR tells the program where) and unmounted at
# the end.  Needs root (mount); skips (exit 77) with the reason where
# either cannot be mounted.
set -u
shoalrun=$1
shift
base=$(mktemp -d /tmp/shoal-io-fs.XXXXXX)
mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    rm -rf "$base"
}
trap cleanup EXIT
skip() { echo "SKIP: $*"; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "mounting a tmpfs and a loop device needs root"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (apt-get install e2fsprogs)"
mkdir -p "$base/tmpfs" "$base/ext4"
mount -t tmpfs -o size=256m shoal-io-tmpfs "$base/tmpfs" 2>"$base/err" ||
    skip "cannot mount a tmpfs: $(head -1 "$base/err")"
mounted+=("$base/tmpfs")
truncate -s 256M "$base/ext4.img"
mkfs.ext4 -q -F "$base/ext4.img" >"$base/err" 2>&1 ||
    skip "mkfs.ext4 failed: $(head -1 "$base/err")"
mount -o loop "$base/ext4.img" "$base/ext4" 2>"$base/err" ||
    skip "cannot mount an ext4 loop device: $(head -1 "$base/err")"
mounted+=("$base/ext4")

status=0
for fs in tmpfs ext4; do
    want=$fs
    got=$(stat -f -c %T "$base/$fs")
    [[ $fs == ext4 ]] && want=ext2/ext3 # stat's name for the ext family
    if [[ $got != "$want" ]]; then
        echo "FAIL: $base/$fs is $got, not $fs"
        status=1
        continue
    fi
    echo "== $* on $fs"
    if ! IO_TEST_DIR="$base/$fs" "$shoalrun" -n 4 --timeout 100 "$@"; then
        echo "FAIL: $* on $fs"
        status=1
    fi
    if [[ -n $(ls -A "$base/$fs" | grep -v lost+found) ]]; then
        echo "FAIL: left behind on $fs: $(ls -A "$base/$fs")"
        status=1
    fi
done
exit $status
