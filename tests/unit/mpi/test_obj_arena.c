/*
 * The objects' arena (src/mpi/core/obj_arena.c, docs/FT.md "The
 * library's objects"): cells handed out and taken back, an object put at
 * a given cell (a restart), the floor a restart allocates above, and the
 * walk a checkpoint makes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpi/core/obj_arena.h"
#include "mpi/mpi_impl.h"
#include "test.h"

static void *seen[16];
static int nseen;

static void note(void *obj, void *arg)
{
    (void)arg;
    if (nseen < 16)
        seen[nseen] = obj;
    nseen++;
}

static uintptr_t cell(int i)
{
    return mpi_arena_lo() + (uintptr_t)i * MPI_ARENA_CELL;
}

int main(void)
{
    /* Without the arena: plain calloc, freed by mpi_obj_free. */
    void *h = mpi_obj_alloc(100);
    T_ASSERT(h != NULL && !mpi_obj_in_arena(h));
    mpi_obj_free(h);

    T_ASSERT(mpi_arena_init() == SHOAL_OK);
    if (!mpi_arena_on())
        T_SKIP("the arena's address is taken in this process");
    T_ASSERT(mpi_arena_init() == SHOAL_OK); /* twice: harmless */

    uint8_t *a = mpi_obj_alloc(200), *b = mpi_obj_alloc(MPI_ARENA_CELL),
            *c = mpi_obj_alloc(8);
    T_ASSERT((uintptr_t)a == cell(0) && (uintptr_t)b == cell(1) &&
             (uintptr_t)c == cell(2));
    T_ASSERT(mpi_obj_in_arena(a) && mpi_obj_in_arena(c));
    T_ASSERT(mpi_obj_alloc(MPI_ARENA_CELL + 1) == NULL);
    memset(b, 0x5a, MPI_ARENA_CELL);
    T_ASSERT(mpi_arena_hwm() == 3);

    /* A freed cell keeps its bytes and is the next one handed out,
     * zeroed. */
    mpi_obj_free(b);
    T_ASSERT(b[10] == 0x5a);
    uint8_t *b2 = mpi_obj_alloc(64);
    T_ASSERT(b2 == b && b2[0] == 0 && b2[63] == 0);

    /* The walk sees the cells in use, lowest first. */
    nseen = 0;
    mpi_arena_each(note, NULL);
    T_ASSERT(nseen == 3 && seen[0] == a && seen[1] == b && seen[2] == c);

    /* Putting back: only a free cell, on a cell boundary, in the arena. */
    T_ASSERT(mpi_arena_place((void *)cell(2)) == MPI_ERR_OTHER);
    T_ASSERT(mpi_arena_place((void *)(cell(7) + 8)) == MPI_ERR_ARG);
    T_ASSERT(mpi_arena_place(&nseen) == MPI_ERR_ARG);
    T_ASSERT(mpi_arena_place((void *)cell(7)) == MPI_SUCCESS);
    T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(7));
    T_ASSERT(mpi_arena_hwm() == 8);
    /* unplace forgets a placement not used */
    T_ASSERT(mpi_arena_place((void *)cell(9)) == MPI_SUCCESS);
    mpi_arena_unplace();
    T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(3));

    /* A restart's own objects go above the floor; placing below it
     * still works. */
    mpi_arena_floor(100);
    T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(100));
    T_ASSERT(mpi_arena_place((void *)cell(4)) == MPI_SUCCESS);
    T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(4));
    mpi_obj_free((void *)cell(100));
    T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(100));

    /* 64 cells in a row fill a bitmap word, skipped at once. */
    for (int i = 0; i < 200; i++)
        T_ASSERT((uintptr_t)mpi_obj_alloc(16) == cell(101 + i));
    nseen = 0;
    mpi_arena_each(note, NULL);
    T_ASSERT(nseen == 6 + 201);
    printf("ok\n");
    return 0;
}
