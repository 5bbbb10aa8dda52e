/*
 * Double buffering in blocking two-phase collective buffering
 * (io_twophase_rw, hint shoal_cb_double_buffer): one aggregator (rank 0,
 * cb_nodes 1), rounds of 100 bytes of file (cb_buffer_size), so every
 * access is many rounds.  argv[1] is the hint's value ("enable",
 * "disable", or "default": no hint, which is on).
 *
 * - Data: write_at_all and read_at_all through a vector view (each rank's
 *   blocks of 10 bytes interleaved with the others'), also with the
 *   individual pointer (write_all, read_all); every byte of the file
 *   checked against the test's own image, every byte read back.
 * - Where the rounds' IO runs: rank 0's IO thread is held by an access of
 *   another handle waiting for an fcntl lock that a child process holds
 *   for 1.5 s.  With double buffering the aggregator's IO of the rounds
 *   runs in the IO thread, behind that access, so rank 0's write_at_all
 *   returns only after the child let the lock go (it has exited); without
 *   it the IO runs in the call, which returns while the child still holds
 *   the lock (the child is then told to let go).  A test that passes for
 *   both values cannot tell them apart: it would fail one of the two runs.
 * - Errors: a write past RLIMIT_FSIZE fails in a later round on the
 *   aggregator; every rank gets MPI_ERR_NO_SPACE, none hangs, and the
 *   handle writes every byte once the limit is back.
 * - The nonblocking calls (iwrite_at_all, iwrite_all, iread_at_all,
 *   iread_all) through the same rounds, three patterns: the vector view
 *   with contiguous memory, the vector view with every other byte of
 *   memory (a vector memory type), and each rank's contiguous block
 *   without a view; two accesses outstanding at once; every byte of the
 *   file checked, every byte read back.
 * - Where the nonblocking rounds' data move (2 ranks and more): rank 0's
 *   IO thread is held (as above) while every rank writes 256 KiB with
 *   iwrite_all through a vector view in rounds of 256 KiB of file, so
 *   rank 1's part of each round is at least 64 KiB, sent by rendezvous:
 *   the data are taken from rank 1's buffer only when the aggregator
 *   receives them.  All ranks test their requests for 1 s; then rank 1
 *   overwrites its buffer (an erroneous program, on purpose: it shows
 *   when its bytes were taken) and only then the IO thread is let go.
 *   Round 0's bytes were taken before (its IO is what waits), so the file
 *   must hold the first values; round 1's were taken during round 0's IO
 *   with double buffering (the first values: "enable") and after it
 *   without (the overwritten ones: "disable", and "default", which
 *   double-buffers only the blocking calls).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "io_test.h"

#define N 1000 /* bytes per rank and access */
#define B 10   /* bytes per block of the vector view */

static int rank, nprocs, dbl, nbdbl; /* double-buffered: blocking calls,
                                        nonblocking ones */
static const char *mode;

static unsigned char val(int r, int i, unsigned salt)
{
    return (unsigned char)(r * 41 + i * 7 + salt);
}

/* Collective buffering through one aggregator in rounds of `round`
 * bytes of file, double buffering as the mode says. */
static MPI_File open_rounds(const char *path, const char *round)
{
    MPI_File fh;
    MPI_Info info;

    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    MT_OK(MPI_Info_set(info, "romio_cb_read", "enable"));
    MT_OK(MPI_Info_set(info, "cb_nodes", "1"));
    MT_OK(MPI_Info_set(info, "cb_buffer_size", round));
    if (strcmp(mode, "default") != 0)
        MT_OK(MPI_Info_set(info, "shoal_cb_double_buffer", mode));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        info, &fh));
    MT_OK(MPI_Info_free(&info));
    return fh;
}

static MPI_File open_cb(const char *path)
{
    return open_rounds(path, "100");
}

