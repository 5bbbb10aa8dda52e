/*
 * What the nonblocking (MPI_Ixxx) and persistent (MPI_Xxx_init) forms of
 * the collectives add to the blocking ones: the request pointer and info
 * checks, and the references a request holds on the datatypes and the
 * operation its schedule uses, dropped when the request is freed.  The
 * schedule itself is wrapped in the request by mpi_coll_begin/end
 * (coll_transport.c).
 */
#include <stdlib.h>

#include "mpi/coll/coll_forms.h"

struct mpi_nb_hold {
    int (*next_free)(MPI_Request r); /* the request's own free_fn */
    MPI_Op op;                       /* a user operation, or NULL */
    int ntypes;
    MPI_Datatype types[]; /* derived datatypes (predefined ones live on) */
};

int mpi_nb_check(MPI_Comm comm, const mpi_nb_t *nb, const char *fn)
{
    TRY(mpi_coll_check_comm(comm, fn));
    if (nb == NULL)
        return MPI_SUCCESS;
    if (nb->request == NULL)
        return mpi_error(comm, MPI_ERR_ARG, fn, "request pointer is NULL");
    if (nb->persistent && nb->info != MPI_INFO_NULL &&
        nb->info->magic != MPI_MAGIC_INFO)
        return mpi_error(comm, MPI_ERR_INFO, fn, "invalid info %p",
                         (void *)nb->info);
    return MPI_SUCCESS;
}

static int derived(MPI_Datatype dt)
{
    return dt != NULL && !(dt->flags & MPI_DT_PREDEF);
}

/* The derived datatypes nb lists, stored in out when it is not NULL;
 * returns how many. */
static int derived_types(const mpi_nb_t *nb, MPI_Datatype *out)
{
    int n = 0;

    for (int i = 0; i < 2; i++) {
        if (derived(nb->types[i])) {
            if (out != NULL)
                out[n] = nb->types[i];
            n++;
        }
        for (int k = 0; k < nb->n[i]; k++)
            if (nb->counts[i][k] > 0 && derived(nb->tv[i][k])) {
                if (out != NULL)
                    out[n] = nb->tv[i][k];
                n++;
            }
    }
    return n;
}

static void hold_release(mpi_nb_hold_t *h)
{
    if (h == NULL)
        return;
    for (int i = 0; i < h->ntypes; i++)
        mpi_dt_release(h->types[i]);
    if (h->op != NULL)
        mpi_op_release(h->op);
    free(h);
}

int mpi_nb_start(MPI_Comm comm, mpi_nb_t *nb, const char *fn)
{
    MPI_Op op = nb->op != NULL && nb->op->predef == 0 ? nb->op : NULL;
    int n = derived_types(nb, NULL);
    mpi_nb_hold_t *h = NULL;

    if (n > 0 || op != NULL) {
        h = malloc(sizeof(*h) + (size_t)n * sizeof(MPI_Datatype));
        if (h == NULL)
            return mpi_error(comm, MPI_ERR_NO_MEM, fn,
                             "no memory to keep %d datatypes for the request",
                             n);
        h->next_free = NULL;
        h->op = op;
        h->ntypes = derived_types(nb, h->types);
        for (int i = 0; i < n; i++)
            mpi_dt_retain(h->types[i]);
        if (op != NULL)
            mpi_op_retain(op);
    }
    nb->hold = h;
    mpi_coll_begin(comm, nb->persistent, &nb->sched);
    return MPI_SUCCESS;
}

/* The request's free_fn while it holds references: the schedule goes
 * first (its own free_fn), then the references. */
static int hold_free(MPI_Request r)
{
    mpi_nb_hold_t *h = r->buf;
    int rc = h->next_free(r);

    r->buf = NULL;
    hold_release(h);
    return rc;
}

int mpi_nb_finish(MPI_Comm comm, int rc, mpi_nb_t *nb, const char *fn)
{
    mpi_nb_hold_t *h = nb->hold;
    MPI_Request r;

    rc = mpi_coll_end(comm, rc, nb->sched, nb->request, fn);
    if (rc != MPI_SUCCESS || h == NULL) {
        hold_release(h);
        return rc;
    }
    /* Collective requests use no buffer of their own: r->buf holds the
     * references until the request is freed. */
    r = *nb->request;
    h->next_free = r->free_fn;
    r->free_fn = hold_free;
    r->buf = h;
    return MPI_SUCCESS;
}
