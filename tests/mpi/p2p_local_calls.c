/*
 * Every call the standard calls local or nonblocking returns without
 * waiting for another process.  Rank 1 sleeps (outside MPI) while rank 0
 * makes each such call towards it, enough of them to fill the channel
 * (cells, eager credits) and to need rendezvous; each call must return in
 * far less than the sleep.  Then rank 1 wakes, takes part in everything,
 * and every byte is checked.
 *
 * Run at 2 ranks; with more, the others take part in the collectives only.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpitest.h"

#define SLEEP_S 1.5
#define LIMIT_S 0.25 /* far below SLEEP_S: a call that waited shows */
#define NSMALL 1000  /* 100-byte Isends: more than a channel's cells */
#define SMALL 100
#define NBIG 24      /* 64 KiB Isends: past the eager window, rendezvous */
#define BIG 65536
#define COLL_N 262144 /* ints in the broadcast: rendezvous-sized */

static double worst;
static const char *worst_name = "";
static int slow;

/* Time one call; every call must return before the peer wakes. */
#define LOCAL(call)                                                          \
    do {                                                                     \
        double t0_ = MPI_Wtime();                                            \
        MT_OK(call);                                                         \
        double dt_ = MPI_Wtime() - t0_;                                      \
        if (dt_ > worst) {                                                   \
            worst = dt_;                                                     \
            worst_name = #call;                                              \
        }                                                                    \
        if (dt_ > LIMIT_S) {                                                 \
            fprintf(stderr, "FAIL: %s took %.3f s while the peer slept\n",   \
                    #call, dt_);                                             \
            slow++;                                                          \
        }                                                                    \
    } while (0)

static void fill(char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed * 31 + (int)i * 7);
}

static void expect(const char *p, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (char)(seed * 31 + (int)i * 7))
            MT_FAIL("%s: byte %zu wrong", what, i);
}

