/*
 * external32: exact bytes for basic and pair types (big-endian, the
 * standard's sizes), round trips through derived types with gaps, and
 * Pack_external_size.
 */
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#include "dt_test.h"

static void expect_bytes(const char *what, const void *in, int count,
                         MPI_Datatype t, const unsigned char *want, MPI_Aint n)
{
    unsigned char out[256], back[256];
    MPI_Aint pos = 0, size = -1;
    int i;

    MT_OK(MPI_Pack_external_size("external32", count, t, &size));
    DTT_CHECK(size == n, "%s: external size %ld, expected %ld", what,
              (long)size, (long)n);
    memset(out, 0xee, sizeof(out));
    MT_OK(
        MPI_Pack_external("external32", in, count, t, out, sizeof(out), &pos));
    DTT_CHECK(pos == n, "%s: position %ld", what, (long)pos);
    for (i = 0; i < n; i++)
        DTT_CHECK(out[i] == want[i], "%s: byte %d is %02x, expected %02x", what,
                  i, out[i], want[i]);
    DTT_CHECK(out[n] == 0xee, "%s: wrote past the end", what);
    pos = 0;
    memset(back, 0, sizeof(back));
    MT_OK(MPI_Unpack_external("external32", out, n, &pos, back, count, t));
    DTT_CHECK(pos == n, "%s: unpack position %ld", what, (long)pos);
}

