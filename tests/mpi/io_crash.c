/*
 * A rank killed during a collective write: what an earlier MPI_File_sync
 * covered stays, and the others do not hang.  io_crash.sh runs it:
 *
 *   io_crash write DIR   (2 ranks, no collective buffering) both write
 *                        their 64 KiB block of 'A' + rank and sync; then
 *                        rank 1 kills itself (SIGKILL) while rank 0 writes
 *                        its block again as 'a'; the job fails
 *   io_crash check DIR   (1 rank) the file must hold block 1 as synced
 *                        ('B' throughout) and block 0 whole, either
 *                        version; prints "io_crash: synced bytes intact"
 *
 *   io_crash cbwrite DIR VICTIM CB_NODES blocking|nonblocking
 *                        (P ranks, 2 to 64: io_crash.sh runs 3, the
 *                        multihost test 2 + 2; romio_cb_write=enable,
 *                        cb_nodes CB_NODES (0: the default, one per
 *                        host), cb_buffer_size 1000: hundreds of
 *                        rounds) the file is cells of 48 bytes, each
 *                        rank's cells interleaved with the others'
 *                        (rank r owns cells 2 (q P + r) and
 *                        2 (q P + r) + 1); the odd cells are written
 *                        collectively through a vector view and synced,
 *                        then the even ones, in a collective write that
 *                        rank VICTIM does not live through: blocking, an
 *                        interval timer SIGKILLs it 2 ms into
 *                        MPI_File_write_all; nonblocking, it starts
 *                        MPI_File_iwrite_all, tests it for 2 ms (it
 *                        must not be done) and SIGKILLs itself.  Either
 *                        way it first writes "mid" to DIR/victim.txt if
 *                        the write was still going on ("after" if not).
 *                        Under shoalrun --ft (MPIX_FT set) the survivors'
 *                        write must come back; each prints
 *                        "io_crash: survivor R: write returned, class C".
 *   io_crash cbcheck DIR P [complete]
 *                        (1 rank) every byte of every odd cell is its
 *                        synced value, every byte of an even cell is 0
 *                        (not written yet) or its new value, its new value
 *                        with "complete" (a survivor's write succeeded);
 *                        prints "io_crash: synced bytes intact"
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "mpitest.h"
#include <fcntl.h>
#include <unistd.h>

#define BS 65536
#define CPMAX 64      /* ranks of cbwrite at most */
#define CELL 48       /* bytes per cell */
#define NCELL 1365    /* cells per rank and write */

static int nranks; /* ranks of cbwrite (cbcheck: given) */

/* The byte at file offset x in write g (1: synced, 2: the crashed one);
 * never 0, so a byte never written shows. */
static unsigned char val(long long x, int g)
{
    return (unsigned char)((x * 7 + (x >> 9) * 13 + g * 101) % 255 + 1);
}

static volatile sig_atomic_t in_call;
static int mark_fd = -1;

