/* base_vec and base_strmap. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "base_strmap.h"
#include "base_vec.h"

/* ---- base_vec ------------------------------------------------------------ */

void base_vec_init(base_vec_t *v, size_t elem_size)
{
    v->data = NULL;
    v->len = v->cap = 0;
    v->elem_size = elem_size;
}

void base_vec_fini(base_vec_t *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

int base_vec_reserve(base_vec_t *v, size_t n)
{
    if (n <= v->cap)
        return SHOAL_OK;
    size_t cap = v->cap ? v->cap : 8;
    while (cap < n)
        cap *= 2;
    void *data = realloc(v->data, cap * v->elem_size);
    if (data == NULL)
        return base_err(SHOAL_ERR_NOMEM, "vector of %zu elements", cap);
    v->data = data;
    v->cap = cap;
    return SHOAL_OK;
}

int base_vec_push(base_vec_t *v, const void *elem)
{
    int status = base_vec_reserve(v, v->len + 1);

    if (status != SHOAL_OK)
        return status;
    memcpy(base_vec_at(v, v->len), elem, v->elem_size);
    v->len++;
    return SHOAL_OK;
}

/* ---- base_strmap --------------------------------------------------------- */

static char strmap_tombstone_mark;
#define BASE_STRMAP_TOMBSTONE (&strmap_tombstone_mark)

void base_strmap_init(base_strmap_t *m)
{
    m->slots = NULL;
    m->cap = m->len = m->used = 0;
}

void base_strmap_fini(base_strmap_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != NULL && m->slots[i].key != BASE_STRMAP_TOMBSTONE)
            free(m->slots[i].key);
    free(m->slots);
    base_strmap_init(m);
}

/* Slot holding key, or the slot where it would go; NULL when the table is empty. */
static base_strmap_slot_t *strmap_find(const base_strmap_t *m, const char *key,
                                       int for_insert)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = (size_t)base_hash64(key, strlen(key)) & mask;
    base_strmap_slot_t *first_free = NULL;

    for (size_t probes = 0; probes < m->cap; probes++, i = (i + 1) & mask) {
        base_strmap_slot_t *s = &m->slots[i];
        if (s->key == NULL)
            return (for_insert && first_free != NULL) ? first_free : s;
        if (s->key == BASE_STRMAP_TOMBSTONE) {
            if (first_free == NULL)
                first_free = s;
            continue;
        }
        if (strcmp(s->key, key) == 0)
            return s;
    }
    return for_insert ? first_free : NULL;
}

static int strmap_grow(base_strmap_t *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    base_strmap_slot_t *old = m->slots;
    size_t old_cap = m->cap;

    /* Only grow when live entries fill the table; otherwise rehash in place size. */
    if (m->len * 2 < m->cap)
        cap = m->cap;
    m->slots = calloc(cap, sizeof(*m->slots));
    if (m->slots == NULL) {
        m->slots = old;
        return base_err(SHOAL_ERR_NOMEM, "hash map of %zu slots", cap);
    }
    m->cap = cap;
    m->len = m->used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].key == NULL || old[i].key == BASE_STRMAP_TOMBSTONE)
            continue;
        base_strmap_slot_t *s = strmap_find(m, old[i].key, 1);
        *s = old[i];
        m->len++;
        m->used++;
    }
    free(old);
    return SHOAL_OK;
}

int base_strmap_put(base_strmap_t *m, const char *key, void *value,
                    void **old_p)
{
    if ((m->used + 1) * 4 > m->cap * 3) {
        int status = strmap_grow(m);
        if (status != SHOAL_OK)
            return status;
    }
    base_strmap_slot_t *s = strmap_find(m, key, 1);
    if (s->key != NULL && s->key != BASE_STRMAP_TOMBSTONE) {
        if (old_p != NULL)
            *old_p = s->value;
        s->value = value;
        return SHOAL_OK;
    }
    char *copy = strdup(key);
    if (copy == NULL)
        return base_err(SHOAL_ERR_NOMEM, "hash map key");
    if (s->key == NULL)
        m->used++;
    s->key = copy;
    s->value = value;
    m->len++;
    if (old_p != NULL)
        *old_p = NULL;
    return SHOAL_OK;
}

void *base_strmap_get(const base_strmap_t *m, const char *key)
{
    base_strmap_slot_t *s = strmap_find(m, key, 0);

    if (s == NULL || s->key == NULL || s->key == BASE_STRMAP_TOMBSTONE)
        return NULL;
    return s->value;
}

void *base_strmap_remove(base_strmap_t *m, const char *key)
{
    base_strmap_slot_t *s = strmap_find(m, key, 0);

    if (s == NULL || s->key == NULL || s->key == BASE_STRMAP_TOMBSTONE)
        return NULL;
    void *value = s->value;
    free(s->key);
    s->key = BASE_STRMAP_TOMBSTONE;
    s->value = NULL;
    m->len--;
    return value;
}

int base_strmap_next(const base_strmap_t *m, size_t *iter, const char **key_p,
                     void **value_p)
{
    for (; *iter < m->cap; (*iter)++) {
        base_strmap_slot_t *s = &m->slots[*iter];
        if (s->key == NULL || s->key == BASE_STRMAP_TOMBSTONE)
            continue;
        *key_p = s->key;
        *value_p = s->value;
        (*iter)++;
        return 1;
    }
    return 0;
}
