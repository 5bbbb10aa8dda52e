/*
 * Files in the "external32" data representation: ints and doubles
 * (external32 size = native size: the view's layout is the native one,
 * here a strided vector of doubles) and longs (4 bytes in external32, 8
 * here: a view without holes); the bytes of the file are checked against
 * big-endian encodings the test makes itself, and read back through the
 * view.  A long beyond 32 bits fails with MPI_ERR_CONVERSION; filetypes
 * with holes over longs (subarray, hvector, struct) are laid out with the
 * external32 sizes, and so is a darray; so are filetypes made by the
 * large-count constructors with arguments beyond int (large_counts).
 */
#include "io_test.h"

static int rank, nprocs;

/* Big-endian bytes of the n-byte value v. */
static void be(unsigned char *out, unsigned long long v, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static void check_bytes(const unsigned char *f, size_t fsize, long long at,
                        unsigned long long v, int n, const char *what)
{
    unsigned char want[8] = {0};

    be(want, v, n);
    MT_CHECK(at + n <= (long long)fsize, "%s: file of %zu bytes", what, fsize);
    MT_CHECK(memcmp(f + at, want, (size_t)n) == 0,
             "%s at %lld: %02x%02x%02x%02x..., want %02x%02x%02x%02x...", what,
             at, f[at], f[at + 1], f[at + 2], f[at + 3], want[0], want[1],
             want[2], want[3]);
}

static void ints_and_doubles(const char *path)
{
    MPI_File fh;
    MPI_Datatype vt, ft;
    MPI_Status st;
    int iv[4], ir[4];
    double dv[2], dr[2];
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft2;

    for (int i = 0; i < 4; i++)
        iv[i] = 0x01020304 + rank * 16 + i;
    dv[0] = 1.5 + rank;
    dv[1] = -2.25 * (rank + 1);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    /* Ints: rank r's four at etype 4 r. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_get_view(fh, &disp, &et, &ft2, rep));
    MT_CHECK(strcmp(rep, "external32") == 0, "datarep %s", rep);
    MT_OK(MPI_File_write_at_all(fh, 4 * rank, iv, 4, MPI_INT, &st));
    /* Doubles after all the ints: a vector, rank r's at slots r and r+P. */
    MT_OK(MPI_Type_vector(2, 1, nprocs, MPI_DOUBLE, &vt));
    MT_OK(MPI_Type_create_resized(vt, 0, 2 * nprocs * 8, &ft));
    MT_OK(MPI_Type_free(&vt));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, 16 * nprocs + 8 * rank, MPI_DOUBLE, ft,
                            "external32", MPI_INFO_NULL));
    MT_OK(MPI_File_write_all(fh, dv, 2, MPI_DOUBLE, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        for (int r = 0; r < nprocs; r++) {
            double d0 = 1.5 + r, d1 = -2.25 * (r + 1);
            unsigned long long b0, b1;
            memcpy(&b0, &d0, 8);
            memcpy(&b1, &d1, 8);
            for (int i = 0; i < 4; i++)
                check_bytes(f, n, 16LL * r + 4 * i,
                            (unsigned)(0x01020304 + r * 16 + i), 4, "int");
            check_bytes(f, n, 16LL * nprocs + 8 * r, b0, 8, "double 0");
            check_bytes(f, n, 16LL * nprocs + 8 * (nprocs + r), b1, 8,
                        "double 1");
        }
        free(f);
    }
    /* Read back through the same views. */
    MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MT_OK(MPI_File_read(fh, dr, 2, MPI_DOUBLE, &st));
    MT_CHECK(dr[0] == dv[0] && dr[1] == dv[1], "doubles read %g %g", dr[0],
             dr[1]);
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_read_at(fh, 4 * rank, ir, 4, MPI_INT, &st));
    for (int i = 0; i < 4; i++)
        MT_CHECK(ir[i] == iv[i], "int %d read %x", i, ir[i]);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    if (ft2 != MPI_INT)
        MT_OK(MPI_Type_free(&ft2));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void longs(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Aint ext;
    MPI_Offset pos, disp;
    long lv[3] = {-5 - rank, 7 + rank, (1L << 20) + rank}, lr[3], big;
    int got;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    MT_CHECK(ext == 4, "external32 extent of MPI_LONG: %ld", (long)ext);
    MT_OK(MPI_File_get_byte_offset(fh, 3, &disp));
    MT_CHECK(disp == 12, "byte offset of long 3: %lld", disp);
    MT_OK(MPI_File_seek(fh, 3 * rank, MPI_SEEK_SET));
    MT_OK(MPI_File_write(fh, lv, 3, MPI_LONG, &st));
    MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
    MT_CHECK(got == 3, "write count %d", got);
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == 3 * rank + 3, "position %lld", pos);
    /* Beyond 32 bits: refused. */
    big = sizeof(long) > 4 ? (long)(1LL << 40) : 0;
    if (big != 0)
        MT_ERR(MPI_ERR_CONVERSION,
               MPI_File_write_at(fh, 1000, &big, 1, MPI_LONG, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == (size_t)nprocs * 12, "file of %zu bytes", n);
        for (int r = 0; r < nprocs; r++) {
            long w[3] = {-5 - r, 7 + r, (1L << 20) + r};
            for (int k = 0; k < 3; k++)
                check_bytes(f, n, 12LL * r + 4 * k,
                            (unsigned long long)(unsigned)(int)w[k], 4, "long");
        }
        free(f);
    }
    MT_OK(MPI_File_read_at(fh, 3 * rank, lr, 3, MPI_LONG, &st));
    MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
    MT_CHECK(got == 3, "read count %d", got);
    for (int k = 0; k < 3; k++)
        MT_CHECK(lr[k] == lv[k], "long %d read %ld, want %ld", k, lr[k], lv[k]);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/*
 * Filetypes with holes over longs (8 bytes here, 4 in external32): the
 * layout in the file is computed with the external32 sizes.  Rank r's
 * columns 2r and 2r+1 of a 3 x 2P array (subarray: scaled); then rank r's
 * pairs in an hvector whose byte stride is taken as it is (file bytes),
 * after a struct of a long and a short at byte displacements 0 and 6;
 * then a darray with its columns dealt cyclically.
 * Every byte of the file is checked against big-endian encodings made
 * here, the values read back through the same views (independently and
 * collectively).
 */
