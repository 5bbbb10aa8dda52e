/*
 * Growable array of fixed-size elements.  Not for hot paths: growing
 * allocates.
 */
#ifndef SHOAL_BASE_VEC_H
#define SHOAL_BASE_VEC_H

#include <stddef.h>

typedef struct base_vec {
    void *data;
    size_t len, cap, elem_size;
} base_vec_t;

void base_vec_init(base_vec_t *v, size_t elem_size);
void base_vec_fini(base_vec_t *v);
/* Append one element (copied from elem); SHOAL_ERR_NOMEM on failure. */
int base_vec_push(base_vec_t *v, const void *elem);
/* Make room for n elements in total. */
int base_vec_reserve(base_vec_t *v, size_t n);

static inline void *base_vec_at(const base_vec_t *v, size_t i)
{
    return (char *)v->data + i * v->elem_size;
}

#endif /* SHOAL_BASE_VEC_H */
