/*
 * Large noncontiguous messages, back to back, into freshly allocated
 * (untouched) receive buffers: the receiver is slow to unpack (page
 * faults), so the sender's pushed fragments fill the channel and it must
 * be woken when room appears, not at its next peer check.  Run with
 * SHOAL_WAIT_CHECK=fatal, which ends a rank whose sleep outlived what it
 * waited for, so a lost wake-up fails the test instead of only slowing it.
 *
 * Rank 0 sends to every other rank in turn: a resized struct {int;
 * double} (24-byte extent, 12 bytes of data), three times, then one
 * strided vector of doubles; every byte is checked, gaps included.
 */
#include "mpitest.h"

#define STRUCT_N 262144
#define VEC_N (1 << 20) /* doubles taken: 8 MiB of data */

typedef struct {
    int i;
    double d;
    double pad; /* a gap the datatype leaves alone */
} rec_t;

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Datatype st, rt, vt;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_OK(MPI_Type_create_struct(2, bl, disp, types, &st));
    MT_OK(MPI_Type_create_resized(st, 0, (MPI_Aint)sizeof(rec_t), &rt));
    MT_OK(MPI_Type_commit(&rt));
    MT_OK(MPI_Type_vector(VEC_N, 1, 2, MPI_DOUBLE, &vt));
    MT_OK(MPI_Type_commit(&vt));
    MT_CHECK(sizeof(rec_t) == 24, "rec_t is %zu bytes", sizeof(rec_t));

    for (int peer = 1; peer < size; peer++) {
        for (int round = 0; round < 3; round++) {
            rec_t *b = calloc(STRUCT_N, sizeof(rec_t));
            MT_CHECK(b != NULL, "no memory");
            if (rank == 0) {
                for (int k = 0; k < STRUCT_N; k++) {
                    b[k].i = k + round;
                    b[k].d = k * 0.5 + peer;
                    b[k].pad = -1.0;
                }
                MT_OK(MPI_Send(b, STRUCT_N, rt, peer, round, MPI_COMM_WORLD));
            } else if (rank == peer) {
                MPI_Status s;
                int n;
                MT_OK(MPI_Recv(b, STRUCT_N, rt, 0, round, MPI_COMM_WORLD, &s));
                MT_OK(MPI_Get_count(&s, rt, &n));
                MT_CHECK(n == STRUCT_N, "count %d", n);
                for (int k = 0; k < STRUCT_N; k++)
                    if (b[k].i != k + round || b[k].d != k * 0.5 + peer ||
                        b[k].pad != 0.0)
                        MT_FAIL("round %d: record %d wrong", round, k);
            }
            free(b);
        }
        double *v = calloc((size_t)VEC_N * 2, sizeof(double));
        MT_CHECK(v != NULL, "no memory");
        if (rank == 0) {
            for (int k = 0; k < 2 * VEC_N; k++)
                v[k] = k % 2 ? -1.0 : k + peer;
            MT_OK(MPI_Send(v, 1, vt, peer, 9, MPI_COMM_WORLD));
        } else if (rank == peer) {
            MT_OK(MPI_Recv(v, 1, vt, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < 2 * VEC_N; k++)
                if (v[k] != (k % 2 ? 0.0 : (double)(k + peer)))
                    MT_FAIL("vector element %d wrong", k);
        }
        free(v);
    }
    MT_OK(MPI_Type_free(&vt));
    MT_OK(MPI_Type_free(&rt));
    MT_OK(MPI_Type_free(&st));
    MPI_Finalize();
    return 0;
}
