/*
 * Nonblocking independent file access in the background (src/io/io_async.c).
 *
 * - Overlap, made certain: each rank forks a child that holds an exclusive
 *   fcntl lock over the rank's region; in atomic mode MPI_File_iwrite_at
 *   (and iread_at, iwrite_at_all, iread_all: collective buffering is off)
 *   of that region must return at once and MPI_Test must
 *   say "not done" again and again while the child holds the lock (the IO
 *   thread waits for it), the file must still be untouched, and after the
 *   child lets go MPI_Wait completes with every byte in place.  An
 *   implementation that does the work in the call fails here (the child
 *   gives up its lock after 20 s, the test then sees a completed request).
 * - The same through data representations, whose conversion runs in the
 *   IO thread: external32 (big-endian ints) and a user representation
 *   (ints as biased 8-byte big-endian numbers): a write and a read held
 *   up by the lock stay not done, the file untouched and the user's read
 *   conversion not yet called, then the file's bytes are the encoding
 *   and the values read back; a value external32 cannot hold (a long
 *   beyond 32 bits) is an MPI_ERR_CONVERSION of the request, not of the
 *   call, and nothing is written.
 * - Many requests at once: 32 iwrite_at of blocks, some from a strided
 *   memory type, completed with Waitall; read back with iread_at, completed
 *   with Testsome and Waitany; every byte and every count checked.
 * - The individual pointer moves at the call (get_position before the wait),
 *   through a view with holes; iread/iwrite in a row land one after the
 *   other.
 * - The shared pointer: iwrite_shared from every rank, each chunk once.
 * - A read past the end counts what came.
 * - MPI_Request_free of a running request, then close: the data are there.
 * - MPI_Cancel: of a request queued behind one held up by another
 *   process's lock, it is complete at once (while the lock is still held),
 *   MPI_Test_cancelled says true, and its bytes are never written; of the
 *   running one, and of one after it that is not cancelled, they complete
 *   normally.
 * - An error in the background (a write past RLIMIT_FSIZE) comes back
 *   through the request: MPI_Wait returns MPI_ERR_NO_SPACE, MPI_Waitall
 *   MPI_ERR_IN_STATUS with the class in the status; each time the file's
 *   own error handler is called (MPI 4.1 section 9.3) with that class, by
 *   MPI_Wait, MPI_Test, MPI_Waitall, MPI_Waitany and MPI_Testsome, and a
 *   request completed after its file was closed goes to MPI_FILE_NULL's.
 */
#include "io_test.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define REGION (1 << 20)

static int rank, nprocs;

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 9));
}

/* A child holding an exclusive lock over [off, off + len) of path until
 * a byte comes on *release (or hold_ms pass).  Returns its pid once the
 * lock is held. */
static pid_t locker(const char *path, off_t off, off_t len, int *release,
                    int hold_ms)
{
    int up[2], down[2];
    char c;
    pid_t pid;

    MT_CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe");
    pid = fork();
    MT_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                           .l_start = off, .l_len = len};
        struct pollfd p = {down[0], POLLIN, 0};
        int fd = open(path, O_RDWR);
        if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0)
            _exit(1);
        if (write(up[1], "L", 1) != 1)
            _exit(1);
        poll(&p, 1, hold_ms);
        _exit(0); /* the lock goes with the process */
    }
    close(up[1]);
    close(down[0]);
    MT_CHECK(read(up[0], &c, 1) == 1 && c == 'L', "locker did not lock");
    close(up[0]);
    *release = down[1];
    return pid;
}

static void unlocker(pid_t pid, int release)
{
    int st;

    MT_CHECK(write(release, "U", 1) == 1, "release the locker");
    close(release);
    MT_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                 WEXITSTATUS(st) == 0,
             "locker failed");
}

