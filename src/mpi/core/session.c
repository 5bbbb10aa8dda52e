/*
 * Sessions (MPI 4.0 section 11.3): a library or program reaches MPI
 * without MPI_Init.  A session names process sets ("mpi://WORLD",
 * "mpi://SELF"), makes groups of them, and MPI_Comm_create_from_group
 * (comm_from_group.c) makes communicators of those groups.
 *
 * The library itself runs once per process, whichever comes first brings
 * it up (MPI_Init or MPI_Session_init, init.c's mpi_runtime_up) and it
 * goes down when nothing needs it any more: at MPI_Finalize when no
 * session is left, at the last MPI_Session_finalize after MPI_Finalize,
 * and, for a program that used sessions only, when the process exits.
 * That last one is what lets a program finalize its only session and
 * initialize another later (the standard allows it; the launcher's
 * connection cannot be opened twice).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi/mpi_impl.h"

struct shoal_mpi_session {
    uint32_t magic;
    MPI_Errhandler errh;
    int thread_level; /* what this session asked for, or what runs */
};

#define PSET_WORLD "mpi://WORLD"
#define PSET_SELF "mpi://SELF"

static const char *const psets[] = {PSET_WORLD, PSET_SELF};
#define NPSETS ((int)(sizeof(psets) / sizeof(psets[0])))

static const char *const level_names[] = {
    "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
    "MPI_THREAD_MULTIPLE"};

static int session_ok(MPI_Session s)
{
    return s != NULL && s->magic == MPI_MAGIC_SESSION;
}

/* What may be a session's error handler: the predefined ones and those of
 * MPI_Session_create_errhandler. */
static int session_errh_ok(MPI_Errhandler eh)
{
    return eh != NULL && eh->magic == MPI_MAGIC_ERRH &&
           (eh->kind <= 3 || eh->kind == 6);
}

/* Errors of a session's calls go to its handler; errors before there is
 * one to the handler MPI_Session_init was given (or are fatal). */
#define raise_on(s, eh, cls, fn, ...)                                        \
    mpi_error_raise((eh), (void *)(s), (cls), (fn), __VA_ARGS__)
#define SESSION_ERR(s, cls, fn, ...)                                         \
    raise_on((s), session_ok(s) ? (s)->errh : NULL, (cls), (fn), __VA_ARGS__)

/* A session's calls before anything else: the library runs (a session
 * alive keeps it so) and s is a session. */
#define SESSION_CHECK(s, fn)                                                 \
    do {                                                                     \
        MPI_CHECK_INIT(fn);                                                  \
        if (!session_ok(s))                                                  \
            return raise_on(NULL, NULL, MPI_ERR_SESSION, (fn),               \
                            "invalid session %p", (void *)(s));              \
    } while (0)

/* "thread_level" of an info: the level, or -1 when absent; -2 when the
 * value is not a level's name. */
static int info_level(MPI_Info info)
{
    const char *v = mpi_info_lookup(info, "thread_level");

    if (v == NULL)
        return -1;
    for (int l = 0; l < 4; l++)
        if (strcmp(v, level_names[l]) == 0)
            return l;
    return -2;
}

/* A program that used sessions only: the library goes down as it exits
 * (after the last MPI_Session_finalize the others may still need it). */
