/*
 * The restart's scan of the registered regions for handles
 * (src/mpi/core/ckpt_objs.c, docs/FT.md "The library's objects"): every
 * word that is the address of an arena cell is seen, wherever it lies
 * (in the vector path's 4 KiB blocks and in the tail, at any alignment
 * of the buffer), and nothing else is.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/core/ckpt_objs.h"
#include "mpi/core/obj_arena.h"
#include "test.h"

static void put(uint8_t *b, size_t off, uint64_t w)
{
    memcpy(b + off, &w, 8);
}

int main(void)
{
    uint64_t lo = mpi_arena_lo();
    size_t n = 3 * 4096 + 200;
    uint8_t *mem = malloc(n + 8);

    T_ASSERT(mem != NULL);
    for (int shift = 0; shift < 8; shift += 3) {
        uint8_t *b = mem + shift; /* regions need not be aligned */
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(i * 131 + 7);
        /* hits: in the first block, the third, the tail */
        put(b, 8, lo + 5 * MPI_ARENA_CELL);
        put(b, 2 * 4096 + 4000, lo + 77 * MPI_ARENA_CELL);
        put(b, 3 * 4096 + 96, lo + ((uint64_t)MPI_ARENA_CELLS - 1) *
                                        MPI_ARENA_CELL);
        /* misses: inside a cell, below and past the arena, and an arena
         * address at an offset the scan does not look at (not a multiple
         * of 8 from the region's start) */
        put(b, 16, lo + 6 * MPI_ARENA_CELL + 8);
        put(b, 24, lo - MPI_ARENA_CELL);
        put(b, 32, lo + (uint64_t)MPI_ARENA_CELLS * MPI_ARENA_CELL);
        put(b, 4096 + 3, lo + 9 * MPI_ARENA_CELL);
        ckpt_objs_scan_reset();
        ckpt_objs_scan(b, n);
        T_ASSERT(ckpt_objs_held((void *)(lo + 5 * MPI_ARENA_CELL)));
        T_ASSERT(ckpt_objs_held((void *)(lo + 77 * MPI_ARENA_CELL)));
        T_ASSERT(ckpt_objs_held((void *)(lo + ((uint64_t)MPI_ARENA_CELLS - 1) *
                                                  MPI_ARENA_CELL)));
        T_ASSERT(!ckpt_objs_held((void *)(lo + 6 * MPI_ARENA_CELL)));
        T_ASSERT(!ckpt_objs_held((void *)(lo + 9 * MPI_ARENA_CELL)));
        T_ASSERT(!ckpt_objs_held((void *)(lo + 4 * MPI_ARENA_CELL)));
        /* a reset forgets */
        ckpt_objs_scan_reset();
        T_ASSERT(!ckpt_objs_held((void *)(lo + 5 * MPI_ARENA_CELL)));
    }
    free(mem);
    printf("ok\n");
    return 0;
}
