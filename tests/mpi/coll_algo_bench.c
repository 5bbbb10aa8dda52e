/*
 * The measurements behind coll_select.c's thresholds (docs/COLLECTIVES.md):
 * the median time of one collective call per message size, for every
 * algorithm of the collective.  Built with the tests, never run by them:
 *
 *     shoalrun -n 4 mpi_coll_algo_bench allreduce [max bytes]
 *
 * prints "allreduce <ranks> <bytes> <algorithm> <microseconds>" lines for
 * sizes from 8 bytes, doubling, up to the collective's maximum or the one
 * given.  Sizes are of the whole vector (bcast, allreduce), or of one
 * rank's block (allgather, alltoall); barrier has one size, 0.
 *
 * This machine's speed drifts from second to second, so the algorithms
 * take turns: each of 7 rounds runs one batch per algorithm (about 10 ms
 * of calls, a barrier before it), the choice switched between batches by
 * writing base_cfg as SHOAL_COLL_* would have set it (hence the internal
 * library).  The median batch's mean call counts, as the slowest rank saw
 * it.
 */
#include "base/base.h"
#include "mpitest.h"

enum { ROUNDS = 7, MAXALGOS = 3 };

static int rank, size;
static char *sbuf, *rbuf;

typedef void (*call_fn)(int64_t bytes);

static void barrier(int64_t bytes)
{
    (void)bytes;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void bcast(int64_t bytes)
{
    MPI_Bcast(rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void allreduce(int64_t bytes)
{
    MPI_Allreduce(sbuf, rbuf, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
}

static void allgather(int64_t bytes)
{
    MPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE,
                  MPI_COMM_WORLD);
}

static void alltoall(int64_t bytes)
{
    MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE,
                 MPI_COMM_WORLD);
}

/* The algorithms by their SHOAL_COLL_* names, whose index is the value. */
typedef struct coll {
    const char *name;
    call_fn fn;
    int64_t *var;
    const char *algos[MAXALGOS + 1]; /* from index 1 */
    int64_t max;                     /* bytes */
    int per_rank;                    /* buffers hold size blocks */
} coll_t;

static const coll_t colls[] = {
    {"barrier", barrier, &base_cfg.COLL_BARRIER,
     {NULL, "dissemination", "recursive_doubling"}, 0, 0},
    {"bcast", bcast, &base_cfg.COLL_BCAST,
     {NULL, "binomial", "scatter_allgather"}, 4 << 20, 0},
    {"allreduce", allreduce, &base_cfg.COLL_ALLREDUCE,
     {NULL, "recursive_doubling", "rabenseifner", "ring"}, 4 << 20, 0},
    {"allgather", allgather, &base_cfg.COLL_ALLGATHER,
     {NULL, "bruck", "recursive_doubling", "ring"}, 512 << 10, 1},
    {"alltoall", alltoall, &base_cfg.COLL_ALLTOALL,
     {NULL, "pairwise", "bruck"}, 64 << 10, 1},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Calls per batch: about 10 ms of the slowest algorithm's, 3 at least. */
static int batch_calls(const coll_t *k, int nalgos, int64_t bytes)
{
    double slowest = 0;

    for (int a = 1; a <= nalgos; a++) {
        *k->var = a;
        k->fn(bytes); /* warm up: connections, buffers */
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        k->fn(bytes);
        t = MPI_Wtime() - t;
        slowest = t > slowest ? t : slowest;
    }
    MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    int n = slowest > 0 ? (int)(0.01 / slowest) : 1000;
    return n < 3 ? 3 : n > 2000 ? 2000 : n;
}

static void measure(const coll_t *k, int nalgos, int64_t bytes)
{
    double t[MAXALGOS + 1][ROUNDS];
    int calls = batch_calls(k, nalgos, bytes);

    for (int b = 0; b < ROUNDS; b++)
        for (int a = 1; a <= nalgos; a++) {
            *k->var = a;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < calls; i++)
                k->fn(bytes);
            t[a][b] = (MPI_Wtime() - t0) / calls * 1e6;
            MPI_Allreduce(MPI_IN_PLACE, &t[a][b], 1, MPI_DOUBLE, MPI_MAX,
                          MPI_COMM_WORLD);
        }
    for (int a = 1; a <= nalgos && rank == 0; a++) {
        qsort(t[a], ROUNDS, sizeof(double), cmp_double);
        printf("%s %d %lld %s %.2f\n", k->name, size, (long long)bytes,
               k->algos[a], t[a][ROUNDS / 2]);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const coll_t *k = NULL;
    int nalgos = 0;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t i = 0; argc > 1 && i < sizeof(colls) / sizeof(colls[0]); i++)
        if (strcmp(argv[1], colls[i].name) == 0)
            k = &colls[i];
    if (k == NULL) {
        if (rank == 0)
            fprintf(stderr, "usage: %s barrier|bcast|allreduce|allgather|"
                            "alltoall [max bytes]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    while (nalgos < MAXALGOS && k->algos[nalgos + 1] != NULL)
        nalgos++;
    int64_t max = k->max;
    if (argc > 2 && atoll(argv[2]) < max)
        max = atoll(argv[2]);
    int64_t cap = max * (k->per_rank ? size : 1);
    sbuf = calloc((size_t)cap + 8, 1);
    rbuf = calloc((size_t)cap + 8, 1);
    MT_CHECK(sbuf != NULL && rbuf != NULL, "no memory");
    for (int64_t bytes = max > 0 ? 8 : 0;; bytes *= 2) {
        measure(k, nalgos, bytes);
        if (bytes >= max)
            break;
    }
    free(sbuf);
    free(rbuf);
    MT_OK(MPI_Finalize());
    return 0;
}
