/*
 * Layouts of the placement constructors: every type is packed and
 * unpacked and compared byte by byte with a layout this file computes
 * from the constructor's definition, and its bounds with hand-computed
 * values (markers, resized types, negative strides, alignment padding).
 */
#include <stddef.h>

#include "dt_test.h"

static dtt_map_t m;

static void reset(void)
{
    m.n = 0;
}

static void commit_check(const char *what, MPI_Datatype *t, int count,
                         long extent)
{
    MT_OK(MPI_Type_commit(t));
    dtt_check(what, *t, count, &m, extent);
}

static void test_contiguous(void)
{
    MPI_Datatype t;

    MT_OK(MPI_Type_contiguous(5, MPI_INT, &t));
    dtt_bounds("contiguous", t, 20, 0, 20, 0, 20);
    reset();
    dtt_add(&m, 0, 20);
    commit_check("contiguous", &t, 3, 20);
    MT_OK(MPI_Type_free(&t));
    DTT_CHECK(t == MPI_DATATYPE_NULL, "Type_free must reset the handle");

    MT_OK(MPI_Type_contiguous(0, MPI_INT, &t));
    dtt_bounds("contiguous(0)", t, 0, 0, 0, 0, 0);
    reset();
    commit_check("contiguous(0)", &t, 4, 0);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_contiguous_c(3, MPI_DOUBLE, &t));
    dtt_bounds("contiguous_c", t, 24, 0, 24, 0, 24);
    MT_OK(MPI_Type_free(&t));
}

static void test_vector(void)
{
    MPI_Datatype t;
    int i;

    /* 3 blocks of 2 ints, stride 4 ints: ub = 2 * 16 + 8. */
    MT_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    dtt_bounds("vector", t, 24, 0, 40, 0, 40);
    reset();
    for (i = 0; i < 3; i++)
        dtt_add(&m, i * 16, 8);
    commit_check("vector", &t, 2, 40);
    MT_OK(MPI_Type_free(&t));

    /* Negative stride: doubles at 0, -16, -32 in that order. */
    MT_OK(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t));
    dtt_bounds("vector<0", t, 24, -32, 40, -32, 40);
    reset();
    for (i = 0; i < 3; i++)
        dtt_add(&m, -16 * i, 8);
    commit_check("vector<0", &t, 3, 40);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_vector_c(4, 1, 3, MPI_SHORT, &t));
    dtt_bounds("vector_c", t, 8, 0, 20, 0, 20);
    reset();
    for (i = 0; i < 4; i++)
        dtt_add(&m, 6 * i, 2);
    commit_check("vector_c", &t, 2, 20);
    MT_OK(MPI_Type_free(&t));

    /* A vector whose blocks touch is one block. */
    MT_OK(MPI_Type_vector(4, 2, 2, MPI_INT, &t));
    dtt_bounds("dense vector", t, 32, 0, 32, 0, 32);
    reset();
    dtt_add(&m, 0, 32);
    commit_check("dense vector", &t, 3, 32);
    MT_OK(MPI_Type_free(&t));
}

static void test_hvector(void)
{
    MPI_Datatype t;

    MT_OK(MPI_Type_create_hvector(2, 3, 7, MPI_CHAR, &t));
    dtt_bounds("hvector", t, 6, 0, 10, 0, 10);
    reset();
    dtt_add(&m, 0, 3);
    dtt_add(&m, 7, 3);
    commit_check("hvector", &t, 3, 10);
    MT_OK(MPI_Type_free(&t));

    /* ints at 0 and 6: the extent (10) is padded to the alignment of int,
     * as the standard's epsilon rule says. */
    MT_OK(MPI_Type_create_hvector(2, 1, 6, MPI_INT, &t));
    dtt_bounds("hvector pad", t, 8, 0, 12, 0, 10);
    reset();
    dtt_add(&m, 0, 4);
    dtt_add(&m, 6, 4);
    commit_check("hvector pad", &t, 2, 12);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hvector(3, 1, -12, MPI_INT, &t));
    dtt_bounds("hvector<0", t, 12, -24, 28, -24, 28);
    reset();
    dtt_add(&m, 0, 4);
    dtt_add(&m, -12, 4);
    dtt_add(&m, -24, 4);
    commit_check("hvector<0", &t, 2, 28);
    MT_OK(MPI_Type_free(&t));
}

