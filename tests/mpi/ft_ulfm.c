/*
 * ULFM under shoalrun --ft (docs/FT.md): one rank kills itself with
 * SIGKILL at a chosen point and the survivors check what each call
 * promises.
 *
 * usage: mpi_ft_ulfm MODE [VICTIM]
 *   p2p     the victim dies before it talks: a receive from it and a
 *           rendezvous send to it fail with MPIX_ERR_PROC_FAILED; a
 *           wildcard receive reports MPIX_ERR_PROC_FAILED_PENDING until
 *           acknowledged, then completes; collectives fail; agree is
 *           uniform; revoke reaches everyone; shrink works
 *   allreduce, barrier
 *           the victim dies while the others wait in the collective:
 *           every survivor gets MPIX_ERR_PROC_FAILED, then shrinks
 *   iallreduce, ibarrier
 *           the same with the nonblocking forms, waited for with MPI_Wait
 *   persistent
 *           the same with MPI_Allreduce_init, started again after the
 *           failure (it fails again at once)
 *   agree [VICTIM [VICTIM2]]
 *           the victim dies while the others are in MPIX_Comm_agree
 *           (victim 0: the coordinator dies, another takes over; with
 *           VICTIM2 that one dies 50 ms later: 0 1 kills the successor)
 *   shrink  the victim dies while the others are in MPIX_Comm_shrink
 *   ishrink the victim dies while the others have an MPIX_Comm_ishrink
 *           of MPI_COMM_WORLD pending, and an MPIX_Comm_iagree after it,
 *           and exchange messages around a ring of the survivors meanwhile
 *           (an MPI_Comm_idup of MPI_COMM_SELF started just before holds
 *           the context-id bitmap, so the shrink's first round is busy on
 *           every survivor and it runs a second, which starts before the
 *           iagree's call on rank 0 and after it on the odd ranks); the
 *           new communicator
 *           has the survivors in world order and runs collectives; the
 *           iagree fails uniformly; an ishrink without failures; the
 *           argument checks
 *   pending no victim: with an MPIX_Comm_iagree and an MPIX_Comm_ishrink
 *           of MPI_COMM_WORLD pending (the most there may be), a third
 *           agreement or shrink on it, blocking or not, is refused with
 *           MPI_ERR_UNSUPPORTED_OPERATION on every rank, also where
 *           progress has already finished the two (their requests not
 *           yet completed by MPI_Wait); one on another communicator is
 *           not; once one is waited for, a third goes, with the right flag
 *   hostcut FIRST
 *           (tests/multihost) after "ready" the test cuts the host of
 *           ranks FIRST.. off; the others wait in MPIX_Comm_agree until
 *           the launcher gives the host up and tells them, then shrink
 *   partition
 *           (tests/multihost) after "ready" every rank exchanges a word
 *           with every other (MPI_Alltoall) every 20 ms while the test
 *           cuts the link between two hosts, not the launcher's; at the
 *           first call that fails (a process failure, or revoked) each
 *           survivor revokes MPI_COMM_WORLD and shrinks it; the shrunk
 *           communicator's rank 0 prints "partition: survivors R,R,..."
 *           (world ranks), they compute together on it and finish
 *   rendezvous
 *           the victim starts a 4 MiB send to each survivor (rendezvous:
 *           the data stays with it until the receiver takes it) and dies
 *           before they receive it: every receive fails with
 *           MPIX_ERR_PROC_FAILED, none hangs or reads a dead process
 *   recvdead
 *           the victim dies while every other rank waits in MPI_Recv
 *           from it, before anyone has talked to it (with pretend hosts
 *           and no launcher notices, only the in-band notices of the
 *           victim's host reach the other host): each survivor gets
 *           MPIX_ERR_PROC_FAILED within 5 s, agrees and shrinks
 *   outlive VICTIM MS
 *           the victim dies during MPI_Allreduce; the survivors shrink
 *           and compute together for MS ms more (a launcher that ends the
 *           job after a death fails this)
 *   hostdie FIRST | R1,R2,...
 *           ranks FIRST.. or those listed (with SHOAL_WIRES_FAKE_HOSTS,
 *           a pretend host's ranks) die at once before anyone talked to them, while the
 *           others wait in MPI_Recv from each in turn: every survivor
 *           gets MPIX_ERR_PROC_FAILED from each within 5 s in all (the
 *           ring's connections see them), agrees and shrinks
 *   hostquiet FIRST | R1,R2,...
 *           the same, the survivors computing (outside MPI) for 1.5 s
 *           first, so each learns every death in its first look for
 *           dead peers (from the launcher) and tells them in one round
 *   hostspread FIRST | R1,R2,... STEP
 *           as hostdie, the lost ranks dying STEP ms apart (the k-th at
 *           300 + k STEP ms), so each survivor, waiting, learns of them
 *           at different looks (docs/FT.md: two rounds of notices, the
 *           first at once and the rest together)
 *   busy VICTIM TOLD R1,R2,...
 *           (run with no launcher notices and each rank on a pretend
 *           host of its own) the victim dies; ranks R1,R2,... (those
 *           whose wires see it die: its watcher and the rank it watched)
 *           wait in MPI_Recv from it; TOLD, which no wire of its own
 *           tells nor any of them, polls a receive from it with
 *           MPI_Test; every other rank computes and calls only MPI_Test,
 *           which completes at once (no wait, so no look for dead
 *           peers), until TOLD says it knows.  TOLD must get
 *           MPIX_ERR_PROC_FAILED within 3 s: from notices only the busy
 *           ranks pass on (docs/FT.md)
 *   stop VICTIM MS TIMES TIMEOUT_MS
 *           (run with SHOAL_FT_TIMEOUT=TIMEOUT_MS ms) the victim stops
 *           itself (SIGSTOP) TIMES times for MS ms each (rank VICTIM+1
 *           continues it, 50 ms runs in between) while the others wait in
 *           MPI_Allreduce: when MS < TIMEOUT_MS the allreduce succeeds
 *           after the stops, nobody is taken for dead; else shoalrun
 *           kills the victim past the timeout, and not before: every
 *           survivor gets MPIX_ERR_PROC_FAILED no sooner than the
 *           timeout, and shrinks
 *   zombie VICTIM PEER
 *           (run with SHOAL_FT_TIMEOUT=0 and a short
 *           SHOAL_UDP_DEAD_TIMEOUT over the datagram wire) the victim
 *           stops itself with nobody to kill it; the survivors take it
 *           for dead, shrink, and continue it; it then sends to PEER
 *           again and again and must learn it was taken for dead and
 *           end (fail-stop), never go on as a member
 *   cutoff VICTIM PEER FILE
 *           the same with the victim cut off instead of stopped (run
 *           with the victim alone on a host and a long wire timeout of
 *           its own): it prints "cutoff: ready" and waits, outside MPI,
 *           until FILE exists (the link was cut, the survivors gave it
 *           up and shrank, the link is back); it then sends to PEER
 *           again and again and must end (fail-stop); the survivors wait
 *           up to 20 s for its process to be gone
 *   attr WANT
 *           no victim: the MPIX_FT attribute of MPI_COMM_WORLD is there
 *           and its value is WANT (1 under --ft, 0 under --with-ft no);
 *           with 0, MPIX_Comm_iagree and MPIX_Comm_ishrink are refused
 *           and set the request to MPI_REQUEST_NULL
 *   revoke_early
 *           no victim: 40 times, the members make a communicator
 *           (MPI_Comm_dup, then MPI_Comm_split) and one of them revokes
 *           it at once, often before the others have it built; the others
 *           wait in MPI_Barrier on it, which must end with
 *           MPIX_ERR_REVOKED, and every member finds it revoked; a
 *           revocation of a freed communicator that comes late must not
 *           revoke the next one made with its context id
 *   revoke_loop
 *           the victim dies; the survivors call MPI_Barrier in a loop,
 *           which fails at once (MPIX_ERR_PROC_FAILED) without waiting;
 *           rank 0 (or 1) revokes MPI_COMM_WORLD at its first failure and
 *           every survivor must see MPIX_ERR_REVOKED within 10 s: a call
 *           that fails at once must still take in the revocation
 *   revoke_inflight
 *           no victim: rank 0 revokes a communicator while a 32 MiB
 *           rendezvous from rank 1 is landing in its receive buffer
 *           (run also with SHOAL_MPI_RNDV=push): the receive must not end
 *           before the data is all there, and once it has ended, nothing
 *           may write into the buffer any more; rank 3 revokes another
 *           while rank 2's rendezvous and synchronous sends to it, and 2
 *           MiB of eager ones, wait unreceived: rank 2's requests must end
 *           with MPIX_ERR_REVOKED (not hang), and the eager credits must
 *           come back (2 MiB more to rank 3 on MPI_COMM_WORLD goes)
 *   revoke_many [N]
 *           no victim: N times (default 5000, more than there are
 *           context ids), as ulfm-testing's benchrevoke does: dup
 *           MPI_COMM_WORLD, an allreduce on it, rank 0 sends rank 1 a
 *           message on it that nobody receives (and a word on
 *           MPI_COMM_WORLD after it), the last rank revokes it, an
 *           allreduce ends with MPIX_ERR_REVOKED, and it is freed: the
 *           context ids of revoked communicators must come back, and
 *           the unreceived message, which arrives before the word, must
 *           not show on the next communicator made with its id
 *   coll_reap [N]
 *           no victim (run with SHOAL_COLL_BCAST=binomial and
 *           SHOAL_LOG=info): N times (default 20), rank 0 starts a 4 MiB
 *           MPI_Bcast on a dup of MPI_COMM_WORLD, whose requests to send
 *           reach its children, which never enter the call: rank 3
 *           revokes the dup, rank 0's call ends with MPIX_ERR_REVOKED
 *           and gives up a schedule whose sends are still under way
 *           (they end when the children drop them); the dup is freed.
 *           The schedules must be freed once their sends end, not kept
 *           to MPI_Finalize: rank 0's log line at finalize says how many
 *           it held there (tests/mpi/run_expect_log.sh checks it is 0)
 *   finalize
 *           the victim dies 100 ms after the others start MPI_Finalize
 *           (having sent rank 0 a message), while rank 0 still computes
 *           for 500 ms: they must wait for rank 0 in MPI_Finalize, so
 *           that rank 0 then receives their messages and finds only the
 *           victim failed (MPIX_Comm_get_failed), not them
 * VICTIM defaults to the last rank.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "ft_test.h"

static int me, np, victim, victim2 = -1; /* victim2: agree only */
static int lost_from = -1; /* hostcut: ranks from here on are lost */
static uint64_t lost_set;  /* hostdie with a list: these ranks are lost */
static int quiet_ms;       /* hostquiet: the survivors compute this long */
static int spread_ms;      /* hostspread: the lost die this far apart */

