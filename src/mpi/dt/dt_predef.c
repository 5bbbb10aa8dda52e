/*
 * The predefined datatypes: one static table, usable before MPI_Init (the
 * handles are addresses into it), and the per-type facts the engine needs
 * (native and external32 sizes, alignment, how external32 encodes it).
 *
 * The list below is checked against mpi.h's SHOAL_MPI_PREDEF_TYPES at
 * compile time, so a type added there without an entry here fails to build.
 *
 * The external32 sizes are the standard's table ("External Data
 * Representation: external32", MPI 4.1 section 15.5.2), whatever the
 * native size: long and unsigned long are 4 bytes there, wchar_t 2, long
 * double 16, MPI_AINT, MPI_COUNT and MPI_OFFSET 8.  A native value wider
 * than its external32 size is packed when it fits and refused with
 * MPI_ERR_CONVERSION when it does not (dt_external.c).
 */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "mpi/dt/dt.h"

/*
 * P(index, name, C type, external32 kind, external32 bytes, part index)
 *   a basic type (part: complex types' component type, else 0);
 * Q(index, name, value type, value index, its external32 bytes, second type,
 *   second index, its external32 bytes) a pair type laid out as
 *   struct { value; second; };
 * M(index, name) the deprecated MPI_LB / MPI_UB markers.
 */
#define DT_LIST(P, Q, M)                                                       \
    P(1, MPI_CHAR, char, BYTES, 1, 0)                                          \
    P(2, MPI_SIGNED_CHAR, signed char, BYTES, 1, 0)                            \
    P(3, MPI_UNSIGNED_CHAR, unsigned char, BYTES, 1, 0)                        \
    P(4, MPI_BYTE, unsigned char, BYTES, 1, 0)                                 \
    P(5, MPI_SHORT, short, SINT, 2, 0)                                         \
    P(6, MPI_UNSIGNED_SHORT, unsigned short, UINT, 2, 0)                       \
    P(7, MPI_INT, int, SINT, 4, 0)                                             \
    P(8, MPI_UNSIGNED, unsigned, UINT, 4, 0)                                   \
    P(9, MPI_LONG, long, SINT, 4, 0)                                           \
    P(10, MPI_UNSIGNED_LONG, unsigned long, UINT, 4, 0)                        \
    P(11, MPI_LONG_LONG_INT, long long, SINT, 8, 0)                            \
    P(12, MPI_UNSIGNED_LONG_LONG, unsigned long long, UINT, 8, 0)              \
    P(13, MPI_FLOAT, float, FLOAT, 4, 0)                                       \
    P(14, MPI_DOUBLE, double, FLOAT, 8, 0)                                     \
    P(15, MPI_LONG_DOUBLE, long double, LDOUBLE, 16, 0)                        \
    P(16, MPI_WCHAR, wchar_t, UINT, 2, 0)                                      \
    P(17, MPI_C_BOOL, bool, UINT, 1, 0)                                        \
    P(18, MPI_INT8_T, int8_t, SINT, 1, 0)                                      \
    P(19, MPI_INT16_T, int16_t, SINT, 2, 0)                                    \
    P(20, MPI_INT32_T, int32_t, SINT, 4, 0)                                    \
    P(21, MPI_INT64_T, int64_t, SINT, 8, 0)                                    \
    P(22, MPI_UINT8_T, uint8_t, UINT, 1, 0)                                    \
    P(23, MPI_UINT16_T, uint16_t, UINT, 2, 0)                                  \
    P(24, MPI_UINT32_T, uint32_t, UINT, 4, 0)                                  \
    P(25, MPI_UINT64_T, uint64_t, UINT, 8, 0)                                  \
    P(26, MPI_AINT, MPI_Aint, SINT, 8, 0)                                      \
    P(27, MPI_COUNT, MPI_Count, SINT, 8, 0)                                    \
    P(28, MPI_OFFSET, MPI_Offset, SINT, 8, 0)                                  \
    P(29, MPI_C_FLOAT_COMPLEX, float _Complex, COMPLEX, 8, 13)                 \
    P(30, MPI_C_DOUBLE_COMPLEX, double _Complex, COMPLEX, 16, 14)              \
    P(31, MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, COMPLEX, 32, 15)    \
    P(32, MPI_PACKED, unsigned char, BYTES, 1, 0)                              \
    Q(33, MPI_FLOAT_INT, float, 13, 4, int, 7, 4)                              \
    Q(34, MPI_DOUBLE_INT, double, 14, 8, int, 7, 4)                            \
    Q(35, MPI_LONG_INT, long, 9, 4, int, 7, 4)                                 \
    Q(36, MPI_2INT, int, 7, 4, int, 7, 4)                                      \
    Q(37, MPI_SHORT_INT, short, 5, 2, int, 7, 4)                               \
    Q(38, MPI_LONG_DOUBLE_INT, long double, 15, 16, int, 7, 4)                 \
    M(39, MPI_UB)                                                              \
    M(40, MPI_LB)                                                              \
    P(41, MPI_CXX_BOOL, bool, UINT, 1, 0)                                      \
    P(42, MPI_CXX_FLOAT_COMPLEX, float _Complex, COMPLEX, 8, 13)               \
    P(43, MPI_CXX_DOUBLE_COMPLEX, double _Complex, COMPLEX, 16, 14)            \
    P(44, MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, COMPLEX, 32, 15)  \
    P(45, MPI_INTEGER, int, SINT, 4, 0)                                        \
    P(46, MPI_REAL, float, FLOAT, 4, 0)                                        \
    P(47, MPI_DOUBLE_PRECISION, double, FLOAT, 8, 0)                           \
    P(48, MPI_LOGICAL, int, SINT, 4, 0)                                        \
    P(49, MPI_CHARACTER, char, BYTES, 1, 0)                                    \
    P(50, MPI_COMPLEX, float _Complex, COMPLEX, 8, 13)                         \
    P(51, MPI_DOUBLE_COMPLEX, double _Complex, COMPLEX, 16, 14)                \
    Q(52, MPI_2REAL, float, 46, 4, float, 46, 4)                               \
    Q(53, MPI_2DOUBLE_PRECISION, double, 47, 8, double, 47, 8)                 \
    Q(54, MPI_2INTEGER, int, 45, 4, int, 45, 4)

