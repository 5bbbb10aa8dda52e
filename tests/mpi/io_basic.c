/*
 * MPI-IO handles: open and its amode rules and error classes (every rank
 * gets the error when one rank cannot open, and nothing stays open),
 * close with DELETE_ON_CLOSE, delete, APPEND, sizes, preallocate, sync,
 * hints, amode and group queries, atomicity, file error handlers (the
 * default MPI_ERRORS_RETURN, user handlers on a file and on
 * MPI_FILE_NULL), bad arguments of the access calls, views' errors,
 * get_byte_offset and seeking.
 */
#include "io_test.h"

static int rank, nprocs;

/* Calls of the user file error handler, and the last code it saw. */
static int handler_calls, handler_code;
static MPI_File handler_file;

static void on_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

static void open_errors(void)
{
    char path[512], missing[512];
    MPI_File fh = (MPI_File)&fh;

    io_path(path, sizeof(path), "a.dat");
    io_path(missing, sizeof(missing), "no/such/dir.dat");
    /* Missing file, read only: every rank fails with the same class. */
    MT_ERR(MPI_ERR_NO_SUCH_FILE,
           MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                         &fh));
    MT_CHECK(fh == MPI_FILE_NULL, "fh not MPI_FILE_NULL after a failure");
    /* amode rules */
    MT_ERR(MPI_ERR_AMODE,
           MPI_File_open(MPI_COMM_WORLD, path, 0, MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_AMODE,
           MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_CREATE,
                         MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, path,
                                        MPI_MODE_RDONLY | MPI_MODE_CREATE,
                                        MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_AMODE,
           MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_EXCL,
                         MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, path,
                                        MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                                        MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_AMODE,
           MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | (1 << 20),
                         MPI_INFO_NULL, &fh));
    /* One rank's bad amode fails every rank (nobody is left waiting). */
    MT_ERR(
        MPI_ERR_AMODE,
        MPI_File_open(MPI_COMM_WORLD, path,
                      rank == nprocs - 1 ? 0 : MPI_MODE_RDWR | MPI_MODE_CREATE,
                      MPI_INFO_NULL, &fh));
    MT_CHECK(access(path, F_OK) != 0, "a failed open created %s", path);
    MT_ERR(MPI_ERR_BAD_FILE,
           MPI_File_open(MPI_COMM_WORLD, NULL, MPI_MODE_RDONLY, MPI_INFO_NULL,
                         &fh));
    MT_ERR(MPI_ERR_COMM, MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDONLY,
                                       MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_ARG, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
                                      MPI_INFO_NULL, NULL));
    if (nprocs > 1) {
        /* amode differs between ranks. */
        MT_ERR(MPI_ERR_NOT_SAME,
               MPI_File_open(MPI_COMM_WORLD, path,
                             rank == 0 ? MPI_MODE_RDWR | MPI_MODE_CREATE
                                       : MPI_MODE_WRONLY | MPI_MODE_CREATE,
                             MPI_INFO_NULL, &fh));
        /* The last rank cannot open: all fail, and the file rank 0
         * created is gone again. */
        MT_ERR(
            MPI_ERR_NO_SUCH_FILE,
            MPI_File_open(MPI_COMM_WORLD, rank == nprocs - 1 ? missing : path,
                          MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_CHECK(access(path, F_OK) != 0,
                 "the file created by a failed open stays");
    }
    /* Create, then EXCL on the existing file. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                        MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_close(&fh));
    MT_CHECK(fh == MPI_FILE_NULL, "close left the handle");
    MT_ERR(MPI_ERR_FILE_EXISTS,
           MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                         MPI_INFO_NULL, &fh));
    /* Permission denied (root is never denied: skipped then). */
    if (geteuid() != 0) {
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            MT_CHECK(chmod(path, 0) == 0, "chmod");
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        MT_ERR(MPI_ERR_ACCESS,
               MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
                             MPI_INFO_NULL, &fh));
        MT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            MT_CHECK(chmod(path, 0644) == 0, "chmod");
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* A directory is no file. */
    MT_ERR(MPI_ERR_BAD_FILE,
           MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDONLY, MPI_INFO_NULL,
                         &fh));
    /* Delete, then delete again; a prefix such as ROMIO's "ufs:" works. */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        char pre[600];
        snprintf(pre, sizeof(pre), "ufs:%s", path);
        MPI_File self;
        /* Open here: refused, and the file stays. */
        MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
                            MPI_INFO_NULL, &self));
        MT_ERR(MPI_ERR_FILE_IN_USE, MPI_File_delete(pre, MPI_INFO_NULL));
        MT_CHECK(access(path, F_OK) == 0, "the file went while open");
        MT_OK(MPI_File_close(&self));
        MT_OK(MPI_File_delete(pre, MPI_INFO_NULL));
        MT_ERR(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(path, MPI_INFO_NULL));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void sizes_and_queries(void)
{
    char path[512];
    MPI_File fh;
    MPI_Offset size;
    MPI_Info info, used;
    MPI_Group g, wg;
    int amode, flag, cmp;
    char val[64];

    io_path(path, sizeof(path), "b.dat");
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "cb_buffer_size", "1048576"));
    MT_OK(MPI_Info_set(info, "no_such_hint_anywhere", "7"));
    MT_OK(MPI_File_open(
        MPI_COMM_WORLD, path,
        MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_File_get_info(fh, &used));
    MT_OK(MPI_Info_get(used, "cb_buffer_size", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && strcmp(val, "1048576") == 0, "hint cb_buffer_size");
    MT_OK(MPI_Info_free(&used));
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "striping_unit", "65536"));
    MT_OK(MPI_File_set_info(fh, info));
    MT_OK(MPI_Info_free(&info));
    MT_OK(MPI_File_get_info(fh, &used));
    MT_OK(MPI_Info_get(used, "striping_unit", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag && strcmp(val, "65536") == 0, "hint striping_unit");
    MT_OK(MPI_Info_get(used, "cb_buffer_size", sizeof(val) - 1, val, &flag));
    MT_CHECK(flag, "set_info dropped an earlier hint");
    MT_OK(MPI_Info_free(&used));

    MT_OK(MPI_File_get_amode(fh, &amode));
    MT_CHECK(amode ==
                 (MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE),
             "amode %d", amode);
    MT_OK(MPI_File_get_group(fh, &g));
    MT_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MT_OK(MPI_Group_compare(g, wg, &cmp));
    MT_CHECK(cmp == MPI_IDENT, "file group differs from the comm's");
    MT_OK(MPI_Group_free(&g));
    MT_OK(MPI_Group_free(&wg));

    MT_OK(MPI_File_get_size(fh, &size));
    MT_CHECK(size == 0, "new file of %lld bytes", size);
    MT_OK(MPI_File_set_size(fh, 1000));
    MT_OK(MPI_File_get_size(fh, &size));
    MT_CHECK(size == 1000, "size %lld after set_size 1000", size);
    MT_OK(MPI_File_set_size(fh, 10));
    MT_OK(MPI_File_get_size(fh, &size));
    MT_CHECK(size == 10, "size %lld after set_size 10", size);
    MT_OK(MPI_File_preallocate(fh, 500));
    MT_OK(MPI_File_get_size(fh, &size));
    MT_CHECK(size == 500, "size %lld after preallocate 500", size);
    MT_OK(MPI_File_preallocate(fh, 100));
    MT_OK(MPI_File_get_size(fh, &size));
    MT_CHECK(size == 500, "preallocate shrank the file to %lld", size);
    MT_ERR(MPI_ERR_ARG, MPI_File_set_size(fh, -1));
    MT_OK(MPI_File_sync(fh));

    MT_OK(MPI_File_get_atomicity(fh, &flag));
    MT_CHECK(flag == 0, "atomic by default");
    MT_OK(MPI_File_set_atomicity(fh, 1));
    MT_OK(MPI_File_get_atomicity(fh, &flag));
    MT_CHECK(flag == 1, "atomicity not set");
    if (nprocs > 1)
        MT_ERR(MPI_ERR_NOT_SAME, MPI_File_set_atomicity(fh, rank == 0));
    MT_OK(MPI_File_close(&fh));
    MT_CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left %s", path);
}

