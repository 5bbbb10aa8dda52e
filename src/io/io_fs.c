/*
 * Which file system a file is on (statfs f_type), and whether collective
 * buffering is used on it by default.
 *
 * Measured (docs/IO.md, "Collective buffering on a network file system"):
 * on one host's page cache (tmpfs, ext4) each rank's own list IO beat the
 * aggregators in 30 of 37 cases; across namespace hosts on a network file
 * system (sshfs, FUSE) the aggregators won for every noncontiguous
 * collective pattern and lost for contiguous ones.  So `automatic` turns
 * collective buffering on for files on the network and cluster file
 * systems below (when some rank's view has holes, io_cb_decide), and
 * leaves it off on every other (local) file system.  FUSE is in the list:
 * the kernel cannot tell a FUSE file system's kind, and the ones found on
 * clusters (sshfs, GlusterFS, CephFS's and JuiceFS's clients, s3fs,
 * gcsfuse, ...) are network ones; every request is a round trip to a
 * daemon in any case.  The hint shoal_netfs overrides the list.
 *
 * FUSE's fcntl locks are the client kernel's own unless the file system
 * implements them, and sshfs (like most) does not: a lock taken on one
 * host does not keep out another host's writes.  Data sieving of writes
 * (a read-modify-write of windows under a lock) would lose other hosts'
 * bytes there (found by io_netfs_hosts.sh), so on FUSE romio_ds_write's
 * automatic does not sieve (io_sieve_on).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/vfs.h>

#include "io/io.h"

#define FUSE_MAGIC 0x65735546UL

static const struct {
    unsigned long magic;
    const char *name;
    int netfs;
} fs_table[] = {
    /* network and cluster file systems: collective buffering by default */
    {0x6969UL, "nfs", 1},
    {FUSE_MAGIC, "fuse", 1}, /* fuse and fuseblk */
    {0x0bd00bd0UL, "lustre", 1},
    {0x47504653UL, "gpfs", 1},
    {0x19830326UL, "beegfs", 1},
    {0xff534d42UL, "cifs", 1},
    {0xfe534d42UL, "smb2", 1},
    {0x517bUL, "smb", 1},
    {0x00c36400UL, "ceph", 1},
    {0x01021997UL, "9p", 1},
    {0x5346414fUL, "afs", 1},
    {0x6b414653UL, "afs", 1},
    {0x73757245UL, "coda", 1},
    {0xaad7aaeaUL, "panfs", 1},
    {0x20030528UL, "orangefs", 1},
    {0x01161970UL, "gfs2", 1},
    {0x7461636fUL, "ocfs2", 1},
    {0x564cUL, "ncp", 1},
    /* local ones, named for MPI_File_get_info */
    {0xef53UL, "ext4", 0}, /* ext2, ext3, ext4 */
    {0x58465342UL, "xfs", 0},
    {0x9123683eUL, "btrfs", 0},
    {0x01021994UL, "tmpfs", 0},
    {0x858458f6UL, "ramfs", 0},
    {0x794c7630UL, "overlayfs", 0},
    {0x2fc12fc1UL, "zfs", 0},
    {0xf2f52010UL, "f2fs", 0},
    {0x4d44UL, "vfat", 0},
    {0x5346544eUL, "ntfs", 0},
    {0x3153464aUL, "jfs", 0},
    {0x52654973UL, "reiserfs", 0},
};

const char *io_fs_name(long magic, int *netfs, int *nolocks)
{
    static __thread char hex[24];
    unsigned long m = (unsigned long)magic & 0xffffffffUL;

    for (size_t i = 0; i < sizeof(fs_table) / sizeof(fs_table[0]); i++)
        if (fs_table[i].magic == m) {
            if (netfs != NULL)
                *netfs = fs_table[i].netfs;
            if (nolocks != NULL)
                *nolocks = fs_table[i].magic == FUSE_MAGIC;
            return fs_table[i].name;
        }
    if (netfs != NULL)
        *netfs = 0;
    if (nolocks != NULL)
        *nolocks = 0;
    snprintf(hex, sizeof(hex), "0x%lx", m);
    return hex;
}

int io_fs_kind(int fd, long *magic, const char **name, int *nolocks)
{
    struct statfs sf;
    int netfs = 0;

    *magic = 0;
    if (fstatfs(fd, &sf) == 0)
        *magic = (long)sf.f_type;
    *name = io_fs_name(*magic, &netfs, nolocks);
    return netfs;
}