/* Test r tries times, sleeping 2 ms between: how many said done. */
static int tests_done(MPI_Request *r, int tries, MPI_Status *st)
{
    int flag = 0, done = 0;

    for (int i = 0; i < tries && !done; i++) {
        MT_OK(MPI_Test(r, &flag, st));
        done = flag;
        if (!done)
            usleep(2000);
    }
    return done;
}

static void overlap(const char *path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    unsigned char *out = malloc(REGION), *in = malloc(REGION);
    MPI_Offset off = (MPI_Offset)rank * REGION;
    int release, count;
    pid_t pid;
    size_t n;

    MT_CHECK(out != NULL && in != NULL, "malloc");
    fill(out, REGION, 1000u + (unsigned)rank);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_atomicity(fh, 1));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A write held up by another process's lock. */
    pid = locker(path, (off_t)off, REGION, &release, 20000);
    MT_OK(MPI_File_iwrite_at(fh, off, out, REGION, MPI_BYTE, &r));
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "iwrite_at completed while another process held the lock: "
             "not in the background");
    {
        /* Nothing written yet: the region reads as a hole (zeros). */
        int fd = open(path, O_RDONLY);
        MT_CHECK(fd >= 0, "open");
        memset(in, 0xee, REGION);
        ssize_t got = pread(fd, in, REGION, (off_t)off);
        MT_CHECK(got >= 0, "pread");
        for (ssize_t i = 0; i < got; i++)
            MT_CHECK(in[i] == 0, "byte %zd written before the lock went",
                     i);
        close(fd);
    }
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "iwrite_at count %d", count);

    /* A collective write without collective buffering is each rank's own
     * list IO: in the background too. */
    pid = locker(path, (off_t)off, REGION, &release, 20000);
    MT_OK(MPI_File_iwrite_at_all(fh, off, out, REGION, MPI_BYTE, &r));
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "iwrite_at_all completed while another process held the lock");
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "iwrite_at_all count %d", count);

    /* A read held up the same way. */
    pid = locker(path, (off_t)off, REGION, &release, 20000);
    memset(in, 0, REGION);
    MT_OK(MPI_File_iread_at(fh, off, in, REGION, MPI_BYTE, &r));
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "iread_at completed while another process held the lock");
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "iread_at count %d", count);
    MT_CHECK(memcmp(in, out, REGION) == 0, "iread_at read other bytes");
    /* The same collectively, through the individual pointer. */
    MT_OK(MPI_File_seek(fh, off, MPI_SEEK_SET));
    pid = locker(path, (off_t)off, REGION, &release, 20000);
    memset(in, 0, REGION);
    MT_OK(MPI_File_iread_all(fh, in, REGION, MPI_BYTE, &r));
    {
        MPI_Offset p;
        MT_OK(MPI_File_get_position(fh, &p));
        MT_CHECK(p == off + REGION, "position %lld after iread_all", p);
    }
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "iread_all completed while another process held the lock");
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "iread_all count %d", count);
    MT_CHECK(memcmp(in, out, REGION) == 0, "iread_all read other bytes");

    /* MPI_Wait while the lock is held: the waiter sleeps (SHOAL_WAIT=block
     * at once) and the IO thread must wake it when the child lets go after
     * 300 ms (a lost wake-up ends the rank under SHOAL_WAIT_CHECK=fatal). */
    pid = locker(path, (off_t)off, REGION, &release, 300);
    MT_OK(MPI_File_iwrite_at(fh, off, out, REGION, MPI_BYTE, &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "iwrite_at count %d", count);
    {
        int ws;
        close(release);
        MT_CHECK(waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) &&
                     WEXITSTATUS(ws) == 0,
                 "locker failed");
    }
    MT_OK(MPI_File_close(&fh));

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)nprocs * REGION, "file of %zu bytes", n);
        for (int k = 0; k < nprocs; k++) {
            fill(out, REGION, 1000u + (unsigned)k);
            MT_CHECK(memcmp(f + (size_t)k * REGION, out, REGION) == 0,
                     "rank %d's region differs", k);
        }
        free(f);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(out);
    free(in);
}

