/*
 * A rank killed during a collective write: what an earlier MPI_File_sync
 * covered stays.  io_crash.sh runs it twice:
 *
 *   io_crash write DIR   (2 ranks) both write their 64 KiB block of
 *                        'A' + rank and sync; then rank 1 kills itself
 *                        (SIGKILL) while rank 0 writes its block again as
 *                        'a'; the job fails
 *   io_crash check DIR   (1 rank) the file must hold block 1 as synced
 *                        ('B' throughout) and block 0 whole, either
 *                        version; prints "io_crash: synced bytes intact"
 */
#define _GNU_SOURCE
#include <signal.h>

#include "mpitest.h"
#include <fcntl.h>
#include <unistd.h>

#define BS 65536

int main(int argc, char **argv)
{
    static char blk[BS], got[2 * BS];
    char path[600];
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MT_CHECK(argc == 3, "usage: io_crash write|check DIR");
    snprintf(path, sizeof(path), "%s/crash.dat", argv[2]);
    if (strcmp(argv[1], "write") == 0) {
        MPI_File fh;
        MPI_Status st;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &fh));
        memset(blk, 'A' + rank, BS);
        MT_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * BS, blk, BS,
                                    MPI_BYTE, &st));
        MT_OK(MPI_File_sync(fh));
        if (rank == 1)
            raise(SIGKILL);
        memset(blk, 'a' + rank, BS);
        MPI_File_write_at_all(fh, (MPI_Offset)rank * BS, blk, BS, MPI_BYTE,
                              &st);
        MPI_File_close(&fh); /* fails: rank 1 is gone */
        MPI_Finalize();
        return 0;
    }
    {
        int fd = open(path, O_RDONLY);
        MT_CHECK(fd >= 0, "open %s", path);
        MT_CHECK(pread(fd, got, sizeof(got), 0) == (ssize_t)sizeof(got),
                 "the file is shorter than the two synced blocks");
        close(fd);
        for (int i = 0; i < BS; i++)
            MT_CHECK(got[BS + i] == 'B', "synced byte %d of rank 1 is %d",
                     BS + i, got[BS + i]);
        for (int i = 1; i < BS; i++)
            MT_CHECK(got[i] == got[0] && (got[0] == 'A' || got[0] == 'a'),
                     "rank 0's block torn at %d", i);
        printf("io_crash: synced bytes intact\n");
    }
    MPI_Finalize();
    return 0;
}
