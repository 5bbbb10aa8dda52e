/*
 * The large-count (_c) datatype calls of MPI 4.0: every constructor gives
 * the same layout as its int form (packed bytes compared), keeps int
 * contents when its arguments fit, and keeps them as large counts when they
 * do not (Type_get_envelope_c / Type_get_contents_c, and the int queries
 * refusing with MPI_ERR_VALUE_TOO_LARGE); the external32 calls with
 * MPI_Count positions.  Types beyond 2 GiB are built and queried, never
 * filled: no memory of that size is needed.
 */
#include <stdint.h>
#include <string.h>

#include "mpitest.h"

#define G2 ((MPI_Count)1 << 31)
#define G4 ((MPI_Count)1 << 32)

static int src[4096];

/* Pack one element of a and of b (both over ints) and compare the bytes,
 * the sizes and the extents. */
static void same_layout(const char *what, MPI_Datatype a, MPI_Datatype b)
{
    static char pa[1 << 15], pb[1 << 15];
    int sa, sb, posa = 0, posb = 0;
    MPI_Aint lba, exa, lbb, exb;

    MT_OK(MPI_Type_commit(&a));
    MT_OK(MPI_Type_commit(&b));
    MT_OK(MPI_Type_size(a, &sa));
    MT_OK(MPI_Type_size(b, &sb));
    MT_CHECK(sa == sb, "%s: sizes %d and %d", what, sa, sb);
    MT_OK(MPI_Type_get_extent(a, &lba, &exa));
    MT_OK(MPI_Type_get_extent(b, &lbb, &exb));
    MT_CHECK(lba == lbb && exa == exb, "%s: extents differ", what);
    MT_OK(MPI_Pack(src, 1, a, pa, sizeof(pa), &posa, MPI_COMM_SELF));
    MT_OK(MPI_Pack(src, 1, b, pb, sizeof(pb), &posb, MPI_COMM_SELF));
    MT_CHECK(posa == posb && memcmp(pa, pb, (size_t)posa) == 0,
             "%s: packed bytes differ", what);
}

/* Envelope of t through the _c query: (ni, na, nc, nd, combiner). */
static void envelope(const char *what, MPI_Datatype t, MPI_Count ni,
                     MPI_Count na, MPI_Count nc, MPI_Count nd, int comb)
{
    MPI_Count gi, ga, gc, gd;
    int gcomb;

    MT_OK(MPI_Type_get_envelope_c(t, &gi, &ga, &gc, &gd, &gcomb));
    MT_CHECK(gi == ni && ga == na && gc == nc && gd == nd && gcomb == comb,
             "%s: envelope_c (%lld %lld %lld %lld %d), expected (%lld %lld "
             "%lld %lld %d)",
             what, gi, ga, gc, gd, gcomb, ni, na, nc, nd, comb);
}

/* The large counts of t must be big[0..n). */
static void large_counts(const char *what, MPI_Datatype t, const MPI_Count *big,
                         int n, const int *ints, int ni)
{
    MPI_Count got[64];
    int gi[64];
    MPI_Aint ga[4];
    MPI_Datatype gt[4];
    int a, b, c, comb;

    MT_OK(MPI_Type_get_contents_c(t, 64, 4, 64, 4, gi, ga, got, gt));
    for (int i = 0; i < n; i++)
        MT_CHECK(got[i] == big[i], "%s: large count %d is %lld, expected %lld",
                 what, i, got[i], big[i]);
    for (int i = 0; i < ni; i++)
        MT_CHECK(gi[i] == ints[i], "%s: integer %d is %d, expected %d", what,
                 i, gi[i], ints[i]);
    /* The int queries cannot say it. */
    MT_ERR(MPI_ERR_VALUE_TOO_LARGE, MPI_Type_get_envelope(t, &a, &b, &c, &comb));
    MT_ERR(MPI_ERR_VALUE_TOO_LARGE,
           MPI_Type_get_contents(t, 64, 4, 4, gi, ga, gt));
    /* Too small an array is an error, not an overflow. */
    MT_ERR(MPI_ERR_ARG, MPI_Type_get_contents_c(t, 64, 4, n - 1, 4, gi, ga,
                                                got, gt));
}

