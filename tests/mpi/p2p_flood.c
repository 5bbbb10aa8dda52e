/*
 * An unexpected flood is bounded: rank 1 sends 20000 messages of 1 KiB
 * (20 MB) before rank 0 posts a single receive.  Eager credits switch the
 * sender to rendezvous once SHOAL_MPI_EAGER_WINDOW bytes wait at the
 * receiver, so rank 0's resident memory grows by far less than the data.
 * Then every message is received, in order.
 */
#include "mpitest.h"

#include <unistd.h>

#define NMSG 20000
#define LEN 1024

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;

    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    int rank, size;
    char *buf = malloc(LEN);

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        MPI_Finalize();
        return 0;
    }
    if (rank == 1) {
        MPI_Request *r = malloc(NMSG * sizeof(*r));
        char *all = malloc((size_t)NMSG * LEN);
        for (int i = 0; i < NMSG; i++) {
            char *m = all + (size_t)i * LEN;
            memset(m, i & 0xff, LEN);
            memcpy(m, &i, sizeof(i));
            MT_OK(MPI_Isend(m, LEN, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &r[i]));
        }
        MT_OK(MPI_Send(NULL, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD));
        MT_OK(MPI_Waitall(NMSG, r, MPI_STATUSES_IGNORE));
        free(all);
        free(r);
    } else {
        long before = rss_kb(), after;
        /* Wait for the marker: everything before it is unexpected now. */
        MT_OK(MPI_Recv(NULL, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        after = rss_kb();
        MT_CHECK(after - before < 8 * 1024,
                 "unexpected messages took %ld KiB for %d KiB of data",
                 after - before, NMSG * LEN / 1024);
        for (int i = 0; i < NMSG; i++) {
            int seq;
            MT_OK(MPI_Recv(buf, LEN, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            memcpy(&seq, buf, sizeof(seq));
            MT_CHECK(seq == i && buf[LEN - 1] == (char)(i & 0xff),
                     "message %d out of order (%d)", i, seq);
        }
        printf("p2p_flood: OK (resident growth %ld KiB for %d KiB sent)\n",
               after - before, NMSG * LEN / 1024);
    }
    free(buf);
    MT_OK(MPI_Finalize());
    return 0;
}
