/*
 * The typemap rules of MPI_File_set_view (MPI 4.0 sections 14.1, 14.3):
 * an etype's and a filetype's displacements must be nonnegative and
 * monotonically nondecreasing, and neither may overlap itself in a file
 * opened for writing.  Both are refused with MPI_ERR_TYPE, on every rank
 * (one rank's bad type fails them all), and leave the view as it was.  A
 * file only read may have a filetype that overlaps itself, and every read
 * path must read through it byte for byte.
 */
#include "io_test.h"

static int rank, nprocs;

/* indexed(n, bl, d) of MPI_INT, committed. */
static MPI_Datatype ints(int n, const int *bl, const int *d)
{
    MPI_Datatype t;

    MT_OK(MPI_Type_indexed(n, (int *)bl, (int *)d, MPI_INT, &t));
    MT_OK(MPI_Type_commit(&t));
    return t;
}

/* The view is still the default one: etype and filetype MPI_BYTE. */
static void still_default(MPI_File fh)
{
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];

    MT_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    MT_CHECK(disp == 0 && et == MPI_BYTE && ft == MPI_BYTE,
             "a refused view changed the view");
}

/* set_view(fh, 0, et, *ft) is refused and changes nothing; *ft freed. */
static void refused(MPI_File fh, MPI_Datatype et, MPI_Datatype *ft)
{
    MT_OK(MPI_Type_commit(ft));
    MT_ERR(MPI_ERR_TYPE,
           MPI_File_set_view(fh, 0, et, *ft, "native", MPI_INFO_NULL));
    still_default(fh);
    MT_OK(MPI_Type_free(ft));
}

static void etypes(const char *path)
{
    static const int bl1[2] = {1, 1}, neg[2] = {-2, 2}, dec[2] = {3, 0};
    static const int bl31[2] = {3, 1}, ovl[2] = {0, 1};
    MPI_Datatype et, ft;
    MPI_File fh;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                        MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    /* A filetype of whole etypes, so that only the etype is wrong. */
    MT_OK(MPI_Type_contiguous(4, MPI_INT, &ft));
    MT_OK(MPI_Type_commit(&ft));
    et = ints(2, bl1, neg); /* typemap 0 - 8, 8 */
    MT_ERR(MPI_ERR_TYPE,
           MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
    still_default(fh);
    MT_OK(MPI_Type_free(&et));
    et = ints(2, bl1, dec); /* 12, 0 */
    MT_ERR(MPI_ERR_TYPE,
           MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
    still_default(fh);
    MT_OK(MPI_Type_free(&et));
    /* One rank's decreasing etype fails all of them. */
    if (nprocs > 1) {
        static const int inc[2] = {0, 3};
        et = ints(2, bl1, rank == nprocs - 1 ? dec : inc);
        MT_ERR(MPI_ERR_TYPE,
               MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
        still_default(fh);
        MT_OK(MPI_Type_free(&et));
    }
    /* A filetype 0, 4, 8, 4: decreasing. */
    et = ints(2, bl31, ovl);
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, et, "native",
                                           MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&et));
    /* An etype 0, 4, 4 (repeated): only overlapping, refused for
     * writing. */
    {
        static const int bl21[2] = {2, 1}, rep[2] = {0, 1};
        et = ints(2, bl21, rep);
        MT_ERR(MPI_ERR_TYPE,
               MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
        still_default(fh);
        MT_OK(MPI_File_close(&fh));
        /* Read only: an etype that repeats a displacement is allowed. */
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
                            MPI_INFO_NULL, &fh));
        MT_OK(MPI_Type_free(&ft));
        MT_OK(MPI_Type_contiguous(6, MPI_INT, &ft));
        MT_OK(MPI_Type_commit(&ft));
        MT_OK(MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
        MT_OK(MPI_Type_free(&et));
    }
    /* ...but not a negative or decreasing one. */
    et = ints(2, bl1, neg);
    MT_ERR(MPI_ERR_TYPE,
           MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&et));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_File_close(&fh));
}

/* Elements are compared, not bytes: blocks of ints at byte displacements
 * 0 (three ints), 8: the third int (at 8) and the next (at 8) repeat a
 * displacement, which is nondecreasing; 0 (three), 4: the next starts
 * before the third, decreasing.  A struct of a double at 0 and an int
 * at 4 overlaps without decreasing. */
static void elements(const char *path)
{
    static const int bl31[2] = {3, 1};
    static const MPI_Aint at8[2] = {0, 8}, at4[2] = {0, 4};
    MPI_Datatype ft, types[2] = {MPI_DOUBLE, MPI_INT};
    int bl11[2] = {1, 1};
    MPI_File fh;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_Type_create_hindexed(2, bl31, at4, MPI_INT, &ft));
    refused(fh, MPI_INT, &ft);
    MT_OK(MPI_File_close(&fh));
    /* Both nondecreasing ones overlap: refused for writing. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_Type_create_hindexed(2, bl31, at8, MPI_INT, &ft));
    refused(fh, MPI_INT, &ft);
    MT_OK(MPI_Type_create_struct(2, bl11, at4, types, &ft));
    refused(fh, MPI_BYTE, &ft);
    MT_OK(MPI_File_close(&fh));
}

/*
 * Reading through a filetype that overlaps itself (allowed in a file only
 * read): {int at 0, int at 4, short at 4}, extent 8, so each tile gives
 * file bytes 8t .. 8t+8 and then 8t+4 .. 8t+6 again.  The file is
 * NT tiles and 6 bytes.  Each access family and path: list IO, sieving
 * (whose window must reach the furthest block, not the last), collective
 * with and without collective buffering asked for (one file domain per
 * rank: a rank's stream is not in file order), nonblocking, shared
 * pointer, atomic mode; the end of file in etypes.
 */
