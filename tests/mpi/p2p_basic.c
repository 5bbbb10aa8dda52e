/*
 * Point-to-point basics: every send mode at sizes from 0 B to 4 MiB
 * (eager, rendezvous, pulled or pushed as SHOAL_MPI_RNDV says), statuses and
 * counts, MPI_PROC_NULL, wildcards, sends to oneself, truncation.
 */
#include "mpitest.h"

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 8));
}

static void check_fill(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 31u + i * 7u + (i >> 8)))
            MT_FAIL("byte %zu of %zu: got %u (seed %u)", i, n, b[i], seed);
}

static const size_t sizes[] = {0, 1, 7, 8, 31, 32, 33, 64, 1000, 4096,
                               16383, 16384, 16385, 65536, 65537,
                               1 << 20, (1 << 22) + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void modes(int rank, int size)
{
    size_t max = sizes[NSIZES - 1];
    unsigned char *buf = malloc(max), *bsend_buf;
    int peer = rank ^ 1, bsize = 0;

    /* Buffered sends may all be in flight at once: room for every one. */
    for (size_t k = 0; k < NSIZES; k++)
        bsize += (int)sizes[k] + MPI_BSEND_OVERHEAD + 16;

    bsend_buf = malloc((size_t)bsize);
    MT_OK(MPI_Buffer_attach(bsend_buf, bsize));
    if (peer >= size)
        peer = MPI_PROC_NULL;
    for (int mode = 0; mode < 4; mode++) {
        for (size_t k = 0; k < NSIZES; k++) {
            size_t n = sizes[k];
            unsigned seed = (unsigned)(mode * 100 + k);
            if (peer == MPI_PROC_NULL)
                break;
            if (rank % 2 == 0) {
                fill(buf, n, seed);
                switch (mode) {
                case 0:
                    MT_OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, (int)k,
                                   MPI_COMM_WORLD));
                    break;
                case 1:
                    MT_OK(MPI_Ssend(buf, (int)n, MPI_BYTE, peer, (int)k,
                                    MPI_COMM_WORLD));
                    break;
                case 2:
                    MT_OK(MPI_Bsend(buf, (int)n, MPI_BYTE, peer, (int)k,
                                    MPI_COMM_WORLD));
                    break;
                default:
                    /* ready mode: the receiver posted before the token */
                    MT_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 9999,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    MT_OK(MPI_Rsend(buf, (int)n, MPI_BYTE, peer, (int)k,
                                    MPI_COMM_WORLD));
                }
            } else {
                MPI_Status st;
                MPI_Request r;
                int count = -1;
                memset(buf, 0xee, n);
                MT_OK(MPI_Irecv(buf, (int)n, MPI_BYTE, peer, (int)k,
                                MPI_COMM_WORLD, &r));
                if (mode == 3)
                    MT_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 9999,
                                   MPI_COMM_WORLD));
                MT_OK(MPI_Wait(&r, &st));
                MT_CHECK(r == MPI_REQUEST_NULL, "request not freed");
                MT_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == (int)k,
                         "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
                MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
                MT_CHECK(count == (int)n, "count %d != %zu (mode %d)", count,
                         n, mode);
                check_fill(buf, n, seed);
            }
        }
    }
    {
        void *b;
        int s;
        MT_OK(MPI_Buffer_detach(&b, &s));
        MT_CHECK(b == bsend_buf && s == bsize, "detach gave the buffer back");
    }
    free(bsend_buf);
    free(buf);
}

static void proc_null(void)
{
    MPI_Status st;
    int count = -1, x = 5;

    MT_OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MT_OK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
             "PROC_NULL status");
    MT_OK(MPI_Get_count(&st, MPI_INT, &count));
    MT_CHECK(count == 0 && x == 5, "PROC_NULL receive changed nothing");
}

static void self_send(int rank)
{
    int out[100], in[100];
    MPI_Request r;
    MPI_Status st;

    for (int i = 0; i < 100; i++)
        out[i] = rank * 1000 + i;
    /* Unexpected first, then expected, synchronous to oneself. */
    MT_OK(MPI_Send(out, 100, MPI_INT, rank, 1, MPI_COMM_WORLD));
    MT_OK(MPI_Recv(in, 100, MPI_INT, rank, 1, MPI_COMM_WORLD, &st));
    MT_CHECK(memcmp(in, out, sizeof(in)) == 0, "self send data");
    MT_OK(MPI_Irecv(in, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_SELF, &r));
    MT_OK(MPI_Ssend(out, 50, MPI_INT, 0, 7, MPI_COMM_SELF));
    MT_OK(MPI_Wait(&r, &st));
    MT_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7, "self status");
}

static void wildcards_and_truncation(int rank, int size)
{
    if (size < 2)
        return;
    if (rank == 1) {
        int v[4] = {1, 2, 3, 4};
        MT_OK(MPI_Send(v, 4, MPI_INT, 0, 42, MPI_COMM_WORLD));
        MT_OK(MPI_Send(v, 4, MPI_INT, 0, 43, MPI_COMM_WORLD));
        MT_OK(MPI_Send(v, 4, MPI_INT, 0, 44, MPI_COMM_WORLD));
    } else if (rank == 0) {
        int v[4] = {0}, count = -1;
        MPI_Status st;
        MT_OK(MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                       MPI_COMM_WORLD, &st));
        MT_CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 42 && v[3] == 4,
                 "wildcard receive");
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        /* The error is the call's result; a single-completion call
         * leaves status.MPI_ERROR alone (p2p_status_error.c). */
        st.MPI_ERROR = -7;
        MT_ERR(MPI_ERR_TRUNCATE,
               MPI_Recv(v, 2, MPI_INT, 1, 43, MPI_COMM_WORLD, &st));
        MT_CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 43 &&
                     st.MPI_ERROR == -7,
                 "truncated status filled: source %d tag %d error %d",
                 st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
        MPI_Get_count(&st, MPI_INT, &count);
        MT_CHECK(count == 2, "truncated count %d", count);
        /* Truncation of a posted (expected) large message too. */
        MT_OK(MPI_Recv(v, 4, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MT_CHECK(st.MPI_TAG == 44, "next message after truncation");
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    if (rank == 0) {
        size_t n = 1 << 20;
        char *big = calloc(n, 1);
        MPI_Status st;
        int count;
        MT_OK(MPI_Send(big, (int)n, MPI_CHAR, 1, 5, MPI_COMM_WORLD));
        free(big);
        MT_OK(MPI_Recv(&count, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &st));
    } else if (rank == 1) {
        char *small = malloc(1000);
        MPI_Status st;
        int count = -1;
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MT_ERR(MPI_ERR_TRUNCATE,
               MPI_Recv(small, 1000, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_CHAR, &count);
        MT_CHECK(count == 1000, "rendezvous truncated count %d", count);
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MT_OK(MPI_Send(&count, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        free(small);
    }
}

int main(int argc, char **argv)
{
    int rank, size;

    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    modes(rank, size);
    proc_null();
    self_send(rank);
    wildcards_and_truncation(rank, size);
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_basic: OK\n");
    return 0;
}
