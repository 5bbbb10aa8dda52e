/*
 * MPI-IO bandwidth, for any MPI (built with shoalcc, mpicc.openmpi,
 * mpicc.mpich): every rank moves `size` bytes per call, the time of a call
 * is the slowest rank's, the result the aggregate MB/s of the median call.
 * With --span the time of a call runs instead from the first rank's start
 * to the last rank's end (CLOCK_MONOTONIC, the same clock in every process
 * of one host): ranks that take turns on shared CPUs are then not timed by
 * each one's own, shorter, share, but a late wake-up from the barrier
 * counts.
 *
 *   io [--op OP] [--sizes S1,S2,...] [--iters N] [--dir DIR] [--sync]
 *      [--span] [--nb] [--file PATH] [--quick]
 *
 * --nb makes the collective calls nonblocking (MPI_File_iwrite_at_all,
 * iread_at_all, iwrite_all, iread_all, then MPI_Wait), timed the same way.
 *
 * --file names the data file (default DIR/iobench.<ppid>.dat), so that a
 * tracer can watch that one file (strace -P).
 *
 * OP (default write):
 *   write, read        contiguous: rank r's block at r * size,
 *                      MPI_File_write_at_all / read_at_all
 *   tile_write,        noncontiguous: the file is a 2-D array of 1024 rows,
 *   tile_read          each rank a column stripe (a subarray filetype):
 *                      1024 pieces of size/1024 bytes per rank,
 *                      MPI_File_write_all / read_all
 *   listio, pack       1000 pieces of memory (a vector type, every other
 *                      block) into one contiguous file region per rank:
 *                      the datatype given to MPI_File_write_at, or packed
 *                      by MPI_Pack first and written as bytes
 *   listio_read        the same read back: MPI_File_read_at with the
 *                      datatype
 *   flistio,           1000 pieces of the file (file-noncontiguous):
 *   flistio_read       pieces of size/1000 bytes, rank r's j-th at piece
 *                      2 P j + r (half the file holes, at any number of
 *                      ranks P; a vector filetype), from (into)
 *                      contiguous memory, one MPI_File_write_at
 *                      (read_at) of the whole: list IO, one request for
 *                      1000 segments
 *   fseg, fseg_read    the same pieces without list IO: one
 *                      MPI_File_write_at (read_at) per piece, 1000 calls
 *   mtile_write,       mpi-tile-io's geometry: the ranks a grid of tiles
 *   mtile_read         (2 x 2 at 4 ranks, MPI_Dims_create), each tile
 *                      1024 x 768 elements of `size` bytes (32: the
 *                      digest's 96 MB file), a subarray filetype over a
 *                      contiguous element etype, MPI_File_write_all /
 *                      read_all of the whole tile
 *   sub3d_write,       a 3-D array of doubles, each rank one n x n x n
 *   sub3d_read         block (n = cbrt(size / 8)), the process grid from
 *                      MPI_Dims_create split along the fastest dimension
 *                      first (pieces of n doubles), MPI_File_write_all /
 *                      read_all
 *
 * With --sync every timed write is followed by MPI_File_sync inside the
 * timing (the bytes reach the device, as dd conv=fsync).
 * IOBENCH_CB=enable|disable sets romio_cb_read and romio_cb_write,
 * IOBENCH_DS=enable|disable romio_ds_read, IOBENCH_DSW romio_ds_write,
 * IOBENCH_CB_NODES cb_nodes, IOBENCH_URING=enable|disable shoal_io_uring,
 * IOBENCH_CBDB=enable|disable shoal_cb_double_buffer
 * (Shoal's io_uring list IO; other libraries ignore it).
 * Output: "# library: ...", then "<size> <MB/s>" lines, MB/s of the bytes
 * every rank moved.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, nprocs, nb;

/* A collective access, blocking or (--nb) started and waited for. */
#define COLL(blocking, nonblocking, ...)                                    \
    do {                                                                    \
        if (nb) {                                                           \
            MPI_Request r_;                                                 \
            nonblocking(__VA_ARGS__, &r_);                                  \
            MPI_Wait(&r_, MPI_STATUS_IGNORE);                               \
        } else {                                                            \
            blocking(__VA_ARGS__, MPI_STATUS_IGNORE);                       \
        }                                                                   \
    } while (0)

/* Seconds of the host's monotonic clock (comparable between processes). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The filetype (and element type) of a noncontiguous op; the bytes and
 * elements each rank moves per call. */
