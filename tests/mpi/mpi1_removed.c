/*
 * The MPI-1 calls MPI 3.0 removed (src/mpi/core/mpi1_removed.c), as old
 * programs use them: types built with MPI_Type_struct/hvector/hindexed and
 * the MPI_LB/MPI_UB markers, their bounds by MPI_Type_lb/ub/extent,
 * addresses by MPI_Address, a user error handler by MPI_Errhandler_create
 * and _set; a message of such a type goes from each rank to the next and
 * arrives laid out right.  Also MPI_Message_c2f/f2c.
 */
#include <stddef.h>

#include "mpitest.h"

static int handler_calls;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

struct rec {
    int id;
    double v[3];
    char tag;
};

int main(int argc, char **argv)
{
    int rank, size, blens[4] = {1, 1, 3, 1};
    MPI_Aint disp[4], base, a1, a2, lb, ub, extent;
    MPI_Datatype types[4] = {MPI_LB, MPI_INT, MPI_DOUBLE, MPI_UB};
    MPI_Datatype rec_t, pair_t, hv_t, hi_t;
    MPI_Errhandler eh, got;
    struct rec out[2], in[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* A struct of id and v, with markers: lb at 0, ub at sizeof(rec). */
    MPI_Address(&out[0], &base);
    MPI_Address(&out[0].id, &a1);
    MPI_Address(&out[0].v[0], &a2);
    MT_CHECK(a1 - base == offsetof(struct rec, id) &&
                 a2 - base == offsetof(struct rec, v),
             "MPI_Address: %ld %ld", (long)(a1 - base), (long)(a2 - base));
    disp[0] = 0;
    disp[1] = a1 - base;
    disp[2] = a2 - base;
    disp[3] = (MPI_Aint)sizeof(struct rec);
    MT_CHECK(MPI_Type_struct(4, blens, disp, types, &rec_t) == MPI_SUCCESS,
             "MPI_Type_struct");
    MPI_Type_commit(&rec_t);
    MPI_Type_lb(rec_t, &lb);
    MPI_Type_ub(rec_t, &ub);
    MPI_Type_extent(rec_t, &extent);
    MT_CHECK(lb == 0 && ub == (MPI_Aint)sizeof(struct rec) &&
                 extent == (MPI_Aint)sizeof(struct rec),
             "markers: lb %ld ub %ld extent %ld, expected 0 %zu %zu",
             (long)lb, (long)ub, (long)extent, sizeof(struct rec),
             sizeof(struct rec));

    /* Two records through the ring: id and v arrive, tag is untouched. */
    for (int i = 0; i < 2; i++) {
        out[i].id = rank * 10 + i;
        for (int k = 0; k < 3; k++)
            out[i].v[k] = rank + i + k * 0.5;
        out[i].tag = 'o';
        in[i].id = -1;
        in[i].v[0] = in[i].v[1] = in[i].v[2] = -1;
        in[i].tag = 'i';
    }
    int from = (rank + size - 1) % size;
    MPI_Sendrecv(out, 2, rec_t, (rank + 1) % size, 3, in, 2, rec_t, from, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2; i++) {
        MT_CHECK(in[i].id == from * 10 + i && in[i].tag == 'i',
                 "record %d: id %d tag %c", i, in[i].id, in[i].tag);
        for (int k = 0; k < 3; k++)
            MT_CHECK(in[i].v[k] == from + i + k * 0.5, "record %d v[%d]", i,
                     k);
    }

    /* hvector and hindexed: the same layouts as their successors. */
    int hb[2] = {2, 1};
    MPI_Aint hd[2] = {0, 24};
    MPI_Type_hvector(3, 2, 16, MPI_INT, &hv_t);
    MPI_Type_hindexed(2, hb, hd, MPI_DOUBLE, &hi_t);
    MPI_Type_extent(hv_t, &extent);
    MT_CHECK(extent == 2 * 16 + 8, "hvector extent %ld", (long)extent);
    MPI_Type_extent(hi_t, &extent);
    MT_CHECK(extent == 32, "hindexed extent %ld", (long)extent);
    int combiner, ni, na, nd;
    MPI_Type_get_envelope(hv_t, &ni, &na, &nd, &combiner);
    MT_CHECK(combiner == MPI_COMBINER_HVECTOR, "hvector combiner %d",
             combiner);
    MPI_Type_contiguous(2, hv_t, &pair_t);
    MPI_Type_free(&pair_t);
    MPI_Type_free(&hv_t);
    MPI_Type_free(&hi_t);
    MPI_Type_free(&rec_t);

    /* A user handler through the MPI-1 calls: called on an error. */
    MPI_Errhandler_create(count_errors, &eh);
    MPI_Errhandler_set(MPI_COMM_WORLD, eh);
    MPI_Errhandler_get(MPI_COMM_WORLD, &got);
    MT_CHECK(got == eh, "MPI_Errhandler_get gave another handler");
    MPI_Errhandler_free(&got);
    MT_CHECK(MPI_Send(NULL, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD) !=
                 MPI_SUCCESS && handler_calls == 1,
             "the handler ran %d times", handler_calls);
    MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);

    /* Message handles to Fortran integers and back. */
    MPI_Message msg;
    MPI_Status st;
    int v = rank, w = -1;
    MPI_Request rq;
    MPI_Isend(&v, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, &rq);
    MPI_Mprobe(from, 9, MPI_COMM_WORLD, &msg, &st);
    MPI_Fint f = MPI_Message_c2f(msg);
    MT_CHECK(f != 0 && MPI_Message_f2c(f) == msg, "Message_c2f/f2c");
    MT_CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) ==
                 MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL round trip");
    MPI_Mrecv(&w, 1, MPI_INT, &msg, &st);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MT_CHECK(w == from, "Mrecv got %d", w);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi1_removed ok\n");
    MPI_Finalize();
    return 0;
}