static int lost(int i)
{
    if (lost_set != 0)
        return i < 64 && (lost_set >> i) & 1;
    return lost_from >= 0 ? i >= lost_from : i == victim || i == victim2;
}

static int nlost(void)
{
    int k = 0;
    for (int i = 0; i < np; i++)
        k += lost(i);
    return k;
}

/* Check that nc (a shrink of MPI_COMM_WORLD) has the survivors in world
 * order and that they can compute together. */
static void check_shrunk(MPI_Comm nc, int nalive)
{
    int n, sum = 0, want = 0, r, wr, below = 0;

    MT_CHECK(nc != MPI_COMM_NULL, "the shrink made no communicator");
    MT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(nc, &n));
    MT_CHECK(n == nalive, "shrunk to %d ranks, want %d", n, nalive);
    MT_OK(MPI_Comm_rank(nc, &r));
    for (int i = 0; i < me; i++)
        below += !lost(i);
    MT_CHECK(r == below, "world rank %d is rank %d of the shrunk "
             "communicator, want %d", me, r, below);
    wr = me;
    MT_OK(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, nc));
    for (int i = 0; i < np; i++)
        if (!lost(i))
            want += i;
    MT_CHECK(sum == want, "sum of survivors' world ranks %d, want %d", sum,
             want);
    MT_OK(MPI_Barrier(nc));
}

/* Shrink comm, check the survivors can compute together, return it. */
static MPI_Comm shrink_and_check(MPI_Comm comm, int nalive)
{
    MPI_Comm nc;

    MT_OK(MPIX_Comm_shrink(comm, &nc));
    check_shrunk(nc, nalive);
    return nc;
}

