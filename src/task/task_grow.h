/*
 * Growing arrays for the task runtime's state machines: capacity doubles
 * from 16; a failure is SHOAL_ERR_NOMEM with a detail naming `who`.
 */
#ifndef SHOAL_TASK_GROW_H
#define SHOAL_TASK_GROW_H

#include <stdlib.h>

#include "base/base.h"

/* Grows *arr (of *cap elements of size sz) to hold need. */
static inline int task_grow(void **arr, size_t *cap, size_t need, size_t sz,
                            const char *who)
{
    if (need <= *cap)
        return SHOAL_OK;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * sz);
    if (p == NULL)
        return base_err(SHOAL_ERR_NOMEM, "%s: %zu entries", who, n);
    *arr = p;
    *cap = n;
    return SHOAL_OK;
}

#endif /* SHOAL_TASK_GROW_H */
