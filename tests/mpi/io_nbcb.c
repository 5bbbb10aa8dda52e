/*
 * Nonblocking collective access through two-phase collective buffering
 * (src/io/io_twophase.c, io_twophase_start): romio_cb_write and
 * romio_cb_read enabled, 2 aggregators (cb_nodes), rounds of 100 bytes of
 * file (cb_buffer_size), so every access is many rounds.
 *
 * - Data: through a contiguous view (iwrite_at_all, iread_at_all), a
 *   vector view and a subarray view (iwrite_all moving the individual
 *   pointer, iread_at_all_c), three accesses outstanding at once on each
 *   of two files (six requests in one MPI_Waitall); statuses count the
 *   bytes; every byte of the files checked against the test's own image,
 *   and every byte read back.
 * - Not done before a peer has called (2 ranks and more): rank 0 starts
 *   iwrite_at_all (then iread_at_all) while the other ranks wait for
 *   rank 0's word; MPI_Test must say not done, the call must have returned
 *   (a call that did the work would wait for the others, which would call
 *   after 10 s without the word, and rank 0 would then see its request
 *   complete: the test fails).
 * - Not done while the IO cannot have run: each rank's IO thread is held
 *   by an access of another handle waiting for a lock another process
 *   holds; an iwrite_at_all and an iread_at_all queued behind it stay not done
 *   under MPI_Test (the file untouched) until the lock goes, then
 *   complete with every byte.
 * - Draining: a blocking collective and close on a file with accesses
 *   outstanding finish them first (one completed after close, one whose
 *   request was freed), their bytes checked.
 * - external32: a vector of ints through an "external32" view, written and
 *   read back through the aggregators in the background (not done before
 *   a peer has called, at 2 ranks and more), the file checked for
 *   big-endian values; a rank whose longs do not fit external32's 4
 *   bytes gets MPI_ERR_CONVERSION through its request while the others'
 *   accesses complete.
 * - A user representation (MPI_Register_datarep): ints written and read
 *   back through the aggregators in the background (not done before a
 *   peer has called), the write conversion called at the call, the read
 *   conversion after the data came, in the IO thread; a read conversion
 *   failing on one rank fails its request only (userrep, below).
 * - Errors: a write past RLIMIT_FSIZE fails on the aggregators; every
 *   rank's request fails with MPI_ERR_NO_SPACE (MPI_Wait, and MPI_Test)
 *   and the file's error handler is called; a nonblocking collective
 *   write of a read-only file fails in the call with MPI_ERR_READ_ONLY.
 *
 * With argv[1] "double" all of it runs double-buffered
 * (shoal_cb_double_buffer=enable: an aggregator's round k + 1 comes in
 * while round k's IO runs).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "io_test.h"

#define N 1000 /* bytes per rank and access */
#define K 3    /* accesses outstanding at once per file */
#define VB 10  /* vector: block bytes (N / VB blocks per filetype) */
#define SC 20  /* subarray: columns per rank (N / SC rows) */

enum { CONTIG, VECTOR, SUBARRAY, NKINDS };
static const char *const kind_name[] = {"contiguous", "vector", "subarray"};

static int rank, nprocs;
static int double_buffer; /* argv[1] "double": shoal_cb_double_buffer on */

static unsigned char val(int r, int k, int i, unsigned salt)
{
    return (unsigned char)(r * 131u + k * 31u + i * 7u + (i >> 8) + salt);
}

/* The file offset of stream byte s of rank r through view kind. */
static long long file_of(int kind, int r, long long s)
{
    long long t, j;

    switch (kind) {
    case CONTIG: /* access k at offset (k * nprocs + r) * N */
        return (s / N * nprocs + r) * N + s % N;
    case VECTOR:
        t = s / N;
        j = s % N;
        return (long long)r * VB + t * nprocs * N + j / VB * nprocs * VB +
               j % VB;
    default:
        t = s / N;
        j = s % N;
        return t * N * nprocs + j / SC * SC * nprocs + (long long)r * SC +
               j % SC;
    }
}

