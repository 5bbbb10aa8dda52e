/*
 * The predefined objects programs name by address (MPI_COMM_WORLD,
 * MPI_COMM_SELF, MPI_GROUP_EMPTY, MPI_INFO_ENV, MPI_MESSAGE_NO_PROC),
 * each in storage of a fixed size (SHOAL_MPI_*_STORAGE in mpi.h): a
 * program's link copies the size the library exports, so that size must
 * not follow the structures from version to version.  The rest of the
 * library sees each as its structure (mpi.h's declarations), which is the
 * union's first member.
 */
#define SHOAL_MPI_PREDEF_STORAGE 1
#include "mpi/mpi_impl.h"

#define PREDEF(type, size)                                                  \
    union {                                                                 \
        type obj;                                                           \
        char pad[size];                                                     \
    }

_Static_assert(sizeof(struct shoal_mpi_comm) <= SHOAL_MPI_COMM_STORAGE,
               "struct shoal_mpi_comm outgrew SHOAL_MPI_COMM_STORAGE");
_Static_assert(sizeof(struct shoal_mpi_group) <= SHOAL_MPI_GROUP_STORAGE,
               "struct shoal_mpi_group outgrew SHOAL_MPI_GROUP_STORAGE");
_Static_assert(sizeof(struct shoal_mpi_info) <= SHOAL_MPI_INFO_STORAGE,
               "struct shoal_mpi_info outgrew SHOAL_MPI_INFO_STORAGE");
_Static_assert(sizeof(struct shoal_mpi_request) <= SHOAL_MPI_REQUEST_STORAGE,
               "struct shoal_mpi_request outgrew SHOAL_MPI_REQUEST_STORAGE");

SHOAL_MPI_API PREDEF(struct shoal_mpi_comm, SHOAL_MPI_COMM_STORAGE)
    shoal_mpi_comm_world, shoal_mpi_comm_self;
SHOAL_MPI_API PREDEF(struct shoal_mpi_group, SHOAL_MPI_GROUP_STORAGE)
    shoal_mpi_group_empty = {{MPI_MAGIC_GROUP, 1 << 30, 0, MPI_UNDEFINED,
                              NULL}};
SHOAL_MPI_API PREDEF(struct shoal_mpi_info, SHOAL_MPI_INFO_STORAGE)
    shoal_mpi_info_env = {{MPI_MAGIC_INFO, 1 << 30, 0, 0, NULL, NULL}};
SHOAL_MPI_API PREDEF(struct shoal_mpi_request, SHOAL_MPI_REQUEST_STORAGE)
    shoal_mpi_message_no_proc = {
        {.magic = MPI_MAGIC_REQ, .kind = MPI_REQ_MESSAGE}};