static void test_indexed(void)
{
    int bl[3] = {2, 1, 3}, disp[3] = {5, 0, 10}, idisp[3] = {4, 0, 8};
    MPI_Aint hdisp[2] = {24, -8}, hbdisp[2] = {0, 100};
    int hbl[2] = {1, 2};
    MPI_Datatype t;

    MT_OK(MPI_Type_indexed(3, bl, disp, MPI_SHORT, &t));
    dtt_bounds("indexed", t, 12, 0, 26, 0, 26);
    reset();
    dtt_add(&m, 10, 4);
    dtt_add(&m, 0, 2);
    dtt_add(&m, 20, 6);
    commit_check("indexed", &t, 3, 26);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hindexed(2, hbl, hdisp, MPI_DOUBLE, &t));
    dtt_bounds("hindexed", t, 24, -8, 40, -8, 40);
    reset();
    dtt_add(&m, 24, 8);
    dtt_add(&m, -8, 16);
    commit_check("hindexed", &t, 2, 40);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_indexed_block(3, 2, idisp, MPI_FLOAT, &t));
    dtt_bounds("indexed_block", t, 24, 0, 40, 0, 40);
    reset();
    dtt_add(&m, 16, 8);
    dtt_add(&m, 0, 8);
    dtt_add(&m, 32, 8);
    commit_check("indexed_block", &t, 2, 40);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hindexed_block(2, 3, hbdisp, MPI_CHAR, &t));
    dtt_bounds("hindexed_block", t, 6, 0, 103, 0, 103);
    reset();
    dtt_add(&m, 0, 3);
    dtt_add(&m, 100, 3);
    commit_check("hindexed_block", &t, 2, 103);
    MT_OK(MPI_Type_free(&t));

    /* Zero-length blocks contribute nothing, not even to the bounds. */
    bl[0] = 0;
    MT_OK(MPI_Type_indexed(3, bl, disp, MPI_SHORT, &t));
    dtt_bounds("indexed 0", t, 8, 0, 26, 0, 26);
    reset();
    dtt_add(&m, 0, 2);
    dtt_add(&m, 20, 6);
    commit_check("indexed 0", &t, 2, 26);
    MT_OK(MPI_Type_free(&t));
}

struct rec {
    int a;
    double b;
    char c;
};

static void test_struct(void)
{
    int bl[3] = {1, 1, 1}, bl4[4] = {1, 1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct rec, a), offsetof(struct rec, b),
                     offsetof(struct rec, c)};
    MPI_Aint d4[4] = {-4, 0, 8, 20};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype ty4[4] = {MPI_LB, MPI_INT, MPI_INT, MPI_UB};
    MPI_Datatype t;

    /* The C struct: the extent is padded to sizeof(struct rec). */
    MT_OK(MPI_Type_create_struct(3, bl, d, ty, &t));
    dtt_bounds("struct", t, 13, 0, (long)sizeof(struct rec), 0,
               (long)offsetof(struct rec, c) + 1);
    reset();
    dtt_add(&m, (long)d[0], 4);
    dtt_add(&m, (long)d[1], 8);
    dtt_add(&m, (long)d[2], 1);
    commit_check("struct", &t, 4, (long)sizeof(struct rec));
    MT_OK(MPI_Type_free(&t));

    /* Explicit markers: lb -4, ub 20 whatever the entries say. */
    MT_OK(MPI_Type_create_struct(4, bl4, d4, ty4, &t));
    dtt_bounds("struct lb/ub", t, 8, -4, 24, 0, 12);
    reset();
    dtt_add(&m, 0, 4);
    dtt_add(&m, 8, 4);
    commit_check("struct lb/ub", &t, 3, 24);
    MT_OK(MPI_Type_free(&t));
}

static void test_resized(void)
{
    MPI_Datatype r, c, s;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 40};
    MPI_Datatype ty[2];

    MT_OK(MPI_Type_create_resized(MPI_INT, -2, 10, &r));
    dtt_bounds("resized", r, 4, -2, 10, 0, 4);
    reset();
    dtt_add(&m, 0, 4);
    commit_check("resized", &r, 3, 10);

    /* Copies step by the new extent; the markers stay sticky. */
    MT_OK(MPI_Type_contiguous(3, r, &c));
    dtt_bounds("contiguous(resized)", c, 12, -2, 30, 0, 24);
    reset();
    dtt_add(&m, 0, 4);
    dtt_add(&m, 10, 4);
    dtt_add(&m, 20, 4);
    commit_check("contiguous(resized)", &c, 2, 30);

    /* Sticky markers decide the struct's bounds, not the MPI_INT at 40. */
    ty[0] = r;
    ty[1] = MPI_INT;
    MT_OK(MPI_Type_create_struct(2, bl, d, ty, &s));
    dtt_bounds("struct(resized)", s, 8, -2, 10, 0, 44);
    MT_OK(MPI_Type_free(&s));

    /* Shrinking a type to extent 0 and a negative-extent resize. */
    MT_OK(MPI_Type_create_resized(MPI_DOUBLE, 0, -8, &s));
    dtt_bounds("resized<0", s, 8, 0, -8, 0, 8);
    MT_OK(MPI_Type_free(&s));
    MT_OK(MPI_Type_free(&c));
    MT_OK(MPI_Type_free(&r));
}