static void set_view(MPI_File fh, int kind)
{
    MPI_Datatype ft, t;

    if (kind == CONTIG) {
        MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
                                MPI_INFO_NULL));
        return;
    }
    if (kind == VECTOR) {
        MT_OK(MPI_Type_vector(N / VB, VB, nprocs * VB, MPI_BYTE, &t));
        MT_OK(MPI_Type_create_resized(t, 0, (MPI_Aint)nprocs * N, &ft));
        MT_OK(MPI_Type_free(&t));
        MT_OK(MPI_Type_commit(&ft));
        MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * VB, MPI_BYTE, ft,
                                "native", MPI_INFO_NULL));
    } else {
        int sizes[2] = {N / SC, SC * nprocs}, sub[2] = {N / SC, SC},
            start[2] = {0, rank * SC};
        MT_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C,
                                       MPI_BYTE, &ft));
        MT_OK(MPI_Type_commit(&ft));
        MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native",
                                MPI_INFO_NULL));
    }
    MT_OK(MPI_Type_free(&ft));
}

static MPI_Info cb_info(void)
{
    MPI_Info info;

    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    MT_OK(MPI_Info_set(info, "romio_cb_read", "enable"));
    MT_OK(MPI_Info_set(info, "cb_nodes", "2"));
    MT_OK(MPI_Info_set(info, "cb_buffer_size", "100"));
    if (double_buffer)
        MT_OK(MPI_Info_set(info, "shoal_cb_double_buffer", "enable"));
    return info;
}

static MPI_File open_cb(const char *path, int amode)
{
    MPI_Info info = cb_info();
    MPI_File fh;

    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    MT_OK(MPI_Info_free(&info));
    return fh;
}

/* Start K writes (wr) or reads of N bytes each through kind's view. */
static void start(MPI_File fh, int kind, int wr, unsigned char *b,
                  MPI_Request *r)
{
    for (int k = 0; k < K; k++) {
        unsigned char *p = b + (size_t)k * N;
        if (kind == CONTIG) {
            MPI_Offset off = ((MPI_Offset)k * nprocs + rank) * N;
            if (wr)
                MT_OK(MPI_File_iwrite_at_all(fh, off, p, N, MPI_BYTE, &r[k]));
            else
                MT_OK(MPI_File_iread_at_all(fh, off, p, N, MPI_BYTE, &r[k]));
        } else if (wr) {
            MT_OK(MPI_File_iwrite_all(fh, p, N, MPI_BYTE, &r[k]));
        } else {
            MT_OK(MPI_File_iread_at_all_c(fh, (MPI_Offset)k * N, p, N,
                                          MPI_BYTE, &r[k]));
        }
    }
}

/* Rank 0: the file holds what every rank wrote through kind's view. */
static void check_file(const char *path, int kind, unsigned salt)
{
    size_t n;
    unsigned char *f;

    if (rank != 0)
        return;
    f = io_slurp(path, &n);
    MT_CHECK(n == (size_t)nprocs * K * N, "%s: file of %zu bytes, want %d",
             kind_name[kind], n, nprocs * K * N);
    for (int r = 0; r < nprocs; r++)
        for (long long s = 0; s < (long long)K * N; s++) {
            long long o = file_of(kind, r, s);
            unsigned char want = val(r, (int)(s / N), (int)(s % N), salt);
            MT_CHECK(f[o] == want,
                     "%s view: file byte %lld (rank %d's stream byte %lld) "
                     "is %d, want %d",
                     kind_name[kind], o, r, s, f[o], want);
        }
    free(f);
}

/* Writes then reads, K at once on each of two files (one contiguous, one
 * through a vector or subarray view). */