/* ---- the list agrees with mpi.h
 * ---------------------------------------------- */

#define IDX_P(i, n, ...) DT_IDX_##n = i,
#define IDX_Q(i, n, ...) DT_IDX_##n = i,
#define IDX_M(i, n) DT_IDX_##n = i,
enum { DT_LIST(IDX_P, IDX_Q, IDX_M) DT_IDX_END_ };
#define CHECK_X(i, n)                                                          \
    _Static_assert(DT_IDX_##n == (i),                                          \
                   "dt_predef.c disagrees with mpi.h on " #n);
SHOAL_MPI_PREDEF_TYPES(CHECK_X)
_Static_assert(DT_IDX_END_ == SHOAL_MPI_NPREDEF_TYPES, "predefined type count");

/* A pair's external32 bytes are its members' (no gaps). */
#define EXT_P(i, n, T, kind, ext, part) DT_EXT_##i = ext,
#define EXT_Q(i, n, ...)
#define EXT_M(i, n)
enum { DT_LIST(EXT_P, EXT_Q, EXT_M) DT_EXT_END_ };
#define CHECK_EXT_P(...)
#define CHECK_EXT_Q(i, n, V, vi, vx, S, si, sx)                                \
    _Static_assert(DT_EXT_##vi == (vx) && DT_EXT_##si == (sx),                 \
                   "external32 sizes of " #n " disagree with its members");
#define CHECK_EXT_M(i, n)
DT_LIST(CHECK_EXT_P, CHECK_EXT_Q, CHECK_EXT_M)

/* ---- layouts: one block and one run each
 * ---------------------------------------- */

/* Where the second member of pair type i starts, and whether it follows
 * the value without padding (then the pair is one block). */
#define PAIR_OFF(i) offsetof(struct dt_pair_##i, second)
#define PAIR_VSIZE(i) sizeof(((struct dt_pair_##i *)0)->value)
#define PAIR_SIZE(i) (PAIR_VSIZE(i) + sizeof(((struct dt_pair_##i *)0)->second))
#define PAIR_DENSE(i) (PAIR_OFF(i) == PAIR_VSIZE(i))

#define DATA_P(i, n, T, kind, ext, part)                                       \
    static mpi_dt_seg_t seg_##i[1] = {{0, sizeof(T)}};                         \
    static MPI_Count end_##i[1] = {sizeof(T)};                                 \
    static dt_run_t run_##i[1] = {{i, 1, 0, 0}};                               \
    static dt_map_t map_##i = {1, 1, seg_##i, 1, end_##i, run_##i, 1, ext};
#define DATA_Q(i, n, V, vi, vx, S, si, sx)                                     \
    struct dt_pair_##i {                                                       \
        V value;                                                               \
        S second;                                                              \
    };                                                                         \
    static mpi_dt_seg_t seg_##i[2] = {                                         \
        {0, PAIR_DENSE(i) ? PAIR_SIZE(i) : PAIR_VSIZE(i)},                     \
        {PAIR_OFF(i), sizeof(S)}};                                             \
    static MPI_Count end_##i[2] = {                                            \
        PAIR_DENSE(i) ? PAIR_SIZE(i) : PAIR_VSIZE(i), PAIR_SIZE(i)};           \
    static dt_run_t run_##i[2] = {{vi, 1, 0, 0}, {si, 1, sizeof(V), 1}};       \
    static dt_map_t map_##i = {                                                \
        1, 1, seg_##i, PAIR_DENSE(i) ? 1 : 2, end_##i, run_##i, 2, vx + sx};