/* Close fh and (rank 0, once all closed) delete the file. */
static void close_delete(MPI_File *fh, const char *path)
{
    MT_OK(MPI_File_close(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* Rank r's blocks of B bytes, every nprocs-th block. */
static void set_view(MPI_File fh)
{
    MPI_Datatype v, ft;

    MT_OK(MPI_Type_vector(N / B, B, B * nprocs, MPI_BYTE, &v));
    MT_OK(MPI_Type_create_resized(v, 0, (MPI_Aint)N * nprocs, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&v));
    MT_OK(MPI_Type_free(&ft));
}

static void check_file(const char *path, int copies, unsigned salt)
{
    size_t n;
    unsigned char *f;

    if (rank != 0)
        return;
    f = io_slurp(path, &n);
    MT_CHECK(n == (size_t)copies * N * nprocs, "%s: file of %zu bytes", mode,
             n);
    for (int c = 0; c < copies; c++)
        for (int r = 0; r < nprocs; r++)
            for (int i = 0; i < N; i++) {
                size_t at = (size_t)c * N * nprocs +
                            ((size_t)(i / B) * nprocs + (size_t)r) * B +
                            (size_t)(i % B);
                MT_CHECK(f[at] == val(r, c * N + i, salt),
                         "%s: copy %d, rank %d's byte %d is %u, want %u",
                         mode, c, r, i, f[at], val(r, c * N + i, salt));
            }
    free(f);
}

static void data(const char *path)
{
    MPI_File fh = open_cb(path);
    MPI_Status st;
    unsigned char *b = malloc(2 * N), *in = calloc(1, 2 * N);
    int c;

    MT_CHECK(b && in, "malloc");
    for (int i = 0; i < 2 * N; i++)
        b[i] = val(rank, i, 3);
    set_view(fh);
    MT_OK(MPI_File_write_at_all(fh, 0, b, N, MPI_BYTE, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "%s: write count %d", mode, c);
    MT_OK(MPI_File_seek(fh, N, MPI_SEEK_SET));
    MT_OK(MPI_File_write_all(fh, b + N, N, MPI_BYTE, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    check_file(path, 2, 3);
    MT_OK(MPI_File_read_at_all(fh, 0, in, N, MPI_BYTE, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "%s: read count %d", mode, c);
    MT_OK(MPI_File_seek(fh, N, MPI_SEEK_SET));
    MT_OK(MPI_File_read_all(fh, in + N, N, MPI_BYTE, &st));
    MT_CHECK(memcmp(in, b, 2 * N) == 0, "%s: read back differs", mode);
    close_delete(&fh, path);
    free(b);
    free(in);
}

/* A child holding an exclusive lock over [0, len) of path until a byte
 * comes on *release or hold_ms pass; its pid once locked. */
static pid_t locker(const char *path, off_t len, int *release, int hold_ms)
{
    int up[2], down[2];
    char c;
    pid_t pid;

    MT_CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe");
    pid = fork();
    MT_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                           .l_start = 0, .l_len = len};
        struct pollfd p = {down[0], POLLIN, 0};
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0)
            _exit(1);
        if (write(up[1], "L", 1) != 1)
            _exit(1);
        poll(&p, 1, hold_ms);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    MT_CHECK(read(up[0], &c, 1) == 1 && c == 'L', "locker did not lock");
    close(up[0]);
    *release = down[1];
    return pid;
}

static void where(const char *path, const char *lockpath)
{
    MPI_File fh, g = MPI_FILE_NULL;
    MPI_Request rg = MPI_REQUEST_NULL;
    MPI_Status st;
    unsigned char *b = malloc(N), z[16] = {0};
    int release = -1, stat = 0, c;
    pid_t pid = 0, gone;

    MT_CHECK(b != NULL, "malloc");
    for (int i = 0; i < N; i++)
        b[i] = val(rank, i, 9);
    fh = open_cb(path);
    set_view(fh);
    if (rank == 0) {
        /* The IO thread stuck behind an atomic-mode write of another
         * handle, which waits for the child's lock. */
        MT_OK(MPI_File_open(MPI_COMM_SELF, lockpath,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &g));
        MT_OK(MPI_File_set_atomicity(g, 1));
        pid = locker(lockpath, sizeof(z), &release, dbl ? 1500 : 20000);
        MT_OK(MPI_File_iwrite_at(g, 0, z, sizeof(z), MPI_BYTE, &rg));
    }
    MT_OK(MPI_File_write_at_all(fh, 0, b, N, MPI_BYTE, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "%s: write count %d", mode, c);
    if (rank == 0) {
        gone = waitpid(pid, &stat, WNOHANG);
        /* The child's lock goes as it exits, a moment before it can be
         * reaped: give a double-buffered call's child 0.2 s for that
         * (without double buffering it holds the lock for 20 s). */
        for (int i = 0; i < 200 && dbl && gone == 0; i++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            gone = waitpid(pid, &stat, WNOHANG);
        }
        if (dbl)
            MT_CHECK(gone == pid,
                     "%s: write_at_all returned while the IO thread was "
                     "held (the rounds' IO did not run there)",
                     mode);
        else
            MT_CHECK(gone == 0,
                     "%s: write_at_all waited for the IO thread (the "
                     "rounds' IO did not run in the call)",
                     mode);
        MT_CHECK(write(release, "U", 1) == 1 || gone == pid,
                 "release the locker");
        close(release);
        if (gone == 0)
            MT_CHECK(waitpid(pid, &stat, 0) == pid, "waitpid");
        MT_CHECK(WIFEXITED(stat) && WEXITSTATUS(stat) == 0, "locker failed");
        MT_OK(MPI_Wait(&rg, MPI_STATUS_IGNORE));
        MT_OK(MPI_File_close(&g));
        unlink(lockpath);
    }
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    check_file(path, 1, 9);
    close_delete(&fh, path);
    free(b);
}

/* Start two nonblocking writes (wr) or reads of pattern's copies 0 and 1
 * (see nb_data) from or into b, then wait for both and check their
 * counts. */
static void nb_two(MPI_File fh, int wr, int pattern, unsigned char *b,
                   MPI_Datatype mem, int stride)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int n = pattern == 1 ? 1 : N, c;

    for (int k = 0; k < 2; k++) {
        unsigned char *p = b + (size_t)k * N * stride;
        /* Patterns 0 and 1: one by offset, one by the individual pointer;
         * 2: each rank's own contiguous block, copy k after copy k - 1's
         * nprocs blocks. */
        MPI_Offset at = pattern == 2 ? ((MPI_Offset)k * nprocs + rank) * N
                                     : 0;
        if (pattern != 2 && k == 1)
            MT_OK(MPI_File_seek(fh, N, MPI_SEEK_SET));
        if (pattern != 2 && k == 1 && wr)
            MT_OK(MPI_File_iwrite_all(fh, p, n, mem, &r[k]));
        else if (pattern != 2 && k == 1)
            MT_OK(MPI_File_iread_all(fh, p, n, mem, &r[k]));
        else if (wr)
            MT_OK(MPI_File_iwrite_at_all(fh, at, p, n, mem, &r[k]));
        else
            MT_OK(MPI_File_iread_at_all(fh, at, p, n, mem, &r[k]));
    }
    MT_OK(MPI_Waitall(2, r, st));
    for (int k = 0; k < 2; k++) {
        MT_OK(MPI_Get_count(&st[k], MPI_BYTE, &c));
        MT_CHECK(c == N, "%s: nonblocking %s %d of pattern %d counted %d",
                 mode, wr ? "write" : "read", k, pattern, c);
    }
}

/* The nonblocking calls through the same rounds: pattern 0 the vector
 * view from contiguous memory, 1 the vector view from every other byte
 * of memory, 2 each rank's contiguous block (no view). */
static void nb_data(const char *path, int pattern)
{
    MPI_File fh = open_cb(path);
    MPI_Datatype mem = MPI_BYTE;
    int stride = pattern == 1 ? 2 : 1;
    unsigned salt = 20u + (unsigned)pattern;
    unsigned char *b = calloc(1, (size_t)2 * N * stride);
    unsigned char *in = calloc(1, (size_t)2 * N * stride);

    MT_CHECK(b && in, "malloc");
    for (int i = 0; i < 2 * N; i++)
        b[i * stride] = val(rank, i, salt);
    if (pattern == 1) {
        MT_OK(MPI_Type_vector(N, 1, 2, MPI_BYTE, &mem));
        MT_OK(MPI_Type_commit(&mem));
    }
    if (pattern != 2)
        set_view(fh);
    nb_two(fh, 1, pattern, b, mem, stride);
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (pattern != 2) {
        check_file(path, 2, salt);
    } else if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)2 * N * nprocs, "%s: file of %zu bytes", mode,
                 n);
        for (int k = 0; k < 2; k++)
            for (int q = 0; q < nprocs; q++)
                for (int i = 0; i < N; i++) {
                    size_t at = ((size_t)k * nprocs + (size_t)q) * N + i;
                    MT_CHECK(f[at] == val(q, k * N + i, salt),
                             "%s: contiguous copy %d, rank %d's byte %d is "
                             "%u, want %u",
                             mode, k, q, i, f[at], val(q, k * N + i, salt));
                }
        free(f);
    }
    nb_two(fh, 0, pattern, in, mem, stride);
    MT_CHECK(memcmp(in, b, (size_t)2 * N * stride) == 0,
             "%s: pattern %d read back differs", mode, pattern);
    if (pattern == 1)
        MT_OK(MPI_Type_free(&mem));
    close_delete(&fh, path);
    free(b);
    free(in);
}

#define WN (256 * 1024) /* bytes per rank in nb_where, and per round */
#define WB 1024         /* its view's blocks */

static void nb_where(const char *path, const char *lockpath)
{
    MPI_File fh, g = MPI_FILE_NULL;
    MPI_Request r, rg = MPI_REQUEST_NULL;
    MPI_Datatype v, ft;
    unsigned char *b = malloc(WN), z[16] = {0};
    int release = -1, stat = 0, flag = 0;
    pid_t pid = 0;
    struct timespec t0, t1;

    MT_CHECK(b != NULL, "malloc");
    for (int i = 0; i < WN; i++)
        b[i] = val(rank, i, 13);
    fh = open_rounds(path, "262144");
    MT_OK(MPI_Type_vector(WN / WB, WB, WB * nprocs, MPI_BYTE, &v));
    MT_OK(MPI_Type_create_resized(v, 0, (MPI_Aint)WN * nprocs, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * WB, MPI_BYTE, ft,
                            "native", MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&v));
    MT_OK(MPI_Type_free(&ft));
    if (rank == 0) {
        MT_OK(MPI_File_open(MPI_COMM_SELF, lockpath,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &g));
        MT_OK(MPI_File_set_atomicity(g, 1));
        pid = locker(lockpath, sizeof(z), &release, 20000);
        MT_OK(MPI_File_iwrite_at(g, 0, z, sizeof(z), MPI_BYTE, &rg));
    }
    /* Everyone tests for the same second, from the same start. */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_iwrite_all(fh, b, WN, MPI_BYTE, &r));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        MT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        MT_CHECK(!flag, "%s: iwrite_all done while the aggregator's IO "
                 "thread was held", mode);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L +
                 (t1.tv_nsec - t0.tv_nsec) <
             1000000000L);
    if (rank == 1)
        memset(b, 0xEE, WN); /* on purpose, see the top */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MT_CHECK(write(release, "U", 1) == 1, "release the locker");
        close(release);
        MT_CHECK(waitpid(pid, &stat, 0) == pid, "waitpid");
        MT_CHECK(WIFEXITED(stat) && WEXITSTATUS(stat) == 0, "locker failed");
        MT_OK(MPI_Wait(&rg, MPI_STATUS_IGNORE));
        MT_OK(MPI_File_close(&g));
        unlink(lockpath);
    }
    MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        size_t n, per = WN / nprocs; /* rank 1's bytes per round */
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)WN * nprocs, "%s: file of %zu bytes", mode, n);
        for (size_t i = 0; i < 2 * per; i++) {
            size_t at = (i / WB * nprocs + 1) * WB + i % WB;
            int first = i < per || nbdbl; /* round 0, or 1 double-buffered */
            unsigned char want = first ? val(1, (int)i, 13) : 0xEE;
            MT_CHECK(f[at] == want,
                     "%s: rank 1's byte %zu (round %zu) is %u, want %u: "
                     "round 1's data were %s",
                     mode, i, i / per, f[at], want,
                     nbdbl ? "not received during round 0's IO (no double "
                             "buffering)"
                         : "received during round 0's IO (double "
                           "buffering was not off)");
        }
        free(f);
    }
    close_delete(&fh, path);
    free(b);
}

