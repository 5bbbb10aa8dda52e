/*
 * A checkpoint in the pattern of NPB BT-IO's full mode, for any MPI (built
 * with shoalcc, mpicc.openmpi, mpicc.mpich): the ranks share a grid of
 * g x g x g points, each rank one block of it (the process grid from
 * MPI_Dims_create, split along the fastest dimension first), 5 doubles of
 * solution per point.  Every `every` steps of a small stencil update the
 * whole solution is appended to one file with a collective write: the
 * view's displacement is the dump's place in the file, its etype 5
 * doubles, its filetype the rank's block as a subarray of the grid; the
 * memory side is the block inside an array with one ghost cell on every
 * side (a subarray too), so neither side is contiguous.  At the end every
 * dump is read back collectively and every value checked.
 *
 *   btio [--grid G] [--dumps D] [--every S] [--dir DIR] [--sync] [--span]
 *
 * With --sync, MPI_File_sync after the last dump counts as write time.
 * IOBENCH_CB=enable|disable sets romio_cb_read and romio_cb_write,
 * IOBENCH_CB_NODES cb_nodes.
 * Output: "# ..." lines, then "<G> <MB/s>": the bytes written and read
 * over the IO time (the slowest rank's time in write_all, sync and
 * read_all, summed over the calls; with --span each call's time from the
 * first rank's start to the last rank's end on the host's monotonic clock
 * instead; the computation is left out, as BT-IO's IO time is).  Exits
 * nonzero, saying where, when a value read back is wrong.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Seconds of the host's monotonic clock (comparable between processes). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The slowest rank's time since t0, or (span) from the first rank's t0 to
 * the last rank's now (collective). */
