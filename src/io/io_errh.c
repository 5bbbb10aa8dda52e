/*
 * The file error path and the file error-handler calls.
 *
 * A file's errors go to the file's handler, not a communicator's; a file
 * starts with the handler MPI_FILE_NULL holds when it is opened, which is
 * MPI_ERRORS_RETURN until MPI_File_set_errhandler(MPI_FILE_NULL, ...)
 * changes it (MPI 4.1 section 9.3).  Errors of MPI_File_open and
 * MPI_File_delete, and of calls given an invalid file handle, go to
 * MPI_FILE_NULL's handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "io/io.h"

/* MPI_FILE_NULL's handler; NULL means MPI_ERRORS_RETURN. */
static MPI_Errhandler null_errh;

MPI_Errhandler io_null_errh(void)
{
    MPI_Errhandler eh;

    pthread_mutex_lock(&mpi_obj_lock);
    eh = null_errh != NULL ? null_errh : MPI_ERRORS_RETURN;
    pthread_mutex_unlock(&mpi_obj_lock);
    return eh;
}

int io_error(MPI_File fh, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    MPI_Errhandler eh;
    int code = errclass;
    MPI_File f = io_file_ok(fh) ? fh : MPI_FILE_NULL;

    va_start(ap, fmt);
    mpi_error_record(errclass, fn, fmt, ap);
    va_end(ap);
    if (f != MPI_FILE_NULL) {
        pthread_mutex_lock(&mpi_obj_lock);
        eh = f->errh;
        pthread_mutex_unlock(&mpi_obj_lock);
    } else {
        eh = io_null_errh();
    }
    switch (eh->kind) {
    case 1:
        mpi_error_die(errclass, 0);
    case 3:
        mpi_error_die(errclass, 1);
    case 5:
        eh->file_fn(&f, &code, fn);
        return errclass;
    default: /* 2: MPI_ERRORS_RETURN */
        return errclass;
    }
}

int io_errno_class(int err)
{
    switch (err) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int io_check_file_nowait(MPI_File fh, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (!io_file_ok(fh))
        return io_error(MPI_FILE_NULL, MPI_ERR_FILE, fn,
                        "invalid file handle %p (closed, or never opened)",
                        (void *)fh);
    return MPI_SUCCESS;
}

int io_check_file(MPI_File fh, const char *fn)
{
    int rc = io_check_file_nowait(fh, fn);

    if (rc == MPI_SUCCESS) {
        /* Collective ones through the aggregators first: their last
         * rounds may still queue IO. */
        io_twophase_drain(fh);
        io_async_drain(fh);
    }
    return rc;
}

static int errh_ok(MPI_Errhandler eh)
{
    return eh != NULL && eh->magic == MPI_MAGIC_ERRH;
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn,
                                MPI_Errhandler *errhandler)
{
    MPI_Errhandler eh;

    MPI_CHECK_INIT("MPI_File_create_errhandler");
    if (fn == NULL || errhandler == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG,
                        "MPI_File_create_errhandler",
                        "function or errhandler is NULL");
    eh = mpi_errh_new(5);
    if (eh == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_NO_MEM,
                        "MPI_File_create_errhandler", "no memory");
    eh->file_fn = fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler eh)
{
    MPI_Errhandler old;
    const char *fn = "MPI_File_set_errhandler";

    MPI_CHECK_INIT(fn);
    if (file != MPI_FILE_NULL && !io_file_ok(file))
        return io_error(MPI_FILE_NULL, MPI_ERR_FILE, fn,
                        "invalid file handle %p", (void *)file);
    if (!errh_ok(eh))
        return io_error(file, MPI_ERR_ARG, fn, "invalid error handler %p",
                        (void *)eh);
    if (eh->kind == 4)
        return io_error(file, MPI_ERR_ARG, fn,
                        "a communicator's error handler "
                        "(MPI_Comm_create_errhandler) cannot be set on a "
                        "file");
    mpi_errh_retain(eh);
    pthread_mutex_lock(&mpi_obj_lock);
    if (file == MPI_FILE_NULL) {
        old = null_errh;
        null_errh = eh;
    } else {
        old = file->errh;
        file->errh = eh;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    mpi_errh_release(old);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *eh)
{
    const char *fn = "MPI_File_get_errhandler";

    MPI_CHECK_INIT(fn);
    if (file != MPI_FILE_NULL && !io_file_ok(file))
        return io_error(MPI_FILE_NULL, MPI_ERR_FILE, fn,
                        "invalid file handle %p", (void *)file);
    if (eh == NULL)
        return io_error(file, MPI_ERR_ARG, fn, "errhandler is NULL");
    if (file == MPI_FILE_NULL) {
        *eh = io_null_errh();
    } else {
        pthread_mutex_lock(&mpi_obj_lock);
        *eh = file->errh;
        pthread_mutex_unlock(&mpi_obj_lock);
    }
    mpi_errh_retain(*eh);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_get_errhandler)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *fn = "MPI_File_call_errhandler";

    MPI_CHECK_INIT(fn);
    if (fh != MPI_FILE_NULL && !io_file_ok(fh))
        return io_error(MPI_FILE_NULL, MPI_ERR_FILE, fn,
                        "invalid file handle %p", (void *)fh);
    /* The handler ran (or the job ended): the call itself succeeded. */
    io_error(fh, errorcode, fn, "error %d raised by the application",
             errorcode);
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_call_errhandler)