/* Small arguments: the _c constructor equals the int one. */
static void small_forms(void)
{
    MPI_Datatype a, b;
    int bl[3] = {2, 0, 3}, dp[3] = {5, 1, 9};
    MPI_Count cbl[3] = {2, 0, 3}, cdp[3] = {5, 1, 9};
    MPI_Aint adp[3] = {20, 4, 36};
    MPI_Count cadp[3] = {20, 4, 36};
    MPI_Datatype tys[3] = {MPI_INT, MPI_INT, MPI_SHORT};
    int sz[2] = {8, 6}, sub[2] = {3, 2}, st[2] = {2, 1};
    MPI_Count csz[2] = {8, 6}, csub[2] = {3, 2}, cst[2] = {2, 1};
    int gs[2] = {8, 6}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 1};
    MPI_Count cgs[2] = {8, 6};

    MT_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &a));
    MT_OK(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &b));
    envelope("hvector_c", b, 2, 1, 0, 1, MPI_COMBINER_HVECTOR);
    same_layout("hvector_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &a));
    MT_OK(MPI_Type_indexed_c(3, cbl, cdp, MPI_INT, &b));
    envelope("indexed_c", b, 7, 0, 0, 1, MPI_COMBINER_INDEXED);
    same_layout("indexed_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_hindexed(3, bl, adp, MPI_INT, &a));
    MT_OK(MPI_Type_create_hindexed_c(3, cbl, cadp, MPI_INT, &b));
    envelope("hindexed_c", b, 4, 3, 0, 1, MPI_COMBINER_HINDEXED);
    same_layout("hindexed_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &a));
    MT_OK(MPI_Type_create_indexed_block_c(3, 2, cdp, MPI_INT, &b));
    envelope("indexed_block_c", b, 5, 0, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
    same_layout("indexed_block_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_hindexed_block(3, 2, adp, MPI_INT, &a));
    MT_OK(MPI_Type_create_hindexed_block_c(3, 2, cadp, MPI_INT, &b));
    envelope("hindexed_block_c", b, 2, 3, 0, 1,
             MPI_COMBINER_HINDEXED_BLOCK);
    same_layout("hindexed_block_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_struct(3, bl, adp, tys, &a));
    MT_OK(MPI_Type_create_struct_c(3, cbl, cadp, tys, &b));
    envelope("struct_c", b, 4, 3, 0, 3, MPI_COMBINER_STRUCT);
    same_layout("struct_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &a));
    MT_OK(MPI_Type_create_resized_c(MPI_INT, -4, 12, &b));
    envelope("resized_c", b, 0, 2, 0, 1, MPI_COMBINER_RESIZED);
    same_layout("resized_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT,
                                   &a));
    MT_OK(MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_FORTRAN,
                                     MPI_INT, &b));
    envelope("subarray_c", b, 8, 0, 0, 1, MPI_COMBINER_SUBARRAY);
    same_layout("subarray_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));

    MT_OK(MPI_Type_create_darray(2, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT,
                                 &a));
    MT_OK(MPI_Type_create_darray_c(2, 1, 2, cgs, di, da, ps, MPI_ORDER_C,
                                   MPI_INT, &b));
    envelope("darray_c", b, 12, 0, 0, 1, MPI_COMBINER_DARRAY);
    same_layout("darray_c", a, b);
    MT_OK(MPI_Type_free(&a));
    MT_OK(MPI_Type_free(&b));
}

/* Arguments beyond int: large-count contents, sizes beyond 2 GiB. */
static void large_forms(void)
{
    MPI_Datatype t;
    MPI_Count size, lb, extent;

    MT_OK(MPI_Type_create_hvector_c(2, G2, G4, MPI_BYTE, &t));
    envelope("hvector_c big", t, 0, 0, 3, 1, MPI_COMBINER_HVECTOR);
    large_counts("hvector_c big", t, (MPI_Count[]){2, G2, G4}, 3, NULL, 0);
    MT_OK(MPI_Type_size_c(t, &size));
    MT_CHECK(size == 2 * G2, "hvector_c size %lld", size);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_indexed_c(2, (MPI_Count[]){G2, 1}, (MPI_Count[]){0, G4},
                             MPI_BYTE, &t));
    envelope("indexed_c big", t, 0, 0, 5, 1, MPI_COMBINER_INDEXED);
    large_counts("indexed_c big", t, (MPI_Count[]){2, G2, 1, 0, G4}, 5, NULL,
                 0);
    MT_OK(MPI_Type_size_c(t, &size));
    MT_OK(MPI_Type_get_extent_c(t, &lb, &extent));
    MT_CHECK(size == G2 + 1 && lb == 0 && extent == G4 + 1,
             "indexed_c size %lld extent %lld", size, extent);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_hindexed_block_c(2, G2, (MPI_Count[]){0, G4},
                                           MPI_BYTE, &t));
    envelope("hindexed_block_c big", t, 0, 0, 4, 1,
             MPI_COMBINER_HINDEXED_BLOCK);
    large_counts("hindexed_block_c big", t, (MPI_Count[]){2, G2, 0, G4}, 4,
                 NULL, 0);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_struct_c(2, (MPI_Count[]){G2, 3},
                                   (MPI_Count[]){0, G4},
                                   (MPI_Datatype[]){MPI_BYTE, MPI_INT}, &t));
    envelope("struct_c big", t, 0, 0, 5, 2, MPI_COMBINER_STRUCT);
    large_counts("struct_c big", t, (MPI_Count[]){2, G2, 3, 0, G4}, 5, NULL,
                 0);
    MT_OK(MPI_Type_size_c(t, &size));
    MT_CHECK(size == G2 + 12, "struct_c size %lld", size);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_subarray_c(1, (MPI_Count[]){2 * G4},
                                     (MPI_Count[]){4}, (MPI_Count[]){G4},
                                     MPI_ORDER_C, MPI_BYTE, &t));
    envelope("subarray_c big", t, 2, 0, 3, 1, MPI_COMBINER_SUBARRAY);
    large_counts("subarray_c big", t, (MPI_Count[]){2 * G4, 4, G4}, 3,
                 (int[]){1, MPI_ORDER_C}, 2);
    MT_OK(MPI_Type_get_extent_c(t, &lb, &extent));
    MT_OK(MPI_Type_get_true_extent_c(t, &lb, &size));
    MT_CHECK(lb == G4 && size == 4, "subarray_c true lb %lld extent %lld", lb,
             size);
    MT_OK(MPI_Type_free(&t));

    MT_OK(MPI_Type_create_darray_c(
        2, 1, 1, (MPI_Count[]){G4}, (int[]){MPI_DISTRIBUTE_BLOCK},
        (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2}, MPI_ORDER_C, MPI_BYTE,
        &t));
    envelope("darray_c big", t, 7, 0, 1, 1, MPI_COMBINER_DARRAY);
    large_counts("darray_c big", t, (MPI_Count[]){G4}, 1,
                 (int[]){2, 1, 1, MPI_DISTRIBUTE_BLOCK,
                         MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C},
                 7);
    MT_OK(MPI_Type_size_c(t, &size));
    MT_CHECK(size == G4 / 2, "darray_c size %lld", size);
    MT_OK(MPI_Type_free(&t));
}

static void bad_args(void)
{
    MPI_Datatype t;

    MT_ERR(MPI_ERR_COUNT, MPI_Type_indexed_c(-1, NULL, NULL, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_indexed_c(2, (MPI_Count[]){1, -G2},
                                           (MPI_Count[]){0, 1}, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_hindexed_c(2, NULL,
                                                   (MPI_Count[]){0, 1},
                                                   MPI_INT, &t));
    MT_ERR(MPI_ERR_TYPE, MPI_Type_create_struct_c(1, (MPI_Count[]){1},
                                                  (MPI_Count[]){0},
                                                  (MPI_Datatype[]){
                                                      MPI_DATATYPE_NULL},
                                                  &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_subarray_c(1, (MPI_Count[]){4},
                                                   (MPI_Count[]){5},
                                                   (MPI_Count[]){0},
                                                   MPI_ORDER_C, MPI_INT, &t));
    MT_ERR(MPI_ERR_ARG, MPI_Type_create_darray_c(
                            2, 0, 1, (MPI_Count[]){-4},
                            (int[]){MPI_DISTRIBUTE_BLOCK},
                            (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2},
                            MPI_ORDER_C, MPI_INT, &t));
}

/* external32 with MPI_Count sizes and positions. */
static void external(void)
{
    int in[5] = {1, -2, 3, 0x01020304, 5}, out[5] = {0};
    unsigned char buf[64];
    MPI_Count pos = 4, size = 0;

    MT_OK(MPI_Pack_external_size_c("external32", 5, MPI_INT, &size));
    MT_CHECK(size == 20, "external32 size %lld", size);
    MT_OK(MPI_Pack_external_c("external32", in, 5, MPI_INT, buf, sizeof(buf),
                              &pos));
    MT_CHECK(pos == 24 && buf[4 + 12] == 1 && buf[4 + 15] == 4,
             "pack_external_c: position %lld, big-endian bytes", pos);
    pos = 4;
    MT_OK(MPI_Unpack_external_c("external32", buf, sizeof(buf), &pos, out, 5,
                                MPI_INT));
    MT_CHECK(pos == 24 && memcmp(in, out, sizeof(in)) == 0,
             "unpack_external_c round trip");
    pos = 60;
    MT_ERR(MPI_ERR_TRUNCATE, MPI_Pack_external_c("external32", in, 5, MPI_INT,
                                                 buf, sizeof(buf), &pos));
    MT_ERR(MPI_ERR_ARG, MPI_Pack_external_c("external32", in, 5, MPI_INT, buf,
                                            sizeof(buf), NULL));
    MT_ERR(MPI_ERR_COUNT, MPI_Pack_external_size_c("external32", -1, MPI_INT,
                                                   &size));
}

int main(int argc, char **argv)
{
    int rank;

    for (int i = 0; i < 4096; i++)
        src[i] = i * 7 + 1;
    MT_OK(MPI_Init(&argc, &argv));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    small_forms();
    large_forms();
    bad_args();
    external();
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("dt_large: ok\n");
    return 0;
}
