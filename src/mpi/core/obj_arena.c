/*
 * Where the MPI objects a checkpoint carries live (communicators, groups,
 * datatypes: docs/FT.md "The library's objects").  A handle is the
 * object's address, and a restarted program finds its handles in its
 * registered regions as they were, so a restarted process must put each
 * object back at that address.  With SHOAL_CKPT_DIR set they are
 * therefore carved out of an arena mapped at a fixed address, one cell
 * each, which the checkpoint walks to find the live objects; without it
 * they are plain calloc'd memory.
 *
 * The arena only reserves address space (MAP_NORESERVE): a cell's pages
 * cost memory once an object is made there, and a freed cell keeps its
 * bytes (the object's magic says "freed") until another object takes
 * it, as memory from malloc would.  A restarted process starts its own
 * allocations above every cell its checkpoints used (mpi_arena_floor),
 * so that the cells it puts objects back into are free.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi/core/obj_arena.h"
#include "mpi/mpi_impl.h"

/* Far from where Linux puts programs (0x55..., 0x56...), their heaps
 * and mappings (0x7f...), with or without randomization; a multiple of
 * the arena's 1 GiB (ckpt_objs_scan's filter relies on it). */
#define ARENA_BASE ((uintptr_t)0x3e5000000000ull)

static struct {
    uint8_t *base; /* NULL: objects come from calloc */
    uint64_t used[MPI_ARENA_CELLS / 64];
    uint32_t floor; /* allocations start at this cell */
    uint32_t hint;  /* no free cell in [floor, hint) */
    uint32_t hwm;   /* one past the highest cell taken since the start */
    uint8_t *place; /* the next allocation goes here (a restart) */
    pthread_mutex_t lock;
} arena = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ThreadSanitizer ends a process that maps memory outside the ranges it
 * shadows: no arena under it (a restart then brings no objects back). */
#if defined(__SANITIZE_THREAD__)
#define ARENA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ARENA_TSAN 1
#endif
#endif

int mpi_arena_init(void)
{
    void *p;

    if (arena.base != NULL)
        return SHOAL_OK;
#ifdef ARENA_TSAN
    base_debug("ckpt", "no objects' arena under ThreadSanitizer");
    return SHOAL_OK;
#endif
    p = mmap((void *)ARENA_BASE, (size_t)MPI_ARENA_CELLS * MPI_ARENA_CELL,
             PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                 MAP_FIXED_NOREPLACE,
             -1, 0);
    if (p == MAP_FAILED || p != (void *)ARENA_BASE) {
        /* Old kernels ignore MAP_FIXED_NOREPLACE and map elsewhere. */
        if (p != MAP_FAILED)
            munmap(p, (size_t)MPI_ARENA_CELLS * MPI_ARENA_CELL);
        base_warn("ckpt", "cannot reserve the objects' arena at %p (%s): "
                  "a restart will not bring back communicators, groups "
                  "and datatypes", (void *)ARENA_BASE,
                  p == MAP_FAILED ? strerror(errno) : "placed elsewhere");
        return SHOAL_OK;
    }
    arena.base = p;
    return SHOAL_OK;
}

int mpi_arena_on(void)
{
    return arena.base != NULL;
}

uintptr_t mpi_arena_lo(void)
{
    return ARENA_BASE;
}

static int taken(uint32_t cell)
{
    return (arena.used[cell / 64] >> (cell % 64)) & 1;
}

static void take(uint32_t cell)
{
    arena.used[cell / 64] |= 1ull << (cell % 64);
    if (cell >= arena.hwm)
        arena.hwm = cell + 1;
}

void *mpi_obj_alloc(size_t size)
{
    uint8_t *p = NULL;
    uint32_t cell;

    if (arena.base == NULL)
        return calloc(1, size);
    if (size > MPI_ARENA_CELL)
        return NULL; /* a new object type larger than a cell: a bug */
    pthread_mutex_lock(&arena.lock);
    if (arena.place != NULL) {
        p = arena.place;
        arena.place = NULL;
        take((uint32_t)((size_t)(p - arena.base) / MPI_ARENA_CELL));
    } else {
        /* Whole words of taken cells are skipped at once. */
        for (cell = arena.hint < arena.floor ? arena.floor : arena.hint;
             cell < MPI_ARENA_CELLS;) {
            if (cell % 64 == 0 && arena.used[cell / 64] == UINT64_MAX) {
                cell += 64;
                continue;
            }
            if (!taken(cell)) {
                take(cell);
                arena.hint = cell + 1;
                p = arena.base + (size_t)cell * MPI_ARENA_CELL;
                break;
            }
            cell++;
        }
    }
    pthread_mutex_unlock(&arena.lock);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

int mpi_obj_in_arena(const void *p)
{
    return arena.base != NULL && (const uint8_t *)p >= arena.base &&
           (const uint8_t *)p <
               arena.base + (size_t)MPI_ARENA_CELLS * MPI_ARENA_CELL;
}

void mpi_obj_free(void *p)
{
    uint32_t cell;

    if (p == NULL)
        return;
    if (!mpi_obj_in_arena(p)) {
        free(p);
        return;
    }
    cell = (uint32_t)((size_t)((uint8_t *)p - arena.base) / MPI_ARENA_CELL);
    pthread_mutex_lock(&arena.lock);
    arena.used[cell / 64] &= ~(1ull << (cell % 64));
    if (cell < arena.hint)
        arena.hint = cell;
    pthread_mutex_unlock(&arena.lock);
}

int mpi_arena_place(void *p)
{
    uint8_t *q = p;
    int rc = MPI_SUCCESS;

    if (!mpi_obj_in_arena(q) ||
        (size_t)(q - arena.base) % MPI_ARENA_CELL != 0)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&arena.lock);
    if (taken((uint32_t)((size_t)(q - arena.base) / MPI_ARENA_CELL)))
        rc = MPI_ERR_OTHER;
    else
        arena.place = q;
    pthread_mutex_unlock(&arena.lock);
    return rc;
}

void mpi_arena_unplace(void)
{
    pthread_mutex_lock(&arena.lock);
    arena.place = NULL;
    pthread_mutex_unlock(&arena.lock);
}

void mpi_arena_floor(uint32_t cell)
{
    pthread_mutex_lock(&arena.lock);
    if (cell > arena.floor && cell < MPI_ARENA_CELLS)
        arena.floor = cell;
    pthread_mutex_unlock(&arena.lock);
}

uint32_t mpi_arena_hwm(void)
{
    return arena.hwm;
}

void mpi_arena_each(void (*fn)(void *obj, void *arg), void *arg)
{
    if (arena.base == NULL)
        return;
    for (uint32_t w = 0; w < (arena.hwm + 63) / 64; w++)
        for (uint64_t bits = arena.used[w]; bits != 0; bits &= bits - 1)
            fn(arena.base +
                   ((size_t)w * 64 + (size_t)__builtin_ctzll(bits)) *
                       MPI_ARENA_CELL,
               arg);
}
