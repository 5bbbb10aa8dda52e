/*
 * Large counts: one message of 2 GiB + 24 bytes (over INT_MAX) with the _c
 * calls, rendezvous both ways (pull and push are chosen by SHOAL_MPI_RNDV),
 * and the counts reported by MPI_Get_count_c / MPI_Get_elements_c.
 * Skipped (exit 77) when the machine has too little memory.
 */
#include "mpitest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Count n = ((MPI_Count)1 << 31) + 24, count = 0;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    unsigned char *buf;

    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || (double)pages * (double)psz < 12e9) {
        if (rank == 0)
            printf("SKIP: needs 2 ranks and 12 GB of memory\n");
        MPI_Finalize();
        return 77;
    }
    buf = malloc((size_t)n);
    MT_CHECK(buf != NULL, "allocating %lld bytes", (long long)n);
    if (rank == 0) {
        for (MPI_Count i = 0; i < n; i += 4096)
            buf[i] = (unsigned char)(i >> 12);
        buf[n - 1] = 0x5a;
        MT_OK(MPI_Send_c(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        memset(buf, 0, (size_t)n);
        MT_OK(MPI_Recv_c(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st));
        MT_OK(MPI_Get_count_c(&st, MPI_BYTE, &count));
        MT_CHECK(count == n, "count %lld", (long long)count);
        MT_OK(MPI_Get_elements_c(&st, MPI_BYTE, &count));
        MT_CHECK(count == n, "elements %lld", (long long)count);
        {
            int c32 = 0;
            MT_OK(MPI_Get_count(&st, MPI_BYTE, &c32));
            MT_CHECK(c32 == MPI_UNDEFINED, "int count of a 2 GiB message "
                                           "is MPI_UNDEFINED, got %d", c32);
        }
        for (MPI_Count i = 0; i < n - 1; i += 4096)
            MT_CHECK(buf[i] == (unsigned char)(i >> 12), "byte %lld",
                     (long long)i);
        MT_CHECK(buf[n - 1] == 0x5a, "last byte");
        printf("p2p_largecount: OK (%lld bytes)\n", (long long)n);
    }
    free(buf);
    MT_OK(MPI_Finalize());
    return 0;
}
