/*
 * A 2-D Jacobi stencil written in the ULFM style (docs/FT.md), run under
 * shoalrun --ft while chosen ranks kill themselves with SIGKILL; the
 * result must equal, bit for bit, a sequential run of the same sweeps.
 *
 * usage: mpi_ft_jacobi SWEEPS [WORLD_RANK@SWEEP ...]
 *
 * Rows are split in blocks over the ranks of the current communicator;
 * each sweep exchanges halo rows with the neighbours.  Every K sweeps the
 * ranks gather the whole grid (a checkpoint every survivor holds) and
 * agree (MPIX_Comm_agree) that the block went well before keeping it.  A
 * rank that sees an error revokes the communicator, so the others stop
 * waiting; the agreement then says "failed" to everyone, the survivors
 * shrink, split the rows anew and go back to the last checkpoint.
 */
#define _GNU_SOURCE
#include <mpi-ext.h>
#include <signal.h>
#include <stdint.h>

#include "mpitest.h"

#define NR 60 /* interior rows */
#define NC 40 /* interior columns */
#define W (NC + 2)
#define K 8 /* sweeps between checkpoints */

static double ck[(NR + 2) * W];   /* last checkpoint, whole grid */
static double tmp[(NR + 2) * W];  /* checkpoint being taken */
static int ck_sweep;
static int world_rank, nvict, vrank[16], vsweep[16], recoveries;

static void grid_init(double *g)
{
    for (int i = 0; i < NR + 2; i++)
        for (int j = 0; j < W; j++)
            g[i * W + j] = i == 0 ? 100.0 : (j == 0 ? 50.0 * i / NR : 0.0);
}

static void sweep_rows(const double *u, double *v, int from, int to)
{
    for (int i = from; i < to; i++)
        for (int j = 1; j <= NC; j++)
            v[i * W + j] = 0.25 * (u[(i - 1) * W + j] + u[(i + 1) * W + j] +
                                   u[i * W + j - 1] + u[i * W + j + 1]);
}

static void lo_hi(int r, int n, int *lo, int *hi)
{
    *lo = 1 + r * NR / n;
    *hi = 1 + (r + 1) * NR / n;
}

static void maybe_die(int sweep)
{
    for (int k = 0; k < nvict; k++)
        if (vrank[k] == world_rank && vsweep[k] == sweep) {
            fflush(stdout);
            raise(SIGKILL);
        }
}

/* K sweeps (or fewer, to `last`) on the rows this rank owns, then gather
 * the grid into tmp.  MPI_SUCCESS or the first error. */
static int block(MPI_Comm comm, double *u, double *v, int *sweep, int last)
{
    int r, n, lo, hi, rc = MPI_SUCCESS;
    int *counts, *displs;

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    lo_hi(r, n, &lo, &hi);
    int up = r > 0 ? r - 1 : MPI_PROC_NULL;
    int down = r < n - 1 ? r + 1 : MPI_PROC_NULL;
    for (int s = 0; s < K && *sweep < last; s++) {
        maybe_die(*sweep);
        rc = MPI_Sendrecv(&u[lo * W], W, MPI_DOUBLE, up, 1,
                          &u[hi * W], W, MPI_DOUBLE, down, 1, comm,
                          MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Sendrecv(&u[(hi - 1) * W], W, MPI_DOUBLE, down, 2,
                              &u[(lo - 1) * W], W, MPI_DOUBLE, up, 2, comm,
                              MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        sweep_rows(u, v, lo, hi);
        memcpy(&u[lo * W], &v[lo * W], (size_t)(hi - lo) * W * sizeof(double));
        ++*sweep;
    }
    counts = malloc((size_t)n * sizeof(int));
    displs = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        int a, b;
        lo_hi(i, n, &a, &b);
        counts[i] = (b - a) * W;
        displs[i] = a * W;
    }
    memcpy(tmp, ck, sizeof(tmp)); /* the boundary rows */
    rc = MPI_Allgatherv(&u[lo * W], (hi - lo) * W, MPI_DOUBLE, tmp, counts,
                        displs, MPI_DOUBLE, comm);
    free(counts);
    free(displs);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    static double u[(NR + 2) * W], v[(NR + 2) * W], seq[(NR + 2) * W],
        seq2[(NR + 2) * W];
    int sweeps, sweep = 0, np;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    sweeps = argc > 1 ? atoi(argv[1]) : 64;
    for (int k = 2; k < argc && nvict < 16; k++)
        if (sscanf(argv[k], "%d@%d", &vrank[nvict], &vsweep[nvict]) == 2)
            nvict++;
    grid_init(ck);
    ck_sweep = 0;
    memcpy(u, ck, sizeof(u));
    memcpy(v, ck, sizeof(v));
    while (ck_sweep < sweeps) {
        int rc = block(comm, u, v, &sweep, sweeps);
        int flag = rc == MPI_SUCCESS;
        if (!flag)
            MPIX_Comm_revoke(comm); /* the others stop waiting */
        rc = MPIX_Comm_agree(comm, &flag);
        if (rc == MPI_SUCCESS && flag) {
            memcpy(ck, tmp, sizeof(ck));
            ck_sweep = sweep;
            continue;
        }
        /* Someone failed: the survivors go on from the checkpoint. */
        MPI_Comm nc;
        MPIX_Comm_revoke(comm);
        MT_OK(MPIX_Comm_shrink(comm, &nc));
        MT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
        if (comm != MPI_COMM_WORLD)
            MT_OK(MPI_Comm_free(&comm));
        comm = nc;
        recoveries++;
        memcpy(u, ck, sizeof(u));
        memcpy(v, ck, sizeof(v));
        sweep = ck_sweep;
    }
    int r, n;
    MT_OK(MPI_Comm_rank(comm, &r));
    MT_OK(MPI_Comm_size(comm, &n));
    MT_CHECK(n == np - nvict, "%d ranks left, want %d", n, np - nvict);
    if (r == 0) {
        grid_init(seq);
        memcpy(seq2, seq, sizeof(seq));
        for (int s = 0; s < sweeps; s++) {
            sweep_rows(seq, seq2, 1, NR + 1);
            memcpy(seq, seq2, sizeof(seq));
        }
        MT_CHECK(memcmp(seq, ck, sizeof(seq)) == 0,
                 "the grid differs from the sequential sweeps");
        printf("OK jacobi %d sweeps on %d ranks, %d left, %d recoveries, "
               "bit-identical to the sequential run (center %.12g)\n",
               sweeps, np, n, recoveries, ck[(NR / 2) * W + NC / 2]);
    }
    if (comm != MPI_COMM_WORLD)
        MT_OK(MPI_Comm_free(&comm));
    MT_OK(MPI_Finalize());
    return 0;
}