static void noncontig_view(const char *op, long long size, MPI_Datatype *ft,
                           MPI_Datatype *el, long long *bytes, int *count)
{
    if (strncmp(op, "mtile_", 6) == 0) {
        int dims[2] = {0, 0}, sizes[2], sub[2] = {768, 1024}, starts[2];
        MPI_Dims_create(nprocs, 2, dims);
        sizes[0] = 768 * dims[0];
        sizes[1] = 1024 * dims[1];
        starts[0] = 768 * (rank / dims[1]);
        starts[1] = 1024 * (rank % dims[1]);
        MPI_Type_contiguous((int)size, MPI_BYTE, el);
        MPI_Type_commit(el);
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, *el, ft);
        *count = 768 * 1024;
        *bytes = (long long)*count * size;
    } else if (strncmp(op, "sub3d_", 6) == 0) {
        int dims[3] = {0, 0, 0}, d[3], sizes[3], sub[3], starts[3], n = 1;
        while ((long long)(n + 1) * (n + 1) * (n + 1) * 8 <= size)
            n++;
        MPI_Dims_create(nprocs, 3, dims);
        /* dims come largest first: the fastest dimension splits most. */
        d[0] = dims[2];
        d[1] = dims[1];
        d[2] = dims[0];
        for (int i = 0; i < 3; i++) {
            sizes[i] = n * d[i];
            sub[i] = n;
        }
        starts[0] = n * (rank / (d[1] * d[2]));
        starts[1] = n * (rank / d[2] % d[1]);
        starts[2] = n * (rank % d[2]);
        *el = MPI_DATATYPE_NULL;
        MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C,
                                 MPI_DOUBLE, ft);
        *count = n * n * n;
        *bytes = (long long)*count * 8;
    } else { /* tile_: column stripes of a 1024-row byte array */
        int sizes[2], sub[2], starts[2];
        long long piece = size / 1024;
        sizes[0] = 1024;
        sizes[1] = (int)(piece * nprocs);
        sub[0] = 1024;
        sub[1] = (int)piece;
        starts[0] = 0;
        starts[1] = (int)(piece * rank);
        *el = MPI_DATATYPE_NULL;
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                 MPI_BYTE, ft);
        *count = (int)(piece * 1024);
        *bytes = *count;
    }
    MPI_Type_commit(ft);
}

