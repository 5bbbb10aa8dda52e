/*
 * MPI_Comm_dup and its variants: same groups, a fresh context, copies of
 * attributes (through their copy callbacks), topology and info hints.
 * The nonblocking forms run the agreement from the progress engine
 * (comm_idup.c), for intra- and intercommunicators alike.
 *
 * The _with_info forms give the duplicate the hints of their info argument
 * instead of the parent's; MPI_INFO_NULL there means no hints at all (an
 * empty info), as in MPICH and Open MPI.
 */
#include "mpi/comm/comm.h"

static int dup_core(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                    const char *fn)
{
    MPI_Comm c = MPI_COMM_NULL;
    uint32_t ctx;
    int rc;

    /* A failed dup (a copy callback's error among them) leaves no
     * communicator behind, and says so, as Open MPI and MPICH do. */
    *newcomm = MPI_COMM_NULL;
    rc = mpi_ctx_alloc(comm, comm->size, NULL, MPI_COMM_TAG_CTX, &ctx);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "agreeing on a context id failed");
    rc = mpi_comm_make(comm, comm->group,
                       comm->is_inter ? comm->remote_group : MPI_GROUP_NULL,
                       ctx, &c);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "building the duplicate failed");
    if (info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(info, &c->info);
    if (rc == MPI_SUCCESS)
        rc = mpi_comm_dup_hook(comm, c);
    if (rc != MPI_SUCCESS) {
        mpi_comm_release(c);
        return mpi_error(comm, rc, fn,
                         "copying attributes, topology or info failed");
    }
    *newcomm = c;
    return MPI_SUCCESS;
}

static int dup_check(MPI_Comm comm, MPI_Info info, int with_info,
                     MPI_Comm *newcomm, const char *fn)
{
    MPI_COMM_CHECK(comm, fn);
    if (newcomm == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (with_info && info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO)
        return mpi_error(comm, MPI_ERR_INFO, fn, "invalid info %p",
                         (void *)info);
    return MPI_SUCCESS;
}

/* The info a _with_info form passes on: MPI_INFO_NULL becomes an empty
 * info in *tmp (freed by the caller), so that the parent's hints are not
 * copied. */
static int hints_of(MPI_Comm comm, MPI_Info info, MPI_Info *tmp,
                    MPI_Info *use, const char *fn)
{
    int rc;

    *tmp = MPI_INFO_NULL;
    *use = info;
    if (info != MPI_INFO_NULL)
        return MPI_SUCCESS;
    rc = PMPI_Info_create(tmp);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "no memory for an empty info");
    *use = *tmp;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc;

    MPI_CHECK_INIT("MPI_Comm_dup");
    rc = dup_check(comm, MPI_INFO_NULL, 0, newcomm, "MPI_Comm_dup");
    if (rc != MPI_SUCCESS)
        return rc;
    return dup_core(comm, MPI_INFO_NULL, newcomm, "MPI_Comm_dup");
}
SHOAL_MPI_WEAK(Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int rc;

    MPI_CHECK_INIT("MPI_Comm_dup_with_info");
    MPI_Info tmp, use;

    rc = dup_check(comm, info, 1, newcomm, "MPI_Comm_dup_with_info");
    if (rc == MPI_SUCCESS)
        rc = hints_of(comm, info, &tmp, &use, "MPI_Comm_dup_with_info");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = dup_core(comm, use, newcomm, "MPI_Comm_dup_with_info");
    if (tmp != MPI_INFO_NULL)
        PMPI_Info_free(&tmp);
    return rc;
}
SHOAL_MPI_WEAK(Comm_dup_with_info)

static int idup(MPI_Comm comm, MPI_Info info, int with_info,
                MPI_Comm *newcomm, MPI_Request *request, const char *fn)
{
    MPI_Info tmp = MPI_INFO_NULL, use = info;
    int rc = dup_check(comm, info, with_info, newcomm, fn);

    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "request is NULL");
    if (with_info && (rc = hints_of(comm, info, &tmp, &use, fn)))
        return rc;
    rc = mpi_comm_idup_start(comm, use, newcomm, request);
    if (tmp != MPI_INFO_NULL)
        PMPI_Info_free(&tmp); /* the request keeps its own copy */
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "starting the duplicate failed");
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Comm_idup");
    return idup(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}
SHOAL_MPI_WEAK(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    MPI_CHECK_INIT("MPI_Comm_idup_with_info");
    return idup(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}
SHOAL_MPI_WEAK(Comm_idup_with_info)
