/*
 * What a file handle says about itself: hints (MPI_File_set_info,
 * MPI_File_get_info), amode, group, atomicity.
 *
 * Hints are kept as given, unknown ones included, and handed back by
 * MPI_File_get_info.  Those that change behaviour (romio_cb_read,
 * romio_cb_write, cb_nodes, striping_unit, striping_factor: collective
 * buffering,
 * io_twophase.c; romio_ds_read: data sieving, io_list.c; shoal_io_uring:
 * io_uring.c) are read from rank 0's
 * copy and broadcast, so hints that differ between ranks are reconciled, never
 * a cause of a hang.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int io_hints_merge(MPI_File fh, MPI_Info info)
{
    for (int i = 0; i < info->nkeys; i++)
        if (PMPI_Info_set(fh->hints, info->keys[i], info->vals[i]) !=
            MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

/* A hint's value as a count; 0 when absent or not a positive number. */
static long long hint_count(MPI_Info info, const char *key)
{
    const char *v = mpi_info_lookup(info, key);
    char *end;
    long long n;

    if (v == NULL)
        return 0;
    n = strtoll(v, &end, 10);
    return end != v && *end == '\0' && n > 0 ? n : 0;
}

/* enable 1, disable 0, automatic (and no hint, or another value) 2. */
static int tristate(MPI_Info info, const char *key)
{
    const char *v = mpi_info_lookup(info, key);

    return v == NULL                   ? 2
           : strcmp(v, "enable") == 0  ? 1
           : strcmp(v, "disable") == 0 ? 0
                                       : 2;
}

int io_hints_apply(MPI_File fh)
{
    long long v[11] = {2, 2, 0, 0, 2, 16 << 20, 2, 2, 0, 2, 2};
    int rank, rc;

    PMPI_Comm_rank(fh->comm, &rank);
    if (rank == 0) {
        v[0] = tristate(fh->hints, "romio_cb_read");
        v[1] = tristate(fh->hints, "romio_cb_write");
        v[2] = hint_count(fh->hints, "cb_nodes");
        v[3] = hint_count(fh->hints, "striping_unit");
        if (hint_count(fh->hints, "cb_buffer_size") > 0)
            v[5] = hint_count(fh->hints, "cb_buffer_size");
        v[4] = tristate(fh->hints, "romio_ds_read");
        v[6] = tristate(fh->hints, "romio_ds_write");
        v[7] = tristate(fh->hints, "shoal_io_uring");
        v[8] = hint_count(fh->hints, "striping_factor");
        v[9] = tristate(fh->hints, "shoal_cb_double_buffer");
        v[10] = tristate(fh->hints, "shoal_netfs");
    }
    /* Rank 0's hints decide for everyone: a collective call never splits
     * between two paths because the ranks were given different hints. */
    if ((rc = PMPI_Bcast(v, 11, MPI_LONG_LONG, 0, fh->comm)) != MPI_SUCCESS)
        return rc;
    fh->cb_read_mode = (int)v[0];
    fh->cb_write_mode = (int)v[1];
    fh->netfs_mode = (int)v[10];
    fh->cb_nodes = v[2] > INT_MAX ? INT_MAX : (int)v[2];
    fh->cb_align = v[3];
    fh->ds_read = (int)v[4];
    fh->ds_write = (int)v[6];
    fh->cb_bufsize = v[5];
    fh->uring = (int)v[7];
    fh->cb_stripes = v[8] > INT_MAX ? INT_MAX : (int)v[8];
    fh->cb_double = (int)v[9];
    io_cb_decide(fh);
    return MPI_SUCCESS;
}

void io_cb_decide(MPI_File fh)
{
    /* automatic: on a network or cluster file system (io_fs.c, or
     * shoal_netfs=enable) for views with holes whose blocks average under
     * 8 KiB (reads: and are not sieved); not for contiguous views or
     * large blocks, where each rank's own requests are already large,
     * nor on local file systems (docs/IO.md: slower on one host's page
     * cache; across hosts on sshfs 1.3-8x faster for 1-4 KiB pieces and
     * the BT-IO-like checkpoint, slower for contiguous access, 32 KiB
     * pieces and sieved reads).
     * Every input is agreed (rank 0's hints, reductions at open and
     * set_view), so every rank decides the same. */
    int netfs = fh->netfs_mode == 2 ? fh->netfs_any : fh->netfs_mode;

    fh->cb_read = fh->cb_read_mode == 1 ||
                  (fh->cb_read_mode == 2 && netfs && fh->cbr_small_any);
    fh->cb_write = fh->cb_write_mode == 1 ||
                   (fh->cb_write_mode == 2 && netfs && fh->cbw_small_any);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *fn = "MPI_File_set_info";
    int rc;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO)
        return io_error(fh, MPI_ERR_INFO, fn, "invalid info object");
    if (info != MPI_INFO_NULL && io_hints_merge(fh, info) != MPI_SUCCESS)
        return io_error(fh, MPI_ERR_NO_MEM, fn, "no memory for the hints");
    if ((rc = io_hints_apply(fh)) != MPI_SUCCESS ||
        (rc = io_ds_agree(fh)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *fn = "MPI_File_get_info";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (info_used == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "info_used is NULL");
    if ((rc = PMPI_Info_dup(fh->hints, info_used)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "could not copy the hints");
    /* What Shoal chose, beside the hints as given: whether collective
     * calls use the aggregators now, and the file system (this rank's
     * name for it, and whether the ranks took it for a network one). */
    if ((rc = PMPI_Info_set(*info_used, "shoal_cb_read_used",
                            fh->cb_read ? "enable" : "disable")) !=
            MPI_SUCCESS ||
        (rc = PMPI_Info_set(*info_used, "shoal_cb_write_used",
                            fh->cb_write ? "enable" : "disable")) !=
            MPI_SUCCESS ||
        (rc = PMPI_Info_set(*info_used, "shoal_fs",
                            io_fs_name(fh->fs_magic, NULL, NULL))) !=
            MPI_SUCCESS ||
        (rc = PMPI_Info_set(*info_used, "shoal_netfs_used",
                            (fh->netfs_mode == 2 ? fh->netfs_any
                                                 : fh->netfs_mode)
                                ? "enable"
                                : "disable")) != MPI_SUCCESS) {
        PMPI_Info_free(info_used);
        return io_error(fh, rc, fn, "could not copy the hints");
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_info)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *fn = "MPI_File_get_amode";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (amode == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "amode is NULL");
    *amode = fh->amode;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_amode)

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    const char *fn = "MPI_File_get_group";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (group == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "group is NULL");
    if ((rc = PMPI_Comm_group(fh->comm, group)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "could not make the group");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_group)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *fn = "MPI_File_set_atomicity";
    int rc, v[2], all[2];

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    /* Collective, and the flag must be the same everywhere: agreeing on
     * it also orders the change after every rank's earlier accesses. */
    v[0] = flag != 0;
    v[1] = -(flag != 0);
    if ((rc = PMPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, fh->comm)) !=
        MPI_SUCCESS)
        return io_error(fh, rc, fn, "lost the other ranks");
    if (all[0] != -all[1])
        return io_error(fh, MPI_ERR_NOT_SAME, fn,
                        "flag differs between the ranks");
    fh->atomic = flag != 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    const char *fn = "MPI_File_get_atomicity";
    int rc;

    if ((rc = io_check_file_nowait(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = fh->atomic;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_atomicity)
