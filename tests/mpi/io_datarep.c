/*
 * User data representations (MPI_Register_datarep, MPI 4.1 section
 * 14.5.3).  "shoal-be32" stores ints and shorts as 4-byte big-endian
 * integers plus a bias (the extra state), so shorts grow from 2 to 4
 * bytes in the file; the file layout of a vector of shorts is then
 * computed with those sizes.  Every byte of the file is checked with plain
 * POSIX reads against the encoding made here, the values read back; the
 * conversion functions' arguments (count, position, extra state) are
 * checked.  The large-count form (MPI_Register_datarep_c) does the same
 * through its own functions; MPI_CONVERSION_FN_NULL moves native bytes.
 * Filetypes made by the large-count constructors with arguments beyond int
 * are laid out with the file sizes too (and refused with MPI_ERR_TYPE when
 * the file sizes make their displacements overflow).
 * Bad input: duplicate and predefined names (MPI_ERR_DUP_DATAREP), NULL,
 * empty or too long names and a NULL extent function (MPI_ERR_ARG), an
 * unknown name in set_view (MPI_ERR_UNSUPPORTED_DATAREP), a conversion
 * function that fails and a NULL conversion where sizes differ
 * (MPI_ERR_CONVERSION).
 */
#include "io_test.h"

static int rank, nprocs;

typedef struct rep_state {
    int bias;
    int fail;          /* conversion functions return an error */
    long calls;        /* conversion calls */
    long items;        /* data items converted */
    MPI_Offset maxpos; /* largest position seen */
    int badtype;       /* a datatype the functions do not know */
} rep_state_t;

static rep_state_t be_st = {.bias = 1000}, bec_st = {.bias = -7};

static void put_be32(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static unsigned get_be32(const unsigned char *p)
{
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 |
           p[3];
}

static int be_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int sz;

    (void)extra;
    if (dt == MPI_INT || dt == MPI_SHORT) {
        *ext = 4;
        return MPI_SUCCESS;
    }
    MPI_Type_size(dt, &sz);
    *ext = sz;
    return MPI_SUCCESS;
}

/* The conversions know contiguous MPI_INT and MPI_SHORT user buffers. */
static int convert(int wr, void *userbuf, MPI_Datatype dt, MPI_Count count,
                   void *filebuf, MPI_Offset pos, rep_state_t *s)
{
    unsigned char *f = filebuf;

    s->calls++;
    s->items += count;
    if (pos > s->maxpos)
        s->maxpos = pos;
    if (s->fail)
        return MPI_ERR_OTHER;
    if (dt != MPI_INT && dt != MPI_SHORT) {
        s->badtype++;
        return MPI_ERR_TYPE;
    }
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Offset k = pos + i;
        if (dt == MPI_INT) {
            int *u = userbuf;
            if (wr)
                put_be32(f + 4 * i, (unsigned)(u[k] + s->bias));
            else
                u[k] = (int)get_be32(f + 4 * i) - s->bias;
        } else {
            short *u = userbuf;
            if (wr)
                put_be32(f + 4 * i, (unsigned)(u[k] + s->bias));
            else
                u[k] = (short)((int)get_be32(f + 4 * i) - s->bias);
        }
    }
    return MPI_SUCCESS;
}

static int be_read(void *u, MPI_Datatype dt, int count, void *f,
                   MPI_Offset pos, void *extra)
{
    return convert(0, u, dt, count, f, pos, extra);
}

static int be_write(void *u, MPI_Datatype dt, int count, void *f,
                    MPI_Offset pos, void *extra)
{
    return convert(1, u, dt, count, f, pos, extra);
}

static int bec_read(void *u, MPI_Datatype dt, MPI_Count count, void *f,
                    MPI_Offset pos, void *extra)
{
    return convert(0, u, dt, count, f, pos, extra);
}

static int bec_write(void *u, MPI_Datatype dt, MPI_Count count, void *f,
                     MPI_Offset pos, void *extra)
{
    return convert(1, u, dt, count, f, pos, extra);
}

static int wide_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int sz;

    (void)extra;
    MPI_Type_size(dt, &sz);
    *ext = dt == MPI_INT ? 8 : sz;
    return MPI_SUCCESS;
}

/* Shorts of 2^40 bytes in the file: a stride of G of them overflows. */
static int huge_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int sz;

    (void)extra;
    MPI_Type_size(dt, &sz);
    *ext = dt == MPI_SHORT ? (MPI_Aint)1 << 40 : sz;
    return MPI_SUCCESS;
}

static int native_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int sz;

    (void)extra;
    MPI_Type_size(dt, &sz);
    *ext = sz;
    return MPI_SUCCESS;
}