static void test_basic(void)
{
    int i = 0x01020304;
    unsigned u = 0xfffffffeu;
    short s = -2;
    long l = -2;
    double d = 1.0;
    float f = -2.0f;
    long long ll = 0x0102030405060708LL;
    bool b = true;
    wchar_t w = 0x263a;
    float _Complex fc = 1.0f + 2.0f * I;
    long double ld = 1.0L, ld2 = -3.5L, ldback = 0;
    MPI_Aint pos = 0;
    unsigned char buf[32];

    expect_bytes("int", &i, 1, MPI_INT, (unsigned char[]){1, 2, 3, 4}, 4);
    expect_bytes("unsigned", &u, 1, MPI_UNSIGNED,
                 (unsigned char[]){0xff, 0xff, 0xff, 0xfe}, 4);
    expect_bytes("short", &s, 1, MPI_SHORT, (unsigned char[]){0xff, 0xfe}, 2);
    /* The standard's table gives C long 4 bytes (and wchar_t 2). */
    expect_bytes("long", &l, 1, MPI_LONG,
                 (unsigned char[]){0xff, 0xff, 0xff, 0xfe}, 4);
    expect_bytes("long long", &ll, 1, MPI_LONG_LONG,
                 (unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
    expect_bytes("double", &d, 1, MPI_DOUBLE,
                 (unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8);
    expect_bytes("float", &f, 1, MPI_FLOAT, (unsigned char[]){0xc0, 0, 0, 0},
                 4);
    expect_bytes("C bool", &b, 1, MPI_C_BOOL, (unsigned char[]){1}, 1);
    expect_bytes("wchar", &w, 1, MPI_WCHAR, (unsigned char[]){0x26, 0x3a}, 2);
    expect_bytes("float complex", &fc, 1, MPI_C_FLOAT_COMPLEX,
                 (unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}, 8);
    /* long double is an IEEE binary128: 1.0 = 3fff 0000... */
    expect_bytes(
        "long double", &ld, 1, MPI_LONG_DOUBLE,
        (unsigned char[]){0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        16);
    MT_OK(MPI_Pack_external("external32", &ld2, 1, MPI_LONG_DOUBLE, buf,
                            sizeof(buf), &pos));
    DTT_CHECK(buf[0] == 0xc0 && buf[1] == 0x00 && buf[2] == 0xc0,
              "-3.5L encodes as c000c000...: %02x %02x %02x", buf[0], buf[1],
              buf[2]);
    pos = 0;
    MT_OK(MPI_Unpack_external("external32", buf, 16, &pos, &ldback, 1,
                              MPI_LONG_DOUBLE));
    DTT_CHECK(ldback == ld2, "long double round trip");
}

static void test_pairs(void)
{
    struct {
        double v;
        int i;
    } di[2] = {{1.5, 7}, {-1.0, -1}}, dback[2];
    struct {
        short v;
        int i;
    } si = {258, 0x0a0b0c0d};
    int two[2] = {1, -1};
    MPI_Aint pos = 0;
    unsigned char buf[64];

    expect_bytes("double_int", di, 1, MPI_DOUBLE_INT,
                 (unsigned char[]){0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7},
                 12);
    expect_bytes("short_int", &si, 1, MPI_SHORT_INT,
                 (unsigned char[]){1, 2, 0x0a, 0x0b, 0x0c, 0x0d}, 6);
    expect_bytes("2int", two, 1, MPI_2INT,
                 (unsigned char[]){0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, 8);
    /* Two pairs: 24 bytes, no padding; round trip keeps values. */
    MT_OK(MPI_Pack_external("external32", di, 2, MPI_DOUBLE_INT, buf,
                            sizeof(buf), &pos));
    DTT_CHECK(pos == 24, "two double_int: %ld bytes", (long)pos);
    DTT_CHECK(buf[12] == 0xbf && buf[13] == 0xf0 && buf[23] == 0xff,
              "second pair's bytes");
    memset(dback, 0, sizeof(dback));
    pos = 0;
    MT_OK(MPI_Unpack_external("external32", buf, 24, &pos, dback, 2,
                              MPI_DOUBLE_INT));
    DTT_CHECK(dback[0].v == 1.5 && dback[0].i == 7 && dback[1].v == -1.0 &&
                  dback[1].i == -1,
              "double_int round trip");
}

/* A derived type with gaps and mixed basic types, many elements, so the
 * conversion crosses its staging chunks.  external32 has no gaps: 1 byte
 * of char, 4 of long, 12 of floats. */
static void test_derived_roundtrip(void)
{
    struct rec {
        char c;
        long l;
        float f[3];
    } in[700], out[700];
    int bl[3] = {1, 1, 3}, i;
    MPI_Aint d[3] = {offsetof(struct rec, c), offsetof(struct rec, l),
                     offsetof(struct rec, f)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_LONG, MPI_FLOAT}, t;
    static unsigned char buf[700 * 17];
    MPI_Aint pos = 0, size;

    MT_OK(MPI_Type_create_struct(3, bl, d, ty, &t));
    MT_OK(MPI_Type_commit(&t));
    MT_OK(MPI_Pack_external_size("external32", 700, t, &size));
    DTT_CHECK(size == 700 * 17, "external size %ld", (long)size);
    for (i = 0; i < 700; i++) {
        in[i].c = (char)i;
        in[i].l = -1000L * i;
        in[i].f[0] = (float)i;
        in[i].f[1] = -0.5f * i;
        in[i].f[2] = 3.0f;
    }
    MT_OK(MPI_Pack_external("external32", in, 700, t, buf, sizeof(buf), &pos));
    DTT_CHECK(pos == size, "packed %ld", (long)pos);
    /* element 1: c=1, long -1000 big-endian, float 1.0 = 3f800000 */
    DTT_CHECK(buf[17] == 1 && buf[18] == 0xff && buf[19] == 0xff &&
                  buf[20] == 0xfc && buf[21] == 0x18 && buf[22] == 0x3f &&
                  buf[23] == 0x80,
              "element 1 bytes");
    memset(out, 0, sizeof(out));
    pos = 0;
    MT_OK(MPI_Unpack_external("external32", buf, size, &pos, out, 700, t));
    for (i = 0; i < 700; i++)
        DTT_CHECK(out[i].c == in[i].c && out[i].l == in[i].l &&
                      out[i].f[0] == in[i].f[0] && out[i].f[1] == in[i].f[1] &&
                      out[i].f[2] == in[i].f[2],
                  "element %d differs after round trip", i);
    MT_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_basic();
    test_pairs();
    test_derived_roundtrip();
    MPI_Finalize();
    return 0;
}
