/*
 * A process that takes checkpoints runs with its address space laid out
 * the same way at every start (docs/FT.md "The library's objects").  A
 * restarted program finds, in its registered regions, handles that are
 * addresses: of the library's predefined objects (MPI_COMM_WORLD,
 * MPI_INT, MPI_ERRORS_RETURN are in the library's data), of its own
 * functions (an MPI_Op's, an error handler's, an attribute's copy and
 * delete callbacks), and of the objects obj_arena.c puts back.  With
 * randomization those of the first two kinds would move at every start.
 *
 * So when SHOAL_CKPT_DIR is set, and SHOAL_CKPT_NORANDOM is not 0, the
 * library turns randomization off for the process and executes it again,
 * before main runs, from the constructor below (what setarch -R does
 * from outside).  The same program, libraries and architecture then give
 * the same addresses on any host.  The image records where the library
 * and the program were loaded, and a restart that finds them elsewhere
 * refuses to bring the objects back (ckpt_objs.c).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "mpi/core/ckpt_fixed.h"

static int want_fixed(void)
{
    const char *dir = getenv("SHOAL_CKPT_DIR");
    const char *off = getenv("SHOAL_CKPT_NORANDOM");

    if (dir == NULL || dir[0] == '\0')
        return 0;
    return off == NULL || (strcmp(off, "0") != 0 && strcmp(off, "no") != 0 &&
                           strcmp(off, "off") != 0 &&
                           strcmp(off, "false") != 0);
}

__attribute__((constructor)) static void fixed_layout(int argc, char **argv,
                                                      char **envp)
{
    int was = personality(0xffffffff);

    if (argc < 1 || argv == NULL || was == -1 ||
        (was & ADDR_NO_RANDOMIZE) || !want_fixed())
        return;
    if (personality((unsigned long)was | ADDR_NO_RANDOMIZE) == -1)
        return;
    execve("/proc/self/exe", argv, envp);
    /* Could not: go on randomized (a restart then refuses the objects). */
    personality((unsigned long)was);
}

static int first_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(uintptr_t *)arg = (uintptr_t)info->dlpi_addr;
    return 1; /* the first is the program itself */
}

void ckpt_fixed_bases(uint64_t *prog, uint64_t *lib)
{
    uintptr_t p = 0;

    dl_iterate_phdr(first_module, &p);
    *prog = p;
    *lib = (uint64_t)(uintptr_t)&ckpt_fixed_bases;
}
