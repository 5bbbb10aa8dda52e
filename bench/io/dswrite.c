/*
 * Data sieving of independent writes (romio_ds_write), Shoal only: every
 * rank writes its column stripe of a 2-D array of bytes at the same time
 * with MPI_File_write_at (independent), pieces of `piece` bytes, about
 * 1 MiB per rank per call (at least 16 rows).  The time of a call is the
 * slowest rank's; the result the aggregate MB/s of the median call.
 * With --contig each rank writes one contiguous block of `piece` bytes
 * instead (what the shared lock that guards against sieving writers costs
 * a plain write).
 *
 *   dswrite [--pieces 16,64,...] [--iters N] [--dir DIR] [--contig]
 *
 * IOBENCH_DSW=automatic|enable|disable sets romio_ds_write.
 * Output: "# ..." lines, then "<piece> <MB/s>" lines.
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

static double run(const char *path, long long piece, int iters, int contig,
                  MPI_Info info)
{
    MPI_File fh;
    MPI_Datatype ft = MPI_DATATYPE_NULL;
    long long rows = contig ? 1 : (1 << 20) / piece, bytes;
    double *t = malloc((size_t)iters * sizeof(double)), med;
    char *buf;

    if (rows < 16)
        rows = 16;
    bytes = rows * piece;
    buf = malloc((size_t)bytes);
    memset(buf, 'a' + rank % 26, (size_t)bytes);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info,
                  &fh);
    if (!contig) {
        int sizes[2] = {(int)rows, (int)(piece * nprocs)};
        int sub[2] = {(int)rows, (int)piece};
        int starts[2] = {0, (int)(piece * rank)};
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_BYTE,
                                 &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info);
    }
    /* The file exists in full first (windows read what is there). */
    MPI_File_write_at_all(fh, contig ? rank * bytes : 0, buf, (int)bytes,
                          MPI_BYTE, MPI_STATUS_IGNORE);
    for (int i = 0; i < iters; i++) {
        double t0, dt;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_File_write_at(fh, contig ? rank * bytes : 0, buf, (int)bytes,
                          MPI_BYTE, MPI_STATUS_IGNORE);
        dt = MPI_Wtime() - t0;
        MPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    if (ft != MPI_DATATYPE_NULL)
        MPI_Type_free(&ft);
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    med = t[iters / 2];
    free(t);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return (double)bytes * nprocs / med / 1e6;
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp", *pieces = "16,64,256,1024,4096,16384,65536";
    const char *dsw = getenv("IOBENCH_DSW");
    char path[512], *list, *s;
    int iters = 10, contig = 0;
    MPI_Info info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pieces") == 0 && i + 1 < argc)
            pieces = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--contig") == 0)
            contig = 1;
    }
    if (iters < 1)
        iters = 1;
    MPI_Info_create(&info);
    if (dsw != NULL)
        MPI_Info_set(info, "romio_ds_write", dsw);
    if (rank == 0)
        printf("# dswrite%s, %d ranks, romio_ds_write=%s, median of %d, "
               "aggregate MB/s\n",
               contig ? " --contig" : "", nprocs,
               dsw != NULL ? dsw : "(default)", iters);
    snprintf(path, sizeof(path), "%s/dswrite.%d.dat", dir, (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    list = strdup(pieces);
    for (s = strtok(list, ","); s != NULL; s = strtok(NULL, ",")) {
        long long piece = atoll(s);
        double mbs;
        if (piece <= 0)
            continue;
        mbs = run(path, piece, iters, contig, info);
        if (rank == 0)
            printf("%lld %.1f\n", piece, mbs);
    }
    free(list);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
