/*
 * The MPI environment: Init and Finalize, thread levels, clocks, names,
 * versions, Abort.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi/core/errhandler.h"
#include "mpi/p2p/p2p_engine.h"

/* The engine lock is recursive: poll functions of requests run inside
 * progress (lock held) and start sends and receives of their own. */
mpi_state_t mpi = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};


static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int provided_level(int required)
{
    switch (base_cfg.MPI_THREAD) {
    case 1: /* single */
        return required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                                                : required;
    case 2: /* multiple */
        return MPI_THREAD_MULTIPLE;
    default:
        return required;
    }
}

/* A failure after the active-message layer came up: the other ranks
 * may be waiting for this one in a collective of MPI_Init, so the job is
 * taken down (the launcher reports it), as MPI_ERRORS_ARE_FATAL does. */
static BASE_NORETURN BASE_PRINTF(2, 3) void init_failed(const char *fn,
                                                        const char *fmt, ...)
{
    char detail[MPI_MAX_ERROR_STRING];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    fprintf(stderr, "shoal: MPI error: %s: %s (fatal: outside MPI_Init.."
                    "MPI_Finalize the error handler is MPI_ERRORS_ARE_FATAL)"
                    "\n", fn, detail);
    fflush(stderr);
    shoal_abort(1, detail);
    _exit(1); /* shoal_abort does not return */
}

/* A later MPI_Init_thread or session asks for more than the library
 * runs with: MPI_THREAD_MULTIPLE can be turned on while no other thread
 * is inside MPI, which the lower levels promise (the engine lock is
 * then taken, as under the progress thread). */
static void raise_level(int required)
{
    int level = provided_level(required);

    if (level <= mpi.thread_level)
        return;
    mpi.thread_level = level;
    if (level == MPI_THREAD_MULTIPLE)
        mpi.mt = 1;
}

/* Bring the library up: MPI_Init, or the first MPI_Session_init. */
void mpi_runtime_up(int required, const char *fn)
{
    int status;

    if (required < MPI_THREAD_SINGLE)
        required = MPI_THREAD_SINGLE;
    if (required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_MULTIPLE;
    if (mpi.up) {
        raise_level(required);
        return;
    }
    status = shoal_init(NULL);
    if (status != SHOAL_OK)
        mpi_fatal_outside(fn, "%s", shoal_error_detail());
    /* A rank's stdout is a pipe to its launcher, fully buffered by the C
     * library: lines printed before a crash or a SIGKILL would be lost,
     * and ranks' lines would come out in bursts.  Line-buffered, as under
     * Open MPI (whose ranks write to a pseudo-terminal).  With no buffer
     * given, glibc only changes the mode, so output already buffered
     * stays and goes first. */
    if (base_cfg.MPI_STDOUT == 0 && !isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOLBF, 0);
    mpi.world_rank = shoal_rank();
    mpi.world_size = shoal_size();
    mpi.thread_level = provided_level(required);
    mpi.mt = mpi.thread_level == MPI_THREAD_MULTIPLE;
    mpi.main_thread = pthread_self();
    mpi.wtime_base = now_s();
    if (gethostname(mpi.processor_name, sizeof(mpi.processor_name)) != 0)
        strcpy(mpi.processor_name, "localhost");
    mpi.processor_name[sizeof(mpi.processor_name) - 1] = '\0';
    /* Before the first object: with a checkpoint directory, objects live
     * where a restart can put them back (obj_arena.c). */
    mpi_ckpt_init_arena();
    status = mpi_ft_init();
    if (status == SHOAL_OK)
        status = mpi_p2p_init();
    if (status != SHOAL_OK)
        init_failed(fn, "%s", shoal_error_detail());
    mpi.up = 1;
    status = mpi_comm_init_predef();
    if (status != MPI_SUCCESS) {
        mpi.up = 0;
        init_failed(fn, "setting up MPI_COMM_WORLD failed");
    }
    /* The initial error handler (MPI 4.0 section 9.3; the launcher's
     * --initial-errhandler): on the two predefined communicators, and so
     * for the errors of calls tied to no communicator, which go to
     * MPI_COMM_WORLD's handler. */
    MPI_COMM_WORLD->errh = mpi_errh_initial();
    MPI_COMM_SELF->errh = mpi_errh_initial();
    status = mpi_coll_world_init();
    if (status != MPI_SUCCESS)
        init_failed(fn, "learning which ranks share hosts failed");
    if (mpi_progress_thread_start() != SHOAL_OK)
        init_failed(fn, "%s", shoal_error_detail());
    mpi_ckpt_trigger_init();
}

static int init_common(int required, int *provided, const char *fn)
{
    if (mpi.initialized || mpi.finalized) {
        if (mpi.finalized)
            mpi_fatal_outside(fn, "MPI is already finalized (it cannot be "
                                  "initialized again)");
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, fn,
                         "MPI is already initialized");
    }
    mpi_runtime_up(required, fn); /* or only raise the thread level */
    mpi.initialized = 1;
    if (provided != NULL)
        *provided = mpi.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return init_common(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}
SHOAL_MPI_WEAK(Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (provided == NULL)
        mpi_fatal_outside("MPI_Init_thread", "provided is NULL");
    return init_common(required, provided, "MPI_Init_thread");
}
SHOAL_MPI_WEAK(Init_thread)

/* Take the library down: MPI_Finalize when no session is left, the last
 * MPI_Session_finalize after MPI_Finalize, or the exit of a program that
 * used sessions only (session.c). */
int mpi_runtime_down(const char *fn)
{
    int status;

    /* No more checkpoints the launcher asks for: our last count. */
    mpi_ckpt_trigger_final();
    /* From here on this thread alone drives the engine. */
    mpi_progress_thread_stop();
    /* The standard runs COMM_SELF's delete callbacks first, while the
     * library still works (tools hook Finalize this way). */
    mpi_attr_delete_all(MPI_ATTR_COMM, MPI_COMM_SELF, &MPI_COMM_SELF->attrs);
    /* Buffered messages must leave before the wires close. */
    {
        void *b;
        MPI_Count n;
        PMPI_Buffer_detach_c(&b, &n);
    }
    /* After failures (SHOAL_FT) the survivors meet first. */
    mpi_ft_finalize();
    /* Tolerant barriers still running and the messages they hold back. */
    mpi_tol_fini();
    mpi_comm_fini_predef();
    mpi_coll_world_fini();
    mpi_p2p_fini();
    mpi_handle_fini();
    mpi_req_pool_fini();
    status = shoal_finalize();
    /* Under SHOAL_FT a peer may be dead: the survivors met above. */
    if (mpi_ft.on && SHOAL_ERR_IS_LINK_FAILURE(status))
        status = SHOAL_OK;
    mpi_ft_fini();
    mpi_ckpt_fini();
    mpi_ckpt_trigger_fini();
    int rc = MPI_SUCCESS;
    if (status != SHOAL_OK)
        rc = mpi_error(NULL, mpi_class_of_status(status), fn, "%s",
                       shoal_error_detail());
    mpi.up = 0;
    return rc;
}

int PMPI_Finalize(void)
{
    MPI_CHECK_INIT("MPI_Finalize");
    if (!mpi.initialized || mpi.finalized)
        return mpi_error(NULL, MPI_ERR_OTHER, "MPI_Finalize",
                         "MPI_Init was not called (only sessions run: "
                         "they end with MPI_Session_finalize)");
    if (mpi.sessions > 0) {
        /* The world model ends; the library runs on for the sessions
         * until the last one is finalized.  COMM_SELF's delete callbacks
         * still run now, as the standard says. */
        mpi_attr_delete_all(MPI_ATTR_COMM, MPI_COMM_SELF,
                            &MPI_COMM_SELF->attrs);
        mpi.finalized = 1;
        return MPI_SUCCESS;
    }
    int rc = mpi_runtime_down("MPI_Finalize");
    mpi.finalized = 1;
    return rc;
}
SHOAL_MPI_WEAK(Finalize)

int PMPI_Initialized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = mpi.initialized;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Initialized)

