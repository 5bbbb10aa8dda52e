/*
 * MPI-IO data access, byte for byte: every read and write family
 * (explicit offsets, individual pointer, collective, nonblocking, split
 * collective) through six views (contiguous, tiled blocks, vector,
 * subarray, indexed, struct) with contiguous and noncontiguous memory.
 *
 * Writes: each rank writes its N ints in two halves through its view; the
 * file is then read with plain POSIX and every byte compared with the
 * image the test computes itself from the pattern's geometry (data where
 * the view puts it, zeros in the holes).  Reads: the image is written with
 * POSIX and every rank reads its ints back through each family; the gaps
 * of a noncontiguous memory buffer must stay untouched.
 */
#include "io_test.h"

#define N 240 /* ints per rank */

enum { P_CONTIG, P_TILED, P_VECTOR, P_SUBARRAY, P_INDEXED, P_STRUCT, NPAT };
static const char *const pat_name[] = {"contig",   "tiled",   "vector",
                                       "subarray", "indexed", "struct"};

enum {
    F_AT,
    F_INDIV,
    F_ALL,
    F_AT_ALL,
    F_IAT,
    F_I,
    F_IALL,
    F_IAT_ALL,
    F_AT_ALL_SPLIT,
    F_ALL_SPLIT,
    NFAM
};
static const char *const fam_name[] = {
    "at", "indiv", "all",     "at_all",       "iat",
    "i",  "iall",  "iat_all", "at_all_split", "all_split"};

static int rank, nprocs;

/* Hints every open gets (argument "cb": collective buffering). */
static MPI_Info open_info = MPI_INFO_NULL;

/* Byte offset in the file of int i of rank r's stream, for pattern p. */
static long long offs[NPAT][64][N];

/* Every byte of a value varies with rank and index, so a byte left out
 * or put in the wrong place shows. */
static int value(int r, int i)
{
    unsigned v = (unsigned)(r + 1) * 2654435761u ^ (unsigned)(i + 1) * 40503u;
    return (int)(v == (unsigned)-7 ? v + 1 : v);
}

/* The expected file offsets, from each pattern's geometry alone. */
static void make_offsets(void)
{
    int P = nprocs;

    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++) {
            offs[P_CONTIG][r][i] = (long long)r * N * 4 + 4LL * i;
            offs[P_TILED][r][i] =
                (long long)(i / 3) * (3 * P * 4) + r * 12 + (i % 3) * 4;
            offs[P_VECTOR][r][i] =
                (long long)(i / 2) * (2 * P * 4) + r * 8 + (i % 2) * 4;
            offs[P_SUBARRAY][r][i] =
                ((long long)(i / 4) * (4 * P) + 4 * r + i % 4) * 4;
            offs[P_STRUCT][r][i] =
                (long long)(i / 2) * (P * 16) + r * 16 + (i % 2 ? 8 : 0);
        }
    }
    /* Indexed: chunks of 1, 2, 3, 1, 2, 3... ints, chunk k to rank k % P. */
    {
        int have[64] = {0}, done = 0;
        long long g = 0;
        for (int k = 0; done < P; k++) {
            int len = k % 3 + 1, r = k % P;
            for (int j = 0; j < len; j++, g++)
                if (have[r] < N) {
                    offs[P_INDEXED][r][have[r]++] = g * 4;
                    if (have[r] == N)
                        done++;
                }
        }
    }
}

/* The view of pattern p for this rank. */
static void set_view(MPI_File fh, int p)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, t0;
    MPI_Offset disp = 0;
    MPI_Datatype etype = MPI_INT;
    int P = nprocs;

    switch (p) {
    case P_CONTIG:
        disp = (MPI_Offset)rank * N * 4;
        t = MPI_INT;
        break;
    case P_TILED:
        MT_OK(MPI_Type_contiguous(3, MPI_INT, &t0));
        MT_OK(MPI_Type_create_resized(t0, 0, 3 * P * 4, &t));
        MT_OK(MPI_Type_free(&t0));
        disp = rank * 12;
        break;
    case P_VECTOR:
        MT_OK(MPI_Type_vector(N / 2, 2, 2 * P, MPI_INT, &t));
        disp = rank * 8;
        break;
    case P_SUBARRAY: {
        int sizes[2] = {N / 4, 4 * P}, sub[2] = {N / 4, 4},
            starts[2] = {0, 4 * rank};
        MT_OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C,
                                       MPI_INT, &t));
        break;
    }
    case P_INDEXED: {
        int lens[N], displs[N], n = 0;
        for (int i = 0; i < N; i++) {
            int d = (int)(offs[P_INDEXED][rank][i] / 4);
            if (n > 0 && displs[n - 1] + lens[n - 1] == d)
                lens[n - 1]++;
            else
                displs[n] = d, lens[n++] = 1;
        }
        MT_OK(MPI_Type_indexed(n, lens, displs, MPI_INT, &t));
        break;
    }
    default: { /* P_STRUCT */
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {rank * 16, rank * 16 + 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_SHORT};
        MT_OK(MPI_Type_create_struct(2, bl, d, ty, &t0));
        MT_OK(MPI_Type_create_resized(t0, 0, P * 16, &t));
        MT_OK(MPI_Type_free(&t0));
        etype = MPI_BYTE;
        break;
    }
    }
    if (t != MPI_INT)
        MT_OK(MPI_Type_commit(&t));
    MT_OK(MPI_File_set_view(fh, disp, etype, t, "native", MPI_INFO_NULL));
    if (t != MPI_INT)
        MT_OK(MPI_Type_free(&t));
}