static void bad_input(void)
{
    char longname[MPI_MAX_DATAREP_STRING + 8];

    MT_ERR(MPI_ERR_DUP_DATAREP,
           MPI_Register_datarep("shoal-be32", be_read, be_write, be_extent,
                                &be_st));
    MT_ERR(MPI_ERR_DUP_DATAREP,
           MPI_Register_datarep_c("shoal-be32", bec_read, bec_write,
                                  be_extent, &be_st));
    MT_ERR(MPI_ERR_DUP_DATAREP,
           MPI_Register_datarep("native", be_read, be_write, be_extent, NULL));
    MT_ERR(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("external32", be_read,
                                                     be_write, be_extent, NULL));
    MT_ERR(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("internal", be_read,
                                                     be_write, be_extent, NULL));
    MT_ERR(MPI_ERR_ARG,
           MPI_Register_datarep(NULL, be_read, be_write, be_extent, NULL));
    MT_ERR(MPI_ERR_ARG,
           MPI_Register_datarep("", be_read, be_write, be_extent, NULL));
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    MT_ERR(MPI_ERR_ARG,
           MPI_Register_datarep(longname, be_read, be_write, be_extent, NULL));
    longname[MPI_MAX_DATAREP_STRING - 1] = '\0'; /* the longest allowed */
    MT_OK(MPI_Register_datarep(longname, MPI_CONVERSION_FN_NULL,
                               MPI_CONVERSION_FN_NULL, native_extent, NULL));
    MT_ERR(MPI_ERR_ARG,
           MPI_Register_datarep("shoal-noext", be_read, be_write, NULL, NULL));
    /* The name was not taken by the failed call. */
    MT_OK(MPI_Register_datarep("shoal-noext", MPI_CONVERSION_FN_NULL,
                               MPI_CONVERSION_FN_NULL, native_extent, NULL));
}

static void be32(const char *path, const char *rep, rep_state_t *s)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype vt, et, ft;
    MPI_Aint ext;
    MPI_Offset disp;
    char got_rep[MPI_MAX_DATAREP_STRING];
    int iv[5], ir[5], n;
    short sv[3], sr[3];
    long calls;
    long long ints_end = 20LL * nprocs; /* bytes of the ints region */

    for (int i = 0; i < 5; i++)
        iv[i] = (rank + 1) * 100 - i * 37;
    for (int i = 0; i < 3; i++)
        sv[i] = (short)(-(rank + 1) * 10 - i);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_UNSUPPORTED_DATAREP,
           MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shoal-no-such-rep",
                             MPI_INFO_NULL));
    /* Ints, contiguous: rank r's five at int 5 r. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    MT_OK(MPI_File_get_view(fh, &disp, &et, &ft, got_rep));
    MT_CHECK(strcmp(got_rep, rep) == 0, "datarep %s, want %s", got_rep, rep);
    calls = s->calls;
    MT_OK(MPI_File_write_at_all(fh, 5 * rank, iv, 5, MPI_INT, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &n));
    MT_CHECK(n == 5, "write count %d", n);
    MT_CHECK(s->calls == calls + 1, "write conversions: %ld", s->calls - calls);
    /* Shorts (4 bytes in the file): a vector, rank r's at slots r, r+P,
     * r+2P of the region after the ints. */
    MT_OK(MPI_Type_vector(3, 1, nprocs, MPI_SHORT, &vt));
    MT_OK(MPI_Type_commit(&vt));
    MT_OK(MPI_File_set_view(fh, ints_end + 4 * rank, MPI_SHORT, vt, rep,
                            MPI_INFO_NULL));
    MT_OK(MPI_File_get_type_extent(fh, MPI_SHORT, &ext));
    MT_CHECK(ext == 4, "file extent of MPI_SHORT: %ld", (long)ext);
    MT_OK(MPI_File_get_type_extent(fh, vt, &ext));
    MT_CHECK(ext == (2L * nprocs + 1) * 4, "file extent of the vector: %ld",
             (long)ext);
    MT_OK(MPI_File_write_all(fh, sv, 3, MPI_SHORT, &st));
    MT_OK(MPI_Get_count(&st, MPI_SHORT, &n));
    MT_CHECK(n == 3, "short write count %d", n);
    /* A type the conversion does not know: its error is
     * MPI_ERR_CONVERSION, and nothing is written. */
    {
        float fv = 1.0f;
        MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, rep,
                                MPI_INFO_NULL));
        MT_ERR(MPI_ERR_CONVERSION,
               MPI_File_write_at(fh, 1 << 20, &fv, 1, MPI_FLOAT, &st));
        MT_CHECK(s->badtype == 1, "bad types seen: %d", s->badtype);
    }
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t fsz;
        unsigned char *f = io_slurp(path, &fsz);
        long long want = ints_end + (2LL * nprocs + 1) * 4 + 4LL * (nprocs - 1);
        MT_CHECK(fsz == (size_t)want, "file of %zu bytes, want %lld", fsz,
                 want);
        for (int r = 0; r < nprocs; r++) {
            for (int i = 0; i < 5; i++) {
                unsigned w = (unsigned)((r + 1) * 100 - i * 37 + s->bias);
                unsigned g = get_be32(f + 20 * r + 4 * i);
                MT_CHECK(g == w, "rank %d int %d: %08x, want %08x", r, i, g,
                         w);
            }
            for (int i = 0; i < 3; i++) {
                unsigned w = (unsigned)(-(r + 1) * 10 - i + s->bias);
                unsigned g = get_be32(f + ints_end + 4 * r + 4LL * nprocs * i);
                MT_CHECK(g == w, "rank %d short %d: %08x, want %08x", r, i, g,
                         w);
            }
        }
        free(f);
    }
    /* Read back. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    memset(ir, 0, sizeof(ir));
    MT_OK(MPI_File_read_at(fh, 5 * rank, ir, 5, MPI_INT, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &n));
    MT_CHECK(n == 5, "read count %d", n);
    for (int i = 0; i < 5; i++)
        MT_CHECK(ir[i] == iv[i], "int %d: %d, want %d", i, ir[i], iv[i]);
    MT_OK(MPI_File_set_view(fh, ints_end + 4 * rank, MPI_SHORT, vt, rep,
                            MPI_INFO_NULL));
    memset(sr, 0, sizeof(sr));
    MT_OK(MPI_File_read_all(fh, sr, 3, MPI_SHORT, &st));
    for (int i = 0; i < 3; i++)
        MT_CHECK(sr[i] == sv[i], "short %d: %d, want %d", i, sr[i], sv[i]);
    /* A failing conversion function: MPI_ERR_CONVERSION both ways. */
    s->fail = 1;
    MT_ERR(MPI_ERR_CONVERSION, MPI_File_read_at(fh, 0, sr, 3, MPI_SHORT, &st));
    MT_ERR(MPI_ERR_CONVERSION,
           MPI_File_write_at(fh, 0, sv, 3, MPI_SHORT, &st));
    s->fail = 0;
    MT_CHECK(s->maxpos == 0, "position %lld (one call per access)",
             s->maxpos);
    MT_OK(MPI_Type_free(&vt));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* MPI_CONVERSION_FN_NULL: native bytes; refused where sizes differ. */