int PMPI_Finalized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = mpi.finalized;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Finalized)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[96];

    (void)comm;
    snprintf(msg, sizeof(msg), "MPI_Abort called with error code %d",
             errorcode);
    if (!mpi.up) {
        fprintf(stderr, "shoal: %s before MPI_Init\n", msg);
        _exit(errorcode & 0xff ? errorcode & 0xff : 1);
    }
    shoal_abort(errorcode, msg);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Abort)

int PMPI_Query_thread(int *provided)
{
    MPI_CHECK_INIT("MPI_Query_thread");
    if (provided == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Query_thread",
                         "provided is NULL");
    *provided = mpi.thread_level;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    MPI_CHECK_INIT("MPI_Is_thread_main");
    if (flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Is_thread_main",
                         "flag is NULL");
    *flag = pthread_equal(pthread_self(), mpi.main_thread) != 0;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Is_thread_main)

double PMPI_Wtime(void)
{
    return now_s() - mpi.wtime_base;
}
SHOAL_MPI_WEAK(Wtime)

double PMPI_Wtick(void)
{
    struct timespec res;

    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}
SHOAL_MPI_WEAK(Wtick)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    MPI_CHECK_INIT("MPI_Get_processor_name");
    if (name == NULL || resultlen == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_processor_name",
                         "name or resultlen is NULL");
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", mpi.processor_name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Get_processor_name)

int PMPI_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Get_version)

int PMPI_Get_library_version(char *version, int *resultlen)
{
    int n;

    if (version == NULL || resultlen == NULL)
        return MPI_ERR_ARG;
    n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                 "Shoal %s (MPI %d.%d)", SHOAL_VERSION_STRING, MPI_VERSION,
                 MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING
                     ? n
                     : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Get_library_version)

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    void *p;

    (void)info;
    MPI_CHECK_INIT("MPI_Alloc_mem");
    if (size < 0 || baseptr == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Alloc_mem",
                         "size %ld negative or baseptr NULL", (long)size);
    p = malloc(size > 0 ? (size_t)size : 1);
    if (p == NULL)
        return mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem",
                         "no memory for %ld bytes", (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    MPI_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Free_mem)

int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(Pcontrol)