/* The expected file image and its size. */
static unsigned char *image(int p, size_t *n)
{
    long long end = 0;
    unsigned char *b;

    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < N; i++)
            if (offs[p][r][i] + 4 > end)
                end = offs[p][r][i] + 4;
    b = calloc(1, (size_t)end);
    MT_CHECK(b != NULL, "calloc");
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < N; i++) {
            int v = value(r, i);
            memcpy(b + offs[p][r][i], &v, 4);
        }
    *n = (size_t)end;
    return b;
}

/* One half (h = 0, 1) of this rank's ints through family f. */
static void access_half(MPI_File fh, int wr, int f, int h, int noncontig,
                        int *buf, int esize)
{
    MPI_Datatype mt = MPI_INT, vt;
    int count = N / 2;
    void *b = buf + (noncontig ? N : N / 2) * h;
    MPI_Offset off = (MPI_Offset)(N / 2) * 4 / esize * h;
    MPI_Status st;
    MPI_Request req;
    int got = -1, want = N / 2;

    if (noncontig) {
        MT_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vt));
        MT_OK(MPI_Type_commit(&vt));
        mt = vt;
        count = 1;
        want = 1;
    }
    memset(&st, 0, sizeof(st));
#define RW(rd, wrt) (wr ? (wrt) : (rd))
    switch (f) {
    case F_AT:
        MT_OK(RW(MPI_File_read_at(fh, off, b, count, mt, &st),
                 MPI_File_write_at(fh, off, b, count, mt, &st)));
        break;
    case F_INDIV: {
        MPI_Offset pos;
        MT_OK(MPI_File_get_position(fh, &pos));
        MT_CHECK(pos == off, "%s: position %lld before half %d, want %lld",
                 fam_name[f], pos, h, off);
        MT_OK(RW(MPI_File_read(fh, b, count, mt, &st),
                 MPI_File_write(fh, b, count, mt, &st)));
        break;
    }
    case F_ALL:
        MT_OK(RW(MPI_File_read_all(fh, b, count, mt, &st),
                 MPI_File_write_all(fh, b, count, mt, &st)));
        break;
    case F_AT_ALL:
        MT_OK(RW(MPI_File_read_at_all(fh, off, b, count, mt, &st),
                 MPI_File_write_at_all(fh, off, b, count, mt, &st)));
        break;
    case F_IAT:
        MT_OK(RW(MPI_File_iread_at(fh, off, b, count, mt, &req),
                 MPI_File_iwrite_at(fh, off, b, count, mt, &req)));
        MT_OK(MPI_Wait(&req, &st));
        break;
    case F_I:
        MT_OK(RW(MPI_File_iread(fh, b, count, mt, &req),
                 MPI_File_iwrite(fh, b, count, mt, &req)));
        {
            int flag = 0;
            while (!flag)
                MT_OK(MPI_Test(&req, &flag, &st));
        }
        break;
    case F_IALL:
        MT_OK(RW(MPI_File_iread_all(fh, b, count, mt, &req),
                 MPI_File_iwrite_all(fh, b, count, mt, &req)));
        MT_OK(MPI_Wait(&req, &st));
        break;
    case F_IAT_ALL:
        MT_OK(RW(MPI_File_iread_at_all(fh, off, b, count, mt, &req),
                 MPI_File_iwrite_at_all(fh, off, b, count, mt, &req)));
        MT_OK(MPI_Waitall(1, &req, &st));
        break;
    case F_AT_ALL_SPLIT:
        MT_OK(RW(MPI_File_read_at_all_begin(fh, off, b, count, mt),
                 MPI_File_write_at_all_begin(fh, off, b, count, mt)));
        MT_OK(RW(MPI_File_read_at_all_end(fh, b, &st),
                 MPI_File_write_at_all_end(fh, b, &st)));
        break;
    default: /* F_ALL_SPLIT */
        MT_OK(RW(MPI_File_read_all_begin(fh, b, count, mt),
                 MPI_File_write_all_begin(fh, b, count, mt)));
        MT_OK(RW(MPI_File_read_all_end(fh, b, &st),
                 MPI_File_write_all_end(fh, b, &st)));
        break;
    }
