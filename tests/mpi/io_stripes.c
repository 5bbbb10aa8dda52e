/*
 * striping_factor sets how many aggregators collective buffering uses
 * when cb_nodes is not given (src/io/io_twophase.c).  Made visible: rank 1
 * may not grow files (RLIMIT_FSIZE of 4 KiB), and every rank writes its
 * 64 KiB block of a new file with write_at_all through the aggregators.
 * With one aggregator (the default on one host: rank 0) the write
 * succeeds; with striping_factor=2 rank 1 becomes the aggregator of the
 * second half of the file and the write must fail on every rank with
 * MPI_ERR_NO_SPACE; with cb_nodes=1 as well, cb_nodes wins and it
 * succeeds.  Every byte of the successful files is checked.
 */
#include "io_test.h"

#include <signal.h>
#include <sys/resource.h>

#define BLK 65536

static int rank, nprocs;

/* Write every rank's block with these hints: the error class. */
static int attempt(const char *path, const char *sf, const char *nodes)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    unsigned char buf[BLK];
    int rc, cls;

    memset(buf, 'a' + rank, sizeof(buf));
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    if (sf != NULL)
        MT_OK(MPI_Info_set(info, "striping_factor", sf));
    if (nodes != NULL)
        MT_OK(MPI_Info_set(info, "cb_nodes", nodes));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        info, &fh));
    rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * BLK, buf, BLK, MPI_BYTE,
                               &st);
    MPI_Error_class(rc, &cls);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        if (cls == MPI_SUCCESS) {
            size_t n;
            unsigned char *f = io_slurp(path, &n);
            MT_CHECK(n == (size_t)nprocs * BLK, "file of %zu bytes", n);
            for (size_t i = 0; i < n; i++)
                MT_CHECK(f[i] == 'a' + i / BLK, "byte %zu is %d", i, f[i]);
            free(f);
        }
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    return cls;
}

int main(int argc, char **argv)
{
    char path[512];
    int cls;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MT_CHECK(nprocs >= 2, "needs 2 ranks or more");
    io_dir_make("stripes");
    io_path(path, sizeof(path), "s.dat");
    if (rank == 1) {
        struct rlimit lim;
        MT_CHECK(getrlimit(RLIMIT_FSIZE, &lim) == 0, "getrlimit");
        lim.rlim_cur = 4096;
        signal(SIGXFSZ, SIG_IGN);
        MT_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    }
    cls = attempt(path, NULL, NULL);
    MT_CHECK(cls == MPI_SUCCESS, "one aggregator: class %d", cls);
    cls = attempt(path, "1", NULL);
    MT_CHECK(cls == MPI_SUCCESS, "striping_factor 1: class %d", cls);
    cls = attempt(path, "2", NULL);
    MT_CHECK(cls == MPI_ERR_NO_SPACE,
             "striping_factor 2: class %d, not MPI_ERR_NO_SPACE (rank 1 "
             "did not aggregate?)",
             cls);
    cls = attempt(path, "2", "1");
    MT_CHECK(cls == MPI_SUCCESS, "striping_factor 2, cb_nodes 1: class %d",
             cls);
    io_dir_remove();
    if (rank == 0)
        printf("io_stripes at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
