/*
 * MPI_T's performance variables: the active-message layer's counters of
 * this process (shoal_stats_get), each an MPI_T_PVAR_CLASS_COUNTER of
 * MPI_UNSIGNED_LONG_LONG, continuous (always counting: start and stop
 * are MPI_T_ERR_PVAR_NO_STARTSTOP) and read-only.  A handle reads what
 * was counted since it was allocated or last reset.  Before the library
 * runs (no MPI_Init or session yet) and after, every counter reads 0.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpit/mpit.h"

typedef struct pvar {
    const char *name, *desc;
    size_t off; /* in shoal_stats_t */
} pvar_t;

#define PV(field, desc)                                                      \
    {"shoal_am_" #field, desc, offsetof(shoal_stats_t, field)}
static const pvar_t pvars[] = {
    PV(requests_sent, "active messages (requests) sent, all kinds"),
    PV(replies_sent, "replies sent"),
    PV(messages_handled, "handlers run for messages received"),
    PV(long_single_copy, "long payloads moved by cross-memory attach"),
    PV(replies_deferred, "replies queued because their channel was full"),
    PV(credit_waits, "requests that waited for flow-control credits"),
    PV(space_waits, "requests that waited for room in a channel"),
    PV(sleeps, "blocking waits that slept"),
    PV(doorbells_rung, "wake-ups sent to sleeping peers"),
    PV(connections, "peers connected to (on demand)"),
    PV(dropped, "malformed or foreign messages dropped"),
};
#undef PV
#define NPVARS ((int)(sizeof(pvars) / sizeof(pvars[0])))

#define MPIT_MAGIC_SESSION 0x50736573u /* "Pses" */
#define MPIT_MAGIC_PVAR 0x50766172u    /* "Pvar" */

struct shoal_mpi_t_pvar_handle {
    uint32_t magic;
    MPI_T_pvar_session session;
    int index;
    uint64_t base; /* the counter when allocated or last reset */
    struct shoal_mpi_t_pvar_handle *next;
};

struct shoal_mpi_t_pvar_session {
    uint32_t magic;
    struct shoal_mpi_t_pvar_handle *handles;
};

int mpit_pvar_count(void)
{
    return NPVARS;
}

static uint64_t counter(int i)
{
    shoal_stats_t st;

    if (!mpi.up || shoal_stats_get(&st) != SHOAL_OK)
        return 0;
    return *(const uint64_t *)((const char *)&st + pvars[i].off);
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
    MPIT_CHECK();
    if (num_pvar == NULL)
        return MPI_T_ERR_INVALID;
    *num_pvar = NPVARS;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len,
                         int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype,
                         char *desc, int *desc_len, int *bind, int *readonly,
                         int *continuous, int *atomic)
{
    MPIT_CHECK();
    if (pvar_index < 0 || pvar_index >= NPVARS)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_str(pvars[pvar_index].name, name, name_len);
    mpit_str(pvars[pvar_index].desc, desc, desc_len);
    if (verbosity != NULL)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class != NULL)
        *var_class = MPI_T_PVAR_CLASS_COUNTER;
    if (datatype != NULL)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype != NULL)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind != NULL)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly != NULL)
        *readonly = 1;
    if (continuous != NULL)
        *continuous = 1;
    if (atomic != NULL)
        *atomic = 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_CHECK();
    if (name == NULL || pvar_index == NULL)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NPVARS; i++)
        if (var_class == MPI_T_PVAR_CLASS_COUNTER &&
            strcmp(pvars[i].name, name) == 0) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
SHOAL_MPI_WEAK(T_pvar_get_index)

/* ---- sessions and handles ----------------------------------------------------------- */