static void mode_p2p(void)
{
    MPI_Comm nc;
    int buf = 0, flag;
    MPI_Group g;
    static char big[1 << 20];
    int watcher = (victim + 2) % np, talker = (victim + 1) % np;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        /* Not at once: a barrier message of ours may still be on its way
         * (over TCP), and a peer that sees us dead first may fail the
         * barrier, as ULFM allows. */
        usleep(100000);
        ft_die();
    }
    /* A receive from the dead rank, and a rendezvous send to it; a
     * blocking probe for its message. */
    if (me == talker) {
        MPI_Status st;
        EXPECT(MPIX_ERR_PROC_FAILED,
               MPI_Probe(victim, 1, MPI_COMM_WORLD, &st));
    }
    if (me == talker)
        EXPECT(MPIX_ERR_PROC_FAILED,
               MPI_Recv(&buf, 1, MPI_INT, victim, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    else
        EXPECT(MPIX_ERR_PROC_FAILED,
               MPI_Send(big, sizeof(big), MPI_CHAR, victim, 1,
                        MPI_COMM_WORLD));
    /* A wildcard receive while the failure is not acknowledged. */
    if (me == watcher) {
        MPI_Request req;
        MPI_Status st;
        int n = -1, acked = -1;
        MT_OK(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
                        &req));
        EXPECT(MPIX_ERR_PROC_FAILED_PENDING, MPI_Wait(&req, &st));
        MT_CHECK(req != MPI_REQUEST_NULL, "a pending request was freed");
        MT_OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &g));
        MT_OK(MPI_Group_size(g, &n));
        MT_CHECK(n == 1, "%d failed, want 1", n);
        MT_OK(MPI_Group_free(&g));
        MT_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
        MT_OK(MPI_Group_size(g, &n));
        MT_CHECK(n == 0, "%d acknowledged before the ack, want 0", n);
        MT_OK(MPI_Group_free(&g));
        MT_OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, np, &acked));
        MT_CHECK(acked == 1, "acked %d, want 1", acked);
        MT_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
        MT_OK(MPI_Group_size(g, &n));
        MT_CHECK(n == 1, "%d acknowledged, want 1", n);
        {
            int wr = -1, zero = 0;
            MPI_Group world;
            MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
            MT_OK(MPI_Group_translate_ranks(g, 1, &zero, world, &wr));
            MT_CHECK(wr == victim, "acked rank %d, want %d", wr, victim);
            MT_OK(MPI_Group_free(&world));
        }
        MT_OK(MPI_Group_free(&g));
        /* Acknowledged: the receive goes on and matches a live sender. */
        MT_OK(MPI_Send(&buf, 0, MPI_INT, talker, 8, MPI_COMM_WORLD));
        MT_OK(MPI_Wait(&req, &st));
        MT_CHECK(st.MPI_SOURCE == talker && buf == 42,
                 "got %d from %d, want 42 from %d", buf, st.MPI_SOURCE,
                 talker);
    }
    if (me == talker) {
        int v = 42;
        MT_OK(MPI_Recv(&buf, 0, MPI_INT, watcher, 8, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        MT_OK(MPI_Send(&v, 1, MPI_INT, watcher, 7, MPI_COMM_WORLD));
    }
    /* Collectives on a communicator with a dead member, and making a
     * communicator from it. */
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Barrier(MPI_COMM_WORLD));
    {
        MPI_Comm dup = MPI_COMM_NULL;
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        MT_CHECK(dup == MPI_COMM_NULL, "a communicator was made");
    }
    EXPECT(MPIX_ERR_PROC_FAILED,
           MPI_Allreduce(&me, &buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    /* Agree: only the watcher acknowledged, so the error is uniform. */
    flag = ~(1 << me);
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    {
        int want = ~0;
        for (int i = 0; i < np; i++)
            if (i != victim)
                want &= ~(1 << i);
        MT_CHECK(flag == want, "agreed flag %#x, want %#x", flag, want);
    }
    MT_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = 1;
    MT_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    MT_CHECK(flag == 1, "flag %d", flag);
    /* Revoke: a receive posted elsewhere ends with MPIX_ERR_REVOKED. */
    if (me == talker) {
        MT_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
        EXPECT(MPIX_ERR_REVOKED,
               MPI_Send(&buf, 1, MPI_INT, watcher, 9, MPI_COMM_WORLD));
    } else {
        EXPECT(MPIX_ERR_REVOKED, MPI_Recv(&buf, 1, MPI_INT, talker, 9,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MT_OK(MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag));
    MT_CHECK(flag == 1, "not revoked");
    EXPECT(MPIX_ERR_REVOKED, MPI_Barrier(MPI_COMM_WORLD));
    /* Agree and shrink still work on it. */
    flag = 1;
    MT_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

static void mode_coll(int barrier, int nonblocking)
{
    MPI_Comm nc;
    MPI_Request req;
    int sum = 0;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(200000); /* the others are waiting by now */
        ft_die();
    }
    if (nonblocking) {
        if (barrier)
            MT_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        else
            MT_OK(MPI_Iallreduce(&me, &sum, 1, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD, &req));
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Wait(&req, MPI_STATUS_IGNORE));
        MT_CHECK(req == MPI_REQUEST_NULL, "the failed request is not freed");
    } else if (barrier)
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Barrier(MPI_COMM_WORLD));
    else
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Allreduce(&me, &sum, 1, MPI_INT,
                                                   MPI_SUM, MPI_COMM_WORLD));
    /* Everyone is out of the collective before anyone revokes (a
     * revocation would make the slower ones see MPIX_ERR_REVOKED). */
    {
        int flag = 1;
        EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    }
    MT_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

static void mode_agree(void)
{
    MPI_Comm nc;
    int flag = 1, want;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(200000);
        ft_die();
    }
    if (me == victim2) {
        usleep(250000);
        ft_die();
    }
    /* The failure happens during the call: nobody acknowledged it. */
    flag = ~(1 << me);
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    want = ~0;
    for (int i = 0; i < np; i++)
        if (!lost(i))
            want &= ~(1 << i);
    MT_CHECK(flag == want, "agreed flag %#x, want %#x", flag, want);
    /* Acknowledged now: the next one succeeds, nonblocking too. */
    MT_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = me + 1;
    {
        MPI_Request req;
        MT_OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req));
        MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    want = ~0;
    for (int i = 0; i < np; i++)
        if (!lost(i))
            want &= i + 1;
    MT_CHECK(flag == want, "iagree flag %#x, want %#x", flag, want);
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1 - (victim2 >= 0));
    MT_OK(MPI_Comm_free(&nc));
}

/* The victim dies while every other rank waits in MPI_Recv from it,
 * before anyone talked to it: across (pretend) hosts over on-demand
 * connections no survivor of another host has a connection to it, and
 * under srun no launcher tells them; each must learn of the death from a
 * rank that saw it (docs/FT.md, in-band notices) within 5 s. */
