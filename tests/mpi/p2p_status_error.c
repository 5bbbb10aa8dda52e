/*
 * status.MPI_ERROR belongs to the caller: single-completion calls
 * (Recv, Mrecv, Wait, Test, Probe, Sendrecv, ...) never write it, and the
 * multiple-completion calls write it only when they return
 * MPI_ERR_IN_STATUS (MPI 4.1 section 3.2.5).  A threaded program that
 * keeps its own code there must find it unchanged.  (MPICH 4.0 writes it
 * in MPI_Probe and Open MPI 4.1 in a successful MPI_Waitall: both against
 * the standard's text.)
 */
#include "mpitest.h"

#define SENTINEL 4242

static void fresh(MPI_Status *s, int n)
{
    for (int i = 0; i < n; i++)
        s[i].MPI_ERROR = SENTINEL;
}

static void kept(const MPI_Status *s, int n, const char *call)
{
    for (int i = 0; i < n; i++)
        MT_CHECK(s[i].MPI_ERROR == SENTINEL,
                 "%s changed status[%d].MPI_ERROR to %d", call, i,
                 s[i].MPI_ERROR);
}

int main(int argc, char **argv)
{
    int rank, size, peer, flag, idx, outcount, indices[2], v[2] = {0, 0};
    MPI_Status st[2];
    MPI_Request rq[2];
    MPI_Message msg;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 2, "needs 2 ranks");
    if (rank > 1)
        goto done;
    peer = 1 - rank;

    /* Rank 0 sends, rank 1 receives, in the same order of calls. */
    for (int t = 0; t < 12; t++) {
        if (rank == 0) {
            MT_OK(MPI_Send(&t, 1, MPI_INT, peer, t, MPI_COMM_WORLD));
            continue;
        }
        int want = t;
        fresh(st, 2);
        switch (t) {
        case 0:
            MT_OK(MPI_Recv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, st));
            kept(st, 1, "MPI_Recv");
            break;
        case 1:
            MT_OK(MPI_Mprobe(peer, t, MPI_COMM_WORLD, &msg, st));
            kept(st, 1, "MPI_Mprobe");
            MT_OK(MPI_Mrecv(v, 1, MPI_INT, &msg, st));
            kept(st, 1, "MPI_Mrecv");
            break;
        case 2:
            MT_OK(MPI_Probe(peer, t, MPI_COMM_WORLD, st));
            kept(st, 1, "MPI_Probe");
            do
                MT_OK(MPI_Iprobe(peer, t, MPI_COMM_WORLD, &flag, st));
            while (!flag);
            kept(st, 1, "MPI_Iprobe");
            MT_OK(MPI_Recv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            break;
        case 3:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            MT_OK(MPI_Wait(rq, st));
            kept(st, 1, "MPI_Wait");
            break;
        case 4:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            do
                MT_OK(MPI_Test(rq, &flag, st));
            while (!flag);
            kept(st, 1, "MPI_Test");
            break;
        case 5:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            MT_OK(MPI_Waitany(1, rq, &idx, st));
            kept(st, 1, "MPI_Waitany");
            break;
        case 6:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            MT_OK(MPI_Irecv(v + 1, 1, MPI_INT, peer, t + 1, MPI_COMM_WORLD,
                            rq + 1));
            MT_OK(MPI_Waitall(2, rq, st));
            kept(st, 2, "MPI_Waitall (no error)");
            t++;
            break;
        case 8:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            do
                MT_OK(MPI_Waitsome(1, rq, &outcount, indices, st));
            while (outcount == 0);
            kept(st, 1, "MPI_Waitsome (no error)");
            break;
        case 9:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            do
                MT_OK(MPI_Testall(1, rq, &flag, st));
            while (!flag);
            kept(st, 1, "MPI_Testall (no error)");
            break;
        case 10:
            MT_OK(MPI_Irecv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, rq));
            do
                MT_OK(MPI_Request_get_status(rq[0], &flag, st));
            while (!flag);
            kept(st, 1, "MPI_Request_get_status");
            MT_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
            break;
        case 11:
            MT_OK(MPI_Recv(v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                           st));
            kept(st, 1, "MPI_Recv from MPI_PROC_NULL");
            MT_OK(MPI_Recv(v, 1, MPI_INT, peer, t, MPI_COMM_WORLD, st));
            break;
        }
        if (want != 11 && want != 2)
            MT_CHECK(v[0] == want, "case %d received %d", want, v[0]);
    }
    /* Both sides at once. */
    fresh(st, 1);
    MT_OK(MPI_Sendrecv(&rank, 1, MPI_INT, peer, 50, v, 1, MPI_INT, peer, 50,
                       MPI_COMM_WORLD, st));
    kept(st, 1, "MPI_Sendrecv");
    MT_CHECK(v[0] == peer, "Sendrecv got %d", v[0]);
    fresh(st, 1);
    v[0] = rank;
    MT_OK(MPI_Sendrecv_replace(v, 1, MPI_INT, peer, 51, peer, 51,
                               MPI_COMM_WORLD, st));
    kept(st, 1, "MPI_Sendrecv_replace");
    MT_CHECK(v[0] == peer, "Sendrecv_replace got %d", v[0]);
done:
    MPI_Finalize();
    return 0;
}
