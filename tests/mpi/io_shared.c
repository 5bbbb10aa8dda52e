/*
 * The shared file pointer under contention and ordered access: every
 * rank appends records with write_shared (each record lands once, whole,
 * and the pointer ends after all of them); read_shared hands each record
 * to exactly one rank; write_ordered and read_ordered (and their split
 * forms) go in rank order and advance the pointer by everyone's total;
 * seek_shared moves it for everyone.  The side file holding the pointer
 * is gone after close (io_dir_remove fails on hidden files left).
 */
#include "io_test.h"

#define K 40 /* records per rank */

typedef struct rec {
    int rank, seq, check[2];
} rec_t;

static int rank, nprocs;

static void contention(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Offset pos;
    MPI_Datatype rt;
    rec_t r, *all;
    int *seen, got;

    MT_OK(MPI_Type_contiguous(sizeof(rec_t), MPI_BYTE, &rt));
    MT_OK(MPI_Type_commit(&rt));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    for (int s = 0; s < K; s++) {
        r.rank = rank;
        r.seq = s;
        r.check[0] = rank * 7 + s;
        r.check[1] = ~(rank * 7 + s);
        if (s % 2) {
            MT_OK(MPI_File_write_shared(fh, &r, 1, rt, &st));
        } else {
            MT_OK(MPI_File_iwrite_shared(fh, &r, 1, rt, &req));
            MT_OK(MPI_Wait(&req, &st));
        }
        MT_OK(MPI_Get_count(&st, rt, &got));
        MT_CHECK(got == 1, "write_shared count %d", got);
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == (MPI_Offset)(nprocs * K * sizeof(rec_t)),
             "shared pointer at %lld after %d records", pos, nprocs * K);
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        all = (rec_t *)io_slurp(path, &n);
        MT_CHECK(n == nprocs * K * sizeof(rec_t), "file of %zu bytes", n);
        seen = calloc((size_t)(nprocs * K), sizeof(int));
        for (int i = 0; i < nprocs * K; i++) {
            rec_t *q = &all[i];
            MT_CHECK(q->rank >= 0 && q->rank < nprocs && q->seq >= 0 &&
                         q->seq < K && q->check[0] == q->rank * 7 + q->seq &&
                         q->check[1] == ~(q->rank * 7 + q->seq),
                     "record %d torn or foreign (%d %d)", i, q->rank, q->seq);
            MT_CHECK(seen[q->rank * K + q->seq]++ == 0, "record %d/%d twice",
                     q->rank, q->seq);
        }
        free(seen);
        free(all);
    }
    /* read_shared: every record goes to exactly one reader. */
    MT_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    {
        int mine[K * 64], n = 0, *counts = NULL, *every = NULL;
        for (;;) {
            MT_OK(MPI_File_read_shared(fh, &r, 1, rt, &st));
            MT_OK(MPI_Get_count(&st, rt, &got));
            if (got == 0)
                break;
            MT_CHECK(n < K * 64, "too many records");
            mine[n++] = r.rank * K + r.seq;
        }
        if (rank == 0) {
            counts = calloc((size_t)nprocs, sizeof(int));
            every = calloc((size_t)(nprocs * K * 2), sizeof(int));
        }
        {
            int tot = 0, *displs = NULL;
            MT_OK(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0,
                             MPI_COMM_WORLD));
            if (rank == 0) {
                displs = calloc((size_t)nprocs, sizeof(int));
                for (int i = 0; i < nprocs; i++) {
                    displs[i] = tot;
                    tot += counts[i];
                }
                MT_CHECK(tot == nprocs * K, "read_shared gave %d records", tot);
            }
            MT_OK(MPI_Gatherv(mine, n, MPI_INT, every, counts, displs, MPI_INT,
                              0, MPI_COMM_WORLD));
            if (rank == 0) {
                int *seen2 = calloc((size_t)(nprocs * K), sizeof(int));
                for (int i = 0; i < tot; i++)
                    MT_CHECK(seen2[every[i]]++ == 0, "record %d read twice",
                             every[i]);
                free(seen2);
                free(displs);
            }
        }
        free(counts);
        free(every);
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&rt));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* Rank r contributes r + 1 ints of value 100 * round + r. */
static void ordered(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    int buf[64], got, total = nprocs * (nprocs + 1) / 2;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i <= rank; i++)
            buf[i] = 100 * round + rank;
        if (round == 1) {
            MT_OK(MPI_File_write_ordered_begin(fh, buf, rank + 1, MPI_INT));
            MT_OK(MPI_File_write_ordered_end(fh, buf, &st));
        } else {
            MT_OK(MPI_File_write_ordered(fh, buf, rank + 1, MPI_INT, &st));
        }
        MT_OK(MPI_Get_count(&st, MPI_INT, &got));
        MT_CHECK(got == rank + 1, "write_ordered count %d", got);
    }
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == 3 * total, "pointer at %lld after 3 ordered writes", pos);
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        int *f = (int *)io_slurp(path, &n), at = 0;
        MT_CHECK(n == 3 * (size_t)total * 4, "file of %zu bytes", n);
        for (int round = 0; round < 3; round++)
            for (int r = 0; r < nprocs; r++)
                for (int i = 0; i <= r; i++, at++)
                    MT_CHECK(f[at] == 100 * round + r, "int %d is %d, want %d",
                             at, f[at], 100 * round + r);
        free(f);
    }
    /* Back to the start for everyone; read in rank order. */
    MT_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int round = 0; round < 3; round++) {
        memset(buf, 0, sizeof(buf));
        if (round == 2) {
            MT_OK(MPI_File_read_ordered_begin(fh, buf, rank + 1, MPI_INT));
            MT_OK(MPI_File_read_ordered_end(fh, buf, &st));
        } else {
            MT_OK(MPI_File_read_ordered(fh, buf, rank + 1, MPI_INT, &st));
        }
        for (int i = 0; i <= rank; i++)
            MT_CHECK(buf[i] == 100 * round + rank,
                     "read_ordered round %d int %d: %d", round, i, buf[i]);
    }
    /* SEEK_END and SEEK_CUR move the shared pointer for everyone. */
    MT_OK(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == 3 * total - 1, "SEEK_END -1: %lld", pos);
    MT_OK(MPI_File_seek_shared(fh, -2, MPI_SEEK_CUR));
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == 3 * total - 3, "SEEK_CUR -2: %lld", pos);
    MT_ERR(MPI_ERR_ARG, MPI_File_seek_shared(fh, -1, MPI_SEEK_SET));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MT_CHECK(nprocs <= 63, "at most 63 ranks");
    io_dir_make("shared");
    io_path(path, sizeof(path), "s.dat");
    contention(path);
    ordered(path);
    io_dir_remove();
    if (rank == 0)
        printf("io_shared at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
