/*
 * A randomized property test of barrier semantics, run in both barrier
 * modes (SHOAL_BARRIER=blocking|tolerant) and under injected
 * unresponsiveness.  Every rank follows the same random program (one
 * seed): steps are barriers over random subgroups (prepared
 * communicators, including the whole world) and messages from a random
 * sender to a random receiver, with random pauses.  Between steps every
 * rank takes whatever is deliverable (MPI_Iprobe on any source), so a
 * message delivered too early would be seen early.  At every delivery:
 *  - nothing sent after a barrier is delivered before the receiver has
 *    entered that barrier: each message carries how many barriers with
 *    the receiver its sender had entered, which may not exceed how many
 *    the receiver has entered with the sender;
 *  - per-sender FIFO: sequence numbers per pair arrive 0, 1, 2, ...;
 *  - exactly once: at the end every rank has each message of the program
 *    addressed to it (the counts match the program), no more.
 * The result (a checksum of everything received, per sender in order)
 * is printed and checked against the program, so it is identical in
 * every mode.
 * Arguments: [steps] [seed].
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>

#include "mpitest.h"

#define NGROUPS 5
#define TAG 5

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

typedef struct msg {
    int seq;      /* per (sender, receiver) */
    int entered;  /* sender's barriers with the receiver before sending */
    int64_t value;
} msg_t;

static int nranks, me;
static MPI_Comm groups[NGROUPS];
static unsigned member[NGROUPS]; /* bit r: rank r is in the group */
static int *entered;   /* [peer]: barriers with peer entered by me */
static int *next_recv; /* [peer]: next sequence number expected */
static int *next_send; /* [peer] */
static uint64_t *sums; /* [peer]: checksum of what peer sent me, in order */

static uint64_t mix(uint64_t h, int64_t v)
{
    return (h ^ (uint64_t)v) * 0x100000001b3ull;
}

static void take(const msg_t *m, int src)
{
    MT_CHECK(m->seq == next_recv[src], "from %d: sequence %d, expected %d "
             "(FIFO or exactly-once broken)", src, m->seq, next_recv[src]);
    MT_CHECK(m->entered <= entered[src],
             "from %d: sent after its barrier #%d with me, delivered when I "
             "had entered only %d", src, m->entered, entered[src]);
    next_recv[src]++;
    sums[src] = mix(sums[src], m->value);
}

static void drain(void)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        msg_t m;
        MT_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
        if (!flag)
            return;
        MT_OK(MPI_Recv(&m, sizeof(m), MPI_BYTE, st.MPI_SOURCE, TAG,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        take(&m, st.MPI_SOURCE);
    }
}

static void pause_us(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 400;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
    int *expect_count;
    uint64_t *expect_sum;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MT_CHECK(nranks <= 32, "at most 32 ranks");
    entered = calloc((size_t)nranks, sizeof(int));
    next_recv = calloc((size_t)nranks, sizeof(int));
    next_send = calloc((size_t)nranks, sizeof(int));
    sums = calloc((size_t)nranks, sizeof(uint64_t));
    expect_count = calloc((size_t)nranks, sizeof(int));
    expect_sum = calloc((size_t)nranks, sizeof(uint64_t));
    rng_state = seed;

    /* Group 0 is the world; the others random subsets of 2+ ranks. */
    for (int g = 0; g < NGROUPS; g++) {
        unsigned m = g == 0 ? (nranks >= 32 ? ~0u : (1u << nranks) - 1)
                            : rnd() & ((1u << nranks) - 1);
        if (__builtin_popcount(m) < 2)
            m |= 3u;
        member[g] = m;
        MT_OK(MPI_Comm_split(MPI_COMM_WORLD,
                             (m >> me & 1) ? 0 : MPI_UNDEFINED, me,
                             &groups[g]));
    }

    for (int s = 0; s < steps; s++) {
        uint32_t what = rnd() % 8;
        if (what < 2) { /* a barrier over a group */
            int g = (int)(rnd() % NGROUPS);
            if (member[g] >> me & 1) {
                MT_OK(MPI_Barrier(groups[g]));
                for (int p = 0; p < nranks; p++)
                    if (member[g] >> p & 1)
                        entered[p]++;
            }
        } else if (what < 7) { /* a message */
            int from = (int)(rnd() % (unsigned)nranks);
            int to = (int)(rnd() % (unsigned)nranks);
            int64_t value = (int64_t)rnd() << 20 | s;
            if (from == me) {
                msg_t m = {next_send[to]++, entered[to], value};
                MT_OK(MPI_Send(&m, sizeof(m), MPI_BYTE, to, TAG,
                               MPI_COMM_WORLD));
            }
            if (to == me) {
                expect_count[from]++;
                expect_sum[from] = mix(expect_sum[from], value);
                /* By this step the message is due: wait for it. */
                while (next_recv[from] < expect_count[from]) {
                    msg_t m;
                    MPI_Status st;
                    MT_OK(MPI_Recv(&m, sizeof(m), MPI_BYTE, MPI_ANY_SOURCE,
                                   TAG, MPI_COMM_WORLD, &st));
                    take(&m, st.MPI_SOURCE);
                }
            }
        } else { /* an unresponsive moment */
            int who = (int)(rnd() % (unsigned)nranks);
            unsigned us = rnd() % 3000;
            if (who == me)
                pause_us(us);
        }
        drain();
    }
    /* The last barrier makes every message due; then collect the rest. */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int p = 0; p < nranks; p++)
        entered[p]++;
    for (int p = 0; p < nranks; p++)
        while (next_recv[p] < expect_count[p]) {
            msg_t m;
            MT_OK(MPI_Recv(&m, sizeof(m), MPI_BYTE, p, TAG, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            take(&m, p);
        }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    drain();
    uint64_t total = 0;
    for (int p = 0; p < nranks; p++) {
        MT_CHECK(next_recv[p] == expect_count[p], "from %d: %d messages, "
                 "expected %d", p, next_recv[p], expect_count[p]);
        MT_CHECK(sums[p] == expect_sum[p], "from %d: wrong contents", p);
        total = mix(total, (int64_t)sums[p]);
    }
    uint64_t all = 0;
    MT_OK(MPI_Reduce(&total, &all, 1, MPI_UINT64_T, MPI_BXOR, 0,
                     MPI_COMM_WORLD));
    if (me == 0)
        printf("OK tol_prop checksum %016llx\n", (unsigned long long)all);
    for (int g = 0; g < NGROUPS; g++)
        if (groups[g] != MPI_COMM_NULL)
            MT_OK(MPI_Comm_free(&groups[g]));
    free(entered), free(next_recv), free(next_send), free(sums);
    free(expect_count), free(expect_sum);
    MT_OK(MPI_Finalize());
    return 0;
}