/* A user representation: an int is an 8-byte big-endian number, biased
 * by CONV_BIAS.  The calls of its read function are counted. */
#define CONV_BIAS 1000003LL
#define CONV_N 4096
static int conv_reads;

static int be64_write(void *user, MPI_Datatype dt, int count, void *file,
                      MPI_Offset position, void *extra)
{
    const int *u = (const int *)user + position;
    unsigned char *f = file;

    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    for (int i = 0; i < count; i++) {
        unsigned long long v = (unsigned long long)(u[i] + CONV_BIAS);
        for (int b = 0; b < 8; b++)
            f[8 * i + b] = (unsigned char)(v >> (56 - 8 * b));
    }
    return MPI_SUCCESS;
}

static int be64_read(void *user, MPI_Datatype dt, int count, void *file,
                     MPI_Offset position, void *extra)
{
    int *u = (int *)user + position;
    const unsigned char *f = file;

    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    __atomic_add_fetch(&conv_reads, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < count; i++) {
        unsigned long long v = 0;
        for (int b = 0; b < 8; b++)
            v = v << 8 | f[8 * i + b];
        u[i] = (int)((long long)v - CONV_BIAS);
    }
    return MPI_SUCCESS;
}

static int be64_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int size;

    (void)extra;
    if (dt == MPI_INT) {
        *ext = 8;
        return MPI_SUCCESS;
    }
    MPI_Type_size(dt, &size);
    *ext = size;
    return MPI_SUCCESS;
}

/* The file bytes of value v in representation rep (fsz bytes). */
static void encode(unsigned char *out, int v, int fsz)
{
    unsigned long long x = fsz == 8 ? (unsigned long long)(v + CONV_BIAS)
                                    : (unsigned long long)(unsigned)v;
    for (int b = 0; b < fsz; b++)
        out[b] = (unsigned char)(x >> (8 * (fsz - 1 - b)));
}

static void convert_one(const char *path, const char *rep, int fsz)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    int *vals = malloc(CONV_N * sizeof(int)), *in = malloc(CONV_N * sizeof(int));
    off_t off = (off_t)rank * CONV_N * fsz;
    int release, count, reads;
    pid_t pid;

    MT_CHECK(vals != NULL && in != NULL, "malloc");
    for (int i = 0; i < CONV_N; i++)
        vals[i] = (rank + 1) * 1000000 - i * 77;
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    MT_OK(MPI_File_set_atomicity(fh, 1));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));

    pid = locker(path, off, (off_t)CONV_N * fsz, &release, 20000);
    MT_OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * CONV_N, vals, CONV_N,
                             MPI_INT, &r));
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "%s: iwrite_at completed while another process held the lock: "
             "not in the background",
             rep);
    {
        int fd = open(path, O_RDONLY);
        unsigned char *b = malloc((size_t)CONV_N * fsz);
        MT_CHECK(fd >= 0 && b != NULL, "open");
        ssize_t got = pread(fd, b, (size_t)CONV_N * fsz, off);
        MT_CHECK(got >= 0, "pread");
        for (ssize_t i = 0; i < got; i++)
            MT_CHECK(b[i] == 0, "%s: byte %zd written before the lock went",
                     rep, i);
        close(fd);
        free(b);
    }
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &count));
    MT_CHECK(count == CONV_N, "%s: iwrite_at count %d", rep, count);

    /* A read held up: nothing converted into the buffer yet (the user
     * function not called; the buffer itself is the library's now). */
    pid = locker(path, off, (off_t)CONV_N * fsz, &release, 20000);
    memset(in, 0, CONV_N * sizeof(int));
    reads = __atomic_load_n(&conv_reads, __ATOMIC_SEQ_CST);
    MT_OK(MPI_File_iread_at(fh, (MPI_Offset)rank * CONV_N, in, CONV_N,
                            MPI_INT, &r));
    MT_CHECK(tests_done(&r, 50, &st) == 0,
             "%s: iread_at completed while another process held the lock",
             rep);
    MT_CHECK(__atomic_load_n(&conv_reads, __ATOMIC_SEQ_CST) == reads,
             "%s: the read conversion ran before the data were read", rep);
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &count));
    MT_CHECK(count == CONV_N, "%s: iread_at count %d", rep, count);
    MT_CHECK(memcmp(in, vals, CONV_N * sizeof(int)) == 0,
             "%s: iread_at read other values", rep);
    if (fsz == 8)
        MT_CHECK(__atomic_load_n(&conv_reads, __ATOMIC_SEQ_CST) > reads,
                 "%s: the read conversion function was not called", rep);
    MT_OK(MPI_File_close(&fh));

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n), want[8];
        MT_CHECK(n == (size_t)nprocs * CONV_N * fsz, "%s: file of %zu bytes",
                 rep, n);
        for (int k = 0; k < nprocs; k++)
            for (int i = 0; i < CONV_N; i++) {
                encode(want, (k + 1) * 1000000 - i * 77, fsz);
                MT_CHECK(memcmp(f + ((size_t)k * CONV_N + i) * fsz, want,
                                fsz) == 0,
                         "%s: rank %d's int %d not encoded", rep, k, i);
            }
        free(f);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(vals);
    free(in);
}