static void test_nested(void)
{
    MPI_Datatype v, c, d, h;
    int i, j;

    /* vector(2,1,2,int): ints at 0 and 8, extent 12; contiguous(2) of it:
     * 0, 8, 12, 20 -> blocks 0..4, 8..16, 20..24. */
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MT_OK(MPI_Type_contiguous(2, v, &c));
    dtt_bounds("nested", c, 16, 0, 24, 0, 24);
    reset();
    dtt_add(&m, 0, 4);
    dtt_add(&m, 8, 8);
    dtt_add(&m, 20, 4);
    commit_check("nested", &c, 3, 24);

    MT_OK(MPI_Type_dup(c, &d));
    dtt_bounds("dup", d, 16, 0, 24, 0, 24);
    commit_check("dup", &d, 2, 24);

    /* hvector of the vector, many blocks: 500 x (0, 8) at stride 100. */
    MT_OK(MPI_Type_create_hvector(500, 1, 100, v, &h));
    dtt_bounds("hvector(vector)", h, 4000, 0, 49912, 0, 49912);
    reset();
    for (i = 0; i < 500; i++)
        for (j = 0; j < 2; j++)
            dtt_add(&m, i * 100 + j * 8, 4);
    commit_check("hvector(vector)", &h, 2, 49912);
    MT_OK(MPI_Type_free(&h));
    MT_OK(MPI_Type_free(&d));
    MT_OK(MPI_Type_free(&c));
    MT_OK(MPI_Type_free(&v));
}

static void test_predefined(void)
{
    struct {
        double v;
        int i;
    } di;
    struct {
        short v;
        int i;
    } si;
    struct {
        long double v;
        int i;
    } ldi;
    long sz;

    dtt_bounds("MPI_INT", MPI_INT, 4, 0, 4, 0, 4);
    dtt_bounds("MPI_LONG", MPI_LONG, (long)sizeof(long), 0, (long)sizeof(long),
               0, (long)sizeof(long));
    dtt_bounds("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 16, 0, 16, 0, 16);
    dtt_bounds("MPI_INTEGER", MPI_INTEGER, 4, 0, 4, 0, 4);
    dtt_bounds("MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, 8, 0, 8, 0, 8);
    dtt_bounds("MPI_LOGICAL", MPI_LOGICAL, (long)sizeof(int), 0,
               (long)sizeof(int), 0, (long)sizeof(int));
    dtt_bounds("MPI_COMPLEX", MPI_COMPLEX, 8, 0, 8, 0, 8);
    dtt_bounds("MPI_UB", MPI_UB, 0, 0, 0, 0, 0);

    /* Pairs: {value; int} with the C struct's padding. */
    dtt_bounds("MPI_DOUBLE_INT", MPI_DOUBLE_INT, 12, 0, (long)sizeof(di), 0,
               12);
    reset();
    dtt_add(&m, 0, 12);
    dtt_check("MPI_DOUBLE_INT", MPI_DOUBLE_INT, 3, &m, (long)sizeof(di));
    dtt_bounds("MPI_SHORT_INT", MPI_SHORT_INT, 6, 0, (long)sizeof(si), 0,
               (long)offsetof(__typeof__(si), i) + 4);
    reset();
    dtt_add(&m, 0, 2);
    dtt_add(&m, (long)offsetof(__typeof__(si), i), 4);
    dtt_check("MPI_SHORT_INT", MPI_SHORT_INT, 3, &m, (long)sizeof(si));
    sz = (long)sizeof(long double) + 4;
    dtt_bounds("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, sz, 0,
               (long)sizeof(ldi), 0, (long)offsetof(__typeof__(ldi), i) + 4);
    reset();
    dtt_add(&m, 0, 2 * 4);
    dtt_check("MPI_2INT", MPI_2INT, 5, &m, 8);
    dtt_check("MPI_2INTEGER", MPI_2INTEGER, 5, &m, 8);
    dtt_check("MPI_FLOAT_INT", MPI_FLOAT_INT, 5, &m, 8);
    dtt_check("MPI_2REAL", MPI_2REAL, 5, &m, 8);
    reset();
    dtt_add(&m, 0, 16);
    dtt_check("MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION, 5, &m, 16);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_predefined();
    test_contiguous();
    test_vector();
    test_hvector();
    test_indexed();
    test_struct();
    test_resized();
    test_nested();
    MPI_Finalize();
    return 0;
}
