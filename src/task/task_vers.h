/*
 * The versions of one lock's variables, by version number (task_lock.h):
 * what the lock manager and each worker's lock record keep so that a
 * duplicate, late or re-run copy is granted the bytes its request saw.
 *
 * Consecutive versions differ by what one critical section wrote, a few
 * bytes of a histogram or a table the lock guards, so a version is stored
 * as a diff against the nearest version below it that is kept (its base:
 * the one before in the manager; in a worker's record, which keeps only
 * the versions its own copies saw or made, the last of those) when that
 * is less than half the bytes, with a whole version every TASK_VERS_CHAIN
 * at most so that reading one applies few diffs.  A lock of 64 KiB
 * changed 8 bytes at a time costs about 1/50 of its size a version
 * instead of all of it.  Dropping or replacing a version that others are
 * diffs against makes those whole first.  The latest version put is kept
 * whole beside the store (the tip), so putting the next one costs a
 * comparison, not a rebuild.
 */
#ifndef SHOAL_TASK_VERS_H
#define SHOAL_TASK_VERS_H

#include <stddef.h>
#include <stdint.h>

#define TASK_VERS_CHAIN 32

typedef struct task_vers_ent {
    uint8_t *p;     /* whole bytes or a diff against version base; NULL */
    size_t plen;    /* bytes at p */
    size_t len;     /* the version's length */
    uint32_t base;  /* a diff's base version (kept, below this one) */
    uint32_t ndeps; /* kept versions that are diffs against this one */
    uint8_t kind;   /* 0 absent, 1 whole, 2 diff */
    uint8_t depth;  /* diffs back to a whole version */
} task_vers_ent_t;

typedef struct task_vers {
    task_vers_ent_t *e; /* by version */
    size_t n, cap;
    uint8_t *tip;       /* the bytes of version tip_v (tip_ok) */
    size_t tiplen, tipcap;
    uint32_t tip_v;
    int tip_ok;
    uint8_t *out;       /* task_vers_get's answers */
    size_t outcap;
    size_t held;        /* bytes at the entries' p */
} task_vers_t;

/* Keeps version v (a copy of data).  Replacing a kept version makes the
 * one after it whole first. */
int task_vers_put(task_vers_t *s, uint32_t v, const void *data, size_t len);
int task_vers_has(const task_vers_t *s, uint32_t v);
/* Version v's bytes, valid until the next call on s; SHOAL_ERR_NOT_FOUND
 * when it is not kept. */
int task_vers_get(task_vers_t *s, uint32_t v, const void **data,
                  size_t *len);
/* Frees version v's bytes (nothing when it is not kept). */
int task_vers_drop(task_vers_t *s, uint32_t v);
void task_vers_free(task_vers_t *s);

#endif /* SHOAL_TASK_VERS_H */
