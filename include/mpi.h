/*
 * mpi.h: Shoal's MPI interface (source compatible with MPI 4.0 for the
 * chapters listed in docs/MPI.md).
 *
 * Handles are pointers to library objects; predefined handles are the
 * addresses of objects the library exports (so they are address constants,
 * usable in static initializers), and the null handles are NULL.  Every
 * function exists twice: MPI_X, a weak alias a tool may replace, and PMPI_X
 * (the profiling interface).  Counts in the _c functions are MPI_Count.
 */
#ifndef SHOAL_MPI_H
#define SHOAL_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------ */

#define MPI_VERSION 4
#define MPI_SUBVERSION 0
#define SHOAL_MPI 1

/* Exported from libshoal (the library builds with hidden visibility). */
#if defined(__GNUC__)
#define SHOAL_MPI_API __attribute__((visibility("default")))
#else
#define SHOAL_MPI_API
#endif

/* ---- basic types -------------------------------------------------------- */

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct shoal_mpi_comm *MPI_Comm;
typedef struct shoal_mpi_group *MPI_Group;
typedef struct shoal_mpi_datatype *MPI_Datatype;
typedef struct shoal_mpi_request *MPI_Request;
typedef struct shoal_mpi_request *MPI_Message; /* a matched, unreceived msg */
typedef struct shoal_mpi_op *MPI_Op;
typedef struct shoal_mpi_errhandler *MPI_Errhandler;
typedef struct shoal_mpi_info *MPI_Info;
typedef struct shoal_mpi_win *MPI_Win;   /* no RMA yet: handles only */
typedef struct shoal_mpi_file *MPI_File;
typedef struct shoal_mpi_session *MPI_Session;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int shoal_cancelled; /* internal: use MPI_Test_cancelled */
    MPI_Count shoal_count; /* internal: bytes received; MPI_Get_count */
} MPI_Status;

/* ---- predefined objects (exported by libshoal) --------------------------- */

/*
 * Programs take these objects' addresses, so a program's link reserves
 * each one's size as the library exports it (a copy relocation).  The
 * library exports them padded to the fixed sizes below, whatever their
 * structures hold in a later version, so programs built against an earlier
 * libshoal.so.0 keep working (tests/abi/check-exports.sh checks the sizes).
 */
#define SHOAL_MPI_COMM_STORAGE 1024
#define SHOAL_MPI_GROUP_STORAGE 128
#define SHOAL_MPI_INFO_STORAGE 128
#define SHOAL_MPI_REQUEST_STORAGE 512
#ifndef SHOAL_MPI_PREDEF_STORAGE /* defined only where they are defined */
SHOAL_MPI_API extern struct shoal_mpi_comm shoal_mpi_comm_world, shoal_mpi_comm_self;
SHOAL_MPI_API extern struct shoal_mpi_group shoal_mpi_group_empty;
SHOAL_MPI_API extern struct shoal_mpi_info shoal_mpi_info_env;
SHOAL_MPI_API extern struct shoal_mpi_request shoal_mpi_message_no_proc;
#endif

/*
 * Predefined datatypes, operations and error handlers are elements of
 * exported arrays.  Their objects have a fixed size (the strides below) so
 * that programs, which see only opaque storage, can name element i as an
 * address constant; the library (SHOAL_MPI_INTERNAL) sees the real types.
 */
#define SHOAL_MPI_DT_STRIDE 512
#define SHOAL_MPI_OP_STRIDE 64
#define SHOAL_MPI_ERRH_STRIDE 64
/* ... and the arrays have room for predefined objects of later versions,
 * so their exported sizes stay these (the ABI, as the strides). */
#define SHOAL_MPI_DT_SLOTS 128
#define SHOAL_MPI_OP_SLOTS 32
#define SHOAL_MPI_ERRH_SLOTS 8
#ifndef SHOAL_MPI_INTERNAL
typedef struct { char shoal_opaque_[SHOAL_MPI_DT_STRIDE]; } shoal_mpi_dt_slot_t;
typedef struct { char shoal_opaque_[SHOAL_MPI_OP_STRIDE]; } shoal_mpi_op_slot_t;
typedef struct { char shoal_opaque_[SHOAL_MPI_ERRH_STRIDE]; } shoal_mpi_errh_slot_t;
SHOAL_MPI_API extern shoal_mpi_dt_slot_t shoal_mpi_dt_predef[];
SHOAL_MPI_API extern shoal_mpi_op_slot_t shoal_mpi_op_predef[];
SHOAL_MPI_API extern shoal_mpi_errh_slot_t shoal_mpi_errh_predef[];
#define SHOAL_MPI_DT_(i) ((MPI_Datatype)(void *)&shoal_mpi_dt_predef[i])
#define SHOAL_MPI_OP_(i) ((MPI_Op)(void *)&shoal_mpi_op_predef[i])
#define SHOAL_MPI_ERRH_(i) ((MPI_Errhandler)(void *)&shoal_mpi_errh_predef[i])
#else
#define SHOAL_MPI_DT_(i) (&shoal_mpi_dt_predef[i])
#define SHOAL_MPI_OP_(i) (&shoal_mpi_op_predef[i])
#define SHOAL_MPI_ERRH_(i) (&shoal_mpi_errh_predef[i])
#endif

#define MPI_COMM_WORLD (&shoal_mpi_comm_world)
#define MPI_COMM_SELF (&shoal_mpi_comm_self)
#define MPI_GROUP_EMPTY (&shoal_mpi_group_empty)
#define MPI_INFO_ENV (&shoal_mpi_info_env)
#define MPI_MESSAGE_NO_PROC (&shoal_mpi_message_no_proc)

#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)
#define MPI_SESSION_NULL ((MPI_Session)0)

/*
 * Predefined datatypes: index into shoal_mpi_dt_predef.  The list is
 * X(index, C name, C type or "struct" for pairs/packed) and is the single
 * source of truth for the library too.
 */
#define SHOAL_MPI_PREDEF_TYPES(X)                                            \
    X(1, MPI_CHAR)                                                           \
    X(2, MPI_SIGNED_CHAR)                                                    \
    X(3, MPI_UNSIGNED_CHAR)                                                  \
    X(4, MPI_BYTE)                                                           \
    X(5, MPI_SHORT)                                                          \
    X(6, MPI_UNSIGNED_SHORT)                                                 \
    X(7, MPI_INT)                                                            \
    X(8, MPI_UNSIGNED)                                                       \
    X(9, MPI_LONG)                                                           \
    X(10, MPI_UNSIGNED_LONG)                                                 \
    X(11, MPI_LONG_LONG_INT)                                                 \
    X(12, MPI_UNSIGNED_LONG_LONG)                                            \
    X(13, MPI_FLOAT)                                                         \
    X(14, MPI_DOUBLE)                                                        \
    X(15, MPI_LONG_DOUBLE)                                                   \
    X(16, MPI_WCHAR)                                                         \
    X(17, MPI_C_BOOL)                                                        \
    X(18, MPI_INT8_T)                                                        \
    X(19, MPI_INT16_T)                                                       \
    X(20, MPI_INT32_T)                                                       \
    X(21, MPI_INT64_T)                                                       \
    X(22, MPI_UINT8_T)                                                       \
    X(23, MPI_UINT16_T)                                                      \
    X(24, MPI_UINT32_T)                                                      \
    X(25, MPI_UINT64_T)                                                      \
    X(26, MPI_AINT)                                                          \
    X(27, MPI_COUNT)                                                         \
    X(28, MPI_OFFSET)                                                        \
    X(29, MPI_C_FLOAT_COMPLEX)                                               \
    X(30, MPI_C_DOUBLE_COMPLEX)                                              \
    X(31, MPI_C_LONG_DOUBLE_COMPLEX)                                         \
    X(32, MPI_PACKED)                                                        \
    X(33, MPI_FLOAT_INT)                                                     \
    X(34, MPI_DOUBLE_INT)                                                    \
    X(35, MPI_LONG_INT)                                                      \
    X(36, MPI_2INT)                                                          \
    X(37, MPI_SHORT_INT)                                                     \
    X(38, MPI_LONG_DOUBLE_INT)                                               \
    X(39, MPI_UB)                                                            \
    X(40, MPI_LB)                                                            \
    X(41, MPI_CXX_BOOL)                                                      \
    X(42, MPI_CXX_FLOAT_COMPLEX)                                             \
    X(43, MPI_CXX_DOUBLE_COMPLEX)                                            \
    X(44, MPI_CXX_LONG_DOUBLE_COMPLEX)                                       \
    X(45, MPI_INTEGER)                                                       \
    X(46, MPI_REAL)                                                          \
    X(47, MPI_DOUBLE_PRECISION)                                              \
    X(48, MPI_LOGICAL)                                                       \
    X(49, MPI_CHARACTER)                                                     \
    X(50, MPI_COMPLEX)                                                       \
    X(51, MPI_DOUBLE_COMPLEX)                                                \
    X(52, MPI_2REAL)                                                         \
    X(53, MPI_2DOUBLE_PRECISION)                                             \
    X(54, MPI_2INTEGER)

