/*
 * Helpers for the datatype tests.  A layout is checked against an
 * expected list of byte ranges the test computes itself by walking the
 * constructor's definition: MPI_Pack of a patterned buffer must produce
 * exactly those bytes in that order, and MPI_Unpack into a zeroed buffer
 * must write exactly those bytes and nothing else.  Buffers have their
 * origin in the middle so negative displacements are testable.
 */
#ifndef SHOAL_DT_TEST_H
#define SHOAL_DT_TEST_H

#include "mpitest.h"

/* A check with a formatted message (MT_CHECK takes a plain string). */
#define DTT_CHECK(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "check failed: %s\n", #cond);                      \
            MT_FAIL(__VA_ARGS__);                                              \
        }                                                                      \
    } while (0)

#define DTT_BUF (1 << 20)
#define DTT_ORIGIN (DTT_BUF / 2)

typedef struct dtt_blk {
    long off, len;
} dtt_blk_t;

/* The expected blocks of one element, in typemap order. */
typedef struct dtt_map {
    dtt_blk_t b[8192];
    int n;
} dtt_map_t;

static inline void dtt_add(dtt_map_t *m, long off, long len)
{
    DTT_CHECK(m->n < (int)(sizeof(m->b) / sizeof(m->b[0])), "map too long");
    m->b[m->n].off = off;
    m->b[m->n].len = len;
    m->n++;
}

static inline unsigned char dtt_pat(long i)
{
    return (unsigned char)((i * 131 + 7) ^ (i >> 9));
}

/* Check count elements of t (element k at k * extent) against m. */
static inline void dtt_check(const char *what, MPI_Datatype t, int count,
                             const dtt_map_t *m, long extent)
{
    static unsigned char dtt_src[DTT_BUF], dtt_dst[DTT_BUF],
        dtt_packed[DTT_BUF], dtt_expect[DTT_BUF], dtt_mask[DTT_BUF];
    long n = 0, i;
    int size = -1, pos = 0, k, b;

    for (i = 0; i < DTT_BUF; i++)
        dtt_src[i] = dtt_pat(i);
    memset(dtt_mask, 0, sizeof(dtt_mask));
    for (k = 0; k < count; k++)
        for (b = 0; b < m->n; b++)
            for (i = 0; i < m->b[b].len; i++) {
                long at = DTT_ORIGIN + k * extent + m->b[b].off + i;
                DTT_CHECK(at >= 0 && at < DTT_BUF, "%s: test layout too big",
                          what);
                dtt_expect[n++] = dtt_src[at];
                dtt_mask[at] = 1;
            }
    MT_OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &size));
    DTT_CHECK(size == n, "%s: Pack_size %d, expected %ld", what, size, n);
    MT_OK(MPI_Pack(dtt_src + DTT_ORIGIN, count, t, dtt_packed, DTT_BUF, &pos,
                   MPI_COMM_WORLD));
    DTT_CHECK(pos == n, "%s: packed %d bytes, expected %ld", what, pos, n);
    for (i = 0; i < n; i++)
        DTT_CHECK(dtt_packed[i] == dtt_expect[i],
                  "%s: packed byte %ld is %u, expected %u", what, i,
                  dtt_packed[i], dtt_expect[i]);
    memset(dtt_dst, 0, sizeof(dtt_dst));
    pos = 0;
    MT_OK(MPI_Unpack(dtt_packed, (int)n, &pos, dtt_dst + DTT_ORIGIN, count, t,
                     MPI_COMM_WORLD));
    DTT_CHECK(pos == n, "%s: unpacked %d bytes, expected %ld", what, pos, n);
    for (i = 0; i < DTT_BUF; i++)
        DTT_CHECK(dtt_dst[i] == (dtt_mask[i] ? dtt_src[i] : 0),
                  "%s: unpack wrote byte %ld wrongly (offset %ld)", what, i,
                  i - DTT_ORIGIN);
}

/* Size, lb, extent, true lb and true extent of t. */
static inline void dtt_bounds(const char *what, MPI_Datatype t, long size,
                              long lb, long extent, long tlb, long textent)
{
    MPI_Aint a, b;
    MPI_Count c, d;
    int s;

    MT_OK(MPI_Type_size(t, &s));
    DTT_CHECK(s == size, "%s: size %d, expected %ld", what, s, size);
    MT_OK(MPI_Type_size_x(t, &c));
    DTT_CHECK(c == size, "%s: size_x %lld", what, c);
    MT_OK(MPI_Type_get_extent(t, &a, &b));
    DTT_CHECK(a == lb && b == extent, "%s: lb %ld extent %ld, expected %ld %ld",
              what, (long)a, (long)b, lb, extent);
    MT_OK(MPI_Type_get_extent_x(t, &c, &d));
    DTT_CHECK(c == lb && d == extent, "%s: extent_x", what);
    MT_OK(MPI_Type_get_true_extent(t, &a, &b));
    DTT_CHECK(a == tlb && b == textent,
              "%s: true lb %ld true extent %ld, expected %ld %ld", what,
              (long)a, (long)b, tlb, textent);
    MT_OK(MPI_Type_get_true_extent_c(t, &c, &d));
    DTT_CHECK(c == tlb && d == textent, "%s: true_extent_c", what);
}

static inline void dtt_errors_return(void)
{
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

#endif