static double run(const char *op, const char *path, long long size,
                  int iters, int sync, int span, MPI_Info info)
{
    MPI_File fh;
    MPI_Datatype ft = MPI_DATATYPE_NULL, mt = MPI_DATATYPE_NULL;
    MPI_Datatype el = MPI_DATATYPE_NULL, vt = MPI_BYTE;
    char *buf, *packed = NULL;
    double *t = malloc((size_t)iters * sizeof(double)), med;
    const char *u = strchr(op, '_');
    int rd = strcmp(op, "read") == 0 || (u && strcmp(u, "_read") == 0);
    int list = strncmp(op, "listio", 6) == 0, pack = strcmp(op, "pack") == 0;
    int flist = strncmp(op, "flistio", 7) == 0, fseg = strncmp(op, "fseg", 4) == 0;
    int nc = u != NULL && !list && !flist && !fseg; /* tile_, mtile_, sub3d_ */
    long long fp = size / 1000; /* flistio, fseg: bytes per piece */
    int count = (int)size;
    long long bytes = size, alloc;

    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                  info, &fh);
    if (nc) {
        noncontig_view(op, size, &ft, &el, &bytes, &count);
        vt = el != MPI_DATATYPE_NULL ? el : strncmp(op, "sub3d_", 6) == 0
                                                ? MPI_DOUBLE
                                                : MPI_BYTE;
        MPI_File_set_view(fh, 0, vt, ft, "native", info);
    }
    alloc = list || pack ? 2 * size : bytes;
    buf = malloc((size_t)alloc);
    memset(buf, 'a' + rank % 26, (size_t)alloc);
    if (list || pack) {
        long long piece = size / 1000;
        MPI_Type_vector(1000, (int)piece, (int)(2 * piece), MPI_BYTE, &mt);
        MPI_Type_commit(&mt);
        if (pack)
            packed = malloc((size_t)size);
    }
    /* Reads need data there, and writes start on an existing file: one
     * untimed write first. */
    if (nc)
        MPI_File_write_all(fh, buf, count, vt, MPI_STATUS_IGNORE);
    else if (flist || fseg) /* the whole file, holes too */
        for (int k = 0; k < 2; k++)
            MPI_File_write_at_all(fh, (k * nprocs + rank) * size, buf,
                                  (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
    else if (!(list || pack) || rd)
        MPI_File_write_at_all(fh, rank * size, buf, (int)size, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    if (flist) {
        MPI_Datatype v;
        MPI_Type_vector(1000, (int)fp, (int)(2 * fp * nprocs), MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, 2 * fp * nprocs * 1000, &ft);
        MPI_Type_free(&v);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, rank * fp, MPI_BYTE, ft, "native", info);
        bytes = fp * 1000;
    } else if (fseg) {
        bytes = fp * 1000;
    }
    for (int i = 0; i < iters; i++) {
        double t0, se[3], g[3];
        if (nc)
            MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        if (flist && rd)
            MPI_File_read_at(fh, 0, buf, (int)bytes, MPI_BYTE,
                             MPI_STATUS_IGNORE);
        else if (flist)
            MPI_File_write_at(fh, 0, buf, (int)bytes, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        else if (fseg)
            for (long long j = 0; j < 1000; j++) {
                MPI_Offset at = (2 * j * nprocs + rank) * fp;
                if (rd)
                    MPI_File_read_at(fh, at, buf + j * fp, (int)fp, MPI_BYTE,
                                     MPI_STATUS_IGNORE);
                else
                    MPI_File_write_at(fh, at, buf + j * fp, (int)fp,
                                      MPI_BYTE, MPI_STATUS_IGNORE);
            }
        else if (nc && rd)
            COLL(MPI_File_read_all, MPI_File_iread_all, fh, buf, count, vt);
        else if (nc)
            COLL(MPI_File_write_all, MPI_File_iwrite_all, fh, buf, count,
                 vt);
        else if (list && rd)
            MPI_File_read_at(fh, rank * size, buf, 1, mt, MPI_STATUS_IGNORE);
        else if (list)
            MPI_File_write_at(fh, rank * size, buf, 1, mt,
                              MPI_STATUS_IGNORE);
        else if (pack) {
            int pos = 0;
            MPI_Pack(buf, 1, mt, packed, (int)size, &pos, MPI_COMM_WORLD);
            MPI_File_write_at(fh, rank * size, packed, pos, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        } else if (rd)
            COLL(MPI_File_read_at_all, MPI_File_iread_at_all, fh,
                 rank * size, buf, (int)size, MPI_BYTE);
        else
            COLL(MPI_File_write_at_all, MPI_File_iwrite_at_all, fh,
                 rank * size, buf, (int)size, MPI_BYTE);
        if (sync && !rd)
            MPI_File_sync(fh);
        se[0] = -t0;
        se[1] = now();
        se[2] = se[1] - t0;
        MPI_Allreduce(se, g, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[i] = span ? g[0] + g[1] : g[2]; /* last end - first start */
    }
    MPI_File_close(&fh);
    if (ft != MPI_DATATYPE_NULL)
        MPI_Type_free(&ft);
    if (el != MPI_DATATYPE_NULL)
        MPI_Type_free(&el);
    if (mt != MPI_DATATYPE_NULL)
        MPI_Type_free(&mt);
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    med = t[iters / 2];
    free(t);
    free(buf);
    free(packed);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return (double)bytes * nprocs / med / 1e6;
}

int main(int argc, char **argv)
{
    const char *op = "write", *dir = "/tmp", *sizes = "65536,1048576,4194304";
    const char *cb = getenv("IOBENCH_CB"), *ds = getenv("IOBENCH_DS");
    const char *dsw = getenv("IOBENCH_DSW"), *file = NULL;
    const char *cbn = getenv("IOBENCH_CB_NODES");
    const char *ur = getenv("IOBENCH_URING");
    const char *cbdb = getenv("IOBENCH_CBDB");
    char path[512], lib[MPI_MAX_LIBRARY_VERSION_STRING], *list, *s;
    int iters = 20, len, sync = 0, span = 0;
    MPI_Info info = MPI_INFO_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
            op = argv[++i];
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            iters = 3;
        else if (strcmp(argv[i], "--sync") == 0)
            sync = 1;
        else if (strcmp(argv[i], "--span") == 0)
            span = 1;
        else if (strcmp(argv[i], "--nb") == 0)
            nb = 1;
        else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
            file = argv[++i];
    }
    if (iters < 1)
        iters = 1;
    if (cb != NULL || ds != NULL || dsw != NULL || cbn != NULL ||
        ur != NULL || cbdb != NULL)
        MPI_Info_create(&info);
    if (ur != NULL)
        MPI_Info_set(info, "shoal_io_uring", ur);
    if (cbdb != NULL)
        MPI_Info_set(info, "shoal_cb_double_buffer", cbdb);
    if (cb != NULL) {
        MPI_Info_set(info, "romio_cb_read", cb);
        MPI_Info_set(info, "romio_cb_write", cb);
    }
    if (ds != NULL)
        MPI_Info_set(info, "romio_ds_read", ds);
    if (dsw != NULL)
        MPI_Info_set(info, "romio_ds_write", dsw);
    if (cbn != NULL)
        MPI_Info_set(info, "cb_nodes", cbn);
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("# library: %.60s\n# io --op %s%s, %d ranks, median of %d, "
               "aggregate MB/s\n",
               strtok(lib, "\n"), op, nb ? " (nonblocking)" : "", nprocs,
               iters);
    if (file != NULL)
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/iobench.%d.dat", dir,
                 (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    list = strdup(sizes);
    for (s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
        long long size = atoll(s);
        double mbs = run(op, path, size, iters, sync, span, info);
        if (rank == 0)
            printf("%lld %.1f\n", size, mbs);
    }
    free(list);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
