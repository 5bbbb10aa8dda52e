/*
 * The error-handler API (create, set, get, call, free) and user-added
 * error classes, codes and strings.
 *
 * User classes and codes share one number space above MPI_ERR_LASTCODE
 * (the standard wants MPI_LASTUSEDCODE >= MPI_ERR_LASTCODE, and the value
 * of MPI_ERR_LASTCODE is fixed in mpi.h, as MPICH's); each entry records
 * its class (a class is its own) and an optional string.  Removed numbers are not
 * reused, so a stale code never names a different error.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/core/errhandler.h"
#include "mpi/core/obj_arena.h"

#define FIRST_USER (MPI_ERR_LASTCODE + 1)

typedef struct user_code {
    int used;
    int cls;     /* the class; == its own number for a class */
    int ncodes;  /* classes: codes still attached */
    char *text;
} user_code_t;

static user_code_t *codes; /* codes[c - FIRST_USER] */
static int ncodes_used;    /* entries handed out */
static int lastused = MPI_ERR_LASTCODE; /* MPI_LASTUSEDCODE */

static int is_predef_errh(MPI_Errhandler eh)
{
    return eh >= &shoal_mpi_errh_predef[0] && eh <= &shoal_mpi_errh_predef[3];
}

int *mpi_errh_lastused(void)
{
    return &lastused;
}

/* Indexed by SHOAL_MPI_INITIAL_ERRHANDLER's choices, in their order. */
static const char *const initial_names[] = {
    "mpi_errors_are_fatal", "mpi_errors_abort", "mpi_errors_return"};

MPI_Errhandler mpi_errh_initial(void)
{
    switch (base_cfg.MPI_INITIAL_ERRHANDLER) {
    case 1:
        return MPI_ERRORS_ABORT;
    case 2:
        return MPI_ERRORS_RETURN;
    default:
        return MPI_ERRORS_ARE_FATAL;
    }
}

const char *mpi_errh_initial_name(void)
{
    int i = (int)base_cfg.MPI_INITIAL_ERRHANDLER;

    return i >= 0 && i < 3 ? initial_names[i] : initial_names[0];
}

/* Called with mpi_obj_lock held. */
static user_code_t *lookup(int code)
{
    if (code < FIRST_USER || code >= FIRST_USER + ncodes_used)
        return NULL;
    return codes[code - FIRST_USER].used ? &codes[code - FIRST_USER] : NULL;
}

const char *mpi_error_user_string(int code)
{
    const char *s = NULL;
    user_code_t *u;

    pthread_mutex_lock(&mpi_obj_lock);
    u = lookup(code);
    if (u != NULL)
        s = u->text != NULL ? u->text : "";
    pthread_mutex_unlock(&mpi_obj_lock);
    return s;
}

int mpi_error_user_class(int code, int *cls)
{
    user_code_t *u;

    pthread_mutex_lock(&mpi_obj_lock);
    u = lookup(code);
    if (u != NULL)
        *cls = u->cls;
    pthread_mutex_unlock(&mpi_obj_lock);
    return u != NULL;
}

/* A new number; cls < 0 makes it a class.  Called with the lock held. */
static int new_code(int cls, int *code_p)
{
    static int cap;
    int code;

    if (ncodes_used >= INT_MAX - FIRST_USER)
        return MPI_ERR_OTHER;
    if (ncodes_used == cap) {
        int n = cap ? 2 * cap : 64;
        user_code_t *t = realloc(codes, (size_t)n * sizeof(*t));
        if (t == NULL)
            return MPI_ERR_NO_MEM;
        codes = t;
        cap = n;
    }
    code = FIRST_USER + ncodes_used++;
    codes[code - FIRST_USER] =
        (user_code_t){1, cls < 0 ? code : cls, 0, NULL};
    if (cls >= FIRST_USER)
        lookup(cls)->ncodes++;
    lastused = code;
    *code_p = code;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    int rc;

    MPI_CHECK_INIT("MPI_Add_error_class");
    if (errorclass == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class",
                         "errorclass is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    rc = new_code(-1, errorclass);
    pthread_mutex_unlock(&mpi_obj_lock);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, "MPI_Add_error_class",
                         "no more error classes");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Add_error_class)

/* Is cls a class: predefined or user-added (not a user code)? */
static int valid_class(int cls)
{
    user_code_t *u;

    if (cls >= MPI_SUCCESS && cls <= MPI_LAST_PREDEF_CLASS)
        return 1;
    u = lookup(cls);
    return u != NULL && u->cls == cls;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    int rc;

    MPI_CHECK_INIT("MPI_Add_error_code");
    if (errorcode == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code",
                         "errorcode is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    rc = valid_class(errorclass) && errorclass != MPI_SUCCESS
             ? new_code(errorclass, errorcode)
             : MPI_ERR_ARG;
    pthread_mutex_unlock(&mpi_obj_lock);
    if (rc == MPI_ERR_ARG)
        return mpi_error(MPI_COMM_WORLD, rc, "MPI_Add_error_code",
                         "%d is not an error class", errorclass);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, "MPI_Add_error_code",
                         "no more error codes");
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    user_code_t *u;
    char *copy;

    MPI_CHECK_INIT("MPI_Add_error_string");
    if (string == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                         "string is NULL");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                         "string of %zu characters; at most %d",
                         strlen(string), MPI_MAX_ERROR_STRING - 1);
    copy = strdup(string);
    if (copy == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                         "MPI_Add_error_string", "no memory");
    pthread_mutex_lock(&mpi_obj_lock);
    u = lookup(errorcode);
    if (u != NULL) {
        free(u->text);
        u->text = copy;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    if (u == NULL) {
        free(copy);
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                         "%d is not a user-added error code or class",
                         errorcode);
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Add_error_string)

