/*
 * Opening, closing and deleting files.
 *
 * MPI_File_open is collective and all or nothing: the ranks first agree
 * that every argument was valid and that amode is the same everywhere;
 * then rank 0 opens (and creates, when asked) the file and tells the
 * others how it went; then the others open it, without O_CREAT or O_EXCL
 * (it exists now, and O_EXCL on every rank would fail all but one); then
 * all agree on the outcome.  If any rank failed, every rank closes what it
 * opened, rank 0 removes a file this call created, and every rank returns
 * an error: no handle stays open anywhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

const char *io_strip_prefix(const char *name)
{
    static const char *const prefixes[] = {
        "ufs:",   "nfs:", "lustre:", "gpfs:", "pvfs2:",
        "panfs:", "xfs:", "testfs:", "shoal:"};

    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0)
            return name + n;
    }
    return name;
}

/* The standard's amode rules (MPI 4.1 section 14.2.1). */
static int amode_check(int amode, const char **why)
{
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);

    if (amode & ~IO_AMODE_ALL) {
        *why = "amode has bits that are no MPI_MODE_* constant";
        return MPI_ERR_AMODE;
    }
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_RDWR &&
        access != MPI_MODE_WRONLY) {
        *why = "amode must have exactly one of MPI_MODE_RDONLY, "
               "MPI_MODE_RDWR and MPI_MODE_WRONLY";
        return MPI_ERR_AMODE;
    }
    if (access == MPI_MODE_RDONLY &&
        (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) {
        *why = "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
        return MPI_ERR_AMODE;
    }
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL)) {
        *why = "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
        return MPI_ERR_AMODE;
    }
    return MPI_SUCCESS;
}

static int open_flags(int amode)
{
    int f = O_CLOEXEC;

    if (amode & MPI_MODE_RDONLY)
        f |= O_RDONLY;
    else if (amode & MPI_MODE_WRONLY)
        f |= O_WRONLY;
    else
        f |= O_RDWR;
    return f;
}

/* Rank 0's open: creates when asked; *created when this call made it. */
static int open_first(const char *path, int amode, int *created, int *err)
{
    int flags = open_flags(amode), fd;

    *created = 0;
    if (amode & MPI_MODE_EXCL) {
        fd = open(path, flags | O_CREAT | O_EXCL, 0666);
        if (fd >= 0)
            *created = 1;
    } else if (amode & MPI_MODE_CREATE) {
        for (;;) {
            fd = open(path, flags);
            if (fd >= 0 || errno != ENOENT)
                break;
            fd = open(path, flags | O_CREAT | O_EXCL, 0666);
            if (fd >= 0) {
                *created = 1;
                break;
            }
            if (errno != EEXIST)
                break;
        }
    } else {
        fd = open(path, flags);
    }
    *err = fd < 0 ? errno : 0;
    return fd;
}

/* A regular file (or something like one: not a directory). */
static int check_kind(int fd, MPI_Offset *size_p, int *err)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        *err = errno;
        return io_errno_class(errno);
    }
    if (S_ISDIR(st.st_mode)) {
        *err = EISDIR;
        return MPI_ERR_BAD_FILE;
    }
    *size_p = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

/* This process's open files, for MPI_File_delete (under mpi_obj_lock). */
static base_list_t open_files = {&open_files, &open_files};