static void data(const char *dir_a, const char *dir_b, int kind)
{
    MPI_File fa, fb;
    MPI_Request r[2 * K];
    MPI_Status st[2 * K];
    unsigned char *wa = malloc(K * N), *wb = malloc(K * N);
    unsigned char *ra = calloc(1, K * N), *rb = calloc(1, K * N);
    unsigned salt = 3u * (unsigned)kind;
    MPI_Offset p;

    MT_CHECK(wa && wb && ra && rb, "malloc");
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) {
            wa[k * N + i] = val(rank, k, i, salt + 1);
            wb[k * N + i] = val(rank, k, i, salt);
        }
    fa = open_cb(dir_a, MPI_MODE_RDWR | MPI_MODE_CREATE);
    fb = open_cb(dir_b, MPI_MODE_RDWR | MPI_MODE_CREATE);
    set_view(fa, CONTIG);
    set_view(fb, kind);
    start(fa, CONTIG, 1, wa, r);
    start(fb, kind, 1, wb, r + K);
    /* The pointer moved at the calls. */
    MT_OK(MPI_File_get_position(fb, &p));
    MT_CHECK(kind == CONTIG || p == (MPI_Offset)K * N,
             "%s: pointer at %lld after %d iwrite_all, want %d",
             kind_name[kind], (long long)p, K, K * N);
    MT_OK(MPI_Waitall(2 * K, r, st));
    for (int i = 0; i < 2 * K; i++) {
        int c;
        MT_OK(MPI_Get_count(&st[i], MPI_BYTE, &c));
        MT_CHECK(c == N, "%s: write %d counted %d bytes", kind_name[kind], i,
                 c);
    }
    MT_OK(MPI_File_sync(fa));
    MT_OK(MPI_File_sync(fb));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_file(dir_a, CONTIG, salt + 1);
    check_file(dir_b, kind, salt);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fa));
    MT_OK(MPI_File_sync(fb));
    start(fa, CONTIG, 0, ra, r);
    start(fb, kind, 0, rb, r + K);
    /* Completed out of order: each one's rounds are its own. */
    for (int i = 2 * K - 1; i >= 0; i--) {
        int c;
        MT_OK(MPI_Wait(&r[i], &st[i]));
        MT_OK(MPI_Get_count(&st[i], MPI_BYTE, &c));
        MT_CHECK(c == N, "%s: read %d counted %d bytes", kind_name[kind], i,
                 c);
    }
    for (int i = 0; i < K * N; i++) {
        MT_CHECK(ra[i] == wa[i], "contiguous read byte %d: %d, want %d", i,
                 ra[i], wa[i]);
        MT_CHECK(rb[i] == wb[i], "%s read byte %d: %d, want %d",
                 kind_name[kind], i, rb[i], wb[i]);
    }
    MT_OK(MPI_File_close(&fa));
    MT_OK(MPI_File_close(&fb));
    free(wa);
    free(wb);
    free(ra);
    free(rb);
}

/* Test r tries times, sleeping 2 ms between: did one say done? */
static int tests_done(MPI_Request *r, int tries, MPI_Status *st)
{
    int flag = 0;

    for (int i = 0; i < tries && !flag; i++) {
        MT_OK(MPI_Test(r, &flag, st));
        if (!flag)
            usleep(2000);
    }
    return flag;
}

/* Until rank 0's word comes (or 10 s pass: rank 0 is stuck in its call). */
static void await_word(int tag)
{
    MPI_Request r;
    int flag = 0, w;

    MT_OK(MPI_Irecv(&w, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &r));
    for (int i = 0; i < 5000 && !flag; i++) {
        MT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        if (!flag)
            usleep(2000);
    }
    if (!flag) {
        /* Go on anyway: rank 0 then finds its request complete. */
        MT_OK(MPI_Cancel(&r));
        MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
}

/* A peer that has not called yet: rank 0's request stays not done. */
static void early(const char *path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    unsigned char *b = malloc(N), *in = calloc(1, N);
    int c;

    MT_CHECK(b && in, "malloc");
    for (int i = 0; i < N; i++)
        b[i] = val(rank, 9, i, 77);
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    for (int wr = 1; wr >= 0; wr--) {
        if (rank == 0) {
            if (wr)
                MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N, b, N,
                                             MPI_BYTE, &r));
            else
                MT_OK(MPI_File_iread_at_all(fh, (MPI_Offset)rank * N, in, N,
                                            MPI_BYTE, &r));
            MT_CHECK(!tests_done(&r, 50, &st),
                     "%s completed before the other ranks called it (or "
                     "the call waited for them)",
                     wr ? "iwrite_at_all" : "iread_at_all");
            for (int p = 1; p < nprocs; p++)
                MT_OK(MPI_Send(&wr, 1, MPI_INT, p, 40 + wr, MPI_COMM_WORLD));
        } else {
            await_word(40 + wr);
            if (wr)
                MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N, b, N,
                                             MPI_BYTE, &r));
            else
                MT_OK(MPI_File_iread_at_all(fh, (MPI_Offset)rank * N, in, N,
                                            MPI_BYTE, &r));
        }
        MT_OK(MPI_Wait(&r, &st));
        MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
        MT_CHECK(c == N, "count %d", c);
        if (wr) {
            MT_OK(MPI_File_sync(fh));
            MT_OK(MPI_Barrier(MPI_COMM_WORLD));
            MT_OK(MPI_File_sync(fh));
        }
    }
    MT_CHECK(memcmp(in, b, N) == 0, "early: read back differs");
    MT_OK(MPI_File_close(&fh));
    free(b);
    free(in);
}