/* A write past RLIMIT_FSIZE fails on the aggregator in a later round:
 * every rank gets MPI_ERR_NO_SPACE, nothing hangs; within the limit again
 * the same handle writes every byte. */
static void errors(const char *path)
{
    MPI_File fh = open_cb(path);
    MPI_Status st;
    struct rlimit old, lim;
    unsigned char *b = malloc(N);
    int rc, cls;

    MT_CHECK(b != NULL, "malloc");
    for (int i = 0; i < N; i++)
        b[i] = val(rank, i, 5);
    set_view(fh);
    MT_CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
    lim = old;
    lim.rlim_cur = 500; /* rounds 5 and on fail */
    signal(SIGXFSZ, SIG_IGN);
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    rc = MPI_File_write_at_all(fh, 0, b, N, MPI_BYTE, &st);
    MPI_Error_class(rc, &cls);
    MT_CHECK(cls == MPI_ERR_NO_SPACE,
             "%s: a write past RLIMIT_FSIZE gave class %d, not "
             "MPI_ERR_NO_SPACE",
             mode, cls);
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
    signal(SIGXFSZ, SIG_DFL);
    MT_OK(MPI_File_write_at_all(fh, 0, b, N, MPI_BYTE, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    check_file(path, 1, 5);
    close_delete(&fh, path);
    free(b);
}

int main(int argc, char **argv)
{
    char a[512], l[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    signal(SIGPIPE, SIG_IGN); /* a locker that has exited */
    mode = argc > 1 ? argv[1] : "default";
    dbl = strcmp(mode, "disable") != 0;
    nbdbl = strcmp(mode, "enable") == 0; /* automatic: off for these */
    io_dir_make("cbdouble");
    io_path(a, sizeof(a), "d.dat");
    data(a);
    io_path(l, sizeof(l), "lock.dat");
    where(a, l);
    errors(a);
    for (int pattern = 0; pattern < 3; pattern++)
        nb_data(a, pattern);
    if (nprocs > 1)
        nb_where(a, l);
    io_dir_remove();
    if (rank == 0)
        printf("io_cbdouble (%s) at %d ranks: ok\n", mode, nprocs);
    MPI_Finalize();
    return 0;
}