/* Remove a user class (want_class) or code; MPI_ERR_ARG when not one. */
static int remove_code(int code, int want_class, const char *fn)
{
    user_code_t *u;
    int rc = MPI_SUCCESS;

    MPI_CHECK_INIT(fn);
    pthread_mutex_lock(&mpi_obj_lock);
    u = lookup(code);
    if (u == NULL || (u->cls == code) != want_class)
        rc = MPI_ERR_ARG;
    else if (want_class && u->ncodes > 0)
        rc = MPI_ERR_OTHER;
    if (rc == MPI_SUCCESS) {
        if (!want_class && u->cls >= FIRST_USER)
            lookup(u->cls)->ncodes--;
        free(u->text);
        *u = (user_code_t){0, 0, 0, NULL};
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    if (rc == MPI_ERR_ARG)
        return mpi_error(MPI_COMM_WORLD, rc, fn,
                         "%d is not a user-added error %s", code,
                         want_class ? "class" : "code");
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, fn,
                         "error class %d still has codes", code);
    return MPI_SUCCESS;
}

int PMPI_Remove_error_class(int errorclass)
{
    return remove_code(errorclass, 1, "MPI_Remove_error_class");
}
SHOAL_MPI_WEAK(Remove_error_class)

int PMPI_Remove_error_code(int errorcode)
{
    return remove_code(errorcode, 0, "MPI_Remove_error_code");
}
SHOAL_MPI_WEAK(Remove_error_code)

int PMPI_Remove_error_string(int errorcode)
{
    user_code_t *u;

    MPI_CHECK_INIT("MPI_Remove_error_string");
    pthread_mutex_lock(&mpi_obj_lock);
    u = lookup(errorcode);
    if (u != NULL) {
        free(u->text);
        u->text = NULL;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    if (u == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "MPI_Remove_error_string",
                         "%d is not a user-added error code or class",
                         errorcode);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Remove_error_string)

/* ---- error handlers ------------------------------------------------------------- */

MPI_Errhandler mpi_errh_new(int kind)
{
    MPI_Errhandler eh = mpi_obj_alloc(sizeof(*eh));

    if (eh != NULL) {
        eh->magic = MPI_MAGIC_ERRH;
        eh->refs = 1;
        eh->kind = kind;
    }
    return eh;
}

void mpi_errh_retain(MPI_Errhandler eh)
{
    if (eh != NULL && !is_predef_errh(eh))
        __atomic_add_fetch(&eh->refs, 1, __ATOMIC_RELAXED);
}

void mpi_errh_release(MPI_Errhandler eh)
{
    if (eh == NULL || is_predef_errh(eh))
        return;
    if (__atomic_sub_fetch(&eh->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    eh->magic = MPI_MAGIC_DEAD;
    mpi_obj_free(eh);
}

static int errh_ok(MPI_Errhandler eh)
{
    return eh != NULL && eh->magic == MPI_MAGIC_ERRH;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn,
                                MPI_Errhandler *errhandler)
{
    MPI_Errhandler eh;

    MPI_CHECK_INIT("MPI_Comm_create_errhandler");
    if (fn == NULL || errhandler == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                         "MPI_Comm_create_errhandler",
                         "function or errhandler is NULL");
    eh = mpi_errh_new(4);
    if (eh == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                         "MPI_Comm_create_errhandler", "no memory");
    eh->fn = fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_create_errhandler)

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    MPI_Errhandler old;

    MPI_CHECK_INIT("MPI_Comm_set_errhandler");
    if (!mpi_comm_ok(comm))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM,
                         "MPI_Comm_set_errhandler", "invalid communicator %p",
                         (void *)comm);
    if (!errh_ok(eh))
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                         "invalid error handler %p", (void *)eh);
    if (eh->kind == 5)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                         "a file error handler (MPI_File_create_errhandler) "
                         "cannot be set on a communicator");
    mpi_errh_retain(eh);
    pthread_mutex_lock(&mpi_obj_lock);
    old = comm->errh;
    comm->errh = eh;
    pthread_mutex_unlock(&mpi_obj_lock);
    mpi_errh_release(old);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
    MPI_CHECK_INIT("MPI_Comm_get_errhandler");
    if (!mpi_comm_ok(comm))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM,
                         "MPI_Comm_get_errhandler", "invalid communicator %p",
                         (void *)comm);
    if (eh == NULL)
        return mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler",
                         "errhandler is NULL");
    pthread_mutex_lock(&mpi_obj_lock);
    *eh = comm->errh != NULL ? comm->errh : MPI_ERRORS_ARE_FATAL;
    mpi_errh_retain(*eh);
    pthread_mutex_unlock(&mpi_obj_lock);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_get_errhandler)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    MPI_CHECK_INIT("MPI_Comm_call_errhandler");
    if (!mpi_comm_ok(comm))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM,
                         "MPI_Comm_call_errhandler", "invalid communicator %p",
                         (void *)comm);
    /* The handler ran (or the job ended): the call itself succeeded. */
    mpi_error(comm, errorcode, "MPI_Comm_call_errhandler",
              "error %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Comm_call_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
    MPI_CHECK_INIT("MPI_Errhandler_free");
    if (eh == NULL || !errh_ok(*eh))
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free",
                         "invalid error handler");
    mpi_errh_release(*eh);
    *eh = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Errhandler_free)
