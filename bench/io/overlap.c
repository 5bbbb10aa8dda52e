/*
 * Overlap of nonblocking file IO with computation (bench/io/overlap runs
 * it with Shoal, Open MPI and MPICH).
 *
 * Each rank moves its own block of --size bytes of one shared file (rank k
 * at k * size) with MPI_File_write_at or read_at, and computes (a
 * floating-point loop over a 256 KiB array, in cache) for about as long as
 * the IO alone takes (calibrated at the start from the median of a few
 * blocking accesses).  Four arms per iteration, interleaved:
 *
 *   io       the blocking call alone
 *   compute  the loop alone
 *   seq      the blocking call, then the loop
 *   ovl      MPI_File_iwrite_at / iread_at, the loop, MPI_Wait
 *
 * A rank's time of an arm is its own; the arm's time is the slowest
 * rank's (a barrier before each).  --cold drops the rank's block from the
 * page cache before every read (fdatasync, posix_fadvise DONTNEED), so
 * reads wait for the device.  Output: the median of each arm in ms, then
 * ovl / seq and how much of the shorter of io and compute the overlap hid:
 * (seq - ovl) / min(io, compute).  Every read is checked against the
 * bytes written.
 *
 *   overlap [--size 67108864] [--iters 10] [--op write|read] [--cold]
 *           [--dir /tmp] [--test-each N] [--datarep NAME]
 *           [--cb] [--cb-nodes N] [--cb-buffer BYTES]
 *
 * --datarep NAME: a view of ints in that data representation (e.g.
 * external32: each int converted on its way to and from the file), the
 * block moved as size / 4 ints.
 *
 * --cb: collective buffering (romio_cb_write and romio_cb_read enabled;
 * --cb-nodes N aggregators, --cb-buffer BYTES per round when given): the
 * arms use the collective MPI_File_write_at_all / read_at_all and
 * iwrite_at_all / iread_at_all instead.
 *
 * --test-each N: during the ovl arm's loop, call MPI_Test every N-th of
 * 64 slices of the computation (0: never), as a program that drives
 * progress by hand would.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, nprocs;
static double work[32768];
static volatile double sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* units passes of a multiply-add over the array. */
static void compute_slice(long units)
{
    double s = 0.0;
    for (long u = 0; u < units; u++)
        for (int i = 0; i < 32768; i++) {
            work[i] = work[i] * 0.999999 + 1e-9;
            s += work[i];
        }
    sink += s;
}