/* A long beyond 32 bits in external32: the request fails, not the call. */
static void convert_error(const char *dir_path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    char path[600];
    long big[2] = {7, 1L << 40};
    int cls;
    size_t n;

    snprintf(path, sizeof(path), "%s.%d", dir_path, rank);
    MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_iwrite_at(fh, 0, big, 2, MPI_LONG, &r));
    cls = MPI_Wait(&r, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_CONVERSION, "a long beyond 32 bits: class %d",
             cls);
    MT_OK(MPI_File_close(&fh));
    free(io_slurp(path, &n));
    MT_CHECK(n == 0, "a write that did not convert wrote %zu bytes", n);
    unlink(path);
}

static void convert(const char *dir_path)
{
    char path[600];

    MT_OK(MPI_Register_datarep("shoal-async-be64", be64_read, be64_write,
                               be64_extent, NULL));
    snprintf(path, sizeof(path), "%s.ext32", dir_path);
    convert_one(path, "external32", 4);
    snprintf(path, sizeof(path), "%s.be64", dir_path);
    convert_one(path, "shoal-async-be64", 8);
    convert_error(dir_path);
}

#define NREQ 32
#define BLK 65536

/* NREQ blocks per rank, interleaved with the other ranks': block i of
 * rank k at (i * nprocs + k) * BLK.  Odd blocks come from every other
 * 512-byte piece of a twice-as-large buffer (a vector type). */