#define DATA_M(i, n)                                                           \
    static dt_map_t map_##i = {1, 1, NULL, 0, NULL, NULL, 0, 0};
DT_LIST(DATA_P, DATA_Q, DATA_M)

/* ---- the table
 * ------------------------------------------------------------------ */

/* The name is stringized here, where n is still unexpanded (MPI_INT, not
 * its definition). */
#define ENTRY_COMMON(i, str)                                                   \
    .magic = MPI_MAGIC_DT, .refs = 1, .combiner = MPI_COMBINER_NAMED,          \
    .segs = seg_##i, .typemap = &map_##i, .name = str
#define ENTRY_P(i, n, T, kind, ext, part)                                      \
    [i] = {ENTRY_COMMON(i, #n),                                                \
           .flags = MPI_DT_PREDEF | MPI_DT_COMMITTED | MPI_DT_CONTIG,          \
           .basic = i,                                                         \
           .size = sizeof(T),                                                  \
           .lb = 0,                                                            \
           .extent = sizeof(T),                                                \
           .true_lb = 0,                                                       \
           .true_extent = sizeof(T),                                           \
           .nelems = 1,                                                        \
           .nsegs = 1},
#define ENTRY_Q(i, n, V, vi, vx, S, si, sx)                                    \
    [i] = {ENTRY_COMMON(i, #n),                                                \
           .flags =                                                            \
               MPI_DT_PREDEF | MPI_DT_COMMITTED | MPI_DT_PAIR |                \
               (PAIR_DENSE(i) && PAIR_SIZE(i) == sizeof(struct dt_pair_##i)    \
                    ? MPI_DT_CONTIG                                            \
                    : 0u),                                                     \
           .basic = i,                                                         \
           .size = PAIR_SIZE(i),                                               \
           .lb = 0,                                                            \
           .extent = sizeof(struct dt_pair_##i),                               \
           .true_lb = 0,                                                       \
           .true_extent = PAIR_OFF(i) + sizeof(S),                             \
           .nelems = 2,                                                        \
           .nsegs = PAIR_DENSE(i) ? 1 : 2},
#define ENTRY_M(i, n)                                                          \
    [i] = {.magic = MPI_MAGIC_DT,                                              \
           .refs = 1,                                                          \
           .combiner = MPI_COMBINER_NAMED,                                     \
           .segs = NULL,                                                       \
           .typemap = &map_##i,                                                \
           .name = #n,                                                         \
           .flags = MPI_DT_PREDEF | MPI_DT_COMMITTED,                          \
           .basic = 0,                                                         \
           .size = 0,                                                          \
           .extent = 0,                                                        \
           .nelems = 0,                                                        \
           .nsegs = 0},

SHOAL_MPI_API struct shoal_mpi_datatype
    shoal_mpi_dt_predef[SHOAL_MPI_DT_SLOTS] = {
        DT_LIST(ENTRY_P, ENTRY_Q, ENTRY_M)};

/* ---- facts per basic type
 * ------------------------------------------------------- */

#define INFO_P(i, n, T, kind, ext, part)                                       \
    [i] = {DT_KIND_##kind, (int)sizeof(T), ext, (int)_Alignof(T), part},
#define INFO_Q(i, n, V, vi, vx, S, si, sx)                                     \
    [i] = {DT_KIND_NONE, 0, 0, (int)_Alignof(struct dt_pair_##i), 0},
#define INFO_M(i, n) [i] = {DT_KIND_NONE, 0, 0, 1, 0},
const dt_basic_info_t dt_basic[SHOAL_MPI_NPREDEF_TYPES] = {
    DT_LIST(INFO_P, INFO_Q, INFO_M)};

/* Floating types are byte-swapped in external32, so their sizes must be
 * the standard's. */
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8,
               "external32 needs IEEE binary32 and binary64");
