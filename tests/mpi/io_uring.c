/*
 * File-noncontiguous list IO with shoal_io_uring enable, disable and
 * automatic (src/io/io_uring.c; without liburing every setting takes the
 * preadv/pwritev path and the test checks that path): every rank writes
 * its interleaved blocks of 1500 bytes (not sieved: romio_ds_* disable),
 * 2500 of them per call (three io_uring batches), from contiguous memory
 * and from a strided memory type, blocking and nonblocking (the IO
 * thread's own ring); every byte of the file checked against an image;
 * read back, also after the file was cut short in the middle of a batch,
 * where the count must be what lies before the cut.
 */
#include "io_test.h"

#define BL 1500
#define NB 2500

static int rank, nprocs;

static unsigned char val(int k, long i)
{
    return (unsigned char)(k * 37 + i * 11 + (i / BL) * 3 + 1);
}

static void one(const char *path, const char *mode, int strided, int nb)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Datatype ft, ft0, mt;
    MPI_Status st;
    MPI_Request r;
    long n = (long)NB * BL;
    unsigned char *mem = malloc(2 * (size_t)n), *in = malloc((size_t)n);
    int count;

    MT_CHECK(mem != NULL && in != NULL, "malloc");
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "shoal_io_uring", mode));
    MT_OK(MPI_Info_set(info, "romio_ds_read", "disable"));
    MT_OK(MPI_Info_set(info, "romio_ds_write", "disable"));
    MT_OK(MPI_Type_contiguous(BL, MPI_BYTE, &ft0));
    MT_OK(MPI_Type_create_resized(ft0, 0, (MPI_Aint)BL * nprocs, &ft));
    MT_OK(MPI_Type_free(&ft0));
    MT_OK(MPI_Type_commit(&ft));
    /* Memory: the bytes in order, or each 500-byte piece followed by a
     * 500-byte hole. */
    MT_OK(MPI_Type_vector(NB * 3, 500, 1000, MPI_BYTE, &mt));
    MT_OK(MPI_Type_commit(&mt));
    for (long i = 0; i < n; i++) {
        if (strided)
            mem[(i / 500) * 1000 + i % 500] = val(rank, i);
        else
            mem[i] = val(rank, i);
    }
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                        MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * BL, MPI_BYTE, ft, "native",
                            info));
    if (nb) {
        MT_OK(strided ? MPI_File_iwrite_at(fh, 0, mem, 1, mt, &r)
                      : MPI_File_iwrite_at(fh, 0, mem, (int)n, MPI_BYTE, &r));
        MT_OK(MPI_Wait(&r, &st));
    } else {
        MT_OK(strided ? MPI_File_write_at(fh, 0, mem, 1, mt, &st)
                      : MPI_File_write_at(fh, 0, mem, (int)n, MPI_BYTE, &st));
    }
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == n, "%s: wrote %d of %ld", mode, count, n);
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t fsz;
        unsigned char *f = io_slurp(path, &fsz);
        MT_CHECK(fsz == (size_t)n * nprocs, "%s: file of %zu bytes", mode,
                 fsz);
        for (size_t o = 0; o < fsz; o++) {
            long blk = (long)(o / BL);
            int k = (int)(blk % nprocs);
            long i = blk / nprocs * BL + (long)(o % BL);
            MT_CHECK(f[o] == val(k, i), "%s%s%s: byte %zu is %d, want %d",
                     mode, strided ? " strided" : "", nb ? " nonblocking" : "",
                     o, f[o], val(k, i));
        }
        free(f);
    }
    /* Read back. */
    memset(in, 0, (size_t)n);
    if (nb) {
        MT_OK(MPI_File_iread_at(fh, 0, in, (int)n, MPI_BYTE, &r));
        MT_OK(MPI_Wait(&r, &st));
    } else {
        MT_OK(MPI_File_read_at(fh, 0, in, (int)n, MPI_BYTE, &st));
    }
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_CHECK(count == n, "%s: read %d of %ld", mode, count, n);
    for (long i = 0; i < n; i++)
        MT_CHECK(in[i] == val(rank, i), "%s: read byte %ld", mode, i);
    /* Cut the file inside block 400 of the last rank's (the second batch):
     * rank k sees its blocks before the cut, and of the block the cut falls
     * in what lies before it. */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        MPI_Offset cut = ((MPI_Offset)1400 * nprocs + nprocs - 1) * BL + 700;
        long want;
        MT_OK(MPI_File_set_size(fh, cut));
        want = (long)(cut / (BL * nprocs)) * BL;
        {
            MPI_Offset rest = cut % (BL * nprocs) - (MPI_Offset)rank * BL;
            want += rest <= 0 ? 0 : rest > BL ? BL : (long)rest;
        }
        memset(in, 0, (size_t)n);
        if (nb) {
            MT_OK(MPI_File_iread_at(fh, 0, in, (int)n, MPI_BYTE, &r));
            MT_OK(MPI_Wait(&r, &st));
        } else {
            MT_OK(MPI_File_read_at(fh, 0, in, (int)n, MPI_BYTE, &st));
        }
        MT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
        MT_CHECK(count == want, "%s: after the cut read %d, want %ld", mode,
                 count, want);
        for (long i = 0; i < want; i++)
            MT_CHECK(in[i] == val(rank, i), "%s: cut read byte %ld", mode, i);
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_free(&mt));
    MT_OK(MPI_Info_free(&info));
    free(mem);
    free(in);
}

int main(int argc, char **argv)
{
    static const char *modes[] = {"enable", "disable", "automatic"};
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("uring");
    io_path(path, sizeof(path), "u.dat");
    for (int m = 0; m < 3; m++)
        for (int strided = 0; strided < 2; strided++)
            for (int nb = 0; nb < 2; nb++)
                one(path, modes[m], strided, nb);
    io_dir_remove();
    if (rank == 0)
        printf("io_uring at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