static long lval(int r, int i)
{
    long v = (long)(r + 1) * 100000 + i;
    return i % 2 ? -v : v;
}

static void longs_with_holes(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype sub, hv, stp;
    MPI_Aint ext;
    long out[12], in[12];
    int sizes[2] = {3, 2 * nprocs}, subs[2] = {3, 2}, starts[2] = {0, 2 * rank};
    int got;
    long long arr = 3LL * 2 * nprocs * 4; /* bytes of one array in the file */

    for (int i = 0; i < 12; i++)
        out[i] = lval(rank, i);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C,
                                   MPI_LONG, &sub));
    MT_OK(MPI_Type_commit(&sub));
    MT_OK(MPI_File_set_view(fh, 0, MPI_LONG, sub, "external32",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_get_type_extent(fh, sub, &ext));
    MT_CHECK(ext == arr, "external32 extent of the subarray: %ld, want %lld",
             (long)ext, arr);
    /* Two arrays' worth: 12 longs, 6 per array. */
    MT_OK(MPI_File_write_all(fh, out, 12, MPI_LONG, &st));
    MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
    MT_CHECK(got == 12, "write count %d", got);
    /* hvector after the two arrays: blocks of 2 longs (8 file bytes),
     * stride 8 P bytes, rank r's at byte 8 r. */
    MT_OK(MPI_Type_create_hvector(2, 2, (MPI_Aint)8 * nprocs, MPI_LONG, &hv));
    MT_OK(MPI_Type_commit(&hv));
    MT_OK(MPI_File_set_view(fh, 2 * arr + 8 * rank, MPI_LONG, hv,
                            "external32", MPI_INFO_NULL));
    MT_OK(MPI_File_write_at(fh, 0, out, 4, MPI_LONG, &st));
    /* A struct {long at 0, short at 6} (bytes as they are: 2-byte hole
     * between them in the file... none: long ends at 4, hole 4..6). */
    {
        int bl[2] = {1, 1};
        MPI_Aint dp[2] = {0, 6};
        MPI_Datatype ty[2] = {MPI_LONG, MPI_SHORT};
        short sh = (short)(-3 - rank);
        char mem[16];
        MT_OK(MPI_Type_create_struct(2, bl, dp, ty, &stp));
        MT_OK(MPI_Type_commit(&stp));
        MT_OK(MPI_File_set_view(fh, 2 * arr + 32LL * nprocs + 8 * rank,
                                MPI_BYTE, stp, "external32", MPI_INFO_NULL));
        MT_OK(MPI_File_get_type_extent(fh, stp, &ext));
        MT_CHECK(ext == 8, "external32 extent of the struct: %ld", (long)ext);
        memset(mem, 0, sizeof(mem));
        memcpy(mem, &out[0], sizeof(long));
        memcpy(mem + 8, &sh, sizeof(short));
        /* In memory a long and a short: describe them with the memory
         * struct {long at 0, short at 8}. */
        {
            MPI_Aint dm[2] = {0, 8};
            MPI_Datatype mt;
            MT_OK(MPI_Type_create_struct(2, bl, dm, ty, &mt));
            MT_OK(MPI_Type_commit(&mt));
            MT_OK(MPI_File_write_at(fh, 0, mem, 1, mt, &st));
            MT_OK(MPI_Type_free(&mt));
        }
    }
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        long long want = 2 * arr + 32LL * nprocs + 8LL * nprocs;
        MT_CHECK(n == (size_t)want, "file of %zu bytes, want %lld", n, want);
        for (int r = 0; r < nprocs; r++) {
            for (int i = 0; i < 12; i++) {
                /* element i: array i / 6, row (i % 6) / 2, column 2r+i%2 */
                long long at = (i / 6) * arr +
                               (((i % 6) / 2) * 2LL * nprocs + 2 * r + i % 2) *
                                   4;
                check_bytes(f, n, at,
                            (unsigned long long)(unsigned)(int)lval(r, i), 4,
                            "subarray long");
            }
            for (int i = 0; i < 4; i++) {
                long long at = 2 * arr + 8LL * r + (i / 2) * 8LL * nprocs +
                               (i % 2) * 4;
                check_bytes(f, n, at,
                            (unsigned long long)(unsigned)(int)lval(r, i), 4,
                            "hvector long");
            }
            {
                long long at = 2 * arr + 32LL * nprocs + 8LL * r;
                check_bytes(f, n, at,
                            (unsigned long long)(unsigned)(int)lval(r, 0), 4,
                            "struct long");
                check_bytes(f, n, at + 6,
                            (unsigned long long)(unsigned short)(short)(-3 - r),
                            2, "struct short");
            }
        }
        free(f);
    }
    /* Read back through the views. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_LONG, sub, "external32",
                            MPI_INFO_NULL));
    memset(in, 0, sizeof(in));
    MT_OK(MPI_File_read_all(fh, in, 12, MPI_LONG, &st));
    MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
    MT_CHECK(got == 12, "read count %d", got);
    for (int i = 0; i < 12; i++)
        MT_CHECK(in[i] == out[i], "subarray long %d: %ld, want %ld", i, in[i],
                 out[i]);
    memset(in, 0, sizeof(in));
    MT_OK(MPI_File_read_at(fh, 6, in, 6, MPI_LONG, &st));
    for (int i = 0; i < 6; i++)
        MT_CHECK(in[i] == out[6 + i], "second array's long %d: %ld", i, in[i]);
    MT_OK(MPI_File_set_view(fh, 2 * arr + 8 * rank, MPI_LONG, hv,
                            "external32", MPI_INFO_NULL));
    memset(in, 0, sizeof(in));
    MT_OK(MPI_File_read_at(fh, 0, in, 4, MPI_LONG, &st));
    for (int i = 0; i < 4; i++)
        MT_CHECK(in[i] == out[i], "hvector long %d: %ld, want %ld", i, in[i],
                 out[i]);
    /* A darray: rows of 2P longs, columns dealt cyclically, rank r's
     * columns r and r + P of 4 rows (laid out with 4-byte longs), after
     * everything above. */
    {
        int gs[2] = {4, 2 * nprocs},
            di[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC},
            da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
            ps[2] = {1, nprocs};
        MPI_Datatype dat;
        long long base = 2 * arr + 40LL * nprocs;
        MT_OK(MPI_Type_create_darray(nprocs, rank, 2, gs, di, da, ps,
                                     MPI_ORDER_C, MPI_LONG, &dat));
        MT_OK(MPI_Type_commit(&dat));
        MT_OK(MPI_File_set_view(fh, base, MPI_LONG, dat, "external32",
                                MPI_INFO_NULL));
        MT_OK(MPI_File_get_type_extent(fh, dat, &ext));
        MT_CHECK(ext == 32LL * nprocs, "external32 extent of the darray: %ld",
                 (long)ext);
        MT_OK(MPI_File_write_all(fh, out, 8, MPI_LONG, &st));
        MT_OK(MPI_File_sync(fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_File_sync(fh));
        if (rank == 0) {
            size_t n;
            unsigned char *f = io_slurp(path, &n);
            MT_CHECK(n == (size_t)(base + 32LL * nprocs), "file of %zu bytes",
                     n);
            for (int r = 0; r < nprocs; r++)
                for (int i = 0; i < 8; i++) {
                    /* element i: row i / 2, column r + (i % 2) P */
                    long long at = base + ((i / 2) * 2LL * nprocs + r +
                                           (i % 2) * nprocs) *
                                              4;
                    check_bytes(f, n, at,
                                (unsigned long long)(unsigned)(int)lval(r, i),
                                4, "darray long");
                }
            free(f);
        }
        memset(in, 0, sizeof(in));
        MT_OK(MPI_File_read_at_all(fh, 0, in, 8, MPI_LONG, &st));
        for (int i = 0; i < 8; i++)
            MT_CHECK(in[i] == out[i], "darray long %d: %ld, want %ld", i,
                     in[i], out[i]);
        MT_OK(MPI_Type_free(&dat));
    }
    MT_OK(MPI_Type_free(&sub));
    MT_OK(MPI_Type_free(&hv));
    MT_OK(MPI_Type_free(&stp));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/*
 * Filetypes made by the large-count constructors with an argument an int
 * cannot hold (a count, block length, stride, displacement or array size
 * of G = 3e9 > INT_MAX), over longs (8 bytes here, 4 in external32): their
 * layout in the file is computed with the external32 sizes like any
 * other's (element displacements scaled, byte ones as they are).  Each
 * case writes a few longs at the start of every rank's view (the file is
 * sparse: the types reach 12 GB and beyond), then rank 0 reads the file's
 * bytes with pread at the offsets the external32 layout puts them (not the
 * native ones) and checks its size; the file extent and the values read
 * back are checked too.
 */
#define G 3000000000LL

typedef struct lc_case {
    const char *name;
    int k;             /* longs written */
    long long off[4];  /* their file offsets from the view's start */
    long long ext;     /* the filetype's extent in the file */
    int own_disp;      /* the type places each rank (darray): disp 0 */
} lc_case_t;

static void lc_make(int which, MPI_Datatype *t, lc_case_t *c)
{
    MPI_Count bl2[2] = {1, 2}, d2[2] = {5, G}, hbl[2] = {2, G},
              hd[2] = {0, 64}, ib[2] = {0, G};
    MPI_Count hb[2] = {0, (MPI_Count)1 << 36}, sbl[2] = {1, G},
              sd[2] = {0, 16};
    MPI_Datatype st[2] = {MPI_LONG, MPI_LONG};

    memset(c, 0, sizeof(*c));
    switch (which) {
    case 0:
        *c = (lc_case_t){"contiguous_c", 4, {0, 4, 8, 12}, 4 * G, 0};
        MT_OK(MPI_Type_contiguous_c(G, MPI_LONG, t));
        break;
    case 1: /* a stride beyond int */
        *c = (lc_case_t){"vector_c", 4, {0, 4, 4 * G, 4 * G + 4}, 4 * G + 8,
                         0};
        MT_OK(MPI_Type_vector_c(2, 2, G, MPI_LONG, t));
        break;
    case 2: /* a block length beyond int, a byte stride */
        *c = (lc_case_t){"hvector_c", 3, {0, 4, 8}, (1LL << 36) + 4 * G, 0};
        MT_OK(MPI_Type_create_hvector_c(2, G, (MPI_Count)1 << 36, MPI_LONG,
                                        t));
        break;
    case 3: /* a displacement beyond int */
        *c = (lc_case_t){"indexed_c", 3, {20, 4 * G, 4 * G + 4}, 4 * G - 12,
                         0};
        MT_OK(MPI_Type_indexed_c(2, bl2, d2, MPI_LONG, t));
        break;
    case 4:
        *c = (lc_case_t){"hindexed_c", 4, {0, 4, 64, 68}, 64 + 4 * G, 0};
        MT_OK(MPI_Type_create_hindexed_c(2, hbl, hd, MPI_LONG, t));
        break;
    case 5:
        *c = (lc_case_t){"indexed_block_c", 2, {0, 4 * G}, 4 * G + 4, 0};
        MT_OK(MPI_Type_create_indexed_block_c(2, 1, ib, MPI_LONG, t));
        break;
    case 6:
        *c = (lc_case_t){"hindexed_block_c", 3, {0, 4, 8},
                         (1LL << 36) + 4 * G, 0};
        MT_OK(MPI_Type_create_hindexed_block_c(2, G, hb, MPI_LONG, t));
        break;
    case 7: /* byte displacements as they are: the long block at 16 */
        *c = (lc_case_t){"struct_c", 3, {0, 16, 20}, 16 + 4 * G, 0};
        MT_OK(MPI_Type_create_struct_c(2, sbl, sd, st, t));
        break;
    case 8: { /* a 3 x G array in Fortran order: rows 1, 2 of column G-1 */
        MPI_Count sz[2] = {3, G}, sub[2] = {2, 1}, at[2] = {1, G - 1};
        *c = (lc_case_t){"subarray_c",
                         2,
                         {(1 + 3 * (G - 1)) * 4, (2 + 3 * (G - 1)) * 4},
                         12 * G,
                         0};
        MT_OK(MPI_Type_create_subarray_c(2, sz, sub, at, MPI_ORDER_FORTRAN,
                                         MPI_LONG, t));
        break;
    }
    default: { /* G longs dealt in blocks: rank r's block at r * b */
        MPI_Count gs[1] = {G};
        int di[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {MPI_DISTRIBUTE_DFLT_DARG},
            ps[1] = {nprocs};
        long long b = (G + nprocs - 1) / nprocs;
        *c = (lc_case_t){"darray_c", 2, {4 * rank * b, 4 * rank * b + 4},
                         4 * G, 1};
        MT_OK(MPI_Type_create_darray_c(nprocs, rank, 1, gs, di, da, ps,
                                       MPI_ORDER_C, MPI_LONG, t));
        break;
    }
    }
    MT_OK(MPI_Type_commit(t));
}

static long lc_val(int which, int r, int i)
{
    return (long)((which + 1) * 1000000 + r * 1000 + i) * (i % 2 ? -1 : 1);
}

static void large_counts(const char *path)
{
    for (int which = 0; which < 10; which++) {
        MPI_File fh;
        MPI_Status st;
        MPI_Datatype t;
        MPI_Aint ext;
        lc_case_t c;
        long out[4], in[4];
        int got;
        long long disp;

        lc_make(which, &t, &c);
        disp = c.own_disp ? 0 : 256LL * rank;
        for (int i = 0; i < c.k; i++)
            out[i] = lc_val(which, rank, i);
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &fh));
        MT_OK(MPI_File_set_view(fh, disp, MPI_LONG, t, "external32",
                                MPI_INFO_NULL));
        MT_OK(MPI_File_get_type_extent(fh, t, &ext));
        MT_CHECK(ext == c.ext, "%s: external32 extent %ld, want %lld", c.name,
                 (long)ext, c.ext);
        MT_OK(MPI_File_write_all(fh, out, c.k, MPI_LONG, &st));
        MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
        MT_CHECK(got == c.k, "%s: write count %d", c.name, got);
        MT_OK(MPI_File_sync(fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_File_sync(fh));
        if (rank == 0) {
            int fd = open(path, O_RDONLY);
            struct stat sb;
            long long want = 0;
            MT_CHECK(fd >= 0, "open %s", path);
            for (int r = 0; r < nprocs; r++) {
                lc_case_t cr = c;
                long long dr = c.own_disp ? 0 : 256LL * r;
                if (c.own_disp) { /* rank r's block */
                    long long b = (G + nprocs - 1) / nprocs;
                    cr.off[0] = 4 * r * b;
                    cr.off[1] = 4 * r * b + 4;
                }
                for (int i = 0; i < c.k; i++) {
                    unsigned char b4[4], w[4];
                    long long at = dr + cr.off[i];
                    be(w, (unsigned long long)(unsigned)(int)lc_val(which, r, i),
                       4);
                    MT_CHECK(pread(fd, b4, 4, at) == 4, "%s: pread at %lld",
                             c.name, at);
                    MT_CHECK(memcmp(b4, w, 4) == 0,
                             "%s: rank %d long %d at %lld: %02x%02x%02x%02x, "
                             "want %02x%02x%02x%02x",
                             c.name, r, i, at, b4[0], b4[1], b4[2], b4[3],
                             w[0], w[1], w[2], w[3]);
                    if (at + 4 > want)
                        want = at + 4;
                }
            }
            MT_CHECK(fstat(fd, &sb) == 0, "fstat");
            MT_CHECK(sb.st_size == want, "%s: file of %lld bytes, want %lld",
                     c.name, (long long)sb.st_size, want);
            close(fd);
        }
        memset(in, 0, sizeof(in));
        MT_OK(MPI_File_read_at_all(fh, 0, in, c.k, MPI_LONG, &st));
        MT_OK(MPI_Get_count(&st, MPI_LONG, &got));
        MT_CHECK(got == c.k, "%s: read count %d", c.name, got);
        for (int i = 0; i < c.k; i++)
            MT_CHECK(in[i] == out[i], "%s: long %d read %ld, want %ld",
                     c.name, i, in[i], out[i]);
        MT_OK(MPI_File_close(&fh));
        MT_OK(MPI_Type_free(&t));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

int main(int argc, char **argv)
{
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("ext32");
    io_path(path, sizeof(path), "e.dat");
    ints_and_doubles(path);
    longs(path);
    longs_with_holes(path);
    large_counts(path);
    io_dir_remove();
    if (rank == 0)
        printf("io_ext32 at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
