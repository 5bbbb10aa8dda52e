/*
 * The data-access calls of io_indep.c and io_coll.c are thin wrappers
 * around the one access path (io_access.c); these macros write a call in
 * both its forms, `int` count and large count (`_c`, MPI 4.0), so that each
 * call is one line saying what it is: read or write (wr), where it starts
 * (IO_AT, IO_INDIV, IO_SHARED, IO_ORDERED), collective or not (coll).
 * cb is `const` for the calls whose buffer is const (writes), else empty.
 */
#ifndef SHOAL_IO_CALLS_H
#define SHOAL_IO_CALLS_H

#include "io/io.h"

/* One form of a call at an explicit offset; call is io_blocking or
 * io_nonblocking, OT out the status or request argument. */
#define IO_ONE_AT(name, CT, cb, call, OT, out, wr, coll)                     \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, cb void *buf,       \
                         CT count, MPI_Datatype datatype, OT out)            \
    {                                                                        \
        return call(fh, "MPI_File_" #name, wr, IO_AT, coll, offset,          \
                    (void *)buf, count, datatype, out);                      \
    }                                                                        \
    SHOAL_MPI_WEAK(File_##name)

/* One form of a call at a file pointer (where). */
#define IO_ONE_PTR(name, CT, cb, call, OT, out, wr, where, coll)             \
    int PMPI_File_##name(MPI_File fh, cb void *buf, CT count,                \
                         MPI_Datatype datatype, OT out)                      \
    {                                                                        \
        return call(fh, "MPI_File_" #name, wr, where, coll, 0, (void *)buf,  \
                    count, datatype, out);                                   \
    }                                                                        \
    SHOAL_MPI_WEAK(File_##name)

/* MPI_File_<name> and MPI_File_<name>_c at an explicit offset: blocking
 * (IO_AT_CALLS) and nonblocking (IO_IAT_CALLS). */
#define IO_AT_CALLS(name, cb, wr, coll)                                      \
    IO_ONE_AT(name, int, cb, io_blocking, MPI_Status *, status, wr, coll)    \
    IO_ONE_AT(name##_c, MPI_Count, cb, io_blocking, MPI_Status *, status,    \
              wr, coll)
#define IO_IAT_CALLS(name, cb, wr, coll)                                     \
    IO_ONE_AT(name, int, cb, io_nonblocking, MPI_Request *, request, wr,     \
              coll)                                                          \
    IO_ONE_AT(name##_c, MPI_Count, cb, io_nonblocking, MPI_Request *,        \
              request, wr, coll)

/* The same at a file pointer. */
#define IO_PTR_CALLS(name, cb, wr, where, coll)                              \
    IO_ONE_PTR(name, int, cb, io_blocking, MPI_Status *, status, wr, where,  \
               coll)                                                         \
    IO_ONE_PTR(name##_c, MPI_Count, cb, io_blocking, MPI_Status *, status,   \
               wr, where, coll)
#define IO_IPTR_CALLS(name, cb, wr, where, coll)                             \
    IO_ONE_PTR(name, int, cb, io_nonblocking, MPI_Request *, request, wr,    \
               where, coll)                                                  \
    IO_ONE_PTR(name##_c, MPI_Count, cb, io_nonblocking, MPI_Request *,       \
               request, wr, where, coll)

#endif /* SHOAL_IO_CALLS_H */