static void mode_recvdead(void)
{
    MPI_Comm nc;
    int buf = 0, flag = 1;

    if (me == victim) {
        usleep(300000); /* the others are waiting by now */
        ft_die();
    }
    double t0 = MPI_Wtime();
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Recv(&buf, 1, MPI_INT, victim, 3,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    double dt = MPI_Wtime() - t0;
    MT_CHECK(dt < 5.0, "MPIX_ERR_PROC_FAILED after %.3f s, want < 5 s", dt);
    printf("recvdead: rank %d knew after %.3f s\n", me, dt);
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

/* Every rank from lost_from on dies at once (a pretend host's ranks, as
 * if the host died) before anyone talked to them, while the others wait
 * in MPI_Recv from each of them in turn: with no launcher notices and no
 * pidfd across (pretend) hosts, each death must be seen by the ring's
 * connections and told; every survivor gets MPIX_ERR_PROC_FAILED from
 * each within 5 s in all, agrees and shrinks.  hostquiet (quiet_ms): the
 * survivors first compute past the deaths, so that each learns of them
 * all at once (docs/FT.md: one round of notices for a host).  hostspread
 * (spread_ms): the lost die that far apart, in rank order, so that each
 * survivor learns of them at different looks. */
static void mode_hostdie(void)
{
    MPI_Comm nc;
    int buf = 0, flag = 1;

    if (lost(me)) {
        int k = 0;
        for (int i = 0; i < me; i++)
            k += lost(i);
        usleep(300000 + (useconds_t)(k * spread_ms) * 1000);
        ft_die();
    }
    if (quiet_ms > 0)
        usleep((useconds_t)quiet_ms * 1000);
    double t0 = MPI_Wtime();
    for (int r = 0; r < np; r++)
        if (lost(r))
            EXPECT(MPIX_ERR_PROC_FAILED,
                   MPI_Recv(&buf, 1, MPI_INT, r, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    double dt = MPI_Wtime() - t0;
    MT_CHECK(dt < 5.0, "MPIX_ERR_PROC_FAILED from all after %.3f s, want "
             "< 5 s", dt);
    if (lost_set != 0)
        printf("hostdie: rank %d knew of the %d lost ranks after %.3f s\n",
               me, nlost(), dt);
    else
        printf("hostdie: rank %d knew of ranks %d-%d after %.3f s\n", me,
               lost_from, np - 1, dt);
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - nlost());
    MT_OK(MPI_Comm_free(&nc));
}

/* busy (docs/FT.md, in-band notices): a rank whose MPI calls all
 * complete at once must still pass on the deaths it learns.  The ranks of
 * seers (a bit each) see the victim die themselves and tell their 1st,
 * 2nd, 4th... ranks alive after them; told is none of those (the caller
 * picks it so), and every other survivor only computes and calls
 * MPI_Test. */
static void mode_busy(int told, uint64_t seers)
{
    MPI_Comm nc;
    MPI_Request req;
    MPI_Status st;
    int buf = 0, flag = 0, rc = MPI_SUCCESS;

    /* No barrier first: it would connect ranks to the victim. */
    if (me == victim) {
        usleep(300000); /* the others are in their loops by now */
        ft_die();
    }
    double t0 = MPI_Wtime();
    if (me == told) {
        MT_OK(MPI_Irecv(&buf, 1, MPI_INT, victim, 3, MPI_COMM_WORLD, &req));
        while (!flag && rc == MPI_SUCCESS && MPI_Wtime() - t0 < 3.0) {
            rc = MPI_Test(&req, &flag, &st);
            usleep(1000);
        }
        MT_CHECK(ft_cls(rc) == MPIX_ERR_PROC_FAILED,
                 "rank %d never learned of rank %d's death (class %d after "
                 "%.3f s): the busy ranks did not pass it on", me, victim,
                 ft_cls(rc), MPI_Wtime() - t0);
        printf("busy: rank %d knew after %.3f s\n", me, MPI_Wtime() - t0);
        for (int r = 0; r < np; r++)
            if (r != me && r != victim && !(r < 64 && (seers >> r) & 1))
                MT_OK(MPI_Send(&buf, 1, MPI_INT, r, 11, MPI_COMM_WORLD));
    } else if (me < 64 && (seers >> me) & 1) {
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Recv(&buf, 1, MPI_INT, victim, 3,
                                              MPI_COMM_WORLD,
                                              MPI_STATUS_IGNORE));
    } else {
        /* Busy until rank told knows: compute, and MPI_Test. */
        MT_OK(MPI_Irecv(&buf, 1, MPI_INT, told, 11, MPI_COMM_WORLD, &req));
        while (!flag && MPI_Wtime() - t0 < 5.0) {
            double until = MPI_Wtime() + 100e-6;
            while (MPI_Wtime() < until)
                ;
            MT_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        }
        MT_CHECK(flag, "rank %d: rank %d never said it knew", me, told);
    }
    flag = 1;
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

/* The victim dies during MPI_Allreduce; the survivors shrink and go on
 * computing together for ms milliseconds (an allreduce every 100 ms):
 * a launcher that ends the job some time after a death (srun --mpi=pmix
 * without the guardian holding the PMIx connection) fails this. */
static void mode_outlive(int ms)
{
    MPI_Comm nc;
    int sum = 0, flag = 1, rounds = 0;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(200000);
        ft_die();
    }
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Allreduce(&me, &sum, 1, MPI_INT,
                                               MPI_SUM, MPI_COMM_WORLD));
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < ms / 1000.0) {
        int one = 1;
        MT_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, nc));
        MT_CHECK(sum == np - 1, "%d survivors counted, want %d", sum,
                 np - 1);
        usleep(100000);
        rounds++;
    }
    if (me == 0 || (victim == 0 && me == 1))
        printf("outlive: the survivors computed %.1f s after the death "
               "(%d rounds)\n", MPI_Wtime() - t0, rounds);
    MT_OK(MPI_Comm_free(&nc));
}

static void mode_rendezvous(void)
{
    static char big[4 << 20];
    MPI_Request *reqs = malloc((size_t)np * sizeof(MPI_Request));
    MPI_Comm nc;
    int flag = 1;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        for (int i = 0; i < np; i++)
            if (i != victim)
                MT_OK(MPI_Isend(big, sizeof(big), MPI_CHAR, i, 5,
                                MPI_COMM_WORLD, &reqs[i]));
        usleep(100000); /* the requests to send have arrived */
        ft_die();
    }
    usleep(200000); /* dead by now, maybe not noticed yet */
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Recv(big, sizeof(big), MPI_CHAR,
                                          victim, 5, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
    free(reqs);
}

static void mode_hostcut(void)
{
    MPI_Comm nc;
    int flag = 1;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    sleep(1); /* the link is down by now: nothing more gets across */
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, lost_from);
    MT_OK(MPI_Comm_free(&nc));
}

static void mode_partition(void)
{
    int *out = calloc((size_t)np, sizeof(int));
    int *in = calloc((size_t)np, sizeof(int));
    int rc, cls, n, r, sum = 0, want = 0;
    MPI_Group wg, ng;
    MPI_Comm nc;
    time_t t0;
    char list[512];
    size_t len = 0;

    MT_CHECK(out != NULL && in != NULL, "no memory");
    for (int i = 0; i < np; i++)
        out[i] = me * 1000 + i;
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    t0 = time(NULL);
    for (;;) {
        rc = MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            break;
        for (int i = 0; i < np; i++)
            MT_CHECK(in[i] == i * 1000 + me, "word from %d: %d", i, in[i]);
        MT_CHECK(time(NULL) - t0 < 60, "no failure within 60 s");
        usleep(20000);
    }
    MPI_Error_class(rc, &cls);
    MT_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED ||
                 cls == MPIX_ERR_PROC_FAILED_PENDING,
             "MPI_Alltoall failed with class %d", cls);
    MT_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    MT_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &nc));
    MT_OK(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_size(nc, &n));
    MT_OK(MPI_Comm_rank(nc, &r));
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MT_OK(MPI_Comm_group(nc, &ng));
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w;
        MT_OK(MPI_Group_translate_ranks(ng, 1, &i, wg, &w));
        want += w;
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
                                i ? "," : "", w);
        MT_CHECK(len < sizeof(list), "too many survivors");
    }
    MT_OK(MPI_Group_free(&wg));
    MT_OK(MPI_Group_free(&ng));
    MT_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, nc));
    MT_CHECK(sum == want, "sum of survivors' world ranks %d, want %d", sum,
             want);
    if (r == 0) {
        printf("partition: survivors %s\n", list);
        fflush(stdout);
    }
    MT_OK(MPI_Barrier(nc));
    MT_OK(MPI_Comm_free(&nc));
    free(out);
    free(in);
}