static void on_alarm(int sig)
{
    (void)sig;
    if (in_call) {
        if (write(mark_fd, "mid\n", 4) != 4)
            _exit(3);
    } else if (write(mark_fd, "after\n", 6) != 6) {
        _exit(3);
    }
    kill(getpid(), SIGKILL);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The vector view of rank r's cells of parity ph, and their values. */
static void cb_view(MPI_File fh, int r, int ph, unsigned char *data)
{
    MPI_Datatype ft;
    MPI_Offset disp = (MPI_Offset)(2 * r + ph) * CELL;

    MT_OK(MPI_Type_vector(NCELL, CELL, 2 * nranks * CELL, MPI_BYTE, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&ft));
    for (long long q = 0; q < NCELL; q++)
        for (int i = 0; i < CELL; i++) {
            long long x = disp + q * 2 * nranks * CELL + i;
            data[q * CELL + i] = val(x, ph ? 1 : 2);
        }
}

static int cb_write(int argc, char **argv)
{
    static unsigned char data[NCELL * CELL];
    int rank, size, victim, nb, cls, rc, ft = 0, flag = 0;
    char path[600], mark[600];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;

    MT_CHECK(argc == 6, "usage: io_crash cbwrite DIR VICTIM CB_NODES "
                        "blocking|nonblocking");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 2 && size <= CPMAX, "cbwrite runs on 2 to %d ranks",
             CPMAX);
    nranks = size;
    victim = atoi(argv[3]);
    nb = strcmp(argv[5], "nonblocking") == 0;
    MT_CHECK(victim >= 0 && victim < nranks, "bad victim %s", argv[3]);
    {
        int *v = NULL;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &v, &ft);
        ft = ft && v != NULL && *v;
    }
    snprintf(path, sizeof(path), "%s/crash-cb.dat", argv[2]);
    snprintf(mark, sizeof(mark), "%s/victim.txt", argv[2]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    MT_OK(MPI_Info_set(info, "cb_nodes", argv[4]));
    MT_OK(MPI_Info_set(info, "cb_buffer_size", "1000"));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        info, &fh));
    MT_OK(MPI_Info_free(&info));
    /* The odd cells, through the aggregators, synced by everyone. */
    cb_view(fh, rank, 1, data);
    MT_OK(MPI_File_write_all(fh, data, NCELL * CELL, MPI_BYTE, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The even cells: the victim dies in the middle. */
    cb_view(fh, rank, 0, data);
    if (rank == victim) {
        mark_fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        MT_CHECK(mark_fd >= 0, "open %s", mark);
        signal(SIGALRM, on_alarm);
    }
    if (nb) {
        MPI_Request req;
        in_call = 1;
        MT_OK(MPI_File_iwrite_all(fh, data, NCELL * CELL, MPI_BYTE, &req));
        if (rank == victim) {
            double t0 = now();
            while (now() - t0 < 0.002 && !flag)
                MT_OK(MPI_Test(&req, &flag, &st));
            in_call = !flag;
            raise(SIGALRM);
        }
        rc = MPI_Wait(&req, &st);
    } else {
        if (rank == victim) {
            struct itimerval it = {{0, 0}, {0, 2000}};
            setitimer(ITIMER_REAL, &it, NULL);
        }
        in_call = 1;
        rc = MPI_File_write_all(fh, data, NCELL * CELL, MPI_BYTE, &st);
        in_call = 0;
        if (rank == victim) /* too quick for the timer: say so, die */
            raise(SIGALRM);
    }
    /* Only under --ft does a survivor get here.  Its write may have
     * succeeded: if the victim died after its part had gone (its data
     * and its outcome sent), the others could finish; then every byte of
     * the write must be in the file (cbcheck ... complete). */
    MPI_Error_class(rc, &cls);
    printf("io_crash: survivor %d: write returned, class %d%s\n", rank, cls,
           ft ? "" : " (not under --ft?)");
    fflush(stdout);
    MPI_File_close(&fh); /* may fail: a rank is gone */
    MPI_Finalize();
    return 0;
}

static int cb_check(const char *dir, int complete)
{
    char path[600];
    static unsigned char got[2 * CPMAX * NCELL * CELL];
    long long nall = 2LL * nranks * NCELL;
    struct stat sb;
    long long synced_end = 0;
    int fd;

    snprintf(path, sizeof(path), "%s/crash-cb.dat", dir);
    fd = open(path, O_RDONLY);
    MT_CHECK(fd >= 0, "open %s", path);
    MT_CHECK(fstat(fd, &sb) == 0, "fstat");
    /* The last odd cell ends the synced bytes. */
    synced_end = nall * CELL;
    MT_CHECK(sb.st_size >= synced_end,
             "the file is %lld bytes, shorter than the synced %lld",
             (long long)sb.st_size, synced_end);
    MT_CHECK(sb.st_size <= synced_end, "the file grew to %lld bytes",
             (long long)sb.st_size);
    MT_CHECK(pread(fd, got, (size_t)synced_end, 0) == (ssize_t)synced_end,
             "short read");
    close(fd);
    {
        long long fresh = 0, unwritten = 0;
        for (long long x = 0; x < synced_end; x++) {
            long long c = x / CELL;
            if (c & 1) {
                MT_CHECK(got[x] == val(x, 1),
                         "synced byte %lld (cell %lld of rank %lld) is %d, "
                         "not %d",
                         x, c, (c / 2) % nranks, got[x], val(x, 1));
            } else {
                MT_CHECK((got[x] == 0 && !complete) || got[x] == val(x, 2),
                         "byte %lld of the crashed write (cell %lld) is %d: "
                         "%s %d (a survivor's write succeeded: %s)",
                         x, c, got[x], complete ? "not" : "neither 0 nor",
                         val(x, 2), complete ? "yes" : "no");
                if (got[x] == 0)
                    unwritten++;
                else
                    fresh++;
            }
        }
        printf("io_crash: synced bytes intact (%lld bytes of the crashed "
               "write there, %lld not)\n",
               fresh, unwritten);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static char blk[BS], got[2 * BS];
    char path[600];
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MT_CHECK(argc >= 3, "usage: io_crash write|check|cbwrite|cbcheck DIR");
    if (strcmp(argv[1], "cbwrite") == 0)
        return cb_write(argc, argv);
    if (strcmp(argv[1], "cbcheck") == 0) {
        MT_CHECK(argc >= 4, "usage: io_crash cbcheck DIR NP [complete]");
        nranks = atoi(argv[3]);
        MT_CHECK(nranks >= 2 && nranks <= CPMAX, "bad NP %s", argv[3]);
        cb_check(argv[2], argc > 4 && strcmp(argv[4], "complete") == 0);
        MPI_Finalize();
        return 0;
    }
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