static void many(const char *path)
{
    MPI_File fh;
    MPI_Request r[NREQ];
    MPI_Status st[NREQ];
    MPI_Datatype vec;
    unsigned char *ref = malloc(BLK),
                  *in = malloc((size_t)NREQ * BLK);
    int idx[NREQ], outc, left, count;

    MT_CHECK(ref != NULL && in != NULL, "malloc");
    MT_OK(MPI_Type_vector(BLK / 512, 512, 1024, MPI_BYTE, &vec));
    MT_OK(MPI_Type_commit(&vec));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    unsigned char *bufs = malloc((size_t)NREQ * 2 * BLK);
    MT_CHECK(bufs != NULL, "malloc");
    for (int i = 0; i < NREQ; i++) {
        unsigned char *b = bufs + (size_t)i * 2 * BLK;
        MPI_Offset at = ((MPI_Offset)i * nprocs + rank) * BLK;
        fill(b, 2 * BLK, (unsigned)(rank * NREQ + i));
        if (i % 2)
            MT_OK(MPI_File_iwrite_at(fh, at, b, 1, vec, &r[i]));
        else
            MT_OK(MPI_File_iwrite_at_c(fh, at, b, BLK, MPI_BYTE, &r[i]));
    }
    /* The type may go while the requests run. */
    MPI_Datatype keep = vec;
    MT_OK(MPI_Type_dup(keep, &vec));
    MT_OK(MPI_Type_free(&keep));
    MT_OK(MPI_Type_commit(&vec));
    MT_OK(MPI_Waitall(NREQ, r, st));
    for (int i = 0; i < NREQ; i++) {
        MT_OK(MPI_Get_count(&st[i], MPI_BYTE, &count));
        MT_CHECK(count == BLK, "write %d: count %d", i, count);
    }

    /* Read back: even requests complete by Testsome, then Waitany. */
    for (int i = 0; i < NREQ; i++)
        MT_OK(MPI_File_iread_at(fh, ((MPI_Offset)i * nprocs + rank) * BLK,
                                in + (size_t)i * BLK, BLK, MPI_BYTE, &r[i]));
    for (left = NREQ; left > 0;) {
        MT_OK(MPI_Testsome(NREQ, r, &outc, idx, st));
        MT_CHECK(outc != MPI_UNDEFINED, "Testsome: none active, %d left",
                 left);
        for (int k = 0; k < outc; k++) {
            MT_OK(MPI_Get_count(&st[k], MPI_BYTE, &count));
            MT_CHECK(count == BLK, "read %d: count %d", idx[k], count);
        }
        left -= outc;
        if (left > 0 && outc == 0) {
            int one;
            MT_OK(MPI_Waitany(NREQ, r, &one, &st[0]));
            MT_CHECK(one != MPI_UNDEFINED, "Waitany: none active");
            left--;
        }
    }
    for (int i = 0; i < NREQ; i++) {
        unsigned char *b = bufs + (size_t)i * 2 * BLK;
        if (i % 2)
            for (int p = 0; p < BLK / 512; p++)
                memcpy(ref + p * 512, b + p * 1024, 512);
        else
            memcpy(ref, b, BLK);
        MT_CHECK(memcmp(in + (size_t)i * BLK, ref, BLK) == 0,
                 "block %d read back differs", i);
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&vec));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(bufs);
    free(ref);
    free(in);
}

/* Individual pointer through a view of 100-int blocks with 100-int holes,
 * rank k's blocks at k + nprocs * j. */
static void pointers(const char *path)
{
    MPI_File fh;
    MPI_Datatype ft, ft0;
    MPI_Request r[3];
    MPI_Status st[3];
    MPI_Offset p;
    int a[1000], b[500], c[1500], count;

    for (int i = 0; i < 1000; i++)
        a[i] = rank * 100000 + i;
    for (int i = 0; i < 500; i++)
        b[i] = rank * 100000 + 1000 + i;
    MT_OK(MPI_Type_vector(1, 100, 100, MPI_INT, &ft0));
    MT_OK(MPI_Type_create_resized(ft0, 0, (MPI_Aint)(100 * nprocs * 4), &ft));
    MT_OK(MPI_Type_free(&ft0));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * 400, MPI_INT, ft,
                            "native", MPI_INFO_NULL));
    MT_OK(MPI_File_iwrite(fh, a, 1000, MPI_INT, &r[0]));
    MT_OK(MPI_File_get_position(fh, &p));
    MT_CHECK(p == 1000, "position %lld after iwrite of 1000 ints", p);
    MT_OK(MPI_File_iwrite_c(fh, b, 500, MPI_INT, &r[1]));
    MT_OK(MPI_File_get_position(fh, &p));
    MT_CHECK(p == 1500, "position %lld after a second iwrite", p);
    MT_OK(MPI_Waitall(2, r, st));
    MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(c, 0, sizeof(c));
    MT_OK(MPI_File_iread(fh, c, 700, MPI_INT, &r[0]));
    MT_OK(MPI_File_iread(fh, c + 700, 800, MPI_INT, &r[1]));
    MT_OK(MPI_File_get_position(fh, &p));
    MT_CHECK(p == 1500, "position %lld after iread of 1500", p);
    /* Nothing to move: completes at once. */
    MT_OK(MPI_File_iread(fh, c, 0, MPI_INT, &r[2]));
    MT_OK(MPI_Waitall(3, r, st));
    MT_OK(MPI_Get_count(&st[1], MPI_INT, &count));
    MT_CHECK(count == 800, "iread count %d", count);
    for (int i = 0; i < 1500; i++)
        MT_CHECK(c[i] == (i < 1000 ? a[i] : b[i - 1000]),
                 "int %d read back %d", i, c[i]);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        size_t n;
        int *f = (int *)io_slurp(path, &n);
        MT_CHECK(n == (size_t)nprocs * 1500 * 4, "file of %zu bytes", n);
        for (size_t i = 0; i < n / 4; i++) {
            int k = (int)((i / 100) % (size_t)nprocs);
            int e = (int)((i / 100) / (size_t)nprocs * 100 + i % 100);
            int want = k * 100000 + e;
            MT_CHECK(f[i] == want, "int %zu: %d, want %d", i, f[i], want);
        }
        free(f);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Shared pointer: 4 chunks of 1000 bytes from every rank. */