static void session_atexit(void)
{
    if (mpi.up && mpi.sessions == 0 && (!mpi.initialized || mpi.finalized))
        (void)mpi_runtime_down("exit (after MPI_Session_finalize)");
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                      MPI_Session *session)
{
    const char *fn = "MPI_Session_init";
    static int atexit_set;
    int level;

    if (!session_errh_ok(errhandler))
        return raise_on(NULL, NULL, MPI_ERR_ARG, fn,
                        "invalid error handler %p (a predefined one or one "
                        "from MPI_Session_create_errhandler)",
                        (void *)errhandler);
    if (session == NULL)
        return raise_on(NULL, errhandler, MPI_ERR_ARG, fn,
                        "session is NULL");
    if (info != MPI_INFO_NULL &&
        (info == NULL || info->magic != MPI_MAGIC_INFO))
        return raise_on(NULL, errhandler, MPI_ERR_INFO, fn,
                        "invalid info %p", (void *)info);
    *session = MPI_SESSION_NULL;
    level = info_level(info);
    if (level == -2)
        return raise_on(NULL, errhandler, MPI_ERR_ARG, fn,
                        "thread_level \"%s\" is not MPI_THREAD_SINGLE, "
                        "_FUNNELED, _SERIALIZED or _MULTIPLE",
                        mpi_info_lookup(info, "thread_level"));
    if (mpi.finalized && !mpi.up)
        return raise_on(NULL, errhandler, MPI_ERR_OTHER, fn,
                        "MPI_Finalize ended the library and no session "
                        "kept it: it cannot start again in this process");
    MPI_Session s = calloc(1, sizeof(*s));
    if (s == NULL)
        return raise_on(NULL, errhandler, MPI_ERR_NO_MEM, fn, "no memory");
    mpi_runtime_up(level < 0 ? MPI_THREAD_SINGLE : level, fn);
    if (!atexit_set && atexit(session_atexit) == 0)
        atexit_set = 1;
    s->magic = MPI_MAGIC_SESSION;
    s->errh = errhandler;
    mpi_errh_retain(errhandler);
    s->thread_level = mpi.thread_level;
    __atomic_add_fetch(&mpi.sessions, 1, __ATOMIC_ACQ_REL);
    *session = s;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_init)

int PMPI_Session_finalize(MPI_Session *session)
{
    const char *fn = "MPI_Session_finalize";

    MPI_CHECK_INIT(fn);
    if (session == NULL)
        return raise_on(NULL, NULL, MPI_ERR_ARG, fn, "session is NULL");
    MPI_Session s = *session;
    SESSION_CHECK(s, fn);
    s->magic = MPI_MAGIC_DEAD;
    mpi_errh_release(s->errh);
    free(s);
    *session = MPI_SESSION_NULL;
    if (__atomic_sub_fetch(&mpi.sessions, 1, __ATOMIC_ACQ_REL) == 0 &&
        mpi.finalized)
        return mpi_runtime_down(fn); /* MPI_Finalize left it to us */
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_finalize)

/* Names match regardless of case ("mpi://self" too, as MPICH takes it). */
static int pset_index(const char *name)
{
    for (int i = 0; i < NPSETS; i++)
        if (strcasecmp(name, psets[i]) == 0)
            return i;
    return -1;
}