#undef RW
    MT_OK(MPI_Get_count(&st, mt, &got));
    MT_CHECK(got == want, "%s half %d: count %d, want %d", fam_name[f], h, got,
             want);
    if (noncontig)
        MT_OK(MPI_Type_free(&vt));
}

static void fill(int *buf, int noncontig, int sentinel)
{
    for (int i = 0; i < 2 * N; i++)
        buf[i] = sentinel;
    if (sentinel != 0)
        return;
    for (int i = 0; i < N; i++)
        buf[noncontig ? 2 * i : i] = value(rank, i);
}

static void one_write(int p, int f, int noncontig)
{
    char path[512];
    MPI_File fh;
    int buf[2 * N];
    int esize = p == P_STRUCT ? 1 : 4;

    io_path(path, sizeof(path), "w.dat");
    fill(buf, noncontig, 0);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        open_info, &fh));
    set_view(fh, p);
    access_half(fh, 1, f, 0, noncontig, buf, esize);
    access_half(fh, 1, f, 1, noncontig, buf, esize);
    MT_OK(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n, m;
        unsigned char *want = image(p, &n), *got = io_slurp(path, &m);
        MT_CHECK(m == n, "%s/%s/%s: file of %zu bytes, want %zu", pat_name[p],
                 fam_name[f], noncontig ? "noncontig" : "contig", m, n);
        for (size_t i = 0; i < n; i++)
            MT_CHECK(got[i] == want[i], "%s/%s/%s: byte %zu is %u, want %u",
                     pat_name[p], fam_name[f],
                     noncontig ? "noncontig" : "contig", i, got[i], want[i]);
        free(want);
        free(got);
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void one_read(int p, int f, int noncontig)
{
    char path[512];
    MPI_File fh;
    int buf[2 * N];
    int esize = p == P_STRUCT ? 1 : 4;

    io_path(path, sizeof(path), "r.dat");
    if (rank == 0) {
        size_t n;
        unsigned char *want = image(p, &n);
        io_spill(path, want, n);
        free(want);
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    fill(buf, noncontig, -7);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, open_info, &fh));
    set_view(fh, p);
    access_half(fh, 0, f, 0, noncontig, buf, esize);
    access_half(fh, 0, f, 1, noncontig, buf, esize);
    MT_OK(MPI_File_close(&fh));
    for (int i = 0; i < N; i++) {
        int at = noncontig ? 2 * i : i;
        MT_CHECK(buf[at] == value(rank, i), "%s/%s/%s: int %d is %d, want %d",
                 pat_name[p], fam_name[f], noncontig ? "noncontig" : "contig",
                 i, buf[at], value(rank, i));
        if (noncontig)
            MT_CHECK(buf[at + 1] == -7, "%s/%s: gap %d written", pat_name[p],
                     fam_name[f], at + 1);
    }
    if (!noncontig)
        for (int i = N; i < 2 * N; i++)
            MT_CHECK(buf[i] == -7, "read past the buffer at %d", i);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* A read that reaches the end of the file returns what there was. */
static void short_read(void)
{
    char path[512];
    MPI_File fh;
    int buf[16], got = -1;
    MPI_Status st;

    io_path(path, sizeof(path), "short.dat");
    if (rank == 0) {
        int v[6] = {1, 2, 3, 4, 5, 6};
        io_spill(path, v, sizeof(v));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_read_at(fh, 16, buf, 16, MPI_INT, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &got));
    MT_CHECK(got == 2 && buf[0] == 5 && buf[1] == 6,
             "read at the end: count %d (%d %d)", got, buf[0], buf[1]);
    MT_OK(MPI_File_read_at(fh, 100, buf, 16, MPI_INT, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &got));
    MT_CHECK(got == 0, "read past the end: count %d", got);
    /* The individual pointer moves by what was read. */
    MT_OK(MPI_File_seek(fh, 3, MPI_SEEK_SET));
    MT_OK(MPI_File_read(fh, buf, 16, MPI_INT, &st));
    {
        MPI_Offset pos;
        MT_OK(MPI_File_get_position(fh, &pos));
        MT_CHECK(pos == 24, "position after a short read: %lld", pos);
    }
    /* Through a view with holes (every other int; sieved by default): the
     * ints at bytes 0, 8, 16 are there, the read stops after them. */
    {
        MPI_Datatype t0, t;
        MT_OK(MPI_Type_contiguous(1, MPI_INT, &t0));
        MT_OK(MPI_Type_create_resized(t0, 0, 8, &t));
        MT_OK(MPI_Type_commit(&t));
        MT_OK(MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL));
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_read_at(fh, 0, buf, 5, MPI_INT, &st));
        MT_OK(MPI_Get_count(&st, MPI_INT, &got));
        MT_CHECK(got == 3 && buf[0] == 1 && buf[1] == 3 && buf[2] == 5 &&
                     buf[3] == 0,
                 "strided read at the end: count %d (%d %d %d %d)", got, buf[0],
                 buf[1], buf[2], buf[3]);
        MT_OK(MPI_Type_free(&t0));
        MT_OK(MPI_Type_free(&t));
    }
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* Memory blocks large enough to go to the kernel as one iovec each (small
 * ones are staged): 8 blocks of 2 KiB, every other 2 KiB of a buffer,
 * into one contiguous file region per rank, and back. */