static void mode_persistent(void)
{
    MPI_Comm nc;
    MPI_Request req;
    int sum = 0, flag = 1;

    MT_OK(MPI_Allreduce_init(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &req));
    for (int i = 0; i < 3; i++) {
        MT_OK(MPI_Start(&req));
        MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MT_CHECK(sum == np * (np - 1) / 2, "sum %d", sum);
    }
    if (me == victim) {
        usleep(200000);
        ft_die();
    }
    MT_OK(MPI_Start(&req));
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_OK(MPI_Start(&req));
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_OK(MPI_Request_free(&req));
    EXPECT(MPIX_ERR_PROC_FAILED, MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

static void mode_shrink(void)
{
    MPI_Comm nc;

    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(200000);
        ft_die();
    }
    /* Shrink runs while the victim dies: it is left out. */
    nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

/* The next survivor after (step 1) or before (step -1) world rank i. */
static int live_next(int i, int step)
{
    do
        i = (i + step + np) % np;
    while (lost(i));
    return i;
}

static void mode_ishrink(void)
{
    MPI_Comm nc = MPI_COMM_WORLD, selfdup, ring, nc2;
    MPI_Request req, areq, dreq;
    int flag, want = ~0, pending = 0, done = 0, adone = 0, tok = 0;
    int next = live_next(me, 1), prev = live_next(me, -1);

    /* The arguments, checked before anything happens. */
    EXPECT(MPI_ERR_COMM, MPIX_Comm_ishrink(MPI_COMM_NULL, &nc, &req));
    EXPECT(MPI_ERR_ARG, MPIX_Comm_ishrink(MPI_COMM_WORLD, NULL, &req));
    EXPECT(MPI_ERR_ARG, MPIX_Comm_ishrink(MPI_COMM_WORLD, &nc, NULL));
    MT_CHECK(nc == MPI_COMM_WORLD, "a refused call changed newcomm");
    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ring));
    MT_OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(200000); /* the others have started the shrink by now */
        ft_die();
    }
    /* Holds this process's context-id bitmap until progress completes
     * it: the shrink's first round sees it busy. */
    MT_OK(MPI_Comm_idup(MPI_COMM_SELF, &selfdup, &dreq));
    MT_OK(MPIX_Comm_ishrink(MPI_COMM_WORLD, &nc, &req));
    MT_CHECK(nc == MPI_COMM_NULL, "newcomm set before the request completed");
    /* The victim is alive, and takes no part, for 0.2 s yet: the call did
     * not wait for the shrink, which cannot be done now. */
    MT_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    MT_CHECK(!done, "the shrink completed while the victim was alive");
    MT_CHECK(nc == MPI_COMM_NULL, "newcomm set before the request completed");
    /* A later agreement on the same communicator, pending with it, whose
     * call comes before the shrink's second round on the odd ranks and
     * after it on rank 0 (the coordinator) and the even ranks behind it:
     * the odd ones call it at once and then sleep 0.5 s, past the
     * death, outside MPI; the even ones first wait in a receive from the
     * rank before them in the ring, sent by an odd one only after its
     * sleep, and detect the death and decide the first round while they
     * wait.  The two agreements must still match on every rank. */
    {
        int x = me, y = -1;
        MPI_Request sreq;
        if (me % 2 != 0) {
            flag = me + 1;
            MT_OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &areq));
            usleep(500000);
        }
        MT_OK(MPI_Isend(&x, 1, MPI_INT, next, 5, ring, &sreq));
        MT_OK(MPI_Recv(&y, 1, MPI_INT, prev, 5, ring, MPI_STATUS_IGNORE));
        MT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MT_CHECK(y == prev, "got %d from %d", y, prev);
        if (me % 2 == 0) {
            flag = me + 1;
            MT_OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &areq));
        }
    }
    /* Other work meanwhile: a token around the survivors' ring, the same
     * number of rounds on every survivor, testing the requests. */
    for (int round = 0; round < 100; round++) {
        int in = -1, out = tok + me;
        MT_OK(MPI_Sendrecv(&out, 1, MPI_INT, next, 3, &in, 1, MPI_INT, prev,
                           3, ring, MPI_STATUS_IGNORE));
        MT_CHECK(in == tok + prev, "ring round %d: got %d from %d, want %d",
                 round, in, prev, tok + prev);
        tok++;
        if (!done) {
            MT_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            pending += !done;
        }
        if (!adone) {
            int rc = MPI_Test(&areq, &adone, MPI_STATUS_IGNORE);
            if (adone)
                EXPECT(MPIX_ERR_PROC_FAILED, rc);
            else
                MT_OK(rc);
        }
        usleep(5000);
    }
    if (!done)
        MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* The victim died during the calls: nobody had acknowledged it. */
    if (!adone)
        EXPECT(MPIX_ERR_PROC_FAILED, MPI_Wait(&areq, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        if (!lost(i))
            want &= i + 1;
    MT_CHECK(flag == want, "iagree flag %#x, want %#x", flag, want);
    MT_OK(MPI_Wait(&dreq, MPI_STATUS_IGNORE));
    MT_OK(MPI_Comm_free(&selfdup));
    check_shrunk(nc, np - 1);
    /* No failures now: shrinking the survivors keeps them all. */
    MT_OK(MPIX_Comm_ishrink(nc, &nc2, &req));
    MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_shrunk(nc2, np - 1);
    MT_OK(MPI_Comm_free(&nc2));
    MT_OK(MPI_Comm_free(&nc));
    MT_OK(MPI_Comm_free(&ring));
    if (me == live_next(victim, 1))
        printf("ishrink: rank %d: still pending at %d of the ring's tests\n",
               me, pending);
}

/* The limit of pending agreements and shrinks per communicator. */
static void mode_pending(void)
{
    MPI_Comm dup, nc = MPI_COMM_NULL, nc2 = MPI_COMM_WORLD;
    MPI_Request areq, sreq, req = MPI_REQUEST_NULL, dreq;
    int flag = me + 1, f2 = 1, f3 = ~0, f4 = me == 0 ? 6 : 7, done = 0;

    victim = -1; /* nobody dies */

    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MT_OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &areq));
    MT_OK(MPIX_Comm_ishrink(MPI_COMM_WORLD, &nc, &sreq));
    /* The even ranks let progress finish both (Iprobe progresses without
     * completing the requests): they are still the program's. */
    if (me % 2 == 0)
        for (int i = 0; i < 200; i++) {
            int any;
            MT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, dup, &any,
                             MPI_STATUS_IGNORE));
            usleep(1000);
        }
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
           MPIX_Comm_iagree(MPI_COMM_WORLD, &f2, &req));
    MT_CHECK(req == MPI_REQUEST_NULL, "a refused iagree made a request");
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
           MPIX_Comm_agree(MPI_COMM_WORLD, &f2));
    MT_CHECK(f2 == 1, "a refused agree changed the flag");
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
           MPIX_Comm_ishrink(MPI_COMM_WORLD, &nc2, &req));
    MT_CHECK(req == MPI_REQUEST_NULL, "a refused ishrink made a request");
    MT_CHECK(nc2 == MPI_COMM_NULL, "a refused ishrink left newcomm");
    nc2 = MPI_COMM_WORLD;
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
           MPIX_Comm_shrink(MPI_COMM_WORLD, &nc2));
    MT_CHECK(nc2 == MPI_COMM_NULL, "a refused shrink left newcomm");
    /* Another communicator has its own two. */
    MT_OK(MPIX_Comm_iagree(dup, &f3, &dreq));
    MT_OK(MPI_Wait(&dreq, MPI_STATUS_IGNORE));
    MT_CHECK(f3 == ~0, "iagree on the duplicate: flag %#x", f3);
    MT_OK(MPI_Wait(&areq, MPI_STATUS_IGNORE));
    int want = ~0;
    for (int i = 0; i < np; i++)
        want &= i + 1;
    MT_CHECK(flag == want, "iagree flag %#x, want %#x", flag, want);
    /* One is done: a third agreement may go now. */
    MT_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &f4));
    MT_CHECK(f4 == 6, "agree flag %d, want 6", f4);
    MT_OK(MPI_Test(&sreq, &done, MPI_STATUS_IGNORE));
    if (!done)
        MT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    check_shrunk(nc, np);
    MT_OK(MPI_Comm_free(&nc));
    MT_OK(MPI_Comm_free(&dup));
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void mode_stop(int stop_ms, int times, int timeout_ms)
{
    int cont = live_next(victim, 1), sum = -1, dies = stop_ms >= timeout_ms;
    int pid = (int)getpid(), vpid = -1;
    double t0, waited;

    MT_CHECK(stop_ms > 0 && times > 0 && timeout_ms > 0,
             "stop MS TIMES TIMEOUT_MS: got %d %d %d", stop_ms, times,
             timeout_ms);
    if (me == victim)
        MT_OK(MPI_Send(&pid, 1, MPI_INT, cont, 4, MPI_COMM_WORLD));
    if (me == cont)
        MT_OK(MPI_Recv(&vpid, 1, MPI_INT, victim, 4, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = now_s();
    if (me == victim) {
        for (int i = 0; i < times; i++) {
            raise(SIGSTOP); /* until cont's SIGCONT (or shoalrun's kill) */
            usleep(50000);
        }
    }
    if (me == cont && !dies) {
        for (int i = 0; i < times; i++) {
            usleep((useconds_t)stop_ms * 1000);
            MT_CHECK(kill((pid_t)vpid, SIGCONT) == 0, "SIGCONT: %s",
                     strerror(errno));
            usleep(25000); /* it runs 50 ms: stop again, then count */
        }
    }
    if (!dies) {
        /* Never taken for dead: everyone waits for it, and it comes. */
        MT_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        MT_CHECK(sum == np * (np - 1) / 2, "sum %d", sum);
        waited = now_s() - t0;
        MT_CHECK(waited >= times * stop_ms / 1e3 * 0.9,
                 "the allreduce ended after %.3f s, before the stops (%d x "
                 "%d ms)", waited, times, stop_ms);
        if (me == 0)
            printf("stop: %d x %d ms, timeout %d ms: nobody taken for dead, "
                   "the allreduce took %.3f s\n", times, stop_ms,
                   timeout_ms, waited);
        return;
    }
    EXPECT(MPIX_ERR_PROC_FAILED,
           MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    waited = now_s() - t0;
    MT_CHECK(waited >= timeout_ms / 1e3 - 0.1,
             "the stopped rank was taken for dead after %.3f s, before the "
             "timeout (%d ms)", waited, timeout_ms);
    MT_CHECK(waited < timeout_ms / 1e3 + 5,
             "the stopped rank was taken for dead only after %.3f s "
             "(timeout %d ms)", waited, timeout_ms);
    if (me == cont)
        printf("stop: taken for dead after %.3f s (timeout %d ms)\n",
               waited, timeout_ms);
    MPI_Comm nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&nc));
}

/* Fail-stop: the victim stops itself (SIGSTOP) with no launcher or
 * guardian watching stops (run with SHOAL_FT_TIMEOUT=0); the datagram
 * wire of the ranks that talked to it gives up on it after
 * SHOAL_UDP_DEAD_TIMEOUT (run with 1s), every survivor learns it, they
 * shrink, then one continues it (SIGCONT).  Awake, the victim sends to
 * peer again and again: it must learn it was taken for dead and end
 * (the library says so and exits) within 8 s, never go on as a member.
 * With peer on its own (pretend) host the survivor's am layer tells it
 * over shared memory; on the other host, the datagram wire that gave up
 * on it.  The survivors compute on the shrunk communicator meanwhile and
 * wait for the victim's process to be gone.  With cut_file (mode cutoff)
 * the victim does not stop: it waits outside MPI for the file, which the
 * test makes once it has cut the victim's link, seen the survivors give
 * it up, and brought the link back. */
static void mode_zombie(int peer, const char *cut_file)
{
    int pid = (int)getpid(), vpid = -1, buf = 0, gone = 0;
    MPI_Request *reqs = malloc(2 * (size_t)np * sizeof(MPI_Request));
    int *pids = calloc((size_t)np, sizeof(int));

    MT_CHECK(reqs != NULL && pids != NULL, "out of memory");
    MT_CHECK(peer >= 0 && peer < np && peer != victim,
             "zombie VICTIM PEER: bad peer %d", peer);
    /* Every pair talks once, so every rank's wire watches the victim. */
    for (int r = 0; r < np; r++) {
        MT_OK(MPI_Irecv(&pids[r], 1, MPI_INT, r, 7, MPI_COMM_WORLD,
                        &reqs[2 * r]));
        MT_OK(MPI_Isend(&pid, 1, MPI_INT, r, 7, MPI_COMM_WORLD,
                        &reqs[2 * r + 1]));
    }
    MT_OK(MPI_Waitall(2 * np, reqs, MPI_STATUSES_IGNORE));
    vpid = pids[victim];
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim && cut_file != NULL) {
        printf("cutoff: ready\n");
        fflush(stdout);
        double t0 = now_s();
        while (access(cut_file, F_OK) != 0) {
            MT_CHECK(now_s() - t0 < 60.0, "no %s after 60 s", cut_file);
            usleep(20000);
        }
    } else if (me == victim)
        raise(SIGSTOP); /* until a survivor's SIGCONT */
    if (me == victim) {
        double t0 = now_s();
        while (now_s() - t0 < 8.0) {
            /* Errors or not, it keeps trying: what it gets does not
             * matter, only that it ends. */
            int flag = 0;
            (void)MPI_Send(&me, 1, MPI_INT, peer, 8, MPI_COMM_WORLD);
            /* An eager send need not look at what arrives; a probe
             * does, as any wait would. */
            (void)MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag,
                             MPI_STATUS_IGNORE);
            usleep(20000);
        }
        printf("FAIL: rank %d, taken for dead, still runs as a member "
               "8 s after it was continued\n", me);
        fflush(stdout);
        _exit(1);
    }
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Recv(&buf, 1, MPI_INT, victim, 3,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_Comm nc = shrink_and_check(MPI_COMM_WORLD, np - 1);
    int cont = live_next(victim, 1);
    if (me == cont && cut_file == NULL)
        MT_CHECK(kill((pid_t)vpid, SIGCONT) == 0, "SIGCONT: %s",
                 strerror(errno));
    double t0 = now_s(), limit = cut_file != NULL ? 20.0 : 10.0;
    while (!gone && now_s() - t0 < limit) {
        int here = kill((pid_t)vpid, 0) != 0 && errno == ESRCH;
        MT_OK(MPI_Allreduce(&here, &gone, 1, MPI_INT, MPI_MIN, nc));
        usleep(20000);
    }
    MT_CHECK(gone, "rank %d, taken for dead and continued, still lives "
             "after %.1f s", victim, now_s() - t0);
    if (me == cont)
        printf("zombie: rank %d ended %.3f s after it was continued\n",
               victim, now_s() - t0);
    MT_OK(MPI_Comm_free(&nc));
    free(pids);
    free(reqs);
}