static double elapsed(double t0, int span)
{
    double t1 = now(), se[3] = {-t0, t1, t1 - t0}, g[3];
    MPI_Allreduce(se, g, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return span ? g[0] + g[1] : g[2];
}

/* The value of component m at global point (i, j, k) after step s. */
static double value(int s, long long i, long long j, long long k, int m)
{
    return (double)s * 1e6 + (double)((i * 131 + j * 37 + k * 7) % 100003) +
           m * 0.125;
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp", *cb = getenv("IOBENCH_CB");
    const char *cbn = getenv("IOBENCH_CB_NODES");
    int g = 64, dumps = 20, every = 5, sync = 0, span = 0, rank, np, bad = 0;
    int badall;
    int dims[3] = {0, 0, 0}, d[3], gs[3], sub[3], st[3], ms[3], mst[3] = {1,
                                                                        1, 1};
    long long n[3];
    double *u, *r, twr = 0, trd = 0, t0;
    char path[512];
    MPI_Datatype cell, ftype, mtype;
    MPI_Info info = MPI_INFO_NULL;
    MPI_File fh;
    MPI_Offset dumpbytes;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc)
            g = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dumps") == 0 && i + 1 < argc)
            dumps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
            every = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--sync") == 0)
            sync = 1;
        else if (strcmp(argv[i], "--span") == 0)
            span = 1;
    }
    MPI_Dims_create(np, 3, dims);
    for (int i = 0; i < 3; i++)
        d[i] = dims[2 - i]; /* the fastest dimension splits most */
    st[0] = rank / (d[1] * d[2]);
    st[1] = rank / d[2] % d[1];
    st[2] = rank % d[2];
    for (int i = 0; i < 3; i++) {
        if (g % d[i] != 0) {
            if (rank == 0)
                fprintf(stderr, "btio: grid %d does not split %d ways\n", g,
                        d[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        gs[i] = g;
        sub[i] = g / d[i];
        st[i] *= sub[i];
        n[i] = sub[i];
        ms[i] = sub[i] + 2;
    }
    MPI_Type_contiguous(5, MPI_DOUBLE, &cell);
    MPI_Type_commit(&cell);
    MPI_Type_create_subarray(3, gs, sub, st, MPI_ORDER_C, cell, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_create_subarray(3, ms, sub, mst, MPI_ORDER_C, cell, &mtype);
    MPI_Type_commit(&mtype);
    u = calloc((size_t)(ms[0] * ms[1] * ms[2]) * 5, sizeof(double));
    r = calloc((size_t)(ms[0] * ms[1] * ms[2]) * 5, sizeof(double));
    if (u == NULL || r == NULL)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (cb != NULL || cbn != NULL)
        MPI_Info_create(&info);
    if (cb != NULL) {
        MPI_Info_set(info, "romio_cb_read", cb);
        MPI_Info_set(info, "romio_cb_write", cb);
    }
    if (cbn != NULL)
        MPI_Info_set(info, "cb_nodes", cbn);
    snprintf(path, sizeof(path), "%s/btio.%d.dat", dir, (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                  info, &fh);
    dumpbytes = (MPI_Offset)g * g * g * 5 * (MPI_Offset)sizeof(double);

#define AT(a, i, j, k, m)                                                      \
    (a)[((((i) + 1) * (long long)ms[1] + (j) + 1) * ms[2] + (k) + 1) * 5 + (m)]

    for (int step = 1, dump = 0; dump < dumps; step++) {
        /* The "solver": every point's value for this step. */
        for (int i = 0; i < n[0]; i++)
            for (int j = 0; j < n[1]; j++)
                for (int k = 0; k < n[2]; k++)
                    for (int m = 0; m < 5; m++)
                        AT(u, i, j, k, m) =
                            value(step, st[0] + i, st[1] + j, st[2] + k, m);
        if (step % every != 0)
            continue;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        MPI_File_set_view(fh, dump * dumpbytes, cell, ftype, "native", info);
        MPI_File_write_all(fh, u, 1, mtype, MPI_STATUS_IGNORE);
        if (sync && dump == dumps - 1)
            MPI_File_sync(fh);
        twr += elapsed(t0, span);
        dump++;
    }
    for (int dump = 0; dump < dumps; dump++) {
        int s = (dump + 1) * every;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        MPI_File_set_view(fh, dump * dumpbytes, cell, ftype, "native", info);
        MPI_File_read_all(fh, r, 1, mtype, MPI_STATUS_IGNORE);
        trd += elapsed(t0, span);
        for (int i = 0; i < n[0] && !bad; i++)
            for (int j = 0; j < n[1] && !bad; j++)
                for (int k = 0; k < n[2] && !bad; k++)
                    for (int m = 0; m < 5 && !bad; m++)
                        if (AT(r, i, j, k, m) !=
                            value(s, st[0] + i, st[1] + j, st[2] + k, m)) {
                            fprintf(stderr,
                                    "btio: rank %d dump %d point (%d,%d,%d) "
                                    "component %d: %g, not %g\n",
                                    rank, dump, st[0] + i, st[1] + j,
                                    st[2] + k, m, AT(r, i, j, k, m),
                                    value(s, st[0] + i, st[1] + j, st[2] + k,
                                          m));
                            bad = 1;
                        }
    }
#undef AT
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &badall, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        MPI_File_delete(path, MPI_INFO_NULL);
        printf("# library: %.60s\n", strtok(lib, "\n"));
        printf("# btio grid %d^3, %d ranks (%dx%dx%d), %d dumps of %lld "
               "bytes: write %.4f s, read %.4f s, IO %.4f s, %s\n",
               g, np, d[0], d[1], d[2], dumps, (long long)dumpbytes, twr, trd,
               twr + trd, badall ? "VERIFICATION FAILED" : "verified");
        printf("%d %.1f\n", g, 2.0 * (double)dumpbytes * dumps / (twr + trd) /
                                   1e6);
    }
    free(u);
    free(r);
    MPI_Type_free(&cell);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    MPI_Finalize();
    return badall ? 1 : 0;
}
