/*
 * Atomic mode with overlapping writers: every rank writes the same
 * strided region (64 blocks of 512 bytes with holes between, so each
 * write takes many system calls) filled with its own byte, round after
 * round, while rank 0 also reads it.  In atomic mode every round's region
 * must hold one writer's bytes only, and every read must see one writer's
 * bytes only (or the region's earlier, equally uniform, content).  The
 * same run without atomic mode counts torn rounds and only reports them:
 * tearing there is allowed, not certain.
 */
#include "io_test.h"

#define BLOCKS 64
#define BLEN 512
#define ROUNDS 60

static int rank, nprocs;

/* Is every byte of the region one value?  Returns the count of rounds
 * (reads) that were not. */
static int uniform(const unsigned char *b, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (b[i] != b[0])
            return 0;
    return 1;
}

static int run(const char *path, int atomic)
{
    MPI_File fh;
    MPI_Datatype ft, ft0;
    MPI_Status st;
    static unsigned char out[BLOCKS * BLEN], in[BLOCKS * BLEN];
    int torn = 0, torn_reads = 0;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_atomicity(fh, atomic));
    MT_OK(MPI_Type_vector(BLOCKS, BLEN, 2 * BLEN, MPI_BYTE, &ft0));
    MT_OK(MPI_Type_create_resized(ft0, 0, 2 * BLOCKS * BLEN, &ft));
    MT_OK(MPI_Type_free(&ft0));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    memset(out, 'A' + rank, sizeof(out));
    for (int round = 0; round < ROUNDS; round++) {
        MT_OK(MPI_File_write_at(fh, 0, out, sizeof(out), MPI_BYTE, &st));
        if (rank == 0 && nprocs > 1) {
            MT_OK(MPI_File_read_at(fh, 0, in, sizeof(in), MPI_BYTE, &st));
            torn_reads += !uniform(in, sizeof(in));
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            MT_OK(MPI_File_read_at(fh, 0, in, sizeof(in), MPI_BYTE, &st));
            torn += !uniform(in, sizeof(in));
            MT_CHECK(in[0] >= 'A' && in[0] < 'A' + nprocs,
                     "round %d: byte 0 is %d", round, in[0]);
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    if (rank == 0) {
        /* The holes stay zero. */
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (2 * BLOCKS - 1) * BLEN, "file of %zu bytes", n);
        for (size_t i = 0; i < n; i++)
            if ((i / BLEN) % 2)
                MT_CHECK(f[i] == 0, "hole byte %zu written", i);
        free(f);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
        if (atomic) {
            MT_CHECK(torn == 0, "atomic mode: %d of %d rounds torn", torn,
                     ROUNDS);
            MT_CHECK(torn_reads == 0, "atomic mode: %d of %d reads torn",
                     torn_reads, ROUNDS);
        } else {
            printf("io_atomic: without atomic mode %d of %d rounds and %d "
                   "reads were torn (allowed)\n",
                   torn, ROUNDS, torn_reads);
        }
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    return torn;
}

int main(int argc, char **argv)
{
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("atomic");
    io_path(path, sizeof(path), "x.dat");
    run(path, 0);
    run(path, 1);
    io_dir_remove();
    if (rank == 0)
        printf("io_atomic at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