/* external32 through the aggregators in the background (see the top). */
#define NI 250 /* ints per rank */
/* Rank r's int i, mul * (r + 1) + i * step, in the file as 4 bytes
 * big-endian xor x where ext32() and userrep()'s vector view put it
 * (blocks of 10 ints, every nprocs-th block). */
static unsigned int_of(unsigned mul, unsigned step, int r, int i)
{
    return mul * (unsigned)(r + 1) + (unsigned)i * step;
}

static void check_be_ints(const char *what, const char *path, unsigned mul,
                          unsigned step, unsigned x)
{
    size_t n = 0;
    unsigned char *f = io_slurp(path, &n);

    MT_CHECK(f != NULL, "%s: cannot read the file back", what);
    for (int r2 = 0; r2 < nprocs; r2++)
        for (int i = 0; i < NI; i++) {
            unsigned v = int_of(mul, step, r2, i) ^ x;
            size_t at = ((size_t)(i / 10) * nprocs * 10 + (size_t)r2 * 10 +
                         (size_t)(i % 10)) * 4;
            MT_CHECK(at + 4 <= n && f[at] == (unsigned char)(v >> 24) &&
                         f[at + 1] == (unsigned char)(v >> 16) &&
                         f[at + 2] == (unsigned char)(v >> 8) &&
                         f[at + 3] == (unsigned char)v,
                     "%s: rank %d's int %d is not as converted in the file",
                     what, r2, i);
        }
    free(f);
}

static void ext32(const char *path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    MPI_Datatype ft;
    int out[NI], in[NI], c;
    long big[4] = {1, 2, 3, 4};

    for (int i = 0; i < NI; i++)
        out[i] = (int)int_of(0x01020304u, 977u, rank, i);
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    /* rank r's ints: blocks of 10 ints, every nprocs-th block */
    MT_OK(MPI_Type_vector(NI / 10, 10, 10 * nprocs, MPI_INT, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * 10 * 4, MPI_INT, ft,
                            "external32", MPI_INFO_NULL));
    for (int wr = 1; wr >= 0; wr--) {
        memset(in, 0, sizeof(in));
        if (rank == 0 || nprocs == 1) {
            if (wr)
                MT_OK(MPI_File_iwrite_at_all(fh, 0, out, NI, MPI_INT, &r));
            else
                MT_OK(MPI_File_iread_at_all(fh, 0, in, NI, MPI_INT, &r));
            if (nprocs > 1) {
                MT_CHECK(!tests_done(&r, 50, &st),
                         "external32: %s completed before the other ranks "
                         "called it (or the call waited for them)",
                         wr ? "iwrite_at_all" : "iread_at_all");
                for (int p = 1; p < nprocs; p++)
                    MT_OK(MPI_Send(&wr, 1, MPI_INT, p, 50 + wr,
                                   MPI_COMM_WORLD));
            }
        } else {
            await_word(50 + wr);
            if (wr)
                MT_OK(MPI_File_iwrite_at_all(fh, 0, out, NI, MPI_INT, &r));
            else
                MT_OK(MPI_File_iread_at_all(fh, 0, in, NI, MPI_INT, &r));
        }
        MT_OK(MPI_Wait(&r, &st));
        MT_OK(MPI_Get_count(&st, MPI_INT, &c));
        MT_CHECK(c == NI, "external32: count %d, not %d", c, NI);
        if (wr) {
            MT_OK(MPI_File_sync(fh));
            MT_OK(MPI_Barrier(MPI_COMM_WORLD));
            MT_OK(MPI_File_sync(fh));
        }
    }
    MT_CHECK(memcmp(in, out, sizeof(in)) == 0,
             "external32: read back differs");
    /* A long beyond 32 bits on rank 0 only: its request fails, the
     * others' go through. */
    if (rank == 0)
        big[2] = 1L << 40;
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)nprocs * NI * 4, MPI_LONG,
                            MPI_LONG, "external32", MPI_INFO_NULL));
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * 4, big, 4, MPI_LONG,
                                 &r));
    int rc = MPI_Wait(&r, &st), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (rank == 0)
        MT_CHECK(cls == MPI_ERR_CONVERSION,
                 "external32: a long beyond 32 bits gave class %d, not "
                 "MPI_ERR_CONVERSION", cls);
    else
        MT_CHECK(rc == MPI_SUCCESS, "external32: rank %d's longs failed",
                 rank);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) /* the ints, big-endian */
        check_be_ints("external32", path, 0x01020304u, 977u, 0);
}

