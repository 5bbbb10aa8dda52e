/*
 * The "external32" representation: every basic element big-endian at the
 * size the standard's table gives (long 4 bytes, long double an IEEE
 * binary128, wchar_t 2, bool 1...), elements packed without gaps.
 *
 * An integer wider in memory than in external32 (long and unsigned long
 * on LP64, wchar_t) is packed when its value fits and refused with
 * MPI_ERR_CONVERSION when it does not, rather than cut; unpacking sign-
 * or zero-extends it.
 *
 * Packing walks the type's runs of basic elements alongside a cursor over
 * the native stream: a chunk of one run is packed natively into a stack
 * buffer, then converted; unpacking converts first, then unpacks.
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpi/dt/dt.h"

/* ---- integers and IEEE binary32/64
 * -------------------------------------------- */

/* A native integer of ns bytes, sign- or zero-extended to 64 bits. */
static uint64_t load_native(const unsigned char *p, int ns, int sign)
{
    switch (ns) {
    case 1: {
        uint8_t v = *p;
        return sign ? (uint64_t)(int64_t)(int8_t)v : v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return sign ? (uint64_t)(int64_t)(int16_t)v : v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return sign ? (uint64_t)(int64_t)(int32_t)v : v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void store_native(unsigned char *p, int ns, uint64_t v)
{
    uint8_t v1 = (uint8_t)v;
    uint16_t v2 = (uint16_t)v;
    uint32_t v4 = (uint32_t)v;

    switch (ns) {
    case 1:
        memcpy(p, &v1, 1);
        break;
    case 2:
        memcpy(p, &v2, 2);
        break;
    case 4:
        memcpy(p, &v4, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static void store_be(unsigned char *q, int ne, uint64_t v)
{
    for (int i = ne - 1; i >= 0; i--, v >>= 8)
        q[i] = (unsigned char)v;
}

/* Does v (sign- or zero-extended to 64 bits) fit ne bytes? */
static int fits(uint64_t v, int ne, int sign)
{
    uint64_t top;

    if (ne >= 8)
        return 1;
    top = v >> (8 * ne - 1); /* the bits above ne bytes, and ne's top bit */
    if (sign)
        return top == 0 || top == ~(uint64_t)0 >> (8 * ne - 1);
    return top >> 1 == 0;
}

static uint64_t load_be(const unsigned char *q, int ne, int sign)
{
    uint64_t v = 0;

    for (int i = 0; i < ne; i++)
        v = v << 8 | q[i];
    if (sign && ne < 8 && (q[0] & 0x80))
        v |= ~(uint64_t)0 << (8 * ne);
    return v;
}

/* ---- long double <-> IEEE binary128
 * ------------------------------------------------ */

/* binary128 as two 64-bit halves: sign, 15-bit exponent, 112-bit fraction. */
typedef struct quad {
    uint64_t hi, lo;
} quad_t;

#if LDBL_MANT_DIG == 64
/* x87 extended: 64-bit significand with an explicit integer bit, 15-bit
 * exponent with binary128's bias, so only the fraction moves. */
static quad_t ld_to_quad(const unsigned char *p)
{
    uint64_t mant, frac;
    uint16_t se;
    quad_t q;

    memcpy(&mant, p, 8);
    memcpy(&se, p + 8, 2);
    frac = mant & ~((uint64_t)1 << 63);
    q.hi = (uint64_t)se << 48 | frac >> 15;
    q.lo = frac << 49;
    return q;
}

static void quad_to_ld(quad_t q, unsigned char *p)
{
    unsigned exp = (unsigned)(q.hi >> 48) & 0x7fff,
             sign = (unsigned)(q.hi >> 63);
    uint64_t frac = (q.hi & 0xffffffffffffull) << 15 | q.lo >> 49;
    uint64_t lost = q.lo & (((uint64_t)1 << 49) - 1), half = (uint64_t)1 << 48;
    uint16_t se;

    if (exp == 0x7fff) {
        if ((q.hi & 0xffffffffffffull) != 0 || q.lo != 0)
            frac |= (uint64_t)1 << 62; /* NaN stays NaN */
    } else if (lost > half || (lost == half && (frac & 1))) {
        /* Round to nearest even; a carry out bumps the exponent. */
        if (++frac >> 63) {
            frac = 0;
            exp++;
        }
    }
    frac |= (uint64_t)(exp != 0) << 63;
    se = (uint16_t)(sign << 15 | exp);
    memset(p, 0, sizeof(long double));
    memcpy(p, &frac, 8);
    memcpy(p + 8, &se, 2);
}
#elif LDBL_MANT_DIG == 113
/* long double is binary128 already: only the byte order changes. */
static quad_t ld_to_quad(const unsigned char *p)
{
    quad_t q;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&q.lo, p, 8);
    memcpy(&q.hi, p + 8, 8);
#else
    memcpy(&q.hi, p, 8);
    memcpy(&q.lo, p + 8, 8);
#endif
    return q;
}

static void quad_to_ld(quad_t q, unsigned char *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &q.lo, 8);
    memcpy(p + 8, &q.hi, 8);
#else
    memcpy(p, &q.hi, 8);
    memcpy(p + 8, &q.lo, 8);
#endif
}
#elif LDBL_MANT_DIG == 53
/* long double is binary64: widen and narrow (truncating) by hand. */
static quad_t ld_to_quad(const unsigned char *p)
{
    uint64_t b, frac;
    unsigned exp;
    quad_t q = {0, 0};

    memcpy(&b, p, 8);
    exp = (unsigned)(b >> 52) & 0x7ff;
    frac = b & 0xfffffffffffffull;
    if (exp == 0 && frac != 0) { /* subnormal: normalize */
        exp = 1;
        while (!(frac & (1ull << 52))) {
            frac <<= 1;
            exp--;
        }
        frac &= 0xfffffffffffffull;
        exp += 16383 - 1023;
    } else if (exp == 0x7ff) {
        exp = 0x7fff;
    } else if (exp != 0) {
        exp += 16383 - 1023;
    }
    q.hi = (b >> 63) << 63 | (uint64_t)exp << 48 | frac >> 4;
    q.lo = frac << 60;
    return q;
}

static void quad_to_ld(quad_t q, unsigned char *p)
{
    int exp = (int)(q.hi >> 48) & 0x7fff;
    uint64_t frac = (q.hi & 0xffffffffffffull) << 4 | q.lo >> 60, b;

    if (exp == 0x7fff)
        exp = 0x7ff;
    else if (exp - 16383 + 1023 >= 0x7ff)
        exp = 0x7ff, frac = 0;
    else if (exp - 16383 + 1023 <= 0)
        exp = 0, frac = 0; /* underflow to zero */
    else
        exp = exp - 16383 + 1023;
    b = (q.hi >> 63) << 63 | (uint64_t)exp << 52 | frac;
    memcpy(p, &b, 8);
}
#else
#error "external32: unsupported long double format"
#endif

/* ---- one basic type, n items
 * --------------------------------------------------------- */

MPI_Count dt_ext_encode(int basic, const void *native, void *ext, MPI_Count n)
{
    const dt_basic_info_t *bi = &dt_basic[basic];
    const unsigned char *p = native;
    unsigned char *q = ext;
    MPI_Count i;

    switch (bi->kind) {
    case DT_KIND_BYTES:
        memcpy(q, p, (size_t)n);
        break;
    case DT_KIND_COMPLEX:
        dt_ext_encode(bi->part, p, q, 2 * n); /* floats: always fit */
        break;
    case DT_KIND_LDOUBLE:
        for (i = 0; i < n; i++, p += bi->native, q += 16) {
            quad_t v = ld_to_quad(p);
            store_be(q, 8, v.hi);
            store_be(q + 8, 8, v.lo);
        }
        break;
    default: /* integers and IEEE floats */
        if (bi->ext < bi->native) { /* narrowed integers: check each */
            int sign = bi->kind == DT_KIND_SINT;
            for (i = 0; i < n; i++, p += bi->native, q += bi->ext) {
                uint64_t v = load_native(p, bi->native, sign);
                if (!fits(v, bi->ext, sign))
                    return i;
                store_be(q, bi->ext, v);
            }
            break;
        }
        for (i = 0; i < n; i++, p += bi->native, q += bi->ext)
            store_be(q, bi->ext,
                     load_native(p, bi->native, bi->kind == DT_KIND_SINT));
        break;
    }
    return n;
}

void dt_ext_decode(int basic, const void *ext, void *native, MPI_Count n)
{
    const dt_basic_info_t *bi = &dt_basic[basic];
    const unsigned char *q = ext;
    unsigned char *p = native;

    switch (bi->kind) {
    case DT_KIND_BYTES:
        memcpy(p, q, (size_t)n);
        break;
    case DT_KIND_COMPLEX:
        dt_ext_decode(bi->part, q, p, 2 * n);
        break;
    case DT_KIND_LDOUBLE:
        for (; n > 0; n--, p += bi->native, q += 16) {
            quad_t v = {load_be(q, 8, 0), load_be(q + 8, 8, 0)};
            quad_to_ld(v, p);
        }
        break;
    default:
        for (; n > 0; n--, p += bi->native, q += bi->ext)
            store_native(p, bi->native,
                         load_be(q, bi->ext, bi->kind == DT_KIND_SINT));
        break;
    }
}

/* ---- walking a type's runs
 * --------------------------------------------------------- */

/* Native bytes staged per conversion step (a multiple of every size). */
#define EXT_CHUNK 4096

typedef struct ext_walk {
    const dt_map_t *m;
    MPI_Count run, item; /* position in the current element's runs */
} ext_walk_t;

/* Items of the current run to convert next (fits EXT_CHUNK). */
static MPI_Count walk_step(const ext_walk_t *w, const dt_basic_info_t **bi_p)
{
    const dt_run_t *r = &w->m->runs[w->run];
    const dt_basic_info_t *bi = &dt_basic[r->basic];
    MPI_Count k = r->n - w->item;

    if (k > EXT_CHUNK / bi->native)
        k = EXT_CHUNK / bi->native;
    *bi_p = bi;
    return k;
}

static void walk_advance(ext_walk_t *w, MPI_Count k)
{
    w->item += k;
    if (w->item == w->m->runs[w->run].n) {
        w->item = 0;
        if (++w->run == w->m->nruns)
            w->run = 0;
    }
}

/* A value external32 cannot hold: MPI_ERR_CONVERSION naming it and the
 * basic element (counted from 0 over the whole buffer) that holds it. */
static int ext_refuse(const char *fn, int basic, const unsigned char *p,
                      MPI_Count at)
{
    const dt_basic_info_t *bi = &dt_basic[basic];
    int sign = bi->kind == DT_KIND_SINT;
    uint64_t v = load_native(p, bi->native, sign);
    char val[32];

    if (sign)
        snprintf(val, sizeof(val), "%lld", (long long)(int64_t)v);
    else
        snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
    return mpi_error(DT_ERR_COMM, MPI_ERR_CONVERSION, fn,
                     "%s value %s (basic element %lld of the buffer) does not "
                     "fit the %d bytes external32 gives it",
                     shoal_mpi_dt_predef[basic].name, val, (long long)at,
                     bi->ext);
}

static int ext_pack(const char *fn, const void *inbuf, MPI_Count count,
                    MPI_Datatype dt, unsigned char *out)
{
    unsigned char tmp[EXT_CHUNK] __attribute__((aligned(16)));
    ext_walk_t w = {dt_map(dt), 0, 0};
    mpi_dt_cursor_t c;
    MPI_Count items = 0; /* basic elements converted so far */

    mpi_dt_cursor_init(&c, dt, count, inbuf, 0);
    while (c.done < c.total) {
        const dt_basic_info_t *bi;
        MPI_Count k = walk_step(&w, &bi), ok;
        int basic = w.m->runs[w.run].basic;
        mpi_dt_cursor_pack(&c, tmp, k * bi->native);
        ok = dt_ext_encode(basic, tmp, out, k);
        if (ok < k)
            return fn == NULL ? MPI_ERR_CONVERSION
                              : ext_refuse(fn, basic, tmp + ok * bi->native,
                                           items + ok);
        out += k * bi->ext;
        items += k;
        walk_advance(&w, k);
    }
    return MPI_SUCCESS;
}

static void ext_unpack(const unsigned char *in, void *outbuf, MPI_Count count,
                       MPI_Datatype dt)
{
    unsigned char tmp[EXT_CHUNK] __attribute__((aligned(16)));
    ext_walk_t w = {dt_map(dt), 0, 0};
    mpi_dt_cursor_t c;

    mpi_dt_cursor_init(&c, dt, count, outbuf, 0);
    while (c.done < c.total) {
        const dt_basic_info_t *bi;
        MPI_Count k = walk_step(&w, &bi);
        dt_ext_decode(w.m->runs[w.run].basic, in, tmp, k);
        mpi_dt_cursor_unpack(&c, tmp, k * bi->native);
        in += k * bi->ext;
        walk_advance(&w, k);
    }
}

/* ---- for files (src/io): nothing reported, the caller does that ------- */

MPI_Count mpi_dt_ext32_size(MPI_Datatype dt)
{
    return dt_map(dt)->ext32_size;
}

int mpi_dt_ext32_pack(const void *buf, MPI_Count count, MPI_Datatype dt,
                      void *out)
{
    return ext_pack(NULL, buf, count, dt, out);
}

void mpi_dt_ext32_unpack(const void *in, void *buf, MPI_Count count,
                         MPI_Datatype dt)
{
    ext_unpack(in, buf, count, dt);
}

/* ---- the calls
 * ------------------------------------------------------------------------- */

/* datarep, count and type; *bytes_p = external32 bytes of count elements. */
static int ext_check(const char *fn, const char *datarep, MPI_Count count,
                     MPI_Datatype dt, MPI_Aint *bytes_p)
{
    int rc;

    if (datarep == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn, "datarep is NULL");
    if (strcmp(datarep, "external32") != 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "datarep \"%.64s\" is not supported; only "
                         "\"external32\" is",
                         datarep);
    if (count < 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_COUNT, fn,
                         "count is %lld; must be >= 0", count);
    if ((rc = mpi_dt_check(DT_ERR_COMM, dt, fn)) != MPI_SUCCESS)
        return rc;
    if (__builtin_mul_overflow(count, dt_map(dt)->ext32_size, bytes_p))
        return mpi_error(DT_ERR_COMM, MPI_ERR_COUNT, fn,
                         "count %lld of the type overflows MPI_Aint", count);
    return MPI_SUCCESS;
}

/* position in [0, size] and bytes more fit; the buffer exists if needed. */
static int ext_check_room(const char *fn, const void *buf, MPI_Count size,
                          MPI_Count position, MPI_Count bytes)
{
    if (size < 0 || position < 0 || position > size)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn,
                         "position %lld is outside the buffer of %lld bytes",
                         (long long)position, (long long)size);
    if (bytes > size - position)
        return mpi_error(DT_ERR_COMM, MPI_ERR_TRUNCATE, fn,
                         "%lld bytes at position %lld do not fit the buffer "
                         "of %lld bytes",
                         (long long)bytes, (long long)position,
                         (long long)size);
    if (buf == NULL && bytes > 0)
        return mpi_error(DT_ERR_COMM, MPI_ERR_BUFFER, fn,
                         "the external32 buffer is NULL");
    return MPI_SUCCESS;
}

/* Pack (pack 1) or unpack count elements at *position; both forms. */
static int ext_move(const char *fn, const char *datarep, int pack,
                    const void *inbuf, void *outbuf, MPI_Count count,
                    MPI_Datatype dt, MPI_Count size, MPI_Count *position)
{
    MPI_Aint bytes;
    int rc;

    if ((rc = ext_check(fn, datarep, count, dt, &bytes)) != MPI_SUCCESS)
        return rc;
    if (position == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn, "position is NULL");
    if ((rc = ext_check_room(fn, pack ? outbuf : inbuf, size, *position,
                             bytes)) != MPI_SUCCESS)
        return rc;
    if (pack) {
        rc = ext_pack(fn, inbuf, count, dt,
                      (unsigned char *)outbuf + *position);
        if (rc != MPI_SUCCESS)
            return rc; /* position stays; the bytes after it are undefined */
    } else
        ext_unpack((const unsigned char *)inbuf + *position, outbuf, count,
                   dt);
    *position += bytes;
    return MPI_SUCCESS;
}

/* The int forms keep their position as MPI_Aint. */
static int ext_move_aint(const char *fn, const char *datarep, int pack,
                         const void *inbuf, void *outbuf, MPI_Count count,
                         MPI_Datatype dt, MPI_Aint size, MPI_Aint *position)
{
    MPI_Count pos = position != NULL ? *position : 0;
    int rc = ext_move(fn, datarep, pack, inbuf, outbuf, count, dt, size,
                      position != NULL ? &pos : NULL);

    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                       MPI_Aint *position)
{
    MPI_CHECK_INIT("MPI_Pack_external");
    return ext_move_aint("MPI_Pack_external", datarep, 1, inbuf, outbuf,
                         incount, datatype, outsize, position);
}
SHOAL_MPI_WEAK(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf,
                         MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    MPI_CHECK_INIT("MPI_Pack_external_c");
    return ext_move("MPI_Pack_external_c", datarep, 1, inbuf, outbuf, incount,
                    datatype, outsize, position);
}
SHOAL_MPI_WEAK(Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void *inbuf,
                         MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    MPI_CHECK_INIT("MPI_Unpack_external");
    return ext_move_aint("MPI_Unpack_external", datarep, 0, inbuf, outbuf,
                         outcount, datatype, insize, position);
}
SHOAL_MPI_WEAK(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf,
                           MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    MPI_CHECK_INIT("MPI_Unpack_external_c");
    return ext_move("MPI_Unpack_external_c", datarep, 0, inbuf, outbuf,
                    outcount, datatype, insize, position);
}
SHOAL_MPI_WEAK(Unpack_external_c)

static int ext_size(const char *fn, const char *datarep, MPI_Count incount,
                    MPI_Datatype datatype, MPI_Aint *size)
{
    MPI_Aint bytes;
    int rc;

    if ((rc = ext_check(fn, datarep, incount, datatype, &bytes)) != MPI_SUCCESS)
        return rc;
    if (size == NULL)
        return mpi_error(DT_ERR_COMM, MPI_ERR_ARG, fn, "size is NULL");
    *size = bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount,
                            MPI_Datatype datatype, MPI_Aint *size)
{
    MPI_CHECK_INIT("MPI_Pack_external_size");
    return ext_size("MPI_Pack_external_size", datarep, incount, datatype,
                    size);
}
SHOAL_MPI_WEAK(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount,
                              MPI_Datatype datatype, MPI_Count *size)
{
    MPI_Aint bytes = 0;
    int rc;

    MPI_CHECK_INIT("MPI_Pack_external_size_c");
    rc = ext_size("MPI_Pack_external_size_c", datarep, incount, datatype,
                  size != NULL ? &bytes : NULL);
    if (rc == MPI_SUCCESS)
        *size = bytes;
    return rc;
}
SHOAL_MPI_WEAK(Pack_external_size_c)
