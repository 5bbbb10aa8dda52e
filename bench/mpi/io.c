/*
 * MPI-IO bandwidth, for any MPI (built with shoalcc, mpicc.openmpi,
 * mpicc.mpich): every rank moves `size` bytes per call, the time of a call
 * is the slowest rank's, the result the aggregate MB/s of the median call.
 *
 *   io [--op OP] [--sizes S1,S2,...] [--iters N] [--dir DIR] [--quick]
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
 *
 * IOBENCH_CB=enable|disable sets romio_cb_read and romio_cb_write,
 * IOBENCH_DS=enable|disable romio_ds_read.
 * Output: "# library: ...", then "<size> <MB/s>" lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double run(const char *op, const char *path, long long size,
                  int iters, MPI_Info info)
{
    MPI_File fh;
    MPI_Datatype ft = MPI_DATATYPE_NULL, mt = MPI_DATATYPE_NULL;
    char *buf, *packed = NULL;
    double *t = malloc((size_t)iters * sizeof(double)), med;
    int rd = strcmp(op, "read") == 0 || strcmp(op, "tile_read") == 0;
    int tile = strncmp(op, "tile_", 5) == 0;
    int list = strcmp(op, "listio") == 0, pack = strcmp(op, "pack") == 0;
    long long piece = 0;

    buf = malloc((size_t)(list || pack ? 2 * size : size));
    memset(buf, 'a' + rank % 26, (size_t)(list || pack ? 2 * size : size));
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                  info, &fh);
    if (tile) {
        int sizes[2], sub[2], starts[2];
        piece = size / 1024;
        sizes[0] = 1024;
        sizes[1] = (int)(piece * nprocs);
        sub[0] = 1024;
        sub[1] = (int)piece;
        starts[0] = 0;
        starts[1] = (int)(piece * rank);
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                 MPI_BYTE, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info);
    }
    if (list || pack) {
        piece = size / 1000;
        MPI_Type_vector(1000, (int)piece, (int)(2 * piece), MPI_BYTE, &mt);
        MPI_Type_commit(&mt);
        if (pack)
            packed = malloc((size_t)size);
    }
    if (!rd || tile) {
        /* Reads need data there: one untimed write first. */
        if (tile)
            MPI_File_write_all(fh, buf, (int)(piece * 1024), MPI_BYTE,
                               MPI_STATUS_IGNORE);
        else if (!list && !pack)
            MPI_File_write_at_all(fh, rank * size, buf, (int)size, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
    }
    if (rd && !tile)
        MPI_File_write_at_all(fh, rank * size, buf, (int)size, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    for (int i = 0; i < iters; i++) {
        double t0, dt;
        if (tile)
            MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (tile && rd)
            MPI_File_read_all(fh, buf, (int)(piece * 1024), MPI_BYTE,
                              MPI_STATUS_IGNORE);
        else if (tile)
            MPI_File_write_all(fh, buf, (int)(piece * 1024), MPI_BYTE,
                               MPI_STATUS_IGNORE);
        else if (list)
            MPI_File_write_at(fh, rank * size, buf, 1, mt,
                              MPI_STATUS_IGNORE);
        else if (pack) {
            int pos = 0;
            MPI_Pack(buf, 1, mt, packed, (int)size, &pos, MPI_COMM_WORLD);
            MPI_File_write_at(fh, rank * size, packed, pos, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        } else if (rd)
            MPI_File_read_at_all(fh, rank * size, buf, (int)size, MPI_BYTE,
                                 MPI_STATUS_IGNORE);
        else
            MPI_File_write_at_all(fh, rank * size, buf, (int)size, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
        dt = MPI_Wtime() - t0;
        MPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    if (ft != MPI_DATATYPE_NULL)
        MPI_Type_free(&ft);
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
    return (double)size * nprocs / med / 1e6;
}

int main(int argc, char **argv)
{
    const char *op = "write", *dir = "/tmp", *sizes = "65536,1048576,4194304";
    const char *cb = getenv("IOBENCH_CB"), *ds = getenv("IOBENCH_DS");
    char path[512], lib[MPI_MAX_LIBRARY_VERSION_STRING], *list, *s;
    int iters = 20, len;
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
    }
    if (iters < 1)
        iters = 1;
    if (cb != NULL || ds != NULL)
        MPI_Info_create(&info);
    if (cb != NULL) {
        MPI_Info_set(info, "romio_cb_read", cb);
        MPI_Info_set(info, "romio_cb_write", cb);
    }
    if (ds != NULL)
        MPI_Info_set(info, "romio_ds_read", ds);
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("# library: %.60s\n# io --op %s, %d ranks, median of %d, "
               "aggregate MB/s\n",
               strtok(lib, "\n"), op, nprocs, iters);
    snprintf(path, sizeof(path), "%s/iobench.%d.dat", dir, (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    list = strdup(sizes);
    for (s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
        long long size = atoll(s);
        double mbs = run(op, path, size, iters, info);
        if (rank == 0)
            printf("%lld %.1f\n", size, mbs);
    }
    free(list);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
