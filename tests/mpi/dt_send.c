/*
 * Derived types through point-to-point: a strided send received into a
 * different layout (type signatures match, layouts differ), a large
 * non-contiguous message, and MPI_Get_elements of a partial struct.
 */
#include "dt_test.h"

#define N 3000

static void strided_to_contiguous(int rank)
{
    static int a[3 * N], b[N];
    MPI_Datatype v;
    int i;

    MT_OK(MPI_Type_vector(N, 1, 3, MPI_INT, &v));
    MT_OK(MPI_Type_commit(&v));
    if (rank == 0) {
        for (i = 0; i < 3 * N; i++)
            a[i] = i;
        MT_OK(MPI_Send(a, 1, v, 1, 1, MPI_COMM_WORLD));
        MT_OK(MPI_Recv(a, 1, v, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < 3 * N; i++)
            DTT_CHECK(a[i] == (i % 3 == 0 ? -i / 3 : i), "a[%d] = %d", i, a[i]);
    } else if (rank == 1) {
        MT_OK(MPI_Recv(b, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < N; i++)
            DTT_CHECK(b[i] == 3 * i, "b[%d] = %d", i, b[i]);
        for (i = 0; i < N; i++)
            b[i] = -i;
        MT_OK(MPI_Send(b, N, MPI_INT, 0, 2, MPI_COMM_WORLD));
    }
    MT_OK(MPI_Type_free(&v));
}

/* Two whole structs and an int of a third: Get_elements counts 7. */
static void partial_elements(int rank)
{
    struct rec {
        int i;
        double d[2];
    } r[3] = {{1, {2, 3}}, {4, {5, 6}}, {7, {8, 9}}};
    int bl[2] = {1, 2}, n = -1;
    MPI_Aint d[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    char raw[64] = {0};
    MPI_Status st;

    MT_OK(MPI_Type_create_struct(2, bl, d, ty, &t));
    MT_OK(MPI_Type_commit(&t));
    if (rank == 0) {
        int pos = 0;
        MT_OK(MPI_Pack(r, 2, t, raw, sizeof(raw), &pos, MPI_COMM_WORLD));
        memcpy(raw + pos, &r[2].i, sizeof(int));
        MT_OK(MPI_Send(raw, pos + 4, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
    } else if (rank == 1) {
        struct rec got[3];
        memset(got, 0, sizeof(got));
        MT_OK(MPI_Recv(got, 3, t, 0, 3, MPI_COMM_WORLD, &st));
        MT_OK(MPI_Get_elements(&st, t, &n));
        DTT_CHECK(n == 7, "Get_elements %d", n);
        MT_OK(MPI_Get_count(&st, t, &n));
        DTT_CHECK(n == MPI_UNDEFINED, "Get_count %d", n);
        DTT_CHECK(got[1].d[1] == 6 && got[2].i == 7 && got[2].d[0] == 0,
                  "partial struct contents");
    }
    MT_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2) {
        strided_to_contiguous(rank);
        partial_elements(rank);
    }
    MPI_Finalize();
    return 0;
}
