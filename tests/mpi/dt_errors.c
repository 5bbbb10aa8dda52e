/*
 * Bad arguments to the datatype calls return the right error class under
 * MPI_ERRORS_RETURN, and leave handles alone.
 */
#include "dt_test.h"

static void test_constructors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, bad = MPI_DATATYPE_NULL;
    int bl[2] = {1, -1}, dp[2] = {0, 1}, one = 1;
    MPI_Aint ad[2] = {0, 8};
    MPI_Datatype tys[2] = {MPI_INT, MPI_DATATYPE_NULL};
    int sz[2] = {4, 4}, sub[2] = {2, 2}, st[2] = {3, 0};
    int gs[2] = {4, 4}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
        ps[2] = {2, 2};

    MT_ERR(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_contiguous(1, MPI_INT, NULL));
    MT_ERR(MPI_ERR_COUNT, MPI_Type_contiguous_c(-5, MPI_INT, &t));
    MT_ERR(MPI_ERR_COUNT, MPI_Type_vector(-1, 1, 1, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_vector(2, -1, 1, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_hvector(2, -3, 8, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_indexed(2, bl, dp, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_indexed(2, NULL, dp, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_hindexed(2, dp, NULL, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_indexed_block(2, -1, dp, MPI_INT, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_create_hindexed_block(2, 1, ad, NULL, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_create_struct(2, dp, ad, tys, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_struct(2, bl, ad, tys, &t));
    MT_ERR(MPI_ERR_COUNT, MPI_Type_create_struct(-1, bl, ad, tys, &t));
    MT_ERR(MPI_ERR_ARG,
           MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG,
           MPI_Type_create_subarray(0, sz, sub, dp, MPI_ORDER_C, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG,
           MPI_Type_create_subarray(2, sz, sub, dp, 99, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_darray(3, 0, 2, gs, di, da, ps,
                                               MPI_ORDER_C, MPI_INT, &t));
    MT_ERR(MPI_ERR_RANK, MPI_Type_create_darray(4, 4, 2, gs, di, da, ps,
                                                MPI_ORDER_C, MPI_INT, &t));
    da[0] = 1; /* 1 * 2 processes cannot cover 4 elements */
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_darray(4, 0, 2, gs, di, da, ps,
                                               MPI_ORDER_C, MPI_INT, &t));
    di[1] = MPI_DISTRIBUTE_NONE; /* with psize 2 */
    da[0] = MPI_DISTRIBUTE_DFLT_DARG;
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_darray(4, 0, 2, gs, di, da, ps,
                                               MPI_ORDER_C, MPI_INT, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_create_resized(NULL, 0, 4, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_dup(NULL, &t));
    DTT_CHECK(t == MPI_DATATYPE_NULL, "failed constructors set no handle");

    /* A freed handle is rejected while the object lives on in another. */
    MT_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    bad = t;
    MT_OK(MPI_Type_contiguous(2, t, &tys[1]));
    MT_OK(MPI_Type_free(&t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_contiguous(1, bad, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_commit(&bad));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_free(&bad));
    MT_OK(MPI_Type_free(&tys[1]));
    (void)one;
}

static void test_life_and_queries(void)
{
    MPI_Datatype t = MPI_INT, v;
    int n, gi[4];
    MPI_Aint a;
    MPI_Count c;
    char name[MPI_MAX_OBJECT_NAME];

    MT_ERR(MPI_ERR_TYPE, MPI_Type_free(&t));
    DTT_CHECK(t == MPI_INT, "a failed free leaves the handle");
    MT_ERR(MPI_ERR_ARG, MPI_Type_free(NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Type_commit(NULL));
    t = MPI_DATATYPE_NULL;
    MT_ERR(MPI_ERR_TYPE, MPI_Type_commit(&t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_size(MPI_INT, NULL));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_size(NULL, &n));
    MT_ERR(MPI_ERR_ARG, MPI_Type_get_extent(MPI_INT, NULL, &a));
    MT_ERR(MPI_ERR_ARG, MPI_Type_get_true_extent_x(MPI_INT, &c, NULL));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_get_envelope(NULL, &n, &n, &n, &n));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 4, 4, 4, gi, &a, &t));
    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MT_ERR(MPI_ERR_ARG, MPI_Type_get_contents(v, 2, 0, 1, gi, &a, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_set_name(v, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Type_get_name(v, name, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Type_match_size(42, 4, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Get_address(&n, NULL));
    MT_OK(MPI_Type_free(&v));
}

static void test_pack(void)
{
    int buf[8] = {0}, pos = 0, size;
    char out[64];
    MPI_Datatype v;
    MPI_Aint apos = 0, asz;

    MT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    /* not committed */
    MT_ERR(MPI_ERR_TYPE, MPI_Pack(buf, 1, v, out, 64, &pos, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TYPE, MPI_Pack_size(1, v, MPI_COMM_WORLD, &size));
    MT_ERR(MPI_ERR_TYPE,
           MPI_Pack_external("external32", buf, 1, v, out, 64, &apos));
    MT_OK(MPI_Type_commit(&v));
    MT_ERR(MPI_ERR_TRUNCATE,
           MPI_Pack(buf, 3, v, out, 20, &pos, MPI_COMM_WORLD));
    DTT_CHECK(pos == 0, "failed pack moved the position");
    pos = 60;
    MT_ERR(MPI_ERR_TRUNCATE,
           MPI_Pack(buf, 1, v, out, 64, &pos, MPI_COMM_WORLD));
    pos = 0;
    MT_ERR(MPI_ERR_COUNT, MPI_Pack(buf, -1, v, out, 64, &pos, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_COMM, MPI_Pack(buf, 1, v, out, 64, &pos, MPI_COMM_NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Pack(buf, 1, v, out, 64, NULL, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_TRUNCATE,
           MPI_Unpack(out, 4, &pos, buf, 1, v, MPI_COMM_WORLD));
    MT_ERR(MPI_ERR_ARG, MPI_Pack_size(1, v, MPI_COMM_WORLD, NULL));
    MT_ERR(MPI_ERR_ARG, MPI_Pack_external("native", buf, 1, v, out, 64, &apos));
    MT_ERR(MPI_ERR_ARG, MPI_Pack_external_size(NULL, 1, v, &asz));
    MT_ERR(MPI_ERR_TRUNCATE,
           MPI_Unpack_external("external32", out, 7, &apos, buf, 1, v));
    DTT_CHECK(apos == 0, "failed unpack moved the position");
    MT_OK(MPI_Type_free(&v));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dtt_errors_return();
    test_constructors();
    test_life_and_queries();
    test_pack();
    MPI_Finalize();
    return 0;
}
