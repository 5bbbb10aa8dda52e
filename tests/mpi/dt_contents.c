/*
 * Type_get_envelope / Type_get_contents for every combiner, the life of
 * types (free while referenced, dup, commit), names, Type_match_size and
 * the address helpers.
 */
#include "dt_test.h"

/* Envelope of t must be (ni, na, nd, combiner); contents must equal
 * ints/addrs, and the types must be types[] (predefined: the same
 * handle; derived: a new handle of the same combiner, freed here). */
static void expect(const char *what, MPI_Datatype t, int combiner, int ni,
                   const int *ints, int na, const MPI_Aint *addrs, int nd,
                   const MPI_Datatype *types)
{
    int eni, ena, end, ec, gi[64], i;
    MPI_Aint ga[64];
    MPI_Datatype gt[64];

    MT_OK(MPI_Type_get_envelope(t, &eni, &ena, &end, &ec));
    DTT_CHECK(ec == combiner && eni == ni && ena == na && end == nd,
              "%s: envelope (%d %d %d %d), expected (%d %d %d %d)", what, eni,
              ena, end, ec, ni, na, nd, combiner);
    MT_OK(MPI_Type_get_contents(t, 64, 64, 64, gi, ga, gt));
    for (i = 0; i < ni; i++)
        DTT_CHECK(gi[i] == ints[i], "%s: integer %d is %d, expected %d", what,
                  i, gi[i], ints[i]);
    for (i = 0; i < na; i++)
        DTT_CHECK(ga[i] == addrs[i], "%s: address %d", what, i);
    for (i = 0; i < nd; i++) {
        int a, b, c, comb, comb0;
        MPI_Datatype want = types[i];
        MT_OK(MPI_Type_get_envelope(want, &a, &b, &c, &comb0));
        if (comb0 == MPI_COMBINER_NAMED) {
            DTT_CHECK(gt[i] == want,
                      "%s: predefined type %d not returned "
                      "as is",
                      what, i);
            continue;
        }
        MT_OK(MPI_Type_get_envelope(gt[i], &a, &b, &c, &comb));
        DTT_CHECK(comb == comb0, "%s: type %d has combiner %d, expected %d",
                  what, i, comb, comb0);
        MT_OK(MPI_Type_free(&gt[i]));
    }
}

