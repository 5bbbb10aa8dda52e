/*
 * What a file handle says about itself: hints (MPI_File_set_info,
 * MPI_File_get_info), amode, group, atomicity.
 *
 * Hints are kept as given, unknown ones included, and handed back by
 * MPI_File_get_info; none of them changes what the implementation does
 * yet (docs/IO.md lists the ones that will).  Hints that differ between
 * ranks are therefore harmless: nothing waits on them.
 */
#define _GNU_SOURCE
#include "io/io.h"

int io_hints_merge(MPI_File fh, MPI_Info info)
{
    for (int i = 0; i < info->nkeys; i++)
        if (PMPI_Info_set(fh->hints, info->keys[i], info->vals[i]) !=
            MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
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
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *fn = "MPI_File_get_info";
    int rc;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (info_used == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "info_used is NULL");
    if ((rc = PMPI_Info_dup(fh->hints, info_used)) != MPI_SUCCESS)
        return io_error(fh, rc, fn, "could not copy the hints");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_info)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *fn = "MPI_File_get_amode";
    int rc;

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
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

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
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

    if ((rc = io_check_file(fh, fn)) != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return io_error(fh, MPI_ERR_ARG, fn, "flag is NULL");
    *flag = fh->atomic;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_atomicity)
