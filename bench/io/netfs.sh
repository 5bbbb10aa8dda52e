#!/bin/bash
# A network file system across network-namespace hosts, for measuring and
# testing MPI-IO on one:
#
#   bench/io/netfs.sh [--hosts N] [--rate RATE] [--sshfs-opts OPTS]
#                     [--server-dir DIR] -- CMD [ARGS...]
#
# Makes a switch namespace with a bridge, a file server namespace ($P-s,
# 10.78.5.2) running its own sshd (a temporary key, config and host key),
# and N (2) host namespaces $P-h0 ... (10.78.5.10+i), each on a veth pair
# to the bridge.  Each host mounts the server's export directory with sshfs
# (FUSE; the sshfs process lives in the host's network namespace, so its
# traffic crosses the veths and the bridge) at a mount point of its own,
# and $NETFS_RSH, a remote-exec command for shoalrun (SHOAL_RSH), enters a
# host's namespaces and bind-mounts that host's mount point at one common
# path, $NETFS_DIR: every rank, on whichever host, sees the file system at
# the same name, each through its own client.  In the server namespace
# $NETFS_DIR is the export directory itself (a local file system there),
# like an NFS server that also computes.
#
# With --rate (e.g. 1gbit, 10gbit) every veth end is shaped with a token
# bucket (tc tbf) in both directions: a link of that speed (this kernel has
# no netem, so no added delay).  --sshfs-opts are sshfs's -o options
# (default direct_io,dir_cache=no: no client keeps file data, so each
# rank reads what the server has; sshfs has no cache coherence between
# clients).  --server-dir puts the export on DIR (default: a directory
# under /tmp, the VM's ext4).
#
# CMD runs in the root namespaces with, in its environment:
#   NETFS_DIR    the common path of the shared directory
#   NETFS_RSH    the remote-exec command (export SHOAL_RSH=$NETFS_RSH)
#   NETFS_HOSTS  shoalrun's --host list, NAME=ADDRESS:2 for each host
#   NETFS_H0     the first host's namespace (start the launcher there:
#                $NETFS_RSH $NETFS_H0 shoalrun ...)
#   NETFS_SERVER the server's namespace, NETFS_EXPORT its directory,
#                NETFS_SERVER_HOST its --host word (NAME=ADDRESS:2), for
#                ranks on the file server, which see a local file system
# and its exit status is the script's.  Everything is torn down at the
# end, on failure or on a signal (trap): the sshfs mounts unmounted, every
# process in the namespaces killed, the namespaces deleted, temporary
# files removed.  Needs root, ip netns, sshd, sshfs and /dev/fuse; exits
# 77 with the reason where one is missing.
set -u
nhosts=2
rate=""
sshfs_opts="direct_io,dir_cache=no"
server_dir=""
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) nhosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --sshfs-opts) sshfs_opts=$2; shift 2 ;;
    --server-dir) server_dir=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "netfs.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: netfs.sh [options] -- CMD [ARGS...]" >&2; exit 2; }

case_name=netfs
P="nfs$$"
M="shoalnetfs-$$-$RANDOM"
made=""
tmp=$(mktemp -d /tmp/shoal-netfs.XXXXXX)
mounts=""

fail() { echo "netfs.sh: $*" >&2; exit 1; }
# skip, kill_namespaces, make_bridge, bridge_host
. "$(dirname "$0")/../../tests/multihost/mh_lib.sh" ||
    { echo "netfs.sh: cannot source tests/multihost/mh_lib.sh" >&2; exit 1; }