#define NT 40
#define TILE 10 /* stream bytes per tile */
#define FBYTES (8 * NT + 6)

static unsigned char fbyte(long i)
{
    return (unsigned char)(i * 7 + 3);
}

/* The file byte under stream byte p. */
static long under(long p)
{
    long j = p % TILE;

    return 8 * (p / TILE) + (j < 8 ? j : j - 4);
}

static MPI_Datatype overlapping(void)
{
    int bl[2] = {2, 1};
    MPI_Aint d[2] = {0, 4};
    MPI_Datatype ty[2] = {MPI_INT, MPI_SHORT}, st, ft;

    MT_OK(MPI_Type_create_struct(2, bl, d, ty, &st));
    MT_OK(MPI_Type_create_resized(st, 0, 8, &ft));
    MT_OK(MPI_Type_free(&st));
    MT_OK(MPI_Type_commit(&ft));
    return ft;
}

/* n stream bytes from p came in buf, and the status says so. */
static void check_read(const char *how, const unsigned char *buf, long p,
                       long n, MPI_Status *st)
{
    int got;

    MT_OK(MPI_Get_count(st, MPI_BYTE, &got));
    MT_CHECK(got == n, "%s: read %d bytes, want %ld", how, got, n);
    for (long i = 0; i < n; i++)
        MT_CHECK(buf[i] == fbyte(under(p + i)),
                 "%s: stream byte %ld is %d, want file byte %ld (%d)", how,
                 p + i, buf[i], under(p + i), fbyte(under(p + i)));
}

static void overlapping_reads(const char *path)
{
    static unsigned char img[FBYTES], buf[TILE * (NT + 1)];
    const char *modes[3][2] = {{"romio_ds_read", "disable"},
                               {"romio_ds_read", "enable"},
                               {"romio_cb_read", "enable"}};
    MPI_Datatype ft = overlapping();
    MPI_Status st;
    MPI_Request req;
    MPI_Offset end;
    MPI_File fh;
    MPI_Info info;
    /* A short stretch from the middle of a tile; all tiles but the last;
     * everything, cut by the end of the file. */
    const long at = 3 * TILE + 6, mid = 5 * TILE + 4;
    const long all = TILE * NT + 6;

    for (long i = 0; i < FBYTES; i++)
        img[i] = fbyte(i);
    if (rank == 0)
        io_spill(path, img, FBYTES);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int m = 0; m < 3; m++) {
        MT_OK(MPI_Info_create(&info));
        MT_OK(MPI_Info_set(info, modes[m][0], modes[m][1]));
        if (m == 2) { /* domains that cut tiles */
            char n[16];
            snprintf(n, sizeof(n), "%d", nprocs > 2 ? 3 : nprocs);
            MT_OK(MPI_Info_set(info, "cb_nodes", n));
        }
        MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info,
                            &fh));
        MT_OK(MPI_Info_free(&info));
        MT_OK(MPI_File_set_view(fh, 0, MPI_SHORT, ft, "native",
                                MPI_INFO_NULL));
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_read_at(fh, at / 2, buf, (int)mid, MPI_BYTE, &st));
        check_read(modes[m][1], buf, at, mid, &st);
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_read_at(fh, 0, buf, TILE * (NT - 1), MPI_BYTE, &st));
        check_read(modes[m][1], buf, 0, TILE * (NT - 1), &st);
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_read_at_all(fh, 0, buf, (int)sizeof(buf), MPI_BYTE,
                                   &st));
        check_read(modes[m][1], buf, 0, all, &st);
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_seek(fh, at / 2, MPI_SEEK_SET));
        MT_OK(MPI_File_read_all(fh, buf, (int)mid, MPI_BYTE, &st));
        check_read(modes[m][1], buf, at, mid, &st);
        memset(buf, 0, sizeof(buf));
        MT_OK(MPI_File_iread_at(fh, 0, buf, (int)sizeof(buf), MPI_BYTE,
                                &req));
        MT_OK(MPI_Wait(&req, &st));
        check_read(modes[m][1], buf, 0, all, &st);
        /* The end of file: the first etype at or past its last byte. */
        MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
        MT_OK(MPI_File_get_position(fh, &end));
        MT_CHECK(end == all / 2, "end of file at etype %lld, want %ld",
                 (long long)end, all / 2);
        MT_OK(MPI_File_close(&fh));
    }
    /* Shared pointer, ordered, atomic mode. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_SHORT, ft, "native", MPI_INFO_NULL));
    memset(buf, 0, sizeof(buf));
    MT_OK(MPI_File_read_ordered(fh, buf, TILE, MPI_BYTE, &st));
    check_read("ordered", buf, (long)TILE * rank, TILE, &st);
    MT_OK(MPI_File_set_atomicity(fh, 1));
    memset(buf, 0, sizeof(buf));
    MT_OK(MPI_File_read_at(fh, at / 2, buf, (int)mid, MPI_BYTE, &st));
    check_read("atomic", buf, at, mid, &st);
    MT_OK(MPI_File_close(&fh));
    /* The same filetype in a file opened for writing is refused. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_SHORT, ft, "native",
                                           MPI_INFO_NULL));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
}

int main(int argc, char **argv)
{
    char path[512];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    io_dir_make("viewtype");
    io_path(path, sizeof(path), "v.dat");
    etypes(path);
    elements(path);
    io_path(path, sizeof(path), "o.dat");
    overlapping_reads(path);
    io_dir_remove();
    if (rank == 0)
        printf("io_viewtype at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
