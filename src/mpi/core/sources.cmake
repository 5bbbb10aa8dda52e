# src/mpi/core: the environment, errors and error handlers, info, requests, status, Fortran handles, the progress thread.
# Paths are relative to src/.
list(APPEND SHOAL_SOURCES
    mpi/core/ckpt.c
    mpi/core/ckpt_dir.c
    mpi/core/ckpt_fixed.c
    mpi/core/ckpt_objs.c
    mpi/core/ckpt_trigger.c
    mpi/core/errhandler.c
    mpi/core/error.c
    mpi/core/ft.c
    mpi/core/ft_agree.c
    mpi/core/handle_f2c.c
    mpi/core/info.c
    mpi/core/init.c
    mpi/core/mpi1_removed.c
    mpi/core/obj_arena.c
    mpi/core/predef.c
    mpi/core/progress_thread.c
    mpi/core/request.c
    mpi/core/session.c
    mpi/core/status.c)
