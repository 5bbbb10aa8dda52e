/*
 * String-keyed hash map (open addressing, linear probing).  Keys are copied;
 * values are opaque pointers owned by the caller.  Used off the hot path
 * (the launcher's key-value store, name tables).
 */
#ifndef SHOAL_BASE_STRMAP_H
#define SHOAL_BASE_STRMAP_H

#include <stddef.h>

typedef struct base_strmap_slot {
    char *key; /* NULL: empty; BASE_STRMAP_TOMBSTONE: deleted */
    void *value;
} base_strmap_slot_t;

typedef struct base_strmap {
    base_strmap_slot_t *slots;
    size_t cap, len, used; /* used counts live entries and tombstones */
} base_strmap_t;

void base_strmap_init(base_strmap_t *m);
/* Free the keys and the table; values are the caller's. */
void base_strmap_fini(base_strmap_t *m);
/*
 * Insert or replace.  When replacing, the old value is stored in *old_p (if
 * old_p is not NULL) so the caller can free it.  SHOAL_ERR_NOMEM on failure.
 */
int base_strmap_put(base_strmap_t *m, const char *key, void *value,
                    void **old_p);
/* The value for key, or NULL. */
void *base_strmap_get(const base_strmap_t *m, const char *key);
/* Remove key; returns its value or NULL. */
void *base_strmap_remove(base_strmap_t *m, const char *key);

/* Iterate: for (size_t i = 0; base_strmap_next(m, &i, &k, &v);) */
int base_strmap_next(const base_strmap_t *m, size_t *iter, const char **key_p,
                     void **value_p);

#endif /* SHOAL_BASE_STRMAP_H */
