/*
 * The engine under the MPI calls (linked with the internal library): the
 * cursor started at every offset and driven in odd chunk sizes must
 * reproduce the full packing, iov blocks must describe the same bytes,
 * element counts of partial streams, typed copies, the CONTIG flag, and
 * references keeping a freed type alive.
 */
#include <stddef.h>

#include "mpi/dt/dt.h"
#include "dt_test.h"

#define BUF 8192

static unsigned char src[BUF], full[BUF], part[BUF], dst[BUF];

/* Pack everything at once with the cursor. */
static MPI_Count pack_all(MPI_Datatype t, int count, const void *buf)
{
    mpi_dt_cursor_t c;

    mpi_dt_cursor_init(&c, t, count, buf, 0);
    return mpi_dt_cursor_pack(&c, full, BUF);
}

static void check_cursor(const char *what, MPI_Datatype t, int count,
                         MPI_Aint origin)
{
    MPI_Count total = pack_all(t, count, src + origin), skip, got, n;
    mpi_dt_cursor_t c;
    struct iovec iov[4];
    int niov, i, chunk;

    DTT_CHECK(total == count * t->size, "%s: packed %lld", what, total);
    /* Start anywhere; continue in chunks of 1..7 bytes. */
    for (skip = 0; skip <= total; skip++) {
        mpi_dt_cursor_init(&c, t, count, src + origin, skip);
        for (got = skip, chunk = 1; got < total;
             got += n, chunk = chunk % 7 + 1) {
            n = mpi_dt_cursor_pack(&c, part + got, chunk);
            DTT_CHECK(n > 0, "%s: stalled at %lld", what, got);
        }
        DTT_CHECK(mpi_dt_cursor_pack(&c, part, 5) == 0, "%s: past the end",
                  what);
        DTT_CHECK(memcmp(part + skip, full + skip, (size_t)(total - skip)) == 0,
                  "%s: packing from offset %lld differs", what, skip);
    }
    /* iov in groups of at most 4 blocks, 13 bytes. */
    mpi_dt_cursor_init(&c, t, count, src + origin, 0);
    for (got = 0; got < total;) {
        n = mpi_dt_cursor_iov(&c, iov, 4, 13, &niov);
        DTT_CHECK(n > 0 && n <= 13 && niov >= 1 && niov <= 4, "%s: iov", what);
        for (i = 0; i < niov; i++) {
            memcpy(part + got, iov[i].iov_base, iov[i].iov_len);
            got += (MPI_Count)iov[i].iov_len;
        }
    }
    DTT_CHECK(memcmp(part, full, (size_t)total) == 0, "%s: iov bytes differ",
              what);
    /* Unpack in chunks into a zeroed buffer, then pack again. */
    memset(dst, 0, sizeof(dst));
    mpi_dt_cursor_init(&c, t, count, dst + origin, 0);
    for (got = 0; got < total; got += n)
        n = mpi_dt_cursor_unpack(&c, full + got, 3);
    mpi_dt_cursor_init(&c, t, count, dst + origin, 0);
    mpi_dt_cursor_pack(&c, part, BUF);
    DTT_CHECK(memcmp(part, full, (size_t)total) == 0, "%s: unpack differs",
              what);
    /* A typed copy moves the same bytes as pack + unpack. */
    memset(dst, 0, sizeof(dst));
    mpi_dt_copy(t, count, src + origin, dst + origin);
    mpi_dt_cursor_init(&c, t, count, dst + origin, 0);
    mpi_dt_cursor_pack(&c, part, BUF);
    DTT_CHECK(memcmp(part, full, (size_t)total) == 0, "%s: copy differs", what);
}

struct rec {
    int a;
    double b;
    char c;
};