/* A child holding an exclusive lock over [off, off + len) of path until
 * a byte comes on *release (or hold_ms pass); its pid once locked. */
/* A user representation: an int is 4 bytes, big-endian, xor USER_XOR. */
#define USER_XOR 0x5a3c96e1u
static int user_writes; /* calls of the write conversion on this rank */
/* Calls of the read conversion on this rank (atomic: the IO thread may
 * make them), a read conversion made to fail here, and whether one ran
 * in the thread that called MPI_Init (it must not: it runs in the
 * background, outside the progress engine). */
static int user_reads, user_read_fail, user_read_main;
static pthread_t main_thread;

static int xor_write(void *user, MPI_Datatype dt, int count, void *file,
                     MPI_Offset position, void *extra)
{
    const int *u = (const int *)user + position;
    unsigned char *f = file;

    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    user_writes++;
    for (int i = 0; i < count; i++) {
        unsigned v = (unsigned)u[i] ^ USER_XOR;
        for (int b = 0; b < 4; b++)
            f[4 * i + b] = (unsigned char)(v >> (24 - 8 * b));
    }
    return MPI_SUCCESS;
}

static int xor_read(void *user, MPI_Datatype dt, int count, void *file,
                    MPI_Offset position, void *extra)
{
    int *u = (int *)user + position, size = 0;
    const unsigned char *f = file;

    (void)extra;
    __atomic_add_fetch(&user_reads, 1, __ATOMIC_SEQ_CST);
    if (pthread_equal(pthread_self(), main_thread))
        __atomic_store_n(&user_read_main, 1, __ATOMIC_SEQ_CST);
    /* A conversion function may call MPI (here to look at the type). */
    if (MPI_Type_size(dt, &size) != MPI_SUCCESS || size != 4)
        return MPI_ERR_TYPE;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    if (__atomic_load_n(&user_read_fail, __ATOMIC_SEQ_CST))
        return MPI_ERR_OTHER;
    for (int i = 0; i < count; i++) {
        unsigned v = 0;
        for (int b = 0; b < 4; b++)
            v = v << 8 | f[4 * i + b];
        u[i] = (int)(v ^ USER_XOR);
    }
    return MPI_SUCCESS;
}

static int xor_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    int size;

    (void)extra;
    MPI_Type_size(dt, &size);
    *ext = size;
    return MPI_SUCCESS;
}

/*
 * Nonblocking collective access through the aggregators in a user
 * representation runs in the background as external32's does.  A write's
 * values are converted at the call (the write conversion called there, in
 * the caller's thread), the exchange and IO after it, so rank 0's request
 * is not done before the others call.  A read returns at once too, not
 * done before the others call, and its read conversion is called once the
 * data are in, in the IO thread (not the caller's: never inside the
 * progress engine, as the function may call MPI, which it does here);
 * the values read back and the file's bytes checked.  A read conversion
 * that fails on rank 0 fails only rank 0's request, with
 * MPI_ERR_CONVERSION.
 */