#define SHOAL_MPI_NPREDEF_TYPES 55 /* index 0 is unused */

#define MPI_CHAR SHOAL_MPI_DT_(1)
#define MPI_SIGNED_CHAR SHOAL_MPI_DT_(2)
#define MPI_UNSIGNED_CHAR SHOAL_MPI_DT_(3)
#define MPI_BYTE SHOAL_MPI_DT_(4)
#define MPI_SHORT SHOAL_MPI_DT_(5)
#define MPI_UNSIGNED_SHORT SHOAL_MPI_DT_(6)
#define MPI_INT SHOAL_MPI_DT_(7)
#define MPI_UNSIGNED SHOAL_MPI_DT_(8)
#define MPI_LONG SHOAL_MPI_DT_(9)
#define MPI_UNSIGNED_LONG SHOAL_MPI_DT_(10)
#define MPI_LONG_LONG_INT SHOAL_MPI_DT_(11)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG SHOAL_MPI_DT_(12)
#define MPI_FLOAT SHOAL_MPI_DT_(13)
#define MPI_DOUBLE SHOAL_MPI_DT_(14)
#define MPI_LONG_DOUBLE SHOAL_MPI_DT_(15)
#define MPI_WCHAR SHOAL_MPI_DT_(16)
#define MPI_C_BOOL SHOAL_MPI_DT_(17)
#define MPI_INT8_T SHOAL_MPI_DT_(18)
#define MPI_INT16_T SHOAL_MPI_DT_(19)
#define MPI_INT32_T SHOAL_MPI_DT_(20)
#define MPI_INT64_T SHOAL_MPI_DT_(21)
#define MPI_UINT8_T SHOAL_MPI_DT_(22)
#define MPI_UINT16_T SHOAL_MPI_DT_(23)
#define MPI_UINT32_T SHOAL_MPI_DT_(24)
#define MPI_UINT64_T SHOAL_MPI_DT_(25)
#define MPI_AINT SHOAL_MPI_DT_(26)
#define MPI_COUNT SHOAL_MPI_DT_(27)
#define MPI_OFFSET SHOAL_MPI_DT_(28)
#define MPI_C_FLOAT_COMPLEX SHOAL_MPI_DT_(29)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX SHOAL_MPI_DT_(30)
#define MPI_C_LONG_DOUBLE_COMPLEX SHOAL_MPI_DT_(31)
#define MPI_PACKED SHOAL_MPI_DT_(32)
#define MPI_FLOAT_INT SHOAL_MPI_DT_(33)
#define MPI_DOUBLE_INT SHOAL_MPI_DT_(34)
#define MPI_LONG_INT SHOAL_MPI_DT_(35)
#define MPI_2INT SHOAL_MPI_DT_(36)
#define MPI_SHORT_INT SHOAL_MPI_DT_(37)
#define MPI_LONG_DOUBLE_INT SHOAL_MPI_DT_(38)
#define MPI_UB SHOAL_MPI_DT_(39)
#define MPI_LB SHOAL_MPI_DT_(40)
#define MPI_CXX_BOOL SHOAL_MPI_DT_(41)
#define MPI_CXX_FLOAT_COMPLEX SHOAL_MPI_DT_(42)
#define MPI_CXX_DOUBLE_COMPLEX SHOAL_MPI_DT_(43)
#define MPI_CXX_LONG_DOUBLE_COMPLEX SHOAL_MPI_DT_(44)
#define MPI_INTEGER SHOAL_MPI_DT_(45)
#define MPI_REAL SHOAL_MPI_DT_(46)
#define MPI_DOUBLE_PRECISION SHOAL_MPI_DT_(47)
#define MPI_LOGICAL SHOAL_MPI_DT_(48)
#define MPI_CHARACTER SHOAL_MPI_DT_(49)
#define MPI_COMPLEX SHOAL_MPI_DT_(50)
#define MPI_DOUBLE_COMPLEX SHOAL_MPI_DT_(51)
#define MPI_2REAL SHOAL_MPI_DT_(52)
#define MPI_2DOUBLE_PRECISION SHOAL_MPI_DT_(53)
#define MPI_2INTEGER SHOAL_MPI_DT_(54)

/* Predefined operations: index into shoal_mpi_op_predef. */
#define MPI_MAX SHOAL_MPI_OP_(1)
#define MPI_MIN SHOAL_MPI_OP_(2)
#define MPI_SUM SHOAL_MPI_OP_(3)
#define MPI_PROD SHOAL_MPI_OP_(4)
#define MPI_LAND SHOAL_MPI_OP_(5)
#define MPI_BAND SHOAL_MPI_OP_(6)
#define MPI_LOR SHOAL_MPI_OP_(7)
#define MPI_BOR SHOAL_MPI_OP_(8)
#define MPI_LXOR SHOAL_MPI_OP_(9)
#define MPI_BXOR SHOAL_MPI_OP_(10)
#define MPI_MAXLOC SHOAL_MPI_OP_(11)
#define MPI_MINLOC SHOAL_MPI_OP_(12)
#define MPI_REPLACE SHOAL_MPI_OP_(13)
#define MPI_NO_OP SHOAL_MPI_OP_(14)
#define SHOAL_MPI_NPREDEF_OPS 15

/* Predefined error handlers. */
#define MPI_ERRORS_ARE_FATAL SHOAL_MPI_ERRH_(1)
#define MPI_ERRORS_RETURN SHOAL_MPI_ERRH_(2)
#define MPI_ERRORS_ABORT SHOAL_MPI_ERRH_(3)

/* ---- constants ----------------------------------------------------------- */

#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 96
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256

#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_BUFFER_AUTOMATIC ((void *)-2)
#define MPI_STATUS_IGNORE ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE ((int *)1)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
SHOAL_MPI_API extern int shoal_mpi_unweighted_, shoal_mpi_weights_empty_;
#define MPI_UNWEIGHTED (&shoal_mpi_unweighted_)
#define MPI_WEIGHTS_EMPTY (&shoal_mpi_weights_empty_)

/* file access modes (bits of amode) */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256

/* file pointer positioning (whence of MPI_File_seek) */
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604

/* MPI_File_set_view's disp for files opened MPI_MODE_SEQUENTIAL */
#define MPI_DISPLACEMENT_CURRENT (-54278278)

/* thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* results of comparisons */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* topologies */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* split types */
#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_UNGUIDED 2
#define MPI_COMM_TYPE_HW_GUIDED 3
#define SHOAL_COMM_TYPE_HOST MPI_COMM_TYPE_SHARED

/* subarray and darray */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* datatype combiners */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12
#define MPI_COMBINER_F90_REAL 13
#define MPI_COMBINER_F90_COMPLEX 14
#define MPI_COMBINER_F90_INTEGER 15
#define MPI_COMBINER_RESIZED 16
#define MPI_COMBINER_VALUE_INDEX 17

#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL 2
#define MPI_TYPECLASS_COMPLEX 3

/* predefined attribute keys (on MPI_COMM_WORLD) */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_LASTUSEDCODE 6
#define MPI_APPNUM 7
/* ... and ULFM's (mpi-ext.h, docs/FT.md): a pointer to an int, 1 when the
 * job tolerates failures (shoalrun --ft), else 0, as Open MPI's MPIX_FT. */
#define MPIX_FT 8

/* ---- error classes ------------------------------------------------------- */