cleanup() {
    local m
    for m in $mounts; do
        fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    kill_namespaces
    for m in $mounts; do
        umount -l "$m" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

[ "$(id -u)" -eq 0 ] || skip "network namespaces, sshd and mounts need root"
ip netns list >/dev/null 2>&1 || skip "no ip netns (iproute2)"
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || skip "sshd is not installed (Debian: apt-get install openssh-server)"
command -v ssh-keygen >/dev/null || skip "ssh-keygen is not installed (openssh-client)"
command -v sshfs >/dev/null || skip "sshfs is not installed (Debian: apt-get install sshfs)"
[ -c /dev/fuse ] || skip "no /dev/fuse (FUSE)"
command -v nsenter >/dev/null || skip "no nsenter (util-linux)"

# ---- hosts ------------------------------------------------------------------
NET=10.78.5
make_bridge
bridge_host 0 "$P-s" "$NET.2"
for i in $(seq 0 $((nhosts - 1))); do
    bridge_host $((i + 1)) "$P-h$i" "$NET.$((10 + i))"
done

if [ -n "$rate" ]; then
    # Both directions of every link: the host's end shapes what it sends,
    # the bridge port what it receives.  The bucket holds a few 64 KiB
    # segments (veth keeps segmentation offload).
    for i in $(seq 0 "$nhosts"); do
        if [ "$i" -eq 0 ]; then ns=$P-s; else ns=$P-h$((i - 1)); fi
        tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 512kb \
            latency 20ms 2>"$tmp/err" ||
            skip "tc tbf unavailable: $(head -1 "$tmp/err")"
        tc -n "$P-sw" qdisc add dev "p$i" root tbf rate "$rate" burst 512kb \
            latency 20ms || fail "tc on p$i"
    done
fi

# ---- the file server ----------------------------------------------------------
export_dir=${server_dir:-$tmp/export}
mkdir -p "$export_dir" "$tmp/shared" || fail "mkdir"
ssh-keygen -q -t ed25519 -N '' -C shoal-netfs-host -f "$tmp/host_key" ||
    fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C shoal-netfs-client -f "$tmp/id" ||
    fail "ssh-keygen"
cp "$tmp/id.pub" "$tmp/authorized_keys"
[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; }
cat >"$tmp/sshd_config" <<EOF
ListenAddress $NET.2:22
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
StrictModes no
AllowTcpForwarding no
X11Forwarding no
MaxStartups 50
Subsystem sftp internal-sftp
EOF
"$SSHD" -t -f "$tmp/sshd_config" 2>"$tmp/err" ||
    fail "sshd rejects its configuration: $(cat "$tmp/err")"
ip netns exec "$P-s" "$SSHD" -f "$tmp/sshd_config" -E "$tmp/sshd.log" ||
    fail "sshd did not start: $(cat "$tmp/sshd.log")"

# ---- the clients --------------------------------------------------------------
for i in $(seq 0 $((nhosts - 1))); do
    mp=$tmp/mnt-$P-h$i
    mkdir -p "$mp"
    ok=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        if nsenter --net="/run/netns/$P-h$i" sshfs \
            -o "IdentityFile=$tmp/id,IdentitiesOnly=yes,BatchMode=yes" \
            -o "StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null" \
            -o "LogLevel=ERROR,Compression=no,ConnectTimeout=5" \
            -o "$sshfs_opts" "root@$NET.2:$export_dir" "$mp" 2>"$tmp/err"; then
            ok=1
            break
        fi
        sleep 0.3 # sshd may not listen yet
    done
    [ -n "$ok" ] || skip "sshfs mount failed: $(head -1 "$tmp/err")"
    mounts="$mounts $mp"
    [ "$(stat -f -c %T "$mp")" = fuseblk ] || [ "$(stat -f -c %T "$mp")" = fuse ] ||
        fail "$mp is $(stat -f -c %T "$mp"), not FUSE"
done

# NETFS_RSH NS CMD...: CMD in namespace NS with the host's view of the
# shared directory at $tmp/shared (ip netns exec gives it a mount
# namespace of its own, so the bind mount stays there).
cat >"$tmp/rsh" <<EOF
#!/bin/sh
ns=\$1
shift
case \$ns in
$P-s) src="$export_dir" ;;
*) src="$tmp/mnt-\$ns" ;;
esac
exec ip netns exec "\$ns" sh -c 'mount --bind "\$0" "\$1" && shift && exec "\$@"' \\
    "\$src" "$tmp/shared" "\$@"
EOF
chmod +x "$tmp/rsh"

hosts=""
for i in $(seq 0 $((nhosts - 1))); do
    hosts="$hosts${hosts:+,}$P-h$i=$NET.$((10 + i)):2"
done
NETFS_DIR=$tmp/shared NETFS_RSH=$tmp/rsh NETFS_HOSTS=$hosts NETFS_H0=$P-h0 \
    NETFS_SERVER=$P-s NETFS_EXPORT=$export_dir \
    NETFS_SERVER_HOST="$P-s=$NET.2:2" "$@"
