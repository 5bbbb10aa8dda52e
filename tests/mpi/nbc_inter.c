/*
 * Nonblocking and persistent collectives on an intercommunicator between
 * the lower and the upper half of the world: rooted calls with MPI_ROOT
 * and MPI_PROC_NULL in the root's group, the calls without a root across
 * the groups, and the ones not defined there (scans) refused with
 * MPI_ERR_COMM.  (Reduce-scatter across an intercommunicator is defined
 * and supported: coll_comms tests it.)
 */
#include "nbc_test.h"

#define ITERS 2

static int wrank, wsize;

static void run(MPI_Comm inter, int mode)
{
    int r, lsize, rsize, low = wrank < wsize / 2;
    int bc, red, mine, sum; /* bound by the persistent requests */
    MPI_Request req[8];
    int *all;

    MT_OK(MPI_Comm_rank(inter, &r));
    MT_OK(MPI_Comm_size(inter, &lsize));
    MT_OK(MPI_Comm_remote_size(inter, &rsize));
    all = malloc(sizeof(int) * 2 * (size_t)(rsize + lsize));
    int *a2a_s = malloc(sizeof(int) * (size_t)rsize);
    int *a2a_r = malloc(sizeof(int) * (size_t)rsize);
    int *gv = malloc(sizeof(int) * (size_t)rsize);
    int *cnt = malloc(sizeof(int) * (size_t)rsize);
    int *dsp = malloc(sizeof(int) * (size_t)rsize);
    for (int q = 0; q < rsize; q++) {
        cnt[q] = 1;
        dsp[q] = rsize - 1 - q;
    }
    for (int it = 0; it < ITERS; it++) {
        /* The lower group's rank 0 is the root of bcast and reduce; the
         * upper group's rank 0 of gatherv. */
        int me_low = low && r == 0, me_up = !low && r == 0;
        int broot = low ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int groot = !low ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        bc = me_low ? 5 + it : -1;
        red = sum = -1;
        mine = wrank + it;
        for (int q = 0; q < rsize; q++)
            a2a_s[q] = wrank * 100 + q + it;
        NBC_START(mode, it, req[0], Ibcast, Bcast_init, &bc, 1, MPI_INT,
                  broot, inter);
        NBC_START(mode, it, req[1], Ireduce, Reduce_init, &mine, &red, 1,
                  MPI_INT, MPI_SUM, broot, inter);
        NBC_START(mode, it, req[2], Iallreduce, Allreduce_init, &mine, &sum,
                  1, MPI_INT, MPI_SUM, inter);
        NBC_START(mode, it, req[3], Iallgather, Allgather_init, &mine, 1,
                  MPI_INT, all, 1, MPI_INT, inter);
        NBC_START(mode, it, req[4], Ialltoall, Alltoall_init, a2a_s, 1,
                  MPI_INT, a2a_r, 1, MPI_INT, inter);
        NBC_START(mode, it, req[5], Igatherv, Gatherv_init, &mine, 1,
                  MPI_INT, gv, cnt, dsp, MPI_INT, groot, inter);
        NBC_START(mode, it, req[6], Ibarrier, Barrier_init, inter);
        MT_OK(MPI_Waitall(7, req, MPI_STATUSES_IGNORE));
        /* world ranks of the remote group: the other half, in order */
        int first = low ? wsize / 2 : 0, rs = 0;
        for (int q = 0; q < rsize; q++)
            rs += first + q + it;
        CT_CHECK(low || bc == 5 + it, "%s bcast: %d", nbc_mode_name[mode],
                 bc);
        CT_CHECK(!me_low || red == rs, "%s reduce: %d, want %d",
                 nbc_mode_name[mode], red, rs);
        CT_CHECK(sum == rs, "%s allreduce: %d, want %d", nbc_mode_name[mode],
                 sum, rs);
        for (int q = 0; q < rsize; q++) {
            CT_CHECK(all[q] == first + q + it, "%s allgather [%d]",
                     nbc_mode_name[mode], q);
            CT_CHECK(a2a_r[q] == (first + q) * 100 + r + it, "%s alltoall",
                     nbc_mode_name[mode]);
            CT_CHECK(!me_up || gv[rsize - 1 - q] == first + q + it,
                     "%s gatherv [%d]", nbc_mode_name[mode], q);
        }
    }
    if (mode == PERS)
        for (int i = 0; i < 7; i++)
            MT_OK(MPI_Request_free(&req[i]));
    free(all);
    free(a2a_s);
    free(a2a_r);
    free(gv);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Comm half, inter;
    int x = 0, y;
    MPI_Request req = MPI_REQUEST_NULL;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (wsize < 2) {
        MT_OK(MPI_Finalize());
        return 0;
    }
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &half));
    MT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD,
                               wrank < wsize / 2 ? wsize / 2 : 0, 7, &inter));
    run(inter, NB);
    run(inter, PERS);
    MT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MT_ERR(MPI_ERR_COMM, MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &req));
    MT_ERR(MPI_ERR_COMM, MPI_Exscan_init(&x, &y, 1, MPI_INT, MPI_SUM, inter,
                                         MPI_INFO_NULL, &req));
    MT_ERR(MPI_ERR_BUFFER, MPI_Iallreduce(MPI_IN_PLACE, &y, 1, MPI_INT,
                                          MPI_SUM, inter, &req));
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Comm_free(&half));
    MT_OK(MPI_Finalize());
    return 0;
}