#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_FILE 38
#define MPI_ERR_NOT_SAME 39
#define MPI_ERR_AMODE 40
#define MPI_ERR_UNSUPPORTED_DATAREP 41
#define MPI_ERR_UNSUPPORTED_OPERATION 42
#define MPI_ERR_NO_SUCH_FILE 43
#define MPI_ERR_FILE_EXISTS 44
#define MPI_ERR_BAD_FILE 45
#define MPI_ERR_ACCESS 46
#define MPI_ERR_NO_SPACE 47
#define MPI_ERR_QUOTA 48
#define MPI_ERR_READ_ONLY 49
#define MPI_ERR_FILE_IN_USE 50
#define MPI_ERR_DUP_DATAREP 51
#define MPI_ERR_CONVERSION 52
#define MPI_ERR_IO 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_ERR_SESSION 58
#define MPI_ERR_PROC_ABORTED 59
#define MPI_ERR_VALUE_TOO_LARGE 60
#define MPI_T_ERR_INVALID 61
/* ULFM error classes (fault tolerance, docs/FT.md; also in mpi-ext.h) */
#define MPIX_ERR_PROC_FAILED 62
#define MPIX_ERR_PROC_FAILED_PENDING 63
#define MPIX_ERR_REVOKED 64
/* The tool information interface's classes (MPI_T, MPI 4.0 chapter 15) */
#define MPI_T_ERR_MEMORY 65
#define MPI_T_ERR_NOT_INITIALIZED 66
#define MPI_T_ERR_CANNOT_INIT 67
#define MPI_T_ERR_INVALID_INDEX 68
#define MPI_T_ERR_INVALID_ITEM 69
#define MPI_T_ERR_INVALID_HANDLE 70
#define MPI_T_ERR_OUT_OF_HANDLES 71
#define MPI_T_ERR_OUT_OF_SESSIONS 72
#define MPI_T_ERR_INVALID_SESSION 73
#define MPI_T_ERR_CVAR_SET_NOT_NOW 74
#define MPI_T_ERR_CVAR_SET_NEVER 75
#define MPI_T_ERR_PVAR_NO_STARTSTOP 76
#define MPI_T_ERR_PVAR_NO_WRITE 77
#define MPI_T_ERR_PVAR_NO_ATOMIC 78
#define MPI_T_ERR_INVALID_NAME 79
#define MPI_ERR_LASTCODE 0x3fffffff

/* ---- callbacks ----------------------------------------------------------- */

typedef void MPI_User_function(void *invec, void *inoutvec, int *len,
                               MPI_Datatype *datatype);
typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len,
                                 MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *code, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *code, ...);
/* User data representations (MPI_Register_datarep, src/io/io_datarep.c) */
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype,
                                        MPI_Aint *file_extent,
                                        void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf,
                                            MPI_Datatype datatype, int count,
                                            void *filebuf,
                                            MPI_Offset position,
                                            void *extra_state);
typedef int MPI_Datarep_conversion_function_c(void *userbuf,
                                              MPI_Datatype datatype,
                                              MPI_Count count, void *filebuf,
                                              MPI_Offset position,
                                              void *extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0)
typedef void MPI_Session_errhandler_function(MPI_Session *s, int *code, ...);

typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int keyval,
                                        void *extra_state,
                                        void *attribute_val_in,
                                        void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval,
                                          void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int keyval,
                                        void *extra_state,
                                        void *attribute_val_in,
                                        void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype type, int keyval,
                                          void *attribute_val,
                                          void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int keyval,
                                       void *extra_state,
                                       void *attribute_val_in,
                                       void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int keyval,
                                         void *attribute_val,
                                         void *extra_state);
/* deprecated MPI-1 names */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out,
                              int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val,
                                void *extra_state);

typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);

/* Predefined attribute callbacks (library functions). */
SHOAL_MPI_API int shoal_mpi_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *);
SHOAL_MPI_API int shoal_mpi_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
SHOAL_MPI_API int shoal_mpi_null_delete_fn(MPI_Comm, int, void *, void *);
SHOAL_MPI_API int shoal_mpi_type_null_copy_fn(MPI_Datatype, int, void *, void *, void *,
                                int *);
SHOAL_MPI_API int shoal_mpi_type_dup_fn(MPI_Datatype, int, void *, void *, void *, int *);
SHOAL_MPI_API int shoal_mpi_type_null_delete_fn(MPI_Datatype, int, void *, void *);
#define MPI_COMM_NULL_COPY_FN shoal_mpi_null_copy_fn
#define MPI_COMM_DUP_FN shoal_mpi_dup_fn
#define MPI_COMM_NULL_DELETE_FN shoal_mpi_null_delete_fn
#define MPI_NULL_COPY_FN shoal_mpi_null_copy_fn
#define MPI_DUP_FN shoal_mpi_dup_fn
#define MPI_NULL_DELETE_FN shoal_mpi_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN shoal_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN shoal_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN shoal_mpi_type_null_delete_fn

/* ---- functions ----------------------------------------------------------- */

/*
 * SHOAL_MPI_FN(return type, name without prefix, parameters) declares both
 * MPI_name and PMPI_name.
 */
#define SHOAL_MPI_FN(ret, name, params)                                     \
    SHOAL_MPI_API ret MPI_##name params;                                     \
    SHOAL_MPI_API ret PMPI_##name params;

/* environment */
SHOAL_MPI_FN(int, Init, (int *argc, char ***argv))
SHOAL_MPI_FN(int, Init_thread,
             (int *argc, char ***argv, int required, int *provided))
SHOAL_MPI_FN(int, Finalize, (void))
SHOAL_MPI_FN(int, Initialized, (int *flag))
SHOAL_MPI_FN(int, Finalized, (int *flag))
SHOAL_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
SHOAL_MPI_FN(int, Query_thread, (int *provided))
SHOAL_MPI_FN(int, Is_thread_main, (int *flag))
SHOAL_MPI_FN(double, Wtime, (void))
SHOAL_MPI_FN(double, Wtick, (void))
SHOAL_MPI_FN(int, Get_processor_name, (char *name, int *resultlen))
SHOAL_MPI_FN(int, Get_version, (int *version, int *subversion))
SHOAL_MPI_FN(int, Get_library_version, (char *version, int *resultlen))
SHOAL_MPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
SHOAL_MPI_FN(int, Free_mem, (void *base))
SHOAL_MPI_FN(int, Pcontrol, (const int level, ...))

/* errors */
SHOAL_MPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
SHOAL_MPI_FN(int, Error_class, (int errorcode, int *errorclass))
SHOAL_MPI_FN(int, Add_error_class, (int *errorclass))
SHOAL_MPI_FN(int, Add_error_code, (int errorclass, int *errorcode))
SHOAL_MPI_FN(int, Add_error_string, (int errorcode, const char *string))
SHOAL_MPI_FN(int, Remove_error_class, (int errorclass))
SHOAL_MPI_FN(int, Remove_error_code, (int errorcode))
SHOAL_MPI_FN(int, Remove_error_string, (int errorcode))
SHOAL_MPI_FN(int, Comm_create_errhandler,
             (MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler))
SHOAL_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler eh))
SHOAL_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *eh))
SHOAL_MPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
SHOAL_MPI_FN(int, Errhandler_free, (MPI_Errhandler *eh))

/* sessions (MPI 4.0 section 11.3): MPI without MPI_Init, or beside it */
SHOAL_MPI_FN(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler,
                                 MPI_Session *session))
SHOAL_MPI_FN(int, Session_finalize, (MPI_Session *session))
SHOAL_MPI_FN(int, Session_get_num_psets, (MPI_Session session,
                                          MPI_Info info, int *npset_names))
SHOAL_MPI_FN(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info,
                                         int n, int *pset_len,
                                         char *pset_name))
SHOAL_MPI_FN(int, Session_get_info, (MPI_Session session,
                                     MPI_Info *info_used))
SHOAL_MPI_FN(int, Session_get_pset_info, (MPI_Session session,
                                          const char *pset_name,
                                          MPI_Info *info))
SHOAL_MPI_FN(int, Group_from_session_pset, (MPI_Session session,
                                            const char *pset_name,
                                            MPI_Group *newgroup))