/* The process set named name (*i), for a call whose output is out. */
static int find_pset(MPI_Session s, const char *name, const void *out,
                     const char *fn, int *i)
{
    if (name == NULL || out == NULL)
        return SESSION_ERR(s, MPI_ERR_ARG, fn,
                           "pset_name or the output is NULL");
    *i = pset_index(name);
    if (*i < 0)
        return SESSION_ERR(s, MPI_ERR_ARG, fn,
                           "no process set \"%s\" (there are \"%s\" and "
                           "\"%s\")",
                           name, PSET_WORLD, PSET_SELF);
    return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                               int *npset_names)
{
    const char *fn = "MPI_Session_get_num_psets";

    SESSION_CHECK(session, fn);
    (void)info; /* no query keys are defined */
    if (npset_names == NULL)
        return SESSION_ERR(session, MPI_ERR_ARG, fn, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                              int *pset_len, char *pset_name)
{
    const char *fn = "MPI_Session_get_nth_pset";

    SESSION_CHECK(session, fn);
    (void)info;
    if (n < 0 || n >= NPSETS)
        return SESSION_ERR(session, MPI_ERR_ARG, fn,
                           "n %d is not in [0, %d)", n, NPSETS);
    if (pset_len == NULL || *pset_len < 0)
        return SESSION_ERR(session, MPI_ERR_ARG, fn,
                           "pset_len is NULL or negative");
    int need = (int)strlen(psets[n]) + 1;
    if (*pset_len == 0) { /* a query of the length, terminator included */
        *pset_len = need;
        return MPI_SUCCESS;
    }
    if (pset_name == NULL)
        return SESSION_ERR(session, MPI_ERR_ARG, fn, "pset_name is NULL");
    snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = need;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_get_nth_pset)

/* A new info with key = val. */
static int info_with(MPI_Info *info, const char *key, const char *val)
{
    int rc = PMPI_Info_create(info);

    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, key, val);
    return rc;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    const char *fn = "MPI_Session_get_info";

    SESSION_CHECK(session, fn);
    if (info_used == NULL)
        return SESSION_ERR(session, MPI_ERR_ARG, fn, "info_used is NULL");
    /* What runs: a later session may have raised it since. */
    int level = mpi.thread_level > session->thread_level
                    ? mpi.thread_level
                    : session->thread_level;
    int rc = info_with(info_used, "thread_level", level_names[level]);
    if (rc != MPI_SUCCESS)
        return SESSION_ERR(session, rc, fn, "making the info failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_get_info)

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name,
                               MPI_Info *info)
{
    const char *fn = "MPI_Session_get_pset_info";
    char num[24];

    SESSION_CHECK(session, fn);
    int i, rc = find_pset(session, pset_name, info, fn, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    snprintf(num, sizeof(num), "%d", i == 0 ? mpi.world_size : 1);
    rc = info_with(info, "mpi_size", num);
    if (rc != MPI_SUCCESS)
        return SESSION_ERR(session, rc, fn, "making the info failed");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                 MPI_Group *newgroup)
{
    const char *fn = "MPI_Group_from_session_pset";

    SESSION_CHECK(session, fn);
    int i, rc = find_pset(session, pset_name, newgroup, fn, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm c = i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    rc = mpi_group_new(c->group->size, c->group->world, newgroup);
    if (rc != MPI_SUCCESS)
        return SESSION_ERR(session, rc, fn, "no memory");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Group_from_session_pset)

/* ---- error handlers ------------------------------------------------------------- */

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn_p,
                                   MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_Session_create_errhandler";

    /* Allowed before any session: a handler for MPI_Session_init. */
    if (fn_p == NULL || errhandler == NULL)
        return raise_on(NULL, NULL, MPI_ERR_ARG, fn,
                        "function or errhandler is NULL");
    MPI_Errhandler eh = mpi_errh_new(6);
    if (eh == NULL)
        return raise_on(NULL, NULL, MPI_ERR_NO_MEM, fn, "no memory");
    eh->session_fn = fn_p;
    *errhandler = eh;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_create_errhandler)

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_Session_set_errhandler";

    SESSION_CHECK(session, fn);
    if (!session_errh_ok(errhandler))
        return SESSION_ERR(session, MPI_ERR_ARG, fn,
                           "invalid error handler %p (a predefined one or "
                           "one from MPI_Session_create_errhandler)",
                           (void *)errhandler);
    mpi_errh_retain(errhandler);
    pthread_mutex_lock(&mpi_obj_lock);
    MPI_Errhandler old = session->errh;
    session->errh = errhandler;
    pthread_mutex_unlock(&mpi_obj_lock);
    mpi_errh_release(old);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session,
                                MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_Session_get_errhandler";

    SESSION_CHECK(session, fn);
    if (errhandler == NULL)
        return SESSION_ERR(session, MPI_ERR_ARG, fn, "errhandler is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    *errhandler = session->errh;
    mpi_errh_retain(*errhandler);
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    const char *fn = "MPI_Session_call_errhandler";

    SESSION_CHECK(session, fn);
    /* The handler ran (or the process ended): the call itself succeeded. */
    (void)SESSION_ERR(session, errorcode, fn,
                      "error %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Session_call_errhandler)
