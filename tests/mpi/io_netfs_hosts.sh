#!/usr/bin/env bash
# usage: io_netfs_hosts.sh <shoalrun> <mpi_io_cbauto>
# Collective buffering's automatic choice across two network-namespace
# hosts that disagree about the file system: bench/io/netfs.sh makes a
# file server namespace (sshd) and a client host that mounts the server's
# directory with sshfs (FUSE, over a veth pair and a bridge).  Ranks 0-1
# run on the file server, where the directory is a local file system, and
# ranks 2-3 on the client, where it is FUSE; the open's agreement must make
# every rank take it for a network file system (io_cbauto mixed: every
# rank's shoal_netfs_used and shoal_cb_*_used checked, every byte of the
# strided collective writes checked on the server).  Skips (77) with the
# reason where root, ip netns, sshd, sshfs or /dev/fuse are missing.
set -u
shoalrun=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../bench/io/netfs.sh" --hosts 1 -- bash -c '
    "$NETFS_RSH" "$NETFS_H0" "$0" --rsh "$NETFS_RSH" --timeout 60 \
        --host "$NETFS_SERVER_HOST,$NETFS_HOSTS" -n 4 \
        env IO_TEST_DIR="$NETFS_DIR" "$1" mixed' "$shoalrun" "$prog"