static void null_conversion(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    int iv[4], ir[4];

    for (int i = 0; i < 4; i++)
        iv[i] = rank * 1000 + i;
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shoal-noext",
                            MPI_INFO_NULL));
    MT_OK(MPI_File_write_at_all(fh, 4 * rank, iv, 4, MPI_INT, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    if (rank == 0) {
        size_t fsz;
        unsigned char *f = io_slurp(path, &fsz);
        MT_CHECK(fsz == 16u * (size_t)nprocs, "file of %zu bytes", fsz);
        for (int r = 0; r < nprocs; r++)
            for (int i = 0; i < 4; i++) {
                int g;
                memcpy(&g, f + 16 * r + 4 * i, 4);
                MT_CHECK(g == r * 1000 + i, "native int %d of rank %d: %d", i,
                         r, g);
            }
        free(f);
    }
    MT_OK(MPI_File_read_at(fh, 4 * rank, ir, 4, MPI_INT, &st));
    for (int i = 0; i < 4; i++)
        MT_CHECK(ir[i] == iv[i], "int %d: %d", i, ir[i]);
    /* Ints 8 bytes in the file, nothing to convert them: refused. */
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shoal-wide",
                            MPI_INFO_NULL));
    MT_ERR(MPI_ERR_CONVERSION, MPI_File_write_at(fh, 0, iv, 4, MPI_INT, &st));
    MT_ERR(MPI_ERR_CONVERSION, MPI_File_read_at(fh, 0, ir, 4, MPI_INT, &st));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/*
 * Filetypes made by the large-count constructors with arguments beyond int
 * (G = 3e9), over shorts (2 bytes here, 4 in the file): laid out with the
 * file sizes (element displacements scaled by 4, byte ones as they are).
 * A vector with a stride of G shorts puts its second block at byte 4 G of
 * the file (12 GB, a sparse file); a struct of a short at 0 and G shorts
 * at byte 8.  The file's bytes are read with pread where the layout puts
 * them, its size checked, the values read back.
 */
#define G 3000000000LL