static void big_blocks(void)
{
    enum { B = 2048, NB = 8 };
    static unsigned char mem[2 * NB * B], back[2 * NB * B];
    char path[512];
    MPI_Datatype vt;
    MPI_File fh;
    MPI_Status st;
    int got;

    io_path(path, sizeof(path), "big.dat");
    for (int i = 0; i < 2 * NB * B; i++)
        mem[i] = (unsigned char)(i * 7 + rank * 31 + 1);
    memset(back, 0xee, sizeof(back));
    MT_OK(MPI_Type_vector(NB, B, 2 * B, MPI_BYTE, &vt));
    MT_OK(MPI_Type_commit(&vt));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        open_info, &fh));
    MT_OK(MPI_File_write_at(fh, (MPI_Offset)rank * NB * B, mem, 1, vt, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)nprocs * NB * B, "file of %zu bytes", n);
        for (int r = 0; r < nprocs; r++)
            for (int k = 0; k < NB * B; k++) {
                int i = (k / B) * 2 * B + k % B;
                MT_CHECK(f[(size_t)r * NB * B + k] ==
                             (unsigned char)(i * 7 + r * 31 + 1),
                         "big blocks: byte %d of rank %d", k, r);
            }
        free(f);
    }
    MT_OK(MPI_File_read_at(fh, (MPI_Offset)rank * NB * B, back, 1, vt, &st));
    MT_OK(MPI_Get_count(&st, vt, &got));
    MT_CHECK(got == 1, "big blocks: count %d", got);
    for (int i = 0; i < 2 * NB * B; i++)
        MT_CHECK(back[i] == ((i / B) % 2 ? 0xee : mem[i]),
                 "big blocks: read byte %d is %u", i, back[i]);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&vt));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MT_CHECK(nprocs <= 64, "at most 64 ranks");
    if (argc > 1 && strcmp(argv[1], "cb") == 0) {
        /* Two-phase collective buffering for the collective families:
         * rank 0's hints enable it, the others' say "disable" (rank 0's
         * win, so the ranks agree); cb_nodes and striping_unit from the
         * arguments. */
        MT_OK(MPI_Info_create(&open_info));
        MT_OK(MPI_Info_set(open_info, "romio_cb_write",
                           rank == 0 ? "enable" : "disable"));
        MT_OK(MPI_Info_set(open_info, "romio_cb_read",
                           rank == 0 ? "enable" : "disable"));
        /* Reads without data sieving here (the default run sieves the
         * views with small blocks). */
        MT_OK(MPI_Info_set(open_info, "romio_ds_read", "disable"));
        if (argc > 2)
            MT_OK(MPI_Info_set(open_info, "cb_nodes", argv[2]));
        if (argc > 3)
            MT_OK(MPI_Info_set(open_info, "striping_unit", argv[3]));
        if (argc > 4)
            MT_OK(MPI_Info_set(open_info, "cb_buffer_size", argv[4]));
    }
    io_dir_make("rw");
    make_offsets();
    for (int p = 0; p < NPAT; p++)
        for (int f = 0; f < NFAM; f++)
            for (int nc = 0; nc < 2; nc++) {
                one_write(p, f, nc);
                one_read(p, f, nc);
            }
    short_read();
    big_blocks();
    io_dir_remove();
    if (open_info != MPI_INFO_NULL)
        MT_OK(MPI_Info_free(&open_info));
    if (rank == 0)
        printf("io_rw%s: %d views x %d families x 2 memory layouts, write "
               "and read, at %d ranks: ok\n",
               open_info != MPI_INFO_NULL ? " (collective buffering)" : "",
               NPAT, NFAM, nprocs);
    MPI_Finalize();
    return 0;
}