int main(int argc, char **argv)
{
    int rank, size, flag, idx, outcount, indices[4];
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 2, "needs 2 ranks");

    char *small = malloc((size_t)NSMALL * SMALL);
    char *big = malloc((size_t)NBIG * BIG);
    int bsize = 8 * (SMALL + MPI_BSEND_OVERHEAD);
    char *battach = malloc((size_t)bsize);
    int *bc = malloc(COLL_N * sizeof(int));
    MPI_Request *rs = malloc((NSMALL + NBIG + 16) * sizeof(MPI_Request));
    MPI_Request coll[9], pers[4], rq;
    int red_in = rank + 1, red_out = -1, all_out = -1, pers_out = -1;
    int *gath = malloc((size_t)size * sizeof(int));
    MPI_Comm dup = MPI_COMM_NULL, half, inter, interdup = MPI_COMM_NULL;
    int nr = 0;
    /* Buffers of the sends rank 0 starts (alive until they complete). */
    char one[SMALL], pbuf[SMALL], sbuf[SMALL], bbuf[SMALL];

    MT_CHECK(small && big && battach && bc && rs && gath, "no memory");
    MT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MT_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 5,
                               &inter));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == 0) {
        MPI_Message msg;
        fill(small, (size_t)NSMALL * SMALL, 1);
        fill(big, (size_t)NBIG * BIG, 2);
        fill(one, SMALL, 3);
        fill(pbuf, SMALL, 4);
        fill(sbuf, SMALL, 5);
        fill(bbuf, SMALL, 6);
        for (int i = 0; i < COLL_N; i++)
            bc[i] = i ^ 0x5a5a;

        for (int i = 0; i < NSMALL; i++)
            LOCAL(MPI_Isend(small + (size_t)i * SMALL, SMALL, MPI_BYTE, 1,
                            10, MPI_COMM_WORLD, &rs[nr++]));
        for (int i = 0; i < NBIG; i++)
            LOCAL(MPI_Isend(big + (size_t)i * BIG, BIG, MPI_BYTE, 1, 11,
                            MPI_COMM_WORLD, &rs[nr++]));
        LOCAL(MPI_Issend(one, SMALL, MPI_BYTE, 1, 12, MPI_COMM_WORLD,
                         &rs[nr++]));
        /* Buffered sends are local, blocking or not; exactly one message's
         * size plus MPI_BSEND_OVERHEAD each must do. */
        LOCAL(MPI_Buffer_attach(battach, bsize));
        LOCAL(MPI_Bsend(one, SMALL, MPI_BYTE, 1, 13, MPI_COMM_WORLD));
        LOCAL(MPI_Ibsend(one, SMALL, MPI_BYTE, 1, 14, MPI_COMM_WORLD,
                         &rs[nr++]));
        /* Persistent sends: init is local, start nonblocking. */
        LOCAL(MPI_Send_init(pbuf, SMALL, MPI_BYTE, 1, 15, MPI_COMM_WORLD,
                            &pers[0]));
        LOCAL(MPI_Ssend_init(sbuf, SMALL, MPI_BYTE, 1, 16, MPI_COMM_WORLD,
                             &pers[1]));
        LOCAL(MPI_Bsend_init(bbuf, SMALL, MPI_BYTE, 1, 17, MPI_COMM_WORLD,
                             &pers[2]));
        LOCAL(MPI_Start(&pers[0]));
        LOCAL(MPI_Startall(2, &pers[1]));
        /* Receives, probes and tests: local. */
        LOCAL(MPI_Irecv(gath, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &rq));
        LOCAL(MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        MT_CHECK(!flag, "a message from a sleeping rank");
        LOCAL(MPI_Improbe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &msg,
                          &st));
        MT_CHECK(!flag, "a message from a sleeping rank");
        LOCAL(MPI_Test(&rs[nr - 1], &flag, &st));
        LOCAL(MPI_Testany(nr, rs, &idx, &flag, &st));
        LOCAL(MPI_Testsome(1, &rq, &outcount, indices, MPI_STATUSES_IGNORE));
        LOCAL(MPI_Testall(1, &rq, &flag, MPI_STATUSES_IGNORE));
        LOCAL(MPI_Request_get_status(rq, &flag, &st));
        LOCAL(MPI_Cancel(&rq));
        LOCAL(MPI_Wait(&rq, &st)); /* a cancelled receive completes here */
        LOCAL(MPI_Test_cancelled(&st, &flag));
        MT_CHECK(flag, "an unmatched receive could not be cancelled");
    }
    if (rank == 1) {
        struct timespec ts = {(time_t)SLEEP_S,
                              (long)((SLEEP_S - (int)SLEEP_S) * 1e9)};
        nanosleep(&ts, NULL);
    }

    /* Nonblocking and persistent collectives start without waiting. */
    LOCAL(MPI_Ibarrier(MPI_COMM_WORLD, &coll[0]));
    LOCAL(MPI_Ibcast(bc, COLL_N, MPI_INT, 0, MPI_COMM_WORLD, &coll[1]));
    LOCAL(MPI_Iallreduce(&red_in, &all_out, 1, MPI_INT, MPI_SUM,
                         MPI_COMM_WORLD, &coll[2]));
    LOCAL(MPI_Ireduce(&red_in, &red_out, 1, MPI_INT, MPI_MAX, 0,
                      MPI_COMM_WORLD, &coll[3]));
    LOCAL(MPI_Igather(&red_in, 1, MPI_INT, gath, 1, MPI_INT, 0,
                      MPI_COMM_WORLD, &coll[4]));
    LOCAL(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &coll[5]));
    LOCAL(MPI_Allreduce_init(&red_in, &pers_out, 1, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &coll[6]));
    LOCAL(MPI_Start(&coll[6]));
    LOCAL(MPI_Comm_idup(inter, &interdup, &coll[7]));
    LOCAL(MPI_Ibarrier(inter, &coll[8]));

    if (rank == 0) {
        if (slow > 0)
            MT_FAIL("%d local or nonblocking calls waited for the sleeping "
                    "rank (slowest: %s, %.3f s)", slow, worst_name, worst);
        printf("slowest local call %.1f ms: %s\n", worst * 1e3, worst_name);
        MT_OK(MPI_Waitall(nr, rs, MPI_STATUSES_IGNORE));
        MT_OK(MPI_Waitall(3, pers, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 3; i++)
            MT_OK(MPI_Request_free(&pers[i]));
        void *addr;
        int got;
        MT_OK(MPI_Buffer_detach(&addr, &got));
        MT_CHECK(addr == battach && got == bsize, "detach gave another buffer");
    }
    if (rank == 1) {
        char *rsmall = malloc((size_t)NSMALL * SMALL);
        char *rbig = malloc((size_t)NBIG * BIG);
        char r[SMALL];
        MT_CHECK(rsmall && rbig, "no memory");
        for (int i = 0; i < NSMALL; i++)
            MT_OK(MPI_Recv(rsmall + (size_t)i * SMALL, SMALL, MPI_BYTE, 0, 10,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect(rsmall, (size_t)NSMALL * SMALL, 1, "small Isends");
        for (int i = 0; i < NBIG; i++)
            MT_OK(MPI_Recv(rbig + (size_t)i * BIG, BIG, MPI_BYTE, 0, 11,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect(rbig, (size_t)NBIG * BIG, 2, "large Isends");
        for (int tag = 12; tag <= 17; tag++) {
            int seed = tag <= 14 ? 3 : tag - 11;
            MT_OK(MPI_Recv(r, SMALL, MPI_BYTE, 0, tag, MPI_COMM_WORLD,
                           &st));
            expect(r, SMALL, seed, "Issend, Bsend, Ibsend or a persistent send");
        }
        free(rsmall);
        free(rbig);
    }

    MT_OK(MPI_Waitall(6, coll, MPI_STATUSES_IGNORE));
    MT_OK(MPI_Waitall(2, coll + 7, MPI_STATUSES_IGNORE));
    MT_OK(MPI_Wait(&coll[6], MPI_STATUS_IGNORE));
    MT_OK(MPI_Request_free(&coll[6]));
    for (int i = 0; i < COLL_N; i++)
        MT_CHECK(bc[i] == (i ^ 0x5a5a), "Ibcast element %d", i);
    MT_CHECK(all_out == size * (size + 1) / 2, "Iallreduce gave %d", all_out);
    MT_CHECK(pers_out == all_out, "Allreduce_init gave %d", pers_out);
    if (rank == 0) {
        MT_CHECK(red_out == size, "Ireduce gave %d", red_out);
        for (int i = 0; i < size; i++)
            MT_CHECK(gath[i] == i + 1, "Igather slot %d", i);
    }
    MT_OK(MPI_Barrier(dup));
    MT_OK(MPI_Comm_free(&dup));
    MT_OK(MPI_Barrier(interdup));
    MT_OK(MPI_Comm_free(&interdup));
    MT_OK(MPI_Comm_free(&inter));
    MT_OK(MPI_Comm_free(&half));

    /* One message's size plus MPI_BSEND_OVERHEAD is enough for it, and
     * cancelling an unmatched send answers through Test_cancelled (which
     * may say no), never with an error. */
    if (rank == 0) {
        char exact[1 + MPI_BSEND_OVERHEAD], c = 42;
        void *addr;
        int got;
        MT_OK(MPI_Buffer_attach(exact, (int)sizeof(exact)));
        MT_OK(MPI_Ibsend(&c, 1, MPI_CHAR, 1, 30, MPI_COMM_WORLD, &rq));
        MT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MT_OK(MPI_Buffer_detach(&addr, &got));
        MT_OK(MPI_Isend(&c, 1, MPI_CHAR, 1, 31, MPI_COMM_WORLD, &rq));
        MT_OK(MPI_Cancel(&rq));
        MT_OK(MPI_Wait(&rq, &st));
        MT_OK(MPI_Test_cancelled(&st, &flag));
        MT_OK(MPI_Send(&flag, 1, MPI_INT, 1, 32, MPI_COMM_WORLD));
    }
    if (rank == 1) {
        char c = 0;
        MT_OK(MPI_Recv(&c, 1, MPI_CHAR, 0, 30, MPI_COMM_WORLD, &st));
        MT_CHECK(c == 42, "Ibsend delivered %d", c);
        MT_OK(MPI_Recv(&flag, 1, MPI_INT, 0, 32, MPI_COMM_WORLD, &st));
        if (!flag)
            MT_OK(MPI_Recv(&c, 1, MPI_CHAR, 0, 31, MPI_COMM_WORLD, &st));
    }

    free(small);
    free(big);
    free(battach);
    free(bc);
    free(rs);
    free(gath);
    MPI_Finalize();
    return 0;
}