static void mode_revoke_loop(void)
{
    int revoker = victim == 0 ? 1 : 0, rc, failed = 0;
    double t0;
    MPI_Comm c;

    MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MT_OK(MPI_Barrier(c));
    if (me == victim)
        ft_die();
    t0 = MPI_Wtime();
    do {
        rc = MPI_Barrier(c);
        if (ft_cls(rc) == MPIX_ERR_PROC_FAILED) {
            if (failed++ == 0 && me == revoker)
                MT_OK(MPIX_Comm_revoke(c));
        } else {
            MT_CHECK(ft_cls(rc) == MPIX_ERR_REVOKED,
                     "MPI_Barrier: class %d, want MPIX_ERR_PROC_FAILED or "
                     "MPIX_ERR_REVOKED", ft_cls(rc));
        }
        MT_CHECK(MPI_Wtime() - t0 < 10.0,
                 "still no MPIX_ERR_REVOKED after 10 s (%d failed calls): "
                 "the revocation of rank %d was never taken in", failed,
                 revoker);
    } while (ft_cls(rc) != MPIX_ERR_REVOKED);
    MT_OK(MPI_Comm_free(&c));
    c = shrink_and_check(MPI_COMM_WORLD, np - 1);
    MT_OK(MPI_Comm_free(&c));
}