SHOAL_MPI_FN(int, Comm_create_from_group, (MPI_Group group,
                                           const char *stringtag,
                                           MPI_Info info,
                                           MPI_Errhandler errhandler,
                                           MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Intercomm_create_from_groups,
             (MPI_Group local_group, int local_leader,
              MPI_Group remote_group, int remote_leader,
              const char *stringtag, MPI_Info info,
              MPI_Errhandler errhandler, MPI_Comm *newintercomm))
SHOAL_MPI_FN(int, Session_create_errhandler,
             (MPI_Session_errhandler_function *fn,
              MPI_Errhandler *errhandler))
SHOAL_MPI_FN(int, Session_set_errhandler, (MPI_Session session,
                                           MPI_Errhandler errhandler))
SHOAL_MPI_FN(int, Session_get_errhandler, (MPI_Session session,
                                           MPI_Errhandler *errhandler))
SHOAL_MPI_FN(int, Session_call_errhandler, (MPI_Session session,
                                            int errorcode))

/* info */
SHOAL_MPI_FN(int, Info_create, (MPI_Info *info))
SHOAL_MPI_FN(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
SHOAL_MPI_FN(int, Info_set, (MPI_Info info, const char *key, const char *value))
SHOAL_MPI_FN(int, Info_get, (MPI_Info info, const char *key, int valuelen,
                             char *value, int *flag))
SHOAL_MPI_FN(int, Info_get_string, (MPI_Info info, const char *key,
                                    int *buflen, char *value, int *flag))
SHOAL_MPI_FN(int, Info_get_valuelen,
             (MPI_Info info, const char *key, int *valuelen, int *flag))
SHOAL_MPI_FN(int, Info_delete, (MPI_Info info, const char *key))
SHOAL_MPI_FN(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
SHOAL_MPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
SHOAL_MPI_FN(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
SHOAL_MPI_FN(int, Info_free, (MPI_Info *info))

/* point-to-point */
SHOAL_MPI_FN(int, Send, (const void *buf, int count, MPI_Datatype datatype,
                         int dest, int tag, MPI_Comm comm))
SHOAL_MPI_FN(int, Ssend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
SHOAL_MPI_FN(int, Bsend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
SHOAL_MPI_FN(int, Rsend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
SHOAL_MPI_FN(int, Recv, (void *buf, int count, MPI_Datatype datatype,
                         int source, int tag, MPI_Comm comm,
                         MPI_Status *status))
SHOAL_MPI_FN(int, Isend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm,
                          MPI_Request *request))
SHOAL_MPI_FN(int, Issend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
SHOAL_MPI_FN(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
SHOAL_MPI_FN(int, Irsend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
SHOAL_MPI_FN(int, Irecv, (void *buf, int count, MPI_Datatype datatype,
                          int source, int tag, MPI_Comm comm,
                          MPI_Request *request))
SHOAL_MPI_FN(int, Send_init, (const void *buf, int count,
                              MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ssend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Bsend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Rsend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Recv_init, (void *buf, int count, MPI_Datatype datatype,
                              int source, int tag, MPI_Comm comm,
                              MPI_Request *request))
SHOAL_MPI_FN(int, Sendrecv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void *recvbuf, int recvcount,
              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Status *status))
SHOAL_MPI_FN(int, Sendrecv_replace,
             (void *buf, int count, MPI_Datatype datatype, int dest,
              int sendtag, int source, int recvtag, MPI_Comm comm,
              MPI_Status *status))
SHOAL_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm,
                          MPI_Status *status))
SHOAL_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag,
                           MPI_Status *status))
SHOAL_MPI_FN(int, Mprobe, (int source, int tag, MPI_Comm comm,
                           MPI_Message *message, MPI_Status *status))
SHOAL_MPI_FN(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag,
                            MPI_Message *message, MPI_Status *status))
SHOAL_MPI_FN(int, Mrecv, (void *buf, int count, MPI_Datatype datatype,
                          MPI_Message *message, MPI_Status *status))
SHOAL_MPI_FN(int, Imrecv, (void *buf, int count, MPI_Datatype datatype,
                           MPI_Message *message, MPI_Request *request))
SHOAL_MPI_FN(int, Buffer_attach, (void *buffer, int size))
SHOAL_MPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))

/* large-count point-to-point */
SHOAL_MPI_FN(int, Send_c, (const void *buf, MPI_Count count,
                           MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm))
SHOAL_MPI_FN(int, Ssend_c, (const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm))
SHOAL_MPI_FN(int, Bsend_c, (const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm))
SHOAL_MPI_FN(int, Rsend_c, (const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm))
SHOAL_MPI_FN(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
                           int source, int tag, MPI_Comm comm,
                           MPI_Status *status))
SHOAL_MPI_FN(int, Isend_c, (const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Issend_c, (const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ibsend_c, (const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Irsend_c, (const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
                            int source, int tag, MPI_Comm comm,
                            MPI_Request *request))
SHOAL_MPI_FN(int, Send_init_c, (const void *buf, MPI_Count count,
                                MPI_Datatype datatype, int dest, int tag,
                                MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ssend_init_c, (const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, int dest, int tag,
                                 MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Bsend_init_c, (const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, int dest, int tag,
                                 MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Rsend_init_c, (const void *buf, MPI_Count count,
                                 MPI_Datatype datatype, int dest, int tag,
                                 MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Recv_init_c, (void *buf, MPI_Count count,
                                MPI_Datatype datatype, int source, int tag,
                                MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Sendrecv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Status *status))
SHOAL_MPI_FN(int, Sendrecv_replace_c,
             (void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
              int sendtag, int source, int recvtag, MPI_Comm comm,
              MPI_Status *status))
SHOAL_MPI_FN(int, Isendrecv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void *recvbuf, int recvcount,
              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Isendrecv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
              MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Isendrecv_replace,
             (void *buf, int count, MPI_Datatype datatype, int dest,
              int sendtag, int source, int recvtag, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Isendrecv_replace_c,
             (void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
              int sendtag, int source, int recvtag, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Message *message, MPI_Status *status))
SHOAL_MPI_FN(int, Imrecv_c, (void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Message *message,
                             MPI_Request *request))
SHOAL_MPI_FN(int, Buffer_attach_c, (void *buffer, MPI_Count size))
SHOAL_MPI_FN(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))

/* requests and status */
SHOAL_MPI_FN(int, Wait, (MPI_Request *request, MPI_Status *status))
SHOAL_MPI_FN(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
SHOAL_MPI_FN(int, Waitall, (int count, MPI_Request requests[],
                            MPI_Status *statuses))
SHOAL_MPI_FN(int, Testall, (int count, MPI_Request requests[], int *flag,
                            MPI_Status *statuses))
SHOAL_MPI_FN(int, Waitany, (int count, MPI_Request requests[], int *index,
                            MPI_Status *status))
SHOAL_MPI_FN(int, Testany, (int count, MPI_Request requests[], int *index,
                            int *flag, MPI_Status *status))
SHOAL_MPI_FN(int, Waitsome, (int incount, MPI_Request requests[],
                             int *outcount, int indices[],
                             MPI_Status *statuses))
SHOAL_MPI_FN(int, Testsome, (int incount, MPI_Request requests[],
                             int *outcount, int indices[],
                             MPI_Status *statuses))
SHOAL_MPI_FN(int, Request_get_status, (MPI_Request request, int *flag,
                                       MPI_Status *status))
SHOAL_MPI_FN(int, Request_free, (MPI_Request *request))
SHOAL_MPI_FN(int, Cancel, (MPI_Request *request))
SHOAL_MPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
SHOAL_MPI_FN(int, Start, (MPI_Request *request))
SHOAL_MPI_FN(int, Startall, (int count, MPI_Request requests[]))
SHOAL_MPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype,
                              int *count))
SHOAL_MPI_FN(int, Get_count_c, (const MPI_Status *status,
                                MPI_Datatype datatype, MPI_Count *count))
SHOAL_MPI_FN(int, Get_elements, (const MPI_Status *status,
                                 MPI_Datatype datatype, int *count))
SHOAL_MPI_FN(int, Get_elements_x, (const MPI_Status *status,
                                   MPI_Datatype datatype, MPI_Count *count))
SHOAL_MPI_FN(int, Get_elements_c, (const MPI_Status *status,
                                   MPI_Datatype datatype, MPI_Count *count))
SHOAL_MPI_FN(int, Status_set_elements, (MPI_Status *status,
                                        MPI_Datatype datatype, int count))
SHOAL_MPI_FN(int, Status_set_elements_x, (MPI_Status *status,
                                          MPI_Datatype datatype,
                                          MPI_Count count))
SHOAL_MPI_FN(int, Status_set_cancelled, (MPI_Status *status, int flag))
SHOAL_MPI_FN(int, Grequest_start,
             (MPI_Grequest_query_function *query_fn,
              MPI_Grequest_free_function *free_fn,
              MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
              MPI_Request *request))
SHOAL_MPI_FN(int, Grequest_complete, (MPI_Request request))

/* datatypes */
SHOAL_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_vector, (int count, int blocklength, int stride,
                                MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hvector, (int count, int blocklength,
                                        MPI_Aint stride, MPI_Datatype oldtype,
                                        MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_indexed, (int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[],
                                 MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hindexed,
             (int count, const int array_of_blocklengths[],
              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_indexed_block,
             (int count, int blocklength, const int array_of_displacements[],
              MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hindexed_block,
             (int count, int blocklength,
              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_struct,
             (int count, const int array_of_blocklengths[],
              const MPI_Aint array_of_displacements[],
              const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_subarray,
             (int ndims, const int array_of_sizes[],
              const int array_of_subsizes[], const int array_of_starts[],
              int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_darray,
             (int size, int rank, int ndims, const int array_of_gsizes[],
              const int array_of_distribs[], const int array_of_dargs[],
              const int array_of_psizes[], int order, MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb,
                                        MPI_Aint extent,
                                        MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_commit, (MPI_Datatype *datatype))
SHOAL_MPI_FN(int, Type_free, (MPI_Datatype *datatype))
SHOAL_MPI_FN(int, Type_size, (MPI_Datatype datatype, int *size))
SHOAL_MPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
SHOAL_MPI_FN(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
SHOAL_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb,
                                    MPI_Aint *extent))
SHOAL_MPI_FN(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb,
                                      MPI_Count *extent))
SHOAL_MPI_FN(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb,
                                      MPI_Count *extent))
SHOAL_MPI_FN(int, Type_get_true_extent, (MPI_Datatype datatype,
                                         MPI_Aint *true_lb,
                                         MPI_Aint *true_extent))
SHOAL_MPI_FN(int, Type_get_true_extent_x, (MPI_Datatype datatype,
                                           MPI_Count *true_lb,
                                           MPI_Count *true_extent))
SHOAL_MPI_FN(int, Type_get_true_extent_c, (MPI_Datatype datatype,
                                           MPI_Count *true_lb,
                                           MPI_Count *true_extent))
SHOAL_MPI_FN(int, Type_get_envelope, (MPI_Datatype datatype,
                                      int *num_integers, int *num_addresses,
                                      int *num_datatypes, int *combiner))
SHOAL_MPI_FN(int, Type_get_contents,
             (MPI_Datatype datatype, int max_integers, int max_addresses,
              int max_datatypes, int array_of_integers[],
              MPI_Aint array_of_addresses[],
              MPI_Datatype array_of_datatypes[]))
SHOAL_MPI_FN(int, Type_set_name, (MPI_Datatype datatype, const char *name))
SHOAL_MPI_FN(int, Type_get_name, (MPI_Datatype datatype, char *name,
                                  int *resultlen))
SHOAL_MPI_FN(int, Type_match_size, (int typeclass, int size,
                                    MPI_Datatype *datatype))
SHOAL_MPI_FN(int, Type_create_keyval,
             (MPI_Type_copy_attr_function *copy_fn,
              MPI_Type_delete_attr_function *delete_fn, int *keyval,
              void *extra_state))
SHOAL_MPI_FN(int, Type_free_keyval, (int *keyval))
SHOAL_MPI_FN(int, Type_set_attr, (MPI_Datatype datatype, int keyval,
                                  void *attribute_val))
SHOAL_MPI_FN(int, Type_get_attr, (MPI_Datatype datatype, int keyval,
                                  void *attribute_val, int *flag))
SHOAL_MPI_FN(int, Type_delete_attr, (MPI_Datatype datatype, int keyval))
SHOAL_MPI_FN(int, Get_address, (const void *location, MPI_Aint *address))
SHOAL_MPI_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
SHOAL_MPI_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
SHOAL_MPI_FN(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype,
                         void *outbuf, int outsize, int *position,
                         MPI_Comm comm))
SHOAL_MPI_FN(int, Unpack, (const void *inbuf, int insize, int *position,
                           void *outbuf, int outcount, MPI_Datatype datatype,
                           MPI_Comm comm))
SHOAL_MPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype,
                              MPI_Comm comm, int *size))
SHOAL_MPI_FN(int, Pack_c, (const void *inbuf, MPI_Count incount,
                           MPI_Datatype datatype, void *outbuf,
                           MPI_Count outsize, MPI_Count *position,
                           MPI_Comm comm))
SHOAL_MPI_FN(int, Unpack_c, (const void *inbuf, MPI_Count insize,
                             MPI_Count *position, void *outbuf,
                             MPI_Count outcount, MPI_Datatype datatype,
                             MPI_Comm comm))
SHOAL_MPI_FN(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype,
                                MPI_Comm comm, MPI_Count *size))
SHOAL_MPI_FN(int, Pack_external, (const char datarep[], const void *inbuf,
                                  int incount, MPI_Datatype datatype,
                                  void *outbuf, MPI_Aint outsize,
                                  MPI_Aint *position))
SHOAL_MPI_FN(int, Unpack_external, (const char datarep[], const void *inbuf,
                                    MPI_Aint insize, MPI_Aint *position,
                                    void *outbuf, int outcount,
                                    MPI_Datatype datatype))
SHOAL_MPI_FN(int, Pack_external_size, (const char datarep[], int incount,
                                       MPI_Datatype datatype,
                                       MPI_Aint *size))
SHOAL_MPI_FN(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype,
                                      MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength,
                                  MPI_Count stride, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hvector_c,
             (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
              MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_indexed_c,
             (MPI_Count count, const MPI_Count array_of_blocklengths[],
              const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hindexed_c,
             (MPI_Count count, const MPI_Count array_of_blocklengths[],
              const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_indexed_block_c,
             (MPI_Count count, MPI_Count blocklength,
              const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_hindexed_block_c,
             (MPI_Count count, MPI_Count blocklength,
              const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_struct_c,
             (MPI_Count count, const MPI_Count array_of_blocklengths[],
              const MPI_Count array_of_displacements[],
              const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_resized_c,
             (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_subarray_c,
             (int ndims, const MPI_Count array_of_sizes[],
              const MPI_Count array_of_subsizes[],
              const MPI_Count array_of_starts[], int order,
              MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_create_darray_c,
             (int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
              const int array_of_distribs[], const int array_of_dargs[],
              const int array_of_psizes[], int order, MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_get_envelope_c,
             (MPI_Datatype datatype, MPI_Count *num_integers,
              MPI_Count *num_addresses, MPI_Count *num_large_counts,
              MPI_Count *num_datatypes, int *combiner))
SHOAL_MPI_FN(int, Type_get_contents_c,
             (MPI_Datatype datatype, MPI_Count max_integers,
              MPI_Count max_addresses, MPI_Count max_large_counts,
              MPI_Count max_datatypes, int array_of_integers[],
              MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
              MPI_Datatype array_of_datatypes[]))
SHOAL_MPI_FN(int, Pack_external_c,
             (const char datarep[], const void *inbuf, MPI_Count incount,
              MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
              MPI_Count *position))
SHOAL_MPI_FN(int, Unpack_external_c,
             (const char datarep[], const void *inbuf, MPI_Count insize,
              MPI_Count *position, void *outbuf, MPI_Count outcount,
              MPI_Datatype datatype))
SHOAL_MPI_FN(int, Pack_external_size_c,
             (const char datarep[], MPI_Count incount, MPI_Datatype datatype,
              MPI_Count *size))

/* groups */
SHOAL_MPI_FN(int, Group_size, (MPI_Group group, int *size))
SHOAL_MPI_FN(int, Group_rank, (MPI_Group group, int *rank))
SHOAL_MPI_FN(int, Group_translate_ranks, (MPI_Group group1, int n,
                                          const int ranks1[],
                                          MPI_Group group2, int ranks2[]))
SHOAL_MPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2,
                                  int *result))
SHOAL_MPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2,
                                MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2,
                                       MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2,
                                     MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_range_incl, (MPI_Group group, int n,
                                     int ranges[][3], MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_range_excl, (MPI_Group group, int n,
                                     int ranges[][3], MPI_Group *newgroup))
SHOAL_MPI_FN(int, Group_free, (MPI_Group *group))

/* communicators */
SHOAL_MPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
SHOAL_MPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
SHOAL_MPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
SHOAL_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2,
                                 int *result))
SHOAL_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info,
                                       MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm,
                              MPI_Request *request))
SHOAL_MPI_FN(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info,
                                        MPI_Comm *newcomm,
                                        MPI_Request *request))
SHOAL_MPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group,
                                MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group,
                                      int tag, MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key,
                               MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key,
                                    MPI_Info info, MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Comm_free, (MPI_Comm *comm))
SHOAL_MPI_FN(int, Comm_disconnect, (MPI_Comm *comm))
SHOAL_MPI_FN(int, Comm_test_inter, (MPI_Comm comm, int *flag))
SHOAL_MPI_FN(int, Comm_remote_size, (MPI_Comm comm, int *size))
SHOAL_MPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
SHOAL_MPI_FN(int, Intercomm_create, (MPI_Comm local_comm, int local_leader,
                                     MPI_Comm peer_comm, int remote_leader,
                                     int tag, MPI_Comm *newintercomm))
SHOAL_MPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high,
                                    MPI_Comm *newintracomm))
SHOAL_MPI_FN(int, Comm_set_name, (MPI_Comm comm, const char *name))
SHOAL_MPI_FN(int, Comm_get_name, (MPI_Comm comm, char *name,
                                  int *resultlen))
SHOAL_MPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
SHOAL_MPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
SHOAL_MPI_FN(int, Comm_create_keyval,
             (MPI_Comm_copy_attr_function *copy_fn,
              MPI_Comm_delete_attr_function *delete_fn, int *keyval,
              void *extra_state))
SHOAL_MPI_FN(int, Comm_free_keyval, (int *keyval))
SHOAL_MPI_FN(int, Comm_set_attr, (MPI_Comm comm, int keyval,
                                  void *attribute_val))
SHOAL_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int keyval,
                                  void *attribute_val, int *flag))
SHOAL_MPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int keyval))
SHOAL_MPI_FN(int, Keyval_create, (MPI_Copy_function *copy_fn,
                                  MPI_Delete_function *delete_fn,
                                  int *keyval, void *extra_state))
SHOAL_MPI_FN(int, Keyval_free, (int *keyval))
SHOAL_MPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
SHOAL_MPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val,
                             int *flag))
SHOAL_MPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval))

