/*
 * Collective buffering's automatic choice (io_hints.c io_cb_decide,
 * io_fs.c): on a network or cluster file system (FUSE, NFS, Lustre, ...)
 * collective calls through a view with holes and blocks under 8 KiB go
 * through the aggregators (reads only where they are not sieved: blocks
 * of 1 KiB and more); on a local one (tmpfs, ext4, ...), through
 * contiguous views and views of large blocks they do not;
 * romio_cb_read/romio_cb_write and shoal_netfs override it.  What was
 * chosen is read back with MPI_File_get_info (shoal_cb_read_used,
 * shoal_cb_write_used, shoal_netfs_used, shoal_fs), on every rank.
 *
 *   mpi_io_cbauto KIND [FSNAME]
 *
 * KIND: "net" (IO_TEST_DIR is on a network file system for every rank),
 * "local" (for none), "mixed" (for some ranks only: the ranks must still
 * agree on "net"); FSNAME, if given, is the name rank 0 must report
 * (shoal_fs).  Every choice is also exercised: a strided collective write
 * and read through the view, every byte of the file checked with POSIX.
 */
#include "io_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

/* The value of key in fh's info ("" when absent). */
static void info_get(MPI_File fh, const char *key, char *val, int n)
{
    MPI_Info info;
    int flag;

    MT_OK(MPI_File_get_info(fh, &info));
    MT_OK(MPI_Info_get(info, key, n - 1, val, &flag));
    if (!flag)
        val[0] = '\0';
    MT_OK(MPI_Info_free(&info));
}

/* shoal_cb_read_used and shoal_cb_write_used must be want_r and want_w
 * ("enable" or "disable") on every rank. */
static void expect_rw(MPI_File fh, const char *want_r, const char *want_w,
                      const char *what)
{
    char r[64], w[64];

    info_get(fh, "shoal_cb_read_used", r, sizeof(r));
    info_get(fh, "shoal_cb_write_used", w, sizeof(w));
    MT_CHECK(strcmp(r, want_r) == 0 && strcmp(w, want_w) == 0,
             "%s: collective buffering read %s write %s, want read %s "
             "write %s",
             what, r, w, want_r, want_w);
}

static void expect_cb(MPI_File fh, const char *want, const char *what)
{
    expect_rw(fh, want, want, what);
}

/* A view of blocks of blk bytes, ranks interleaved: rank r owns block r
 * of every nprocs. */
static void strided_view(MPI_File fh, int blk)
{
    MPI_Datatype ft, rt;

    MT_OK(MPI_Type_vector(1, blk, blk * nprocs, MPI_BYTE, &ft));
    MT_OK(MPI_Type_create_resized(ft, 0, (MPI_Aint)blk * nprocs, &rt));
    MT_OK(MPI_Type_commit(&rt));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * blk, MPI_BYTE, rt,
                            "native", MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_free(&rt));
}

/* Write 10 blocks of blk bytes through strided_view(blk) with
 * write_all, check the file's bytes, and read them back with read_all. */
