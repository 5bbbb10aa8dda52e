/*
 * The typemap rules of MPI_File_set_view (MPI 4.0 sections 14.1, 14.3):
 * an etype's and a filetype's displacements must be nonnegative and
 * monotonically nondecreasing, and neither may overlap itself in a file
 * opened for writing.  Both are refused with MPI_ERR_TYPE, on every rank
 * (one rank's bad type fails them all), and leave the view as it was.
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
    MT_OK(MPI_Type_commit(&ft));
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, ft, "native",
                                           MPI_INFO_NULL));
    still_default(fh);
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_File_close(&fh));
    /* Both nondecreasing ones overlap: refused for writing. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_Type_create_hindexed(2, bl31, at8, MPI_INT, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, ft, "native",
                                           MPI_INFO_NULL));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_create_struct(2, bl11, at4, types, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native",
                                           MPI_INFO_NULL));
    still_default(fh);
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_File_close(&fh));
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
    io_dir_remove();
    if (rank == 0)
        printf("io_viewtype at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