/* topologies */
SHOAL_MPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
SHOAL_MPI_FN(int, Cart_create, (MPI_Comm comm_old, int ndims,
                                const int dims[], const int periods[],
                                int reorder, MPI_Comm *comm_cart))
SHOAL_MPI_FN(int, Cartdim_get, (MPI_Comm comm, int *ndims))
SHOAL_MPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[],
                             int periods[], int coords[]))
SHOAL_MPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
SHOAL_MPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims,
                                int coords[]))
SHOAL_MPI_FN(int, Cart_shift, (MPI_Comm comm, int direction, int disp,
                               int *rank_source, int *rank_dest))
SHOAL_MPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[],
                             MPI_Comm *newcomm))
SHOAL_MPI_FN(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[],
                             const int periods[], int *newrank))
SHOAL_MPI_FN(int, Graph_create, (MPI_Comm comm_old, int nnodes,
                                 const int index[], const int edges[],
                                 int reorder, MPI_Comm *comm_graph))
SHOAL_MPI_FN(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
SHOAL_MPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges,
                              int index[], int edges[]))
SHOAL_MPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank,
                                          int *nneighbors))
SHOAL_MPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank,
                                    int maxneighbors, int neighbors[]))
SHOAL_MPI_FN(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[],
                              const int edges[], int *newrank))
