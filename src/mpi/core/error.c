/*
 * Errors: the class strings, the predefined error handlers, and the one
 * path every failing MPI call takes (mpi_error).
 *
 * A failing call formats a detail message ("MPI_Send: rank 5 out of range
 * [0, 4)"), keeps it per thread, and runs the communicator's handler.  The
 * code returned is the class (or a user code from MPI_Add_error_code);
 * MPI_Error_string of the thread's last error code appends the detail, so
 * a program that prints the string after ERRORS_RETURN sees what was wrong.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/core/errhandler.h"
#include "mpi/core/ft.h"
#include "mpi/mpi_impl.h"

struct shoal_mpi_errhandler shoal_mpi_errh_predef[SHOAL_MPI_ERRH_SLOTS] = {
    [1] = {.magic = MPI_MAGIC_ERRH, .refs = 1 << 30, .kind = 1}, /* FATAL */
    [2] = {.magic = MPI_MAGIC_ERRH, .refs = 1 << 30, .kind = 2}, /* RETURN */
    [3] = {.magic = MPI_MAGIC_ERRH, .refs = 1 << 30, .kind = 3}, /* ABORT */
};

pthread_mutex_t mpi_obj_lock = PTHREAD_MUTEX_INITIALIZER;


static const char *const class_text[] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag argument",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated on receive",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal MPI error",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid keyval",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: info key too long",
    [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: info value too long",
    [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
    [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: error spawning processes",
    [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
    [MPI_ERR_NAME] = "MPI_ERR_NAME: invalid service name in lookup",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong RMA synchronization",
    [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
    [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: collective arguments differ",
    [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] =
        "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] =
        "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
    [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
    [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: no space left",
    [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or system",
    [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation "
                            "already defined",
    [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: conversion function failed",
    [MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory out of window",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_SESSION] = "MPI_ERR_SESSION: invalid session",
    [MPI_ERR_PROC_ABORTED] = "MPI_ERR_PROC_ABORTED: a peer process died",
    [MPI_ERR_VALUE_TOO_LARGE] = "MPI_ERR_VALUE_TOO_LARGE: value too large "
                                "for the output argument",
    [MPI_T_ERR_INVALID] = "MPI_T_ERR_INVALID: invalid tool use",
    [MPIX_ERR_PROC_FAILED] = "MPIX_ERR_PROC_FAILED: a process the "
                             "operation needs has failed",
    [MPIX_ERR_PROC_FAILED_PENDING] =
        "MPIX_ERR_PROC_FAILED_PENDING: a potential sender of this "
        "MPI_ANY_SOURCE receive failed; the request is still pending",
    [MPIX_ERR_REVOKED] = "MPIX_ERR_REVOKED: the communicator was revoked",
    [MPI_T_ERR_MEMORY] = "MPI_T_ERR_MEMORY: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] =
        "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized",
    [MPI_T_ERR_CANNOT_INIT] =
        "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "MPI_T_ERR_INVALID_INDEX: index out of range",
    [MPI_T_ERR_INVALID_ITEM] = "MPI_T_ERR_INVALID_ITEM: item index out of "
                               "range",
    [MPI_T_ERR_INVALID_HANDLE] = "MPI_T_ERR_INVALID_HANDLE: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "MPI_T_ERR_OUT_OF_HANDLES: no more handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "MPI_T_ERR_OUT_OF_SESSIONS: no more "
                                  "sessions",
    [MPI_T_ERR_INVALID_SESSION] = "MPI_T_ERR_INVALID_SESSION: invalid "
                                  "performance variable session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "MPI_T_ERR_CVAR_SET_NOT_NOW: the control "
                                   "variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "MPI_T_ERR_CVAR_SET_NEVER: the control "
                                 "variable cannot be set after start-up",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "MPI_T_ERR_PVAR_NO_STARTSTOP: the "
                                    "performance variable runs continuously",
    [MPI_T_ERR_PVAR_NO_WRITE] = "MPI_T_ERR_PVAR_NO_WRITE: the performance "
                                "variable cannot be written",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "MPI_T_ERR_PVAR_NO_ATOMIC: the performance "
                                 "variable cannot be read and reset at once",
    [MPI_T_ERR_INVALID_NAME] = "MPI_T_ERR_INVALID_NAME: no variable or "
                               "category of that name",
};

/* The last error of this thread: its code and detail. */
static __thread int last_code = -1;
static __thread char last_detail[MPI_MAX_ERROR_STRING];

int mpi_class_of_status(int s)
{
    switch (s) {
    case SHOAL_OK:
        return MPI_SUCCESS;
    case SHOAL_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case SHOAL_ERR_RANK:
        return MPI_ERR_RANK;
    case SHOAL_ERR_INVALID:
        return MPI_ERR_ARG;
    case SHOAL_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case SHOAL_ERR_INTERNAL:
        return MPI_ERR_INTERN;
    default:
        if (SHOAL_ERR_IS_LINK_FAILURE(s))
            return mpi_ft.on ? MPIX_ERR_PROC_FAILED : MPI_ERR_PROC_ABORTED;
        return MPI_ERR_OTHER;
    }
}

static const char *class_string(int code)
{
    if (code >= 0 && code <= MPI_LAST_PREDEF_CLASS && class_text[code] != NULL)
        return class_text[code];
    return mpi_error_user_string(code);
}

/* Cold: the handler says stop the job. */
static void die(int code, const char *why)
{
    const char *text = class_string(code);

    fprintf(stderr, "shoal[%d]: MPI error: %s (%s)%s\n", mpi.world_rank,
            last_detail, text ? text : "unknown error code", why);
    fflush(stderr);
    shoal_abort(code > 0 && code < 256 ? code : 1, last_detail);
    _exit(1);
}

/* Run eh for an error of class errclass in fn on obj (the MPI_Comm or
 * MPI_Session a user function gets); errclass for the caller. */
static int run_handler(MPI_Errhandler eh, void *obj, int errclass,
                       const char *fn)
{
    int code = errclass;

    switch (eh->kind) {
    case 2:
        return errclass;
    case 4: {
        MPI_Comm c = obj;
        eh->fn(&c, &code, fn);
        return errclass;
    }
    case 6: {
        MPI_Session s = obj;
        eh->session_fn(&s, &code, fn);
        return errclass;
    }
    case 3:
        die(errclass, " [MPI_ERRORS_ABORT]");
        return errclass;
    default:
        die(errclass, "");
        return errclass;
    }
}

int mpi_error(MPI_Comm comm, int errclass, const char *fn, const char *fmt,
              ...)
{
    va_list ap;
    int n = snprintf(last_detail, sizeof(last_detail), "%s: ", fn);
    MPI_Errhandler eh;

    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(last_detail))
        vsnprintf(last_detail + n, sizeof(last_detail) - (size_t)n, fmt, ap);
    va_end(ap);
    last_code = errclass;
    base_debug("mpi", "%s", last_detail);

    if (!mpi_comm_ok(comm))
        comm = MPI_COMM_WORLD;
    eh = mpi.up && comm->errh != NULL ? comm->errh : MPI_ERRORS_ARE_FATAL;
    return run_handler(eh, comm, errclass, fn);
}

void mpi_error_record(int errclass, const char *fn, const char *fmt,
                      va_list ap)
{
    int n = snprintf(last_detail, sizeof(last_detail), "%s: ", fn);

    if (n >= 0 && (size_t)n < sizeof(last_detail))
        vsnprintf(last_detail + n, sizeof(last_detail) - (size_t)n, fmt, ap);
    last_code = errclass;
    base_debug("mpi", "%s", last_detail);
}

void mpi_error_die(int errclass, int abort)
{
    die(errclass, abort ? " [MPI_ERRORS_ABORT]" : "");
    _exit(1); /* die does not return */
}

int mpi_error_raise(MPI_Errhandler eh, void *obj, int errclass,
                    const char *fn, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mpi_error_record(errclass, fn, fmt, ap);
    va_end(ap);
    if (eh == NULL || eh->magic != MPI_MAGIC_ERRH)
        eh = MPI_ERRORS_ARE_FATAL;
    return run_handler(eh, obj, errclass, fn);
}

/*
 * Errors outside MPI_Init..MPI_Finalize (MPI 4.0 section 9.3): they go to
 * the initial error handler, MPI_ERRORS_ARE_FATAL, since no communicator
 * exists to carry another.  A program that ignores MPI_Init's return value
 * (most do) would otherwise run on with no MPI and print an error per
 * call; Open MPI and MPICH end the process here too.
 */
void mpi_fatal_outside(const char *fn, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(last_detail, sizeof(last_detail), "%s: ", fn);

    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(last_detail))
        vsnprintf(last_detail + n, sizeof(last_detail) - (size_t)n, fmt, ap);
    va_end(ap);
    last_code = MPI_ERR_OTHER;
    fprintf(stderr, "shoal: MPI error: %s (fatal: outside MPI_Init.."
                    "MPI_Finalize the error handler is MPI_ERRORS_ARE_FATAL)"
                    "\n", last_detail);
    fflush(stderr);
    /* The library is down or was never up: nothing to take down but us. */
    _exit(1);
}

int mpi_check_init(const char *fn)
{
    mpi_fatal_outside(fn, "called %s: only MPI_Initialized, MPI_Finalized, "
                          "MPI_Get_version, MPI_Get_library_version and "
                          "the calls MPI 4.0 allows may be",
                      mpi.finalized ? "after MPI_Finalize"
                                    : "before MPI_Init");
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *text;
    int n;

    if (string == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    text = class_string(errorcode);
    if (text == NULL) {
        n = snprintf(string, MPI_MAX_ERROR_STRING,
                     "unknown MPI error code %d", errorcode);
        *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
        return MPI_ERR_ARG;
    }
    /* The detail of the last error goes with a predefined class only: a
     * user's code or class has the string the user associated with it
     * (MPI_Add_error_string), and nothing else. */
    if (errorcode == last_code && errorcode != MPI_SUCCESS &&
        errorcode <= MPIX_ERR_REVOKED)
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s (%s)", text,
                     last_detail);
    else
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Error_string)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (errorclass == NULL)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class",
                         "errorclass is NULL");
    if (errorcode >= 0 && errorcode <= MPI_LAST_PREDEF_CLASS) {
        *errorclass = errorcode;
        return MPI_SUCCESS;
    }
    if (mpi_error_user_class(errorcode, errorclass))
        return MPI_SUCCESS;
    return mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class",
                     "%d is not an error code", errorcode);
}
SHOAL_MPI_WEAK(Error_class)