static void compute(long units, MPI_Request *r, int test_each)
{
    long per = units / 64, rest = units % 64;
    int flag;

    for (int k = 0; k < 64; k++) {
        compute_slice(per + (k < rest));
        if (r != NULL && test_each > 0 && k % test_each == 0 &&
            *r != MPI_REQUEST_NULL)
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void die(const char *what)
{
    fprintf(stderr, "overlap: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    long size = 64L << 20, units;
    int iters = 10, wr = 1, cold = 0, test_each = 0, pfd;
    const char *dir = "/tmp", *datarep = NULL;
    const char *cb_nodes = NULL, *cb_buffer = NULL;
    int cb = 0;
    MPI_Info info;
    MPI_Datatype et = MPI_BYTE;
    int esz = 1;
    char path[512];
    unsigned char *buf, *ref;
    MPI_File fh;
    MPI_Offset off;
    MPI_Request r;
    double t, *a_io, *a_comp, *a_seq, *a_ovl, cal[3], m_io, m_comp, m_seq,
        m_ovl, lo;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = atol(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--op") && i + 1 < argc)
            wr = strcmp(argv[++i], "read") != 0;
        else if (!strcmp(argv[i], "--cold"))
            cold = 1;
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--test-each") && i + 1 < argc)
            test_each = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--datarep") && i + 1 < argc)
            datarep = argv[++i];
        else if (!strcmp(argv[i], "--cb"))
            cb = 1;
        else if (!strcmp(argv[i], "--cb-nodes") && i + 1 < argc)
            cb_nodes = argv[++i];
        else if (!strcmp(argv[i], "--cb-buffer") && i + 1 < argc)
            cb_buffer = argv[++i];
        else
            die("usage: overlap [--size B] [--iters N] [--op write|read] "
                "[--cold] [--dir D] [--test-each N] [--datarep NAME] [--cb] "
                "[--cb-nodes N] [--cb-buffer BYTES]");
    }
    if (datarep != NULL) {
        et = MPI_INT;
        esz = 4;
    }
    if (size <= 0 || size > 1L << 30 || iters < 1 || size % esz != 0)
        die("bad --size or --iters");
    snprintf(path, sizeof(path), "%s/shoal-overlap.%d.dat", dir, (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    buf = malloc((size_t)size);
    ref = malloc((size_t)size);
    a_io = malloc(4 * sizeof(double) * (size_t)iters);
    if (buf == NULL || ref == NULL || a_io == NULL)
        die("malloc");
    a_comp = a_io + iters;
    a_seq = a_comp + iters;
    a_ovl = a_seq + iters;
    for (long i = 0; i < size; i++)
        ref[i] = (unsigned char)(i * 13 + rank * 71 + (i >> 12));
    for (int i = 0; i < 32768; i++)
        work[i] = i * 1e-6;
    /* In etypes of the view (bytes, or ints). */
    off = (MPI_Offset)rank * size / esz;
    MPI_Info_create(&info);
    if (cb) {
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        if (cb_nodes != NULL)
            MPI_Info_set(info, "cb_nodes", cb_nodes);
        if (cb_buffer != NULL)
            MPI_Info_set(info, "cb_buffer_size", cb_buffer);
    }
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                      info, &fh) != MPI_SUCCESS)
        die("open");
    MPI_Info_free(&info);
    if (datarep != NULL &&
        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, datarep, MPI_INFO_NULL) !=
            MPI_SUCCESS)
        die("set_view");
    if (MPI_File_write_at(fh, off, ref, (int)(size / esz), et,
                          MPI_STATUS_IGNORE) != MPI_SUCCESS)
        die("first write");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Our own descriptor, to evict the block from the page cache. */
    pfd = open(path, O_RDWR);
    if (pfd < 0)
        die("open for fadvise");

#define PREP()                                                               \
    do {                                                                     \
        if (!wr && cold) {                                                   \
            fdatasync(pfd);                                                  \
            posix_fadvise(pfd, (off_t)off * esz, (off_t)size,                \
                          POSIX_FADV_DONTNEED);                              \
        }                                                                    \
        if (!wr)                                                             \
            memset(buf, 0, (size_t)size);                                    \
        MPI_Barrier(MPI_COMM_WORLD);                                         \
    } while (0)
#define CHECK()                                                              \
    do {                                                                     \
        if (!wr && memcmp(buf, ref, (size_t)size) != 0)                      \
            die("read back other bytes");                                    \
    } while (0)
#define IO()                                                                 \
    do {                                                                     \
        int n_ = (int)(size / esz);                                          \
        int rc_ = cb   ? (wr ? MPI_File_write_at_all(fh, off, ref, n_, et,   \
                                                   MPI_STATUS_IGNORE)        \
                             : MPI_File_read_at_all(fh, off, buf, n_, et,    \
                                                  MPI_STATUS_IGNORE))        \
                  : wr ? MPI_File_write_at(fh, off, ref, n_, et,             \
                                           MPI_STATUS_IGNORE)                \
                       : MPI_File_read_at(fh, off, buf, n_, et,              \
                                          MPI_STATUS_IGNORE);                \
        if (rc_ != MPI_SUCCESS)                                              \
            die("io");                                                       \
    } while (0)

    /* Calibrate: the loop's speed, then as many units as the IO takes. */
    for (int i = 0; i < 3; i++) {
        PREP();
        t = now();
        IO();
        cal[i] = slowest(now() - t);
        CHECK();
    }
    /* Units per second of the loop: grown until a run lasts 50 ms, then
     * the best of three (the least disturbed). */
    {
        long u = 16;
        double best = 0;
        for (;;) {
            t = now();
            compute_slice(u);
            t = slowest(now() - t);
            if (t >= 0.05)
                break;
            u *= 2;
        }
        for (int i = 0; i < 3; i++) {
            double s = now();
            compute_slice(u);
            s = slowest(now() - s);
            if (best == 0 || s < best)
                best = s;
        }
        units = (long)(median(cal, 3) * u / best);
        if (units < 64)
            units = 64;
    }

    for (int it = 0; it < iters; it++) {
        PREP();
        t = now();
        IO();
        a_io[it] = slowest(now() - t);
        CHECK();

        MPI_Barrier(MPI_COMM_WORLD);
        t = now();
        compute(units, NULL, 0);
        a_comp[it] = slowest(now() - t);

        PREP();
        t = now();
        IO();
        compute(units, NULL, 0);
        a_seq[it] = slowest(now() - t);
        CHECK();

        PREP();
        t = now();
        if ((cb   ? (wr ? MPI_File_iwrite_at_all(fh, off, ref,
                                               (int)(size / esz), et, &r)
                        : MPI_File_iread_at_all(fh, off, buf,
                                                (int)(size / esz), et, &r))
             : wr ? MPI_File_iwrite_at(fh, off, ref, (int)(size / esz), et, &r)
                  : MPI_File_iread_at(fh, off, buf, (int)(size / esz), et,
                                      &r)) != MPI_SUCCESS)
            die("nonblocking io");
        compute(units, &r, test_each);
        if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            die("wait");
        a_ovl[it] = slowest(now() - t);
        CHECK();
    }
    m_io = median(a_io, iters);
    m_comp = median(a_comp, iters);
    m_seq = median(a_seq, iters);
    m_ovl = median(a_ovl, iters);
    lo = m_io < m_comp ? m_io : m_comp;
    if (rank == 0)
        printf("%s %ld io %.2f compute %.2f seq %.2f ovl %.2f ovl/seq %.3f "
               "hidden %.2f\n",
               wr ? "write" : (cold ? "read-cold" : "read"), size, m_io * 1e3,
               m_comp * 1e3, m_seq * 1e3, m_ovl * 1e3, m_ovl / m_seq,
               (m_seq - m_ovl) / lo);
    close(pfd);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(buf);
    free(ref);
    free(a_io);
    MPI_Finalize();
    return 0;
}
