# src/io: MPI-IO (io.h says which file holds what).
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    io/io_access.c
    io/io_async.c
    io/io_coll.c
    io/io_datarep.c
    io/io_errh.c
    io/io_fs.c
    io/io_hints.c
    io/io_indep.c
    io/io_list.c
    io/io_lock.c
    io/io_open.c
    io/io_shared.c
    io/io_size.c
    io/io_twophase.c
    io/io_uring.c
    io/io_view.c)