static void exercise(MPI_File fh, const char *path, int seed, int blk)
{
    const int BLOCKS = 10, N = blk * BLOCKS;
    unsigned char *b = malloc(N), *r = malloc(N), *f;
    size_t n;

    MT_CHECK(b != NULL && r != NULL, "malloc");
    for (int i = 0; i < N; i++)
        b[i] = (unsigned char)(seed + rank * 31 + i * 7);
    MT_OK(MPI_File_set_size(fh, 0));
    MT_OK(MPI_File_write_at_all(fh, 0, b, N, MPI_BYTE, MPI_STATUS_IGNORE));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The file's bytes, read by rank 0 with POSIX. */
    if (rank == 0) {
        f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)N * nprocs, "pass %d: file size %zu, want %d",
                 seed, n, N * nprocs);
        for (int k = 0; k < BLOCKS * nprocs; k++) {
            int owner = k % nprocs;
            for (int j = 0; j < blk; j++) {
                int i = k / nprocs * blk + j;
                unsigned char want =
                    (unsigned char)(seed + owner * 31 + i * 7);
                MT_CHECK(f[k * blk + j] == want,
                         "pass %d: byte %d of the file is %d, want %d (rank "
                         "%d)",
                         seed, k * blk + j, f[k * blk + j], want, owner);
            }
        }
        free(f);
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* And back through the view. */
    memset(r, 0, N);
    MT_OK(MPI_File_read_at_all(fh, 0, r, N, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        MT_CHECK(b[i] == r[i],
                 "pass %d: read_all gave byte %d of %d as %d, want %d", seed,
                 i, N, r[i], b[i]);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(b);
    free(r);
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "local";
    const char *fsname = argc > 2 ? argv[2] : NULL;
    int net = strcmp(kind, "local") != 0;
    const char *autocb = net ? "enable" : "disable";
    char path[400], v[64];
    MPI_File fh;
    MPI_Info info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    io_dir_make("cbauto");
    io_path(path, sizeof(path), "f");

    /* No hints: the file system decides, and every rank agrees. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                        MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    info_get(fh, "shoal_netfs_used", v, sizeof(v));
    MT_CHECK(strcmp(v, autocb) == 0, "%s file system: shoal_netfs_used %s",
             kind, v);
    info_get(fh, "shoal_fs", v, sizeof(v));
    if (rank == 0 && fsname != NULL)
        MT_CHECK(strcmp(v, fsname) == 0, "shoal_fs is %s, want %s", v,
                 fsname);
    if (rank == 0)
        printf("file system %s (%s): automatic chooses %s for views with "
               "2 KiB blocks\n",
               v, kind, autocb);
    /* A contiguous view: each rank's part is one request; never. */
    expect_cb(fh, "disable", "default view");
    /* Blocks of 2 KiB: on a network file system, both ways. */
    strided_view(fh, 2048);
    expect_cb(fh, autocb, "2 KiB blocks");
    exercise(fh, path, 1, 2048);
    /* Of 200 bytes: writes; reads are sieved instead. */
    strided_view(fh, 200);
    expect_rw(fh, "disable", autocb, "200-byte blocks");
    exercise(fh, path, 2, 200);
    /* Of 8 KiB, the bound: no longer. */
    strided_view(fh, 8192);
    expect_cb(fh, "disable", "8 KiB blocks");
    /* Of 32 KiB: each rank's requests are large already; never. */
    strided_view(fh, 32768);
    expect_cb(fh, "disable", "32 KiB blocks");
    exercise(fh, path, 3, 32768);
    /* The hints keep precedence, both ways. */
    strided_view(fh, 2048);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "disable"));
    MT_OK(MPI_Info_set(info, "romio_cb_read", "disable"));
    MT_OK(MPI_File_set_info(fh, info));
    expect_cb(fh, "disable", "romio_cb_*=disable");
    exercise(fh, path, 4, 2048);
    /* Without the aggregators, 200-byte blocks are written by each rank:
     * sieved on a local file system, not where the fcntl locks that
     * guard sieving stay on each host (FUSE): across hosts the windows
     * written back would lose the other hosts' bytes. */
    strided_view(fh, 200);
    for (int rep = 0; rep < 5; rep++) /* a race: give it chances */
        exercise(fh, path, 7 + rep, 200);
    strided_view(fh, 2048);
    MT_OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    MT_OK(MPI_Info_set(info, "romio_cb_read", "enable"));
    MT_OK(MPI_File_set_info(fh, info));
    expect_cb(fh, "enable", "romio_cb_*=enable");
    exercise(fh, path, 5, 2048);
    MT_OK(MPI_Info_set(info, "romio_cb_write", "automatic"));
    MT_OK(MPI_Info_set(info, "romio_cb_read", "automatic"));
    MT_OK(MPI_File_set_info(fh, info));
    expect_cb(fh, autocb, "romio_cb_*=automatic");
    /* Back to a contiguous view: off again. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
                            MPI_INFO_NULL));
    expect_cb(fh, "disable", "contiguous view again");
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Info_free(&info));

    /* shoal_netfs overrides the file system's kind; only rank 0's counts
     * (the others ask for the opposite). */
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "shoal_netfs",
                       (rank == 0) == net ? "disable" : "enable"));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    strided_view(fh, 2048);
    expect_cb(fh, net ? "disable" : "enable", "shoal_netfs (rank 0's)");
    exercise(fh, path, 20, 2048);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Info_free(&info));

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        unlink(path);
    io_dir_remove();
    if (rank == 0)
        printf("io_cbauto (%s) at %d ranks: ok\n", kind, nprocs);
    MPI_Finalize();
    return 0;
}