static void test_combiners(void)
{
    MPI_Datatype c, v, t, s2;
    int bl[3] = {2, 0, 1}, dp[3] = {4, 1, 0}, ints[16];
    MPI_Aint ad[3] = {-8, 16, 64};
    MPI_Datatype tys[3];
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    int gs[2] = {6, 6}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 1};

    MT_OK(MPI_Type_contiguous(3, MPI_INT, &c));
    expect("contiguous", c, MPI_COMBINER_CONTIGUOUS, 1, (int[]){3}, 0, NULL, 1,
           (MPI_Datatype[]){MPI_INT});

    MT_OK(MPI_Type_vector(2, 3, -4, c, &v));
    expect("vector", v, MPI_COMBINER_VECTOR, 3, (int[]){2, 3, -4}, 0, NULL, 1,
           &c);

    MT_OK(MPI_Type_create_hvector(5, 1, -24, MPI_DOUBLE, &t));
    expect("hvector", t, MPI_COMBINER_HVECTOR, 2, (int[]){5, 1}, 1,
           (MPI_Aint[]){-24}, 1, (MPI_Datatype[]){MPI_DOUBLE});
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_indexed(3, bl, dp, v, &t));
    expect("indexed", t, MPI_COMBINER_INDEXED, 7, (int[]){3, 2, 0, 1, 4, 1, 0},
           0, NULL, 1, &v);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hindexed(3, bl, ad, MPI_SHORT, &t));
    expect("hindexed", t, MPI_COMBINER_HINDEXED, 4, (int[]){3, 2, 0, 1}, 3, ad,
           1, (MPI_Datatype[]){MPI_SHORT});
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_CHAR, &t));
    expect("indexed_block", t, MPI_COMBINER_INDEXED_BLOCK, 5,
           (int[]){3, 2, 4, 1, 0}, 0, NULL, 1, (MPI_Datatype[]){MPI_CHAR});
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hindexed_block(3, 2, ad, c, &t));
    expect("hindexed_block", t, MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){3, 2},
           3, ad, 1, &c);
    MT_OK(MPI_Type_free(&t));

    tys[0] = MPI_INT;
    tys[1] = v;
    tys[2] = MPI_LB;
    MT_OK(MPI_Type_create_struct(3, bl, ad, tys, &t));
    expect("struct", t, MPI_COMBINER_STRUCT, 4, (int[]){3, 2, 0, 1}, 3, ad, 3,
           tys);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN,
                                   MPI_FLOAT, &t));
    expect("subarray", t, MPI_COMBINER_SUBARRAY, 8,
           (int[]){2, 4, 5, 2, 3, 1, 2, MPI_ORDER_FORTRAN}, 0, NULL, 1,
           (MPI_Datatype[]){MPI_FLOAT});
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_darray(2, 1, 2, gs, di, da, ps, MPI_ORDER_C, c, &t));
    ints[0] = 2;
    ints[1] = 1;
    ints[2] = 2;
    ints[3] = 6;
    ints[4] = 6;
    ints[5] = di[0];
    ints[6] = di[1];
    ints[7] = da[0];
    ints[8] = da[1];
    ints[9] = 2;
    ints[10] = 1;
    ints[11] = MPI_ORDER_C;
    expect("darray", t, MPI_COMBINER_DARRAY, 12, ints, 0, NULL, 1, &c);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_resized(v, -3, 100, &t));
    expect("resized", t, MPI_COMBINER_RESIZED, 0, NULL, 2,
           (MPI_Aint[]){-3, 100}, 1, &v);
    MT_OK(MPI_Type_dup(t, &s2));
    expect("dup", s2, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &t);
    MT_OK(MPI_Type_free(&s2));
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_dup(MPI_INT, &t));
    expect("dup(MPI_INT)", t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1,
           (MPI_Datatype[]){MPI_INT});
    MT_OK(MPI_Type_free(&t));

    {
        int a, b, d, comb;
        MT_OK(MPI_Type_get_envelope(MPI_DOUBLE_INT, &a, &b, &d, &comb));
        DTT_CHECK(comb == MPI_COMBINER_NAMED && a == 0 && b == 0 && d == 0,
                  "predefined envelope");
    }
    MT_OK(MPI_Type_free(&v));
    MT_OK(MPI_Type_free(&c));
}

/* A type outlives its user handle while another type was built from it;
 * get_contents still hands out an equivalent type. */
static void test_lifetime(void)
{
    MPI_Datatype c, v, got[2], d;
    int ints[4], n = 0, buf[6] = {1, 2, 3, 4, 5, 6}, out[6], pos = 0;
    MPI_Aint addrs[1];
    char packed[64];

    MT_OK(MPI_Type_contiguous(2, MPI_INT, &c));
    MT_OK(MPI_Type_vector(2, 1, 2, c, &v));
    MT_OK(MPI_Type_free(&c));
    MT_OK(MPI_Type_commit(&v));
    MT_OK(MPI_Pack(buf, 1, v, packed, sizeof(packed), &pos, MPI_COMM_WORLD));
    DTT_CHECK(pos == 16, "packed %d", pos);
    memcpy(out, packed, 16);
    DTT_CHECK(out[0] == 1 && out[1] == 2 && out[2] == 5 && out[3] == 6,
              "vector of freed contiguous packs wrongly");
    MT_OK(MPI_Type_get_contents(v, 4, 1, 2, ints, addrs, got));
    MT_OK(MPI_Type_get_envelope(got[0], &ints[0], &ints[1], &ints[2], &n));
    DTT_CHECK(n == MPI_COMBINER_CONTIGUOUS, "contents type combiner %d", n);
    MT_OK(MPI_Type_size(got[0], &n));
    DTT_CHECK(n == 8, "contents type size %d", n);
    /* The returned handle is the caller's: usable after v is gone. */
    MT_OK(MPI_Type_free(&v));
    MT_OK(MPI_Type_dup(got[0], &d));
    MT_OK(MPI_Type_free(&got[0]));
    MT_OK(MPI_Type_size(d, &n));
    DTT_CHECK(n == 8, "dup size %d", n);
    /* dup keeps the committed state; commit twice is fine. */
    MT_OK(MPI_Type_commit(&d));
    MT_OK(MPI_Type_commit(&d));
    MT_OK(MPI_Type_free(&d));
    DTT_CHECK(d == MPI_DATATYPE_NULL, "handle reset");
}