static void userrep(const char *path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    MPI_Datatype ft;
    int out[NI], in[NI], c;

    MT_OK(MPI_Register_datarep("shoal-nbcb-xor", xor_read, xor_write,
                               xor_extent, NULL));
    for (int i = 0; i < NI; i++)
        out[i] = (int)int_of(0x0a0b0c0du, 131u, rank, i);
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MT_OK(MPI_Type_vector(NI / 10, 10, 10 * nprocs, MPI_INT, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, (MPI_Offset)rank * 10 * 4, MPI_INT, ft,
                            "shoal-nbcb-xor", MPI_INFO_NULL));
    if (rank == 0 || nprocs == 1) {
        MT_OK(MPI_File_iwrite_at_all(fh, 0, out, NI, MPI_INT, &r));
        MT_CHECK(user_writes > 0, "user representation: the write "
                 "conversion was not called at the call");
        if (nprocs > 1) {
            MT_CHECK(!tests_done(&r, 50, &st),
                     "user representation: iwrite_at_all completed before "
                     "the other ranks called it (or the call waited for "
                     "them)");
            int w = 1;
            for (int p = 1; p < nprocs; p++)
                MT_OK(MPI_Send(&w, 1, MPI_INT, p, 60, MPI_COMM_WORLD));
        }
    } else {
        await_word(60);
        MT_OK(MPI_File_iwrite_at_all(fh, 0, out, NI, MPI_INT, &r));
    }
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &c));
    MT_CHECK(c == NI, "user representation: count %d, not %d", c, NI);
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));
    memset(in, 0, sizeof(in));
    if (rank == 0 || nprocs == 1) {
        MT_OK(MPI_File_iread_at_all(fh, 0, in, NI, MPI_INT, &r));
        if (nprocs > 1) {
            MT_CHECK(!tests_done(&r, 50, &st),
                     "user representation: iread_at_all completed before "
                     "the other ranks called it (or the call waited for "
                     "them)");
            MT_CHECK(__atomic_load_n(&user_reads, __ATOMIC_SEQ_CST) == 0,
                     "user representation: the read conversion was called "
                     "before the data came");
            int w = 1;
            for (int p = 1; p < nprocs; p++)
                MT_OK(MPI_Send(&w, 1, MPI_INT, p, 61, MPI_COMM_WORLD));
        }
    } else {
        await_word(61);
        MT_OK(MPI_File_iread_at_all(fh, 0, in, NI, MPI_INT, &r));
    }
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_INT, &c));
    MT_CHECK(c == NI, "user representation: read count %d, not %d", c, NI);
    MT_CHECK(__atomic_load_n(&user_reads, __ATOMIC_SEQ_CST) == 1,
             "user representation: %d calls of the read conversion, not 1",
             user_reads);
    MT_CHECK(!__atomic_load_n(&user_read_main, __ATOMIC_SEQ_CST),
             "user representation: the read conversion ran in the caller's "
             "thread (inside the call or the progress engine), not in the "
             "background");
    MT_CHECK(memcmp(in, out, sizeof(in)) == 0,
             "user representation: read back differs");
    /* A read conversion failing on rank 0 only. */
    __atomic_store_n(&user_read_fail, rank == 0, __ATOMIC_SEQ_CST);
    MT_OK(MPI_File_iread_at_all(fh, 0, in, NI, MPI_INT, &r));
    {
        int rc = MPI_Wait(&r, &st), cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (rank == 0)
            MT_CHECK(cls == MPI_ERR_CONVERSION,
                     "user representation: a failing read conversion gave "
                     "class %d, not MPI_ERR_CONVERSION",
                     cls);
        else
            MT_CHECK(rc == MPI_SUCCESS,
                     "user representation: rank %d's read failed", rank);
    }
    __atomic_store_n(&user_read_fail, 0, __ATOMIC_SEQ_CST);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Type_free(&ft));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        check_be_ints("user representation", path, 0x0a0b0c0du, 131u,
                      USER_XOR);
}

static pid_t locker(const char *path, off_t off, off_t len, int *release,
                    int hold_ms)
{
    int up[2], down[2];
    char c;
    pid_t pid;

    MT_CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe");
    pid = fork();
    MT_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                           .l_start = off, .l_len = len};
        struct pollfd p = {down[0], POLLIN, 0};
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0)
            _exit(1);
        if (write(up[1], "L", 1) != 1)
            _exit(1);
        poll(&p, 1, hold_ms);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    MT_CHECK(read(up[0], &c, 1) == 1 && c == 'L', "locker did not lock");
    close(up[0]);
    *release = down[1];
    return pid;
}

static void unlocker(pid_t pid, int release)
{
    int st;

    MT_CHECK(write(release, "U", 1) == 1, "release the locker");
    close(release);
    MT_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                 WEXITSTATUS(st) == 0,
             "locker failed");
}

/* The IO thread held by another handle's access waiting for a lock: the
 * collective accesses behind it cannot have done their IO. */