static void mode_revoke_many(int n)
{
    int one = 1, sum = 0, rc;

    for (int it = 0; it < n; it++) {
        MPI_Comm c;
        int flag = 1, x = it;
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        if (me == 1) {
            /* the last iteration's stale message came before its word */
            MT_OK(MPI_Iprobe(0, 5, c, &flag, MPI_STATUS_IGNORE));
            MT_CHECK(!flag, "iteration %d: a message sent on a revoked "
                     "communicator showed on a new one", it);
        }
        MT_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        MT_CHECK(sum == np, "allreduce gave %d", sum);
        if (me == 0) {
            MT_OK(MPI_Send(&x, 1, MPI_INT, 1, 5, c)); /* never received */
            MT_OK(MPI_Send(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
        } else if (me == 1) {
            MT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == np - 1)
            MT_OK(MPIX_Comm_revoke(c));
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        MT_CHECK(ft_cls(rc) == MPIX_ERR_REVOKED,
                 "iteration %d: allreduce on the revoked communicator: "
                 "class %d", it, ft_cls(rc));
        MT_OK(MPI_Comm_free(&c));
    }
    if (me == 0)
        printf("revoke_many: %d communicators revoked and freed\n", n);
}

/* A byte of the pattern of revoke_inflight at offset i. */
static unsigned char inflight_byte(size_t i)
{
    return (unsigned char)(i * 131u + 7u) | 1u; /* never 0 */
}

static void inflight_landing(MPI_Comm c)
{
    const size_t n = 32u << 20;
    unsigned char *buf = malloc(n);
    MPI_Request r;
    int flag = 0, rc;

    MT_CHECK(buf != NULL, "no memory");
    if (me == 0) {
        memset(buf, 0, n);
        MT_OK(MPI_Irecv(buf, (int)n, MPI_BYTE, 1, 9, c, &r));
    } else if (me == 1) {
        for (size_t i = 0; i < n; i++)
            buf[i] = inflight_byte(i);
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 1) {
        MT_OK(MPI_Isend(buf, (int)n, MPI_BYTE, 0, 9, c, &r));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MT_CHECK(rc == MPI_SUCCESS || ft_cls(rc) == MPIX_ERR_REVOKED,
                 "the sender's wait: class %d", ft_cls(rc));
    }
    if (me == 0) {
        /* The first bytes have landed: revoke while the rest moves. */
        while (!flag && buf[0] == 0 && buf[n - 1] == 0)
            MT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        MT_OK(MPIX_Comm_revoke(c));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MT_CHECK(rc == MPI_SUCCESS || ft_cls(rc) == MPIX_ERR_REVOKED,
                 "the receiver's wait: class %d", ft_cls(rc));
        for (size_t i = 0; i < n; i++)
            if (buf[i] != inflight_byte(i))
                MT_FAIL("the receive ended with byte %zu not there yet "
                        "(%u): the sender may still write into a buffer "
                        "the program owns again", i, buf[i]);
        memset(buf, 0xee, n); /* the program's again */
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    usleep(100000);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        for (size_t i = 0; i < n; i++)
            if (buf[i] != 0xee)
                MT_FAIL("byte %zu of a completed receive's buffer changed "
                        "after the receive ended", i);
    free(buf);
}

static void inflight_dropped(MPI_Comm c)
{
    enum { NEAGER = 512, EAGER = 4096 };
    const size_t big = 4u << 20;
    char *buf = calloc(1, big), *small = calloc(NEAGER, EAGER);
    MPI_Request r[2 + NEAGER];
    double t0;

    MT_CHECK(buf != NULL && small != NULL, "no memory");
    if (me == 2) {
        MT_OK(MPI_Isend(buf, (int)big, MPI_BYTE, 3, 1, c, &r[0]));
        MT_OK(MPI_Issend(buf, 8, MPI_BYTE, 3, 2, c, &r[1]));
        for (int i = 0; i < NEAGER; i++)
            MT_OK(MPI_Isend(small + (size_t)i * EAGER, EAGER, MPI_BYTE, 3,
                            3, c, &r[2 + i]));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the sends have gone out */
    if (me == 3)
        MT_OK(MPIX_Comm_revoke(c));
    if (me == 2) {
        t0 = MPI_Wtime();
        for (int i = 0; i < 2; i++)
            EXPECT(MPIX_ERR_REVOKED, MPI_Wait(&r[i], MPI_STATUS_IGNORE));
        for (int i = 0; i < NEAGER; i++) {
            int rc = MPI_Wait(&r[2 + i], MPI_STATUS_IGNORE);
            MT_CHECK(rc == MPI_SUCCESS || ft_cls(rc) == MPIX_ERR_REVOKED,
                     "eager send %d: class %d", i, ft_cls(rc));
        }
        MT_CHECK(MPI_Wtime() - t0 < 10.0, "sends to a revoker took %.1f s",
                 MPI_Wtime() - t0);
        /* The credits of the dropped eager messages came back. */
        for (int i = 0; i < NEAGER; i++)
            MT_OK(MPI_Send(small, EAGER, MPI_BYTE, 3, 4, MPI_COMM_WORLD));
    }
    if (me == 3)
        for (int i = 0; i < NEAGER; i++)
            MT_OK(MPI_Recv(small, EAGER, MPI_BYTE, 2, 4, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(buf);
    free(small);
}

static void mode_revoke_inflight(void)
{
    MPI_Comm c1, c2;

    for (int round = 0; round < 3; round++) {
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
        inflight_landing(c1);
        inflight_dropped(c2);
        MT_OK(MPI_Comm_free(&c1));
        MT_OK(MPI_Comm_free(&c2));
    }
}

static void mode_finalize(void)
{
    MPI_Group failed, world;
    int n = 0, v = 0, wv = -1, zero = 0;

    MT_CHECK(victim != 0, "finalize: the victim must not be rank 0");
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) {
        usleep(100000);
        ft_die();
    }
    if (me != 0) {
        MT_OK(MPI_Send(&me, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        return; /* to MPI_Finalize */
    }
    usleep(500000); /* computing, no MPI call */
    for (int i = 1; i < np; i++)
        if (i != victim)
            MT_OK(MPI_Recv(&v, 1, MPI_INT, i, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    /* A wait looks for dead peers: it finds the victim, and with it any
     * other rank whose process has ended meanwhile. */
    EXPECT(MPIX_ERR_PROC_FAILED, MPI_Recv(&v, 1, MPI_INT, victim, 1,
                                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
    MT_OK(MPI_Group_size(failed, &n));
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (n == 1)
        MT_OK(MPI_Group_translate_ranks(failed, 1, &zero, world, &wv));
    MT_CHECK(n == 1 && wv == victim, "%d failed, first %d: want only rank "
             "%d (the others finalized and must not count as failed)",
             n, wv, victim);
    MT_OK(MPI_Group_free(&failed));
    MT_OK(MPI_Group_free(&world));
}

static void mode_coll_reap(int n)
{
    static char big[4 << 20];

    for (int it = 0; it < n; it++) {
        MPI_Comm c;
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (me == 0) {
            memset(big, it, sizeof(big));
            EXPECT(MPIX_ERR_REVOKED,
                   MPI_Bcast(big, sizeof(big), MPI_CHAR, 0, c));
        } else {
            usleep(20000); /* rank 0's requests to send have arrived */
            if (me == 3)
                MT_OK(MPIX_Comm_revoke(c));
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_Comm_free(&c));
    }
    /* The children drop what the revoked dups held and tell rank 0,
     * whose sends then end; a communicator freed after that frees the
     * schedules given up. */
    for (int it = 0; it < 3; it++) {
        MPI_Comm d;
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MT_OK(MPI_Comm_free(&d));
    }
}

static void mode_attr(int want)
{
    int *val = NULL, flag = 0;

    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &val, &flag));
    MT_CHECK(flag, "MPIX_FT: no attribute on MPI_COMM_WORLD");
    MT_CHECK(val != NULL && *val == want, "MPIX_FT is %d, want %d",
             val != NULL ? *val : -1, want);
    MT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
    MT_CHECK(flag && *val >= 32767, "MPI_TAG_UB is %d", *val);
    if (want == 0) {
        /* Without fault tolerance the nonblocking agreement and shrink
         * are refused, and leave no request behind: a program that
         * waits on it anyway (ulfm-testing's api/bindings.c) is safe. */
        MPI_Request req = (MPI_Request)(void *)&flag;
        MPI_Comm nc;
        EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
               MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req));
        MT_CHECK(req == MPI_REQUEST_NULL, "a refused iagree left a request");
        MT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        req = (MPI_Request)(void *)&flag;
        EXPECT(MPI_ERR_UNSUPPORTED_OPERATION,
               MPIX_Comm_ishrink(MPI_COMM_WORLD, &nc, &req));
        MT_CHECK(req == MPI_REQUEST_NULL, "a refused ishrink left a request");
    }
}

static void mode_revoke_early(void)
{
    for (int round = 0; round < 40; round++) {
        int revoker = round % np, flag = 0, rc;
        MPI_Comm c;
        if (round % 2 == 0)
            MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        else
            MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &c));
        MT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        if (me == revoker) {
            MT_OK(MPIX_Comm_revoke(c));
        } else {
            rc = MPI_Barrier(c);
            MT_CHECK(ft_cls(rc) == MPIX_ERR_REVOKED,
                     "round %d: MPI_Barrier on a communicator rank %d "
                     "revoked: class %d, want MPIX_ERR_REVOKED",
                     round, revoker, ft_cls(rc));
        }
        MT_OK(MPIX_Comm_is_revoked(c, &flag));
        MT_CHECK(flag, "round %d: not revoked here", round);
        MT_OK(MPI_Comm_free(&c));
        /* The next round's communicator likely gets the same context
         * id: late revocations of this one must not revoke it. */
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MT_OK(MPIX_Comm_is_revoked(c, &flag));
        MT_CHECK(!flag, "round %d: a new communicator is revoked", round);
        MT_OK(MPI_Barrier(c));
        MT_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "p2p";

    ft_init(&argc, &argv, &me, &np);
    victim = argc > 2 ? atoi(argv[2]) : np - 1;
    if (argc > 3)
        victim2 = atoi(argv[3]);
    if (np < 4) {
        if (me == 0)
            printf("SKIP: needs 4 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    if (strcmp(mode, "attr") == 0)
        mode_attr(victim); /* WANT is the second argument */
    else if (strcmp(mode, "revoke_early") == 0)
        mode_revoke_early();
    else if (strcmp(mode, "revoke_many") == 0)
        mode_revoke_many(argc > 2 ? atoi(argv[2]) : 5000);
    else if (strcmp(mode, "revoke_loop") == 0)
        mode_revoke_loop();
    else if (strcmp(mode, "finalize") == 0)
        mode_finalize();
    else if (strcmp(mode, "coll_reap") == 0)
        mode_coll_reap(argc > 2 ? atoi(argv[2]) : 20);
    else if (strcmp(mode, "revoke_inflight") == 0)
        mode_revoke_inflight();
    else if (strcmp(mode, "p2p") == 0)
        mode_p2p();
    else if (strcmp(mode, "allreduce") == 0)
        mode_coll(0, 0);
    else if (strcmp(mode, "barrier") == 0)
        mode_coll(1, 0);
    else if (strcmp(mode, "iallreduce") == 0)
        mode_coll(0, 1);
    else if (strcmp(mode, "ibarrier") == 0)
        mode_coll(1, 1);
    else if (strcmp(mode, "shrink") == 0)
        mode_shrink();
    else if (strcmp(mode, "ishrink") == 0)
        mode_ishrink();
    else if (strcmp(mode, "stop") == 0 && argc > 5) {
        victim2 = -1;
        mode_stop(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    }
    else if (strcmp(mode, "persistent") == 0)
        mode_persistent();
    else if (strcmp(mode, "rendezvous") == 0)
        mode_rendezvous();
    else if (strcmp(mode, "recvdead") == 0)
        mode_recvdead();
    else if (strcmp(mode, "outlive") == 0 && argc > 3) {
        victim2 = -1;
        mode_outlive(atoi(argv[3]));
    }
    else if (strcmp(mode, "zombie") == 0 && argc > 3) {
        victim2 = -1;
        mode_zombie(atoi(argv[3]), NULL);
    }
    else if (strcmp(mode, "cutoff") == 0 && argc > 4) {
        victim2 = -1;
        mode_zombie(atoi(argv[3]), argv[4]);
    }
    else if (strcmp(mode, "hostdie") == 0 || strcmp(mode, "hostquiet") == 0 ||
             (strcmp(mode, "hostspread") == 0 && argc > 3)) {
        if (strcmp(mode, "hostquiet") == 0)
            quiet_ms = 1500;
        if (strcmp(mode, "hostspread") == 0) {
            spread_ms = atoi(argv[3]);
            victim2 = -1;
        }
        if (argc > 2 && strchr(argv[2], ',') != NULL) {
            for (char *p = argv[2]; *p != '\0'; p += *p == ',') {
                int r = (int)strtol(p, &p, 10);
                MT_CHECK(r >= 0 && r < np && r < 64, "hostdie: bad rank %d",
                         r);
                lost_set |= 1ull << r;
            }
            victim = -1;
        } else
            lost_from = victim;
        mode_hostdie();
    }
    else if (strcmp(mode, "busy") == 0 && argc > 4) {
        uint64_t seers = 0;
        victim2 = -1;
        for (char *p = argv[4]; *p != '\0'; p += *p == ',') {
            int r = (int)strtol(p, &p, 10);
            MT_CHECK(r >= 0 && r < np && r < 64, "busy: bad rank %d", r);
            seers |= 1ull << r;
        }
        mode_busy(atoi(argv[3]), seers);
    }
    else if (strcmp(mode, "hostcut") == 0) {
        lost_from = victim;
        mode = "hostcut";
        mode_hostcut();
    }
    else if (strcmp(mode, "partition") == 0)
        mode_partition();
    else if (strcmp(mode, "agree") == 0)
        mode_agree();
    else if (strcmp(mode, "pending") == 0)
        mode_pending();
    else
        MT_FAIL("unknown mode %s", mode);
    MT_OK(MPI_Finalize());
    if (me == 0 || (victim == 0 && me == 1))
        printf("OK ft %s: survivors agree\n", mode);
    return 0;
}
