/*
 * Helpers of the MPI-IO tests: a fresh directory under /tmp (or
 * $IO_TEST_DIR) shared by the ranks (made by rank 0, its name broadcast,
 * removed at the end), and
 * plain POSIX reads and writes of whole files for the references.
 */
#ifndef SHOAL_IO_TEST_H
#define SHOAL_IO_TEST_H

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpitest.h"

static char io_dir[256];

/* Make the test directory (rank 0) and tell everyone its name. */
static inline void io_dir_make(const char *test)
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        /* IO_TEST_DIR: another file system (io_fs.sh: tmpfs, ext4). */
        const char *base = getenv("IO_TEST_DIR");
        snprintf(io_dir, sizeof(io_dir), "%s/shoal-io-%s.XXXXXX",
                 base != NULL && base[0] != '\0' ? base : "/tmp", test);
        MT_CHECK(mkdtemp(io_dir) != NULL, "mkdtemp %s", io_dir);
    }
    MT_OK(MPI_Bcast(io_dir, sizeof(io_dir), MPI_CHAR, 0, MPI_COMM_WORLD));
}

static inline void io_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", io_dir, name);
}

/* Remove the directory and what is in it (rank 0, after a barrier).
 * Hidden files left in it (a shared-pointer side file that was not
 * removed at close) fail the test. */
static inline void io_dir_remove(void)
{
    int rank;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        DIR *d = opendir(io_dir);
        struct dirent *e;
        char p[600];
        MT_CHECK(d != NULL, "opendir %s", io_dir);
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            MT_CHECK(e->d_name[0] != '.', "left behind: %s/%s", io_dir,
                     e->d_name);
            snprintf(p, sizeof(p), "%s/%s", io_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
        MT_CHECK(rmdir(io_dir) == 0, "rmdir %s", io_dir);
    }
}

/* The whole file into a new buffer; *n its size. */
static inline unsigned char *io_slurp(const char *path, size_t *n)
{
    struct stat st;
    unsigned char *b;
    int fd = open(path, O_RDONLY);

    MT_CHECK(fd >= 0, "open %s", path);
    MT_CHECK(fstat(fd, &st) == 0, "fstat %s", path);
    *n = (size_t)st.st_size;
    b = calloc(1, *n + 1);
    MT_CHECK(b != NULL, "calloc");
    MT_CHECK(pread(fd, b, *n, 0) == (ssize_t)*n, "pread %s", path);
    close(fd);
    return b;
}

/* Write a whole file from a buffer (replacing it). */
static inline void io_spill(const char *path, const void *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    MT_CHECK(fd >= 0, "create %s", path);
    MT_CHECK(pwrite(fd, b, n, 0) == (ssize_t)n, "pwrite %s", path);
    close(fd);
}

#endif
