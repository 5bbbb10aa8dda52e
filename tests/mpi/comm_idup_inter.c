/*
 * MPI_Comm_idup of intercommunicators does not wait for the other ranks.
 * Two intercommunicators (even against odd world ranks, and one over a
 * communicator made by MPI_Comm_create_group) and an intracommunicator
 * are each duplicated twice, every rank in its own order of the
 * communicators (the order only matters per communicator).  Each even
 * rank starts its first idup and only then sends to its odd neighbour,
 * which receives before it starts any: a duplicate that waited inside
 * the call would deadlock.  Then every duplicate is completed (in
 * different orders on different ranks) and used.
 */
#include "mpitest.h"

#define NC 3   /* parents: inter, intra, inter over a create_group comm */
#define NDUP 2 /* idups per parent */

static int wrank, wsize;

static MPI_Comm make_inter(MPI_Comm base)
{
    int r, n;
    MPI_Comm half, inter;

    MT_OK(MPI_Comm_rank(base, &r));
    MT_OK(MPI_Comm_size(base, &n));
    MT_OK(MPI_Comm_split(base, r % 2, r, &half));
    /* Leaders: base ranks 0 (even side) and 1 (odd side). */
    MT_OK(MPI_Intercomm_create(half, 0, base, r % 2 ? 0 : 1, 77, &inter));
    MT_OK(MPI_Comm_free(&half));
    (void)n;
    return inter;
}

static void use(MPI_Comm parent, MPI_Comm d, int k)
{
    int result, inter, lsize, rsize = 0, sum = -1, lrank, want;

    MT_CHECK(d != MPI_COMM_NULL, "idup %d gave MPI_COMM_NULL", k);
    MT_OK(MPI_Comm_compare(parent, d, &result));
    MT_CHECK(result == MPI_CONGRUENT, "idup %d compares %d", k, result);
    MT_OK(MPI_Comm_test_inter(d, &inter));
    MT_OK(MPI_Comm_size(d, &lsize));
    MT_OK(MPI_Comm_rank(d, &lrank));
    if (inter)
        MT_OK(MPI_Comm_remote_size(d, &rsize));
    /* A collective on the duplicate: across, the sum of the remote
     * group's ranks. */
    MT_OK(MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, d));
    want = inter ? rsize * (rsize - 1) / 2 : lsize * (lsize - 1) / 2;
    MT_CHECK(sum == want, "idup %d allreduce %d, want %d", k, sum, want);
    /* The same tag on parent and duplicate: messages do not mix.  Across,
     * rank i pairs with remote rank i while both exist; within, a ring. */
    if (inter ? lrank < rsize : lsize > 1) {
        int peer = inter ? lrank : (lrank + 1) % lsize;
        int from = inter ? lrank : (lrank + lsize - 1) % lsize;
        int a = 1000 + lrank, b = -1, c = -1;
        MPI_Request q[2];
        MT_OK(MPI_Irecv(&b, 1, MPI_INT, from, 5, d, &q[0]));
        MT_OK(MPI_Irecv(&c, 1, MPI_INT, from, 5, parent, &q[1]));
        MT_OK(MPI_Send(&a, 1, MPI_INT, peer, 5, parent));
        MT_OK(MPI_Send(&a, 1, MPI_INT, peer, 5, d));
        MT_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        MT_CHECK(b == c && b == 1000 + from, "idup %d traffic %d %d", k, b,
                 c);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm parent[NC], d[NC][NDUP];
    MPI_Request r[NC * NDUP];
    int have[NC], order[NC], next[NC] = {0}, nreq = 0;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        printf("comm_idup_inter: needs 2 ranks; skipped\n");
        MPI_Finalize();
        return 77;
    }
    parent[0] = make_inter(MPI_COMM_WORLD);
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent[1]));
    parent[2] = MPI_COMM_NULL;
    {
        /* The first max(2, wsize - 1) ranks, through create_group. */
        int m = wsize > 2 ? wsize - 1 : wsize, range[1][3] = {{0, m - 1, 1}};
        MPI_Group wg, g;
        MPI_Comm sub;
        MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MT_OK(MPI_Group_range_incl(wg, 1, range, &g));
        if (wrank < m) {
            MT_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 12, &sub));
            parent[2] = make_inter(sub);
            MT_OK(MPI_Comm_free(&sub));
        }
        MT_OK(MPI_Group_free(&g));
        MT_OK(MPI_Group_free(&wg));
    }
    for (int i = 0; i < NC; i++)
        have[i] = parent[i] != MPI_COMM_NULL;

    /* This rank's order of the parents: rotated by rank, reversed on odd
     * ranks. */
    for (int i = 0; i < NC; i++) {
        int j = (i + wrank) % NC;
        order[i] = wrank % 2 ? NC - 1 - j : j;
    }
    for (int round = 0; round < NDUP; round++) {
        for (int i = 0; i < NC; i++) {
            int c = order[i];
            if (have[c]) {
                if (wrank % 2 == 1 && nreq == 0) {
                    int x = -1;
                    /* Before any idup: wait for the even neighbour, which
                     * sends after starting its first idup. */
                    MT_OK(MPI_Recv(&x, 1, MPI_INT, wrank - 1, 3,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    MT_CHECK(x == wrank - 1, "token %d", x);
                }
                MT_OK(MPI_Comm_idup(parent[c], &d[c][next[c]], &r[nreq++]));
                next[c]++;
                if (wrank % 2 == 0 && nreq == 1 && wrank + 1 < wsize)
                    MT_OK(MPI_Send(&wrank, 1, MPI_INT, wrank + 1, 3,
                                   MPI_COMM_WORLD));
            }
            /* Other traffic between the idups (every rank, every slot). */
            {
                int y = -1;
                MT_OK(MPI_Sendrecv(&wrank, 1, MPI_INT, (wrank + 1) % wsize, 4,
                                   &y, 1, MPI_INT, (wrank + wsize - 1) % wsize,
                                   4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MT_CHECK(y == (wrank + wsize - 1) % wsize, "ring %d", y);
            }
        }
    }
    if (wrank % 3 == 0) {
        MT_OK(MPI_Waitall(nreq, r, MPI_STATUSES_IGNORE));
    } else {
        for (int i = nreq - 1; i >= 0; i--)
            MT_OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
    }
    for (int c = 0; c < NC; c++) {
        if (!have[c])
            continue;
        for (int k = 0; k < NDUP; k++) {
            use(parent[c], d[c][k], c * NDUP + k);
            MT_OK(MPI_Comm_free(&d[c][k]));
        }
        MT_OK(MPI_Comm_free(&parent[c]));
    }
    MT_OK(MPI_Finalize());
    if (wrank == 0)
        printf("comm_idup_inter: OK\n");
    return 0;
}