SHOAL_MPI_FN(int, Dist_graph_create_adjacent,
             (MPI_Comm comm_old, int indegree, const int sources[],
              const int sourceweights[], int outdegree,
              const int destinations[], const int destweights[],
              MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
SHOAL_MPI_FN(int, Dist_graph_create,
             (MPI_Comm comm_old, int n, const int sources[],
              const int degrees[], const int destinations[],
              const int weights[], MPI_Info info, int reorder,
              MPI_Comm *comm_dist_graph))
SHOAL_MPI_FN(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree,
                                               int *outdegree, int *weighted))
SHOAL_MPI_FN(int, Dist_graph_neighbors,
             (MPI_Comm comm, int maxindegree, int sources[],
              int sourceweights[], int maxoutdegree, int destinations[],
              int destweights[]))
SHOAL_MPI_FN(int, Topo_test, (MPI_Comm comm, int *status))

/* operations */
SHOAL_MPI_FN(int, Op_create, (MPI_User_function *user_fn, int commute,
                              MPI_Op *op))
SHOAL_MPI_FN(int, Op_create_c, (MPI_User_function_c *user_fn, int commute,
                                MPI_Op *op))
SHOAL_MPI_FN(int, Op_free, (MPI_Op *op))
SHOAL_MPI_FN(int, Op_commutative, (MPI_Op op, int *commute))
SHOAL_MPI_FN(int, Reduce_local, (const void *inbuf, void *inoutbuf,
                                 int count, MPI_Datatype datatype, MPI_Op op))
SHOAL_MPI_FN(int, Reduce_local_c,
             (const void *inbuf, void *inoutbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op))

/* collectives */
SHOAL_MPI_FN(int, Barrier, (MPI_Comm comm))
SHOAL_MPI_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype,
                          int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm))