static void access_errors(void)
{
    char path[512];
    MPI_File fh;
    MPI_Datatype loose, bad;
    MPI_Status st;
    MPI_Offset off;
    int buf[8] = {0};
    MPI_Request req;

    io_path(path, sizeof(path), "c.dat");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_ERR(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st));
    MT_ERR(MPI_ERR_COUNT, MPI_File_write_at(fh, 0, buf, -1, MPI_INT, &st));
    MT_ERR(MPI_ERR_TYPE,
           MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, &st));
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &loose));
    MT_ERR(MPI_ERR_TYPE, MPI_File_write_at(fh, 0, buf, 1, loose, &st));
    MT_ERR(MPI_ERR_ARG, MPI_File_write_at(fh, -4, buf, 1, MPI_INT, &st));
    MT_ERR(MPI_ERR_ARG, MPI_File_iwrite_at(fh, 0, buf, 1, MPI_INT, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_File_seek(fh, 0, 12345));
    MT_ERR(MPI_ERR_ARG, MPI_File_seek(fh, -1, MPI_SEEK_SET));
    MT_ERR(MPI_ERR_FILE, MPI_File_write(MPI_FILE_NULL, buf, 1, MPI_INT, &st));
    MT_ERR(MPI_ERR_FILE, MPI_File_get_size(MPI_FILE_NULL, &off));
    /* Split collectives: one at a time, and an end needs its begin. */
    MT_ERR(MPI_ERR_OTHER, MPI_File_write_all_end(fh, buf, &st));
    MT_OK(MPI_File_write_all_begin(fh, buf, 1, MPI_INT));
    MT_ERR(MPI_ERR_OTHER, MPI_File_write_at_all_begin(fh, 0, buf, 1, MPI_INT));
    MT_ERR(MPI_ERR_OTHER, MPI_File_write_at_all_end(fh, buf, &st));
    MT_OK(MPI_File_write_all_end(fh, buf, &st));
    /* Views: datareps, etype sizes, decreasing filetypes. */
    MT_ERR(MPI_ERR_UNSUPPORTED_DATAREP,
           MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep",
                             MPI_INFO_NULL));
    MT_ERR(MPI_ERR_ARG, MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native",
                                          MPI_INFO_NULL));
    MT_ERR(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native",
                                           MPI_INFO_NULL));
    {
        int bl[2] = {1, 1}, d[2] = {4, 0};
        MT_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &bad));
        MT_OK(MPI_Type_commit(&bad));
        MT_ERR(MPI_ERR_TYPE,
               MPI_File_set_view(fh, 0, MPI_INT, bad, "native", MPI_INFO_NULL));
        MT_OK(MPI_Type_free(&bad));
    }
    if (nprocs > 1)
        MT_ERR(MPI_ERR_NOT_SAME,
               MPI_File_set_view(fh, 0, rank == 0 ? MPI_INT : MPI_SHORT,
                                 rank == 0 ? MPI_INT : MPI_SHORT, "native",
                                 MPI_INFO_NULL));
    /* "internal" is "native"; an access of part of an etype is refused. */
    MT_OK(
        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
    MT_ERR(MPI_ERR_TYPE, MPI_File_write_at(fh, 0, buf, 1, MPI_SHORT, &st));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&loose));

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                        &fh));
    MT_ERR(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st));
    MT_ERR(MPI_ERR_READ_ONLY, MPI_File_iwrite(fh, buf, 1, MPI_INT, &req));
    MT_ERR(MPI_ERR_READ_ONLY, MPI_File_set_size(fh, 0));
    MT_OK(MPI_File_close(&fh));

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path,
                        MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                        &fh));
    MT_ERR(MPI_ERR_UNSUPPORTED_OPERATION,
           MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st));
    MT_ERR(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void handlers(void)
{
    char path[512], s[MPI_MAX_ERROR_STRING];
    MPI_File fh;
    MPI_Errhandler eh, got;
    MPI_Status st;
    int buf[2], len, rc;

    io_path(path, sizeof(path), "d.dat");
    /* The default: MPI_ERRORS_RETURN, on MPI_FILE_NULL and on new files. */
    MT_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    MT_CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's default handler");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_get_errhandler(fh, &got));
    MT_CHECK(got == MPI_ERRORS_RETURN, "a new file's default handler");
    /* The error string names the call and says what was wrong. */
    rc = MPI_File_read_at(fh, -1, buf, 1, MPI_INT, &st);
    MT_OK(MPI_Error_string(rc, s, &len));
    MT_CHECK(strstr(s, "MPI_File_read_at") != NULL &&
                 strstr(s, "negative") != NULL,
             "error string: %s", s);

    MT_OK(MPI_File_create_errhandler(on_error, &eh));
    MT_OK(MPI_File_set_errhandler(fh, eh));
    handler_calls = 0;
    MT_ERR(MPI_ERR_COUNT, MPI_File_write_at(fh, 0, buf, -2, MPI_INT, &st));
    MT_CHECK(handler_calls == 1 && handler_code == MPI_ERR_COUNT &&
                 handler_file == fh,
             "file handler: %d calls, code %d", handler_calls, handler_code);
    MT_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    MT_CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO,
             "call_errhandler: %d calls, code %d", handler_calls, handler_code);
    MT_OK(MPI_File_get_errhandler(fh, &got));
    MT_CHECK(got == eh, "get_errhandler");
    MT_OK(MPI_Errhandler_free(&got));
    /* A file handler is refused by a communicator. */
    MT_ERR(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MT_OK(MPI_File_close(&fh));

    /* On MPI_FILE_NULL it sees open's failures. */
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_calls = 0;
    MT_ERR(MPI_ERR_NO_SUCH_FILE,
           MPI_File_open(MPI_COMM_WORLD, "/tmp/shoal-no/such/file",
                         MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MT_CHECK(handler_calls == 1 && handler_code == MPI_ERR_NO_SUCH_FILE &&
                 handler_file == MPI_FILE_NULL,
             "MPI_FILE_NULL's handler: %d calls, code %d", handler_calls,
             handler_code);
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MT_OK(MPI_Errhandler_free(&eh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void positions(void)
{
    char path[512];
    MPI_File fh;
    MPI_Offset pos, disp;
    MPI_Datatype ft, et, ft2;
    char rep[MPI_MAX_DATAREP_STRING];

    io_path(path, sizeof(path), "e.dat");
    if (rank == 0) {
        char zeros[100] = {0};
        io_spill(path, zeros, sizeof(zeros));
    }
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* APPEND: the pointers start at the end. */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND,
                        MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == 100, "APPEND: position %lld", pos);
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == 100, "APPEND: shared position %lld", pos);
    /* A view of every other int from byte 8: int k is at 8 + 8 k. */
    MT_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &ft));
    MT_OK(MPI_Type_create_resized(ft, 0, 8, &ft2));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_commit(&ft2));
    MT_OK(MPI_File_set_view(fh, 8, MPI_INT, ft2, "native", MPI_INFO_NULL));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == 0, "set_view did not reset the pointer: %lld", pos);
    MT_OK(MPI_File_get_byte_offset(fh, 5, &disp));
    MT_CHECK(disp == 48, "byte offset of etype 5: %lld", disp);
    /* The end of a 100-byte file: ints at 8, 16, ..., 96: 12 of them. */
    MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == 12, "SEEK_END: %lld", pos);
    MT_OK(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == 10, "SEEK_CUR: %lld", pos);
    MT_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    MT_CHECK(disp == 8 && et == MPI_INT && strcmp(rep, "native") == 0,
             "get_view: %lld %s", disp, rep);
    {
        MPI_Aint lb, ext;
        MT_OK(MPI_Type_get_extent(ft, &lb, &ext));
        MT_CHECK(ext == 8, "the view's filetype has extent %ld", (long)ext);
        MT_OK(MPI_File_get_type_extent(fh, ft, &ext));
        MT_CHECK(ext == 8, "get_type_extent %ld", (long)ext);
    }
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Type_free(&ft2));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* The large-count forms and Fortran handles. */
static void large_count_forms(void)
{
    char path[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Count got = -1, ext = 0;
    int out[8], in[8];

    io_path(path, sizeof(path), "f.dat");
    for (int i = 0; i < 8; i++)
        out[i] = rank * 8 + i;
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fh));
    MT_CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "File_c2f/f2c");
    MT_CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0, "File_c2f of MPI_FILE_NULL");
    MT_OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * 32, out, 4, MPI_INT, &st));
    MT_OK(MPI_Get_count_c(&st, MPI_INT, &got));
    MT_CHECK(got == 4, "write_at_c count %lld", got);
    MT_OK(MPI_File_seek(fh, (MPI_Offset)rank * 32 + 16, MPI_SEEK_SET));
    MT_OK(MPI_File_write_all_c(fh, out + 4, 4, MPI_INT, &st));
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_File_iread_at_c(fh, (MPI_Offset)rank * 32, in, 8, MPI_INT, &req));
    MT_OK(MPI_Wait(&req, &st));
    MT_OK(MPI_Get_count_c(&st, MPI_INT, &got));
    MT_CHECK(got == 8, "iread_at_c count %lld", got);
    for (int i = 0; i < 8; i++)
        MT_CHECK(in[i] == out[i], "int %d: %d", i, in[i]);
    MT_OK(MPI_File_read_at_all_begin_c(fh, (MPI_Offset)rank * 32, in, 2,
                                       MPI_INT));
    MT_OK(MPI_File_read_at_all_end(fh, in, &st));
    MT_OK(MPI_Get_count_c(&st, MPI_INT, &got));
    MT_CHECK(got == 2, "read_at_all_begin_c count %lld", got);
    MT_OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ext));
    MT_CHECK(ext == 8, "get_type_extent_c %lld", ext);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MT_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    io_dir_make("basic");
    open_errors();
    sizes_and_queries();
    access_errors();
    handlers();
    positions();
    large_count_forms();
    io_dir_remove();
    if (rank == 0)
        printf("io_basic at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
