/*
 * Communicators from groups alone (MPI 4.0 sections 7.4.2 and 7.6.2), the
 * sessions' way to make them (session.c makes the groups): no parent
 * communicator, only the group's members take part, and a string tag
 * tells concurrent constructions apart.
 *
 * Every process of the job runs MPI_COMM_WORLD inside the library,
 * whether or not the program called MPI_Init, so the members agree on a
 * context id through its collective context as MPI_Comm_create_group
 * does, with a tag range of their own (comm.h) folded from a hash of the
 * string tag.  Two constructions at once over overlapping groups whose
 * tags hash alike (1 in 2^26) would mix; the standard asks programs to
 * use distinct tags, and distinct tags almost always hash apart.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

/* 64-bit FNV-1a of the tag, salted so the two constructors differ. */
static uint64_t tag_hash(const char *tag, uint64_t salt)
{
    uint64_t h = 0xcbf29ce484222325ull ^ salt;

    for (const unsigned char *p = (const unsigned char *)tag; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

/* What may be handed to a new communicator: a predefined handler or one
 * of MPI_Comm_create_errhandler. */
static int comm_errh_ok(MPI_Errhandler eh)
{
    return eh != NULL && eh->magic == MPI_MAGIC_ERRH && eh->kind <= 4;
}

static int check_common(MPI_Group group, const char *stringtag,
                        MPI_Info info, MPI_Errhandler eh, MPI_Comm *newcomm,
                        const char *fn)
{
    if (!comm_errh_ok(eh))
        return mpi_error_raise(NULL, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                               "invalid error handler %p (a predefined one "
                               "or one from MPI_Comm_create_errhandler)",
                               (void *)eh);
    if (newcomm == NULL)
        return mpi_error_raise(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                               "newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    if (!mpi_group_ok(group) || group == MPI_GROUP_NULL)
        return mpi_error_raise(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                               "invalid group %p", (void *)group);
    if (stringtag == NULL ||
        strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
        return mpi_error_raise(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                               "stringtag is NULL or not shorter than "
                               "MPI_MAX_STRINGTAG_LEN (%d)",
                               MPI_MAX_STRINGTAG_LEN);
    if (info != MPI_INFO_NULL &&
        (info == NULL || info->magic != MPI_MAGIC_INFO))
        return mpi_error_raise(eh, MPI_COMM_NULL, MPI_ERR_INFO, fn,
                               "invalid info %p", (void *)info);
    if (group->rank == MPI_UNDEFINED)
        return mpi_error_raise(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                               "the calling process is not in the group");
    return MPI_SUCCESS;
}

/* The end of a construction: its error (rc) raised on eh, or the new
 * communicator c given eh in place of the parent's, and info's hints. */
static int finish(int rc, MPI_Comm c, MPI_Errhandler eh, MPI_Info info,
                  const char *fn, int nprocs)
{
    if (rc != MPI_SUCCESS)
        return mpi_error_raise(eh, MPI_COMM_NULL, rc, fn,
                               "agreeing on the communicator with its %d "
                               "processes failed",
                               nprocs);
    mpi_errh_retain(eh);
    MPI_Errhandler old = c->errh;
    c->errh = eh;
    mpi_errh_release(old);
    if (info != MPI_INFO_NULL)
        (void)PMPI_Comm_set_info(c, info);
    return MPI_SUCCESS;
}

/* A communicator of group's members, agreed through MPI_COMM_WORLD's
 * collective context under itag: an MPI class, no handler run. */
static int from_group(MPI_Group group, int itag, MPI_Comm *newcomm)
{
    mpi_members_t m;
    uint32_t ctx;
    int rc;

    /* World ranks are MPI_COMM_WORLD's ranks. */
    mpi_members_init(&m, MPI_COMM_WORLD, group->size, group->world, itag);
    rc = mpi_ctx_agree(&m, 1, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpi_comm_make(MPI_COMM_WORLD, group, MPI_GROUP_NULL, ctx,
                         newcomm);
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag,
                                MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_from_group";
    int rc;

    MPI_CHECK_INIT(fn);
    rc = check_common(group, stringtag, info, errhandler, newcomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = from_group(group, mpi_comm_tag_session(tag_hash(stringtag, 0)),
                    newcomm);
    return finish(rc, *newcomm, errhandler, info, fn, group->size);
}
SHOAL_MPI_WEAK(Comm_create_from_group)

/* Do groups a and b share a process? */
static int groups_overlap(MPI_Group a, MPI_Group b)
{
    for (int i = 0; i < a->size; i++)
        for (int j = 0; j < b->size; j++)
            if (a->world[i] == b->world[j])
                return 1;
    return 0;
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group,
                                      int remote_leader, const char *stringtag,
                                      MPI_Info info, MPI_Errhandler errhandler,
                                      MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create_from_groups";
    MPI_Comm local = MPI_COMM_NULL;
    int rc;

    MPI_CHECK_INIT(fn);
    rc = check_common(local_group, stringtag, info, errhandler, newintercomm,
                      fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mpi_group_ok(remote_group) || remote_group == MPI_GROUP_NULL ||
        remote_group->size == 0)
        return mpi_error_raise(errhandler, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                               "invalid or empty remote_group %p",
                               (void *)remote_group);
    if (local_leader < 0 || local_leader >= local_group->size)
        return mpi_error_raise(errhandler, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                               "local_leader %d is not in [0, %d)",
                               local_leader, local_group->size);
    if (remote_leader < 0 || remote_leader >= remote_group->size)
        return mpi_error_raise(errhandler, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                               "remote_leader %d is not in [0, %d)",
                               remote_leader, remote_group->size);
    if (groups_overlap(local_group, remote_group))
        return mpi_error_raise(errhandler, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                               "local_group and remote_group share a "
                               "process");
    /* The local side's communicator first (the two sides' groups are
     * disjoint, so one tag serves both), then the leaders meet through
     * MPI_COMM_WORLD. */
    rc = from_group(local_group,
                    mpi_comm_tag_session(tag_hash(stringtag, 1)), &local);
    if (rc == MPI_SUCCESS) {
        rc = mpi_intercomm_make(
            local, local_leader, MPI_COMM_WORLD,
            remote_group->world[remote_leader],
            mpi_comm_tag_session_inter(tag_hash(stringtag, 2)), newintercomm);
        if (rc < 0)
            rc = -rc - 1;
        mpi_comm_release(local);
    }
    return finish(rc, *newintercomm, errhandler, info, fn,
                  local_group->size + remote_group->size);
}
SHOAL_MPI_WEAK(Intercomm_create_from_groups)
