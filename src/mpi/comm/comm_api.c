/*
 * Communicator queries and bookkeeping: size, rank, compare, names, info,
 * free; and the hooks the core calls when a communicator is duplicated or
 * destroyed.  Construction is in comm_dup.c, comm_create.c,
 * comm_split.c and comm_intercomm.c.
 */
#include <string.h>

#include "mpi/comm/comm.h"
#include "mpi/comm/topo.h"

/* Info objects this file keeps are private copies (info.c). */
static void info_drop(MPI_Info *info)
{
    if (*info != MPI_INFO_NULL)
        PMPI_Info_free(info);
    *info = MPI_INFO_NULL;
}

int mpi_comm_make(MPI_Comm parent, MPI_Group group, MPI_Group remote,
                  uint32_t ctx, MPI_Comm *comm_p)
{
    int rc = mpi_comm_build(parent, group, remote, ctx, comm_p);

    if (rc != MPI_SUCCESS)
        mpi_ctx_free(ctx);
    return rc;
}

void mpi_comm_destroy_hook(MPI_Comm comm)
{
    mpi_attr_delete_all(MPI_ATTR_COMM, comm, &comm->attrs);
    mpi_topo_free(comm->topo);
    comm->topo = NULL;
    info_drop(&comm->info);
    comm->name[0] = '\0';
}

int mpi_comm_dup_hook(MPI_Comm from, MPI_Comm to)
{
    int rc = mpi_attr_copy_all(MPI_ATTR_COMM, from, from->attrs, &to->attrs);

    if (rc != MPI_SUCCESS)
        return rc;
    if (from->topo != NULL) {
        rc = mpi_topo_dup(from->topo, &to->topo);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (from->info != MPI_INFO_NULL && to->info == MPI_INFO_NULL)
        rc = PMPI_Info_dup(from->info, &to->info);
    return rc;
}

/* ---- queries ------------------------------------------------------------------ */

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    MPI_CHECK_INIT("MPI_Comm_size");
    MPI_COMM_CHECK(comm, "MPI_Comm_size");
    if (size == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = comm->size;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    MPI_CHECK_INIT("MPI_Comm_rank");
    MPI_COMM_CHECK(comm, "MPI_Comm_rank");
    if (rank == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = comm->rank;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_rank)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    MPI_CHECK_INIT("MPI_Comm_test_inter");
    MPI_COMM_CHECK(comm, "MPI_Comm_test_inter");
    if (flag == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_test_inter",
                         "flag is NULL");
    *flag = comm->is_inter != 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    MPI_CHECK_INIT("MPI_Comm_remote_size");
    MPI_COMM_CHECK(comm, "MPI_Comm_remote_size");
    if (!comm->is_inter)
        return mpi_error(comm, MPI_ERR_COMM, "MPI_Comm_remote_size",
                         "not an intercommunicator");
    if (size == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_remote_size",
                         "size is NULL");
    *size = comm->remote_size;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_remote_size)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int local, remote;

    MPI_CHECK_INIT("MPI_Comm_compare");
    MPI_COMM_CHECK(comm1, "MPI_Comm_compare");
    MPI_COMM_CHECK(comm2, "MPI_Comm_compare");
    if (result == NULL)
        return mpi_error(comm1, MPI_ERR_ARG, "MPI_Comm_compare",
                         "result is NULL");
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (comm1->is_inter != comm2->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    local = mpi_group_cmp(comm1->group, comm2->group);
    remote = comm1->is_inter
                 ? mpi_group_cmp(comm1->remote_group, comm2->remote_group)
                 : MPI_IDENT;
    if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL)
        *result = MPI_UNEQUAL;
    else if (local == MPI_IDENT && remote == MPI_IDENT)
        *result = MPI_CONGRUENT;
    else
        *result = MPI_SIMILAR;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_compare)

/* ---- names and info ------------------------------------------------------------- */

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    MPI_CHECK_INIT("MPI_Comm_set_name");
    MPI_COMM_CHECK(comm, "MPI_Comm_set_name");
    if (name == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_name",
                         "name is NULL");
    /* Longer names are truncated, as the standard allows. */
    pthread_mutex_lock(&mpi_obj_lock);
    strncpy(comm->name, name, MPI_MAX_OBJECT_NAME - 1);
    comm->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_set_name)

static const char *default_name(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return "MPI_COMM_WORLD";
    if (comm == MPI_COMM_SELF)
        return "MPI_COMM_SELF";
    return "";
}

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    MPI_CHECK_INIT("MPI_Comm_get_name");
    MPI_COMM_CHECK(comm, "MPI_Comm_get_name");
    if (name == NULL || resultlen == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_name",
                         "name or resultlen is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    strcpy(name, comm->name[0] != '\0' ? comm->name : default_name(comm));
    pthread_mutex_unlock(&mpi_obj_lock);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    MPI_Info copy = MPI_INFO_NULL, old;
    int rc;

    MPI_CHECK_INIT("MPI_Comm_set_info");
    MPI_COMM_CHECK(comm, "MPI_Comm_set_info");
    if (info == MPI_INFO_NULL || info->magic != MPI_MAGIC_INFO)
        return mpi_error(comm, MPI_ERR_INFO, "MPI_Comm_set_info",
                         "invalid info object %p", (void *)info);
    rc = PMPI_Info_dup(info, &copy);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&mpi_obj_lock);
    old = comm->info;
    comm->info = copy;
    pthread_mutex_unlock(&mpi_obj_lock);
    info_drop(&old);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    MPI_CHECK_INIT("MPI_Comm_get_info");
    MPI_COMM_CHECK(comm, "MPI_Comm_get_info");
    if (info_used == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_info",
                         "info_used is NULL");
    if (comm->info == MPI_INFO_NULL)
        return PMPI_Info_create(info_used);
    return PMPI_Info_dup(comm->info, info_used);
}
SHOAL_MPI_WEAK(Comm_get_info)

/* ---- free ------------------------------------------------------------------------ */

static int comm_free(MPI_Comm *comm, const char *fn)
{
    MPI_Comm c;
    int rc;

    MPI_CHECK_INIT(fn);
    if (comm == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "comm is NULL");
    c = *comm;
    MPI_COMM_CHECK(c, fn);
    if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
        return mpi_error(c, MPI_ERR_COMM, fn, "cannot free %s",
                         default_name(c));
    /* Delete callbacks run now, not when pending operations finish. */
    rc = mpi_attr_delete_all(MPI_ATTR_COMM, c, &c->attrs);
    if (rc != MPI_SUCCESS)
        return mpi_error(c, rc, fn,
                         "an attribute delete callback returned %d", rc);
    *comm = MPI_COMM_NULL;
    mpi_comm_release(c);
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    return comm_free(comm, "MPI_Comm_free");
}
SHOAL_MPI_WEAK(Comm_free)

/*
 * Without dynamic processes a disconnect is a free; pending operations keep
 * the communicator alive until they complete.
 */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    return comm_free(comm, "MPI_Comm_disconnect");
}
SHOAL_MPI_WEAK(Comm_disconnect)
