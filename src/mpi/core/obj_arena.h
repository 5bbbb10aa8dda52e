/*
 * The arena of the objects a checkpoint carries (obj_arena.c): with
 * SHOAL_CKPT_DIR set, communicators, groups and datatypes live at
 * addresses a restarted process can give them again.
 */
#ifndef SHOAL_MPI_OBJ_ARENA_H
#define SHOAL_MPI_OBJ_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define MPI_ARENA_CELL 1024u            /* bytes: the largest object fits */
#define MPI_ARENA_CELLS (1u << 20)      /* 1 GiB of address space */

int mpi_arena_init(void);  /* reserve it (SHOAL_CKPT_DIR set); SHOAL_OK */
int mpi_arena_on(void);    /* objects live in it */
/* Where it is (or would be): [lo, lo + CELLS * CELL). */
uintptr_t mpi_arena_lo(void);

/* A zeroed object of size bytes (calloc without the arena); NULL when
 * out of memory or cells. */
void *mpi_obj_alloc(size_t size);
void mpi_obj_free(void *p); /* mpi_obj_alloc's, or NULL */
int mpi_obj_in_arena(const void *p);

/* A restart: the next mpi_obj_alloc returns p (a free cell: else an
 * error class), or, after mpi_arena_unplace, goes on as usual. */
int mpi_arena_place(void *p);
void mpi_arena_unplace(void);
/* Allocations start at cell or above (a restart's own objects stay out
 * of the cells its checkpoints used). */
void mpi_arena_floor(uint32_t cell);
/* One past the highest cell ever taken: what an image records. */
uint32_t mpi_arena_hwm(void);
/* fn(obj) for every cell in use, lowest address first. */
void mpi_arena_each(void (*fn)(void *obj, void *arg), void *arg);

#endif
