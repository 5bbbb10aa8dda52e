/*
 * MPI's non-overtaking rule under load: every rank floods rank 0 with
 * messages of mixed sizes (eager and rendezvous) and tags, and rank 0
 * receives them with a mix of specific, ANY_TAG, ANY_SOURCE and double
 * wildcard receives, some posted early (expected), some late (unexpected).
 * Per (source, tag) the sequence numbers must arrive in order, and per
 * source in order for ANY_TAG receives; nothing is lost or duplicated.
 */
#include "mpitest.h"

#define NMSG 600
#define NTAGS 3

static int msg_len(int seq)
{
    return seq % 50 == 0 ? 40000 : (seq % 7) * 9 + 2; /* ints */
}

int main(int argc, char **argv)
{
    int rank, size;
    int *buf = malloc(40000 * sizeof(int));

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MPI_Finalize();
        return 0;
    }
    if (rank != 0) {
        for (int s = 0; s < NMSG; s++) {
            int n = msg_len(s);
            buf[0] = s;
            for (int i = 1; i < n; i++)
                buf[i] = s ^ i;
            MT_OK(MPI_Send(buf, n, MPI_INT, 0, s % NTAGS, MPI_COMM_WORLD));
        }
    } else {
        int total = NMSG * (size - 1);
        int *last = malloc((size_t)size * NTAGS * sizeof(int));
        int *last_any = malloc((size_t)size * sizeof(int));
        int *got = calloc((size_t)size, sizeof(int));
        for (int i = 0; i < size * NTAGS; i++)
            last[i] = -1;
        for (int i = 0; i < size; i++)
            last_any[i] = -1;
        for (int k = 0; k < total; k++) {
            MPI_Status st;
            int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG, count;
            /* Mix the kinds of receive; specific ones only when such a
             * message is certain to come. */
            int kind = k % 4;
            int s = 1 + k % (size - 1);
            if (kind == 1 && got[s] < NMSG)
                src = s;
            if (kind == 2 && got[s] < NMSG) {
                src = s;
                tag = got[s] % NTAGS; /* the next one from s has this tag */
            }
            MT_OK(MPI_Recv(buf, 40000, MPI_INT, src, tag, MPI_COMM_WORLD,
                           &st));
            MPI_Get_count(&st, MPI_INT, &count);
            int seq = buf[0], from = st.MPI_SOURCE;
            MT_CHECK(count == msg_len(seq), "length %d for seq %d", count,
                     seq);
            MT_CHECK(st.MPI_TAG == seq % NTAGS, "tag %d for seq %d",
                     st.MPI_TAG, seq);
            for (int i = 1; i < count; i++)
                MT_CHECK(buf[i] == (seq ^ i), "payload of seq %d", seq);
            MT_CHECK(seq > last[from * NTAGS + st.MPI_TAG],
                     "overtaken: seq %d after %d from %d tag %d", seq,
                     last[from * NTAGS + st.MPI_TAG], from, st.MPI_TAG);
            last[from * NTAGS + st.MPI_TAG] = seq;
            /* Every message from a source is delivered in send order here:
             * each receive takes the earliest matching one. */
            MT_CHECK(seq == last_any[from] + 1,
                     "from %d: seq %d after %d", from, seq, last_any[from]);
            last_any[from] = seq;
            got[from]++;
        }
        for (int i = 1; i < size; i++)
            MT_CHECK(got[i] == NMSG, "got %d of %d from %d", got[i], NMSG, i);
        free(last);
        free(last_any);
        free(got);
        printf("p2p_order: OK (%d messages)\n", total);
    }
    free(buf);
    MT_OK(MPI_Finalize());
    return 0;
}