/* 1 when path names a file this process has open with MPI_File_open. */
static int open_here(const char *path)
{
    struct stat want, st;
    int found = 0;

    if (stat(path, &want) != 0)
        return 0;
    pthread_mutex_lock(&mpi_obj_lock);
    for (base_list_t *e = open_files.next; e != &open_files && !found;
         e = e->next) {
        MPI_File f = BASE_CONTAINER_OF(e, struct shoal_mpi_file, open_link);
        found = fstat(f->fd, &st) == 0 && st.st_dev == want.st_dev &&
                st.st_ino == want.st_ino;
    }
    pthread_mutex_unlock(&mpi_obj_lock);
    return found;
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode,
                   MPI_Info info, MPI_File *fh)
{
    const char *fn = "MPI_File_open", *why = NULL, *path = NULL;
    MPI_Comm dup = MPI_COMM_NULL;
    int lc = MPI_SUCCESS, rank, rc, fd = -1, created = 0, err = 0;
    int agree[3], all[3];
    long fs_magic;
    const char *fs_name;
    long long first[2]; /* rank 0's class and file size */
    MPI_Offset size = 0;
    MPI_File f;

    MPI_CHECK_INIT(fn);
    if (fh == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn, "fh is NULL");
    *fh = MPI_FILE_NULL;
    if (!mpi_comm_ok(comm))
        return io_error(MPI_FILE_NULL, MPI_ERR_COMM, fn,
                        "invalid communicator %p", (void *)comm);
    if (comm->is_inter)
        return io_error(MPI_FILE_NULL, MPI_ERR_COMM, fn,
                        "an intercommunicator: files are opened on "
                        "intracommunicators");

    /* Local checks; their outcome is agreed on below, so that one rank
     * with a bad argument does not leave the others waiting. */
    if (filename == NULL) {
        lc = MPI_ERR_BAD_FILE;
        why = "filename is NULL";
    } else if ((path = io_strip_prefix(filename))[0] == '\0') {
        lc = MPI_ERR_BAD_FILE;
        why = "filename is empty";
    } else if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO) {
        lc = MPI_ERR_INFO;
        why = "invalid info object";
    } else {
        lc = amode_check(amode, &why);
    }

    if ((rc = PMPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return io_error(MPI_FILE_NULL, rc, fn,
                        "could not duplicate the communicator");
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(dup, &rank);
    agree[0] = lc;
    agree[1] = amode;
    agree[2] = -amode;
    if ((rc = PMPI_Allreduce(agree, all, 3, MPI_INT, MPI_MAX, dup)) !=
        MPI_SUCCESS) {
        PMPI_Comm_free(&dup);
        return io_error(MPI_FILE_NULL, rc, fn,
                        "could not agree on the arguments");
    }
    if (all[0] != MPI_SUCCESS) {
        PMPI_Comm_free(&dup);
        if (lc != MPI_SUCCESS)
            return io_error(MPI_FILE_NULL, lc, fn, "%s", why);
        return io_error(MPI_FILE_NULL, all[0], fn,
                        "another rank's arguments were invalid");
    }
    if (all[1] != -all[2]) {
        PMPI_Comm_free(&dup);
        return io_error(MPI_FILE_NULL, MPI_ERR_NOT_SAME, fn,
                        "amode differs between the ranks (it must be the "
                        "same everywhere)");
    }

    /* Rank 0 opens (creates) first. */
    first[0] = MPI_SUCCESS;
    first[1] = 0;
    if (rank == 0) {
        fd = open_first(path, amode, &created, &err);
        if (fd < 0)
            first[0] = io_errno_class(err);
        else if ((first[0] = check_kind(fd, &size, &err)) != MPI_SUCCESS)
            close(fd), fd = -1;
        first[1] = size;
    }
    if ((rc = PMPI_Bcast(first, 2, MPI_LONG_LONG, 0, dup)) != MPI_SUCCESS) {
        if (fd >= 0)
            close(fd);
        PMPI_Comm_free(&dup);
        return io_error(MPI_FILE_NULL, rc, fn, "lost the other ranks");
    }
    if (first[0] != MPI_SUCCESS) {
        PMPI_Comm_free(&dup);
        if (rank == 0)
            return io_error(MPI_FILE_NULL, (int)first[0], fn, "%s: %s", path,
                            strerror(err));
        return io_error(MPI_FILE_NULL, (int)first[0], fn,
                        "%s: rank 0 could not open it", path);
    }
    size = first[1];

    /* Then the others; then everyone agrees on the outcome. */
    lc = MPI_SUCCESS;
    if (rank != 0) {
        MPI_Offset sz;
        fd = open(path, open_flags(amode));
        if (fd < 0) {
            err = errno;
            lc = io_errno_class(err);
        } else if ((lc = check_kind(fd, &sz, &err)) != MPI_SUCCESS) {
            close(fd);
            fd = -1;
        }
    }
    rc = PMPI_Allreduce(&lc, &all[0], 1, MPI_INT, MPI_MAX, dup);
    if (rc != MPI_SUCCESS || all[0] != MPI_SUCCESS) {
        if (fd >= 0)
            close(fd);
        if (rank == 0 && created)
            unlink(path);
        PMPI_Comm_free(&dup);
        if (rc != MPI_SUCCESS)
            return io_error(MPI_FILE_NULL, rc, fn, "lost the other ranks");
        if (lc != MPI_SUCCESS)
            return io_error(MPI_FILE_NULL, lc, fn, "%s: %s", path,
                            strerror(err));
        return io_error(MPI_FILE_NULL, all[0], fn,
                        "%s: another rank could not open it", path);
    }

    f = calloc(1, sizeof(*f));
    if (f != NULL) {
        f->refs = 1; /* the handle's; a request's each (io_async.c) */
        f->path = strdup(path);
    }
    lc = f != NULL && f->path != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (lc == MPI_SUCCESS) {
        if (info != MPI_INFO_NULL)
            lc = PMPI_Info_dup(info, &f->hints);
        else
            lc = PMPI_Info_create(&f->hints);
    }
    if (lc == MPI_SUCCESS && (lc = io_view_default(&f->view)) != MPI_SUCCESS)
        PMPI_Info_free(&f->hints);
    /* Out of memory anywhere fails the open everywhere.  The same
     * reduction agrees on the file system: if any rank's file is on a
     * network or cluster file system (io_fs.c), every rank takes it so,
     * for collective buffering's automatic choice (ranks on the file
     * server's host may see a local file system); and if any rank's
     * locks stay on its host (FUSE), no rank sieves writes by default. */
    agree[0] = lc;
    agree[1] = io_fs_kind(fd, &fs_magic, &fs_name, &agree[2]);
    rc = PMPI_Allreduce(agree, all, 3, MPI_INT, MPI_MAX, dup);
    if (rc != MPI_SUCCESS || all[0] != MPI_SUCCESS) {
        if (f != NULL) {
            if (f->hints != NULL)
                PMPI_Info_free(&f->hints);
            free(f->path);
            free(f);
        }
        close(fd);
        if (rank == 0 && created)
            unlink(path);
        PMPI_Comm_free(&dup);
        return io_error(MPI_FILE_NULL, rc != MPI_SUCCESS ? rc : all[0], fn,
                        "no memory for the file handle");
    }
    f->magic = MPI_MAGIC_FILE;
    f->fd = fd;
    f->amode = amode;
    f->comm = dup;
    f->errh = io_null_errh();
    mpi_errh_retain(f->errh);
    /* MPI_MODE_APPEND: both pointers start at the end of the file. */
    f->pos = (amode & MPI_MODE_APPEND) ? size : 0;
    f->shfd = -1;
    f->ds_read = 2;
    f->ds_write = 2;
    f->ds_any = 0;
    f->ov_any = 0;
    f->cbw_small_any = 0;
    f->cbr_small_any = 0;
    f->netfs_any = all[1];
    f->nolocks_any = all[2];
    f->fs_magic = fs_magic;
    io_shared_open(f, f->pos);
    /* Collective buffering: the aggregators, and rank 0's hints. */
    lc = io_twophase_setup(f);
    if (lc == MPI_SUCCESS)
        lc = io_hints_apply(f);
    if (lc != MPI_SUCCESS) {
        /* The handle works without aggregators: independent IO. */
        free(f->aggs);
        f->aggs = NULL;
        f->naggs = 0;
    }
    pthread_mutex_lock(&mpi_obj_lock);
    base_list_push_back(&open_files, &f->open_link);
    pthread_mutex_unlock(&mpi_obj_lock);
    *fh = f;
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_open)

void io_file_ref(MPI_File f)
{
    __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void io_file_unref(MPI_File f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    mpi_errh_release(f->errh);
    free(f->path);
    free(f);
}

int PMPI_File_close(MPI_File *fh)
{
    const char *fn = "MPI_File_close";
    MPI_File f;
    int rc, rank, err = 0;

    MPI_CHECK_INIT(fn);
    if (fh == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_ARG, fn, "fh is NULL");
    if ((rc = io_check_file(*fh, fn)) != MPI_SUCCESS)
        return rc;
    f = *fh;
    PMPI_Comm_rank(f->comm, &rank);
    /* Close synchronizes the file state first (MPI 4.1 section 14.2.2). */
    if (f->dirty && fsync(f->fd) != 0 && errno != EINVAL)
        err = errno;
    /* Everyone is done with the file before it goes. */
    rc = PMPI_Barrier(f->comm);
    pthread_mutex_lock(&mpi_obj_lock);
    base_list_remove(&f->open_link);
    pthread_mutex_unlock(&mpi_obj_lock);
    close(f->fd);
    io_shared_close(f);
    if (rank == 0 && (f->amode & MPI_MODE_DELETE_ON_CLOSE))
        unlink(f->path);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(f->comm);
    f->magic = MPI_MAGIC_DEAD;
    io_view_free(&f->view);
    free(f->aggs);
    f->aggs = NULL;
    PMPI_Info_free(&f->hints);
    PMPI_Comm_free(&f->comm);
    *fh = MPI_FILE_NULL;
    if (rc != MPI_SUCCESS) {
        rc = io_error(MPI_FILE_NULL, rc, fn, "lost the other ranks");
    } else if (err != 0) {
        /* The handle is gone: the error goes to MPI_FILE_NULL's handler
         * after the file's own had its say. */
        rc = io_error(MPI_FILE_NULL, io_errno_class(err), fn,
                      "%s: synchronizing before close: %s", f->path,
                      strerror(err));
    }
    io_file_unref(f);
    return rc;
}
SHOAL_MPI_WEAK(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    const char *fn = "MPI_File_delete", *path;

    MPI_CHECK_INIT(fn);
    if (filename == NULL)
        return io_error(MPI_FILE_NULL, MPI_ERR_BAD_FILE, fn,
                        "filename is NULL");
    if (info != MPI_INFO_NULL && info->magic != MPI_MAGIC_INFO)
        return io_error(MPI_FILE_NULL, MPI_ERR_INFO, fn, "invalid info object");
    path = io_strip_prefix(filename);
    /* (Open in another process of the job is not seen: POSIX lets the
     * file go, and the others keep reading it until they close.) */
    if (open_here(path))
        return io_error(MPI_FILE_NULL, MPI_ERR_FILE_IN_USE, fn,
                        "%s is open in this process: MPI_File_close it "
                        "first", path);
    if (unlink(path) != 0) {
        int err = errno;
        return io_error(MPI_FILE_NULL, io_errno_class(err), fn, "%s: %s", path,
                        strerror(err));
    }
    return MPI_SUCCESS;
}
SHOAL_MPI_WEAK(File_delete)