static int session_ok(MPI_T_pvar_session s)
{
    return s != NULL && s->magic == MPIT_MAGIC_SESSION;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPIT_CHECK();
    if (session == NULL)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_session s = calloc(1, sizeof(*s));
    if (s == NULL)
        return MPI_T_ERR_MEMORY;
    s->magic = MPIT_MAGIC_SESSION;
    *session = s;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPIT_CHECK();
    if (session == NULL || !session_ok(*session))
        return MPI_T_ERR_INVALID_SESSION;
    MPI_T_pvar_session s = *session;
    pthread_mutex_lock(&mpi_obj_lock);
    while (s->handles != NULL) { /* its handles go with it */
        MPI_T_pvar_handle h = s->handles;
        s->handles = h->next;
        h->magic = MPI_MAGIC_DEAD;
        free(h);
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    s->magic = MPI_MAGIC_DEAD;
    free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                             void *obj_handle, MPI_T_pvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* bound to no object */
    MPIT_CHECK();
    if (!session_ok(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= NPVARS)
        return MPI_T_ERR_INVALID_INDEX;
    if (handle == NULL || count == NULL)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_handle h = calloc(1, sizeof(*h));
    if (h == NULL)
        return MPI_T_ERR_MEMORY;
    h->magic = MPIT_MAGIC_PVAR;
    h->session = session;
    h->index = pvar_index;
    h->base = counter(pvar_index);
    pthread_mutex_lock(&mpi_obj_lock);
    h->next = session->handles;
    session->handles = h;
    pthread_mutex_unlock(&mpi_obj_lock);
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_handle_alloc)

/* session and handle valid and each other's (ALL_HANDLES if all_ok). */
static int pair_ok(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                   int all_ok)
{
    if (!session_ok(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    if (handle == NULL || handle->magic != MPIT_MAGIC_PVAR ||
        handle->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session,
                            MPI_T_pvar_handle *handle)
{
    MPIT_CHECK();
    if (handle == NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    int rc = pair_ok(session, *handle, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_T_pvar_handle h = *handle;
    pthread_mutex_lock(&mpi_obj_lock);
    for (MPI_T_pvar_handle *p = &session->handles; *p != NULL;
         p = &(*p)->next)
        if (*p == h) {
            *p = h->next;
            break;
        }
    pthread_mutex_unlock(&mpi_obj_lock);
    h->magic = MPI_MAGIC_DEAD;
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_handle_free)

/* Start and stop: every variable here counts continuously.  With
 * MPI_T_PVAR_ALL_HANDLES they apply to the session's handles that can be
 * started, none here: nothing to do. */
static int start_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_CHECK();
    int rc = pair_ok(session, handle, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS
                                            : MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return start_stop(session, handle);
}
SHOAL_MPI_WEAK(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return start_stop(session, handle);
}
SHOAL_MPI_WEAK(T_pvar_stop)

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     void *buf)
{
    MPIT_CHECK();
    int rc = pair_ok(session, handle, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    if (buf == NULL)
        return MPI_T_ERR_INVALID;
    unsigned long long v = counter(handle->index) - handle->base;
    memcpy(buf, &v, sizeof(v));
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(T_pvar_read)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                      const void *buf)
{
    MPIT_CHECK();
    int rc = pair_ok(session, handle, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    (void)buf;
    return MPI_T_ERR_PVAR_NO_WRITE;
}
SHOAL_MPI_WEAK(T_pvar_write)

/* Reset: read-only variables cannot be reset (the standard), so a handle
 * of one is refused, and MPI_T_PVAR_ALL_HANDLES resets none. */
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_CHECK();
    int rc = pair_ok(session, handle, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS
                                            : MPI_T_ERR_PVAR_NO_WRITE;
}
SHOAL_MPI_WEAK(T_pvar_reset)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session,
                          MPI_T_pvar_handle handle, void *buf)
{
    MPIT_CHECK();
    int rc = pair_ok(session, handle, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    (void)buf;
    return MPI_T_ERR_PVAR_NO_ATOMIC;
}
SHOAL_MPI_WEAK(T_pvar_readreset)