static void large_counts(const char *path, const char *rep, rep_state_t *s)
{
    MPI_Count sbl[2] = {1, G}, sd[2] = {0, 8};
    MPI_Datatype sty[2] = {MPI_SHORT, MPI_SHORT};

    for (int which = 0; which < 2; which++) {
        MPI_File fh;
        MPI_Status st;
        MPI_Datatype t;
        MPI_Aint ext;
        short out[6], in[6];
        long long off[6], want_ext, disp = 256LL * rank;
        int k, n;

        if (which == 0) {
            long long o[6] = {0, 4, 8, 4 * G, 4 * G + 4, 4 * G + 8};
            MT_OK(MPI_Type_vector_c(2, 3, G, MPI_SHORT, &t));
            k = 6;
            memcpy(off, o, sizeof(o));
            want_ext = 4 * G + 12;
        } else {
            long long o[4] = {0, 8, 12, 16};
            MT_OK(MPI_Type_create_struct_c(2, sbl, sd, sty, &t));
            k = 4;
            memcpy(off, o, sizeof(o));
            want_ext = 8 + 4 * G;
        }
        MT_OK(MPI_Type_commit(&t));
        for (int i = 0; i < k; i++)
            out[i] = (short)((rank + 1) * 100 + which * 10 + i);
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &fh));
        MT_OK(MPI_File_set_view(fh, disp, MPI_SHORT, t, rep, MPI_INFO_NULL));
        MT_OK(MPI_File_get_type_extent(fh, t, &ext));
        MT_CHECK(ext == want_ext, "%s type %d: file extent %ld, want %lld",
                 rep, which, (long)ext, want_ext);
        MT_OK(MPI_File_write_all(fh, out, k, MPI_SHORT, &st));
        MT_OK(MPI_Get_count(&st, MPI_SHORT, &n));
        MT_CHECK(n == k, "write count %d", n);
        MT_OK(MPI_File_sync(fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_OK(MPI_File_sync(fh));
        if (rank == 0) {
            int fd = open(path, O_RDONLY);
            struct stat sb;
            long long end = 0;
            MT_CHECK(fd >= 0, "open %s", path);
            for (int r = 0; r < nprocs; r++)
                for (int i = 0; i < k; i++) {
                    unsigned char b4[4];
                    long long at = 256LL * r + off[i];
                    unsigned w = (unsigned)((r + 1) * 100 + which * 10 + i +
                                            s->bias);
                    MT_CHECK(pread(fd, b4, 4, at) == 4, "pread at %lld", at);
                    MT_CHECK(get_be32(b4) == w,
                             "%s type %d: rank %d short %d at %lld: %08x, "
                             "want %08x",
                             rep, which, r, i, at, get_be32(b4), w);
                    if (at + 4 > end)
                        end = at + 4;
                }
            MT_CHECK(fstat(fd, &sb) == 0, "fstat");
            MT_CHECK(sb.st_size == end, "%s type %d: file of %lld bytes, "
                     "want %lld", rep, which, (long long)sb.st_size, end);
            close(fd);
        }
        memset(in, 0, sizeof(in));
        MT_OK(MPI_File_read_at_all(fh, 0, in, k, MPI_SHORT, &st));
        for (int i = 0; i < k; i++)
            MT_CHECK(in[i] == out[i], "%s type %d: short %d read %d, want %d",
                     rep, which, i, in[i], out[i]);
        MT_OK(MPI_File_close(&fh));
        MT_OK(MPI_Type_free(&t));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    /* Scaled to the file extents the displacements overflow MPI_Aint:
     * refused with MPI_ERR_TYPE, on every rank, the view kept. */
    {
        MPI_File fh;
        MPI_Datatype t;
        MT_OK(MPI_Type_vector_c(2, 1, G, MPI_SHORT, &t));
        MT_OK(MPI_Type_commit(&t));
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                            MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &fh));
        MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_SHORT, t,
                                               "shoal-huge", MPI_INFO_NULL));
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
    io_dir_make("datarep");
    io_path(path, sizeof(path), "d.dat");
    MT_OK(MPI_Register_datarep("shoal-be32", be_read, be_write, be_extent,
                               &be_st));
    MT_OK(MPI_Register_datarep_c("shoal-be32c", bec_read, bec_write,
                                 be_extent, &bec_st));
    MT_OK(MPI_Register_datarep("shoal-huge", MPI_CONVERSION_FN_NULL,
                               MPI_CONVERSION_FN_NULL, huge_extent, NULL));
    MT_OK(MPI_Register_datarep("shoal-wide", MPI_CONVERSION_FN_NULL,
                               MPI_CONVERSION_FN_NULL, wide_extent, NULL));
    bad_input();
    be32(path, "shoal-be32", &be_st);
    be32(path, "shoal-be32c", &bec_st);
    MT_CHECK(bec_st.calls >= 4 && bec_st.items >= 16,
             "large-count functions: %ld calls, %ld items", bec_st.calls,
             bec_st.items);
    null_conversion(path);
    large_counts(path, "shoal-be32", &be_st);
    large_counts(path, "shoal-be32c", &bec_st);
    io_dir_remove();
    if (rank == 0)
        printf("io_datarep at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