static void held(const char *path, const char *lockpath)
{
    MPI_File fh, g;
    MPI_Request r, rg;
    MPI_Status st;
    unsigned char *b = malloc(N), *in = calloc(1, N), *z = calloc(1, N);
    char lp[600];
    int release, c;
    pid_t pid;

    MT_CHECK(b && in && z, "malloc");
    for (int i = 0; i < N; i++)
        b[i] = val(rank, 5, i, 11);
    snprintf(lp, sizeof(lp), "%s.%d", lockpath, rank);
    MT_OK(MPI_File_open(MPI_COMM_SELF, lp, MPI_MODE_RDWR | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &g));
    MT_OK(MPI_File_set_atomicity(g, 1));
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));

    pid = locker(lp, 0, N, &release, 20000);
    MT_OK(MPI_File_iwrite_at(g, 0, z, N, MPI_BYTE, &rg));
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N, b, N, MPI_BYTE,
                                 &r));
    MT_CHECK(!tests_done(&r, 100, &st),
             "iwrite_at_all completed while the IO thread was held");
    if (rank == 0) {
        size_t n;
        unsigned char *f = io_slurp(path, &n);
        MT_CHECK(n == 0, "the file has %zu bytes before the IO ran", n);
        free(f);
    }
    /* Everyone has looked before any lock goes. */
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    unlocker(pid, release);
    MT_OK(MPI_Wait(&rg, MPI_STATUS_IGNORE));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "held write counted %d", c);
    MT_OK(MPI_File_sync(fh));
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(MPI_File_sync(fh));

    pid = locker(lp, 0, N, &release, 20000);
    MT_OK(MPI_File_iwrite_at(g, 0, z, N, MPI_BYTE, &rg));
    MT_OK(MPI_File_iread_at_all(fh, (MPI_Offset)rank * N, in, N, MPI_BYTE,
                                &r));
    MT_CHECK(!tests_done(&r, 100, &st),
             "iread_at_all completed while the IO thread was held");
    for (int i = 0; i < N; i++)
        MT_CHECK(in[i] == 0, "byte %d read before the IO ran", i);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    unlocker(pid, release);
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Wait(&rg, MPI_STATUS_IGNORE));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "held read counted %d", c);
    MT_CHECK(memcmp(in, b, N) == 0, "held: read back differs");
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_File_close(&g));
    unlink(lp);
    free(b);
    free(in);
    free(z);
}

/* Calls that use the file wait for the outstanding accesses first: a
 * blocking collective, close (the request then completes after it), and
 * a freed request's access still happens. */
static void drain(const char *path)
{
    MPI_File fh;
    MPI_Request r1, r3, r4;
    MPI_Status st;
    unsigned char *b = malloc(4 * N), *in = calloc(1, 4 * N);
    int c;

    MT_CHECK(b && in, "malloc");
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < N; i++)
            b[k * N + i] = val(rank, k, i, 99);
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N, b, N, MPI_BYTE,
                                 &r1));
    MT_OK(MPI_File_write_at_all(fh, ((MPI_Offset)nprocs + rank) * N, b + N,
                                N, MPI_BYTE, MPI_STATUS_IGNORE));
    MT_OK(MPI_Wait(&r1, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "drain: first write counted %d", c);
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)(2 * nprocs + rank) * N,
                                 b + 2 * N, N, MPI_BYTE, &r3));
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)(3 * nprocs + rank) * N,
                                 b + 3 * N, N, MPI_BYTE, &r4));
    MT_OK(MPI_Request_free(&r4));
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Wait(&r3, &st));
    MT_OK(MPI_Get_count(&st, MPI_BYTE, &c));
    MT_CHECK(c == N, "drain: write completed after close counted %d", c);
    MT_OK(MPI_Barrier(MPI_COMM_WORLD));
    fh = open_cb(path, MPI_MODE_RDONLY);
    for (int k = 0; k < 4; k++)
        MT_OK(MPI_File_read_at_all(fh, ((MPI_Offset)k * nprocs + rank) * N,
                                   in + k * N, N, MPI_BYTE, &st));
    MT_CHECK(memcmp(in, b, 4 * N) == 0, "drain: read back differs");
    MT_OK(MPI_File_close(&fh));
    free(b);
    free(in);
}

static int eh_calls, eh_class;
static MPI_File eh_file;

static void count_errors(MPI_File *f, int *code, ...)
{
    eh_calls++;
    eh_file = *f;
    MPI_Error_class(*code, &eh_class);
}