static void test_cursor(void)
{
    int bl[3] = {1, 1, 1}, i;
    MPI_Aint d[3] = {offsetof(struct rec, a), offsetof(struct rec, b),
                     offsetof(struct rec, c)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s, v, r;

    for (i = 0; i < BUF; i++)
        src[i] = (unsigned char)(i * 37 + 11);
    MT_OK(MPI_Type_create_struct(3, bl, d, ty, &s));
    MT_OK(MPI_Type_vector(3, 2, -3, s, &v));
    MT_OK(MPI_Type_create_resized(v, 0, 20, &r));
    check_cursor("int", MPI_INT, 9, 0);
    check_cursor("short_int", MPI_SHORT_INT, 5, 0);
    check_cursor("struct", s, 4, 0);
    check_cursor("vector<0", v, 3, 1024);
    check_cursor("double_int", MPI_DOUBLE_INT, 3, 0);
    check_cursor("count 0", r, 0, 0);
    MT_OK(MPI_Type_free(&r));
    MT_OK(MPI_Type_free(&v));
    MT_OK(MPI_Type_free(&s));
}

static void test_elements(void)
{
    int bl[3] = {1, 2, 1};
    MPI_Aint d[3] = {0, 8, 24};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s;

    /* stream of one element: int(4) double(8) double(8) char(1) = 21 */
    MT_OK(MPI_Type_create_struct(3, bl, d, ty, &s));
    DTT_CHECK(s->size == 21 && s->nelems == 4, "struct size/nelems");
    DTT_CHECK(mpi_dt_elements(s, 0) == 0, "0 bytes");
    DTT_CHECK(mpi_dt_elements(s, 3) == 0, "3 bytes");
    DTT_CHECK(mpi_dt_elements(s, 4) == 1, "4 bytes");
    DTT_CHECK(mpi_dt_elements(s, 11) == 1, "11 bytes");
    DTT_CHECK(mpi_dt_elements(s, 12) == 2, "12 bytes");
    DTT_CHECK(mpi_dt_elements(s, 20) == 3, "20 bytes");
    DTT_CHECK(mpi_dt_elements(s, 21) == 4, "21 bytes");
    DTT_CHECK(mpi_dt_elements(s, 42 + 12) == 8 + 2, "two and a bit");
    DTT_CHECK(mpi_dt_elements(MPI_DOUBLE_INT, 12 * 3 + 8) == 7, "pairs");
    DTT_CHECK(mpi_dt_elements(MPI_INT, 4 * 5 + 3) == 5, "ints");
    DTT_CHECK(mpi_dt_elements(MPI_UB, 100) == 0, "UB");
    DTT_CHECK(s->basic == 0, "mixed basic");
    MT_OK(MPI_Type_free(&s));
}

static void test_flags(void)
{
    MPI_Datatype t;

    DTT_CHECK(mpi_dt_contig(MPI_INT) && mpi_dt_contig(MPI_2INT) &&
                  mpi_dt_contig(MPI_FLOAT_INT),
              "contiguous predefined types");
    DTT_CHECK(!mpi_dt_contig(MPI_DOUBLE_INT) && !mpi_dt_contig(MPI_SHORT_INT),
              "padded pairs are not contiguous");
    DTT_CHECK(MPI_SHORT_INT->nsegs == 2 && MPI_DOUBLE_INT->nsegs == 1,
              "pair segments");
    DTT_CHECK(MPI_2INT->flags & MPI_DT_PAIR, "pair flag");
    DTT_CHECK(MPI_INT->basic == 7 && MPI_2INT->basic == 36, "basic index");
    DTT_CHECK((MPI_INT->flags & (MPI_DT_PREDEF | MPI_DT_COMMITTED)) ==
                  (MPI_DT_PREDEF | MPI_DT_COMMITTED),
              "predefined flags");

    MT_OK(MPI_Type_vector(3, 2, 2, MPI_INT, &t));
    DTT_CHECK(mpi_dt_contig(t) && t->nsegs == 1 && t->basic == 7,
              "dense vector is contiguous");
    DTT_CHECK(!(t->flags & MPI_DT_COMMITTED), "not committed yet");
    DTT_CHECK(mpi_dt_check(MPI_COMM_WORLD, t, "test") != MPI_SUCCESS,
              "mpi_dt_check rejects uncommitted types");
    MT_OK(MPI_Type_commit(&t));
    DTT_CHECK(mpi_dt_check(MPI_COMM_WORLD, t, "test") == MPI_SUCCESS, "check");
    MT_OK(MPI_Type_free(&t));
    MT_OK(MPI_Type_create_resized(MPI_INT, 0, 8, &t));
    DTT_CHECK(!mpi_dt_contig(t), "resized with a gap");
    MT_OK(MPI_Type_free(&t));
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_2INT, &t));
    DTT_CHECK(t->basic == 36, "basic of a vector of pairs");
    MT_OK(MPI_Type_free(&t));
}

/* A pending operation's reference keeps a user-freed type working. */
static void test_refs(void)
{
    MPI_Datatype t, keep;
    int v[4] = {1, 2, 3, 4}, out[2];
    mpi_dt_cursor_t c;

    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    MT_OK(MPI_Type_commit(&t));
    keep = t;
    mpi_dt_retain(keep);
    MT_OK(MPI_Type_free(&t));
    mpi_dt_cursor_init(&c, keep, 1, v, 0);
    DTT_CHECK(mpi_dt_cursor_pack(&c, out, 8) == 8 && out[0] == 1 && out[1] == 3,
              "retained type packs");
    mpi_dt_release(keep);
    mpi_dt_retain(MPI_INT); /* no-ops on predefined types */
    mpi_dt_release(MPI_INT);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_cursor();
    test_elements();
    test_flags();
    test_refs();
    MPI_Finalize();
    return 0;
}