static void shared(const char *path)
{
    MPI_File fh;
    MPI_Request r[4];
    unsigned char chunk[4][1000];
    MPI_Offset p;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    for (int i = 0; i < 4; i++) {
        memset(chunk[i], 1 + rank * 4 + i, sizeof(chunk[i]));
        MT_OK(MPI_File_iwrite_shared(fh, chunk[i], 1000, MPI_BYTE, &r[i]));
    }
    MT_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_get_position_shared(fh, &p));
    MT_CHECK(p == (MPI_Offset)nprocs * 4000, "shared position %lld", p);
    MT_OK(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        int seen[256] = {0};
        MT_CHECK(n == (size_t)nprocs * 4000, "file of %zu bytes", n);
        for (size_t c = 0; c < n / 1000; c++) {
            for (int i = 1; i < 1000; i++)
                MT_CHECK(f[c * 1000 + i] == f[c * 1000], "chunk %zu torn", c);
            seen[f[c * 1000]]++;
        }
        for (int v = 1; v <= nprocs * 4; v++)
            MT_CHECK(seen[v] == 1, "chunk %d written %d times", v, seen[v]);
        free(f);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A file error handler that counts its calls and keeps what it got. */
static int eh_calls, eh_class;
static MPI_File eh_file;

static void count_errors(MPI_File *f, int *code, ...)
{
    eh_calls++;
    eh_file = *f;
    MPI_Error_class(*code, &eh_class);
}

static void expect_handled(int calls, MPI_File f, int cls, const char *how)
{
    MT_CHECK(eh_calls == calls,
             "%s: the file's error handler was called %d times in all, "
             "want %d",
             how, eh_calls, calls);
    MT_CHECK(eh_file == f, "%s: the handler got another file", how);
    MT_CHECK(eh_class == cls, "%s: the handler got class %d, want %d", how,
             eh_class, cls);
}

/* MPI_Cancel: a write held up by another process's lock (running, in the
 * IO thread), one queued behind it (cancelled), one more (not). */
static void cancel(const char *dir_path)
{
    MPI_File fh;
    MPI_Request r[3];
    MPI_Status st;
    unsigned char *out = malloc(REGION);
    char path[600];
    int release, flag, count;
    pid_t pid;
    size_t n;

    MT_CHECK(out != NULL, "malloc");
    snprintf(path, sizeof(path), "%s.%d", dir_path, rank);
    fill(out, REGION, 55u + (unsigned)rank);
    MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_atomicity(fh, 1));
    pid = locker(path, 0, REGION, &release, 20000);
    MT_OK(MPI_File_iwrite_at(fh, 0, out, REGION, MPI_BYTE, &r[0]));
    /* 200 ms: the IO thread has taken it and waits for the lock. */
    MT_CHECK(tests_done(&r[0], 100, &st) == 0,
             "iwrite_at completed while another process held the lock");
    MT_OK(MPI_File_iwrite_at(fh, REGION, out, REGION, MPI_BYTE, &r[1]));
    MT_OK(MPI_File_iwrite_at(fh, 2 * REGION, out, 4096, MPI_BYTE, &r[2]));
    MT_OK(MPI_Cancel(&r[1]));
    MT_OK(MPI_Cancel(&r[0]));
    /* The cancelled one is complete while the lock is still held. */
    MT_CHECK(tests_done(&r[1], 1, &st) == 1,
             "a cancelled request that had not started is not complete");
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(flag, "MPI_Test_cancelled says false for a queued access");
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == 0, "cancelled write: count %d", count);
    MT_CHECK(tests_done(&r[0], 1, &st) == 0,
             "the running write completed while the lock was held");
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r[0], &st));
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(!flag, "the running write said cancelled");
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "running write: count %d", count);
    MT_OK(MPI_Wait(&r[2], &st));
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(!flag, "the write after the cancelled one said cancelled");
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == 4096, "write after the cancelled one: count %d", count);
    /* Cancel of a completed one changes nothing. */
    MT_OK(MPI_File_iwrite_at(fh, 2 * REGION, out, 4096, MPI_BYTE, &r[2]));
    while (!tests_done(&r[2], 1, &st))
        ;
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(!flag, "a completed write said cancelled");
    MT_OK(MPI_File_close(&fh));
    {
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == 2 * REGION + 4096, "file of %zu bytes", n);
        MT_CHECK(memcmp(f, out, REGION) == 0, "the running write lost");
        for (size_t i = REGION; i < 2 * REGION; i++)
            MT_CHECK(f[i] == 0, "byte %zu of the cancelled write written",
                     i - REGION);
        MT_CHECK(memcmp(f + 2 * REGION, out, 4096) == 0,
                 "the write after the cancelled one lost");
        free(f);
    }
    unlink(path);
    free(out);
}