static void errors(const char *path)
{
    MPI_File fh;
    MPI_Request r;
    MPI_Status st;
    MPI_Errhandler eh;
    struct rlimit old, lim;
    unsigned char *b = calloc(1, N);
    int cls, flag;

    MT_CHECK(b != NULL, "malloc");
    fh = open_cb(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MT_OK(MPI_File_create_errhandler(count_errors, &eh));
    MT_OK(MPI_File_set_errhandler(fh, eh));
    MT_CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    /* Past the limit: the aggregators' writes fail, every rank hears. */
    MT_OK(MPI_File_iwrite_at_all(fh, 8192 + (MPI_Offset)rank * N, b, N,
                                 MPI_BYTE, &r));
    cls = MPI_Wait(&r, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_NO_SPACE, "write past RLIMIT_FSIZE: class %d",
             cls);
    MT_CHECK(eh_calls == 1 && eh_file == fh && eh_class == MPI_ERR_NO_SPACE,
             "MPI_Wait: handler called %d times, class %d", eh_calls,
             eh_class);
    /* The same under MPI_Test. */
    MT_OK(MPI_File_iwrite_all(fh, b, 0, MPI_BYTE, &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_File_iwrite_at_all(fh, 8192 + (MPI_Offset)rank * N, b, N,
                                 MPI_BYTE, &r));
    for (flag = 0, cls = MPI_SUCCESS; !flag && cls == MPI_SUCCESS;)
        cls = MPI_Test(&r, &flag, &st);
    MPI_Error_class(cls, &cls);
    MT_CHECK(flag && cls == MPI_ERR_NO_SPACE, "Test: flag %d class %d", flag,
             cls);
    MT_CHECK(eh_calls == 2 && eh_class == MPI_ERR_NO_SPACE,
             "MPI_Test: handler called %d times, class %d", eh_calls,
             eh_class);
    MT_CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
    signal(SIGXFSZ, SIG_DFL);
    /* Within the limit again: fine. */
    MT_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N, b, N, MPI_BYTE,
                                 &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_File_close(&fh));

    /* A read-only file: refused in the call, through the handler. */
    fh = open_cb(path, MPI_MODE_RDONLY);
    MT_OK(MPI_File_set_errhandler(fh, eh));
    r = MPI_REQUEST_NULL;
    cls = MPI_File_iwrite_all(fh, b, N, MPI_BYTE, &r);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_READ_ONLY && r == MPI_REQUEST_NULL,
             "iwrite_all of a read-only file: class %d", cls);
    MT_CHECK(eh_calls == 3 && eh_class == MPI_ERR_READ_ONLY,
             "read-only: handler called %d times, class %d", eh_calls,
             eh_class);
    /* A bad request argument. */
    cls = MPI_File_iread_all(fh, b, N, MPI_BYTE, NULL);
    MPI_Error_class(cls, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "NULL request: class %d", cls);
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_Errhandler_free(&eh));
    free(b);
}

int main(int argc, char **argv)
{
    char a[512], b[512], l[512];

    MPI_Init(&argc, &argv);
    double_buffer = argc > 1 && strcmp(argv[1], "double") == 0;
    main_thread = pthread_self();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make("nbcb");
    for (int kind = VECTOR; kind < NKINDS; kind++) {
        char na[32], nb[32];
        snprintf(na, sizeof(na), "a%d.dat", kind);
        snprintf(nb, sizeof(nb), "b%d.dat", kind);
        io_path(a, sizeof(a), na);
        io_path(b, sizeof(b), nb);
        data(a, b, kind);
    }
    if (nprocs > 1) {
        io_path(a, sizeof(a), "early.dat");
        early(a);
    }
    io_path(a, sizeof(a), "ext32.dat");
    ext32(a);
    io_path(a, sizeof(a), "userrep.dat");
    userrep(a);
    io_path(a, sizeof(a), "drain.dat");
    drain(a);
    io_path(a, sizeof(a), "held.dat");
    io_path(l, sizeof(l), "lock.dat");
    held(a, l);
    io_path(a, sizeof(a), "err.dat");
    errors(a);
    io_dir_remove();
    if (rank == 0)
        printf("io_nbcb at %d ranks: ok\n", nprocs);
    MPI_Finalize();
    return 0;
}
