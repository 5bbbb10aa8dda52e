/*
 * Small collectives for building communicators: allreduce, allgather and
 * broadcast among some ranks of a parent, and their intercommunicator
 * forms through the two leaders.  Communicator construction cannot use the
 * collective layer: it runs for subsets of a communicator (create_group)
 * and before the new communicator exists.  Messages are small and rare,
 * so the algorithms are simple binomial trees and linear gathers.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/comm/comm.h"

int mpi_members_init(mpi_members_t *m, MPI_Comm comm, int n,
                     const int *ranks, int tag)
{
    m->comm = comm;
    m->n = n;
    m->ranks = ranks;
    m->tag = tag;
    m->me = -1;
    if (ranks == NULL) {
        m->me = comm->rank;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++)
        if (ranks[i] == comm->rank)
            m->me = i;
    return m->me < 0 ? MPI_ERR_GROUP : MPI_SUCCESS;
}

static inline int rank_of(const mpi_members_t *m, int i)
{
    return m->ranks != NULL ? m->ranks[i] : i;
}

static int send_to(const mpi_members_t *m, int i, const void *buf,
                   size_t len, int tag)
{
    return mpi_send_internal(buf, (MPI_Count)len, MPI_BYTE, rank_of(m, i),
                             tag, m->comm, 1);
}

static int recv_from(const mpi_members_t *m, int i, void *buf, size_t len,
                     int tag)
{
    return mpi_recv_internal(buf, (MPI_Count)len, MPI_BYTE, rank_of(m, i),
                             tag, m->comm, 1, MPI_STATUS_IGNORE);
}

/* Binomial reduction to member 0, then binomial broadcast back. */
int mpi_members_allreduce(const mpi_members_t *m, void *buf, size_t len,
                          mpi_combine_fn *combine)
{
    void *tmp = malloc(len);
    int rc = MPI_SUCCESS, mask;

    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    for (mask = 1; mask < m->n; mask <<= 1) {
        if (m->me & mask) {
            rc = send_to(m, m->me - mask, buf, len, m->tag);
            break;
        }
        if (m->me + mask < m->n) {
            rc = recv_from(m, m->me + mask, tmp, len, m->tag);
            if (rc != MPI_SUCCESS)
                break;
            combine(buf, tmp, len);
        }
    }
    free(tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpi_members_bcast(m, 0, buf, len);
}

int mpi_members_bcast(const mpi_members_t *m, int root, void *buf,
                      size_t len)
{
    int rel = (m->me - root + m->n) % m->n, mask = 1, rc;

    while (mask < m->n) {
        if (rel & mask) {
            int from = (rel - mask + root) % m->n;
            rc = recv_from(m, from, buf, len, m->tag - 1);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < m->n) {
            rc = send_to(m, (rel + mask + root) % m->n, buf, len, m->tag - 1);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Member 0 receives every contribution at once, then broadcasts all. */
static int gather_at_first(const mpi_members_t *m, void *all, size_t len)
{
    MPI_Request *reqs;
    int rc;

    if (m->me != 0)
        return send_to(m, 0, (char *)all + (size_t)m->me * len, len,
                       m->tag - 2);
    reqs = calloc((size_t)m->n, sizeof(*reqs));
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    rc = MPI_SUCCESS;
    for (int i = 1; i < m->n && rc == MPI_SUCCESS; i++)
        rc = mpi_irecv_internal((char *)all + (size_t)i * len,
                                (MPI_Count)len, MPI_BYTE, rank_of(m, i),
                                m->tag - 2, m->comm, 1, &reqs[i]);
    if (rc == MPI_SUCCESS)
        rc = mpi_waitall_internal(m->n, reqs);
    else
        mpi_waitall_internal(m->n, reqs);
    free(reqs);
    return rc;
}

int mpi_members_allgather(const mpi_members_t *m, const void *mine,
                          size_t len, void *all)
{
    int rc;

    memcpy((char *)all + (size_t)m->me * len, mine, len);
    rc = gather_at_first(m, all, len);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpi_members_bcast(m, 0, all, len * (size_t)m->n);
}

/* ---- intercommunicators ----------------------------------------------------- */

/* Leaders combine what the remote group sent them. */
static int leader_collect(MPI_Comm inter, void *acc, size_t len,
                          mpi_combine_fn *combine, int tag)
{
    char *tmp = malloc(len * (size_t)inter->remote_size);
    MPI_Request *reqs = calloc((size_t)inter->remote_size, sizeof(*reqs));
    int rc = MPI_SUCCESS;

    if (tmp == NULL || reqs == NULL) {
        free(tmp);
        free(reqs);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < inter->remote_size && rc == MPI_SUCCESS; i++)
        rc = mpi_irecv_internal(tmp + (size_t)i * len, (MPI_Count)len,
                                MPI_BYTE, i, tag, inter, 1, &reqs[i]);
    if (rc == MPI_SUCCESS)
        rc = mpi_waitall_internal(inter->remote_size, reqs);
    else
        mpi_waitall_internal(inter->remote_size, reqs);
    if (rc == MPI_SUCCESS) {
        memcpy(acc, tmp, len);
        for (int i = 1; i < inter->remote_size; i++)
            combine(acc, tmp + (size_t)i * len, len);
    }
    free(tmp);
    free(reqs);
    return rc;
}

/*
 * Every process sends its contribution to the remote leader; each leader
 * thus holds the other group's combination.  Leaders swap those, combine
 * both halves, and send the total to every remote process.
 */
int mpi_inter_allreduce(MPI_Comm inter, void *buf, size_t len,
                        mpi_combine_fn *combine, int tag)
{
    MPI_Request sreq = MPI_REQUEST_NULL;
    char *other = NULL, *mine = NULL;
    int rc;

    rc = mpi_isend_internal(buf, (MPI_Count)len, MPI_BYTE, 0, tag, inter, 1,
                            &sreq);
    if (rc != MPI_SUCCESS)
        return rc;
    if (inter->rank == 0) {
        other = malloc(len);
        mine = malloc(len);
        rc = other != NULL && mine != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        if (rc == MPI_SUCCESS)
            rc = leader_collect(inter, other, len, combine, tag);
        if (rc == MPI_SUCCESS)
            rc = mpi_sendrecv_internal(other, (MPI_Count)len, MPI_BYTE, 0,
                                       mine, (MPI_Count)len, MPI_BYTE, 0,
                                       tag - 1, inter, 1);
        if (rc == MPI_SUCCESS) {
            combine(mine, other, len);
            memcpy(buf, mine, len);
        }
    }
    {
        int rc2 = mpi_wait_internal(&sreq, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    if (rc == MPI_SUCCESS)
        rc = mpi_inter_swap(inter, mine, buf, len, tag - 2);
    free(other);
    free(mine);
    return rc;
}

int mpi_inter_swap(MPI_Comm inter, const void *mine, void *theirs,
                   size_t len, int tag)
{
    MPI_Request rreq = MPI_REQUEST_NULL;
    int rc = mpi_irecv_internal(theirs, (MPI_Count)len, MPI_BYTE, 0, tag,
                                inter, 1, &rreq);

    if (rc != MPI_SUCCESS)
        return rc;
    if (inter->rank == 0)
        for (int i = 0; i < inter->remote_size && rc == MPI_SUCCESS; i++)
            rc = mpi_send_internal(mine, (MPI_Count)len, MPI_BYTE, i, tag,
                                   inter, 1);
    {
        int rc2 = mpi_wait_internal(&rreq, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    return rc;
}

/*
 * Every process learns every process's len bytes, in both groups: each
 * sends its own to the remote leader, the leaders swap what they gathered,
 * and each leader sends both lists to its whole remote group.  The remote
 * leader's message is [this group's list | the other group's list].
 */
int mpi_inter_allgather(MPI_Comm inter, const void *mine, size_t len,
                        void *local_all, void *remote_all, int tag)
{
    size_t nl = (size_t)inter->size * len, nr = (size_t)inter->remote_size * len;
    MPI_Request sreq = MPI_REQUEST_NULL;
    char *both = malloc(nl + nr), *out = NULL;
    int rc;

    if (both == NULL)
        return MPI_ERR_NO_MEM;
    rc = mpi_isend_internal(mine, (MPI_Count)len, MPI_BYTE, 0, tag, inter, 1,
                            &sreq);
    if (rc == MPI_SUCCESS && inter->rank == 0) {
        /* out = [remote group's list | this group's list], as the remote
         * group wants it. */
        out = malloc(nl + nr);
        rc = out != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        for (int i = 0; i < inter->remote_size && rc == MPI_SUCCESS; i++)
            rc = mpi_recv_internal(out + (size_t)i * len, (MPI_Count)len,
                                   MPI_BYTE, i, tag, inter, 1,
                                   MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = mpi_sendrecv_internal(out, (MPI_Count)nr, MPI_BYTE, 0,
                                       out + nr, (MPI_Count)nl, MPI_BYTE, 0,
                                       tag - 1, inter, 1);
        for (int i = 0; i < inter->remote_size && rc == MPI_SUCCESS; i++)
            rc = mpi_send_internal(out, (MPI_Count)(nl + nr), MPI_BYTE, i,
                                   tag - 2, inter, 1);
    }
    if (rc == MPI_SUCCESS)
        rc = mpi_recv_internal(both, (MPI_Count)(nl + nr), MPI_BYTE, 0,
                               tag - 2, inter, 1, MPI_STATUS_IGNORE);
    {
        int rc2 = mpi_wait_internal(&sreq, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    if (rc == MPI_SUCCESS) {
        memcpy(local_all, both, nl);
        memcpy(remote_all, both + nl, nr);
    }
    free(out);
    free(both);
    return rc;
}