/* A read past the end, Request_free, errors: each rank its own file
 * (MPI_COMM_SELF). */
static void requests(const char *dir_path)
{
    MPI_File fh;
    MPI_Request r, r2[2];
    MPI_Status st, sts[2];
    unsigned char *out = malloc(REGION), *in = malloc(REGION);
    char path[600];
    int count, flag, cls, idx, outc;
    MPI_Errhandler eh;
    struct rlimit old, lim;
    size_t n;

    MT_CHECK(out != NULL && in != NULL, "malloc");
    snprintf(path, sizeof(path), "%s.%d", dir_path, rank);
    fill(out, REGION, 77u + (unsigned)rank);
    MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_write_at(fh, 0, out, 1000, MPI_BYTE, MPI_STATUS_IGNORE));
    /* 600 of 1000 asked come. */
    MT_OK(MPI_File_iread_at(fh, 400, in, 1000, MPI_BYTE, &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == 600, "read past the end: count %d", count);
    MT_CHECK(memcmp(in, out + 400, 600) == 0, "read past the end: bytes");

    /* Freed while it runs: the data still land (close waits). */
    MT_OK(MPI_File_iwrite_at(fh, 0, out, REGION, MPI_BYTE, &r));
    MT_OK(MPI_Request_free(&r));
    MT_CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
    MT_OK(MPI_File_iwrite_at(fh, REGION, out, REGION, MPI_BYTE, &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(!flag, "a completed file access said cancelled");
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == REGION, "second write: count %d", count);
    MT_OK(MPI_File_close(&fh));
    free(in);
    {
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == 2 * REGION, "file of %zu bytes", n);
        MT_CHECK(memcmp(f, out, REGION) == 0 &&
                     memcmp(f + REGION, out, REGION) == 0,
                 "freed or cancelled write lost");
        free(f);
    }

    /* Errors in the background: files may not grow past 1 MiB. */
    MT_CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
    lim = old;
    lim.rlim_cur = REGION;
    signal(SIGXFSZ, SIG_IGN);
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_create_errhandler(count_errors, &eh));
    MT_OK(MPI_File_set_errhandler(fh, eh));
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r));
    cls = MPI_Wait(&r, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_NO_SPACE, "write past RLIMIT_FSIZE: class %d",
             cls);
    expect_handled(1, fh, MPI_ERR_NO_SPACE, "MPI_Wait");
    MT_OK(MPI_File_iwrite_at(fh, 0, out, 4096, MPI_BYTE, &r2[0]));
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r2[1]));
    cls = MPI_Waitall(2, r2, sts);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_IN_STATUS, "Waitall: class %d", cls);
    MT_CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "good write's status: %d",
             sts[0].MPI_ERROR);
    MPI_Error_class(sts[1].MPI_ERROR, &cls);
    MT_CHECK(cls == MPI_ERR_NO_SPACE, "bad write's status: class %d", cls);
    expect_handled(2, fh, MPI_ERR_IN_STATUS, "MPI_Waitall");
    /* MPI_Test, until it completes. */
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r));
    for (flag = 0, cls = MPI_SUCCESS; !flag && cls == MPI_SUCCESS;)
        cls = MPI_Test(&r, &flag, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(flag && cls == MPI_ERR_NO_SPACE, "Test: flag %d class %d", flag,
             cls);
    expect_handled(3, fh, MPI_ERR_NO_SPACE, "MPI_Test");
    /* MPI_Waitany: the one that failed. */
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r2[0]));
    r2[1] = MPI_REQUEST_NULL;
    cls = MPI_Waitany(2, r2, &idx, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(idx == 0 && cls == MPI_ERR_NO_SPACE, "Waitany: %d, class %d",
             idx, cls);
    expect_handled(4, fh, MPI_ERR_NO_SPACE, "MPI_Waitany");
    /* MPI_Testsome, until both completed. */
    MT_OK(MPI_File_iwrite_at(fh, 0, out, 4096, MPI_BYTE, &r2[0]));
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r2[1]));
    for (int left = 2; left > 0;) {
        int some[2], bad = 0;
        cls = MPI_Testsome(2, r2, &outc, some, sts);
        MT_CHECK(outc != MPI_UNDEFINED, "Testsome: none active");
        MPI_Error_class(cls, &cls);
        for (int k = 0; k < outc; k++)
            bad |= some[k] == 1;
        MT_CHECK(cls == (bad ? MPI_ERR_IN_STATUS : MPI_SUCCESS),
                 "Testsome: class %d", cls);
        left -= outc;
    }
    expect_handled(5, fh, MPI_ERR_IN_STATUS, "MPI_Testsome");
    /* Completed after the file is closed: MPI_FILE_NULL's handler. */
    MT_OK(MPI_File_iwrite_at(fh, 4 * REGION, out, 4096, MPI_BYTE, &r));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    cls = MPI_Wait(&r, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_NO_SPACE, "Wait after close: class %d", cls);
    expect_handled(6, MPI_FILE_NULL, MPI_ERR_NO_SPACE, "MPI_Wait after close");
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MT_OK(MPI_Errhandler_free(&eh));
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
    signal(SIGXFSZ, SIG_DFL);
    unlink(path);
    free(out);
}

int main(int argc, char **argv)
{
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("async");
    io_path(path, sizeof(path), "overlap.dat");
    overlap(path);
    io_path(path, sizeof(path), "conv.dat");
    convert(path);
    io_path(path, sizeof(path), "many.dat");
    many(path);
    io_path(path, sizeof(path), "ptr.dat");
    pointers(path);
    io_path(path, sizeof(path), "shared.dat");
    shared(path);
    io_path(path, sizeof(path), "req.dat");
    requests(path);
    io_path(path, sizeof(path), "cancel.dat");
    cancel(path);
    io_dir_remove();
    if (rank == 0)
        printf("io_async at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