static void test_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Datatype t;
    char longname[300];

    MT_OK(MPI_Type_get_name(MPI_INT, name, &len));
    DTT_CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name %s", name);
    MT_OK(MPI_Type_get_name(MPI_LONG_LONG, name, &len));
    DTT_CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "name %s", name);
    MT_OK(MPI_Type_get_name(MPI_2DOUBLE_PRECISION, name, &len));
    DTT_CHECK(strcmp(name, "MPI_2DOUBLE_PRECISION") == 0, "name %s", name);
    MT_OK(MPI_Type_get_name(MPI_C_COMPLEX, name, &len));
    DTT_CHECK(strcmp(name, "MPI_C_FLOAT_COMPLEX") == 0, "name %s", name);

    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MT_OK(MPI_Type_get_name(t, name, &len));
    DTT_CHECK(len == 0 && name[0] == '\0', "derived types start unnamed");
    MT_OK(MPI_Type_set_name(t, "pair of ints"));
    MT_OK(MPI_Type_get_name(t, name, &len));
    DTT_CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name %s", name);
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    MT_OK(MPI_Type_set_name(t, longname));
    MT_OK(MPI_Type_get_name(t, name, &len));
    DTT_CHECK(len == MPI_MAX_OBJECT_NAME - 1, "long name kept %d chars", len);
    MT_OK(MPI_Type_free(&t));
}

static void test_match_size(void)
{
    MPI_Datatype t;

    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    DTT_CHECK(t == MPI_INTEGER, "integer 4");
    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
    DTT_CHECK(t == MPI_INT64_T, "integer 8");
    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 1, &t));
    DTT_CHECK(t == MPI_INT8_T, "integer 1");
    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    DTT_CHECK(t == MPI_DOUBLE_PRECISION, "real 8");
    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
    DTT_CHECK(t == MPI_REAL, "real 4");
    MT_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    DTT_CHECK(t == MPI_DOUBLE_COMPLEX, "complex 16");
}

static void test_addresses(void)
{
    int a[4] = {0};
    MPI_Aint p0, p3;

    MT_OK(MPI_Get_address(&a[0], &p0));
    MT_OK(MPI_Get_address(&a[3], &p3));
    DTT_CHECK(MPI_Aint_diff(p3, p0) == 3 * (MPI_Aint)sizeof(int), "diff");
    DTT_CHECK(MPI_Aint_add(p0, 3 * (MPI_Aint)sizeof(int)) == p3, "add");
    DTT_CHECK(MPI_Aint_add(p3, -3 * (MPI_Aint)sizeof(int)) == p0, "add <0");
}

/* Absolute addresses with MPI_BOTTOM. */
static void test_bottom(void)
{
    struct {
        int i;
        double d;
    } s = {7, 2.5};
    int bl[2] = {1, 1}, pos = 0;
    MPI_Aint d[2];
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    char packed[32];
    double dv;
    int iv;

    MT_OK(MPI_Get_address(&s.i, &d[0]));
    MT_OK(MPI_Get_address(&s.d, &d[1]));
    MT_OK(MPI_Type_create_struct(2, bl, d, ty, &t));
    MT_OK(MPI_Type_commit(&t));
    MT_OK(MPI_Pack(MPI_BOTTOM, 1, t, packed, sizeof(packed), &pos,
                   MPI_COMM_WORLD));
    DTT_CHECK(pos == 12, "packed %d", pos);
    memcpy(&iv, packed, 4);
    memcpy(&dv, packed + 4, 8);
    DTT_CHECK(iv == 7 && dv == 2.5, "MPI_BOTTOM pack");
    MT_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    MPI_Aint a;
    int x = 0;

    /* Address helpers work before MPI_Init. */
    DTT_CHECK(MPI_Get_address(&x, &a) == MPI_SUCCESS &&
                  a == (MPI_Aint)(uintptr_t)&x,
              "Get_address before Init");
    MPI_Init(&argc, &argv);
    test_combiners();
    test_lifetime();
    test_names();
    test_match_size();
    test_addresses();
    test_bottom();
    MPI_Finalize();
    return 0;
}