SHOAL_MPI_FN(int, Allreduce, (const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm))
SHOAL_MPI_FN(int, Gather, (const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm))
SHOAL_MPI_FN(int, Gatherv, (const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Scatter, (const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm))
SHOAL_MPI_FN(int, Scatterv, (const void *sendbuf, const int sendcounts[],
                             const int displs[], MPI_Datatype sendtype,
                             void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Allgather, (const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm))
SHOAL_MPI_FN(int, Allgatherv, (const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoall, (const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoallv, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoallw, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce_scatter, (const void *sendbuf, void *recvbuf,
                                   const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf,
                                         int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Scan, (const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Exscan, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))

/* nonblocking collectives: started at once, completed by MPI_Wait and
 * friends */
SHOAL_MPI_FN(int, Ibarrier,
             (MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ibcast,
             (void *buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iallreduce,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Igather,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Igatherv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, int root, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iscatter,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iscatterv,
             (const void *sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void *recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iallgather,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iallgatherv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoall,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoallv,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoallw,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void *recvbuf,
              const int recvcounts[], const int rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce_scatter,
             (const void *sendbuf, void *recvbuf, const int recvcounts[],
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce_scatter_block,
             (const void *sendbuf, void *recvbuf, int recvcount,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iscan,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iexscan,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))

/* persistent collectives: inactive until MPI_Start */
SHOAL_MPI_FN(int, Barrier_init,
             (MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Bcast_init,
             (void *buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_init,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Allreduce_init,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Gather_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Gatherv_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Scatter_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Scatterv_init,
             (const void *sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void *recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Allgather_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Allgatherv_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Alltoall_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Alltoallv_init,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Alltoallw_init,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void *recvbuf,
              const int recvcounts[], const int rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_scatter_init,
             (const void *sendbuf, void *recvbuf, const int recvcounts[],
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_scatter_block_init,
             (const void *sendbuf, void *recvbuf, int recvcount,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Scan_init,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Exscan_init,
             (const void *sendbuf, void *recvbuf, int count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))

/* neighbourhood collectives (Cartesian, graph and distributed graph
 * communicators): blocking, nonblocking, persistent */
SHOAL_MPI_FN(int, Neighbor_allgather,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_allgatherv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoall,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoallv,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoallw,
             (const void *sendbuf, const int sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm))
SHOAL_MPI_FN(int, Ineighbor_allgather,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_allgatherv,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoall,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoallv,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoallw,
             (const void *sendbuf, const int sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_allgather_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_allgatherv_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int displs[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoall_init,
             (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
              void *recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoallv_init,
             (const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoallw_init,
             (const void *sendbuf, const int sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
              MPI_Request *request))

/* large-count forms of the collectives (MPI 4.0): counts are MPI_Count,
 * count arrays MPI_Count[] and displacement arrays MPI_Aint[] (those of
 * MPI_Alltoallw_c in bytes, as in MPI_Alltoallw) */
SHOAL_MPI_FN(int, Bcast_c,
             (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Allreduce_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Gather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Gatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, int root,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Scatter_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm))
SHOAL_MPI_FN(int, Scatterv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Allgather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Allgatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoall_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoallv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Alltoallw_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce_scatter_c,
             (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Reduce_scatter_block_c,
             (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Scan_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Exscan_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
SHOAL_MPI_FN(int, Ibcast_c,
             (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iallreduce_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Igather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Igatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iscatter_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iscatterv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iallgather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Iallgatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoall_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoallv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ialltoallw_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce_scatter_c,
             (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ireduce_scatter_block_c,
             (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iscan_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Iexscan_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Bcast_init_c,
             (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_init_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Allreduce_init_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Gather_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Gatherv_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Scatter_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Scatterv_init_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Allgather_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Allgatherv_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Alltoall_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Alltoallv_init_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Alltoallw_init_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_scatter_init_c,
             (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Reduce_scatter_block_init_c,
             (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Scan_init_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Exscan_init_c,
             (const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_allgather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_allgatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoall_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoallv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm))
SHOAL_MPI_FN(int, Neighbor_alltoallw_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm))
SHOAL_MPI_FN(int, Ineighbor_allgather_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_allgatherv_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoall_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoallv_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Ineighbor_alltoallw_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_allgather_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_allgatherv_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoall_init_c,
             (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoallv_init_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
              MPI_Request *request))
SHOAL_MPI_FN(int, Neighbor_alltoallw_init_c,
             (const void *sendbuf, const MPI_Count sendcounts[],
              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void *recvbuf, const MPI_Count recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm, MPI_Info info, MPI_Request *request))

/* MPI-IO (src/io, docs/IO.md) */
SHOAL_MPI_FN(int, File_open, (MPI_Comm comm, const char *filename, int amode,
                              MPI_Info info, MPI_File *fh))
SHOAL_MPI_FN(int, File_close, (MPI_File *fh))
SHOAL_MPI_FN(int, File_delete, (const char *filename, MPI_Info info))
SHOAL_MPI_FN(int, File_set_size, (MPI_File fh, MPI_Offset size))
SHOAL_MPI_FN(int, File_preallocate, (MPI_File fh, MPI_Offset size))
SHOAL_MPI_FN(int, File_get_size, (MPI_File fh, MPI_Offset *size))
SHOAL_MPI_FN(int, File_get_group, (MPI_File fh, MPI_Group *group))
SHOAL_MPI_FN(int, File_get_amode, (MPI_File fh, int *amode))
SHOAL_MPI_FN(int, File_set_info, (MPI_File fh, MPI_Info info))
SHOAL_MPI_FN(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
SHOAL_MPI_FN(int, File_sync, (MPI_File fh))
SHOAL_MPI_FN(int, File_set_atomicity, (MPI_File fh, int flag))
SHOAL_MPI_FN(int, File_get_atomicity, (MPI_File fh, int *flag))
SHOAL_MPI_FN(int, File_create_errhandler,
             (MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler))
SHOAL_MPI_FN(int, File_set_errhandler, (MPI_File file, MPI_Errhandler eh))
SHOAL_MPI_FN(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *eh))
SHOAL_MPI_FN(int, File_call_errhandler, (MPI_File fh, int errorcode))
SHOAL_MPI_FN(int, File_set_view, (MPI_File fh, MPI_Offset disp,
                                  MPI_Datatype etype, MPI_Datatype filetype,
                                  const char *datarep, MPI_Info info))
SHOAL_MPI_FN(int, File_get_view, (MPI_File fh, MPI_Offset *disp,
                                  MPI_Datatype *etype, MPI_Datatype *filetype,
                                  char *datarep))
SHOAL_MPI_FN(int, Register_datarep,
             (const char *datarep,
              MPI_Datarep_conversion_function *read_conversion_fn,
              MPI_Datarep_conversion_function *write_conversion_fn,
              MPI_Datarep_extent_function *dtype_file_extent_fn,
              void *extra_state))
SHOAL_MPI_FN(int, Register_datarep_c,
             (const char *datarep,
              MPI_Datarep_conversion_function_c *read_conversion_fn,
              MPI_Datarep_conversion_function_c *write_conversion_fn,
              MPI_Datarep_extent_function *dtype_file_extent_fn,
              void *extra_state))
SHOAL_MPI_FN(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype,
                                         MPI_Aint *extent))
SHOAL_MPI_FN(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset,
                                         MPI_Offset *disp))
SHOAL_MPI_FN(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
SHOAL_MPI_FN(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
SHOAL_MPI_FN(int, File_seek_shared, (MPI_File fh, MPI_Offset offset,
                                     int whence))
SHOAL_MPI_FN(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
SHOAL_MPI_FN(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_all, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iread_all, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read_shared, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread_shared, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read_ordered, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset,
             void *buf, int count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_read_at_all_end, (MPI_File fh, void *buf,
             MPI_Status *status))
SHOAL_MPI_FN(int, File_read_all_begin, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_read_all_end, (MPI_File fh, void *buf,
             MPI_Status *status))
SHOAL_MPI_FN(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count,
             MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_read_ordered_end, (MPI_File fh, void *buf,
             MPI_Status *status))
SHOAL_MPI_FN(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_all, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iwrite_all, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write_shared, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write_ordered, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset,
             const void *buf, int count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_at_all_end, (MPI_File fh, const void *buf,
             MPI_Status *status))
SHOAL_MPI_FN(int, File_write_all_begin, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_all_end, (MPI_File fh, const void *buf,
             MPI_Status *status))
SHOAL_MPI_FN(int, File_write_ordered_begin, (MPI_File fh, const void *buf, int count,
             MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_ordered_end, (MPI_File fh, const void *buf,
             MPI_Status *status))

/* MPI-IO, large-count forms (MPI 4.0) */
SHOAL_MPI_FN(int, File_read_at_c, (MPI_File fh, MPI_Offset offset, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread_at_c, (MPI_File fh, MPI_Offset offset, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iread_at_all_c, (MPI_File fh, MPI_Offset offset, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_all_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iread_all_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read_shared_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iread_shared_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_read_ordered_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_read_at_all_begin_c, (MPI_File fh, MPI_Offset offset,
             void *buf, MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_read_all_begin_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_read_ordered_begin_c, (MPI_File fh, void *buf,
             MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_at_c, (MPI_File fh, MPI_Offset offset, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite_at_c, (MPI_File fh, MPI_Offset offset, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iwrite_at_all_c, (MPI_File fh, MPI_Offset offset, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_all_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_iwrite_all_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write_shared_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_iwrite_shared_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Request *request))
SHOAL_MPI_FN(int, File_write_ordered_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype, MPI_Status *status))
SHOAL_MPI_FN(int, File_write_at_all_begin_c, (MPI_File fh, MPI_Offset offset,
             const void *buf, MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_all_begin_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_write_ordered_begin_c, (MPI_File fh, const void *buf,
             MPI_Count count, MPI_Datatype datatype))
SHOAL_MPI_FN(int, File_get_type_extent_c, (MPI_File fh, MPI_Datatype datatype,
                                           MPI_Count *extent))

/*
 * Removed in MPI 3.0 (deprecated since MPI 2.0), kept so that old programs
 * build unchanged: each is its MPI-2 successor under the old name
 * (src/mpi/core/mpi1_removed.c).  New code should use the successors.
 */
typedef MPI_Comm_errhandler_function MPI_Handler_function;
SHOAL_MPI_FN(int, Address, (void *location, MPI_Aint *address))
SHOAL_MPI_FN(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
SHOAL_MPI_FN(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
SHOAL_MPI_FN(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
SHOAL_MPI_FN(int, Type_hvector, (int count, int blocklength, MPI_Aint stride,
                                 MPI_Datatype oldtype, MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_hindexed,
             (int count, int array_of_blocklengths[],
              MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Type_struct,
             (int count, int array_of_blocklengths[],
              MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[],
              MPI_Datatype *newtype))
SHOAL_MPI_FN(int, Errhandler_create, (MPI_Handler_function *function,
                                      MPI_Errhandler *errhandler))
SHOAL_MPI_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
SHOAL_MPI_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))

/*
 * The tool information interface (MPI_T, MPI 4.0 chapter 15; docs/MPI.md):
 * control variables are Shoal's SHOAL_* settings, performance variables
 * its active-message counters.
 */
typedef struct shoal_mpi_t_enum *MPI_T_enum;
typedef struct shoal_mpi_t_cvar_handle *MPI_T_cvar_handle;
typedef struct shoal_mpi_t_pvar_handle *MPI_T_pvar_handle;
typedef struct shoal_mpi_t_pvar_session *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)(intptr_t)-1)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
enum {
    MPI_T_VERBOSITY_USER_BASIC = 221, MPI_T_VERBOSITY_USER_DETAIL,
    MPI_T_VERBOSITY_USER_ALL, MPI_T_VERBOSITY_TUNER_BASIC,
    MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL,
    MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_NO_OBJECT = 1, MPI_T_BIND_MPI_COMM, MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE, MPI_T_BIND_MPI_GROUP,
    MPI_T_BIND_MPI_OP, MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN,
    MPI_T_BIND_MPI_MESSAGE, MPI_T_BIND_MPI_INFO, MPI_T_BIND_MPI_SESSION
};
enum {
    MPI_T_SCOPE_CONSTANT = 60, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL,
    MPI_T_SCOPE_GROUP, MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,
    MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_STATE = 240, MPI_T_PVAR_CLASS_LEVEL,
    MPI_T_PVAR_CLASS_SIZE, MPI_T_PVAR_CLASS_PERCENTAGE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER, MPI_T_PVAR_CLASS_GENERIC
};
typedef enum MPI_T_source_order {
    MPI_T_SOURCE_ORDERED = 270, MPI_T_SOURCE_UNORDERED
} MPI_T_source_order;
SHOAL_MPI_FN(int, T_init_thread, (int required, int *provided))
SHOAL_MPI_FN(int, T_finalize, (void))
SHOAL_MPI_FN(int, T_enum_get_info, (MPI_T_enum enumtype, int *num,
                                    char *name, int *name_len))
SHOAL_MPI_FN(int, T_enum_get_item, (MPI_T_enum enumtype, int index,
                                    int *value, char *name, int *name_len))
SHOAL_MPI_FN(int, T_cvar_get_num, (int *num_cvar))
SHOAL_MPI_FN(int, T_cvar_get_info, (int cvar_index, char *name,
                                    int *name_len, int *verbosity,
                                    MPI_Datatype *datatype,
                                    MPI_T_enum *enumtype, char *desc,
                                    int *desc_len, int *bind, int *scope))
SHOAL_MPI_FN(int, T_cvar_get_index, (const char *name, int *cvar_index))
SHOAL_MPI_FN(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle,
                                        MPI_T_cvar_handle *handle,
                                        int *count))
SHOAL_MPI_FN(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
SHOAL_MPI_FN(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
SHOAL_MPI_FN(int, T_cvar_write, (MPI_T_cvar_handle handle,
                                 const void *buf))
SHOAL_MPI_FN(int, T_pvar_get_num, (int *num_pvar))
SHOAL_MPI_FN(int, T_pvar_get_info, (int pvar_index, char *name,
                                    int *name_len, int *verbosity,
                                    int *var_class, MPI_Datatype *datatype,
                                    MPI_T_enum *enumtype, char *desc,
                                    int *desc_len, int *bind, int *readonly,
                                    int *continuous, int *atomic))
SHOAL_MPI_FN(int, T_pvar_get_index, (const char *name, int var_class,
                                     int *pvar_index))
SHOAL_MPI_FN(int, T_pvar_session_create, (MPI_T_pvar_session *session))
SHOAL_MPI_FN(int, T_pvar_session_free, (MPI_T_pvar_session *session))
SHOAL_MPI_FN(int, T_pvar_handle_alloc, (MPI_T_pvar_session session,
                                        int pvar_index, void *obj_handle,
                                        MPI_T_pvar_handle *handle,
                                        int *count))
SHOAL_MPI_FN(int, T_pvar_handle_free, (MPI_T_pvar_session session,
                                       MPI_T_pvar_handle *handle))
SHOAL_MPI_FN(int, T_pvar_start, (MPI_T_pvar_session session,
                                 MPI_T_pvar_handle handle))
SHOAL_MPI_FN(int, T_pvar_stop, (MPI_T_pvar_session session,
                                MPI_T_pvar_handle handle))
SHOAL_MPI_FN(int, T_pvar_read, (MPI_T_pvar_session session,
                                MPI_T_pvar_handle handle, void *buf))
SHOAL_MPI_FN(int, T_pvar_write, (MPI_T_pvar_session session,
                                 MPI_T_pvar_handle handle, const void *buf))
SHOAL_MPI_FN(int, T_pvar_reset, (MPI_T_pvar_session session,
                                 MPI_T_pvar_handle handle))
SHOAL_MPI_FN(int, T_pvar_readreset, (MPI_T_pvar_session session,
                                     MPI_T_pvar_handle handle, void *buf))
SHOAL_MPI_FN(int, T_category_get_num, (int *num_cat))
SHOAL_MPI_FN(int, T_category_get_info, (int cat_index, char *name,
                                        int *name_len, char *desc,
                                        int *desc_len, int *num_cvars,
                                        int *num_pvars, int *num_categories))
SHOAL_MPI_FN(int, T_category_get_index, (const char *name, int *cat_index))
SHOAL_MPI_FN(int, T_category_get_cvars, (int cat_index, int len,
                                         int indices[]))
SHOAL_MPI_FN(int, T_category_get_pvars, (int cat_index, int len,
                                         int indices[]))
SHOAL_MPI_FN(int, T_category_get_categories, (int cat_index, int len,
                                              int indices[]))
SHOAL_MPI_FN(int, T_category_changed, (int *update_number))
SHOAL_MPI_FN(int, T_category_get_num_events, (int cat_index,
                                              int *num_events))
SHOAL_MPI_FN(int, T_category_get_events, (int cat_index, int len,
                                          int indices[]))
SHOAL_MPI_FN(int, T_source_get_num, (int *num_sources))
SHOAL_MPI_FN(int, T_event_get_num, (int *num_events))
SHOAL_MPI_FN(int, T_event_get_index, (const char *name, int *event_index))
SHOAL_MPI_FN(int, T_event_get_info,
             (int event_index, char *name, int *name_len, int *verbosity,
              MPI_Datatype array_of_datatypes[],
              MPI_Aint array_of_displacements[], int *num_elements,
              MPI_T_enum *enumtype, MPI_Info *info, char *desc,
              int *desc_len, int *bind))
SHOAL_MPI_FN(int, T_source_get_info,
             (int source_index, char *name, int *name_len, char *desc,
              int *desc_len, MPI_T_source_order *ordering,
              MPI_Count *ticks_per_second, MPI_Count *max_ticks,
              MPI_Info *info))
SHOAL_MPI_FN(int, T_source_get_timestamp, (int source_index,
                                           MPI_Count *timestamp))

/* handle conversion (C and Fortran integers) */
SHOAL_MPI_FN(MPI_Fint, Comm_c2f, (MPI_Comm comm))
SHOAL_MPI_FN(MPI_Comm, Comm_f2c, (MPI_Fint comm))
SHOAL_MPI_FN(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
SHOAL_MPI_FN(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
SHOAL_MPI_FN(MPI_Fint, Group_c2f, (MPI_Group group))
SHOAL_MPI_FN(MPI_Group, Group_f2c, (MPI_Fint group))
SHOAL_MPI_FN(MPI_Fint, Request_c2f, (MPI_Request request))
SHOAL_MPI_FN(MPI_Request, Request_f2c, (MPI_Fint request))
SHOAL_MPI_FN(MPI_Fint, Op_c2f, (MPI_Op op))
SHOAL_MPI_FN(MPI_Op, Op_f2c, (MPI_Fint op))
SHOAL_MPI_FN(MPI_Fint, Info_c2f, (MPI_Info info))
SHOAL_MPI_FN(MPI_Info, Info_f2c, (MPI_Fint info))
SHOAL_MPI_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
SHOAL_MPI_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
SHOAL_MPI_FN(MPI_Fint, File_c2f, (MPI_File file))
SHOAL_MPI_FN(MPI_File, File_f2c, (MPI_Fint file))
SHOAL_MPI_FN(MPI_Fint, Message_c2f, (MPI_Message message))
SHOAL_MPI_FN(MPI_Message, Message_f2c, (MPI_Fint message))
SHOAL_MPI_FN(MPI_Fint, Session_c2f, (MPI_Session session))
SHOAL_MPI_FN(MPI_Session, Session_f2c, (MPI_Fint session))

#undef SHOAL_MPI_FN

/*
 * Shoal extensions (MPIX_Shoal_*, no PMPI_ twin).
 *
 * MPIX_Shoal_barrier_clock: this rank's logical clocks of the tolerant
 * barrier (SHOAL_BARRIER=tolerant) with world rank world_rank, after one
 * round of progress: clock[0] barriers started that include it, clock[1]
 * those completed here, clock[2] the lesser, up to which its messages are
 * delivered (docs/TOLERANT.md).
 */
SHOAL_MPI_API int MPIX_Shoal_barrier_clock(int world_rank, unsigned clock[3]);

/*
 * User-Level Failure Mitigation (ULFM), with the semantics of the ULFM
 * specification as Open MPI 5 and MPICH implement it; programs usually
 * include <mpi-ext.h>.  Meaningful under shoalrun --ft (SHOAL_FT=1), where
 * a rank's death does not end the job (docs/FT.md).  PMPIX_ twins exist
 * for profiling tools.
 */
#define SHOAL_MPIX_FN(name, params)                                          \
    SHOAL_MPI_API int MPIX_##name params;                                    \
    SHOAL_MPI_API int PMPIX_##name params;
SHOAL_MPIX_FN(Comm_revoke, (MPI_Comm comm))
SHOAL_MPIX_FN(Comm_is_revoked, (MPI_Comm comm, int *flag))
SHOAL_MPIX_FN(Comm_shrink, (MPI_Comm comm, MPI_Comm *newcomm))
SHOAL_MPIX_FN(Comm_ishrink, (MPI_Comm comm, MPI_Comm *newcomm,
                             MPI_Request *request))
SHOAL_MPIX_FN(Comm_agree, (MPI_Comm comm, int *flag))
SHOAL_MPIX_FN(Comm_iagree, (MPI_Comm comm, int *flag, MPI_Request *request))
SHOAL_MPIX_FN(Comm_failure_ack, (MPI_Comm comm))
SHOAL_MPIX_FN(Comm_failure_get_acked, (MPI_Comm comm, MPI_Group *failedgrp))
SHOAL_MPIX_FN(Comm_get_failed, (MPI_Comm comm, MPI_Group *failedgrp))
SHOAL_MPIX_FN(Comm_ack_failed, (MPI_Comm comm, int num_to_ack, int *num_acked))
/*
 * Coordinated checkpoint/restart, application-assisted (docs/FT.md): the
 * program registers its state, MPIX_Checkpoint (collective over
 * MPI_COMM_WORLD) writes every rank's image under shoalrun
 * --checkpoint-dir DIR, and after shoalrun --restart DIR
 * MPIX_Checkpoint_restarted (collective) loads the newest complete one.
 * MPIX_Checkpoint_if_requested, called by every rank once per iteration,
 * takes a checkpoint only when shoalrun asked for one (--checkpoint-every
 * or SIGUSR1), at the same call on every rank; *taken says whether.
 */
SHOAL_MPIX_FN(Checkpoint_register, (void *ptr, size_t size))
SHOAL_MPIX_FN(Checkpoint, (MPI_Comm comm))
SHOAL_MPIX_FN(Checkpoint_restarted, (int *flag))
SHOAL_MPIX_FN(Checkpoint_if_requested, (MPI_Comm comm, int *taken))
#undef SHOAL_MPIX_FN

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_MPI_H */
