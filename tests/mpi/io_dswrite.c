/*
 * Data sieving of writes (romio_ds_write) with every rank writing at the
 * same time, each byte of the file checked against a reference.
 *
 * The file is first filled by rank 0 with plain POSIX writes of a known
 * pattern; bytes no rank writes must keep it.  Then, in several rounds
 * with new values, all ranks write independently at once:
 *   - "fine": rank r's blocks of 5 bytes in rows of P blocks and a 2-byte
 *     gap nobody writes (a vector filetype), from contiguous memory and,
 *     on odd rounds, from a memory vector with holes;
 *   - "mixed": per tile, rank 0 owns one 80 KiB block (over the automatic
 *     threshold, so under "automatic" it does not sieve but writes in
 *     place, holding a shared lock) and ranks 1.. own 3-byte blocks after
 *     it, then a 1-byte gap: the other ranks' sieving windows cover rank
 *     0's blocks while rank 0 writes them.
 * Each pattern with romio_ds_write = automatic, enable and disable.  A
 * sieving window that wrote back stale bytes would show as a byte of an
 * older round or of the initial pattern.  Also: a write-only file with
 * romio_ds_write=enable (nothing can be sieved there) writes correctly.
 */
#include "io_test.h"

static int rank, nprocs;

#define ROUNDS 4

static unsigned char initial(long long i)
{
    return (unsigned char)(0xA5 ^ (i * 7));
}

static unsigned char val(int r, int round, long long k)
{
    return (unsigned char)(1 + r * 31 + round * 17 + k * 13);
}

/* The pattern: file offset of byte k of rank r's stream, its length. */
typedef struct pat {
    const char *name;
    long long blk0, blk, gap, tiles; /* rank 0's block, others', gap */
} pat_t;

static long long pat_tile(const pat_t *p)
{
    return p->blk0 + (long long)(nprocs - 1) * p->blk + p->gap;
}

static long long pat_bytes(const pat_t *p, int r)
{
    return p->tiles * (r == 0 ? p->blk0 : p->blk);
}

static long long pat_off(const pat_t *p, int r, long long k)
{
    long long b = r == 0 ? p->blk0 : p->blk;
    long long t = k / b;
    long long at = r == 0 ? 0 : p->blk0 + (long long)(r - 1) * p->blk;
    return t * pat_tile(p) + at + k % b;
}

static void fill_initial(const char *path, long long size)
{
    if (rank == 0) {
        unsigned char *b = malloc((size_t)size);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        MT_CHECK(b != NULL && fd >= 0, "open %s", path);
        for (long long i = 0; i < size; i++)
            b[i] = initial(i);
        MT_CHECK(pwrite(fd, b, (size_t)size, 0) == size, "pwrite");
        close(fd);
        free(b);
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void run(const char *path, const pat_t *p, const char *mode, int amode)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Datatype ft, mt = MPI_DATATYPE_NULL;
    MPI_Status st;
    long long size = p->tiles * pat_tile(p);
    long long mine = pat_bytes(p, rank);
    long long myblk = rank == 0 ? p->blk0 : p->blk;
    long long disp = rank == 0 ? 0 : p->blk0 + (long long)(rank - 1) * p->blk;
    unsigned char *buf = malloc((size_t)mine * 2 + 2);
    int n;

    MT_CHECK(buf != NULL, "malloc");
    fill_initial(path, size);
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_ds_write", mode));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    MT_OK(MPI_Type_vector((int)p->tiles, (int)myblk, (int)pat_tile(p),
                          MPI_BYTE, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", info));
    /* Memory with a hole after every byte pair (odd rounds). */
    MT_OK(MPI_Type_vector((int)(mine / 2), 2, 4, MPI_BYTE, &mt));
    MT_OK(MPI_Type_commit(&mt));
    for (int round = 0; round < ROUNDS; round++) {
        int holes = (round & 1) && mine % 2 == 0;
        for (long long k = 0; k < mine; k++) {
            unsigned char v = val(rank, round, k);
            if (holes) {
                buf[(k / 2) * 4 + k % 2] = v;
                buf[(k / 2) * 4 + 2 + k % 2] = 0xEE;
            } else {
                buf[k] = v;
            }
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (holes)
            MT_OK(MPI_File_write_at(fh, 0, buf, 1, mt, &st));
        else
            MT_OK(MPI_File_write_at(fh, 0, buf, (int)mine, MPI_BYTE, &st));
        MT_OK(MPI_Get_count(&st, MPI_BYTE, &n));
        MT_CHECK(n == mine, "%s/%s round %d: wrote %d of %lld", p->name, mode,
                 round, n, mine);
        MT_OK(MPI_File_sync(fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            size_t fsz;
            unsigned char *f = io_slurp(path, &fsz);
            unsigned char *ref = malloc((size_t)size);
            MT_CHECK(ref != NULL, "malloc");
            MT_CHECK((long long)fsz == size, "%s/%s: file of %zu bytes",
                     p->name, mode, fsz);
            for (long long i = 0; i < size; i++)
                ref[i] = initial(i);
            for (int r = 0; r < nprocs; r++)
                for (long long k = 0; k < pat_bytes(p, r); k++)
                    ref[pat_off(p, r, k)] = val(r, round, k);
            for (long long i = 0; i < size; i++)
                MT_CHECK(f[i] == ref[i],
                         "%s/%s round %d: byte %lld is %02x, want %02x", p->name,
                         mode, round, i, f[i], ref[i]);
            free(ref);
            free(f);
        }
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_free(&mt));
    MT_OK(MPI_Info_free(&info));
    free(buf);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    char path[512];
    const char *modes[3] = {"automatic", "enable", "disable"};
    pat_t fine, mixed;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("dswrite");
    io_path(path, sizeof(path), "s.dat");
    /* fine: every rank 5-byte blocks (rank 0's too), a 2-byte gap */
    fine = (pat_t){"fine", 5, 5, 2, 20000};
    /* mixed: rank 0 80 KiB blocks, the others 3 bytes, a 1-byte gap */
    mixed = (pat_t){"mixed", 80 << 10, 3, 1, 40};
    for (int m = 0; m < 3; m++) {
        run(path, &fine, modes[m], MPI_MODE_RDWR);
        run(path, &mixed, modes[m], MPI_MODE_RDWR);
    }
    run(path, &fine, "enable", MPI_MODE_WRONLY);
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    io_dir_remove();
    if (rank == 0)
        printf("io_dswrite at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
