/*
 * An idup started on some ranks before a blocking construction and on the
 * others after it: MPI_Comm_create_group is collective over its group only,
 * so the even ranks may make the group's communicator first and start the
 * idup after, the odd ranks the other way round.  The idup's context
 * agreement, running from the progress engine on the odd ranks, must not
 * keep the blocking one waiting forever (it did: each took the process's
 * bitmap in turn).  Rounds with the full group, a half group (the idup's
 * peers outside it) and several idups outstanding.
 */
#include "mpitest.h"

static void round_of(int rank, int size, int nidup, int half)
{
    MPI_Group world, grp;
    MPI_Comm gcomm = MPI_COMM_NULL, dup[4];
    MPI_Request rq[4];
    int n = half ? (size + 1) / 2 : size, in_group;
    int ranks[64];

    for (int i = 0; i < n; i++)
        ranks[i] = half ? 2 * i : i;
    in_group = !half || rank % 2 == 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &grp);
    if (rank % 2 == 0) {
        if (in_group)
            MPI_Comm_create_group(MPI_COMM_WORLD, grp, 7, &gcomm);
        for (int i = 0; i < nidup; i++)
            MPI_Comm_idup(MPI_COMM_WORLD, &dup[i], &rq[i]);
    } else {
        for (int i = 0; i < nidup; i++)
            MPI_Comm_idup(MPI_COMM_WORLD, &dup[i], &rq[i]);
        if (in_group)
            MPI_Comm_create_group(MPI_COMM_WORLD, grp, 7, &gcomm);
    }
    MPI_Waitall(nidup, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nidup; i++) {
        int sum = 0, sz = 0;
        MPI_Comm_size(dup[i], &sz);
        MT_CHECK(sz == size, "idup %d has size %d", i, sz);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup[i]);
        MT_CHECK(sum == size * (size - 1) / 2, "allreduce on idup %d", i);
        MPI_Comm_free(&dup[i]);
    }
    if (in_group) {
        int gsize = 0, one = 1, total = 0;
        MPI_Comm_size(gcomm, &gsize);
        MT_CHECK(gsize == n, "group comm of size %d, expected %d", gsize, n);
        MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, gcomm);
        MT_CHECK(total == n, "allreduce on the group comm");
        MPI_Comm_free(&gcomm);
    } else {
        MT_CHECK(gcomm == MPI_COMM_NULL, "not a member, yet a comm");
    }
    MPI_Group_free(&grp);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size <= 64, "at most 64 ranks");
    for (int r = 0; r < 20; r++) {
        round_of(rank, size, 1, 0);
        round_of(rank, size, 3, 0);
        round_of(rank, size, 2, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_idup_order ok\n");
    MPI_Finalize();
    return 0;
}
